//! Instance trust in action (trust model §2.10, §2.15): every peer's effective trust follows its level, an admin's
//! pin, a block and the peering's state at once, each change a new batch (`instance_trust_epoch`) that every trust
//! read of the instance uses from then on; the same through the admin API and the command line.

use chrono::TimeDelta;
use http::{Method, StatusCode};
use interai::domain::PeerLevel;
use interai::domain::peer::PeerTrustReason;
use interai::service::federation::peering::PeerView;
use interai::service::lookup::{GetRequest, ObjectView};
use serde_json::{Value, json};

use crate::fixtures::{agent, agent_of_with_scopes, controller, publish_procedure};
use crate::replication::admin_call;
use crate::support::network::{Network, Node};

/// The effective trust and its reason `node` shows for `realm`.
async fn trust_of(node: &Node, realm: &str) -> (f64, PeerTrustReason, i64) {
    let view: PeerView = node.federation().peer_view(realm).await.expect("peer known");
    let trust = view.trust.expect("a batch included the peer");
    (trust.trust, trust.reason, trust.epoch)
}

/// The instance-trust epoch the explanation of `get` names on `service`: the table its trust reads use.
async fn epoch_in_explanations(service: &interai::service::Service, content_id: &str) -> String {
    let reader = agent(service, "explanation reader").await;
    let request = GetRequest {
        id: content_id.to_owned(),
        revision: None,
        include: Some(vec!["explanation".to_owned()]),
        evidence_cursor: None,
        trust_view: Default::default(),
    };
    let ObjectView::Content(view) = service.get(&reader.caller, &request).await.expect("get") else {
        panic!("content expected");
    };
    view.explanation
        .expect("an explanation")
        .explanation
        .instance_trust_epoch
}

