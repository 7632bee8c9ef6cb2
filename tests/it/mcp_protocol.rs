//! The MCP endpoint as strict and browser clients meet it, over raw HTTP: tool errors valid against the tools'
//! output schemas, portable schemas, JSON-RPC errors for refused and malformed requests, resource errors, CORS.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::fixtures::{Agent, agent};
use crate::harness::ServedInstance;

/// A JSON-RPC answer over HTTP.
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

/// POSTs `body` (bytes, sent as they are) to `/mcp` with the headers a client sends.
async fn post_raw(served: &ServedInstance, key: Option<&str>, extra: &[(&str, &str)], body: Vec<u8>) -> Answer {
    let mut request = reqwest::Client::new()
        .post(served.mcp_url())
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    if let Some(key) = key {
        request = request.header("authorization", format!("Bearer {key}"));
    }
    for (name, value) in extra {
        request = request.header(*name, *value);
    }
    let response = request.body(body).send().await.expect("request sent");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.expect("body");
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    Answer { status, headers, body }
}

async fn post(served: &ServedInstance, key: Option<&str>, body: &Value) -> Answer {
    post_raw(served, key, &[], body.to_string().into_bytes()).await
}

async fn rpc(served: &ServedInstance, key: &str, method: &str, params: Value) -> Value {
    let answer = post(
        served,
        Some(key),
        &json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params }),
    )
    .await;
    assert_eq!(answer.status, 200, "{method}: {}", answer.body);
    answer.body
}

/// A tool call's result: `isError`, `structuredContent` and the text.
async fn call_tool(served: &ServedInstance, key: &str, tool: &str, arguments: Value) -> (bool, Value, String) {
    let body = rpc(
        served,
        key,
        "tools/call",
        json!({ "name": tool, "arguments": arguments }),
    )
    .await;
    let result = &body["result"];
    let text = result["content"][0]["text"].as_str().unwrap_or_default().to_owned();
    (
        result["isError"].as_bool().unwrap_or(false),
        result["structuredContent"].clone(),
        text,
    )
}

/// Every tool's output schema from `tools/list`.
async fn output_schemas(served: &ServedInstance, key: &str) -> BTreeMap<String, Value> {
    let listed = rpc(served, key, "tools/list", json!({})).await;
    listed["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|tool| {
            (
                tool["name"].as_str().expect("name").to_owned(),
                tool["outputSchema"].clone(),
            )
        })
        .collect()
}

fn assert_valid(schemas: &BTreeMap<String, Value>, tool: &str, result: &Value) {
    let validator = jsonschema::validator_for(&schemas[tool]).expect("the output schema compiles");
    let problems: Vec<String> = validator.iter_errors(result).map(|error| error.to_string()).collect();
    assert!(
        problems.is_empty(),
        "{tool}: {result} does not match its output schema: {problems:?}"
    );
}

/// Writes `request` on a fresh connection and returns the status and body of the answer.
async fn raw_exchange(served: &ServedInstance, request: String) -> (u16, Value) {
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
    let body = answer.split_once("\r\n\r\n").map(|(_, body)| body).unwrap_or_default();
    (
        status,
        serde_json::from_str(body).unwrap_or(Value::String(body.to_owned())),
    )
}

