//! Federation part 2, through the in-process network: what a realm publishes in a federated space reaches every
//! active peer signed by its origin, in order, once in effect, whatever the network does; what it keeps local never
//! leaves; forged, relayed and colliding objects are refused with nothing stored.

use axum::body::Body;
use chrono::TimeDelta;
use http::{Method, StatusCode};
use interai::domain::knowledge::SpaceVisibility;
use interai::service::ErrorCode;
use interai::service::content::PublishRequest;
use interai::service::lookup::{GetRequest, ObjectView};
use interai::service::search::SearchRequest;
use interai::service::spaces::NewSpace;
use serde_json::{Value, json};
use tower::ServiceExt;
use url::Url;

use crate::federation::{follow_of, peered, send, signed_post};
use crate::fixtures::{Agent, agent, metadata, publish_procedure};
use crate::harness::DirectConnection;
use crate::support::network::{Network, Node};

async fn reader(node: &Node) -> Agent {
    agent(node.service(), "reader").await
}

/// The content item `id` as `get` shows it on `node`, or the error.
async fn get(node: &Node, reader: &Agent, id: &str) -> Result<ObjectView, interai::service::ServiceError> {
    node.service()
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
}

async fn search_ids(node: &Node, reader: &Agent, query: &str) -> Vec<(String, String)> {
    let results = node
        .service()
        .search(
            &reader.caller,
            &SearchRequest {
                query: Some(query.to_owned()),
                kinds: vec!["content".to_owned()],
                limit: Some(50),
                ..SearchRequest::default()
            },
        )
        .await
        .expect("search");
    results.results.into_iter().map(|hit| (hit.id, hit.origin)).collect()
}

async fn revise(node: &Node, author: &Agent, id: &str, title: &str) -> i32 {
    node.service()
        .publish(
            &author.caller,
            &metadata("publish"),
            PublishRequest {
                content_type: "procedure".to_owned(),
                title: title.to_owned(),
                summary: format!("How to {title}."),
                body_markdown: format!("# {title}\n\nRevised.\n"),
                revision_of: Some(id.to_owned()),
                ..PublishRequest::default()
            },
        )
        .await
        .expect("revision published")
        .revision_no
}

async fn create_space(node: &Node, name: &str, visibility: SpaceVisibility) -> String {
    let admin = node.service().realm_admin().await.expect("admin");
    node.service()
        .create_space(
            &admin,
            NewSpace {
                name: name.to_owned(),
                description: Some(format!("The {name} space.")),
                visibility,
            },
        )
        .await
        .expect("space created")
        .id
        .into_string()
}

async fn publish_in(node: &Node, author: &Agent, space: &str, title: &str) -> String {
    publish_with_claim(node, author, space, title, &format!("{title} works on the first try"))
        .await
        .0
}

fn current_revision(view: &ObjectView) -> (i32, String) {
    match view {
        ObjectView::Content(content) => (content.revision.revision_no, content.revision.title.clone()),
        other => panic!("not content: {other:?}"),
    }
}

#[tokio::test]
async fn published_content_reaches_the_peer_with_its_origin_and_revisions_and_deletions_follow() {
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    peered(&network, "alpha.test", "beta.test").await;
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));
    let author = agent(alpha.service(), "author").await;
    let published = publish_procedure(
        alpha.service(),
        &author,
        "rotate the signing key",
        &["rotation keeps peers"],
    )
    .await;
    network.settle().await;

    let beta_reader = reader(beta).await;
    let view = get(beta, &beta_reader, &published.id).await.expect("beta has the item");
    let ObjectView::Content(content) = &view else {
        panic!("content")
    };
    assert_eq!(content.content.origin, "alpha.test");
    assert_eq!(content.revision.id.as_str(), published.revision_id);
    assert!(
        content.untrusted_content,
        "text from another realm is untrusted content"
    );
    assert_eq!(
        search_ids(beta, &beta_reader, "rotate signing key").await,
        vec![(published.id.clone(), "alpha.test".to_owned())]
    );
    // The signed object is kept with the revision, verifiable after relay.
    let signed = beta
        .federation()
        .revision_origin_proof(&content.revision.id)
        .await
        .expect("read")
        .expect("a replicated revision keeps its signed object");
    let signed: Value = serde_json::from_str(&signed.0).expect("json");
    assert_eq!(signed["proof"]["cryptosuite"], "eddsa-jcs-2022");
    assert_eq!(signed["publicId"], published.id.as_str());

    assert_eq!(
        revise(alpha, &author, &published.id, "rotate the signing key safely").await,
        2
    );
    network.settle().await;
    let view = get(beta, &beta_reader, &published.id).await.expect("beta has the item");
    assert_eq!(current_revision(&view), (2, "rotate the signing key safely".to_owned()));

    let admin = alpha.service().realm_admin().await.expect("admin");
    alpha
        .service()
        .delete_content(&admin, &published.id, "superseded by the runbook")
        .await
        .expect("deleted");
    network.settle().await;
    let error = get(beta, &beta_reader, &published.id)
        .await
        .expect_err("deleted on beta too");
    assert_eq!(error.code, ErrorCode::NotFound);
    assert_eq!(error.details["deleted"], true, "{:?}", error.details);
    assert_eq!(error.details["reason"], "superseded by the runbook");
    assert_eq!(error.details["origin"], "alpha.test");
    assert!(search_ids(beta, &beta_reader, "rotate signing key").await.is_empty());
}

#[tokio::test]
async fn a_local_space_never_leaves_by_push_pull_or_backfill() {
    let network = Network::start(&["alpha.test", "beta.test", "gamma.test"]).await;
    peered(&network, "alpha.test", "beta.test").await;
    let (alpha, beta, gamma) = (
        network.node("alpha.test"),
        network.node("beta.test"),
        network.node("gamma.test"),
    );
    let author = agent(alpha.service(), "author").await;
    let local = create_space(alpha, "internal", SpaceVisibility::Local).await;
    let shared = create_space(alpha, "shared", SpaceVisibility::Federated).await;
    let secret = publish_in(alpha, &author, &local, "restart the payroll cluster").await;
    let public = publish_in(alpha, &author, &shared, "restart the build cluster").await;
    network.settle().await;
    // Pull too (the anti-entropy interval passes), and a new peer backfills.
    network.advance(TimeDelta::minutes(2));
    network.settle().await;
    peered(&network, "alpha.test", "gamma.test").await;
    network.settle().await;
    for node in [beta, gamma] {
        let reader = reader(node).await;
        assert!(
            get(node, &reader, &public).await.is_ok(),
            "{} has the federated item",
            node.realm
        );
        let error = get(node, &reader, &secret)
            .await
            .expect_err("the local item never arrives");
        assert_eq!(error.code, ErrorCode::NotFound);
        let spaces = node.service().list_spaces().await.expect("spaces");
        assert!(
            spaces.iter().all(|space| space.id.as_str() != local),
            "{} knows the local space",
            node.realm
        );
        assert!(spaces.iter().any(|space| space.id.as_str() == shared));
    }
    // Nor is it in any page of the outbox or the snapshot a peer reads.
    for query in ["after=0&limit=500", "snapshot=true&after=&limit=500"] {
        let page = signed_get(beta, alpha, &format!("/outbox?{query}")).await;
        let text = page.to_string();
        assert!(text.contains(&public), "{query}: {text}");
        assert!(
            !text.contains(&secret) && !text.contains(&local),
            "{query} leaks the local space"
        );
    }
}

/// Alpha and beta peered, with a write limit that lets a test publish a thousand changes.
async fn busy_pair() -> Network {
    let network = Network::start_configured(&["alpha.test", "beta.test"], |_, config| {
        config.writes_per_hour = 100_000;
    })
    .await;
    peered(&network, "alpha.test", "beta.test").await;
    network
}

