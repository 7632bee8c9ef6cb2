//! Tests of RFC 9421 signing and verification: the RFC's own Ed25519 example, round trips, and each way a
//! signature must fail.

use http::HeaderValue;

use super::*;
use crate::digest::content_digest;

/// RFC 9421 Appendix B.1.4, `test-key-ed25519` (the seed inside its PKCS#8 private key).
const RFC_9421_SECRET: [u8; 32] = [
    0x9f, 0x83, 0x62, 0xf8, 0x7a, 0x48, 0x4a, 0x95, 0x4e, 0x6e, 0x74, 0x0c, 0x5b, 0x4c, 0x0e, 0x84, 0x22, 0x91, 0x39,
    0xa2, 0x0a, 0xa8, 0xab, 0x56, 0xff, 0x66, 0x58, 0x6f, 0x6a, 0x7d, 0x29, 0xc5,
];

fn alpha_key() -> InstanceKeyPair {
    InstanceKeyPair::from_secret_bytes(&[7; 32])
}

fn inbox_url() -> Url {
    Url::parse("https://beta.test/inbox").expect("valid URL")
}

/// A POST of `body` to beta's inbox, signed by alpha at `created` for 300 s.
fn signed_post(body: &[u8], created: i64) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/activity+json"),
    );
    headers.insert(
        "content-digest",
        HeaderValue::from_str(&content_digest(body)).expect("ASCII"),
    );
    let parameters = SigningParameters {
        key_id: "https://alpha.test/actor#key-1".to_owned(),
        created,
        expires: created + 300,
        nonce: "01jd9xq3m5n6p7r8s9t0v1w2x3".to_owned(),
    };
    let fields = sign_request(&Method::POST, &inbox_url(), &headers, &parameters, &alpha_key()).expect("signs");
    headers.insert(
        "signature-input",
        HeaderValue::from_str(&fields.signature_input).expect("ASCII"),
    );
    headers.insert("signature", HeaderValue::from_str(&fields.signature).expect("ASCII"));
    headers
}

fn verify_at(headers: &HeaderMap, url: &Url, now: i64, key: &PublicKey) -> Result<(), Rejection> {
    let parsed = parse_signature(headers)?;
    parsed.check_time(now, TimePolicy::default())?;
    parsed.check_coverage(headers.contains_key("content-digest"))?;
    parsed.verify(
        &RequestParts {
            method: &Method::POST,
            target_uri: url,
            headers,
        },
        key,
    )
}

#[test]
fn the_rfc_9421_ed25519_example_is_reproduced_byte_for_byte() {
    // Appendix B.2.6: POST /foo?param=Value&Pet=dog to example.com, covering date, @method, @path, @authority,
    // content-type and content-length, created 1618884473, keyid test-key-ed25519.
    let url = Url::parse("https://example.com/foo?param=Value&Pet=dog").expect("valid URL");
    let mut headers = HeaderMap::new();
    headers.insert("date", HeaderValue::from_static("Tue, 20 Apr 2021 02:07:55 GMT"));
    headers.insert("content-type", HeaderValue::from_static("application/json"));
    headers.insert("content-length", HeaderValue::from_static("18"));
    let components: Vec<String> = [
        "date",
        "@method",
        "@path",
        "@authority",
        "content-type",
        "content-length",
    ]
    .iter()
    .map(|name| (*name).to_owned())
    .collect();
    let parameters = vec![
        ("created".to_owned(), ParameterValue::Integer(1_618_884_473)),
        (
            "keyid".to_owned(),
            ParameterValue::String("test-key-ed25519".to_owned()),
        ),
    ];
    let serialized = serialize_signature_parameters(&components, &parameters).expect("serializes");
    assert_eq!(
        serialized,
        "(\"date\" \"@method\" \"@path\" \"@authority\" \"content-type\" \"content-length\");created=1618884473;keyid=\"test-key-ed25519\""
    );
    let request = RequestParts {
        method: &Method::POST,
        target_uri: &url,
        headers: &headers,
    };
    let base = signature_base(&request, &components, &serialized).expect("base");
    assert_eq!(
        base,
        "\"date\": Tue, 20 Apr 2021 02:07:55 GMT\n\"@method\": POST\n\"@path\": /foo\n\"@authority\": example.com\n\
         \"content-type\": application/json\n\"content-length\": 18\n\"@signature-params\": (\"date\" \"@method\" \
         \"@path\" \"@authority\" \"content-type\" \"content-length\");created=1618884473;keyid=\"test-key-ed25519\""
    );
    let key = InstanceKeyPair::from_secret_bytes(&RFC_9421_SECRET);
    assert_eq!(
        STANDARD.encode(key.sign(base.as_bytes())),
        "wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1u02Gb04v9EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw=="
    );
    // The published public key is the one of that secret.
    let published = PublicKey::from_spki_pem(
        "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAJrQLj5P/89iXES9+vFgrIy29clF9CC/oPPsw3c5D0bs=\n-----END PUBLIC KEY-----",
    )
    .expect("valid key");
    assert_eq!(published, key.public_key());
}

