//! The intake: applies queued inbound activities in batches (several activities per transaction, each with its
//! intake log line and final state), so it keeps up with a peer that sends thousands of activities a second. An
//! object this process's inbox read and verified a moment ago is taken from the held objects (`held_objects.rs`);
//! any other row's body is read back as a message by the adapter's reading, which the caller hands in (the same
//! reading the inbox did, and the only part of the queue that knows the wire).

use super::Federation;
use super::inbox::{BatchApplied, InboundMessage};
use crate::domain::PublicId;
use crate::domain::replication::FederatedObject;
use crate::service::ServiceError;

/// Reads a queued activity's body back as the message it carries: `(body, the sending peer's actor, this
/// instance's actor)`, or why it cannot be applied. The `apub` adapter's `queued_activity::read`.
pub type ReadQueuedActivity = fn(&str, &str, &str) -> Result<InboundMessage, String>;

/// Activities read per pass at most.
pub const BATCH: i64 = 256;
/// Activities applied per transaction at most.
pub const APPLY_BATCH: usize = 64;

/// What one pass did.
#[derive(Debug, Default)]
pub struct IntakePass {
    /// Activities taken.
    pub taken: usize,
    /// How each of its batches was applied.
    pub batches: Vec<BatchApplied>,
}

impl Federation {
    /// One pass of the intake: applies up to [`BATCH`] due activities, oldest first, reading those whose objects are
    /// not held with `read_activity`.
    pub async fn apply_queued(&self, read_activity: ReadQueuedActivity) -> Result<IntakePass, ServiceError> {
        let rows = self.due_inbound(BATCH).await?;
        self.held_objects().expire(self.now());
        let our_actor = self.instance_actor_url();
        let mut peer_actors: std::collections::HashMap<String, Option<String>> = std::collections::HashMap::new();
        let mut batch = Vec::with_capacity(rows.len());
        for row in rows {
            if !peer_actors.contains_key(&row.peer_realm) {
                let actor = self.find_peer(&row.peer_realm).await?.map(|peer| peer.actor_url);
                peer_actors.insert(row.peer_realm.clone(), actor);
            }
            let Some(peer_actor) = peer_actors.get(&row.peer_realm).cloned().flatten() else {
                batch.push((row, Err("the peer was removed".to_owned())));
                continue;
            };
            let message = match self.held_objects().take(&row.activity_id, &row.body) {
                Some(object) => Ok(InboundMessage::Replicated(object)),
                None => read_activity(&row.body, &peer_actor, &our_actor),
            };
            batch.push((row, message));
        }
        let taken = batch.len();
        let lanes = self.intake_lanes();
        let only_objects = batch
            .iter()
            .all(|(_, message)| matches!(message, Ok(InboundMessage::Replicated(_))));
        // A retraction names only its record, whose lane follows the record's target (below): applied in another
        // lane at the same moment, neither would see the other. Rare, so a pass with one runs in order.
        let has_retraction = batch.iter().any(|(_, message)| {
            matches!(message, Ok(InboundMessage::Replicated(object)) if matches!(object.object, FederatedObject::Retraction(_)))
        });
        let mut pass = IntakePass {
            taken,
            batches: Vec::new(),
        };
        if lanes < 2 || batch.len() <= APPLY_BATCH || !only_objects || has_retraction {
            for chunk in batch.chunks(APPLY_BATCH) {
                pass.batches.push(self.apply_inbound_batch(chunk).await?);
            }
            if !only_objects {
                // A peering message may have changed a peer's state, which decides whether its origin counts.
                self.recompute_instance_trust().await?;
            }
            return Ok(pass);
        }
        // Several transactions at once (PostgreSQL): each object's activities stay in one lane, in order, so lanes
        // never touch the same item; peering messages, whose order matters across objects, never take this path.
        // An evidence record goes to the lane of its target's content item (or its target): every record about one
        // item is applied in one lane, after that item's revisions. By record ID, the records about a much-used item
        // were in every lane, and each lane's transaction waited for the others' locks on that item's trust summary
        // (seconds per batch on PostgreSQL; docs/benchmarks.md, "Evidence lanes by target").
        let mut by_lane: Vec<Vec<_>> = (0..lanes).map(|_| Vec::new()).collect();
        for entry in batch {
            let lane = match &entry.1 {
                Ok(InboundMessage::Replicated(object)) => lane_of(lane_key(&object.object).as_str(), lanes),
                _ => 0,
            };
            by_lane[lane].push(entry);
        }
        let mut tasks = tokio::task::JoinSet::new();
        for lane in by_lane.into_iter().filter(|lane| !lane.is_empty()) {
            let federation = self.clone();
            tasks.spawn(async move {
                let mut batches = Vec::new();
                for chunk in lane.chunks(APPLY_BATCH) {
                    batches.push(federation.apply_inbound_batch(chunk).await?);
                }
                Ok::<_, ServiceError>(batches)
            });
        }
        while let Some(joined) = tasks.join_next().await {
            let batches =
                joined.map_err(|error| ServiceError::internal(format!("an intake lane failed: {error}")))??;
            pass.batches.extend(batches);
        }
        Ok(pass)
    }
}

/// What decides an object's lane: the item it changes, and for evidence the item (or claim, entity) it is about.
fn lane_key(object: &FederatedObject) -> &PublicId {
    match object {
        FederatedObject::Evidence(passport) => passport.target_content_id.as_ref().unwrap_or(&passport.target_id),
        other => other.object_id(),
    }
}

/// The lane of an object: the same object always in the same lane.
fn lane_of(object_id: &str, lanes: usize) -> usize {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    object_id.hash(&mut hasher);
    usize::try_from(hasher.finish() % lanes as u64).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use chrono::DateTime;

    use super::*;
    use crate::domain::evidence::UsageOutcome;
    use crate::domain::replication::{EvidenceFacts, EvidencePassport, EvidenceRetraction};
    use crate::domain::{ContextKey, IdKind};

    fn id(kind: IdKind, number: u128) -> PublicId {
        PublicId::from_ulid(kind, ulid::Ulid(number))
    }

    fn usage_about(target_id: PublicId, target_content_id: Option<PublicId>) -> FederatedObject {
        FederatedObject::Evidence(Box::new(EvidencePassport {
            record_id: id(IdKind::Usage, 7),
            origin: "beta.test".to_owned(),
            target_id,
            target_content_id,
            actor_id: id(IdKind::Agent, 8),
            root_controller_id: id(IdKind::User, 9),
            created_at: DateTime::UNIX_EPOCH,
            facts: EvidenceFacts::Usage {
                usage_type: "operation".to_owned(),
                result: UsageOutcome::Success,
                real_world_use: true,
                context_key: ContextKey::all(),
            },
        }))
    }

    #[test]
    fn records_about_one_item_share_its_lane_whatever_their_ids() {
        let content = id(IdKind::Content, 1);
        let about_a_revision = usage_about(id(IdKind::Revision, 2), Some(content.clone()));
        assert_eq!(lane_key(&about_a_revision), &content);
        let a_rating_target = usage_about(content.clone(), None);
        assert_eq!(lane_key(&a_rating_target), &content);
        let claim = id(IdKind::Claim, 3);
        assert_eq!(lane_key(&usage_about(claim.clone(), None)), &claim);
        // A retraction names only its record.
        let retraction = FederatedObject::Retraction(EvidenceRetraction {
            record_id: id(IdKind::Usage, 7),
            origin: "beta.test".to_owned(),
            retracted_at: DateTime::UNIX_EPOCH,
        });
        assert_eq!(lane_key(&retraction), &id(IdKind::Usage, 7));
    }
}
