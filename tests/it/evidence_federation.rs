//! Federation part 3, through the in-process network: evidence crosses realms as self-verifying passports. A peer's
//! usage, reviews and ratings count on every other realm by the receiver's own trust in their origin (never the
//! relay's), discounted as trust model §2.5 says; only the origin retracts its records, and a retraction restores
//! the value bit for bit; a block stops them counting on the next read; evidence about local content never leaves;
//! a record that arrives before its target counts once the target arrives, exactly once.

use chrono::{DateTime, TimeDelta, Utc};
use http::StatusCode;
use interai::apub::discovery::InstanceUrls;
use interai::apub::objects::{activity_document, activity_kind, signed_object};
use interai::clock::Clock;
use interai::domain::evidence::{UsageOutcome, Verdict};
use interai::domain::knowledge::SpaceVisibility;
use interai::domain::replication::{EvidenceFacts, EvidencePassport, EvidenceRetraction, FederatedObject};
use interai::domain::{ContextKey, IdKind, PeerLevel, PeerState, PublicId};
use interai::service::content::PublishRequest;
use interai::service::spaces::NewSpace;
use interai::trust::{Assessment, Explanation, InstancePartyExplanation, PartyExplanation};
use serde_json::{Value, json};

use crate::federation::peered;
use crate::fixtures::{agent, metadata, publish_procedure, review_it, use_it};
use crate::harness::DirectConnection;
use crate::replication::{metrics_of, outbox_activity_of, post_activity};
use crate::support::network::{Network, Node};

/// A new ID of `kind`, as another realm would make it.
fn fresh_id(kind: IdKind) -> PublicId {
    PublicId::from_ulid(kind, ulid::Ulid::generate())
}

/// `node`'s full explanation of `target`, evaluated now.
async fn explanation(node: &Node, target: &str) -> Explanation {
    node.service()
        .explain_trust(&PublicId::parse(target).expect("an ID"))
        .await
        .expect("the target is held")
}

async fn assessment(node: &Node, target: &str) -> Assessment {
    explanation(node, target).await.assessment
}

/// The row of `origin` in an explanation, if it has evidence there.
fn instance_row<'a>(explanation: &'a Explanation, origin: &str) -> Option<&'a InstancePartyExplanation> {
    explanation.parties.iter().find_map(|party| match party {
        PartyExplanation::Instance(row) if row.origin == origin => Some(row),
        _ => None,
    })
}

/// The value stored for `target` on `node`: what search sorts and filters by.
async fn stored_value(node: &Node, target: &str) -> f64 {
    node.service()
        .trust_summary(&PublicId::parse(target).expect("an ID"))
        .await
        .expect("a summary")
        .value
}

/// Checks that the live assessment of `target` on `node` is what a full recomputation from the rows gives.
async fn assert_matches_full_recomputation(node: &Node, target: &str) -> Assessment {
    let live = assessment(node, target).await;
    let recomputed = node
        .service()
        .recompute_trust(&PublicId::parse(target).expect("an ID"))
        .await
        .expect("recomputed");
    assert_eq!(live, recomputed, "{target} on {}", node.realm);
    live
}

/// An evidence object of `origin` signed with its key, in an activity `sender` sends (a relay when they differ).
async fn evidence_activity(origin: &Node, sender: &Node, object: &FederatedObject, activity_key: &str) -> Value {
    let key = origin.federation().signing_key().await.expect("key");
    let origin_urls = InstanceUrls { base: origin.url() };
    let sender_urls = InstanceUrls { base: sender.url() };
    let signed = signed_object(&origin_urls, object, &key).expect("signed");
    activity_document(
        &sender_urls,
        activity_key,
        &activity_kind(object),
        signed,
        DateTime::<Utc>::UNIX_EPOCH,
    )
}

/// A usage passport of `origin` about `target` (a revision of `content`), made by an actor and controller of its own.
fn usage_passport(origin: &Node, target: &str, content: &str, created_at: DateTime<Utc>) -> EvidencePassport {
    EvidencePassport {
        record_id: fresh_id(IdKind::Usage),
        origin: origin.realm.clone(),
        target_id: PublicId::parse(target).expect("target"),
        target_content_id: Some(PublicId::parse(content).expect("content")),
        actor_id: fresh_id(IdKind::Agent),
        root_controller_id: fresh_id(IdKind::User),
        created_at,
        facts: EvidenceFacts::Usage {
            usage_type: "implementation".to_owned(),
            result: UsageOutcome::Success,
            real_world_use: true,
            context_key: ContextKey::all(),
        },
    }
}

/// The value a target with no first-party evidence has when one remote real-world success (1 unit of belief) comes
/// from an origin trusted `t`, by §2.5: λ = W·t / (W + (1 − t)·m) with W = 2 and m = 1, far under the cap.
fn value_with_one_remote_success(t: f64) -> f64 {
    let discount = 2.0 * t / (2.0 + (1.0 - t));
    (1.0 + discount) / (2.0 + discount)
}

#[tokio::test]
async fn a_peer_s_usage_counts_by_the_discounted_amount_a_block_stops_it_and_its_retraction_restores_the_value() {
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    peered(&network, "alpha.test", "beta.test").await;
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));
    let author = agent(alpha.service(), "author").await;
    let item = publish_procedure(alpha.service(), &author, "rotate the signing key", &[]).await;
    network.settle().await;
    let before = assert_matches_full_recomputation(alpha, &item.revision_id).await;
    assert_eq!(before.value, 0.5, "no evidence yet");

    // An agent of beta uses alpha's item in production: the record travels to alpha with beta's proof.
    let beta_agent = agent(beta.service(), "beta user").await;
    let usage = use_it(beta.service(), &beta_agent, &item.id, "success", true).await;
    network.settle().await;

    let explained = explanation(alpha, &item.revision_id).await;
    let row = instance_row(&explained, "beta.test").expect("beta's bucket");
    assert_eq!((row.records, row.remote_controllers), (1, 1));
    assert_eq!(row.instance_trust, 0.5, "alpha trusts beta at its level, standard");
    assert_eq!(row.raw_belief, 1.0, "a real-world success weighs one unit");
    assert!(
        (row.discount_factor - 0.4).abs() < 1e-12,
        "λ = 2·0.5 / (2 + 0.5·1) = 0.4"
    );
    let counted = assert_matches_full_recomputation(alpha, &item.revision_id).await;
    assert!((counted.evidence_units.remote.belief - 0.4).abs() < 1e-12);
    assert!((counted.value - value_with_one_remote_success(0.5)).abs() < 1e-12);
    assert_eq!(counted.counts.independent_confirmations.remote, 1);
    assert_eq!(counted.counts.independent_confirmations.first_party, 0);

    // On beta the same record is first-party evidence about remote content.
    let on_beta = assert_matches_full_recomputation(beta, &item.revision_id).await;
    assert_eq!(on_beta.evidence_units.first_party.belief, 1.0);

    // A block stops it counting on the next read; lifting the block brings it back.
    alpha
        .federation()
        .block_peer("beta.test", "testing", None)
        .await
        .expect("blocked");
    let blocked = assert_matches_full_recomputation(alpha, &item.revision_id).await;
    assert_eq!(blocked.value.to_bits(), before.value.to_bits());
    // What search sorts and filters by follows at once (the stored assessment of every target of beta's evidence).
    assert_eq!(stored_value(alpha, &item.revision_id).await, blocked.value);
    let explained = explanation(alpha, &item.revision_id).await;
    assert_eq!(
        instance_row(&explained, "beta.test")
            .expect("still shown")
            .instance_trust,
        0.0
    );
    alpha.federation().unblock_peer("beta.test").await.expect("unblocked");
    let unblocked = assert_matches_full_recomputation(alpha, &item.revision_id).await;
    assert_eq!(unblocked.value.to_bits(), counted.value.to_bits());

    // A level change moves it at once.
    alpha
        .federation()
        .set_peer_level("beta.test", PeerLevel::High)
        .await
        .expect("level set");
    let high = assert_matches_full_recomputation(alpha, &item.revision_id).await;
    assert!((high.value - value_with_one_remote_success(0.7)).abs() < 1e-12);
    assert_eq!(stored_value(alpha, &item.revision_id).await, high.value);
    alpha
        .federation()
        .set_peer_level("beta.test", PeerLevel::Standard)
        .await
        .expect("level set");

    // Beta's agent retracts: the Undo restores alpha's value bit for bit.
    beta.service()
        .retract(&beta_agent.caller, &metadata("report_usage"), &usage, None)
        .await
        .expect("retracted");
    network.settle().await;
    let after = assert_matches_full_recomputation(alpha, &item.revision_id).await;
    assert_eq!(after.value.to_bits(), before.value.to_bits());
    assert_eq!(after, before);
    assert_eq!(explanation(alpha, &item.revision_id).await.excluded.retracted, 1);
}