#[tokio::test]
async fn a_peer_s_effective_trust_follows_its_level_pin_block_and_state_at_once() {
    let network = Network::start(&["alpha.test", "beta.test", "gamma.test"]).await;
    crate::federation::peered(&network, "alpha.test", "beta.test").await;
    let alpha = network.node("alpha.test");
    let author = agent(alpha.service(), "author").await;
    let item = publish_procedure(alpha.service(), &author, "rotate the logs", &[]).await;
    let item = item.id.as_str();

    let (trust, reason, first_epoch) = trust_of(alpha, "beta.test").await;
    assert_eq!((trust, reason), (0.5, PeerTrustReason::Level(PeerLevel::Standard)));
    assert_eq!(
        epoch_in_explanations(alpha.service(), item).await,
        first_epoch.to_string()
    );

    let federation = alpha.federation();
    federation
        .set_peer_level("beta.test", PeerLevel::High)
        .await
        .expect("level set");
    let (trust, reason, epoch) = trust_of(alpha, "beta.test").await;
    assert_eq!((trust, reason), (0.7, PeerTrustReason::Level(PeerLevel::High)));
    assert!(epoch > first_epoch, "a level change is a new batch");
    assert_eq!(
        epoch_in_explanations(alpha.service(), item).await,
        epoch.to_string(),
        "trust reads use the new table at once"
    );

    // A pin is used as given (not quantised), whatever the level.
    let pinned = federation.pin_peer_trust("beta.test", 0.855).await.expect("pinned");
    assert_eq!(pinned.trust_pin, Some(0.855));
    assert_eq!(trust_of(alpha, "beta.test").await.0, 0.855);
    assert_eq!(trust_of(alpha, "beta.test").await.1, PeerTrustReason::Pinned);
    // A pin above 0.9 is used as 0.9; outside [0, 1] it is refused and nothing changes.
    federation.pin_peer_trust("beta.test", 0.95).await.expect("pinned");
    assert_eq!(trust_of(alpha, "beta.test").await.0, 0.9);
    for refused in [1.5, -0.1, f64::NAN] {
        let error = federation
            .pin_peer_trust("beta.test", refused)
            .await
            .expect_err("out of range");
        assert_eq!(error.code.as_str(), "validation_failed", "{refused}");
    }
    assert_eq!(trust_of(alpha, "beta.test").await.0, 0.9);

    // A block and quarantine win over the pin; the pin stays for when they end.
    federation.block_peer("beta.test", "spam", None).await.expect("blocked");
    let (trust, reason, _) = trust_of(alpha, "beta.test").await;
    assert_eq!((trust, reason), (0.0, PeerTrustReason::Blocked));
    federation.unblock_peer("beta.test").await.expect("unblocked");
    assert_eq!(trust_of(alpha, "beta.test").await.0, 0.9);
    federation
        .set_peer_level("beta.test", PeerLevel::Quarantine)
        .await
        .expect("quarantined");
    let (trust, reason, _) = trust_of(alpha, "beta.test").await;
    assert_eq!((trust, reason), (0.0, PeerTrustReason::Quarantine));
    federation
        .set_peer_level("beta.test", PeerLevel::Low)
        .await
        .expect("level set");
    let unpinned = federation.unpin_peer_trust("beta.test").await.expect("unpinned");
    assert_eq!(unpinned.trust_pin, None);
    let (trust, reason, _) = trust_of(alpha, "beta.test").await;
    assert_eq!((trust, reason), (0.3, PeerTrustReason::Level(PeerLevel::Low)));

    // A timed block counts 0 until it ends; the batch it needs then is scheduled for that moment.
    federation
        .block_peer(
            "beta.test",
            "cool down",
            Some(alpha.service().now() + TimeDelta::minutes(5)),
        )
        .await
        .expect("blocked for five minutes");
    assert_eq!(trust_of(alpha, "beta.test").await.0, 0.0);
    let batch = federation.recompute_instance_trust().await.expect("batch");
    assert_eq!(batch.next_due, alpha.service().now() + TimeDelta::minutes(5));
    network.advance(TimeDelta::minutes(5));
    network.settle().await;
    let (trust, reason, _) = trust_of(alpha, "beta.test").await;
    assert_eq!((trust, reason), (0.3, PeerTrustReason::Level(PeerLevel::Low)));

    // A peering that is not active counts 0: alpha asked gamma, which has not answered.
    let gamma = network.node("gamma.test");
    alpha.add_peer(gamma, PeerLevel::High).await;
    let (trust, reason, _) = trust_of(alpha, "gamma.test").await;
    assert_eq!(trust, 0.0);
    assert_eq!(reason.to_text(), "state:pending_out");
    // A removed peer leaves the table.
    federation.remove_peer("gamma.test").await.expect("removed");
    let (_, table) = federation.instance_trust_table().await.expect("table");
    assert_eq!(
        table.iter().map(|row| row.peer_realm.as_str()).collect::<Vec<_>>(),
        vec!["beta.test"]
    );
    // Unknown peers are named.
    let error = federation
        .pin_peer_trust("nobody.test", 0.5)
        .await
        .expect_err("no such peer");
    assert_eq!(error.code.as_str(), "not_found");
}

#[tokio::test]
async fn a_second_process_uses_the_batch_the_first_ran_from_its_next_check() {
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    crate::federation::peered(&network, "alpha.test", "beta.test").await;
    let alpha = network.node("alpha.test");
    let author = agent(alpha.service(), "author").await;
    let item = publish_procedure(alpha.service(), &author, "rotate the logs", &[]).await;
    let (second, _router) = network.second_process("alpha.test").await;
    let (_, _, epoch) = trust_of(alpha, "beta.test").await;
    assert_eq!(
        epoch_in_explanations(second.service(), item.id.as_str()).await,
        epoch.to_string(),
        "a process that starts uses the stored table"
    );
    let pinned = alpha
        .federation()
        .pin_peer_trust("beta.test", 0.6)
        .await
        .expect("pinned");
    let newer = pinned.trust.expect("trust").epoch;
    assert!(newer > epoch);
    // The second process loads the newer table at its loop's next check.
    second.federation().load_instance_trust().await.expect("loaded");
    assert_eq!(
        epoch_in_explanations(second.service(), item.id.as_str()).await,
        newer.to_string()
    );
    // Two batches at the same moment, one in each process, number themselves one after the other.
    let (first, other) = tokio::join!(
        alpha.federation().recompute_instance_trust(),
        second.federation().recompute_instance_trust()
    );
    let mut epochs = [first.expect("a batch").epoch, other.expect("a batch").epoch];
    epochs.sort_unstable();
    assert_eq!(epochs, [newer + 1, newer + 2]);
}

