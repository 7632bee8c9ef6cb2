//! Federation part 1, through the in-process network: peering both ways, reject and undo, blocks, key rotation,
//! the documents peers read, and every inbox refusal with its status, nothing stored.

use axum::body::Body;
use chrono::TimeDelta;
use federation::protocol::{ACTIVITY_JSON, Activity};
use federation::{InstanceKeyPair, KeyDescription};
use http::{Method, StatusCode};
use interai::domain::{PeerLevel, PeerState};
use serde_json::{Value, json};
use tower::ServiceExt;
use url::Url;

use crate::support::network::{Network, Node};

pub(crate) async fn send(node: &Node, request: http::Request<Vec<u8>>) -> (StatusCode, Value) {
    let (parts, body) = request.into_parts();
    let response = node
        .router
        .clone()
        .oneshot(http::Request::from_parts(parts, Body::from(body)))
        .await
        .expect("router answers");
    let status = response.status();
    let bytes = axum::body::to_bytes(response.into_body(), 4 * 1024 * 1024)
        .await
        .expect("body");
    (status, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

async fn get(node: &Node, path: &str, accept: &str) -> (StatusCode, http::HeaderMap, Value) {
    let request = http::Request::builder()
        .uri(path)
        .header("host", &node.realm)
        .header("accept", accept)
        .body(Body::empty())
        .expect("request");
    let response = node.router.clone().oneshot(request).await.expect("router answers");
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = axum::body::to_bytes(response.into_body(), 1024 * 1024)
        .await
        .expect("body");
    (status, headers, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

/// A signed POST of `activity` from `from` to `to`'s inbox, signed with `from`'s current key.
pub(crate) async fn signed_post(from: &Node, to: &Node, activity: &Value) -> http::Request<Vec<u8>> {
    let key = from.federation().signing_key().await.expect("signing key");
    let inbox = Url::parse(&format!("{}/inbox", to.url())).expect("inbox URL");
    from.federation_client()
        .signed_request(
            Method::POST,
            &inbox,
            Some(serde_json::to_vec(activity).expect("json")),
            &key,
        )
        .expect("signed")
}

pub(crate) fn follow_of(from: &Node, to: &Node, id_suffix: &str) -> Value {
    let follow = Activity::follow(
        format!("{}/activities/{id_suffix}", from.url()),
        format!("{}/actor", from.url()),
        format!("{}/actor", to.url()),
        "2026-11-01T09:00:00Z".to_owned(),
    );
    serde_json::to_value(follow).expect("json")
}

fn accept_of(from: &Node, to: &Node, id_suffix: &str) -> Value {
    json!({
        "@context": "https://www.w3.org/ns/activitystreams",
        "id": format!("{}/activities/{id_suffix}", from.url()),
        "type": "Accept",
        "actor": format!("{}/actor", from.url()),
        "object": format!("{}/activities/unknown-follow", to.url()),
    })
}

pub(crate) async fn peered(network: &Network, first: &str, second: &str) {
    let (a, b) = (network.node(first), network.node(second));
    a.add_peer(b, PeerLevel::Standard).await;
    network.settle().await;
    let fingerprint = b.peer(a).await.keys[0].fingerprint.clone();
    b.federation()
        .approve_peer(&a.realm, None, Some(&fingerprint))
        .await
        .expect("approve");
    network.settle().await;
    assert_eq!(a.peer(b).await.peer.state, PeerState::Active);
    assert_eq!(b.peer(a).await.peer.state, PeerState::Active);
}

#[tokio::test]
async fn the_instance_actor_webfinger_nodeinfo_and_manifest_describe_the_instance_and_its_key() {
    let network = Network::start(&["alpha.test"]).await;
    let alpha = network.node("alpha.test");
    let (status, headers, actor) = get(alpha, "/actor", ACTIVITY_JSON).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers["content-type"], ACTIVITY_JSON);
    assert_eq!(actor["type"], "Service");
    assert_eq!(actor["id"], "http://alpha.test/actor");
    assert_eq!(actor["inbox"], "http://alpha.test/inbox");
    let multikey = &actor["assertionMethod"][0];
    assert_eq!(multikey["type"], "Multikey");
    assert!(
        multikey["publicKeyMultibase"]
            .as_str()
            .is_some_and(|key| key.starts_with("z6Mk"))
    );
    assert_eq!(actor["publicKey"]["id"], multikey["id"]);
    assert!(
        actor["publicKey"]["publicKeyPem"]
            .as_str()
            .is_some_and(|pem| pem.contains("BEGIN PUBLIC KEY"))
    );

    let (_, headers, _) = get(
        alpha,
        "/actor",
        "application/ld+json; profile=\"https://www.w3.org/ns/activitystreams\"",
    )
    .await;
    assert!(
        headers["content-type"]
            .to_str()
            .is_ok_and(|value| value.starts_with("application/ld+json"))
    );

    let (status, _, manifest) = get(alpha, "/.well-known/inter-ai", "application/json").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(manifest["federation"]["status"], "available");
    assert_eq!(manifest["federation"]["keys"][0]["key_id"], multikey["id"]);
    assert!(
        manifest["federation"]["keys"][0]["fingerprint"]
            .as_str()
            .is_some_and(|print| print.starts_with("SHA256:"))
    );

    let (status, _, jrd) = get(
        alpha,
        "/.well-known/webfinger?resource=acct:alpha.test@alpha.test",
        "application/jrd+json",
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(jrd["links"][0]["href"], "http://alpha.test/actor");
    let admin = alpha
        .service()
        .list_actors()
        .await
        .expect("actors")
        .into_iter()
        .next()
        .expect("an actor");
    let resource = format!("/.well-known/webfinger?resource=acct:{}@alpha.test", admin.id.as_str());
    let (status, _, jrd) = get(alpha, &resource, "application/jrd+json").await;
    assert_eq!(status, StatusCode::OK);
    let href = jrd["links"][0]["href"].as_str().expect("href").to_owned();
    let path = href.trim_start_matches("http://alpha.test");
    let (status, _, person) = get(alpha, path, ACTIVITY_JSON).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(person["id"], href);
    let (status, _, _) = get(
        alpha,
        "/.well-known/webfinger?resource=acct:usr_01jzzzzzzzzzzzzzzzzzzzzzzz@alpha.test",
        "application/jrd+json",
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    let (_, _, links) = get(alpha, "/.well-known/nodeinfo", "application/json").await;
    assert_eq!(links["links"][0]["href"], "http://alpha.test/nodeinfo/2.1");
    let (status, _, nodeinfo) = get(alpha, "/nodeinfo/2.1", "application/json").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(nodeinfo["version"], "2.1");
    assert_eq!(nodeinfo["software"]["name"], "interai");
}

#[tokio::test]
async fn peering_needs_the_other_admin_and_then_is_active_on_both_sides() {
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));
    let view = alpha.add_peer(beta, PeerLevel::Standard).await;
    assert_eq!(view.peer.state, PeerState::PendingOut);
    assert_eq!(view.keys.len(), 1, "beta's key is pinned");
    assert_eq!(view.keys[0].pinned_by, "admin");
    network.settle().await;
    let at_beta = beta.peer(alpha).await;
    assert_eq!(at_beta.peer.state, PeerState::PendingIn, "beta's admin has to decide");
    assert_eq!(at_beta.keys[0].pinned_by, "first_contact");
    assert_eq!(alpha.peer(beta).await.peer.state, PeerState::PendingOut);
    let wrong = beta
        .federation()
        .approve_peer("alpha.test", None, Some("SHA256:not-it"))
        .await;
    assert!(wrong.is_err(), "a fingerprint that does not match refuses the approval");
    let unconfirmed = beta.federation().approve_peer("alpha.test", None, None).await;
    assert!(
        unconfirmed.is_err(),
        "a key read on first contact is never pinned without its fingerprint"
    );
    let fingerprint = at_beta.keys[0].fingerprint.clone();
    beta.federation()
        .approve_peer("alpha.test", Some(PeerLevel::High), Some(&fingerprint))
        .await
        .expect("approved");
    network.settle().await;
    assert_eq!(alpha.peer(beta).await.peer.state, PeerState::Active);
    let at_beta = beta.peer(alpha).await;
    assert_eq!(at_beta.peer.state, PeerState::Active);
    assert_eq!(at_beta.peer.level, PeerLevel::High);
    assert_eq!(at_beta.keys[0].pinned_by, "admin");
    let log = beta
        .federation()
        .intake_log(Some("alpha.test"), 10)
        .await
        .expect("intake log");
    assert!(
        log.iter()
            .any(|line| line.activity_type == "Follow" && line.outcome == "applied"),
        "{log:?}"
    );
}

#[tokio::test]
async fn a_peer_that_the_other_side_had_already_added_is_accepted_at_once() {
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));
    alpha.add_peer(beta, PeerLevel::Standard).await;
    beta.add_peer(alpha, PeerLevel::Low).await;
    network.settle().await;
    assert_eq!(alpha.peer(beta).await.peer.state, PeerState::Active);
    assert_eq!(beta.peer(alpha).await.peer.state, PeerState::Active);
    // The same when the second add comes after the first Follow arrived.
    let network = Network::start(&["alpha.test", "gamma.test"]).await;
    let (alpha, gamma) = (network.node("alpha.test"), network.node("gamma.test"));
    alpha.add_peer(gamma, PeerLevel::Standard).await;
    network.settle().await;
    assert_eq!(gamma.peer(alpha).await.peer.state, PeerState::PendingIn);
    gamma.add_peer(alpha, PeerLevel::Standard).await;
    network.settle().await;
    assert_eq!(alpha.peer(gamma).await.peer.state, PeerState::Active);
    assert_eq!(gamma.peer(alpha).await.peer.state, PeerState::Active);
}

#[tokio::test]
async fn reject_and_undo_end_a_peering() {
    let network = Network::start(&["alpha.test", "beta.test", "gamma.test"]).await;
    let (alpha, beta, gamma) = (
        network.node("alpha.test"),
        network.node("beta.test"),
        network.node("gamma.test"),
    );
    alpha.add_peer(beta, PeerLevel::Standard).await;
    network.settle().await;
    beta.federation().reject_peer("alpha.test").await.expect("rejected");
    network.settle().await;
    assert_eq!(beta.peer(alpha).await.peer.state, PeerState::Rejected);
    assert_eq!(
        alpha.peer(beta).await.peer.state,
        PeerState::Rejected,
        "alpha learned of the Reject"
    );

    peered(&network, "alpha.test", "gamma.test").await;
    alpha.federation().remove_peer("gamma.test").await.expect("removed");
    network.settle().await;
    assert!(
        alpha.federation().peer_view("gamma.test").await.is_err(),
        "gone at alpha"
    );
    assert_eq!(
        gamma.peer(alpha).await.peer.state,
        PeerState::Rejected,
        "gamma learned of the Undo"
    );
}

#[tokio::test]
async fn a_block_takes_effect_on_the_next_request_and_an_expired_block_lifts() {
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    peered(&network, "alpha.test", "beta.test").await;
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));
    let until = interai::clock::Clock::now(&network.clock) + TimeDelta::hours(1);
    beta.federation()
        .block_peer("alpha.test", "spam", Some(until))
        .await
        .expect("blocked");
    let (status, body) = send(beta, signed_post(alpha, beta, &follow_of(alpha, beta, "b1")).await).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert_eq!(body["reason"], "blocked_sender");
    assert!(
        beta.federation()
            .inbound_activity("http://alpha.test/activities/b1")
            .await
            .expect("read")
            .is_none()
    );
    network.advance(TimeDelta::hours(1));
    let (status, _) = send(beta, signed_post(alpha, beta, &follow_of(alpha, beta, "b2")).await).await;
    assert_eq!(status, StatusCode::ACCEPTED, "the block lifted at its end");
    assert_eq!(beta.peer(alpha).await.peer.state, PeerState::Active);
    beta.federation()
        .block_peer("alpha.test", "again", None)
        .await
        .expect("blocked");
    beta.federation().unblock_peer("alpha.test").await.expect("unblocked");
    assert_eq!(beta.peer(alpha).await.peer.state, PeerState::Active);
}

