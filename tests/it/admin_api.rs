//! The admin JSON API as an operator's dashboard uses it: actors, API keys, the audit log, content, key rotation and
//! the instance overview, every error in the spec's form; `interai admin … --json` printing the same answers; and
//! every route documented in docs/admin-api.md.

use std::time::Duration;

use chrono::{DateTime, TimeDelta};
use http::Method;
use interai::service::audit::CallAudit;
use interai::service::{ErrorCode, ServiceError};
use serde_json::{Value, json};
use tower::ServiceExt;

use crate::fixtures::{Agent, agent, agent_of_with_scopes, controller, publish_procedure};
use crate::harness::{ServedInstance, test_epoch};

/// A request to a served instance's admin API with `key`, answered as (status, JSON body).
async fn api(served: &ServedInstance, key: &str, method: Method, path: &str, body: Option<Value>) -> (u16, Value) {
    let client = reqwest::Client::new();
    let mut request = client
        .request(method, format!("{}{path}", served.base_url))
        .bearer_auth(key);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.expect("the admin API answers");
    let status = response.status().as_u16();
    let text = response.text().await.expect("a body");
    (
        status,
        serde_json::from_str(&text).unwrap_or_else(|_| panic!("{path} answered {status} with non-JSON: {text:?}")),
    )
}

async fn get(served: &ServedInstance, path: &str) -> (u16, Value) {
    api(served, &served.admin_key, Method::GET, path, None).await
}

async fn post(served: &ServedInstance, path: &str, body: Value) -> (u16, Value) {
    api(served, &served.admin_key, Method::POST, path, Some(body)).await
}

/// Asserts an answer is the admin API's error form with this status and code, and returns its details.
#[track_caller]
fn assert_error(answer: &(u16, Value), status: u16, code: &str) -> Value {
    let (actual, body) = answer;
    assert_eq!(
        (*actual, body["error"]["code"].as_str()),
        (status, Some(code)),
        "{body}"
    );
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|message| !message.is_empty()),
        "{body}"
    );
    assert!(body["error"]["details"].is_object(), "{body}");
    body["error"]["details"].clone()
}

#[tokio::test]
async fn actors_are_listed_created_and_shown_and_every_mistake_is_named() {
    let served = ServedInstance::start("admin.test").await;
    let (status, owner) = post(
        &served,
        "/admin/actors",
        json!({ "type": "usr", "display_name": "Alice" }),
    )
    .await;
    assert_eq!(status, 201, "{owner}");
    let owner_id = owner["id"].as_str().expect("id").to_owned();
    assert!(owner_id.starts_with("usr_"), "{owner}");
    assert_eq!(owner["root_controller"], owner_id.as_str(), "a human is its own root");
    let (status, agent) = post(
        &served,
        "/admin/actors",
        json!({ "type": "ai", "display_name": "Research Agent", "controller": owner_id }),
    )
    .await;
    assert_eq!(status, 201, "{agent}");
    assert_eq!(
        (
            agent["type"].as_str(),
            agent["controller"].as_str(),
            agent["origin"].as_str()
        ),
        (Some("ai"), Some(owner_id.as_str()), Some("admin.test"))
    );

    let (status, listed) = get(&served, "/admin/actors").await;
    assert_eq!(status, 200);
    let names: Vec<&str> = listed["actors"]
        .as_array()
        .expect("actors")
        .iter()
        .filter_map(|actor| actor["display_name"].as_str())
        .collect();
    assert!(
        names.contains(&"Alice") && names.contains(&"Research Agent"),
        "{listed}"
    );
    let agent_id = agent["id"].as_str().expect("id");
    let (status, shown) = get(&served, &format!("/admin/actors/{agent_id}")).await;
    assert_eq!((status, &shown), (200, &agent));

    let details = assert_error(
        &post(&served, "/admin/actors", json!({ "type": "bot", "display_name": "X" })).await,
        400,
        "validation_failed",
    );
    assert_eq!(details["field"], "type");
    let details = assert_error(
        &post(
            &served,
            "/admin/actors",
            json!({ "type": "ai", "display_name": "Orphan" }),
        )
        .await,
        400,
        "validation_failed",
    );
    assert_eq!(details["field"], "controller");
    assert_error(
        &post(
            &served,
            "/admin/actors",
            json!({ "type": "ai", "display_name": "X", "controller": "usr_01jd0000000000000000000000" }),
        )
        .await,
        404,
        "not_found",
    );
    assert_error(
        &post(
            &served,
            "/admin/actors",
            json!({ "type": "usr", "display_name": "   " }),
        )
        .await,
        400,
        "validation_failed",
    );
    assert_error(
        &get(&served, "/admin/actors/usr_01jd0000000000000000000000").await,
        404,
        "not_found",
    );
    assert_error(&get(&served, "/admin/actors/not-an-id").await, 400, "validation_failed");
    assert_error(
        &get(&served, "/admin/actors/cnt_01jd0000000000000000000000").await,
        400,
        "invalid_target",
    );

    assert_error(
        &api(&served, "", Method::GET, "/admin/actors", None).await,
        401,
        "unauthenticated",
    );
    // The admin API's 401 carries a Bearer challenge, naming an error only when a key was sent (RFC 6750 §3.1).
    let client = reqwest::Client::new();
    for (authorization, challenge) in [
        (None, "Bearer"),
        (Some("Bearer iak_wrong"), "Bearer error=\"invalid_token\""),
    ] {
        let mut request = client.get(format!("{}/admin/actors", served.base_url));
        if let Some(authorization) = authorization {
            request = request.header("authorization", authorization);
        }
        let response = request.send().await.expect("request");
        assert_eq!(response.status(), 401);
        assert_eq!(
            response
                .headers()
                .get("www-authenticate")
                .and_then(|value| value.to_str().ok()),
            Some(challenge)
        );
    }
    let reader = crate::fixtures::agent_of_with_scopes(
        &served.service,
        &interai::domain::PublicId::parse(&owner_id).expect("id"),
        "Reader",
        "read",
    )
    .await;
    assert_error(
        &api(&served, &reader.key, Method::GET, "/admin/actors", None).await,
        403,
        "forbidden_scope",
    );
    served.stop().await;
}

