//! What the inbox keeps: signature nonces (`inbox_nonces`) and the activities it accepted, queued for the intake
//! (`inbox_activities`).

use super::statement::Statement;
use super::{Conn, StoreError, dispatch};
use chrono::{DateTime, Utc};

/// Records a signature nonce; `false` when the peer already used it within the window (a replay).
pub async fn insert_nonce(
    conn: &mut Conn<'_>,
    realm: &str,
    nonce: &str,
    expires_at: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let affected = dispatch!(conn, |connection| {
        sqlx::query(
            "INSERT INTO inbox_nonces (peer_realm, nonce, expires_at) VALUES ($1, $2, $3) \
             ON CONFLICT (peer_realm, nonce) DO NOTHING",
        )
        .bind(realm)
        .bind(nonce)
        .bind(expires_at)
        .execute(&mut *connection)
        .await?
        .rows_affected()
    });
    Ok(affected == 1)
}

/// Records the nonces of several requests in one statement; returns the `(peer_realm, nonce)` pairs that were new.
/// A pair already recorded is not returned, nor is one given twice returned more than once.
pub async fn insert_nonces(
    conn: &mut Conn<'_>,
    nonces: &[(String, String, DateTime<Utc>)],
) -> Result<Vec<(String, String)>, StoreError> {
    if nonces.is_empty() {
        return Ok(Vec::new());
    }
    // In key order, so that two processes inserting overlapping groups wait for each other instead of deadlocking.
    let mut sorted: Vec<&(String, String, DateTime<Utc>)> = nonces.iter().collect();
    sorted.sort_by(|left, right| (&left.0, &left.1).cmp(&(&right.0, &right.1)));
    let inserted: Vec<(String, String)> = dispatch!(conn, |connection| {
        let mut builder = sqlx::QueryBuilder::new("INSERT INTO inbox_nonces (peer_realm, nonce, expires_at) ");
        builder.push_values(&sorted, |mut row, (realm, nonce, expires_at)| {
            row.push_bind(realm.clone())
                .push_bind(nonce.clone())
                .push_bind(*expires_at);
        });
        builder.push(" ON CONFLICT (peer_realm, nonce) DO NOTHING RETURNING peer_realm, nonce");
        // Not cached: each number of rows is a text of its own.
        builder
            .build_query_as()
            .persistent(false)
            .fetch_all(&mut *connection)
            .await?
    });
    Ok(inserted)
}

/// Forgets nonces whose window has passed, at most `limit` of them; returns how many.
pub async fn delete_expired_nonces(conn: &mut Conn<'_>, now: DateTime<Utc>, limit: i64) -> Result<u64, StoreError> {
    let affected = dispatch!(conn, |connection| {
        sqlx::query(
            "DELETE FROM inbox_nonces WHERE (peer_realm, nonce) IN \
             (SELECT peer_realm, nonce FROM inbox_nonces WHERE expires_at < $1 LIMIT $2)",
        )
        .bind(now)
        .bind(limit)
        .execute(&mut *connection)
        .await?
        .rows_affected()
    });
    Ok(affected)
}

/// An activity the inbox accepted.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct InboxActivityRow {
    /// The activity's `id` (the dedupe key).
    pub activity_id: String,
    /// The peer that sent it.
    pub peer_realm: String,
    /// Its `type`.
    pub activity_type: String,
    /// The key that signed the request.
    pub key_id: String,
    /// The request body exactly as verified.
    pub body: String,
    /// When the inbox accepted it.
    pub received_at: DateTime<Utc>,
    /// `queued`, `applied` or `failed`.
    pub state: String,
    /// Attempts to apply it so far.
    pub attempts: i32,
    /// When a worker may (next) take it.
    pub next_attempt_at: DateTime<Utc>,
    /// When it was applied or given up on.
    pub processed_at: Option<DateTime<Utc>>,
    /// What applying it did.
    pub outcome: Option<String>,
}

/// Queues an activity; `false` when one with the same ID was already received (a duplicate).
pub async fn insert_inbox_activity(conn: &mut Conn<'_>, row: &InboxActivityRow) -> Result<bool, StoreError> {
    let affected = dispatch!(conn, |connection| {
        sqlx::query(
            "INSERT INTO inbox_activities (activity_id, peer_realm, activity_type, key_id, body, received_at, state, \
             attempts, next_attempt_at, processed_at, outcome) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) \
             ON CONFLICT (activity_id) DO NOTHING",
        )
        .bind(&row.activity_id)
        .bind(&row.peer_realm)
        .bind(&row.activity_type)
        .bind(&row.key_id)
        .bind(&row.body)
        .bind(row.received_at)
        .bind(&row.state)
        .bind(row.attempts)
        .bind(row.next_attempt_at)
        .bind(row.processed_at)
        .bind(&row.outcome)
        .execute(&mut *connection)
        .await?
        .rows_affected()
    });
    Ok(affected == 1)
}

