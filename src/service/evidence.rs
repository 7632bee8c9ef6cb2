//! Evidence: usage reports, reviews and ratings, their retraction, and the trust updates each one causes.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::limits::{
    MAX_DIMENSION_CHARACTERS, MAX_ID_CHARACTERS, MAX_KEYWORD_CHARACTERS, MAX_NOTE_CHARACTERS, MAX_SOURCES,
};
use super::references::SourceReference;
use super::trust::{EvidenceChange, TrustChange, TrustTarget};
use super::unit_of_work::UnitOfWork;
use super::validation::{cap_optional_text, cap_text, confidence, keyword, optional_text, parse_target, type_name};
use super::writes::{CallMetadata, WriteOperation, WriteSummary, within_write};
use super::{ErrorCode, Service, ServiceError};
use crate::domain::ContextKey;
use crate::domain::change::Change;
use crate::domain::evidence::{
    CitedSource, Grounding, Rating, RecordAuthor, RecordStatus, Review, StandingSnapshot, UsageEvent, UsageOutcome,
    Verdict,
};
use crate::domain::knowledge::SpaceVisibility;
use crate::domain::{AuthenticatedActor, IdKind, PublicId, Scope};
use crate::store::trust::RatingAggregateRecord;
use crate::store::{self, Conn};
use crate::trust::{ControllerRef, Evaluation, RatingQuery, RatingRecord, aggregate_ratings};

/// Everything `report_usage` accepts for a new report.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UsageRequest {
    /// `cnt_` (resolved to its current revision), `rev_`, `clm_` or `ent_`.
    pub target: String,
    /// `implementation`, `execution`, … (lower_snake_case, open-ended).
    pub usage_type: String,
    /// `success`, `partial`, `failure` or `unknown`.
    pub result: String,
    /// Production or real-world use.
    pub real_world_use: bool,
    /// Context facets.
    pub context: Option<Value>,
    /// Metrics.
    pub metrics: Option<Value>,
    /// A note.
    pub note: Option<String>,
    /// Idempotency key.
    pub idempotency_key: Option<String>,
}

/// What `report_usage` returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UsageOutcomeReport {
    /// The usage event.
    pub id: String,
    /// The revision used, when the target was content.
    pub target_revision: Option<String>,
    /// Whether the target is the work of the caller's own root controller, so that the report weighs nothing
    /// (responses stored for idempotency before this field existed read as false).
    #[serde(default)]
    pub self_evidence: bool,
}

/// What the result of a usage report on the caller's own work says: that it counts for nothing, and why.
pub const SELF_USAGE_NOTE: &str = "Recorded, but it counts for nothing: the target is the work of your own root \
controller, and usage reports on your own work are kept as self-evidence with weight 0. Trust grows from the usage \
reports and reviews of other controllers.";

/// What the result of a rating of the caller's own work says.
pub const SELF_RATING_NOTE: &str = "Recorded, but it counts for nothing: the target was created by your own root \
controller, and ratings of your own work weigh 0 in every aggregate. Scores come from the ratings of other \
controllers.";

/// What the result of an experience says about its usage events on the caller's own work.
pub fn self_usage_in_experience_note(usage_ids: &[String]) -> String {
    format!(
        "Recorded, but {} counts for nothing: its target is the work of your own root controller, and usage reports \
         on your own work are kept as self-evidence with weight 0. Trust grows from the usage reports and reviews of \
         other controllers.",
        usage_ids.join(", ")
    )
}

impl WriteSummary for UsageOutcomeReport {
    fn summary(&self) -> String {
        format!("usage {}", self.id)
    }
}

/// Everything `review` accepts for a new review.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReviewRequest {
    /// `cnt_` (resolved to its current revision), `rev_` or `clm_`.
    pub target: String,
    /// The verdict.
    pub verdict: String,
    /// Confidence in [0, 1].
    pub confidence: f64,
    /// Why.
    pub rationale_markdown: Option<String>,
    /// Sources.
    pub sources: Vec<SourceReference>,
    /// One of the caller's own usage events.
    pub based_on_usage: Option<String>,
    /// Idempotency key.
    pub idempotency_key: Option<String>,
}

/// What `review` returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReviewOutcome {
    /// The review.
    pub id: String,
    /// The revision reviewed, when the target was content.
    pub target_revision: Option<String>,
}

impl WriteSummary for ReviewOutcome {
    fn summary(&self) -> String {
        format!("review {}", self.id)
    }
}

