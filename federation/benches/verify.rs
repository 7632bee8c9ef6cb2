//! Benchmark of the cryptographic checks the inbox runs on every request (not a timed test), and of Ed25519 against
//! RSA-2048 signing and verification over the same RFC 9421 signature base.
//!
//! Run with `cargo bench -p federation --bench verify`. The inbox's checks are timed in the inbox's order, on the
//! server side: parse `Signature-Input` and `Signature`, check `created`/`expires` and the covered components,
//! check `Content-Digest` against the body, verify the Ed25519 signature over the rebuilt signature base. Each is
//! timed for a 1 KB activity and for a 2 MiB body (the inbox's body cap). In the same run, the signature base of the
//! 1 KB request is signed and verified with Ed25519 (ed25519-dalek through `InstanceKeyPair`, verification strict)
//! and with RSA-2048 PKCS#1 v1.5 SHA-256 (crate `rsa`, signing blinded as its default; the key is generated once per
//! run), as HTTP Signatures with `rsa-sha256` do in most ActivityPub software.
//!
//! Operations run interleaved, in rounds (each round times a batch of every operation in turn), so that a slower
//! spell of the shared machine affects all of them alike. Every call is timed alone with `Instant`; the report gives
//! the median, the 99th percentile and the mean in microseconds, and operations per second on one core (1 / median
//! and 1 / mean; on a busy machine the mean carries the time the thread was not running).
//!
//! Options (environment variables, all optional):
//!
//! | Variable | Default | Meaning |
//! |---|---|---|
//! | `INTERAI_BENCH_ROUNDS` | 20 | rounds; each times 500 calls of a fast operation, 25 of an RSA signature and 10 on a 2 MiB body |

use std::hint::black_box;
use std::time::Instant;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use federation::InstanceKeyPair;
use federation::digest::{content_digest, verify_content_digest};
use federation::signature::{RequestParts, SigningParameters, TimePolicy, parse_signature, sign_request};
use http::{HeaderMap, HeaderValue, Method};
use rsa::sha2::Sha256;
use url::Url;

/// The inbox's body cap: twice `INTERAI_MAX_REQUEST_BYTES`, whose default is 1 MiB.
const INBOX_BODY_CAP: usize = 2 * 1024 * 1024;
/// When every signature of the run was made (Unix seconds); the checks run at the same second.
const NOW: i64 = 1_800_000_000;

/// One signed request as it reaches the inbox.
struct SignedRequest {
    label: &'static str,
    target: Url,
    headers: HeaderMap,
    body: Vec<u8>,
}

/// A `Follow` from alpha's instance actor to beta's, padded with a `summary` to `size` bytes.
fn activity_body(size: usize) -> Vec<u8> {
    let head = r#"{"@context":"https://www.w3.org/ns/activitystreams","id":"https://alpha.example/activities/01JBENCHFOLLOW000000000000","type":"Follow","actor":"https://alpha.example/actor","object":"https://beta.example/actor","summary":""#;
    let tail = r#""}"#;
    let padding = size.saturating_sub(head.len() + tail.len());
    let mut body = Vec::with_capacity(size);
    body.extend_from_slice(head.as_bytes());
    body.extend(std::iter::repeat_n(b'x', padding));
    body.extend_from_slice(tail.as_bytes());
    body
}

/// Signs a `POST` of `body` to beta's inbox as `Outgoing::signed_request` does.
fn signed_request(label: &'static str, body: Vec<u8>, key: &InstanceKeyPair, nonce: &str) -> SignedRequest {
    let target = Url::parse("https://beta.example/inbox").expect("URL");
    let mut headers = HeaderMap::new();
    headers.insert(
        http::header::ACCEPT,
        HeaderValue::from_static("application/activity+json"),
    );
    headers.insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/activity+json"),
    );
    headers.insert(
        "content-digest",
        HeaderValue::from_str(&content_digest(&body)).expect("header value"),
    );
    let fields = sign_request(&Method::POST, &target, &headers, &parameters(nonce), key).expect("signs");
    headers.insert(
        "signature-input",
        HeaderValue::from_str(&fields.signature_input).expect("header value"),
    );
    headers.insert(
        "signature",
        HeaderValue::from_str(&fields.signature).expect("header value"),
    );
    SignedRequest {
        label,
        target,
        headers,
        body,
    }
}

