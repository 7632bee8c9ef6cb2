//! What every admin answer holds on the wire, built from the service in one place: the admin API returns these as
//! its bodies and `interai admin … --json` prints them, so the two cannot drift apart. Each builder parses what the
//! caller gave as text, calls the same service method for both, and converts by hand (wire types stay apart from
//! domain types).

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::domain::Actor;
use crate::service::activity_history::HistoryPeriod;
use crate::service::audit::AuditQuery;
use crate::service::content::ContentQuery;
use crate::service::federation::Federation;
use crate::service::federation::peer_status::ReplicationLag;
use crate::service::federation::peering::PeerView;
use crate::service::keys::ApiKeyRecord;
use crate::service::trust::TrustViewScope;
use crate::service::{Service, ServiceError};

// ---------------------------------------------------------------- actors

/// An actor.
#[derive(Debug, Serialize)]
pub struct ActorWire {
    id: String,
    #[serde(rename = "type")]
    actor_type: &'static str,
    display_name: String,
    controller: Option<String>,
    root_controller: String,
    origin: String,
    created_at: DateTime<Utc>,
}

/// Converts an actor.
pub fn actor_wire(actor: &Actor) -> ActorWire {
    ActorWire {
        id: actor.id.as_str().to_owned(),
        actor_type: actor.actor_type.as_str(),
        display_name: actor.display_name.clone(),
        controller: actor.controller.as_ref().map(|id| id.as_str().to_owned()),
        root_controller: actor.root_controller.as_str().to_owned(),
        origin: actor.origin.clone(),
        created_at: actor.created_at,
    }
}

/// `GET /admin/actors`, `interai admin actor list --json`.
#[derive(Debug, Serialize)]
pub struct ActorsAnswer {
    actors: Vec<ActorWire>,
}

/// Every actor of this realm, oldest first.
pub async fn actors(service: &Service) -> Result<ActorsAnswer, ServiceError> {
    let actors = service.list_actors().await?;
    Ok(ActorsAnswer {
        actors: actors.iter().map(actor_wire).collect(),
    })
}

/// `GET /admin/actors/{id}`, `interai admin actor show ID --json`: one actor.
pub async fn actor(service: &Service, id: &str) -> Result<ActorWire, ServiceError> {
    let id = crate::service::validation::parse_id("id", id)?;
    Ok(actor_wire(&service.find_actor(&id).await?))
}

// ---------------------------------------------------------------- API keys

/// An API key, never with its secret.
#[derive(Debug, Serialize)]
pub struct KeyWire {
    id: String,
    actor: String,
    scopes: Vec<&'static str>,
    label: Option<String>,
    /// `active`, `revoked` or `expired`, as of the answer.
    state: &'static str,
    created_at: DateTime<Utc>,
    expires_at: Option<DateTime<Utc>>,
    revoked_at: Option<DateTime<Utc>>,
    last_used_at: Option<DateTime<Utc>>,
}

/// Converts a key; `now` decides whether it has expired.
pub fn key_wire(key: &ApiKeyRecord, now: DateTime<Utc>) -> KeyWire {
    let state = if key.revoked_at.is_some() {
        "revoked"
    } else if key.expires_at.is_some_and(|expires_at| expires_at <= now) {
        "expired"
    } else {
        "active"
    };
    KeyWire {
        id: key.id.as_str().to_owned(),
        actor: key.actor_id.as_str().to_owned(),
        scopes: key.scopes.names(),
        label: key.label.clone(),
        state,
        created_at: key.created_at,
        expires_at: key.expires_at,
        revoked_at: key.revoked_at,
        last_used_at: key.last_used_at,
    }
}

/// `GET /admin/actors/{id}/keys`, `interai admin key list --actor ID --json`.
#[derive(Debug, Serialize)]
pub struct KeysAnswer {
    actor: String,
    keys: Vec<KeyWire>,
}

