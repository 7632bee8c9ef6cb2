//! `HttpTransport` against a raw HTTP/1.1 server on 127.0.0.1 started by each test: which addresses and schemes are
//! refused before any connection, redirects returned rather than followed, the response cap with and without
//! Content-Length, the total timeout on a server that never answers, and requests arriving byte for byte.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use federation::transport::{HttpTransport, NonPublicRange, OutgoingPolicy, TimeoutPhase, Transport, TransportError};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One request as the server read it off the socket.
#[derive(Debug, Clone)]
struct RecordedRequest {
    /// Request line and header lines, without the blank line.
    head: String,
    body: Vec<u8>,
}

impl RecordedRequest {
    fn request_line(&self) -> &str {
        self.head.lines().next().unwrap_or("")
    }

    fn path(&self) -> &str {
        self.request_line().split(' ').nth(1).unwrap_or("")
    }

    /// Every value of a header, as the bytes arrived.
    fn header_values(&self, name: &str) -> Vec<&str> {
        self.head
            .lines()
            .skip(1)
            .filter_map(|line| line.split_once(':'))
            .filter(|(field, _)| field.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.trim_start_matches(' '))
            .collect()
    }
}

/// What the server does once it has read a request.
struct Reply {
    bytes: Vec<u8>,
    /// Keep the connection open without closing it after writing `bytes`.
    hold_open: bool,
}

impl Reply {
    fn send(bytes: impl Into<Vec<u8>>) -> Reply {
        Reply {
            bytes: bytes.into(),
            hold_open: false,
        }
    }

    fn send_and_hold(bytes: impl Into<Vec<u8>>) -> Reply {
        Reply {
            bytes: bytes.into(),
            hold_open: true,
        }
    }
}

/// A server that counts connections, records requests, and answers each with what the test's function says.
struct TestServer {
    address: SocketAddr,
    connections: Arc<AtomicUsize>,
    requests: Arc<Mutex<Vec<RecordedRequest>>>,
}

impl TestServer {
    async fn start(reply: impl Fn(&RecordedRequest) -> Reply + Send + Sync + 'static) -> TestServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let address = listener.local_addr().expect("local address");
        let connections = Arc::new(AtomicUsize::new(0));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let reply = Arc::new(reply);
        let (connection_count, recorded) = (Arc::clone(&connections), Arc::clone(&requests));
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                connection_count.fetch_add(1, Ordering::SeqCst);
                let (reply, recorded) = (Arc::clone(&reply), Arc::clone(&recorded));
                tokio::spawn(async move {
                    serve_one(stream, &*reply, &recorded).await;
                });
            }
        });
        TestServer {
            address,
            connections,
            requests,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.address)
    }

    fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    fn requests(&self) -> Vec<RecordedRequest> {
        self.requests.lock().expect("requests lock").clone()
    }
}

async fn serve_one(
    mut stream: TcpStream,
    reply: &(dyn Fn(&RecordedRequest) -> Reply + Send + Sync),
    recorded: &Mutex<Vec<RecordedRequest>>,
) {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(position) = buffer.windows(4).position(|window| window == b"\r\n\r\n") {
            break position;
        }
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(read) => buffer.extend_from_slice(&chunk[..read]),
        }
    };
    let head = String::from_utf8(buffer[..head_end].to_vec()).expect("an ASCII request head");
    let mut request = RecordedRequest {
        head,
        body: buffer[head_end + 4..].to_vec(),
    };
    let length: usize = request
        .header_values("content-length")
        .first()
        .map_or(0, |value| value.parse().expect("a numeric Content-Length"));
    while request.body.len() < length {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(read) => request.body.extend_from_slice(&chunk[..read]),
        }
    }
    let answer = reply(&request);
    recorded.lock().expect("requests lock").push(request);
    // The client may hang up mid-way (that is what the cap tests expect), so write errors are not failures.
    let _ = stream.write_all(&answer.bytes).await;
    if answer.hold_open {
        std::future::pending::<()>().await;
    }
    let _ = stream.shutdown().await;
}