/// Stores several received activities in one statement, each unless its ID is stored already; returns the IDs that
/// were new (an ID given twice is returned once).
pub async fn insert_inbox_activities(
    conn: &mut Conn<'_>,
    rows: &[&InboxActivityRow],
) -> Result<Vec<String>, StoreError> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    // In key order, as the nonces.
    let mut sorted: Vec<&InboxActivityRow> = rows.to_vec();
    sorted.sort_by(|left, right| left.activity_id.cmp(&right.activity_id));
    let inserted: Vec<(String,)> = dispatch!(conn, |connection| {
        let mut builder = sqlx::QueryBuilder::new(format!("INSERT INTO inbox_activities ({INBOX_COLUMNS}) "));
        builder.push_values(&sorted, |mut values, row| {
            values
                .push_bind(row.activity_id.clone())
                .push_bind(row.peer_realm.clone())
                .push_bind(row.activity_type.clone())
                .push_bind(row.key_id.clone())
                .push_bind(row.body.clone())
                .push_bind(row.received_at)
                .push_bind(row.state.clone())
                .push_bind(row.attempts)
                .push_bind(row.next_attempt_at)
                .push_bind(row.processed_at)
                .push_bind(row.outcome.clone());
        });
        builder.push(" ON CONFLICT (activity_id) DO NOTHING RETURNING activity_id");
        builder
            .build_query_as()
            .persistent(false)
            .fetch_all(&mut *connection)
            .await?
    });
    Ok(inserted.into_iter().map(|(id,)| id).collect())
}

const INBOX_COLUMNS: &str = "activity_id, peer_realm, activity_type, key_id, body, received_at, state, attempts, \
    next_attempt_at, processed_at, outcome";

/// Up to `limit` queued activities that are due, oldest first, read without taking them: the applying
/// transaction claims them ([`claim_inbox_activities`]), so reading them costs no write.
pub async fn due_inbox_activities(
    conn: &mut Conn<'_>,
    now: DateTime<Utc>,
    limit: i64,
) -> Result<Vec<InboxActivityRow>, StoreError> {
    let rows: Vec<InboxActivityRow> = dispatch!(conn, |connection| {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {INBOX_COLUMNS} FROM inbox_activities WHERE state = 'queued' AND next_attempt_at <= $1 \
             AND (leased_until IS NULL OR leased_until <= $1) ORDER BY received_at, activity_id LIMIT $2"
        )))
        .bind(now)
        .bind(limit)
        .fetch_all(&mut *connection)
        .await?
    });
    Ok(rows)
}

/// Claims, in the caller's applying transaction, those of `activity_ids` that are still queued and due, counting
/// an attempt for each; returns the IDs claimed. The claim holds until the transaction ends: another worker or
/// process that read the same rows claims none of them (on PostgreSQL it skips the rows this transaction locked,
/// and after the commit they are no longer queued), so each is applied once.
pub async fn claim_inbox_activities(
    conn: &mut Conn<'_>,
    activity_ids: &[String],
    now: DateTime<Utc>,
) -> Result<Vec<String>, StoreError> {
    if activity_ids.is_empty() {
        return Ok(Vec::new());
    }
    const DUE: &str = "state = 'queued' AND next_attempt_at <= $1 AND (leased_until IS NULL OR leased_until <= $1)";
    let placeholders = (2..activity_ids.len() + 2)
        .map(|index| format!("${index}"))
        .collect::<Vec<_>>()
        .join(", ");
    let claimed: Vec<String> = match conn {
        postgres @ (Conn::Postgres(_) | Conn::PostgresWrite(_)) => {
            let connection = super::postgres_connection(postgres).await?;
            let sql = format!(
                "UPDATE inbox_activities SET attempts = attempts + 1 WHERE activity_id IN \
                 (SELECT activity_id FROM inbox_activities WHERE activity_id IN ({placeholders}) AND {DUE} \
                 FOR UPDATE SKIP LOCKED) RETURNING activity_id"
            );
            let mut query = sqlx::query_scalar(sqlx::AssertSqlSafe(sql)).bind(now);
            for id in activity_ids {
                query = query.bind(id);
            }
            query.fetch_all(&mut *connection).await?
        }
        sqlite => {
            let connection = super::sqlite_connection(sqlite).await?;
            let sql = format!(
                "UPDATE inbox_activities SET attempts = attempts + 1 WHERE activity_id IN ({placeholders}) AND {DUE} \
                 RETURNING activity_id"
            );
            let mut query = sqlx::query_scalar(sqlx::AssertSqlSafe(sql)).bind(now);
            for id in activity_ids {
                query = query.bind(id);
            }
            query.fetch_all(&mut *connection).await?
        }
    };
    Ok(claimed)
}

/// How one activity of a batch ended: its final state and outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FinishedActivity<'a> {
    /// The activity.
    pub activity_id: &'a str,
    /// `applied` or `failed`.
    pub state: &'a str,
    /// `applied`, `ignored` or `refused`.
    pub outcome: &'a str,
}

