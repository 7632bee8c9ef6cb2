//! Hostile input through the MCP endpoint, on both backends: oversized arrays and strings, control characters,
//! Unicode tricks in titles and names, out-of-range IDs, and the statement cut-off behind them; and the input
//! schemas that declare exactly the bounds the server enforces.

use interai::service::content::PublishRequest;
use interai::service::references::SubjectReference;
use serde_json::{Map, Value, json};

use crate::fixtures::{Agent, agent, metadata};
use crate::harness::{ServedInstance, TestInstance};
use crate::mcp_client::{McpClient, ToolOutcome, call, connect_initialize};

async fn client_for(served: &ServedInstance, key: &str) -> McpClient {
    connect_initialize(&served.mcp_url(), Some(key))
        .await
        .expect("client connects")
}

/// The most recent audit rows of an agent, newest first.
async fn audited(served: &ServedInstance, agent: &Agent, count: u32) -> Vec<interai::store::audit::McpCallRecord> {
    served
        .service
        .recent_calls(&agent.caller.actor.id, count)
        .await
        .expect("audit log")
}

fn refused_on(outcome: ToolOutcome, field: &str) -> Value {
    let error = outcome.err("validation_failed");
    assert_eq!(error["details"]["field"], field, "{error}");
    error
}

/// A new item by `author`, through the service; its ID.
async fn published(served: &ServedInstance, author: &Agent, title: &str) -> String {
    served
        .service
        .publish(
            &author.caller,
            &metadata("publish"),
            PublishRequest {
                content_type: "note".to_owned(),
                title: title.to_owned(),
                subjects: vec![SubjectReference::Named {
                    name: format!("{title} library"),
                    entity_type: "library".to_owned(),
                    aliases: vec![],
                    description: None,
                }],
                ..PublishRequest::default()
            },
        )
        .await
        .expect("publish")
        .id
}

// ---------------------------------------------------------------- item 1: bounded work per request

/// The issue's inputs: 8,000 tags (2.4 GB in one PostgreSQL backend), 20,000 tags, 1,000 tags (SQLite's "Expression
/// tree is too large") and 33,000 content types ("too many SQL variables") are refused before any statement, with the
/// same answer on both backends, and audited.
#[tokio::test]
async fn oversized_search_filters_are_refused_before_any_statement() {
    let served = ServedInstance::start("alpha.test").await;
    let searcher = agent(&served.service, "searcher").await;
    let client = client_for(&served, &searcher.key).await;
    let many =
        |count: usize, prefix: &str| -> Vec<String> { (0..count).map(|index| format!("{prefix}{index}")).collect() };

    for (field, count) in [
        ("tags", 8_000),
        ("tags", 20_000),
        ("tags", 1_000),
        ("content_types", 33_000),
    ] {
        let error = refused_on(
            call(&client, "search", json!({ "query": "retry", field: many(count, "t") })).await,
            field,
        );
        assert_eq!(error["details"]["max_items"], 30, "{error}");
        assert!(
            error["message"].as_str().unwrap_or("").contains("at most 30"),
            "{error}"
        );
    }
    refused_on(
        call(&client, "search", json!({ "entity_types": many(31, "library") })).await,
        "entity_types",
    );
    refused_on(
        call(
            &client,
            "search",
            json!({ "kinds": ["content", "claim", "entity", "content"] }),
        )
        .await,
        "kinds",
    );
    refused_on(
        call(&client, "search", json!({ "query": "x".repeat(1001) })).await,
        "query",
    );
    refused_on(
        call(&client, "search", json!({ "tags": ["a".repeat(65)] })).await,
        "tags/0",
    );
    // At the caps, the same filters run.
    let at_caps = call(
        &client,
        "search",
        json!({ "query": "retry", "tags": many(30, "t"), "content_types": many(30, "type_"), "entity_types": many(30, "kind_") }),
    )
    .await
    .ok();
    assert_eq!(at_caps["results"], json!([]));

    client.cancel().await.ok();
    let calls = audited(&served, &searcher, 20).await;
    let outcomes: Vec<(&str, &str)> = calls
        .iter()
        .map(|call| (call.tool.as_str(), call.outcome.as_str()))
        .collect();
    let mut expected = vec![("search", "ok")];
    expected.extend([("search", "validation_failed"); 8]);
    expected.push(("initialize", "ok"));
    assert_eq!(outcomes, expected);
    served.stop().await;
}

