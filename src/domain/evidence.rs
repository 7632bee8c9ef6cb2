//! Evidence records: usage events, reviews and ratings, as stored, and the evidence value types (usage outcome,
//! review verdict, grounding) that every layer passes typed: the trust engine reads them, the store converts them
//! to and from column text, the wire adapters to and from their wire names.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::context::ContextKey;
use super::ids::PublicId;

/// Outcome of a use (spec §6.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum UsageOutcome {
    /// It worked.
    Success,
    /// It partly worked.
    Partial,
    /// It did not work.
    Failure,
    /// The outcome is not known.
    Unknown,
}

impl UsageOutcome {
    /// Every outcome.
    pub const ALL: [UsageOutcome; 4] = [
        UsageOutcome::Success,
        UsageOutcome::Partial,
        UsageOutcome::Failure,
        UsageOutcome::Unknown,
    ];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            UsageOutcome::Success => "success",
            UsageOutcome::Partial => "partial",
            UsageOutcome::Failure => "failure",
            UsageOutcome::Unknown => "unknown",
        }
    }

    /// Parses a wire name.
    pub fn parse(name: &str) -> Option<UsageOutcome> {
        match name {
            "success" => Some(UsageOutcome::Success),
            "partial" => Some(UsageOutcome::Partial),
            "failure" => Some(UsageOutcome::Failure),
            "unknown" => Some(UsageOutcome::Unknown),
            _ => None,
        }
    }
}

/// A reviewer's verdict (spec §6.7; trust model §2.2 verdict table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verdict {
    /// Correct.
    Confirmed,
    /// Correct with small problems.
    MostlyCorrect,
    /// Doubtful.
    Questionable,
    /// Misleading.
    Misleading,
    /// Contradicted by evidence.
    Contradicted,
    /// False.
    False,
    /// Was right, is no longer.
    Outdated,
    /// The reviewer could not check it.
    CannotVerify,
}

impl Verdict {
    /// Every verdict.
    pub const ALL: [Verdict; 8] = [
        Verdict::Confirmed,
        Verdict::MostlyCorrect,
        Verdict::Questionable,
        Verdict::Misleading,
        Verdict::Contradicted,
        Verdict::False,
        Verdict::Outdated,
        Verdict::CannotVerify,
    ];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Confirmed => "confirmed",
            Verdict::MostlyCorrect => "mostly_correct",
            Verdict::Questionable => "questionable",
            Verdict::Misleading => "misleading",
            Verdict::Contradicted => "contradicted",
            Verdict::False => "false",
            Verdict::Outdated => "outdated",
            Verdict::CannotVerify => "cannot_verify",
        }
    }

    /// Parses a wire name.
    pub fn parse(name: &str) -> Option<Verdict> {
        Verdict::ALL.into_iter().find(|verdict| verdict.as_str() == name)
    }
}

/// What a review is grounded in; the service derives it from the review's `based_on_usage`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Grounding {
    /// No usage of the reviewer's own backs the review.
    Ungrounded,
    /// The reviewer's own test usage backs the review.
    OwnTestUsage,
    /// The reviewer's own real-world usage backs the review.
    OwnRealWorldUsage,
}

impl Grounding {
    /// Every grounding.
    pub const ALL: [Grounding; 3] = [
        Grounding::Ungrounded,
        Grounding::OwnTestUsage,
        Grounding::OwnRealWorldUsage,
    ];

    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Grounding::Ungrounded => "none",
            Grounding::OwnTestUsage => "test",
            Grounding::OwnRealWorldUsage => "real_world",
        }
    }

    /// Parses a stored name.
    pub fn parse(name: &str) -> Option<Grounding> {
        Grounding::ALL.into_iter().find(|grounding| grounding.as_str() == name)
    }
}

/// Whether an evidence record still counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordStatus {
    /// Counts.
    Active,
    /// Retracted by its author; kept in history, out of the calculation.
    Retracted,
}

impl RecordStatus {
    /// The stored and wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            RecordStatus::Active => "active",
            RecordStatus::Retracted => "retracted",
        }
    }

    /// Parses a stored name.
    pub fn parse(name: &str) -> Option<RecordStatus> {
        match name {
            "active" => Some(RecordStatus::Active),
            "retracted" => Some(RecordStatus::Retracted),
            _ => None,
        }
    }
}