/// Everything `rate` accepts for a new rating.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RateRequest {
    /// `ent_` or `cnt_`.
    pub target: String,
    /// Context facets.
    pub context: Option<Value>,
    /// The dimension, lower_snake_case.
    pub dimension: String,
    /// 0–100.
    pub score: f64,
    /// Confidence in [0, 1].
    pub confidence: f64,
    /// One of the caller's own usage events.
    pub based_on_usage: Option<String>,
    /// Why.
    pub rationale_markdown: Option<String>,
    /// Idempotency key.
    pub idempotency_key: Option<String>,
}

/// What `rate` returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RateOutcome {
    /// The rating.
    pub id: String,
    /// Whether the target was created by the caller's own root controller, so that the rating weighs nothing
    /// (responses stored for idempotency before this field existed read as false).
    #[serde(default)]
    pub self_evidence: bool,
}

impl WriteSummary for RateOutcome {
    fn summary(&self) -> String {
        format!("rating {}", self.id)
    }
}

/// What a retraction returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RetractOutcome {
    /// The retracted record.
    pub id: String,
    /// Always `retracted`.
    pub status: String,
    /// The record's target.
    pub target: String,
    /// Whether the record had already been retracted (nothing changed).
    pub already_retracted: bool,
}

impl WriteSummary for RetractOutcome {
    fn summary(&self) -> String {
        format!("retracted {}", self.id)
    }
}

/// How far a controller's earlier records are counted for its standing. The strong-refutation gate asks for a
/// handful (5 by default); counting further would only make busy controllers' writes slower.
const PRIOR_RECORDS_COUNTED: i64 = 1000;

/// An evidence record's target and its author's standing, read before the write (see
/// [`Service::prepare_evidence`]).
#[derive(Debug, Clone)]
pub(super) struct PreparedEvidence {
    /// The trust target: for content, its current revision.
    pub(super) trust_target: TrustTarget,
    /// The revision used, when the target was content or a revision.
    pub(super) target_revision: Option<PublicId>,
    /// The author's controller standing.
    pub(super) standing: StandingSnapshot,
    /// The space the record leaves with and its visibility (see [`Service::emit_evidence_change`]); `None` when no
    /// revision names the target. Read before the write: a space's visibility never changes.
    pub(super) leaves_with: Option<(PublicId, SpaceVisibility)>,
}

impl PreparedEvidence {
    /// The same, for the `earlier`-th further record of the same author in one write: its history then also holds
    /// the records written before it in that write.
    pub(super) fn after_earlier_records(mut self, earlier: usize) -> PreparedEvidence {
        let earlier = i32::try_from(earlier).unwrap_or(i32::MAX);
        self.standing.prior_records = self.standing.prior_records.saturating_add(earlier);
        self
    }
}

/// A usage event to record, already validated.
#[derive(Debug, Clone)]
pub(super) struct NewUsage {
    pub(super) target: PublicId,
    pub(super) field: String,
    pub(super) usage_type: String,
    pub(super) result: UsageOutcome,
    pub(super) real_world_use: bool,
    pub(super) context: Value,
    pub(super) context_key: ContextKey,
    pub(super) metrics: Value,
    pub(super) note: Option<String>,
    pub(super) experience_id: Option<PublicId>,
}

impl Service {
    /// `report_usage`: the outcome of actually using something.
    pub async fn report_usage(
        &self,
        caller: &AuthenticatedActor,
        metadata: &CallMetadata,
        request: UsageRequest,
    ) -> Result<UsageOutcomeReport, ServiceError> {
        self.require_scope(caller, Scope::Usage)?;
        cap_text("target", &request.target, MAX_ID_CHARACTERS)?;
        cap_text("usage_type", &request.usage_type, MAX_KEYWORD_CHARACTERS)?;
        cap_text("result", &request.result, MAX_KEYWORD_CHARACTERS)?;
        cap_optional_text("note", request.note.as_deref(), MAX_NOTE_CHARACTERS)?;
        let target = parse_target(
            "target",
            &request.target,
            &[IdKind::Content, IdKind::Revision, IdKind::Claim, IdKind::Entity],
            "report_usage",
        )?;
        let usage_type = type_name("usage_type", &request.usage_type)?;
        let result = UsageOutcome::parse(keyword("result", &request.result)?)
            .ok_or_else(|| ServiceError::validation("result", "result must be success, partial, failure or unknown"))?;
        let (context, context_key) = super::validation::context("context", request.context.as_ref())?;
        let metrics = super::validation::object("metrics", request.metrics.as_ref())?;
        let note = optional_text("note", request.note.as_deref(), MAX_NOTE_CHARACTERS)?;
        if let Some(note) = &note {
            self.scan_text("note", note)?;
        }
        if let Some(finding) = self.inner.content_scanner.scan_json("context", &context) {
            return Err(ServiceError::content_rejected(&finding));
        }
        if let Some(finding) = self.inner.content_scanner.scan_json("metrics", &metrics) {
            return Err(ServiceError::content_rejected(&finding));
        }
        let usage = NewUsage {
            target,
            field: "target".to_owned(),
            usage_type,
            result,
            real_world_use: request.real_world_use,
            context,
            context_key,
            metrics,
            note,
            experience_id: None,
        };
        let prepared = {
            let mut reader = self.store().reader().await?;
            self.prepare_evidence(&mut reader.conn(), caller, &usage.target, &usage.field)
                .await?
        };
        within_write!(self, caller, metadata, request.idempotency_key.as_deref(), |unit| {
            self.record_usage_in(unit, caller, usage.clone(), prepared.clone())
                .await
        })
    }