#[tokio::test]
async fn a_peer_down_for_a_day_gets_every_change_once_in_order_per_object() {
    let network = busy_pair().await;
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));
    let author = agent(alpha.service(), "author").await;
    network.switchboard.take_down("beta.test");
    // 1,000 changes: 250 items, each revised three times.
    let mut items = Vec::new();
    for index in 0..250 {
        items.push(
            publish_procedure(alpha.service(), &author, &format!("procedure number {index}"), &[])
                .await
                .id,
        );
    }
    for round in 2..=4 {
        for (index, id) in items.iter().enumerate() {
            revise(
                alpha,
                &author,
                id,
                &format!("procedure number {index} revision {round}"),
            )
            .await;
        }
    }
    // A simulated day of failed attempts: the backoff grows to its cap of an hour and the peer is probed.
    for _ in 0..24 {
        network.settle().await;
        network.advance(TimeDelta::hours(1));
    }
    let lag = alpha
        .federation()
        .peer_replication_lag("beta.test")
        .await
        .expect("lag")
        .expect("beta has replication state");
    assert_eq!(lag.undelivered, 1000);
    assert!(lag.replication.consecutive_failures >= 1);
    network.switchboard.bring_up("beta.test");
    network.advance(TimeDelta::hours(1));
    network.settle().await;

    let beta_reader = reader(beta).await;
    for (index, id) in items.iter().enumerate() {
        let view = get(beta, &beta_reader, id).await.expect("arrived");
        assert_eq!(
            current_revision(&view),
            (4, format!("procedure number {index} revision 4"))
        );
    }
    let applied = beta
        .federation()
        .intake_log(Some("alpha.test"), 100_000)
        .await
        .expect("intake log")
        .into_iter()
        .filter(|line| line.outcome == "applied" && line.detail.starts_with("cnt_"))
        .map(|line| line.detail)
        .collect::<Vec<_>>();
    let mut distinct = applied.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), applied.len(), "each change applied once in effect");
    assert_eq!(applied.len(), 1000, "{:?}", &applied[..5]);
    // In order per object: an item's four events are 250 positions apart in the outbox, so one push round sends
    // them in four different windows, and beta must still apply revision 1, 2, 3, 4 one after another (the log
    // lists the newest first).
    let mut revisions_applied: std::collections::HashMap<String, Vec<i32>> = std::collections::HashMap::new();
    for detail in applied.iter().rev() {
        let mut words = detail.split(' ');
        let (Some(id), Some("revision"), Some(number)) = (words.next(), words.next(), words.next()) else {
            panic!("an applied revision's detail: {detail}");
        };
        revisions_applied
            .entry(id.to_owned())
            .or_default()
            .push(number.parse().expect("a revision number"));
    }
    assert_eq!(revisions_applied.len(), 250);
    for (id, numbers) in &revisions_applied {
        assert_eq!(numbers, &[1, 2, 3, 4], "{id} applied out of order");
    }
    let lag = alpha
        .federation()
        .peer_replication_lag("beta.test")
        .await
        .expect("lag")
        .expect("state");
    assert_eq!((lag.undelivered, lag.replication.consecutive_failures), (0, 0));
}

/// A push round reads its next window while it sends one, so an object's events can be in flight from two windows
/// at once: its later event must still wait for its earlier one. Here an item's first revision is the last event of
/// the round's first window and its second revision the first of the next; the first is held in flight, and the
/// second is not sent until the first is answered, while the other items of the second window go ahead.
#[tokio::test]
async fn an_objects_events_in_two_windows_of_one_round_are_sent_one_after_the_other() {
    let network = busy_pair().await;
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));
    let author = agent(alpha.service(), "author").await;
    let head = alpha.federation().outbox_head().await.expect("head");
    let window = interai::apub::replicate::limits::PUSH_WINDOW;
    for index in head + 1..window {
        publish_procedure(alpha.service(), &author, &format!("filler procedure {index}"), &[]).await;
    }
    let held = publish_procedure(alpha.service(), &author, "held procedure", &[])
        .await
        .id;
    assert_eq!(
        alpha.federation().outbox_head().await.expect("head"),
        window,
        "the item's creation ends the first window"
    );
    revise(alpha, &author, &held, "held procedure revised").await;
    for index in 0..3 {
        publish_procedure(alpha.service(), &author, &format!("later procedure {index}"), &[]).await;
    }
    network.switchboard.hold("beta.test", "held procedure");
    let client = alpha.federation_client();
    let round = tokio::spawn(async move { client.push_due().await });
    network
        .switchboard
        .wait_until("the second window's other items to arrive", |switchboard| {
            switchboard.held() >= 1
                && switchboard
                    .delivered_bodies()
                    .iter()
                    .filter(|body| body.contains("later procedure"))
                    .count()
                    == 3
        })
        .await;
    assert_eq!(
        network.switchboard.held(),
        1,
        "only the first revision is in flight: the second waits for it"
    );
    network.switchboard.release_all();
    round.await.expect("the round ran").expect("the round succeeded");
    network.settle().await;
    let bodies = network.switchboard.delivered_bodies();
    let first = bodies
        .iter()
        .position(|body| body.contains("\"held procedure\""))
        .expect("the first revision was sent");
    let second = bodies
        .iter()
        .position(|body| body.contains("held procedure revised"))
        .expect("the second revision was sent");
    assert!(first < second, "the first revision reached beta before the second");
    let view = get(beta, &reader(beta).await, &held).await.expect("arrived");
    assert_eq!(current_revision(&view), (2, "held procedure revised".to_owned()));
}

#[tokio::test]
async fn an_authenticated_request_from_a_peer_resets_the_push_backoff_towards_it() {
    use interai::clock::Clock;
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    peered(&network, "alpha.test", "beta.test").await;
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));
    let author = agent(alpha.service(), "author").await;
    network.switchboard.take_down("beta.test");
    let id = publish_procedure(alpha.service(), &author, "procedure pushed after the backoff", &[])
        .await
        .id;
    // Rounds fail while beta is down, each failure lengthening the wait before the next.
    for _ in 0..5 {
        network.settle().await;
        network.advance(TimeDelta::minutes(10));
    }
    network.settle().await;
    let lag = || async move {
        alpha
            .federation()
            .peer_replication_lag("beta.test")
            .await
            .expect("lag")
            .expect("beta has replication state")
    };
    let failing = lag().await;
    assert!(failing.replication.consecutive_failures >= 5, "{failing:?}");
    assert_eq!(failing.undelivered, 1);

    network.switchboard.bring_up("beta.test");
    let (status, body) = send(
        alpha,
        signed_post(beta, alpha, &follow_of(beta, alpha, "still-here")).await,
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let reset = lag().await;
    assert_eq!(reset.replication.consecutive_failures, 0, "{reset:?}");
    assert!(reset.replication.failing_since.is_none(), "{reset:?}");
    assert!(reset.replication.next_attempt_at <= network.clock.now(), "{reset:?}");
    // Without moving the clock, the next pass pushes.
    network.settle().await;
    assert!(
        get(beta, &reader(beta).await, &id).await.is_ok(),
        "arrived without waiting out the backoff"
    );
    assert_eq!(lag().await.undelivered, 0);
}

