//! Evidence rows: usage events, reviews and ratings. Rows are never deleted; retraction flips `status`.

use chrono::{DateTime, Utc};
use sqlx::types::Json;

use super::statement::{Column, InsertShape, SqlType};
use super::{Conn, StoreError, dispatch, stored_context_key, stored_id, stored_optional_id};
use crate::domain::PublicId;
use crate::domain::evidence::{
    CitedSource, Grounding, Rating, RecordAuthor, RecordStatus, Review, StandingSnapshot, UsageEvent, UsageOutcome,
    Verdict,
};

fn status(text: &str, id: &str) -> Result<RecordStatus, StoreError> {
    RecordStatus::parse(text).ok_or_else(|| StoreError::Corrupt(format!("record {id}: unknown status")))
}

// ---------------------------------------------------------------- usage events

#[derive(sqlx::FromRow)]
struct UsageRow {
    id: String,
    target_id: String,
    target_content_id: Option<String>,
    actor_id: String,
    root_controller_id: String,
    origin: String,
    origin_proof_verified: bool,
    usage_type: String,
    result: String,
    real_world_use: bool,
    context: Json<serde_json::Value>,
    context_key: String,
    metrics: Json<serde_json::Value>,
    note: Option<String>,
    experience_id: Option<String>,
    standing_reputation: f64,
    standing_prior_records: i32,
    standing_account_created_at: DateTime<Utc>,
    status: String,
    retracted_at: Option<DateTime<Utc>>,
    created_at: DateTime<Utc>,
}

impl UsageRow {
    fn into_usage(self) -> Result<UsageEvent, StoreError> {
        Ok(UsageEvent {
            target_id: stored_id(&self.target_id, "usage target")?,
            target_content_id: stored_optional_id(self.target_content_id.as_deref(), "usage content")?,
            author: RecordAuthor {
                actor_id: stored_id(&self.actor_id, "usage actor")?,
                root_controller_id: stored_id(&self.root_controller_id, "usage controller")?,
                origin: self.origin,
                origin_proof_verified: self.origin_proof_verified,
            },
            result: UsageOutcome::parse(&self.result)
                .ok_or_else(|| StoreError::Corrupt(format!("usage {}: unknown result", self.id)))?,
            experience_id: stored_optional_id(self.experience_id.as_deref(), "usage experience")?,
            status: status(&self.status, &self.id)?,
            id: stored_id(&self.id, "usage id")?,
            usage_type: self.usage_type,
            real_world_use: self.real_world_use,
            context: self.context.0,
            context_key: stored_context_key(&self.context_key, &format!("usage {}", self.id))?,
            metrics: self.metrics.0,
            note: self.note,
            standing: StandingSnapshot {
                reputation: self.standing_reputation,
                prior_records: self.standing_prior_records,
                account_created_at: self.standing_account_created_at,
            },
            retracted_at: self.retracted_at,
            created_at: self.created_at,
        })
    }
}

/// A usage event's row.
const USAGE_EVENT: InsertShape = InsertShape::new(
    "usage_events",
    &[
        Column::new("id", SqlType::Text),
        Column::new("target_id", SqlType::Text),
        Column::new("target_content_id", SqlType::Text),
        Column::new("actor_id", SqlType::Text),
        Column::new("root_controller_id", SqlType::Text),
        Column::new("origin", SqlType::Text),
        Column::new("usage_type", SqlType::Text),
        Column::new("result", SqlType::Text),
        Column::new("real_world_use", SqlType::Boolean),
        Column::new("context", SqlType::Jsonb),
        Column::new("context_key", SqlType::Text),
        Column::new("metrics", SqlType::Jsonb),
        Column::new("note", SqlType::Text),
        Column::new("experience_id", SqlType::Text),
        Column::new("standing_reputation", SqlType::DoublePrecision),
        Column::new("standing_prior_records", SqlType::Integer),
        Column::new("standing_account_created_at", SqlType::TimestampTz),
        Column::new("status", SqlType::Text),
        Column::new("retracted_at", SqlType::TimestampTz),
        Column::new("created_at", SqlType::TimestampTz),
        Column::new("origin_proof_verified", SqlType::Boolean),
    ],
);

