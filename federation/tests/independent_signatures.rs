//! Signatures made by an independent RFC 9421 implementation (Python's `http-message-signatures`, see
//! tests/fixtures/python-http-message-signatures/make_fixture.py) verify with this crate, and stop verifying
//! when anything they cover changes.

use federation::digest::verify_content_digest;
use federation::signature::{RequestParts, TimePolicy, parse_signature};
use federation::{PublicKey, RejectionReason};
use http::{HeaderMap, HeaderName, HeaderValue, Method};
use serde_json::Value;
use url::Url;

const FIXTURE: &str = include_str!("fixtures/python-http-message-signatures/signed.json");

struct FixtureRequest {
    method: Method,
    url: Url,
    headers: HeaderMap,
    body: Option<String>,
}

fn fixture() -> (Value, PublicKey, Vec<FixtureRequest>) {
    let fixture: Value = serde_json::from_str(FIXTURE).expect("the fixture is JSON");
    let key = PublicKey::from_spki_pem(fixture["public_key_pem"].as_str().expect("a PEM key")).expect("an Ed25519 key");
    let requests = fixture["requests"]
        .as_array()
        .expect("requests")
        .iter()
        .map(|request| {
            let mut headers = HeaderMap::new();
            for pair in request["headers"].as_array().expect("headers") {
                let name = HeaderName::from_bytes(pair[0].as_str().expect("name").as_bytes()).expect("a field name");
                let value = HeaderValue::from_str(pair[1].as_str().expect("value")).expect("a field value");
                headers.append(name, value);
            }
            FixtureRequest {
                method: Method::from_bytes(request["method"].as_str().expect("method").as_bytes()).expect("a method"),
                url: Url::parse(request["url"].as_str().expect("url")).expect("a URL"),
                headers,
                body: request["body"].as_str().map(str::to_owned),
            }
        })
        .collect();
    (fixture, key, requests)
}

fn verify(request: &FixtureRequest, now: i64, key: &PublicKey) -> Result<(), federation::Rejection> {
    let parsed = parse_signature(&request.headers)?;
    parsed.check_time(now, TimePolicy::default())?;
    parsed.check_coverage(request.body.is_some())?;
    if let Some(body) = &request.body {
        let digest = request
            .headers
            .get("content-digest")
            .and_then(|value| value.to_str().ok());
        verify_content_digest(digest, body.as_bytes())?;
    }
    parsed.verify(
        &RequestParts {
            method: &request.method,
            target_uri: &request.url,
            headers: &request.headers,
        },
        key,
    )
}

#[test]
fn every_request_signed_by_the_python_implementation_verifies() {
    let (fixture, key, requests) = fixture();
    let now = fixture["now"].as_i64().expect("now");
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert_eq!(verify(request, now, &key), Ok(()), "{} {}", request.method, request.url);
        let parsed = parse_signature(&request.headers).expect("parses");
        assert_eq!(parsed.key_id, fixture["key_id"].as_str().expect("key id"));
    }
}

#[test]
fn the_python_signatures_fail_once_anything_they_cover_changes() {
    let (fixture, key, mut requests) = fixture();
    let now = fixture["now"].as_i64().expect("now");
    let reason = |request: &FixtureRequest| verify(request, now, &key).map_err(|rejection| rejection.reason);

    let post = &mut requests[0];
    let original_body = post.body.clone();
    post.body = Some(r#"{"type": "Undo", "actor": "https://gamma.test/actor"}"#.to_owned());
    assert_eq!(reason(post), Err(RejectionReason::DigestMismatch));
    post.body = original_body;
    post.url = Url::parse("https://beta.test/inbox?x=1").expect("a URL");
    assert_eq!(reason(post), Err(RejectionReason::SignatureInvalid));

    let get = &mut requests[1];
    get.method = Method::DELETE;
    assert_eq!(reason(get), Err(RejectionReason::SignatureInvalid));
    get.method = Method::GET;
    assert_eq!(
        verify(get, now + 270, &key).map_err(|rejection| rejection.reason),
        Err(RejectionReason::Expired)
    );
}
