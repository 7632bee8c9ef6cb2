//! Persisted trust: each target's latest assessment, rating aggregates and reputation observations.

use chrono::{DateTime, Utc};

use super::statement::{Bind, Column, Insert, InsertShape, OnConflict, SqlType};
use super::{Conn, StoreError, dispatch, stored_id, stored_optional_id};
use crate::domain::{ContextKey, PublicId, TrustStatus, TrustStatuses};

/// What kind of object a trust summary is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrustTargetKind {
    /// A content revision.
    Revision,
    /// A claim.
    Claim,
    /// An entity.
    Entity,
}

impl TrustTargetKind {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            TrustTargetKind::Revision => "revision",
            TrustTargetKind::Claim => "claim",
            TrustTargetKind::Entity => "entity",
        }
    }

    fn parse(text: &str) -> Option<TrustTargetKind> {
        match text {
            "revision" => Some(TrustTargetKind::Revision),
            "claim" => Some(TrustTargetKind::Claim),
            "entity" => Some(TrustTargetKind::Entity),
            _ => None,
        }
    }
}

/// A target's assessment as of its last evidence change.
#[derive(Debug, Clone, PartialEq)]
pub struct TrustSummaryRecord {
    /// The revision, claim or entity.
    pub target_id: PublicId,
    /// Its kind.
    pub target_kind: TrustTargetKind,
    /// The content item of a revision.
    pub content_id: Option<PublicId>,
    /// Increases with every evidence change.
    pub version: i64,
    /// Posterior mean.
    pub value: f64,
    /// 5% quantile.
    pub lower_bound: f64,
    /// 95% quantile.
    pub upper_bound: f64,
    /// The decided status.
    pub status: TrustStatus,
    /// The rule that decided the status (R1–R11).
    pub rule: String,
    /// One-line reason.
    pub reason: String,
    /// Parties with positive stance.
    pub independent_confirmations: i32,
    /// Parties with negative stance.
    pub contradictions: i32,
    /// Positive parties with a real-world success.
    pub real_world_confirmations: i32,
    /// Eligible first-party strong refuters.
    pub strong_refutations: i32,
    /// Evidence records held (active and retracted).
    pub evidence_records: i32,
    /// When the assessment was computed.
    pub computed_at: DateTime<Utc>,
    /// The same assessment on first-party evidence alone (search's `trust_view: first_party`).
    pub first_party: FirstPartySummary,
}

impl TrustSummaryRecord {
    /// The status in each trust view: what the target's search document carries.
    pub fn statuses(&self) -> TrustStatuses {
        TrustStatuses {
            all: self.status,
            first_party: self.first_party.status,
        }
    }
}

/// What search shows and sorts by of a target's assessment on first-party evidence alone (trust model §2.15: what
/// this instance would say with no peers); equal to the full assessment's when the target holds no other realm's
/// evidence.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FirstPartySummary {
    /// Posterior mean.
    pub value: f64,
    /// 5% quantile.
    pub lower_bound: f64,
    /// The decided status.
    pub status: TrustStatus,
    /// First-party parties with positive stance.
    pub independent_confirmations: i32,
    /// First-party parties with negative stance.
    pub contradictions: i32,
    /// First-party positive parties with a real-world success.
    pub real_world_confirmations: i32,
}

#[derive(sqlx::FromRow)]
struct TrustSummaryRow {
    target_id: String,
    target_kind: String,
    content_id: Option<String>,
    version: i64,
    value: f64,
    lower_bound: f64,
    upper_bound: f64,
    status: String,
    rule: String,
    reason: String,
    independent_confirmations: i32,
    contradictions: i32,
    real_world_confirmations: i32,
    strong_refutations: i32,
    evidence_records: i32,
    computed_at: DateTime<Utc>,
    first_party_value: f64,
    first_party_lower_bound: f64,
    first_party_status: String,
    first_party_independent_confirmations: i32,
    first_party_contradictions: i32,
    first_party_real_world_confirmations: i32,
}