/// A review's row.
const REVIEW: InsertShape = InsertShape::new(
    "reviews",
    &[
        Column::new("id", SqlType::Text),
        Column::new("target_id", SqlType::Text),
        Column::new("target_content_id", SqlType::Text),
        Column::new("actor_id", SqlType::Text),
        Column::new("root_controller_id", SqlType::Text),
        Column::new("origin", SqlType::Text),
        Column::new("verdict", SqlType::Text),
        Column::new("confidence", SqlType::DoublePrecision),
        Column::new("rationale_markdown", SqlType::Text),
        Column::new("sources", SqlType::Jsonb),
        Column::new("based_on_usage_id", SqlType::Text),
        Column::new("grounding", SqlType::Text),
        Column::new("standing_reputation", SqlType::DoublePrecision),
        Column::new("standing_prior_records", SqlType::Integer),
        Column::new("standing_account_created_at", SqlType::TimestampTz),
        Column::new("status", SqlType::Text),
        Column::new("retracted_at", SqlType::TimestampTz),
        Column::new("created_at", SqlType::TimestampTz),
        Column::new("origin_proof_verified", SqlType::Boolean),
    ],
);

/// A rating's row.
const RATING: InsertShape = InsertShape::new(
    "ratings",
    &[
        Column::new("id", SqlType::Text),
        Column::new("target_id", SqlType::Text),
        Column::new("actor_id", SqlType::Text),
        Column::new("root_controller_id", SqlType::Text),
        Column::new("origin", SqlType::Text),
        Column::new("dimension", SqlType::Text),
        Column::new("score", SqlType::DoublePrecision),
        Column::new("confidence", SqlType::DoublePrecision),
        Column::new("context", SqlType::Jsonb),
        Column::new("context_key", SqlType::Text),
        Column::new("based_on_usage_id", SqlType::Text),
        Column::new("rationale_markdown", SqlType::Text),
        Column::new("status", SqlType::Text),
        Column::new("retracted_at", SqlType::TimestampTz),
        Column::new("created_at", SqlType::TimestampTz),
        Column::new("origin_proof_verified", SqlType::Boolean),
    ],
);

const USAGE_COLUMNS: &str = "id, target_id, target_content_id, actor_id, root_controller_id, origin, usage_type, result, \
    real_world_use, context, context_key, metrics, note, experience_id, standing_reputation, standing_prior_records, \
    standing_account_created_at, status, retracted_at, created_at, origin_proof_verified";

/// Inserts a usage event.
pub async fn insert_usage(conn: &mut Conn<'_>, usage: &UsageEvent) -> Result<(), StoreError> {
    super::statement::execute(
        conn,
        super::statement::Insert::new(&USAGE_EVENT)
            .bind(usage.id.as_str())
            .bind(usage.target_id.as_str())
            .bind(usage.target_content_id.as_ref().map(PublicId::as_str))
            .bind(usage.author.actor_id.as_str())
            .bind(usage.author.root_controller_id.as_str())
            .bind(&usage.author.origin)
            .bind(&usage.usage_type)
            .bind(usage.result.as_str())
            .bind(usage.real_world_use)
            .bind(&usage.context)
            .bind(usage.context_key.to_string().as_str())
            .bind(&usage.metrics)
            .bind(&usage.note)
            .bind(usage.experience_id.as_ref().map(PublicId::as_str))
            .bind(usage.standing.reputation)
            .bind(usage.standing.prior_records)
            .bind(usage.standing.account_created_at)
            .bind(usage.status.as_str())
            .bind(usage.retracted_at)
            .bind(usage.created_at)
            .bind(usage.author.origin_proof_verified),
    )
    .await
}