#[tokio::test]
async fn only_a_record_s_origin_retracts_it_and_a_relay_counts_by_the_origin_s_trust() {
    let network = Network::start_configured(&["alpha.test", "beta.test", "gamma.test"], |_, config| {
        // Nothing moves but what the test sends, so the relayed copy is the one alpha counts.
        config.federation_push = false;
    })
    .await;
    peered(&network, "alpha.test", "beta.test").await;
    peered(&network, "alpha.test", "gamma.test").await;
    peered(&network, "beta.test", "gamma.test").await;
    let (alpha, beta, gamma) = (
        network.node("alpha.test"),
        network.node("beta.test"),
        network.node("gamma.test"),
    );
    alpha
        .federation()
        .set_peer_level("beta.test", PeerLevel::High)
        .await
        .expect("level set");
    alpha
        .federation()
        .set_peer_level("gamma.test", PeerLevel::Low)
        .await
        .expect("level set");
    let author = agent(alpha.service(), "author").await;
    let item = publish_procedure(alpha.service(), &author, "drain the queue", &[]).await;
    network.settle().await;

    // Gamma's record, relayed by beta with gamma's proof intact, counts by alpha's trust in gamma (low, 0.3) and
    // fills gamma's bucket, not beta's.
    let now = network.clock.now();
    let passport = usage_passport(gamma, &item.revision_id, &item.id, now);
    let object = FederatedObject::Evidence(Box::new(passport.clone()));
    let relayed = evidence_activity(gamma, beta, &object, "relayed-usage").await;
    let (status, body) = post_activity(beta, alpha, &relayed).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    network.settle().await;
    let explained = explanation(alpha, &item.revision_id).await;
    let row = instance_row(&explained, "gamma.test").expect("gamma's bucket");
    assert_eq!((row.records, row.instance_trust), (1, 0.3));
    assert!(
        instance_row(&explained, "beta.test").is_none(),
        "the relay holds nothing"
    );
    let relayed_value = assert_matches_full_recomputation(alpha, &item.revision_id).await;
    assert!((relayed_value.value - value_with_one_remote_success(0.3)).abs() < 1e-12);

    // A second copy of the same record, straight from gamma, changes nothing.
    let direct = evidence_activity(gamma, gamma, &object, "direct-usage").await;
    let (status, body) = post_activity(gamma, alpha, &direct).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    network.settle().await;
    assert_eq!(
        assert_matches_full_recomputation(alpha, &item.revision_id).await,
        relayed_value
    );
    let metrics = metrics_of(alpha).await;
    for counted in [
        r#"interai_federation_remote_evidence_total{origin="gamma.test",outcome="applied"} 1"#,
        r#"interai_federation_remote_evidence_total{origin="gamma.test",outcome="ignored"} 1"#,
    ] {
        assert!(metrics.contains(counted), "{counted} in\n{metrics}");
    }

    // Beta cannot retract gamma's record: a retraction signed by beta is refused when applied.
    let forged = FederatedObject::Retraction(EvidenceRetraction {
        record_id: passport.record_id.clone(),
        origin: "beta.test".to_owned(),
        retracted_at: now,
    });
    let activity = evidence_activity(beta, beta, &forged, "forged-undo").await;
    let (status, body) = post_activity(beta, alpha, &activity).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    network.settle().await;
    assert_eq!(
        assert_matches_full_recomputation(alpha, &item.revision_id).await,
        relayed_value
    );
    // Nor one signed by beta in gamma's name: beta's key does not vouch for gamma.
    let mut in_gammas_name = evidence_activity(beta, beta, &forged, "forged-undo-2").await;
    in_gammas_name["object"]["realm"] = json!("gamma.test");
    let (status, body) = post_activity(beta, alpha, &in_gammas_name).await;
    assert_eq!(
        (status, body["reason"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_origin_proof")),
    );

    // Nor a record of alpha's own agents.
    let alpha_agent = agent(alpha.service(), "alpha user").await;
    let own = use_it(alpha.service(), &alpha_agent, &item.id, "success", true).await;
    let with_own = assert_matches_full_recomputation(alpha, &item.revision_id).await;
    let forged = FederatedObject::Retraction(EvidenceRetraction {
        record_id: PublicId::parse(&own).expect("id"),
        origin: "beta.test".to_owned(),
        retracted_at: now,
    });
    let activity = evidence_activity(beta, beta, &forged, "forged-undo-3").await;
    let (status, body) = post_activity(beta, alpha, &activity).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    network.settle().await;
    assert_eq!(
        assert_matches_full_recomputation(alpha, &item.revision_id).await,
        with_own
    );

    // Gamma's own retraction, relayed by beta, is taken: the value is what alpha's own record alone gives.
    let retraction = FederatedObject::Retraction(EvidenceRetraction {
        record_id: passport.record_id.clone(),
        origin: "gamma.test".to_owned(),
        retracted_at: now,
    });
    let activity = evidence_activity(gamma, beta, &retraction, "relayed-undo").await;
    let (status, body) = post_activity(beta, alpha, &activity).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    network.settle().await;
    let explained = explanation(alpha, &item.revision_id).await;
    assert!(instance_row(&explained, "gamma.test").is_none_or(|row| row.records == 0));
    let after = assert_matches_full_recomputation(alpha, &item.revision_id).await;
    assert_eq!(after.evidence_units.remote.belief, 0.0);
}

#[tokio::test]
async fn a_relayed_record_of_a_pending_origin_is_held_inert_and_counts_once_the_origin_becomes_a_peer() {
    let network = Network::start_configured(&["alpha.test", "beta.test", "gamma.test"], |_, config| {
        config.federation_push = false;
    })
    .await;
    peered(&network, "alpha.test", "beta.test").await;
    peered(&network, "beta.test", "gamma.test").await;
    let (alpha, beta, gamma) = (
        network.node("alpha.test"),
        network.node("beta.test"),
        network.node("gamma.test"),
    );
    // Alpha asked gamma to peer (its admin compared gamma's key); gamma has not answered.
    alpha.add_peer(gamma, PeerLevel::Standard).await;
    network.settle().await;
    assert_eq!(alpha.peer(gamma).await.peer.state, PeerState::PendingOut);
    let author = agent(alpha.service(), "author").await;
    let item = publish_procedure(alpha.service(), &author, "rotate the logs", &[]).await;
    network.settle().await;
    let before = assert_matches_full_recomputation(alpha, &item.revision_id).await;

    // Gamma's record, relayed by beta with gamma's proof: held and shown under gamma, weighing nothing (§2.15).
    let passport = usage_passport(gamma, &item.revision_id, &item.id, network.clock.now());
    let object = FederatedObject::Evidence(Box::new(passport.clone()));
    let relayed = evidence_activity(gamma, beta, &object, "relayed-usage").await;
    let (status, body) = post_activity(beta, alpha, &relayed).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    network.settle().await;
    let explained = explanation(alpha, &item.revision_id).await;
    let row = instance_row(&explained, "gamma.test").expect("gamma's records are shown");
    assert_eq!((row.records, row.instance_trust, row.belief), (1, 0.0, 0.0));
    let inert = assert_matches_full_recomputation(alpha, &item.revision_id).await;
    assert_eq!(inert.value.to_bits(), before.value.to_bits());
    assert_eq!(inert.evidence_units, before.evidence_units);
    assert_eq!(
        stored_value(alpha, &item.revision_id).await.to_bits(),
        before.value.to_bits()
    );
    let metrics = metrics_of(alpha).await;
    let counted = r#"interai_federation_remote_evidence_total{origin="gamma.test",outcome="inert"} 1"#;
    assert!(metrics.contains(counted), "{counted} in\n{metrics}");

    // Gamma approves: the record counts at once, by alpha's trust in gamma, in reads and in what search stores.
    let fingerprint = gamma.peer(alpha).await.keys[0].fingerprint.clone();
    gamma
        .federation()
        .approve_peer(&alpha.realm, None, Some(&fingerprint))
        .await
        .expect("approve");
    network.settle().await;
    assert_eq!(alpha.peer(gamma).await.peer.state, PeerState::Active);
    let counted = assert_matches_full_recomputation(alpha, &item.revision_id).await;
    assert!((counted.value - value_with_one_remote_success(0.5)).abs() < 1e-12);
    assert_eq!(
        stored_value(alpha, &item.revision_id).await.to_bits(),
        counted.value.to_bits()
    );

    // A blocked origin's relayed records are refused: a block takes nothing from the peer, even through another.
    alpha
        .federation()
        .block_peer("gamma.test", "a test of blocks", None)
        .await
        .expect("blocked");
    let second = usage_passport(gamma, &item.revision_id, &item.id, network.clock.now());
    let object = FederatedObject::Evidence(Box::new(second));
    let relayed = evidence_activity(gamma, beta, &object, "relayed-usage-2").await;
    let (status, body) = post_activity(beta, alpha, &relayed).await;
    assert_eq!(
        (status, body["reason"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_origin_proof")),
        "{body}"
    );
}

#[tokio::test]
async fn a_future_dated_record_decays_from_its_receipt_and_an_ungrounded_or_tampered_one_gains_nothing() {
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    peered(&network, "alpha.test", "beta.test").await;
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));
    let author = agent(alpha.service(), "author").await;
    let item = publish_procedure(
        alpha.service(),
        &author,
        "vacuum the database",
        &["vacuum reclaims space"],
    )
    .await;
    network.settle().await;

    // Dated 300 days ahead: it counts as received now, and a year later it has lost half its weight (h = 365 d).
    let now = network.clock.now();
    let passport = usage_passport(beta, &item.revision_id, &item.id, now + TimeDelta::days(300));
    let object = FederatedObject::Evidence(Box::new(passport.clone()));
    let activity = evidence_activity(beta, beta, &object, "future-usage").await;
    let (status, body) = post_activity(beta, alpha, &activity).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    network.settle().await;
    let row_now = instance_row(&explanation(alpha, &item.revision_id).await, "beta.test")
        .expect("beta's bucket")
        .raw_belief;
    assert_eq!(row_now, 1.0);
    network.advance(TimeDelta::days(365));
    let row_later = instance_row(&explanation(alpha, &item.revision_id).await, "beta.test")
        .expect("beta's bucket")
        .raw_belief;
    assert!((row_later - 0.5).abs() < 1e-9, "decays from receipt: {row_later}");
    network.advance(TimeDelta::days(-365));

    // A review naming a usage alpha does not hold counts as ungrounded; one naming beta's own usage of the same
    // target by the same actor is grounded in it (§2.15).
    let claim = &item.claims[0].id;
    let review = |based_on_usage: Option<PublicId>, actor: PublicId, controller: PublicId| {
        FederatedObject::Evidence(Box::new(EvidencePassport {
            record_id: fresh_id(IdKind::Review),
            origin: "beta.test".to_owned(),
            target_id: PublicId::parse(claim).expect("claim"),
            target_content_id: None,
            actor_id: actor,
            root_controller_id: controller,
            created_at: now,
            facts: EvidenceFacts::Review {
                verdict: Verdict::Confirmed,
                confidence: 1.0,
                based_on_usage,
            },
        }))
    };
    let ungrounded = review(
        Some(fresh_id(IdKind::Usage)),
        fresh_id(IdKind::Agent),
        fresh_id(IdKind::User),
    );
    let activity = evidence_activity(beta, beta, &ungrounded, "ungrounded-review").await;
    let (status, body) = post_activity(beta, alpha, &activity).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    network.settle().await;
    let ungrounded_belief = instance_row(&explanation(alpha, claim).await, "beta.test")
        .expect("beta's bucket")
        .raw_belief;
    assert!(
        (ungrounded_belief - 0.5).abs() < 1e-12,
        "an ungrounded review weighs 0.5: {ungrounded_belief}"
    );
    let grounded = review(
        Some(passport.record_id.clone()),
        passport.actor_id.clone(),
        fresh_id(IdKind::User),
    );
    let activity = evidence_activity(beta, beta, &grounded, "grounded-review").await;
    let (status, body) = post_activity(beta, alpha, &activity).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    network.settle().await;
    let explained = explanation(alpha, claim).await;
    let row = instance_row(&explained, "beta.test").expect("beta's bucket");
    // Two controllers: 0.5 ungrounded plus 0.5 × 1.8 grounded in a real-world use.
    assert!((row.raw_belief - (0.5 + 0.9)).abs() < 1e-12, "{}", row.raw_belief);
    assert_matches_full_recomputation(alpha, claim).await;

    // Tampered after signing: refused at the inbox, nothing stored.
    let tampered_object = FederatedObject::Evidence(Box::new(usage_passport(beta, &item.revision_id, &item.id, now)));
    let mut tampered = evidence_activity(beta, beta, &tampered_object, "tampered-usage").await;
    tampered["object"]["result"] = json!("failure");
    let (status, body) = post_activity(beta, alpha, &tampered).await;
    assert_eq!(
        (status, body["reason"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_origin_proof"))
    );
    network.settle().await;
    let records = instance_row(&explanation(alpha, &item.revision_id).await, "beta.test")
        .expect("beta's bucket")
        .records;
    assert_eq!(records, 1, "only the future-dated record");
}

#[tokio::test]
async fn evidence_about_local_content_never_leaves_and_a_record_naming_it_is_refused() {
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    peered(&network, "alpha.test", "beta.test").await;
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));
    let admin = alpha.service().realm_admin().await.expect("admin");
    let space = alpha
        .service()
        .create_space(
            &admin,
            NewSpace {
                name: "internal".to_owned(),
                description: None,
                visibility: SpaceVisibility::Local,
            },
        )
        .await
        .expect("space")
        .id
        .into_string();
    let author = agent(alpha.service(), "author").await;
    let local = alpha
        .service()
        .publish(
            &author.caller,
            &metadata("publish"),
            PublishRequest {
                content_type: "procedure".to_owned(),
                title: "restart the internal billing job".to_owned(),
                summary: "How to restart it.".to_owned(),
                body_markdown: "# Restart\n\nRun the job again.\n".to_owned(),
                space: Some(space),
                ..PublishRequest::default()
            },
        )
        .await
        .expect("published");
    let user = agent(alpha.service(), "user").await;
    use_it(alpha.service(), &user, &local.id, "success", true).await;
    review_it(alpha.service(), &user, &local.id, "confirmed", 0.9, None).await;
    network.settle().await;
    let head = alpha.federation().outbox_head().await.expect("head");
    let entries = alpha.federation().outbox_entries(0, 100).await.expect("outbox");
    assert!(
        entries
            .iter()
            .all(|entry| !entry.event.event.change.object_id().starts_with("use_")
                && !entry.event.event.change.object_id().starts_with("rvw_")),
        "no evidence about local content in the outbox (head {head})"
    );

    // Beta names alpha's local revision in a record of its own: refused when applied, nothing counted.
    let passport = usage_passport(beta, &local.revision_id, &local.id, network.clock.now());
    let object = FederatedObject::Evidence(Box::new(passport));
    let activity = evidence_activity(beta, beta, &object, "local-usage").await;
    let (status, body) = post_activity(beta, alpha, &activity).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    network.settle().await;
    assert!(instance_row(&explanation(alpha, &local.revision_id).await, "beta.test").is_none());
    let counted = r#"interai_federation_remote_evidence_total{origin="beta.test",outcome="refused"} 1"#;
    assert!(metrics_of(alpha).await.contains(counted));
}

#[tokio::test]
async fn a_record_that_arrives_before_its_target_counts_once_the_target_arrives() {
    let network = Network::start(&["alpha.test", "beta.test", "gamma.test"]).await;
    peered(&network, "alpha.test", "beta.test").await;
    peered(&network, "alpha.test", "gamma.test").await;
    peered(&network, "beta.test", "gamma.test").await;
    let (alpha, beta, gamma) = (
        network.node("alpha.test"),
        network.node("beta.test"),
        network.node("gamma.test"),
    );
    // Beta is down while alpha publishes and gamma uses the item.
    network.switchboard.take_down("beta.test");
    let author = agent(alpha.service(), "author").await;
    let item = alpha
        .service()
        .publish(
            &author.caller,
            &metadata("publish"),
            PublishRequest {
                content_type: "procedure".to_owned(),
                title: "compact the event log".to_owned(),
                summary: "How to compact it.".to_owned(),
                body_markdown: "# Compact\n\nRun the compactor.\n".to_owned(),
                subjects: vec![interai::service::references::SubjectReference::Named {
                    name: "event log".to_owned(),
                    entity_type: "tool".to_owned(),
                    aliases: Vec::new(),
                    description: None,
                }],
                ..PublishRequest::default()
            },
        )
        .await
        .expect("published");
    network.settle().await;
    let entity = alpha
        .service()
        .find_entity_by_name("tool", "event log")
        .await
        .expect("the subject")
        .id
        .into_string();
    let gamma_agent = agent(gamma.service(), "gamma user").await;
    use_it(gamma.service(), &gamma_agent, &item.id, "success", true).await;
    rate_usefulness(gamma, &gamma_agent, &entity, json!({}), 70.0).await;
    network.settle().await;

    // Beta comes back while alpha is down: gamma's record arrives first and waits for its target.
    network.switchboard.bring_up("beta.test");
    network.switchboard.take_down("alpha.test");
    for _ in 0..20 {
        network.advance(TimeDelta::hours(1));
        network.settle().await;
    }
    assert!(
        beta.service()
            .explain_trust(&PublicId::parse(&item.revision_id).expect("id"))
            .await
            .is_err(),
        "beta does not hold the item yet"
    );

    network.switchboard.bring_up("alpha.test");
    for _ in 0..20 {
        network.advance(TimeDelta::hours(1));
        network.settle().await;
    }
    let explained = explanation(beta, &item.revision_id).await;
    let row = instance_row(&explained, "gamma.test").expect("gamma's record counts on beta");
    assert_eq!(row.records, 1, "exactly once");
    assert_matches_full_recomputation(beta, &item.revision_id).await;
    let on_alpha = explanation(alpha, &item.revision_id).await;
    assert_eq!(instance_row(&on_alpha, "gamma.test").expect("and on alpha").records, 1);

    // Gamma's rating of the item's subject waited too: beta's aggregate holds it once the entity arrived.
    let reader = agent(beta.service(), "reader").await;
    let view = beta
        .service()
        .get(
            &reader.caller,
            &interai::service::lookup::GetRequest {
                id: entity.clone(),
                revision: None,
                include: None,
                evidence_cursor: None,
                trust_view: Default::default(),
            },
        )
        .await
        .expect("beta holds the entity");
    let interai::service::lookup::ObjectView::Entity(entity_view) = view else {
        panic!("an entity");
    };
    let usefulness = entity_view
        .ratings
        .iter()
        .find(|aggregate| aggregate.dimension == "usefulness")
        .expect("the aggregate of gamma's rating");
    assert_eq!(usefulness.independent_raters, 1);
}

#[tokio::test]
async fn a_record_travels_with_public_identifiers_only_and_reaches_a_later_peer_through_the_snapshot() {
    let network = Network::start(&["alpha.test", "beta.test", "gamma.test"]).await;
    peered(&network, "alpha.test", "beta.test").await;
    let (alpha, beta, gamma) = (
        network.node("alpha.test"),
        network.node("beta.test"),
        network.node("gamma.test"),
    );
    let author = agent(alpha.service(), "author").await;
    let item = publish_procedure(alpha.service(), &author, "rebuild the search index", &[]).await;
    network.settle().await;
    let beta_agent = agent(beta.service(), "beta user").await;
    let usage = beta
        .service()
        .report_usage(
            &beta_agent.caller,
            &metadata("report_usage"),
            interai::service::evidence::UsageRequest {
                target: item.id.clone(),
                usage_type: "implementation".to_owned(),
                result: "success".to_owned(),
                real_world_use: true,
                context: Some(json!({ "lang": "rust" })),
                metrics: Some(json!({ "minutes": 3 })),
                note: Some("worked after a restart of the indexer".to_owned()),
                idempotency_key: None,
            },
        )
        .await
        .expect("reported")
        .id;
    network.settle().await;

    // What leaves: the record's public identifiers and the fields trust reads; no note, no metrics, no facets.
    let activity = outbox_activity_of(alpha, beta, &usage).await;
    assert_eq!(activity["type"], "Create");
    let object = activity["object"].as_object().expect("object");
    let mut members: Vec<&str> = object.keys().map(String::as_str).collect();
    members.sort_unstable();
    assert_eq!(
        members,
        [
            "@context",
            "attributedTo",
            "author",
            "contextKey",
            "id",
            "proof",
            "publicId",
            "published",
            "realWorldUse",
            "realm",
            "result",
            "rootController",
            "target",
            "targetContent",
            "type",
            "usageType"
        ]
    );
    assert_eq!(object["type"], "UsageReport");
    assert_eq!(object["contextKey"], "lang=rust");
    assert_eq!(object["target"], item.revision_id.as_str());

    // Gamma peers with both later: it backfills alpha's item from alpha's snapshot and beta's record from beta's.
    peered(&network, "gamma.test", "alpha.test").await;
    peered(&network, "gamma.test", "beta.test").await;
    for _ in 0..5 {
        network.advance(TimeDelta::minutes(10));
        network.settle().await;
    }
    let explained = explanation(gamma, &item.revision_id).await;
    assert_eq!(instance_row(&explained, "beta.test").expect("beta's record").records, 1);
    assert_matches_full_recomputation(gamma, &item.revision_id).await;
}

#[tokio::test]
async fn a_review_of_a_peer_s_claim_lands_on_the_canonical_claim_and_get_answers_the_same_for_either_id() {
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));
    // Both realms make the same claim before they peer, each under its own ID.
    let claim_text = "A vacuum after a bulk delete gives the space back";
    let alpha_author = agent(alpha.service(), "alpha author").await;
    let on_alpha = publish_procedure(alpha.service(), &alpha_author, "vacuum after deletes", &[claim_text]).await;
    let beta_author = agent(beta.service(), "beta author").await;
    let on_beta = publish_procedure(
        beta.service(),
        &beta_author,
        "reclaim space",
        &["a VACUUM after a bulk delete gives the space back."],
    )
    .await;
    let (alpha_claim, beta_claim) = (on_alpha.claims[0].id.clone(), on_beta.claims[0].id.clone());
    assert_ne!(alpha_claim, beta_claim);
    peered(&network, "alpha.test", "beta.test").await;
    network.settle().await;

    // On alpha, beta's ID is an alias of alpha's claim: `get` on either answers for alpha's, naming the alias.
    let reader = agent(alpha.service(), "reader").await;
    for id in [&alpha_claim, &beta_claim] {
        let view = alpha
            .service()
            .get(
                &reader.caller,
                &interai::service::lookup::GetRequest {
                    id: id.clone(),
                    revision: None,
                    include: None,
                    evidence_cursor: None,
                    trust_view: Default::default(),
                },
            )
            .await
            .expect("get");
        let interai::service::lookup::ObjectView::Claim(claim) = view else {
            panic!("a claim");
        };
        assert_eq!(claim.claim.id.as_str(), alpha_claim);
        assert_eq!(claim.aliases.len(), 1);
        assert_eq!(
            (claim.aliases[0].alias_id.as_str(), claim.aliases[0].origin.as_str()),
            (beta_claim.as_str(), "beta.test")
        );
    }

    // A review on beta of beta's own ID counts on alpha's canonical claim.
    let beta_reviewer = agent(beta.service(), "beta reviewer").await;
    review_it(beta.service(), &beta_reviewer, &beta_claim, "confirmed", 1.0, None).await;
    network.settle().await;
    let explained = explanation(alpha, &alpha_claim).await;
    assert_eq!(instance_row(&explained, "beta.test").expect("beta's review").records, 1);
    assert_matches_full_recomputation(alpha, &alpha_claim).await;

    // And a review on alpha naming beta's ID is first-party evidence on alpha's claim.
    let alpha_reviewer = agent(alpha.service(), "alpha reviewer").await;
    review_it(alpha.service(), &alpha_reviewer, &beta_claim, "confirmed", 1.0, None).await;
    let counted = assert_matches_full_recomputation(alpha, &alpha_claim).await;
    assert_eq!(counted.counts.independent_confirmations.first_party, 1);
    assert_eq!(counted.counts.independent_confirmations.remote, 1);
}