impl TrustSummaryRow {
    fn into_record(self) -> Result<TrustSummaryRecord, StoreError> {
        Ok(TrustSummaryRecord {
            target_kind: TrustTargetKind::parse(&self.target_kind)
                .ok_or_else(|| StoreError::Corrupt(format!("trust summary {}: unknown kind", self.target_id)))?,
            target_id: stored_id(&self.target_id, "trust target")?,
            content_id: stored_optional_id(self.content_id.as_deref(), "trust content")?,
            version: self.version,
            value: self.value,
            lower_bound: self.lower_bound,
            upper_bound: self.upper_bound,
            status: super::stored_status(&self.status, &format!("trust summary {}", self.target_id))?,
            rule: self.rule,
            reason: self.reason,
            independent_confirmations: self.independent_confirmations,
            contradictions: self.contradictions,
            real_world_confirmations: self.real_world_confirmations,
            strong_refutations: self.strong_refutations,
            evidence_records: self.evidence_records,
            computed_at: self.computed_at,
            first_party: FirstPartySummary {
                value: self.first_party_value,
                lower_bound: self.first_party_lower_bound,
                status: super::stored_status(&self.first_party_status, &format!("trust summary {}", self.target_id))?,
                independent_confirmations: self.first_party_independent_confirmations,
                contradictions: self.first_party_contradictions,
                real_world_confirmations: self.first_party_real_world_confirmations,
            },
        })
    }
}

const SUMMARY_COLUMNS: &str = "target_id, target_kind, content_id, version, value, lower_bound, upper_bound, status, \
    rule, reason, independent_confirmations, contradictions, real_world_confirmations, strong_refutations, \
    evidence_records, computed_at, first_party_value, first_party_lower_bound, first_party_status, \
    first_party_independent_confirmations, first_party_contradictions, first_party_real_world_confirmations";

/// A trust summary, replacing the previous one of the same target.
const TRUST_SUMMARY: InsertShape = InsertShape::new(
    "trust_summaries",
    &[
        Column::new("target_id", SqlType::Text),
        Column::new("target_kind", SqlType::Text),
        Column::new("content_id", SqlType::Text),
        Column::new("version", SqlType::BigInt),
        Column::new("value", SqlType::DoublePrecision),
        Column::new("lower_bound", SqlType::DoublePrecision),
        Column::new("upper_bound", SqlType::DoublePrecision),
        Column::new("status", SqlType::Text),
        Column::new("rule", SqlType::Text),
        Column::new("reason", SqlType::Text),
        Column::new("independent_confirmations", SqlType::Integer),
        Column::new("contradictions", SqlType::Integer),
        Column::new("real_world_confirmations", SqlType::Integer),
        Column::new("strong_refutations", SqlType::Integer),
        Column::new("evidence_records", SqlType::Integer),
        Column::new("computed_at", SqlType::TimestampTz),
        Column::new("first_party_value", SqlType::DoublePrecision),
        Column::new("first_party_lower_bound", SqlType::DoublePrecision),
        Column::new("first_party_status", SqlType::Text),
        Column::new("first_party_independent_confirmations", SqlType::Integer),
        Column::new("first_party_contradictions", SqlType::Integer),
        Column::new("first_party_real_world_confirmations", SqlType::Integer),
    ],
)
.on_conflict(OnConflict::Update {
    key: &["target_id"],
    set: "version = excluded.version, value = excluded.value, \
         lower_bound = excluded.lower_bound, upper_bound = excluded.upper_bound, status = excluded.status, \
         rule = excluded.rule, reason = excluded.reason, \
         independent_confirmations = excluded.independent_confirmations, contradictions = excluded.contradictions, \
         real_world_confirmations = excluded.real_world_confirmations, \
         strong_refutations = excluded.strong_refutations, evidence_records = excluded.evidence_records, \
         computed_at = excluded.computed_at, first_party_value = excluded.first_party_value, \
         first_party_lower_bound = excluded.first_party_lower_bound, first_party_status = excluded.first_party_status, \
         first_party_independent_confirmations = excluded.first_party_independent_confirmations, \
         first_party_contradictions = excluded.first_party_contradictions, \
         first_party_real_world_confirmations = excluded.first_party_real_world_confirmations",
});