#[tokio::test]
async fn a_rotated_key_is_pinned_when_the_old_key_endorsed_it_and_refused_otherwise() {
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    peered(&network, "alpha.test", "beta.test").await;
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));
    let new_key = alpha.federation().rotate_instance_key().await.expect("rotated");
    network.settle().await;
    let keys = beta.peer(alpha).await.keys;
    assert!(
        keys.iter()
            .any(|key| key.key_id == new_key.description.key_id && key.pinned_by != "admin"),
        "beta pinned the new key through the old key's endorsement: {keys:?}"
    );
    // Requests signed with the new key are accepted.
    let (status, _) = send(
        beta,
        signed_post(alpha, beta, &follow_of(alpha, beta, "after-rotation")).await,
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED);

    // A key that no pinned key endorsed is refused, even inside an Update signed by a pinned key.
    let stranger = InstanceKeyPair::from_secret_bytes(&[9_u8; 32]);
    let description = KeyDescription {
        key_id: "http://alpha.test/actor#key-forged".to_owned(),
        public_key: stranger.public_key(),
        valid_from: 0,
        valid_until: None,
    };
    let self_endorsed = stranger.endorse("http://alpha.test/actor#key-forged", &description);
    let mut actor =
        federation::protocol::Multikey::from_description("http://alpha.test/actor", &description, Some(&self_endorsed));
    actor.controller = "http://alpha.test/actor".to_owned();
    let (_, _, mut document) = get(alpha, "/actor", ACTIVITY_JSON).await;
    document["assertionMethod"]
        .as_array_mut()
        .expect("keys")
        .push(serde_json::to_value(&actor).expect("json"));
    document.as_object_mut().expect("object").remove("@context");
    let update = json!({
        "@context": "https://www.w3.org/ns/activitystreams",
        "id": "http://alpha.test/activities/forged-update",
        "type": "Update",
        "actor": "http://alpha.test/actor",
        "object": document,
    });
    let (status, _) = send(beta, signed_post(alpha, beta, &update).await).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    network.settle().await;
    let keys = beta.peer(alpha).await.keys;
    assert!(!keys.iter().any(|key| key.key_id.ends_with("key-forged")), "{keys:?}");
}

