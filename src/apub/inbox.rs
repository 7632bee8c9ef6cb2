//! `POST /inbox`: the nine steps of federation.md, in that order, each failure its own status and reason:
//!
//! 1. body cap and content type (413, 415);
//! 2. the sender by `keyid` (403: unknown, blocked, or a pending peer sending anything but peering), decided from
//!    the headers before the body is read wherever the headers suffice: only a stranger's small first-contact
//!    `Follow` and a known peer's activity have their bodies read;
//! 3. `created` and `expires` against the injected clock (401);
//! 4. `Content-Digest` (400);
//! 5. the signature over the target URI rebuilt from the public URL (401);
//! 6. the nonce, shared through the database (401);
//! 7. the per-peer rate and concurrency (429 with `Retry-After`);
//! 8. dedupe on the activity ID (202 without reprocessing);
//! 9. durable enqueue, then 202; a worker applies what was queued.
//!
//! A refused request leaves nothing behind but, from step 6 on, its nonce (so that it cannot be replayed).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::extract::State;
use axum::http::{Method, Request, StatusCode, header};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, TimeDelta, Utc};
use federation::protocol::{Activity, ActivityKind, is_activity_json};
use federation::signature::{ParsedSignature, RequestParts, parse_signature};
use federation::{PublicKey, Rejection, RejectionReason};
use serde_json::json;
use url::Url;

use super::ApubState;
use super::signing_time::TIME_POLICY;
use crate::service::federation::admission::{AdmittedSender, MaySend, Refusal, SenderPurpose};
use crate::service::federation::inbox::{InboxNonce, InboxSender, Intake, VerifiedActivity};
use crate::service::federation::peering::PeerIntroduction;

/// Sustained activities per second one peer may send, and the burst it may save up: enough for replication at its
/// target rate (2,000 activities/s) with room for a backlog after an outage, still a bound on what one peer costs.
pub const PEER_RATE_PER_SECOND: f64 = 5000.0;
/// The burst.
pub const PEER_BURST: f64 = 10_000.0;
/// First contacts (Follows from unknown instances, each of which costs a fetch) per second, all senders together.
pub const FIRST_CONTACTS_PER_SECOND: f64 = 1.0;
/// Their burst.
pub const FIRST_CONTACT_BURST: f64 = 10.0;
/// The bucket name of first contacts (no realm is spelled with a space).
const FIRST_CONTACT_BUCKET: &str = "first contact";
/// The largest body a stranger's first contact may announce: a `Follow` is a few hundred bytes, so anything
/// larger from an unknown sender is refused from its headers, before its body is read.
pub const FIRST_CONTACT_MAX_BODY_BYTES: usize = 16 * 1024;
/// Requests of one peer the inbox works on at once.
pub const PEER_CONCURRENCY: usize = 64;

/// What became of one inbox request, for the response, the log and the metrics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InboxVerdict {
    /// The HTTP status.
    pub status: StatusCode,
    /// `accepted`, `duplicate` or `rejected`.
    pub outcome: &'static str,
    /// The rejection reason (snake_case), `none` when accepted.
    pub reason: &'static str,
    /// One sentence for the sender.
    pub detail: String,
    /// Seconds to wait, for 429.
    pub retry_after: Option<u64>,
}

impl InboxVerdict {
    fn rejected(status: StatusCode, reason: &'static str, detail: impl Into<String>) -> InboxVerdict {
        InboxVerdict {
            status,
            outcome: "rejected",
            reason,
            detail: detail.into(),
            retry_after: None,
        }
    }

    fn from_rejection(rejection: &Rejection) -> InboxVerdict {
        let status = match rejection.reason {
            RejectionReason::DigestMissing | RejectionReason::DigestMismatch | RejectionReason::DigestMalformed => {
                StatusCode::BAD_REQUEST
            }
            _ => StatusCode::UNAUTHORIZED,
        };
        InboxVerdict::rejected(status, rejection.reason.as_str(), rejection.detail.clone())
    }
}

