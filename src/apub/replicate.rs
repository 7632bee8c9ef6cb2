//! Replication over HTTP: push rounds (our outbox to each active peer's inbox, a window of events at a time, in
//! order per object, a bounded number of requests in flight) and pulls (a peer's snapshot, then its outbox pages,
//! into our inbox queue after checking every object's origin proof), and the pages of our own outbox that peers
//! pull. The push's limits (window, windows per round, requests in flight, round and lease times) are in
//! [`limits`], beside the code that obeys them; business rules (cursors, backoff, circuit breaker, dead letters)
//! stay in `service::federation::cursors`, which is given the limits it needs.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use chrono::TimeDelta;
use federation::integrity;
use federation::protocol::objects::OutboxPage;
use federation::protocol::{Activity, ActivityObject, context::document_context};
use http::{Method, StatusCode};
use serde_json::{Value, json};
use tokio::sync::oneshot;
use url::Url;

use super::client::{FederationClient, classify, refusal_reason};
use super::discovery::InstanceUrls;
use super::objects::{activity_document, activity_kind, is_replication, read_replicated, signed_object};
use crate::domain::replication::FederatedObject;
use crate::service::ServiceError;
use crate::service::federation::Federation;
use crate::service::federation::cursors::{LeasedPeer, PullProgress, PushResult, PushedEvent};
use crate::service::federation::identity::SigningKey;
use crate::service::federation::inbox::{InboxSender, VerifiedActivity};
use crate::service::federation::outbox::OutboxEntry;
use crate::service::federation::retry::AttemptResult;

pub mod limits;

pub use limits::PEERS_PER_PASS;
use limits::{PUSH_CONCURRENCY, PUSH_LEASE, PUSH_ROUND_TIME, PUSH_ROUND_WINDOWS, PUSH_WINDOW};
/// Activities per outbox page at most (a peer may ask for fewer).
pub const MAX_PAGE: i64 = 500;
/// Activities per page a pull asks for.
pub const PULL_PAGE: i64 = 200;
/// The most bytes of activities one page holds (a page ends early rather than pass it): under the 1 MiB a peer's
/// outgoing client reads of an answer, with room for the page's own fields. A page always holds at least one
/// activity, and the largest one an agent can publish fits.
pub const MAX_PAGE_BYTES: usize = 900 * 1024;

/// The reasons of a 401 or 403 that are about the peering, not the signature: the queue is held and retried with
/// the backoff (the peer may approve or unblock us), never dead-lettered.
const PEER_LEVEL_REASONS: [&str; 3] = ["peer_not_active", "blocked_sender", "unknown_sender"];

/// One event of a round, with the object it sends (rendered and signed by the task that sends it, so the first
/// requests go out while later events are still being rendered, on every core).
struct RoundEvent {
    seq: i64,
    object_id: String,
    activity_id: String,
    event_id: String,
    created_at: chrono::DateTime<chrono::Utc>,
    activity_type: String,
    object: Option<crate::domain::replication::FederatedObject>,
}

impl RoundEvent {
    /// The activity's body: the object signed by this realm, in its activity. `None` when the object is gone.
    fn render(&self, urls: &InstanceUrls, key: &SigningKey) -> Result<Option<String>, ServiceError> {
        let Some(object) = &self.object else {
            return Ok(None);
        };
        let kind = activity_kind(object);
        let signed = signed_object(urls, object, key).map_err(ServiceError::internal)?;
        let document = activity_document(urls, &self.event_id, &kind, signed, self.created_at);
        serde_json::to_string(&document)
            .map(Some)
            .map_err(|error| ServiceError::internal(error.to_string()))
    }
}

/// The events of a window as a round sends them.
fn round_events(entries: Vec<OutboxEntry>, urls: &InstanceUrls) -> Vec<RoundEvent> {
    entries
        .into_iter()
        .map(|entry| RoundEvent {
            seq: entry.event.seq,
            object_id: entry.event.event.change.object_id().to_owned(),
            activity_id: format!("{}/activities/{}", urls.base, entry.event.event.event_id),
            event_id: entry.event.event.event_id.clone(),
            created_at: entry.event.event.created_at,
            // The object is gone (its space's visibility is fixed, so this is a purged or corrupt row): nothing to
            // send, and the cursor passes it.
            activity_type: entry
                .object
                .as_ref()
                .map_or_else(|| "None".to_owned(), |object| activity_kind(object).as_str().to_owned()),
            object: entry.object,
        })
        .collect()
}