/// The usage event with this ID.
pub async fn find_usage(conn: &mut Conn<'_>, id: &PublicId) -> Result<Option<UsageEvent>, StoreError> {
    let row: Option<UsageRow> = dispatch!(conn, |connection| {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {USAGE_COLUMNS} FROM usage_events WHERE id = $1"
        )))
        .bind(id.as_str())
        .fetch_optional(&mut *connection)
        .await?
    });
    row.map(UsageRow::into_usage).transpose()
}

/// Every usage event on a target (active and retracted), oldest first.
pub async fn usage_on_target(conn: &mut Conn<'_>, target_id: &PublicId) -> Result<Vec<UsageEvent>, StoreError> {
    let rows: Vec<UsageRow> = dispatch!(conn, |connection| {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {USAGE_COLUMNS} FROM usage_events WHERE target_id = $1 ORDER BY created_at, id"
        )))
        .bind(target_id.as_str())
        .fetch_all(&mut *connection)
        .await?
    });
    rows.into_iter().map(UsageRow::into_usage).collect()
}

/// The usage events reported with an experience, in order.
pub async fn usage_of_experience(conn: &mut Conn<'_>, experience_id: &PublicId) -> Result<Vec<UsageEvent>, StoreError> {
    let rows: Vec<UsageRow> = dispatch!(conn, |connection| {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {USAGE_COLUMNS} FROM usage_events WHERE experience_id = $1 ORDER BY id"
        )))
        .bind(experience_id.as_str())
        .fetch_all(&mut *connection)
        .await?
    });
    rows.into_iter().map(UsageRow::into_usage).collect()
}

// ---------------------------------------------------------------- reviews

#[derive(sqlx::FromRow)]
struct ReviewRow {
    id: String,
    target_id: String,
    target_content_id: Option<String>,
    actor_id: String,
    root_controller_id: String,
    origin: String,
    origin_proof_verified: bool,
    verdict: String,
    confidence: f64,
    rationale_markdown: String,
    sources: Json<Vec<StoredCitedSource>>,
    based_on_usage_id: Option<String>,
    grounding: String,
    standing_reputation: f64,
    standing_prior_records: i32,
    standing_account_created_at: DateTime<Utc>,
    status: String,
    retracted_at: Option<DateTime<Utc>>,
    created_at: DateTime<Utc>,
}

/// How a cited source is stored inside a review row.
#[derive(serde::Serialize, serde::Deserialize)]
struct StoredCitedSource {
    source_id: String,
    url: String,
    title: Option<String>,
}

