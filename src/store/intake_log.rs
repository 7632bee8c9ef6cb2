//! The intake log (`federation_intake`): a line per activity the intake applied, ignored or refused, the peer's
//! counterpart of `mcp_calls`.

use super::statement::Statement;
use super::{Conn, StoreError, dispatch};
use crate::domain::intake_log::IntakeLogEntry;
use chrono::{DateTime, Utc};

/// An intake log line's columns as read (the domain's [`IntakeLogEntry`]).
#[derive(sqlx::FromRow)]
struct IntakeColumns {
    id: String,
    peer_realm: String,
    activity_id: String,
    activity_type: String,
    key_id: String,
    outcome: String,
    detail: String,
    created_at: DateTime<Utc>,
}

impl From<IntakeColumns> for IntakeLogEntry {
    fn from(columns: IntakeColumns) -> IntakeLogEntry {
        IntakeLogEntry {
            id: columns.id,
            peer_realm: columns.peer_realm,
            activity_id: columns.activity_id,
            activity_type: columns.activity_type,
            key_id: columns.key_id,
            outcome: columns.outcome,
            detail: columns.detail,
            created_at: columns.created_at,
        }
    }
}

/// Appends a batch's lines to the intake log, written at one time, in one statement whose text is the same whatever
/// the batch's size (the lines are bound as one JSON array).
pub async fn insert_intakes(
    conn: &mut Conn<'_>,
    lines: &[IntakeLine<'_>],
    created_at: DateTime<Utc>,
) -> Result<(), StoreError> {
    if lines.is_empty() {
        return Ok(());
    }
    let rows: Vec<serde_json::Value> = lines
        .iter()
        .map(|line| {
            serde_json::json!({
                "id": line.id,
                "peer_realm": line.peer_realm,
                "activity_id": line.activity_id,
                "activity_type": line.activity_type,
                "key_id": line.key_id,
                "outcome": line.outcome,
                "detail": line.detail,
            })
        })
        .collect();
    let sql = match conn {
        Conn::Postgres(_) | Conn::PostgresWrite(_) => {
            "INSERT INTO federation_intake (id, peer_realm, activity_id, activity_type, key_id, outcome, detail, \
             created_at) SELECT id, peer_realm, activity_id, activity_type, key_id, outcome, detail, $2 \
             FROM jsonb_to_recordset($1) AS line(id TEXT, peer_realm TEXT, activity_id TEXT, activity_type TEXT, \
             key_id TEXT, outcome TEXT, detail TEXT)"
        }
        _ => {
            "INSERT INTO federation_intake (id, peer_realm, activity_id, activity_type, key_id, outcome, detail, \
             created_at) SELECT value ->> 'id', value ->> 'peer_realm', value ->> 'activity_id', \
             value ->> 'activity_type', value ->> 'key_id', value ->> 'outcome', value ->> 'detail', $2 \
             FROM json_each($1) ORDER BY key"
        }
    };
    super::statement::execute(
        conn,
        Statement::insert("federation_intake", sql)
            .bind(serde_json::Value::Array(rows))
            .bind(created_at),
    )
    .await
}

/// A line of the intake log to append (its time is the batch's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntakeLine<'a> {
    /// The line's ID.
    pub id: &'a str,
    /// The peer whose activity it was.
    pub peer_realm: &'a str,
    /// The activity.
    pub activity_id: &'a str,
    /// Its type.
    pub activity_type: &'a str,
    /// The key that signed it.
    pub key_id: &'a str,
    /// `applied`, `ignored` or `refused`.
    pub outcome: &'a str,
    /// What it did, for the admin.
    pub detail: &'a str,
}

/// The intake log of a peer (or every peer), newest first.
pub async fn list_intake(
    conn: &mut Conn<'_>,
    realm: Option<&str>,
    limit: i64,
) -> Result<Vec<IntakeLogEntry>, StoreError> {
    // Two statements rather than `$1 IS NULL OR peer_realm = $1`, which no planner can serve from the peer's index.
    const COLUMNS: &str = "SELECT id, peer_realm, activity_id, activity_type, key_id, outcome, detail, created_at \
         FROM federation_intake";
    let rows: Vec<IntakeColumns> = match realm {
        Some(realm) => dispatch!(conn, |connection| {
            sqlx::query_as(sqlx::AssertSqlSafe(format!(
                "{COLUMNS} WHERE peer_realm = $1 ORDER BY created_at DESC, id DESC LIMIT $2"
            )))
            .bind(realm)
            .bind(limit)
            .fetch_all(&mut *connection)
            .await?
        }),
        None => dispatch!(conn, |connection| {
            sqlx::query_as(sqlx::AssertSqlSafe(format!(
                "{COLUMNS} ORDER BY created_at DESC, id DESC LIMIT $1"
            )))
            .bind(limit)
            .fetch_all(&mut *connection)
            .await?
        }),
    };
    Ok(rows.into_iter().map(IntakeLogEntry::from).collect())
}