impl IntoResponse for InboxVerdict {
    fn into_response(self) -> Response {
        let body = json!({ "outcome": self.outcome, "reason": self.reason, "detail": self.detail });
        let mut response = (self.status, axum::Json(body)).into_response();
        if let Some(seconds) = self.retry_after
            && let Ok(value) = header::HeaderValue::from_str(&seconds.to_string())
        {
            response.headers_mut().insert(header::RETRY_AFTER, value);
        }
        if self.status == StatusCode::UNAUTHORIZED {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, header::HeaderValue::from_static("Signature"));
        }
        response
    }
}

/// Per-peer token buckets and concurrency slots of one instance (never shared between instances).
#[derive(Debug, Default)]
pub struct PeerLimits {
    buckets: Mutex<HashMap<String, Bucket>>,
    slots: Mutex<HashMap<String, Arc<tokio::sync::Semaphore>>>,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    updated: DateTime<Utc>,
}

impl PeerLimits {
    /// Takes a token for `peer` at `now`; `Err(seconds)` to wait when none is left.
    pub fn take(&self, peer: &str, now: DateTime<Utc>) -> Result<(), u64> {
        self.take_from(peer, now, PEER_RATE_PER_SECOND, PEER_BURST)
    }

    fn take_from(&self, peer: &str, now: DateTime<Utc>, rate: f64, burst: f64) -> Result<(), u64> {
        let mut buckets = self.buckets.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let bucket = buckets.entry(peer.to_owned()).or_insert(Bucket {
            tokens: burst,
            updated: now,
        });
        // Microseconds (the clock's resolution), so requests less than a millisecond apart still refill; and the
        // bucket's time never moves back, so concurrent requests that read the clock out of order cannot refill the
        // same interval twice.
        if now > bucket.updated {
            let elapsed = (now - bucket.updated).num_microseconds().unwrap_or(i64::MAX) as f64 / 1_000_000.0;
            bucket.tokens = (bucket.tokens + elapsed * rate).min(burst);
            bucket.updated = now;
        }
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            Err(((1.0 - bucket.tokens) / rate).ceil().max(1.0) as u64)
        }
    }

    /// Takes a token of the bucket all unknown instances share (each first contact costs this instance a fetch).
    pub fn take_first_contact(&self, now: DateTime<Utc>) -> Result<(), u64> {
        self.take_from(
            FIRST_CONTACT_BUCKET,
            now,
            FIRST_CONTACTS_PER_SECOND,
            FIRST_CONTACT_BURST,
        )
    }

    fn slot(&self, peer: &str) -> Option<tokio::sync::OwnedSemaphorePermit> {
        let semaphore = self
            .slots
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .entry(peer.to_owned())
            .or_insert_with(|| Arc::new(tokio::sync::Semaphore::new(PEER_CONCURRENCY)))
            .clone();
        semaphore.try_acquire_owned().ok()
    }
}

/// The handler.
pub async fn receive(State(state): State<ApubState>, request: Request<Body>) -> Response {
    let verdict = process(&state, request).await;
    state.record_inbox(&verdict);
    if verdict.outcome == "rejected" {
        tracing::info!(status = verdict.status.as_u16(), reason = verdict.reason, detail = %verdict.detail, "inbox request refused");
    }
    verdict.into_response()
}

