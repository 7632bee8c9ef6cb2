//! The objects that replicate between realms, as they travel: a content revision (`Article`), a deleted content
//! item (`Tombstone`) and a federated space (`Collection` with interai terms). Each carries its origin's Data
//! Integrity proof (see `crate::integrity`); the receiver checks it before it reads the object as anything.
//!
//! Every field is required unless it says otherwise, and unknown fields are refused: a document that does not say
//! exactly what it is for is not applied. Text fields are untrusted content from another realm; the receiver
//! validates them as it validates its own agents' input.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The `type` of a content revision.
pub const ARTICLE: &str = "Article";
/// The `type` of a deleted content item.
pub const TOMBSTONE: &str = "Tombstone";
/// The `type` of a federated space.
pub const COLLECTION: &str = "Collection";
/// The `type` of a usage event.
pub const USAGE_REPORT: &str = "UsageReport";
/// The `type` of a review.
pub const REVIEW: &str = "Review";
/// The `type` of a rating.
pub const RATING: &str = "Rating";
/// The `type` of an evidence record's retraction (the object of an `Undo`).
pub const RETRACTION: &str = "Retraction";
/// The media type of an `Article`'s `content`.
pub const MARKDOWN: &str = "text/markdown";

/// A content item at one revision, as its origin publishes it (`Create` for revision 1, `Update` after).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContentObject {
    /// The JSON-LD context (present when the object stands alone, as it does when signed).
    #[serde(rename = "@context", default, skip_serializing_if = "Value::is_null")]
    pub context: Value,
    /// The item's URL at its origin: `{origin}/o/{publicId}`.
    pub id: String,
    /// Always [`ARTICLE`].
    #[serde(rename = "type")]
    pub kind: String,
    /// The item's interai ID (`cnt_…`): global, the same on every realm.
    pub public_id: String,
    /// The origin realm.
    pub realm: String,
    /// The author's actor URL at the origin.
    pub attributed_to: String,
    /// The author's interai ID.
    pub author: String,
    /// The author's root controller's interai ID (namespaced by the origin).
    pub root_controller: String,
    /// The interai content type (`knowledge`, `experience`, …).
    pub content_type: String,
    /// When the item was first published (RFC 3339).
    pub published: String,
    /// When this revision was published (RFC 3339).
    pub updated: String,
    /// The title.
    pub name: String,
    /// The summary.
    pub summary: String,
    /// The body.
    pub content: String,
    /// Always [`MARKDOWN`].
    pub media_type: String,
    /// The language tag, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// The space the item lives in.
    pub space: SpaceReference,
    /// The revision this object is.
    pub revision: RevisionFacts,
    /// The structured data (a JSON object).
    pub structured_data: Value,
    /// The claims, in order.
    pub claims: Vec<ClaimFacts>,
    /// The entities it is about.
    pub subjects: Vec<EntityFacts>,
    /// The sources it cites, in order.
    pub sources: Vec<SourceFacts>,
    /// The relations it declares.
    pub relations: Vec<RelationFacts>,
    /// Its tags.
    pub tags: Vec<String>,
    /// The origin's proof (absent only while being signed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proof: Option<Value>,
}

/// The space of a content item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SpaceReference {
    /// The space's interai ID (`spc_…`).
    pub public_id: String,
    /// Its name.
    pub name: String,
}

/// Which revision an `Article` is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RevisionFacts {
    /// The revision's interai ID (`rev_…`).
    pub public_id: String,
    /// Its number, from 1.
    pub number: i32,
    /// What changed, if the author said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change_note: Option<String>,
    /// For experiences: the normalized context key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_key: Option<String>,
}

/// A claim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClaimFacts {
    /// The claim's interai ID (`clm_…`).
    pub public_id: String,
    /// Its text.
    pub text: String,
}

/// An entity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EntityFacts {
    /// The entity's interai ID (`ent_…`).
    pub public_id: String,
    /// Its type.
    pub entity_type: String,
    /// Its name.
    pub name: String,
    /// Other names.
    pub aliases: Vec<String>,
    /// What it is.
    pub description: String,
}