/// Every refusal of the inbox: its status and reason, and nothing stored.
#[tokio::test]
async fn the_inbox_refuses_each_bad_request_with_its_own_status_and_stores_nothing() {
    let network = Network::start(&["alpha.test", "beta.test", "gamma.test"]).await;
    peered(&network, "alpha.test", "beta.test").await;
    let (alpha, beta, gamma) = (
        network.node("alpha.test"),
        network.node("beta.test"),
        network.node("gamma.test"),
    );
    let inbox = Url::parse("http://beta.test/inbox").expect("url");
    let key = alpha.federation().signing_key().await.expect("key");
    let activity = |suffix: &str| follow_of(alpha, beta, suffix);
    let body = |suffix: &str| serde_json::to_vec(&activity(suffix)).expect("json");

    let mut cases: Vec<(&str, http::Request<Vec<u8>>, StatusCode, &str)> = Vec::new();
    // No signature.
    let mut request = alpha
        .federation_client()
        .signed_request(Method::POST, &inbox, Some(body("r1")), &key)
        .expect("signed");
    request.headers_mut().remove("signature");
    request.headers_mut().remove("signature-input");
    cases.push(("r1", request, StatusCode::UNAUTHORIZED, "signature_missing"));
    // Forged signature bytes.
    let mut request = alpha
        .federation_client()
        .signed_request(Method::POST, &inbox, Some(body("r2")), &key)
        .expect("signed");
    let zero_signature = format!(
        "sig1=:{}:",
        base64::Engine::encode(&base64::engine::general_purpose::STANDARD, [0_u8; 64])
    );
    request.headers_mut().insert(
        "signature",
        http::HeaderValue::from_str(&zero_signature).expect("header"),
    );
    cases.push(("r2", request, StatusCode::UNAUTHORIZED, "signature_invalid"));
    // Signed with another key under alpha's key ID.
    let wrong = interai::service::federation::identity::SigningKey {
        key_id: key.key_id.clone(),
        key_pair: InstanceKeyPair::from_secret_bytes(&[3_u8; 32]),
    };
    let request = alpha
        .federation_client()
        .signed_request(Method::POST, &inbox, Some(body("r3")), &wrong)
        .expect("signed");
    cases.push(("r3", request, StatusCode::UNAUTHORIZED, "signature_invalid"));
    // A body changed after signing: the digest no longer matches.
    let mut request = alpha
        .federation_client()
        .signed_request(Method::POST, &inbox, Some(body("r4")), &key)
        .expect("signed");
    *request.body_mut() = body("r4-tampered");
    cases.push(("r4", request, StatusCode::BAD_REQUEST, "digest_mismatch"));
    // The digest removed.
    let mut request = alpha
        .federation_client()
        .signed_request(Method::POST, &inbox, Some(body("r5")), &key)
        .expect("signed");
    request.headers_mut().remove("content-digest");
    cases.push(("r5", request, StatusCode::BAD_REQUEST, "digest_missing"));
    // Wrong content type.
    let mut request = alpha
        .federation_client()
        .signed_request(Method::POST, &inbox, Some(body("r6")), &key)
        .expect("signed");
    request
        .headers_mut()
        .insert("content-type", http::HeaderValue::from_static("text/plain"));
    cases.push((
        "r6",
        request,
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "unsupported_media_type",
    ));
    // Oversize body.
    let mut request = alpha
        .federation_client()
        .signed_request(Method::POST, &inbox, Some(body("r7")), &key)
        .expect("signed");
    *request.body_mut() = vec![b' '; 2 * 1024 * 1024 + 1];
    cases.push(("r7", request, StatusCode::PAYLOAD_TOO_LARGE, "body_too_large"));
    // Malformed JSON, properly signed.
    let request = alpha
        .federation_client()
        .signed_request(Method::POST, &inbox, Some(b"{\"type\": \"Follow\",".to_vec()), &key)
        .expect("signed");
    cases.push(("r8", request, StatusCode::BAD_REQUEST, "malformed_activity"));
    // Wrong types inside an activity.
    let request = alpha
        .federation_client()
        .signed_request(
            Method::POST,
            &inbox,
            Some(br#"{"id": 5, "type": "Follow", "actor": [], "object": {}}"#.to_vec()),
            &key,
        )
        .expect("signed");
    cases.push(("r9", request, StatusCode::BAD_REQUEST, "malformed_activity"));
    // An activity of an unknown type.
    let mut unknown = activity("r10");
    unknown["type"] = json!("Dance");
    let request = alpha
        .federation_client()
        .signed_request(
            Method::POST,
            &inbox,
            Some(serde_json::to_vec(&unknown).expect("json")),
            &key,
        )
        .expect("signed");
    cases.push(("r10", request, StatusCode::BAD_REQUEST, "unsupported_activity"));
    // An unknown sender (gamma is nobody's peer) sending anything but a Follow.
    let request = signed_post(gamma, beta, &accept_of(gamma, beta, "r11")).await;
    cases.push(("r11", request, StatusCode::FORBIDDEN, "unknown_sender"));

    for (label, request, status, reason) in cases {
        let (got, body) = send(beta, request).await;
        assert_eq!(
            (got, body["reason"].as_str().unwrap_or("")),
            (status, reason),
            "{label}: {body}"
        );
    }
    for suffix in ["r1", "r2", "r3", "r4", "r5", "r6", "r7", "r10"] {
        let id = format!("http://alpha.test/activities/{suffix}");
        assert!(
            beta.federation().inbound_activity(&id).await.expect("read").is_none(),
            "{suffix} was stored"
        );
    }
    assert!(
        beta.federation()
            .inbound_activity("http://gamma.test/activities/r11")
            .await
            .expect("read")
            .is_none()
    );
}

#[tokio::test]
async fn stale_future_and_expired_signatures_and_replayed_nonces_are_refused() {
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    peered(&network, "alpha.test", "beta.test").await;
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));
    // Signed six minutes ago: stale.
    let request = signed_post(alpha, beta, &follow_of(alpha, beta, "t1")).await;
    network.advance(TimeDelta::minutes(6));
    let (status, body) = send(beta, request).await;
    assert_eq!(
        (status, body["reason"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("created_too_old")),
        "{body}"
    );
    // Signed six minutes in the future.
    network.advance(TimeDelta::minutes(6));
    let request = signed_post(alpha, beta, &follow_of(alpha, beta, "t2")).await;
    network.advance(TimeDelta::minutes(-12));
    let (status, body) = send(beta, request).await;
    assert_eq!(
        (status, body["reason"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("created_in_future")),
        "{body}"
    );
    network.advance(TimeDelta::minutes(6));
    // A replay of an accepted request.
    let request = signed_post(alpha, beta, &follow_of(alpha, beta, "t3")).await;
    let replay = request.clone();
    assert_eq!(send(beta, request).await.0, StatusCode::ACCEPTED);
    let (status, body) = send(beta, replay).await;
    assert_eq!(
        (status, body["reason"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("replayed_nonce")),
        "{body}"
    );
    // The same activity again with a fresh signature: accepted, not queued twice.
    let (status, body) = send(beta, signed_post(alpha, beta, &follow_of(alpha, beta, "t3")).await).await;
    assert_eq!(
        (status, body["outcome"].as_str()),
        (StatusCode::ACCEPTED, Some("duplicate"))
    );
}

#[tokio::test]
async fn a_pending_peer_may_send_only_peering_activities() {
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));
    alpha.add_peer(beta, PeerLevel::Standard).await;
    network.settle().await;
    let create = json!({
        "@context": "https://www.w3.org/ns/activitystreams",
        "id": "http://alpha.test/activities/c1",
        "type": "Create",
        "actor": "http://alpha.test/actor",
        "object": { "id": "http://alpha.test/o/cnt_01jab", "type": "Note" },
    });
    let (status, body) = send(beta, signed_post(alpha, beta, &create).await).await;
    assert_eq!(
        (status, body["reason"].as_str()),
        (StatusCode::FORBIDDEN, Some("peer_not_active")),
        "{body}"
    );
}