/// Writes summaries, each replacing the previous one of the same target, in one statement.
pub async fn upsert_summaries(conn: &mut Conn<'_>, summaries: &[TrustSummaryRecord]) -> Result<(), StoreError> {
    if summaries.is_empty() {
        return Ok(());
    }
    let statement = Insert::rows(&TRUST_SUMMARY, summaries, |summary| {
        vec![
            Bind::from(summary.target_id.as_str()),
            Bind::from(summary.target_kind.as_str()),
            Bind::from(summary.content_id.as_ref().map(PublicId::as_str)),
            Bind::from(summary.version),
            Bind::from(summary.value),
            Bind::from(summary.lower_bound),
            Bind::from(summary.upper_bound),
            Bind::from(summary.status.as_str()),
            Bind::from(&summary.rule),
            Bind::from(&summary.reason),
            Bind::from(summary.independent_confirmations),
            Bind::from(summary.contradictions),
            Bind::from(summary.real_world_confirmations),
            Bind::from(summary.strong_refutations),
            Bind::from(summary.evidence_records),
            Bind::from(summary.computed_at),
            Bind::from(summary.first_party.value),
            Bind::from(summary.first_party.lower_bound),
            Bind::from(summary.first_party.status.as_str()),
            Bind::from(summary.first_party.independent_confirmations),
            Bind::from(summary.first_party.contradictions),
            Bind::from(summary.first_party.real_world_confirmations),
        ]
    });
    super::statement::execute(conn, statement).await
}

/// The summary of a target.
pub async fn find_summary(conn: &mut Conn<'_>, target_id: &PublicId) -> Result<Option<TrustSummaryRecord>, StoreError> {
    let row: Option<TrustSummaryRow> = dispatch!(conn, |connection| {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {SUMMARY_COLUMNS} FROM trust_summaries WHERE target_id = $1"
        )))
        .bind(target_id.as_str())
        .fetch_optional(&mut *connection)
        .await?
    });
    row.map(TrustSummaryRow::into_record).transpose()
}

/// The summaries of several targets in one statement, in no particular order (targets without a summary are left
/// out).
pub async fn find_summaries(
    conn: &mut Conn<'_>,
    target_ids: &[PublicId],
) -> Result<Vec<TrustSummaryRecord>, StoreError> {
    if target_ids.is_empty() {
        return Ok(Vec::new());
    }
    let placeholders: Vec<String> = (1..=target_ids.len()).map(|position| format!("${position}")).collect();
    let sql = format!(
        "SELECT {SUMMARY_COLUMNS} FROM trust_summaries WHERE target_id IN ({})",
        placeholders.join(", ")
    );
    let rows: Vec<TrustSummaryRow> = dispatch!(conn, |connection| {
        let mut query = sqlx::query_as(sqlx::AssertSqlSafe(sql.clone()));
        for target_id in target_ids {
            query = query.bind(target_id.as_str());
        }
        query.fetch_all(&mut *connection).await?
    });
    rows.into_iter().map(TrustSummaryRow::into_record).collect()
}

/// A target's summary with, for a revision, whether its content item is replaced: what evaluating the target's
/// trust needs besides its evidence. An evidence change reads it locked (see [`lock_summary`]).
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryWithSupersession {
    /// The persisted summary.
    pub summary: TrustSummaryRecord,
    /// For a revision: its item's current revision, and whether an effective `supersedes` relation replaces the
    /// item (see [`super::knowledge::supersession_of`]). `None` for claims and entities.
    pub supersession: Option<super::knowledge::Supersession>,
}

#[derive(sqlx::FromRow)]
struct SummaryWithSupersessionRow {
    #[sqlx(flatten)]
    summary: TrustSummaryRow,
    current_revision_id: Option<String>,
    has_effective_superseder: Option<bool>,
}

/// What an evidence change reads of its target before applying: the summary with its supersession in one statement,
/// the summary locked until the transaction ends so that changes to one target apply one after another (PostgreSQL;
/// SQLite's single writer already serializes). `content_id` is the content item of a revision target. `None` when
/// the target has no summary yet.
pub async fn lock_summary(
    conn: &mut Conn<'_>,
    target_id: &PublicId,
    content_id: Option<&PublicId>,
) -> Result<Option<SummaryWithSupersession>, StoreError> {
    read_summary_with_supersession(conn, target_id, content_id, true).await
}

/// The summary of a target with its supersession, in one statement and without a lock (for reads).
pub async fn summary_with_supersession(
    conn: &mut Conn<'_>,
    target_id: &PublicId,
    content_id: Option<&PublicId>,
) -> Result<Option<SummaryWithSupersession>, StoreError> {
    read_summary_with_supersession(conn, target_id, content_id, false).await
}