    /// What an evidence record needs to know of its target and its author's standing, read before the write's
    /// transaction opens so that the shared writer is not held while it is read.
    ///
    /// What it reads can change only in ways that do not matter here: a content item may gain a newer revision a
    /// moment later (the record then stays on the revision the caller used), and the author's history may grow by
    /// writes still in flight (the standing then counts the history as the caller last saw it).
    pub(super) async fn prepare_evidence(
        &self,
        conn: &mut Conn<'_>,
        caller: &AuthenticatedActor,
        target: &PublicId,
        field: &str,
    ) -> Result<PreparedEvidence, ServiceError> {
        let (trust_target, target_revision) = self.resolve_evidence_target(conn, target, field).await?;
        let standing = self.standing_of(conn, caller).await?;
        let leaves_with =
            store::remote_evidence::target_space(conn, &trust_target.id, trust_target.content_id.as_ref()).await?;
        Ok(PreparedEvidence {
            trust_target,
            target_revision,
            standing,
            leaves_with,
        })
    }

    /// Records one usage event and updates its target's trust, inside a write.
    pub(super) async fn record_usage_in(
        &self,
        unit: &mut UnitOfWork,
        caller: &AuthenticatedActor,
        usage: NewUsage,
        prepared: PreparedEvidence,
    ) -> Result<UsageOutcomeReport, ServiceError> {
        let PreparedEvidence {
            trust_target,
            target_revision,
            standing,
            leaves_with,
        } = prepared;
        let event = UsageEvent {
            id: self.new_id(IdKind::Usage),
            target_id: trust_target.id.clone(),
            target_content_id: trust_target.content_id.clone(),
            author: self.record_author(caller),
            usage_type: usage.usage_type,
            result: usage.result,
            real_world_use: usage.real_world_use,
            context: usage.context,
            context_key: usage.context_key,
            metrics: usage.metrics,
            note: usage.note,
            experience_id: usage.experience_id,
            standing,
            status: RecordStatus::Active,
            retracted_at: None,
            created_at: self.now(),
        };
        let self_evidence = trust_target.author_root_controller == caller.actor.root_controller
            && self.realm().is(&trust_target.author_origin);
        let record = self.usage_record(&event);
        let change = self
            .apply_evidence_change(unit, &trust_target, EvidenceChange::Add(Box::new(record)))
            .await?;
        store::evidence::insert_usage(&mut unit.conn(), &event).await?;
        self.after_evidence_change(unit, &trust_target, &change).await?;
        self.emit_with(
            unit,
            Change::EvidenceRecorded {
                record_id: event.id.as_str().to_owned(),
            },
            leaves_with,
        );
        Ok(UsageOutcomeReport {
            id: event.id.into_string(),
            target_revision: target_revision.map(PublicId::into_string),
            self_evidence,
        })
    }

