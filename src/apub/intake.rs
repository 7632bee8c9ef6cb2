//! Applying queued inbound activities: reads each leased activity as the service's peering message and hands it to
//! the service, which applies it, logs the intake and marks it done in one transaction.

use federation::protocol::Activity;

use super::convert::inbound_peering;
use crate::service::{Service, ServiceError};

/// Activities applied per pass at most.
pub const BATCH: i64 = 64;

/// One pass: applies up to [`BATCH`] due activities, oldest first. Returns how many were taken.
pub async fn apply_queued(service: &Service) -> Result<usize, ServiceError> {
    let rows = service.lease_inbound(BATCH).await?;
    let our_actor = service.instance_actor_url();
    for row in &rows {
        let peer_actor = service.find_peer(&row.peer_realm).await?.map(|peer| peer.actor_url);
        let message = match (serde_json::from_str::<Activity>(&row.body), peer_actor) {
            (Ok(activity), Some(peer_actor)) => inbound_peering(&activity, &peer_actor, &our_actor),
            (Err(error), _) => Err(format!("not an activity: {error}")),
            (_, None) => Err("the peer was removed".to_owned()),
        };
        service.apply_inbound(row, message).await?;
    }
    Ok(rows.len())
}
