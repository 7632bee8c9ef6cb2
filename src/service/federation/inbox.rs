//! The inbox's use cases and the intake: who a signing key belongs to, nonces seen, accepting an activity durably
//! (deduplicated by its ID), and applying queued activities with an intake log of what each did.
//!
//! The adapter does the HTTP and cryptographic checks in the order federation.md gives; these are the steps that
//! need the database. A peer's traffic is accounted to the peer here, never to an API key or an MCP audit row.

use chrono::{DateTime, TimeDelta, Utc};

use super::super::known_rows::KnownRows;
use super::super::unit_of_work::{UnitOfWork, within_unit_of_work};
use super::Federation;
use super::apply::CheckedRevision;
use super::peer_state::{block_has_lapsed, normalize_realm};
use super::peering::{InboundPeering, PeerIntroduction};
use crate::bounded_memo::BoundedMemo;
use crate::domain::intake_log::IntakeLogEntry;
use crate::domain::peer::{PeerRecord, PinnedPeerKey};
use crate::domain::replication::{FederatedObject, ReplicatedObject};
use crate::domain::{PeerLevel, PeerState};
use crate::service::ServiceError;
use crate::store::inbox::InboxActivityRow;
use crate::store::{self};

/// How long a processed activity's ID is kept against a sender's retry: a sender gives up after its delivery
/// horizon (7 days), so a day more covers every retry.
pub const ACTIVITY_DEDUPE_HORIZON: TimeDelta = TimeDelta::days(8);

/// Rows of each kind one purge removes at most, so a purge holds the writer briefly.
const PURGE_BATCH: i64 = 5_000;

/// Most peers that may wait for approval at once: first contact costs a stored row, so it is bounded.
pub const MAX_PENDING_REQUESTS: usize = 100;

/// The sender of a signed request: the peer and the pinned key the request names.
#[derive(Debug, Clone, PartialEq)]
pub struct InboxSender {
    /// The peer, with a lapsed block already lifted.
    pub peer: PeerRecord,
    /// The key.
    pub key: PinnedPeerKey,
    /// The key, decoded (a request's signature and the origin proofs it carries are checked with it).
    pub public_key: federation::PublicKey,
}

/// How applying one inbound activity ended: its final state, and the outcome and detail of its intake log line.
#[derive(Debug)]
struct Ending {
    /// `applied` or `failed`.
    state: &'static str,
    /// `applied`, `ignored` or `refused`.
    outcome: &'static str,
    /// What it did, for the admin.
    detail: String,
}

/// A request the adapter verified, ready to be queued.
#[derive(Debug, Clone, PartialEq)]
pub struct VerifiedActivity {
    /// The sending peer's realm.
    pub peer_realm: String,
    /// The key that signed it.
    pub key_id: String,
    /// The activity's `id`.
    pub activity_id: String,
    /// Its `type`.
    pub activity_type: String,
    /// The body exactly as verified.
    pub body: String,
    /// The sending peer's state when the inbox read it (`None` for a first contact).
    pub sender_state: Option<PeerState>,
}

/// A verified signature's nonce and until when it must not come again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InboxNonce {
    /// The nonce.
    pub nonce: String,
    /// When it may be forgotten.
    pub expires_at: DateTime<Utc>,
}

/// A queued activity as the adapter read it: a peering message, or a replicated object (its origin proof verified
/// when it arrived).
#[derive(Debug, Clone, PartialEq)]
pub enum InboundMessage {
    /// The peering handshake or a key update.
    Peering(InboundPeering),
    /// A content revision, a deletion or a space.
    Replicated(Box<ReplicatedObject>),
}

/// Peer rows one batch of inbound activities already read, by realm.
type PeersRead = std::collections::HashMap<String, PeerRecord>;

/// The row a verified activity is queued as.
pub(super) fn queued_row(activity: &VerifiedActivity, now: DateTime<Utc>) -> InboxActivityRow {
    InboxActivityRow {
        activity_id: activity.activity_id.clone(),
        peer_realm: activity.peer_realm.clone(),
        activity_type: activity.activity_type.clone(),
        key_id: activity.key_id.clone(),
        body: activity.body.clone(),
        received_at: now,
        state: "queued".to_owned(),
        attempts: 0,
        next_attempt_at: now,
        processed_at: None,
        outcome: None,
    }
}

