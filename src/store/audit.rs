//! The `mcp_calls` audit log, its pruning, and the per-minute write counts (`write_counts`) that rate limits read.

use chrono::{DateTime, Utc};

use super::statement::{self, Bind, Column, Insert, InsertShape, SqlType, Statement};
use super::{Conn, StoreError, dispatch};
use crate::domain::PublicId;

/// One audited MCP call.
#[derive(Debug, Clone, PartialEq)]
pub struct McpCallRecord {
    /// The row's ID (a ULID without prefix; audit rows are not public objects).
    pub id: String,
    /// The calling actor.
    pub actor_id: PublicId,
    /// The caller's root controller, the unit of rate limiting.
    pub root_controller_id: PublicId,
    /// The API key used.
    pub key_id: PublicId,
    /// The tool (or resource operation) called.
    pub tool: String,
    /// Whether the call counts against the write limit.
    pub is_write: bool,
    /// The structured request, with secrets removed.
    pub request: serde_json::Value,
    /// `ok` or the spec's error code.
    pub outcome: String,
    /// A short summary of the result (IDs created, result count) or the error message.
    pub result_summary: String,
    /// How long the call took, in microseconds.
    pub duration_micros: i64,
    /// The MCP client's name, when it said.
    pub client_name: Option<String>,
    /// The MCP client's version, when it said.
    pub client_version: Option<String>,
    /// When the call was made.
    pub created_at: DateTime<Utc>,
}

#[derive(sqlx::FromRow)]
struct McpCallRow {
    id: String,
    actor_id: String,
    root_controller_id: String,
    key_id: String,
    tool: String,
    is_write: bool,
    request: sqlx::types::Json<serde_json::Value>,
    outcome: String,
    result_summary: String,
    duration_micros: i64,
    client_name: Option<String>,
    client_version: Option<String>,
    created_at: DateTime<Utc>,
}

impl McpCallRow {
    fn into_record(self) -> Result<McpCallRecord, StoreError> {
        let corrupt = |what: &str| StoreError::Corrupt(format!("mcp call {}: {what}", self.id));
        Ok(McpCallRecord {
            actor_id: PublicId::parse(&self.actor_id).map_err(|_| corrupt("bad actor_id"))?,
            root_controller_id: PublicId::parse(&self.root_controller_id)
                .map_err(|_| corrupt("bad root_controller_id"))?,
            key_id: PublicId::parse(&self.key_id).map_err(|_| corrupt("bad key_id"))?,
            id: self.id,
            tool: self.tool,
            is_write: self.is_write,
            request: self.request.0,
            outcome: self.outcome,
            result_summary: self.result_summary,
            duration_micros: self.duration_micros,
            client_name: self.client_name,
            client_version: self.client_version,
            created_at: self.created_at,
        })
    }
}

/// A call's row in the log.
const MCP_CALL: InsertShape = InsertShape::new(
    "mcp_calls",
    &[
        Column::new("id", SqlType::Text),
        Column::new("actor_id", SqlType::Text),
        Column::new("root_controller_id", SqlType::Text),
        Column::new("key_id", SqlType::Text),
        Column::new("tool", SqlType::Text),
        Column::new("is_write", SqlType::Boolean),
        Column::new("request", SqlType::Jsonb),
        Column::new("outcome", SqlType::Text),
        Column::new("result_summary", SqlType::Text),
        Column::new("duration_micros", SqlType::BigInt),
        Column::new("client_name", SqlType::Text),
        Column::new("client_version", SqlType::Text),
        Column::new("created_at", SqlType::TimestampTz),
    ],
);

/// The call's values, in the order of `MCP_CALL`'s columns.
fn call_values(call: &McpCallRecord) -> Vec<Bind> {
    vec![
        Bind::from(&call.id),
        Bind::from(call.actor_id.as_str()),
        Bind::from(call.root_controller_id.as_str()),
        Bind::from(call.key_id.as_str()),
        Bind::from(&call.tool),
        Bind::from(call.is_write),
        Bind::from(&call.request),
        Bind::from(&call.outcome),
        Bind::from(&call.result_summary),
        Bind::from(call.duration_micros),
        Bind::from(&call.client_name),
        Bind::from(&call.client_version),
        Bind::from(call.created_at),
    ]
}

/// Appends one call to the log, inside the caller's transaction (a write audits itself in its own transaction, so
/// that the call and its record commit together).
pub async fn insert(conn: &mut Conn<'_>, call: &McpCallRecord) -> Result<(), StoreError> {
    statement::execute(conn, Insert::row(&MCP_CALL, call_values(call))).await
}

