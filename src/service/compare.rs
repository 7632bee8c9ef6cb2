//! `compare`: several entities or content items side by side in one explicit context, per dimension, with
//! trade-offs, contradictions and relevant experiences. It never declares a winner.

use serde_json::Value;

use super::search::{TrustBrief, status_rank};
use super::validation::parse_target;
use super::{Service, ServiceError};
use crate::domain::knowledge::RelationType;
use crate::domain::{AuthenticatedActor, ContextKey, IdKind, PublicId, Scope, TrustStatus};
use crate::store::{self, Conn};
use crate::trust::{ControllerRef, Evaluation, RatingQuery, aggregate_ratings};

pub use super::limits::MAX_COMPARE_DIMENSIONS;
use super::limits::{MAX_COMPARE_ITEMS, MAX_DIMENSION_CHARACTERS, MIN_COMPARE_ITEMS};
/// Fewest and most items per comparison.
pub const COMPARE_ITEMS: std::ops::RangeInclusive<usize> = MIN_COMPARE_ITEMS..=MAX_COMPARE_ITEMS;
/// Experiences shown per item.
pub const EXPERIENCES_PER_ITEM: usize = 3;

/// Everything `compare` accepts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CompareRequest {
    /// 2–10 `ent_` or `cnt_` IDs.
    pub ids: Vec<String>,
    /// Context facets.
    pub context: Option<Value>,
    /// Dimensions to compare; empty means every dimension rated on any of the items (up to 20).
    pub dimensions: Vec<String>,
    /// Whose evidence scores and trust weigh.
    pub trust_view: super::trust::TrustViewScope,
}

/// One item's score on one dimension.
#[derive(Debug, Clone, PartialEq)]
pub struct DimensionScore {
    /// The dimension.
    pub dimension: String,
    /// 0–100, or `None` when nobody rated it.
    pub score: Option<f64>,
    /// The 90% interval on the 0–100 scale.
    pub interval: Option<(f64, f64)>,
    /// Independent raters behind the score.
    pub independent_raters: u32,
    /// `context` when the score comes from the requested context (or a parent context), `all_contexts` otherwise.
    pub source: &'static str,
    /// The context key the score was computed for.
    pub context_key: ContextKey,
    /// Independent raters in the requested context itself.
    pub context_raters: u32,
}

/// An experience relevant to an item.
#[derive(Debug, Clone, PartialEq)]
pub struct ExperienceBrief {
    /// The experience content item.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Its summary.
    pub summary: String,
    /// Its reported result.
    pub result: Option<String>,
    /// Its context key.
    pub context_key: Option<String>,
    /// Whether it was made in the requested context.
    pub same_context: bool,
    /// Its status.
    pub status: TrustStatus,
    /// Its trust.
    pub trust: TrustBrief,
}

/// One compared item.
#[derive(Debug, Clone, PartialEq)]
pub struct ComparedItem {
    /// The item's ID.
    pub id: String,
    /// `entity` or `content`.
    pub kind: &'static str,
    /// Name or title.
    pub title: String,
    /// Entity type or content type.
    pub object_type: String,
    /// Trust status.
    pub status: TrustStatus,
    /// Trust figures.
    pub trust: TrustBrief,
    /// Per-dimension scores.
    pub scores: Vec<DimensionScore>,
    /// Up to three relevant, trusted experiences.
    pub experiences: Vec<ExperienceBrief>,
}

/// A known trade-off: a relation between compared items (or their subjects).
#[derive(Debug, Clone, PartialEq)]
pub struct TradeOff {
    /// The content that declares the relation.
    pub declared_by: String,
    /// The compared item it starts from.
    pub from: String,
    /// The compared item it points at.
    pub to: String,
    /// The relation.
    pub relation: String,
    /// For `alternative_to`: why.
    pub reason: Option<String>,
}

/// A contradiction attached to a compared item.
#[derive(Debug, Clone, PartialEq)]
pub struct ContradictionNote {
    /// The compared item.
    pub item: String,
    /// The disputed object: the item itself or one of its claims.
    pub subject: String,
    /// The claim text, when the subject is a claim.
    pub text: Option<String>,
    /// Its status.
    pub status: TrustStatus,
}

/// The result of `compare`.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// The normalized context.
    pub context_key: ContextKey,
    /// The dimensions compared.
    pub dimensions: Vec<String>,
    /// The items in the requested order.
    pub items: Vec<ComparedItem>,
    /// Known trade-offs.
    pub trade_offs: Vec<TradeOff>,
    /// Contradictions.
    pub contradictions: Vec<ContradictionNote>,
}

