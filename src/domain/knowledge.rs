//! Knowledge: spaces, entities, sources, content items with immutable revisions, claims and relations.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::ids::PublicId;

/// Who may see a space's content beyond this instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpaceVisibility {
    /// Shared with every active peer (the default).
    Federated,
    /// Never leaves this instance.
    Local,
}

impl SpaceVisibility {
    /// The stored and wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            SpaceVisibility::Federated => "federated",
            SpaceVisibility::Local => "local",
        }
    }

    /// Parses the stored name.
    pub fn parse(name: &str) -> Option<SpaceVisibility> {
        match name {
            "federated" => Some(SpaceVisibility::Federated),
            "local" => Some(SpaceVisibility::Local),
            _ => None,
        }
    }
}

/// A space: a named collection content is published into.
#[derive(Debug, Clone, PartialEq)]
pub struct Space {
    /// `spc_…`
    pub id: PublicId,
    /// Unique name within its origin.
    pub name: String,
    /// What the space is for.
    pub description: String,
    /// Federated or local.
    pub visibility: SpaceVisibility,
    /// Whether this is the space content goes to when none is named.
    pub is_default: bool,
    /// The realm that created it.
    pub origin: String,
    /// The actor that created it.
    pub created_by: PublicId,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// When this instance got it: its creation for a local space, its arrival for a replicated one.
    pub received_at: DateTime<Utc>,
}

/// An entity: any identifiable subject (a library, a product, a method, a place…).
#[derive(Debug, Clone, PartialEq)]
pub struct Entity {
    /// `ent_…`
    pub id: PublicId,
    /// Open-ended type, e.g. `library`, `service`, `method`.
    pub entity_type: String,
    /// Display name.
    pub name: String,
    /// The name normalized for matching.
    pub normalized_name: String,
    /// Other names it is known by.
    pub aliases: Vec<String>,
    /// What it is.
    pub description: String,
    /// The realm that created it.
    pub origin: String,
    /// The actor that created it.
    pub created_by: PublicId,
    /// That actor's root controller (whose evidence on the entity is self-evidence).
    pub created_by_root_controller: PublicId,
    /// When it was created.
    pub created_at: DateTime<Utc>,
}

/// A source: a URL cited by content or reviews, assigned to a source family.
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    /// `src_…`
    pub id: PublicId,
    /// The URL as first cited.
    pub url: String,
    /// The URL normalized for matching.
    pub normalized_url: String,
    /// A title, when one was given.
    pub title: Option<String>,
    /// The registrable domain (e.g. `python.org`), so many pages of one site count as one family.
    pub family: String,
    /// The realm that created it.
    pub origin: String,
    /// When it was first cited.
    pub created_at: DateTime<Utc>,
}

/// A content item: the stable identity of a piece of knowledge whose text lives in revisions.
#[derive(Debug, Clone, PartialEq)]
pub struct ContentItem {
    /// `cnt_…`
    pub id: PublicId,
    /// Open-ended type: `procedure`, `code`, `experience`, …
    pub content_type: String,
    /// The space it belongs to.
    pub space_id: PublicId,
    /// The author (the only actor who may add revisions).
    pub author_id: PublicId,
    /// The author's root controller.
    pub author_root_controller: PublicId,
    /// The realm that created it.
    pub origin: String,
    /// The newest revision.
    pub current_revision_id: PublicId,
    /// The newest revision's number (1 for the first).
    pub current_revision_no: i32,
    /// When it was first published.
    pub created_at: DateTime<Utc>,
    /// When the newest revision was published.
    pub updated_at: DateTime<Utc>,
    /// When this instance got it: its publication for local content, its arrival for replicated content (search
    /// snapshots use it, so an old item arriving late does not shift pages already read).
    pub received_at: DateTime<Utc>,
    /// When it was deleted (it is a tombstone from then on; see `store::knowledge::find_tombstone`).
    pub deleted_at: Option<DateTime<Utc>>,
}