async fn process(state: &ApubState, request: Request<Body>) -> InboxVerdict {
    let (parts, body) = request.into_parts();
    // 1. Body cap and content type.
    let cap = state.inbox_body_cap;
    let declared_length = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|text| text.parse::<usize>().ok());
    if declared_length.is_some_and(|length| length > cap) {
        return InboxVerdict::rejected(
            StatusCode::PAYLOAD_TOO_LARGE,
            "body_too_large",
            format!("the body cap is {cap} bytes"),
        );
    }
    let content_type = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("");
    if !is_activity_json(content_type) {
        return InboxVerdict::rejected(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            "the inbox takes application/activity+json or application/ld+json with the ActivityStreams profile",
        );
    }
    // 2. The sender, by the signature's keyid, decided from the headers before a byte of the body is read: a request
    // without a signature, from a blocked or unknown sender, or whose key is outside its window costs the body
    // nothing. Only a stranger's first contact, small and at a bounded rate, has its body read.
    let signature = match parse_signature(&parts.headers) {
        Ok(signature) => signature,
        Err(rejection) => return InboxVerdict::from_rejection(&rejection),
    };
    let federation = state.client.federation();
    // The body's own bound: its `Content-Length` as hyper read it (or the size of a body built in process).
    let announced_length = axum::body::HttpBody::size_hint(&body)
        .upper()
        .and_then(|upper| usize::try_from(upper).ok());
    let sender = match sender_from_headers(state, &signature, announced_length).await {
        Ok(sender) => sender,
        Err(verdict) => return verdict,
    };
    let body_cap = match &sender {
        HeaderSender::Known(_) => cap,
        HeaderSender::Stranger { .. } => FIRST_CONTACT_MAX_BODY_BYTES,
    };
    let body = match axum::body::to_bytes(body, body_cap).await {
        Ok(body) => body,
        Err(_) => {
            return InboxVerdict::rejected(
                StatusCode::PAYLOAD_TOO_LARGE,
                "body_too_large",
                format!("the body cap is {body_cap} bytes"),
            );
        }
    };
    // What only the body tells: whether a sender admitted for peering messages only sends one (the body is read
    // for it only then), and a stranger's Follow.
    let (peer_realm, key, first_contact, known_sender) = match sender {
        HeaderSender::Known(admitted) => {
            if let MaySend::PeeringOnly { otherwise } = &admitted.may_send
                && !is_peering(&body)
            {
                return refused_sender(otherwise);
            }
            let sender = admitted.sender;
            (sender.peer.realm.clone(), sender.public_key, None, Some(sender))
        }
        HeaderSender::Stranger { actor_url } => {
            match first_contact(state, &signature, actor_url, &body, &parts.headers).await {
                Ok((introduction, key)) => (introduction.realm.clone(), key, Some(introduction), None),
                Err(verdict) => return verdict,
            }
        }
    };
    // 3. created and expires, against the injected clock.
    let now = federation.now();
    if let Err(rejection) = signature.check_time(now.timestamp(), TIME_POLICY) {
        return InboxVerdict::from_rejection(&rejection);
    }
    if let Err(rejection) = signature.check_coverage(true) {
        return InboxVerdict::from_rejection(&rejection);
    }
    // 4. Content-Digest.
    let digest = parts
        .headers
        .get("content-digest")
        .and_then(|value| value.to_str().ok());
    if let Err(rejection) = federation::digest::verify_content_digest(digest, &body) {
        return InboxVerdict::from_rejection(&rejection);
    }
    // 5. The signature, over the target URI rebuilt from the public URL.
    let target = match target_uri(state, &parts.uri) {
        Some(target) => target,
        None => {
            return InboxVerdict::rejected(
                StatusCode::BAD_REQUEST,
                "malformed_target",
                "the request target cannot be read",
            );
        }
    };
    let request_parts = RequestParts {
        method: &Method::POST,
        target_uri: &target,
        headers: &parts.headers,
    };
    if let Err(rejection) = signature.verify(&request_parts, &key) {
        return InboxVerdict::from_rejection(&rejection);
    }
    // 6. The nonce, once per acceptance window, across every process on the database. It is recorded with the
    // activity in one transaction (step 9), or alone when a later step refuses the request, so every request
    // whose signature was verified leaves its nonce behind and cannot be replayed.
    let nonce = InboxNonce {
        nonce: signature.nonce.clone(),
        expires_at: DateTime::from_timestamp(signature.expires.max(now.timestamp()), 0).unwrap_or(now)
            + TimeDelta::seconds(TIME_POLICY.max_clock_skew),
    };
    let checked = check_activity(
        state,
        &signature,
        &body,
        &peer_realm,
        known_sender.as_ref(),
        first_contact.as_ref(),
        now,
    )
    .await;
    let (verified, replicated, _slot) = match checked {
        Ok(checked) => checked,
        Err(verdict) => {
            return match federation
                .record_inbox_nonce(&peer_realm, &nonce.nonce, nonce.expires_at)
                .await
            {
                Ok(true) => verdict,
                Ok(false) => replayed_nonce(),
                Err(error) => internal(&error.to_string()),
            };
        }
    };
    // A known peer's activity is stored with the others waiting, and a replicated object applied with it when it
    // can be; the service holds an object that was queued instead for this process's intake, and wakes it.
    let intake = match first_contact.as_ref() {
        Some(introduction) => federation.enqueue_inbound(&verified, &nonce, Some(introduction)).await,
        None => match federation
            .accept_inbound(&verified, &nonce, replicated.map(Box::new))
            .await
        {
            Ok(accepted) => {
                if let Some(batch) = accepted.batch {
                    state.metrics.record_intake_batch(batch.as_str());
                }
                Ok(accepted.intake)
            }
            Err(error) => Err(error),
        },
    };
    match intake {
        Ok(Intake::Queued) => InboxVerdict {
            status: StatusCode::ACCEPTED,
            outcome: "accepted",
            reason: "none",
            detail: "queued".to_owned(),
            retry_after: None,
        },
        Ok(Intake::Applied) => InboxVerdict {
            status: StatusCode::ACCEPTED,
            outcome: "accepted",
            reason: "none",
            detail: "applied".to_owned(),
            retry_after: None,
        },
        Ok(Intake::Duplicate) => InboxVerdict {
            status: StatusCode::ACCEPTED,
            outcome: "duplicate",
            reason: "none",
            detail: "already received".to_owned(),
            retry_after: None,
        },
        Ok(Intake::ReplayedNonce) => replayed_nonce(),
        Err(error) => internal(&error.to_string()),
    }
}