fn parameters(nonce: &str) -> SigningParameters {
    SigningParameters {
        key_id: "https://alpha.example/actor#key-01jbench".to_owned(),
        created: NOW,
        expires: NOW + 300,
        nonce: nonce.to_owned(),
    }
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> &'a str {
    headers
        .get(name)
        .and_then(|value| value.to_str().ok())
        .expect("the header is there")
}

/// The RFC 9421 signature base of `request` (§2.5), rebuilt here because the crate keeps its own private. The
/// benchmark checks it byte for byte: Ed25519 is deterministic, so signing it must give the request's signature.
fn signature_base(request: &SignedRequest) -> String {
    let parameters = header(&request.headers, "signature-input")
        .strip_prefix("sig1=")
        .expect("label sig1");
    format!(
        "\"@method\": POST\n\"@target-uri\": {}\n\"@authority\": {}\n\"content-type\": {}\n\"content-digest\": {}\n\"@signature-params\": {parameters}",
        request.target.as_str(),
        request.target.host_str().expect("host"),
        header(&request.headers, "content-type"),
        header(&request.headers, "content-digest"),
    )
}

/// The server side of one request, in the inbox's order; panics if any check refuses (it must not).
fn inbox_checks(request: &SignedRequest, key: &federation::PublicKey) {
    let signature = parse_signature(&request.headers).expect("parses");
    signature.check_time(NOW, TimePolicy::default()).expect("in time");
    signature.check_coverage(true).expect("covers");
    verify_content_digest(
        request.headers.get("content-digest").and_then(|v| v.to_str().ok()),
        &request.body,
    )
    .expect("digest matches");
    let parts = RequestParts {
        method: &Method::POST,
        target_uri: &request.target,
        headers: &request.headers,
    };
    signature.verify(&parts, key).expect("verifies");
}

/// A timed operation: its name, the body it works on, calls per round, and the call.
struct Operation<'a> {
    name: &'static str,
    body: &'static str,
    batch: usize,
    call: Box<dyn FnMut() + 'a>,
    samples: Vec<f64>,
}