/// A peer's push and pull share its replication row, and the loop leases both at once: on PostgreSQL a push lease
/// that skipped a row another transaction held left a due push for the next wake-up (a round with nothing sent, seen
/// as a flaky count of failed rounds). The lease waits for the holder and takes the row as the holder left it.
#[tokio::test]
async fn a_push_due_while_another_transaction_holds_the_peers_row_is_leased_when_it_lets_go() {
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    let alpha = network.node("alpha.test");
    if !alpha.database_url().starts_with("postgres") {
        // SQLite has one writer: the lease waits for it whatever the statement says.
        return;
    }
    peered(&network, "alpha.test", "beta.test").await;
    let author = agent(alpha.service(), "author").await;
    publish_procedure(alpha.service(), &author, "procedure due while the row is held", &[]).await;

    let mut holder = DirectConnection::open(alpha.database_url()).await;
    holder.execute("BEGIN").await;
    holder
        .execute("UPDATE peer_replication SET last_pull_error = 'held by the test' WHERE peer_realm = 'beta.test'")
        .await;
    let federation = alpha.federation().clone();
    let lease = tokio::spawn(async move { federation.lease_push(8, TimeDelta::seconds(60)).await });
    let mut watcher = DirectConnection::open(alpha.database_url()).await;
    loop {
        assert!(
            !lease.is_finished(),
            "the lease ended while the row was held, without waiting: {:?}",
            lease.await
        );
        let waiting = watcher
            .count(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
                 AND wait_event_type = 'Lock' AND query LIKE $1",
                "%UPDATE peer_replication SET leased_until%",
            )
            .await;
        if waiting > 0 {
            break;
        }
        tokio::task::yield_now().await;
    }
    holder.execute("COMMIT").await;
    let leased = lease.await.expect("the lease task").expect("the lease");
    assert_eq!(leased.len(), 1, "{leased:?}");
    assert_eq!(leased[0].peer.realm, "beta.test");
    assert_eq!(
        leased[0].replication.last_pull_error.as_deref(),
        Some("held by the test"),
        "the lease read the row as the holder left it"
    );
    holder.close().await;
    watcher.close().await;
}

#[tokio::test]
async fn with_push_off_pull_alone_converges() {
    let network = Network::start_configured(&["alpha.test", "beta.test"], |realm, config| {
        if realm == "alpha.test" {
            config.federation_push = false;
        }
    })
    .await;
    peered(&network, "alpha.test", "beta.test").await;
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));
    let author = agent(alpha.service(), "author").await;
    let first = publish_procedure(alpha.service(), &author, "drain a node", &[])
        .await
        .id;
    network.settle().await;
    let beta_reader = reader(beta).await;
    assert!(get(beta, &beta_reader, &first).await.is_err(), "nothing is pushed");
    network.advance(TimeDelta::seconds(61));
    network.settle().await;
    assert!(
        get(beta, &beta_reader, &first).await.is_ok(),
        "the anti-entropy pull brought it"
    );
    revise(alpha, &author, &first, "drain a node gently").await;
    let second = publish_procedure(alpha.service(), &author, "cordon a node", &[])
        .await
        .id;
    network.advance(TimeDelta::seconds(61));
    network.settle().await;
    assert_eq!(
        current_revision(&get(beta, &beta_reader, &first).await.expect("first")).0,
        2
    );
    assert!(get(beta, &beta_reader, &second).await.is_ok());
}

#[tokio::test]
async fn a_new_peer_backfills_everything_visible_to_it() {
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));
    let author = agent(alpha.service(), "author").await;
    let mut items = Vec::new();
    for index in 0..30 {
        items.push(
            publish_procedure(alpha.service(), &author, &format!("older procedure {index}"), &[])
                .await
                .id,
        );
    }
    revise(alpha, &author, &items[0], "older procedure zero, revised").await;
    let admin = alpha.service().realm_admin().await.expect("admin");
    alpha
        .service()
        .delete_content(&admin, &items[1], "wrong")
        .await
        .expect("deleted");
    peered(&network, "alpha.test", "beta.test").await;
    network.settle().await;
    let beta_reader = reader(beta).await;
    let pull = beta
        .federation()
        .peer_replication_lag("alpha.test")
        .await
        .expect("lag")
        .expect("state");
    assert!(
        pull.replication.pull_cursor.is_some(),
        "the backfill finished: {pull:?}"
    );
    assert_eq!(
        current_revision(&get(beta, &beta_reader, &items[0]).await.expect("revised")),
        (2, "older procedure zero, revised".to_owned())
    );
    let deleted = get(beta, &beta_reader, &items[1]).await.expect_err("tombstone");
    assert_eq!(deleted.details["deleted"], true);
    for id in &items[2..] {
        assert!(get(beta, &beta_reader, id).await.is_ok(), "{id} backfilled");
    }
}

/// A signed GET from `from` of `path` on `to`, answered as JSON.
pub(crate) async fn signed_get(from: &Node, to: &Node, path: &str) -> Value {
    let key = from.federation().signing_key().await.expect("key");
    let url = Url::parse(&format!("{}{path}", to.url())).expect("url");
    let request = from
        .federation_client()
        .signed_request(Method::GET, &url, None, &key)
        .expect("signed");
    let (status, body) = send(to, request).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

/// The first activity of `from`'s outbox as a peer reads it.
async fn first_outbox_activity(reader_node: &Node, from: &Node) -> Value {
    let page = signed_get(reader_node, from, "/outbox?after=0&limit=10").await;
    page["orderedItems"][0].clone()
}

pub(crate) async fn post_activity(from: &Node, to: &Node, activity: &Value) -> (StatusCode, Value) {
    let key = from.federation().signing_key().await.expect("key");
    let inbox = Url::parse(&format!("{}/inbox", to.url())).expect("inbox");
    let request = from
        .federation_client()
        .signed_request(
            Method::POST,
            &inbox,
            Some(serde_json::to_vec(activity).expect("json")),
            &key,
        )
        .expect("signed");
    send(to, request).await
}

/// The activity of alpha's outbox whose object is `object_id`.
pub(crate) async fn outbox_activity_of(reader_node: &Node, from: &Node, object_id: &str) -> Value {
    let page = signed_get(reader_node, from, "/outbox?after=0&limit=100").await;
    page["orderedItems"]
        .as_array()
        .expect("items")
        .iter()
        .find(|item| item["object"]["id"].as_str().is_some_and(|id| id.ends_with(object_id)))
        .cloned()
        .unwrap_or_else(|| panic!("no activity of {object_id} in {page}"))
}

/// A pushed object is applied by the request that brings it: the inbox answers once it was applied, with no intake
/// pass in between. When an activity waits in the queue already, the object is queued behind it instead, and the
/// intake applies both in the order they came.
#[tokio::test]
async fn a_pushed_object_is_applied_by_its_request_unless_an_activity_waits_before_it() {
    use interai::service::federation::inbox::{InboxNonce, Intake, VerifiedActivity};
    let network = Network::start_configured(&["alpha.test", "beta.test"], |_, config| {
        config.federation_push = false;
    })
    .await;
    peered(&network, "alpha.test", "beta.test").await;
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));
    let author = agent(alpha.service(), "author").await;
    let beta_reader = reader(beta).await;

    let first = publish_procedure(alpha.service(), &author, "rebuild the index", &[]).await;
    let activity = outbox_activity_of(beta, alpha, first.id.as_str()).await;
    let (status, body) = post_activity(alpha, beta, &activity).await;
    assert_eq!(
        (status, body["detail"].as_str()),
        (StatusCode::ACCEPTED, Some("applied")),
        "{body}"
    );
    let view = get(beta, &beta_reader, &first.id)
        .await
        .expect("searchable on beta when the inbox answers");
    assert_eq!(current_revision(&view), (1, "rebuild the index".to_owned()));
    let row = beta
        .federation()
        .inbound_activity(activity["id"].as_str().expect("id"))
        .await
        .expect("read")
        .expect("kept against a resend");
    assert_eq!(row.outcome.as_deref(), Some("applied"));
    let (status, body) = post_activity(alpha, beta, &activity).await;
    assert_eq!(
        (status, body["outcome"].as_str()),
        (StatusCode::ACCEPTED, Some("duplicate")),
        "{body}"
    );

    // An activity waits in the queue (one the intake has not read yet).
    let waiting = VerifiedActivity {
        peer_realm: "alpha.test".to_owned(),
        key_id: row.key_id.clone(),
        activity_id: format!("{}/activities/waiting", alpha.url()),
        activity_type: "Update".to_owned(),
        body: "{}".to_owned(),
        sender_state: Some(interai::domain::PeerState::Active),
    };
    let nonce = InboxNonce {
        nonce: "a nonce of the waiting activity".to_owned(),
        expires_at: beta.service().now() + TimeDelta::minutes(5),
    };
    let intake = beta
        .federation()
        .enqueue_inbound(&waiting, &nonce, None)
        .await
        .expect("queued");
    assert_eq!(intake, Intake::Queued);
    // The queue is in the order activities were received: the next one comes a moment later.
    network.advance(TimeDelta::seconds(1));
    let second = publish_procedure(alpha.service(), &author, "rotate the keys", &[]).await;
    let activity = outbox_activity_of(beta, alpha, second.id.as_str()).await;
    let (status, body) = post_activity(alpha, beta, &activity).await;
    assert_eq!(
        (status, body["detail"].as_str()),
        (StatusCode::ACCEPTED, Some("queued")),
        "{body}"
    );
    assert!(
        get(beta, &beta_reader, &second.id).await.is_err(),
        "queued behind the waiting activity, not applied before it"
    );
    network.settle().await;
    get(beta, &beta_reader, &second.id)
        .await
        .expect("applied by the intake");
    let lines = beta
        .federation()
        .intake_log(Some("alpha.test"), 100)
        .await
        .expect("intake log");
    let position = |activity_id: &str| {
        lines
            .iter()
            .position(|line| line.activity_id == activity_id)
            .unwrap_or_else(|| panic!("no intake line of {activity_id}"))
    };
    assert!(
        position(activity["id"].as_str().expect("id")) < position(&waiting.activity_id),
        "the waiting activity was taken first (the log is newest first)"
    );
}

