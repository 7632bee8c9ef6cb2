//! Publishing and evidence through the service layer: every rule of the write tools and trust that moves.

use std::sync::Arc;

use interai::domain::PublicId;
use interai::service::ErrorCode;
use interai::service::content::{ExperienceRequest, PublishRequest, RelationRequest, UsedRequest};
use interai::service::evidence::{RateRequest, ReviewRequest, UsageRequest};
use interai::service::references::{SourceReference, SubjectReference};
use serde_json::json;

use crate::fixtures::{
    agent, agent_of, agent_of_with_scopes, controller, metadata, metadata_with, publish_procedure, review_it, use_it,
};
use crate::harness::TestInstance;

fn id(text: &str) -> PublicId {
    PublicId::parse(text).expect("valid id")
}

#[tokio::test]
async fn one_real_world_success_makes_a_procedure_supported() {
    let alpha = TestInstance::start("alpha.test").await;
    let service = alpha.service();
    let author = agent(service, "author").await;
    let user = agent(service, "user").await;
    let published = publish_procedure(
        service,
        &author,
        "rotate logs",
        &["Rotating logs daily keeps disks from filling."],
    )
    .await;
    let before = service
        .trust_summary(&id(&published.revision_id))
        .await
        .expect("summary");
    assert_eq!(before.status.as_str(), "unverified");
    assert!((before.value - 0.5).abs() < 1e-12);

    let outcome = service
        .report_usage(
            &user.caller,
            &metadata("report_usage"),
            UsageRequest {
                target: published.id.clone(),
                usage_type: "implementation".to_owned(),
                result: "success".to_owned(),
                real_world_use: true,
                ..UsageRequest::default()
            },
        )
        .await
        .expect("usage");
    assert_eq!(outcome.target_revision.as_deref(), Some(published.revision_id.as_str()));
    let after = service
        .trust_summary(&id(&published.revision_id))
        .await
        .expect("summary");
    assert!((after.value - 2.0 / 3.0).abs() < 1e-9, "{}", after.value);
    assert!((after.lower_bound - 0.2236).abs() < 5e-5, "{}", after.lower_bound);
    assert_eq!(after.status.as_str(), "supported");
    assert_eq!(after.independent_confirmations, 1);
    assert_eq!(after.real_world_confirmations, 1);
}

#[tokio::test]
async fn a_hundred_agents_of_one_controller_count_as_one_party() {
    let alpha = TestInstance::start("alpha.test").await;
    let service = alpha.service();
    let author = agent(service, "author").await;
    let published = publish_procedure(service, &author, "tune vacuum", &[]).await;
    let operator = controller(service, "operator").await;
    for number in 0..100 {
        let worker = agent_of(service, &operator, &format!("worker {number}")).await;
        use_it(service, &worker, &published.id, "success", true).await;
    }
    let summary = service
        .trust_summary(&id(&published.revision_id))
        .await
        .expect("summary");
    assert_eq!(summary.independent_confirmations, 1);
    assert_eq!(summary.real_world_confirmations, 1);
    assert!(
        (summary.value - 2.0 / 3.0).abs() < 1e-9,
        "identical to one report: {}",
        summary.value
    );
    assert_eq!(summary.evidence_records, 100);

    let other = agent(service, "independent").await;
    use_it(service, &other, &published.id, "success", true).await;
    let summary = service
        .trust_summary(&id(&published.revision_id))
        .await
        .expect("summary");
    assert_eq!(summary.independent_confirmations, 2);
}

#[tokio::test]
async fn reviews_by_the_author_or_its_controller_are_refused() {
    let alpha = TestInstance::start("alpha.test").await;
    let service = alpha.service();
    let owner = controller(service, "owner").await;
    let author = agent_of(service, &owner, "author").await;
    let colleague = agent_of(service, &owner, "colleague").await;
    let published = publish_procedure(service, &author, "index tables", &["Indexes speed up lookups."]).await;
    for reviewer in [&author, &colleague] {
        for target in [&published.id, &published.claims[0].id] {
            let error = service
                .review(
                    &reviewer.caller,
                    &metadata("review"),
                    ReviewRequest {
                        target: target.clone(),
                        verdict: "confirmed".to_owned(),
                        confidence: 0.9,
                        ..ReviewRequest::default()
                    },
                )
                .await
                .expect_err("self review");
            assert_eq!(error.code, ErrorCode::SelfReview);
        }
    }
    let outsider = agent(service, "outsider").await;
    review_it(service, &outsider, &published.id, "confirmed", 0.8, None).await;
}

