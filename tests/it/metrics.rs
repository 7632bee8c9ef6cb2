//! `/metrics` on a real socket: who may read it, its formats, and that what the instance serves is counted there, by
//! route and status and by tool and outcome, separately for each instance in the process.

use rmcp::model::CallToolRequestParams;
use serde_json::json;

use crate::fixtures::{agent_of_with_scopes, controller};
use crate::harness::ServedInstance;
use crate::mcp_client::{call, connect_discover};

const PROMETHEUS_TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";
const OPENMETRICS_TEXT: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// One series of an exposition: metric name and labels, sorted by label name.
type Series = (String, Vec<(String, String)>);

/// Every sample of a Prometheus or OpenMetrics text exposition.
fn samples(text: &str) -> Vec<(Series, f64)> {
    let mut found = Vec::new();
    for line in text
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
    {
        let (series, value) = line.rsplit_once(' ').expect("a sample line ends with its value");
        let value: f64 = value.parse().expect("a sample value is a number");
        let (name, labels) = match series.split_once('{') {
            None => (series.to_owned(), Vec::new()),
            Some((name, rest)) => {
                let inner = rest.strip_suffix('}').expect("labels end with }");
                (name.to_owned(), parse_labels(inner))
            }
        };
        found.push(((name, labels), value));
    }
    found
}

/// `a="x",b="y"` → sorted pairs; values may hold any character but an unescaped quote.
fn parse_labels(inner: &str) -> Vec<(String, String)> {
    let mut labels = Vec::new();
    let mut rest = inner;
    while !rest.is_empty() {
        let (name, after_name) = rest.split_once("=\"").expect("label name=\"value\"");
        let mut value = String::new();
        let mut characters = after_name.char_indices();
        let mut end = None;
        while let Some((index, character)) = characters.next() {
            match character {
                '\\' => {
                    if let Some((_, escaped)) = characters.next() {
                        value.push(escaped);
                    }
                }
                '"' => {
                    end = Some(index);
                    break;
                }
                other => value.push(other),
            }
        }
        let end = end.expect("label value ends with a quote");
        labels.push((name.trim_start_matches(',').to_owned(), value));
        rest = after_name[end + 1..].trim_start_matches(',');
    }
    labels.sort();
    labels
}

/// The value of the series `name{labels}`, 0 when the exposition has no such series (a counter never incremented).
pub(crate) fn value_of(text: &str, name: &str, labels: &[(&str, &str)]) -> f64 {
    let mut wanted: Vec<(String, String)> = labels
        .iter()
        .map(|(label, value)| ((*label).to_owned(), (*value).to_owned()))
        .collect();
    wanted.sort();
    let matching: Vec<f64> = samples(text)
        .into_iter()
        .filter(|((sample_name, sample_labels), _)| sample_name == name && *sample_labels == wanted)
        .map(|(_, value)| value)
        .collect();
    assert!(matching.len() <= 1, "{name}{labels:?} appears twice in\n{text}");
    matching.first().copied().unwrap_or(0.0)
}

fn http_requests(text: &str, route: &str, status: &str) -> f64 {
    value_of(
        text,
        "interai_http_requests_total",
        &[("route", route), ("status", status)],
    )
}

fn tool_calls(text: &str, tool: &str, outcome: &str) -> f64 {
    value_of(
        text,
        "interai_tool_calls_total",
        &[("tool", tool), ("outcome", outcome)],
    )
}

/// Reads `/metrics` with the admin key, as a scraper that asks for no particular format.
async fn scrape(served: &ServedInstance) -> String {
    let response = reqwest::Client::new()
        .get(format!("{}/metrics", served.base_url))
        .bearer_auth(&served.admin_key)
        .send()
        .await
        .expect("scrape");
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["content-type"].to_str().expect("ascii"),
        PROMETHEUS_TEXT
    );
    response.text().await.expect("body")
}

async fn reader_key(served: &ServedInstance) -> String {
    let owner = controller(&served.service, "Olga").await;
    agent_of_with_scopes(&served.service, &owner, "Reader", "read")
        .await
        .key
}