#[tokio::test]
async fn tampered_relayed_and_colliding_objects_are_refused_with_nothing_stored() {
    let network = Network::start_configured(&["alpha.test", "beta.test", "gamma.test"], |_, config| {
        config.federation_push = false;
    })
    .await;
    peered(&network, "alpha.test", "beta.test").await;
    peered(&network, "gamma.test", "beta.test").await;
    peered(&network, "alpha.test", "gamma.test").await;
    let (alpha, beta, gamma) = (
        network.node("alpha.test"),
        network.node("beta.test"),
        network.node("gamma.test"),
    );
    let author = agent(alpha.service(), "author").await;
    let published = publish_procedure(alpha.service(), &author, "rebuild the index", &[]).await;
    let original = first_outbox_activity(gamma, alpha).await;
    assert_eq!(original["type"], "Create");
    let beta_reader = reader(beta).await;

    // Tampered: the title changed after the origin signed, sent by the origin itself.
    let mut tampered = original.clone();
    tampered["id"] = json!(format!("{}/activities/tampered", alpha.url()));
    tampered["object"]["name"] = json!("rebuild the index and drop the backups");
    let (status, body) = post_activity(alpha, beta, &tampered).await;
    assert_eq!(
        (status, body["reason"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_origin_proof"))
    );

    // Relayed without a valid proof: gamma sends alpha's object re-signed with its own key.
    let mut relayed = original.clone();
    relayed["id"] = json!(format!("{}/activities/relayed", gamma.url()));
    relayed["actor"] = json!(format!("{}/actor", gamma.url()));
    let mut object = relayed["object"].clone();
    object.as_object_mut().expect("object").remove("proof");
    object.as_object_mut().expect("object").remove("@context");
    let gamma_key = gamma.federation().signing_key().await.expect("key");
    let resigned = federation::integrity::sign_document(&object, &gamma_key.key_pair, &gamma_key.key_id, 1_800_000_000)
        .expect("signs");
    relayed["object"] = resigned.clone();
    let (status, body) = post_activity(gamma, beta, &relayed).await;
    assert_eq!(
        (status, body["reason"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_origin_proof")),
        "a key of gamma does not vouch for alpha's object"
    );
    network.settle().await;
    assert!(
        get(beta, &beta_reader, &published.id).await.is_err(),
        "nothing of it was stored"
    );

    // The genuine object relayed by gamma, with alpha's proof intact, is accepted: the proof, not the sender, says
    // where it comes from.
    let mut genuine_relay = original.clone();
    genuine_relay["id"] = json!(format!("{}/activities/genuine-relay", gamma.url()));
    genuine_relay["actor"] = json!(format!("{}/actor", gamma.url()));
    let (status, body) = post_activity(gamma, beta, &genuine_relay).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    network.settle().await;
    let view = get(beta, &beta_reader, &published.id)
        .await
        .expect("relayed with its origin's proof");
    let ObjectView::Content(content) = view else {
        panic!("content")
    };
    assert_eq!(content.content.origin, "alpha.test");

    // Re-using alpha's ID under another origin: gamma signs a object of its own with alpha's item ID.
    let mut collision = object.clone();
    collision["realm"] = json!("gamma.test");
    collision["id"] = json!(format!("{}/o/{}", gamma.url(), published.id));
    collision["name"] = json!("gamma's impostor");
    collision["attributedTo"] = json!(format!(
        "{}/o/{}",
        gamma.url(),
        collision["author"].as_str().expect("author")
    ));
    collision["@context"] = original["object"]["@context"].clone();
    let collision =
        federation::integrity::sign_document(&collision, &gamma_key.key_pair, &gamma_key.key_id, 1_800_000_000)
            .expect("signs");
    let activity = json!({
        "@context": original["@context"],
        "id": format!("{}/activities/collision", gamma.url()),
        "type": "Create",
        "actor": format!("{}/actor", gamma.url()),
        "object": collision,
    });
    let (status, body) = post_activity(gamma, beta, &activity).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    network.settle().await;
    let outcome = beta
        .federation()
        .inbound_activity(&format!("{}/activities/collision", gamma.url()))
        .await
        .expect("read")
        .expect("stored");
    assert_eq!(outcome.outcome.as_deref(), Some("refused"));
    let view = get(beta, &beta_reader, &published.id).await.expect("still alpha's");
    assert_eq!(current_revision(&view), (1, "rebuild the index".to_owned()));

    // Not I-JSON: a duplicate member name.
    let key = alpha.federation().signing_key().await.expect("key");
    let inbox = Url::parse(&format!("{}/inbox", beta.url())).expect("inbox");
    let body = format!(
        r#"{{"id":"{}/activities/dup","type":"Create","type":"Create","actor":"{}/actor","object":{{}}}}"#,
        alpha.url(),
        alpha.url()
    );
    let request = alpha
        .federation_client()
        .signed_request(Method::POST, &inbox, Some(body.into_bytes()), &key)
        .expect("signed");
    let (status, body) = send(beta, request).await;
    assert_eq!(
        (status, body["reason"].as_str()),
        (StatusCode::BAD_REQUEST, Some("not_i_json"))
    );
}

#[tokio::test]
async fn a_peer_blocked_mid_stream_stops_receiving_at_once() {
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    peered(&network, "alpha.test", "beta.test").await;
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));
    let author = agent(alpha.service(), "author").await;
    let before = publish_procedure(alpha.service(), &author, "warm the cache", &[])
        .await
        .id;
    network.settle().await;
    beta.federation()
        .block_peer("alpha.test", "sends spam", None)
        .await
        .expect("blocked");
    let after = publish_procedure(alpha.service(), &author, "flush the cache", &[])
        .await
        .id;
    network.settle().await;
    network.advance(TimeDelta::minutes(5));
    network.settle().await;
    let beta_reader = reader(beta).await;
    assert!(get(beta, &beta_reader, &before).await.is_ok());
    assert!(
        get(beta, &beta_reader, &after).await.is_err(),
        "nothing arrives after the block"
    );
    // Alpha holds the event for beta (a peer-level refusal is not a dead letter).
    let lag = alpha
        .federation()
        .peer_replication_lag("beta.test")
        .await
        .expect("lag")
        .expect("state");
    assert_eq!(lag.undelivered, 1);
    assert_eq!(lag.dead_letters, 0);
    assert_eq!(lag.replication.last_error_class.as_deref(), Some("blocked_sender"));
}

#[tokio::test]
async fn a_maximal_publish_replicates() {
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    peered(&network, "alpha.test", "beta.test").await;
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));
    let author = agent(alpha.service(), "author").await;
    let request = maximal_publish();
    let published = alpha
        .service()
        .publish(&author.caller, &metadata("publish"), request)
        .await
        .expect("the maximal publish is accepted");
    network.settle().await;
    let beta_reader = reader(beta).await;
    let view = get(beta, &beta_reader, &published.id).await.expect("replicated");
    let ObjectView::Content(content) = view else {
        panic!("content")
    };
    assert_eq!(content.revision.revision_no, 1);
    let lag = alpha
        .federation()
        .peer_replication_lag("beta.test")
        .await
        .expect("lag")
        .expect("state");
    assert_eq!((lag.undelivered, lag.dead_letters), (0, 0));
}

