//! Wire types of `publish`, with the input shapes it shares with other writes (subjects, claims, sources, relations).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::mcp::call::ToolOutput;

// ---------------------------------------------------------------- shared input shapes

/// A subject: an `ent_` ID, or an entity named by `name` and `type` (found by normalized name and type, or created).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum SubjectInput {
    /// An existing entity's ID.
    Id(String),
    /// An entity by name and type.
    Named(NamedSubjectInput),
}

/// An entity named by type and name.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NamedSubjectInput {
    /// The entity's name, e.g. "PostgreSQL".
    pub name: String,
    /// The entity's type, lower_snake_case, e.g. "database", "library", "method".
    #[serde(rename = "type")]
    pub entity_type: String,
    /// Other names, used when the entity is created.
    #[serde(default)]
    pub aliases: Vec<String>,
    /// A description, used when the entity is created.
    #[serde(default)]
    pub description: Option<String>,
}

/// A claim: `{ "text": "…" }` or just the text.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ClaimInput {
    /// The claim as an object.
    Object(ClaimObjectInput),
    /// The claim text.
    Text(String),
}

/// A claim object.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimObjectInput {
    /// One checkable statement.
    pub text: String,
}

/// A source: a URL, a `src_` ID, or `{ "url", "title" }` / `{ "id" }`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum SourceInput {
    /// A URL or `src_` ID.
    Text(String),
    /// A source object.
    Object(SourceObjectInput),
}

/// A source object.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SourceObjectInput {
    /// An http(s) URL.
    #[serde(default)]
    pub url: Option<String>,
    /// An existing `src_` ID.
    #[serde(default)]
    pub id: Option<String>,
    /// A title.
    #[serde(default)]
    pub title: Option<String>,
}

/// A relation to another object.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RelationInput {
    /// `corrects`, `alternative_to`, `known_issue_of`, `supersedes` or `derived_from`.
    #[serde(rename = "type")]
    pub relation_type: String,
    /// The related `cnt_`, `rev_`, `ent_` or `clm_` ID.
    pub target: String,
    /// For `alternative_to`: simpler, cheaper, faster, safer, more_reliable, more_open, more_available,
    /// lower_resource_use, easier_to_integrate or other.
    #[serde(default)]
    pub reason: Option<String>,
}

// ---------------------------------------------------------------- publish

/// `publish` input (spec §6.4).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PublishInput {
    /// Open-ended, lower_snake_case: claim, guide, procedure, warning, configuration, note, comparison,
    /// recommendation, question, answer, code, prompt, skill, dataset, …
    pub content_type: String,
    /// Title (at most 300 characters).
    pub title: String,
    /// One-paragraph summary (at most 2000 characters).
    #[serde(default)]
    pub summary: String,
    /// Markdown body (at most 200 KB). Raw HTML is neutralized.
    #[serde(default)]
    pub body_markdown: String,
    /// Type-specific data (at most 64 KB), validated for code (language, runtime, license), prompt
    /// (target_model, input_schema, output_schema) and skill (name, version, dependencies); any object otherwise.
    #[serde(default)]
    pub structured_data: Option<serde_json::Value>,
    /// A `cnt_` ID you authored: publish a new revision of it.
    #[serde(default)]
    pub revision_of: Option<String>,
    /// What changed in this revision.
    #[serde(default)]
    pub change_note: Option<String>,
    /// What the content is about: `ent_` IDs or `{ "name", "type" }` objects.
    #[serde(default)]
    pub subjects: Vec<SubjectInput>,
    /// Checkable statements (at most 50); equivalent existing claims are linked instead of duplicated.
    #[serde(default)]
    pub claims: Vec<ClaimInput>,
    /// Sources: URLs or `src_` IDs.
    #[serde(default)]
    pub sources: Vec<SourceInput>,
    /// Relations to other content (at most 50).
    #[serde(default)]
    pub relations: Vec<RelationInput>,
    /// Tags.
    #[serde(default)]
    pub tags: Vec<String>,
    /// A `spc_` ID or space name; the default space when absent.
    #[serde(default)]
    pub space: Option<String>,
    /// Language tag, e.g. "en".
    #[serde(default)]
    pub language: Option<String>,
    /// Makes retries safe: the same key with the same request returns the original result. 1 to 128 characters from
    /// A-Z, a-z, 0-9, `.`, `_`, `:` and `-` (a UUID or ULID fits); keys are stored, so never put a secret in one.
    #[serde(default)]
    #[schemars(
        length(min = 1, max = crate::service::writes::MAX_IDEMPOTENCY_KEY_CHARACTERS),
        pattern(crate::service::writes::IDEMPOTENCY_KEY_PATTERN)
    )]
    pub idempotency_key: Option<String>,
}

/// A claim in `publish`'s result.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PublishedClaimOutput {
    /// The claim's ID.
    pub id: String,
    /// True when an equivalent claim existed and was linked instead of created.
    pub matched_existing: bool,
}

/// `publish` result.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PublishOutput {
    /// The content item.
    pub id: String,
    /// The new immutable revision.
    pub revision_id: String,
    /// The revision's number (1 for a new item).
    pub revision_no: i32,
    /// The revision's claims in order.
    pub claims: Vec<PublishedClaimOutput>,
}

impl ToolOutput for PublishOutput {
    fn summary(&self) -> String {
        format!(
            "Published {} (revision {} = {}) with {} claims.",
            self.id,
            self.revision_no,
            self.revision_id,
            self.claims.len()
        )
    }
}