#[tokio::test]
async fn only_the_author_can_revise_and_revisions_supersede_their_predecessor() {
    let alpha = TestInstance::start("alpha.test").await;
    let service = alpha.service();
    let author = agent(service, "author").await;
    let stranger = agent(service, "stranger").await;
    let first = publish_procedure(service, &author, "cache builds", &[]).await;
    let refused = service
        .publish(
            &stranger.caller,
            &metadata("publish"),
            PublishRequest {
                content_type: "procedure".to_owned(),
                title: "cache builds better".to_owned(),
                revision_of: Some(first.id.clone()),
                ..PublishRequest::default()
            },
        )
        .await
        .expect_err("not the author");
    assert_eq!(refused.code, ErrorCode::NotAuthor);

    let second = service
        .publish(
            &author.caller,
            &metadata("publish"),
            PublishRequest {
                content_type: "procedure".to_owned(),
                title: "cache builds, revised".to_owned(),
                revision_of: Some(first.id.clone()),
                change_note: Some("clarified step 2".to_owned()),
                ..PublishRequest::default()
            },
        )
        .await
        .expect("revision");
    assert_eq!(second.id, first.id);
    assert_eq!(second.revision_no, 2);
    assert_ne!(second.revision_id, first.revision_id);
    let old = service
        .trust_summary(&id(&first.revision_id))
        .await
        .expect("old summary");
    assert_eq!(old.status.as_str(), "superseded");
    assert_eq!(old.rule, "R1");
    let user = agent(service, "user").await;
    let usage = service
        .report_usage(
            &user.caller,
            &metadata("report_usage"),
            UsageRequest {
                target: first.id.clone(),
                usage_type: "execution".to_owned(),
                result: "success".to_owned(),
                ..UsageRequest::default()
            },
        )
        .await
        .expect("usage");
    assert_eq!(
        usage.target_revision.as_deref(),
        Some(second.revision_id.as_str()),
        "cnt_ resolves to the current revision"
    );
}

#[tokio::test]
async fn equivalent_claims_are_linked_not_duplicated() {
    let alpha = TestInstance::start("alpha.test").await;
    let service = alpha.service();
    let first_author = agent(service, "first").await;
    let second_author = agent(service, "second").await;
    let first = publish_procedure(
        service,
        &first_author,
        "dedupe webhooks",
        &["Deduplicating by delivery id prevents double processing."],
    )
    .await;
    assert!(!first.claims[0].matched_existing);
    let second = publish_procedure(
        service,
        &second_author,
        "webhook handling",
        &[
            "  deduplicating BY delivery id   prevents double processing!!",
            "Retries need backoff.",
        ],
    )
    .await;
    assert_eq!(second.claims[0].id, first.claims[0].id);
    assert!(second.claims[0].matched_existing);
    assert!(!second.claims[1].matched_existing);
    assert_ne!(second.claims[1].id, first.claims[0].id);
}

#[tokio::test]
async fn an_idempotent_retry_returns_the_original_ids_and_counts_once() {
    let alpha = TestInstance::start("alpha.test").await;
    let service = alpha.service();
    let author = agent(service, "author").await;
    let request = PublishRequest {
        content_type: "note".to_owned(),
        title: "retry safely".to_owned(),
        claims: vec!["Idempotency keys make retries safe.".to_owned()],
        idempotency_key: Some("publish-1".to_owned()),
        ..PublishRequest::default()
    };
    let arguments = json!({ "content_type": "note", "title": "retry safely", "idempotency_key": "publish-1" });
    let first = service
        .publish(
            &author.caller,
            &metadata_with("publish", arguments.clone()),
            request.clone(),
        )
        .await
        .expect("first");
    let remaining_after_first = service
        .write_allowance(author.controller())
        .await
        .expect("allowance")
        .remaining;
    let retry = service
        .publish(
            &author.caller,
            &metadata_with("publish", arguments.clone()),
            request.clone(),
        )
        .await
        .expect("retry");
    assert_eq!(retry, first);
    assert_eq!(
        service
            .write_allowance(author.controller())
            .await
            .expect("allowance")
            .remaining,
        remaining_after_first,
        "a replay is not a new write"
    );
    let conflicting = service
        .publish(
            &author.caller,
            &metadata_with(
                "publish",
                json!({ "content_type": "note", "title": "something else", "idempotency_key": "publish-1" }),
            ),
            PublishRequest {
                title: "something else".to_owned(),
                ..request.clone()
            },
        )
        .await
        .expect_err("conflict");
    assert_eq!(conflicting.code, ErrorCode::IdempotencyConflict);

    // Keys are scoped per actor: another agent may use the same key for its own request.
    let other = agent(service, "other").await;
    let others = service
        .publish(&other.caller, &metadata_with("publish", arguments), request)
        .await
        .expect("other actor");
    assert_ne!(others.id, first.id);
}