async fn read_summary_with_supersession(
    conn: &mut Conn<'_>,
    target_id: &PublicId,
    content_id: Option<&PublicId>,
    lock: bool,
) -> Result<Option<SummaryWithSupersession>, StoreError> {
    // The supersession is read as `supersession_of` reads it, for the summary's content item.
    let select = format!(
        "SELECT {summary_columns}, ci.current_revision_id, {superseded} AS has_effective_superseder \
         FROM trust_summaries ts LEFT JOIN content_items ci ON ci.id = $2 WHERE ts.target_id = $1",
        summary_columns = qualified_summary_columns("ts"),
        superseded = super::knowledge::effective_superseder_exists("ci"),
    );
    let content = content_id.map(PublicId::as_str);
    let row: Option<SummaryWithSupersessionRow> = match conn {
        postgres @ (Conn::Postgres(_) | Conn::PostgresWrite(_)) => {
            let connection = super::postgres_connection(postgres).await?;
            let select = if lock {
                format!("{select} FOR UPDATE OF ts")
            } else {
                select
            };
            sqlx::query_as(sqlx::AssertSqlSafe(select))
                .bind(target_id.as_str())
                .bind(content)
                .fetch_optional(&mut *connection)
                .await?
        }
        sqlite => {
            let connection = super::sqlite_connection(sqlite).await?;
            sqlx::query_as(sqlx::AssertSqlSafe(select))
                .bind(target_id.as_str())
                .bind(content)
                .fetch_optional(&mut *connection)
                .await?
        }
    };
    let Some(row) = row else {
        return Ok(None);
    };
    let supersession = match (content_id, row.current_revision_id) {
        (Some(_), Some(current)) => Some(super::knowledge::Supersession {
            current_revision_id: stored_id(&current, "current revision id")?,
            has_effective_superseder: row.has_effective_superseder.unwrap_or(false),
        }),
        (Some(content), None) => {
            return Err(StoreError::Corrupt(format!(
                "trust summary {target_id} names content {content}, which does not exist"
            )));
        }
        (None, _) => None,
    };
    Ok(Some(SummaryWithSupersession {
        summary: row.summary.into_record()?,
        supersession,
    }))
}

