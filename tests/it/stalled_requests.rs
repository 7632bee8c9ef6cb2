//! Requests that open and stall, over real sockets: a thousand stalled bodies from one address hold nothing up,
//! every stalled socket is closed by the deadline, and the inbox refuses what its headers already condemn without
//! waiting for the body.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

use crate::federation::{follow_of, peered, signed_post};
use crate::fixtures::agent;
use crate::support::network::{Network, Node};

/// The address the stalling client uses; the peer and the probes come from 127.0.0.1 and 127.0.0.3.
const STALLING_ADDRESS: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 2);
/// How many stalled requests the one address opens.
const STALLED: usize = 1024;
/// The request deadline the served node runs with, short so the test does not wait 30 s for it.
const DEADLINE_SECONDS: u64 = 3;
/// How long anything the test waits for may take before it counts as never.
const GENEROUS: Duration = Duration::from_secs(20);

/// `beta.test`'s router of `network`, served on a real loopback socket with its own configuration's connection
/// limits; the returned sender stops it.
async fn serve_node(node: &Node) -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let address = listener.local_addr().expect("address");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let config = node.instance.config().clone();
    let router = node.router.clone();
    let metrics = node.instance.metrics().clone();
    tokio::spawn(async move {
        interai::instance::serve_router(&config, listener, router, metrics, async move {
            let _ = stopped.await;
        })
        .await;
    });
    (address, stop)
}

/// A connection from `from` to `to`.
async fn connect_from(from: Ipv4Addr, to: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().expect("socket");
    socket
        .bind(SocketAddr::new(IpAddr::V4(from), 0))
        .expect("bind source address");
    socket.connect(to).await.expect("connect")
}

/// Reads what the server sends until it closes the connection (a reset counts as closed); `None` if it is still
/// open after [`GENEROUS`].
async fn read_until_closed(stream: &mut TcpStream) -> Option<String> {
    let mut received = Vec::new();
    match tokio::time::timeout(GENEROUS, stream.read_to_end(&mut received)).await {
        Ok(Ok(_)) => Some(String::from_utf8_lossy(&received).into_owned()),
        Ok(Err(error)) if error.kind() == std::io::ErrorKind::ConnectionReset => {
            Some(String::from_utf8_lossy(&received).into_owned())
        }
        Ok(Err(error)) => panic!("reading failed: {error}"),
        Err(_) => None,
    }
}

/// Raises this process's open-file limit to what the test needs, where the soft limit is lower (each stalled
/// request is a socket at both ends here).
fn enough_open_files() {
    let needed = (STALLED as u64) * 2 + 512;
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile);
    if limit.current.is_some_and(|current| current < needed) {
        let raised = rustix::process::Rlimit {
            current: Some(limit.maximum.map_or(needed, |maximum| maximum.min(needed.max(4096)))),
            maximum: limit.maximum,
        };
        rustix::process::setrlimit(rustix::process::Resource::Nofile, raised).expect("raise the open-file limit");
    }
}

