//! Origin proofs for federated objects: W3C Data Integrity proofs with the `eddsa-jcs-2022` cryptosuite
//! (vc-di-eddsa §3.3, as FEP-8b32 uses them), so that an object keeps the origin instance's signature when it is
//! relayed, stored and served again, long after the HTTP signature of the request that carried it is gone.
//!
//! What is signed is the object without its `proof`, canonicalized by RFC 8785 (JCS), together with the proof's
//! own options; see docs/federation/proofs.md. The key is the caller's business: [`proof_verification_method`]
//! names the key ID, the caller looks up the key it pinned for that peer, and [`verify_document`] checks with it.

mod ijson;
mod jcs;

pub use ijson::parse_i_json;
pub use jcs::{canonical_number, canonicalize};

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::keys::{InstanceKeyPair, PublicKey};
use crate::protocol::{parse_rfc3339, rfc3339};

/// The cryptosuite: Ed25519 over SHA-256 of JCS-canonicalized JSON.
pub const CRYPTOSUITE: &str = "eddsa-jcs-2022";
/// The proof's `type`.
pub const PROOF_TYPE: &str = "DataIntegrityProof";
/// The only proof purpose signed and accepted: the origin asserts the object.
pub const PROOF_PURPOSE: &str = "assertionMethod";

/// The deepest nesting of arrays and objects parsed or canonicalized. Federated objects need a handful of levels;
/// the bound keeps hostile input from exhausting the stack of these recursive walks.
pub const MAX_DEPTH: usize = 64;

/// The largest integer magnitude a double holds exactly (2^53 − 1, JavaScript's `Number.MAX_SAFE_INTEGER`).
const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// Why a document could not be parsed, signed or verified.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum IntegrityError {
    /// The bytes are not I-JSON (RFC 7493).
    #[error("not I-JSON: {0}")]
    NotIJson(String),
    /// The document is not a JSON object.
    #[error("the document is not a JSON object")]
    NotAnObject,
    /// The document has no `proof` member.
    #[error("the document has no proof")]
    MissingProof,
    /// The proof lacks a member, has one of the wrong type or value, or its `proofValue` is not a multibase
    /// base58btc Ed25519 signature.
    #[error("malformed proof: {0}")]
    MalformedProof(String),
    /// A `cryptosuite` other than `eddsa-jcs-2022`.
    #[error("unsupported cryptosuite: {0}")]
    UnsupportedCryptosuite(String),
    /// The signature does not verify with the key: the document or the proof changed, or another key signed.
    #[error("the proof's signature does not verify")]
    BadSignature,
    /// The value has no RFC 8785 form (an integer beyond ±(2^53−1), nesting beyond [`MAX_DEPTH`]).
    #[error("cannot canonicalize: {0}")]
    Canonicalization(String),
}

/// `document` with a proof by `key` added: `type` `DataIntegrityProof`, `cryptosuite` `eddsa-jcs-2022`, the
/// given `verificationMethod` (the signing key's ID, a URL), `proofPurpose` `assertionMethod`, `created` (RFC 3339
/// UTC of `created_unix`), the document's `@context` if it has one, and `proofValue`. A `proof` the document
/// already has is replaced, not kept: it is not part of what is signed.
///
/// vc-di-eddsa §3.3: the proof configuration is the proof without `proofValue`; the signature is Ed25519 over
/// SHA-256(JCS(proof configuration)) ‖ SHA-256(JCS(document without proof)); `proofValue` is its multibase
/// base58btc (`z…`).
pub fn sign_document(
    document: &Value,
    key: &InstanceKeyPair,
    verification_method: &str,
    created_unix: i64,
) -> Result<Value, IntegrityError> {
    sign_owned_document(document.clone(), key, verification_method, created_unix)
}