impl<'a> Operation<'a> {
    fn new(name: &'static str, body: &'static str, batch: usize, call: impl FnMut() + 'a) -> Operation<'a> {
        Operation {
            name,
            body,
            batch,
            call: Box::new(call),
            samples: Vec::new(),
        }
    }
}

fn percentile(sorted: &[f64], fraction: f64) -> f64 {
    let index = ((sorted.len() as f64 - 1.0) * fraction).round() as usize;
    sorted[index]
}

fn main() {
    let rounds: usize = std::env::var("INTERAI_BENCH_ROUNDS")
        .ok()
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(20)
        .max(1);
    let ed25519 = InstanceKeyPair::from_secret_bytes(&[7; 32]);
    let ed25519_public = ed25519.public_key();
    let small = signed_request("1 KB", activity_body(1024), &ed25519, "bench-nonce-small");
    let large = signed_request("2 MiB", activity_body(INBOX_BODY_CAP), &ed25519, "bench-nonce-large");
    // Both checks must pass before anything is timed.
    inbox_checks(&small, &ed25519_public);
    inbox_checks(&large, &ed25519_public);

    let base = signature_base(&small);
    let sent_signature = STANDARD
        .decode(
            header(&small.headers, "signature")
                .strip_prefix("sig1=:")
                .and_then(|rest| rest.strip_suffix(':'))
                .expect("sig1 byte sequence"),
        )
        .expect("base64");
    assert_eq!(
        ed25519.sign(base.as_bytes()).as_slice(),
        sent_signature.as_slice(),
        "the rebuilt signature base is the one sign_request signed"
    );
    let ed25519_signature = ed25519.sign(base.as_bytes());

    let generated = Instant::now();
    let rsa_private = rsa::PrivateKey::new(&mut rand::rng(), 2048).expect("RSA-2048 key");
    let rsa_generation = generated.elapsed();
    let rsa_public = rsa_private.to_public_key();
    let rsa_signature = rsa_private.pkcs1v15_sign::<Sha256>(base.as_bytes()).expect("RSA signs");
    rsa_public
        .pkcs1v15_verify::<Sha256>(base.as_bytes(), &rsa_signature)
        .expect("RSA verifies");
    assert_eq!(rsa_signature.len(), 256, "a 2048-bit signature");

    let mut nonce_counter = 0_u64;
    let mut operations = vec![
        Operation::new(
            "inbox checks, all (parse, time, coverage, digest, Ed25519)",
            small.label,
            500,
            || inbox_checks(black_box(&small), &ed25519_public),
        ),
        Operation::new("  parse Signature-Input and Signature", small.label, 500, || {
            black_box(parse_signature(black_box(&small.headers)).expect("parses"));
        }),
        Operation::new("  Content-Digest check (SHA-256 of the body)", small.label, 500, || {
            verify_content_digest(Some(header(&small.headers, "content-digest")), black_box(&small.body))
                .expect("digest");
        }),
        Operation::new(
            "inbox checks, all (parse, time, coverage, digest, Ed25519)",
            large.label,
            10,
            || inbox_checks(black_box(&large), &ed25519_public),
        ),
        Operation::new("  Content-Digest check (SHA-256 of the body)", large.label, 10, || {
            verify_content_digest(Some(header(&large.headers, "content-digest")), black_box(&large.body))
                .expect("digest");
        }),
        Operation::new("sender: digest and sign_request (Ed25519)", small.label, 500, || {
            nonce_counter += 1;
            black_box(signed_request(
                "1 KB",
                small.body.clone(),
                &ed25519,
                &format!("nonce-{nonce_counter}"),
            ));
        }),
        Operation::new("Ed25519 sign (signature base)", "base", 500, || {
            black_box(ed25519.sign(black_box(base.as_bytes())));
        }),
        Operation::new("Ed25519 verify, strict (signature base)", "base", 500, || {
            assert!(ed25519_public.verifies(black_box(base.as_bytes()), &ed25519_signature));
        }),
        Operation::new("RSA-2048 PKCS#1 v1.5 SHA-256 sign, blinded", "base", 25, || {
            black_box(
                rsa_private
                    .pkcs1v15_sign::<Sha256>(black_box(base.as_bytes()))
                    .expect("RSA signs"),
            );
        }),
        Operation::new("RSA-2048 PKCS#1 v1.5 SHA-256 verify", "base", 500, || {
            rsa_public
                .pkcs1v15_verify::<Sha256>(black_box(base.as_bytes()), &rsa_signature)
                .expect("RSA verifies");
        }),
    ];

    // One untimed round warms caches and the branch predictor.
    for operation in &mut operations {
        for _ in 0..operation.batch.min(10) {
            (operation.call)();
        }
    }
    let started = Instant::now();
    for _ in 0..rounds {
        for operation in &mut operations {
            for _ in 0..operation.batch {
                let call_started = Instant::now();
                (operation.call)();
                operation.samples.push(call_started.elapsed().as_secs_f64() * 1e6);
            }
        }
    }

    println!(
        "inbox verification and signing benchmark ({rounds} interleaved rounds in {:.1} s; RSA-2048 key generated in {:.0} ms; signature base {} bytes)",
        started.elapsed().as_secs_f64(),
        rsa_generation.as_secs_f64() * 1e3,
        base.len()
    );
    println!(
        "{:<62} {:>6} {:>8} {:>11} {:>11} {:>11} {:>12} {:>10}",
        "operation", "body", "calls", "median µs", "p99 µs", "mean µs", "ops/s median", "ops/s mean"
    );
    for operation in &mut operations {
        operation.samples.sort_by(f64::total_cmp);
        let median = percentile(&operation.samples, 0.5);
        let mean = operation.samples.iter().sum::<f64>() / operation.samples.len() as f64;
        println!(
            "{:<62} {:>6} {:>8} {:>11.2} {:>11.2} {:>11.2} {:>12.0} {:>10.0}",
            operation.name,
            operation.body,
            operation.samples.len(),
            median,
            percentile(&operation.samples, 0.99),
            mean,
            1e6 / median,
            1e6 / mean
        );
    }
}