/// Every key of an actor, oldest first.
pub async fn keys(service: &Service, actor: &str) -> Result<KeysAnswer, ServiceError> {
    let actor_id = crate::service::validation::parse_id("actor", actor)?;
    let keys = service.list_api_keys(&actor_id).await?;
    let now = service.now();
    Ok(KeysAnswer {
        actor: actor_id.as_str().to_owned(),
        keys: keys.iter().map(|key| key_wire(key, now)).collect(),
    })
}

/// A key just issued, with its secret: the only answer that ever holds it.
#[derive(Debug, Serialize)]
pub struct IssuedKeyWire {
    #[serde(flatten)]
    key: KeyWire,
    secret: String,
}

/// Converts a key just issued.
pub fn issued_key_wire(issued: &crate::service::keys::IssuedApiKey, now: DateTime<Utc>) -> IssuedKeyWire {
    IssuedKeyWire {
        key: key_wire(&issued.key, now),
        secret: issued.secret.clone(),
    }
}

// ---------------------------------------------------------------- the audit log

/// One audited call.
#[derive(Debug, Serialize)]
pub struct AuditRecordWire {
    id: String,
    actor: String,
    root_controller: String,
    key: String,
    tool: String,
    is_write: bool,
    outcome: String,
    result_summary: String,
    duration_micros: i64,
    client_name: Option<String>,
    client_version: Option<String>,
    created_at: DateTime<Utc>,
    /// The request as audited: secrets and personal data already replaced by markers.
    request: serde_json::Value,
}

/// `GET /admin/audit`, `interai admin audit list --json`: one page, newest first.
#[derive(Debug, Serialize)]
pub struct AuditAnswer {
    records: Vec<AuditRecordWire>,
    next_cursor: Option<String>,
}

/// A page of the audit log.
pub async fn audit(service: &Service, query: AuditQuery) -> Result<AuditAnswer, ServiceError> {
    let page = service.audit_log(query).await?;
    Ok(AuditAnswer {
        records: page
            .records
            .into_iter()
            .map(|record| AuditRecordWire {
                id: record.id,
                actor: record.actor_id.as_str().to_owned(),
                root_controller: record.root_controller_id.as_str().to_owned(),
                key: record.key_id.as_str().to_owned(),
                tool: record.tool,
                is_write: record.is_write,
                outcome: record.outcome,
                result_summary: record.result_summary,
                duration_micros: record.duration_micros,
                client_name: record.client_name,
                client_version: record.client_version,
                created_at: record.created_at,
                request: record.request,
            })
            .collect(),
        next_cursor: page.next_cursor,
    })
}

// ---------------------------------------------------------------- trust history

/// A target's assessment at one moment.
#[derive(Debug, Serialize)]
pub struct TrustMomentWire {
    at: DateTime<Utc>,
    value: f64,
    lower_bound: f64,
    upper_bound: f64,
    status: &'static str,
    rule: &'static str,
}

/// `GET /admin/trust/{id}/history`: a target's trust at evenly spaced moments, oldest first.
#[derive(Debug, Serialize)]
pub struct TrustHistoryAnswer {
    target: String,
    target_created_at: DateTime<Utc>,
    points: Vec<TrustMomentWire>,
}

/// How many moments a trust history has when the caller does not say.
pub const DEFAULT_TRUST_HISTORY_POINTS: u32 = 24;

/// A moment given as RFC 3339 text, or the error naming `field`.
fn moment(field: &str, text: Option<&str>) -> Result<Option<DateTime<Utc>>, ServiceError> {
    match text.map(str::trim).filter(|text| !text.is_empty()) {
        None => Ok(None),
        Some(text) => DateTime::parse_from_rfc3339(text)
            .map(|at| Some(at.to_utc()))
            .map_err(|_| ServiceError::validation(field, format!("{field} must be an RFC 3339 time"))),
    }
}