/// A controller's standing when it made a record: what the strong-refutation gate and review weights read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StandingSnapshot {
    /// The controller's reputation multiplier ρ at the time.
    pub reputation: f64,
    /// How many earlier active evidence records the controller had.
    pub prior_records: i32,
    /// When the controller's account was created.
    pub account_created_at: DateTime<Utc>,
}

/// Who made a record.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordAuthor {
    /// The acting actor.
    pub actor_id: PublicId,
    /// Its root controller.
    pub root_controller_id: PublicId,
    /// The realm the record was made on.
    pub origin: String,
    /// Whether its origin's proof was verified when it arrived (this realm's own records: always). Remote evidence
    /// without a verified proof counts nothing.
    pub origin_proof_verified: bool,
}

/// A usage event (`use_…`).
#[derive(Debug, Clone, PartialEq)]
pub struct UsageEvent {
    /// `use_…`
    pub id: PublicId,
    /// The used object: a revision, claim or entity (a content item is resolved to its current revision).
    pub target_id: PublicId,
    /// The content item when the target is a revision.
    pub target_content_id: Option<PublicId>,
    /// Who used it.
    pub author: RecordAuthor,
    /// `implementation`, `execution`, … (open-ended).
    pub usage_type: String,
    /// How it went.
    pub result: UsageOutcome,
    /// Production or real-world use, not a test or simulation.
    pub real_world_use: bool,
    /// The context facets as given.
    pub context: Value,
    /// The normalized context key.
    pub context_key: ContextKey,
    /// Free-form metrics.
    pub metrics: Value,
    /// A note.
    pub note: Option<String>,
    /// The experience content item it was reported with, if any.
    pub experience_id: Option<PublicId>,
    /// The controller's standing when it was made.
    pub standing: StandingSnapshot,
    /// Active or retracted.
    pub status: RecordStatus,
    /// When it was retracted.
    pub retracted_at: Option<DateTime<Utc>>,
    /// When it was made.
    pub created_at: DateTime<Utc>,
}

/// A source cited by a review.
#[derive(Debug, Clone, PartialEq)]
pub struct CitedSource {
    /// The source.
    pub source_id: PublicId,
    /// The URL.
    pub url: String,
    /// A title, when given.
    pub title: Option<String>,
}

/// A review (`rvw_…`).
#[derive(Debug, Clone, PartialEq)]
pub struct Review {
    /// `rvw_…`
    pub id: PublicId,
    /// The reviewed revision or claim.
    pub target_id: PublicId,
    /// The content item when the target is a revision.
    pub target_content_id: Option<PublicId>,
    /// Who reviewed.
    pub author: RecordAuthor,
    /// The verdict.
    pub verdict: Verdict,
    /// Confidence in [0, 1].
    pub confidence: f64,
    /// Why.
    pub rationale_markdown: String,
    /// Sources cited.
    pub sources: Vec<CitedSource>,
    /// The reviewer's own usage the review is based on.
    pub based_on_usage_id: Option<PublicId>,
    /// Derived from `based_on_usage_id`.
    pub grounding: Grounding,
    /// The controller's standing when it was made.
    pub standing: StandingSnapshot,
    /// Active or retracted.
    pub status: RecordStatus,
    /// When it was retracted.
    pub retracted_at: Option<DateTime<Utc>>,
    /// When it was made.
    pub created_at: DateTime<Utc>,
}

/// A rating (`rat_…`).
#[derive(Debug, Clone, PartialEq)]
pub struct Rating {
    /// `rat_…`
    pub id: PublicId,
    /// The rated entity or content item.
    pub target_id: PublicId,
    /// Who rated.
    pub author: RecordAuthor,
    /// The dimension, lower_snake_case.
    pub dimension: String,
    /// 0–100.
    pub score: f64,
    /// Confidence in [0, 1].
    pub confidence: f64,
    /// The context facets as given.
    pub context: Value,
    /// The normalized context key (`*` for none).
    pub context_key: ContextKey,
    /// The rater's own usage the rating is based on.
    pub based_on_usage_id: Option<PublicId>,
    /// Why.
    pub rationale_markdown: String,
    /// Active or retracted.
    pub status: RecordStatus,
    /// When it was retracted.
    pub retracted_at: Option<DateTime<Utc>>,
    /// When it was made.
    pub created_at: DateTime<Utc>,
}