#[tokio::test]
async fn deliveries_to_a_peer_that_is_down_wait_and_arrive_when_it_is_back() {
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));
    alpha.add_peer(beta, PeerLevel::Standard).await;
    network.switchboard.take_down("beta.test");
    network.settle().await;
    let attempts = network
        .switchboard
        .sent()
        .iter()
        .filter(|(host, method, path)| host == "beta.test" && method == "POST" && path == "/inbox")
        .count();
    assert_eq!(attempts, 1, "one attempt, then the backoff");
    let view = alpha.peer(beta).await;
    assert_eq!(view.pending_deliveries, 1, "the Follow waits");
    assert!(
        view.peer
            .last_error
            .as_deref()
            .is_some_and(|error| error.starts_with("connect_failed")),
        "{:?}",
        view.peer.last_error
    );
    network.switchboard.bring_up("beta.test");
    network.settle().await;
    assert_eq!(alpha.peer(beta).await.pending_deliveries, 1, "not before its backoff");
    network.advance(TimeDelta::minutes(2));
    network.settle().await;
    assert_eq!(alpha.peer(beta).await.pending_deliveries, 0);
    assert_eq!(beta.peer(alpha).await.peer.state, PeerState::PendingIn);
}

#[tokio::test]
async fn a_replay_and_a_block_hold_across_two_processes_on_one_database() {
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    peered(&network, "alpha.test", "beta.test").await;
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));
    let (_second, second_router) = network.second_process("beta.test").await;
    let to_second = |request: http::Request<Vec<u8>>| {
        let router = second_router.clone();
        async move {
            let (parts, body) = request.into_parts();
            let response = router
                .oneshot(http::Request::from_parts(parts, Body::from(body)))
                .await
                .expect("answers");
            let status = response.status();
            let bytes = axum::body::to_bytes(response.into_body(), 1024 * 1024)
                .await
                .expect("body");
            (status, serde_json::from_slice::<Value>(&bytes).unwrap_or(Value::Null))
        }
    };
    let request = signed_post(alpha, beta, &follow_of(alpha, beta, "p1")).await;
    let replay = request.clone();
    assert_eq!(send(beta, request).await.0, StatusCode::ACCEPTED);
    let (status, body) = to_second(replay).await;
    assert_eq!(
        (status, body["reason"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("replayed_nonce")),
        "{body}"
    );

    beta.federation()
        .block_peer("alpha.test", "abuse", None)
        .await
        .expect("blocked in the first process");
    let (status, body) = to_second(signed_post(alpha, beta, &follow_of(alpha, beta, "p2")).await).await;
    assert_eq!(
        (status, body["reason"].as_str()),
        (StatusCode::FORBIDDEN, Some("blocked_sender")),
        "{body}"
    );
}