/// Steps 7 and 8: the peer's rate and concurrency, then the activity itself (I-JSON, its actor and ID, a
/// replicated object's origin proof). What passes is ready to be queued, with the replicated object read from it
/// and the concurrency slot it holds.
async fn check_activity(
    state: &ApubState,
    signature: &ParsedSignature,
    body: &[u8],
    peer_realm: &str,
    known_sender: Option<&InboxSender>,
    first_contact: Option<&PeerIntroduction>,
    now: DateTime<Utc>,
) -> Result<
    (
        VerifiedActivity,
        Option<crate::domain::replication::ReplicatedObject>,
        tokio::sync::OwnedSemaphorePermit,
    ),
    InboxVerdict,
> {
    // 7. The peer's rate and concurrency.
    if let Err(seconds) = state.peer_limits.take(peer_realm, now) {
        let mut verdict = InboxVerdict::rejected(
            StatusCode::TOO_MANY_REQUESTS,
            "rate_limited",
            "too many activities; slow down",
        );
        verdict.retry_after = Some(seconds);
        return Err(verdict);
    }
    let Some(slot) = state.peer_limits.slot(peer_realm) else {
        let mut verdict = InboxVerdict::rejected(
            StatusCode::TOO_MANY_REQUESTS,
            "too_many_concurrent",
            "too many requests at once",
        );
        verdict.retry_after = Some(1);
        return Err(verdict);
    };
    // 8. Read the activity (I-JSON: no duplicate member names, numbers a double holds) and check a replicated
    // object's origin proof.
    let parsed = federation::integrity::parse_i_json(body).map_err(|error| {
        // Parsed a second time only when refused, to tell a body that is no JSON at all from JSON that is not I-JSON.
        if serde_json::from_slice::<serde::de::IgnoredAny>(body).is_err() {
            return InboxVerdict::rejected(StatusCode::BAD_REQUEST, "malformed_activity", "the body is not JSON");
        }
        InboxVerdict::rejected(
            StatusCode::BAD_REQUEST,
            "not_i_json",
            format!("the body is not I-JSON: {error}"),
        )
    })?;
    let activity = Activity::from_json(parsed).map_err(|error| {
        InboxVerdict::rejected(
            StatusCode::BAD_REQUEST,
            "malformed_activity",
            format!("not an activity: {error}"),
        )
    })?;
    // The sender's peer row was read in step 2; a first contact introduced itself.
    let expected_actor = match (first_contact, known_sender) {
        (Some(introduction), _) => introduction.actor_url.clone(),
        (None, Some(sender)) => sender.peer.actor_url.clone(),
        (None, None) => {
            return Err(InboxVerdict::rejected(
                StatusCode::FORBIDDEN,
                "unknown_sender",
                "the sender is not a peer",
            ));
        }
    };
    if activity.actor != expected_actor {
        return Err(InboxVerdict::rejected(
            StatusCode::BAD_REQUEST,
            "actor_mismatch",
            format!("the activity's actor is not the signing instance's actor {expected_actor}"),
        ));
    }
    let replication = super::objects::is_replication(&activity);
    if !is_instance_activity(&activity) && !replication {
        return Err(InboxVerdict::rejected(
            StatusCode::BAD_REQUEST,
            "unsupported_activity",
            format!("{} activities are not taken by this instance", activity.kind.as_str()),
        ));
    }
    if !activity_id_is_senders(&activity.id, &expected_actor) {
        return Err(InboxVerdict::rejected(
            StatusCode::BAD_REQUEST,
            "malformed_activity",
            "the activity's id must be a URL under the sender's origin",
        ));
    }
    let mut replicated = None;
    if replication {
        if first_contact.is_some() {
            return Err(InboxVerdict::rejected(
                StatusCode::FORBIDDEN,
                "peer_not_active",
                "only peers send objects",
            ));
        }
        let federation = state.client.federation();
        match super::objects::read_replicated(federation, &activity, known_sender).await {
            Ok(object) => replicated = Some(object),
            Err(refusal) if refusal.reason == "internal_error" => return Err(internal(&refusal.detail)),
            Err(refusal) => {
                return Err(InboxVerdict::rejected(
                    StatusCode::BAD_REQUEST,
                    refusal.reason,
                    refusal.detail,
                ));
            }
        }
    }
    let body_text = String::from_utf8(body.to_vec())
        .map_err(|_| InboxVerdict::rejected(StatusCode::BAD_REQUEST, "malformed_activity", "the body is not UTF-8"))?;
    let verified = VerifiedActivity {
        peer_realm: peer_realm.to_owned(),
        key_id: signature.key_id.clone(),
        activity_id: activity.id.clone(),
        activity_type: activity.kind.as_str().to_owned(),
        body: body_text,
        sender_state: known_sender.map(|sender| sender.peer.state),
    };
    Ok((verified, replicated, slot))
}

