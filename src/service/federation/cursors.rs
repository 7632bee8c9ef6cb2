//! Each peer's replication cursors: push rounds (our outbox to its inbox: lease, contiguous-prefix advance, one
//! failure per round, full-jitter backoff, a circuit breaker, the delivery horizon, dead letters), pulls (its outbox
//! and snapshot into our inbox queue), the lag an operator sees, and outbox retention.
//!
//! Push is at-least-once: a round sends a window of events and advances the cursor over the longest prefix that was
//! delivered or dead-lettered, so an event after a failure is sent again next round; the receiver's dedupe on the
//! activity ID makes the effect exactly once.

use chrono::{DateTime, TimeDelta, Utc};

use super::Federation;
use super::inbox::VerifiedActivity;
use super::peer_failure::{UNKNOWN_SENDER, failure_class};
use super::peer_state::normalize_realm;
use super::peer_status::ReplicationLag;
use super::peering::PeeringMessage;
use super::retry::{AttemptResult, BACKOFF_CAP, DELIVERY_HORIZON, LEASE, backoff_bound, jitter};
use crate::domain::PeerState;
use crate::domain::peer::PeerRecord;
use crate::domain::peer::PeerReplication;
use crate::domain::peering_delivery::{DeliveryState, PeeringDelivery};
use crate::service::ServiceError;
use crate::store::replication::Lease;
use crate::store::{self, Conn};

/// How long a 401 or 403 answer is believed to be fixable by signing again with a freshly read key: one such
/// answer per interval is retried at once, a second is final (a dead letter).
pub const AUTH_REFRESH_INTERVAL: TimeDelta = TimeDelta::hours(1);
/// How long a peer's inbox may answer `unknown_sender` to every push round before this instance concludes that the
/// peer forgot it (its admin removed the peering and the `Reject` never arrived) and ends the peering: long enough
/// for a peer restored from a backup, or re-added by its admin, to know this instance again.
pub const FORGOTTEN_GRACE: TimeDelta = TimeDelta::hours(1);
/// Outbox events purged per statement at most (retention runs often; a bounded delete keeps each one short).
pub const PURGE_BATCH: i64 = 10_000;

/// A peer whose push or pull this worker holds.
#[derive(Debug, Clone, PartialEq)]
pub struct LeasedPeer {
    /// Its replication state as leased.
    pub replication: PeerReplication,
    /// The peer.
    pub peer: PeerRecord,
}

impl LeasedPeer {
    /// Events to send this round: the whole window (`full`, the adapter's limit), or one while the circuit is open
    /// (the last round failed), so a peer that is down costs one request per backoff period.
    pub fn window(&self, full: i64) -> i64 {
        if self.replication.consecutive_failures > 0 {
            1
        } else {
            full
        }
    }

    /// Whether a 401 or 403 now may be retried once with a fresh signature.
    pub fn may_refresh_auth(&self, now: DateTime<Utc>) -> bool {
        self.replication
            .auth_refreshed_at
            .is_none_or(|at| now - at >= AUTH_REFRESH_INTERVAL)
    }
}

/// One event of a push round and how its delivery ended.
#[derive(Debug, Clone, PartialEq)]
pub struct PushedEvent {
    /// The outbox position.
    pub seq: i64,
    /// The activity's ID.
    pub activity_id: String,
    /// Its type.
    pub activity_type: String,
    /// The activity as sent (kept with a dead letter, so a replay sends the same object and proof).
    pub activity: String,
    /// How it ended.
    pub result: PushResult,
    /// The answer was a 401 or 403 that a fresh signature may fix (retried once per interval).
    pub auth_refresh: bool,
}

/// What a push round did with one event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PushResult {
    /// Nothing to send for this event (its object is gone): the cursor passes it.
    NothingToSend,
    /// Not attempted: the round ran out of time first. The cursor stops before it, and no failure is counted.
    Postponed,
    /// Sent, and how the attempt ended.
    Attempted(AttemptResult),
}