#[tokio::test]
async fn the_outbox_pages_follow_the_cursor_and_name_the_head() {
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    peered(&network, "alpha.test", "beta.test").await;
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));
    let author = agent(alpha.service(), "author").await;
    for index in 0..5 {
        publish_procedure(alpha.service(), &author, &format!("paged procedure {index}"), &[]).await;
    }
    let first = signed_get(beta, alpha, "/outbox?after=0&limit=2").await;
    assert_eq!(first["type"], "OrderedCollectionPage");
    assert_eq!(first["orderedItems"].as_array().map(Vec::len), Some(2));
    let cursor = first["cursor"].as_str().expect("cursor").to_owned();
    let head = first["head"].as_i64().expect("head");
    assert!(first["next"].is_string());
    let rest = signed_get(beta, alpha, &format!("/outbox?after={cursor}&limit=50")).await;
    assert_eq!(rest["orderedItems"].as_array().map(Vec::len), Some(3));
    assert!(rest["next"].is_null());
    assert_eq!(
        rest["cursor"].as_str().and_then(|text| text.parse::<i64>().ok()),
        Some(head)
    );
    let collection = signed_get(beta, alpha, "/outbox").await;
    assert_eq!(collection["type"], "OrderedCollection");
    assert_eq!(collection["head"], head);
}

/// Plain words, `characters` long, different for each `seed` (the secret scan sees prose, not a key).
fn words(seed: usize, characters: usize) -> String {
    let mut text = String::with_capacity(characters + 16);
    let mut index = 0;
    while text.len() < characters {
        text.push_str(&format!("word{seed}x{index} "));
        index += 1;
    }
    text.truncate(characters);
    text.trim_end().to_owned()
}

/// A publish with every field at its cap: the largest object an agent can make, and so the largest `Create` a
/// peer must take (its inbox cap is twice the MCP request cap).
fn maximal_publish() -> PublishRequest {
    use interai::service::limits::{
        MAX_ALIASES, MAX_BODY_BYTES, MAX_CLAIM_CHARACTERS, MAX_CLAIMS, MAX_NAME_CHARACTERS, MAX_NOTE_CHARACTERS,
        MAX_SOURCE_URL_CHARACTERS, MAX_SOURCES, MAX_SUBJECTS, MAX_SUMMARY_CHARACTERS, MAX_TAGS, MAX_TITLE_CHARACTERS,
    };
    use interai::service::references::{SourceReference, SubjectReference};
    PublishRequest {
        content_type: "procedure".to_owned(),
        title: words(1, MAX_TITLE_CHARACTERS),
        summary: words(2, MAX_SUMMARY_CHARACTERS),
        body_markdown: words(3, MAX_BODY_BYTES),
        change_note: Some(words(4, MAX_NOTE_CHARACTERS)),
        claims: (0..MAX_CLAIMS)
            .map(|index| words(100 + index, MAX_CLAIM_CHARACTERS))
            .collect(),
        subjects: (0..MAX_SUBJECTS)
            .map(|index| SubjectReference::Named {
                name: words(200 + index, MAX_NAME_CHARACTERS),
                entity_type: "library".to_owned(),
                aliases: (0..MAX_ALIASES)
                    .map(|alias| words(10_000 + index * 100 + alias, MAX_NAME_CHARACTERS))
                    .collect(),
                description: Some(words(300 + index, MAX_SUMMARY_CHARACTERS)),
            })
            .collect(),
        sources: (0..MAX_SOURCES)
            .map(|index| {
                let prefix = format!("https://docs{index}.example.org/");
                let path = "a".repeat(MAX_SOURCE_URL_CHARACTERS - prefix.len());
                SourceReference::Url {
                    url: format!("{prefix}{path}"),
                    title: Some(words(400 + index, MAX_NAME_CHARACTERS)),
                }
            })
            .collect(),
        tags: (0..MAX_TAGS).map(|index| format!("tag-{index}")).collect(),
        ..PublishRequest::default()
    }
}

/// `/metrics` of `node`, read through its router with an admin key.
pub(crate) async fn metrics_of(node: &Node) -> String {
    let owner = crate::fixtures::controller(node.service(), "Operator").await;
    let admin = crate::fixtures::agent_of_with_scopes(node.service(), &owner, "Scraper", "admin").await;
    let request = http::Request::builder()
        .uri("/metrics")
        .header("host", &node.realm)
        .header("authorization", format!("Bearer {}", admin.key))
        .body(Body::empty())
        .expect("request");
    let response = node.router.clone().oneshot(request).await.expect("router answers");
    assert_eq!(response.status(), StatusCode::OK);
    let bytes = axum::body::to_bytes(response.into_body(), 1024 * 1024)
        .await
        .expect("body");
    String::from_utf8(bytes.to_vec()).expect("text")
}

#[tokio::test]
async fn metrics_show_each_peers_backlog_and_deliveries_by_outcome() {
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    peered(&network, "alpha.test", "beta.test").await;
    let alpha = network.node("alpha.test");
    let author = agent(alpha.service(), "author").await;
    network.switchboard.take_down("beta.test");
    for index in 0..3 {
        publish_procedure(alpha.service(), &author, &format!("measured procedure {index}"), &[]).await;
    }
    network.settle().await;
    network.advance(TimeDelta::minutes(2));
    let text = metrics_of(alpha).await;
    let value = |name: &str, labels: &[(&str, &str)]| crate::metrics::value_of(&text, name, labels);
    assert_eq!(
        value("interai_outbox_undelivered", &[("peer", "beta.test")]),
        3.0,
        "{text}"
    );
    assert!(value("interai_outbox_lag_seconds", &[("peer", "beta.test")]) >= 120.0);
    assert!(value("interai_deliveries_total", &[("outcome", "retried")]) >= 1.0);
    assert_eq!(value("interai_deliveries_total", &[("outcome", "delivered")]), 0.0);

    network.switchboard.bring_up("beta.test");
    network.advance(TimeDelta::hours(1));
    network.settle().await;
    let text = metrics_of(alpha).await;
    let value = |name: &str, labels: &[(&str, &str)]| crate::metrics::value_of(&text, name, labels);
    assert_eq!(value("interai_outbox_undelivered", &[("peer", "beta.test")]), 0.0);
    assert_eq!(value("interai_outbox_lag_seconds", &[("peer", "beta.test")]), 0.0);
    assert_eq!(value("interai_deliveries_total", &[("outcome", "delivered")]), 3.0);
    let beta_text = metrics_of(network.node("beta.test")).await;
    assert_eq!(
        crate::metrics::value_of(&beta_text, "interai_inbox_queue_depth", &[]),
        0.0
    );
}

