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
//! The protocol: a request puts itself on the waiting list, then waits for its turn to write (a FIFO lock). On its
//! turn it writes what is waiting (oldest first, at most [`MAX_GROUP`] per transaction) until its own activity has
//! been written by itself or by a request before it. The writing runs in a task of its own, so a request whose
//! client goes away mid-write does not cancel the others' transaction.

use std::collections::HashSet;

use chrono::{DateTime, Utc};
use tokio::sync::oneshot;

use super::super::{Service, ServiceError};
use super::inbox::{InboxNonce, Intake, VerifiedActivity};
use crate::store::{self};

/// Requests written in one transaction at most (each holds a body of up to the inbox's size cap).
const MAX_GROUP: usize = 64;

/// The waiting list and the turn to write, shared by every clone of one service.
#[derive(Debug, Default)]
pub(crate) struct InboundGroups {
    waiting: std::sync::Mutex<Vec<WaitingActivity>>,
    turn: tokio::sync::Mutex<()>,
}

#[derive(Debug)]
struct WaitingActivity {
    activity: VerifiedActivity,
    nonce: InboxNonce,
    reply: oneshot::Sender<Result<Intake, ServiceError>>,
}

impl Service {
    /// [`Service::enqueue_inbound`] for a sender that is a peer already, written with the other requests waiting.
    pub(super) async fn enqueue_inbound_grouped(
        &self,
        activity: &VerifiedActivity,
        nonce: &InboxNonce,
    ) -> Result<Intake, ServiceError> {
        let groups = self.inbound_groups();
        let (reply, mut answer) = oneshot::channel();
        groups
            .waiting
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(WaitingActivity {
                activity: activity.clone(),
                nonce: nonce.clone(),
                reply,
            });
        let _turn = groups.turn.lock().await;
        loop {
            match answer.try_recv() {
                Ok(intake) => return intake,
                Err(oneshot::error::TryRecvError::Closed) => {
                    return Err(ServiceError::internal(
                        "the group this activity was written in was dropped",
                    ));
                }
                Err(oneshot::error::TryRecvError::Empty) => {}
            }
            let group: Vec<WaitingActivity> = {
                let mut waiting = groups.waiting.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                let taken = waiting.len().min(MAX_GROUP);
                waiting.drain(..taken).collect()
            };
            if group.is_empty() {
                // Not waiting and not answered: only a writer that vanished mid-write could cause this.
                return Err(ServiceError::internal(
                    "an accepted activity was neither written nor refused",
                ));
            }
            let service = self.clone();
            tokio::spawn(async move { service.write_inbound_group(group).await })
                .await
                .map_err(|error| ServiceError::internal(format!("writing a group of activities failed: {error}")))?;
        }
    }

    /// Writes one group and tells each of its requests what became of its activity.
    async fn write_inbound_group(&self, group: Vec<WaitingActivity>) {
        match self.store_inbound_group(&group).await {
            Ok(intakes) => {
                for (waiting, intake) in group.into_iter().zip(intakes) {
                    let _ = waiting.reply.send(Ok(intake));
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

    /// One transaction: the nonces (a request whose nonce was used is refused, nothing of it stored), the
    /// activities of the others (an ID stored already is a duplicate), and each peer's contact.
    async fn store_inbound_group(&self, group: &[WaitingActivity]) -> Result<Vec<Intake>, ServiceError> {
        let now = self.now();
        let mut transaction = self.store().begin().await?;
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
        let mut new_nonces: HashSet<(String, String)> =
            store::federation::insert_nonces(&mut transaction.conn(), &nonces)
                .await?
                .into_iter()
                .collect();
        // The first request with a nonce takes it; a second one with the same nonce is a replay.
        let fresh: Vec<bool> = group
            .iter()
            .map(|waiting| new_nonces.remove(&(waiting.activity.peer_realm.clone(), waiting.nonce.nonce.clone())))
            .collect();
        let rows: Vec<_> = group
            .iter()
            .zip(&fresh)
            .filter(|(_, fresh)| **fresh)
            .map(|(waiting, _)| super::inbox::queued_row(&waiting.activity, now))
            .collect();
        let mut stored: HashSet<String> = store::federation::insert_inbox_activities(&mut transaction.conn(), &rows)
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
            self.record_contact(&mut transaction, realm, was_unreachable, now)
                .await?;
        }
        transaction.commit().await?;
        Ok(intakes)
    }
}
