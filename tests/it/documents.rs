//! The documents for agents, fetched over HTTP without a key (`/llms.txt`, `/ai.md`, `/SKILL.md` and the
//! `/.well-known/inter-ai` manifest) and read as MCP resources: every number and tool name in them is the server's,
//! and what they say of other realms is true on the instance that serves them.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use tower::ServiceExt;

use crate::federation::peered;
use crate::fixtures::{agent, publish_procedure};
use crate::harness::ServedInstance;
use crate::mcp_client::connect_initialize;
use crate::support::network::Network;
use crate::support::network::Node;

const NINE_TOOLS: [&str; 9] = [
    "search",
    "get",
    "compare",
    "publish",
    "submit_experience",
    "report_usage",
    "review",
    "rate",
    "whoami",
];

async fn fetch(http: &reqwest::Client, served: &ServedInstance, path: &str) -> (String, String) {
    let response = http
        .get(format!("{}{path}", served.base_url))
        .send()
        .await
        .expect("request");
    assert_eq!(response.status(), 200, "{path}");
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    assert_eq!(header("cache-control"), "public, max-age=300", "{path}");
    let content_type = header("content-type");
    let body = response.text().await.expect("body");
    (content_type, body)
}

#[tokio::test]
async fn the_documents_are_public_and_name_the_realm_and_its_endpoint() {
    let served = ServedInstance::start("alpha.test").await;
    let http = reqwest::Client::new();
    for (path, expected_type) in [
        ("/llms.txt", "text/plain; charset=utf-8"),
        ("/ai.md", "text/markdown; charset=utf-8"),
        ("/SKILL.md", "text/markdown; charset=utf-8"),
        ("/.well-known/inter-ai", "application/json"),
    ] {
        let (content_type, body) = fetch(&http, &served, path).await;
        assert_eq!(content_type, expected_type, "{path}");
        assert!(body.contains("alpha.test"), "{path} does not name the realm");
        assert!(
            body.contains("http://alpha.test/mcp"),
            "{path} does not name the MCP endpoint"
        );
        assert!(!body.contains("{{"), "{path} keeps a placeholder");
    }

    let (_, skill) = fetch(&http, &served, "/SKILL.md").await;
    assert!(
        skill.starts_with("---\nname: interai-alpha-test\ndescription: "),
        "{skill}"
    );

    let (_, ai_md) = fetch(&http, &served, "/ai.md").await;
    for tool in NINE_TOOLS {
        assert!(ai_md.contains(&format!("`{tool}`")), "ai.md does not describe {tool}");
    }
    assert!(ai_md.contains("200 writes per hour per root controller"));

    let head = http
        .head(format!("{}/llms.txt", served.base_url))
        .send()
        .await
        .expect("head");
    assert_eq!(head.status(), 200);
    served.stop().await;
}