/// The head of a `/mcp` POST with a valid key that announces a body it never finishes.
fn stalled_mcp_head(key: &str) -> Vec<u8> {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: beta.test\r\nAuthorization: Bearer {key}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: 4000\r\n\r\n{{\"jsonrpc\":\"2.0\",\"id\":1,"
    )
    .into_bytes()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_stalled_bodies_from_one_address_hold_nothing_up_and_are_closed_by_the_deadline() {
    enough_open_files();
    let network = Network::start_configured(&["alpha.test", "beta.test"], |_, config| {
        config.request_timeout_seconds = DEADLINE_SECONDS;
    })
    .await;
    peered(&network, "alpha.test", "beta.test").await;
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));
    let reader = agent(beta.service(), "reader").await;
    let (address, stop) = serve_node(beta).await;
    let per_client = beta.instance.config().max_connections_per_client as usize;
    assert!(
        per_client < STALLED,
        "the test needs more stalled requests than one client may hold"
    );

    // One address opens 1,024 requests whose bodies never finish.
    let head = stalled_mcp_head(&reader.key);
    let mut stalled = Vec::with_capacity(STALLED);
    for _ in 0..STALLED {
        let mut stream = connect_from(STALLING_ADDRESS, address).await;
        // A connection the server already closed (over the per-client cap) may refuse the write: that is the point.
        let _ = stream.write_all(&head).await;
        stalled.push(stream);
    }
    let opened = std::time::Instant::now();

    // Everyone else is served at once: the health probe, an agent on /mcp, and a peer's signed inbox POST, from
    // other addresses.
    let started = std::time::Instant::now();
    let health = reqwest::get(format!("http://{address}/healthz"))
        .await
        .expect("healthz");
    assert_eq!(health.status(), 200);
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "healthz took {:?}",
        started.elapsed()
    );

    let started = std::time::Instant::now();
    let tools = reqwest::Client::new()
        .post(format!("http://{address}/mcp"))
        .header("host", "beta.test")
        .header("authorization", format!("Bearer {}", reader.key))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .body(json!({ "jsonrpc": "2.0", "id": 7, "method": "tools/list" }).to_string())
        .send()
        .await
        .expect("tools/list");
    assert_eq!(tools.status(), 200);
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "/mcp took {:?}",
        started.elapsed()
    );

    let activity = follow_of(alpha, beta, "over-a-real-socket");
    let signed = signed_post(alpha, beta, &activity).await;
    let peer_client = reqwest::Client::builder()
        .local_address(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 3)))
        .build()
        .expect("client");
    let started = std::time::Instant::now();
    let mut request = peer_client.post(format!("http://{address}/inbox"));
    for (name, value) in signed.headers() {
        request = request.header(name, value);
    }
    let answer = request.body(signed.body().clone()).send().await.expect("inbox POST");
    let status = answer.status();
    let body: Value = answer.json().await.unwrap_or(Value::Null);
    assert!(status.is_success(), "{status} {body}");
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "the inbox took {:?}",
        started.elapsed()
    );

    // Every stalled socket is closed: those over the per-client cap at once with 503, the others by the deadline
    // with 408.
    let mut timed_out = 0;
    let mut refused = 0;
    for stream in &mut stalled {
        let answer = read_until_closed(stream)
            .await
            .expect("every stalled socket is closed by the server");
        if answer.starts_with("HTTP/1.1 408") {
            timed_out += 1;
        } else if answer.starts_with("HTTP/1.1 503") {
            refused += 1;
        } else {
            assert!(answer.is_empty(), "unexpected answer to a stalled request: {answer}");
            refused += 1;
        }
    }
    let all_closed_after = opened.elapsed();
    let scrape = beta.instance.metrics().render();
    assert!(
        scrape.contains(&format!(
            "interai_http_connections_refused_total {}",
            STALLED - per_client
        )),
        "the refusals are counted: {scrape}"
    );
    assert_eq!(timed_out, per_client, "the requests the cap let in time out");
    assert_eq!(refused, STALLED - per_client);
    assert!(
        all_closed_after < Duration::from_secs(DEADLINE_SECONDS + 5),
        "the last stalled socket closed after {all_closed_after:?}"
    );
    let _ = stop.send(());
}

#[tokio::test]
async fn a_stalled_body_gets_408_with_the_spec_error_and_its_connection_closed() {
    let network = Network::start_configured(&["beta.test"], |_, config| {
        config.request_timeout_seconds = DEADLINE_SECONDS;
    })
    .await;
    let beta = network.node("beta.test");
    let reader = agent(beta.service(), "reader").await;
    let (address, stop) = serve_node(beta).await;
    let mut stream = TcpStream::connect(address).await.expect("connect");
    stream
        .write_all(&stalled_mcp_head(&reader.key))
        .await
        .expect("head sent");
    let started = std::time::Instant::now();
    let answer = read_until_closed(&mut stream).await.expect("closed by the server");
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.to_ascii_lowercase().contains("connection: close"), "{answer}");
    let body: Value = serde_json::from_str(answer.split("\r\n\r\n").nth(1).unwrap_or("")).expect("a JSON body");
    assert_eq!(body["error"]["code"], "validation_failed");
    assert_eq!(body["error"]["details"]["reason"], "request_timeout");
    // The body pace cuts it (5 s of grace) or the deadline (3 s), whichever comes first.
    assert!(
        started.elapsed() < Duration::from_secs(DEADLINE_SECONDS + 2),
        "{:?}",
        started.elapsed()
    );
    let _ = stop.send(());
}

