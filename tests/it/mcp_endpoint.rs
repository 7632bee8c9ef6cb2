//! The MCP endpoint on a real socket, driven by rmcp's client and by plain HTTP.

use interai::domain::{ActorType, ScopeSet};
use interai::service::actors::NewActor;
use interai::service::keys::NewApiKey;
use serde_json::{Value, json};

use crate::harness::ServedInstance;
use crate::mcp_client::{call, connect_discover, connect_initialize};

async fn create_agent_key(served: &ServedInstance, scopes: &str) -> (String, String) {
    let service = &served.service;
    let owner = service
        .create_actor(NewActor {
            actor_type: ActorType::User,
            display_name: "Alice".to_owned(),
            controller: None,
        })
        .await
        .expect("alice");
    let agent = service
        .create_actor(NewActor {
            actor_type: ActorType::Agent,
            display_name: "Research Agent".to_owned(),
            controller: Some(owner.id.clone()),
        })
        .await
        .expect("agent");
    let issued = service
        .create_api_key(NewApiKey {
            actor_id: agent.id.clone(),
            scopes: ScopeSet::parse_list(scopes).expect("scopes"),
            expires_at: None,
            label: None,
        })
        .await
        .expect("key");
    (agent.id.into_string(), issued.secret)
}

#[tokio::test]
async fn an_initialize_era_client_lists_tools_and_calls_whoami() {
    let served = ServedInstance::start("alpha.test").await;
    let (agent_id, key) = create_agent_key(&served, "read,publish,usage,review,rate").await;
    let client = connect_initialize(&served.mcp_url(), Some(&key))
        .await
        .expect("initialize");
    let info = client.peer_info().expect("server info");
    assert_eq!(
        info.server_info.as_ref().map(|server| server.name.as_str()),
        Some("interai")
    );
    assert!(info.instructions.as_deref().unwrap_or("").contains("untrusted"));

    let tools = client.list_tools(None).await.expect("tools/list").tools;
    let whoami_tool = tools.iter().find(|tool| tool.name == "whoami").expect("whoami listed");
    assert!(whoami_tool.output_schema.is_some());
    let annotations = whoami_tool.annotations.as_ref().expect("annotations");
    assert_eq!(annotations.read_only_hint, Some(true));
    assert_eq!(annotations.destructive_hint, Some(false));
    assert_eq!(annotations.idempotent_hint, Some(true));
    assert_eq!(annotations.open_world_hint, Some(false));

    let outcome = call(&client, "whoami", json!({})).await;
    assert!(outcome.text.contains("200 of 200 writes left"), "{}", outcome.text);
    let whoami = outcome.ok();
    assert_eq!(whoami["actor_id"], json!(agent_id));
    assert_eq!(whoami["actor_type"], "ai");
    assert_eq!(whoami["display_name"], "Research Agent");
    assert!(whoami["controller"].as_str().expect("controller").starts_with("usr_"));
    assert_eq!(whoami["verified_by_email"], false);
    assert_eq!(whoami["verified_by_domain"], false);
    assert_eq!(whoami["reputation"], 0.5);
    assert_eq!(whoami["scopes"], json!(["read", "publish", "usage", "review", "rate"]));
    assert_eq!(
        whoami["rate_limits"],
        json!({ "writes_per_hour": 200, "remaining": 200 })
    );
    let expected_keys: Vec<&str> = vec![
        "actor_id",
        "actor_type",
        "controller",
        "display_name",
        "rate_limits",
        "reputation",
        "scopes",
        "verified_by_domain",
        "verified_by_email",
    ];
    let mut keys: Vec<&str> = whoami.as_object().expect("object").keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, expected_keys);

    let refused = call(
        &client,
        "whoami",
        json!({ "actor_id": "usr_01j9zq3k5m8n2p4r6t8v0w2x4y" }),
    )
    .await;
    let error = refused.err("validation_failed");
    assert!(error["message"].as_str().unwrap_or("").contains("actor_id"));

    client.cancel().await.ok();
    let calls = served
        .service
        .recent_calls(&interai::domain::PublicId::parse(&agent_id).expect("id"), 10)
        .await
        .expect("audit");
    let tools_called: Vec<&str> = calls.iter().map(|call| call.tool.as_str()).collect();
    assert_eq!(tools_called, vec!["whoami", "whoami", "initialize"]);
    assert_eq!(calls[0].outcome, "validation_failed");
    assert_eq!(calls[1].outcome, "ok");
    assert_eq!(calls[2].client_name.as_deref(), Some("interai-tests"));
    assert_eq!(calls[2].client_version.as_deref(), Some("1.0.0"));
    assert!(
        calls.iter().all(|call| !call.request.to_string().contains("iak_")),
        "keys are never audited"
    );
    served.stop().await;
}