/// A raw `tools/list` on `/mcp` with `key`: its status.
async fn mcp_status(served: &ServedInstance, key: &str) -> (u16, Value) {
    let response = reqwest::Client::new()
        .post(served.mcp_url())
        .bearer_auth(key)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }))
        .send()
        .await
        .expect("/mcp answers");
    let status = response.status().as_u16();
    let body = response.text().await.expect("body");
    (status, serde_json::from_str(&body).unwrap_or(Value::String(body)))
}

#[tokio::test]
async fn a_key_secret_is_shown_once_and_a_revoked_key_no_longer_opens_mcp() {
    let served = ServedInstance::start("admin.test").await;
    let owner = controller(&served.service, "Alice").await;
    let (_, agent) = post(
        &served,
        "/admin/actors",
        json!({ "type": "ai", "display_name": "Agent", "controller": owner.as_str() }),
    )
    .await;
    let agent_id = agent["id"].as_str().expect("id").to_owned();
    let keys_path = format!("/admin/actors/{agent_id}/keys");

    let (status, issued) = post(
        &served,
        &keys_path,
        json!({ "scopes": ["read", "usage"], "label": "ci", "expires_at": "2027-01-31T00:00:00Z" }),
    )
    .await;
    assert_eq!(status, 201, "{issued}");
    let secret = issued["secret"].as_str().expect("the secret, this once").to_owned();
    assert!(secret.starts_with("iak_"), "{issued}");
    assert_eq!(
        (
            issued["scopes"].clone(),
            issued["state"].as_str(),
            issued["label"].as_str()
        ),
        (json!(["read", "usage"]), Some("active"), Some("ci"))
    );
    let (status, defaults) = post(&served, &keys_path, json!({})).await;
    assert_eq!(status, 201, "{defaults}");
    assert_eq!(
        defaults["scopes"],
        json!(["read", "publish", "usage", "review", "rate"]),
        "without scopes, an agent's usual ones, as the CLI gives"
    );

    let (status, listed) = get(&served, &keys_path).await;
    assert_eq!(status, 200);
    assert_eq!(listed["keys"].as_array().map(Vec::len), Some(2), "{listed}");
    let text = listed.to_string();
    assert!(
        !text.contains(&secret) && !text.contains("secret"),
        "a listing never shows a secret: {listed}"
    );

    assert_eq!(mcp_status(&served, &secret).await.0, 200, "the new key opens /mcp");
    let key_id = issued["id"].as_str().expect("id");
    let (status, revoked) = post(&served, &format!("/admin/keys/{key_id}/revoke"), json!({})).await;
    assert_eq!((status, revoked["state"].as_str()), (200, Some("revoked")), "{revoked}");
    assert!(revoked["revoked_at"].is_string());
    let (status, body) = mcp_status(&served, &secret).await;
    assert_eq!(status, 401, "a revoked key is refused on /mcp: {body}");
    let (_, listed) = get(&served, &keys_path).await;
    assert_eq!(listed["keys"][0]["state"], "revoked", "{listed}");

    assert_error(
        &post(&served, "/admin/keys/key_01jd0000000000000000000000/revoke", json!({})).await,
        404,
        "not_found",
    );
    assert_error(
        &post(&served, "/admin/keys/nonsense/revoke", json!({})).await,
        400,
        "validation_failed",
    );
    assert_error(
        &post(
            &served,
            "/admin/actors/ai_01jd0000000000000000000000/keys",
            json!({ "scopes": ["read"] }),
        )
        .await,
        404,
        "not_found",
    );
    assert_error(
        &get(&served, "/admin/actors/ai_01jd0000000000000000000000/keys").await,
        404,
        "not_found",
    );
    let details = assert_error(
        &post(&served, &keys_path, json!({ "scopes": ["read", "root"] })).await,
        400,
        "validation_failed",
    );
    assert_eq!(details["field"], "scopes");
    let details = assert_error(
        &post(&served, &keys_path, json!({ "scopes": [] })).await,
        400,
        "validation_failed",
    );
    assert_eq!(details["field"], "scopes");
    let details = assert_error(
        &post(&served, &keys_path, json!({ "expires_at": "next tuesday" })).await,
        400,
        "validation_failed",
    );
    assert_eq!(details["field"], "expires_at");
    assert_error(
        &post(&served, &keys_path, json!({ "expires_at": "2020-01-01T00:00:00Z" })).await,
        400,
        "validation_failed",
    );
    served.stop().await;
}

/// Records one audited call of `agent` at the clock's time.
async fn audited(served: &ServedInstance, agent: &Agent, tool: &str, failure: Option<ErrorCode>) {
    let error = failure.map(|code| ServiceError::new(code, "refused"));
    served
        .service
        .record_call(CallAudit {
            caller: &agent.caller,
            tool,
            is_write: tool == "publish",
            request: &json!({ "query": "anything" }),
            outcome: match &error {
                None => Ok("1 result".to_owned()),
                Some(error) => Err(error),
            },
            duration: Duration::from_millis(3),
            client_name: Some("dashboard-test".to_owned()),
            client_version: None,
        })
        .await
        .expect("recorded");
}

/// What identifies a record in these tests: who, what, how it ended, when.
type RecordKey = (String, String, String, String);

