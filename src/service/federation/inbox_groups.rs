//! Accepting inbound activities in groups: the requests that reach the inbox while an earlier group is being
//! written wait together, and the next of them writes them all in one transaction, with one multi-row insert of
//! their nonces and one of their activities, and the peer's contact recorded once per peer.
//!
//! Why: a peer pushes with many requests in flight, and each accepted request cost SQLite's single writer four round
//! trips of its own (savepoint, nonce, activity, release) while the intake's batches waited behind them; grouped,
//! a whole group costs about as much as one request did. Nothing is lost by grouping: every request still hears
//! the outcome of the commit that stored its activity (or why it was not stored) before it answers, and a group
//! that fails is reported to each of its requests, whose senders retry.
//!
//! A group whose requests are all replicated objects, with nothing queued before them, is applied in the same
//! transaction that stores it (one commit where there were two, and the body is never written): its requests answer
//! after the objects were applied. Order is kept: with anything queued (a peering message, an activity waiting out
//! a backoff), the group is queued behind it for the intake, as is a group whose applying failed; the intake then
//! applies it, and reports what failed with its backoff, as for any queued activity. A group larger than the store
//! applies at once (`store::WriteGrouping`) is queued too: that many requests at once mean a peer catching up, which
//! the intake's lanes, several transactions at once, apply faster than one group after another; the groups behind it
//! queue until the intake has caught up, and then they are applied at the inbox again. Whether each request checks
//! its own object's content before it joins the waiting list (spreading that work over the requests), or the group
//! checks them (where a busy group is queued and the intake checks it, so no object is checked twice), the store
//! says too.
//!
//! The protocol: a request puts itself on the waiting list and waits for its answer. The first request that finds no
//! writer running starts one: a task the store starts where a group writer's statements wait least, that writes what is waiting (oldest first, at most
//! [`MAX_GROUP`] per transaction), group after group, until the list is empty. The writer runs apart from the
//! requests, so a request whose client goes away mid-write does not cancel the others' transaction, and it takes
//! the next group as soon as one has committed (when the turn passed from request to request, each handover waited
//! for a busy runtime to wake the next request: a millisecond and a half between groups at the median).

use std::collections::HashSet;

use chrono::{DateTime, Utc};
use tokio::sync::oneshot;

use super::super::unit_of_work::within_unit_of_work;
use super::Federation;
use super::apply::CheckedRevision;
use super::inbox::{BatchApplied, InboundMessage, InboxNonce, Intake, VerifiedActivity, log_batch_outcomes};
use crate::domain::replication::ReplicatedObject;
use crate::service::ServiceError;
use crate::store::inbox::InboxActivityRow;
use crate::store::{self};

/// Requests written in one transaction at most (each holds a body of up to the inbox's size cap).
const MAX_GROUP: usize = 64;

/// The waiting list, shared by every clone of one service.
#[derive(Debug, Default)]
pub(crate) struct InboundGroups {
    waiting: std::sync::Mutex<Waiting>,
}

impl InboundGroups {
    /// The list (a panic while it was held left nothing half-done in it: every change is one push or one drain).
    fn waiting(&self) -> std::sync::MutexGuard<'_, Waiting> {
        self.waiting.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[derive(Debug, Default)]
struct Waiting {
    activities: Vec<WaitingActivity>,
    /// Whether a writer task is draining the list (at most one is).
    writer_running: bool,
}

struct WaitingActivity {
    activity: VerifiedActivity,
    nonce: InboxNonce,
    /// The replicated object the inbox read from the body, when the activity carries one.
    object: Option<Box<ReplicatedObject>>,
    /// Its checks that need no database, made by the request (on SQLite; the group makes them otherwise).
    checked: Option<Result<CheckedRevision, String>>,
    reply: oneshot::Sender<Result<GroupIntake, ServiceError>>,
}

impl std::fmt::Debug for WaitingActivity {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("WaitingActivity")
            .field("activity_id", &self.activity.activity_id)
            .field("object", &self.object.is_some())
            .finish_non_exhaustive()
    }
}

/// Clears the writer's mark when its task ends without emptying the list, and starts another writer for what waits.
struct WriterGuard {
    federation: Federation,
    /// The writer emptied the list and cleared its mark itself.
    finished: bool,
}