#[tokio::test]
async fn tool_calls_are_counted_by_tool_and_outcome() {
    let served = ServedInstance::start("alpha.test").await;
    let key = reader_key(&served).await;
    let client = connect_discover(&served.mcp_url(), &key).await;

    call(&client, "whoami", json!({})).await.ok();
    call(&client, "whoami", json!({})).await.ok();
    call(&client, "get", json!({ "id": "cnt_01JZZZZZZZZZZZZZZZZZZZZZZZ" }))
        .await
        .err("not_found");
    call(&client, "get", json!({ "id": "not an id" }))
        .await
        .err("validation_failed");
    let unknown = client
        .call_tool(CallToolRequestParams::new("no_such_tool").with_arguments(serde_json::Map::new()))
        .await;
    assert!(unknown.is_err(), "an unknown tool is a protocol error: {unknown:?}");

    let text = scrape(&served).await;
    assert_eq!(tool_calls(&text, "whoami", "ok"), 2.0, "{text}");
    assert_eq!(tool_calls(&text, "get", "not_found"), 1.0, "{text}");
    assert_eq!(tool_calls(&text, "get", "validation_failed"), 1.0, "{text}");
    assert_eq!(tool_calls(&text, "get", "ok"), 0.0, "{text}");
    // Every unknown name shares one series: the name a caller sends never becomes a label.
    assert_eq!(tool_calls(&text, "unknown", "unknown_tool"), 1.0, "{text}");
    assert!(!text.contains("no_such_tool"), "{text}");
    assert!(http_requests(&text, "/mcp", "200") >= 5.0, "{text}");
    served.stop().await;
}

#[tokio::test]
async fn http_requests_are_counted_by_route_template_and_status() {
    let served = ServedInstance::start("alpha.test").await;
    let key = reader_key(&served).await;
    let http = reqwest::Client::new();
    for _ in 0..2 {
        let response = http
            .get(format!("{}/healthz", served.base_url))
            .send()
            .await
            .expect("healthz");
        assert_eq!(response.status(), 200);
    }
    let missing = http
        .get(format!("{}/no/such/page", served.base_url))
        .send()
        .await
        .expect("missing page");
    assert_eq!(missing.status(), 404);
    let unauthenticated = http
        .post(served.mcp_url())
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(json!({ "jsonrpc": "2.0", "id": 1, "method": "ping" }).to_string())
        .send()
        .await
        .expect("mcp without a key");
    assert_eq!(unauthenticated.status(), 401);
    let metrics_without_key = http
        .get(format!("{}/metrics", served.base_url))
        .send()
        .await
        .expect("metrics without a key");
    assert_eq!(metrics_without_key.status(), 401);
    assert!(metrics_without_key.headers().contains_key("www-authenticate"));
    let metrics_as_reader = http
        .get(format!("{}/metrics", served.base_url))
        .bearer_auth(&key)
        .send()
        .await
        .expect("metrics with a reader key");
    assert_eq!(metrics_as_reader.status(), 403);
    let refusal = metrics_as_reader.text().await.expect("body");
    assert!(!refusal.contains("interai_"), "a refusal shows no metrics: {refusal}");

    let first = scrape(&served).await;
    assert_eq!(http_requests(&first, "/healthz", "200"), 2.0, "{first}");
    assert_eq!(http_requests(&first, "unmatched", "404"), 1.0, "{first}");
    assert!(!first.contains("/no/such/page"), "{first}");
    assert_eq!(http_requests(&first, "/mcp", "401"), 1.0, "{first}");
    assert_eq!(http_requests(&first, "/mcp", "200"), 0.0, "{first}");
    assert_eq!(http_requests(&first, "/metrics", "401"), 1.0, "{first}");
    assert_eq!(http_requests(&first, "/metrics", "403"), 1.0, "{first}");
    // A scrape is counted once its answer is out, so it shows in the next one.
    assert_eq!(http_requests(&first, "/metrics", "200"), 0.0, "{first}");
    let second = scrape(&served).await;
    assert_eq!(http_requests(&second, "/metrics", "200"), 1.0, "{second}");
    assert_eq!(http_requests(&second, "/healthz", "200"), 2.0, "{second}");
    served.stop().await;
}