/// A cited source.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SourceFacts {
    /// The source's interai ID (`src_…`).
    pub public_id: String,
    /// Its URL.
    pub url: String,
    /// The title of this citation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// A relation to another object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RelationFacts {
    /// `supersedes`, `alternative_to`, …
    pub relation_type: String,
    /// The related object's interai ID.
    pub target: String,
    /// For `alternative_to`: why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A deleted content item: final on every realm.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TombstoneObject {
    /// The JSON-LD context.
    #[serde(rename = "@context", default, skip_serializing_if = "Value::is_null")]
    pub context: Value,
    /// The item's URL at its origin.
    pub id: String,
    /// Always [`TOMBSTONE`].
    #[serde(rename = "type")]
    pub kind: String,
    /// Always [`ARTICLE`].
    pub former_type: String,
    /// The item's interai ID.
    pub public_id: String,
    /// The origin realm.
    pub realm: String,
    /// When it was deleted (RFC 3339).
    pub deleted: String,
    /// Who deleted it (an interai ID of the origin's admin).
    pub deleted_by: String,
    /// Why.
    pub reason: String,
    /// The origin's proof.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proof: Option<Value>,
}

/// A federated space.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SpaceObject {
    /// The JSON-LD context.
    #[serde(rename = "@context", default, skip_serializing_if = "Value::is_null")]
    pub context: Value,
    /// The space's URL at its origin.
    pub id: String,
    /// Always [`COLLECTION`].
    #[serde(rename = "type")]
    pub kind: String,
    /// The space's interai ID (`spc_…`).
    pub public_id: String,
    /// The origin realm.
    pub realm: String,
    /// Its name.
    pub name: String,
    /// What it is for.
    pub summary: String,
    /// The interai ID of the origin's actor that created it.
    pub created_by: String,
    /// When it was created (RFC 3339).
    pub published: String,
    /// The origin's proof.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proof: Option<Value>,
}

/// An evidence record: a usage event ([`USAGE_REPORT`]), a review ([`REVIEW`]) or a rating ([`RATING`]). One type
/// for the three, because they share every member but their evidence fields; which of those a record must carry, and
/// which it must not, is its `type`'s (checked by [`EvidenceObject::check_members`]), so a record carrying a member
/// of another kind is refused like an unknown member.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EvidenceObject {
    /// The JSON-LD context.
    #[serde(rename = "@context", default, skip_serializing_if = "Value::is_null")]
    pub context: Value,
    /// The record's URL at its origin: `{origin}/o/{publicId}`.
    pub id: String,
    /// [`USAGE_REPORT`], [`REVIEW`] or [`RATING`].
    #[serde(rename = "type")]
    pub kind: String,
    /// The record's interai ID (`use_…`, `rvw_…`, `rat_…`).
    pub public_id: String,
    /// The origin realm.
    pub realm: String,
    /// The acting actor's URL at the origin.
    pub attributed_to: String,
    /// The acting actor's interai ID.
    pub author: String,
    /// The actor's root controller's interai ID (namespaced by the origin).
    pub root_controller: String,
    /// The target's interai ID: a revision, claim or entity (a rating: an entity or content item).
    pub target: String,
    /// The content item of a revision target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_content: Option<String>,
    /// When the record was made (RFC 3339).
    pub published: String,
    /// Usage: `implementation`, `execution`, …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage_type: Option<String>,
    /// Usage: `success`, `partial`, `failure` or `unknown`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    /// Usage: production or real-world use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub real_world_use: Option<bool>,
    /// Review: `confirmed`, `mostly_correct`, …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<String>,
    /// Review and rating: confidence in [0, 1].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    /// Rating: the dimension, lower_snake_case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dimension: Option<String>,
    /// Rating: 0–100.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// Usage and rating: the normalized context key (`*` for none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_key: Option<String>,
    /// Review and rating (optional): the author's own usage event (`use_…`) it is based on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub based_on_usage: Option<String>,
    /// The origin's proof.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proof: Option<Value>,
}

impl EvidenceObject {
    /// Checks that the record carries exactly its kind's evidence members: `Err` names the first missing or foreign
    /// one.
    pub fn check_members(&self) -> Result<(), String> {
        let present = [
            ("usageType", self.usage_type.is_some()),
            ("result", self.result.is_some()),
            ("realWorldUse", self.real_world_use.is_some()),
            ("verdict", self.verdict.is_some()),
            ("confidence", self.confidence.is_some()),
            ("dimension", self.dimension.is_some()),
            ("score", self.score.is_some()),
            ("contextKey", self.context_key.is_some()),
            ("basedOnUsage", self.based_on_usage.is_some()),
        ];
        let (required, optional): (&[&str], &[&str]) = match self.kind.as_str() {
            USAGE_REPORT => (&["usageType", "result", "realWorldUse", "contextKey"], &[]),
            REVIEW => (&["verdict", "confidence"], &["basedOnUsage"]),
            RATING => (&["dimension", "score", "confidence", "contextKey"], &["basedOnUsage"]),
            other => return Err(format!("{other:?} is not an evidence record")),
        };
        for (name, is_present) in present {
            if required.contains(&name) && !is_present {
                return Err(format!("a {} needs {name}", self.kind));
            }
            if is_present && !required.contains(&name) && !optional.contains(&name) {
                return Err(format!("a {} does not carry {name}", self.kind));
            }
        }
        Ok(())
    }
}