/// Entity aliases and source URLs were uncapped (10,000 aliases and a 100,000-character URL were stored).
#[tokio::test]
async fn aliases_and_source_urls_are_capped() {
    let served = ServedInstance::start("alpha.test").await;
    let author = agent(&served.service, "author").await;
    let client = client_for(&served, &author.key).await;
    let aliases: Vec<String> = (0..10_000).map(|index| format!("alias {index}")).collect();
    let error = refused_on(
        call(
            &client,
            "publish",
            json!({ "content_type": "note", "title": "t", "subjects": [{ "name": "Thing", "type": "library", "aliases": aliases }] }),
        )
        .await,
        "subjects/0/aliases",
    );
    assert_eq!(error["details"]["max_items"], 20);
    let long_url = format!("https://example.com/{}", "a".repeat(100_000));
    refused_on(
        call(
            &client,
            "publish",
            json!({ "content_type": "note", "title": "t", "sources": [{ "url": long_url, "title": "long" }] }),
        )
        .await,
        "sources/0/url",
    );
    refused_on(
        call(
            &client,
            "review",
            json!({ "target": "cnt_01j9zq3k5m8n2p4r6t8v0w2x4y", "verdict": "confirmed", "confidence": 1, "sources": [long_url] }),
        )
        .await,
        "sources/0/url",
    );
    // Percent-encoding may triple a URL; the normalized form is a database key and capped too.
    let expanding = format!("https://example.com/{}", "é".repeat(1000));
    refused_on(
        call(
            &client,
            "publish",
            json!({ "content_type": "note", "title": "t", "sources": [expanding] }),
        )
        .await,
        "sources/0/url",
    );
    // At the caps the item is stored with its 20 aliases and its 2,048-character URL.
    let url = format!(
        "https://example.com/{}",
        "b".repeat(2048 - "https://example.com/".len())
    );
    let aliases: Vec<String> = (0..20).map(|index| format!("alias {index}")).collect();
    let item = call(
        &client,
        "publish",
        json!({ "content_type": "note", "title": "capped", "subjects": [{ "name": "Capped thing", "type": "library", "aliases": aliases }], "sources": [url] }),
    )
    .await
    .ok();
    let shown = call(&client, "get", json!({ "id": item["id"] })).await.ok();
    assert_eq!(shown["sources"][0]["url"].as_str().map(str::len), Some(2048));
    let entity = shown["subjects"][0]["id"].clone();
    let entity = call(&client, "get", json!({ "id": entity })).await.ok();
    assert_eq!(entity["aliases"].as_array().map(Vec::len), Some(20));
    client.cancel().await.ok();
    served.stop().await;
}

/// Context facets are short values, and their normalized key, a database index key, is at most 1 KB.
#[tokio::test]
async fn context_facets_are_capped() {
    let served = ServedInstance::start("alpha.test").await;
    let author = agent(&served.service, "author").await;
    let user = agent(&served.service, "user").await;
    let content = published(&served, &author, "Facets").await;
    let client = client_for(&served, &user.key).await;
    let usage =
        |context: Value| json!({ "target": content, "usage_type": "test", "result": "success", "context": context });
    refused_on(
        call(&client, "report_usage", usage(json!({ "language": "p".repeat(201) }))).await,
        "context/language",
    );
    refused_on(
        call(&client, "report_usage", usage(json!({ "k".repeat(65): "v" }))).await,
        &format!("context/{}", "k".repeat(65)),
    );
    // Twenty facets of fifty characters each: every one within its cap, together over the key's kilobyte.
    let wide: Map<String, Value> = (0..20)
        .map(|index| (format!("facet_{index:02}_{}", "k".repeat(40)), json!("v".repeat(50))))
        .collect();
    refused_on(
        call(&client, "report_usage", usage(Value::Object(wide))).await,
        "context",
    );
    call(
        &client,
        "report_usage",
        usage(json!({ "language": "p".repeat(200), "note": "n".repeat(2000) })),
    )
    .await
    .ok();
    client.cancel().await.ok();
    served.stop().await;
}

/// Words of the corpus the cut-off test searches.
const VOCABULARY: [&str; 40] = [
    "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima",
    "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango", "uniform", "victor", "whiskey", "xray",
    "yankee", "zulu", "amber", "basalt", "cobalt", "dune", "ember", "fjord", "granite", "harbor", "island", "jasper",
    "kelp", "lagoon", "marble", "nectar",
];