impl Drop for WriterGuard {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        let restart = {
            let mut waiting = self.federation.inbound_groups().waiting();
            waiting.writer_running = !waiting.activities.is_empty();
            waiting.writer_running
        };
        if restart {
            self.federation.start_group_writer();
        }
    }
}

/// What became of one request of a group.
#[derive(Debug)]
pub struct GroupIntake {
    /// Its activity's intake.
    pub intake: Intake,
    /// How the group was applied, told to one request of a group applied at the inbox (so it is counted once).
    pub batch: Option<BatchApplied>,
}

impl Federation {
    /// Stores a verified activity of a peer (deduplicated by its ID) with its nonce and the peer's contact, as
    /// [`Federation::enqueue_inbound`] does, together with the other requests waiting; a replicated `object` read from
    /// it is applied in the same transaction when the group allows it (see the module's documentation).
    pub async fn accept_inbound(
        &self,
        activity: &VerifiedActivity,
        nonce: &InboxNonce,
        object: Option<Box<ReplicatedObject>>,
    ) -> Result<GroupIntake, ServiceError> {
        let groups = self.inbound_groups();
        // Where a group is nearly always applied here, the request makes its object's checks beside the other
        // requests; where a busy group goes to the intake, which checks again, the group makes them (see
        // `store::WriteGrouping`).
        let checked = if self.store().write_grouping().changes_checked_before_joining {
            object.as_deref().and_then(|object| self.check_replicated(object))
        } else {
            None
        };
        let (reply, answer) = oneshot::channel();
        let start_writer = {
            let mut waiting = groups.waiting();
            waiting.activities.push(WaitingActivity {
                activity: activity.clone(),
                nonce: nonce.clone(),
                object,
                checked,
                reply,
            });
            !std::mem::replace(&mut waiting.writer_running, true)
        };
        if start_writer {
            self.start_group_writer();
        }
        answer.await.unwrap_or_else(|_| {
            Err(ServiceError::internal(
                "the group this activity was written in was dropped",
            ))
        })
    }

    /// Starts the task that writes the waiting list, group after group, until it is empty. It runs on the store's
    /// write lane (a group holds the writer from its first statement to its commit), and takes the next group itself
    /// as soon as one has committed: the turn does not pass through a request's task, which a busy runtime would
    /// wake only later. It runs apart from any request, so a request whose client goes away does not cancel the
    /// others' transaction.
    fn start_group_writer(&self) {
        let federation = self.clone();
        self.store().start_group_writer(async move {
            // Should the task end early (a panic), the guard hands the list to a new writer.
            let mut guard = WriterGuard {
                federation: federation.clone(),
                finished: false,
            };
            loop {
                let group: Vec<WaitingActivity> = {
                    let mut waiting = federation.inbound_groups().waiting();
                    let taken = waiting.activities.len().min(MAX_GROUP);
                    if taken == 0 {
                        waiting.writer_running = false;
                        guard.finished = true;
                        return;
                    }
                    waiting.activities.drain(..taken).collect()
                };
                federation.write_inbound_group(group).await;
            }
        });
    }