/// The trust of `id` in `view` from `from` (default: the target's creation) until `until` (default: now) at `points`
/// moments.
pub async fn trust_history(
    service: &Service,
    id: &str,
    view: TrustViewScope,
    from: Option<&str>,
    until: Option<&str>,
    points: Option<u32>,
) -> Result<TrustHistoryAnswer, ServiceError> {
    let id = crate::service::validation::parse_id("id", id)?;
    let from = moment("from", from)?.unwrap_or(DateTime::<Utc>::MIN_UTC);
    let until = moment("until", until)?.unwrap_or_else(|| service.now());
    let history = service
        .trust_history(&id, view, from, until, points.unwrap_or(DEFAULT_TRUST_HISTORY_POINTS))
        .await?;
    Ok(TrustHistoryAnswer {
        target: history.target_id.as_str().to_owned(),
        target_created_at: history.target_created_at,
        points: history
            .points
            .into_iter()
            .map(|point| TrustMomentWire {
                at: point.at,
                value: point.value,
                lower_bound: point.lower_bound,
                upper_bound: point.upper_bound,
                status: point.status.as_str(),
                rule: point.rule.as_str(),
            })
            .collect(),
    })
}

// ---------------------------------------------------------------- activity history

/// One bucket of the calls' history.
#[derive(Debug, Serialize)]
pub struct CallBucketWire {
    start: DateTime<Utc>,
    calls: i64,
    writes: i64,
    errors: i64,
}

/// `GET /admin/activity`: the audited calls of every bucket of the period, oldest first.
#[derive(Debug, Serialize)]
pub struct ActivityAnswer {
    period: &'static str,
    bucket_seconds: i64,
    buckets: Vec<CallBucketWire>,
}

/// The calls' history over `period`.
pub async fn activity(service: &Service, period: HistoryPeriod) -> Result<ActivityAnswer, ServiceError> {
    let buckets = service.call_history(period).await?;
    Ok(ActivityAnswer {
        period: period.as_str(),
        bucket_seconds: period.bucket().num_seconds(),
        buckets: buckets
            .into_iter()
            .map(|bucket| CallBucketWire {
                start: bucket.start,
                calls: bucket.calls,
                writes: bucket.writes,
                errors: bucket.errors,
            })
            .collect(),
    })
}

/// One bucket of a peer's lag history; the counts are `null` when nothing was sampled in it.
#[derive(Debug, Serialize)]
pub struct PeerLagBucketWire {
    start: DateTime<Utc>,
    sampled: bool,
    most_undelivered_events: Option<i64>,
    longest_wait_seconds: Option<i64>,
    dead_letters: Option<i64>,
}

/// `GET /admin/peers/{realm}/lag`: the peer's sampled replication lag in every bucket of the period, oldest first.
#[derive(Debug, Serialize)]
pub struct PeerLagAnswer {
    peer: String,
    period: &'static str,
    bucket_seconds: i64,
    buckets: Vec<PeerLagBucketWire>,
}

/// A peer's lag history over `period`.
pub async fn peer_lag(
    federation: &Federation,
    realm: &str,
    period: HistoryPeriod,
) -> Result<PeerLagAnswer, ServiceError> {
    let buckets = federation.peer_lag_history(realm, period).await?;
    Ok(PeerLagAnswer {
        peer: crate::service::federation::peer_state::normalize_realm(realm),
        period: period.as_str(),
        bucket_seconds: period.bucket().num_seconds(),
        buckets: buckets
            .into_iter()
            .map(|bucket| PeerLagBucketWire {
                start: bucket.start,
                sampled: bucket.sampled.is_some(),
                most_undelivered_events: bucket.sampled.map(|sampled| sampled.most_undelivered_events),
                longest_wait_seconds: bucket.sampled.map(|sampled| sampled.longest_wait_seconds),
                dead_letters: bucket.sampled.map(|sampled| sampled.dead_letters),
            })
            .collect(),
    })
}

// ---------------------------------------------------------------- content

/// A content item as listed.
#[derive(Debug, Serialize)]
pub struct ContentWire {
    id: String,
    title: String,
    content_type: String,
    space: String,
    origin: String,
    author: String,
    revision_no: i32,
    /// `deleted`, or the current revision's trust status.
    status: String,
    trust_value: Option<f64>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
    deleted_at: Option<DateTime<Utc>>,
}