#[tokio::test]
async fn agreement_with_first_party_decisions_moves_a_peer_s_trust_as_the_table_says() {
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    peered(&network, "alpha.test", "beta.test").await;
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));
    let author = agent(alpha.service(), "author").await;
    let mut items = Vec::new();
    for number in 0..11 {
        items.push(publish_procedure(alpha.service(), &author, &format!("restart worker {number}"), &[]).await);
    }
    network.settle().await;

    // Beta's stance arrives on ten items before alpha's own users decide them.
    let beta_agent = agent(beta.service(), "beta user").await;
    for item in &items[..10] {
        use_it(beta.service(), &beta_agent, &item.id, "success", true).await;
    }
    network.settle().await;
    network.advance(TimeDelta::minutes(1));
    let alpha_user = agent(alpha.service(), "alpha user").await;
    for item in &items {
        use_it(alpha.service(), &alpha_user, &item.id, "success", true).await;
    }
    // The eleventh: beta's stance comes after alpha's decision, so it gives no event.
    use_it(beta.service(), &beta_agent, &items[10].id, "success", true).await;
    network.settle().await;
    // A second first-party decision on the same items changes nothing: one event per peer and target.
    let second_user = agent(alpha.service(), "second alpha user").await;
    for item in &items {
        use_it(alpha.service(), &second_user, &item.id, "success", true).await;
    }

    let batch = alpha.federation().recompute_instance_trust().await.expect("batch");
    let beta_trust = batch
        .peers
        .iter()
        .find(|peer| peer.peer_realm == "beta.test")
        .expect("beta");
    assert_eq!((beta_trust.agreements, beta_trust.disagreements), (10, 0));
    // §2.10's table at base 0.5: 10 agreements, none against, give A = 0.75 and t = 0.60.
    assert_eq!(beta_trust.trust, 0.6);
    let explained = explanation(alpha, &items[0].revision_id).await;
    assert_eq!(instance_row(&explained, "beta.test").expect("beta").instance_trust, 0.6);
}