impl Service {
    /// `compare`: the items side by side in one context.
    pub async fn compare(
        &self,
        caller: &AuthenticatedActor,
        request: &CompareRequest,
    ) -> Result<Comparison, ServiceError> {
        self.require_scope(caller, Scope::Read)?;
        if !COMPARE_ITEMS.contains(&request.ids.len()) {
            return Err(ServiceError::validation(
                "ids",
                format!("compare takes {MIN_COMPARE_ITEMS} to {MAX_COMPARE_ITEMS} IDs"),
            ));
        }
        super::validation::cap_items("dimensions", request.dimensions.len(), MAX_COMPARE_DIMENSIONS)?;
        super::validation::cap_each_text("dimensions", &request.dimensions, MAX_DIMENSION_CHARACTERS)?;
        let mut ids: Vec<PublicId> = Vec::new();
        for (position, text) in request.ids.iter().enumerate() {
            let id = parse_target(
                &format!("ids/{position}"),
                text,
                &[IdKind::Entity, IdKind::Content],
                "compare",
            )?;
            if ids.contains(&id) {
                return Err(ServiceError::validation(
                    &format!("ids/{position}"),
                    "each ID may appear once",
                ));
            }
            ids.push(id);
        }
        for (position, dimension) in request.dimensions.iter().enumerate() {
            if !crate::domain::text::is_lower_snake_case(dimension.trim()) {
                return Err(ServiceError::validation(
                    &format!("dimensions/{position}"),
                    "dimensions are lower_snake_case, e.g. reliability",
                ));
            }
        }
        let (_, context_key) = super::validation::context("context", request.context.as_ref())?;
        let mut reader = self.store().reader().await?;
        let conn = &mut reader.conn();

        let mut ratings_by_item = Vec::new();
        let mut dimensions: Vec<String> = request
            .dimensions
            .iter()
            .map(|dimension| dimension.trim().to_owned())
            .collect();
        for id in &ids {
            let ratings = store::evidence::ratings_of_target(conn, id).await?;
            if request.dimensions.is_empty() {
                for rating in ratings
                    .iter()
                    .filter(|rating| rating.status == crate::domain::evidence::RecordStatus::Active)
                {
                    if !dimensions.contains(&rating.dimension) && dimensions.len() < MAX_COMPARE_DIMENSIONS {
                        dimensions.push(rating.dimension.clone());
                    }
                }
            }
            ratings_by_item.push(ratings);
        }
        dimensions.sort();
        dimensions.dedup();

        let table = self.instance_trust_table();
        let evaluation = Evaluation {
            now: self.now(),
            instance_trust: &table,
            superseded: false,
        };
        let mut items = Vec::new();
        let mut contradictions = Vec::new();
        for (id, ratings) in ids.iter().zip(&ratings_by_item) {
            let (kind, title, object_type, author, trust_target_id) = match id.kind() {
                IdKind::Entity => {
                    let entity = store::knowledge::find_entity(conn, id)
                        .await?
                        .ok_or_else(|| ServiceError::not_found(id.as_str()))?;
                    let author = self.controller_ref_for(&entity.origin, entity.created_by_root_controller.as_str());
                    ("entity", entity.name, entity.entity_type, author, entity.id.clone())
                }
                _ => {
                    let content = store::knowledge::find_content(conn, id)
                        .await?
                        .ok_or_else(|| ServiceError::not_found(id.as_str()))?;
                    let revision = store::knowledge::find_revision(conn, &content.current_revision_id)
                        .await?
                        .ok_or_else(|| ServiceError::internal("content without its current revision"))?;
                    let author = self.controller_ref_for(&content.origin, content.author_root_controller.as_str());
                    for claim in store::knowledge::claims_of_revision(conn, &revision.id).await? {
                        if let Some(summary) = store::trust::find_summary(conn, &claim.id).await?
                            && summary.status.is_contested()
                        {
                            contradictions.push(ContradictionNote {
                                item: id.as_str().to_owned(),
                                subject: claim.id.as_str().to_owned(),
                                text: Some(claim.text.clone()),
                                status: summary.status,
                            });
                        }
                    }
                    ("content", revision.title, content.content_type, author, revision.id)
                }
            };
            let target = self.trust_target(conn, &trust_target_id).await?;
            let assessment = self.live_assessment(conn, &target, request.trust_view).await?;
            let status = assessment.status;
            if status.is_contested() {
                contradictions.push(ContradictionNote {
                    item: id.as_str().to_owned(),
                    subject: id.as_str().to_owned(),
                    text: None,
                    status,
                });
            }
            let records: Vec<_> = ratings
                .iter()
                .filter(|rating| {
                    request.trust_view == super::trust::TrustViewScope::All || self.realm().is(&rating.author.origin)
                })
                .map(|rating| self.rating_record(rating))
                .collect();
            let mut scores = Vec::new();
            for dimension in &dimensions {
                scores.push(self.dimension_score(&records, &author, dimension, &context_key, &evaluation)?);
            }
            items.push(ComparedItem {
                id: id.as_str().to_owned(),
                kind,
                title,
                object_type,
                status,
                trust: TrustBrief {
                    value: assessment.value,
                    lower_bound: assessment.lower_bound,
                    independent_confirmations: count(assessment.counts.independent_confirmations.total()),
                    contradictions: count(assessment.counts.contradictions.total()),
                    real_world_confirmations: count(assessment.counts.real_world_confirmations.total()),
                },
                scores,
                experiences: self.relevant_experiences(conn, id, &context_key).await?,
            });
        }
        let trade_offs = self.trade_offs(conn, &ids).await?;
        Ok(Comparison {
            context_key,
            dimensions,
            items,
            trade_offs,
            contradictions,
        })
    }