fn replayed_nonce() -> InboxVerdict {
    InboxVerdict::rejected(
        StatusCode::UNAUTHORIZED,
        "replayed_nonce",
        "this signature's nonce was already used",
    )
}

fn internal(cause: &str) -> InboxVerdict {
    tracing::error!(cause, "inbox request failed");
    InboxVerdict::rejected(
        StatusCode::INTERNAL_SERVER_ERROR,
        "internal_error",
        "the request could not be stored; retry later",
    )
}

/// Whether the body is an activity between instance actors: the peering handshake, or an `Update` of the sender's
/// instance actor (its keys). Read only to decide who may send it; everything is verified later.
fn is_peering(body: &[u8]) -> bool {
    serde_json::from_slice::<Activity>(body).is_ok_and(|activity| is_instance_activity(&activity))
}

/// The activities between instance actors: `Follow`, `Accept`, `Reject`, `Undo`, and `Update` of an instance actor.
/// Replicated objects (`Create`, `Update`, `Delete` of an `Article`, `Tombstone`, `Collection` or an evidence
/// record, and the `Undo` of an evidence record) are the others this inbox takes, from active peers only.
fn is_instance_activity(activity: &Activity) -> bool {
    (activity.kind.is_peering() && !super::objects::is_replication(activity))
        || (activity.kind == ActivityKind::Update
            && matches!(activity.object, federation::protocol::ActivityObject::Actor(_)))
}