#[tokio::test]
async fn purging_a_peer_removes_its_records_and_every_effect_through_the_admin_api_and_the_command_line() {
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    peered(&network, "alpha.test", "beta.test").await;
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));
    let author = agent(alpha.service(), "author").await;
    let first = publish_procedure(alpha.service(), &author, "flush the cache", &[]).await;
    let second = publish_procedure(alpha.service(), &author, "warm the cache", &[]).await;
    network.settle().await;
    let before = assert_matches_full_recomputation(alpha, &first.revision_id).await;
    let beta_agent = agent(beta.service(), "beta user").await;
    use_it(beta.service(), &beta_agent, &first.id, "success", true).await;
    use_it(beta.service(), &beta_agent, &second.id, "failure", true).await;
    network.settle().await;
    assert_ne!(assessment(alpha, &first.revision_id).await.value, before.value);

    let owner = crate::fixtures::controller(alpha.service(), "Operator").await;
    let admin = crate::fixtures::agent_of_with_scopes(alpha.service(), &owner, "Dashboard", "admin").await;
    let (status, purged) = crate::replication::admin_call(
        alpha,
        &admin.key,
        http::Method::POST,
        "/admin/peers/beta.test/purge",
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{purged}");
    assert_eq!(purged["records_deleted"], 2);
    assert_eq!(purged["targets_reassessed"], 2);
    let after = assert_matches_full_recomputation(alpha, &first.revision_id).await;
    assert_eq!(after, before);
    assert!(instance_row(&explanation(alpha, &second.revision_id).await, "beta.test").is_none());
    // The peering itself stays: new evidence from beta counts again.
    assert_eq!(alpha.peer(beta).await.peer.state, interai::domain::PeerState::Active);

    // The command line does the same (nothing left to delete now), and refuses this realm's own name.
    let printed = crate::admin_api::command_line(alpha, &["admin", "peer", "purge", "beta.test", "--json"]);
    assert_eq!(printed["records_deleted"], 0);
    let (status, refused) = crate::replication::admin_call(
        alpha,
        &admin.key,
        http::Method::POST,
        "/admin/peers/alpha.test/purge",
        None,
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
}

/// The example key of docs/federation/proofs.md (SHA-256 of `interai origin proof example key`): never for anything
/// but examples and tests.
const EXAMPLE_SEED_HEX: &str = "c7975fefbc9c98f5800ca21c18e03ec9b3423a156136fdd1b403d57911e5c239";

/// The evidence objects docs/federation/evidence.md shows, signed by alpha.test with the example key: the files in
/// `docs/federation/examples/evidence/` are exactly what interai signs (set `INTERAI_WRITE_EXAMPLES=1` to write
/// them after a deliberate change), and each verifies with the example key.
#[test]
fn the_documented_evidence_examples_are_what_interai_signs() {
    let seed: Vec<u8> = (0..EXAMPLE_SEED_HEX.len())
        .step_by(2)
        .map(|index| u8::from_str_radix(&EXAMPLE_SEED_HEX[index..index + 2], 16).expect("hex"))
        .collect();
    let seed: [u8; 32] = seed.try_into().expect("32 bytes");
    let key = interai::service::federation::identity::SigningKey {
        key_id: "https://alpha.test/actor#key-1".to_owned(),
        key_pair: federation::keys::InstanceKeyPair::from_secret_bytes(&seed),
    };
    let urls = InstanceUrls {
        base: "https://alpha.test".to_owned(),
    };
    let id = |text: &str| PublicId::parse(text).expect("an example ID");
    let made = DateTime::parse_from_rfc3339("2027-01-15T08:00:00Z")
        .expect("time")
        .to_utc();
    let usage_id = id("use_01jhk8e5z00000000000000001");
    let passport = |record_id: PublicId, target: &str, content: Option<&str>, facts: EvidenceFacts| {
        FederatedObject::Evidence(Box::new(EvidencePassport {
            record_id,
            origin: "alpha.test".to_owned(),
            target_id: id(target),
            target_content_id: content.map(id),
            actor_id: id("ai_01jhk8e5z00000000000000007"),
            root_controller_id: id("usr_01jhk8e5z00000000000000008"),
            created_at: made,
            facts,
        }))
    };
    let examples = [
        (
            "usage.json",
            passport(
                usage_id.clone(),
                "rev_01jhk8e5z00000000000000004",
                Some("cnt_01jhk8e5z00000000000000005"),
                EvidenceFacts::Usage {
                    usage_type: "implementation".to_owned(),
                    result: UsageOutcome::Success,
                    real_world_use: true,
                    context_key: ContextKey::parse("lang=rust").expect("context"),
                },
            ),
        ),
        (
            "review.json",
            passport(
                id("rvw_01jhk8e5z00000000000000002"),
                "rev_01jhk8e5z00000000000000004",
                Some("cnt_01jhk8e5z00000000000000005"),
                EvidenceFacts::Review {
                    verdict: Verdict::Confirmed,
                    confidence: 0.9,
                    based_on_usage: Some(usage_id.clone()),
                },
            ),
        ),
        (
            "rating.json",
            passport(
                id("rat_01jhk8e5z00000000000000003"),
                "ent_01jhk8e5z00000000000000006",
                None,
                EvidenceFacts::Rating {
                    dimension: "reliability".to_owned(),
                    score: 85.0,
                    confidence: 0.8,
                    context_key: ContextKey::all(),
                    based_on_usage: None,
                },
            ),
        ),
        (
            "retraction.json",
            FederatedObject::Retraction(EvidenceRetraction {
                record_id: usage_id.clone(),
                origin: "alpha.test".to_owned(),
                retracted_at: made + TimeDelta::days(2),
            }),
        ),
    ];
    let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/federation/examples/evidence");
    let write = std::env::var_os("INTERAI_WRITE_EXAMPLES").is_some();
    for (file, object) in examples {
        let signed = signed_object(&urls, &object, &key).expect("signed");
        let text = format!("{}\n", serde_json::to_string_pretty(&signed).expect("json"));
        let path = folder.join(file);
        if write {
            std::fs::create_dir_all(&folder).expect("folder");
            std::fs::write(&path, &text).expect("written");
        }
        let documented = std::fs::read_to_string(&path).unwrap_or_else(|_| panic!("{} exists", path.display()));
        assert_eq!(documented, text, "{file} is what interai signs");
        federation::integrity::verify_and_canonicalize(&signed, &key.key_pair.public_key()).expect("verifies");
    }
}

#[tokio::test]
async fn first_party_trust_view_answers_what_the_instance_would_say_with_no_peers_and_explanations_say_why() {
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    peered(&network, "alpha.test", "beta.test").await;
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));
    let author = agent(alpha.service(), "author").await;
    let first = publish_procedure(alpha.service(), &author, "rotate the backups", &[]).await;
    let second = publish_procedure(alpha.service(), &author, "prune the backups", &[]).await;
    network.settle().await;
    let alpha_user = agent(alpha.service(), "alpha user").await;
    use_it(alpha.service(), &alpha_user, &first.id, "partial", false).await;
    let alone = assert_matches_full_recomputation(alpha, &first.revision_id).await;
    let beta_agent = agent(beta.service(), "beta user").await;
    use_it(beta.service(), &beta_agent, &first.id, "success", true).await;
    for item in [&first, &second] {
        beta.service()
            .rate(
                &beta_agent.caller,
                &metadata("rate"),
                interai::service::evidence::RateRequest {
                    target: item.id.clone(),
                    dimension: "reliability".to_owned(),
                    score: 90.0,
                    confidence: 1.0,
                    ..Default::default()
                },
            )
            .await
            .expect("rated");
    }
    network.settle().await;

    let reader = agent(alpha.service(), "reader").await;
    let get = |trust_view| interai::service::lookup::GetRequest {
        id: first.id.clone(),
        revision: None,
        include: Some(vec!["explanation".to_owned()]),
        evidence_cursor: None,
        trust_view,
    };
    let content = |view| match view {
        interai::service::lookup::ObjectView::Content(content) => content,
        other => panic!("content expected: {other:?}"),
    };
    let all = content(
        alpha
            .service()
            .get(&reader.caller, &get(interai::service::trust::TrustViewScope::All))
            .await
            .expect("get"),
    );
    assert_ne!(all.trust.assessment, alone, "beta's record counts in the default view");
    let explained = all.explanation.as_ref().expect("explanation");
    assert_eq!(
        explained.first_party_only, alone,
        "the explanation says what first-party evidence alone gives"
    );
    assert_eq!(
        explained.origin_reasons.get("beta.test").map(String::as_str),
        Some("level:standard; agreement 0/0")
    );

    let first_party = content(
        alpha
            .service()
            .get(
                &reader.caller,
                &get(interai::service::trust::TrustViewScope::FirstParty),
            )
            .await
            .expect("get"),
    );
    assert_eq!(first_party.trust.assessment, alone);
    let explained = first_party.explanation.as_ref().expect("explanation");
    assert!(
        instance_row(&explained.explanation, "beta.test").is_none(),
        "no peer in the first-party view"
    );

    // compare: beta's ratings score the items in the default view, and not at all in the first-party view.
    let compare = |trust_view| interai::service::compare::CompareRequest {
        ids: vec![first.id.clone(), second.id.clone()],
        context: None,
        dimensions: vec!["reliability".to_owned()],
        trust_view,
    };
    let compared = alpha
        .service()
        .compare(&reader.caller, &compare(interai::service::trust::TrustViewScope::All))
        .await
        .expect("compare");
    assert!(compared.items.iter().all(|item| item.scores[0].score.is_some()));
    let compared = alpha
        .service()
        .compare(
            &reader.caller,
            &compare(interai::service::trust::TrustViewScope::FirstParty),
        )
        .await
        .expect("compare");
    assert!(compared.items.iter().all(|item| item.scores[0].score.is_none()));
}