impl ReviewRow {
    fn into_review(self) -> Result<Review, StoreError> {
        let sources = self
            .sources
            .0
            .into_iter()
            .map(|source| {
                Ok(CitedSource {
                    source_id: stored_id(&source.source_id, "cited source")?,
                    url: source.url,
                    title: source.title,
                })
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        Ok(Review {
            target_id: stored_id(&self.target_id, "review target")?,
            target_content_id: stored_optional_id(self.target_content_id.as_deref(), "review content")?,
            author: RecordAuthor {
                actor_id: stored_id(&self.actor_id, "review actor")?,
                root_controller_id: stored_id(&self.root_controller_id, "review controller")?,
                origin: self.origin,
                origin_proof_verified: self.origin_proof_verified,
            },
            verdict: Verdict::parse(&self.verdict)
                .ok_or_else(|| StoreError::Corrupt(format!("review {}: unknown verdict", self.id)))?,
            grounding: Grounding::parse(&self.grounding)
                .ok_or_else(|| StoreError::Corrupt(format!("review {}: unknown grounding", self.id)))?,
            based_on_usage_id: stored_optional_id(self.based_on_usage_id.as_deref(), "review usage")?,
            status: status(&self.status, &self.id)?,
            id: stored_id(&self.id, "review id")?,
            confidence: self.confidence,
            rationale_markdown: self.rationale_markdown,
            sources,
            standing: StandingSnapshot {
                reputation: self.standing_reputation,
                prior_records: self.standing_prior_records,
                account_created_at: self.standing_account_created_at,
            },
            retracted_at: self.retracted_at,
            created_at: self.created_at,
        })
    }
}

const REVIEW_COLUMNS: &str = "id, target_id, target_content_id, actor_id, root_controller_id, origin, verdict, confidence, \
    rationale_markdown, sources, based_on_usage_id, grounding, standing_reputation, standing_prior_records, \
    standing_account_created_at, status, retracted_at, created_at, origin_proof_verified";

/// Inserts a review.
pub async fn insert_review(conn: &mut Conn<'_>, review: &Review) -> Result<(), StoreError> {
    let sources: Vec<StoredCitedSource> = review
        .sources
        .iter()
        .map(|source| StoredCitedSource {
            source_id: source.source_id.as_str().to_owned(),
            url: source.url.clone(),
            title: source.title.clone(),
        })
        .collect();
    let sources =
        serde_json::to_value(&sources).map_err(|error| StoreError::Corrupt(format!("review sources: {error}")))?;
    super::statement::execute(
        conn,
        super::statement::Insert::new(&REVIEW)
            .bind(review.id.as_str())
            .bind(review.target_id.as_str())
            .bind(review.target_content_id.as_ref().map(PublicId::as_str))
            .bind(review.author.actor_id.as_str())
            .bind(review.author.root_controller_id.as_str())
            .bind(&review.author.origin)
            .bind(review.verdict.as_str())
            .bind(review.confidence)
            .bind(&review.rationale_markdown)
            .bind(&sources)
            .bind(review.based_on_usage_id.as_ref().map(PublicId::as_str))
            .bind(review.grounding.as_str())
            .bind(review.standing.reputation)
            .bind(review.standing.prior_records)
            .bind(review.standing.account_created_at)
            .bind(review.status.as_str())
            .bind(review.retracted_at)
            .bind(review.created_at)
            .bind(review.author.origin_proof_verified),
    )
    .await
}

/// The review with this ID.
pub async fn find_review(conn: &mut Conn<'_>, id: &PublicId) -> Result<Option<Review>, StoreError> {
    let row: Option<ReviewRow> = dispatch!(conn, |connection| {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {REVIEW_COLUMNS} FROM reviews WHERE id = $1"
        )))
        .bind(id.as_str())
        .fetch_optional(&mut *connection)
        .await?
    });
    row.map(ReviewRow::into_review).transpose()
}

/// Every review of a target (active and retracted), oldest first.
pub async fn reviews_of_target(conn: &mut Conn<'_>, target_id: &PublicId) -> Result<Vec<Review>, StoreError> {
    let rows: Vec<ReviewRow> = dispatch!(conn, |connection| {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {REVIEW_COLUMNS} FROM reviews WHERE target_id = $1 ORDER BY created_at, id"
        )))
        .bind(target_id.as_str())
        .fetch_all(&mut *connection)
        .await?
    });
    rows.into_iter().map(ReviewRow::into_review).collect()
}

// ---------------------------------------------------------------- ratings

#[derive(sqlx::FromRow)]
struct RatingRow {
    id: String,
    target_id: String,
    actor_id: String,
    root_controller_id: String,
    origin: String,
    origin_proof_verified: bool,
    dimension: String,
    score: f64,
    confidence: f64,
    context: Json<serde_json::Value>,
    context_key: String,
    based_on_usage_id: Option<String>,
    rationale_markdown: String,
    status: String,
    retracted_at: Option<DateTime<Utc>>,
    created_at: DateTime<Utc>,
}

impl RatingRow {
    fn into_rating(self) -> Result<Rating, StoreError> {
        Ok(Rating {
            target_id: stored_id(&self.target_id, "rating target")?,
            author: RecordAuthor {
                actor_id: stored_id(&self.actor_id, "rating actor")?,
                root_controller_id: stored_id(&self.root_controller_id, "rating controller")?,
                origin: self.origin,
                origin_proof_verified: self.origin_proof_verified,
            },
            based_on_usage_id: stored_optional_id(self.based_on_usage_id.as_deref(), "rating usage")?,
            status: status(&self.status, &self.id)?,
            id: stored_id(&self.id, "rating id")?,
            dimension: self.dimension,
            score: self.score,
            confidence: self.confidence,
            context: self.context.0,
            context_key: stored_context_key(&self.context_key, &format!("rating {}", self.id))?,
            rationale_markdown: self.rationale_markdown,
            retracted_at: self.retracted_at,
            created_at: self.created_at,
        })
    }
}