#[tokio::test]
async fn secrets_and_personal_data_are_rejected_without_being_echoed() {
    let alpha = TestInstance::start("alpha.test").await;
    let service = alpha.service();
    let author = agent(service, "author").await;
    let token = "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef0123";
    let error = service
        .publish(
            &author.caller,
            &metadata("publish"),
            PublishRequest {
                content_type: "configuration".to_owned(),
                title: "deploy config".to_owned(),
                structured_data: Some(json!({ "config": { "token": token } })),
                ..PublishRequest::default()
            },
        )
        .await
        .expect_err("secret");
    assert_eq!(error.code, ErrorCode::ContentRejected);
    assert_eq!(error.details["field"], "structured_data/config/token");
    assert_eq!(error.details["rule"], "api_token");
    assert!(!error.message.contains(token) && !error.details.to_string().contains(token));

    let email = service
        .publish(
            &author.caller,
            &metadata("publish"),
            PublishRequest {
                content_type: "note".to_owned(),
                title: "contact".to_owned(),
                body_markdown: "Ask jane.doe@gmail.com for access.".to_owned(),
                ..PublishRequest::default()
            },
        )
        .await
        .expect_err("personal e-mail");
    assert_eq!(email.code, ErrorCode::ContentRejected);
    assert_eq!(email.details["field"], "body_markdown");

    let user = agent(service, "user").await;
    let published = publish_procedure(service, &author, "clean", &[]).await;
    let in_note = service
        .report_usage(
            &user.caller,
            &metadata("report_usage"),
            UsageRequest {
                target: published.id.clone(),
                usage_type: "execution".to_owned(),
                result: "success".to_owned(),
                note: Some("connected with postgres://admin:hunter2@db.internal/prod".to_owned()),
                ..UsageRequest::default()
            },
        )
        .await
        .expect_err("password in URL");
    assert_eq!(in_note.code, ErrorCode::ContentRejected);
    assert_eq!(in_note.details["rule"], "password_in_url");
    let summary = service
        .trust_summary(&id(&published.revision_id))
        .await
        .expect("summary");
    assert_eq!(summary.evidence_records, 0, "nothing was written");
}

#[tokio::test]
async fn structured_data_is_validated_against_the_schema_of_its_type() {
    let alpha = TestInstance::start("alpha.test").await;
    let service = alpha.service();
    let author = agent(service, "author").await;
    let publish = |content_type: &str, data: serde_json::Value| PublishRequest {
        content_type: content_type.to_owned(),
        title: format!("a {content_type}"),
        structured_data: Some(data),
        ..PublishRequest::default()
    };
    let missing = service
        .publish(
            &author.caller,
            &metadata("publish"),
            publish("code", json!({ "runtime": "cpython 3.12" })),
        )
        .await
        .expect_err("code needs a language");
    assert_eq!(missing.code, ErrorCode::ValidationFailed);
    assert_eq!(missing.details["pointer"], "/language");
    service
        .publish(
            &author.caller,
            &metadata("publish"),
            publish(
                "code",
                json!({ "language": "python", "runtime": "cpython 3.12", "license": "MIT" }),
            ),
        )
        .await
        .expect("valid code");
    let bad_skill = service
        .publish(
            &author.caller,
            &metadata("publish"),
            publish("skill", json!({ "name": "x", "version": "one" })),
        )
        .await
        .expect_err("skill version");
    assert_eq!(bad_skill.details["pointer"], "/version");
    let not_object = service
        .publish(
            &author.caller,
            &metadata("publish"),
            publish("dataset", json!([1, 2, 3])),
        )
        .await
        .expect_err("not an object");
    assert_eq!(not_object.code, ErrorCode::ValidationFailed);
}

