//! Wire types of the evidence writes `report_usage`, `review` and `rate`, and their retraction form.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::SourceInput;
use crate::mcp::call::ToolOutput;
use crate::service::limits;

// ---------------------------------------------------------------- report_usage, review, rate

/// `report_usage` input (spec §6.6). Pass only `retract` (and optionally `idempotency_key`) to retract one of
/// your usage events.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = super::input_schema::drop_numeric_formats)]
pub struct ReportUsageInput {
    /// A `cnt_` (resolved to its current revision), `rev_`, `clm_` or `ent_` ID.
    #[serde(default)]
    #[schemars(length(max = limits::MAX_ID_CHARACTERS))]
    pub target: Option<String>,
    /// implementation, execution, configuration, research, decision, test, … (lower_snake_case).
    #[serde(default)]
    #[schemars(length(max = limits::MAX_KEYWORD_CHARACTERS))]
    pub usage_type: Option<String>,
    /// success, partial, failure or unknown.
    #[serde(default)]
    #[schemars(length(max = limits::MAX_KEYWORD_CHARACTERS))]
    pub result: Option<String>,
    /// True only for production or real-world use, not tests or simulations.
    #[serde(default)]
    pub real_world_use: Option<bool>,
    /// Context facets (scalar values); at most 1 KB once normalized to its key.
    #[serde(default)]
    #[schemars(schema_with = "super::input_schema::context_schema")]
    pub context: Option<serde_json::Value>,
    /// Metrics (at most 16 KB of JSON).
    #[serde(default)]
    #[schemars(schema_with = "super::input_schema::auxiliary_object_schema")]
    pub metrics: Option<serde_json::Value>,
    /// A note.
    #[serde(default)]
    #[schemars(length(max = limits::MAX_NOTE_CHARACTERS))]
    pub note: Option<String>,
    /// A `use_` ID of yours to retract instead of reporting.
    #[serde(default)]
    #[schemars(length(max = limits::MAX_ID_CHARACTERS))]
    pub retract: Option<String>,
    /// Makes retries safe: the same key with the same request returns the original result. 1 to 128 characters from
    /// A-Z, a-z, 0-9, `.`, `_`, `:` and `-` (a UUID or ULID fits); keys are stored, so never put a secret in one.
    #[serde(default)]
    #[schemars(
        length(min = 1, max = limits::MAX_IDEMPOTENCY_KEY_CHARACTERS),
        pattern(crate::service::writes::IDEMPOTENCY_KEY_PATTERN)
    )]
    pub idempotency_key: Option<String>,
}

/// `review` input (spec §6.7). Pass only `retract` to retract one of your reviews.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = super::input_schema::drop_numeric_formats)]
pub struct ReviewInput {
    /// A `cnt_` (resolved to its current revision), `rev_` or `clm_` ID.
    #[serde(default)]
    #[schemars(length(max = limits::MAX_ID_CHARACTERS))]
    pub target: Option<String>,
    /// confirmed, mostly_correct, questionable, misleading, contradicted, false, outdated or cannot_verify.
    #[serde(default)]
    #[schemars(length(max = limits::MAX_KEYWORD_CHARACTERS))]
    pub verdict: Option<String>,
    /// Your confidence, 0 to 1.
    #[serde(default)]
    #[schemars(range(min = limits::MIN_CONFIDENCE, max = limits::MAX_CONFIDENCE))]
    pub confidence: Option<f64>,
    /// Why (Markdown).
    #[serde(default)]
    #[schemars(length(max = limits::MAX_NOTE_CHARACTERS))]
    pub rationale_markdown: Option<String>,
    /// Sources: URLs or `src_` IDs.
    #[serde(default)]
    #[schemars(length(max = limits::MAX_SOURCES))]
    pub sources: Vec<SourceInput>,
    /// One of your own `use_` IDs of this target; grounded reviews weigh more.
    #[serde(default)]
    #[schemars(length(max = limits::MAX_ID_CHARACTERS))]
    pub based_on_usage: Option<String>,
    /// A `rvw_` ID of yours to retract instead of reviewing.
    #[serde(default)]
    #[schemars(length(max = limits::MAX_ID_CHARACTERS))]
    pub retract: Option<String>,
    /// Makes retries safe: the same key with the same request returns the original result. 1 to 128 characters from
    /// A-Z, a-z, 0-9, `.`, `_`, `:` and `-` (a UUID or ULID fits); keys are stored, so never put a secret in one.
    #[serde(default)]
    #[schemars(
        length(min = 1, max = limits::MAX_IDEMPOTENCY_KEY_CHARACTERS),
        pattern(crate::service::writes::IDEMPOTENCY_KEY_PATTERN)
    )]
    pub idempotency_key: Option<String>,
}

