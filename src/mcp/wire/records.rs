//! Wire types of evidence records (usage events, reviews, ratings) and their counts, as `get` shows them.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use super::SourceOutput;
use crate::domain::PublicId;
use crate::domain::evidence::{Rating, Review, UsageEvent};
use crate::service::lookup::{EvidenceItem, EvidencePage, EvidenceSummary};

/// Counts of evidence.
#[derive(Debug, Serialize, JsonSchema)]
pub struct EvidenceSummaryOutput {
    /// Active usage reports by result.
    pub usage: std::collections::BTreeMap<String, i64>,
    /// Active real-world usage reports.
    pub real_world_usage: i64,
    /// Active reviews by verdict.
    pub reviews: std::collections::BTreeMap<String, i64>,
    /// Active ratings by dimension.
    pub ratings: std::collections::BTreeMap<String, i64>,
    /// Retracted records (kept in history, out of the calculation).
    pub retracted: i64,
}

pub(super) fn evidence_summary_output(summary: &EvidenceSummary) -> EvidenceSummaryOutput {
    EvidenceSummaryOutput {
        usage: summary.usage_by_result.iter().cloned().collect(),
        real_world_usage: summary.real_world_usage,
        reviews: summary.reviews_by_verdict.iter().cloned().collect(),
        ratings: summary.ratings_by_dimension.iter().cloned().collect(),
        retracted: summary.retracted,
    }
}

/// A page of evidence records.
#[derive(Debug, Serialize, JsonSchema)]
pub struct EvidencePageOutput {
    /// Records, newest first.
    pub records: Vec<EvidenceRecordOutput>,
    /// Pass as evidence_cursor for the next page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// One evidence record: a usage event, review or rating.
#[derive(Debug, Serialize, JsonSchema)]
pub struct EvidenceRecordOutput {
    /// The record's ID.
    pub id: String,
    /// usage, review or rating.
    pub kind: String,
    /// active or retracted.
    pub status: String,
    /// What the record is about.
    pub target: String,
    /// The content item, when the target is a revision.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_content: Option<String>,
    /// The actor who made it.
    pub actor: String,
    /// Its root controller.
    pub root_controller: String,
    /// The realm it was made on.
    pub origin: String,
    /// When it was made.
    pub created_at: String,
    /// When it was retracted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retracted_at: Option<String>,
    /// Usage: the result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    /// Usage: production or real-world use.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub real_world_use: Option<bool>,
    /// Usage: the usage type.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage_type: Option<String>,
    /// Usage and ratings: the context facets.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, Value>>")]
    pub context: Option<Value>,
    /// Usage: metrics.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, Value>>")]
    pub metrics: Option<Value>,
    /// Usage: the note.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Usage: the experience it was reported with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub experience: Option<String>,
    /// Review: the verdict.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<String>,
    /// Review and rating: the confidence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    /// Review and rating: the rationale (Markdown, raw HTML neutralized).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rationale_markdown: Option<String>,
    /// Review: cited sources.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sources: Option<Vec<SourceOutput>>,
    /// Review and rating: the grounding usage event.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub based_on_usage: Option<String>,
    /// Review: none, test or real_world.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grounding: Option<String>,
    /// Rating: the dimension.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dimension: Option<String>,
    /// Rating: the score, 0–100.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// Rating: the normalized context key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_key: Option<String>,
}

fn base_record(
    id: &PublicId,
    kind: &str,
    status: &str,
    target: &PublicId,
    author: &crate::domain::evidence::RecordAuthor,
    created_at: chrono::DateTime<chrono::Utc>,
    retracted_at: Option<chrono::DateTime<chrono::Utc>>,
) -> EvidenceRecordOutput {
    EvidenceRecordOutput {
        id: id.as_str().to_owned(),
        kind: kind.to_owned(),
        status: status.to_owned(),
        target: target.as_str().to_owned(),
        target_content: None,
        actor: author.actor_id.as_str().to_owned(),
        root_controller: author.root_controller_id.as_str().to_owned(),
        origin: author.origin.clone(),
        created_at: created_at.to_rfc3339(),
        retracted_at: retracted_at.map(|time| time.to_rfc3339()),
        result: None,
        real_world_use: None,
        usage_type: None,
        context: None,
        metrics: None,
        note: None,
        experience: None,
        verdict: None,
        confidence: None,
        rationale_markdown: None,
        sources: None,
        based_on_usage: None,
        grounding: None,
        dimension: None,
        score: None,
        context_key: None,
    }
}

/// A usage event on the wire.
pub fn usage_output(usage: &UsageEvent) -> EvidenceRecordOutput {
    let mut output = base_record(
        &usage.id,
        "usage",
        usage.status.as_str(),
        &usage.target_id,
        &usage.author,
        usage.created_at,
        usage.retracted_at,
    );
    output.target_content = usage.target_content_id.as_ref().map(|id| id.as_str().to_owned());
    output.result = Some(usage.result.as_str().to_owned());
    output.real_world_use = Some(usage.real_world_use);
    output.usage_type = Some(usage.usage_type.clone());
    output.context = Some(usage.context.clone());
    output.context_key = Some(usage.context_key.to_string());
    output.metrics = Some(usage.metrics.clone());
    output.note = usage.note.clone();
    output.experience = usage.experience_id.as_ref().map(|id| id.as_str().to_owned());
    output
}

/// A review on the wire.
pub fn review_output(review: &Review) -> EvidenceRecordOutput {
    let mut output = base_record(
        &review.id,
        "review",
        review.status.as_str(),
        &review.target_id,
        &review.author,
        review.created_at,
        review.retracted_at,
    );
    output.target_content = review.target_content_id.as_ref().map(|id| id.as_str().to_owned());
    output.verdict = Some(review.verdict.as_str().to_owned());
    output.confidence = Some(review.confidence);
    output.rationale_markdown = Some(review.rationale_markdown.clone());
    output.sources = Some(
        review
            .sources
            .iter()
            .map(|source| SourceOutput {
                id: source.source_id.as_str().to_owned(),
                url: source.url.clone(),
                title: source.title.clone(),
                family: crate::domain::text::normalize_source_url(&source.url)
                    .map(|normalized| normalized.family)
                    .unwrap_or_default(),
            })
            .collect(),
    );
    output.based_on_usage = review.based_on_usage_id.as_ref().map(|id| id.as_str().to_owned());
    output.grounding = Some(review.grounding.as_str().to_owned());
    output
}

/// A rating on the wire.
pub fn rating_output(rating: &Rating) -> EvidenceRecordOutput {
    let mut output = base_record(
        &rating.id,
        "rating",
        rating.status.as_str(),
        &rating.target_id,
        &rating.author,
        rating.created_at,
        rating.retracted_at,
    );
    output.dimension = Some(rating.dimension.clone());
    output.score = Some(rating.score);
    output.confidence = Some(rating.confidence);
    output.context = Some(rating.context.clone());
    output.context_key = Some(rating.context_key.to_string());
    output.rationale_markdown = Some(rating.rationale_markdown.clone());
    output.based_on_usage = rating.based_on_usage_id.as_ref().map(|id| id.as_str().to_owned());
    output
}

pub(super) fn evidence_page_output(page: &EvidencePage) -> EvidencePageOutput {
    EvidencePageOutput {
        records: page
            .records
            .iter()
            .map(|record| match record {
                EvidenceItem::Usage(usage) => usage_output(usage),
                EvidenceItem::Review(review) => review_output(review),
                EvidenceItem::Rating(rating) => rating_output(rating),
            })
            .collect(),
        next_cursor: page.next_cursor.clone(),
    }
}