#[tokio::test]
async fn the_manifest_lists_the_tools_the_endpoint_serves_and_the_limits() {
    let served = ServedInstance::start("alpha.test").await;
    let http = reqwest::Client::new();
    let (_, body) = fetch(&http, &served, "/.well-known/inter-ai").await;
    let manifest: Value = serde_json::from_str(&body).expect("manifest is JSON");
    assert_eq!(manifest["realm"], "alpha.test");
    assert_eq!(manifest["software"]["name"], "interai");
    assert_eq!(manifest["software"]["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(manifest["spec_version"], "inter-ai-mcp-v2");
    assert_eq!(manifest["trust_model"]["version"], "trust-v1");
    assert_eq!(
        manifest["trust_model"]["parameter_hash"],
        json!(interai::trust::TrustParameters::default().parameter_hash())
    );
    assert_eq!(manifest["tools"], json!(NINE_TOOLS));
    assert_eq!(
        manifest["limits"],
        json!({
            "body_markdown_bytes": 204_800,
            "structured_data_bytes": 65_536,
            "claims_per_publish": 50,
            "relations_per_publish": 50,
            "writes_per_hour": 200,
            "search_limit_max": 50,
            "idempotency_key_max_characters": 128,
        })
    );
    assert_eq!(manifest["endpoints"]["mcp"], "http://alpha.test/mcp");
    assert_eq!(
        manifest["endpoints"]["manifest"],
        "http://alpha.test/.well-known/inter-ai"
    );
    assert_eq!(manifest["federation"]["status"], "available");
    assert_eq!(manifest["federation"]["actor"], "http://alpha.test/actor");
    assert_eq!(manifest["federation"]["inbox"], "http://alpha.test/inbox");
    assert_eq!(manifest["federation"]["keys"].as_array().map(Vec::len), Some(1));

    // The manifest must list exactly the tools the MCP endpoint serves.
    let client = connect_initialize(&served.mcp_url(), Some(&served.admin_key))
        .await
        .expect("initialize");
    let served_tools: BTreeSet<String> = client
        .list_tools(None)
        .await
        .expect("tools/list")
        .tools
        .into_iter()
        .map(|tool| tool.name.to_string())
        .collect();
    let manifest_tools: BTreeSet<String> = NINE_TOOLS.iter().map(|name| (*name).to_owned()).collect();
    assert_eq!(served_tools, manifest_tools);
    client.cancel().await.ok();
    served.stop().await;
}

#[tokio::test]
async fn documents_ignore_a_bearer_key_and_follow_the_configured_write_limit() {
    let served = ServedInstance::start_with("alpha.test", |config| config.writes_per_hour = 17).await;
    let http = reqwest::Client::new();
    let response = http
        .get(format!("{}/.well-known/inter-ai", served.base_url))
        .header("authorization", format!("Bearer {}", served.admin_key))
        .send()
        .await
        .expect("request");
    assert_eq!(response.status(), 200);
    let manifest: Value = response.json().await.expect("json");
    assert_eq!(manifest["limits"]["writes_per_hour"], 17);
    let with_a_bad_key = http
        .get(format!("{}/ai.md", served.base_url))
        .header("authorization", "Bearer iak_not_a_key")
        .send()
        .await
        .expect("request");
    assert_eq!(with_a_bad_key.status(), 200);
    let ai_md = with_a_bad_key.text().await.expect("body");
    assert!(ai_md.contains("17 writes per hour per root controller"));
    served.stop().await;
}

/// A JSON-RPC request to `/mcp` with `key`; the `result`, or a panic naming the error.
async fn rpc(http: &reqwest::Client, url: &str, key: &str, method: &str, params: Value) -> Value {
    let answer: Value = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("authorization", format!("Bearer {key}"))
        .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params }))
        .send()
        .await
        .expect("request")
        .json()
        .await
        .expect("a JSON answer");
    assert!(answer.get("error").is_none(), "{method}: {answer}");
    answer["result"].clone()
}