#[tokio::test]
async fn a_peer_that_cannot_be_reached_for_the_delivery_horizon_is_unreachable_until_it_speaks_again() {
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    peered(&network, "alpha.test", "beta.test").await;
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));
    network.switchboard.take_down("beta.test");
    alpha
        .federation()
        .rotate_instance_key()
        .await
        .expect("rotated: an Update is queued for beta");
    for _ in 0..(8 * 24) {
        network.advance(TimeDelta::hours(1));
        network.settle().await;
    }
    let view = alpha.peer(beta).await;
    assert_eq!(view.peer.state, PeerState::Unreachable, "{:?}", view.peer.last_error);
    assert_eq!(view.pending_deliveries, 1, "nothing is dropped");
    network.switchboard.bring_up("beta.test");
    // Any authenticated request from beta brings it back, and resets the backoff.
    let (status, _) = send(alpha, signed_post(beta, alpha, &follow_of(beta, alpha, "back")).await).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    network.settle().await;
    let view = alpha.peer(beta).await;
    assert_eq!(view.peer.state, PeerState::Active);
    assert_eq!(view.pending_deliveries, 0, "the held Update went out");
}

#[tokio::test]
async fn a_request_signed_with_a_key_not_yet_pinned_rereads_the_actor_once_and_pins_only_an_endorsed_key() {
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    peered(&network, "alpha.test", "beta.test").await;
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));
    // Alpha rotates, and its request reaches beta before the Update announcing the new key (beta read alpha's
    // documents when they peered: the next re-read is allowed an interval later).
    network.advance(TimeDelta::minutes(61));
    alpha.federation().rotate_instance_key().await.expect("rotated");
    let actor_reads = |network: &Network| {
        network
            .switchboard
            .sent()
            .iter()
            .filter(|(host, method, path)| host == "alpha.test" && method == "GET" && path == "/actor")
            .count()
    };
    let before = actor_reads(&network);
    let (status, body) = send(beta, signed_post(alpha, beta, &follow_of(alpha, beta, "k1")).await).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    assert_eq!(actor_reads(&network), before + 1, "beta re-read alpha's actor once");
    // A key nobody endorsed, within the interval: refused without another read.
    let forged = interai::service::federation::identity::SigningKey {
        key_id: "http://alpha.test/actor#key-forged".to_owned(),
        key_pair: InstanceKeyPair::from_secret_bytes(&[5_u8; 32]),
    };
    let inbox = Url::parse("http://beta.test/inbox").expect("url");
    let request = alpha
        .federation_client()
        .signed_request(
            Method::POST,
            &inbox,
            Some(serde_json::to_vec(&follow_of(alpha, beta, "k2")).expect("json")),
            &forged,
        )
        .expect("signed");
    let (status, body) = send(beta, request).await;
    assert_eq!(
        (status, body["reason"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("unknown_key")),
        "{body}"
    );
    assert_eq!(actor_reads(&network), before + 1, "at most one re-read per interval");
}