/// Logs what a batch applied: a line per activity at `debug`, one per batch at `info` (a line per activity would
/// cost more than applying it).
pub(super) fn log_batch_outcomes(outcomes: &[(&InboxActivityRow, &'static str, String)]) {
    let mut applied = 0_usize;
    for (row, outcome, detail) in outcomes {
        applied += usize::from(*outcome == "applied");
        tracing::debug!(peer = %row.peer_realm, activity_id = %row.activity_id, activity_type = %row.activity_type, outcome, detail = %detail, "inbound activity processed");
    }
    tracing::info!(activities = outcomes.len(), applied, "inbound activities applied");
}

/// How [`Federation::apply_inbound_batch`] applied a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchApplied {
    /// Several activities in one transaction.
    Together,
    /// A batch of one.
    Single,
    /// The batch failed as a whole (one of its activities, or the database), so each was applied on its own.
    OneByOne,
}

impl BatchApplied {
    /// The metric's label.
    pub fn as_str(self) -> &'static str {
        match self {
            BatchApplied::Together => "together",
            BatchApplied::Single => "single",
            BatchApplied::OneByOne => "one_by_one",
        }
    }
}

/// What the inbox did with a verified activity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Intake {
    /// Stored and queued.
    Queued,
    /// Stored and applied in the same transaction (a replicated object with nothing queued before it).
    Applied,
    /// Already received once: not queued again.
    Duplicate,
    /// The signature's nonce was already used: nothing stored.
    ReplayedNonce,
}

/// Pinned keys as decoded from their `publicKeyMultibase` text, for the inbox: decoding one (base58, and the
/// curve point decompressed) cost as much as a tenth of verifying a signature, on every request. The text is the
/// key itself, so a rotated key is a new text and never finds the old key here.
#[derive(Debug)]
pub struct DecodedKeys {
    decoded: BoundedMemo<federation::PublicKey>,
}

/// The most decoded keys kept; past it they are decoded again (a realm has a few peers with a key or two each).
const MAX_DECODED_KEYS: usize = 256;

impl Default for DecodedKeys {
    fn default() -> DecodedKeys {
        DecodedKeys {
            decoded: BoundedMemo::new(MAX_DECODED_KEYS),
        }
    }
}

impl DecodedKeys {
    /// `multikey` decoded, from what was decoded before when it can be.
    pub fn decode(&self, multikey: &str) -> Result<federation::PublicKey, federation::keys::KeyError> {
        self.decoded
            .get_or_try_insert(multikey, || federation::PublicKey::from_multikey(multikey))
    }
}

/// Why a first contact was not recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FirstContactRefusal {
    /// Too many peers already wait for approval.
    TooManyPending,
}

impl Federation {
    /// The peer and pinned key behind a signature's `keyid`, if any. A block whose time has run out is lifted here
    /// (and stored), so it takes effect on the next request in every process.
    pub async fn inbox_sender(&self, key_id: &str) -> Result<Option<InboxSender>, ServiceError> {
        let mut reader = self.store().reader().await?;
        let Some((key, peer)) = store::peers::find_peer_key_and_peer(&mut reader.conn(), key_id).await? else {
            return Ok(None);
        };
        drop(reader);
        let peer = if block_has_lapsed(&peer, self.now()) {
            let view = self.unblock_peer(&peer.realm).await?;
            view.peer
        } else {
            peer
        };
        let public_key = self
            .decoded_keys()
            .decode(&key.public_key_multibase)
            .map_err(|error| ServiceError::internal(format!("the pinned key {key_id} does not decode: {error}")))?;
        Ok(Some(InboxSender { peer, key, public_key }))
    }

