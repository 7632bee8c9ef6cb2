//! The write tools through the MCP endpoint: the spec's example inputs, retraction, and every error code.

use serde_json::{Value, json};

use crate::fixtures::{agent, agent_of_with_scopes};
use crate::harness::ServedInstance;
use crate::mcp_client::{McpClient, call, connect_initialize};

async fn client_for(served: &ServedInstance, key: &str) -> McpClient {
    connect_initialize(&served.mcp_url(), Some(key))
        .await
        .expect("client connects")
}

#[tokio::test]
async fn the_spec_example_inputs_are_accepted() {
    let served = ServedInstance::start("alpha.test").await;
    let author = agent(&served.service, "author").await;
    let user = agent(&served.service, "user").await;
    let author_client = client_for(&served, &author.key).await;
    let user_client = client_for(&served, &user.key).await;

    // An entity to refer to, created the way the publish extension allows: by name and type.
    let seed = call(
        &author_client,
        "publish",
        json!({
            "content_type": "note",
            "title": "Webhook receivers",
            "subjects": [{ "name": "Webhooks", "type": "concept" }]
        }),
    )
    .await
    .ok();
    let earlier = seed["id"].as_str().expect("id").to_owned();

    // spec §6.4, with real IDs in place of the placeholders.
    let published = call(
        &author_client,
        "publish",
        json!({
            "content_type": "procedure",
            "title": "Idempotent webhook handling",
            "summary": "Deduplicate by delivery id.",
            "body_markdown": "Store each delivery id; skip ids you have seen.",
            "structured_data": {},
            "revision_of": null,
            "change_note": null,
            "subjects": [{ "name": "Webhooks", "type": "concept" }],
            "claims": [{ "text": "Deduplicating by delivery id prevents double processing." }],
            "sources": [{ "url": "https://example.com/webhooks", "title": "Webhooks guide" }],
            "relations": [{ "type": "corrects", "target": earlier }],
            "tags": ["webhook", "idempotency"],
            "space": null,
            "language": "en",
            "idempotency_key": "spec-example-publish"
        }),
    )
    .await
    .ok();
    let content_id = published["id"].as_str().expect("id").to_owned();
    assert!(content_id.starts_with("cnt_"));
    assert!(published["revision_id"].as_str().expect("revision").starts_with("rev_"));
    assert_eq!(published["claims"][0]["matched_existing"], false);
    let claim_id = published["claims"][0]["id"].as_str().expect("claim").to_owned();

    // spec §6.6
    let usage = call(
        &user_client,
        "report_usage",
        json!({
            "target": content_id,
            "usage_type": "implementation",
            "result": "success",
            "real_world_use": true,
            "context": { "framework": "fastapi" },
            "metrics": {},
            "note": "Worked without modification.",
            "idempotency_key": "spec-example-usage"
        }),
    )
    .await
    .ok();
    assert_eq!(usage["target_revision"], published["revision_id"]);
    let usage_id = usage["id"].as_str().expect("use id").to_owned();

    // spec §6.7
    let review = call(
        &user_client,
        "review",
        json!({
            "target": claim_id,
            "verdict": "confirmed",
            "confidence": 0.9,
            "rationale_markdown": "Matches what we saw in production.",
            "sources": [{ "url": "https://example.com/postmortem" }],
            "based_on_usage": usage_id,
            "idempotency_key": "spec-example-review"
        }),
    )
    .await
    .ok();
    assert!(review["id"].as_str().expect("review id").starts_with("rvw_"));

    // spec §6.8
    let entity_id = {
        let whoami = call(&user_client, "whoami", json!({})).await.ok();
        assert_eq!(whoami["rate_limits"]["remaining"], 198, "two writes so far");
        served
            .service
            .publish(
                &author.caller,
                &crate::fixtures::metadata("publish"),
                interai::service::content::PublishRequest {
                    content_type: "note".to_owned(),
                    title: "a note about a library".to_owned(),
                    subjects: vec![interai::service::references::SubjectReference::Named {
                        name: "httpx".to_owned(),
                        entity_type: "library".to_owned(),
                        aliases: vec![],
                        description: None,
                    }],
                    ..Default::default()
                },
            )
            .await
            .expect("publish");
        served
            .service
            .find_entity_by_name("library", "httpx")
            .await
            .expect("entity")
            .id
            .into_string()
    };
    let rating = call(
        &user_client,
        "rate",
        json!({
            "target": entity_id,
            "context": { "deployment": "self-hosted", "scale": "small" },
            "dimension": "maintainability",
            "score": 88,
            "confidence": 0.85,
            "based_on_usage": usage_id,
            "rationale_markdown": "Small API surface.",
            "idempotency_key": "spec-example-rate"
        }),
    )
    .await
    .ok();
    assert!(rating["id"].as_str().expect("rating id").starts_with("rat_"));

    // spec §6.5
    let experience = call(
        &user_client,
        "submit_experience",
        json!({
            "title": "Retry strategy under production load",
            "summary": "Exponential backoff with jitter held at 500k events/day.",
            "body_markdown": "We ran it for a month.",
            "subjects": [entity_id],
            "result": "success",
            "real_world_use": true,
            "context": { "environment": "production", "scale": "500k events/day" },
            "configuration": {},
            "observations": {},
            "metrics": {},
            "used": [
                { "id": content_id, "result": "success" },
                { "id": entity_id, "result": "partial", "note": "needed a patch for timeouts" }
            ],
            "idempotency_key": "spec-example-experience"
        }),
    )
    .await
    .ok();
    assert_eq!(experience["usage_ids"].as_array().map(Vec::len), Some(2));

    // The same idempotency key and request again: the same answer.
    let replay = call(
        &user_client,
        "report_usage",
        json!({
            "target": content_id,
            "usage_type": "implementation",
            "result": "success",
            "real_world_use": true,
            "context": { "framework": "fastapi" },
            "metrics": {},
            "note": "Worked without modification.",
            "idempotency_key": "spec-example-usage"
        }),
    )
    .await
    .ok();
    assert_eq!(replay, usage);

    // Retraction through the same tool.
    let retracted = call(&user_client, "report_usage", json!({ "retract": usage_id }))
        .await
        .ok();
    assert_eq!(retracted["status"], "retracted");
    let mixed = call(
        &user_client,
        "rate",
        json!({ "retract": "rat_01j9zq3k5m8n2p4r6t8v0w2x4y", "score": 3 }),
    )
    .await;
    mixed.err("validation_failed");
    author_client.cancel().await.ok();
    user_client.cancel().await.ok();
    served.stop().await;
}