#[tokio::test]
async fn tool_errors_and_results_match_the_tools_output_schemas_and_errors_show_their_details() {
    let served = ServedInstance::start("alpha.test").await;
    let author = agent(&served.service, "author").await;
    let reviewer: Agent = agent(&served.service, "reviewer").await;
    let schemas = output_schemas(&served, &author.key).await;
    assert_eq!(schemas.len(), 9);

    // Every tool refuses an unknown field; the structured error must satisfy the tool's schema, as TypeScript SDK
    // clients check even for isError results, and the text must carry the details.
    for tool in schemas.keys() {
        let (is_error, structured, text) = call_tool(&served, &author.key, tool, json!({ "no_such_field": 1 })).await;
        assert!(is_error, "{tool}");
        assert_eq!(structured["error"]["code"], "validation_failed", "{tool}");
        assert_valid(&schemas, tool, &structured);
        assert!(text.starts_with("Error [validation_failed]"), "{tool}: {text}");
        let text_json: Value =
            serde_json::from_str(text.split_once("\n\n").expect("a JSON part").1).expect("the text ends with JSON");
        assert_eq!(
            text_json, structured,
            "{tool}: the text carries the whole error, details included"
        );
    }
    let (is_error, not_found, text) = call_tool(
        &served,
        &author.key,
        "get",
        json!({ "id": "clm_01j9zq3k5m8n2p4r6t8v0w2x4y" }),
    )
    .await;
    assert!(is_error);
    assert_eq!(not_found["error"]["details"]["id"], "clm_01j9zq3k5m8n2p4r6t8v0w2x4y");
    assert!(text.contains("clm_01j9zq3k5m8n2p4r6t8v0w2x4y"), "{text}");
    assert_valid(&schemas, "get", &not_found);

    // A success of every tool satisfies its schema too.
    let succeed = |tool: &'static str, key: String, arguments: Value| {
        let served = &served;
        let schemas = &schemas;
        async move {
            let (is_error, structured, _) = call_tool(served, &key, tool, arguments).await;
            assert!(!is_error, "{tool}: {structured}");
            assert_valid(schemas, tool, &structured);
            structured
        }
    };
    succeed("whoami", author.key.clone(), json!({})).await;
    let published = succeed(
        "publish",
        author.key.clone(),
        json!({
            "content_type": "procedure", "title": "Rotate a signing key", "summary": "Rotate it without downtime.",
            "body_markdown": "1. Add the new key.\n2. Retire the old one.", "claims": ["Two keys can be valid at once"],
            "subjects": [{ "name": "Signing keys", "type": "concept" }], "sources": ["https://example.com/keys"],
            "structured_data": { "steps": 2 }
        }),
    )
    .await;
    let content = published["id"].as_str().expect("id").to_owned();
    let other = succeed(
        "publish",
        author.key.clone(),
        json!({ "content_type": "procedure", "title": "Rotate keys by hand", "relations": [
            { "type": "alternative_to", "target": content, "reason": "simpler" }
        ] }),
    )
    .await;
    let other = other["id"].as_str().expect("id").to_owned();
    let usage = succeed(
        "report_usage",
        reviewer.key.clone(),
        json!({ "target": content, "usage_type": "implementation", "result": "success", "real_world_use": true,
                "context": { "scale": "small" }, "metrics": { "minutes": 5 } }),
    )
    .await;
    let usage = usage["id"].as_str().expect("id").to_owned();
    succeed(
        "review",
        reviewer.key.clone(),
        json!({ "target": content, "verdict": "confirmed", "confidence": 0.9, "based_on_usage": usage }),
    )
    .await;
    let rating = succeed(
        "rate",
        reviewer.key.clone(),
        json!({ "target": content, "dimension": "clarity", "score": 80, "context": { "scale": "small" } }),
    )
    .await;
    succeed(
        "submit_experience",
        reviewer.key.clone(),
        json!({ "title": "Rotated the staging key", "result": "success", "used": [{ "id": content, "result": "success" }] }),
    )
    .await;
    succeed("search", author.key.clone(), json!({ "query": "rotate" })).await;
    succeed(
        "get",
        author.key.clone(),
        json!({ "id": content, "include": ["body", "claims", "relations", "evidence_summary", "evidence", "revisions",
                                            "explanation"] }),
    )
    .await;
    for id in [&usage, rating["id"].as_str().expect("id")] {
        succeed("get", author.key.clone(), json!({ "id": id })).await;
    }
    succeed(
        "compare",
        author.key.clone(),
        json!({ "ids": [content, other], "context": { "scale": "small" } }),
    )
    .await;
    succeed("rate", reviewer.key.clone(), json!({ "retract": rating["id"] })).await;
    served.stop().await;
}