fn activity_id_is_senders(activity_id: &str, actor: &str) -> bool {
    match (Url::parse(activity_id), Url::parse(actor)) {
        (Ok(id), Ok(actor)) => id.origin() == actor.origin(),
        _ => false,
    }
}

/// The absolute target URI of a request as the sender signed it: this instance's public URL with the request's
/// path and query (the server sees only `/inbox`).
pub fn target_uri(state: &ApubState, uri: &axum::http::Uri) -> Option<Url> {
    let base = Url::parse(state.client.federation().public_base_url()).ok()?;
    base.join(uri.path_and_query().map_or("/", |path| path.as_str())).ok()
}

/// The admission rule's refusal of a known sender, as the inbox answers it.
fn refused_sender(refusal: &Refusal) -> InboxVerdict {
    match refusal {
        Refusal::Blocked => InboxVerdict::rejected(
            StatusCode::FORBIDDEN,
            "blocked_sender",
            "this instance has blocked the sender",
        ),
        Refusal::NotActive(state) => InboxVerdict::rejected(
            StatusCode::FORBIDDEN,
            "peer_not_active",
            format!(
                "the peering is {state}: only Follow, Accept, Reject, Undo and an Update of the instance actor are taken"
            ),
        ),
        Refusal::FirstContactKey => InboxVerdict::rejected(
            StatusCode::FORBIDDEN,
            "peer_not_active",
            "the sender's key awaits an admin's approval",
        ),
        Refusal::KeyExpired => InboxVerdict::rejected(
            StatusCode::UNAUTHORIZED,
            "key_expired",
            "the signing key's validity has ended",
        ),
        Refusal::KeyNotYetValid => InboxVerdict::rejected(
            StatusCode::UNAUTHORIZED,
            "key_not_yet_valid",
            "the signing key's validity has not begun",
        ),
        // Not refusals of an inbox request (the inbox looks its keys up itself, and names no origin), answered as a
        // key this instance has not pinned for the sender all the same.
        Refusal::UnknownKey | Refusal::KeyOfAnotherRealm { .. } => unknown_key(),
    }
}

fn unknown_key() -> InboxVerdict {
    InboxVerdict::rejected(
        StatusCode::UNAUTHORIZED,
        "unknown_key",
        "this key is not pinned for the sender",
    )
}

/// A request from a known peer signed with a key this instance has not pinned: the peer may have rotated and its
/// `Update` not arrived yet. Its actor is re-read (at most once per interval per peer) and a key is pinned only if
/// a pinned key endorsed it; then the request is verified with it.
async fn refreshed_key(
    state: &ApubState,
    signature: &ParsedSignature,
) -> Result<Option<crate::service::federation::inbox::InboxSender>, InboxVerdict> {
    let federation = state.client.federation();
    let Ok(mut actor_url) = state.client.peer_url(&signature.key_id) else {
        return Ok(None);
    };
    actor_url.set_fragment(None);
    let Some(realm) = super::client::realm_of(&actor_url) else {
        return Ok(None);
    };
    let peer = match federation.find_peer(&realm).await {
        Ok(Some(peer)) => peer,
        Ok(None) => return Ok(None),
        Err(error) => return Err(internal(&error.to_string())),
    };
    if peer.actor_url != actor_url.as_str() {
        return Err(unknown_key());
    }
    match federation.claim_key_refresh(&realm).await {
        Ok(true) => {}
        Ok(false) => return Err(unknown_key()),
        Err(error) => return Err(internal(&error.to_string())),
    }
    let keys = state.client.fetch_announced_keys(&actor_url).await.map_err(|error| {
        tracing::info!(peer = %realm, error = %error, "re-reading a peer's keys failed");
        unknown_key()
    })?;
    if let Err(error) = federation.refresh_peer_keys(&realm, keys).await {
        return Err(internal(&error.to_string()));
    }
    match federation.inbox_sender(&signature.key_id).await {
        Ok(Some(sender)) => Ok(Some(sender)),
        Ok(None) => Err(unknown_key()),
        Err(error) => Err(internal(&error.to_string())),
    }
}