#[tokio::test]
async fn size_caps_are_enforced() {
    let alpha = TestInstance::start("alpha.test").await;
    let service = alpha.service();
    let author = agent(service, "author").await;
    let base = PublishRequest {
        content_type: "note".to_owned(),
        title: "big".to_owned(),
        ..PublishRequest::default()
    };
    let cases = [
        PublishRequest {
            body_markdown: "x".repeat(200 * 1024 + 1),
            ..base.clone()
        },
        PublishRequest {
            structured_data: Some(json!({ "blob": "y".repeat(64 * 1024) })),
            ..base.clone()
        },
        PublishRequest {
            claims: (0..51).map(|number| format!("Claim number {number} holds.")).collect(),
            ..base.clone()
        },
        PublishRequest {
            relations: (0..51)
                .map(|_| RelationRequest {
                    relation_type: "derived_from".to_owned(),
                    target: "cnt_01j9zq3k5m8n2p4r6t8v0w2x4y".to_owned(),
                    reason: None,
                })
                .collect(),
            ..base.clone()
        },
    ];
    for request in cases {
        let error = service
            .publish(&author.caller, &metadata("publish"), request)
            .await
            .expect_err("over a cap");
        assert_eq!(error.code, ErrorCode::ValidationFailed, "{error}");
    }
    service
        .publish(
            &author.caller,
            &metadata("publish"),
            PublishRequest {
                body_markdown: "x".repeat(200 * 1024),
                ..base
            },
        )
        .await
        .expect("exactly at the cap");
}

#[tokio::test]
async fn relations_subjects_and_sources_resolve_or_fail_clearly() {
    let alpha = TestInstance::start("alpha.test").await;
    let service = alpha.service();
    let author = agent(service, "author").await;
    let target = publish_procedure(service, &author, "old way", &[]).await;
    let missing = service
        .publish(
            &author.caller,
            &metadata("publish"),
            PublishRequest {
                content_type: "procedure".to_owned(),
                title: "new way".to_owned(),
                relations: vec![RelationRequest {
                    relation_type: "corrects".to_owned(),
                    target: "cnt_01j9zq3k5m8n2p4r6t8v0w2x4y".to_owned(),
                    reason: None,
                }],
                ..PublishRequest::default()
            },
        )
        .await
        .expect_err("unknown target");
    assert_eq!(missing.code, ErrorCode::NotFound);
    let bad_reason = service
        .publish(
            &author.caller,
            &metadata("publish"),
            PublishRequest {
                content_type: "procedure".to_owned(),
                title: "new way".to_owned(),
                relations: vec![RelationRequest {
                    relation_type: "alternative_to".to_owned(),
                    target: target.id.clone(),
                    reason: Some("prettier".to_owned()),
                }],
                ..PublishRequest::default()
            },
        )
        .await
        .expect_err("unknown reason");
    assert_eq!(bad_reason.code, ErrorCode::ValidationFailed);

    let subject_request = |title: &str| PublishRequest {
        content_type: "procedure".to_owned(),
        title: title.to_owned(),
        subjects: vec![SubjectReference::Named {
            name: "PostgreSQL".to_owned(),
            entity_type: "database".to_owned(),
            aliases: vec!["Postgres".to_owned()],
            description: None,
        }],
        sources: vec![SourceReference::Url {
            url: "https://www.postgresql.org/docs/current/routine-vacuuming.html?utm_source=x".to_owned(),
            title: Some("Routine vacuuming".to_owned()),
        }],
        relations: vec![RelationRequest {
            relation_type: "supersedes".to_owned(),
            target: target.id.clone(),
            reason: None,
        }],
        ..PublishRequest::default()
    };
    service
        .publish(&author.caller, &metadata("publish"), subject_request("vacuum"))
        .await
        .expect("publish with subjects");
    // The same author's `supersedes` is effective at once.
    let replaced = service.trust_summary(&id(&target.revision_id)).await.expect("summary");
    assert_eq!(replaced.status.as_str(), "superseded");
    let other = agent(service, "other").await;
    service
        .publish(
            &other.caller,
            &metadata("publish"),
            PublishRequest {
                subjects: vec![SubjectReference::Named {
                    name: "  postgresql ".to_owned(),
                    entity_type: "database".to_owned(),
                    aliases: vec![],
                    description: None,
                }],
                relations: vec![],
                ..subject_request("vacuum again")
            },
        )
        .await
        .expect("same entity matched by normalized name");
}