#[tokio::test]
async fn a_flood_of_confirmations_from_one_peer_adds_at_most_its_bound_and_cannot_lift_a_first_party_refutation() {
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    peered(&network, "alpha.test", "beta.test").await;
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));
    let author = agent(alpha.service(), "author").await;
    let item = publish_procedure(alpha.service(), &author, "disable the firewall to fix the build", &[]).await;
    network.settle().await;
    // Seven first-party controllers saw it fail: a statistical refutation (R5) on first-party evidence.
    for number in 0..7 {
        let user = agent(alpha.service(), &format!("user {number}")).await;
        use_it(alpha.service(), &user, &item.id, "failure", true).await;
    }
    let refuted = assert_matches_full_recomputation(alpha, &item.revision_id).await;
    assert_eq!(refuted.status, interai::domain::TrustStatus::Incorrect);
    assert_eq!(refuted.rule.as_str(), "R5");

    // A thousand confirmations from a thousand of beta's controllers.
    let now = network.clock.now();
    for number in 0..1000 {
        let object = FederatedObject::Evidence(Box::new(usage_passport(beta, &item.revision_id, &item.id, now)));
        let activity = evidence_activity(beta, beta, &object, &format!("flood-{number}")).await;
        let (status, body) = post_activity(beta, alpha, &activity).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    }
    network.settle().await;
    let explained = explanation(alpha, &item.revision_id).await;
    let row = instance_row(&explained, "beta.test").expect("beta's bucket");
    assert_eq!((row.records, row.remote_controllers), (1000, 1000));
    let flooded = assert_matches_full_recomputation(alpha, &item.revision_id).await;
    // At t = 0.5 the bucket adds less than W·t/(1 − t) = 2 units, far under C_INST = 3, however many records.
    assert!(
        flooded.evidence_units.remote.belief < 2.0,
        "{:?}",
        flooded.evidence_units
    );
    assert!(
        flooded.evidence_units.remote.belief > 1.99,
        "{:?}",
        flooded.evidence_units
    );
    assert!(flooded.value > refuted.value, "the flood moves the value");
    assert_eq!(
        flooded.status,
        interai::domain::TrustStatus::Incorrect,
        "but not the refutation"
    );
    assert_eq!(flooded.rule.as_str(), "R5");
}