    /// Writes one group (applying it when it can) and tells each of its requests what became of its activity.
    async fn write_inbound_group(&self, mut group: Vec<WaitingActivity>) {
        let mut applied = None;
        let small_enough = group.len() <= self.store().write_grouping().largest_group_applied_at_once;
        if small_enough && group.iter().all(|waiting| waiting.object.is_some()) {
            let now = self.now();
            let batch: Vec<(InboxActivityRow, Result<InboundMessage, String>)> = group
                .iter_mut()
                .filter_map(|waiting| {
                    let object = waiting.object.take()?;
                    Some((
                        applied_row(&waiting.activity, now),
                        Ok(InboundMessage::Replicated(object)),
                    ))
                })
                .collect();
            let checked: Vec<Option<Result<CheckedRevision, String>>> = group
                .iter_mut()
                .zip(&batch)
                .map(|(waiting, (_, message))| match (waiting.checked.take(), message) {
                    (Some(checked), _) => Some(checked),
                    (None, Ok(InboundMessage::Replicated(object))) => self.check_replicated(object),
                    (None, _) => None,
                })
                .collect();
            match self.store_and_apply_inbound_group(&group, &batch, &checked).await {
                Ok(intakes) => applied = intakes,
                Err(error) => {
                    tracing::warn!(error = %error, size = group.len(), "applying a group of inbound activities at the inbox failed: it is queued for the intake");
                }
            }
            if applied.is_none() {
                for (waiting, (_, message)) in group.iter_mut().zip(batch) {
                    if let Ok(InboundMessage::Replicated(object)) = message {
                        waiting.object = Some(object);
                    }
                }
            }
        }
        let (result, batch) = match applied {
            Some(intakes) => {
                let batch = if group.len() > 1 {
                    BatchApplied::Together
                } else {
                    BatchApplied::Single
                };
                (Ok(intakes), Some(batch))
            }
            None => (self.store_inbound_group(&group).await, None),
        };
        match result {
            Ok(intakes) => {
                let mut batch = batch;
                let now = self.now();
                let mut queued_any = false;
                for (waiting, intake) in group.into_iter().zip(intakes) {
                    if intake == Intake::Queued {
                        queued_any = true;
                        // The intake takes the object instead of reading it back from the row (see `held_objects.rs`).
                        if let Some(object) = waiting.object {
                            self.held_objects().hold(
                                &waiting.activity.activity_id,
                                &waiting.activity.body,
                                object,
                                now,
                            );
                        }
                    }
                    let _ = waiting.reply.send(Ok(GroupIntake {
                        intake,
                        batch: batch.take(),
                    }));
                }
                if queued_any {
                    self.inbound_queued().notify_one();
                }
            }
            Err(error) => {
                tracing::warn!(error = %error, size = group.len(), "storing a group of inbound activities failed");
                for waiting in group {
                    let _ = waiting.reply.send(Err(error.clone()));
                }
            }
        }
    }