#[test]
fn a_signed_post_verifies_with_the_senders_key() {
    let body = br#"{"type":"Follow"}"#;
    let headers = signed_post(body, 1_800_000_000);
    assert_eq!(
        verify_at(&headers, &inbox_url(), 1_800_000_010, &alpha_key().public_key()),
        Ok(())
    );
    let parsed = parse_signature(&headers).expect("parses");
    assert_eq!(parsed.key_id, "https://alpha.test/actor#key-1");
    assert_eq!(parsed.nonce, "01jd9xq3m5n6p7r8s9t0v1w2x3");
    assert_eq!(
        parsed.components,
        ["@method", "@target-uri", "@authority", "content-type", "content-digest"]
    );
}

#[test]
fn time_comes_from_the_caller_never_from_the_system_clock() {
    // Signed in 2001: a verifier that read the system clock would call it expired; the caller's clock decides.
    let created = 1_000_000_000;
    let headers = signed_post(b"{}", created);
    let key = alpha_key().public_key();
    assert_eq!(verify_at(&headers, &inbox_url(), created + 10, &key), Ok(()));
    // And a signature made "now" by the system's standards is refused at the caller's earlier time.
    let headers = signed_post(b"{}", 1_900_000_000);
    assert_eq!(
        verify_at(&headers, &inbox_url(), 1_800_000_000, &key).map_err(|rejection| rejection.reason),
        Err(RejectionReason::CreatedInFuture)
    );
}

#[test]
fn created_and_expires_are_held_to_the_policy() {
    let created = 1_800_000_000;
    let headers = signed_post(b"{}", created);
    let parsed = parse_signature(&headers).expect("parses");
    let policy = TimePolicy::default();
    let reason = |now| parsed.check_time(now, policy).map_err(|rejection| rejection.reason);
    assert_eq!(reason(created - 300), Ok(()));
    assert_eq!(reason(created - 301), Err(RejectionReason::CreatedInFuture));
    assert_eq!(reason(created + 299), Ok(()));
    assert_eq!(reason(created + 300), Err(RejectionReason::Expired));
    let strict = TimePolicy {
        max_clock_skew: 60,
        max_validity: 300,
    };
    assert_eq!(
        parsed
            .check_time(created + 61, strict)
            .map_err(|rejection| rejection.reason),
        Err(RejectionReason::CreatedTooOld)
    );
    let short = TimePolicy {
        max_clock_skew: 300,
        max_validity: 299,
    };
    assert_eq!(
        parsed.check_time(created, short).map_err(|rejection| rejection.reason),
        Err(RejectionReason::ValidityTooLong)
    );
}

#[test]
fn the_target_uri_must_be_the_public_one_not_the_request_line() {
    let headers = signed_post(b"{}", 1_800_000_000);
    let key = alpha_key().public_key();
    // A server that rebuilt the URI from its listen address (or trusted a Host header) would see another URI.
    for seen_as in [
        "http://127.0.0.1:8080/inbox",
        "https://beta.test:8443/inbox",
        "https://evil.test/inbox",
    ] {
        let url = Url::parse(seen_as).expect("valid URL");
        assert_eq!(
            verify_at(&headers, &url, 1_800_000_001, &key).map_err(|rejection| rejection.reason),
            Err(RejectionReason::SignatureInvalid),
            "{seen_as}"
        );
    }
    assert_eq!(verify_at(&headers, &inbox_url(), 1_800_000_001, &key), Ok(()));
}