const RATING_COLUMNS: &str = "id, target_id, actor_id, root_controller_id, origin, dimension, score, confidence, context, \
    context_key, based_on_usage_id, rationale_markdown, status, retracted_at, created_at, origin_proof_verified";

/// Inserts a rating.
pub async fn insert_rating(conn: &mut Conn<'_>, rating: &Rating) -> Result<(), StoreError> {
    super::statement::execute(
        conn,
        super::statement::Insert::new(&RATING)
            .bind(rating.id.as_str())
            .bind(rating.target_id.as_str())
            .bind(rating.author.actor_id.as_str())
            .bind(rating.author.root_controller_id.as_str())
            .bind(&rating.author.origin)
            .bind(&rating.dimension)
            .bind(rating.score)
            .bind(rating.confidence)
            .bind(&rating.context)
            .bind(rating.context_key.to_string().as_str())
            .bind(rating.based_on_usage_id.as_ref().map(PublicId::as_str))
            .bind(&rating.rationale_markdown)
            .bind(rating.status.as_str())
            .bind(rating.retracted_at)
            .bind(rating.created_at)
            .bind(rating.author.origin_proof_verified),
    )
    .await
}

/// The rating with this ID.
pub async fn find_rating(conn: &mut Conn<'_>, id: &PublicId) -> Result<Option<Rating>, StoreError> {
    let row: Option<RatingRow> = dispatch!(conn, |connection| {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {RATING_COLUMNS} FROM ratings WHERE id = $1"
        )))
        .bind(id.as_str())
        .fetch_optional(&mut *connection)
        .await?
    });
    row.map(RatingRow::into_rating).transpose()
}

/// Every rating of a target on a dimension (active and retracted), oldest first.
pub async fn ratings_of_target_dimension(
    conn: &mut Conn<'_>,
    target_id: &PublicId,
    dimension: &str,
) -> Result<Vec<Rating>, StoreError> {
    let rows: Vec<RatingRow> = dispatch!(conn, |connection| {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {RATING_COLUMNS} FROM ratings WHERE target_id = $1 AND dimension = $2 ORDER BY created_at, id"
        )))
        .bind(target_id.as_str())
        .bind(dimension)
        .fetch_all(&mut *connection)
        .await?
    });
    rows.into_iter().map(RatingRow::into_rating).collect()
}

// ---------------------------------------------------------------- shared

/// Marks a usage event, review or rating retracted. Returns whether a row changed.
pub async fn retract(
    conn: &mut Conn<'_>,
    record_id: &PublicId,
    retracted_at: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let table = match record_id.kind() {
        crate::domain::IdKind::Usage => "usage_events",
        crate::domain::IdKind::Review => "reviews",
        crate::domain::IdKind::Rating => "ratings",
        _ => return Ok(false),
    };
    let affected = dispatch!(conn, |connection| {
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "UPDATE {table} SET status = 'retracted', retracted_at = $2 WHERE id = $1 AND status = 'active'"
        )))
        .bind(record_id.as_str())
        .bind(retracted_at)
        .execute(&mut *connection)
        .await?
        .rows_affected()
    });
    Ok(affected > 0)
}

/// What a root controller's evidence standing reads from its history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ControllerHistory {
    /// Active usage events plus active reviews, each kind counted up to the cap.
    pub prior_records: i64,
    /// When the controller's account was created; `None` when the actor row is missing.
    pub account_created_at: Option<DateTime<Utc>>,
}

