//! Peering deliveries: the peering messages (`Follow`, `Accept`, `Reject`, `Undo`, `Update`) this instance queued
//! for a peer, and where each stands.

use chrono::{DateTime, Utc};

/// Where a delivery stands, as stored and shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeliveryState {
    /// Waiting for its next attempt.
    Pending,
    /// The peer took it.
    Delivered,
    /// Refused for good (a dead letter): kept for the admin to replay or drop.
    Dead,
}

impl DeliveryState {
    /// The stored and displayed name.
    pub const fn as_str(self) -> &'static str {
        match self {
            DeliveryState::Pending => "pending",
            DeliveryState::Delivered => "delivered",
            DeliveryState::Dead => "dead",
        }
    }

    /// The state with this name.
    pub fn parse(text: &str) -> Option<DeliveryState> {
        [DeliveryState::Pending, DeliveryState::Delivered, DeliveryState::Dead]
            .into_iter()
            .find(|state| state.as_str() == text)
    }
}

/// A peering activity waiting for (or done with) delivery to one peer.
#[derive(Debug, Clone, PartialEq)]
pub struct PeeringDelivery {
    /// The delivery's own ID.
    pub id: String,
    /// The peer it goes to.
    pub peer_realm: String,
    /// The peer's inbox at the time it was queued.
    pub inbox_url: String,
    /// The activity's `id`.
    pub activity_id: String,
    /// `Follow`, `Accept`, `Reject`, `Undo` or `Update`.
    pub activity_type: String,
    /// What to send, in the transport-neutral form of `service::federation::peering::PeeringMessage`.
    pub body: String,
    /// Waiting, delivered, or given up on.
    pub state: DeliveryState,
    /// Attempts so far.
    pub attempts: i32,
    /// When the next attempt is due.
    pub next_attempt_at: DateTime<Utc>,
    /// The last failure.
    pub last_error: Option<String>,
    /// When it was queued.
    pub created_at: DateTime<Utc>,
    /// When it was delivered or given up on.
    pub finished_at: Option<DateTime<Utc>>,
}