/// `GET /admin/content`, `interai admin content list --json`: one page, newest first.
#[derive(Debug, Serialize)]
pub struct ContentAnswer {
    items: Vec<ContentWire>,
    next_cursor: Option<String>,
}

/// A page of content items.
pub async fn content(service: &Service, query: ContentQuery) -> Result<ContentAnswer, ServiceError> {
    let page = service.list_content(query).await?;
    Ok(ContentAnswer {
        items: page
            .items
            .into_iter()
            .map(|listing| {
                let item = listing.content;
                let status = match item.deleted_at {
                    Some(_) => "deleted".to_owned(),
                    None => listing
                        .trust_status
                        .unwrap_or_else(|| crate::domain::TrustStatus::Unverified.as_str().to_owned()),
                };
                ContentWire {
                    id: item.id.as_str().to_owned(),
                    title: listing.title,
                    content_type: item.content_type,
                    space: item.space_id.as_str().to_owned(),
                    origin: item.origin,
                    author: item.author_id.as_str().to_owned(),
                    revision_no: item.current_revision_no,
                    status,
                    trust_value: listing.trust_value,
                    created_at: item.created_at,
                    updated_at: item.updated_at,
                    deleted_at: item.deleted_at,
                }
            })
            .collect(),
        next_cursor: page.next_cursor,
    })
}

// ---------------------------------------------------------------- peers

/// A peer's replication on the wire: what is waiting for it and how delivery and pulling went.
#[derive(Debug, Serialize)]
pub struct ReplicationWire {
    undelivered: i64,
    oldest_undelivered_at: Option<DateTime<Utc>>,
    push_cursor: i64,
    consecutive_failures: i32,
    next_retry_at: Option<DateTime<Utc>>,
    last_success_at: Option<DateTime<Utc>>,
    last_error_class: Option<String>,
    last_error: Option<String>,
    last_error_at: Option<DateTime<Utc>>,
    dead_letters: i64,
    pull_cursor: Option<i64>,
    backfilling: bool,
    last_pull_at: Option<DateTime<Utc>>,
    last_pull_error: Option<String>,
}

fn replication_wire(lag: ReplicationLag) -> ReplicationWire {
    let row = lag.replication;
    ReplicationWire {
        undelivered: lag.undelivered,
        oldest_undelivered_at: lag.oldest_undelivered_at,
        push_cursor: row.push_cursor,
        consecutive_failures: row.consecutive_failures,
        next_retry_at: (row.consecutive_failures > 0).then_some(row.next_attempt_at),
        last_success_at: row.last_success_at,
        last_error_class: row.last_error_class,
        last_error: row.last_error,
        last_error_at: row.last_error_at,
        dead_letters: lag.dead_letters,
        backfilling: row.pull_cursor.is_none(),
        pull_cursor: row.pull_cursor,
        last_pull_at: row.last_pull_at,
        last_pull_error: row.last_pull_error,
    }
}

/// A peer on the wire: the same status `interai admin peer list` prints (the state as shown, the newest failure of
/// any channel, everything waiting for the peer).
#[derive(Debug, Serialize)]
pub struct PeerWire {
    realm: String,
    url: String,
    state: String,
    level: String,
    blocked_reason: Option<String>,
    blocked_until: Option<DateTime<Utc>>,
    last_contact_at: Option<DateTime<Utc>>,
    last_error: Option<String>,
    last_error_class: Option<String>,
    last_error_at: Option<DateTime<Utc>>,
    pending_deliveries: i64,
    pending_peering_messages: i64,
    undelivered_events: i64,
    keys: Vec<PeerKeyWire>,
    replication: Option<ReplicationWire>,
    trust: PeerTrustWire,
}