/// [`sign_document`] of a document the caller gives up (it becomes the signed one, without a copy).
pub fn sign_owned_document(
    document: Value,
    key: &InstanceKeyPair,
    verification_method: &str,
    created_unix: i64,
) -> Result<Value, IntegrityError> {
    let Value::Object(mut unsecured) = document else {
        return Err(IntegrityError::NotAnObject);
    };
    unsecured.remove("proof");
    check_verification_method(verification_method)?;
    let created = rfc3339(created_unix);
    if created.is_empty() {
        return Err(IntegrityError::MalformedProof(format!(
            "created {created_unix} is not a representable time"
        )));
    }
    let mut proof = Map::new();
    proof.insert("type".to_owned(), Value::from(PROOF_TYPE));
    proof.insert("cryptosuite".to_owned(), Value::from(CRYPTOSUITE));
    proof.insert("verificationMethod".to_owned(), Value::from(verification_method));
    proof.insert("proofPurpose".to_owned(), Value::from(PROOF_PURPOSE));
    proof.insert("created".to_owned(), Value::from(created));
    // vc-di-eddsa §3.3.1: a document's context becomes the proof's, so that a JSON-LD processor reads the proof's
    // terms as the document's and the verifier can check the two were signed together.
    if let Some(context) = unsecured.get("@context") {
        proof.insert("@context".to_owned(), context.clone());
    }
    let signature = key.sign(&hash_data(
        &jcs::canonicalize_members_without(&proof, "proofValue")?,
        &[&jcs::canonicalize_members_without(&unsecured, "proof")?[..]],
    ));
    proof.insert(
        "proofValue".to_owned(),
        Value::from(format!("z{}", bs58::encode(signature).into_string())),
    );
    unsecured.insert("proof".to_owned(), Value::Object(proof));
    Ok(Value::Object(unsecured))
}

/// The `verificationMethod` of the document's proof: the ID of the key that claims to have signed, for the caller
/// to look up the key it pinned for the origin. Nothing is verified yet.
pub fn proof_verification_method(document: &Value) -> Result<&str, IntegrityError> {
    let proof = proof_of(document)?;
    let method = proof
        .get("verificationMethod")
        .and_then(Value::as_str)
        .ok_or_else(|| IntegrityError::MalformedProof("verificationMethod is missing or not a string".to_owned()))?;
    check_verification_method(method)?;
    Ok(method)
}

/// Checks the document's proof with `public_key`: `type`, `cryptosuite`, `proofPurpose` `assertionMethod`,
/// `created` (when present) a valid RFC 3339 time, the proof's `@context` (when present) equal to the document's,
/// and the signature over the document without its proof and the proof without its `proofValue`. Any change to a
/// member of either fails; whitespace and member order do not matter (JCS removes them).
///
/// Which key may sign for which origin, and whether `created` is recent enough, is the caller's policy.
pub fn verify_document(document: &Value, public_key: &PublicKey) -> Result<(), IntegrityError> {
    verify_and_canonicalize(document, public_key).map(|_| ())
}

