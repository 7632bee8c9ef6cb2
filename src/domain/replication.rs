//! What replicates between realms, in a transport-neutral form: the records an origin sends (read from its rows
//! when it delivers or serves them) and a receiver applies (read from the ActivityStreams objects by the adapter,
//! after it verified their origin proofs). Only public fields: keys, audit rows and request metadata never enter
//! them.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::ids::PublicId;
use super::knowledge::RelationType;
use super::tombstone::Tombstone;

/// A claim a revision makes.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimRecord {
    /// The claim's ID (a receiver links a claim with the same normalized text instead, when it has one).
    pub id: PublicId,
    /// Its text.
    pub text: String,
}

/// An entity a revision is about.
#[derive(Debug, Clone, PartialEq)]
pub struct EntityRecord {
    /// Its ID.
    pub id: PublicId,
    /// Its type.
    pub entity_type: String,
    /// Its name.
    pub name: String,
    /// Other names.
    pub aliases: Vec<String>,
    /// What it is.
    pub description: String,
}

/// A source a revision cites.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceRecord {
    /// Its ID.
    pub id: PublicId,
    /// The URL.
    pub url: String,
    /// The title of this citation.
    pub title: Option<String>,
}

/// A relation a revision declares.
#[derive(Debug, Clone, PartialEq)]
pub struct RelationRecord {
    /// The kind.
    pub relation_type: RelationType,
    /// The related object (IDs are global).
    pub target: PublicId,
    /// For `alternative_to`: why.
    pub reason: Option<String>,
}

/// One revision of a content item with everything it links, as its origin publishes it.
#[derive(Debug, Clone, PartialEq)]
pub struct RevisionRecord {
    /// The content item.
    pub content_id: PublicId,
    /// The realm it comes from.
    pub origin: String,
    /// Its content type.
    pub content_type: String,
    /// Its space.
    pub space_id: PublicId,
    /// The space's name.
    pub space_name: String,
    /// The author.
    pub author_id: PublicId,
    /// The author's root controller (namespaced by the origin: it never matches a controller of another realm).
    pub author_root_controller: PublicId,
    /// When the item was first published.
    pub published_at: DateTime<Utc>,
    /// The revision.
    pub revision_id: PublicId,
    /// Its number.
    pub revision_no: i32,
    /// When it was published.
    pub revised_at: DateTime<Utc>,
    /// Title.
    pub title: String,
    /// Summary.
    pub summary: String,
    /// Markdown body.
    pub body_markdown: String,
    /// Structured data (a JSON object).
    pub structured_data: Value,
    /// Language tag.
    pub language: Option<String>,
    /// What changed.
    pub change_note: Option<String>,
    /// For experiences: the normalized context they report on.
    pub context_key: Option<String>,
    /// Claims in order.
    pub claims: Vec<ClaimRecord>,
    /// Subjects.
    pub subjects: Vec<EntityRecord>,
    /// Sources in order.
    pub sources: Vec<SourceRecord>,
    /// Relations.
    pub relations: Vec<RelationRecord>,
    /// Tags.
    pub tags: Vec<String>,
}

/// A federated space, as its origin publishes it.
#[derive(Debug, Clone, PartialEq)]
pub struct SpaceRecord {
    /// The space.
    pub id: PublicId,
    /// The realm it comes from.
    pub origin: String,
    /// Its name.
    pub name: String,
    /// What it is for.
    pub description: String,
    /// The origin's actor that created it.
    pub created_by: PublicId,
    /// When it was created.
    pub created_at: DateTime<Utc>,
}

/// An object that replicates.
#[derive(Debug, Clone, PartialEq)]
pub enum FederatedObject {
    /// A content revision (`Create` for the first, `Update` for later ones).
    Revision(Box<RevisionRecord>),
    /// A deleted content item (`Delete` of a `Tombstone`).
    Deletion(Tombstone),
    /// A federated space (`Create`).
    Space(SpaceRecord),
}

impl FederatedObject {
    /// The realm the object comes from.
    pub fn origin(&self) -> &str {
        match self {
            FederatedObject::Revision(record) => &record.origin,
            FederatedObject::Deletion(tombstone) => &tombstone.origin,
            FederatedObject::Space(space) => &space.origin,
        }
    }

    /// The object's public ID (a revision's content item).
    pub fn object_id(&self) -> &PublicId {
        match self {
            FederatedObject::Revision(record) => &record.content_id,
            FederatedObject::Deletion(tombstone) => &tombstone.content_id,
            FederatedObject::Space(space) => &space.id,
        }
    }
}

/// What a receiver keeps of an origin's proof: the object exactly as signed, and the key that signed it (verified
/// against the origin's pinned key before the object reached the service).
#[derive(Debug, Clone, PartialEq)]
pub struct OriginProof {
    /// The signed object, as JSON text.
    pub signed_object: String,
    /// The origin's key that signed it.
    pub key_id: String,
}

/// A replicated object with its verified proof, as the intake applies it.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplicatedObject {
    /// The object.
    pub object: FederatedObject,
    /// Its origin's proof.
    pub proof: OriginProof,
}