/// The text of one resource, read over MCP.
async fn read_resource(http: &reqwest::Client, url: &str, key: &str, uri: &str) -> String {
    let result = rpc(http, url, key, "resources/read", json!({ "uri": uri })).await;
    result["contents"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{uri} has text: {result}"))
        .to_owned()
}

/// What `tools/list` says: each tool with its input schema.
struct ServedTools {
    tools: Vec<Value>,
}

impl ServedTools {
    fn names(&self) -> BTreeSet<String> {
        self.tools
            .iter()
            .filter_map(|tool| tool["name"].as_str().map(str::to_owned))
            .collect()
    }

    /// The input schema of `tool`'s property `property` (a `$ref` followed into `$defs`).
    fn input_property(&self, tool: &str, property: &str) -> Value {
        let tool = self
            .tools
            .iter()
            .find(|candidate| candidate["name"] == tool)
            .unwrap_or_else(|| panic!("{tool} is served"));
        let schema = &tool["inputSchema"];
        let mut found = schema["properties"][property].clone();
        if let Some(reference) = found["$ref"].as_str() {
            let name = reference.rsplit('/').next().unwrap_or_default();
            found = schema["$defs"][name].clone();
        }
        assert!(!found.is_null(), "{tool} takes {property}: {schema}");
        found
    }

    /// Every word the schemas know: property names, enumerated values and the snake_case words of descriptions
    /// (where the error codes are listed). A `snake_case` word a document shows in backticks must be one of these.
    fn vocabulary(&self) -> BTreeSet<String> {
        fn collect(value: &Value, words: &mut BTreeSet<String>) {
            match value {
                Value::Object(members) => {
                    for (key, member) in members {
                        match (key.as_str(), member) {
                            ("properties", Value::Object(properties)) => words.extend(properties.keys().cloned()),
                            ("enum" | "const", _) => {
                                for item in std::iter::once(member).chain(member.as_array().into_iter().flatten()) {
                                    if let Some(word) = item.as_str() {
                                        words.insert(word.to_owned());
                                    }
                                }
                            }
                            ("description", Value::String(text)) => words.extend(
                                text.split(|character: char| !(character.is_ascii_alphanumeric() || character == '_'))
                                    .filter(|word| !word.is_empty())
                                    .map(str::to_owned),
                            ),
                            _ => {}
                        }
                        collect(member, words);
                    }
                }
                Value::Array(items) => items.iter().for_each(|item| collect(item, words)),
                _ => {}
            }
        }
        let mut words = self.names();
        for tool in &self.tools {
            collect(tool, &mut words);
        }
        words
    }
}

/// Every number written in `text` as a word of its own (`v2`, `base64` and IDs are names, not numbers), with the
/// line it is on.
fn numbers_in(text: &str) -> Vec<(f64, String)> {
    let token = regex::Regex::new(r"[A-Za-z0-9_.]+").expect("pattern");
    let number = regex::Regex::new(r"^[0-9]+(\.[0-9]+)?$").expect("pattern");
    let mut found = Vec::new();
    for line in text.lines() {
        for candidate in token.find_iter(line) {
            let word = candidate.as_str().trim_end_matches('.');
            if number.is_match(word) {
                found.push((word.parse().expect("a number"), line.to_owned()));
            }
        }
    }
    found
}

/// The `snake_case` words a Markdown document shows in backticks (field names, tool names, codes, values).
fn backticked_words(text: &str) -> BTreeSet<String> {
    let pattern = regex::Regex::new(r"`([a-z][a-z0-9]*(?:_[a-z0-9]+)*)`").expect("pattern");
    pattern
        .captures_iter(text)
        .filter_map(|captures| captures.get(1).map(|word| word.as_str().to_owned()))
        .collect()
}

/// Checks one text document against the server: every number is a documented number, every backticked word is
/// known to the tools' schemas (so no tool or field is named that does not exist), and every served tool is
/// named.
fn check_text_document(
    name: &str,
    text: &str,
    instance_facts: &[&str],
    idempotency_key_pattern: &str,
    documented: &[interai::agent_documents::DocumentedNumber],
    tools: &ServedTools,
) {
    // What names the instance rather than a limit: its realm, URLs, version and parameter hash.
    let mut rest = text.to_owned();
    for fact in instance_facts {
        rest = rest.replace(fact, " ");
    }
    // The idempotency key's pattern must be the one the input schema declares; its numbers are checked there.
    if rest.contains("^[A-Za-z0-9") {
        assert!(
            rest.contains(idempotency_key_pattern),
            "{name} shows another idempotency key pattern than the server's {idempotency_key_pattern}"
        );
    }
    rest = rest.replace(idempotency_key_pattern, " ");
    // Numbered list items, and the HTTP status a missing key gets.
    let list_markers = regex::Regex::new(r"(?m)^\s*[0-9]+\. ").expect("pattern");
    rest = list_markers.replace_all(&rest, " ").replace("HTTP 401", " ");
    for (value, line) in numbers_in(&rest) {
        assert!(
            documented.iter().any(|number| (number.value - value).abs() < 1e-9),
            "{name} states {value}, which is none of the server's documented numbers, in: {line}"
        );
    }

    let vocabulary = tools.vocabulary();
    // ID prefixes (`usr_`) never match the word pattern; see ALLOWED_WORDS for the rest.
    let unknown: Vec<String> = backticked_words(&rest)
        .into_iter()
        .filter(|word| !vocabulary.contains(word) && !ALLOWED_WORDS.contains(&word.as_str()))
        .collect();
    assert!(
        unknown.is_empty(),
        "{name} names words no tool of this server has: {unknown:?}"
    );
    // A tool is named in backticks, or in a plain list such as llms.txt's `9 tools: search, get, …`.
    for tool in tools.names() {
        let in_a_list = regex::Regex::new(&format!(r"(?m)(: |, ){tool}(,|$)")).expect("pattern");
        assert!(
            text.contains(&format!("`{tool}`")) || in_a_list.is_match(text),
            "{name} does not name the tool {tool}"
        );
    }
}

/// Backticked words the documents use that are not in a tool schema, each for a reason.
const ALLOWED_WORDS: [&str; 1] = [
    // The MCP method a client may start with.
    "initialize",
];

#[tokio::test]
async fn every_number_and_tool_name_in_every_served_document_is_the_servers() {
    let served = ServedInstance::start_with("alpha.test", |config| config.writes_per_hour = 17).await;
    let http = reqwest::Client::new();
    let url = served.mcp_url();
    let key = agent(&served.service, "reader").await.key;
    let tools = ServedTools {
        tools: rpc(&http, &url, &key, "tools/list", json!({})).await["tools"]
            .as_array()
            .expect("tools")
            .clone(),
    };

    // The documented numbers, as the documents module lists them, and the server's own values for each.
    let facts = interai::agent_documents::DocumentFacts {
        realm: "alpha.test".to_owned(),
        base_url: "http://alpha.test".to_owned(),
        software_version: env!("CARGO_PKG_VERSION").to_owned(),
        writes_per_hour: 17,
        parameter_hash: served.service.trust_parameters().parameter_hash(),
    };
    let documented = interai::agent_documents::documented_numbers(
        &facts,
        &served.service.federation_summary().await.expect("summary"),
    );
    let number = |name: &str| {
        documented
            .iter()
            .find(|number| number.name == name)
            .unwrap_or_else(|| panic!("{name} is documented"))
            .value
    };
    let schema_number = |tool: &str, property: &str, key: &str| {
        tools.input_property(tool, property)[key]
            .as_f64()
            .unwrap_or_else(|| panic!("{tool}.{property} has {key}"))
    };
    let whoami = rpc(
        &http,
        &url,
        &key,
        "tools/call",
        json!({ "name": "whoami", "arguments": {} }),
    )
    .await;
    let trust = served.service.trust_parameters();
    for (name, served_value) in [
        (
            "idempotency_key_min",
            schema_number("publish", "idempotency_key", "minLength"),
        ),
        (
            "idempotency_key_max",
            schema_number("publish", "idempotency_key", "maxLength"),
        ),
        ("body_bytes", schema_number("publish", "body_markdown", "maxLength")),
        ("max_claims", schema_number("publish", "claims", "maxItems")),
        ("max_relations", schema_number("publish", "relations", "maxItems")),
        ("search_limit_min", schema_number("search", "limit", "minimum")),
        ("search_limit_max", schema_number("search", "limit", "maximum")),
        ("compare_items_min", schema_number("compare", "ids", "minItems")),
        ("compare_items_max", schema_number("compare", "ids", "maxItems")),
        ("confidence_min", schema_number("review", "confidence", "minimum")),
        ("confidence_max", schema_number("review", "confidence", "maximum")),
        ("rating_score_min", schema_number("rate", "score", "minimum")),
        ("rating_score_max", schema_number("rate", "score", "maximum")),
        (
            "writes_per_hour",
            whoami["structuredContent"]["rate_limits"]["writes_per_hour"]
                .as_f64()
                .expect("whoami's write limit"),
        ),
        ("tool_count", tools.tools.len() as f64),
        ("peer_realms_sharing_content", 0.0),
        ("prior_value", trust.base_rate),
        ("half_life_days", trust.half_life_days),
        ("supported_min_value", trust.supported_min_value),
        ("high_confidence_min_lower_bound", trust.high_confidence_min_lower_bound),
        (
            "high_confidence_min_confirmations",
            f64::from(trust.high_confidence_min_confirmations),
        ),
        (
            "strong_refutation_min_confidence",
            trust.strong_refutation_min_confidence,
        ),
    ] {
        assert_eq!(number(name), served_value, "{name}: documented and served differ");
    }
    let idempotency_key_pattern = tools.input_property("publish", "idempotency_key")["pattern"]
        .as_str()
        .expect("pattern")
        .to_owned();

    // The manifest: the same tools, limits and resource templates as the endpoint.
    let (_, manifest) = fetch(&http, &served, "/.well-known/inter-ai").await;
    let manifest: Value = serde_json::from_str(&manifest).expect("manifest is JSON");
    let manifest_tools: BTreeSet<String> = manifest["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|tool| tool.as_str().map(str::to_owned))
        .collect();
    assert_eq!(
        manifest_tools,
        tools.names(),
        "the manifest lists exactly the served tools"
    );
    for (field, name) in [
        ("body_markdown_bytes", "body_bytes"),
        ("structured_data_bytes", "structured_data_bytes"),
        ("claims_per_publish", "max_claims"),
        ("relations_per_publish", "max_relations"),
        ("writes_per_hour", "writes_per_hour"),
        ("search_limit_max", "search_limit_max"),
        ("idempotency_key_max_characters", "idempotency_key_max"),
    ] {
        assert_eq!(
            manifest["limits"][field].as_f64(),
            Some(number(name)),
            "manifest limit {field}"
        );
    }
    assert_eq!(
        manifest["limits"].as_object().map(|limits| limits.len()),
        Some(7),
        "every manifest limit is checked: {}",
        manifest["limits"]
    );
    let served_templates: BTreeSet<String> =
        rpc(&http, &url, &key, "resources/templates/list", json!({})).await["resourceTemplates"]
            .as_array()
            .expect("templates")
            .iter()
            .filter_map(|template| template["uriTemplate"].as_str().map(str::to_owned))
            .collect();
    let manifest_templates: BTreeSet<String> = manifest["resources"]["templates"]
        .as_array()
        .expect("templates")
        .iter()
        .filter_map(|template| template.as_str().map(str::to_owned))
        .collect();
    assert_eq!(
        manifest_templates, served_templates,
        "the manifest lists exactly the served resource templates"
    );
    let served_resources: Vec<String> = rpc(&http, &url, &key, "resources/list", json!({})).await["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .filter_map(|resource| resource["uri"].as_str().map(str::to_owned))
        .collect();
    let manifest_resources: BTreeSet<&str> = manifest["resources"]["uris"]
        .as_array()
        .expect("uris")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        manifest_resources,
        served_resources.iter().map(String::as_str).collect(),
        "the manifest lists exactly the served resources"
    );

    // Every text document, over HTTP and over MCP.
    let version = env!("CARGO_PKG_VERSION");
    let parameter_hash = facts.parameter_hash.clone();
    let instance_facts = ["http://alpha.test", "alpha.test", version, parameter_hash.as_str()];
    let mut documents = Vec::new();
    for path in ["/llms.txt", "/ai.md", "/SKILL.md"] {
        documents.push((path.to_owned(), fetch(&http, &served, path).await.1));
    }
    for uri in &served_resources {
        documents.push((uri.clone(), read_resource(&http, &url, &key, uri).await));
    }
    for (name, text) in &documents {
        if name == "interai://trust-model" {
            // docs/trust-model.md with a line naming the instance: its numbers are the engine's, checked by the
            // worked example in src/trust/tests; the tools it names must still exist.
            for word in backticked_words(text) {
                if NINE_TOOLS.contains(&word.as_str()) {
                    assert!(tools.names().contains(&word), "the trust model names the tool {word}");
                }
            }
            continue;
        }
        check_text_document(
            name,
            text,
            &instance_facts,
            &idempotency_key_pattern,
            &documented,
            &tools,
        );
    }
    assert!(documents.iter().any(|(name, _)| name == "interai://about"));
    served.stop().await;
}

/// A GET on `node`'s router: the body as text.
async fn node_get(node: &Node, path: &str) -> String {
    let request = http::Request::builder()
        .uri(path)
        .header("host", &node.realm)
        .body(axum::body::Body::empty())
        .expect("request");
    let response = node.router.clone().oneshot(request).await.expect("router answers");
    assert_eq!(response.status(), 200, "{path}");
    let bytes = axum::body::to_bytes(response.into_body(), 1024 * 1024)
        .await
        .expect("body");
    String::from_utf8(bytes.to_vec()).expect("UTF-8")
}

/// A JSON-RPC request to `node`'s `/mcp` with `key`: the `result`.
async fn node_rpc(node: &Node, key: &str, method: &str, params: Value) -> Value {
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params }).to_string();
    let request = http::Request::builder()
        .method("POST")
        .uri("/mcp")
        .header("host", &node.realm)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("authorization", format!("Bearer {key}"))
        .body(axum::body::Body::from(body))
        .expect("request");
    let response = node.router.clone().oneshot(request).await.expect("router answers");
    let bytes = axum::body::to_bytes(response.into_body(), 4 * 1024 * 1024)
        .await
        .expect("body");
    let answer: Value = serde_json::from_slice(&bytes).expect("a JSON answer");
    assert!(answer.get("error").is_none(), "{method}: {answer}");
    answer["result"].clone()
}