#[tokio::test]
async fn evidence_about_deleted_content_is_refused() {
    let network = Network::start(&["alpha.test"]).await;
    let alpha = network.node("alpha.test");
    let author = agent(alpha.service(), "author").await;
    let user = agent(alpha.service(), "user").await;
    let published = publish_procedure(alpha.service(), &author, "compact the log", &["compaction is safe"]).await;
    let admin = alpha.service().realm_admin().await.expect("admin");
    alpha
        .service()
        .delete_content(&admin, &published.id, "wrong advice")
        .await
        .expect("deleted");
    for target in [published.id.clone(), published.revision_id.clone()] {
        let error = alpha
            .service()
            .report_usage(
                &user.caller,
                &metadata("report_usage"),
                interai::service::evidence::UsageRequest {
                    target: target.clone(),
                    usage_type: "implementation".to_owned(),
                    result: "success".to_owned(),
                    ..interai::service::evidence::UsageRequest::default()
                },
            )
            .await
            .expect_err("evidence about a tombstone");
        assert_eq!(error.code, ErrorCode::NotFound, "{target}");
        assert_eq!(error.details["deleted"], true);
    }
    // Deleting twice says it was deleted already, and keeps the first tombstone.
    let again = alpha
        .service()
        .delete_content(&admin, &published.id, "another reason")
        .await
        .expect("idempotent");
    assert!(again.already_deleted);
    assert_eq!(again.tombstone.reason, "wrong advice");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_reader_following_the_outbox_cursor_never_misses_an_event_committed_late_by_another_process() {
    let network = Network::start_configured(&["alpha.test"], |_, config| {
        config.writes_per_hour = 1_000_000;
    })
    .await;
    let alpha = network.node("alpha.test");
    let (second, _) = network.second_process("alpha.test").await;
    let processes = [alpha.service().clone(), second.service().clone()];
    let writers_done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    // The reader follows the cursor as a peer would: everything after the last position it saw.
    let reader = {
        let federation = alpha.federation().clone();
        let writers_done = std::sync::Arc::clone(&writers_done);
        tokio::spawn(async move {
            let mut cursor = 0_i64;
            let mut seen = Vec::new();
            loop {
                let finished = writers_done.load(std::sync::atomic::Ordering::SeqCst);
                let page = federation.outbox_entries(cursor, 50).await.expect("read");
                for entry in &page {
                    assert!(entry.event.seq > cursor, "positions only grow");
                    cursor = entry.event.seq;
                    seen.push(entry.event.seq);
                }
                if page.is_empty() {
                    if finished {
                        return seen;
                    }
                    tokio::task::yield_now().await;
                }
            }
        })
    };
    let mut writers = Vec::new();
    for (index, service) in processes.iter().cycle().take(6).enumerate() {
        let service = service.clone();
        let author = agent(&service, &format!("writer {index}")).await;
        writers.push(tokio::spawn(async move {
            for item in 0..25 {
                publish_procedure(&service, &author, &format!("concurrent procedure {index} {item}"), &[]).await;
            }
        }));
    }
    for writer in writers {
        writer.await.expect("writer");
    }
    writers_done.store(true, std::sync::atomic::Ordering::SeqCst);
    let seen = reader.await.expect("reader");
    let all: Vec<i64> = alpha
        .federation()
        .outbox_entries(0, 100_000)
        .await
        .expect("outbox")
        .iter()
        .map(|entry| entry.event.seq)
        .collect();
    assert_eq!(all.len(), 150);
    assert_eq!(seen, all, "the reader saw every event, in order, none skipped");
}

#[tokio::test]
async fn outbox_pages_stay_under_the_response_cap_so_maximal_items_are_pulled_too() {
    let network = Network::start_configured(&["alpha.test", "beta.test"], |realm, config| {
        if realm == "alpha.test" {
            config.federation_push = false;
        }
    })
    .await;
    peered(&network, "alpha.test", "beta.test").await;
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));
    let author = agent(alpha.service(), "author").await;
    let mut published = Vec::new();
    for _ in 0..3 {
        let mut request = maximal_publish();
        request.title = format!("{} {}", published.len(), &request.title[..200]);
        let outcome = alpha
            .service()
            .publish(&author.caller, &metadata("publish"), request)
            .await
            .expect("maximal publish");
        published.push(outcome.id);
    }
    let page = signed_get(beta, alpha, "/outbox?after=0&limit=200").await;
    assert!(
        page.to_string().len() < 1024 * 1024,
        "a page fits the 1 MiB a peer reads"
    );
    assert!(page["next"].is_string(), "the page ended early: more follow");
    network.advance(TimeDelta::seconds(61));
    network.settle().await;
    let beta_reader = reader(beta).await;
    for id in &published {
        assert!(get(beta, &beta_reader, id).await.is_ok(), "{id} was pulled");
    }
}

#[tokio::test]
async fn outbox_events_are_kept_until_every_peer_has_them_never_purged_by_age_alone() {
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    peered(&network, "alpha.test", "beta.test").await;
    let alpha = network.node("alpha.test");
    let author = agent(alpha.service(), "author").await;
    network.switchboard.take_down("beta.test");
    for index in 0..3 {
        publish_procedure(alpha.service(), &author, &format!("retained procedure {index}"), &[]).await;
    }
    network.settle().await;
    // Far past the minimum retention: beta still needs them, so they stay.
    network.advance(TimeDelta::days(30));
    let minimum = TimeDelta::hours(168);
    assert_eq!(alpha.federation().purge_outbox(minimum).await.expect("purge"), 0);
    assert_eq!(
        alpha.federation().outbox_entries(0, 100).await.expect("outbox").len(),
        3
    );
    network.switchboard.bring_up("beta.test");
    network.settle().await;
    let lag = alpha
        .federation()
        .peer_replication_lag("beta.test")
        .await
        .expect("lag")
        .expect("state");
    assert_eq!(lag.undelivered, 0);
    // Delivered, and older than the minimum: the federation loop purged them once it was quiet.
    assert!(
        alpha
            .federation()
            .outbox_entries(0, 100)
            .await
            .expect("outbox")
            .is_empty()
    );
    // A newer event is kept for the minimum even though beta has it.
    publish_procedure(alpha.service(), &author, "fresh procedure", &[]).await;
    network.settle().await;
    assert_eq!(alpha.federation().purge_outbox(minimum).await.expect("purge"), 0);
    assert_eq!(
        alpha.federation().outbox_entries(0, 100).await.expect("outbox").len(),
        1
    );
    assert_eq!(alpha.federation().outbox_head().await.expect("head"), 4);
}

#[tokio::test]
async fn search_pages_stay_stable_when_an_older_remote_item_arrives_late() {
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    peered(&network, "alpha.test", "beta.test").await;
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));
    let alpha_author = agent(alpha.service(), "author").await;
    let beta_author = agent(beta.service(), "local author").await;
    network.switchboard.take_down("beta.test");
    // Published on alpha first, while beta is away: older than everything beta writes next.
    let remote = publish_procedure(alpha.service(), &alpha_author, "tune the garbage collector", &[])
        .await
        .id;
    network.advance(TimeDelta::minutes(10));
    let mut local = Vec::new();
    for index in 0..5 {
        local.push(
            publish_procedure(beta.service(), &beta_author, &format!("tune the queue {index}"), &[])
                .await
                .id,
        );
        network.advance(TimeDelta::seconds(1));
    }
    let beta_reader = reader(beta).await;
    let request = |cursor: Option<String>| SearchRequest {
        kinds: vec!["content".to_owned()],
        sort: Some("recent".to_owned()),
        limit: Some(2),
        cursor,
        ..SearchRequest::default()
    };
    let first = beta
        .service()
        .search(&beta_reader.caller, &request(None))
        .await
        .expect("page 1");
    // Now the older remote item arrives.
    network.switchboard.bring_up("beta.test");
    network.advance(TimeDelta::hours(1));
    network.settle().await;
    assert!(get(beta, &beta_reader, &remote).await.is_ok(), "it arrived");
    let mut seen: Vec<String> = first.results.iter().map(|hit| hit.id.clone()).collect();
    let mut cursor = first.next_cursor;
    while let Some(next) = cursor {
        let page = beta
            .service()
            .search(&beta_reader.caller, &request(Some(next)))
            .await
            .expect("page");
        seen.extend(page.results.iter().map(|hit| hit.id.clone()));
        cursor = page.next_cursor;
    }
    let mut expected = local.clone();
    expected.reverse();
    assert_eq!(
        seen, expected,
        "the pages of one search show what it saw at its start: no skip, no duplicate"
    );
    let fresh = beta
        .service()
        .search(
            &beta_reader.caller,
            &SearchRequest {
                limit: Some(50),
                ..request(None)
            },
        )
        .await
        .expect("a new search");
    assert!(
        fresh.results.iter().any(|hit| hit.id == remote),
        "a new search finds the remote item"
    );
}