#[tokio::test]
async fn every_error_code_is_reachable_through_the_endpoint() {
    let served = ServedInstance::start("alpha.test").await;
    let author = agent(&served.service, "author").await;
    let reader = agent_of_with_scopes(&served.service, author.controller(), "reader", "read").await;
    let author_client = client_for(&served, &author.key).await;
    let reader_client = client_for(&served, &reader.key).await;
    let published = call(
        &author_client,
        "publish",
        json!({ "content_type": "note", "title": "t", "idempotency_key": "k" }),
    )
    .await
    .ok();
    let content_id = published["id"].as_str().expect("id");

    let expect = |outcome: crate::mcp_client::ToolOutcome, code: &str| -> Value { outcome.err(code) };
    expect(
        call(
            &author_client,
            "report_usage",
            json!({ "target": "cnt_01j9zq3k5m8n2p4r6t8v0w2x4y", "usage_type": "test", "result": "success" }),
        )
        .await,
        "not_found",
    );
    expect(
        call(
            &author_client,
            "review",
            json!({ "target": "ent_01j9zq3k5m8n2p4r6t8v0w2x4y", "verdict": "confirmed", "confidence": 1 }),
        )
        .await,
        "invalid_target",
    );
    let malformed = expect(
        call(
            &author_client,
            "report_usage",
            json!({ "target": "cnt_nope", "usage_type": "test", "result": "success" }),
        )
        .await,
        "validation_failed",
    );
    assert_eq!(malformed["details"]["field"], "target");
    expect(
        call(
            &author_client,
            "review",
            json!({ "target": content_id, "verdict": "confirmed", "confidence": 1 }),
        )
        .await,
        "self_review",
    );
    let stranger = agent(&served.service, "stranger").await;
    let stranger_client = client_for(&served, &stranger.key).await;
    expect(
        call(
            &stranger_client,
            "publish",
            json!({ "content_type": "note", "title": "mine now", "revision_of": content_id }),
        )
        .await,
        "not_author",
    );
    expect(
        call(
            &author_client,
            "publish",
            json!({ "content_type": "note", "title": "different", "idempotency_key": "k" }),
        )
        .await,
        "idempotency_conflict",
    );
    let forbidden = expect(
        call(
            &reader_client,
            "publish",
            json!({ "content_type": "note", "title": "t" }),
        )
        .await,
        "forbidden_scope",
    );
    assert_eq!(forbidden["details"]["required_scope"], "publish");
    expect(
        call(
            &author_client,
            "publish",
            json!({ "content_type": "note", "title": "key", "body_markdown": "deploy with AKIAZ3MQN7XQP4LKJH2T" }),
        )
        .await,
        "content_rejected",
    );
    let wrong_type = expect(
        call(
            &author_client,
            "publish",
            json!({ "content_type": "note", "title": 42 }),
        )
        .await,
        "validation_failed",
    );
    assert_eq!(wrong_type["details"]["field"], "title");
    author_client.cancel().await.ok();
    reader_client.cancel().await.ok();
    stranger_client.cancel().await.ok();
    served.stop().await;
}

