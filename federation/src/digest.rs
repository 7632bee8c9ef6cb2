//! RFC 9530 `Content-Digest` with SHA-256: computing it for a body we send, checking it for a body we received.
//!
//! The check takes the body as bytes already read under the receiver's body cap: reading is the caller's job,
//! so that no digest check can be made to read an unbounded body.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use sha2::{Digest, Sha256};

use crate::error::{Rejection, RejectionReason};

/// The `Content-Digest` field value of `body`: `sha-256=:<base64 of SHA-256>:`.
pub fn content_digest(body: &[u8]) -> String {
    format!("sha-256=:{}:", STANDARD.encode(Sha256::digest(body)))
}

/// Checks a received `Content-Digest` field against `body`. The field must carry a `sha-256` member (other
/// algorithms may accompany it and are ignored); a missing field, a malformed one, one without `sha-256`, or a
/// mismatch are each their own rejection.
pub fn verify_content_digest(field_value: Option<&str>, body: &[u8]) -> Result<(), Rejection> {
    let field_value = field_value.ok_or_else(|| {
        Rejection::new(
            RejectionReason::DigestMissing,
            "the request has no Content-Digest field",
        )
    })?;
    let dictionary: sfv::Dictionary = sfv::Parser::new(field_value).parse().map_err(|error| {
        Rejection::new(
            RejectionReason::DigestMalformed,
            format!("Content-Digest is not a structured dictionary: {error}"),
        )
    })?;
    let Some(entry) = dictionary.get("sha-256") else {
        return Err(Rejection::new(
            RejectionReason::DigestMalformed,
            "Content-Digest has no sha-256 member",
        ));
    };
    let sfv::ListEntry::Item(item) = entry else {
        return Err(Rejection::new(
            RejectionReason::DigestMalformed,
            "Content-Digest's sha-256 member is not a byte sequence",
        ));
    };
    let Some(claimed) = item.bare_item.as_byte_sequence() else {
        return Err(Rejection::new(
            RejectionReason::DigestMalformed,
            "Content-Digest's sha-256 member is not a byte sequence",
        ));
    };
    let actual = Sha256::digest(body);
    if claimed == actual.as_slice() {
        Ok(())
    } else {
        Err(Rejection::new(
            RejectionReason::DigestMismatch,
            "Content-Digest does not match the body",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rfc_9530_example_digest_is_reproduced() {
        // RFC 9530 §2, the sha-256 example for `{"hello": "world"}` followed by a newline.
        assert_eq!(
            content_digest(b"{\"hello\": \"world\"}\n"),
            "sha-256=:RK/0qy18MlBSVnWgjwz6lZEWjP/lF5HF9bvEF8FabDg=:"
        );
    }

    #[test]
    fn a_matching_digest_passes_even_beside_another_algorithm() {
        let body = b"{\"type\":\"Follow\"}";
        assert_eq!(verify_content_digest(Some(&content_digest(body)), body), Ok(()));
        let with_sha512 = format!("sha-512=:AAAA:, {}", content_digest(body));
        assert_eq!(verify_content_digest(Some(&with_sha512), body), Ok(()));
    }

    #[test]
    fn each_failure_has_its_own_reason() {
        let body = b"{}";
        let reason = |field: Option<&str>| verify_content_digest(field, body).map_err(|rejection| rejection.reason);
        assert_eq!(reason(None), Err(RejectionReason::DigestMissing));
        assert_eq!(reason(Some("sha-256=abc")), Err(RejectionReason::DigestMalformed));
        assert_eq!(reason(Some("sha-512=:AAAA:")), Err(RejectionReason::DigestMalformed));
        assert_eq!(reason(Some("sha-256=:AAAA:")), Err(RejectionReason::DigestMismatch));
        assert_eq!(
            reason(Some(&content_digest(b"{\"tampered\":true}"))),
            Err(RejectionReason::DigestMismatch)
        );
    }
}