/// Where a pull stands after a pass.
#[derive(Debug, Clone, PartialEq)]
pub enum PullProgress {
    /// Reading the snapshot: the last object read and the outbox head when it began.
    Backfilling {
        /// The snapshot position read through.
        after: String,
        /// The head when the snapshot began.
        head: i64,
        /// Whether the snapshot was read to its end (then the outbox is followed from `head`).
        finished: bool,
        /// The epoch the page named.
        epoch: Option<String>,
    },
    /// Following the outbox: read through this position.
    Following {
        /// The cursor.
        cursor: i64,
        /// Whether more pages remain.
        more: bool,
        /// The epoch the page named.
        epoch: Option<String>,
    },
}

impl PullProgress {
    /// The epoch of the peer's outbox the page named, if it named one.
    pub fn epoch(&self) -> Option<&str> {
        match self {
            PullProgress::Backfilling { epoch, .. } | PullProgress::Following { epoch, .. } => epoch.as_deref(),
        }
    }
}

/// Pulled activities stored per statement (eleven bound values each).
const PULLED_ROWS_PER_STATEMENT: usize = 500;

impl Federation {
    /// Takes the peers whose push round is due, for this worker alone for `held_for` (the adapter's lease time,
    /// longer than its rounds last).
    pub async fn lease_push(&self, limit: i64, held_for: TimeDelta) -> Result<Vec<LeasedPeer>, ServiceError> {
        self.lease_peers(Lease::Push, limit, held_for).await
    }

    /// Takes the peers whose pull is due.
    pub async fn lease_pull(&self, limit: i64) -> Result<Vec<LeasedPeer>, ServiceError> {
        self.lease_peers(Lease::Pull, limit, LEASE).await
    }

    async fn lease_peers(
        &self,
        lease: Lease,
        limit: i64,
        held_for: TimeDelta,
    ) -> Result<Vec<LeasedPeer>, ServiceError> {
        let now = self.now();
        let rows = store::replication::lease_due(self.store(), lease, now, now + held_for, limit).await?;
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        let mut reader = self.store().reader().await?;
        let mut leased = Vec::with_capacity(rows.len());
        for replication in rows {
            // A peer removed or blocked since the lease was taken is left alone (a blocked peer is never due, so
            // its lease lapses unused).
            if let Some(peer) = store::peers::find_peer(&mut reader.conn(), &replication.peer_realm).await?
                && matches!(peer.state, PeerState::Active | PeerState::Unreachable)
            {
                leased.push(LeasedPeer { replication, peer });
            }
        }
        Ok(leased)
    }