/// What one push pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PushPass {
    /// Delivery attempts made (a round that failed still did work).
    pub attempts: usize,
    /// Whether another round may be due at once: some round stopped before the outbox's end (its windows or its
    /// time ran out, a window could not be read) or failed (a retry may be due at once). A round that sent
    /// everything after its cursor leaves nothing behind: an event committed after it wakes the loop again.
    pub more: bool,
}

/// What one push round did.
struct RoundOutcome {
    attempts: usize,
    more: bool,
}

impl FederationClient {
    /// One push pass: a round for every peer whose push is due.
    pub async fn push_due(&self) -> Result<PushPass, ServiceError> {
        let leased = self.federation().lease_push(PEERS_PER_PASS, PUSH_LEASE).await?;
        let mut pass = PushPass::default();
        for peer in leased {
            let round = self.push_round(&peer).await?;
            pass.attempts += round.attempts;
            pass.more |= round.more;
        }
        Ok(pass)
    }

    /// One round to one peer: the events after its cursor (one while its circuit is open), read a window at a time,
    /// each object's events in order, at most [`PUSH_CONCURRENCY`] requests at once; then the cursor and backoff
    /// are recorded.
    ///
    /// A round reads up to [`PUSH_ROUND_WINDOWS`] windows, each while the one before it is being sent, so that the
    /// requests in flight stay at their bound from one window to the next. Before, each window was a round of its
    /// own, and the peer's inbox idled at every window's end: while the last requests were answered, the cursor
    /// saved, the next window read and its first objects rendered (about a tenth of a delivery's time).
    async fn push_round(&self, leased: &LeasedPeer) -> Result<RoundOutcome, ServiceError> {
        let federation = self.federation();
        let window = leased.window(PUSH_WINDOW);
        // Two reads on two connections at once: both are on the way of every change to its peers.
        let (first, key) = tokio::join!(
            federation.outbox_entries(leased.replication.push_cursor, window),
            federation.signing_key()
        );
        let (first, key) = (first?, Arc::new(key?));
        let urls = InstanceUrls {
            base: federation.public_base_url().to_owned(),
        };
        let inbox = match Url::parse(&leased.peer.inbox_url) {
            Ok(inbox) => inbox,
            Err(error) => {
                let mut events = Vec::with_capacity(first.len());
                for event in round_events(first, &urls) {
                    events.push(PushedEvent {
                        activity: event.render(&urls, &key)?.unwrap_or_default(),
                        seq: event.seq,
                        activity_id: event.activity_id,
                        activity_type: event.activity_type,
                        result: PushResult::Attempted(AttemptResult::Retry {
                            error: format!("invalid_inbox_url: {error}"),
                            retry_after: None,
                        }),
                        auth_refresh: false,
                    });
                }
                federation.finish_push_round(leased, events).await?;
                return Ok(RoundOutcome {
                    attempts: 0,
                    more: false,
                });
            }
        };
        let slots = Arc::new(tokio::sync::Semaphore::new(PUSH_CONCURRENCY));
        let round_deadline = federation.now() + PUSH_ROUND_TIME;
        let may_refresh_auth = leased.may_refresh_auth(federation.now());
        // Set by the first attempt that failed: no further window is read (its events would wait anyway).
        let failed_anywhere = Arc::new(AtomicBool::new(false));
        let mut tasks = tokio::task::JoinSet::new();
        // Each object's last task so far, which tells the object's next task how it ended.
        let mut last_of_object: HashMap<String, oneshot::Receiver<Option<PushResult>>> = HashMap::new();
        let windows = if window == 1 { 1 } else { PUSH_ROUND_WINDOWS };
        let mut entries = first;
        // Whether the round read to the outbox's end (a window shorter than the limit): then nothing is left.
        let mut read_to_end = false;
        for window_number in 1..=windows {
            let full = i64::try_from(entries.len()).unwrap_or(i64::MAX) >= window;
            read_to_end = !full;
            let read_through = entries.last().map(|entry| entry.event.seq);
            // The next window is read while this one is sent.
            let next = match read_through {
                Some(after)
                    if full
                        && window_number < windows
                        && federation.now() < round_deadline
                        && !failed_anywhere.load(Ordering::Relaxed) =>
                {
                    let federation = federation.clone();
                    Some(tokio::spawn(
                        async move { federation.outbox_entries(after, window).await },
                    ))
                }
                _ => None,
            };
            // Each object's events go in order on one task, after the object's task of the window before; objects
            // go in parallel.
            let mut by_object: BTreeMap<String, Vec<RoundEvent>> = BTreeMap::new();
            let mut order: Vec<String> = Vec::new();
            for event in round_events(entries, &urls) {
                if !by_object.contains_key(&event.object_id) {
                    order.push(event.object_id.clone());
                }
                by_object.entry(event.object_id.clone()).or_default().push(event);
            }
            for object_id in order {
                let Some(events) = by_object.remove(&object_id) else {
                    continue;
                };
                let before = last_of_object.remove(&object_id);
                let (finished, after_this) = oneshot::channel();
                last_of_object.insert(object_id, after_this);
                let client = self.clone();
                let key = Arc::clone(&key);
                let inbox = inbox.clone();
                let slots = Arc::clone(&slots);
                let urls = urls.clone();
                let failed_anywhere = Arc::clone(&failed_anywhere);
                let peer_realm = leased.peer.realm.clone();
                tasks.spawn(async move {
                    // The object's earlier events first: a failure there holds this window's events back too (a
                    // task that ended without telling, on a rendering error, fails the round anyway).
                    let mut failed: Option<PushResult> = match before {
                        Some(before) => before.await.unwrap_or(Some(PushResult::Postponed)),
                        None => None,
                    };
                    let _slot = slots.acquire_owned().await;
                    let mut results = Vec::with_capacity(events.len());
                    for event in events {
                        let body = event.render(&urls, &key)?;
                        let (result, auth_refresh) = match (&failed, &body) {
                            (_, None) => (PushResult::NothingToSend, false),
                            // A later event of an object whose earlier one failed waits for it.
                            (Some(failure), Some(_)) => (failure.clone(), false),
                            // The round is over its time: what is not sent yet waits for the next round, so the
                            // round ends well inside its lease.
                            (None, Some(_)) if client.federation().now() >= round_deadline => {
                                failed = Some(PushResult::Postponed);
                                (PushResult::Postponed, false)
                            }
                            (None, Some(body)) => {
                                let started = std::time::Instant::now();
                                let (result, auth_refresh) = client
                                    .post_replicated(&inbox, body.clone().into_bytes(), &key, may_refresh_auth)
                                    .await;
                                client.metrics().record_peer_delivery(
                                    &peer_realm,
                                    super::client::delivery_outcome(&result),
                                    Some(started.elapsed().as_secs_f64()),
                                );
                                let result = PushResult::Attempted(result);
                                if matches!(result, PushResult::Attempted(AttemptResult::Retry { .. })) {
                                    failed_anywhere.store(true, Ordering::Relaxed);
                                    failed = Some(result.clone());
                                }
                                (result, auth_refresh)
                            }
                        };
                        results.push(PushedEvent {
                            seq: event.seq,
                            activity_id: event.activity_id,
                            activity_type: event.activity_type,
                            activity: body.unwrap_or_default(),
                            result,
                            auth_refresh,
                        });
                    }
                    let _ = finished.send(failed);
                    Ok::<_, ServiceError>(results)
                });
            }
            // A window that cannot be read ends the round with what it sent: the cursor moves over that, and the
            // next round reads the window again (failing the round here would drop the answers of the requests in
            // flight, whose events would all be sent again).
            let read = match next {
                Some(next) => next
                    .await
                    .map_err(|error| error.to_string())
                    .and_then(|read| read.map_err(|error| error.to_string())),
                None => break,
            };
            entries = match read {
                Ok(entries) if !entries.is_empty() => entries,
                Ok(_) => {
                    read_to_end = true;
                    break;
                }
                Err(error) => {
                    tracing::warn!(peer = %leased.peer.realm, error = %error, "reading the next window of a push round failed");
                    break;
                }
            };
        }
        let mut events = Vec::new();
        while let Some(joined) = tasks.join_next().await {
            // A failure to render fails the round, as it did when rendering came first: its cursor stays, and the
            // events its other tasks delivered are sent again next round (the receiver's dedupe absorbs them).
            match joined {
                Ok(results) => events.extend(results?),
                Err(error) => return Err(ServiceError::internal(format!("a delivery task failed: {error}"))),
            }
        }
        for event in &events {
            let outcome = match &event.result {
                PushResult::Attempted(AttemptResult::Delivered) => "delivered",
                PushResult::Attempted(AttemptResult::Retry { .. }) => "retried",
                PushResult::Attempted(AttemptResult::Refused { .. }) => "dead_lettered",
                PushResult::NothingToSend | PushResult::Postponed => continue,
            };
            self.metrics().record_delivery(outcome);
        }
        // Attempts, not deliveries: a round that failed still did work (its retry may be due at once).
        let sent = events
            .iter()
            .filter(|event| matches!(event.result, PushResult::Attempted(_)))
            .count();
        let stopped_early = events.iter().any(|event| {
            matches!(
                event.result,
                PushResult::Postponed | PushResult::Attempted(AttemptResult::Retry { .. })
            )
        });
        federation.finish_push_round(leased, events).await?;
        Ok(RoundOutcome {
            attempts: sent,
            more: stopped_early || !read_to_end,
        })
    }