#[tokio::test]
async fn the_write_limit_answers_rate_limited_with_retry_after() {
    let served = ServedInstance::start_with("alpha.test", |config| config.writes_per_hour = 2).await;
    let author = agent(&served.service, "author").await;
    let client = client_for(&served, &author.key).await;
    for number in 0..2 {
        call(
            &client,
            "publish",
            json!({ "content_type": "note", "title": format!("note {number}") }),
        )
        .await
        .ok();
    }
    let limited = call(
        &client,
        "publish",
        json!({ "content_type": "note", "title": "one too many" }),
    )
    .await
    .err("rate_limited");
    // Both writes fell in the current minute, which leaves the window once 61 minutes have begun since it started.
    assert_eq!(limited["details"]["retry_after"], 3660);
    let whoami = call(&client, "whoami", json!({})).await.ok();
    assert_eq!(whoami["rate_limits"], json!({ "writes_per_hour": 2, "remaining": 0 }));
    client.cancel().await.ok();
    served.stop().await;
}

#[tokio::test]
async fn an_unexpected_failure_is_an_internal_error_without_details() {
    let served = ServedInstance::start("alpha.test").await;
    let author = agent(&served.service, "author").await;
    let client = client_for(&served, &author.key).await;
    let published = call(&client, "publish", json!({ "content_type": "note", "title": "t" }))
        .await
        .ok();
    served.break_table("usage_events").await;
    let failure = call(
        &client,
        "report_usage",
        json!({ "target": published["id"], "usage_type": "test", "result": "success" }),
    )
    .await
    .err("internal_error");
    assert_eq!(failure["details"], json!({}));
    assert!(
        !failure["message"].as_str().unwrap_or("").contains("usage_events"),
        "causes are logged, not returned"
    );
    client.cancel().await.ok();
    served.stop().await;
}