/// A record the audit test makes: at which minute, by whom, of which tool, failing with which code.
type Planned<'a> = (i64, &'a Agent, &'a str, Option<ErrorCode>);

fn record_keys(answer: &Value) -> Vec<RecordKey> {
    answer["records"]
        .as_array()
        .unwrap_or_else(|| panic!("records: {answer}"))
        .iter()
        .map(|record| {
            let text = |name: &str| record[name].as_str().unwrap_or_default().to_owned();
            let at = DateTime::parse_from_rfc3339(&text("created_at")).expect("a time");
            (text("actor"), text("tool"), text("outcome"), at.to_utc().to_rfc3339())
        })
        .collect()
}

/// Reads every page of `path` (a query string already started) with `limit` records a page.
async fn every_page(served: &ServedInstance, path: &str, limit: u32, items: &str) -> (Vec<Value>, usize) {
    let mut collected = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let separator = if path.contains('?') { '&' } else { '?' };
        let mut page_path = format!("{path}{separator}limit={limit}");
        if let Some(cursor) = &cursor {
            page_path.push_str(&format!("&cursor={cursor}"));
        }
        let (status, page) = get(served, &page_path).await;
        assert_eq!(status, 200, "{page}");
        let page_items = page[items].as_array().expect("items").clone();
        assert!(page_items.len() <= limit as usize);
        collected.extend(page_items);
        pages += 1;
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return (collected, pages),
        }
        assert!(pages < 50, "paging does not end");
    }
}

#[tokio::test]
async fn the_audit_log_filters_by_actor_tool_outcome_and_time_and_pages_through_exactly_the_matches() {
    let served = ServedInstance::start("admin.test").await;
    let alice = agent(&served.service, "alice").await;
    let bob = agent(&served.service, "bob").await;
    let minute = |minutes: i64| test_epoch() + TimeDelta::minutes(minutes);
    let plan: [Planned; 7] = [
        (0, &alice, "search", None),
        (1, &alice, "publish", Some(ErrorCode::ValidationFailed)),
        (2, &bob, "search", None),
        (3, &bob, "get", Some(ErrorCode::NotFound)),
        (4, &alice, "search", None),
        // Two records at the same instant: a page boundary between them must neither skip nor repeat one.
        (5, &alice, "whoami", None),
        (5, &bob, "whoami", None),
    ];
    for (at, agent, tool, failure) in &plan {
        served.clock.set(minute(*at));
        audited(&served, agent, tool, *failure).await;
    }
    let expected = |select: &dyn Fn(&Planned) -> bool| {
        let mut keys: Vec<RecordKey> = plan
            .iter()
            .filter(|planned| select(planned))
            .map(|(at, agent, tool, failure)| {
                (
                    agent.caller.actor.id.as_str().to_owned(),
                    (*tool).to_owned(),
                    failure.map_or("ok", ErrorCode::as_str).to_owned(),
                    minute(*at).to_rfc3339(),
                )
            })
            .collect();
        keys.reverse();
        keys
    };

    let (status, all) = get(&served, "/admin/audit").await;
    assert_eq!(status, 200, "{all}");
    let mut all_keys = record_keys(&all);
    // Records of one instant come in ID order (descending); compare them as a set.
    all_keys[..2].sort();
    let mut expected_all = expected(&|_| true);
    expected_all[..2].sort();
    assert_eq!(all_keys, expected_all, "newest first");
    assert_eq!(all["next_cursor"], Value::Null);
    let first = &all["records"][all["records"].as_array().map_or(0, Vec::len) - 1];
    assert_eq!(
        (
            first["client_name"].as_str(),
            first["duration_micros"].as_i64(),
            first["request"].clone()
        ),
        (Some("dashboard-test"), Some(3000), json!({ "query": "anything" }))
    );

    let alice_id = alice.caller.actor.id.as_str();
    let (_, by_actor) = get(&served, &format!("/admin/audit?actor={alice_id}")).await;
    let mut keys = record_keys(&by_actor);
    keys.sort();
    let mut wanted = expected(&|&(_, agent, _, _)| agent.caller.actor.id == alice.caller.actor.id);
    wanted.sort();
    assert_eq!(keys, wanted);
    let (_, by_tool) = get(&served, "/admin/audit?tool=search").await;
    assert_eq!(record_keys(&by_tool), expected(&|&(_, _, tool, _)| tool == "search"));
    let (_, failures) = get(&served, "/admin/audit?outcome=not_found").await;
    assert_eq!(
        record_keys(&failures),
        expected(&|&(_, _, _, failure)| failure == Some(ErrorCode::NotFound))
    );
    let (_, window) = get(
        &served,
        "/admin/audit?from=2026-11-01T09:01:00Z&until=2026-11-01T09:03:00Z",
    )
    .await;
    assert_eq!(
        record_keys(&window),
        expected(&|&(at, _, _, _)| (1..3).contains(&at)),
        "from is inclusive, until exclusive"
    );
    let (_, combined) = get(
        &served,
        &format!("/admin/audit?actor={alice_id}&tool=search&outcome=ok&from=2026-11-01T09:01:00Z"),
    )
    .await;
    assert_eq!(
        record_keys(&combined),
        expected(&|&(at, agent, tool, _)| at >= 1
            && tool == "search"
            && agent.caller.actor.id == alice.caller.actor.id)
    );

    for limit in [1, 2, 3] {
        let (records, pages) = every_page(&served, "/admin/audit", limit, "records").await;
        let paged = record_keys(&json!({ "records": records }));
        let mut paged_sorted_head = paged.clone();
        paged_sorted_head[..2].sort();
        assert_eq!(
            paged_sorted_head, expected_all,
            "pages of {limit} hold every record once"
        );
        assert_eq!(pages, 7_usize.div_ceil(limit as usize), "pages of {limit}");
    }
    let (records, pages) = every_page(&served, "/admin/audit?tool=search", 1, "records").await;
    assert_eq!(
        (record_keys(&json!({ "records": records })), pages),
        (expected(&|&(_, _, tool, _)| tool == "search"), 3),
        "paging keeps the filter"
    );

    for (query, field) in [
        ("outcome=refused", "outcome"),
        ("from=yesterday", "from"),
        ("from=2026-11-01T10:00:00Z&until=2026-11-01T09:00:00Z", "until"),
        ("limit=0", "limit"),
        ("limit=many", "limit"),
        ("limit=501", "limit"),
        ("cursor=not-a-cursor", "cursor"),
        ("actor=someone", "actor"),
        ("actr=usr_01jd0000000000000000000000", "query"),
    ] {
        let details = assert_error(
            &get(&served, &format!("/admin/audit?{query}")).await,
            400,
            "validation_failed",
        );
        assert_eq!(details["field"], field, "{query}");
    }
    assert_error(
        &get(&served, "/admin/audit?actor=usr_01jd0000000000000000000000").await,
        404,
        "not_found",
    );
    served.stop().await;
}