/// `rate` input (spec §6.8). Pass only `retract` to retract one of your ratings.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = super::input_schema::drop_numeric_formats)]
pub struct RateInput {
    /// An `ent_` or `cnt_` ID.
    #[serde(default)]
    #[schemars(length(max = limits::MAX_ID_CHARACTERS))]
    pub target: Option<String>,
    /// Context facets (scalar values); ratings without context weigh less in compare. At most 1 KB once normalized
    /// to its key.
    #[serde(default)]
    #[schemars(schema_with = "super::input_schema::context_schema")]
    pub context: Option<serde_json::Value>,
    /// lower_snake_case: accuracy, usefulness, clarity, reliability, cost, speed, safety, maintainability, …
    #[serde(default)]
    #[schemars(length(max = limits::MAX_DIMENSION_CHARACTERS))]
    pub dimension: Option<String>,
    /// 0 to 100.
    #[serde(default)]
    #[schemars(range(min = limits::MIN_RATING_SCORE, max = limits::MAX_RATING_SCORE))]
    pub score: Option<f64>,
    /// Your confidence, 0 to 1 (default 1).
    #[serde(default)]
    #[schemars(range(min = limits::MIN_CONFIDENCE, max = limits::MAX_CONFIDENCE))]
    pub confidence: Option<f64>,
    /// One of your own `use_` IDs.
    #[serde(default)]
    #[schemars(length(max = limits::MAX_ID_CHARACTERS))]
    pub based_on_usage: Option<String>,
    /// Why (Markdown).
    #[serde(default)]
    #[schemars(length(max = limits::MAX_NOTE_CHARACTERS))]
    pub rationale_markdown: Option<String>,
    /// A `rat_` ID of yours to retract instead of rating.
    #[serde(default)]
    #[schemars(length(max = limits::MAX_ID_CHARACTERS))]
    pub retract: Option<String>,
    /// Makes retries safe: the same key with the same request returns the original result. 1 to 128 characters from
    /// A-Z, a-z, 0-9, `.`, `_`, `:` and `-` (a UUID or ULID fits); keys are stored, so never put a secret in one.
    #[serde(default)]
    #[schemars(
        length(min = 1, max = limits::MAX_IDEMPOTENCY_KEY_CHARACTERS),
        pattern(crate::service::writes::IDEMPOTENCY_KEY_PATTERN)
    )]
    pub idempotency_key: Option<String>,
}

/// The result of `report_usage`, `review` and `rate`: the record created, or the record retracted.
#[derive(Debug, Default, Serialize, JsonSchema)]
pub struct EvidenceOutput {
    /// The record's ID (`use_`, `rvw_` or `rat_`).
    pub id: String,
    /// The exact revision the evidence is tied to, when the target was content.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_revision: Option<String>,
    /// After a retraction: `retracted`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// After a retraction: the record's target.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// After a retraction: true when the record had already been retracted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub already_retracted: Option<bool>,
    /// A new usage report or rating: false when it weighs nothing because the target is the work of your own root
    /// controller (self-evidence); it is kept and listed all the same.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counts_toward_trust: Option<bool>,
    /// Why the record counts for nothing, when it does not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl ToolOutput for EvidenceOutput {
    fn summary(&self) -> String {
        let line = match (&self.status, &self.target_revision) {
            (Some(status), _) => format!("{} is {status}.", self.id),
            (None, Some(revision)) => format!("Recorded {} on revision {revision}.", self.id),
            (None, None) => format!("Recorded {}.", self.id),
        };
        match &self.note {
            Some(note) => format!("{line} {note}"),
            None => line,
        }
    }
}

impl ReportUsageInput {
    /// Whether any field besides `retract` and `idempotency_key` is set.
    pub fn other_fields_given(&self) -> bool {
        self.target.is_some()
            || self.usage_type.is_some()
            || self.result.is_some()
            || self.real_world_use.is_some()
            || self.context.is_some()
            || self.metrics.is_some()
            || self.note.is_some()
    }
}

impl ReviewInput {
    /// Whether any field besides `retract` and `idempotency_key` is set.
    pub fn other_fields_given(&self) -> bool {
        self.target.is_some()
            || self.verdict.is_some()
            || self.confidence.is_some()
            || self.rationale_markdown.is_some()
            || !self.sources.is_empty()
            || self.based_on_usage.is_some()
    }
}

impl RateInput {
    /// Whether any field besides `retract` and `idempotency_key` is set.
    pub fn other_fields_given(&self) -> bool {
        self.target.is_some()
            || self.context.is_some()
            || self.dimension.is_some()
            || self.score.is_some()
            || self.confidence.is_some()
            || self.based_on_usage.is_some()
            || self.rationale_markdown.is_some()
    }
}