#[tokio::test]
async fn a_permanent_refusal_becomes_a_dead_letter_that_an_admin_replays_or_drops() {
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    peered(&network, "alpha.test", "beta.test").await;
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));
    let author = agent(alpha.service(), "author").await;
    // Beta refuses for good (400): the event becomes a dead letter and the cursor moves on.
    network
        .switchboard
        .refuse("beta.test", 400, r#"{"reason":"malformed_object"}"#);
    let refused = publish_procedure(alpha.service(), &author, "refused procedure", &[])
        .await
        .id;
    network.settle().await;
    let lag = alpha
        .federation()
        .peer_replication_lag("beta.test")
        .await
        .expect("lag")
        .expect("state");
    assert_eq!((lag.undelivered, lag.dead_letters), (0, 1), "{lag:?}");
    let letters = alpha
        .federation()
        .dead_letters(Some("beta.test"), 10)
        .await
        .expect("dead letters");
    assert_eq!(letters.len(), 1);
    assert_eq!(letters[0].activity_type, "Create");
    assert!(
        letters[0]
            .last_error
            .as_deref()
            .is_some_and(|error| error.starts_with("http_400"))
    );

    // A 401 about the signature is retried once with a fresh signature, then it is final too.
    network
        .switchboard
        .refuse("beta.test", 401, r#"{"reason":"signature_invalid"}"#);
    let unauthorized = publish_procedure(alpha.service(), &author, "unauthorized procedure", &[])
        .await
        .id;
    network.settle().await;
    let lag = alpha
        .federation()
        .peer_replication_lag("beta.test")
        .await
        .expect("lag")
        .expect("state");
    assert_eq!((lag.undelivered, lag.dead_letters), (0, 2), "{lag:?}");

    // Beta takes them again: the admin replays the first (the same activity, signed afresh) and drops the second.
    network.switchboard.stop_refusing("beta.test");
    let letters = alpha
        .federation()
        .dead_letters(Some("beta.test"), 10)
        .await
        .expect("dead letters");
    let by_activity = |id: &str| {
        letters
            .iter()
            .find(|letter| letter.body.contains(id))
            .expect("letter")
            .id
            .clone()
    };
    alpha
        .federation()
        .replay_dead_letter(&by_activity(&refused))
        .await
        .expect("replayed");
    alpha
        .federation()
        .drop_dead_letter(&by_activity(&unauthorized))
        .await
        .expect("dropped");
    network.settle().await;
    let beta_reader = reader(beta).await;
    assert!(
        get(beta, &beta_reader, &refused).await.is_ok(),
        "the replayed activity arrived"
    );
    assert!(
        get(beta, &beta_reader, &unauthorized).await.is_err(),
        "the dropped one did not"
    );
    assert!(
        alpha
            .federation()
            .dead_letters(Some("beta.test"), 10)
            .await
            .expect("dead letters")
            .is_empty()
    );
    assert_eq!(
        alpha
            .federation()
            .drop_dead_letter("no-such-letter")
            .await
            .expect_err("unknown")
            .code,
        ErrorCode::NotFound
    );
}

/// A request to `node`'s admin API with `key`, answered as (status, JSON).
pub(crate) async fn admin_call(
    node: &Node,
    key: &str,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let request = http::Request::builder()
        .method(method)
        .uri(path)
        .header("host", &node.realm)
        .header("authorization", format!("Bearer {key}"))
        .header("content-type", "application/json")
        .body(body.map_or_else(Vec::new, |body| body.to_string().into_bytes()))
        .expect("request");
    send(node, request).await
}

#[tokio::test]
async fn the_admin_api_creates_spaces_deletes_content_and_shows_each_peers_replication() {
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    peered(&network, "alpha.test", "beta.test").await;
    let alpha = network.node("alpha.test");
    let owner = crate::fixtures::controller(alpha.service(), "Operator").await;
    let admin = crate::fixtures::agent_of_with_scopes(alpha.service(), &owner, "Dashboard", "admin").await;
    let author = agent(alpha.service(), "author").await;

    let (status, space) = admin_call(
        alpha,
        &admin.key,
        Method::POST,
        "/admin/spaces",
        Some(json!({ "name": "runbooks", "visibility": "federated", "description": "Shared runbooks" })),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{space}");
    assert_eq!(
        (space["visibility"].as_str(), space["origin"].as_str()),
        (Some("federated"), Some("alpha.test"))
    );
    let (status, refused) = admin_call(
        alpha,
        &admin.key,
        Method::POST,
        "/admin/spaces",
        Some(json!({ "name": "x", "visibility": "everyone" })),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(refused["error"]["code"], "validation_failed");

    let id = publish_in(
        alpha,
        &author,
        space["id"].as_str().expect("id"),
        "restart the scheduler",
    )
    .await;
    network.switchboard.take_down("beta.test");
    let (status, deleted) = admin_call(
        alpha,
        &admin.key,
        Method::DELETE,
        &format!("/admin/content/{id}"),
        Some(json!({ "reason": "obsolete" })),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{deleted}");
    assert_eq!(
        (deleted["deleted"].as_bool(), deleted["already_deleted"].as_bool()),
        (Some(true), Some(false))
    );
    assert_eq!(
        deleted["deleted_by"],
        admin.caller.actor.id.as_str(),
        "the key's actor deleted it"
    );
    network.settle().await;

    let (status, peers) = admin_call(alpha, &admin.key, Method::GET, "/admin/peers", None).await;
    assert_eq!(status, StatusCode::OK);
    let replication = &peers["peers"][0]["replication"];
    assert_eq!(
        replication["undelivered"], 3,
        "the space, the item and its deletion wait: {peers}"
    );
    assert_eq!(replication["last_error_class"], "connect_failed");
    assert!(replication["next_retry_at"].is_string());
    let (status, letters) = admin_call(alpha, &admin.key, Method::GET, "/admin/federation/dead-letters", None).await;
    assert_eq!(
        (status, letters["dead_letters"].as_array().map(Vec::len)),
        (StatusCode::OK, Some(0))
    );

    let reader_key = reader(alpha).await.key;
    let (status, _) = admin_call(alpha, &reader_key, Method::GET, "/admin/peers", None).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "the admin API needs the admin scope");
}

#[tokio::test]
async fn a_peer_down_past_the_delivery_horizon_is_unreachable_then_active_again_with_nothing_lost() {
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    peered(&network, "alpha.test", "beta.test").await;
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));
    let author = agent(alpha.service(), "author").await;
    network.switchboard.take_down("beta.test");
    let id = publish_procedure(alpha.service(), &author, "survive a long outage", &[])
        .await
        .id;
    // Eight days, probed at least hourly (the backoff's cap).
    let mut probes = 0;
    for _ in 0..(8 * 24) {
        let before = network.switchboard.sent().len();
        network.settle().await;
        probes += usize::from(network.switchboard.sent().len() > before);
        network.advance(TimeDelta::hours(1));
    }
    assert!(probes >= 8 * 24 - 12, "probed about hourly: {probes}");
    assert_eq!(
        alpha.peer(beta).await.peer.state,
        interai::domain::PeerState::Unreachable
    );
    let lag = alpha
        .federation()
        .peer_replication_lag("beta.test")
        .await
        .expect("lag")
        .expect("state");
    assert_eq!(lag.undelivered, 1, "the cursor is kept");
    network.switchboard.bring_up("beta.test");
    network.advance(TimeDelta::hours(1));
    network.settle().await;
    assert_eq!(alpha.peer(beta).await.peer.state, interai::domain::PeerState::Active);
    let beta_reader = reader(beta).await;
    assert!(get(beta, &beta_reader, &id).await.is_ok());
}

async fn publish_with_claim(node: &Node, author: &Agent, space: &str, title: &str, claim: &str) -> (String, String) {
    let published = node
        .service()
        .publish(
            &author.caller,
            &metadata("publish"),
            PublishRequest {
                content_type: "procedure".to_owned(),
                title: title.to_owned(),
                summary: format!("How to {title}."),
                body_markdown: format!("# {title}\n\n1. Do it.\n"),
                claims: vec![claim.to_owned()],
                space: Some(space.to_owned()),
                ..PublishRequest::default()
            },
        )
        .await
        .expect("publish");
    (published.id, published.claims[0].id.clone())
}

/// The intake reads what a batch looks up once for the whole batch; objects of one batch that depend on each other
/// (an item and its revisions, a new space and its items, two items making one claim, an item and its deletion)
/// must still see each other's writes, and the batch must commit as one, not fall back to one by one. Pulled, they
/// reach beta's queue in pages and are applied in the intake's batches.
#[tokio::test]
async fn objects_of_one_batch_that_depend_on_each_other_apply_together_as_if_one_by_one() {
    dependent_objects_arrive_after_an_outage(Arrival::Pulled).await;
}

/// The same objects pushed at once after the outage: the inbox applies them in the groups it stores them in (on
/// PostgreSQL several groups at once), with the same effect as one by one.
#[tokio::test]
async fn objects_that_depend_on_each_other_pushed_at_once_apply_as_if_one_by_one() {
    dependent_objects_arrive_after_an_outage(Arrival::Pushed).await;
}

/// How the objects of [`dependent_objects_arrive_after_an_outage`] reach beta.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Arrival {
    Pushed,
    Pulled,
}