#[tokio::test]
async fn content_is_listed_by_space_origin_and_status_and_paged() {
    let served = ServedInstance::start("admin.test").await;
    let author = agent(&served.service, "author").await;
    let admin = served.service.realm_admin().await.expect("admin");
    let runbooks = served
        .service
        .create_space(
            &admin,
            interai::service::spaces::NewSpace {
                name: "runbooks".to_owned(),
                description: None,
                visibility: interai::domain::knowledge::SpaceVisibility::Local,
            },
        )
        .await
        .expect("space");
    let mut ids = Vec::new();
    for (minute, title, space) in [
        (0, "restart the scheduler", Some(runbooks.id.as_str())),
        (1, "rotate the logs", None),
        (2, "drain a node", Some(runbooks.id.as_str())),
    ] {
        served.clock.set(test_epoch() + TimeDelta::minutes(minute));
        let outcome = served
            .service
            .publish(
                &author.caller,
                &crate::fixtures::metadata("publish"),
                interai::service::content::PublishRequest {
                    content_type: "procedure".to_owned(),
                    title: title.to_owned(),
                    summary: format!("How to {title}."),
                    body_markdown: format!("# {title}\n\n1. Do it.\n"),
                    space: space.map(str::to_owned),
                    ..Default::default()
                },
            )
            .await
            .expect("published");
        ids.push(outcome.id);
    }
    let (status, deleted) = api(
        &served,
        &served.admin_key,
        Method::DELETE,
        &format!("/admin/content/{}", ids[2]),
        Some(json!({ "reason": "obsolete" })),
    )
    .await;
    assert_eq!(status, 200, "{deleted}");

    let listed_ids = |answer: &Value| -> Vec<String> {
        answer["items"]
            .as_array()
            .unwrap_or_else(|| panic!("items: {answer}"))
            .iter()
            .map(|item| item["id"].as_str().expect("id").to_owned())
            .collect()
    };
    let (status, all) = get(&served, "/admin/content").await;
    assert_eq!(status, 200, "{all}");
    assert_eq!(listed_ids(&all), [ids[2].as_str(), &ids[1], &ids[0]], "newest first");
    let newest = &all["items"][0];
    assert_eq!(
        (
            newest["status"].as_str(),
            newest["title"].as_str(),
            newest["space"].as_str()
        ),
        (Some("deleted"), Some("drain a node"), Some(runbooks.id.as_str()))
    );
    assert_eq!(all["items"][1]["status"], "unverified", "{all}");

    let (_, in_space) = get(&served, &format!("/admin/content?space={}", runbooks.id)).await;
    assert_eq!(listed_ids(&in_space), [ids[2].as_str(), &ids[0]]);
    let (_, gone) = get(&served, "/admin/content?status=deleted").await;
    assert_eq!(listed_ids(&gone), [ids[2].as_str()]);
    let (_, live) = get(
        &served,
        &format!("/admin/content?status=unverified&space={}", runbooks.id),
    )
    .await;
    assert_eq!(
        listed_ids(&live),
        [ids[0].as_str()],
        "a deleted item has no trust status"
    );
    let (_, own) = get(&served, "/admin/content?origin=admin.test").await;
    assert_eq!(listed_ids(&own).len(), 3);
    let (_, foreign) = get(&served, "/admin/content?origin=beta.test").await;
    assert_eq!(listed_ids(&foreign).len(), 0);
    let (items, pages) = every_page(&served, "/admin/content", 1, "items").await;
    assert_eq!((listed_ids(&json!({ "items": items })), pages), (listed_ids(&all), 3));

    assert_error(
        &get(&served, "/admin/content?space=spc_01jd0000000000000000000000").await,
        404,
        "not_found",
    );
    assert_error(
        &get(&served, "/admin/content?space=cnt_01jd0000000000000000000000").await,
        400,
        "invalid_target",
    );
    for (query, field) in [
        ("status=lost", "status"),
        ("space=runbooks!", "space"),
        ("limit=0", "limit"),
        ("cursor=%%%", "cursor"),
        ("colour=red", "query"),
    ] {
        let details = assert_error(
            &get(&served, &format!("/admin/content?{query}")).await,
            400,
            "validation_failed",
        );
        assert_eq!(details["field"], field, "{query}");
    }
    served.stop().await;
}