    /// One unit of work that stores a group as [`Federation::store_inbound_group`] does and applies its activities
    /// (`batch`, one entry a request, its rows stored without their bodies, with the checks each request made):
    /// `None`, with nothing stored, when activities are queued already (the group must wait behind them).
    async fn store_and_apply_inbound_group(
        &self,
        group: &[WaitingActivity],
        batch: &[(InboxActivityRow, Result<InboundMessage, String>)],
        checked: &[Option<Result<CheckedRevision, String>>],
    ) -> Result<Option<Vec<Intake>>, ServiceError> {
        let rows: Vec<&InboxActivityRow> = batch.iter().map(|(row, _)| row).collect();
        let stored = within_unit_of_work!(self.service(), |unit| {
            async {
                if store::inbox::any_queued_inbox_activity(&mut unit.conn()).await? {
                    return Ok::<_, ServiceError>(None);
                }
                let intakes = self.store_group_rows(unit.transaction(), group, &rows).await?;
                // A row this unit inserted is this unit's to apply: no one else sees it before the commit.
                let applies: Vec<bool> = intakes.iter().map(|intake| *intake == Intake::Queued).collect();
                let outcomes = self.apply_batch_in(unit, batch, checked, &applies).await?;
                for (row, outcome, _) in &outcomes {
                    if *outcome == "refused"
                        && let Some(waiting) = group
                            .iter()
                            .find(|waiting| waiting.activity.activity_id == row.activity_id)
                    {
                        store::inbox::keep_inbox_activity_body(
                            &mut unit.conn(),
                            &row.activity_id,
                            &waiting.activity.body,
                        )
                        .await?;
                    }
                }
                log_batch_outcomes(&outcomes);
                let intakes: Vec<Intake> = intakes
                    .into_iter()
                    .map(|intake| match intake {
                        Intake::Queued => Intake::Applied,
                        other => other,
                    })
                    .collect();
                let ended: Vec<(String, &'static str)> = outcomes
                    .iter()
                    .map(|(row, outcome, _)| (row.activity_id.clone(), *outcome))
                    .collect();
                Ok(Some((intakes, ended)))
            }
            .await
        })?;
        let Some((intakes, ended)) = stored else {
            return Ok(None);
        };
        // Committed: the evidence records among them are counted.
        for (activity_id, outcome) in ended {
            if let Some((_, Ok(InboundMessage::Replicated(object)))) =
                batch.iter().find(|(row, _)| row.activity_id == activity_id)
            {
                self.note_evidence_outcome(object, outcome);
            }
        }
        Ok(Some(intakes))
    }

    /// One transaction: the group queued for the intake, bodies and all.
    async fn store_inbound_group(&self, group: &[WaitingActivity]) -> Result<Vec<Intake>, ServiceError> {
        let now = self.now();
        let rows: Vec<InboxActivityRow> = group
            .iter()
            .map(|waiting| super::inbox::queued_row(&waiting.activity, now))
            .collect();
        let mut transaction = self.store().begin().await?;
        let rows: Vec<&InboxActivityRow> = rows.iter().collect();
        let intakes = self.store_group_rows(&mut transaction, group, &rows).await?;
        transaction.commit().await?;
        Ok(intakes)
    }

    /// Inside `transaction`: the nonces (a request whose nonce was used is refused, nothing of it stored), the
    /// activities of the others as `rows` (one a request; an ID stored already is a duplicate), and each peer's
    /// contact.
    async fn store_group_rows(
        &self,
        transaction: &mut store::Transaction,
        group: &[WaitingActivity],
        rows: &[&InboxActivityRow],
    ) -> Result<Vec<Intake>, ServiceError> {
        let now = self.now();
        let nonces: Vec<(String, String, DateTime<Utc>)> = group
            .iter()
            .map(|waiting| {
                (
                    waiting.activity.peer_realm.clone(),
                    waiting.nonce.nonce.clone(),
                    waiting.nonce.expires_at,
                )
            })
            .collect();
        let mut new_nonces: HashSet<(String, String)> = store::inbox::insert_nonces(&mut transaction.conn(), &nonces)
            .await?
            .into_iter()
            .collect();
        // The first request with a nonce takes it; a second one with the same nonce is a replay.
        let fresh: Vec<bool> = group
            .iter()
            .map(|waiting| new_nonces.remove(&(waiting.activity.peer_realm.clone(), waiting.nonce.nonce.clone())))
            .collect();
        let fresh_rows: Vec<&InboxActivityRow> = rows
            .iter()
            .zip(&fresh)
            .filter(|(_, fresh)| **fresh)
            .map(|(row, _)| *row)
            .collect();
        let mut stored: HashSet<String> = store::inbox::insert_inbox_activities(&mut transaction.conn(), &fresh_rows)
            .await?
            .into_iter()
            .collect();
        let intakes: Vec<Intake> = group
            .iter()
            .zip(&fresh)
            .map(|(waiting, fresh)| {
                if !fresh {
                    Intake::ReplayedNonce
                } else if stored.remove(&waiting.activity.activity_id) {
                    Intake::Queued
                } else {
                    Intake::Duplicate
                }
            })
            .collect();
        let mut contacted: Vec<&str> = Vec::new();
        for (waiting, fresh) in group.iter().zip(&fresh) {
            let realm = waiting.activity.peer_realm.as_str();
            if !fresh || contacted.contains(&realm) {
                continue;
            }
            contacted.push(realm);
            let was_unreachable = group.iter().any(|other| {
                other.activity.peer_realm == realm
                    && other.activity.sender_state == Some(crate::domain::PeerState::Unreachable)
            });
            self.record_contact(transaction, realm, was_unreachable, now).await?;
        }
        Ok(intakes)
    }
}

/// The row of an activity applied in the transaction that stores it: claimed (one attempt) and without its body,
/// which an applied activity does not keep.
fn applied_row(activity: &VerifiedActivity, now: DateTime<Utc>) -> InboxActivityRow {
    InboxActivityRow {
        activity_id: activity.activity_id.clone(),
        peer_realm: activity.peer_realm.clone(),
        activity_type: activity.activity_type.clone(),
        key_id: activity.key_id.clone(),
        body: String::new(),
        received_at: now,
        state: "queued".to_owned(),
        attempts: 1,
        next_attempt_at: now,
        processed_at: None,
        outcome: None,
    }
}