#[tokio::test]
async fn a_retraction_restores_the_exact_prior_trust() {
    let alpha = TestInstance::start("alpha.test").await;
    let service = alpha.service();
    let author = agent(service, "author").await;
    let published = publish_procedure(
        service,
        &author,
        "pin versions",
        &["Pinned versions make builds reproducible."],
    )
    .await;
    for number in 0..3 {
        let user = agent(service, &format!("user {number}")).await;
        use_it(
            service,
            &user,
            &published.id,
            if number == 2 { "partial" } else { "success" },
            true,
        )
        .await;
    }
    alpha.clock.advance(chrono::TimeDelta::days(3));
    // Evaluated now, three days after the last write, as every later summary in this test will be.
    let before = service
        .recompute_trust(&id(&published.revision_id))
        .await
        .expect("recompute");
    let doubter = agent(service, "doubter").await;
    let usage = use_it(service, &doubter, &published.id, "failure", true).await;
    let review = review_it(service, &doubter, &published.id, "false", 0.9, Some(&usage)).await;
    let during = service
        .trust_summary(&id(&published.revision_id))
        .await
        .expect("summary");
    assert!(during.value < before.value);

    let stranger = agent(service, "stranger").await;
    let refused = service
        .retract(&stranger.caller, &metadata("review"), &review, None)
        .await
        .expect_err("not the author");
    assert_eq!(refused.code, ErrorCode::NotAuthor);
    let wrong_tool = service
        .retract(&doubter.caller, &metadata("report_usage"), &review, None)
        .await
        .expect_err("rvw_ through report_usage");
    assert_eq!(wrong_tool.code, ErrorCode::InvalidTarget);

    service
        .retract(&doubter.caller, &metadata("review"), &review, None)
        .await
        .expect("retract review");
    service
        .retract(&doubter.caller, &metadata("report_usage"), &usage, None)
        .await
        .expect("retract usage");
    let after = service
        .trust_summary(&id(&published.revision_id))
        .await
        .expect("summary");
    assert_eq!(after.value.to_bits(), before.value.to_bits());
    assert_eq!(after.lower_bound.to_bits(), before.lower_bound.to_bits());
    assert_eq!(after.upper_bound.to_bits(), before.upper_bound.to_bits());
    assert_eq!(after.status.as_str(), before.status.as_str());
    assert_eq!(
        after.independent_confirmations as u32,
        before.counts.independent_confirmations.total()
    );
    assert_eq!(after.contradictions as u32, before.counts.contradictions.total());
    assert_eq!(
        service
            .recompute_trust(&id(&published.revision_id))
            .await
            .expect("recompute"),
        before
    );
    let again = service
        .retract(&doubter.caller, &metadata("review"), &review, None)
        .await
        .expect("idempotent");
    assert!(again.already_retracted);
}

#[tokio::test]
async fn a_newer_review_by_the_same_actor_supersedes_the_older_one() {
    let alpha = TestInstance::start("alpha.test").await;
    let service = alpha.service();
    let author = agent(service, "author").await;
    let published = publish_procedure(service, &author, "shard keys", &["Hash sharding spreads load evenly."]).await;
    let claim = &published.claims[0].id;
    let reviewer = agent(service, "reviewer").await;
    review_it(service, &reviewer, claim, "confirmed", 0.9, None).await;
    let positive = service.trust_summary(&id(claim)).await.expect("summary");
    assert_eq!((positive.independent_confirmations, positive.contradictions), (1, 0));
    alpha.clock.advance(chrono::TimeDelta::hours(1));
    review_it(service, &reviewer, claim, "misleading", 0.9, None).await;
    let negative = service.trust_summary(&id(claim)).await.expect("summary");
    assert_eq!((negative.independent_confirmations, negative.contradictions), (0, 1));
    assert_eq!(negative.evidence_records, 2, "both reviews stay in history");
}