#[tokio::test]
async fn the_metrics_endpoint_answers_openmetrics_to_scrapers_that_ask_for_it() {
    let served = ServedInstance::start("alpha.test").await;
    let http = reqwest::Client::new();
    let prometheus = scrape(&served).await;
    assert!(
        prometheus.lines().any(|line| line == "# TYPE interai_peers gauge"),
        "{prometheus}"
    );
    for state in ["pending_out", "pending_in", "active", "blocked", "unreachable"] {
        assert_eq!(value_of(&prometheus, "interai_peers", &[("state", state)]), 0.0);
        assert!(
            prometheus.contains(&format!("interai_peers{{state=\"{state}\"}} 0")),
            "{prometheus}"
        );
    }

    let response = http
        .get(format!("{}/metrics", served.base_url))
        .bearer_auth(&served.admin_key)
        .header(
            "accept",
            "application/openmetrics-text;version=1.0.0;q=0.5,text/plain;version=0.0.4;q=0.3,*/*;q=0.2",
        )
        .send()
        .await
        .expect("scrape as Prometheus does");
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["content-type"].to_str().expect("ascii"),
        OPENMETRICS_TEXT
    );
    let openmetrics = response.text().await.expect("body");
    assert!(openmetrics.ends_with("# EOF\n"), "{openmetrics}");
    assert!(
        openmetrics
            .lines()
            .any(|line| line == "# TYPE interai_http_requests counter"),
        "{openmetrics}"
    );
    assert_eq!(http_requests(&openmetrics, "/metrics", "200"), 1.0, "{openmetrics}");
    // In Prometheus text the counter's family carries the suffix.
    let prometheus = scrape(&served).await;
    assert!(
        prometheus
            .lines()
            .any(|line| line == "# TYPE interai_http_requests_total counter"),
        "{prometheus}"
    );
    assert_eq!(http_requests(&prometheus, "/metrics", "200"), 2.0, "{prometheus}");
    served.stop().await;
}

#[tokio::test]
async fn instances_in_one_process_keep_separate_counts() {
    let alpha = ServedInstance::start("alpha.test").await;
    let beta = ServedInstance::start("beta.test").await;
    let gamma = ServedInstance::start("gamma.test").await;
    let http = reqwest::Client::new();
    for (served, probes) in [(&alpha, 3), (&beta, 1)] {
        for _ in 0..probes {
            let response = http
                .get(format!("{}/healthz", served.base_url))
                .send()
                .await
                .expect("healthz");
            assert_eq!(response.status(), 200);
        }
    }
    let key = reader_key(&alpha).await;
    let client = connect_discover(&alpha.mcp_url(), &key).await;
    call(&client, "whoami", json!({})).await.ok();

    let alpha_text = scrape(&alpha).await;
    let beta_text = scrape(&beta).await;
    let gamma_text = scrape(&gamma).await;
    assert_eq!(http_requests(&alpha_text, "/healthz", "200"), 3.0, "{alpha_text}");
    assert_eq!(http_requests(&beta_text, "/healthz", "200"), 1.0, "{beta_text}");
    assert_eq!(http_requests(&gamma_text, "/healthz", "200"), 0.0, "{gamma_text}");
    assert_eq!(tool_calls(&alpha_text, "whoami", "ok"), 1.0, "{alpha_text}");
    for text in [&beta_text, &gamma_text] {
        assert_eq!(tool_calls(text, "whoami", "ok"), 0.0, "{text}");
        assert_eq!(http_requests(text, "/mcp", "200"), 0.0, "{text}");
    }
    alpha.stop().await;
    beta.stop().await;
    gamma.stop().await;
}

#[test]
fn the_exposition_parser_reads_labels_with_braces_commas_and_quotes() {
    let text = "# TYPE x counter\nx_total{route=\"/o/{id}\",status=\"200\"} 3\n\
                x_total{status=\"404\",route=\"a,b \\\"c\\\"\"} 1\n# EOF\n";
    assert_eq!(
        value_of(text, "x_total", &[("route", "/o/{id}"), ("status", "200")]),
        3.0
    );
    assert_eq!(
        value_of(text, "x_total", &[("status", "404"), ("route", "a,b \"c\"")]),
        1.0
    );
    assert_eq!(
        value_of(text, "x_total", &[("route", "/o/{id}"), ("status", "404")]),
        0.0
    );
}