/// Appends the record of a call that wrote nothing (a read, or a call that failed) in a transaction of its own.
///
/// On PostgreSQL this is one statement in its own implicit transaction, committed without waiting for the WAL flush
/// (`synchronous_commit` off for this transaction only): the database has accepted the row before the call's
/// result is returned, but a crash of the database server in the next fraction of a second could lose it. Such
/// records do not count against any limit; waiting for the flush would add a disk sync to every read.
/// Records of successful writes never take this path. On SQLite the row is written through the single writer,
/// where it shares the group commit of concurrent writes.
pub async fn append_unwritten_call(store: &super::Store, call: &McpCallRecord) -> Result<(), StoreError> {
    match store.backend() {
        super::Backend::Postgres => {
            // The row's values selected after a query that relaxes the commit (the reader runs it at once).
            let sql = format!(
                "{} SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13 FROM relaxed",
                MCP_CALL.head()
            );
            let statement = call_values(call)
                .into_iter()
                .fold(Statement::insert("mcp_calls", sql), Statement::bind)
                .with_queries("relaxed AS (SELECT set_config('synchronous_commit', 'off', true))");
            let mut reader = store.reader().await?;
            statement::execute(&mut reader.conn(), statement).await
        }
        super::Backend::Sqlite => {
            let mut transaction = store.begin().await?;
            insert(&mut transaction.conn(), call).await?;
            transaction.commit().await
        }
    }
}

/// A root controller's successful writes in the rate-limit window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteWindow {
    /// Writes counted in the window.
    pub writes: i64,
    /// The start of the oldest minute that holds any of them (its writes leave the window first).
    pub oldest_minute: Option<DateTime<Utc>>,
}

/// The start of the minute `at` falls in: the bucket a write counts in.
pub fn minute_of(at: DateTime<Utc>) -> DateTime<Utc> {
    use chrono::{DurationRound, TimeDelta};
    at.duration_trunc(TimeDelta::minutes(1)).unwrap_or(at)
}

const WINDOW_SQL: &str = "SELECT COALESCE(SUM(writes), 0), MIN(minute_start) FROM write_counts \
                          WHERE root_controller_id = $1 AND minute_start >= $2";

/// A root controller's successful writes counted in the minutes from `first_minute` on (one row per minute, so
/// the cost does not grow with the number of writes).
pub async fn writes_in_window(
    conn: &mut Conn<'_>,
    root_controller_id: &PublicId,
    first_minute: DateTime<Utc>,
) -> Result<WriteWindow, StoreError> {
    let (writes, oldest_minute): (i64, Option<DateTime<Utc>>) = dispatch!(conn, |connection| {
        sqlx::query_as(WINDOW_SQL)
            .bind(root_controller_id.as_str())
            .bind(first_minute)
            .fetch_one(&mut *connection)
            .await?
    });
    Ok(WriteWindow { writes, oldest_minute })
}

/// Opens a write for a root controller and reads its writes in the rate-limit window, so that the limit check and
/// the write it admits cannot interleave with another writer's: on PostgreSQL after a transaction-scoped lock on
/// the controller (three round trips), on SQLite, whose single writer already serializes, in the same round trip
/// that opens the write.
pub async fn begin_write_for(
    store: &super::Store,
    root_controller_id: &PublicId,
    first_minute: DateTime<Utc>,
) -> Result<(super::Transaction, WriteWindow), StoreError> {
    match store.backend() {
        super::Backend::Postgres => {
            let mut transaction = store.begin().await?;
            {
                let mut conn = transaction.conn();
                let connection = super::postgres_connection(&mut conn).await?;
                sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))")
                    .bind(root_controller_id.as_str())
                    .execute(&mut *connection)
                    .await?;
            }
            let window = writes_in_window(&mut transaction.conn(), root_controller_id, first_minute).await?;
            Ok((transaction, window))
        }
        super::Backend::Sqlite => {
            let opening = Statement::query(WINDOW_SQL)
                .bind(root_controller_id.as_str())
                .bind(first_minute);
            let (transaction, row) = store.begin_sqlite_with(opening).await?;
            let row = row.ok_or_else(|| StoreError::Corrupt("the write window query returned no row".to_owned()))?;
            use sqlx::Row;
            let window = WriteWindow {
                writes: row.try_get(0)?,
                oldest_minute: row.try_get(1)?,
            };
            Ok((transaction, window))
        }
    }
}

/// Counts one successful write in its minute, and forgets the controller's minutes that left the window before
/// `forget_before` (in the same transaction as the write's audit row).
pub async fn count_write(
    conn: &mut Conn<'_>,
    root_controller_id: &PublicId,
    minute: DateTime<Utc>,
    forget_before: DateTime<Utc>,
) -> Result<(), StoreError> {
    statement::execute(
        conn,
        Statement::insert(
            "write_counts",
            "INSERT INTO write_counts (root_controller_id, minute_start, writes) VALUES ($1, $2, 1) \
             ON CONFLICT (root_controller_id, minute_start) DO UPDATE SET writes = write_counts.writes + 1",
        )
        .bind(root_controller_id.as_str())
        .bind(minute),
    )
    .await?;
    statement::execute(
        conn,
        Statement::delete(
            "write_counts",
            "DELETE FROM write_counts WHERE root_controller_id = $1 AND minute_start < $2",
        )
        .bind(root_controller_id.as_str())
        .bind(forget_before),
    )
    .await
}

