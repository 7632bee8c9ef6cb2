//! Reading a queued activity's stored body back as the service's inbound message, for the intake (the service's
//! `intake.rs`, which takes this function): the same reading the inbox made before it queued the activity, the
//! I-JSON parse, a replicated object read after checking its origin's proof, or a peering message.

use federation::protocol::Activity;

use super::objects::{is_replication, read_verified};
use super::peering_messages::inbound_peering;
use crate::service::federation::inbox::InboundMessage;

/// The message `body` carries, sent by the peer whose actor is `peer_actor` to this instance's `our_actor`, or why
/// it cannot be applied. A [`crate::service::federation::intake::ReadQueuedActivity`].
pub fn read(body: &str, peer_actor: &str, our_actor: &str) -> Result<InboundMessage, String> {
    let activity = federation::integrity::parse_i_json(body.as_bytes())
        .map_err(|error| error.to_string())
        .and_then(|value| Activity::from_json(value).map_err(|error| error.to_string()))
        .map_err(|error| format!("not an activity: {error}"))?;
    if is_replication(&activity) {
        read_verified(&activity).map(|object| InboundMessage::Replicated(Box::new(object)))
    } else {
        inbound_peering(&activity, peer_actor, our_actor).map(InboundMessage::Peering)
    }
}