    /// Records a push round: the cursor moves over the longest prefix of events that were delivered or refused
    /// for good (each refusal becomes a dead letter); a failure that may pass ends the prefix and counts once,
    /// however many requests failed in the round.
    pub async fn finish_push_round(
        &self,
        leased: &LeasedPeer,
        mut events: Vec<PushedEvent>,
    ) -> Result<(), ServiceError> {
        let now = self.now();
        events.sort_by_key(|event| event.seq);
        // Redoable: a cursor lost to a crash of the database server only sends its events again, and the
        // receiver's dedupe absorbs them (a refusal is sent again and dead-lettered again).
        let mut transaction = self.store().begin_redoable().await?;
        let Some(mut row) = store::replication::find(&mut transaction.conn(), &leased.peer.realm).await? else {
            return Ok(());
        };
        let mut cursor = row.push_cursor.max(leased.replication.push_cursor);
        // The class the peer was failing with before this round, if it was: a failure of the same class is logged
        // once, when it begins, and the recovery once, when it ends.
        let failing_before = (row.consecutive_failures > 0)
            .then(|| row.last_error_class.clone())
            .flatten();
        // A peer whose inbox has answered `unknown_sender` for the whole grace no longer knows this instance (its
        // admin removed the peering, and its `Reject` or `Undo` never arrived): another such answer ends the
        // peering here, and what it refused becomes dead letters instead of being retried forever.
        let forgotten_before = failing_before.as_deref() == Some(UNKNOWN_SENDER)
            && row.failing_since.is_some_and(|since| now - since >= FORGOTTEN_GRACE);
        let mut forgotten_by_peer = false;
        let mut delivered = 0_usize;
        let mut failure: Option<(String, Option<TimeDelta>)> = None;
        let mut auth_refresh = false;
        for event in &events {
            if event.seq <= cursor {
                continue;
            }
            match &event.result {
                PushResult::NothingToSend => cursor = event.seq,
                PushResult::Postponed => break,
                PushResult::Attempted(AttemptResult::Delivered) => {
                    delivered += 1;
                    cursor = event.seq;
                }
                PushResult::Attempted(AttemptResult::Refused { error }) => {
                    self.store_dead_letter(&mut transaction.conn(), leased, event, error, now)
                        .await?;
                    cursor = event.seq;
                }
                PushResult::Attempted(AttemptResult::Retry { error, .. })
                    if forgotten_before && failure_class(error) == UNKNOWN_SENDER =>
                {
                    self.store_dead_letter(&mut transaction.conn(), leased, event, error, now)
                        .await?;
                    forgotten_by_peer = true;
                    cursor = event.seq;
                }
                PushResult::Attempted(AttemptResult::Retry { error, retry_after }) => {
                    auth_refresh = event.auth_refresh;
                    failure = Some((error.clone(), *retry_after));
                    break;
                }
            }
        }
        row.push_cursor = cursor;
        row.leased_until = None;
        row.updated_at = now;
        let mut peer = store::peers::find_peer(&mut transaction.conn(), &leased.peer.realm).await?;
        if forgotten_by_peer {
            let error = format!(
                "{UNKNOWN_SENDER}: the peer has not known this instance for {} hours (its admin removed the \
                 peering); nothing more is pushed to it, and what it refused is kept as dead letters",
                FORGOTTEN_GRACE.num_hours()
            );
            tracing::warn!(peer = %leased.peer.realm, class = UNKNOWN_SENDER, "the peer no longer knows this instance: the peering ended");
            row.consecutive_failures = 0;
            row.failing_since = None;
            row.last_error_class = Some(UNKNOWN_SENDER.to_owned());
            row.last_error = Some(excerpt(&error));
            row.last_error_at = Some(now);
            if let Some(peer) = peer.as_mut() {
                peer.state = PeerState::Rejected;
                peer.last_error = Some(excerpt(&error));
                peer.last_error_at = Some(now);
                peer.updated_at = now;
                store::peers::save_peer(&mut transaction.conn(), peer).await?;
            }
        } else {
            match failure {
                Some((error, retry_after)) => {
                    row.consecutive_failures = row.consecutive_failures.saturating_add(1);
                    let failing_since = *row.failing_since.get_or_insert(now);
                    let wait = if auth_refresh {
                        row.auth_refreshed_at = Some(now);
                        TimeDelta::zero()
                    } else {
                        let jittered = jitter(backoff_bound(row.consecutive_failures));
                        retry_after.map_or(jittered, |asked| asked.min(BACKOFF_CAP).max(jittered))
                    };
                    row.next_attempt_at = now + wait;
                    let class = failure_class(&error).to_owned();
                    if failing_before.as_deref() == Some(class.as_str()) {
                        tracing::debug!(peer = %leased.peer.realm, class = %class, error = %error, failures = row.consecutive_failures, "pushing to the peer still fails");
                    } else {
                        tracing::warn!(peer = %leased.peer.realm, class = %class, error = %error, "pushing to the peer fails");
                    }
                    row.last_error_class = Some(class);
                    row.last_error = Some(excerpt(&error));
                    row.last_error_at = Some(now);
                    if let Some(peer) = peer.as_mut() {
                        // The peer's own row carries the newest failure of every channel, which `peer list` shows.
                        peer.last_error = Some(excerpt(&error));
                        peer.last_error_at = Some(now);
                        if peer.state == PeerState::Active && now - failing_since >= DELIVERY_HORIZON {
                            tracing::warn!(peer = %peer.realm, "deliveries have failed for the delivery horizon: the peer is unreachable");
                            peer.state = PeerState::Unreachable;
                        }
                        peer.updated_at = now;
                        store::peers::save_peer(&mut transaction.conn(), peer).await?;
                    }
                }
                None => {
                    if let Some(class) = &failing_before {
                        tracing::info!(peer = %leased.peer.realm, class = %class, failures = row.consecutive_failures, "pushing to the peer works again");
                    }
                    row.consecutive_failures = 0;
                    row.failing_since = None;
                    row.next_attempt_at = now;
                    if delivered > 0 {
                        row.last_success_at = Some(now);
                        // The peer's contact time is kept to the minute (as the inbox keeps it): a round every few
                        // milliseconds does not rewrite the peer's row each time.
                        if let Some(peer) = peer.as_mut().filter(|peer| {
                            peer.state == PeerState::Unreachable
                                || peer.last_contact_at.is_none_or(|at| now - at >= TimeDelta::minutes(1))
                        }) {
                            peer.last_contact_at = Some(now);
                            if peer.state == PeerState::Unreachable {
                                peer.state = PeerState::Active;
                            }
                            peer.updated_at = now;
                            store::peers::save_peer(&mut transaction.conn(), peer).await?;
                        }
                    }
                }
            }
        }
        store::replication::save_push_state(&mut transaction.conn(), &row).await?;
        transaction.commit().await?;
        tracing::debug!(peer = %leased.peer.realm, cursor, delivered, failures = row.consecutive_failures, "push round finished");
        Ok(())
    }

