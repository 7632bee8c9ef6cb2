//! MCP resources: the documents and any public object by URI, listed and readable.

use rmcp::model::{ReadResourceRequestParams, ResourceContents};
use serde_json::{Value, json};

use crate::fixtures::agent;
use crate::harness::ServedInstance;
use crate::mcp_client::{McpClient, call, connect_initialize};

async fn read(client: &McpClient, uri: &str) -> Result<(String, String), rmcp::ServiceError> {
    let result = client
        .read_resource(ReadResourceRequestParams::new(uri.to_owned()))
        .await?;
    match result.contents.into_iter().next() {
        Some(ResourceContents::TextResourceContents { text, mime_type, .. }) => {
            Ok((text, mime_type.unwrap_or_default()))
        }
        other => panic!("expected text contents, got {other:?}"),
    }
}

#[tokio::test]
async fn every_resource_is_listed_and_readable() {
    let served = ServedInstance::start("alpha.test").await;
    let author = agent(&served.service, "author").await;
    let client = connect_initialize(&served.mcp_url(), Some(&author.key))
        .await
        .expect("client");

    let listed = client.list_resources(None).await.expect("resources/list").resources;
    let uris: Vec<&str> = listed.iter().map(|resource| resource.uri.as_str()).collect();
    assert_eq!(uris.len(), 3);
    for uri in ["interai://about", "interai://instructions", "interai://trust-model"] {
        assert!(uris.contains(&uri), "{uri} listed");
        let (text, mime) = read(&client, uri).await.expect("readable");
        assert!(mime.starts_with("text/markdown"), "{uri}: {mime}");
        assert!(text.contains("alpha.test"), "{uri} names the realm");
    }
    let (instructions, _) = read(&client, "interai://instructions").await.expect("instructions");
    assert!(instructions.to_lowercase().contains("untrusted"));

    let templates = client
        .list_resource_templates(None)
        .await
        .expect("templates")
        .resource_templates;
    let templates: Vec<&str> = templates
        .iter()
        .map(|template| template.uri_template.as_str())
        .collect();
    assert!(templates.contains(&"interai://{id}"));
    assert!(templates.contains(&"interai://content/{cnt_id}/revision/{revision_no}"));

    let published = call(
        &client,
        "publish",
        json!({ "content_type": "note", "title": "Resource check", "body_markdown": "Body.", "claims": ["Resources mirror get."] }),
    )
    .await
    .ok();
    let content_id = published["id"].as_str().expect("id");
    let claim_id = published["claims"][0]["id"].as_str().expect("claim");
    let through_get = call(&client, "get", json!({ "id": content_id })).await.ok();
    for uri in [
        format!("interai://{content_id}"),
        format!("interai://content/{content_id}"),
        format!("interai://content/{content_id}/revision/1"),
    ] {
        let (text, mime) = read(&client, &uri).await.expect("object resource");
        assert_eq!(mime, "application/json");
        let value: Value = serde_json::from_str(&text).expect("json");
        assert_eq!(value["id"], content_id);
        assert_eq!(value["title"], through_get["title"]);
        assert_eq!(value["revision"]["no"], 1);
    }
    let (claim, _) = read(&client, &format!("interai://{claim_id}"))
        .await
        .expect("claim resource");
    assert!(claim.contains("Resources mirror get."));
    let actor = author.caller.actor.id.as_str();
    read(&client, &format!("interai://{actor}"))
        .await
        .expect("actor resource");

    assert!(
        read(&client, "interai://cnt_01j9zq3k5m8n2p4r6t8v0w2x4y").await.is_err(),
        "unknown object"
    );
    assert!(
        read(&client, &format!("interai://content/{content_id}/revision/9"))
            .await
            .is_err(),
        "unknown revision"
    );
    assert!(read(&client, "https://example.com/").await.is_err(), "foreign URI");
    client.cancel().await.ok();
    served.stop().await;
}

/// The JSON-RPC error code and the spec's error code of a failed resource read.
fn read_error(result: Result<(String, String), rmcp::ServiceError>) -> (i32, String) {
    match result {
        Err(rmcp::ServiceError::McpError(error)) => (
            error.code.0,
            error
                .data
                .as_ref()
                .and_then(|data| data.pointer("/error/code"))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
        ),
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

#[tokio::test]
async fn any_key_reads_the_documents_objects_need_read_and_a_missing_one_has_the_peers_code() {
    let served = ServedInstance::start("alpha.test").await;
    let reporter = crate::fixtures::agent_of_with_scopes(
        &served.service,
        &crate::fixtures::controller(&served.service, "owner").await,
        "reporter",
        "usage",
    )
    .await;
    let client = connect_initialize(&served.mcp_url(), Some(&reporter.key))
        .await
        .expect("client");
    // The documents are public (also served without a key at /llms.txt, /ai.md, /SKILL.md): any valid key reads them.
    let (about, _) = read(&client, "interai://about")
        .await
        .expect("a usage-only key reads the documents");
    assert!(about.contains("alpha.test"));
    // Objects go through get, which needs `read`.
    let actor = reporter.caller.actor.id.as_str();
    assert_eq!(
        read_error(read(&client, &format!("interai://{actor}")).await),
        (-32600, "forbidden_scope".to_owned())
    );
    client.cancel().await.ok();

    // A missing object: -32002 for clients of protocol versions before 2026-07-28, -32602 from 2026-07-28 on.
    let reader = agent(&served.service, "reader").await;
    let missing = "interai://cnt_01j9zq3k5m8n2p4r6t8v0w2x4y";
    let initialize_era = connect_initialize(&served.mcp_url(), Some(&reader.key))
        .await
        .expect("client");
    assert_eq!(
        read_error(read(&initialize_era, missing).await),
        (-32002, "not_found".to_owned())
    );
    initialize_era.cancel().await.ok();
    let current = crate::mcp_client::connect_discover(&served.mcp_url(), &reader.key).await;
    assert_eq!(
        read_error(read(&current, missing).await),
        (-32602, "not_found".to_owned())
    );
    current.cancel().await.ok();
    served.stop().await;
}