    /// The peer with this realm, a lapsed block lifted.
    pub async fn find_peer(&self, realm: &str) -> Result<Option<PeerRecord>, ServiceError> {
        let mut reader = self.store().reader().await?;
        let peer = store::peers::find_peer(&mut reader.conn(), &normalize_realm(realm)).await?;
        Ok(peer.map(|mut peer| {
            if block_has_lapsed(&peer, self.now()) {
                peer.state = peer.state_before_block.unwrap_or(PeerState::Rejected);
            }
            peer
        }))
    }

    /// Records a signature's nonce until `expires_at`; `false` when the peer already used it (a replay), in this
    /// or any other process on the database. For a request refused after its signature was verified; an accepted
    /// one records its nonce with its activity ([`Federation::enqueue_inbound`]).
    pub async fn record_inbox_nonce(
        &self,
        peer_realm: &str,
        nonce: &str,
        expires_at: DateTime<Utc>,
    ) -> Result<bool, ServiceError> {
        let mut transaction = self.store().begin().await?;
        let fresh = store::inbox::insert_nonce(&mut transaction.conn(), peer_realm, nonce, expires_at).await?;
        transaction.commit().await?;
        Ok(fresh)
    }

    /// Forgets expired nonces and the processed activities no sender retries any more, a bounded number of each;
    /// the federation loop calls it, off the inbox's request path. Returns how many rows went.
    pub async fn purge_inbox_records(&self) -> Result<u64, ServiceError> {
        let now = self.now();
        let mut transaction = self.store().begin().await?;
        let nonces = store::inbox::delete_expired_nonces(&mut transaction.conn(), now, PURGE_BATCH).await?;
        let activities = store::inbox::purge_processed_inbox_activities(
            &mut transaction.conn(),
            now - ACTIVITY_DEDUPE_HORIZON,
            PURGE_BATCH,
        )
        .await?;
        transaction.commit().await?;
        Ok(nonces + activities)
    }

    /// Whether a first contact from an unknown instance may be recorded (fewer than [`MAX_PENDING_REQUESTS`] wait).
    pub async fn may_record_first_contact(&self) -> Result<Result<(), FirstContactRefusal>, ServiceError> {
        let mut reader = self.store().reader().await?;
        let pending = store::peers::count_peers_by_state(&mut reader.conn())
            .await?
            .into_iter()
            .find(|(state, _)| *state == PeerState::PendingIn)
            .map_or(0, |(_, count)| count);
        Ok(
            if usize::try_from(pending).unwrap_or(usize::MAX) >= MAX_PENDING_REQUESTS {
                Err(FirstContactRefusal::TooManyPending)
            } else {
                Ok(())
            },
        )
    }

    /// Records the request's nonce, stores and queues a verified activity (deduplicated by its ID), records the
    /// contact (which resets the peer's delivery backoff and makes an unreachable peer active), and, for a first
    /// contact, records the unknown instance as `pending_in` with its keys pinned provisionally until an admin
    /// approves them, all in one transaction. A replayed nonce changes nothing.
    pub async fn enqueue_inbound(
        &self,
        activity: &VerifiedActivity,
        nonce: &InboxNonce,
        first_contact: Option<&PeerIntroduction>,
    ) -> Result<Intake, ServiceError> {
        let Some(introduction) = first_contact else {
            // A known peer: written together with the other requests waiting (see `inbox_groups.rs`).
            return Ok(self.accept_inbound(activity, nonce, None).await?.intake);
        };
        let now = self.now();
        let mut transaction = self.store().begin().await?;
        if !store::inbox::insert_nonce(
            &mut transaction.conn(),
            &activity.peer_realm,
            &nonce.nonce,
            nonce.expires_at,
        )
        .await?
        {
            return Ok(Intake::ReplayedNonce);
        }
        let realm = normalize_realm(&introduction.realm);
        if store::peers::find_peer(&mut transaction.conn(), &realm)
            .await?
            .is_none()
        {
            let peer = PeerRecord {
                realm: realm.clone(),
                base_url: introduction.base_url.clone(),
                actor_url: introduction.actor_url.clone(),
                inbox_url: introduction.inbox_url.clone(),
                outbox_url: introduction.outbox_url.clone(),
                state: PeerState::PendingIn,
                level: PeerLevel::Standard,
                our_follow_id: None,
                their_follow_id: None,
                blocked_reason: None,
                blocked_until: None,
                state_before_block: None,
                last_contact_at: Some(now),
                last_error: None,
                last_error_at: None,
                manifest_refreshed_at: Some(now),
                created_at: now,
                updated_at: now,
            };
            super::peer_state::save_peer_state(&mut transaction.conn(), &peer, now).await?;
            for key in self.pin_keys(&realm, &introduction.keys, &crate::domain::KeyPin::FirstContact) {
                store::peers::save_peer_key(&mut transaction.conn(), &key).await?;
            }
        }
        let queued = store::inbox::insert_inbox_activity(&mut transaction.conn(), &queued_row(activity, now)).await?;
        self.record_contact(
            &mut transaction,
            &activity.peer_realm,
            activity.sender_state == Some(PeerState::Unreachable),
            now,
        )
        .await?;
        transaction.commit().await?;
        if queued {
            self.inbound_queued().notify_one();
        }
        Ok(if queued { Intake::Queued } else { Intake::Duplicate })
    }

