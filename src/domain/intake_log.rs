//! The intake log: a line per activity of a peer that the intake applied, ignored or refused, the peer's
//! counterpart of the audit log.

use chrono::{DateTime, Utc};

/// One line of the intake log.
#[derive(Debug, Clone, PartialEq)]
pub struct IntakeLogEntry {
    /// The line's ID.
    pub id: String,
    /// The peer whose activity it was.
    pub peer_realm: String,
    /// The activity.
    pub activity_id: String,
    /// Its type.
    pub activity_type: String,
    /// The key that signed it.
    pub key_id: String,
    /// `applied`, `ignored` or `refused`.
    pub outcome: String,
    /// What it did, for the admin.
    pub detail: String,
    /// When.
    pub created_at: DateTime<Utc>,
}