/// Every property of every output schema, with its path.
fn properties_of(schema: &Value, path: &str, found: &mut Vec<(String, Value)>) {
    match schema {
        Value::Object(object) => {
            if let Some(Value::Object(properties)) = object.get("properties") {
                for (name, property) in properties {
                    found.push((format!("{path}/{name}"), property.clone()));
                }
            }
            for (keyword, value) in object {
                properties_of(value, &format!("{path}/{keyword}"), found);
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                properties_of(item, &format!("{path}/{index}"), found);
            }
        }
        _ => {}
    }
}

/// Every value of `keyword` in `schema` and its subschemas (property names are not keywords).
fn keyword_values(schema: &Value, keyword: &str, found: &mut Vec<Value>) {
    match schema {
        Value::Object(object) => {
            for (name, value) in object {
                if name == keyword {
                    found.push(value.clone());
                }
                if matches!(name.as_str(), "properties" | "$defs" | "patternProperties") {
                    for subschema in value.as_object().into_iter().flat_map(|map| map.values()) {
                        keyword_values(subschema, keyword, found);
                    }
                } else {
                    keyword_values(value, keyword, found);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| keyword_values(item, keyword, found)),
        _ => {}
    }
}

#[tokio::test]
async fn output_schemas_type_every_property_without_vendor_formats_or_type_unions() {
    let served = ServedInstance::start("alpha.test").await;
    let schemas = output_schemas(&served, &served.admin_key).await;
    for (tool, schema) in &schemas {
        let mut properties = Vec::new();
        properties_of(schema, "", &mut properties);
        assert!(!properties.is_empty(), "{tool}");
        for (path, property) in properties {
            assert!(property.get("type").is_some(), "{tool}{path} has no type: {property}");
        }
        let mut formats = Vec::new();
        keyword_values(schema, "format", &mut formats);
        assert!(
            formats.is_empty(),
            "{tool} declares formats clients warn about: {formats:?}"
        );
        let mut types = Vec::new();
        keyword_values(schema, "type", &mut types);
        assert!(
            types.iter().all(Value::is_string),
            "{tool} has type unions: {:?}",
            types.iter().filter(|value| !value.is_string()).collect::<Vec<_>>()
        );
        assert_eq!(
            schema["properties"]["error"]["required"],
            json!(["code", "message", "details"])
        );
    }
    let whoami = &schemas["whoami"];
    let limits = &whoami["$defs"]["RateLimitsOutput"]["properties"]["remaining"];
    assert_eq!(limits["minimum"], 0, "{limits}");
    assert_eq!(limits["maximum"], u32::MAX, "{limits}");
    served.stop().await;
}

#[tokio::test]
async fn a_refused_key_gets_a_json_rpc_error_with_the_request_id_and_a_bearer_challenge() {
    let served = ServedInstance::start("alpha.test").await;
    for key in [None, Some("iak_not_a_key")] {
        let answer = post(
            &served,
            key,
            &json!({ "jsonrpc": "2.0", "id": 41, "method": "tools/list" }),
        )
        .await;
        assert_eq!(answer.status, 401);
        assert!(answer.header("www-authenticate").starts_with("Bearer"));
        assert!(answer.header("content-type").starts_with("application/json"));
        assert_eq!(answer.body["jsonrpc"], "2.0");
        assert_eq!(answer.body["id"], 41);
        assert_eq!(answer.body["error"]["code"], -32003);
        assert!(
            answer.body["error"]["message"]
                .as_str()
                .is_some_and(|message| message.contains("key")),
            "{}",
            answer.body
        );
        assert_eq!(answer.body["error"]["data"]["error"]["code"], "unauthenticated");
    }
    // Authentication comes first: a malformed body without a key is still a 401, with no id to echo.
    let answer = post_raw(&served, None, &[], b"{ not json".to_vec()).await;
    assert_eq!(answer.status, 401);
    assert_eq!(answer.body["id"], Value::Null);
    served.stop().await;
}

#[tokio::test]
async fn malformed_requests_get_json_rpc_errors_instead_of_plain_text() {
    let served = ServedInstance::start("alpha.test").await;
    let key = served.admin_key.clone();
    let cases: Vec<(Vec<u8>, i64, Value)> = vec![
        (b"{\"jsonrpc\":".to_vec(), -32700, Value::Null),
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"x\":\"\xff\"}".to_vec(),
            -32700,
            Value::Null,
        ),
        (
            br#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]"#.to_vec(),
            -32600,
            Value::Null,
        ),
        (br#""tools/list""#.to_vec(), -32600, Value::Null),
        (br#"{"id":2,"method":"tools/list"}"#.to_vec(), -32600, json!(2)),
        (
            br#"{"jsonrpc":"2.0","id":3,"method":"tools/call"}"#.to_vec(),
            -32602,
            json!(3),
        ),
        (
            br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":["whoami"]}"#.to_vec(),
            -32602,
            json!(4),
        ),
        (
            br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"arguments":{}}}"#.to_vec(),
            -32602,
            json!(5),
        ),
        (
            br#"{"jsonrpc":"2.0","id":"r","method":"resources/read"}"#.to_vec(),
            -32602,
            json!("r"),
        ),
        (
            br#"{"jsonrpc":"2.0","id":6,"method":"initialize","params":{"capabilities":{}}}"#.to_vec(),
            -32602,
            json!(6),
        ),
    ];
    for (body, code, id) in cases {
        let shown = String::from_utf8_lossy(&body).into_owned();
        let answer = post_raw(&served, Some(&key), &[], body).await;
        assert_eq!(answer.status, 400, "{shown}: {}", answer.body);
        assert!(answer.header("content-type").starts_with("application/json"), "{shown}");
        assert_eq!(answer.body["jsonrpc"], "2.0", "{shown}");
        assert_eq!(answer.body["error"]["code"], code, "{shown}: {}", answer.body);
        assert_eq!(answer.body["id"], id, "{shown}");
        assert!(answer.body["error"]["message"].is_string(), "{shown}");
        assert_eq!(answer.body["error"]["data"]["error"]["code"], "validation_failed");
    }
    // Well-formed requests still work after the guard has read them.
    let (is_error, whoami, _) = call_tool(&served, &key, "whoami", json!({})).await;
    assert!(!is_error, "{whoami}");
    served.stop().await;
}

#[tokio::test]
async fn a_body_framed_by_both_content_length_and_transfer_encoding_is_a_400_not_a_500() {
    let served = ServedInstance::start("alpha.test").await;
    let host = served.base_url.trim_start_matches("http://").to_owned();
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }).to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nTransfer-Encoding: chunked\r\n\r\n{body}",
        served.admin_key,
        body.len()
    );
    let (status, answer) = raw_exchange(&served, request).await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    served.stop().await;
}

