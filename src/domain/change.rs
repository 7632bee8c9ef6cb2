//! Changes that leave the instance: what a committed write emits into the outbox, in a transport-neutral form that
//! the federation adapter renders (as ActivityStreams) when it delivers or serves it.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::ids::PublicId;

/// What changed. The event names an object and, for content, the revision; what is sent is read when it is sent,
/// so the event stays small and private fields never enter it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "change", rename_all = "snake_case")]
pub enum Change {
    /// A content item was published or got a new revision.
    ContentRevised {
        /// The content item.
        content_id: String,
        /// The new revision.
        revision_id: String,
        /// Its number (1 for a new item).
        revision_no: i32,
    },
    /// A content item was deleted: it is a tombstone from now on.
    ContentDeleted {
        /// The content item.
        content_id: String,
    },
    /// A federated space was created.
    SpaceCreated {
        /// The space.
        space_id: String,
    },
    /// An agent of this realm recorded an evidence record (a usage event, a review or a rating; its ID's prefix
    /// says which) about a target in a federated space.
    EvidenceRecorded {
        /// The record.
        record_id: String,
    },
    /// Its author retracted an evidence record that had left the instance.
    EvidenceRetracted {
        /// The record.
        record_id: String,
    },
}

impl Change {
    /// The stored event type.
    pub fn kind(&self) -> ChangeKind {
        match self {
            Change::ContentRevised { .. } => ChangeKind::ContentRevised,
            Change::ContentDeleted { .. } => ChangeKind::ContentDeleted,
            Change::SpaceCreated { .. } => ChangeKind::SpaceCreated,
            Change::EvidenceRecorded { .. } => ChangeKind::EvidenceRecorded,
            Change::EvidenceRetracted { .. } => ChangeKind::EvidenceRetracted,
        }
    }

    /// The object the change is about (deliveries keep the order of changes per object).
    pub fn object_id(&self) -> &str {
        match self {
            Change::ContentRevised { content_id, .. } | Change::ContentDeleted { content_id } => content_id,
            Change::SpaceCreated { space_id } => space_id,
            // A record and its retraction are one object, so a retraction is never delivered before its record.
            Change::EvidenceRecorded { record_id } | Change::EvidenceRetracted { record_id } => record_id,
        }
    }
}

/// The kinds of change, as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChangeKind {
    /// See [`Change::ContentRevised`].
    ContentRevised,
    /// See [`Change::ContentDeleted`].
    ContentDeleted,
    /// See [`Change::SpaceCreated`].
    SpaceCreated,
    /// See [`Change::EvidenceRecorded`].
    EvidenceRecorded,
    /// See [`Change::EvidenceRetracted`].
    EvidenceRetracted,
}

impl ChangeKind {
    /// Every kind.
    pub const ALL: [ChangeKind; 5] = [
        ChangeKind::ContentRevised,
        ChangeKind::ContentDeleted,
        ChangeKind::SpaceCreated,
        ChangeKind::EvidenceRecorded,
        ChangeKind::EvidenceRetracted,
    ];

    /// The stored name.
    pub const fn as_str(self) -> &'static str {
        match self {
            ChangeKind::ContentRevised => "content_revised",
            ChangeKind::ContentDeleted => "content_deleted",
            ChangeKind::SpaceCreated => "space_created",
            ChangeKind::EvidenceRecorded => "evidence_recorded",
            ChangeKind::EvidenceRetracted => "evidence_retracted",
        }
    }

    /// The kind with this stored name.
    pub fn parse(text: &str) -> Option<ChangeKind> {
        ChangeKind::ALL.into_iter().find(|kind| kind.as_str() == text)
    }
}

/// A change emitted by a unit of work, before it has its place in the outbox.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangeEvent {
    /// A fresh lowercase ULID: the event's identity everywhere (its activity ID ends with it).
    pub event_id: String,
    /// What changed.
    pub change: Change,
    /// The space the object lives in (a space's own change names itself).
    pub space_id: PublicId,
    /// When the change was made.
    pub created_at: DateTime<Utc>,
}

/// An event in the outbox: a change with its place in commit order.
#[derive(Debug, Clone, PartialEq)]
pub struct OutboxEvent {
    /// The position in the outbox: strictly increasing in commit order, so a reader that has seen `seq` has seen
    /// every event committed before it.
    pub seq: i64,
    /// The change.
    pub event: ChangeEvent,
}