#[tokio::test]
async fn the_outbox_answers_signed_gets_from_active_peers_only() {
    let network = Network::start(&["alpha.test", "beta.test", "gamma.test"]).await;
    peered(&network, "alpha.test", "beta.test").await;
    let (alpha, beta, gamma) = (
        network.node("alpha.test"),
        network.node("beta.test"),
        network.node("gamma.test"),
    );
    let outbox = Url::parse("http://beta.test/outbox").expect("url");
    let key = alpha.federation().signing_key().await.expect("key");
    let request = alpha
        .federation_client()
        .signed_request(Method::GET, &outbox, None, &key)
        .expect("signed");
    let replay = request.clone();
    let (status, body) = send(beta, request).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["type"], "OrderedCollection");
    let (status, body) = send(beta, replay).await;
    assert_eq!(
        (status, body["reason"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("replayed_nonce"))
    );
    let (status, _, _) = get(beta, "/outbox", ACTIVITY_JSON).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "an unsigned GET");
    let gamma_key = gamma.federation().signing_key().await.expect("key");
    let request = gamma
        .federation_client()
        .signed_request(Method::GET, &outbox, None, &gamma_key)
        .expect("signed");
    assert_eq!(send(beta, request).await.0, StatusCode::FORBIDDEN, "not a peer");
    // A GET signed for another path does not verify.
    let elsewhere = Url::parse("http://beta.test/outbox?after=0").expect("url");
    let mut request = alpha
        .federation_client()
        .signed_request(Method::GET, &elsewhere, None, &key)
        .expect("signed");
    *request.uri_mut() = "http://beta.test/outbox".parse().expect("uri");
    let (status, body) = send(beta, request).await;
    assert_eq!(
        (status, body["reason"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("signature_invalid"))
    );
}