#[tokio::test]
async fn two_authorization_headers_are_refused_rather_than_the_first_one_believed() {
    let served = ServedInstance::start("alpha.test").await;
    let host = served.base_url.trim_start_matches("http://").to_owned();
    let body =
        json!({ "jsonrpc": "2.0", "id": 12, "method": "tools/call", "params": { "name": "whoami" } }).to_string();
    for (first, second) in [
        (served.admin_key.clone(), "iak_someone_else".to_owned()),
        (served.admin_key.clone(), served.admin_key.clone()),
    ] {
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {first}\r\nAuthorization: Bearer {second}\r\n\
             Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            body.len()
        );
        let (status, answer) = raw_exchange(&served, request).await;
        assert_eq!(status, 400, "{answer}");
        assert_eq!(answer["id"], 12, "{answer}");
        assert_eq!(answer["error"]["data"]["error"]["code"], "unauthenticated", "{answer}");
        assert!(answer.get("result").is_none(), "{answer}");
    }
    served.stop().await;
}

#[tokio::test]
async fn a_missing_resource_names_its_uri_and_content_links_match_a_template() {
    let served = ServedInstance::start("alpha.test").await;
    let key = served.admin_key.clone();
    let templates = rpc(&served, &key, "resources/templates/list", json!({})).await;
    let templates: Vec<&str> = templates["result"]["resourceTemplates"]
        .as_array()
        .expect("templates")
        .iter()
        .filter_map(|template| template["uriTemplate"].as_str())
        .collect();
    assert!(templates.contains(&"interai://content/{cnt_id}"), "{templates:?}");
    for uri in [
        "interai://content/cnt_01j9zq3k5m8n2p4r6t8v0w2x4y",
        "interai://clm_01j9zq3k5m8n2p4r6t8v0w2x4y",
        "interai://nothing/here/at/all",
    ] {
        let answer = post(
            &served,
            Some(&key),
            &json!({ "jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": { "uri": uri } }),
        )
        .await;
        assert_eq!(answer.body["error"]["code"], -32002, "{uri}: {}", answer.body);
        assert_eq!(answer.body["error"]["data"]["uri"], uri, "{}", answer.body);
        assert_eq!(answer.body["error"]["data"]["error"]["code"], "not_found");
    }
    served.stop().await;
}

