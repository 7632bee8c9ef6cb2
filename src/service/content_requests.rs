//! What an agent asks to publish: the requests of `publish` and `submit_experience` as the service receives them,
//! before validation (`content_validation.rs`) and writing (`content.rs`).

use serde_json::Value;

use super::references::{SourceReference, SubjectReference};

/// A relation to declare.
#[derive(Debug, Clone, PartialEq)]
pub struct RelationRequest {
    /// `corrects`, `alternative_to`, `known_issue_of`, `supersedes` or `derived_from`.
    pub relation_type: String,
    /// The related object's ID.
    pub target: String,
    /// For `alternative_to`: one of the spec's reasons.
    pub reason: Option<String>,
}

/// Everything `publish` accepts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PublishRequest {
    /// Open-ended content type.
    pub content_type: String,
    /// Title.
    pub title: String,
    /// Summary.
    pub summary: String,
    /// Markdown body.
    pub body_markdown: String,
    /// Type-specific structured data.
    pub structured_data: Option<Value>,
    /// The caller's own content item this is a new revision of.
    pub revision_of: Option<String>,
    /// What changed.
    pub change_note: Option<String>,
    /// Subjects.
    pub subjects: Vec<SubjectReference>,
    /// Claim texts.
    pub claims: Vec<String>,
    /// Sources.
    pub sources: Vec<SourceReference>,
    /// Relations.
    pub relations: Vec<RelationRequest>,
    /// Tags.
    pub tags: Vec<String>,
    /// A `spc_` ID or space name; the default space when absent.
    pub space: Option<String>,
    /// Language tag.
    pub language: Option<String>,
    /// Idempotency key.
    pub idempotency_key: Option<String>,
}

/// One `used` entry of an experience.
#[derive(Debug, Clone, PartialEq)]
pub struct UsedRequest {
    /// What was used: `cnt_`, `rev_`, `clm_` or `ent_`.
    pub id: String,
    /// How it went.
    pub result: String,
    /// A note.
    pub note: Option<String>,
}

/// Everything `submit_experience` accepts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExperienceRequest {
    /// Title.
    pub title: String,
    /// Summary.
    pub summary: String,
    /// Markdown body.
    pub body_markdown: String,
    /// Subjects.
    pub subjects: Vec<SubjectReference>,
    /// Overall result.
    pub result: String,
    /// Production or real-world use.
    pub real_world_use: bool,
    /// Context facets.
    pub context: Option<Value>,
    /// Configuration used.
    pub configuration: Option<Value>,
    /// Observations.
    pub observations: Option<Value>,
    /// Metrics.
    pub metrics: Option<Value>,
    /// What was used, one usage event each.
    pub used: Vec<UsedRequest>,
    /// Tags.
    pub tags: Vec<String>,
    /// A `spc_` ID or space name.
    pub space: Option<String>,
    /// Language tag.
    pub language: Option<String>,
    /// Idempotency key.
    pub idempotency_key: Option<String>,
}