#[tokio::test]
async fn rotating_the_key_through_the_admin_api_changes_the_published_key() {
    let served = ServedInstance::start("admin.test").await;
    let (status, before) = get(&served, "/admin/federation/identity").await;
    assert_eq!(status, 200, "{before}");
    let signing = |identity: &Value| -> String {
        identity["keys"]
            .as_array()
            .expect("keys")
            .iter()
            .find(|key| key["signing"] == true)
            .and_then(|key| key["key_id"].as_str())
            .expect("a signing key")
            .to_owned()
    };
    let old_key = signing(&before);
    let (status, after) = post(&served, "/admin/federation/identity/rotate", json!({})).await;
    assert_eq!(status, 200, "{after}");
    let new_key = signing(&after);
    assert_ne!(new_key, old_key, "{after}");
    assert_eq!(
        after["keys"].as_array().map(Vec::len),
        Some(2),
        "the old key stays published: {after}"
    );
    let actor: Value = reqwest::Client::new()
        .get(format!("{}/actor", served.base_url))
        .header("accept", "application/activity+json")
        .send()
        .await
        .expect("actor")
        .json()
        .await
        .expect("json");
    assert_eq!(
        actor["publicKey"]["id"].as_str(),
        Some(new_key.as_str()),
        "the actor document signs with the new key: {actor}"
    );
    let reader_owner = controller(&served.service, "Reader owner").await;
    let reader = agent_of_with_scopes(&served.service, &reader_owner, "Reader", "read").await;
    assert_error(
        &api(
            &served,
            &reader.key,
            Method::POST,
            "/admin/federation/identity/rotate",
            Some(json!({})),
        )
        .await,
        403,
        "forbidden_scope",
    );
    served.stop().await;
}

#[tokio::test]
async fn the_overview_counts_what_the_instance_holds_and_shows_each_loop_failing_and_recovering() {
    let served = ServedInstance::start("admin.test").await;
    let author = agent(&served.service, "author").await;
    let reviewer = agent(&served.service, "reviewer").await;
    let published = publish_procedure(
        &served.service,
        &author,
        "restart the scheduler",
        &["the scheduler restarts in under a minute"],
    )
    .await;
    crate::fixtures::use_it(&served.service, &reviewer, &published.id, "success", true).await;

    let (status, overview) = get(&served, "/admin/instance").await;
    assert_eq!(status, 200, "{overview}");
    assert_eq!(
        (
            overview["realm"].as_str(),
            overview["version"].as_str(),
            overview["backend"]
                .as_str()
                .is_some_and(|backend| ["sqlite", "postgresql"].contains(&backend))
        ),
        (Some("admin.test"), Some(env!("CARGO_PKG_VERSION")), true),
        "{overview}"
    );
    // The organization and admin of the bootstrap, and each agent with its controller.
    assert_eq!(
        overview["counts"],
        json!({ "actors": 6, "active_api_keys": 3, "content": 1, "deleted_content": 0, "claims": 1,
                "evidence": 1, "peers": 0 }),
        "{overview}"
    );
    assert_eq!(overview["peers_by_state"]["active"], 0);
    let loop_named = |overview: &Value, name: &str| -> Value {
        overview["loops"]
            .as_array()
            .expect("loops")
            .iter()
            .find(|record| record["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no loop {name}: {overview}"))
    };
    assert_eq!(loop_named(&overview, "audit_retention")["state"], "running");

    // A federation pass that cannot read its delivery queue fails; the overview says so, with the error, until a
    // pass succeeds again. The loop passes when the clock reaches its next poll.
    let federation_state = |expected: &'static str| {
        let served = &served;
        async move {
            for _ in 0..500 {
                served.clock.advance(TimeDelta::seconds(6));
                let (_, overview) = get(served, "/admin/instance").await;
                let record = loop_named(&overview, "federation");
                if record["state"] == expected {
                    return record;
                }
                tokio::task::yield_now().await;
            }
            panic!("the federation loop never read {expected}");
        }
    };
    let running = federation_state("running").await;
    assert!(
        running["passes"].as_u64().is_some_and(|passes| passes >= 1),
        "{running}"
    );
    assert_eq!(running["interval_seconds"], 5);
    served.break_table("federation_deliveries").await;
    let failing = federation_state("failing").await;
    assert!(
        failing["last_error"]
            .as_str()
            .is_some_and(|error| error.starts_with("internal_error")),
        "{failing}"
    );
    assert!(failing["consecutive_failures"].as_u64().is_some_and(|count| count >= 1));
    served.restore_table("federation_deliveries").await;
    let recovered = federation_state("running").await;
    assert_eq!(recovered["consecutive_failures"], 0, "{recovered}");
    assert!(
        recovered["last_error"].is_string(),
        "the last failure stays visible: {recovered}"
    );
    served.stop().await;
}