#[tokio::test]
async fn a_refused_request_spends_its_nonce_and_an_applied_activity_keeps_only_its_id_until_no_sender_retries() {
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    peered(&network, "alpha.test", "beta.test").await;
    let (alpha, beta) = (network.node("alpha.test"), network.node("beta.test"));

    // Refused after its signature verified (step 8): the nonce is spent all the same, so a replay is a replay.
    let mut wrong_actor = follow_of(alpha, beta, "n1");
    wrong_actor["actor"] = json!(format!("{}/actor", beta.url()));
    let request = signed_post(alpha, beta, &wrong_actor).await;
    let replay = request.clone();
    let (status, body) = send(beta, request).await;
    assert_eq!(
        (status, body["reason"].as_str()),
        (StatusCode::BAD_REQUEST, Some("actor_mismatch"))
    );
    let (status, body) = send(beta, replay).await;
    assert_eq!(
        (status, body["reason"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("replayed_nonce")),
        "{body}"
    );

    // Accepted, then applied: the row stays as the dedupe key, without the body.
    let id = format!("{}/activities/n2", alpha.url());
    let request = signed_post(alpha, beta, &follow_of(alpha, beta, "n2")).await;
    let replay = request.clone();
    assert_eq!(send(beta, request).await.0, StatusCode::ACCEPTED);
    let (status, body) = send(beta, replay).await;
    assert_eq!(
        (status, body["reason"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("replayed_nonce")),
        "an accepted request's nonce is spent too: {body}"
    );
    network.settle().await;
    let stored = beta
        .federation()
        .inbound_activity(&id)
        .await
        .expect("read")
        .expect("kept");
    assert_eq!(stored.state, "applied");
    assert!(stored.processed_at.is_some());
    assert_eq!(stored.body, "", "an applied activity's body is not kept");
    let (status, body) = send(beta, signed_post(alpha, beta, &follow_of(alpha, beta, "n2")).await).await;
    assert_eq!(
        (status, body["outcome"].as_str()),
        (StatusCode::ACCEPTED, Some("duplicate"))
    );

    // After the senders' delivery horizon and a day, the loop forgets it.
    network.advance(TimeDelta::days(8) + TimeDelta::minutes(2));
    network.settle().await;
    assert!(
        beta.federation().inbound_activity(&id).await.expect("read").is_none(),
        "an activity received more than 8 days ago is purged"
    );
}

/// Requests that reach the inbox together are stored in one group; inside it a nonce is still spent once (the
/// second request with it is a replay, nothing of it stored) and an activity ID queued once (the second is a
/// duplicate), exactly as when they arrive one after the other.
#[tokio::test]
async fn requests_stored_in_one_group_keep_nonces_single_use_and_activities_deduplicated() {
    use interai::service::federation::inbox::{InboxNonce, Intake, VerifiedActivity};
    let network = Network::start(&["alpha.test", "beta.test"]).await;
    peered(&network, "alpha.test", "beta.test").await;
    let beta = network.node("beta.test").federation();
    let queued_before = beta.due_inbound(1000).await.expect("queue").len();
    let expires_at = beta.now() + TimeDelta::minutes(5);
    // (activity, nonce): eight distinct ones, then a replay of the fourth's nonce and a resend of the third's ID.
    let mut requests: Vec<(String, String)> = (0..8)
        .map(|index| {
            (
                format!("https://alpha.test/activities/{index}"),
                format!("nonce-{index}"),
            )
        })
        .collect();
    requests.push(("https://alpha.test/activities/8".to_owned(), "nonce-3".to_owned()));
    requests.push(("https://alpha.test/activities/2".to_owned(), "nonce-9".to_owned()));
    // On the test's single-threaded runtime the tasks run in the order they were spawned, so the requests join the
    // waiting list in this order.
    let mut calls = tokio::task::JoinSet::new();
    for (index, (activity_id, nonce)) in requests.iter().enumerate() {
        let activity = VerifiedActivity {
            peer_realm: "alpha.test".to_owned(),
            key_id: "https://alpha.test/actor#main-key".to_owned(),
            activity_id: activity_id.clone(),
            activity_type: "Create".to_owned(),
            body: "{}".to_owned(),
            sender_state: Some(PeerState::Active),
        };
        let nonce = InboxNonce {
            nonce: nonce.clone(),
            expires_at,
        };
        let service = beta.clone();
        calls.spawn(async move {
            (
                index,
                service.enqueue_inbound(&activity, &nonce, None).await.expect("stored"),
            )
        });
    }
    let mut intakes = vec![None; requests.len()];
    while let Some(joined) = calls.join_next().await {
        let (index, intake) = joined.expect("the request's task");
        intakes[index] = Some(intake);
    }
    let intakes: Vec<Intake> = intakes.into_iter().flatten().collect();
    let mut expected = vec![Intake::Queued; 8];
    expected.extend([Intake::ReplayedNonce, Intake::Duplicate]);
    assert_eq!(intakes, expected);
    let queued: Vec<String> = beta
        .due_inbound(1000)
        .await
        .expect("queue")
        .into_iter()
        .map(|row| row.activity_id)
        .filter(|id| id.starts_with("https://alpha.test/activities/"))
        .collect();
    assert_eq!(queued.len(), 8, "{queued:?}");
    assert!(!queued.contains(&"https://alpha.test/activities/8".to_owned()));
    assert_eq!(beta.due_inbound(1000).await.expect("queue").len(), queued_before + 8);
}