/// An immutable revision of a content item.
#[derive(Debug, Clone, PartialEq)]
pub struct Revision {
    /// `rev_…`
    pub id: PublicId,
    /// The content item.
    pub content_id: PublicId,
    /// 1, 2, 3, …
    pub revision_no: i32,
    /// Title.
    pub title: String,
    /// One-paragraph summary.
    pub summary: String,
    /// Markdown body with raw HTML neutralized.
    pub body_markdown: String,
    /// Type-specific structured data (a JSON object).
    pub structured_data: Value,
    /// Language tag, e.g. `en`.
    pub language: Option<String>,
    /// What changed from the previous revision.
    pub change_note: Option<String>,
    /// For experiences: the normalized context they report on.
    pub context_key: Option<String>,
    /// The author.
    pub author_id: PublicId,
    /// SHA-256 of the revision's canonical text, for integrity checks.
    pub content_sha256: String,
    /// The realm that created it.
    pub origin: String,
    /// When it was published.
    pub created_at: DateTime<Utc>,
    /// When this instance got it (its publication when local).
    pub received_at: DateTime<Utc>,
}

/// A claim: one checkable statement, shared by every revision that makes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    /// `clm_…`
    pub id: PublicId,
    /// The text as first published.
    pub text: String,
    /// The text normalized for matching.
    pub normalized_text: String,
    /// SHA-256 of the normalized text.
    pub fingerprint: String,
    /// The first actor to publish it.
    pub author_id: PublicId,
    /// That actor's root controller.
    pub author_root_controller: PublicId,
    /// The realm that created it.
    pub origin: String,
    /// When it was first published.
    pub created_at: DateTime<Utc>,
}

/// Another realm's ID of a claim held here under another ID (trust model §2.15): both realms' texts normalize to
/// the same fingerprint, and the claim held first is canonical. Evidence and `get` on the alias resolve to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimAlias {
    /// The other realm's `clm_…`.
    pub alias_id: PublicId,
    /// That realm.
    pub origin: String,
    /// The claim held here.
    pub canonical_claim_id: PublicId,
    /// When the alias was first seen.
    pub created_at: DateTime<Utc>,
}

/// How one piece of content relates to another object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RelationType {
    /// This content corrects the target.
    Corrects,
    /// This is an alternative to the target.
    AlternativeTo,
    /// This documents a problem with the target.
    KnownIssueOf,
    /// This replaces the target.
    Supersedes,
    /// This is based on the target.
    DerivedFrom,
}

impl RelationType {
    /// Every relation type.
    pub const ALL: [RelationType; 5] = [
        RelationType::Corrects,
        RelationType::AlternativeTo,
        RelationType::KnownIssueOf,
        RelationType::Supersedes,
        RelationType::DerivedFrom,
    ];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            RelationType::Corrects => "corrects",
            RelationType::AlternativeTo => "alternative_to",
            RelationType::KnownIssueOf => "known_issue_of",
            RelationType::Supersedes => "supersedes",
            RelationType::DerivedFrom => "derived_from",
        }
    }

    /// Parses a wire name.
    pub fn parse(name: &str) -> Option<RelationType> {
        RelationType::ALL.into_iter().find(|relation| relation.as_str() == name)
    }
}

/// Why something is an alternative (spec §6.1).
pub const ALTERNATIVE_REASONS: [&str; 10] = [
    "simpler",
    "cheaper",
    "faster",
    "safer",
    "more_reliable",
    "more_open",
    "more_available",
    "lower_resource_use",
    "easier_to_integrate",
    "other",
];

/// A relation declared by a revision.
#[derive(Debug, Clone, PartialEq)]
pub struct Relation {
    /// Internal row ID.
    pub id: String,
    /// The content item that declares the relation.
    pub source_content_id: PublicId,
    /// The revision that declared it.
    pub source_revision_id: PublicId,
    /// The kind of relation.
    pub relation_type: RelationType,
    /// The related object.
    pub target_id: PublicId,
    /// For `alternative_to`: why it is an alternative.
    pub reason: Option<String>,
    /// The realm that created it.
    pub origin: String,
    /// When it was declared.
    pub created_at: DateTime<Utc>,
}
