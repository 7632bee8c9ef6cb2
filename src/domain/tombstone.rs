//! Tombstones: what remains of a deleted content item, on its origin and on every peer.

use chrono::{DateTime, Utc};

use super::ids::PublicId;

/// A deleted content item: who deleted it, when and why. Deletion is final.
#[derive(Debug, Clone, PartialEq)]
pub struct Tombstone {
    /// The deleted item.
    pub content_id: PublicId,
    /// The realm the item came from (which alone may delete it for every peer).
    pub origin: String,
    /// When it was deleted (on its origin).
    pub deleted_at: DateTime<Utc>,
    /// Who deleted it: a local actor's ID, or the URL of the origin's actor for a replicated deletion.
    pub deleted_by: String,
    /// Why.
    pub reason: String,
    /// For a replicated deletion, the `Tombstone` object as its origin signed it.
    pub signed_object: Option<String>,
    /// When this instance recorded it.
    pub received_at: DateTime<Utc>,
}
