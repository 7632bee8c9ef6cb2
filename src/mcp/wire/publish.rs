//! Wire types of `publish`, with the input shapes it shares with other writes (subjects, claims, sources, relations).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::mcp::call::ToolOutput;
use crate::service::limits;

// ---------------------------------------------------------------- shared input shapes

/// A subject: an `ent_` ID, or an entity named by `name` and `type` (found by normalized name and type, or created).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
#[schemars(transform = super::input_schema::drop_numeric_formats)]
pub enum SubjectInput {
    /// An existing entity's ID.
    Id(#[schemars(length(max = limits::MAX_ID_CHARACTERS))] String),
    /// An entity by name and type.
    Named(NamedSubjectInput),
}

/// An entity named by type and name.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = super::input_schema::drop_numeric_formats)]
pub struct NamedSubjectInput {
    /// The entity's name, e.g. "PostgreSQL": one line, visible characters, no bidirectional controls.
    #[schemars(length(max = limits::MAX_NAME_CHARACTERS))]
    pub name: String,
    /// The entity's type, lower_snake_case, e.g. "database", "library", "method".
    #[serde(rename = "type")]
    #[schemars(length(max = limits::MAX_KEYWORD_CHARACTERS))]
    pub entity_type: String,
    /// Other names, used when the entity is created; each as a name.
    #[serde(default)]
    #[schemars(length(max = limits::MAX_ALIASES), inner(length(max = limits::MAX_NAME_CHARACTERS)))]
    pub aliases: Vec<String>,
    /// A description, used when the entity is created.
    #[serde(default)]
    #[schemars(length(max = limits::MAX_SUMMARY_CHARACTERS))]
    pub description: Option<String>,
}

/// A claim: `{ "text": "…" }` or just the text.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
#[schemars(transform = super::input_schema::drop_numeric_formats)]
pub enum ClaimInput {
    /// The claim as an object.
    Object(ClaimObjectInput),
    /// The claim text.
    Text(#[schemars(length(max = limits::MAX_CLAIM_CHARACTERS))] String),
}

/// A claim object.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = super::input_schema::drop_numeric_formats)]
pub struct ClaimObjectInput {
    /// One checkable statement.
    #[schemars(length(max = limits::MAX_CLAIM_CHARACTERS))]
    pub text: String,
}

/// A source: a URL, a `src_` ID, or `{ "url", "title" }` / `{ "id" }`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
#[schemars(transform = super::input_schema::drop_numeric_formats)]
pub enum SourceInput {
    /// A URL or `src_` ID.
    Text(#[schemars(length(max = limits::MAX_SOURCE_URL_CHARACTERS))] String),
    /// A source object.
    Object(SourceObjectInput),
}

/// A source object.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = super::input_schema::drop_numeric_formats)]
pub struct SourceObjectInput {
    /// An http(s) URL (at most 2048 characters, also once normalized).
    #[serde(default)]
    #[schemars(length(max = limits::MAX_SOURCE_URL_CHARACTERS))]
    pub url: Option<String>,
    /// An existing `src_` ID.
    #[serde(default)]
    #[schemars(length(max = limits::MAX_ID_CHARACTERS))]
    pub id: Option<String>,
    /// A title: one line, visible characters, no bidirectional controls.
    #[serde(default)]
    #[schemars(length(max = limits::MAX_TITLE_CHARACTERS))]
    pub title: Option<String>,
}

/// A relation to another object.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = super::input_schema::drop_numeric_formats)]
pub struct RelationInput {
    /// `corrects`, `alternative_to`, `known_issue_of`, `supersedes` or `derived_from`.
    #[serde(rename = "type")]
    #[schemars(length(max = limits::MAX_KEYWORD_CHARACTERS))]
    pub relation_type: String,
    /// The related `cnt_`, `rev_`, `ent_` or `clm_` ID.
    #[schemars(length(max = limits::MAX_ID_CHARACTERS))]
    pub target: String,
    /// For `alternative_to`: simpler, cheaper, faster, safer, more_reliable, more_open, more_available,
    /// lower_resource_use, easier_to_integrate or other.
    #[serde(default)]
    #[schemars(length(max = limits::MAX_KEYWORD_CHARACTERS))]
    pub reason: Option<String>,
}

// ---------------------------------------------------------------- publish

/// `publish` input (spec §6.4).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = super::input_schema::drop_numeric_formats)]
pub struct PublishInput {
    /// Open-ended, lower_snake_case: claim, guide, procedure, warning, configuration, note, comparison,
    /// recommendation, question, answer, code, prompt, skill, dataset, …
    #[schemars(length(max = limits::MAX_KEYWORD_CHARACTERS))]
    pub content_type: String,
    /// Title: one line, visible characters, no bidirectional controls.
    #[schemars(length(max = limits::MAX_TITLE_CHARACTERS))]
    pub title: String,
    /// One-paragraph summary.
    #[serde(default)]
    #[schemars(length(max = limits::MAX_SUMMARY_CHARACTERS))]
    pub summary: String,
    /// Markdown body, at most 200 KB of UTF-8 (the binding limit; `maxLength` is the character count it implies).
    /// Raw HTML is neutralized.
    #[serde(default)]
    #[schemars(length(max = limits::MAX_BODY_BYTES))]
    pub body_markdown: String,
    /// Type-specific data (at most 64 KB of JSON), validated for code (language, runtime, license), prompt
    /// (target_model, input_schema, output_schema) and skill (name, version, dependencies); any object otherwise.
    #[serde(default)]
    #[schemars(schema_with = "super::input_schema::structured_data_schema")]
    pub structured_data: Option<serde_json::Value>,
    /// A `cnt_` ID you authored: publish a new revision of it.
    #[serde(default)]
    #[schemars(length(max = limits::MAX_ID_CHARACTERS))]
    pub revision_of: Option<String>,
    /// What changed in this revision.
    #[serde(default)]
    #[schemars(length(max = limits::MAX_NOTE_CHARACTERS))]
    pub change_note: Option<String>,
    /// What the content is about: `ent_` IDs or `{ "name", "type" }` objects.
    #[serde(default)]
    #[schemars(length(max = limits::MAX_SUBJECTS))]
    pub subjects: Vec<SubjectInput>,
    /// Checkable statements; equivalent existing claims are linked instead of duplicated.
    #[serde(default)]
    #[schemars(length(max = limits::MAX_CLAIMS))]
    pub claims: Vec<ClaimInput>,
    /// Sources: URLs or `src_` IDs.
    #[serde(default)]
    #[schemars(length(max = limits::MAX_SOURCES))]
    pub sources: Vec<SourceInput>,
    /// Relations to other content.
    #[serde(default)]
    #[schemars(length(max = limits::MAX_RELATIONS))]
    pub relations: Vec<RelationInput>,
    /// Tags.
    #[serde(default)]
    #[schemars(length(max = limits::MAX_TAGS), inner(length(max = limits::MAX_TAG_CHARACTERS)))]
    pub tags: Vec<String>,
    /// A `spc_` ID or space name; the default space when absent.
    #[serde(default)]
    #[schemars(length(max = limits::MAX_NAME_CHARACTERS))]
    pub space: Option<String>,
    /// Language tag, e.g. "en".
    #[serde(default)]
    #[schemars(length(max = limits::MAX_LANGUAGE_CHARACTERS))]
    pub language: Option<String>,
    /// Makes retries safe: the same key with the same request returns the original result. 1 to 128 characters from
    /// A-Z, a-z, 0-9, `.`, `_`, `:` and `-` (a UUID or ULID fits); keys are stored, so never put a secret in one.
    #[serde(default)]
    #[schemars(
        length(min = 1, max = limits::MAX_IDEMPOTENCY_KEY_CHARACTERS),
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