/// Who sent a request, as far as its headers tell.
enum HeaderSender {
    /// A peer with this key pinned (perhaps just re-read, see [`refreshed_key`]), admitted for an inbox request:
    /// neither blocked nor outside its key's window.
    Known(Box<AdmittedSender>),
    /// An instance this one does not know, which may introduce itself with a small `Follow` (see [`first_contact`]).
    Stranger {
        /// Its actor, read from the `keyid`.
        actor_url: Url,
    },
}

/// Step 2 from the headers alone: the sender of `signature`'s `keyid`. A blocked peer, a key outside its window, an
/// unknown key of a known peer, and a stranger whose request cannot be a first contact (no `Content-Length` of at
/// most [`FIRST_CONTACT_MAX_BODY_BYTES`], a stale signature, or over the first contacts' rate) are refused here.
async fn sender_from_headers(
    state: &ApubState,
    signature: &ParsedSignature,
    announced_length: Option<usize>,
) -> Result<HeaderSender, InboxVerdict> {
    let federation = state.client.federation();
    let sender = match federation.inbox_sender(&signature.key_id).await {
        Ok(Some(sender)) => Some(sender),
        Ok(None) => refreshed_key(state, signature).await?,
        Err(error) => return Err(internal(&error.to_string())),
    };
    if let Some(sender) = sender {
        return match federation.admit_sender(sender, SenderPurpose::InboxRequest) {
            Ok(admitted) => Ok(HeaderSender::Known(Box::new(admitted))),
            Err(refusal) => Err(refused_sender(&refusal)),
        };
    }
    let unknown = |detail: &str| InboxVerdict::rejected(StatusCode::FORBIDDEN, "unknown_sender", detail.to_owned());
    let mut actor_url = state.client.peer_url(&signature.key_id).map_err(|_| {
        unknown("the sender is not a peer of this instance, and its keyid names no actor it could read")
    })?;
    actor_url.set_fragment(None);
    // A known peer's unknown key is no first contact: a new key is pinned only through an endorsement by a pinned
    // key (an Update), never by fetching it.
    let realm = super::client::realm_of(&actor_url)
        .ok_or_else(|| unknown("the sender is not a peer of this instance, and its keyid names no realm"))?;
    match federation.find_peer(&realm).await {
        Ok(None) => {}
        Ok(Some(_)) => return Err(unknown_key()),
        Err(error) => return Err(internal(&error.to_string())),
    }
    if announced_length.is_none_or(|length| length > FIRST_CONTACT_MAX_BODY_BYTES) {
        return Err(unknown(&format!(
            "the sender is not a peer of this instance; a first contact is a Follow with a Content-Length of at most \
             {FIRST_CONTACT_MAX_BODY_BYTES} bytes"
        )));
    }
    let now = federation.now();
    signature
        .check_time(now.timestamp(), TIME_POLICY)
        .and_then(|()| signature.check_coverage(true))
        .map_err(|rejection| InboxVerdict::from_rejection(&rejection))?;
    if let Err(seconds) = state.peer_limits.take_first_contact(now) {
        let mut verdict = InboxVerdict::rejected(
            StatusCode::TOO_MANY_REQUESTS,
            "rate_limited",
            "too many first contacts; retry later",
        );
        verdict.retry_after = Some(seconds);
        return Err(verdict);
    }
    Ok(HeaderSender::Stranger { actor_url })
}