/// Rates `target` on `usefulness` in `context` as `rater` on `node`.
async fn rate_usefulness(node: &Node, rater: &crate::fixtures::Agent, target: &str, context: Value, score: f64) {
    node.service()
        .rate(
            &rater.caller,
            &metadata("rate"),
            interai::service::evidence::RateRequest {
                target: target.to_owned(),
                context: Some(context),
                dimension: "usefulness".to_owned(),
                score,
                confidence: 1.0,
                ..Default::default()
            },
        )
        .await
        .expect("rated");
}

#[tokio::test]
async fn a_peer_s_flood_of_zero_ratings_moves_an_aggregate_as_section_2_9_gives_and_at_trust_zero_not_at_all() {
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    peered(&network, "alpha.test", "beta.test").await;
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));
    let author = agent(alpha.service(), "author").await;
    let rated = publish_procedure(alpha.service(), &author, "pin the python toolchain", &[]).await;
    let other = publish_procedure(alpha.service(), &author, "pin the rust toolchain", &[]).await;
    network.settle().await;
    // §2.9's raters: an operator's 100 agents at 100 and three humans at 60 in python, three raters elsewhere.
    let operator = crate::fixtures::controller(alpha.service(), "opA").await;
    for number in 0..100 {
        let operated = crate::fixtures::agent_of(alpha.service(), &operator, &format!("opA agent {number}")).await;
        rate_usefulness(alpha, &operated, &rated.id, json!({ "lang": "python" }), 100.0).await;
    }
    for (name, context, score) in [
        ("h1", json!({ "lang": "python" }), 60.0),
        ("h2", json!({ "lang": "python" }), 60.0),
        ("h3", json!({ "lang": "python" }), 60.0),
        ("x1", json!({ "lang": "rust" }), 80.0),
        ("x2", json!({ "lang": "go" }), 60.0),
        ("x3", json!({}), 60.0),
    ] {
        let rater = agent(alpha.service(), name).await;
        rate_usefulness(alpha, &rater, &rated.id, context, score).await;
    }
    let reader = agent(alpha.service(), "reader").await;
    let python_score = || async {
        let compared = alpha
            .service()
            .compare(
                &reader.caller,
                &interai::service::compare::CompareRequest {
                    ids: vec![rated.id.clone(), other.id.clone()],
                    context: Some(json!({ "lang": "python" })),
                    dimensions: vec!["usefulness".to_owned()],
                    trust_view: Default::default(),
                },
            )
            .await
            .expect("compare");
        compared.items[0].scores[0].score.expect("scored")
    };
    let own = python_score().await;
    assert!((own - 68.148).abs() < 0.001, "§2.9: 68.15 ({own})");

    // Five thousand zero scores from five thousand of beta's controllers, sent 64 at a time as a peer's push does
    // (requests in flight together are applied together).
    let now = network.clock.now();
    let mut activities = Vec::with_capacity(5_000);
    for number in 0..5_000 {
        let object = FederatedObject::Evidence(Box::new(EvidencePassport {
            record_id: fresh_id(IdKind::Rating),
            origin: "beta.test".to_owned(),
            target_id: PublicId::parse(&rated.id).expect("id"),
            target_content_id: None,
            actor_id: fresh_id(IdKind::Agent),
            root_controller_id: fresh_id(IdKind::User),
            created_at: now,
            facts: EvidenceFacts::Rating {
                dimension: "usefulness".to_owned(),
                score: 0.0,
                confidence: 1.0,
                context_key: ContextKey::parse("lang=python").expect("context"),
                based_on_usage: None,
            },
        }));
        activities.push(evidence_activity(beta, beta, &object, &format!("zero-{number}")).await);
    }
    let key = beta.federation().signing_key().await.expect("key");
    let inbox = url::Url::parse(&format!("{}/inbox", alpha.url())).expect("inbox");
    for window in activities.chunks(64) {
        let mut requests = tokio::task::JoinSet::new();
        for activity in window {
            let request = beta
                .federation_client()
                .signed_request(
                    http::Method::POST,
                    &inbox,
                    Some(serde_json::to_vec(activity).expect("json")),
                    &key,
                )
                .expect("signed");
            let router = alpha.router.clone();
            requests.spawn(async move {
                use tower::ServiceExt;
                let (parts, body) = request.into_parts();
                let request = http::Request::from_parts(parts, axum::body::Body::from(body));
                router.oneshot(request).await.expect("router answers").status()
            });
        }
        while let Some(status) = requests.join_next().await {
            assert_eq!(status.expect("a request"), StatusCode::ACCEPTED);
        }
    }
    network.settle().await;
    let flooded = python_score().await;
    assert!((flooded - 48.2).abs() < 0.05, "§2.9: 48.2 at t = 0.5 ({flooded})");

    // At t = 0 (quarantine) the flood counts for nothing: the value is the first-party one, bit for bit.
    alpha
        .federation()
        .set_peer_level("beta.test", PeerLevel::Quarantine)
        .await
        .expect("quarantined");
    assert_eq!(python_score().await.to_bits(), own.to_bits());
}

