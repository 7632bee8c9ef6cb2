//! Wire types of `compare` and their conversion from the service's comparison.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{TrustBriefOutput, round, trust_brief};
use crate::mcp::call::ToolOutput;
use crate::service::compare::Comparison;
use crate::service::limits;

// ---------------------------------------------------------------- compare

/// `compare` input (spec §6.3).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = super::input_schema::drop_numeric_formats)]
pub struct CompareInput {
    /// 2–10 ent_ or cnt_ IDs.
    #[schemars(
        length(min = limits::MIN_COMPARE_ITEMS, max = limits::MAX_COMPARE_ITEMS),
        inner(length(max = limits::MAX_ID_CHARACTERS))
    )]
    pub ids: Vec<String>,
    /// Context facets (scalar values), e.g. { "language": "python", "scale": "small" }; at most 1 KB once
    /// normalized to its key.
    #[serde(default)]
    #[schemars(schema_with = "super::input_schema::context_schema")]
    pub context: Option<Value>,
    /// Dimensions to compare, lower_snake_case; default: every dimension rated on any of the items.
    #[serde(default)]
    #[schemars(
        length(max = limits::MAX_COMPARE_DIMENSIONS),
        inner(length(max = limits::MAX_DIMENSION_CHARACTERS))
    )]
    pub dimensions: Vec<String>,
    /// Whose evidence scores and trust weigh: all (default) or first_party (this organization's alone).
    #[serde(default)]
    #[schemars(length(max = limits::MAX_KEYWORD_CHARACTERS))]
    pub trust_view: Option<String>,
}

/// One item's score on one dimension.
#[derive(Debug, Serialize, JsonSchema)]
pub struct DimensionScoreOutput {
    /// 0–100; absent when nobody rated this dimension.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// 90% interval on the 0–100 scale.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval: Option<[f64; 2]>,
    /// Independent raters behind the score.
    pub independent_raters: u32,
    /// `context` when computed in the requested context (or a parent context), `all_contexts` when it fell back
    /// because the context had fewer than 3 independent raters.
    pub source: String,
    /// The context key the score was computed for.
    pub context_key: String,
    /// Independent raters in the requested context itself.
    pub context_raters: u32,
}

/// A relevant experience.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ExperienceOutput {
    /// The experience (cnt_).
    pub id: String,
    /// Its title.
    pub title: String,
    /// Its summary.
    pub summary: String,
    /// Its reported result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    /// Its context key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_key: Option<String>,
    /// Whether it was made in the requested context.
    pub same_context: bool,
    /// Its status.
    pub status: String,
    /// Its trust.
    pub trust: TrustBriefOutput,
}

/// One compared item.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ComparedItemOutput {
    /// The item's ID.
    pub id: String,
    /// entity or content.
    pub kind: String,
    /// Entity type or content type.
    #[serde(rename = "type")]
    pub object_type: String,
    /// Name or title.
    pub title: String,
    /// Trust status.
    pub status: String,
    /// Trust figures.
    pub trust: TrustBriefOutput,
    /// Scores by dimension.
    pub dimensions: std::collections::BTreeMap<String, DimensionScoreOutput>,
    /// Up to three relevant, trusted experiences.
    pub experiences: Vec<ExperienceOutput>,
}

/// A known trade-off.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TradeOffOutput {
    /// The content that declares it.
    pub declared_by: String,
    /// The compared item it starts from.
    pub from: String,
    /// The compared item it points at.
    pub to: String,
    /// The relation (e.g. alternative_to).
    pub relation: String,
    /// Why (for alternative_to).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A contradiction attached to an item.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ContradictionOutput {
    /// The compared item.
    pub item: String,
    /// The disputed object: the item or one of its claims.
    pub subject: String,
    /// The claim text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Its status.
    pub status: String,
}

/// `compare` result. There is deliberately no winner and no total score.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CompareOutput {
    /// The normalized context.
    pub context_key: String,
    /// The dimensions compared.
    pub dimensions: Vec<String>,
    /// The items, in the requested order.
    pub items: Vec<ComparedItemOutput>,
    /// Known trade-offs between the items.
    pub trade_offs: Vec<TradeOffOutput>,
    /// Disputed, outdated or incorrect claims and items.
    pub contradictions: Vec<ContradictionOutput>,
    /// Always true.
    pub untrusted_content: bool,
    /// A reminder that the comparison is per dimension and context.
    pub note: String,
}

/// `compare`'s result on the wire.
pub fn compare_output(comparison: Comparison) -> CompareOutput {
    CompareOutput {
        context_key: comparison.context_key.to_string(),
        dimensions: comparison.dimensions,
        items: comparison
            .items
            .into_iter()
            .map(|item| ComparedItemOutput {
                id: item.id,
                kind: item.kind.to_owned(),
                object_type: item.object_type,
                title: item.title,
                status: item.status.as_str().to_owned(),
                trust: trust_brief(&item.trust),
                dimensions: item
                    .scores
                    .into_iter()
                    .map(|score| {
                        (
                            score.dimension,
                            DimensionScoreOutput {
                                score: score.score.map(round),
                                interval: score.interval.map(|(lower, upper)| [round(lower), round(upper)]),
                                independent_raters: score.independent_raters,
                                source: score.source.to_owned(),
                                context_key: score.context_key.to_string(),
                                context_raters: score.context_raters,
                            },
                        )
                    })
                    .collect(),
                experiences: item
                    .experiences
                    .into_iter()
                    .map(|experience| ExperienceOutput {
                        trust: trust_brief(&experience.trust),
                        id: experience.id,
                        title: experience.title,
                        summary: experience.summary,
                        result: experience.result,
                        context_key: experience.context_key,
                        same_context: experience.same_context,
                        status: experience.status.as_str().to_owned(),
                    })
                    .collect(),
            })
            .collect(),
        trade_offs: comparison
            .trade_offs
            .into_iter()
            .map(|trade_off| TradeOffOutput {
                declared_by: trade_off.declared_by,
                from: trade_off.from,
                to: trade_off.to,
                relation: trade_off.relation,
                reason: trade_off.reason,
            })
            .collect(),
        contradictions: comparison
            .contradictions
            .into_iter()
            .map(|note| ContradictionOutput {
                item: note.item,
                subject: note.subject,
                text: note.text,
                status: note.status.as_str().to_owned(),
            })
            .collect(),
        untrusted_content: true,
        note: "No overall winner: each score holds for its dimension and context only.".to_owned(),
    }
}

impl ToolOutput for CompareOutput {
    fn summary(&self) -> String {
        let mut lines = vec![format!(
            "Compared {} items in context {} (no winner is declared).",
            self.items.len(),
            self.context_key
        )];
        for item in &self.items {
            let scores: Vec<String> = item
                .dimensions
                .iter()
                .map(|(dimension, score)| match score.score {
                    Some(value) => format!(
                        "{dimension} {value:.0} ({} raters, {})",
                        score.independent_raters, score.source
                    ),
                    None => format!("{dimension} unrated"),
                })
                .collect();
            lines.push(format!(
                "- {} {} [{}]: {}",
                item.id,
                item.title,
                item.status,
                scores.join("; ")
            ));
        }
        lines.join("\n")
    }
}
