//! Wire types of `submit_experience`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::SubjectInput;
use crate::mcp::call::ToolOutput;
use crate::service::limits;

// ---------------------------------------------------------------- submit_experience

/// One thing used in an experience.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = super::input_schema::drop_numeric_formats)]
pub struct UsedInput {
    /// A `cnt_` (resolved to its current revision), `rev_`, `clm_` or `ent_` ID.
    #[schemars(length(max = limits::MAX_ID_CHARACTERS))]
    pub id: String,
    /// success, partial, failure or unknown.
    #[schemars(length(max = limits::MAX_KEYWORD_CHARACTERS))]
    pub result: String,
    /// A note about this use.
    #[serde(default)]
    #[schemars(length(max = limits::MAX_NOTE_CHARACTERS))]
    pub note: Option<String>,
}

/// `submit_experience` input (spec §6.5).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = super::input_schema::drop_numeric_formats)]
pub struct SubmitExperienceInput {
    /// Title: one line, visible characters, no bidirectional controls.
    #[schemars(length(max = limits::MAX_TITLE_CHARACTERS))]
    pub title: String,
    /// Summary.
    #[serde(default)]
    #[schemars(length(max = limits::MAX_SUMMARY_CHARACTERS))]
    pub summary: String,
    /// Markdown body, at most 200 KB of UTF-8.
    #[serde(default)]
    #[schemars(length(max = limits::MAX_BODY_BYTES))]
    pub body_markdown: String,
    /// What the experience is about.
    #[serde(default)]
    #[schemars(length(max = limits::MAX_SUBJECTS))]
    pub subjects: Vec<SubjectInput>,
    /// Overall result: success, partial, failure or unknown.
    #[schemars(length(max = limits::MAX_KEYWORD_CHARACTERS))]
    pub result: String,
    /// True only for production or real-world use, not tests or simulations.
    #[serde(default)]
    pub real_world_use: bool,
    /// Context facets (scalar values), e.g. { "environment": "production" }; at most 1 KB once normalized to its
    /// key.
    #[serde(default)]
    #[schemars(schema_with = "super::input_schema::context_schema")]
    pub context: Option<serde_json::Value>,
    /// Configuration used (at most 16 KB of JSON).
    #[serde(default)]
    #[schemars(schema_with = "super::input_schema::auxiliary_object_schema")]
    pub configuration: Option<serde_json::Value>,
    /// Observations (at most 16 KB of JSON).
    #[serde(default)]
    #[schemars(schema_with = "super::input_schema::auxiliary_object_schema")]
    pub observations: Option<serde_json::Value>,
    /// Metrics (at most 16 KB of JSON).
    #[serde(default)]
    #[schemars(schema_with = "super::input_schema::auxiliary_object_schema")]
    pub metrics: Option<serde_json::Value>,
    /// What was used; each entry becomes a usage event linked to this experience.
    #[serde(default)]
    #[schemars(length(max = limits::MAX_USED_ENTRIES))]
    pub used: Vec<UsedInput>,
    /// Tags.
    #[serde(default)]
    #[schemars(length(max = limits::MAX_TAGS), inner(length(max = limits::MAX_TAG_CHARACTERS)))]
    pub tags: Vec<String>,
    /// A `spc_` ID or space name.
    #[serde(default)]
    #[schemars(length(max = limits::MAX_NAME_CHARACTERS))]
    pub space: Option<String>,
    /// Language tag.
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

/// `submit_experience` result.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SubmitExperienceOutput {
    /// The experience content item.
    pub id: String,
    /// Its revision.
    pub revision_id: String,
    /// One usage event per `used` entry, in order.
    pub usage_ids: Vec<String>,
    /// The usage events that count for nothing because their target is the work of your own root controller.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub self_evidence_usage_ids: Vec<String>,
    /// Why those usage events count for nothing, when there are any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl ToolOutput for SubmitExperienceOutput {
    fn summary(&self) -> String {
        let line = format!(
            "Recorded experience {} with {} usage events.",
            self.id,
            self.usage_ids.len()
        );
        match &self.note {
            Some(note) => format!("{line} {note}"),
            None => line,
        }
    }
}