/// How many active usage events and reviews a root controller has made, counted up to `cap` of each kind (the
/// refutation gate only asks whether the history reaches a small threshold, and a bounded count keeps every write
/// cheap however long the history grows), and when its account was created.
pub async fn controller_history(
    conn: &mut Conn<'_>,
    root_controller_id: &PublicId,
    cap: i64,
) -> Result<ControllerHistory, StoreError> {
    // One statement instead of two: every write asks for both, and on SQLite each statement is a round trip to the
    // connection's thread while the single write lock is held.
    let (prior_records, account_created_at): (i64, Option<DateTime<Utc>>) = dispatch!(conn, |connection| {
        sqlx::query_as(
            "SELECT (SELECT COUNT(*) FROM (SELECT 1 FROM usage_events WHERE root_controller_id = $1 AND status = 'active' \
             LIMIT $2) AS usage_history) + (SELECT COUNT(*) FROM (SELECT 1 FROM reviews WHERE root_controller_id = $1 \
             AND status = 'active' LIMIT $2) AS review_history), (SELECT created_at FROM actors WHERE id = $1)",
        )
        .bind(root_controller_id.as_str())
        .bind(cap)
        .fetch_one(&mut *connection)
        .await?
    });
    Ok(ControllerHistory {
        prior_records,
        account_created_at,
    })
}

/// Counts of usage events on a target by (result, real-world flag, status).
pub async fn usage_counts(
    conn: &mut Conn<'_>,
    target_id: &PublicId,
) -> Result<Vec<(String, bool, String, i64)>, StoreError> {
    let rows: Vec<(String, bool, String, i64)> = dispatch!(conn, |connection| {
        sqlx::query_as(
            "SELECT result, real_world_use, status, COUNT(*) FROM usage_events WHERE target_id = $1 \
             GROUP BY result, real_world_use, status ORDER BY result, real_world_use, status",
        )
        .bind(target_id.as_str())
        .fetch_all(&mut *connection)
        .await?
    });
    Ok(rows)
}

/// Counts of reviews of a target by (verdict, status).
pub async fn review_counts(
    conn: &mut Conn<'_>,
    target_id: &PublicId,
) -> Result<Vec<(String, String, i64)>, StoreError> {
    let rows: Vec<(String, String, i64)> = dispatch!(conn, |connection| {
        sqlx::query_as(
            "SELECT verdict, status, COUNT(*) FROM reviews WHERE target_id = $1 GROUP BY verdict, status ORDER BY verdict, status",
        )
        .bind(target_id.as_str())
        .fetch_all(&mut *connection)
        .await?
    });
    Ok(rows)
}

/// Counts of ratings of a target by (dimension, status).
pub async fn rating_counts(
    conn: &mut Conn<'_>,
    target_id: &PublicId,
) -> Result<Vec<(String, String, i64)>, StoreError> {
    let rows: Vec<(String, String, i64)> = dispatch!(conn, |connection| {
        sqlx::query_as(
            "SELECT dimension, status, COUNT(*) FROM ratings WHERE target_id = $1 GROUP BY dimension, status \
             ORDER BY dimension, status",
        )
        .bind(target_id.as_str())
        .fetch_all(&mut *connection)
        .await?
    });
    Ok(rows)
}

/// A page of rows of `table` about a target, newest first, strictly before `before` (created_at, id).
async fn page_of<Row>(
    conn: &mut Conn<'_>,
    table: &str,
    columns: &str,
    target_id: &PublicId,
    before: Option<&(DateTime<Utc>, String)>,
    limit: i64,
) -> Result<Vec<Row>, StoreError>
where
    Row: for<'row> sqlx::FromRow<'row, sqlx::postgres::PgRow>
        + for<'row> sqlx::FromRow<'row, sqlx::sqlite::SqliteRow>
        + Send
        + Unpin,
{
    let (before_time, before_id) = page_bounds(before);
    let sql = format!(
        "SELECT {columns} FROM {table} WHERE target_id = $1 AND (created_at < $2 OR (created_at = $2 AND id < $3)) \
         ORDER BY created_at DESC, id DESC LIMIT $4"
    );
    let rows: Vec<Row> = dispatch!(conn, |connection| {
        sqlx::query_as(sqlx::AssertSqlSafe(sql))
            .bind(target_id.as_str())
            .bind(before_time)
            .bind(before_id)
            .bind(limit)
            .fetch_all(&mut *connection)
            .await?
    });
    Ok(rows)
}

