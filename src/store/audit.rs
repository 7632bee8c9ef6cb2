//! The `mcp_calls` audit log, which is also the source of truth for write rate limits.

use chrono::{DateTime, Utc};

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

/// Appends one call to the log.
pub async fn insert(conn: &mut Conn<'_>, call: &McpCallRecord) -> Result<(), StoreError> {
    super::statement::execute(
        conn,
        super::statement::Statement::new(
            "INSERT INTO mcp_calls (id, actor_id, root_controller_id, key_id, tool, is_write, request, outcome, \
             result_summary, duration_micros, client_name, client_version, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
        )
        .bind(&call.id)
        .bind(call.actor_id.as_str())
        .bind(call.root_controller_id.as_str())
        .bind(call.key_id.as_str())
        .bind(&call.tool)
        .bind(call.is_write)
        .bind(&call.request)
        .bind(&call.outcome)
        .bind(&call.result_summary)
        .bind(call.duration_micros)
        .bind(&call.client_name)
        .bind(&call.client_version)
        .bind(call.created_at),
    )
    .await
}

/// Successful writes by a root controller since `since`, counted up to `cap` (the limit: counting further cannot
/// change the answer, and a bounded count keeps every write cheap), and the oldest of them (when the window frees
/// up).
pub async fn count_writes_since(
    conn: &mut Conn<'_>,
    root_controller_id: &PublicId,
    since: DateTime<Utc>,
    cap: i64,
) -> Result<(i64, Option<DateTime<Utc>>), StoreError> {
    let row: (i64, Option<DateTime<Utc>>) = dispatch!(conn, |connection| {
        sqlx::query_as(
            "SELECT COUNT(*), MIN(created_at) FROM (SELECT created_at FROM mcp_calls \
             WHERE root_controller_id = $1 AND is_write AND outcome = 'ok' AND created_at > $2 \
             ORDER BY created_at LIMIT $3) AS window_writes",
        )
        .bind(root_controller_id.as_str())
        .bind(since)
        .bind(cap)
        .fetch_one(&mut *connection)
        .await?
    });
    Ok(row)
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
    rows.into_iter()
        .map(|row| {
            let corrupt = |what: &str| StoreError::Corrupt(format!("mcp call {}: {what}", row.id));
            Ok(McpCallRecord {
                actor_id: PublicId::parse(&row.actor_id).map_err(|_| corrupt("bad actor_id"))?,
                root_controller_id: PublicId::parse(&row.root_controller_id)
                    .map_err(|_| corrupt("bad root_controller_id"))?,
                key_id: PublicId::parse(&row.key_id).map_err(|_| corrupt("bad key_id"))?,
                id: row.id,
                tool: row.tool,
                is_write: row.is_write,
                request: row.request.0,
                outcome: row.outcome,
                result_summary: row.result_summary,
                duration_micros: row.duration_micros,
                client_name: row.client_name,
                client_version: row.client_version,
                created_at: row.created_at,
            })
        })
        .collect()
}