/// Deletes at most `batch` audit rows recorded before `cutoff`, oldest first, and returns how many went. Pruning a
/// large log in batches keeps each transaction short, so the calls being audited meanwhile wait for a batch at most
/// (the `mcp_calls_created_at` index finds the rows without reading the table). Write limits never read these rows:
/// they count `write_counts`.
pub async fn delete_calls_before(conn: &mut Conn<'_>, cutoff: DateTime<Utc>, batch: i64) -> Result<u64, StoreError> {
    let deleted = dispatch!(conn, |connection| {
        sqlx::query(
            "DELETE FROM mcp_calls WHERE id IN \
             (SELECT id FROM mcp_calls WHERE created_at < $1 ORDER BY created_at LIMIT $2)",
        )
        .bind(cutoff)
        .bind(batch)
        .execute(&mut *connection)
        .await?
        .rows_affected()
    });
    Ok(deleted)
}

/// How many audit rows were recorded before `cutoff`.
pub async fn count_calls_before(conn: &mut Conn<'_>, cutoff: DateTime<Utc>) -> Result<i64, StoreError> {
    let count: i64 = dispatch!(conn, |connection| {
        sqlx::query_scalar("SELECT COUNT(*) FROM mcp_calls WHERE created_at < $1")
            .bind(cutoff)
            .fetch_one(&mut *connection)
            .await?
    });
    Ok(count)
}

/// The most recent calls of an actor, newest first (for the admin and for tests).
pub async fn recent_for_actor(
    conn: &mut Conn<'_>,
    actor_id: &PublicId,
    limit: i64,
) -> Result<Vec<McpCallRecord>, StoreError> {
    let rows: Vec<McpCallRow> = dispatch!(conn, |connection| {
        sqlx::query_as(
            "SELECT id, actor_id, root_controller_id, key_id, tool, is_write, request, outcome, result_summary, \
             duration_micros, client_name, client_version, created_at FROM mcp_calls \
             WHERE actor_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2",
        )
        .bind(actor_id.as_str())
        .bind(limit)
        .fetch_all(&mut *connection)
        .await?
    });
    rows.into_iter().map(McpCallRow::into_record).collect()
}

/// Which audit records [`list_calls`] reads. Every filter is optional; `after` continues from the last record of the
/// previous page.
#[derive(Debug, Clone, Default)]
pub struct CallFilter {
    /// Only this actor's calls.
    pub actor_id: Option<PublicId>,
    /// Only calls of this tool.
    pub tool: Option<String>,
    /// Only calls with this outcome (`ok` or an error code).
    pub outcome: Option<String>,
    /// Only calls made at or after this instant.
    pub from: Option<DateTime<Utc>>,
    /// Only calls made before this instant.
    pub until: Option<DateTime<Utc>>,
    /// Only calls that come after this one (its time and ID) in newest-first order.
    pub after: Option<(DateTime<Utc>, String)>,
}

/// The filter as SQL conditions, each bound: fixed fragments only, the values never in the text.
fn push_call_filter<DB: sqlx::Database>(builder: &mut sqlx::QueryBuilder<DB>, filter: &CallFilter)
where
    String: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    DateTime<Utc>: for<'q> sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    builder.push(" WHERE 1 = 1");
    if let Some(actor_id) = &filter.actor_id {
        builder.push(" AND actor_id = ").push_bind(actor_id.as_str().to_owned());
    }
    if let Some(tool) = &filter.tool {
        builder.push(" AND tool = ").push_bind(tool.clone());
    }
    if let Some(outcome) = &filter.outcome {
        builder.push(" AND outcome = ").push_bind(outcome.clone());
    }
    if let Some(from) = filter.from {
        builder.push(" AND created_at >= ").push_bind(from);
    }
    if let Some(until) = filter.until {
        builder.push(" AND created_at < ").push_bind(until);
    }
    if let Some(after) = &filter.after {
        super::keyset_page::push_newest_first_after(builder, "", after);
    }
}

/// The audit records `filter` selects, newest first (ties broken by ID), at most `limit` of them.
pub async fn list_calls(
    conn: &mut Conn<'_>,
    filter: &CallFilter,
    limit: i64,
) -> Result<Vec<McpCallRecord>, StoreError> {
    const SELECT: &str = "SELECT id, actor_id, root_controller_id, key_id, tool, is_write, request, outcome, \
                          result_summary, duration_micros, client_name, client_version, created_at FROM mcp_calls";
    let rows: Vec<McpCallRow> = dispatch!(conn, |connection| {
        let mut builder = sqlx::QueryBuilder::new(SELECT);
        push_call_filter(&mut builder, filter);
        builder
            .push(" ORDER BY created_at DESC, id DESC LIMIT ")
            .push_bind(limit);
        builder
            .build_query_as()
            .persistent(false)
            .fetch_all(&mut *connection)
            .await?
    });
    rows.into_iter().map(McpCallRow::into_record).collect()
}