    /// `review`: an independent judgment of correctness.
    pub async fn review(
        &self,
        caller: &AuthenticatedActor,
        metadata: &CallMetadata,
        request: ReviewRequest,
    ) -> Result<ReviewOutcome, ServiceError> {
        self.require_scope(caller, Scope::Review)?;
        cap_text("target", &request.target, MAX_ID_CHARACTERS)?;
        cap_text("verdict", &request.verdict, MAX_KEYWORD_CHARACTERS)?;
        cap_optional_text(
            "rationale_markdown",
            request.rationale_markdown.as_deref(),
            MAX_NOTE_CHARACTERS,
        )?;
        super::references::check_source_sizes(&request.sources)?;
        cap_optional_text("based_on_usage", request.based_on_usage.as_deref(), MAX_ID_CHARACTERS)?;
        let target = parse_target(
            "target",
            &request.target,
            &[IdKind::Content, IdKind::Revision, IdKind::Claim],
            "review",
        )?;
        let verdict = Verdict::parse(keyword("verdict", &request.verdict)?).ok_or_else(|| {
            ServiceError::validation(
                "verdict",
                "verdict must be confirmed, mostly_correct, questionable, misleading, contradicted, false, outdated or cannot_verify",
            )
        })?;
        let confidence = confidence("confidence", request.confidence)?;
        let rationale = optional_text(
            "rationale_markdown",
            request.rationale_markdown.as_deref(),
            MAX_NOTE_CHARACTERS,
        )?
        .map(|text| self.neutralize_body(&text))
        .unwrap_or_default();
        self.scan_text("rationale_markdown", &rationale)?;
        if request.sources.len() > MAX_SOURCES {
            return Err(ServiceError::validation(
                "sources",
                format!("at most {MAX_SOURCES} sources"),
            ));
        }
        let sources = self.validate_sources(&request.sources)?;
        let based_on_usage = request
            .based_on_usage
            .as_deref()
            .filter(|text| !text.trim().is_empty())
            .map(|text| parse_target("based_on_usage", text, &[IdKind::Usage], "based_on_usage"))
            .transpose()?;
        let prepared = {
            let mut reader = self.store().reader().await?;
            self.prepare_evidence(&mut reader.conn(), caller, &target, "target")
                .await?
        };
        within_write!(self, caller, metadata, request.idempotency_key.as_deref(), |unit| {
            async {
            let PreparedEvidence { trust_target, target_revision, standing, leaves_with } = prepared.clone();
            if trust_target.author_root_controller == caller.actor.root_controller && self.realm().is(&trust_target.author_origin) {
                return Err(ServiceError::new(
                    ErrorCode::SelfReview,
                    "you cannot review content or claims authored by yourself or by your own controller",
                )
                .with_details(json!({ "target": trust_target.id.as_str(), "root_controller": caller.actor.root_controller.as_str() })));
            }
            let grounding = match &based_on_usage {
                Some(usage_id) => self.grounding_of(&mut unit.conn(), caller, usage_id, &trust_target).await?,
                None => Grounding::Ungrounded,
            };
            let mut cited = Vec::new();
            for (position, source) in sources.iter().enumerate() {
                let (source, title) = self.resolve_source(&mut unit.conn(), source, position).await?;
                if !cited.iter().any(|existing: &CitedSource| existing.source_id == source.id) {
                    cited.push(CitedSource {
                        source_id: source.id,
                        url: source.url,
                        title: title.or(source.title),
                    });
                }
            }
            let review = Review {
                id: self.new_id(IdKind::Review),
                target_id: trust_target.id.clone(),
                target_content_id: trust_target.content_id.clone(),
                author: self.record_author(caller),
                verdict,
                confidence,
                rationale_markdown: rationale.clone(),
                sources: cited,
                based_on_usage_id: based_on_usage.clone(),
                grounding,
                standing,
                status: RecordStatus::Active,
                retracted_at: None,
                created_at: self.now(),
            };
            let record = self.review_record(&review);
            let change = self
                .apply_evidence_change(unit, &trust_target, EvidenceChange::Add(Box::new(record)))
                .await?;
            store::evidence::insert_review(&mut unit.conn(), &review).await?;
            self.after_evidence_change(unit, &trust_target, &change).await?;
            self.emit_with(
                unit,
                Change::EvidenceRecorded { record_id: review.id.as_str().to_owned() },
                leaves_with,
            );
            Ok(ReviewOutcome {
                id: review.id.into_string(),
                target_revision: target_revision.map(PublicId::into_string),
            })
            }
            .await
        })
    }