#[tokio::test]
async fn the_admin_api_and_the_command_line_pin_unpin_and_recompute_a_peer_s_trust() {
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    crate::federation::peered(&network, "alpha.test", "beta.test").await;
    let alpha = network.node("alpha.test");
    let owner = controller(alpha.service(), "Operator").await;
    let admin = agent_of_with_scopes(alpha.service(), &owner, "Dashboard", "admin").await;
    let key = admin.key.as_str();

    let (status, pinned) = admin_call(
        alpha,
        key,
        Method::POST,
        "/admin/peers/beta.test/pin",
        Some(json!({ "trust": 0.8 })),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{pinned}");
    assert_eq!(pinned["trust"]["effective"], 0.8);
    assert_eq!(pinned["trust"]["pinned"], 0.8);
    assert_eq!(pinned["trust"]["reason"], "pinned");

    let (status, refused) = admin_call(
        alpha,
        key,
        Method::POST,
        "/admin/peers/beta.test/pin",
        Some(json!({ "trust": 2 })),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    assert_eq!(refused["error"]["code"], "validation_failed", "{refused}");
    let (status, unknown) = admin_call(
        alpha,
        key,
        Method::POST,
        "/admin/peers/nobody.test/pin",
        Some(json!({ "trust": 0.5 })),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{unknown}");

    let (status, unpinned) = admin_call(alpha, key, Method::DELETE, "/admin/peers/beta.test/pin", None).await;
    assert_eq!(status, StatusCode::OK, "{unpinned}");
    assert_eq!(unpinned["trust"]["effective"], 0.5);
    assert_eq!(unpinned["trust"]["pinned"], Value::Null);
    assert_eq!(unpinned["trust"]["reason"], "level:standard");

    let (status, batch) = admin_call(alpha, key, Method::POST, "/admin/federation/trust/recompute", None).await;
    assert_eq!(status, StatusCode::OK, "{batch}");
    assert!(
        batch["epoch"].as_i64().expect("epoch") > unpinned["trust"]["epoch"].as_i64().expect("epoch"),
        "{batch}"
    );
    assert_eq!(batch["peers"][0]["realm"], "beta.test");
    assert_eq!(batch["peers"][0]["effective"], 0.5);

    // The command line does the same on the same database.
    let printed = crate::admin_api::command_line(alpha, &["admin", "peer", "pin", "beta.test", "0.75", "--json"]);
    assert_eq!(printed["trust"]["effective"], 0.75, "{printed}");
    let recomputed = crate::admin_api::command_line(alpha, &["admin", "federation", "trust", "recompute", "--json"]);
    assert_eq!(recomputed["peers"][0]["effective"], 0.75, "{recomputed}");
    assert_eq!(recomputed["peers"][0]["reason"], "pinned", "{recomputed}");
    let unpinned = crate::admin_api::command_line(alpha, &["admin", "peer", "unpin", "beta.test", "--json"]);
    assert_eq!(unpinned["trust"]["effective"], 0.5, "{unpinned}");
    // And the peer's show answers what the API answers.
    let (_, shown) = admin_call(alpha, key, Method::GET, "/admin/peers/beta.test", None).await;
    let printed = crate::admin_api::command_line(alpha, &["admin", "peer", "show", "beta.test", "--json"]);
    assert_eq!(printed, shown);
}