/// The summary columns, each prefixed with a table alias.
fn qualified_summary_columns(alias: &str) -> String {
    SUMMARY_COLUMNS
        .split(',')
        .map(|column| format!("{alias}.{}", column.trim()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A rating aggregate row.
#[derive(Debug, Clone, PartialEq)]
pub struct RatingAggregateRecord {
    /// The rated entity or content item.
    pub target_id: PublicId,
    /// The dimension.
    pub dimension: String,
    /// The context key (`*` for all contexts).
    pub context_key: ContextKey,
    /// 0–100.
    pub score: f64,
    /// 5% quantile on the 0–100 scale.
    pub lower_bound: f64,
    /// 95% quantile on the 0–100 scale.
    pub upper_bound: f64,
    /// Independent raters (parties).
    pub independent_raters: i32,
    /// Effective number of raters after caps and decay.
    pub effective_raters: f64,
    /// When it was computed.
    pub updated_at: DateTime<Utc>,
}

#[derive(sqlx::FromRow)]
struct RatingAggregateRow {
    target_id: String,
    dimension: String,
    context_key: String,
    score: f64,
    lower_bound: f64,
    upper_bound: f64,
    independent_raters: i32,
    effective_raters: f64,
    updated_at: DateTime<Utc>,
}

/// Replaces every aggregate of (target, dimension) with `aggregates`.
pub async fn replace_rating_aggregates(
    conn: &mut Conn<'_>,
    target_id: &PublicId,
    dimension: &str,
    aggregates: &[RatingAggregateRecord],
) -> Result<(), StoreError> {
    dispatch!(conn, |connection| {
        sqlx::query("DELETE FROM rating_aggregates WHERE target_id = $1 AND dimension = $2")
            .bind(target_id.as_str())
            .bind(dimension)
            .execute(&mut *connection)
            .await?;
        for aggregate in aggregates {
            sqlx::query(
                "INSERT INTO rating_aggregates (target_id, dimension, context_key, score, lower_bound, upper_bound, \
                 independent_raters, effective_raters, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            )
            .bind(aggregate.target_id.as_str())
            .bind(&aggregate.dimension)
            .bind(aggregate.context_key.to_string())
            .bind(aggregate.score)
            .bind(aggregate.lower_bound)
            .bind(aggregate.upper_bound)
            .bind(aggregate.independent_raters)
            .bind(aggregate.effective_raters)
            .bind(aggregate.updated_at)
            .execute(&mut *connection)
            .await?;
        }
    });
    Ok(())
}

/// Every aggregate of a target, by dimension and context.
pub async fn rating_aggregates_of_target(
    conn: &mut Conn<'_>,
    target_id: &PublicId,
) -> Result<Vec<RatingAggregateRecord>, StoreError> {
    let rows: Vec<RatingAggregateRow> = dispatch!(conn, |connection| {
        sqlx::query_as(
            "SELECT target_id, dimension, context_key, score, lower_bound, upper_bound, independent_raters, \
             effective_raters, updated_at FROM rating_aggregates WHERE target_id = $1 ORDER BY dimension, context_key",
        )
        .bind(target_id.as_str())
        .fetch_all(&mut *connection)
        .await?
    });
    rows.into_iter()
        .map(|row| {
            Ok(RatingAggregateRecord {
                target_id: stored_id(&row.target_id, "aggregate target")?,
                dimension: row.dimension,
                context_key: super::stored_context_key(
                    &row.context_key,
                    &format!("rating aggregate of {}", row.target_id),
                )?,
                score: row.score,
                lower_bound: row.lower_bound,
                upper_bound: row.upper_bound,
                independent_raters: row.independent_raters,
                effective_raters: row.effective_raters,
                updated_at: row.updated_at,
            })
        })
        .collect()
}

/// One judged observation of a controller's evidence.
#[derive(Debug, Clone, PartialEq)]
pub struct ReputationObservationRecord {
    /// The judged evidence record.
    pub record_id: PublicId,
    /// Its controller.
    pub root_controller_id: PublicId,
    /// The target it was about.
    pub target_id: PublicId,
    /// Whether the record's stance was positive.
    pub positive_stance: bool,
    /// Whether the decided status was positive (supported or high confidence) rather than incorrect.
    pub positive_decision: bool,
    /// When the record was made.
    pub recorded_at: DateTime<Utc>,
    /// When the target's status was decided.
    pub decided_at: DateTime<Utc>,
}

/// A reputation observation, once per record.
const REPUTATION_OBSERVATION: InsertShape = InsertShape::new(
    "reputation_observations",
    &[
        Column::new("record_id", SqlType::Text),
        Column::new("root_controller_id", SqlType::Text),
        Column::new("target_id", SqlType::Text),
        Column::new("stance", SqlType::Text),
        Column::new("decision", SqlType::Text),
        Column::new("recorded_at", SqlType::TimestampTz),
        Column::new("decided_at", SqlType::TimestampTz),
    ],
)
.on_conflict(OnConflict::Ignore { key: &["record_id"] });

/// Records an observation unless one exists for the record already.
pub async fn insert_reputation_observation(
    conn: &mut Conn<'_>,
    observation: &ReputationObservationRecord,
) -> Result<(), StoreError> {
    super::statement::execute(
        conn,
        Insert::new(&REPUTATION_OBSERVATION)
            .bind(observation.record_id.as_str())
            .bind(observation.root_controller_id.as_str())
            .bind(observation.target_id.as_str())
            .bind(if observation.positive_stance {
                "positive"
            } else {
                "negative"
            })
            .bind(if observation.positive_decision {
                "positive"
            } else {
                "negative"
            })
            .bind(observation.recorded_at)
            .bind(observation.decided_at),
    )
    .await
}

/// record_id, root_controller_id, target_id, stance, decision, recorded_at, decided_at.
type ObservationRow = (String, String, String, String, String, DateTime<Utc>, DateTime<Utc>);

/// Every observation of a controller.
pub async fn reputation_observations_of(
    conn: &mut Conn<'_>,
    root_controller_id: &PublicId,
) -> Result<Vec<ReputationObservationRecord>, StoreError> {
    let rows: Vec<ObservationRow> = dispatch!(conn, |connection| {
        sqlx::query_as(
            "SELECT record_id, root_controller_id, target_id, stance, decision, recorded_at, decided_at \
             FROM reputation_observations WHERE root_controller_id = $1 ORDER BY record_id",
        )
        .bind(root_controller_id.as_str())
        .fetch_all(&mut *connection)
        .await?
    });
    rows.into_iter()
        .map(
            |(record_id, controller, target, stance, decision, recorded_at, decided_at)| {
                Ok(ReputationObservationRecord {
                    record_id: stored_id(&record_id, "observation record")?,
                    root_controller_id: stored_id(&controller, "observation controller")?,
                    target_id: stored_id(&target, "observation target")?,
                    positive_stance: stance == "positive",
                    positive_decision: decision == "positive",
                    recorded_at,
                    decided_at,
                })
            },
        )
        .collect()
}