/// A `Follow` from an instance this one does not know: its actor is read from the `keyid`'s own origin (the only
/// fetch the inbox makes, bounded by the number of pending requests) so an admin can decide; its key is pinned
/// provisionally until then.
async fn first_contact(
    state: &ApubState,
    signature: &ParsedSignature,
    actor_url: Url,
    body: &[u8],
    headers: &axum::http::HeaderMap,
) -> Result<(PeerIntroduction, PublicKey), InboxVerdict> {
    let unknown = || {
        InboxVerdict::rejected(
            StatusCode::FORBIDDEN,
            "unknown_sender",
            "the sender is not a peer of this instance",
        )
    };
    let federation = state.client.federation();
    let activity: Activity = serde_json::from_slice(body).map_err(|_| unknown())?;
    if activity.kind != ActivityKind::Follow || activity.object.id() != Some(federation.instance_actor_url().as_str()) {
        return Err(unknown());
    }
    if activity.actor != actor_url.as_str() {
        return Err(unknown());
    }
    // The time window, the coverage and the rate were checked from the headers (`sender_from_headers`); the digest
    // is the last thing checked before the one fetch, so a stream of forged Follows cannot make the instance a proxy.
    federation::digest::verify_content_digest(
        headers.get("content-digest").and_then(|value| value.to_str().ok()),
        body,
    )
    .map_err(|rejection| InboxVerdict::from_rejection(&rejection))?;
    match state.client.federation().may_record_first_contact().await {
        Ok(Ok(())) => {}
        Ok(Err(_)) => {
            return Err(InboxVerdict::rejected(
                StatusCode::TOO_MANY_REQUESTS,
                "too_many_pending",
                "too many instances already wait for approval here",
            ));
        }
        Err(error) => return Err(internal(&error.to_string())),
    }
    let introduction = state.client.fetch_actor(&actor_url).await.map_err(|error| {
        InboxVerdict::rejected(
            StatusCode::FORBIDDEN,
            "unknown_sender",
            format!("the sender's actor could not be read: {error}"),
        )
    })?;
    let key = introduction
        .keys
        .iter()
        .find(|key| key.key_id == signature.key_id)
        .map(|key| key.public_key)
        .ok_or_else(|| {
            InboxVerdict::rejected(
                StatusCode::UNAUTHORIZED,
                "unknown_key",
                "the sender's actor does not list this key",
            )
        })?;
    Ok((introduction, key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_peer_gets_its_burst_then_its_rate_whatever_the_spacing_and_order_of_requests() {
        let limits = PeerLimits::default();
        let start = DateTime::parse_from_rfc3339("2026-11-01T09:00:00Z")
            .expect("instant")
            .to_utc();
        let burst = PEER_BURST as usize;
        for _ in 0..burst {
            assert!(limits.take("beta.test", start).is_ok());
        }
        assert!(limits.take("beta.test", start).is_err(), "the burst is spent");
        // One second in steps of 50 µs: the rate's worth of requests, not fewer because each step is under 1 ms.
        let mut accepted = 0;
        for step in 1..=20_000 {
            let now = start + TimeDelta::microseconds(50 * step);
            if limits.take("beta.test", now).is_ok() {
                accepted += 1;
            }
        }
        assert_eq!(accepted, PEER_RATE_PER_SECOND as usize);
        // A request that read the clock earlier, arriving late, refills nothing twice.
        let late = start + TimeDelta::milliseconds(500);
        let second = start + TimeDelta::seconds(1);
        assert!(limits.take("beta.test", late).is_err());
        assert!(
            limits.take("beta.test", second).is_err(),
            "nothing was refilled since the last request"
        );
        assert!(limits.take("gamma.test", start).is_ok(), "each peer has its own bucket");
    }
}