#[tokio::test]
async fn reviews_grounded_in_usage_must_use_the_reviewers_own_use_of_the_target() {
    let alpha = TestInstance::start("alpha.test").await;
    let service = alpha.service();
    let author = agent(service, "author").await;
    let first = publish_procedure(service, &author, "first", &[]).await;
    let second = publish_procedure(service, &author, "second", &[]).await;
    let reviewer = agent(service, "reviewer").await;
    let other = agent(service, "other").await;
    let others_use = use_it(service, &other, &first.id, "success", true).await;
    let own_use_elsewhere = use_it(service, &reviewer, &second.id, "success", true).await;
    for usage in [&others_use, &own_use_elsewhere] {
        let error = service
            .review(
                &reviewer.caller,
                &metadata("review"),
                ReviewRequest {
                    target: first.id.clone(),
                    verdict: "confirmed".to_owned(),
                    confidence: 0.9,
                    based_on_usage: Some(usage.clone()),
                    ..ReviewRequest::default()
                },
            )
            .await
            .expect_err("not a grounding use");
        assert_eq!(error.code, ErrorCode::ValidationFailed);
    }
    let own_use = use_it(service, &reviewer, &first.id, "success", true).await;
    review_it(service, &reviewer, &first.id, "confirmed", 0.9, Some(&own_use)).await;
}

#[tokio::test]
async fn an_experience_records_one_usage_event_per_used_entry() {
    let alpha = TestInstance::start("alpha.test").await;
    let service = alpha.service();
    let author = agent(service, "author").await;
    let published = publish_procedure(
        service,
        &author,
        "backoff",
        &["Exponential backoff with jitter avoids thundering herds."],
    )
    .await;
    let practitioner = agent(service, "practitioner").await;
    let outcome = service
        .submit_experience(
            &practitioner.caller,
            &metadata("submit_experience"),
            ExperienceRequest {
                title: "Retry strategy under production load".to_owned(),
                summary: "Exponential backoff with jitter held at 500k events/day.".to_owned(),
                body_markdown: "We ran it for a month.".to_owned(),
                result: "success".to_owned(),
                real_world_use: true,
                context: Some(json!({ "environment": "production", "scale": "500k events/day" })),
                used: vec![
                    UsedRequest {
                        id: published.id.clone(),
                        result: "success".to_owned(),
                        note: None,
                    },
                    UsedRequest {
                        id: published.claims[0].id.clone(),
                        result: "partial".to_owned(),
                        note: Some("needed a patch for timeouts".to_owned()),
                    },
                ],
                ..ExperienceRequest::default()
            },
        )
        .await
        .expect("experience");
    assert_eq!(outcome.usage_ids.len(), 2);
    assert!(outcome.id.starts_with("cnt_"));
    let summary = service
        .trust_summary(&id(&published.revision_id))
        .await
        .expect("summary");
    assert_eq!(summary.real_world_confirmations, 1);

    let no_usage_scope = agent_of_with_scopes(service, practitioner.controller(), "writer only", "read,publish").await;
    let refused = service
        .submit_experience(
            &no_usage_scope.caller,
            &metadata("submit_experience"),
            ExperienceRequest {
                title: "t".to_owned(),
                result: "success".to_owned(),
                used: vec![UsedRequest {
                    id: published.id.clone(),
                    result: "success".to_owned(),
                    note: None,
                }],
                ..ExperienceRequest::default()
            },
        )
        .await
        .expect_err("needs usage scope");
    assert_eq!(refused.code, ErrorCode::ForbiddenScope);
    let unknown = service
        .submit_experience(
            &practitioner.caller,
            &metadata("submit_experience"),
            ExperienceRequest {
                title: "t".to_owned(),
                result: "success".to_owned(),
                used: vec![UsedRequest {
                    id: "cnt_01j9zq3k5m8n2p4r6t8v0w2x4y".to_owned(),
                    result: "success".to_owned(),
                    note: None,
                }],
                ..ExperienceRequest::default()
            },
        )
        .await
        .expect_err("unknown used item");
    assert_eq!(unknown.code, ErrorCode::NotFound);
}