/// A peer's instance trust: what its evidence is weighed by here (trust model §2.10, §2.15).
#[derive(Debug, Serialize)]
pub struct PeerTrustWire {
    /// t_I as the last batch computed it (`null` before a batch included the peer).
    effective: Option<f64>,
    /// What decided it: `level:<level>`, `pinned`, `blocked`, `quarantine` or `state:<state>`.
    reason: Option<String>,
    /// The trust an admin pinned, if any.
    pinned: Option<f64>,
    agreements: u32,
    disagreements: u32,
    /// The batch (`instance_trust_epoch`).
    epoch: Option<i64>,
    computed_at: Option<DateTime<Utc>>,
}

/// Converts a peer's instance trust.
fn peer_trust_wire(pinned: Option<f64>, trust: Option<&crate::domain::peer::PeerTrust>) -> PeerTrustWire {
    PeerTrustWire {
        effective: trust.map(|trust| trust.trust),
        reason: trust.map(|trust| trust.reason.to_text()),
        pinned,
        agreements: trust.map_or(0, |trust| trust.agreements),
        disagreements: trust.map_or(0, |trust| trust.disagreements),
        epoch: trust.map(|trust| trust.epoch),
        computed_at: trust.map(|trust| trust.computed_at),
    }
}

/// `POST /admin/federation/trust/recompute`, `interai admin federation trust recompute --json`: the batch just run.
#[derive(Debug, Serialize)]
pub struct InstanceTrustAnswer {
    epoch: i64,
    computed_at: DateTime<Utc>,
    peers: Vec<InstanceTrustPeerWire>,
}

/// One peer's row of an instance-trust batch.
#[derive(Debug, Serialize)]
pub struct InstanceTrustPeerWire {
    realm: String,
    effective: f64,
    reason: String,
    agreements: u32,
    disagreements: u32,
}

/// Runs an instance-trust batch now and says what it computed.
pub async fn recompute_instance_trust(federation: &Federation) -> Result<InstanceTrustAnswer, ServiceError> {
    let batch = federation.recompute_instance_trust().await?;
    Ok(InstanceTrustAnswer {
        epoch: batch.epoch,
        computed_at: batch.computed_at,
        peers: batch
            .peers
            .into_iter()
            .map(|row| InstanceTrustPeerWire {
                realm: row.peer_realm,
                effective: row.trust,
                reason: row.reason.to_text(),
                agreements: row.agreements,
                disagreements: row.disagreements,
            })
            .collect(),
    })
}

/// What `peer purge` removed.
#[derive(Debug, Serialize)]
pub struct PurgeAnswer {
    realm: String,
    records_deleted: u64,
    targets_reassessed: u64,
}

/// Purges a peer's evidence now and says what went.
pub async fn purge_peer_evidence(federation: &Federation, realm: &str) -> Result<PurgeAnswer, ServiceError> {
    let report = federation.purge_peer_evidence(realm).await?;
    Ok(PurgeAnswer {
        realm: report.realm,
        records_deleted: report.records,
        targets_reassessed: report.targets,
    })
}

/// A key pinned for a peer.
#[derive(Debug, Serialize)]
pub struct PeerKeyWire {
    key_id: String,
    fingerprint: String,
    pinned_by: String,
}

/// Converts a peer's status (with its replication, which the view carries when there is any).
pub fn peer_wire(view: PeerView) -> PeerWire {
    PeerWire {
        trust: peer_trust_wire(view.trust_pin, view.trust.as_ref()),
        replication: view.replication.map(replication_wire),
        realm: view.peer.realm,
        url: view.peer.base_url,
        state: view.state.as_str().to_owned(),
        level: view.peer.level.as_str().to_owned(),
        blocked_reason: view.peer.blocked_reason,
        blocked_until: view.peer.blocked_until,
        last_contact_at: view.peer.last_contact_at,
        last_error: view.last_error.as_ref().map(|failure| failure.detail.clone()),
        last_error_class: view.last_error.as_ref().map(|failure| failure.class.clone()),
        last_error_at: view.last_error.as_ref().map(|failure| failure.at),
        pending_deliveries: view.pending_deliveries,
        pending_peering_messages: view.pending_peering_messages,
        undelivered_events: view.undelivered_events,
        keys: view
            .keys
            .into_iter()
            .map(|key| PeerKeyWire {
                key_id: key.key_id,
                fingerprint: key.fingerprint,
                pinned_by: key.pinned_by.as_str().to_owned(),
            })
            .collect(),
    }
}