    fn dimension_score(
        &self,
        records: &[crate::trust::RatingRecord],
        author: &ControllerRef,
        dimension: &str,
        context: &ContextKey,
        evaluation: &Evaluation<'_>,
    ) -> Result<DimensionScore, ServiceError> {
        let rated = records
            .iter()
            .any(|record| record.dimension == dimension && !record.retracted);
        let aggregate = aggregate_ratings(
            records,
            &RatingQuery {
                author,
                dimension,
                context,
                dimension_mean_score: None,
            },
            evaluation,
            self.trust_parameters(),
        )
        .map_err(|error| ServiceError::internal(format!("rating aggregation failed: {error}")))?;
        let has_score = rated && aggregate.independent_raters > 0;
        Ok(DimensionScore {
            dimension: dimension.to_owned(),
            score: has_score.then_some(aggregate.value),
            interval: has_score.then_some((aggregate.lower_bound, aggregate.upper_bound)),
            independent_raters: aggregate.independent_raters,
            source: if aggregate.context.is_all() {
                "all_contexts"
            } else {
                "context"
            },
            context_key: aggregate.context,
            context_raters: aggregate.context_raters,
        })
    }

    async fn relevant_experiences(
        &self,
        conn: &mut Conn<'_>,
        item: &PublicId,
        context: &ContextKey,
    ) -> Result<Vec<ExperienceBrief>, ServiceError> {
        let candidates = store::evidence::experiences_using(conn, &[item.as_str().to_owned()], 20).await?;
        let mut briefs = Vec::new();
        for experience_id in candidates {
            let Some(content) = store::knowledge::find_content(conn, &experience_id).await? else {
                continue;
            };
            let Some(revision) = store::knowledge::find_revision(conn, &content.current_revision_id).await? else {
                continue;
            };
            let Some(summary) = store::trust::find_summary(conn, &revision.id).await? else {
                continue;
            };
            if matches!(summary.status, TrustStatus::Incorrect | TrustStatus::Disputed) {
                continue;
            }
            let experience_context = revision.context_key.clone();
            let same_context = match (&experience_context, context.is_all()) {
                (_, true) => false,
                (Some(key), false) => ContextKey::parse(key).is_ok_and(|parsed| context.contains(&parsed)),
                (None, false) => false,
            };
            briefs.push(ExperienceBrief {
                id: content.id.as_str().to_owned(),
                title: revision.title.clone(),
                summary: revision.summary.clone(),
                result: revision
                    .structured_data
                    .get("result")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                context_key: experience_context,
                same_context,
                status: summary.status,
                trust: TrustBrief {
                    value: summary.value,
                    lower_bound: summary.lower_bound,
                    independent_confirmations: summary.independent_confirmations,
                    contradictions: summary.contradictions,
                    real_world_confirmations: summary.real_world_confirmations,
                },
            });
        }
        briefs.sort_by(|left, right| {
            right
                .same_context
                .cmp(&left.same_context)
                .then_with(|| status_rank(left.status).cmp(&status_rank(right.status)))
                .then_with(|| right.trust.lower_bound.total_cmp(&left.trust.lower_bound))
                .then_with(|| left.id.cmp(&right.id))
        });
        briefs.truncate(EXPERIENCES_PER_ITEM);
        Ok(briefs)
    }

    /// Relations between compared items: declared by a compared content item towards another, or declared by
    /// content about one compared entity as `alternative_to` another.
    async fn trade_offs(&self, conn: &mut Conn<'_>, ids: &[PublicId]) -> Result<Vec<TradeOff>, ServiceError> {
        let mut trade_offs = Vec::new();
        for target in ids {
            for relation in store::knowledge::current_relations_targeting(conn, target).await? {
                let from = if ids.contains(&relation.source_content_id) {
                    Some(relation.source_content_id.clone())
                } else if relation.relation_type == RelationType::AlternativeTo {
                    let subjects = store::knowledge::subjects_of_revision(conn, &relation.source_revision_id).await?;
                    subjects
                        .into_iter()
                        .map(|entity| entity.id)
                        .find(|entity| ids.contains(entity) && entity != target)
                } else {
                    None
                };
                if let Some(from) = from
                    && from != *target
                {
                    trade_offs.push(TradeOff {
                        declared_by: relation.source_content_id.as_str().to_owned(),
                        from: from.into_string(),
                        to: target.as_str().to_owned(),
                        relation: relation.relation_type.as_str().to_owned(),
                        reason: relation.reason.clone(),
                    });
                }
            }
        }
        Ok(trade_offs)
    }
}

fn count(value: u32) -> i32 {
    i32::try_from(value).unwrap_or(i32::MAX)
}
