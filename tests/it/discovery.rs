//! Discovery: search ranking and filters, cursors, alternatives, get with every include, compare with fallback,
//! and the recommended workflow end to end through the MCP endpoint.

use interai::domain::PublicId;
use interai::service::ErrorCode;
use interai::service::compare::CompareRequest;
use interai::service::content::{PublishRequest, RelationRequest};
use interai::service::evidence::RateRequest;
use interai::service::lookup::{GetRequest, ObjectView, RevisionSelector};
use interai::service::references::SubjectReference;
use interai::service::search::{SearchHit, SearchRequest};
use serde_json::json;

use crate::fixtures::{Agent, agent, metadata, use_it};
use crate::harness::{ServedInstance, TestInstance};
use crate::mcp_client::{call, connect_initialize};

fn search(query: &str) -> SearchRequest {
    SearchRequest {
        query: Some(query.to_owned()),
        ..SearchRequest::default()
    }
}

fn ids(hits: &[SearchHit]) -> Vec<String> {
    hits.iter().map(|hit| hit.id.clone()).collect()
}

async fn publish(service: &interai::service::Service, author: &Agent, title: &str, body: &str) -> String {
    service
        .publish(
            &author.caller,
            &metadata("publish"),
            PublishRequest {
                content_type: "procedure".to_owned(),
                title: title.to_owned(),
                summary: "Deduplicate deliveries.".to_owned(),
                body_markdown: body.to_owned(),
                ..PublishRequest::default()
            },
        )
        .await
        .expect("publish")
        .id
}

#[tokio::test]
async fn proven_knowledge_outranks_equally_relevant_unverified_knowledge_and_disputes_are_labeled() {
    let alpha = TestInstance::start("alpha.test").await;
    let service = alpha.service();
    let author = agent(service, "author").await;
    let body = "Store every webhook delivery id and skip ids you have already processed.";
    let unverified = publish(service, &author, "Idempotent webhook handling", body).await;
    let proven = publish(service, &author, "Idempotent webhook handling", body).await;
    let disputed = publish(service, &author, "Idempotent webhook handling", body).await;
    for number in 0..8 {
        let user = agent(service, &format!("user {number}")).await;
        use_it(service, &user, &proven, "success", true).await;
    }
    let critic = agent(service, "critic").await;
    use_it(service, &critic, &disputed, "failure", true).await;

    let reader = agent(service, "reader").await;
    let results = service
        .search(&reader.caller, &search("webhook delivery idempotent"))
        .await
        .expect("search");
    let order = ids(&results.results);
    assert_eq!(order[0], proven, "the high-confidence item ranks first");
    let position = |id: &String| order.iter().position(|candidate| candidate == id).expect("listed");
    assert!(
        position(&unverified) < position(&disputed),
        "the disputed item ranks below the unverified one"
    );
    let proven_hit = &results.results[0];
    assert_eq!(proven_hit.status.as_str(), "high_confidence");
    assert!(proven_hit.trust.lower_bound >= 0.70);
    assert_eq!(proven_hit.trust.real_world_confirmations, 8);
    let disputed_hit = results
        .results
        .iter()
        .find(|hit| hit.id == disputed)
        .expect("disputed listed");
    assert_eq!(disputed_hit.status.as_str(), "disputed");

    let without_disputed = service
        .search(
            &reader.caller,
            &SearchRequest {
                include_disputed: Some(false),
                ..search("webhook delivery idempotent")
            },
        )
        .await
        .expect("search");
    assert!(!ids(&without_disputed.results).contains(&disputed));
    assert!(ids(&without_disputed.results).contains(&unverified));

    let high_only = service
        .search(
            &reader.caller,
            &SearchRequest {
                min_status: Some("high_confidence".to_owned()),
                include_disputed: Some(false),
                ..search("webhook")
            },
        )
        .await
        .expect("search");
    assert_eq!(ids(&high_only.results), vec![proven.clone()]);

    let by_trust = service
        .search(
            &reader.caller,
            &SearchRequest {
                sort: Some("trust".to_owned()),
                kinds: vec!["content".to_owned()],
                ..search("webhook")
            },
        )
        .await
        .expect("search");
    assert_eq!(
        ids(&by_trust.results),
        vec![proven.clone(), unverified.clone(), disputed.clone()]
    );

    // Without a query the same orders and filters browse everything (the store walks its browsing indexes).
    let browse = |sort: &str| SearchRequest {
        sort: Some(sort.to_owned()),
        kinds: vec!["content".to_owned()],
        ..SearchRequest::default()
    };
    let browsed = service.search(&reader.caller, &browse("trust")).await.expect("browse");
    assert_eq!(
        ids(&browsed.results),
        vec![proven.clone(), unverified.clone(), disputed.clone()],
        "browsing by trust: high_confidence, then unverified, then disputed"
    );
    let browsed_high = service
        .search(
            &reader.caller,
            &SearchRequest {
                min_status: Some("high_confidence".to_owned()),
                include_disputed: Some(false),
                ..browse("trust")
            },
        )
        .await
        .expect("browse");
    assert_eq!(ids(&browsed_high.results), vec![proven.clone()]);
    let browsed_recent = service
        .search(
            &reader.caller,
            &SearchRequest {
                include_disputed: Some(false),
                ..browse("recent")
            },
        )
        .await
        .expect("browse");
    let mut recent = ids(&browsed_recent.results);
    recent.sort();
    let mut expected = vec![proven, unverified];
    expected.sort();
    assert_eq!(recent, expected, "browsing by recency without disputed items");
}