/// `GET /admin/peers`, `interai admin peer list --json`.
#[derive(Debug, Serialize)]
pub struct PeersAnswer {
    peers: Vec<PeerWire>,
}

/// Every peer with its status.
pub async fn peers(federation: &Federation) -> Result<PeersAnswer, ServiceError> {
    let peers = federation.list_peers().await?.into_iter().map(peer_wire).collect();
    Ok(PeersAnswer { peers })
}

/// `GET /admin/peers/{realm}`: one peer with its status.
pub async fn peer(federation: &Federation, realm: &str) -> Result<PeerWire, ServiceError> {
    Ok(peer_wire(federation.peer_view(realm).await?))
}

// ---------------------------------------------------------------- the federation identity and dead letters

/// One of the instance's published keys.
#[derive(Debug, Serialize)]
pub struct InstanceKeyWire {
    key_id: String,
    fingerprint: String,
    /// Whether it signs this instance's requests now (the others are still published for peers to check).
    signing: bool,
}

/// `GET /admin/federation/identity`, `interai admin federation identity --json`.
#[derive(Debug, Serialize)]
pub struct IdentityAnswer {
    actor: String,
    realm: String,
    keys: Vec<InstanceKeyWire>,
}

/// The instance's actor URL and published keys.
pub async fn identity(federation: &Federation) -> Result<IdentityAnswer, ServiceError> {
    let signing = federation.signing_key().await?;
    let keys = federation
        .published_instance_keys()
        .await?
        .into_iter()
        .map(|key| InstanceKeyWire {
            fingerprint: key.description.public_key.fingerprint(),
            signing: key.description.key_id == signing.key_id,
            key_id: key.description.key_id,
        })
        .collect();
    Ok(IdentityAnswer {
        actor: federation.instance_actor_url(),
        realm: federation.realm().as_str().to_owned(),
        keys,
    })
}

/// A dead letter (or a delivery queued again).
#[derive(Debug, Serialize)]
pub struct DeliveryWire {
    id: String,
    peer: String,
    activity_id: String,
    activity_type: String,
    state: String,
    error: Option<String>,
    created_at: DateTime<Utc>,
    finished_at: Option<DateTime<Utc>>,
}

/// Converts a delivery.
pub fn delivery_wire(delivery: &crate::domain::peering_delivery::PeeringDelivery) -> DeliveryWire {
    DeliveryWire {
        id: delivery.id.clone(),
        peer: delivery.peer_realm.clone(),
        activity_id: delivery.activity_id.clone(),
        activity_type: delivery.activity_type.clone(),
        state: delivery.state.as_str().to_owned(),
        error: delivery.last_error.clone(),
        created_at: delivery.created_at,
        finished_at: delivery.finished_at,
    }
}

/// `GET /admin/federation/dead-letters`, `interai admin federation dead-letters --json`.
#[derive(Debug, Serialize)]
pub struct DeadLettersAnswer {
    dead_letters: Vec<DeliveryWire>,
}

/// How many dead letters a listing shows at most.
pub const DEAD_LETTERS_SHOWN: i64 = 1000;

/// The dead letters, of one peer or of all, newest first.
pub async fn dead_letters(federation: &Federation, peer: Option<&str>) -> Result<DeadLettersAnswer, ServiceError> {
    let rows = federation.dead_letters(peer, DEAD_LETTERS_SHOWN).await?;
    Ok(DeadLettersAnswer {
        dead_letters: rows.iter().map(delivery_wire).collect(),
    })
}

// ---------------------------------------------------------------- spaces

/// A space.
#[derive(Debug, Serialize)]
pub struct SpaceWire {
    id: String,
    name: String,
    description: String,
    visibility: &'static str,
    origin: String,
    created_at: DateTime<Utc>,
}