/// A body of 8,000 words of the vocabulary, the same for the same item.
fn long_body(item: u64) -> String {
    let mut state = item * 7919 + 1;
    (0..8000)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            VOCABULARY[usize::try_from(state >> 33).unwrap_or(0) % VOCABULARY.len()]
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The cut-off behind the caps: a search whose work is over the budget answers `validation_failed` with reason
/// `too_expensive`, never `internal_error`, and is audited like any refusal.
///
/// The corpus: 20 items, each with 50 claims, 50 subjects and a body of 8,000 words, so 2,020 documents contain
/// "ledger"; the query asks for "ledger" or any of 40 words, ranked. On SQLite the budget counts instructions, so
/// the outcome is the same on every machine: with the setting at 1 ms (25,000 instructions) the search needs at
/// least twice that (50,000 to 70,000 measured). On PostgreSQL the timeout counts time: ranking 2,000 candidates by
/// cover density over these bodies takes 350 ms here, fourteen times the 25 ms set, while the other statements of
/// the call (authentication, the audit row) take well under a millisecond.
#[tokio::test]
async fn a_statement_over_the_budget_is_too_expensive_and_audited() {
    let alpha = TestInstance::start_with("alpha.test", |config| config.writes_per_hour = u32::MAX).await;
    let author = agent(alpha.service(), "author").await;
    let searcher = agent(alpha.service(), "searcher").await;
    for item in 0..20 {
        alpha
            .service()
            .publish(
                &author.caller,
                &metadata("publish"),
                PublishRequest {
                    content_type: "note".to_owned(),
                    title: format!("Ledger notes {item}"),
                    body_markdown: long_body(item),
                    claims: (0..50)
                        .map(|claim| format!("The ledger {item} keeps entry {claim}"))
                        .collect(),
                    subjects: (0..50)
                        .map(|subject| SubjectReference::Named {
                            name: format!("Ledger {item} part {subject}"),
                            entity_type: "component".to_owned(),
                            aliases: vec![],
                            description: None,
                        })
                        .collect(),
                    ..PublishRequest::default()
                },
            )
            .await
            .expect("publish");
    }
    let timeout_ms = if alpha.database.is_postgres() { 25 } else { 1 };
    let served = ServedInstance::serve(
        alpha
            .reopen_with(|config| config.statement_timeout_ms = timeout_ms)
            .await,
    )
    .await;
    let client = client_for(&served, &searcher.key).await;
    let query = format!("ledger or {}", VOCABULARY.join(" or "));
    let error = call(
        &client,
        "search",
        json!({ "query": query, "sort": "rank", "limit": 50 }),
    )
    .await
    .err("validation_failed");
    assert_eq!(error["details"], json!({ "reason": "too_expensive" }), "{error}");
    assert!(
        error["message"].as_str().unwrap_or("").contains("too expensive"),
        "{error}"
    );
    // A request within the budget still runs on the same connections.
    call(
        &client,
        "search",
        json!({ "query": "ledger", "kinds": ["content"], "limit": 5 }),
    )
    .await
    .ok();
    client.cancel().await.ok();
    let calls = audited(&served, &searcher, 5).await;
    assert_eq!(calls[1].tool, "search");
    assert_eq!(calls[1].outcome, "validation_failed");
    assert!(calls[1].result_summary.contains("too expensive"), "{:?}", calls[1]);
    assert_eq!(calls[1].request["query"], json!(query));
    served.stop().await;
}

// ---------------------------------------------------------------- item 2: one input gate

/// A NUL (or any other control character) anywhere in the arguments, keys included, is `validation_failed` naming
/// the place, the same on both backends, and the call is audited (on PostgreSQL it used to be `internal_error` and
/// missing from the audit log; on SQLite the NUL was stored).
#[tokio::test]
async fn control_characters_are_refused_at_the_gate_and_audited() {
    let served = ServedInstance::start("alpha.test").await;
    let author = agent(&served.service, "author").await;
    let client = client_for(&served, &author.key).await;
    let content = published(&served, &author, "Gate").await;

    refused_on(call(&client, "search", json!({ "query": "a\u{0}b" })).await, "query");
    refused_on(
        call(&client, "search", json!({ "context": { "ke\u{0}y": "value" } })).await,
        "context/ke\\u0000y",
    );
    refused_on(
        call(
            &client,
            "publish",
            json!({ "content_type": "note", "title": "t", "body_markdown": "body\u{0}" }),
        )
        .await,
        "body_markdown",
    );
    refused_on(
        call(
            &client,
            "publish",
            json!({ "content_type": "note", "title": "t", "structured_data": { "nested": { "k\u{0}": 1 } } }),
        )
        .await,
        "structured_data/nested/k\\u0000",
    );
    refused_on(
        call(
            &client,
            "report_usage",
            json!({ "target": content, "usage_type": "test", "result": "success", "context": { "env\u{0}": "prod" } }),
        )
        .await,
        "context/env\\u0000",
    );
    refused_on(
        call(
            &client,
            "publish",
            json!({ "content_type": "note", "title": "bell\u{7}", "tags": ["x"] }),
        )
        .await,
        "title",
    );
    refused_on(
        call(&client, "get", json!({ "id": content, "include": ["body\u{1b}[2J"] })).await,
        "include/0",
    );
    // Line breaks and tabs remain text.
    let multiline = call(
        &client,
        "publish",
        json!({ "content_type": "note", "title": "Lines", "body_markdown": "one\r\ntwo\n\tthree" }),
    )
    .await
    .ok();
    let shown = call(&client, "get", json!({ "id": multiline["id"] })).await.ok();
    assert_eq!(shown["body_markdown"], "one\r\ntwo\n\tthree");

    client.cancel().await.ok();
    let calls = audited(&served, &author, 20).await;
    let refused: Vec<_> = calls
        .iter()
        .filter(|call| call.outcome == "validation_failed")
        .collect();
    assert_eq!(refused.len(), 7, "every refusal is audited");
    let search = refused.last().expect("the first refusal");
    assert_eq!(search.tool, "search");
    assert_eq!(
        search.request,
        json!({ "query": "a\\u0000b" }),
        "stored with the NUL escaped"
    );
    assert!(
        calls
            .iter()
            .all(|call| !call.request.to_string().contains("\\u0000b\"") || call.outcome != "ok"),
        "nothing with a NUL was accepted"
    );
    served.stop().await;
}

/// Titles and names refuse bidirectional controls and text that shows nothing; right-to-left letters are fine.
#[tokio::test]
async fn titles_and_names_refuse_bidi_controls_and_invisible_text() {
    let served = ServedInstance::start("alpha.test").await;
    let author = agent(&served.service, "author").await;
    let client = client_for(&served, &author.key).await;
    let publish = |extra: Value| {
        let mut arguments = json!({ "content_type": "note", "title": "A title" });
        if let (Some(target), Value::Object(fields)) = (arguments.as_object_mut(), extra) {
            target.extend(fields);
        }
        arguments
    };
    let error = refused_on(
        call(
            &client,
            "publish",
            publish(json!({ "title": "Invoice \u{202E}fdp.exe" })),
        )
        .await,
        "title",
    );
    assert_eq!(error["details"]["reason"], "bidi_control");
    let error = refused_on(
        call(
            &client,
            "publish",
            publish(json!({ "subjects": [{ "name": "\u{200B}\u{200D}\u{FEFF}", "type": "library" }] })),
        )
        .await,
        "subjects/0/name",
    );
    assert_eq!(error["details"]["reason"], "invisible");
    refused_on(
        call(
            &client,
            "publish",
            publish(json!({ "subjects": [{ "name": "Thing", "type": "library", "aliases": ["thing\u{2066}"] }] })),
        )
        .await,
        "subjects/0/aliases/0",
    );
    refused_on(
        call(
            &client,
            "publish",
            publish(json!({ "sources": [{ "url": "https://example.com/", "title": "\u{3164}" }] })),
        )
        .await,
        "sources/0/title",
    );
    refused_on(
        call(&client, "publish", publish(json!({ "claims": ["\u{200B}"] }))).await,
        "claims/0/text",
    );
    for title in ["two\nlines", "two\u{2028}lines", "tab\there"] {
        refused_on(
            call(&client, "publish", publish(json!({ "title": title }))).await,
            "title",
        );
    }
    // 200 characters that NFKC expands eighteen-fold: over the kilobyte a normalized name may take as an index key.
    refused_on(
        call(
            &client,
            "publish",
            publish(json!({ "subjects": [{ "name": "\u{FDFA}".repeat(200), "type": "library" }] })),
        )
        .await,
        "subjects/0/name",
    );
    refused_on(
        call(
            &client,
            "submit_experience",
            json!({ "title": "\u{2800}\u{2800}", "result": "success" }),
        )
        .await,
        "title",
    );
    call(
        &client,
        "publish",
        publish(json!({ "title": "שלום עולם", "subjects": [{ "name": "مكتبة", "type": "library" }] })),
    )
    .await
    .ok();
    client.cancel().await.ok();
    served.stop().await;
}

/// A ULID whose first character is above 7 does not fit 128 bits: `cnt_g…` used to reach `cnt_0…`, for reads and
/// for evidence.
#[tokio::test]
async fn an_id_beyond_128_bits_names_no_object() {
    let served = ServedInstance::start("alpha.test").await;
    let author = agent(&served.service, "author").await;
    let user = agent(&served.service, "user").await;
    let content = published(&served, &author, "Overflow").await;
    assert!(content.starts_with("cnt_0"), "{content}");
    let client = client_for(&served, &user.key).await;
    for first in ["g", "8", "G"] {
        let alias = format!("cnt_{first}{}", &content[5..]);
        let error = refused_on(call(&client, "get", json!({ "id": alias })).await, "id");
        assert!(error["message"].as_str().unwrap_or("").contains("0 to 7"), "{error}");
        refused_on(
            call(
                &client,
                "report_usage",
                json!({ "target": alias, "usage_type": "test", "result": "success" }),
            )
            .await,
            "target",
        );
    }
    let shown = call(
        &client,
        "get",
        json!({ "id": content, "include": ["evidence_summary"] }),
    )
    .await
    .ok();
    assert_eq!(
        shown["evidence_summary"]["usage"],
        json!({}),
        "no usage reached it: {shown}"
    );
    client.cancel().await.ok();
    served.stop().await;
}

/// The same write with an ID in upper case and the same idempotency key is a retry, not a conflict.
#[tokio::test]
async fn ids_are_compared_in_canonical_form_for_idempotency() {
    let served = ServedInstance::start("alpha.test").await;
    let author = agent(&served.service, "author").await;
    let user = agent(&served.service, "user").await;
    let content = published(&served, &author, "Retry").await;
    let client = client_for(&served, &user.key).await;
    let report = |target: String| json!({ "target": target, "usage_type": "test", "result": "success", "idempotency_key": "retry-1" });
    let first = call(&client, "report_usage", report(content.clone())).await.ok();
    let again = call(&client, "report_usage", report(content.to_ascii_uppercase()))
        .await
        .ok();
    assert_eq!(again, first);
    let spaced = call(&client, "report_usage", report(format!(" {content} "))).await.ok();
    assert_eq!(spaced, first);
    let whoami = call(&client, "whoami", json!({})).await.ok();
    assert_eq!(whoami["rate_limits"]["remaining"], 199, "one write happened");
    client.cancel().await.ok();
    served.stop().await;
}

/// `alternatives_to` an ID that names nothing is `not_found`, not an empty list; `get` with a revision below 1 is
/// `validation_failed`, not `not_found`.
#[tokio::test]
async fn unknown_alternatives_and_negative_revisions_are_named_as_such() {
    let served = ServedInstance::start("alpha.test").await;
    let author = agent(&served.service, "author").await;
    let content = published(&served, &author, "Revisions").await;
    let client = client_for(&served, &author.key).await;
    let missing = "ent_01j9zq3k5m8n2p4r6t8v0w2x4y";
    let error = call(&client, "search", json!({ "alternatives_to": { "id": missing } }))
        .await
        .err("not_found");
    assert_eq!(error["details"]["field"], "alternatives_to/id");
    call(&client, "search", json!({ "alternatives_to": { "id": content } }))
        .await
        .ok();
    for revision in [-1, 0, i64::from(i32::MIN)] {
        refused_on(
            call(&client, "get", json!({ "id": content, "revision": revision })).await,
            "revision",
        );
    }
    call(&client, "get", json!({ "id": content, "revision": 1 })).await.ok();
    client.cancel().await.ok();
    served.stop().await;
}

// ---------------------------------------------------------------- the input schemas

/// Every tool's input schema, as `tools/list` shows it: every array has `maxItems`, every string `maxLength` (or an
/// `enum`), no numeric `format` (clients warn about `uint32`), every property has a type and none a `type` array.
#[tokio::test]
async fn every_input_schema_bounds_its_arrays_and_strings() {
    let served = ServedInstance::start("alpha.test").await;
    let client = client_for(&served, &served.admin_key).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    assert_eq!(tools.len(), 9);
    let mut problems = Vec::new();
    for tool in &tools {
        let root = Value::Object((*tool.input_schema).clone());
        let mut walker = SchemaWalker {
            root: &root,
            problems: &mut problems,
            tool: &tool.name,
        };
        walker.check(&root, "", true);
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    client.cancel().await.ok();
    served.stop().await;
}

struct SchemaWalker<'a> {
    root: &'a Value,
    problems: &'a mut Vec<String>,
    tool: &'a str,
}

impl SchemaWalker<'_> {
    fn report(&mut self, path: &str, problem: &str) {
        self.problems.push(format!("{} {path}: {problem}", self.tool));
    }

    fn check(&mut self, schema: &Value, path: &str, needs_type: bool) {
        if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            let name = reference.trim_start_matches("#/$defs/");
            let resolved = self.root["$defs"][name].clone();
            return self.check(&resolved, path, needs_type);
        }
        if let Some(format) = schema.get("format").and_then(Value::as_str) {
            self.report(path, &format!("format {format}"));
        }
        let branches = schema
            .get("anyOf")
            .or_else(|| schema.get("oneOf"))
            .and_then(Value::as_array)
            .cloned();
        let types: Vec<String> = match schema.get("type") {
            Some(Value::String(single)) => vec![single.clone()],
            Some(Value::Array(many)) => {
                // A `type` array is legal JSON Schema but single-type dialects reject it (the Inspector's lint).
                self.report(path, "a type array");
                many.iter().filter_map(Value::as_str).map(str::to_owned).collect()
            }
            _ => Vec::new(),
        };
        if types.is_empty() && branches.is_none() && needs_type {
            self.report(path, "no type");
        }
        if types.iter().any(|kind| kind == "string")
            && schema.get("maxLength").is_none()
            && schema.get("enum").is_none()
        {
            self.report(path, "a string without maxLength");
        }
        if types.iter().any(|kind| kind == "array") {
            if schema.get("maxItems").is_none() {
                self.report(path, "an array without maxItems");
            }
            match schema.get("items") {
                Some(items) => self.check(items, &format!("{path}/0"), true),
                None => self.report(path, "an array without items"),
            }
        }
        if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
            for (name, property) in properties {
                self.check(property, &format!("{path}/{name}"), true);
            }
        }
        if let Some(names) = schema.get("propertyNames") {
            self.check(names, &format!("{path}/(name)"), true);
        }
        if let Some(additional) = schema.get("additionalProperties").filter(|value| value.is_object()) {
            self.check(additional, &format!("{path}/*"), true);
        }
        for branch in branches.unwrap_or_default() {
            self.check(&branch, path, true);
        }
    }
}