/// Records the final state of a batch's activities: one statement for each state and outcome they share (usually
/// one for the whole batch), its IDs bound as one JSON array, so that the text is the same whatever the batch's size
/// (prepared once, where a list of placeholders would be a new text for every size).
///
/// An applied activity keeps its row, the dedupe key against a late retry, but not its body: what it did is in
/// the intake log and, for a replicated object, the signed object is kept with what it changed. A failed one keeps
/// its body for whoever looks into it.
pub async fn finish_inbox_activities(
    conn: &mut Conn<'_>,
    finished: &[FinishedActivity<'_>],
    processed_at: DateTime<Utc>,
) -> Result<(), StoreError> {
    let mut kinds: Vec<(&str, &str)> = Vec::new();
    for activity in finished {
        if !kinds.contains(&(activity.state, activity.outcome)) {
            kinds.push((activity.state, activity.outcome));
        }
    }
    for (state, outcome) in kinds {
        let ids: Vec<&str> = finished
            .iter()
            .filter(|activity| activity.state == state && activity.outcome == outcome)
            .map(|activity| activity.activity_id)
            .collect();
        let ids_in = match conn {
            Conn::Postgres(_) | Conn::PostgresWrite(_) => "SELECT jsonb_array_elements_text($4)",
            _ => "SELECT value FROM json_each($4)",
        };
        super::statement::execute(
            conn,
            Statement::update(
                "inbox_activities",
                format!(
                    "UPDATE inbox_activities SET state = $1, outcome = $2, processed_at = $3, leased_until = NULL, \
                 body = CASE WHEN $1 = 'applied' THEN '' ELSE body END WHERE activity_id IN ({ids_in})"
                ),
            )
            .bind(state)
            .bind(outcome)
            .bind(processed_at)
            .bind(serde_json::json!(ids)),
        )
        .await?;
    }
    Ok(())
}

/// Puts back the body of an activity that was stored without it to be applied in the same transaction and then
/// failed, so a failed activity keeps its body as one the intake failed does.
pub async fn keep_inbox_activity_body(conn: &mut Conn<'_>, activity_id: &str, body: &str) -> Result<(), StoreError> {
    super::statement::execute(
        conn,
        Statement::update(
            "inbox_activities",
            "UPDATE inbox_activities SET body = $2 WHERE activity_id = $1",
        )
        .bind(activity_id)
        .bind(body),
    )
    .await
}

/// Whether any activity waits in the queue (due or not).
pub async fn any_queued_inbox_activity(conn: &mut Conn<'_>) -> Result<bool, StoreError> {
    let queued: Option<i32> = dispatch!(conn, |connection| {
        sqlx::query_scalar("SELECT 1 FROM inbox_activities WHERE state = 'queued' LIMIT 1")
            .fetch_optional(&mut *connection)
            .await?
    });
    Ok(queued.is_some())
}

/// Forgets processed activities received before `received_before` (no sender retries that long), at most `limit`
/// of them; returns how many.
pub async fn purge_processed_inbox_activities(
    conn: &mut Conn<'_>,
    received_before: DateTime<Utc>,
    limit: i64,
) -> Result<u64, StoreError> {
    let affected = dispatch!(conn, |connection| {
        sqlx::query(
            "DELETE FROM inbox_activities WHERE activity_id IN (SELECT activity_id FROM inbox_activities \
             WHERE received_at < $1 AND state <> 'queued' ORDER BY received_at LIMIT $2)",
        )
        .bind(received_before)
        .bind(limit)
        .execute(&mut *connection)
        .await?
        .rows_affected()
    });
    Ok(affected)
}

/// Puts a queued activity back for a later attempt (applying it failed for a reason that may pass), counting
/// the attempt.
pub async fn retry_inbox_activity(
    conn: &mut Conn<'_>,
    activity_id: &str,
    next_attempt_at: DateTime<Utc>,
    outcome: &str,
) -> Result<(), StoreError> {
    dispatch!(conn, |connection| {
        sqlx::query(
            "UPDATE inbox_activities SET next_attempt_at = $2, outcome = $3, leased_until = NULL, \
             attempts = attempts + 1 WHERE activity_id = $1",
        )
        .bind(activity_id)
        .bind(next_attempt_at)
        .bind(outcome)
        .execute(&mut *connection)
        .await?;
    });
    Ok(())
}

/// How many activities wait to be applied.
pub async fn count_queued_inbox_activities(conn: &mut Conn<'_>) -> Result<i64, StoreError> {
    let count: i64 = dispatch!(conn, |connection| {
        sqlx::query_scalar("SELECT COUNT(*) FROM inbox_activities WHERE state = 'queued'")
            .fetch_one(&mut *connection)
            .await?
    });
    Ok(count)
}

/// The stored activity with this ID.
pub async fn find_inbox_activity(
    conn: &mut Conn<'_>,
    activity_id: &str,
) -> Result<Option<InboxActivityRow>, StoreError> {
    let row: Option<InboxActivityRow> = dispatch!(conn, |connection| {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {INBOX_COLUMNS} FROM inbox_activities WHERE activity_id = $1"
        )))
        .bind(activity_id)
        .fetch_optional(&mut *connection)
        .await?
    });
    Ok(row)
}