/// Converts a space.
pub fn space_wire(space: &crate::domain::knowledge::Space) -> SpaceWire {
    SpaceWire {
        id: space.id.as_str().to_owned(),
        name: space.name.clone(),
        description: space.description.clone(),
        visibility: space.visibility.as_str(),
        origin: space.origin.clone(),
        created_at: space.created_at,
    }
}

/// `GET /admin/spaces`, `interai admin space list --json`.
#[derive(Debug, Serialize)]
pub struct SpacesAnswer {
    spaces: Vec<SpaceWire>,
}

/// Every space this instance knows.
pub async fn spaces(service: &Service) -> Result<SpacesAnswer, ServiceError> {
    let spaces = service.list_spaces().await?;
    Ok(SpacesAnswer {
        spaces: spaces.iter().map(space_wire).collect(),
    })
}

// ---------------------------------------------------------------- the instance overview

/// How much the instance holds.
#[derive(Debug, Serialize)]
pub struct CountsWire {
    actors: i64,
    active_api_keys: i64,
    content: i64,
    deleted_content: i64,
    claims: i64,
    evidence: i64,
    peers: i64,
}

/// One background loop of the serving process.
#[derive(Debug, Serialize)]
pub struct LoopWire {
    name: &'static str,
    state: &'static str,
    interval_seconds: Option<i64>,
    started_at: Option<DateTime<Utc>>,
    stopped_at: Option<DateTime<Utc>>,
    passes: u64,
    last_pass_at: Option<DateTime<Utc>>,
    last_success_at: Option<DateTime<Utc>>,
    consecutive_failures: u64,
    last_error: Option<String>,
    last_error_at: Option<DateTime<Utc>>,
}

/// The last backup made or tried on the database.
#[derive(Debug, Serialize)]
pub struct BackupWire {
    finished_at: DateTime<Utc>,
    file: String,
    kind: Option<&'static str>,
    bytes: Option<u64>,
    seconds: f64,
    error: Option<String>,
    last_success_at: Option<DateTime<Utc>>,
}

/// `GET /admin/instance`.
#[derive(Debug, Serialize)]
pub struct InstanceAnswer {
    realm: String,
    version: &'static str,
    backend: &'static str,
    now: DateTime<Utc>,
    /// When the answering process started.
    started_at: DateTime<Utc>,
    counts: CountsWire,
    peers_by_state: std::collections::BTreeMap<&'static str, i64>,
    loops: Vec<LoopWire>,
    backup: Option<BackupWire>,
}

/// The instance overview.
pub async fn instance(service: &Service) -> Result<InstanceAnswer, ServiceError> {
    let overview = service.instance_overview().await?;
    let counts = overview.counts;
    Ok(InstanceAnswer {
        realm: overview.realm,
        version: overview.version,
        backend: overview.backend,
        now: overview.now,
        started_at: overview.started_at,
        counts: CountsWire {
            actors: counts.actors,
            active_api_keys: counts.active_api_keys,
            content: counts.content,
            deleted_content: counts.deleted_content,
            claims: counts.claims,
            evidence: counts.evidence,
            peers: counts.peers,
        },
        peers_by_state: overview
            .peers_by_state
            .into_iter()
            .map(|(state, count)| (state.as_str(), count))
            .collect(),
        loops: overview
            .loops
            .into_iter()
            .map(|record| LoopWire {
                name: record.name,
                state: record.state.as_str(),
                interval_seconds: record.interval.map(|interval| interval.num_seconds()),
                started_at: record.started_at,
                stopped_at: record.stopped_at,
                passes: record.passes,
                last_pass_at: record.last_pass_at,
                last_success_at: record.last_success_at,
                consecutive_failures: record.consecutive_failures,
                last_error: record.last_error,
                last_error_at: record.last_error_at,
            })
            .collect(),
        backup: overview.last_backup.map(|record| BackupWire {
            finished_at: record.finished_at,
            file: record.file,
            kind: record.kind.map(|kind| kind.as_str()),
            bytes: record.bytes,
            seconds: record.seconds,
            error: record.error,
            last_success_at: record.last_success_at,
        }),
    })
}