/// Every bound an input schema declares is the bound the server enforces: for each `maxLength`, `maxItems`,
/// `minItems`, `maximum`, `minimum`, `maxProperties` and the context's facet caps of every tool, a value one past the
/// bound (in an otherwise valid call) is `validation_failed` naming that field, and a value at the bound is not
/// refused for its size.
#[tokio::test]
async fn the_declared_bounds_are_the_enforced_bounds() {
    let served = ServedInstance::start_with("alpha.test", |config| config.writes_per_hour = u32::MAX).await;
    let author = agent(&served.service, "author").await;
    let user = agent(&served.service, "user").await;
    let client = client_for(&served, &user.key).await;
    let theirs = published(&served, &author, "Theirs").await;
    let mine = published(&served, &user, "Mine").await;
    let entity = |content: &str| {
        let client = &client;
        let content = content.to_owned();
        async move {
            let shown = call(client, "get", json!({ "id": content })).await.ok();
            shown["subjects"][0]["id"].as_str().expect("subject").to_owned()
        }
    };
    let (first_entity, second_entity) = (entity(&theirs).await, entity(&mine).await);
    let usage = call(
        &client,
        "report_usage",
        json!({ "target": theirs, "usage_type": "test", "result": "success" }),
    )
    .await
    .ok()["id"]
        .as_str()
        .expect("usage")
        .to_owned();
    let context = json!({ "language": "rust", "note": "n" });
    let baselines = json!({
        "search": {
            "query": "note", "kinds": ["content"], "content_types": ["note"], "entity_types": ["library"], "tags": ["a"],
            "context": context, "alternatives_to": { "id": first_entity, "reason": "simpler" }, "space": "default",
            "min_status": "unverified", "include_disputed": true, "sort": "rank", "limit": 10
        },
        "get": { "id": theirs, "revision": 1, "include": ["body"] },
        "compare": { "ids": [first_entity, second_entity], "context": context, "dimensions": ["speed"] },
        "whoami": {},
        "publish": {
            "content_type": "note", "title": "Bounds", "summary": "s", "body_markdown": "b", "structured_data": {},
            "revision_of": mine, "change_note": "c",
            "subjects": [{ "name": "Bound thing", "type": "library", "aliases": ["bt"], "description": "d" }],
            "claims": [{ "text": "Bounds hold" }], "sources": [{ "url": "https://example.com/", "title": "Example" }],
            "relations": [{ "type": "alternative_to", "target": theirs, "reason": "simpler" }], "tags": ["a"],
            "space": "default", "language": "en"
        },
        "submit_experience": {
            "title": "Experience", "summary": "s", "body_markdown": "b",
            "subjects": [{ "name": "Bound thing", "type": "library" }], "result": "success", "real_world_use": false,
            "context": context, "configuration": {}, "observations": {}, "metrics": {},
            "used": [{ "id": theirs, "result": "success", "note": "n" }], "tags": ["a"], "space": "default",
            "language": "en"
        },
        "report_usage": {
            "target": theirs, "usage_type": "test", "result": "success", "real_world_use": false, "context": context,
            "metrics": {}, "note": "n"
        },
        "review": {
            "target": theirs, "verdict": "confirmed", "confidence": 0.5, "rationale_markdown": "r",
            "sources": [{ "url": "https://example.com/", "title": "t" }], "based_on_usage": usage
        },
        "rate": {
            "target": first_entity, "context": context, "dimension": "speed", "score": 50, "confidence": 0.5,
            "based_on_usage": usage, "rationale_markdown": "r"
        },
    });
    let tools = client.list_all_tools().await.expect("tools/list");
    let mut problems = Vec::new();
    let mut checked = 0;
    for tool in &tools {
        let name = tool.name.to_string();
        let baseline = baselines[name.as_str()].clone();
        call(&client, &name, baseline.clone()).await.ok();
        let root = Value::Object((*tool.input_schema).clone());
        let mut bounds = Vec::new();
        collect_bounds(&root, &root, &[], &mut bounds);
        for bound in bounds {
            checked += 1;
            for (beyond, value, field) in bound.cases(&baseline) {
                let mut arguments = baseline.clone();
                if bound.path.first().map(String::as_str) == Some("retract") {
                    arguments = json!({ "retract": value });
                } else {
                    set_at(&mut arguments, &bound.path, value);
                }
                let outcome = call(&client, &name, arguments).await;
                let code = outcome.error_code().map(str::to_owned);
                let reported = outcome.structured["error"]["details"]["field"]
                    .as_str()
                    .unwrap_or("")
                    .to_owned();
                let message = outcome.structured["error"]["message"].as_str().unwrap_or("").to_owned();
                let related = reported == field
                    || field.starts_with(&format!("{reported}/"))
                    || reported.starts_with(&format!("{field}/"));
                let label = format!("{name} {field} {:?}", bound.limit);
                if beyond {
                    if code.as_deref() != Some("validation_failed") || !related {
                        problems.push(format!(
                            "{label}: beyond the bound gave {code:?} on {reported:?}: {message}"
                        ));
                    }
                } else if code.as_deref() == Some("internal_error")
                    || (code.as_deref() == Some("validation_failed") && related && message.contains(&bound.number()))
                {
                    problems.push(format!(
                        "{label}: at the bound gave {code:?} on {reported:?}: {message}"
                    ));
                }
            }
        }
    }
    assert!(checked > 100, "only {checked} bounds found");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    client.cancel().await.ok();
    served.stop().await;
}