    /// Posts one replicated activity, signed afresh; says how it ended and whether a 401/403 may be retried with a
    /// fresh signature.
    async fn post_replicated(
        &self,
        inbox: &Url,
        body: Vec<u8>,
        key: &SigningKey,
        may_refresh_auth: bool,
    ) -> (AttemptResult, bool) {
        let request = match self.signed_request(Method::POST, inbox, Some(body), key) {
            Ok(request) => request,
            Err(error) => {
                return (
                    AttemptResult::Retry {
                        error: format!("signing: {error}"),
                        retry_after: None,
                    },
                    false,
                );
            }
        };
        match self.transport().send(request).await {
            Ok(response) => {
                let status = response.status();
                if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
                    let reason = refusal_reason(&response).unwrap_or_default();
                    if PEER_LEVEL_REASONS.contains(&reason.as_str()) {
                        // The peering is the problem: the class is the peer's reason, which says which.
                        let error = format!("{reason}: HTTP {} from the peer's inbox", status.as_u16());
                        return (
                            AttemptResult::Retry {
                                error,
                                retry_after: None,
                            },
                            false,
                        );
                    }
                    let error = format!("http_{}: {reason}", status.as_u16());
                    if may_refresh_auth {
                        return (
                            AttemptResult::Retry {
                                error,
                                retry_after: None,
                            },
                            true,
                        );
                    }
                    return (AttemptResult::Refused { error }, false);
                }
                (classify(&response), false)
            }
            Err(error) if error.is_retryable() => (
                AttemptResult::Retry {
                    error: format!("{}: {error}", error.class()),
                    retry_after: None,
                },
                false,
            ),
            Err(error) => (
                AttemptResult::Retry {
                    error: format!("{}: {error}", error.class()),
                    retry_after: None,
                },
                false,
            ),
        }
    }

    /// One pull pass: one page from every peer whose pull is due (its snapshot first, then its outbox), queued
    /// for the intake. Returns how many new activities were queued, plus one per peer with pages left.
    pub async fn pull_due(&self, interval: TimeDelta) -> Result<usize, ServiceError> {
        let leased = self.federation().lease_pull(PEERS_PER_PASS).await?;
        let mut queued = 0;
        for peer in leased {
            let progress = self.pull_page(&peer).await;
            let (count, progress) = match progress {
                // A page that leaves more to read counts as work, so a pass that queued nothing new (duplicates)
                // is not mistaken for the end.
                Ok((count, progress)) => {
                    let more = matches!(
                        progress,
                        PullProgress::Backfilling { finished: false, .. } | PullProgress::Following { more: true, .. }
                    );
                    (count + usize::from(more), Ok(progress))
                }
                // Logged by `finish_pull`, once per class of failure.
                Err(error) => (0, Err(error)),
            };
            queued += count;
            self.federation().finish_pull(&peer, progress, interval).await?;
        }
        Ok(queued)
    }

    async fn pull_page(&self, leased: &LeasedPeer) -> Result<(usize, PullProgress), String> {
        let federation = self.federation();
        let outbox = leased
            .peer
            .outbox_url
            .as_deref()
            .ok_or_else(|| "the peer has no outbox".to_owned())?;
        let mut url = Url::parse(outbox).map_err(|error| format!("outbox URL: {error}"))?;
        let backfilling = leased.replication.pull_cursor.is_none();
        {
            let mut query = url.query_pairs_mut();
            query.clear();
            match leased.replication.pull_cursor {
                None => {
                    query.append_pair("snapshot", "true");
                    query.append_pair("after", leased.replication.backfill_after.as_deref().unwrap_or(""));
                }
                Some(cursor) => {
                    query.append_pair("after", &cursor.to_string());
                }
            }
            query.append_pair("limit", &PULL_PAGE.to_string());
        }
        let key = federation.signing_key().await.map_err(|error| error.to_string())?;
        let request = self
            .signed_request(Method::GET, &url, None, &key)
            .map_err(|error| error.to_string())?;
        let response = self
            .transport()
            .send(request)
            .await
            .map_err(|error| format!("{}: {error}", error.class()))?;
        if !response.status().is_success() {
            // The peer's reason when it gave one (`blocked_sender`, `unknown_sender`, …): a refusal is an answer,
            // and says more than the status.
            return Err(match refusal_reason(&response) {
                Some(reason) => format!("{reason}: HTTP {} from the peer's outbox", response.status().as_u16()),
                None => match classify(&response) {
                    AttemptResult::Retry { error, .. } | AttemptResult::Refused { error } => error,
                    AttemptResult::Delivered => format!("http_{}", response.status().as_u16()),
                },
            });
        }
        let value = integrity::parse_i_json(response.body()).map_err(|error| format!("not_i_json: {error}"))?;
        let page: OutboxPage = serde_json::from_value(value).map_err(|error| format!("not an outbox page: {error}"))?;
        let mut verified = Vec::with_capacity(page.ordered_items.len());
        // The keys the page's proofs name, read once per page (a page is usually signed by one key).
        let mut signers: std::collections::HashMap<String, Option<InboxSender>> = std::collections::HashMap::new();
        for item in &page.ordered_items {
            let activity = match Activity::from_json(item.clone()) {
                Ok(activity) => activity,
                Err(error) => {
                    tracing::warn!(peer = %leased.peer.realm, error = %error, "a pulled item is not an activity");
                    continue;
                }
            };
            if activity.actor != leased.peer.actor_url || !is_replication(&activity) {
                tracing::warn!(peer = %leased.peer.realm, activity_id = %activity.id, "a pulled item is not the peer's replication activity");
                continue;
            }
            let proof_key = match &activity.object {
                ActivityObject::Other(object) => integrity::proof_verification_method(object).ok().map(str::to_owned),
                _ => None,
            };
            if let Some(key_id) = &proof_key
                && !signers.contains_key(key_id)
            {
                let signer = federation
                    .inbox_sender(key_id)
                    .await
                    .map_err(|error| error.to_string())?;
                signers.insert(key_id.clone(), signer);
            }
            let known_signer = proof_key
                .as_ref()
                .and_then(|key_id| signers.get(key_id))
                .and_then(Option::as_ref);
            match read_replicated(federation, &activity, known_signer).await {
                Ok(replicated) => verified.push(VerifiedActivity {
                    peer_realm: leased.peer.realm.clone(),
                    key_id: replicated.proof.key_id,
                    activity_id: activity.id.clone(),
                    activity_type: activity.kind.as_str().to_owned(),
                    body: item.to_string(),
                    sender_state: Some(leased.peer.state),
                }),
                Err(refusal) => {
                    tracing::warn!(peer = %leased.peer.realm, activity_id = %activity.id, reason = refusal.reason, detail = %refusal.detail, "a pulled object was refused");
                }
            }
        }
        let queued = federation
            .enqueue_pulled(&leased.peer.realm, &verified)
            .await
            .map_err(|error| error.to_string())?;
        let progress = if backfilling {
            PullProgress::Backfilling {
                after: page.cursor.clone(),
                head: leased.replication.backfill_head.unwrap_or(page.head),
                finished: page.next.is_none(),
                epoch: page.epoch.clone(),
            }
        } else {
            PullProgress::Following {
                cursor: page
                    .cursor
                    .parse::<i64>()
                    .map_err(|_| format!("the page's cursor {:?} is not a position", page.cursor))?,
                more: page.next.is_some(),
                epoch: page.epoch.clone(),
            }
        };
        Ok((queued, progress))
    }
}