/// A change made to an evidence object before it is signed again.
type ObjectEdit = fn(&mut Value);

#[tokio::test]
async fn malformed_evidence_objects_are_refused_at_the_inbox_with_nothing_stored() {
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    peered(&network, "alpha.test", "beta.test").await;
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));
    let author = agent(alpha.service(), "author").await;
    let item = publish_procedure(alpha.service(), &author, "renew the certificate", &[]).await;
    network.settle().await;
    let key = beta.federation().signing_key().await.expect("key");
    let object = FederatedObject::Evidence(Box::new(usage_passport(
        beta,
        &item.revision_id,
        &item.id,
        network.clock.now(),
    )));
    let genuine = evidence_activity(beta, beta, &object, "malformed-base").await;
    // Each edit is signed again by beta, so the proof holds and the object itself is what is wrong.
    let edits: [(&str, ObjectEdit); 4] = [
        ("a member of another kind", |object| {
            object["verdict"] = json!("confirmed")
        }),
        ("a missing member", |object| {
            object.as_object_mut().expect("object").remove("result");
        }),
        ("a target that is no interai ID", |object| {
            object["target"] = json!("rev_not-an-id")
        }),
        ("an unknown member", |object| object["note"] = json!("private")),
    ];
    for (number, (what, edit)) in edits.into_iter().enumerate() {
        let mut object = genuine["object"].clone();
        object.as_object_mut().expect("object").remove("proof");
        edit(&mut object);
        let created = 1_800_000_000;
        let signed = federation::integrity::sign_document(&object, &key.key_pair, &key.key_id, created).expect("signs");
        let mut activity = genuine.clone();
        activity["id"] = json!(format!("{}/activities/malformed-{number}", beta.url()));
        activity["object"] = signed;
        let (status, body) = post_activity(beta, alpha, &activity).await;
        assert_eq!(
            (status, body["reason"].as_str()),
            (StatusCode::BAD_REQUEST, Some("malformed_object")),
            "{what}: {body}"
        );
    }
    network.settle().await;
    assert!(instance_row(&explanation(alpha, &item.revision_id).await, "beta.test").is_none());
}

/// `search` on `node` as `reader`, with `trust_view`.
async fn search_in_view(
    node: &Node,
    reader: &crate::fixtures::Agent,
    request: interai::service::search::SearchRequest,
    trust_view: interai::domain::TrustViewScope,
) -> Vec<interai::service::search::SearchHit> {
    node.service()
        .search(
            &reader.caller,
            &interai::service::search::SearchRequest { trust_view, ..request },
        )
        .await
        .expect("search")
        .results
}

/// The IDs of hits.
fn hit_ids(hits: &[interai::service::search::SearchHit]) -> Vec<&str> {
    hits.iter().map(|hit| hit.id.as_str()).collect()
}