#[tokio::test]
async fn a_browser_on_an_allowed_origin_can_preflight_and_read_the_answers() {
    let served = ServedInstance::start("alpha.test").await;
    let origin = served.base_url.clone();
    let http = reqwest::Client::new();
    let preflight = http
        .request(reqwest::Method::OPTIONS, served.mcp_url())
        .header("origin", &origin)
        .header("access-control-request-method", "POST")
        .header(
            "access-control-request-headers",
            "authorization, content-type, mcp-protocol-version, mcp-method",
        )
        .send()
        .await
        .expect("preflight");
    assert_eq!(
        preflight.status(),
        204,
        "a preflight carries no key and must not get 401"
    );
    let header = |name: &str| {
        preflight
            .headers()
            .get(name)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
            .to_ascii_lowercase()
    };
    assert_eq!(header("access-control-allow-origin"), origin);
    assert!(header("access-control-allow-methods").contains("post"));
    let allowed_headers = header("access-control-allow-headers");
    for needed in [
        "authorization",
        "content-type",
        "mcp-protocol-version",
        "mcp-session-id",
        "last-event-id",
        "mcp-method",
    ] {
        assert!(allowed_headers.contains(needed), "{needed} in {allowed_headers}");
    }

    let list = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" });
    let answer = post_raw(
        &served,
        Some(&served.admin_key),
        &[("origin", &origin)],
        list.to_string().into_bytes(),
    )
    .await;
    assert_eq!(answer.status, 200);
    assert_eq!(answer.header("access-control-allow-origin"), origin);
    let exposed = answer.header("access-control-expose-headers").to_ascii_lowercase();
    for header in ["mcp-session-id", "mcp-protocol-version", "www-authenticate"] {
        assert!(exposed.contains(header), "{header} in {exposed}");
    }
    let refused = post_raw(&served, None, &[("origin", &origin)], list.to_string().into_bytes()).await;
    assert_eq!(refused.status, 401);
    assert_eq!(
        refused.header("access-control-allow-origin"),
        origin,
        "the browser may read the 401"
    );

    let foreign = http
        .request(reqwest::Method::OPTIONS, served.mcp_url())
        .header("origin", "https://evil.example")
        .header("access-control-request-method", "POST")
        .send()
        .await
        .expect("preflight");
    assert_eq!(foreign.status(), 403);
    assert!(foreign.headers().get("access-control-allow-origin").is_none());
    served.stop().await;
}

#[tokio::test]
async fn the_loopback_forms_of_the_listen_address_are_allowed_origins_by_default() {
    let served = ServedInstance::start("alpha.test").await;
    let port = served.base_url.rsplit(':').next().expect("port").to_owned();
    let list = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }).to_string();
    for host in ["127.0.0.1", "localhost", "[::1]"] {
        let origin = format!("http://{host}:{port}");
        let answer = post_raw(
            &served,
            Some(&served.admin_key),
            &[("origin", &origin)],
            list.clone().into_bytes(),
        )
        .await;
        assert_eq!(answer.status, 200, "{origin}: {}", answer.body);
    }
    let other_port = if port == "1" { "2" } else { "1" };
    let elsewhere = post_raw(
        &served,
        Some(&served.admin_key),
        &[("origin", &format!("http://127.0.0.1:{other_port}"))],
        list.into_bytes(),
    )
    .await;
    assert_eq!(elsewhere.status, 403, "another local port is another site");
    served.stop().await;
}