#[test]
fn any_change_to_a_covered_component_breaks_the_signature() {
    let key = alpha_key().public_key();
    let original = signed_post(br#"{"a":1}"#, 1_800_000_000);
    let mut other_digest = original.clone();
    other_digest.insert(
        "content-digest",
        HeaderValue::from_str(&content_digest(br#"{"a":2}"#)).expect("ASCII"),
    );
    let mut other_type = original.clone();
    other_type.insert(http::header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    for tampered in [other_digest, other_type] {
        assert_eq!(
            verify_at(&tampered, &inbox_url(), 1_800_000_001, &key).map_err(|rejection| rejection.reason),
            Err(RejectionReason::SignatureInvalid)
        );
    }
    let parsed = parse_signature(&original).expect("parses");
    let as_get = parsed.verify(
        &RequestParts {
            method: &Method::GET,
            target_uri: &inbox_url(),
            headers: &original,
        },
        &key,
    );
    assert_eq!(
        as_get.map_err(|rejection| rejection.reason),
        Err(RejectionReason::SignatureInvalid)
    );
}

#[test]
fn another_key_does_not_verify() {
    let headers = signed_post(b"{}", 1_800_000_000);
    let stranger = InstanceKeyPair::from_secret_bytes(&[9; 32]).public_key();
    assert_eq!(
        verify_at(&headers, &inbox_url(), 1_800_000_001, &stranger).map_err(|rejection| rejection.reason),
        Err(RejectionReason::SignatureInvalid)
    );
}

#[test]
fn a_signature_must_cover_the_body_when_there_is_one() {
    // Signed as a GET (no body components), then presented with a body.
    let mut headers = HeaderMap::new();
    let parameters = SigningParameters {
        key_id: "https://alpha.test/actor#key-1".to_owned(),
        created: 1_800_000_000,
        expires: 1_800_000_300,
        nonce: "n".to_owned(),
    };
    let fields = sign_request(&Method::POST, &inbox_url(), &headers, &parameters, &alpha_key()).expect("signs");
    headers.insert(
        "signature-input",
        HeaderValue::from_str(&fields.signature_input).expect("ASCII"),
    );
    headers.insert("signature", HeaderValue::from_str(&fields.signature).expect("ASCII"));
    let parsed = parse_signature(&headers).expect("parses");
    assert_eq!(parsed.check_coverage(false), Ok(()));
    assert_eq!(
        parsed.check_coverage(true).map_err(|rejection| rejection.reason),
        Err(RejectionReason::ComponentsMissing)
    );
}

#[test]
fn malformed_and_unsupported_signatures_are_named() {
    let reason = |input: &str, signature: &str| {
        let mut headers = HeaderMap::new();
        headers.insert("signature-input", HeaderValue::from_str(input).expect("ASCII"));
        headers.insert("signature", HeaderValue::from_str(signature).expect("ASCII"));
        parse_signature(&headers)
            .map(|_| ())
            .map_err(|rejection| rejection.reason)
    };
    let sixty_four = format!(":{}:", STANDARD.encode([0_u8; 64]));
    let complete = "(\"@method\");created=1;expires=2;nonce=\"n\";keyid=\"k\"";
    assert_eq!(
        reason(&format!("sig1={complete}"), &format!("sig1={sixty_four}")),
        Ok(())
    );
    assert_eq!(
        reason(&format!("sig1={complete}"), &format!("other={sixty_four}")),
        Err(RejectionReason::SignatureMalformed)
    );
    assert_eq!(
        reason(
            "sig1=(\"@method\");created=1;expires=2;keyid=\"k\"",
            &format!("sig1={sixty_four}")
        ),
        Err(RejectionReason::SignatureMalformed),
        "no nonce"
    );
    assert_eq!(
        reason(
            "sig1=(\"@method\");created=1;nonce=\"n\";keyid=\"k\"",
            &format!("sig1={sixty_four}")
        ),
        Err(RejectionReason::SignatureMalformed),
        "no expires"
    );
    assert_eq!(
        reason(
            &format!("sig1={complete};alg=\"rsa-v1_5-sha256\""),
            &format!("sig1={sixty_four}")
        ),
        Err(RejectionReason::AlgorithmUnsupported)
    );
    assert_eq!(
        reason(
            "sig1=(\"content-type\";sf);created=1;expires=2;nonce=\"n\";keyid=\"k\"",
            &format!("sig1={sixty_four}")
        ),
        Err(RejectionReason::ComponentUnsupported)
    );
    assert_eq!(
        reason(&format!("sig1={complete}"), "sig1=:AAAA:"),
        Err(RejectionReason::SignatureMalformed),
        "short signature"
    );
    assert_eq!(
        reason("sig1=(", "sig1=:AAAA:"),
        Err(RejectionReason::SignatureMalformed)
    );
    assert_eq!(
        parse_signature(&HeaderMap::new()).map_err(|rejection| rejection.reason),
        Err(RejectionReason::SignatureMissing)
    );
}

#[test]
fn a_covered_field_that_is_absent_cannot_verify() {
    let mut headers = signed_post(b"{}", 1_800_000_000);
    headers.remove("content-digest");
    let parsed = parse_signature(&headers).expect("parses");
    let outcome = parsed.verify(
        &RequestParts {
            method: &Method::POST,
            target_uri: &inbox_url(),
            headers: &headers,
        },
        &alpha_key().public_key(),
    );
    assert_eq!(
        outcome.map_err(|rejection| rejection.reason),
        Err(RejectionReason::ComponentsMissing)
    );
}