#[derive(Debug)]
enum Limit {
    MaxLength(u64),
    MaxItems(u64),
    MinItems(u64),
    Maximum(f64),
    Minimum(f64),
    MaxProperties(u64),
    NameMaxLength(u64),
    ValueMaxLength(u64),
}

struct Bound {
    path: Vec<String>,
    limit: Limit,
    integer: bool,
}

impl Bound {
    fn number(&self) -> String {
        match self.limit {
            Limit::MaxLength(n)
            | Limit::MaxItems(n)
            | Limit::MinItems(n)
            | Limit::MaxProperties(n)
            | Limit::NameMaxLength(n)
            | Limit::ValueMaxLength(n) => n.to_string(),
            Limit::Maximum(x) | Limit::Minimum(x) => x.to_string(),
        }
    }

    /// (beyond the bound?, the value, the field a refusal must name), beyond first.
    fn cases(&self, baseline: &Value) -> Vec<(bool, Value, String)> {
        let field = self.path.join("/");
        let text = |length: u64, letter: &str| letter.repeat(usize::try_from(length).unwrap_or(0));
        let sample = get_at(baseline, &[self.path.clone(), vec!["0".to_owned()]].concat())
            .cloned()
            .unwrap_or_else(|| json!("a"));
        let copies = |count: u64| Value::Array(vec![sample.clone(); usize::try_from(count).unwrap_or(0)]);
        let number = |value: f64| {
            if self.integer {
                json!(value as i64)
            } else {
                json!(value)
            }
        };
        let with_entry = |name: String, value: Value| {
            let mut object = get_at(baseline, &self.path)
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            object.insert(name, value);
            Value::Object(object)
        };
        match self.limit {
            Limit::MaxLength(n) => vec![
                (true, json!(text(n + 1, "a")), field.clone()),
                (false, json!(text(n, "a")), field),
            ],
            Limit::MaxItems(n) => vec![(true, copies(n + 1), field.clone()), (false, copies(n), field)],
            Limit::MinItems(n) => vec![(true, copies(n.saturating_sub(1)), field)],
            Limit::Maximum(x) => vec![(true, number(x + 1.0), field.clone()), (false, number(x), field)],
            Limit::Minimum(x) => vec![(true, number(x - 1.0), field.clone()), (false, number(x), field)],
            Limit::MaxProperties(n) => {
                let object =
                    |count: u64| Value::Object((0..count).map(|index| (format!("k{index}"), json!("v"))).collect());
                vec![(true, object(n + 1), field.clone()), (false, object(n), field)]
            }
            Limit::NameMaxLength(n) => vec![
                (
                    true,
                    with_entry(text(n + 1, "k"), json!("v")),
                    format!("{field}/{}", text(n + 1, "k")),
                ),
                (
                    false,
                    with_entry(text(n, "k"), json!("v")),
                    format!("{field}/{}", text(n, "k")),
                ),
            ],
            Limit::ValueMaxLength(n) => vec![
                (
                    true,
                    with_entry("facet".to_owned(), json!(text(n + 1, "v"))),
                    format!("{field}/facet"),
                ),
                (
                    false,
                    with_entry("facet".to_owned(), json!(text(n, "v"))),
                    format!("{field}/facet"),
                ),
            ],
        }
    }
}