/// The instance overview of an instance whose loops do not run here says so rather than reporting them healthy.
#[tokio::test]
async fn the_overview_of_an_instance_that_does_not_serve_shows_no_loop_running() {
    let test_instance = crate::harness::TestInstance::start("admin.test").await;
    let request = http::Request::builder()
        .uri("/admin/instance")
        .header("authorization", format!("Bearer {}", test_instance.admin_key))
        .body(axum::body::Body::empty())
        .expect("request");
    let response = test_instance.instance.router().oneshot(request).await.expect("answer");
    assert_eq!(response.status(), 200);
    let body: Value = serde_json::from_slice(&axum::body::to_bytes(response.into_body(), 1 << 20).await.expect("body"))
        .expect("json");
    let states: Vec<(&str, &str)> = body["loops"]
        .as_array()
        .expect("loops")
        .iter()
        .map(|record| {
            (
                record["name"].as_str().unwrap_or_default(),
                record["state"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        states,
        [
            ("federation", "not_running"),
            ("audit_retention", "not_running"),
            ("backups", "not_running"),
            ("activity_history", "not_running")
        ]
    );
}

/// `interai admin …` on `node`'s database, as its operator would run it there.
pub(crate) fn command_line(node: &crate::support::network::Node, arguments: &[&str]) -> Value {
    let config = node.instance.config();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_interai"))
        .args(arguments)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("INTERAI_DATA_DIR", &config.data_dir)
        .env("INTERAI_DATABASE_URL", &config.database_url)
        .env("INTERAI_REALM", &config.realm)
        .env("INTERAI_PUBLIC_URL", node.url())
        .env("INTERAI_LOG", "warn")
        .output()
        .expect("the interai binary runs");
    assert!(
        output.status.success(),
        "{arguments:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap_or_else(|_| {
        panic!(
            "{arguments:?} printed no JSON: {}",
            String::from_utf8_lossy(&output.stdout)
        )
    })
}

#[tokio::test]
async fn every_list_and_show_command_prints_with_json_what_the_admin_api_answers() {
    use crate::support::network::Network;
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    crate::federation::peered(&network, "alpha.test", "beta.test").await;
    let alpha = network.node("alpha.test");
    let service = alpha.service();
    let owner = controller(service, "Operator").await;
    let admin = agent_of_with_scopes(service, &owner, "Dashboard", "admin").await;
    let author = agent(service, "author").await;
    let published = publish_procedure(service, &author, "restart the scheduler", &[]).await;
    publish_procedure(service, &author, "drain a node", &[]).await;
    service
        .delete_content(&owner, &published.id, "obsolete")
        .await
        .expect("deleted");
    audited_on(service, &author, "search", None).await;
    audited_on(service, &author, "get", Some(ErrorCode::NotFound)).await;
    // Which keys are still published depends on the time, and the command line reads the system's clock, not the
    // test's: the identity is compared before a rotation.
    compare_json_answers(
        alpha,
        &admin,
        vec![(vec!["federation", "identity"], "/admin/federation/identity".to_owned())],
    )
    .await;
    // A peer that refuses the announcement of a new key for good leaves a dead letter.
    network.switchboard.refuse("beta.test", 403, r#"{"error":"forbidden"}"#);
    alpha.federation().rotate_instance_key().await.expect("rotated");
    network.settle().await;

    let author_id = author.caller.actor.id.as_str();
    let pairs: Vec<(Vec<&str>, String)> = vec![
        (vec!["actor", "list"], "/admin/actors".to_owned()),
        (vec!["actor", "show", author_id], format!("/admin/actors/{author_id}")),
        (
            vec!["key", "list", "--actor", author_id],
            format!("/admin/actors/{author_id}/keys"),
        ),
        (vec!["audit", "list"], "/admin/audit".to_owned()),
        (
            vec!["audit", "list", "--outcome", "ok", "--limit", "1"],
            "/admin/audit?outcome=ok&limit=1".to_owned(),
        ),
        (vec!["content", "list"], "/admin/content".to_owned()),
        (
            vec!["content", "list", "--status", "deleted", "--origin", "alpha.test"],
            "/admin/content?status=deleted&origin=alpha.test".to_owned(),
        ),
        (vec!["peer", "list"], "/admin/peers".to_owned()),
        (vec!["peer", "show", "beta.test"], "/admin/peers/beta.test".to_owned()),
        (
            vec!["federation", "dead-letters"],
            "/admin/federation/dead-letters".to_owned(),
        ),
        (vec!["space", "list"], "/admin/spaces".to_owned()),
    ];
    compare_json_answers(alpha, &admin, pairs).await;
}

/// Runs each command with `--json` on `node`'s database and asks the admin API for its path with `admin`'s key: the
/// two must be the same JSON, and not an empty listing.
async fn compare_json_answers(node: &crate::support::network::Node, admin: &Agent, pairs: Vec<(Vec<&str>, String)>) {
    let alpha = node;
    for (command, path) in pairs {
        let request = http::Request::builder()
            .uri(&path)
            .header("host", &alpha.realm)
            .header("authorization", format!("Bearer {}", admin.key))
            .body(Vec::new())
            .expect("request");
        let (status, answer) = crate::federation::send(alpha, request).await;
        assert_eq!(status, 200, "{path}: {answer}");
        let mut arguments = vec!["admin"];
        arguments.extend(&command);
        arguments.push("--json");
        let printed = command_line(alpha, &arguments);
        assert_eq!(
            printed,
            answer,
            "interai {} --json and GET {path} differ",
            command.join(" ")
        );
        let items = [
            "actors",
            "keys",
            "records",
            "items",
            "peers",
            "keys",
            "dead_letters",
            "spaces",
        ];
        let listed = items
            .iter()
            .find_map(|name| answer[*name].as_array())
            .map_or(1, Vec::len);
        assert!(listed > 0, "{path} lists something to compare: {answer}");
    }
}

/// Records one audited call of `agent` on `service`.
async fn audited_on(service: &interai::service::Service, agent: &Agent, tool: &str, failure: Option<ErrorCode>) {
    let error = failure.map(|code| ServiceError::new(code, "refused"));
    service
        .record_call(CallAudit {
            caller: &agent.caller,
            tool,
            is_write: false,
            request: &json!({ "target": "cnt_01jd0000000000000000000000" }),
            outcome: match &error {
                None => Ok("1 result".to_owned()),
                Some(error) => Err(error),
            },
            duration: Duration::from_millis(2),
            client_name: None,
            client_version: None,
        })
        .await
        .expect("recorded");
}

/// Every `(method, path)` the admin API registers, read from its source: each `.route("path", …)` with the methods
/// its handlers are routed for.
fn registered_admin_routes() -> Vec<(String, String)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/http");
    let mut files = vec![root.join("admin.rs")];
    let mut submodules: Vec<_> = std::fs::read_dir(root.join("admin"))
        .expect("src/http/admin/")
        .map(|entry| entry.expect("entry").path())
        .collect();
    submodules.sort();
    files.extend(submodules);
    let mut routes = Vec::new();
    for file in files {
        let source = std::fs::read_to_string(&file).expect("readable");
        for piece in source.split(".route(\"").skip(1) {
            let (path, rest) = piece.split_once('"').expect("a quoted path");
            // The handlers run up to the next route, merge or layer.
            let end = [".route(", ".merge(", ".route_layer("]
                .iter()
                .filter_map(|stop| rest.find(stop))
                .min()
                .unwrap_or(rest.len());
            let handlers = &rest[..end];
            let mut found = false;
            for (token, method) in [("get(", "GET"), ("post(", "POST"), ("delete(", "DELETE")] {
                let preceded_well = handlers.match_indices(token).any(|(at, _)| {
                    at == 0
                        || !handlers[..at].ends_with(|character: char| character.is_alphanumeric() || character == '_')
                });
                if preceded_well {
                    routes.push((method.to_owned(), path.to_owned()));
                    found = true;
                }
            }
            assert!(found, "no method found for {path} in {}", file.display());
        }
    }
    routes
}

#[test]
fn every_admin_route_is_documented_in_docs_admin_api_md() {
    let documentation =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/admin-api.md"))
            .expect("docs/admin-api.md");
    let routes = registered_admin_routes();
    assert!(routes.len() >= 25, "the admin routes were read: {routes:?}");
    let missing: Vec<String> = routes
        .iter()
        .map(|(method, path)| format!("### `{method} {path}`"))
        .filter(|heading| !documentation.contains(heading.as_str()))
        .collect();
    assert!(missing.is_empty(), "docs/admin-api.md has no section for: {missing:?}");
    let examples = documentation.matches("```http").count();
    assert!(
        examples > routes.len(),
        "an example request for every route ({examples} for {} routes)",
        routes.len()
    );
}

/// The names of the files in a backup directory, sorted (none when it does not exist yet).
fn backup_files(directory: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(directory)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter_map(|entry| entry.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[tokio::test]
async fn scheduled_backups_keep_the_newest_and_the_overview_and_metrics_show_the_last() {
    let directory = tempfile::tempdir().expect("backup directory");
    let backups = directory.path().join("backups");
    let served = {
        let backups = backups.clone();
        ServedInstance::start_with("admin.test", move |config| {
            config.backup_interval_hours = 24;
            config.backup_keep = 2;
            config.backup_dir = backups;
        })
        .await
    };
    let files = || backup_files(&backups);
    // The loop's passes as the overview counts them; each of its backups is a pass.
    let passes_reach = |count: u64| {
        let served = &served;
        async move {
            for _ in 0..20_000 {
                let (_, overview) = get(served, "/admin/instance").await;
                let record = overview["loops"]
                    .as_array()
                    .expect("loops")
                    .iter()
                    .find(|record| record["name"] == "backups")
                    .cloned()
                    .expect("the backups loop");
                if record["passes"].as_u64() == Some(count) {
                    assert_eq!(record["state"], "running", "{record}");
                    return overview;
                }
                tokio::task::yield_now().await;
            }
            panic!("the backups loop never finished pass {count}");
        }
    };
    // None was ever made, so the first is made at start.
    let overview = passes_reach(1).await;
    assert_eq!(files().len(), 1, "{:?}", files());
    let backup = &overview["backup"];
    assert_eq!(backup["error"], Value::Null, "{overview}");
    let expected_kind = if overview["backend"] == "sqlite" {
        "database_file"
    } else {
        "archive"
    };
    assert_eq!(backup["kind"], expected_kind, "{backup}");
    assert!(backup["bytes"].as_u64().is_some_and(|bytes| bytes > 0), "{backup}");
    // A day later the next, and a day after that another: the oldest of three is deleted.
    for pass in 2..=3 {
        served.clock.advance(TimeDelta::hours(24));
        passes_reach(pass).await;
    }
    let kept = files();
    assert_eq!(kept.len(), 2, "{kept:?}");
    let (_, overview) = get(&served, "/admin/instance").await;
    assert!(
        overview["backup"]["file"]
            .as_str()
            .is_some_and(|file| file.ends_with(&kept[1])),
        "{overview}"
    );
    let metrics = reqwest::Client::new()
        .get(format!("{}/metrics", served.base_url))
        .bearer_auth(&served.admin_key)
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    let success_at = DateTime::parse_from_rfc3339(overview["backup"]["last_success_at"].as_str().expect("time"))
        .expect("RFC 3339")
        .timestamp();
    assert!(
        metrics.contains(&format!("interai_backup_last_success_timestamp_seconds {success_at}")),
        "{metrics}"
    );
    assert!(metrics.contains("interai_backup_last_failed 0"), "{metrics}");
}

#[tokio::test]
async fn a_backup_asked_for_through_the_admin_api_is_made_in_the_backup_directory_by_the_serving_process() {
    let directory = tempfile::tempdir().expect("backup directory");
    let backups = directory.path().join("asked");
    let served = {
        let backups = backups.clone();
        // No schedule: the asked-for backups are the only ones.
        ServedInstance::start_with("admin.test", move |config| {
            config.backup_keep = 2;
            config.backup_dir = backups;
        })
        .await
    };
    let files = || backup_files(&backups);
    // The overview's last backup once it names a file other than `previous` and the directory holds `kept` files (the
    // loop deletes the oldest just after recording the new one).
    let made_after = |previous: Option<String>, kept: usize| {
        let served = &served;
        let files = &files;
        async move {
            for _ in 0..20_000 {
                let (_, overview) = get(served, "/admin/instance").await;
                let file = overview["backup"]["file"].as_str().map(str::to_owned);
                if file.is_some() && file != previous && files().len() == kept {
                    return overview["backup"].clone();
                }
                tokio::task::yield_now().await;
            }
            panic!(
                "the asked-for backup was never made, or the oldest never deleted: {:?}",
                files()
            );
        }
    };

    let author = agent(&served.service, "author").await;
    assert_error(
        &api(&served, &author.key, Method::POST, "/admin/backups", None).await,
        403,
        "forbidden_scope",
    );
    let (_, overview) = get(&served, "/admin/instance").await;
    assert_eq!(overview["backup"], Value::Null, "nothing asked yet: {overview}");
    assert!(files().is_empty());

    assert_eq!(
        post(&served, "/admin/backups", json!({})).await,
        (202, json!({ "backup": "started" }))
    );
    let first = made_after(None, 1).await;
    assert_eq!(first["error"], Value::Null, "{first}");
    assert!(first["bytes"].as_u64().is_some_and(|bytes| bytes > 0), "{first}");
    let expected_kind = if overview["backend"] == "sqlite" {
        "database_file"
    } else {
        "archive"
    };
    assert_eq!(first["kind"], expected_kind, "{first}");
    let kept = files();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert!(
        first["file"].as_str().is_some_and(|file| file.ends_with(&kept[0])),
        "{first} {kept:?}"
    );

    // Two more, a minute apart: the oldest of three goes, as with scheduled backups.
    let mut previous = first["file"].as_str().map(str::to_owned);
    for _ in 0..2 {
        served.clock.advance(TimeDelta::minutes(1));
        let (status, _) = post(&served, "/admin/backups", json!({})).await;
        assert_eq!(status, 202);
        previous = made_after(previous, 2).await["file"].as_str().map(str::to_owned);
    }
    let kept = files();
    assert_eq!(kept.len(), 2, "{kept:?}");
    assert!(
        previous.as_deref().is_some_and(|file| file.ends_with(&kept[1])),
        "{kept:?}"
    );

    // Asked twice before the loop runs: the second joins the first.
    served.clock.advance(TimeDelta::minutes(1));
    assert_eq!(
        served.service.ask_for_backup(),
        interai::service::backups::BackupAsked::Started
    );
    assert_eq!(
        served.service.ask_for_backup(),
        interai::service::backups::BackupAsked::AlreadyUnderWay
    );
    let joined = made_after(previous, 2).await;
    assert_eq!(joined["error"], Value::Null, "{joined}");
    assert_eq!(
        files().len(),
        2,
        "one backup made for both requests, the oldest deleted"
    );
}

#[tokio::test]
async fn a_backup_that_cannot_be_written_shows_its_error_as_the_last_backup() {
    // The backup directory would be inside a regular file: it cannot be made, whoever runs the test.
    let not_a_directory = tempfile::NamedTempFile::new().expect("a file");
    let backups = not_a_directory.path().join("backups");
    let served = ServedInstance::start_with("admin.test", move |config| config.backup_dir = backups).await;
    assert_eq!(
        post(&served, "/admin/backups", json!({})).await,
        (202, json!({ "backup": "started" }))
    );
    for _ in 0..20_000 {
        let (_, overview) = get(&served, "/admin/instance").await;
        if let Some(error) = overview["backup"]["error"].as_str() {
            assert!(error.contains("creating the backup directory"), "{overview}");
            assert_eq!(overview["backup"]["last_success_at"], Value::Null, "{overview}");
            // The failure ended the request: the next one starts another backup.
            assert_eq!(
                served.service.ask_for_backup(),
                interai::service::backups::BackupAsked::Started
            );
            return;
        }
        tokio::task::yield_now().await;
    }
    panic!("the failed backup never showed on the overview");
}

#[tokio::test]
async fn an_admin_key_searches_and_reads_knowledge_with_the_tools_arguments_and_answers() {
    let served = ServedInstance::start("admin.test").await;
    let author = agent(&served.service, "author").await;
    let published = publish_procedure(&served.service, &author, "rotate the TLS certificates", &[]).await;

    let (status, found) = post(&served, "/admin/search", json!({ "query": "rotate TLS certificates" })).await;
    assert_eq!(status, 200, "{found}");
    let results = found["results"].as_array().expect("results");
    assert!(
        results.iter().any(|result| result["id"] == published.id.as_str()),
        "{found}"
    );
    // The same answer the search tool gives an agent for the same arguments.
    let agent_answer = served
        .service
        .search(
            &author.caller,
            &interai::mcp::wire_conversion::search_request(
                serde_json::from_value(json!({ "query": "rotate TLS certificates" })).expect("arguments"),
            )
            .expect("a request"),
        )
        .await
        .expect("the tool's search");
    assert_eq!(
        found["results"].as_array().map(Vec::len),
        Some(agent_answer.results.len())
    );

    let (status, item) = post(
        &served,
        "/admin/get",
        json!({ "id": published.id.as_str(), "include": ["explanation", "revisions"] }),
    )
    .await;
    assert_eq!(status, 200, "{item}");
    assert_eq!(item["id"], published.id.as_str(), "{item}");
    assert_eq!(item["kind"], "content", "{item}");
    assert!(item["explanation"].is_object(), "{item}");

    assert_error(
        &post(&served, "/admin/search", json!({ "query": "x", "colour": "red" })).await,
        422,
        "validation_failed",
    );
    assert_error(
        &post(&served, "/admin/get", json!({ "id": "cnt_01m00000000000000000000000" })).await,
        404,
        "not_found",
    );
    // A key an agent reads with is not enough: these are admin routes.
    let (status, _) = api(
        &served,
        &author.key,
        Method::POST,
        "/admin/search",
        Some(json!({ "query": "x" })),
    )
    .await;
    assert_eq!(status, 403);
}