fn ok_response(body: &[u8]) -> Vec<u8> {
    let mut bytes = format!(
        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

fn chunked_response(chunk_count: usize, chunk_size: usize) -> Vec<u8> {
    let mut bytes = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n".to_vec();
    for index in 0..chunk_count {
        bytes.extend_from_slice(format!("{chunk_size:x}\r\n").as_bytes());
        bytes.extend(std::iter::repeat_n(b'a' + (index % 26) as u8, chunk_size));
        bytes.extend_from_slice(b"\r\n");
    }
    bytes.extend_from_slice(b"0\r\n\r\n");
    bytes
}

fn get(uri: &str) -> http::Request<Vec<u8>> {
    http::Request::get(uri).body(Vec::new()).expect("a valid request")
}

/// Plain HTTP allowed (the test server has no TLS), private addresses refused: the default for everything else.
fn public_only_policy() -> OutgoingPolicy {
    OutgoingPolicy {
        allow_http: true,
        ..OutgoingPolicy::default()
    }
}

fn permissive_policy() -> OutgoingPolicy {
    OutgoingPolicy {
        allow_http: true,
        allow_private_addresses: true,
        ..OutgoingPolicy::default()
    }
}

fn transport(policy: OutgoingPolicy) -> HttpTransport {
    HttpTransport::new(policy).expect("the client builds")
}

/// Sends one request with a transport that may reach the server, and checks the server saw exactly
/// `expected_connections` by then: connections are accepted in order, so an earlier refused request that had
/// connected would be counted too.
async fn assert_connections_after_a_permitted_request(server: &TestServer, expected_connections: usize) {
    let response = transport(permissive_policy())
        .send(get(&server.url("/probe")))
        .await
        .expect("the permitted request succeeds");
    assert_eq!(response.status(), 200);
    assert_eq!(server.connections(), expected_connections);
}

#[tokio::test]
async fn loopback_literals_in_every_spelling_are_refused_before_connecting() {
    let server = TestServer::start(|_| Reply::send(ok_response(b"hello"))).await;
    let port = server.address.port();
    let default_policy = transport(public_only_policy());
    for uri in [
        format!("http://127.0.0.1:{port}/"),
        format!("http://127.1:{port}/"),
        format!("http://0x7f000001:{port}/"),
        format!("http://2130706433:{port}/"),
        format!("http://[::ffff:127.0.0.1]:{port}/"),
        format!("http://[::1]:{port}/"),
        format!("http://0.0.0.0:{port}/"),
    ] {
        let error = default_policy
            .send(get(&uri))
            .await
            .expect_err("a loopback literal is refused");
        assert_eq!(error.class(), "address_refused", "{uri}: {error}");
        assert!(!error.is_retryable());
        let TransportError::AddressRefused { address, range, .. } = error else {
            panic!("{uri}: {error:?}");
        };
        assert!(
            matches!(range, NonPublicRange::Loopback | NonPublicRange::Unspecified),
            "{uri}: {address} {range}"
        );
    }
    assert_connections_after_a_permitted_request(&server, 1).await;
}

#[tokio::test]
async fn loopback_is_reached_when_private_addresses_are_allowed() {
    let server = TestServer::start(|_| Reply::send(ok_response(b"hello"))).await;
    let response = transport(permissive_policy())
        .send(get(&server.url("/actor")))
        .await
        .expect("private addresses allowed");
    assert_eq!(response.status(), 200);
    assert_eq!(response.body(), b"hello");
    assert_eq!(server.requests()[0].path(), "/actor");
}

#[tokio::test]
async fn a_host_name_resolving_to_loopback_is_refused_at_connect_time() {
    let server = TestServer::start(|_| Reply::send(ok_response(b"hello"))).await;
    let uri = format!("http://localhost:{}/actor", server.address.port());

    let error = transport(public_only_policy())
        .send(get(&uri))
        .await
        .expect_err("localhost resolves to loopback only");
    assert_eq!(error.class(), "address_refused", "{error}");
    let TransportError::AddressRefused { host, address, range } = error else {
        panic!("{error:?}");
    };
    assert_eq!(host, "localhost");
    assert!(address.is_loopback(), "{address}");
    assert_eq!(range, NonPublicRange::Loopback);
    assert_connections_after_a_permitted_request(&server, 1).await;

    // The same name passes once private addresses are allowed: the refusal came from the policy, not the name.
    let response = transport(permissive_policy())
        .send(get(&uri))
        .await
        .expect("localhost allowed");
    assert_eq!(response.body(), b"hello");
}

#[tokio::test]
async fn plain_http_is_refused_unless_allowed() {
    let server = TestServer::start(|_| Reply::send(ok_response(b"hello"))).await;
    let https_only = transport(OutgoingPolicy {
        allow_private_addresses: true,
        ..OutgoingPolicy::default()
    });
    let error = https_only
        .send(get(&server.url("/actor")))
        .await
        .expect_err("http is refused");
    assert_eq!(error, TransportError::SchemeRefused { scheme: "http".into() });
    assert_eq!(error.class(), "scheme_refused");
    assert!(!error.is_retryable());

    let other_scheme = transport(permissive_policy())
        .send(get(&format!("ftp://{}/actor", server.address)))
        .await
        .expect_err("only http and https");
    assert_eq!(other_scheme.class(), "scheme_refused");

    assert_connections_after_a_permitted_request(&server, 1).await;
}

#[tokio::test]
async fn a_redirect_is_returned_and_not_followed() {
    let target_hits = Arc::new(AtomicUsize::new(0));
    let hits = Arc::clone(&target_hits);
    let server = TestServer::start(move |request| {
        if request.path() == "/moved" {
            hits.fetch_add(1, Ordering::SeqCst);
            return Reply::send(ok_response(b"followed"));
        }
        Reply::send("HTTP/1.1 302 Found\r\nLocation: /moved\r\nContent-Length: 5\r\nConnection: close\r\n\r\nmoved")
    })
    .await;

    let response = transport(permissive_policy())
        .send(get(&server.url("/inbox")))
        .await
        .expect("a 3xx is a response");
    assert_eq!(response.status(), 302);
    assert_eq!(response.headers()["location"], "/moved");
    assert_eq!(response.body(), b"moved");
    assert_eq!(target_hits.load(Ordering::SeqCst), 0);
    assert_eq!(server.requests().len(), 1);
}

fn capped_policy(max_response_bytes: usize) -> OutgoingPolicy {
    OutgoingPolicy {
        max_response_bytes,
        // Bounds the test should the early refusal regress into waiting for a body that never comes.
        total_timeout: Duration::from_secs(5),
        ..permissive_policy()
    }
}

#[tokio::test]
async fn a_response_announcing_more_than_the_cap_is_refused_before_its_body() {
    // Headers only, and the connection held open: reading the body would wait for the total timeout.
    let server = TestServer::start(|_| Reply::send_and_hold("HTTP/1.1 200 OK\r\nContent-Length: 1001\r\n\r\n")).await;
    let error = transport(capped_policy(1000))
        .send(get(&server.url("/actor")))
        .await
        .expect_err("too large");
    assert_eq!(
        error,
        TransportError::ResponseTooLarge {
            limit: 1000,
            declared: Some(1001)
        }
    );
    assert_eq!(error.class(), "response_too_large");
    assert!(!error.is_retryable());
}

#[tokio::test]
async fn a_chunked_response_past_the_cap_is_refused_while_reading() {
    let server = TestServer::start(|_| Reply::send(chunked_response(11, 100))).await;
    let error = transport(capped_policy(1000))
        .send(get(&server.url("/actor")))
        .await
        .expect_err("1100 bytes against a 1000-byte cap");
    assert_eq!(
        error,
        TransportError::ResponseTooLarge {
            limit: 1000,
            declared: None
        }
    );
}

#[tokio::test]
async fn a_large_chunked_response_is_cut_off_at_the_default_cap() {
    // 4 MiB against the default 1 MiB: the client stops reading and hangs up.
    let server = TestServer::start(|_| Reply::send(chunked_response(64, 64 * 1024))).await;
    let error = transport(permissive_policy())
        .send(get(&server.url("/actor")))
        .await
        .expect_err("over 1 MiB");
    assert_eq!(
        error,
        TransportError::ResponseTooLarge {
            limit: 1024 * 1024,
            declared: None
        }
    );
}

#[tokio::test]
async fn a_response_of_exactly_the_cap_is_accepted_with_or_without_content_length() {
    let chunked = TestServer::start(|_| Reply::send(chunked_response(10, 100))).await;
    let response = transport(capped_policy(1000))
        .send(get(&chunked.url("/actor")))
        .await
        .expect("exactly 1000 bytes chunked");
    let expected: Vec<u8> = (0..10u8).flat_map(|index| [b'a' + index; 100]).collect();
    assert_eq!(response.body(), &expected);

    let body = vec![b'z'; 1000];
    let sized = TestServer::start(move |_| Reply::send(ok_response(&body))).await;
    let response = transport(capped_policy(1000))
        .send(get(&sized.url("/actor")))
        .await
        .expect("exactly 1000 bytes with Content-Length");
    assert_eq!(response.body(), &vec![b'z'; 1000]);
}

#[tokio::test]
async fn a_server_that_never_answers_hits_the_total_timeout() {
    let server = TestServer::start(|_| Reply::send_and_hold(Vec::new())).await;
    let total_timeout = Duration::from_millis(200);
    let sending = transport(OutgoingPolicy {
        total_timeout,
        ..permissive_policy()
    })
    .send(get(&server.url("/inbox")));
    // A generous guard, not a measurement: were the policy's deadline ignored, the default 10 s would apply and
    // the guard would fire first; were there no deadline at all, the test would otherwise hang.
    let error = tokio::time::timeout(Duration::from_secs(5), sending)
        .await
        .expect("the transport's own deadline fires first")
        .expect_err("no answer");
    assert_eq!(
        error,
        TransportError::Timeout {
            phase: TimeoutPhase::Total,
            after: total_timeout
        }
    );
    assert_eq!(error.class(), "total_timeout");
    assert!(error.is_retryable());
    // The request did reach the server: the timeout is the network's, not a refusal.
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_closed_port_is_a_retryable_connect_failure() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let address = listener.local_addr().expect("local address");
    drop(listener);
    let error = transport(permissive_policy())
        .send(get(&format!("http://{address}/inbox")))
        .await
        .expect_err("nothing listens");
    assert_eq!(error.class(), "connect_failed", "{error}");
    assert!(error.is_retryable());
}

#[tokio::test]
async fn method_headers_and_body_arrive_byte_for_byte_and_the_response_comes_back_whole() {
    let response_body: Vec<u8> = (0..=255u8).chain(*b"\r\n\r\nafter a blank line").collect();
    let mut canned = format!(
        "HTTP/1.1 202 Accepted\r\nX-Queue-Position: 7\r\nContent-Type: application/octet-stream\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        response_body.len()
    )
    .into_bytes();
    canned.extend_from_slice(&response_body);
    let server = TestServer::start(move |_| Reply::send(canned.clone())).await;

    let request_body: Vec<u8> = br#"{"type":"Follow","actor":"https://alpha.test/actor"}"#
        .iter()
        .copied()
        .chain([0u8, 0xff, b'\r', b'\n', 0x80])
        .collect();
    let signature_input = r#"sig1=("@method" "@target-uri" "@authority" "content-type" "content-digest");created=1700000000;keyid="https://alpha.test/actor#key-1";alg="ed25519""#;
    let signature = "sig1=:dGhpcyBpcyBub3QgYSByZWFsIHNpZ25hdHVyZSBidXQgaXQgaXMgYnl0ZXM=:";
    let digest = "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:";
    let request = http::Request::post(server.url("/inbox?page=2&x=%20y"))
        .header("content-type", "application/activity+json")
        .header("signature-input", signature_input)
        .header("signature", signature)
        .header("content-digest", digest)
        .header("x-repeated", "one")
        .header("x-repeated", "two")
        .body(request_body.clone())
        .expect("a valid request");

    let response = transport(permissive_policy()).send(request).await.expect("answered");

    let recorded = server.requests();
    assert_eq!(recorded.len(), 1);
    let arrived = &recorded[0];
    assert_eq!(arrived.request_line(), "POST /inbox?page=2&x=%20y HTTP/1.1");
    assert_eq!(arrived.body, request_body);
    let port = server.address.port();
    let host = format!("127.0.0.1:{port}");
    let content_length = request_body.len().to_string();
    for (name, expected) in [
        ("host", vec![host.as_str()]),
        ("content-type", vec!["application/activity+json"]),
        ("signature-input", vec![signature_input]),
        ("signature", vec![signature]),
        ("content-digest", vec![digest]),
        ("x-repeated", vec!["one", "two"]),
        ("content-length", vec![content_length.as_str()]),
        ("user-agent", vec![OutgoingPolicy::default().user_agent.as_str()]),
    ] {
        assert_eq!(arrived.header_values(name), expected, "header {name}");
    }

    assert_eq!(response.status(), 202);
    assert_eq!(response.headers()["x-queue-position"], "7");
    assert_eq!(response.headers()["content-type"], "application/octet-stream");
    assert_eq!(response.body(), &response_body);
}

#[tokio::test]
async fn a_request_without_an_absolute_uri_is_invalid() {
    let error = transport(permissive_policy())
        .send(get("/inbox"))
        .await
        .expect_err("no scheme, no host");
    assert_eq!(error.class(), "invalid_request", "{error}");
    assert!(!error.is_retryable());
}

#[test]
fn the_default_policy_is_the_one_the_issue_asks_for() {
    let policy = OutgoingPolicy::default();
    assert!(!policy.allow_private_addresses);
    assert!(!policy.allow_http);
    assert_eq!(policy.connect_timeout, Duration::from_secs(5));
    assert_eq!(policy.total_timeout, Duration::from_secs(10));
    assert_eq!(policy.max_response_bytes, 1024 * 1024);
    assert!(policy.user_agent.starts_with("interai/"));
}