#[tokio::test]
async fn ratings_are_validated_and_aggregated_per_context() {
    let alpha = TestInstance::start("alpha.test").await;
    let service = alpha.service();
    let author = agent(service, "author").await;
    let published = publish_procedure(service, &author, "queue design", &[]).await;
    let rate = |target: &str, dimension: &str, score: f64| RateRequest {
        target: target.to_owned(),
        dimension: dimension.to_owned(),
        score,
        confidence: 0.9,
        context: Some(json!({ "Language": "Python", "note": "free text is ignored" })),
        ..RateRequest::default()
    };
    let rater = agent(service, "rater").await;
    for (request, code) in [
        (rate(&published.id, "Reliability", 80.0), ErrorCode::ValidationFailed),
        (rate(&published.id, "reliability", 101.0), ErrorCode::ValidationFailed),
        (
            rate(&published.revision_id, "reliability", 80.0),
            ErrorCode::InvalidTarget,
        ),
        (
            rate("ent_01j9zq3k5m8n2p4r6t8v0w2x4y", "reliability", 80.0),
            ErrorCode::NotFound,
        ),
        (
            RateRequest {
                context: Some(json!({ "language": ["python"] })),
                ..rate(&published.id, "reliability", 80.0)
            },
            ErrorCode::ValidationFailed,
        ),
    ] {
        let error = service
            .rate(&rater.caller, &metadata("rate"), request)
            .await
            .expect_err("refused");
        assert_eq!(error.code, code, "{error}");
    }
    let rating = service
        .rate(
            &rater.caller,
            &metadata("rate"),
            rate(&published.id, "reliability", 80.0),
        )
        .await
        .expect("rating");
    assert!(rating.id.starts_with("rat_"));
    let retracted = service
        .retract(&rater.caller, &metadata("rate"), &rating.id, None)
        .await
        .expect("retract");
    assert_eq!(retracted.status, "retracted");
}