/// The documents that speak of federation, as `node` serves them now: over HTTP and as MCP resources.
async fn federation_documents(node: &Node, key: &str) -> Vec<(String, String)> {
    let mut documents = Vec::new();
    for path in ["/llms.txt", "/ai.md", "/SKILL.md"] {
        documents.push((path.to_owned(), node_get(node, path).await));
    }
    for uri in ["interai://about", "interai://instructions"] {
        let result = node_rpc(node, key, "resources/read", json!({ "uri": uri })).await;
        let text = result["contents"][0]["text"].as_str().expect("text").to_owned();
        documents.push((uri.to_owned(), text));
    }
    documents
}

#[tokio::test]
async fn the_documents_say_what_federation_does_on_this_instance_now_and_explain_what_get_shows_of_it() {
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));
    let reader = agent(alpha.service(), "reader").await;
    for (name, text) in federation_documents(alpha, &reader.key).await {
        assert!(!text.contains("not available"), "{name}: {text}");
        assert!(
            text.contains("no peer realm shares content with this instance now"),
            "{name} says there is no peer yet: {text}"
        );
    }

    peered(&network, "alpha.test", "beta.test").await;
    let author = agent(beta.service(), "author").await;
    let published = publish_procedure(
        beta.service(),
        &author,
        "rotate the signing key",
        &["rotation keeps peers"],
    )
    .await;
    network.settle().await;
    let documents = federation_documents(alpha, &reader.key).await;
    for (name, text) in &documents {
        assert!(!text.contains("not available"), "{name}: {text}");
        assert!(
            text.contains("content replicates with 1 peer realm"),
            "{name} says content comes from a peer: {text}"
        );
        assert!(text.contains("from_another_realm"), "{name} names the field");
    }

    // What the documents explain is what `get` shows of the replicated item.
    let got = node_rpc(
        alpha,
        &reader.key,
        "tools/call",
        json!({ "name": "get", "arguments": { "id": published.id } }),
    )
    .await["structuredContent"]
        .clone();
    assert_eq!(got["origin"], "beta.test", "{got}");
    assert_eq!(got["untrusted_content"], true, "{got}");
    let foreign = got["from_another_realm"]
        .as_object()
        .expect("from_another_realm")
        .clone();
    let (_, ai_md) = documents.iter().find(|(name, _)| name == "/ai.md").expect("ai.md");
    for field in ["origin", "from_another_realm", "untrusted_content"]
        .into_iter()
        .chain(foreign.keys().map(String::as_str))
    {
        assert!(ai_md.contains(&format!("`{field}`")), "ai.md explains `{field}`");
    }
    // The label ai.md quotes has the form the server gives.
    let label = foreign["label"]
        .as_str()
        .expect("label")
        .replace("beta.test", "beta.example");
    assert!(
        ai_md.contains(&label),
        "ai.md quotes the label as the server gives it: {label}"
    );
    assert!(ai_md.contains("Evidence does not cross realms yet"));
}