#[tokio::test]
async fn search_filters_sorts_and_shows_trust_in_the_first_party_view_as_the_instance_alone_would() {
    use interai::domain::{TrustStatus, TrustViewScope};
    use interai::service::search::SearchRequest;
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    peered(&network, "alpha.test", "beta.test").await;
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));
    let author = agent(alpha.service(), "author").await;
    // Lifted: no first-party evidence, many of beta's successes. Proven: one first-party success. Contested: one
    // first-party failure, and beta's successes.
    let lifted = publish_procedure(alpha.service(), &author, "rotate the backups weekly", &[]).await;
    let proven = publish_procedure(alpha.service(), &author, "prune the backups monthly", &[]).await;
    let contested = publish_procedure(alpha.service(), &author, "compress the backups daily", &[]).await;
    network.settle().await;
    let alpha_user = agent(alpha.service(), "alpha user").await;
    use_it(alpha.service(), &alpha_user, &proven.id, "success", true).await;
    review_it(alpha.service(), &alpha_user, &contested.id, "contradicted", 1.0, None).await;
    for number in 0..30 {
        let beta_user = agent(beta.service(), &format!("beta user {number}")).await;
        use_it(beta.service(), &beta_user, &lifted.id, "success", true).await;
        use_it(beta.service(), &beta_user, &contested.id, "success", true).await;
    }
    network.settle().await;

    let reader = agent(alpha.service(), "reader").await;
    let mut expected: Vec<(&str, Assessment, Assessment)> = Vec::new();
    for item in [&lifted, &proven, &contested] {
        let all = assert_matches_full_recomputation(alpha, &item.revision_id).await;
        let first_party = explained_first_party(alpha, &reader, &item.id).await;
        expected.push((item.id.as_str(), all, first_party));
    }
    let status_of = |id: &str, view: TrustViewScope| {
        let (_, all, first_party) = expected.iter().find(|(each, _, _)| *each == id).expect("expected");
        match view {
            TrustViewScope::All => all.status,
            TrustViewScope::FirstParty => first_party.status,
        }
    };
    assert_eq!(status_of(&lifted.id, TrustViewScope::All), TrustStatus::Supported);
    assert_eq!(
        status_of(&lifted.id, TrustViewScope::FirstParty),
        TrustStatus::Unverified
    );
    assert_eq!(
        status_of(&proven.id, TrustViewScope::FirstParty),
        TrustStatus::Supported
    );
    assert!(status_of(&contested.id, TrustViewScope::FirstParty).is_contested());
    assert!(!status_of(&contested.id, TrustViewScope::All).is_contested());

    let requests = [
        // A text query (the full-text pool), then browsing (the trust summaries walked in order).
        SearchRequest {
            query: Some("backups".to_owned()),
            ..SearchRequest::default()
        },
        SearchRequest::default(),
    ];
    for request in requests {
        for view in [TrustViewScope::All, TrustViewScope::FirstParty] {
            let every = search_in_view(alpha, &reader, request.clone(), view).await;
            assert_eq!(every.len(), 3, "{view:?} {request:?}");
            for hit in &every {
                let (_, all, first_party) = expected.iter().find(|(id, _, _)| *id == hit.id).expect("one of ours");
                let shown = if view == TrustViewScope::All { all } else { first_party };
                assert_eq!(hit.status, shown.status, "{view:?}: {}", hit.id);
                assert_eq!(hit.trust.value, shown.value, "{view:?}: {}", hit.id);
                assert_eq!(hit.trust.lower_bound, shown.lower_bound, "{view:?}: {}", hit.id);
                assert_eq!(
                    hit.trust.independent_confirmations,
                    if view == TrustViewScope::All {
                        i32::try_from(shown.counts.independent_confirmations.total()).expect("small")
                    } else {
                        i32::try_from(shown.counts.independent_confirmations.first_party).expect("small")
                    },
                    "{view:?}: {}",
                    hit.id
                );
            }
            // The status ladder (a status filter that leaves unverified out) and the contested statuses (one that
            // keeps it) each select by the view's status.
            let supported = search_in_view(
                alpha,
                &reader,
                SearchRequest {
                    min_status: Some("supported".to_owned()),
                    ..request.clone()
                },
                view,
            )
            .await;
            let mut wanted: Vec<&str> = [&lifted, &proven, &contested]
                .iter()
                // Off the ladder's bottom rung; the contested statuses stay (include_disputed defaults to true).
                .filter(|item| status_of(&item.id, view) != TrustStatus::Unverified)
                .map(|item| item.id.as_str())
                .collect();
            let mut found = hit_ids(&supported);
            wanted.sort_unstable();
            found.sort_unstable();
            assert_eq!(found, wanted, "min_status supported, {view:?}, {request:?}");
            let uncontested = search_in_view(
                alpha,
                &reader,
                SearchRequest {
                    include_disputed: Some(false),
                    ..request.clone()
                },
                view,
            )
            .await;
            let mut wanted: Vec<&str> = [&lifted, &proven, &contested]
                .iter()
                .filter(|item| !status_of(&item.id, view).is_contested())
                .map(|item| item.id.as_str())
                .collect();
            let mut found = hit_ids(&uncontested);
            wanted.sort_unstable();
            found.sort_unstable();
            assert_eq!(found, wanted, "include_disputed false, {view:?}, {request:?}");
            // The trust order is the view's: status rank, then lower bound.
            let by_trust = search_in_view(
                alpha,
                &reader,
                SearchRequest {
                    sort: Some("trust".to_owned()),
                    ..request.clone()
                },
                view,
            )
            .await;
            let ranks: Vec<(i32, f64)> = by_trust
                .iter()
                .map(|hit| (interai::store::search::status_rank(hit.status), -hit.trust.lower_bound))
                .collect();
            assert!(
                ranks.windows(2).all(|pair| pair[0] <= pair[1]),
                "{view:?} {request:?}: {ranks:?}"
            );
        }
    }
    // In the first-party view the lifted item is unverified and comes after the proven one; in the default view it
    // is supported.
    let first_party_order = search_in_view(
        alpha,
        &reader,
        SearchRequest {
            sort: Some("trust".to_owned()),
            ..SearchRequest::default()
        },
        TrustViewScope::FirstParty,
    )
    .await;
    let position = |id: &str| hit_ids(&first_party_order).iter().position(|each| *each == id);
    assert!(position(&proven.id) < position(&lifted.id));

    // Blocking beta makes the default view agree with the first-party one (the contested item is disputed again).
    alpha
        .federation()
        .block_peer("beta.test", "test", None)
        .await
        .expect("blocked");
    let supported_now = search_in_view(
        alpha,
        &reader,
        SearchRequest {
            min_status: Some("supported".to_owned()),
            ..SearchRequest::default()
        },
        TrustViewScope::All,
    )
    .await;
    let mut found = hit_ids(&supported_now);
    found.sort_unstable();
    let mut wanted = vec![proven.id.as_str(), contested.id.as_str()];
    wanted.sort_unstable();
    assert_eq!(found, wanted);
}

/// The assessment `get` gives of `content` in the first-party view.
async fn explained_first_party(node: &Node, reader: &crate::fixtures::Agent, content: &str) -> Assessment {
    let view = node
        .service()
        .get(
            &reader.caller,
            &interai::service::lookup::GetRequest {
                id: content.to_owned(),
                revision: None,
                include: None,
                evidence_cursor: None,
                trust_view: interai::domain::TrustViewScope::FirstParty,
            },
        )
        .await
        .expect("get");
    match view {
        interai::service::lookup::ObjectView::Content(content) => content.trust.assessment,
        other => panic!("content expected: {other:?}"),
    }
}

/// Runs statements on `node`'s database directly.
async fn execute_directly(node: &Node, statements: &[&str]) {
    let mut connection = DirectConnection::open(node.database_url()).await;
    for statement in statements {
        connection.execute(statement).await;
    }
    connection.close().await;
}

#[tokio::test]
async fn after_the_upgrade_that_stores_first_party_values_the_next_batch_computes_them_for_other_realms_targets() {
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    peered(&network, "alpha.test", "beta.test").await;
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));
    let author = agent(alpha.service(), "author").await;
    let item = publish_procedure(alpha.service(), &author, "rotate the backups weekly", &[]).await;
    network.settle().await;
    for number in 0..12 {
        let beta_user = agent(beta.service(), &format!("beta user {number}")).await;
        use_it(beta.service(), &beta_user, &item.id, "success", true).await;
    }
    network.settle().await;
    let reader = agent(alpha.service(), "reader").await;
    let first_party = explained_first_party(alpha, &reader, &item.id).await;
    let target = PublicId::parse(&item.revision_id).expect("an ID");
    let stored = alpha.service().trust_summary(&target).await.expect("summary");
    assert_eq!(stored.first_party.status, first_party.status);
    assert_eq!(stored.first_party.value, first_party.value);
    assert_ne!(
        stored.first_party.value, stored.value,
        "beta's records count in the default view"
    );

    // What migration 0020 leaves behind: the first-party columns copied from the others, and the request.
    execute_directly(
        alpha,
        &[
            "UPDATE trust_summaries SET first_party_value = value, first_party_lower_bound = lower_bound, \
             first_party_status = status, first_party_independent_confirmations = independent_confirmations, \
             first_party_contradictions = contradictions, \
             first_party_real_world_confirmations = real_world_confirmations",
            "INSERT INTO instance_settings (name, value, updated_at) \
             VALUES ('first_party_trust_backfill', 'pending', '2026-12-07T00:00:00Z')",
        ],
    )
    .await;
    let copied = alpha.service().trust_summary(&target).await.expect("summary");
    assert_eq!(copied.first_party.value, copied.value);

    alpha.federation().recompute_instance_trust().await.expect("batch");
    let backfilled = alpha.service().trust_summary(&target).await.expect("summary");
    assert_eq!(backfilled.first_party, stored.first_party);
    let hits = search_in_view(
        alpha,
        &reader,
        interai::service::search::SearchRequest {
            min_status: Some("supported".to_owned()),
            ..Default::default()
        },
        interai::domain::TrustViewScope::FirstParty,
    )
    .await;
    assert!(hits.is_empty(), "{hits:?}");
    // Done once: the request is gone.
    execute_directly(
        alpha,
        &["UPDATE trust_summaries SET first_party_value = 0.123 WHERE first_party_value <> value"],
    )
    .await;
    alpha.federation().recompute_instance_trust().await.expect("batch");
    assert_eq!(
        alpha
            .service()
            .trust_summary(&target)
            .await
            .expect("summary")
            .first_party
            .value,
        0.123,
        "a later batch with no change of trust assesses nothing again"
    );
}