#[tokio::test]
async fn the_write_limit_is_shared_by_every_agent_of_a_root_controller() {
    let alpha = TestInstance::start_with("alpha.test", |config| config.writes_per_hour = 3).await;
    let service = alpha.service();
    let owner = controller(service, "owner").await;
    let first = agent_of(service, &owner, "first").await;
    let second = agent_of(service, &owner, "second").await;
    publish_procedure(service, &first, "one", &[]).await;
    publish_procedure(service, &second, "two", &[]).await;
    alpha.clock.advance(chrono::TimeDelta::minutes(10));
    publish_procedure(service, &first, "three", &[]).await;
    let limited = service
        .publish(
            &second.caller,
            &metadata("publish"),
            PublishRequest {
                content_type: "note".to_owned(),
                title: "four".to_owned(),
                ..PublishRequest::default()
            },
        )
        .await
        .expect_err("limit reached");
    assert_eq!(limited.code, ErrorCode::RateLimited);
    // Writes count per minute and the window holds the current minute and the sixty before it: the two writes of
    // 09:00 leave it when 10:01 begins, 51 minutes from 09:10.
    assert_eq!(
        limited.details["retry_after"], 3060,
        "the oldest minute's writes leave the window in 51 minutes"
    );
    let whoami = service.whoami(&second.caller).await.expect("whoami");
    assert_eq!(whoami.allowance.remaining, 0);

    let independent = agent(service, "independent").await;
    publish_procedure(service, &independent, "unaffected", &[]).await;

    alpha.clock.advance(chrono::TimeDelta::minutes(51));
    publish_procedure(service, &second, "after the window", &[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_concurrent_clients_leave_trust_equal_to_a_full_recomputation() {
    let alpha = TestInstance::start("alpha.test").await;
    let service = alpha.service().clone();
    let author = agent(&service, "author").await;
    let published = publish_procedure(&service, &author, "concurrency", &["Row locks serialize writers."]).await;
    let mut writers = Vec::new();
    for client in 0..8 {
        writers.push(agent(&service, &format!("client {client}")).await);
    }
    let target = Arc::new(published.clone());
    let mut tasks = Vec::new();
    for (client, writer) in writers.into_iter().enumerate() {
        let service = service.clone();
        let target = target.clone();
        tasks.push(tokio::spawn(async move {
            for round in 0..6 {
                let result = ["success", "failure", "partial"][(client + round) % 3];
                let usage = use_it(&service, &writer, &target.id, result, round % 2 == 0).await;
                if round == 3 {
                    service
                        .retract(&writer.caller, &metadata("report_usage"), &usage, None)
                        .await
                        .expect("retract");
                }
                if round == 5 {
                    review_it(&service, &writer, &target.claims[0].id, "mostly_correct", 0.7, None).await;
                }
            }
        }));
    }
    for task in tasks {
        task.await.expect("client finished");
    }
    for target_id in [&published.revision_id, &published.claims[0].id] {
        let stored = service.trust_summary(&id(target_id)).await.expect("summary");
        let recomputed = service.recompute_trust(&id(target_id)).await.expect("recompute");
        assert_eq!(stored.value.to_bits(), recomputed.value.to_bits(), "{target_id}");
        assert_eq!(stored.lower_bound.to_bits(), recomputed.lower_bound.to_bits());
        assert_eq!(stored.status.as_str(), recomputed.status.as_str());
        assert_eq!(
            stored.independent_confirmations,
            i32::try_from(recomputed.counts.independent_confirmations.total()).expect("small")
        );
    }
    let revision = service
        .trust_summary(&id(&published.revision_id))
        .await
        .expect("summary");
    assert_eq!(revision.evidence_records, 48);
}

#[tokio::test]
async fn judged_evidence_moves_reputation_in_the_next_daily_snapshot() {
    let alpha = TestInstance::start("alpha.test").await;
    let service = alpha.service();
    let author = agent(service, "author").await;
    let published = publish_procedure(service, &author, "warm caches", &[]).await;
    let early_reviewer = agent(service, "early reviewer").await;
    review_it(service, &early_reviewer, &published.id, "confirmed", 0.8, None).await;
    assert_eq!(
        service
            .trust_summary(&id(&published.revision_id))
            .await
            .expect("summary")
            .status
            .as_str(),
        "unverified"
    );
    // A real-world success decides the item as supported; judged without the reviewer, the decision stands, so
    // the reviewer's confirmation, made before the decision, agreed with it.
    alpha.clock.advance(chrono::TimeDelta::hours(1));
    let user = agent(service, "user").await;
    use_it(service, &user, &published.id, "success", true).await;
    assert_eq!(
        service
            .trust_summary(&id(&published.revision_id))
            .await
            .expect("summary")
            .status
            .as_str(),
        "supported"
    );
    let today = service.whoami(&early_reviewer.caller).await.expect("whoami");
    assert_eq!(today.reputation, 0.5, "today's snapshot was taken before the decision");
    alpha.clock.advance(chrono::TimeDelta::days(1));
    let tomorrow = service.whoami(&early_reviewer.caller).await.expect("whoami");
    assert!(tomorrow.reputation > 0.5, "{}", tomorrow.reputation);
    let unjudged = service.whoami(&user.caller).await.expect("whoami");
    assert_eq!(
        unjudged.reputation, 0.5,
        "without the user the item was undecided: no observation"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_publishes_naming_the_same_new_subjects_and_claims_all_succeed_and_share_them() {
    let alpha = TestInstance::start_with("alpha.test", |config| config.writes_per_hour = 1_000).await;
    let service = alpha.service().clone();
    const ROUNDS: usize = 12;
    let mut tasks = Vec::new();
    for client in 0..8 {
        let author = agent(&service, &format!("author {client}")).await;
        let service = service.clone();
        tasks.push(tokio::spawn(async move {
            let mut claim_ids = Vec::new();
            // Every round names a subject and a claim nobody has written yet, so the clients race to create them.
            for round in 0..ROUNDS {
                let outcome = service
                    .publish(
                        &author.caller,
                        &metadata("publish"),
                        PublishRequest {
                            content_type: "procedure".to_owned(),
                            title: format!("Rotating signing secret {round}, variant {client}"),
                            subjects: vec![SubjectReference::Named {
                                name: format!("Brand-new Payment Gateway {round}"),
                                entity_type: "service".to_owned(),
                                aliases: Vec::new(),
                                description: None,
                            }],
                            claims: vec![format!("Gateway {round} accepts both secrets for 24 hours.")],
                            ..PublishRequest::default()
                        },
                    )
                    .await;
                // Two writers may both find the subject missing and both create it; the loser must retry and
                // match the winner's entity instead of failing with an internal error.
                let outcome = outcome.unwrap_or_else(|error| panic!("round {round} of client {client}: {error:?}"));
                claim_ids.push(outcome.claims[0].id.clone());
            }
            claim_ids
        }));
    }
    let mut claims_by_client = Vec::new();
    for task in tasks {
        claims_by_client.push(task.await.expect("client finished"));
    }
    for round in 0..ROUNDS {
        let mut claim_ids: Vec<&String> = claims_by_client.iter().map(|claims| &claims[round]).collect();
        claim_ids.dedup();
        assert_eq!(
            claim_ids.len(),
            1,
            "round {round}: one claim, matched by every other publish"
        );
    }
}