    async fn store_dead_letter(
        &self,
        conn: &mut Conn<'_>,
        leased: &LeasedPeer,
        event: &PushedEvent,
        error: &str,
        now: DateTime<Utc>,
    ) -> Result<(), ServiceError> {
        let message = PeeringMessage::Replicated {
            activity: event.activity.clone(),
        };
        let body = serde_json::to_string(&message).map_err(|error| ServiceError::internal(error.to_string()))?;
        let row = PeeringDelivery {
            id: self.service().new_internal_id(),
            peer_realm: leased.peer.realm.clone(),
            inbox_url: leased.peer.inbox_url.clone(),
            activity_id: event.activity_id.clone(),
            activity_type: event.activity_type.clone(),
            body,
            state: DeliveryState::Dead,
            attempts: 1,
            next_attempt_at: now,
            last_error: Some(excerpt(error)),
            created_at: now,
            finished_at: Some(now),
        };
        store::deliveries::insert_delivery(conn, &row).await?;
        store::deliveries::set_delivery_outbox_seq(conn, &row.id, event.seq).await?;
        tracing::warn!(peer = %leased.peer.realm, activity_id = %event.activity_id, error, "the peer refused an activity for good: dead letter");
        Ok(())
    }

    /// Records a pull pass: where it got to, or why it failed. The next pull is due after `interval` (at once
    /// when pages remain).
    pub async fn finish_pull(
        &self,
        leased: &LeasedPeer,
        progress: Result<PullProgress, String>,
        interval: TimeDelta,
    ) -> Result<(), ServiceError> {
        let now = self.now();
        let mut transaction = self.store().begin().await?;
        let Some(mut row) = store::replication::find(&mut transaction.conn(), &leased.peer.realm).await? else {
            return Ok(());
        };
        row.pull_leased_until = None;
        row.updated_at = now;
        let failing_before = row
            .last_pull_error
            .as_deref()
            .map(|error| failure_class(error).to_owned());
        let recovered = progress.is_ok();
        let new_epoch = match &progress {
            Ok(page) => match (row.outbox_epoch.as_deref(), page.epoch()) {
                (Some(known), Some(named)) if known != named => Some(named.to_owned()),
                (None, Some(named)) => {
                    row.outbox_epoch = Some(named.to_owned());
                    None
                }
                _ => None,
            },
            Err(_) => None,
        };
        match progress {
            // The peer's outbox numbers its events anew (it was restored from a backup): a position read before
            // says nothing now, and following on from it could skip events the restored outbox numbers at or below
            // it. Read its snapshot again from the start, then follow from that snapshot's head; what was already
            // applied is deduplicated.
            Ok(_) if let Some(epoch) = new_epoch => {
                tracing::info!(peer = %leased.peer.realm, epoch = %epoch, "the peer's outbox began a new epoch (a restore): reading its snapshot again");
                row.outbox_epoch = Some(epoch);
                row.pull_cursor = None;
                row.backfill_after = None;
                row.backfill_head = None;
                row.last_pull_at = Some(now);
                row.last_pull_error = None;
                row.next_pull_at = now;
            }
            Ok(PullProgress::Backfilling {
                after, head, finished, ..
            }) => {
                row.last_pull_at = Some(now);
                row.last_pull_error = None;
                if finished {
                    row.pull_cursor = Some(head);
                    row.backfill_after = None;
                    row.backfill_head = None;
                    row.next_pull_at = now;
                } else {
                    row.backfill_after = Some(after);
                    row.backfill_head = Some(head);
                    row.next_pull_at = now;
                }
            }
            Ok(PullProgress::Following { cursor, more, .. }) => {
                row.last_pull_at = Some(now);
                row.last_pull_error = None;
                row.pull_cursor = Some(cursor.max(row.pull_cursor.unwrap_or(0)));
                row.next_pull_at = if more { now } else { now + interval };
            }
            Err(error) => {
                let class = failure_class(&error);
                if failing_before.as_deref() == Some(class) {
                    tracing::debug!(peer = %leased.peer.realm, class, error = %error, "pulling from the peer still fails");
                } else {
                    tracing::warn!(peer = %leased.peer.realm, class, error = %error, "pulling from the peer fails");
                }
                row.last_pull_error = Some(excerpt(&error));
                row.next_pull_at = now + interval;
                // The peer's own row carries the newest failure of every channel, which `peer list` shows.
                if let Some(mut peer) = store::peers::find_peer(&mut transaction.conn(), &leased.peer.realm).await? {
                    peer.last_error = Some(excerpt(&error));
                    peer.last_error_at = Some(now);
                    peer.updated_at = now;
                    store::peers::save_peer(&mut transaction.conn(), &peer).await?;
                }
            }
        }
        if recovered && let Some(class) = &failing_before {
            tracing::info!(peer = %leased.peer.realm, class = %class, "pulling from the peer works again");
        }
        store::replication::save_pull_state(&mut transaction.conn(), &row).await?;
        transaction.commit().await?;
        Ok(())
    }