async fn dependent_objects_arrive_after_an_outage(arrival: Arrival) {
    let network = Network::start_configured(&["alpha.test", "beta.test"], |_, config| {
        config.federation_push = arrival == Arrival::Pushed;
    })
    .await;
    peered(&network, "alpha.test", "beta.test").await;
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));
    let author = agent(alpha.service(), "author").await;
    let batches_before = metrics_of(beta).await;
    network.switchboard.take_down("beta.test");
    let space = create_space(alpha, "runbooks", SpaceVisibility::Federated).await;
    let revised = publish_in(alpha, &author, &space, "rotate the keys").await;
    revise(alpha, &author, &revised, "rotate the keys, second take").await;
    revise(alpha, &author, &revised, "rotate the keys, third take").await;
    let claim_text = "a restart clears the stuck lease";
    let (first, claim) = publish_with_claim(alpha, &author, &space, "clear a lease", claim_text).await;
    let (second, same_claim) = publish_with_claim(alpha, &author, &space, "unstick a worker", claim_text).await;
    assert_eq!(
        claim, same_claim,
        "alpha links the second item to the first item's claim"
    );
    let deleted = publish_in(alpha, &author, &space, "reboot everything").await;
    let admin = alpha.service().realm_admin().await.expect("admin");
    alpha
        .service()
        .delete_content(&admin, &deleted, "dangerous")
        .await
        .expect("deleted");
    network.switchboard.bring_up("beta.test");
    network.advance(TimeDelta::minutes(5));
    network.settle().await;

    let beta_reader = reader(beta).await;
    let view = get(beta, &beta_reader, &revised).await.expect("arrived");
    assert_eq!(current_revision(&view), (3, "rotate the keys, third take".to_owned()));
    for id in [&first, &second] {
        match get(beta, &beta_reader, id).await.expect("arrived") {
            ObjectView::Content(content) => assert_eq!(content.content.space_id.as_str(), space),
            other => panic!("not content: {other:?}"),
        }
    }
    match get(beta, &beta_reader, &claim).await.expect("the claim arrived") {
        ObjectView::Claim(view) => {
            let mut made_by: Vec<String> = view.made_by.iter().map(|id| id.as_str().to_owned()).collect();
            made_by.sort();
            let mut expected = vec![first.clone(), second.clone()];
            expected.sort();
            assert_eq!(made_by, expected, "both items make the one claim on beta too");
        }
        other => panic!("not a claim: {other:?}"),
    }
    let error = get(beta, &beta_reader, &deleted).await.expect_err("deleted");
    assert_eq!(error.details["deleted"], true, "{:?}", error.details);
    let lines = beta
        .federation()
        .intake_log(Some("alpha.test"), 1000)
        .await
        .expect("intake log");
    assert!(
        lines.iter().all(|line| line.outcome != "refused"),
        "{:?}",
        lines
            .iter()
            .map(|line| (&line.outcome, &line.detail))
            .collect::<Vec<_>>()
    );
    let batch_count = |metrics: &str, outcome: &str| -> f64 {
        let prefix = format!("interai_federation_intake_batches_total{{outcome=\"{outcome}\"}} ");
        metrics
            .lines()
            .find_map(|line| line.strip_prefix(&prefix))
            .and_then(|value| value.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {prefix} in {metrics}"))
    };
    let batches_after = metrics_of(beta).await;
    assert_eq!(
        batch_count(&batches_after, "one_by_one"),
        batch_count(&batches_before, "one_by_one"),
        "no batch fell back to one by one"
    );
    if arrival == Arrival::Pulled {
        assert!(batch_count(&batches_after, "together") > batch_count(&batches_before, "together"));
    }
}

/// A peer catching up on 64 published items applies them in the intake's batches, and on PostgreSQL the writes of a
/// batch travel as a few statements (the rows of each table joined, the tables' inserts in one statement where they
/// may be), not one per write: fewer statements for the whole catch-up than items. SQLite sends held writes in its
/// own way and counts none.
#[tokio::test]
async fn a_batch_of_sixty_four_replicated_items_costs_fewer_statements_than_items_on_postgres() {
    let network = Network::start_configured(&["alpha.test", "beta.test"], |_, config| {
        config.federation_push = false;
    })
    .await;
    peered(&network, "alpha.test", "beta.test").await;
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));
    let author = agent(alpha.service(), "author").await;
    let space = create_space(alpha, "runbooks", SpaceVisibility::Federated).await;
    network.advance(TimeDelta::minutes(5));
    network.settle().await;
    let Some(sent_before) = beta.instance.store().held_statements_sent() else {
        return;
    };
    network.switchboard.take_down("beta.test");
    let mut published = Vec::new();
    for number in 0..64 {
        published.push(publish_in(alpha, &author, &space, &format!("runbook number {number}")).await);
    }
    network.switchboard.bring_up("beta.test");
    network.advance(TimeDelta::minutes(5));
    network.settle().await;
    let sent = beta.instance.store().held_statements_sent().expect("PostgreSQL") - sent_before;

    let beta_reader = reader(beta).await;
    for id in &published {
        get(beta, &beta_reader, id).await.expect("arrived");
    }
    assert!(
        sent < 64,
        "64 replicated items cost {sent} statements of held writes on beta"
    );
}