#[tokio::test]
async fn a_current_protocol_client_discovers_and_is_audited_with_its_name() {
    let served = ServedInstance::start("alpha.test").await;
    let client = connect_discover(&served.mcp_url(), &served.admin_key).await;
    assert_eq!(
        client.peer_info().map(|info| info.protocol_version.to_string()),
        Some("2026-07-28".to_owned())
    );
    let whoami = call(&client, "whoami", json!({})).await.ok();
    assert_eq!(whoami["actor_type"], "usr");
    assert_eq!(whoami["scopes"].as_array().map(Vec::len), Some(7));
    client.cancel().await.ok();
    let admin = interai::domain::PublicId::parse(whoami["actor_id"].as_str().expect("id")).expect("id");
    let calls = served.service.recent_calls(&admin, 1).await.expect("audit");
    assert_eq!(calls[0].tool, "whoami");
    assert_eq!(calls[0].client_name.as_deref(), Some("interai-tests"));
    served.stop().await;
}

#[tokio::test]
async fn missing_unknown_and_revoked_keys_get_401_with_a_bearer_challenge() {
    let served = ServedInstance::start("alpha.test").await;
    let error = connect_initialize(&served.mcp_url(), None).await.expect_err("no key");
    assert!(error.is_authorization_required(), "{error}");
    let error = connect_initialize(&served.mcp_url(), Some("iak_unknown"))
        .await
        .expect_err("unknown key");
    assert!(error.is_authorization_required(), "{error}");

    let (_, key) = create_agent_key(&served, "read").await;
    let client = connect_initialize(&served.mcp_url(), Some(&key))
        .await
        .expect("valid key");
    let caller = served.service.authenticate(&key).await.expect("caller");
    served.service.revoke_api_key(&caller.key_id).await.expect("revoke");
    let after_revocation = client.list_tools(None).await.expect_err("revoked mid-session");
    assert!(after_revocation.is_authorization_required(), "{after_revocation}");
    client.cancel().await.ok();

    let http = reqwest::Client::new();
    let response = http
        .post(served.mcp_url())
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }).to_string())
        .send()
        .await
        .expect("request");
    assert_eq!(response.status(), 401);
    let challenge = response
        .headers()
        .get("www-authenticate")
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    assert!(challenge.starts_with("Bearer"), "{challenge}");
    let body: Value = response.json().await.expect("json body");
    assert_eq!(body["error"]["data"]["error"]["code"], "unauthenticated");
    assert!(body["error"]["message"].is_string());
    served.stop().await;
}

#[tokio::test]
async fn health_probes_answer_and_unknown_paths_are_404_not_401() {
    let served = ServedInstance::start("alpha.test").await;
    let http = reqwest::Client::new();
    let health = http
        .get(format!("{}/healthz", served.base_url))
        .send()
        .await
        .expect("healthz");
    assert_eq!(health.status(), 200);
    let ready = http
        .get(format!("{}/readyz", served.base_url))
        .send()
        .await
        .expect("readyz");
    assert_eq!(ready.status(), 200);
    let unknown = http
        .get(format!("{}/nothing-here", served.base_url))
        .send()
        .await
        .expect("404");
    assert_eq!(unknown.status(), 404);
    served.stop().await;
}

#[tokio::test]
async fn hosts_outside_the_allow_list_and_oversize_bodies_are_refused() {
    let served = ServedInstance::start("alpha.test").await;
    let http = reqwest::Client::new();
    let request = |body: String| {
        http.post(served.mcp_url())
            .header("authorization", format!("Bearer {}", served.admin_key))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body)
    };
    let list = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }).to_string();
    let foreign_host = request(list.clone())
        .header("host", "evil.example")
        .send()
        .await
        .expect("request");
    assert_eq!(foreign_host.status(), 403);
    let foreign_origin = request(list.clone())
        .header("origin", "https://evil.example")
        .send()
        .await
        .expect("request");
    assert_eq!(foreign_origin.status(), 403);
    let realm_host = request(list)
        .header("host", "alpha.test")
        .send()
        .await
        .expect("request");
    assert_eq!(realm_host.status(), 200);
    let oversize = json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": { "name": "whoami", "arguments": { "padding": "x".repeat(2 * 1024 * 1024) } }
    });
    let too_large = request(oversize.to_string()).send().await.expect("request");
    assert_eq!(too_large.status(), 413);
    served.stop().await;
}
