//! Every public URL answers right: each route an instance serves, asked without a key (and the admin routes also
//! with one) with well-formed IDs that name nothing, malformed IDs and IDs that name something, answers without a
//! server error; refusals are JSON; and the answers carry the headers their RFCs ask for (one `Host`, WebFinger's
//! CORS, Bearer challenges, the CORS methods `/mcp` really serves).

use interai::domain::knowledge::SpaceVisibility;
use interai::service::content::PublishRequest;
use interai::service::spaces::NewSpace;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::fixtures::{agent, metadata};
use crate::harness::ServedInstance;

/// A well-formed ULID that no object of a test has.
const UNKNOWN_ULID: &str = "01j9zq3k5m8n2p4r6t8v0w2x4y";

/// Every prefix the spec defines.
const PREFIXES: [&str; 15] = [
    "usr", "org", "ai", "spc", "ent", "src", "thr", "cnt", "rev", "clm", "ast", "use", "rvw", "rat", "key",
];

/// IDs that are not IDs: no prefix, an unknown prefix, a short or invalid ULID, upper case, an encoded slash,
/// a ULID out of range, text that is far too long.
fn malformed_ids() -> Vec<String> {
    vec![
        "x".to_owned(),
        "cnt_".to_owned(),
        "cnt_123".to_owned(),
        format!("zzz_{UNKNOWN_ULID}"),
        format!("CNT_{}", UNKNOWN_ULID.to_ascii_uppercase()),
        format!("cnt_{UNKNOWN_ULID}%2Fx"),
        "cnt_81j9zq3k5m8n2p4r6t8v0w2x4y".to_owned(),
        "cnt_ilou9zq3k5m8n2p4r6t8v0w2x4".to_owned(),
        format!("cnt_{}", "a".repeat(4000)),
        "%00".to_owned(),
    ]
}

/// What a request got: status, headers, body (JSON when it parses, else the text).
#[derive(Debug)]
struct Answer {
    status: u16,
    headers: reqwest::header::HeaderMap,
    body: Value,
}

impl Answer {
    fn header(&self, name: &str) -> String {
        self.headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    }
}

async fn send(request: reqwest::RequestBuilder) -> Answer {
    let response = request.send().await.expect("request sent");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.expect("body");
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    Answer { status, headers, body }
}

/// The objects a test instance has: an actor of each kind, content in a federated and in a local space, both spaces,
/// a revision and a claim.
struct KnownObjects {
    actors: Vec<String>,
    federated_content: String,
    local_content: String,
    others: Vec<String>,
}

async fn known_objects(served: &ServedInstance) -> KnownObjects {
    let service = &served.service;
    let admin = service.realm_admin().await.expect("admin");
    let author = agent(service, "author").await;
    let mut spaces = Vec::new();
    let mut contents = Vec::new();
    let mut others = Vec::new();
    for (name, visibility) in [
        ("shared", SpaceVisibility::Federated),
        ("internal", SpaceVisibility::Local),
    ] {
        let space = service
            .create_space(
                &admin,
                NewSpace {
                    name: name.to_owned(),
                    description: None,
                    visibility,
                },
            )
            .await
            .expect("space created");
        spaces.push(space.id.into_string());
        let published = service
            .publish(
                &author.caller,
                &metadata("publish"),
                PublishRequest {
                    content_type: "procedure".to_owned(),
                    title: format!("Rotate the {name} keys"),
                    summary: "How to rotate keys.".to_owned(),
                    body_markdown: "1. Rotate.\n2. Check.\n".to_owned(),
                    claims: vec![format!("the {name} keys rotate without downtime")],
                    space: Some(name.to_owned()),
                    ..PublishRequest::default()
                },
            )
            .await
            .expect("published");
        others.push(published.revision_id.clone());
        others.extend(published.claims.iter().map(|claim| claim.id.clone()));
        contents.push(published.id);
    }
    others.extend(spaces);
    KnownObjects {
        actors: vec![
            admin.into_string(),
            author.caller.actor.id.as_str().to_owned(),
            author.controller().as_str().to_owned(),
        ],
        federated_content: contents[0].clone(),
        local_content: contents[1].clone(),
        others,
    }
}