/// A request head for `/inbox` from `signed`, with its `Content-Length` replaced by `announced` and none of its body.
fn inbox_head(signed: &http::Request<Vec<u8>>, announced: usize) -> Vec<u8> {
    let mut head = String::from("POST /inbox HTTP/1.1\r\nHost: beta.test\r\n");
    for (name, value) in signed.headers() {
        if name == http::header::CONTENT_LENGTH || name == http::header::HOST {
            continue;
        }
        head.push_str(&format!("{}: {}\r\n", name, value.to_str().expect("ASCII header")));
    }
    head.push_str(&format!("Content-Length: {announced}\r\n\r\n"));
    head.into_bytes()
}

/// Sends a head that announces `announced` body bytes and none of them, and returns the answer's status line if
/// it comes while the body is still owed (well before the deadline).
async fn answered_from_the_head(address: SocketAddr, head: Vec<u8>) -> String {
    let mut stream = TcpStream::connect(address).await.expect("connect");
    stream.write_all(&head).await.expect("head sent");
    let mut answer = vec![0_u8; 4096];
    let read = tokio::time::timeout(Duration::from_secs(1), stream.read(&mut answer))
        .await
        .expect("answered within a second, without the body")
        .expect("read");
    String::from_utf8_lossy(&answer[..read])
        .lines()
        .next()
        .unwrap_or("")
        .to_owned()
}

#[tokio::test]
async fn the_inbox_refuses_from_the_headers_without_waiting_for_the_body() {
    let network = Network::start_configured(&["alpha.test", "beta.test", "gamma.test"], |_, config| {
        config.request_timeout_seconds = 30;
    })
    .await;
    peered(&network, "alpha.test", "beta.test").await;
    let (alpha, beta, gamma) = (
        network.node("alpha.test"),
        network.node("beta.test"),
        network.node("gamma.test"),
    );
    let (address, stop) = serve_node(beta).await;
    let activity = follow_of(alpha, beta, "headers-only");

    // No signature.
    let mut unsigned = signed_post(alpha, beta, &activity).await;
    unsigned.headers_mut().remove("signature");
    unsigned.headers_mut().remove("signature-input");
    let status = answered_from_the_head(address, inbox_head(&unsigned, 1000)).await;
    assert!(status.starts_with("HTTP/1.1 401"), "{status}");

    // A wrong content type.
    let mut wrong_type = signed_post(alpha, beta, &activity).await;
    wrong_type
        .headers_mut()
        .insert("content-type", http::HeaderValue::from_static("text/plain"));
    let status = answered_from_the_head(address, inbox_head(&wrong_type, 1000)).await;
    assert!(status.starts_with("HTTP/1.1 415"), "{status}");

    // An unknown sender announcing more than a first contact may.
    let stranger = signed_post(gamma, beta, &follow_of(gamma, beta, "big")).await;
    let status = answered_from_the_head(
        address,
        inbox_head(&stranger, interai::apub::inbox::FIRST_CONTACT_MAX_BODY_BYTES + 1),
    )
    .await;
    assert!(status.starts_with("HTTP/1.1 403"), "{status}");

    // A blocked peer.
    beta.federation()
        .block_peer(&alpha.realm, "testing", None)
        .await
        .expect("block");
    let from_blocked = signed_post(alpha, beta, &follow_of(alpha, beta, "blocked")).await;
    let status = answered_from_the_head(address, inbox_head(&from_blocked, 1000)).await;
    assert!(status.starts_with("HTTP/1.1 403"), "{status}");
    let _ = stop.send(());
}