    /// Queues activities read from a peer's outbox (their origin proofs verified by the adapter) for the intake, in
    /// one transaction; those already received are skipped. Returns how many were new.
    pub async fn enqueue_pulled(
        &self,
        peer_realm: &str,
        activities: &[VerifiedActivity],
    ) -> Result<usize, ServiceError> {
        let now = self.now();
        let mut transaction = self.store().begin().await?;
        let mut queued = 0;
        // Several rows per statement, in chunks that stay far below either database's limit on bound values.
        for chunk in activities.chunks(PULLED_ROWS_PER_STATEMENT) {
            let rows: Vec<store::inbox::InboxActivityRow> = chunk
                .iter()
                .map(|activity| store::inbox::InboxActivityRow {
                    peer_realm: peer_realm.to_owned(),
                    ..super::inbox::queued_row(activity, now)
                })
                .collect();
            let rows: Vec<&store::inbox::InboxActivityRow> = rows.iter().collect();
            queued += store::inbox::insert_inbox_activities(&mut transaction.conn(), &rows)
                .await?
                .len();
        }
        transaction.commit().await?;
        Ok(queued)
    }

    /// Records that `peer_realm` read our outbox after `after`: it has everything up to there (retention keeps
    /// what it has not).
    pub async fn record_outbox_read(&self, peer_realm: &str, after: i64) -> Result<(), ServiceError> {
        let mut transaction = self.store().begin().await?;
        store::replication::record_pulled_through(&mut transaction.conn(), peer_realm, after).await?;
        transaction.commit().await?;
        Ok(())
    }