/// Writes `request` on a fresh connection; the status and the whole answer as text.
async fn raw_exchange(served: &ServedInstance, request: String) -> (u16, String) {
    let address = served.base_url.trim_start_matches("http://").to_owned();
    let mut stream = tokio::net::TcpStream::connect(&address).await.expect("connect");
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut answer = Vec::new();
    stream
        .read_to_end(&mut answer)
        .await
        .expect("read until the server closes");
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let status = answer
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .expect("a status line");
    (status, answer)
}

#[tokio::test]
async fn every_public_route_answers_every_id_without_a_server_error() {
    let served = ServedInstance::start("alpha.test").await;
    let known = known_objects(&served).await;
    let base = served.base_url.clone();
    let http = reqwest::Client::new();
    let unknown: Vec<String> = PREFIXES
        .iter()
        .map(|prefix| format!("{prefix}_{UNKNOWN_ULID}"))
        .collect();
    let mut ids: Vec<String> = unknown.clone();
    ids.extend(malformed_ids());
    ids.extend(known.actors.iter().cloned());
    ids.extend([known.federated_content.clone(), known.local_content.clone()]);
    ids.extend(known.others.iter().cloned());

    let mut requests: Vec<(String, reqwest::RequestBuilder)> = Vec::new();
    let mut get = |path: String| {
        requests.push((format!("GET {path}"), http.get(format!("{base}{path}"))));
    };
    for path in [
        "/llms.txt",
        "/ai.md",
        "/SKILL.md",
        "/.well-known/inter-ai",
        "/actor",
        "/.well-known/nodeinfo",
        "/nodeinfo/2.1",
        "/.well-known/webfinger",
        "/.well-known/webfinger?resource=",
        "/.well-known/webfinger?resource=acct:alpha.test@alpha.test",
        "/.well-known/webfinger?resource=acct:nobody@elsewhere.test",
        "/.well-known/webfinger?resource=acct:%40alpha.test",
        "/outbox",
        "/outbox?after=x&limit=-1",
        "/outbox?snapshot=true",
        "/healthz",
        "/readyz",
        "/metrics",
        "/mcp",
        "/o/",
        "/admin/peers",
        "/admin/spaces",
        "/admin/federation/identity",
        "/admin/federation/dead-letters",
    ] {
        get(path.to_owned());
    }
    for id in &ids {
        get(format!("/o/{id}"));
        get(format!("/.well-known/webfinger?resource=acct:{id}@alpha.test"));
        get(format!("/admin/peers/{id}"));
    }
    for (label, body) in [("empty", ""), ("not JSON", "{"), ("an object", "{}")] {
        requests.push((
            format!("POST /inbox ({label}, unsigned)"),
            http.post(format!("{base}/inbox"))
                .header("content-type", "application/activity+json")
                .body(body),
        ));
    }
    requests.push((
        "POST /mcp without a key".to_owned(),
        http.post(format!("{base}/mcp"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#),
    ));
    requests.push(("DELETE /mcp".to_owned(), http.delete(format!("{base}/mcp"))));
    requests.push((
        "POST /admin/peers without a key".to_owned(),
        http.post(format!("{base}/admin/peers"))
            .json(&json!({ "realm": "beta.test" })),
    ));
    // With the admin key, IDs in admin paths: what names nothing is 404 or 400, never a 500.
    let key = served.admin_key.clone();
    for id in &ids {
        if !known.actors.contains(id) && *id != known.federated_content && *id != known.local_content {
            requests.push((
                format!("DELETE /admin/content/{id} (admin)"),
                http.delete(format!("{base}/admin/content/{id}"))
                    .bearer_auth(&key)
                    .json(&json!({ "reason": "test" })),
            ));
        }
        requests.push((
            format!("GET /admin/peers/{id} (admin)"),
            http.get(format!("{base}/admin/peers/{id}")).bearer_auth(&key),
        ));
        requests.push((
            format!("DELETE /admin/federation/dead-letters/{id} (admin)"),
            http.delete(format!("{base}/admin/federation/dead-letters/{id}"))
                .bearer_auth(&key),
        ));
    }

    let mut server_errors = Vec::new();
    for (label, request) in requests {
        let answer = send(request).await;
        if answer.status >= 500 {
            server_errors.push(format!("{label}: {} {}", answer.status, answer.body));
        }
    }
    assert!(server_errors.is_empty(), "server errors:\n{}", server_errors.join("\n"));

    // What no one published at /o/ is not found, whatever its kind; content is not served there without a
    // signature, and content of a local space never.
    for id in unknown
        .iter()
        .chain([&known.federated_content, &known.local_content])
        .chain(&known.others)
    {
        let answer = send(http.get(format!("{base}/o/{id}"))).await;
        assert_eq!(answer.status, 404, "/o/{id}: {}", answer.body);
        assert!(answer.header("content-type").starts_with("application/json"), "/o/{id}");
        let answer = send(http.get(format!("{base}/.well-known/webfinger?resource=acct:{id}@alpha.test"))).await;
        assert_eq!(answer.status, 404, "webfinger {id}: {}", answer.body);
    }
    // A percent-encoded control character names nothing on any route, and never reaches a statement (PostgreSQL
    // refuses a NUL in a text value).
    for path in ["/admin/peers/%00", "/admin/federation/dead-letters/a%01b", "/o/%00"] {
        let answer = send(http.get(format!("{base}{path}")).bearer_auth(&key)).await;
        assert_eq!(answer.status, 400, "{path}: {}", answer.body);
        assert_eq!(answer.body["error"]["code"], "validation_failed", "{path}");
        assert_eq!(answer.body["error"]["details"]["field"], "path", "{path}");
    }
    for id in &known.actors {
        let answer = send(http.get(format!("{base}/o/{id}"))).await;
        assert_eq!(answer.status, 200, "/o/{id}: {}", answer.body);
        assert_eq!(answer.body["preferredUsername"], id.as_str());
    }
    served.stop().await;
}

#[tokio::test]
async fn a_request_with_two_host_headers_is_refused_on_every_route() {
    let served = ServedInstance::start("alpha.test").await;
    let host = served.base_url.trim_start_matches("http://").to_owned();
    let mcp_body = r#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#;
    for (method, path, body) in [
        ("GET", "/healthz", ""),
        ("GET", "/.well-known/webfinger?resource=acct:alpha.test@alpha.test", ""),
        ("GET", "/actor", ""),
        ("GET", "/admin/peers", ""),
        ("POST", "/mcp", mcp_body),
    ] {
        for (first, second) in [(host.as_str(), "evil.example"), (host.as_str(), host.as_str())] {
            let request = format!(
                "{method} {path} HTTP/1.1\r\nHost: {first}\r\nHost: {second}\r\nAuthorization: Bearer {}\r\n\
                 Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
                 Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                served.admin_key,
                body.len()
            );
            let (status, answer) = raw_exchange(&served, request).await;
            assert_eq!(status, 400, "{method} {path} with Host {first} and {second}: {answer}");
            let lower = answer.to_ascii_lowercase();
            assert!(lower.contains("content-type: application/json"), "{answer}");
            let (_, body) = answer.split_once("\r\n\r\n").expect("a body");
            let body: Value = serde_json::from_str(body).expect("a JSON body");
            let error = if path == "/mcp" {
                assert_eq!(body["error"]["code"], -32600, "{body}");
                &body["error"]["data"]["error"]
            } else {
                &body["error"]
            };
            assert_eq!(error["code"], "validation_failed", "{body}");
            assert_eq!(error["details"]["field"], "host", "{body}");
        }
    }
    // One Host line is served as before.
    let request = format!("GET /healthz HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    let (status, answer) = raw_exchange(&served, request).await;
    assert_eq!(status, 200, "{answer}");
    served.stop().await;
}

#[tokio::test]
async fn webfinger_answers_may_be_read_by_any_origin() {
    let served = ServedInstance::start("alpha.test").await;
    let http = reqwest::Client::new();
    let admin = served.service.realm_admin().await.expect("admin");
    for (query, status) in [
        ("?resource=acct:alpha.test@alpha.test", 200),
        (&format!("?resource=acct:{admin}@alpha.test") as &str, 200),
        ("?resource=acct:nobody@alpha.test", 404),
        (&format!("?resource=acct:cnt_{UNKNOWN_ULID}@alpha.test"), 404),
        ("", 400),
        ("?resource=acct:a@alpha.test&resource=acct:b@alpha.test", 400),
    ] {
        let answer = send(
            http.get(format!("{}/.well-known/webfinger{query}", served.base_url))
                .header("origin", "https://anywhere.example"),
        )
        .await;
        assert_eq!(answer.status, status, "{query}: {}", answer.body);
        assert_eq!(answer.header("access-control-allow-origin"), "*", "{query}");
    }
    served.stop().await;
}

#[tokio::test]
async fn the_bearer_challenge_names_an_error_only_when_a_key_was_sent() {
    let served = ServedInstance::start("alpha.test").await;
    let http = reqwest::Client::new();
    let list = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let request = |key: Option<&str>| {
        let request = http
            .post(served.mcp_url())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(list);
        match key {
            Some(key) => request.header("authorization", key.to_owned()),
            None => request,
        }
    };
    // RFC 6750 §3.1: a request without credentials gets a challenge without an error code.
    for key in [None, Some("Basic dXNlcjpwYXNz")] {
        let answer = send(request(key)).await;
        assert_eq!(answer.status, 401);
        let challenge = answer.header("www-authenticate");
        assert!(challenge.starts_with("Bearer"), "{challenge}");
        assert!(!challenge.contains("error="), "{key:?}: {challenge}");
        let metrics = send(http.get(format!("{}/metrics", served.base_url))).await;
        assert!(!metrics.header("www-authenticate").contains("error="));
    }
    // A key that is not valid is an invalid token.
    let answer = send(request(Some("Bearer iak_not_a_key"))).await;
    assert_eq!(answer.status, 401);
    assert!(
        answer.header("www-authenticate").contains("error=\"invalid_token\""),
        "{}",
        answer.header("www-authenticate")
    );
    served.stop().await;
}

#[tokio::test]
async fn a_browser_is_only_offered_the_methods_mcp_serves() {
    let served = ServedInstance::start("alpha.test").await;
    let origin = served.base_url.clone();
    let http = reqwest::Client::new();
    let preflight = send(
        http.request(reqwest::Method::OPTIONS, served.mcp_url())
            .header("origin", &origin)
            .header("access-control-request-method", "POST"),
    )
    .await;
    assert_eq!(preflight.status, 204);
    let methods: Vec<String> = preflight
        .header("access-control-allow-methods")
        .split(',')
        .map(|method| method.trim().to_ascii_uppercase())
        .collect();
    assert!(methods.contains(&"POST".to_owned()), "{methods:?}");
    for method in ["GET", "DELETE", "PUT", "PATCH"] {
        let answer = send(
            http.request(
                reqwest::Method::from_bytes(method.as_bytes()).expect("method"),
                served.mcp_url(),
            )
            .bearer_auth(&served.admin_key)
            .header("accept", "application/json, text/event-stream"),
        )
        .await;
        if methods.contains(&method.to_owned()) {
            assert!(
                answer.status < 400,
                "{method} is offered to browsers but answers {}",
                answer.status
            );
        }
    }
    served.stop().await;
}

/// POSTs `body` to `/mcp` with the admin key and the headers a client sends, plus `extra`.
async fn post_mcp(served: &ServedInstance, extra: &[(&str, &str)], body: &Value) -> Answer {
    let mut request = reqwest::Client::new()
        .post(served.mcp_url())
        .bearer_auth(&served.admin_key)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    for (name, value) in extra {
        request = request.header(*name, *value);
    }
    send(request.body(body.to_string())).await
}

#[tokio::test]
async fn initialize_under_the_revision_without_a_handshake_is_a_method_not_found() {
    let served = ServedInstance::start("alpha.test").await;
    let current = [("mcp-protocol-version", "2026-07-28"), ("mcp-method", "initialize")];
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": { "name": "probe", "version": "1" }
    });
    let handshake = json!({
        "protocolVersion": "2026-07-28",
        "capabilities": {},
        "clientInfo": { "name": "probe", "version": "1" }
    });
    for (headers, params) in [
        (&current[..], json!({ "_meta": meta })),
        (&current[..], handshake.clone()),
        (&[][..], json!({ "_meta": meta })),
    ] {
        let answer = post_mcp(
            &served,
            headers,
            &json!({ "jsonrpc": "2.0", "id": 31, "method": "initialize", "params": params }),
        )
        .await;
        assert_eq!(answer.status, 404, "{params}: {}", answer.body);
        assert!(answer.header("content-type").starts_with("application/json"));
        assert_eq!(answer.body["id"], 31, "{}", answer.body);
        assert_eq!(answer.body["error"]["code"], -32601, "{}", answer.body);
    }
    // The same answer as any other method that revision does not have.
    let unknown = post_mcp(
        &served,
        &[("mcp-protocol-version", "2026-07-28"), ("mcp-method", "no/such/method")],
        &json!({ "jsonrpc": "2.0", "id": 32, "method": "no/such/method", "params": { "_meta": meta } }),
    )
    .await;
    assert_eq!(unknown.status, 404, "{}", unknown.body);
    assert_eq!(unknown.body["error"]["code"], -32601, "{}", unknown.body);
    // Without a revision that lacks it, initialize still negotiates an earlier one.
    let answer = post_mcp(
        &served,
        &[],
        &json!({ "jsonrpc": "2.0", "id": 33, "method": "initialize", "params": handshake }),
    )
    .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert!(answer.body["result"]["protocolVersion"].is_string(), "{}", answer.body);
    served.stop().await;
}

#[tokio::test]
async fn refusals_of_the_transport_and_the_admin_api_are_json() {
    let served = ServedInstance::start("alpha.test").await;
    let list = json!({ "jsonrpc": "2.0", "id": 5, "method": "tools/list" });
    // An Origin outside the allow-list, with a valid key: rmcp's 403, as a JSON-RPC error.
    let answer = post_mcp(&served, &[("origin", "https://evil.example")], &list).await;
    assert_eq!(answer.status, 403, "{}", answer.body);
    assert!(
        answer.header("content-type").starts_with("application/json"),
        "{:?}",
        answer.headers
    );
    assert_eq!(answer.body["error"]["code"], -32600, "{}", answer.body);
    assert_eq!(answer.body["id"], 5, "{}", answer.body);
    assert_eq!(answer.body["error"]["data"]["error"]["code"], "validation_failed");
    assert_eq!(answer.body["error"]["data"]["error"]["details"]["field"], "origin");
    // A Host outside the allow-list.
    let body = list.to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: evil.example\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        served.admin_key,
        body.len()
    );
    let (status, answer) = raw_exchange(&served, request).await;
    assert_eq!(status, 403, "{answer}");
    assert!(
        answer.to_ascii_lowercase().contains("content-type: application/json"),
        "{answer}"
    );
    let (_, body) = answer.split_once("\r\n\r\n").expect("a body");
    let body: Value = serde_json::from_str(body).expect("a JSON body");
    assert_eq!(body["error"]["data"]["error"]["details"]["field"], "host", "{body}");
    // A method /mcp does not serve.
    let answer = send(
        reqwest::Client::new()
            .get(served.mcp_url())
            .bearer_auth(&served.admin_key)
            .header("accept", "text/event-stream"),
    )
    .await;
    assert_eq!(answer.status, 405, "{}", answer.body);
    assert!(answer.header("content-type").starts_with("application/json"));
    assert_eq!(answer.body["error"]["code"], -32600, "{}", answer.body);
    assert!(answer.header("allow").contains("POST"));

    // The admin API: another media type (415), a body that is not JSON (400), JSON of the wrong shape (422).
    let http = reqwest::Client::new();
    let peers = format!("{}/admin/peers", served.base_url);
    for (content_type, body, status, field) in [
        (
            "text/plain",
            r#"{"url":"https://beta.test"}"#,
            415,
            json!("content-type"),
        ),
        ("application/json", "{", 400, Value::Null),
        (
            "application/json",
            r#"{"url":"https://beta.test","level":7}"#,
            422,
            json!("level"),
        ),
        (
            "application/json",
            r#"{"url":"https://beta.test","colour":"red"}"#,
            422,
            Value::Null,
        ),
    ] {
        let answer = send(
            http.post(&peers)
                .bearer_auth(&served.admin_key)
                .header("content-type", content_type)
                .body(body),
        )
        .await;
        assert_eq!(answer.status, status, "{body}: {}", answer.body);
        assert!(answer.header("content-type").starts_with("application/json"), "{body}");
        assert_eq!(
            answer.body["error"]["code"], "validation_failed",
            "{body}: {}",
            answer.body
        );
        assert!(answer.body["error"]["message"].is_string(), "{body}");
        if !field.is_null() {
            assert_eq!(
                answer.body["error"]["details"]["field"], field,
                "{body}: {}",
                answer.body
            );
        }
    }
    // Approving needs no body; a body of another media type is still refused in JSON.
    let answer = send(
        http.post(format!("{}/admin/peers/beta.test/approve", served.base_url))
            .bearer_auth(&served.admin_key)
            .header("content-type", "text/plain")
            .body("yes"),
    )
    .await;
    assert_eq!(answer.status, 415, "{}", answer.body);
    assert_eq!(answer.body["error"]["code"], "validation_failed");
    served.stop().await;
}
