//! What replicates between realms, in a transport-neutral form: the records an origin sends (read from its rows
//! when it delivers or serves them) and a receiver applies (read from the ActivityStreams objects by the adapter,
//! after it verified their origin proofs). Only public fields: keys, audit rows and request metadata never enter
//! them.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::context::ContextKey;
use super::evidence::{UsageOutcome, Verdict};
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

/// What kind of evidence a passport carries, with the fields the trust model reads and nothing else: no notes,
/// rationales, metrics or context facets beyond the normalized key, so that no free text leaves with the record.
#[derive(Debug, Clone, PartialEq)]
pub enum EvidenceFacts {
    /// A usage event (`use_…`).
    Usage {
        /// `implementation`, `execution`, …
        usage_type: String,
        /// How it went.
        result: UsageOutcome,
        /// Production or real-world use.
        real_world_use: bool,
        /// The normalized context.
        context_key: ContextKey,
    },
    /// A review (`rvw_…`).
    Review {
        /// The verdict.
        verdict: Verdict,
        /// Confidence in [0, 1].
        confidence: f64,
        /// The reviewer's own usage event it is grounded in (the receiver checks that it holds it, §2.15).
        based_on_usage: Option<PublicId>,
    },
    /// A rating (`rat_…`).
    Rating {
        /// The dimension, lower_snake_case.
        dimension: String,
        /// 0–100.
        score: f64,
        /// Confidence in [0, 1].
        confidence: f64,
        /// The normalized context (`*` for none).
        context_key: ContextKey,
        /// The rater's own usage event it is based on.
        based_on_usage: Option<PublicId>,
    },
}

/// An evidence record as its origin publishes it: a self-verifying passport (its origin's proof travels with it), so
/// that every receiver recomputes trust from the raw evidence under its own trust in the origin.
#[derive(Debug, Clone, PartialEq)]
pub struct EvidencePassport {
    /// The record (`use_…`, `rvw_…` or `rat_…`).
    pub record_id: PublicId,
    /// The realm it was made on.
    pub origin: String,
    /// What it is about: a revision, claim or entity (usage and reviews), an entity or content item (ratings).
    pub target_id: PublicId,
    /// The content item of a revision target.
    pub target_content_id: Option<PublicId>,
    /// The acting actor, as its origin knows it (a stable per-origin identifier; never a key).
    pub actor_id: PublicId,
    /// The actor's root controller, as its origin knows it.
    pub root_controller_id: PublicId,
    /// When its origin says it was made.
    pub created_at: DateTime<Utc>,
    /// Its kind and fields.
    pub facts: EvidenceFacts,
}

/// The retraction of an evidence record by its origin (an `Undo`): only the record's origin can retract it.
#[derive(Debug, Clone, PartialEq)]
pub struct EvidenceRetraction {
    /// The retracted record.
    pub record_id: PublicId,
    /// The realm that retracts it (it must be the record's origin).
    pub origin: String,
    /// When it was retracted.
    pub retracted_at: DateTime<Utc>,
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
    /// An evidence record (`Create`).
    Evidence(Box<EvidencePassport>),
    /// An evidence record's retraction (`Undo`).
    Retraction(EvidenceRetraction),
}

impl FederatedObject {
    /// The realm the object comes from.
    pub fn origin(&self) -> &str {
        match self {
            FederatedObject::Revision(record) => &record.origin,
            FederatedObject::Deletion(tombstone) => &tombstone.origin,
            FederatedObject::Space(space) => &space.origin,
            FederatedObject::Evidence(passport) => &passport.origin,
            FederatedObject::Retraction(retraction) => &retraction.origin,
        }
    }

    /// The object's public ID (a revision's content item).
    pub fn object_id(&self) -> &PublicId {
        match self {
            FederatedObject::Revision(record) => &record.content_id,
            FederatedObject::Deletion(tombstone) => &tombstone.content_id,
            FederatedObject::Space(space) => &space.id,
            FederatedObject::Evidence(passport) => &passport.record_id,
            FederatedObject::Retraction(retraction) => &retraction.record_id,
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

/// Where a remote evidence record came from, as this instance keeps it (trust model §2.15): enough to check the
/// origin's proof again at any time and to tell its origin from the peer that delivered it.
#[derive(Debug, Clone, PartialEq)]
pub struct EvidenceProvenance {
    /// The record.
    pub record_id: PublicId,
    /// Its target.
    pub target_id: PublicId,
    /// The realm that made it (and signed it).
    pub origin: String,
    /// The peer that delivered it first (the origin itself, or a relay).
    pub sender: String,
    /// The origin's proof: the object as signed and the key that signed it.
    pub proof: OriginProof,
    /// When its origin says it was made.
    pub origin_created_at: DateTime<Utc>,
    /// When this instance first received it with a valid proof.
    pub received_at: DateTime<Utc>,
}

/// A retraction received from a record's origin, kept with the origin's proof (also when it came before the record).
#[derive(Debug, Clone, PartialEq)]
pub struct ReceivedRetraction {
    /// The retraction.
    pub retraction: EvidenceRetraction,
    /// The origin's proof of it.
    pub proof: OriginProof,
    /// When it first arrived here.
    pub received_at: DateTime<Utc>,
}