    /// Records, inside `transaction`, that `realm` spoke: its contact time, its delivery and push backoffs reset,
    /// and, when the inbox saw it `unreachable` a moment ago, `active` again (its row is read again only then).
    pub(super) async fn record_contact(
        &self,
        transaction: &mut store::Transaction,
        realm: &str,
        was_unreachable: bool,
        now: DateTime<Utc>,
    ) -> Result<(), ServiceError> {
        store::peers::record_peer_contact(&mut transaction.conn(), realm, now).await?;
        if was_unreachable
            && let Some(mut peer) = store::peers::find_peer(&mut transaction.conn(), realm).await?
            && peer.state == PeerState::Unreachable
        {
            peer.state = PeerState::Active;
            peer.updated_at = now;
            super::peer_state::save_peer_state(&mut transaction.conn(), &peer, now).await?;
        }
        Ok(())
    }

    /// How many applying transactions the intake may run at once (the store's [`store::WriteGrouping`] says).
    pub fn intake_lanes(&self) -> usize {
        self.store().write_grouping().applying_lanes
    }

    /// The database-free checks of an inbound replicated revision, run before its transaction.
    fn check_inbound(&self, message: &Result<InboundMessage, String>) -> Option<Result<CheckedRevision, String>> {
        match message {
            Ok(InboundMessage::Replicated(object)) => self.check_replicated(object),
            _ => None,
        }
    }

    /// [`Federation::check_inbound`] of a replicated object.
    pub(super) fn check_replicated(&self, object: &ReplicatedObject) -> Option<Result<CheckedRevision, String>> {
        match &object.object {
            FederatedObject::Revision(record) => Some(self.check_revision(record)),
            _ => None,
        }
    }

    /// Up to `limit` queued activities that are due, oldest first, read without taking them (applying claims them).
    pub async fn due_inbound(&self, limit: i64) -> Result<Vec<InboxActivityRow>, ServiceError> {
        let mut reader = self.store().reader().await?;
        Ok(store::inbox::due_inbox_activities(&mut reader.conn(), self.now(), limit).await?)
    }

