//! MCP wire types: the JSON shapes of the spec, kept apart from domain types and converted by hand.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::call::ToolOutput;
use crate::service::actors::WhoAmI;

/// `whoami` takes no arguments.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WhoamiInput {}

/// `whoami`'s result (spec §6.9).
#[derive(Debug, Serialize, JsonSchema)]
pub struct WhoamiOutput {
    /// The caller's actor ID.
    pub actor_id: String,
    /// `usr`, `org` or `ai`.
    pub actor_type: String,
    /// The caller's display name.
    pub display_name: String,
    /// The accountable controller (absent for actors without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub controller: Option<String>,
    /// Whether an e-mail address was verified.
    pub verified_by_email: bool,
    /// Whether a domain was verified.
    pub verified_by_domain: bool,
    /// The root controller's reputation: 0.5 is neutral, higher means its judgments agreed with later outcomes.
    pub reputation: f64,
    /// The scopes of the key used.
    pub scopes: Vec<String>,
    /// The write limit of the caller's root controller and what is left of it this hour.
    pub rate_limits: RateLimitsOutput,
}

/// Write allowance.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RateLimitsOutput {
    /// Successful writes allowed per root controller per sliding hour.
    pub writes_per_hour: u32,
    /// Writes left in the current sliding hour.
    pub remaining: u32,
}

impl From<WhoAmI> for WhoamiOutput {
    fn from(whoami: WhoAmI) -> WhoamiOutput {
        WhoamiOutput {
            actor_id: whoami.actor.id.into_string(),
            actor_type: whoami.actor.actor_type.as_str().to_owned(),
            display_name: whoami.actor.display_name,
            controller: whoami.actor.controller.map(|controller| controller.into_string()),
            verified_by_email: whoami.actor.verified_by_email,
            verified_by_domain: whoami.actor.verified_by_domain,
            reputation: whoami.reputation,
            scopes: whoami.scopes.names().into_iter().map(str::to_owned).collect(),
            rate_limits: RateLimitsOutput {
                writes_per_hour: whoami.allowance.writes_per_hour,
                remaining: whoami.allowance.remaining,
            },
        }
    }
}

impl ToolOutput for WhoamiOutput {
    fn summary(&self) -> String {
        format!(
            "You are {} ({}, {}), scopes {}; {} of {} writes left this hour.",
            self.display_name,
            self.actor_id,
            self.actor_type,
            self.scopes.join(","),
            self.rate_limits.remaining,
            self.rate_limits.writes_per_hour
        )
    }
}

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
    /// Makes retries safe: the same key with the same request returns the original result.
    #[serde(default)]
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
    /// Makes retries safe.
    #[serde(default)]
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
}

impl ToolOutput for SubmitExperienceOutput {
    fn summary(&self) -> String {
        format!(
            "Recorded experience {} with {} usage events.",
            self.id,
            self.usage_ids.len()
        )
    }
}

// ---------------------------------------------------------------- report_usage, review, rate

/// `report_usage` input (spec §6.6). Pass only `retract` (and optionally `idempotency_key`) to retract one of
/// your usage events.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReportUsageInput {
    /// A `cnt_` (resolved to its current revision), `rev_`, `clm_` or `ent_` ID.
    #[serde(default)]
    pub target: Option<String>,
    /// implementation, execution, configuration, research, decision, test, … (lower_snake_case).
    #[serde(default)]
    pub usage_type: Option<String>,
    /// success, partial, failure or unknown.
    #[serde(default)]
    pub result: Option<String>,
    /// True only for production or real-world use, not tests or simulations.
    #[serde(default)]
    pub real_world_use: Option<bool>,
    /// Context facets (scalar values).
    #[serde(default)]
    pub context: Option<serde_json::Value>,
    /// Metrics.
    #[serde(default)]
    pub metrics: Option<serde_json::Value>,
    /// A note.
    #[serde(default)]
    pub note: Option<String>,
    /// A `use_` ID of yours to retract instead of reporting.
    #[serde(default)]
    pub retract: Option<String>,
    /// Makes retries safe.
    #[serde(default)]
    pub idempotency_key: Option<String>,
}

/// `review` input (spec §6.7). Pass only `retract` to retract one of your reviews.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReviewInput {
    /// A `cnt_` (resolved to its current revision), `rev_` or `clm_` ID.
    #[serde(default)]
    pub target: Option<String>,
    /// confirmed, mostly_correct, questionable, misleading, contradicted, false, outdated or cannot_verify.
    #[serde(default)]
    pub verdict: Option<String>,
    /// Your confidence, 0 to 1.
    #[serde(default)]
    pub confidence: Option<f64>,
    /// Why (Markdown).
    #[serde(default)]
    pub rationale_markdown: Option<String>,
    /// Sources: URLs or `src_` IDs.
    #[serde(default)]
    pub sources: Vec<SourceInput>,
    /// One of your own `use_` IDs of this target; grounded reviews weigh more.
    #[serde(default)]
    pub based_on_usage: Option<String>,
    /// A `rvw_` ID of yours to retract instead of reviewing.
    #[serde(default)]
    pub retract: Option<String>,
    /// Makes retries safe.
    #[serde(default)]
    pub idempotency_key: Option<String>,
}

/// `rate` input (spec §6.8). Pass only `retract` to retract one of your ratings.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RateInput {
    /// An `ent_` or `cnt_` ID.
    #[serde(default)]
    pub target: Option<String>,
    /// Context facets (scalar values); ratings without context weigh less in compare.
    #[serde(default)]
    pub context: Option<serde_json::Value>,
    /// lower_snake_case: accuracy, usefulness, clarity, reliability, cost, speed, safety, maintainability, …
    #[serde(default)]
    pub dimension: Option<String>,
    /// 0 to 100.
    #[serde(default)]
    pub score: Option<f64>,
    /// Your confidence, 0 to 1 (default 1).
    #[serde(default)]
    pub confidence: Option<f64>,
    /// One of your own `use_` IDs.
    #[serde(default)]
    pub based_on_usage: Option<String>,
    /// Why (Markdown).
    #[serde(default)]
    pub rationale_markdown: Option<String>,
    /// A `rat_` ID of yours to retract instead of rating.
    #[serde(default)]
    pub retract: Option<String>,
    /// Makes retries safe.
    #[serde(default)]
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
}

impl ToolOutput for EvidenceOutput {
    fn summary(&self) -> String {
        match (&self.status, &self.target_revision) {
            (Some(status), _) => format!("{} is {status}.", self.id),
            (None, Some(revision)) => format!("Recorded {} on revision {revision}.", self.id),
            (None, None) => format!("Recorded {}.", self.id),
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