fn collect_bounds(root: &Value, schema: &Value, path: &[String], bounds: &mut Vec<Bound>) {
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        let name = reference.trim_start_matches("#/$defs/");
        return collect_bounds(root, &root["$defs"][name], path, bounds);
    }
    for branch in schema
        .get("anyOf")
        .or_else(|| schema.get("oneOf"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        collect_bounds(root, branch, path, bounds);
    }
    let integer = schema["type"] == "integer"
        || schema["type"]
            .as_array()
            .is_some_and(|types| types.contains(&json!("integer")));
    let mut add = |limit: Limit| {
        bounds.push(Bound {
            path: path.to_vec(),
            limit,
            integer,
        })
    };
    let count = |key: &str| schema.get(key).and_then(Value::as_u64);
    if let Some(n) = count("maxLength") {
        add(Limit::MaxLength(n));
    }
    if let Some(n) = count("maxItems") {
        add(Limit::MaxItems(n));
    }
    if let Some(n) = count("minItems") {
        add(Limit::MinItems(n));
    }
    if let Some(x) = schema.get("maximum").and_then(Value::as_f64) {
        add(Limit::Maximum(x));
    }
    if let Some(x) = schema.get("minimum").and_then(Value::as_f64) {
        add(Limit::Minimum(x));
    }
    if let Some(n) = count("maxProperties") {
        add(Limit::MaxProperties(n));
    }
    if let Some(n) = schema["propertyNames"].get("maxLength").and_then(Value::as_u64) {
        add(Limit::NameMaxLength(n));
    }
    let facet_value = &schema["additionalProperties"];
    let facet_value_branches = facet_value["anyOf"].as_array().cloned().unwrap_or_default();
    if let Some(n) = std::iter::once(facet_value)
        .chain(facet_value_branches.iter())
        .find_map(|branch| branch.get("maxLength").and_then(Value::as_u64))
    {
        add(Limit::ValueMaxLength(n));
    }
    if let Some(items) = schema.get("items") {
        collect_bounds(root, items, &[path.to_vec(), vec!["0".to_owned()]].concat(), bounds);
    }
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            collect_bounds(root, property, &[path.to_vec(), vec![name.clone()]].concat(), bounds);
        }
    }
}