    /// Applies one queued activity, as the adapter read it (`Err` with the reason when it could not be read as
    /// anything this instance applies): the claim, the effect, the intake log line and the activity's final state
    /// commit together, so an activity is applied exactly once however often it is delivered or read. When applying
    /// fails for a reason that may pass, the activity waits out a backoff before it is tried again. The commit
    /// does not wait for PostgreSQL's disk sync (a redoable unit): lost with a crash of the server, it takes the
    /// claim with it, so the activity is still queued and is applied again.
    pub async fn apply_inbound(
        &self,
        row: &InboxActivityRow,
        message: &Result<InboundMessage, String>,
    ) -> Result<(), ServiceError> {
        let checked = self.check_inbound(message);
        let applied = within_unit_of_work!(self.service(), redoable, |unit| {
            async {
                let claimed = store::inbox::claim_inbox_activities(
                    &mut unit.conn(),
                    std::slice::from_ref(&row.activity_id),
                    self.now(),
                )
                .await?;
                if claimed.is_empty() {
                    return Ok::<_, ServiceError>(None);
                }
                let ending = self
                    .apply_inbound_in(
                        unit,
                        row,
                        message,
                        checked.as_ref(),
                        &mut PeersRead::new(),
                        &mut KnownRows::none(),
                    )
                    .await?;
                self.service().refresh_noted_rating_aggregates(unit).await?;
                let finished = [(row, ending)];
                self.finish_inbound(unit.transaction(), &finished).await?;
                let [(_, ending)] = finished;
                Ok(Some((ending.outcome, ending.detail)))
            }
            .await
        });
        match applied {
            Ok(Some((outcome, detail))) => {
                tracing::info!(peer = %row.peer_realm, activity_id = %row.activity_id, activity_type = %row.activity_type, outcome, detail = %detail, "inbound activity processed");
                if let Ok(InboundMessage::Replicated(object)) = message {
                    self.note_evidence_outcome(object, outcome);
                }
                Ok(())
            }
            // Another worker or process took it.
            Ok(None) => Ok(()),
            Err(error) => {
                let wait = super::retry::jitter(super::retry::backoff_bound(row.attempts.saturating_add(1)));
                tracing::warn!(peer = %row.peer_realm, activity_id = %row.activity_id, error = %error, retry_in_ms = wait.num_milliseconds(), "applying an inbound activity failed: it is tried again later");
                let mut transaction = self.store().begin().await?;
                store::inbox::retry_inbox_activity(
                    &mut transaction.conn(),
                    &row.activity_id,
                    self.now() + wait,
                    "retrying",
                )
                .await?;
                transaction.commit().await?;
                Ok(())
            }
        }
    }

    /// Applies several queued activities in one unit of work (one transaction, one commit), in order, each claimed
    /// in that transaction. When the batch fails as a whole, each activity is applied on its own, so one bad
    /// activity costs only itself.
    pub async fn apply_inbound_batch(
        &self,
        batch: &[(InboxActivityRow, Result<InboundMessage, String>)],
    ) -> Result<BatchApplied, ServiceError> {
        if batch.len() > 1 {
            // The checks that need no database run before the transaction takes the writer.
            let checked: Vec<Option<Result<CheckedRevision, String>>> =
                batch.iter().map(|(_, message)| self.check_inbound(message)).collect();
            let applied = within_unit_of_work!(self.service(), redoable, |unit| {
                async {
                    let ids: Vec<String> = batch.iter().map(|(row, _)| row.activity_id.clone()).collect();
                    let claimed: std::collections::HashSet<String> =
                        store::inbox::claim_inbox_activities(&mut unit.conn(), &ids, self.now())
                            .await?
                            .into_iter()
                            .collect();
                    let applies: Vec<bool> = batch
                        .iter()
                        .map(|(row, _)| claimed.contains(&row.activity_id))
                        .collect();
                    self.apply_batch_in(unit, batch, &checked, &applies).await
                }
                .await
            });
            match applied {
                Ok(outcomes) => {
                    log_batch_outcomes(&outcomes);
                    for (row, outcome, _) in &outcomes {
                        let message = batch
                            .iter()
                            .find(|(queued, _)| queued.activity_id == row.activity_id)
                            .map(|(_, message)| message);
                        if let Some(Ok(InboundMessage::Replicated(object))) = message {
                            self.note_evidence_outcome(object, outcome);
                        }
                    }
                    return Ok(BatchApplied::Together);
                }
                Err(error) => {
                    tracing::warn!(error = %error, size = batch.len(), "a batch of inbound activities failed: applying them one by one");
                }
            }
        }
        for (row, message) in batch {
            self.apply_inbound(row, message).await?;
        }
        Ok(if batch.len() > 1 {
            BatchApplied::OneByOne
        } else {
            BatchApplied::Single
        })
    }

