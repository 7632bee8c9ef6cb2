//! The delivery queue of peering messages: leasing what is due (in order per peer), and recording each attempt's
//! end with exponential backoff and full jitter, a dead-letter state for permanent refusals, and the peer's last
//! error for the admin.

use chrono::{DateTime, Utc};

use super::Federation;
use super::peer_failure::failure_class;
use super::peering::PeeringMessage;
use super::retry::{AttemptResult, BACKOFF_CAP, DELIVERY_HORIZON, LEASE, backoff_bound, jitter};
use crate::domain::PeerState;
pub use crate::domain::peering_delivery::{DeliveryState, PeeringDelivery};
use crate::service::ServiceError;
use crate::store::{self};

/// A leased delivery with its message read back.
#[derive(Debug, Clone, PartialEq)]
pub struct LeasedDelivery {
    /// The row.
    pub row: PeeringDelivery,
    /// What to send.
    pub message: PeeringMessage,
}

impl Federation {
    /// Takes the deliveries that are due (the oldest pending one per peer, at most `limit`, optionally for one peer)
    /// for this worker alone for the lease time.
    pub async fn lease_deliveries(
        &self,
        limit: i64,
        only_peer: Option<&str>,
    ) -> Result<Vec<LeasedDelivery>, ServiceError> {
        let now = self.now();
        // Read first: a pass with nothing due takes no turn at the writer.
        let mut reader = self.store().reader().await?;
        if !store::deliveries::deliveries_due(&mut reader.conn(), now, only_peer).await? {
            return Ok(Vec::new());
        }
        drop(reader);
        let mut transaction = self.store().begin().await?;
        let rows = store::deliveries::lease_due_deliveries(&mut transaction.conn(), now, now + LEASE, limit, only_peer)
            .await?;
        transaction.commit().await?;
        rows.into_iter()
            .map(|row| {
                let message: PeeringMessage = serde_json::from_str(&row.body)
                    .map_err(|error| ServiceError::internal(format!("queued delivery {}: {error}", row.id)))?;
                Ok(LeasedDelivery { row, message })
            })
            .collect()
    }

    /// Records how an attempt ended.
    pub async fn finish_delivery(&self, delivery: &PeeringDelivery, result: AttemptResult) -> Result<(), ServiceError> {
        let now = self.now();
        let mut transaction = self.store().begin().await?;
        let mut peer = store::peers::find_peer(&mut transaction.conn(), &delivery.peer_realm).await?;
        match &result {
            AttemptResult::Delivered => {
                store::deliveries::finish_delivery_attempt(
                    &mut transaction.conn(),
                    &delivery.id,
                    DeliveryState::Delivered,
                    now,
                    None,
                    Some(now),
                )
                .await?;
                if let Some(peer) = peer.as_mut() {
                    peer.last_contact_at = Some(now);
                    if peer.state == PeerState::Unreachable {
                        peer.state = PeerState::Active;
                    }
                }
            }
            AttemptResult::Retry { error, retry_after } => {
                let jittered = jitter(backoff_bound(delivery.attempts));
                let wait = retry_after.map_or(jittered, |asked| asked.min(BACKOFF_CAP).max(jittered));
                store::deliveries::finish_delivery_attempt(
                    &mut transaction.conn(),
                    &delivery.id,
                    DeliveryState::Pending,
                    now + wait,
                    Some(error),
                    None,
                )
                .await?;
                if let Some(peer) = peer.as_mut() {
                    peer.last_error = Some(error.clone());
                    peer.last_error_at = Some(now);
                    if peer.state == PeerState::Active && now - delivery.created_at >= DELIVERY_HORIZON {
                        tracing::warn!(peer = %peer.realm, "deliveries have failed for the delivery horizon: the peer is unreachable");
                        peer.state = PeerState::Unreachable;
                    }
                }
            }
            AttemptResult::Refused { error } => {
                store::deliveries::finish_delivery_attempt(
                    &mut transaction.conn(),
                    &delivery.id,
                    DeliveryState::Dead,
                    now,
                    Some(error),
                    Some(now),
                )
                .await?;
                if let Some(peer) = peer.as_mut() {
                    peer.last_error = Some(error.clone());
                    peer.last_error_at = Some(now);
                }
            }
        }
        if let Some(peer) = peer.as_mut() {
            peer.updated_at = now;
            store::peers::save_peer(&mut transaction.conn(), peer).await?;
        }
        transaction.commit().await?;
        // Each failure class is logged once when it begins (WARN), its repeats at DEBUG, the recovery once (INFO).
        let failing_before = delivery.last_error.as_deref().map(failure_class);
        let realm = &delivery.peer_realm;
        let activity_type = &delivery.activity_type;
        let attempt = delivery.attempts;
        match &result {
            AttemptResult::Delivered => match failing_before {
                Some(class) => {
                    tracing::info!(peer = %realm, activity_type = %activity_type, attempt, class, "delivering to the peer works again");
                }
                None => tracing::info!(peer = %realm, activity_type = %activity_type, attempt, "delivered to the peer"),
            },
            AttemptResult::Retry { error, .. } if failing_before == Some(failure_class(error)) => {
                tracing::debug!(peer = %realm, activity_type = %activity_type, attempt, class = failure_class(error), error = %error, "delivering to the peer still fails");
            }
            AttemptResult::Retry { error, .. } => {
                tracing::warn!(peer = %realm, activity_type = %activity_type, attempt, class = failure_class(error), error = %error, "delivering to the peer fails; retried after the backoff");
            }
            AttemptResult::Refused { error } => {
                tracing::warn!(peer = %realm, activity_type = %activity_type, attempt, class = failure_class(error), error = %error, "the peer refused a message for good: dead letter");
            }
        }
        Ok(())
    }

    /// The deliveries of a peer (or every peer), newest first.
    pub async fn deliveries(&self, realm: Option<&str>, limit: i64) -> Result<Vec<PeeringDelivery>, ServiceError> {
        let mut reader = self.store().reader().await?;
        Ok(store::deliveries::list_deliveries(&mut reader.conn(), realm, limit).await?)
    }

    /// The earliest time a pending delivery is due, if any (the worker waits on the clock until then).
    pub async fn next_delivery_due(&self) -> Result<Option<DateTime<Utc>>, ServiceError> {
        let mut reader = self.store().reader().await?;
        Ok(store::deliveries::next_delivery_due(&mut reader.conn()).await?)
    }
}