#[tokio::test]
async fn a_write_that_fails_at_commit_leaves_trust_as_if_it_never_happened() {
    let served = ServedInstance::start("alpha.test").await;
    let service = &served.service;
    let author = agent(service, "author").await;
    let published = crate::fixtures::publish_procedure(service, &author, "Rotate the signing keys", &[]).await;
    let target = interai::domain::PublicId::parse(&published.revision_id).expect("revision id");
    let first = agent(service, "first user").await;
    crate::fixtures::use_it(service, &first, &published.id, "success", true).await;
    let before = service.trust_summary(&target).await.expect("summary");

    // The usage row cannot be written, so the write fails once its trust update has been computed (on SQLite at
    // the commit itself, where held-back inserts are sent).
    served.break_table("usage_events").await;
    let second = agent(service, "second user").await;
    let failed = service
        .report_usage(
            &second.caller,
            &crate::fixtures::metadata("report_usage"),
            interai::service::evidence::UsageRequest {
                target: published.id.clone(),
                usage_type: "implementation".to_owned(),
                result: "success".to_owned(),
                real_world_use: true,
                ..interai::service::evidence::UsageRequest::default()
            },
        )
        .await
        .expect_err("the usage table is gone");
    assert_eq!(failed.code, interai::service::ErrorCode::InternalError);
    served.restore_table("usage_events").await;
    let unchanged = service.trust_summary(&target).await.expect("summary");
    assert_eq!(unchanged.version, before.version);
    assert_eq!(unchanged.value.to_bits(), before.value.to_bits());

    let third = agent(service, "third user").await;
    crate::fixtures::use_it(service, &third, &published.id, "success", true).await;
    let after = service.trust_summary(&target).await.expect("summary");
    let recomputed = service.recompute_trust(&target).await.expect("recompute");
    assert_eq!(after.independent_confirmations, 2, "the failed report does not count");
    assert_eq!(after.value.to_bits(), recomputed.value.to_bits());
    assert_eq!(after.status.as_str(), recomputed.status.as_str());
    served.stop().await;
}

#[tokio::test]
async fn usage_and_ratings_of_your_own_work_say_they_count_for_nothing() {
    let served = ServedInstance::start("alpha.test").await;
    let owner = crate::fixtures::controller(&served.service, "owner").await;
    let author = crate::fixtures::agent_of(&served.service, &owner, "author").await;
    let colleague = crate::fixtures::agent_of(&served.service, &owner, "colleague").await;
    let stranger = agent(&served.service, "stranger").await;
    let author_client = client_for(&served, &author.key).await;
    let colleague_client = client_for(&served, &colleague.key).await;
    let stranger_client = client_for(&served, &stranger.key).await;
    let published = call(
        &author_client,
        "publish",
        json!({
            "content_type": "procedure",
            "title": "Rotate signing keys",
            "subjects": [{ "name": "Key rotation", "type": "concept" }]
        }),
    )
    .await
    .ok();
    let content_id = published["id"].as_str().expect("id").to_owned();
    let usage = json!({ "target": content_id, "usage_type": "execution", "result": "success", "real_world_use": true });
    let rating = json!({ "target": content_id, "dimension": "reliability", "score": 90 });

    // Another agent of the same root controller: its evidence is self-evidence, and the result says so.
    let own_usage = call(&colleague_client, "report_usage", usage.clone()).await;
    assert!(own_usage.text.contains("counts for nothing"), "{}", own_usage.text);
    let own_usage = own_usage.ok();
    assert_eq!(own_usage["counts_toward_trust"], false);
    assert!(
        own_usage["note"]
            .as_str()
            .expect("note")
            .contains("your own root controller")
    );
    let own_rating = call(&author_client, "rate", rating.clone()).await.ok();
    assert_eq!(own_rating["counts_toward_trust"], false);
    assert!(own_rating["note"].as_str().expect("note").contains("weigh 0"));
    let experience = call(
        &author_client,
        "submit_experience",
        json!({
            "title": "Rotated the keys again",
            "result": "success",
            "used": [{ "id": content_id, "result": "success" }]
        }),
    )
    .await
    .ok();
    assert_eq!(experience["self_evidence_usage_ids"], experience["usage_ids"]);
    assert!(
        experience["note"]
            .as_str()
            .expect("note")
            .contains("counts for nothing")
    );

    // Someone else's evidence counts, and its result carries no such note.
    let other_usage = call(&stranger_client, "report_usage", usage).await.ok();
    assert_eq!(other_usage["counts_toward_trust"], true);
    assert!(other_usage.get("note").is_none(), "{other_usage}");
    let other_rating = call(&stranger_client, "rate", rating).await.ok();
    assert_eq!(other_rating["counts_toward_trust"], true);
    assert!(other_rating.get("note").is_none(), "{other_rating}");
}