/// [`verify_document`], returning the RFC 8785 bytes of the whole document, proof included: the signed object a
/// receiver stores, so that it stays attributable after relay. One canonical walk of the document serves both.
pub fn verify_and_canonicalize(document: &Value, public_key: &PublicKey) -> Result<Vec<u8>, IntegrityError> {
    let proof = proof_of(document)?;
    let member = |name: &str| -> Result<&str, IntegrityError> {
        proof
            .get(name)
            .and_then(Value::as_str)
            .ok_or_else(|| IntegrityError::MalformedProof(format!("{name} is missing or not a string")))
    };
    let proof_type = member("type")?;
    if proof_type != PROOF_TYPE {
        return Err(IntegrityError::MalformedProof(format!(
            "type is {proof_type:?}, not {PROOF_TYPE:?}"
        )));
    }
    let cryptosuite = member("cryptosuite")?;
    if cryptosuite != CRYPTOSUITE {
        return Err(IntegrityError::UnsupportedCryptosuite(cryptosuite.to_owned()));
    }
    let purpose = member("proofPurpose")?;
    if purpose != PROOF_PURPOSE {
        return Err(IntegrityError::MalformedProof(format!(
            "proofPurpose is {purpose:?}, not {PROOF_PURPOSE:?}"
        )));
    }
    check_verification_method(member("verificationMethod")?)?;
    if proof.contains_key("created") {
        let created = member("created")?;
        if parse_rfc3339(created).is_none() {
            return Err(IntegrityError::MalformedProof(format!(
                "created {created:?} is not an RFC 3339 time"
            )));
        }
    }
    let signature = decode_proof_value(member("proofValue")?)?;

    let members = document.as_object().ok_or(IntegrityError::NotAnObject)?;
    // vc-di-eddsa §3.3.2 lets the document's @context merely start with the proof's and then verifies against the
    // proof's. Here the two must be equal: an honest signer copies one into the other, and a context appended after
    // signing is unsigned text the receiver would store and serve as if the origin had said it.
    if let Some(proof_context) = proof.get("@context")
        && members.get("@context") != Some(proof_context)
    {
        return Err(IntegrityError::MalformedProof(
            "the proof's @context differs from the document's".to_owned(),
        ));
    }
    let (canonical, proof_span) = jcs::canonicalize_locating(members, "proof")?;
    let proof_span = proof_span.ok_or(IntegrityError::MissingProof)?;
    let unsecured = [&canonical[..proof_span.start], &canonical[proof_span.end..]];
    let proof_config = jcs::canonicalize_members_without(proof, "proofValue")?;
    if public_key.verifies(&hash_data(&proof_config, &unsecured), &signature) {
        Ok(canonical)
    } else {
        Err(IntegrityError::BadSignature)
    }
}

/// The document's proof object. A proof set (an array of proofs) is refused: an origin signs once.
fn proof_of(document: &Value) -> Result<&Map<String, Value>, IntegrityError> {
    let proof = document
        .as_object()
        .ok_or(IntegrityError::NotAnObject)?
        .get("proof")
        .ok_or(IntegrityError::MissingProof)?;
    match proof {
        Value::Object(proof) => Ok(proof),
        Value::Array(_) => Err(IntegrityError::MalformedProof(
            "proof sets (several proofs) are not supported".to_owned(),
        )),
        _ => Err(IntegrityError::MalformedProof("proof is not an object".to_owned())),
    }
}

/// A verification method is a key ID: an absolute URL such as `https://alpha.test/actor#key-1`.
fn check_verification_method(method: &str) -> Result<(), IntegrityError> {
    url::Url::parse(method)
        .map(|_| ())
        .map_err(|error| IntegrityError::MalformedProof(format!("verificationMethod {method:?} is not a URL: {error}")))
}

/// vc-di-eddsa §3.3.4 (hashing): SHA-256 of the canonical proof configuration, then SHA-256 of the canonical
/// document without its proof (given in pieces, which are hashed as one byte string), 64 bytes in all. The
/// signature covers this, not the documents themselves.
fn hash_data(proof_config: &[u8], unsecured: &[&[u8]]) -> Vec<u8> {
    let mut document = Sha256::new();
    for piece in unsecured {
        document.update(piece);
    }
    let mut data = Vec::with_capacity(64);
    data.extend_from_slice(&Sha256::digest(proof_config));
    data.extend_from_slice(&document.finalize());
    data
}

/// A `proofValue`: `z` and the base58btc of a 64-byte Ed25519 signature.
fn decode_proof_value(text: &str) -> Result<[u8; 64], IntegrityError> {
    let encoded = text.strip_prefix('z').ok_or_else(|| {
        IntegrityError::MalformedProof("proofValue is not multibase base58btc (it must start with `z`)".to_owned())
    })?;
    let bytes = bs58::decode(encoded)
        .into_vec()
        .map_err(|error| IntegrityError::MalformedProof(format!("proofValue is not base58btc: {error}")))?;
    bytes
        .as_slice()
        .try_into()
        .map_err(|_| IntegrityError::MalformedProof(format!("an Ed25519 signature has 64 bytes, not {}", bytes.len())))
}
