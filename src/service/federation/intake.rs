//! Applying queued inbound activities: reads each due activity as the service's peering message or replicated
//! object and hands them to the service in batches: several activities per transaction, each with its intake log
//! line and final state, so the intake keeps up with a peer that sends thousands of activities a second. An
//! object this process's inbox read and verified a moment ago is taken from the hand-off instead of being read
//! from its row's body again.

use federation::protocol::Activity;

use super::handoff::InboxHandoff;
use super::objects::{is_replication, read_verified};
use super::peering_messages::inbound_peering;
use crate::service::ServiceError;
use crate::service::federation::Federation;
use crate::service::federation::inbox::{BatchApplied, InboundMessage};

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

/// One pass: applies up to [`BATCH`] due activities, oldest first.
pub async fn apply_queued(federation: &Federation, handoff: &InboxHandoff) -> Result<IntakePass, ServiceError> {
    let rows = federation.due_inbound(BATCH).await?;
    handoff.expire(federation.now());
    let our_actor = federation.instance_actor_url();
    let mut peer_actors: std::collections::HashMap<String, Option<String>> = std::collections::HashMap::new();
    let mut batch = Vec::with_capacity(rows.len());
    for row in rows {
        if !peer_actors.contains_key(&row.peer_realm) {
            let actor = federation.find_peer(&row.peer_realm).await?.map(|peer| peer.actor_url);
            peer_actors.insert(row.peer_realm.clone(), actor);
        }
        let peer_actor = peer_actors.get(&row.peer_realm).cloned().flatten();
        if let Some(object) = handoff.take(&row.activity_id, &row.body) {
            let message = match peer_actor {
                Some(_) => Ok(InboundMessage::Replicated(object)),
                None => Err("the peer was removed".to_owned()),
            };
            batch.push((row, message));
            continue;
        }
        let parsed = federation::integrity::parse_i_json(row.body.as_bytes())
            .map_err(|error| error.to_string())
            .and_then(|value| Activity::from_json(value).map_err(|error| error.to_string()));
        let message = match (parsed, peer_actor) {
            (Ok(activity), Some(_)) if is_replication(&activity) => {
                read_verified(&activity).map(|object| InboundMessage::Replicated(Box::new(object)))
            }
            (Ok(activity), Some(peer_actor)) => {
                inbound_peering(&activity, &peer_actor, &our_actor).map(InboundMessage::Peering)
            }
            (Err(error), _) => Err(format!("not an activity: {error}")),
            (_, None) => Err("the peer was removed".to_owned()),
        };
        batch.push((row, message));
    }
    let taken = batch.len();
    let lanes = federation.intake_lanes();
    let only_objects = batch
        .iter()
        .all(|(_, message)| matches!(message, Ok(InboundMessage::Replicated(_))));
    let mut pass = IntakePass {
        taken,
        batches: Vec::new(),
    };
    if lanes < 2 || batch.len() <= APPLY_BATCH || !only_objects {
        for chunk in batch.chunks(APPLY_BATCH) {
            pass.batches.push(federation.apply_inbound_batch(chunk).await?);
        }
        return Ok(pass);
    }
    // Several transactions at once (PostgreSQL): each object's activities stay in one lane, in order, so lanes
    // never touch the same item; peering messages, whose order matters across objects, never take this path.
    let mut by_lane: Vec<Vec<_>> = (0..lanes).map(|_| Vec::new()).collect();
    for entry in batch {
        let lane = match &entry.1 {
            Ok(InboundMessage::Replicated(object)) => lane_of(object.object.object_id().as_str(), lanes),
            _ => 0,
        };
        by_lane[lane].push(entry);
    }
    let mut tasks = tokio::task::JoinSet::new();
    for lane in by_lane.into_iter().filter(|lane| !lane.is_empty()) {
        let federation = federation.clone();
        tasks.spawn(async move {
            let mut batches = Vec::new();
            for chunk in lane.chunks(APPLY_BATCH) {
                batches.push(federation.apply_inbound_batch(chunk).await?);
            }
            Ok::<_, ServiceError>(batches)
        });
    }
    while let Some(joined) = tasks.join_next().await {
        let batches = joined.map_err(|error| ServiceError::internal(format!("an intake lane failed: {error}")))??;
        pass.batches.extend(batches);
    }
    Ok(pass)
}

/// The lane of an object: the same object always in the same lane.
fn lane_of(object_id: &str, lanes: usize) -> usize {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    object_id.hash(&mut hasher);
    usize::try_from(hasher.finish() % lanes as u64).unwrap_or(0)
}