/// The retraction of an evidence record by its origin, carried by an `Undo`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RetractionObject {
    /// The JSON-LD context.
    #[serde(rename = "@context", default, skip_serializing_if = "Value::is_null")]
    pub context: Value,
    /// The retraction's URL at its origin: `{origin}/o/{publicId}/retraction` (one per record).
    pub id: String,
    /// Always [`RETRACTION`].
    #[serde(rename = "type")]
    pub kind: String,
    /// The retracted record's interai ID.
    pub public_id: String,
    /// The origin realm: the record's own.
    pub realm: String,
    /// When it was retracted (RFC 3339).
    pub published: String,
    /// The origin's proof.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proof: Option<Value>,
}

/// A replicated object, told apart by its `type`.
#[derive(Debug, Clone, PartialEq)]
pub enum FederatedDocument {
    /// A content revision.
    Content(Box<ContentObject>),
    /// A deleted item.
    Tombstone(TombstoneObject),
    /// A space.
    Space(SpaceObject),
    /// A usage event, a review or a rating.
    Evidence(Box<EvidenceObject>),
    /// An evidence record's retraction.
    Retraction(RetractionObject),
}

impl FederatedDocument {
    /// Reads an object by its `type`; `Err` says what is wrong, for the intake log.
    pub fn from_value(value: &Value) -> Result<FederatedDocument, String> {
        let kind = value
            .get("type")
            .and_then(Value::as_str)
            .ok_or_else(|| "the object has no type".to_owned())?;
        let parsed = match kind {
            // Read from the borrowed value: only the strings the object keeps are copied, not the whole tree.
            ARTICLE => ContentObject::deserialize(value).map(|object| FederatedDocument::Content(Box::new(object))),
            TOMBSTONE => TombstoneObject::deserialize(value).map(FederatedDocument::Tombstone),
            COLLECTION => SpaceObject::deserialize(value).map(FederatedDocument::Space),
            USAGE_REPORT | REVIEW | RATING => EvidenceObject::deserialize(value)
                .map_err(|error| error.to_string())
                .and_then(|object| object.check_members().map(|()| object))
                .map(|object| FederatedDocument::Evidence(Box::new(object)))
                .map_err(<serde_json::Error as serde::de::Error>::custom),
            RETRACTION => RetractionObject::deserialize(value).map(FederatedDocument::Retraction),
            other => return Err(format!("objects of type {other:?} do not replicate")),
        };
        parsed.map_err(|error| format!("malformed {kind}: {error}"))
    }

    /// The object's URL at its origin.
    pub fn id(&self) -> &str {
        match self {
            FederatedDocument::Content(object) => &object.id,
            FederatedDocument::Tombstone(object) => &object.id,
            FederatedDocument::Space(object) => &object.id,
            FederatedDocument::Evidence(object) => &object.id,
            FederatedDocument::Retraction(object) => &object.id,
        }
    }

    /// The origin realm the object names.
    pub fn realm(&self) -> &str {
        match self {
            FederatedDocument::Content(object) => &object.realm,
            FederatedDocument::Tombstone(object) => &object.realm,
            FederatedDocument::Space(object) => &object.realm,
            FederatedDocument::Evidence(object) => &object.realm,
            FederatedDocument::Retraction(object) => &object.realm,
        }
    }
}

/// One page of an outbox (`OrderedCollectionPage`) or of its snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OutboxPage {
    /// The JSON-LD context.
    #[serde(rename = "@context", default, skip_serializing_if = "Value::is_null")]
    pub context: Value,
    /// This page's URL.
    pub id: String,
    /// Always `OrderedCollectionPage`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The outbox this page belongs to.
    pub part_of: String,
    /// The activities, oldest first.
    pub ordered_items: Vec<Value>,
    /// The next page; absent (or `null`) on the last one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
    /// The cursor to ask `after` next (the outbox position, or the snapshot's last object).
    pub cursor: String,
    /// The outbox head when the page was read: everything up to it is in this page or before.
    pub head: i64,
    /// The outbox's epoch: positions (`cursor`, `head`, `after`) count within one epoch only. A new epoch means the
    /// outbox was restored from a backup and may give positions again; read its snapshot again. Absent from
    /// implementations without epochs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epoch: Option<String>,
}