fn get_at<'v>(value: &'v Value, path: &[String]) -> Option<&'v Value> {
    path.iter().try_fold(value, |current, segment| match current {
        Value::Array(items) => items.get(segment.parse::<usize>().ok()?),
        Value::Object(fields) => fields.get(segment),
        _ => None,
    })
}

/// Sets the value at `path`, creating what is missing on the way: an array where the next segment is a position,
/// an object otherwise.
fn set_at(value: &mut Value, path: &[String], new: Value) {
    let Some((last, parents)) = path.split_last() else {
        *value = new;
        return;
    };
    let mut current = value;
    for (depth, segment) in parents.iter().enumerate() {
        let next = path.get(depth + 1).map(String::as_str).unwrap_or("");
        let empty = || {
            if next.parse::<usize>().is_ok() {
                json!([])
            } else {
                json!({})
            }
        };
        current = match current {
            Value::Array(items) => {
                let position = segment.parse::<usize>().unwrap_or(0);
                if items.len() <= position {
                    items.resize(position + 1, empty());
                }
                &mut items[position]
            }
            other => {
                if !other.is_object() {
                    *other = json!({});
                }
                match other.as_object_mut() {
                    Some(fields) => fields.entry(segment.clone()).or_insert_with(empty),
                    None => return,
                }
            }
        };
    }
    match current {
        Value::Array(items) => {
            let position = last.parse::<usize>().unwrap_or(0);
            if items.len() <= position {
                items.resize(position + 1, Value::Null);
            }
            items[position] = new;
        }
        other => {
            if !other.is_object() {
                *other = json!({});
            }
            if let Some(fields) = other.as_object_mut() {
                fields.insert(last.clone(), new);
            }
        }
    }
}
