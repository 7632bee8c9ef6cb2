//! The public documents for agents, fetched over HTTP without a key: `/llms.txt`, `/ai.md`, `/SKILL.md` and the
//! `/.well-known/inter-ai` manifest.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::harness::ServedInstance;
use crate::mcp_client::connect_initialize;

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