    /// `rate`: a score on one dimension in one context.
    pub async fn rate(
        &self,
        caller: &AuthenticatedActor,
        metadata: &CallMetadata,
        request: RateRequest,
    ) -> Result<RateOutcome, ServiceError> {
        self.require_scope(caller, Scope::Rate)?;
        cap_text("target", &request.target, MAX_ID_CHARACTERS)?;
        cap_text("dimension", &request.dimension, MAX_DIMENSION_CHARACTERS)?;
        cap_optional_text(
            "rationale_markdown",
            request.rationale_markdown.as_deref(),
            MAX_NOTE_CHARACTERS,
        )?;
        cap_optional_text("based_on_usage", request.based_on_usage.as_deref(), MAX_ID_CHARACTERS)?;
        let target = parse_target("target", &request.target, &[IdKind::Entity, IdKind::Content], "rate")?;
        let dimension = request.dimension.trim().to_owned();
        if !crate::domain::text::is_lower_snake_case(&dimension) {
            return Err(ServiceError::validation(
                "dimension",
                "dimension must be lower_snake_case, e.g. reliability or integration_effort",
            ));
        }
        if !(request.score.is_finite()
            && (super::limits::MIN_RATING_SCORE..=super::limits::MAX_RATING_SCORE).contains(&request.score))
        {
            return Err(ServiceError::validation(
                "score",
                "score must be a number from 0 to 100",
            ));
        }
        let confidence = confidence("confidence", request.confidence)?;
        let (context, context_key) = super::validation::context("context", request.context.as_ref())?;
        if let Some(finding) = self.inner.content_scanner.scan_json("context", &context) {
            return Err(ServiceError::content_rejected(&finding));
        }
        let rationale = optional_text(
            "rationale_markdown",
            request.rationale_markdown.as_deref(),
            MAX_NOTE_CHARACTERS,
        )?
        .map(|text| self.neutralize_body(&text))
        .unwrap_or_default();
        self.scan_text("rationale_markdown", &rationale)?;
        let based_on_usage = request
            .based_on_usage
            .as_deref()
            .filter(|text| !text.trim().is_empty())
            .map(|text| parse_target("based_on_usage", text, &[IdKind::Usage], "based_on_usage"))
            .transpose()?;
        within_write!(self, caller, metadata, request.idempotency_key.as_deref(), |unit| {
            async {
                let author_root = self.rating_target_author(&mut unit.conn(), &target).await?;
                if let Some(usage_id) = &based_on_usage {
                    self.own_active_usage(&mut unit.conn(), caller, usage_id).await?;
                }
                let rating = Rating {
                    id: self.new_id(IdKind::Rating),
                    target_id: target.clone(),
                    author: self.record_author(caller),
                    dimension: dimension.clone(),
                    score: request.score,
                    confidence,
                    context: context.clone(),
                    context_key: context_key.clone(),
                    based_on_usage_id: based_on_usage.clone(),
                    rationale_markdown: rationale.clone(),
                    status: RecordStatus::Active,
                    retracted_at: None,
                    created_at: self.now(),
                };
                store::evidence::insert_rating(&mut unit.conn(), &rating).await?;
                self.refresh_rating_aggregates(&mut unit.conn(), &target, &author_root, &dimension)
                    .await?;
                self.emit_evidence_change(
                    unit,
                    Change::EvidenceRecorded {
                        record_id: rating.id.as_str().to_owned(),
                    },
                    &target,
                    None,
                )
                .await?;
                Ok(RateOutcome {
                    id: rating.id.into_string(),
                    // The aggregates leave out exactly the ratings of the target author's root controller.
                    self_evidence: author_root
                        == self.controller_ref_for(self.realm().as_str(), caller.actor.root_controller.as_str()),
                })
            }
            .await
        })
    }

    /// Retracts one of the caller's own evidence records (`{ "retract": "<id>" }` on report_usage, review or rate).
    /// The record stays in history with status `retracted` and leaves the calculation.
    pub async fn retract(
        &self,
        caller: &AuthenticatedActor,
        metadata: &CallMetadata,
        record: &str,
        idempotency_key: Option<&str>,
    ) -> Result<RetractOutcome, ServiceError> {
        let (scope, kind) = match metadata.operation {
            WriteOperation::ReportUsage => (Scope::Usage, IdKind::Usage),
            WriteOperation::Review => (Scope::Review, IdKind::Review),
            WriteOperation::Rate => (Scope::Rate, IdKind::Rating),
            other => {
                return Err(ServiceError::internal(format!(
                    "retraction through {}",
                    other.tool_name()
                )));
            }
        };
        self.require_scope(caller, scope)?;
        let record_id = parse_target("retract", record, &[kind], metadata.operation.tool_name())?;
        within_write!(self, caller, metadata, idempotency_key, |unit| {
            async {
                let (author, status, target, target_content) = match kind {
                    IdKind::Usage => {
                        let usage = store::evidence::find_usage(&mut unit.conn(), &record_id)
                            .await?
                            .ok_or_else(|| ServiceError::not_found(record_id.as_str()))?;
                        (
                            usage.author.actor_id,
                            usage.status,
                            usage.target_id,
                            usage.target_content_id,
                        )
                    }
                    IdKind::Review => {
                        let review = store::evidence::find_review(&mut unit.conn(), &record_id)
                            .await?
                            .ok_or_else(|| ServiceError::not_found(record_id.as_str()))?;
                        (
                            review.author.actor_id,
                            review.status,
                            review.target_id,
                            review.target_content_id,
                        )
                    }
                    _ => {
                        let rating = store::evidence::find_rating(&mut unit.conn(), &record_id)
                            .await?
                            .ok_or_else(|| ServiceError::not_found(record_id.as_str()))?;
                        (rating.author.actor_id, rating.status, rating.target_id, None)
                    }
                };
                if author != caller.actor.id {
                    return Err(
                        ServiceError::new(ErrorCode::NotAuthor, "only the author of a record can retract it")
                            .with_details(json!({ "id": record_id.as_str() })),
                    );
                }
                if status == RecordStatus::Retracted {
                    return Ok(RetractOutcome {
                        id: record_id.as_str().to_owned(),
                        status: "retracted".to_owned(),
                        target: target.into_string(),
                        already_retracted: true,
                    });
                }
                if kind == IdKind::Rating {
                    store::evidence::retract(&mut unit.conn(), &record_id, self.now()).await?;
                    let rating = store::evidence::find_rating(&mut unit.conn(), &record_id)
                        .await?
                        .ok_or_else(|| ServiceError::not_found(record_id.as_str()))?;
                    let author_root = self.rating_target_author(&mut unit.conn(), &rating.target_id).await?;
                    self.refresh_rating_aggregates(
                        &mut unit.conn(),
                        &rating.target_id,
                        &author_root,
                        &rating.dimension,
                    )
                    .await?;
                } else {
                    let trust_target = self.trust_target(&mut unit.conn(), &target).await?;
                    let change = self
                        .apply_evidence_change(
                            unit,
                            &trust_target,
                            EvidenceChange::Retract(record_id.as_str().to_owned()),
                        )
                        .await?;
                    store::evidence::retract(&mut unit.conn(), &record_id, self.now()).await?;
                    self.after_evidence_change(unit, &trust_target, &change).await?;
                }
                self.emit_evidence_change(
                    unit,
                    Change::EvidenceRetracted {
                        record_id: record_id.as_str().to_owned(),
                    },
                    &target,
                    target_content.as_ref(),
                )
                .await?;
                Ok(RetractOutcome {
                    id: record_id.as_str().to_owned(),
                    status: "retracted".to_owned(),
                    target: target.into_string(),
                    already_retracted: false,
                })
            }
            .await
        })
    }