    /// Applies, inside `unit` and in order, the activities of `batch` whose entry in `applies` is set (those this
    /// unit claimed), each with its intake log line and final state; returns each applied activity's row, outcome
    /// and detail. What the objects look up is read for all of them at once first.
    pub(super) async fn apply_batch_in<'batch>(
        &self,
        unit: &mut UnitOfWork,
        batch: &'batch [(InboxActivityRow, Result<InboundMessage, String>)],
        checked: &[Option<Result<CheckedRevision, String>>],
        applies: &[bool],
    ) -> Result<Vec<(&'batch InboxActivityRow, &'static str, String)>, ServiceError> {
        let objects: Vec<&ReplicatedObject> = batch
            .iter()
            .zip(applies)
            .filter(|(_, applies)| **applies)
            .filter_map(|((_, message), _)| match message {
                Ok(InboundMessage::Replicated(object)) => Some(&**object),
                _ => None,
            })
            .collect();
        let fingerprints: Vec<String> = checked
            .iter()
            .flatten()
            .flatten()
            .flat_map(CheckedRevision::claim_fingerprints)
            .map(str::to_owned)
            .collect();
        let mut known = KnownRows::read(unit, &objects, &fingerprints).await?;
        let mut peers = PeersRead::new();
        let applied = batch
            .iter()
            .zip(checked)
            .zip(applies)
            .filter(|(_, applies)| **applies)
            .map(|(((row, message), checked), _)| (row, message, checked));
        let finished = store::write_each_change!(unit, applied, |unit, (row, message, checked)| {
            let ending = self
                .apply_inbound_in(unit, row, message, checked.as_ref(), &mut peers, &mut known)
                .await?;
            (row, ending)
        });
        self.service().refresh_noted_rating_aggregates(unit).await?;
        self.finish_inbound(unit.transaction(), &finished).await?;
        Ok(finished
            .into_iter()
            .map(|(row, ending)| (row, ending.outcome, ending.detail))
            .collect())
    }

    /// One attempt at [`Federation::apply_inbound`] inside `unit`; returns the activity's final state and the outcome and
    /// detail of its intake log line, which the caller writes (for a whole batch at once).
    async fn apply_inbound_in(
        &self,
        unit: &mut UnitOfWork,
        row: &InboxActivityRow,
        message: &Result<InboundMessage, String>,
        checked: Option<&Result<CheckedRevision, String>>,
        peers: &mut PeersRead,
        known: &mut KnownRows,
    ) -> Result<Ending, ServiceError> {
        let now = self.now();
        // A replicated object does not change its peer's row, so the row read for the batch's earlier objects
        // serves; a peering message may change it, so it reads the row afresh and the batch forgets its copy.
        let read_before = match message {
            Ok(InboundMessage::Replicated(_)) => peers.get(&row.peer_realm).cloned(),
            _ => {
                peers.remove(&row.peer_realm);
                None
            }
        };
        let peer = match read_before {
            Some(peer) => Some(peer),
            None => store::peers::find_peer(&mut unit.conn(), &row.peer_realm).await?,
        };
        if let (Some(peer), Ok(InboundMessage::Replicated(_))) = (&peer, message) {
            peers.insert(row.peer_realm.clone(), peer.clone());
        }
        let Some(mut peer) = peer else {
            return Ok(Ending {
                state: "failed",
                outcome: "refused",
                detail: "the peer was removed before the activity was applied".to_owned(),
            });
        };
        let (state, outcome, detail) = match message {
            Err(reason) => ("failed", "refused", reason.clone()),
            Ok(_) if peer.state == PeerState::Blocked && !block_has_lapsed(&peer, now) => {
                ("applied", "ignored", "the peer is blocked".to_owned())
            }
            Ok(InboundMessage::Peering(message)) => {
                known.forget_all();
                let (outcome, detail) = self
                    .apply_inbound_peering(unit.transaction(), &mut peer, &row.key_id, message)
                    .await?;
                ("applied", outcome, detail)
            }
            Ok(InboundMessage::Replicated(_)) if !matches!(peer.state, PeerState::Active | PeerState::Unreachable) => (
                "failed",
                "refused",
                format!("the peering is {}: objects are taken from active peers", peer.state),
            ),
            Ok(InboundMessage::Replicated(object)) => {
                let applied = self
                    .apply_replicated_in(unit, &row.peer_realm, object, checked, known)
                    .await?;
                let state = if applied.outcome() == "refused" {
                    "failed"
                } else {
                    "applied"
                };
                (state, applied.outcome(), applied.detail().to_owned())
            }
        };
        Ok(Ending { state, outcome, detail })
    }

    /// Writes the final states of a batch's activities and their intake log lines, `finished` holding each
    /// activity's row and how it ended: two statements for the batch (one more per further state and
    /// outcome), not two an activity.
    async fn finish_inbound(
        &self,
        transaction: &mut store::Transaction,
        finished: &[(&InboxActivityRow, Ending)],
    ) -> Result<(), ServiceError> {
        if finished.is_empty() {
            return Ok(());
        }
        let now = self.now();
        let states: Vec<store::inbox::FinishedActivity<'_>> = finished
            .iter()
            .map(|(row, ending)| store::inbox::FinishedActivity {
                activity_id: &row.activity_id,
                state: ending.state,
                outcome: ending.outcome,
            })
            .collect();
        store::inbox::finish_inbox_activities(&mut transaction.conn(), &states, now).await?;
        // The lines' IDs follow one another (a monotonic ULID generator), so the log keeps the batch's order.
        let ids: Vec<String> = finished.iter().map(|_| self.service().new_internal_id()).collect();
        let lines: Vec<store::intake_log::IntakeLine<'_>> = finished
            .iter()
            .zip(&ids)
            .map(|((row, ending), id)| store::intake_log::IntakeLine {
                id,
                peer_realm: &row.peer_realm,
                activity_id: &row.activity_id,
                activity_type: &row.activity_type,
                key_id: &row.key_id,
                outcome: ending.outcome,
                detail: &ending.detail,
            })
            .collect();
        store::intake_log::insert_intakes(&mut transaction.conn(), &lines, now).await?;
        Ok(())
    }

    /// The intake log of a peer (or of every peer), newest first.
    pub async fn intake_log(&self, realm: Option<&str>, limit: i64) -> Result<Vec<IntakeLogEntry>, ServiceError> {
        let mut reader = self.store().reader().await?;
        let realm = realm.map(normalize_realm);
        Ok(store::intake_log::list_intake(&mut reader.conn(), realm.as_deref(), limit).await?)
    }

    /// The stored activity with this ID (what the inbox accepted, and what became of it).
    pub async fn inbound_activity(&self, activity_id: &str) -> Result<Option<InboxActivityRow>, ServiceError> {
        let mut reader = self.store().reader().await?;
        Ok(store::inbox::find_inbox_activity(&mut reader.conn(), activity_id).await?)
    }

    /// How many activities wait to be applied.
    pub async fn inbound_queue_depth(&self) -> Result<i64, ServiceError> {
        let mut reader = self.store().reader().await?;
        Ok(store::inbox::count_queued_inbox_activities(&mut reader.conn()).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pinned_key_decodes_to_the_same_key_every_time_and_a_bad_one_is_refused_every_time() {
        let keys = DecodedKeys::default();
        let first = federation::InstanceKeyPair::from_secret_bytes(&[7; 32]).public_key();
        let second = federation::InstanceKeyPair::from_secret_bytes(&[8; 32]).public_key();
        assert_eq!(keys.decode(&first.to_multikey()), Ok(first));
        assert_eq!(keys.decode(&first.to_multikey()), Ok(first));
        // A rotated key is another text: it never finds the key decoded before.
        assert_eq!(keys.decode(&second.to_multikey()), Ok(second));
        assert!(keys.decode("z6MkNotAKey").is_err());
        assert!(keys.decode("z6MkNotAKey").is_err());
        // Past the bound the keys are decoded again, and still right.
        for seed in 0..=u8::try_from(MAX_DECODED_KEYS).unwrap_or(u8::MAX) {
            let key = federation::InstanceKeyPair::from_secret_bytes(&[seed; 32]).public_key();
            assert_eq!(keys.decode(&key.to_multikey()), Ok(key));
        }
        assert!(keys.decoded.len() <= MAX_DECODED_KEYS);
        assert_eq!(keys.decode(&first.to_multikey()), Ok(first));
    }
}