    /// Every peer's replication with its lag, by realm.
    pub async fn replication_lag(&self) -> Result<Vec<ReplicationLag>, ServiceError> {
        let mut reader = self.store().reader().await?;
        let rows = store::replication::list(&mut reader.conn()).await?;
        let mut lags = Vec::with_capacity(rows.len());
        for replication in rows {
            let (undelivered, oldest_undelivered_at) =
                store::outbox::backlog(&mut reader.conn(), replication.push_cursor).await?;
            let dead_letters =
                store::deliveries::count_dead_letters(&mut reader.conn(), &replication.peer_realm).await?;
            lags.push(ReplicationLag {
                replication,
                undelivered,
                oldest_undelivered_at,
                dead_letters,
            });
        }
        Ok(lags)
    }

    /// One peer's replication lag.
    pub async fn peer_replication_lag(&self, realm: &str) -> Result<Option<ReplicationLag>, ServiceError> {
        let realm = normalize_realm(realm);
        Ok(self
            .replication_lag()
            .await?
            .into_iter()
            .find(|lag| lag.replication.peer_realm == realm))
    }

    /// Dead letters (activities a peer refused for good), newest first, of one peer or of all.
    pub async fn dead_letters(&self, realm: Option<&str>, limit: i64) -> Result<Vec<PeeringDelivery>, ServiceError> {
        let realm = realm.map(normalize_realm);
        let mut reader = self.store().reader().await?;
        Ok(store::deliveries::list_dead_letters(&mut reader.conn(), realm.as_deref(), limit).await?)
    }

    /// Sends a dead letter again: it goes back into the delivery queue, due now, signed afresh when it is sent.
    pub async fn replay_dead_letter(&self, id: &str) -> Result<PeeringDelivery, ServiceError> {
        let now = self.now();
        let mut transaction = self.store().begin().await?;
        let row = store::deliveries::find_delivery(&mut transaction.conn(), id)
            .await?
            .filter(|row| row.state == DeliveryState::Dead)
            .ok_or_else(|| ServiceError::not_found(id))?;
        store::deliveries::finish_delivery_attempt(
            &mut transaction.conn(),
            &row.id,
            DeliveryState::Pending,
            now,
            row.last_error.as_deref(),
            None,
        )
        .await?;
        transaction.commit().await?;
        tracing::info!(delivery = %row.id, peer = %row.peer_realm, activity_id = %row.activity_id, "dead letter queued again");
        Ok(PeeringDelivery {
            state: DeliveryState::Pending,
            next_attempt_at: now,
            finished_at: None,
            ..row
        })
    }

    /// Forgets a dead letter.
    pub async fn drop_dead_letter(&self, id: &str) -> Result<(), ServiceError> {
        let mut transaction = self.store().begin().await?;
        if !store::deliveries::delete_dead_letter(&mut transaction.conn(), id).await? {
            return Err(ServiceError::not_found(id));
        }
        transaction.commit().await?;
        tracing::info!(delivery = id, "dead letter dropped");
        Ok(())
    }

    /// Purges outbox events every peer that may come back has passed, and that are older than `minimum`; never by
    /// age alone. Returns how many went.
    pub async fn purge_outbox(&self, minimum: TimeDelta) -> Result<u64, ServiceError> {
        let mut transaction = self.store().begin().await?;
        let floor = store::replication::retention_floor(&mut transaction.conn()).await?;
        let Some(floor) = floor else {
            // No peer has replication state: nothing was ever promised to anyone, but a peer added later backfills
            // from the snapshot, so the minimum alone applies.
            let purged =
                store::outbox::purge(&mut transaction.conn(), i64::MAX, self.now() - minimum, PURGE_BATCH).await?;
            transaction.commit().await?;
            return Ok(purged);
        };
        let purged = store::outbox::purge(&mut transaction.conn(), floor, self.now() - minimum, PURGE_BATCH).await?;
        transaction.commit().await?;
        Ok(purged)
    }

    /// When the next push round or pull is due, for the worker's wait.
    pub async fn next_replication_due(&self) -> Result<Option<DateTime<Utc>>, ServiceError> {
        let mut reader = self.store().reader().await?;
        Ok(store::replication::next_due(&mut reader.conn()).await?)
    }
}

/// The start of an error, for the admin.
fn excerpt(error: &str) -> String {
    error.chars().take(300).collect()
}