    /// Resolves an evidence target: a content item to its current revision; returns the trust target and, for
    /// content, the revision used.
    async fn resolve_evidence_target(
        &self,
        conn: &mut Conn<'_>,
        target: &PublicId,
        field: &str,
    ) -> Result<(TrustTarget, Option<PublicId>), ServiceError> {
        let not_found =
            || ServiceError::not_found(target.as_str()).with_details(json!({ "id": target.as_str(), "field": field }));
        match target.kind() {
            IdKind::Content => {
                let (content, revision_id, revision_created_at) =
                    store::knowledge::revision_target(conn, store::knowledge::RevisionOf::CurrentOf(target))
                        .await?
                        .ok_or_else(not_found)?;
                if content.deleted_at.is_some() {
                    return Err(deleted_target(target, field));
                }
                Ok((
                    super::trust::revision_trust_target(revision_id.clone(), revision_created_at, content),
                    Some(revision_id),
                ))
            }
            IdKind::Revision | IdKind::Claim | IdKind::Entity => {
                let trust_target = self.find_trust_target(conn, target).await?.ok_or_else(not_found)?;
                if let Some(content_id) = &trust_target.content_id
                    && store::knowledge::find_content(conn, content_id)
                        .await?
                        .is_some_and(|content| content.deleted_at.is_some())
                {
                    return Err(deleted_target(target, field));
                }
                let used_revision = (target.kind() == IdKind::Revision).then(|| target.clone());
                Ok((trust_target, used_revision))
            }
            _ => Err(ServiceError::new(
                ErrorCode::InvalidTarget,
                "this kind of object cannot carry evidence",
            )),
        }
    }

    /// After a change to a revision's evidence: content it supersedes may have become (or stopped being) replaced.
    pub(super) async fn after_evidence_change(
        &self,
        unit: &mut UnitOfWork,
        target: &TrustTarget,
        change: &TrustChange,
    ) -> Result<(), ServiceError> {
        // A `supersedes` relation towards another author's content is effective while its source is
        // high_confidence, so only a change into or out of high_confidence can change what it supersedes.
        if let Some(content_id) = &target.content_id
            && change.high_confidence_changed()
        {
            self.reassess_superseded_targets(unit, content_id, None).await?;
        }
        self.settle_decisions(unit).await
    }

    /// Lets an evidence record of this realm, or its retraction, leave with this unit of work when its target lives
    /// in a federated space (a claim or an entity: when a revision in a federated space names it); evidence about
    /// anything in a local space never leaves (`UnitOfWork::emit` drops it).
    async fn emit_evidence_change(
        &self,
        unit: &mut UnitOfWork,
        change: Change,
        target_id: &PublicId,
        target_content_id: Option<&PublicId>,
    ) -> Result<(), ServiceError> {
        let leaves_with = store::remote_evidence::target_space(&mut unit.conn(), target_id, target_content_id).await?;
        self.emit_with(unit, change, leaves_with);
        Ok(())
    }

