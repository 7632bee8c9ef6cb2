//! Wire types of `submit_experience`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::SubjectInput;
use crate::mcp::call::ToolOutput;

// ---------------------------------------------------------------- submit_experience

/// One thing used in an experience.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UsedInput {
    /// A `cnt_` (resolved to its current revision), `rev_`, `clm_` or `ent_` ID.
    pub id: String,
    /// success, partial, failure or unknown.
    pub result: String,
    /// A note about this use.
    #[serde(default)]
    pub note: Option<String>,
}

/// `submit_experience` input (spec §6.5).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SubmitExperienceInput {
    /// Title.
    pub title: String,
    /// Summary.
    #[serde(default)]
    pub summary: String,
    /// Markdown body.
    #[serde(default)]
    pub body_markdown: String,
    /// What the experience is about.
    #[serde(default)]
    pub subjects: Vec<SubjectInput>,
    /// Overall result: success, partial, failure or unknown.
    pub result: String,
    /// True only for production or real-world use, not tests or simulations.
    #[serde(default)]
    pub real_world_use: bool,
    /// Context facets (scalar values), e.g. { "environment": "production" }.
    #[serde(default)]
    pub context: Option<serde_json::Value>,
    /// Configuration used.
    #[serde(default)]
    pub configuration: Option<serde_json::Value>,
    /// Observations.
    #[serde(default)]
    pub observations: Option<serde_json::Value>,
    /// Metrics.
    #[serde(default)]
    pub metrics: Option<serde_json::Value>,
    /// What was used; each entry becomes a usage event linked to this experience.
    #[serde(default)]
    pub used: Vec<UsedInput>,
    /// Tags.
    #[serde(default)]
    pub tags: Vec<String>,
    /// A `spc_` ID or space name.
    #[serde(default)]
    pub space: Option<String>,
    /// Language tag.
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