/// What a peer asked of our outbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxQuery {
    /// The snapshot instead of the history.
    pub snapshot: bool,
    /// The position (history) or object key (snapshot) to read after.
    pub after: String,
    /// Items per page.
    pub limit: i64,
}

/// One page of our outbox (history after a position, or the snapshot after an object), signed objects inside.
pub async fn outbox_page(
    federation: &Federation,
    peer_realm: &str,
    query: &OutboxQuery,
) -> Result<Value, ServiceError> {
    let urls = InstanceUrls {
        base: federation.public_base_url().to_owned(),
    };
    let limit = query.limit.clamp(1, MAX_PAGE);
    let key = federation.signing_key().await?;
    let head = federation.outbox_head().await?;
    let page_url = |after: &str| {
        let mut url = format!("{}?after={}&limit={limit}", urls.outbox(), urlencode(after));
        if query.snapshot {
            url.push_str("&snapshot=true");
        }
        url
    };
    let mut items = Vec::new();
    let cursor;
    let full;
    if query.snapshot {
        let (snapshot, read_through) = federation.snapshot_items(&query.after, limit).await?;
        let mut page_full = read_through.as_ref().is_some_and(|(read, _)| *read >= limit);
        let mut last_position = read_through.map_or_else(|| query.after.clone(), |(_, last)| last);
        let mut bytes = 0_usize;
        let mut included_through: Option<String> = None;
        for item in &snapshot {
            let kind = activity_kind(&item.object);
            let signed = signed_object(&urls, &item.object, &key).map_err(ServiceError::internal)?;
            // Named by what it carries (the revision, the deletion, the space, the record, the retraction), so a
            // newer revision or a later deletion is a new activity that a peer's dedupe never hides, and the same one
            // is deduplicated.
            let (activity_key, published) = match &item.object {
                FederatedObject::Revision(record) => (format!("snapshot-{}", record.revision_id), record.revised_at),
                FederatedObject::Deletion(tombstone) => (
                    format!("snapshot-deleted-{}", tombstone.content_id),
                    tombstone.deleted_at,
                ),
                FederatedObject::Space(space) => (format!("snapshot-{}", space.id), space.created_at),
                FederatedObject::Evidence(passport) => {
                    (format!("snapshot-{}", passport.record_id), passport.created_at)
                }
                FederatedObject::Retraction(retraction) => (
                    format!("snapshot-retracted-{}", retraction.record_id),
                    retraction.retracted_at,
                ),
            };
            let activity = activity_document(&urls, &activity_key, &kind, signed, published);
            let size = activity.to_string().len();
            if let Some(previous) = &included_through
                && bytes + size > MAX_PAGE_BYTES
            {
                // The page ends before this item; the next page starts with it.
                page_full = true;
                last_position.clone_from(previous);
                break;
            }
            bytes += size;
            included_through = Some(item.position.clone());
            items.push(activity);
        }
        full = page_full;
        cursor = last_position;
    } else {
        let after = query
            .after
            .parse::<i64>()
            .map_err(|_| ServiceError::validation("after", "after must be an outbox position"))?
            .max(0);
        let entries = federation.outbox_entries(after, limit).await?;
        let mut page_full = i64::try_from(entries.len()).unwrap_or(i64::MAX) >= limit;
        let mut read_through = after;
        let mut bytes = 0_usize;
        for entry in &entries {
            let Some(object) = &entry.object else {
                read_through = entry.event.seq;
                continue;
            };
            let kind = activity_kind(object);
            let signed = signed_object(&urls, object, &key).map_err(ServiceError::internal)?;
            let activity = activity_document(
                &urls,
                &entry.event.event.event_id,
                &kind,
                signed,
                entry.event.event.created_at,
            );
            let size = activity.to_string().len();
            if !items.is_empty() && bytes + size > MAX_PAGE_BYTES {
                // The page ends before this event; the next page starts with it.
                page_full = true;
                break;
            }
            bytes += size;
            read_through = entry.event.seq;
            items.push(activity);
        }
        full = page_full;
        cursor = read_through.to_string();
        federation.record_outbox_read(peer_realm, after).await?;
    }
    let mut page = json!({
        "@context": document_context(),
        "id": page_url(&query.after),
        "type": "OrderedCollectionPage",
        "partOf": urls.outbox(),
        "orderedItems": items,
        "cursor": cursor,
        "head": head,
        "epoch": federation.outbox_epoch().await?,
    });
    // `next` only when there may be more (absent on the last page).
    if full {
        page["next"] = json!(page_url(&cursor));
    }
    Ok(page)
}

/// The outbox collection itself (`GET /outbox` without a query): its head and where its pages start.
pub async fn outbox_collection(federation: &Federation) -> Result<Value, ServiceError> {
    let urls = InstanceUrls {
        base: federation.public_base_url().to_owned(),
    };
    let head = federation.outbox_head().await?;
    Ok(json!({
        "@context": document_context(),
        "id": urls.outbox(),
        "type": "OrderedCollection",
        "head": head,
        "epoch": federation.outbox_epoch().await?,
        "first": format!("{}?after=0&limit={PULL_PAGE}", urls.outbox()),
        "snapshot": format!("{}?snapshot=true&after=&limit={PULL_PAGE}", urls.outbox()),
    }))
}

fn urlencode(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}