    /// [`Service::emit_evidence_change`] with the target's space read already.
    fn emit_with(&self, unit: &mut UnitOfWork, change: Change, leaves_with: Option<(PublicId, SpaceVisibility)>) {
        if let Some((space_id, visibility)) = leaves_with {
            unit.emit(self.new_internal_id(), change, &space_id, visibility, self.now());
        }
    }

    fn record_author(&self, caller: &AuthenticatedActor) -> RecordAuthor {
        RecordAuthor {
            actor_id: caller.actor.id.clone(),
            root_controller_id: caller.actor.root_controller.clone(),
            origin: self.realm().as_str().to_owned(),
            origin_proof_verified: true,
        }
    }

    /// The caller's controller standing now: reputation, history and account age, recorded with each record.
    async fn standing_of(
        &self,
        conn: &mut Conn<'_>,
        caller: &AuthenticatedActor,
    ) -> Result<StandingSnapshot, ServiceError> {
        let reputation = self.reputation_multiplier(conn, &caller.actor.root_controller).await?;
        let history =
            store::evidence::controller_history(conn, &caller.actor.root_controller, PRIOR_RECORDS_COUNTED).await?;
        let account_created_at = history
            .account_created_at
            .ok_or_else(|| ServiceError::internal("the caller's root controller is missing"))?;
        Ok(StandingSnapshot {
            reputation: reputation.reputation,
            prior_records: i32::try_from(history.prior_records).unwrap_or(i32::MAX),
            account_created_at,
        })
    }

    /// The grounding a review gains from one of the reviewer's own usage events on the same target.
    async fn grounding_of(
        &self,
        conn: &mut Conn<'_>,
        caller: &AuthenticatedActor,
        usage_id: &PublicId,
        target: &TrustTarget,
    ) -> Result<Grounding, ServiceError> {
        let usage = self.own_active_usage(conn, caller, usage_id).await?;
        if !usage_is_of_target(conn, &usage, target).await? {
            return Err(ServiceError::validation(
                "based_on_usage",
                "based_on_usage must be a use of the reviewed content or claim",
            ));
        }
        Ok(if usage.real_world_use {
            Grounding::OwnRealWorldUsage
        } else {
            Grounding::OwnTestUsage
        })
    }

    /// One of the caller's own active usage events.
    async fn own_active_usage(
        &self,
        conn: &mut Conn<'_>,
        caller: &AuthenticatedActor,
        usage_id: &PublicId,
    ) -> Result<UsageEvent, ServiceError> {
        let usage = store::evidence::find_usage(conn, usage_id).await?.ok_or_else(|| {
            ServiceError::not_found(usage_id.as_str())
                .with_details(json!({ "id": usage_id.as_str(), "field": "based_on_usage" }))
        })?;
        if usage.author.actor_id != caller.actor.id {
            return Err(ServiceError::validation(
                "based_on_usage",
                "based_on_usage must be one of your own use_ IDs",
            ));
        }
        if usage.status == RecordStatus::Retracted {
            return Err(ServiceError::validation(
                "based_on_usage",
                "that usage event was retracted",
            ));
        }
        Ok(usage)
    }

    /// The root controller of a rating target's author (whose own ratings weigh nothing).
    async fn rating_target_author(
        &self,
        conn: &mut Conn<'_>,
        target: &PublicId,
    ) -> Result<ControllerRef, ServiceError> {
        match self.held_rating_target(conn, target).await? {
            Some((_, true)) => Err(deleted_target(target, "target")),
            Some((author, false)) => Ok(author),
            None => Err(ServiceError::not_found(target.as_str())
                .with_details(json!({ "id": target.as_str(), "field": "target" }))),
        }
    }

    /// A rating target's author's root controller and whether it is deleted content; `None` when it is not held.
    async fn held_rating_target(
        &self,
        conn: &mut Conn<'_>,
        target: &PublicId,
    ) -> Result<Option<(ControllerRef, bool)>, ServiceError> {
        Ok(match target.kind() {
            IdKind::Entity => store::knowledge::find_entity(conn, target).await?.map(|entity| {
                (
                    self.controller_ref_for(&entity.origin, entity.created_by_root_controller.as_str()),
                    false,
                )
            }),
            _ => store::knowledge::find_content(conn, target).await?.map(|content| {
                (
                    self.controller_ref_for(&content.origin, content.author_root_controller.as_str()),
                    content.deleted_at.is_some(),
                )
            }),
        })
    }

    /// Computes the aggregates of a newly held target from the ratings other realms sent before it arrived.
    pub(super) async fn refresh_waiting_rating_aggregates(
        &self,
        unit: &mut UnitOfWork,
        target: &PublicId,
    ) -> Result<(), ServiceError> {
        for dimension in store::remote_evidence::rated_dimensions(&mut unit.conn(), target).await? {
            self.note_rating_change(unit, target, &dimension);
        }
        Ok(())
    }