/// A page of usage events on a target, newest first, strictly before `before` (created_at, id).
pub async fn usage_page(
    conn: &mut Conn<'_>,
    target_id: &PublicId,
    before: Option<&(DateTime<Utc>, String)>,
    limit: i64,
) -> Result<Vec<UsageEvent>, StoreError> {
    let rows: Vec<UsageRow> = page_of(conn, "usage_events", USAGE_COLUMNS, target_id, before, limit).await?;
    rows.into_iter().map(UsageRow::into_usage).collect()
}

/// A page of reviews of a target, newest first, strictly before `before` (created_at, id).
pub async fn review_page(
    conn: &mut Conn<'_>,
    target_id: &PublicId,
    before: Option<&(DateTime<Utc>, String)>,
    limit: i64,
) -> Result<Vec<Review>, StoreError> {
    let rows: Vec<ReviewRow> = page_of(conn, "reviews", REVIEW_COLUMNS, target_id, before, limit).await?;
    rows.into_iter().map(ReviewRow::into_review).collect()
}

/// A page of ratings of a target, newest first, strictly before `before` (created_at, id).
pub async fn rating_page(
    conn: &mut Conn<'_>,
    target_id: &PublicId,
    before: Option<&(DateTime<Utc>, String)>,
    limit: i64,
) -> Result<Vec<Rating>, StoreError> {
    let rows: Vec<RatingRow> = page_of(conn, "ratings", RATING_COLUMNS, target_id, before, limit).await?;
    rows.into_iter().map(RatingRow::into_rating).collect()
}

/// Every rating of a target (all dimensions), oldest first.
pub async fn ratings_of_target(conn: &mut Conn<'_>, target_id: &PublicId) -> Result<Vec<Rating>, StoreError> {
    let rows: Vec<RatingRow> = dispatch!(conn, |connection| {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {RATING_COLUMNS} FROM ratings WHERE target_id = $1 ORDER BY created_at, id"
        )))
        .bind(target_id.as_str())
        .fetch_all(&mut *connection)
        .await?
    });
    rows.into_iter().map(RatingRow::into_rating).collect()
}

/// Experiences (content items) whose usage events are about one of `target_ids`, newest first.
pub async fn experiences_using(
    conn: &mut Conn<'_>,
    target_ids: &[String],
    limit: i64,
) -> Result<Vec<PublicId>, StoreError> {
    let mut found: Vec<PublicId> = Vec::new();
    for target_id in target_ids {
        let ids: Vec<String> = dispatch!(conn, |connection| {
            sqlx::query_scalar(
                "SELECT experience_id FROM usage_events WHERE (target_id = $1 OR target_content_id = $1) \
                 AND experience_id IS NOT NULL AND status = 'active' GROUP BY experience_id \
                 ORDER BY MAX(created_at) DESC LIMIT $2",
            )
            .bind(target_id)
            .bind(limit)
            .fetch_all(&mut *connection)
            .await?
        });
        for id in ids {
            let id = stored_id(&id, "experience id")?;
            if !found.contains(&id) {
                found.push(id);
            }
        }
    }
    Ok(found)
}

/// The far-future bound that makes an absent page position select everything.
fn page_bounds(before: Option<&(DateTime<Utc>, String)>) -> (DateTime<Utc>, String) {
    match before {
        Some((time, id)) => (*time, id.clone()),
        // A four-digit year keeps SQLite's text comparison of timestamps in order.
        None => (
            DateTime::parse_from_rfc3339("9999-12-31T23:59:59Z").map_or(DateTime::<Utc>::MAX_UTC, |time| time.to_utc()),
            "~".to_owned(),
        ),
    }
}