#[tokio::test]
async fn every_item_is_returned_exactly_once_while_items_arrive_between_pages() {
    let alpha = TestInstance::start("alpha.test").await;
    let service = alpha.service();
    let author = agent(service, "author").await;
    let mut originals = Vec::new();
    for number in 0..23 {
        originals.push(
            publish(
                service,
                &author,
                &format!("Paging guide part {number}"),
                "cursor paging stability",
            )
            .await,
        );
        alpha.clock.advance(chrono::TimeDelta::seconds(1));
    }
    let reader = agent(service, "reader").await;
    for sort in ["rank", "trust", "recent"] {
        // Everything published so far, including the previous rounds' late arrivals, exists at this first page.
        let existing = originals.clone();
        let mut seen: Vec<String> = Vec::new();
        let mut cursor = None;
        loop {
            let page = service
                .search(
                    &reader.caller,
                    &SearchRequest {
                        sort: Some(sort.to_owned()),
                        kinds: vec!["content".to_owned()],
                        limit: Some(10),
                        cursor: cursor.clone(),
                        ..search("paging guide")
                    },
                )
                .await
                .expect("page");
            seen.extend(ids(&page.results));
            // New matching items arrive between pages.
            alpha.clock.advance(chrono::TimeDelta::seconds(1));
            originals.push(
                publish(
                    service,
                    &author,
                    "Paging guide, late arrival",
                    "cursor paging stability",
                )
                .await,
            );
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        let mut sorted_seen = seen.clone();
        sorted_seen.sort();
        sorted_seen.dedup();
        assert_eq!(sorted_seen.len(), seen.len(), "{sort}: no item twice");
        let mut expected = existing;
        expected.sort();
        assert_eq!(
            sorted_seen, expected,
            "{sort}: exactly the items that existed at the first page"
        );
    }

    let tampered = service
        .search(
            &reader.caller,
            &SearchRequest {
                cursor: Some("eyJzZWFyY2giOiJ4In0.AAAAAAAAAAAAAAAAAAAAAA".to_owned()),
                ..search("paging guide")
            },
        )
        .await
        .expect_err("forged cursor");
    assert_eq!(tampered.code, ErrorCode::ValidationFailed);
    let first = service
        .search(
            &reader.caller,
            &SearchRequest {
                limit: Some(5),
                ..search("paging guide")
            },
        )
        .await
        .expect("page");
    let reused = service
        .search(
            &reader.caller,
            &SearchRequest {
                limit: Some(5),
                cursor: first.next_cursor,
                ..search("another query")
            },
        )
        .await
        .expect_err("cursor of another search");
    assert_eq!(reused.code, ErrorCode::ValidationFailed);
}

#[tokio::test]
async fn alternatives_are_found_for_entities_and_content() {
    let alpha = TestInstance::start("alpha.test").await;
    let service = alpha.service();
    let author = agent(service, "author").await;
    let about = |name: &str| SubjectReference::Named {
        name: name.to_owned(),
        entity_type: "message_broker".to_owned(),
        aliases: vec![],
        description: None,
    };
    service
        .publish(
            &author.caller,
            &metadata("publish"),
            PublishRequest {
                content_type: "note".to_owned(),
                title: "Kafka overview".to_owned(),
                subjects: vec![about("Kafka")],
                ..PublishRequest::default()
            },
        )
        .await
        .expect("kafka note");
    let kafka = service
        .find_entity_by_name("message_broker", "Kafka")
        .await
        .expect("entity");
    let nats_note = service
        .publish(
            &author.caller,
            &metadata("publish"),
            PublishRequest {
                content_type: "recommendation".to_owned(),
                title: "Use NATS for small deployments".to_owned(),
                subjects: vec![about("NATS")],
                relations: vec![RelationRequest {
                    relation_type: "alternative_to".to_owned(),
                    target: kafka.id.as_str().to_owned(),
                    reason: Some("simpler".to_owned()),
                }],
                ..PublishRequest::default()
            },
        )
        .await
        .expect("nats");
    let nats = service
        .find_entity_by_name("message_broker", "NATS")
        .await
        .expect("entity");
    let reader = agent(service, "reader").await;
    let alternatives = |id: &str, reason: Option<&str>| SearchRequest {
        alternatives_to: Some((id.to_owned(), reason.map(str::to_owned))),
        ..SearchRequest::default()
    };
    let found = service
        .search(&reader.caller, &alternatives(kafka.id.as_str(), Some("simpler")))
        .await
        .expect("search");
    let found = ids(&found.results);
    assert!(found.contains(&nats_note.id), "{found:?}");
    assert!(
        found.contains(&nats.id.as_str().to_owned()),
        "the alternative's subject entity is listed: {found:?}"
    );
    let cheaper = service
        .search(&reader.caller, &alternatives(kafka.id.as_str(), Some("cheaper")))
        .await
        .expect("search");
    assert!(cheaper.results.is_empty());

    let replacement = service
        .publish(
            &author.caller,
            &metadata("publish"),
            PublishRequest {
                content_type: "procedure".to_owned(),
                title: "A safer approach".to_owned(),
                relations: vec![RelationRequest {
                    relation_type: "alternative_to".to_owned(),
                    target: nats_note.id.clone(),
                    reason: Some("safer".to_owned()),
                }],
                ..PublishRequest::default()
            },
        )
        .await
        .expect("content alternative");
    let to_content = service
        .search(&reader.caller, &alternatives(&nats_note.id, None))
        .await
        .expect("search");
    assert!(ids(&to_content.results).contains(&replacement.id));
    let bad_reason = service
        .search(&reader.caller, &alternatives(&nats_note.id, Some("prettier")))
        .await
        .expect_err("reason");
    assert_eq!(bad_reason.code, ErrorCode::ValidationFailed);
}

#[tokio::test]
async fn get_returns_every_include_option_and_old_revisions() {
    let alpha = TestInstance::start("alpha.test").await;
    let service = alpha.service();
    let author = agent(service, "author").await;
    let first = service
        .publish(
            &author.caller,
            &metadata("publish"),
            PublishRequest {
                content_type: "procedure".to_owned(),
                title: "Rotate keys".to_owned(),
                body_markdown: "Rotate <script>alert(1)</script> every **90** days.".to_owned(),
                claims: vec!["Rotating keys every 90 days limits exposure.".to_owned()],
                tags: vec!["security".to_owned()],
                ..PublishRequest::default()
            },
        )
        .await
        .expect("publish");
    alpha.clock.advance(chrono::TimeDelta::hours(1));
    service
        .publish(
            &author.caller,
            &metadata("publish"),
            PublishRequest {
                content_type: "procedure".to_owned(),
                title: "Rotate keys (revised)".to_owned(),
                revision_of: Some(first.id.clone()),
                claims: vec!["Rotating keys every 90 days limits exposure.".to_owned()],
                ..PublishRequest::default()
            },
        )
        .await
        .expect("revision");
    let reader = agent(service, "reader").await;
    for _ in 0..25 {
        use_it(service, &reader, &first.id, "success", false).await;
    }
    let everything = GetRequest {
        id: first.id.clone(),
        revision: None,
        include: Some(
            [
                "body",
                "claims",
                "relations",
                "evidence_summary",
                "evidence",
                "revisions",
                "explanation",
            ]
            .map(str::to_owned)
            .to_vec(),
        ),
        evidence_cursor: None,
        trust_view: Default::default(),
    };
    let ObjectView::Content(view) = service.get(&reader.caller, &everything).await.expect("get") else {
        panic!("content expected");
    };
    assert_eq!(view.revision.revision_no, 2);
    assert!(view.untrusted_content);
    assert_eq!(view.claims.as_ref().map(Vec::len), Some(1));
    assert_eq!(view.revisions.as_ref().map(Vec::len), Some(2));
    assert_eq!(
        view.revisions.as_ref().expect("history")[1].status.as_str(),
        "superseded"
    );
    let summary = view.evidence_summary.as_ref().expect("summary");
    assert_eq!(summary.usage_by_result, vec![("success".to_owned(), 25)]);
    let page = view.evidence.as_ref().expect("evidence");
    assert_eq!(page.records.len(), 20);
    let explanation = &view.explanation.as_ref().expect("explanation").explanation;
    assert_eq!(explanation.model_version, "trust-v1");
    assert_eq!(explanation.parties.len(), 1, "one controller");
    // The trust shown and the explanation come from one evaluation, and every listed status is the one its own
    // object shows.
    assert_eq!(view.trust.assessment, explanation.assessment);
    assert_eq!(
        view.revisions.as_ref().expect("history")[0].status.as_str(),
        view.trust.assessment.status.as_str()
    );
    let standing = &view.claims.as_ref().expect("claims")[0];
    let claim_request = GetRequest {
        id: standing.claim.id.as_str().to_owned(),
        revision: None,
        include: Some(vec!["explanation".to_owned()]),
        evidence_cursor: None,
        trust_view: Default::default(),
    };
    let ObjectView::Claim(claim_view) = service.get(&reader.caller, &claim_request).await.expect("claim") else {
        panic!("claim expected");
    };
    assert_eq!(standing.status.as_str(), claim_view.trust.assessment.status.as_str());
    assert_eq!(standing.trust.lower_bound, claim_view.trust.assessment.lower_bound);
    let claim_explanation = &claim_view.explanation.as_ref().expect("claim explanation").explanation;
    assert_eq!(claim_explanation.target_id, standing.claim.id.as_str());
    assert_eq!(claim_view.trust.assessment, claim_explanation.assessment);

    let second_page = service
        .get(
            &reader.caller,
            &GetRequest {
                evidence_cursor: page.next_cursor.clone(),
                ..everything.clone()
            },
        )
        .await
        .expect("second page");
    let ObjectView::Content(second_view) = second_page else {
        panic!("content expected");
    };
    assert_eq!(second_view.evidence.as_ref().expect("evidence").records.len(), 5);
    assert!(second_view.evidence.as_ref().expect("evidence").next_cursor.is_none());

    let old = service
        .get(
            &reader.caller,
            &GetRequest {
                id: first.id.clone(),
                revision: Some(RevisionSelector::Number(1)),
                include: Some(vec!["body".to_owned()]),
                evidence_cursor: None,
                trust_view: Default::default(),
            },
        )
        .await
        .expect("old revision");
    let ObjectView::Content(old) = old else {
        panic!("content expected");
    };
    assert_eq!(old.revision.id.as_str(), first.revision_id);
    assert_eq!(old.trust.assessment.status.as_str(), "superseded");
    assert!(
        old.revision.body_markdown.contains("&lt;script>"),
        "raw HTML is neutralized: {}",
        old.revision.body_markdown
    );
    assert!(old.claims.is_none() && old.explanation.is_none());

    for (id, code) in [
        ("cnt_01j9zq3k5m8n2p4r6t8v0w2x4y", ErrorCode::NotFound),
        ("cnt_broken", ErrorCode::ValidationFailed),
        ("thr_01j9zq3k5m8n2p4r6t8v0w2x4y", ErrorCode::NotFound),
    ] {
        let error = service
            .get(
                &reader.caller,
                &GetRequest {
                    id: id.to_owned(),
                    revision: None,
                    include: None,
                    evidence_cursor: None,
                    trust_view: Default::default(),
                },
            )
            .await
            .expect_err("refused");
        assert_eq!(error.code, code, "{id}");
    }
    for id in [first.claims[0].id.clone(), reader.caller.actor.id.as_str().to_owned()] {
        service
            .get(
                &reader.caller,
                &GetRequest {
                    id,
                    revision: None,
                    include: Some(vec!["explanation".to_owned()]),
                    evidence_cursor: None,
                    trust_view: Default::default(),
                },
            )
            .await
            .expect("claim and actor");
    }
}

#[tokio::test]
async fn compare_falls_back_to_all_contexts_below_three_raters_and_says_so() {
    let alpha = TestInstance::start("alpha.test").await;
    let service = alpha.service();
    let author = agent(service, "author").await;
    let first = publish(service, &author, "Queue with Redis streams", "redis streams queue").await;
    let second = publish(service, &author, "Queue with PostgreSQL SKIP LOCKED", "postgres queue").await;
    let mut raters = Vec::new();
    for number in 0..5 {
        raters.push(agent(service, &format!("rater {number}")).await);
    }
    for (number, rater) in raters.iter().enumerate() {
        let context = if number < 2 {
            json!({ "language": "python" })
        } else {
            json!({ "language": "go" })
        };
        for (target, score) in [(&first, 80.0), (&second, 60.0)] {
            service
                .rate(
                    &rater.caller,
                    &metadata("rate"),
                    RateRequest {
                        target: target.clone(),
                        dimension: "reliability".to_owned(),
                        score,
                        confidence: 1.0,
                        context: Some(context.clone()),
                        ..RateRequest::default()
                    },
                )
                .await
                .expect("rate");
        }
    }
    let comparison = service
        .compare(
            &raters[0].caller,
            &CompareRequest {
                ids: vec![first.clone(), second.clone()],
                context: Some(json!({ "language": "Python" })),
                dimensions: vec!["reliability".to_owned(), "cost".to_owned()],
                trust_view: Default::default(),
            },
        )
        .await
        .expect("compare");
    assert_eq!(comparison.context_key.to_string(), "language=python");
    let reliability = &comparison.items[0].scores[1];
    assert_eq!(reliability.dimension, "reliability");
    assert_eq!(reliability.source, "all_contexts");
    assert_eq!(reliability.context_raters, 2);
    assert_eq!(reliability.independent_raters, 5);
    assert!(reliability.score.expect("scored") > 60.0);
    let cost = &comparison.items[0].scores[0];
    assert!(cost.score.is_none(), "an unrated dimension has no score");

    let in_go = service
        .compare(
            &raters[0].caller,
            &CompareRequest {
                ids: vec![first.clone(), second.clone()],
                context: Some(json!({ "language": "go" })),
                dimensions: vec!["reliability".to_owned()],
                trust_view: Default::default(),
            },
        )
        .await
        .expect("compare");
    assert_eq!(in_go.items[1].scores[0].source, "context");
    assert_eq!(in_go.items[1].scores[0].context_raters, 3);

    for (ids, code) in [
        (vec![first.clone()], ErrorCode::ValidationFailed),
        (vec![first.clone(), first.clone()], ErrorCode::ValidationFailed),
        (
            vec![first.clone(), "clm_01j9zq3k5m8n2p4r6t8v0w2x4y".to_owned()],
            ErrorCode::InvalidTarget,
        ),
        (
            vec![first.clone(), "ent_01j9zq3k5m8n2p4r6t8v0w2x4y".to_owned()],
            ErrorCode::NotFound,
        ),
    ] {
        let error = service
            .compare(
                &raters[0].caller,
                &CompareRequest {
                    ids,
                    context: None,
                    dimensions: vec![],
                    trust_view: Default::default(),
                },
            )
            .await
            .expect_err("refused");
        assert_eq!(error.code, code);
    }
}

#[tokio::test]
async fn two_agents_follow_the_recommended_workflow_through_the_endpoint() {
    let served = ServedInstance::start("alpha.test").await;
    let writer = agent(&served.service, "writer").await;
    let practitioner = agent(&served.service, "practitioner").await;
    let writer_client = connect_initialize(&served.mcp_url(), Some(&writer.key))
        .await
        .expect("writer");
    let client = connect_initialize(&served.mcp_url(), Some(&practitioner.key))
        .await
        .expect("practitioner");

    let mut published = Vec::new();
    for title in [
        "Retry webhooks with exponential backoff",
        "Retry webhooks with a fixed delay",
    ] {
        let outcome = call(
            &writer_client,
            "publish",
            json!({
                "content_type": "procedure",
                "title": title,
                "summary": "How to retry failed webhook deliveries.",
                "body_markdown": "Retry failed webhook deliveries; log every attempt.",
                "claims": [{ "text": format!("{title} recovers transient failures.") }],
                "tags": ["webhook"]
            }),
        )
        .await
        .ok();
        published.push(outcome["id"].as_str().expect("id").to_owned());
    }

    // search → compare → get → apply → report_usage → review / rate → submit_experience
    let found = call(
        &client,
        "search",
        json!({ "query": "retry failed webhook deliveries", "kinds": ["content"] }),
    )
    .await
    .ok();
    assert_eq!(found["untrusted_content"], true);
    let results = found["results"].as_array().expect("results");
    assert_eq!(results.len(), 2);
    assert!(
        results[0]["resource_uri"]
            .as_str()
            .expect("uri")
            .starts_with("interai://content/cnt_")
    );
    assert!(results[0]["trust"]["lower_bound"].is_number());
    let compared = call(
        &client,
        "compare",
        json!({ "ids": published, "context": { "language": "python" }, "dimensions": ["reliability"] }),
    )
    .await
    .ok();
    assert!(compared.get("winner").is_none());
    assert_eq!(compared["items"].as_array().map(Vec::len), Some(2));
    let chosen = &published[0];
    let fetched = call(
        &client,
        "get",
        json!({ "id": chosen, "include": ["body", "claims", "explanation"] }),
    )
    .await
    .ok();
    assert_eq!(fetched["kind"], "content");
    assert_eq!(fetched["untrusted_content"], true);
    assert_eq!(fetched["trust"]["model_version"], "trust-v1");
    assert!(fetched["explanation"]["parties"].is_array());
    let claim = fetched["claims"][0]["id"].as_str().expect("claim").to_owned();

    let usage = call(
        &client,
        "report_usage",
        json!({ "target": chosen, "usage_type": "implementation", "result": "success", "real_world_use": true, "context": { "language": "python" } }),
    )
    .await
    .ok();
    call(
        &client,
        "review",
        json!({ "target": claim, "verdict": "confirmed", "confidence": 0.9, "based_on_usage": usage["id"] }),
    )
    .await
    .ok();
    call(
        &client,
        "rate",
        json!({ "target": chosen, "dimension": "reliability", "score": 90, "context": { "language": "python" } }),
    )
    .await
    .ok();
    call(
        &client,
        "submit_experience",
        json!({
            "title": "Backoff held under load",
            "result": "success",
            "real_world_use": true,
            "context": { "language": "python" },
            "used": [{ "id": published[1], "result": "partial", "note": "fixed delay caused bursts" }]
        }),
    )
    .await
    .ok();

    let after = call(
        &writer_client,
        "search",
        json!({ "query": "retry webhook", "kinds": ["content"], "context": { "language": "python" } }),
    )
    .await
    .ok();
    let first = &after["results"][0];
    assert_eq!(
        first["id"].as_str(),
        Some(chosen.as_str()),
        "the used, confirmed item ranks first"
    );
    assert_eq!(first["status"], "supported");
    assert_eq!(first["trust"]["real_world_confirmations"], 1);
    let refetched = call(&writer_client, "get", json!({ "id": claim })).await.ok();
    assert_eq!(refetched["trust"]["independent_confirmations"], 1);
    let unknown = call(&client, "get", json!({ "id": "cnt_01j9zq3k5m8n2p4r6t8v0w2x4y" }))
        .await
        .err("not_found");
    assert_eq!(unknown["details"]["id"], "cnt_01j9zq3k5m8n2p4r6t8v0w2x4y");
    call(&client, "get", json!({ "id": "not-an-id" }))
        .await
        .err("validation_failed");
    let reader_only =
        crate::fixtures::agent_of_with_scopes(&served.service, practitioner.controller(), "no read", "usage").await;
    let no_read = connect_initialize(&served.mcp_url(), Some(&reader_only.key))
        .await
        .expect("client");
    call(&no_read, "search", json!({ "query": "webhook" }))
        .await
        .err("forbidden_scope");
    no_read.cancel().await.ok();
    writer_client.cancel().await.ok();
    client.cancel().await.ok();
    let _ = PublicId::parse(chosen).expect("id");
    served.stop().await;
}

#[tokio::test]
async fn get_marks_your_own_item_untrusted_when_it_shows_a_claim_another_actor_wrote() {
    let alpha = TestInstance::start("alpha.test").await;
    let service = alpha.service();
    let first = agent(service, "first").await;
    let second = agent(service, "second").await;
    let shared_claim = "Webhook deliveries are retried five times.";
    let original = crate::fixtures::publish_procedure(service, &first, "retry webhooks", &[shared_claim]).await;
    let own_only =
        crate::fixtures::publish_procedure(service, &second, "rotate keys", &["Keys rotate every ninety days."]).await;
    let matching = crate::fixtures::publish_procedure(service, &second, "handle webhooks", &[shared_claim]).await;
    assert_eq!(
        matching.claims[0].id, original.claims[0].id,
        "the claim is matched to the one the first agent wrote"
    );
    let get_with_claims = |id: &str| GetRequest {
        id: id.to_owned(),
        revision: None,
        include: Some(vec!["body".to_owned(), "claims".to_owned()]),
        evidence_cursor: None,
        trust_view: Default::default(),
    };
    let untrusted = |view: ObjectView| match view {
        ObjectView::Content(view) => view.untrusted_content,
        other => panic!("content expected, got {other:?}"),
    };

    let own = service
        .get(&second.caller, &get_with_claims(&own_only.id))
        .await
        .expect("get");
    assert!(!untrusted(own), "everything shown was written by the caller");
    let mixed = service
        .get(&second.caller, &get_with_claims(&matching.id))
        .await
        .expect("get");
    let output = interai::mcp::wire::get_output(mixed.clone());
    assert!(
        untrusted(mixed),
        "the caller's own item shows the first agent's claim text"
    );
    assert!(output.untrusted_content);
    assert!(
        interai::mcp::call::ToolOutput::summary(&output).contains("Untrusted content"),
        "the text result says so too"
    );
    // Without the claims, the same item shows only the caller's own text.
    let without_claims = service
        .get(
            &second.caller,
            &GetRequest {
                include: Some(vec!["body".to_owned()]),
                ..get_with_claims(&matching.id)
            },
        )
        .await
        .expect("get");
    assert!(!untrusted(without_claims));
}

#[tokio::test]
async fn the_explanation_says_why_a_new_controllers_refutation_is_not_strong() {
    let alpha = TestInstance::start("alpha.test").await;
    let service = alpha.service();
    let author = agent(service, "author").await;
    let newcomer = agent(service, "newcomer").await;
    let published = crate::fixtures::publish_procedure(
        service,
        &author,
        "cache invalidation",
        &["Caches never need invalidation."],
    )
    .await;
    let claim = published.claims[0].id.clone();
    let usage = use_it(service, &newcomer, &claim, "failure", true).await;
    crate::fixtures::review_it(service, &newcomer, &claim, "false", 0.9, Some(&usage)).await;

    let view = service
        .get(
            &newcomer.caller,
            &GetRequest {
                id: claim.clone(),
                revision: None,
                include: Some(vec!["explanation".to_owned()]),
                evidence_cursor: None,
                trust_view: Default::default(),
            },
        )
        .await
        .expect("get");
    let output = serde_json::to_value(interai::mcp::wire::get_output(view)).expect("serializable");
    let parties = output["explanation"]["parties"].as_array().expect("parties");
    let newcomer_row = parties
        .iter()
        .find(|party| party["party"] == format!("ctrl:{}", newcomer.controller()))
        .unwrap_or_else(|| panic!("the newcomer's row: {parties:?}"));
    assert!(
        newcomer_row["flags"]
            .as_array()
            .expect("flags")
            .contains(&json!("ineligible_strong_refutation")),
        "{newcomer_row}"
    );
    let reason = newcomer_row["flag_reasons"]["ineligible_strong_refutation"]
        .as_str()
        .expect("the flag comes with its reason");
    assert!(
        reason.contains("new controllers cannot strongly refute yet"),
        "{reason}"
    );
    assert!(
        reason.contains("14 days") && reason.contains("5 earlier valid evidence records"),
        "{reason}"
    );
    assert_eq!(output["explanation"]["strong_refutations_first_party"], 0);
}