    /// Recomputes the aggregates of (target, dimension) after a remote rating changed, when the target is held here
    /// (a rating that arrives before its target counts once the target's own aggregates are computed).
    pub(super) async fn refresh_rating_aggregates_if_held(
        &self,
        conn: &mut Conn<'_>,
        target: &PublicId,
        dimension: &str,
    ) -> Result<(), ServiceError> {
        if let Some((author, false)) = self.held_rating_target(conn, target).await? {
            self.refresh_rating_aggregates(conn, target, &author, dimension).await?;
        }
        Ok(())
    }

    pub(super) fn controller_ref_for(&self, origin: &str, controller: &str) -> ControllerRef {
        if self.realm().is(origin) {
            ControllerRef::first_party(controller)
        } else {
            ControllerRef::remote(origin, controller)
        }
    }

    /// The trust engine's view of a stored rating.
    pub(super) fn rating_record(&self, rating: &Rating) -> RatingRecord {
        RatingRecord {
            record_id: rating.id.as_str().to_owned(),
            actor: rating.author.actor_id.as_str().to_owned(),
            root_controller: rating.author.root_controller_id.as_str().to_owned(),
            origin: (!self.realm().is(&rating.author.origin)).then(|| rating.author.origin.clone()),
            origin_signature_valid: rating.author.origin_proof_verified,
            recorded_at: rating.created_at,
            retracted: rating.status == RecordStatus::Retracted,
            dimension: rating.dimension.clone(),
            context: rating.context_key.clone(),
            score: rating.score,
            confidence: rating.confidence,
        }
    }

    /// Recomputes and stores the aggregates of (target, dimension): the all-context one and every context (and
    /// parent context) that has enough raters of its own.
    async fn refresh_rating_aggregates(
        &self,
        conn: &mut Conn<'_>,
        target: &PublicId,
        author: &ControllerRef,
        dimension: &str,
    ) -> Result<(), ServiceError> {
        let ratings = store::evidence::ratings_of_target_dimension(conn, target, dimension).await?;
        let records: Vec<RatingRecord> = ratings.iter().map(|rating| self.rating_record(rating)).collect();
        let mut contexts: Vec<ContextKey> = vec![ContextKey::all()];
        for record in records.iter().filter(|record| !record.retracted) {
            for key in record.context.fallback_chain() {
                if !contexts.contains(&key) {
                    contexts.push(key);
                }
            }
        }
        let table = self.instance_trust_table();
        let now = self.now();
        let evaluation = Evaluation {
            now,
            instance_trust: &table,
            superseded: false,
        };
        let mut aggregates = Vec::new();
        for context in &contexts {
            let aggregate = aggregate_ratings(
                &records,
                &RatingQuery {
                    author,
                    dimension,
                    context,
                    dimension_mean_score: None,
                },
                &evaluation,
                self.trust_parameters(),
            )
            .map_err(|error| ServiceError::internal(format!("rating aggregation failed: {error}")))?;
            if aggregate.fallback {
                continue;
            }
            aggregates.push(RatingAggregateRecord {
                target_id: target.clone(),
                dimension: dimension.to_owned(),
                context_key: context.clone(),
                score: aggregate.value,
                lower_bound: aggregate.lower_bound,
                upper_bound: aggregate.upper_bound,
                independent_raters: i32::try_from(aggregate.independent_raters).unwrap_or(i32::MAX),
                effective_raters: aggregate.effective_n,
                updated_at: now,
            });
        }
        store::trust::replace_rating_aggregates(conn, target, dimension, &aggregates).await?;
        Ok(())
    }
}

/// Whether a usage event is a use of `target`, so that a review of it may be grounded in it: the same revision or
/// content item, or a revision making the reviewed claim. Shared by local reviews and remote ones (§2.15).
pub(super) async fn usage_is_of_target(
    conn: &mut Conn<'_>,
    usage: &UsageEvent,
    target: &TrustTarget,
) -> Result<bool, ServiceError> {
    Ok(usage.target_id == target.id
        || (usage.target_content_id.is_some() && usage.target_content_id == target.content_id)
        || (target.kind == store::trust::TrustTargetKind::Claim
            && usage.target_id.kind() == IdKind::Revision
            && store::knowledge::revision_has_claim(conn, &usage.target_id, &target.id).await?))
}

/// Evidence about deleted content is refused: the item is a tombstone, and nothing can be learned from using it.
fn deleted_target(target: &PublicId, field: &str) -> ServiceError {
    ServiceError::new(
        ErrorCode::NotFound,
        format!("{target} belongs to deleted content: evidence about it is not taken"),
    )
    .with_details(json!({ "id": target.as_str(), "field": field, "deleted": true }))
}
