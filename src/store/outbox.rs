//! The outbox: changes that leave the instance, appended in the transaction of the change, each with its position
//! `seq` in commit order, read by position, and purged once no peer needs them.
//!
//! Commit order is what a peer's cursor relies on: a reader that has seen `seq` must have seen every event committed
//! before it, or a cursor reading `seq > n` skips an event that commits late. PostgreSQL issues sequence (and
//! identity) values when they are asked for, not when their transaction commits, so two writers can commit their
//! events in the opposite order of their numbers. Here the number is taken only at the very end of the transaction,
//! after a transaction-scoped advisory lock that is held until the commit: the next writer gets the lock, and so its
//! number, only after this one has committed or rolled back. The lock serializes only that last step of the writes
//! that federate (the insert and the commit), not their work. On SQLite the instance has a single writer connection
//! and so a single write transaction at a time; AUTOINCREMENT numbers are therefore already in commit order.

use chrono::{DateTime, Utc};

use super::statement::{self, Statement};
use super::{Conn, StoreError, dispatch};
use crate::domain::change::{Change, ChangeEvent, OutboxEvent};

/// The advisory-lock key that orders outbox appends on PostgreSQL (the ASCII of "interai_").
const OUTBOX_LOCK_KEY: i64 = 0x696e_7465_7261_695f;

/// Appends `events` to the outbox at the end of the caller's transaction, in commit order (see the module comment).
/// Call it just before the commit.
pub async fn append(conn: &mut Conn<'_>, events: &[ChangeEvent]) -> Result<(), StoreError> {
    if events.is_empty() {
        return Ok(());
    }
    let mut rows = Vec::with_capacity(events.len());
    for event in events {
        let change = serde_json::to_string(&event.change)
            .map_err(|error| StoreError::Corrupt(format!("outbox event {}: {error}", event.event_id)))?;
        rows.push((event, change));
    }
    let columns = "INSERT INTO outbox_events (event_id, change_kind, object_id, space_id, change, created_at";
    let postgres = conn.is_postgres();
    let mut sql = String::from(columns);
    sql.push_str(if postgres { ", seq) VALUES " } else { ") VALUES " });
    for index in 0..rows.len() {
        if index > 0 {
            sql.push_str(", ");
        }
        let placeholders: Vec<String> = (1..=6).map(|column| format!("${}", index * 6 + column)).collect();
        sql.push('(');
        sql.push_str(&placeholders.join(", "));
        // PostgreSQL: the number is taken here, under the lock below (see the module comment).
        sql.push_str(if postgres { ", nextval('outbox_seq'))" } else { ")" });
    }
    let mut insert = Statement::insert("outbox_events", sql);
    for (event, change) in &rows {
        insert = insert
            .bind(event.event_id.as_str())
            .bind(event.change.kind().as_str())
            .bind(event.change.object_id())
            .bind(event.space_id.as_str())
            .bind(change.as_str())
            .bind(event.created_at);
    }
    if conn.is_postgres() {
        let connection = super::postgres_connection(conn).await?;
        sqlx::query("SELECT pg_advisory_xact_lock($1)")
            .bind(OUTBOX_LOCK_KEY)
            .execute(&mut *connection)
            .await?;
    }
    statement::execute(conn, insert).await
}

#[derive(sqlx::FromRow)]
struct OutboxRow {
    seq: i64,
    event_id: String,
    space_id: String,
    change: String,
    created_at: DateTime<Utc>,
}

impl OutboxRow {
    fn into_event(self) -> Result<OutboxEvent, StoreError> {
        let change: Change = serde_json::from_str(&self.change)
            .map_err(|error| StoreError::Corrupt(format!("outbox event {}: {error}", self.seq)))?;
        Ok(OutboxEvent {
            seq: self.seq,
            event: ChangeEvent {
                event_id: self.event_id,
                change,
                space_id: super::stored_id(&self.space_id, "outbox space")?,
                created_at: self.created_at,
            },
        })
    }
}

/// Up to `limit` events after `after`, oldest first.
pub async fn after(conn: &mut Conn<'_>, after: i64, limit: i64) -> Result<Vec<OutboxEvent>, StoreError> {
    let rows: Vec<OutboxRow> = dispatch!(conn, |connection| {
        sqlx::query_as(
            "SELECT seq, event_id, space_id, change, created_at FROM outbox_events WHERE seq > $1 ORDER BY seq LIMIT $2",
        )
        .bind(after)
        .bind(limit)
        .fetch_all(&mut *connection)
        .await?
    });
    rows.into_iter().map(OutboxRow::into_event).collect()
}

/// The event at `seq`, if it is still kept.
pub async fn find(conn: &mut Conn<'_>, seq: i64) -> Result<Option<OutboxEvent>, StoreError> {
    let row: Option<OutboxRow> = dispatch!(conn, |connection| {
        sqlx::query_as("SELECT seq, event_id, space_id, change, created_at FROM outbox_events WHERE seq = $1")
            .bind(seq)
            .fetch_optional(&mut *connection)
            .await?
    });
    row.map(OutboxRow::into_event).transpose()
}

/// The highest position a reader can rely on (0 before the first event): a new peer's cursor starts here, after
/// everything it gets from the snapshot instead. On SQLite purged events still count (`sqlite_sequence`); on
/// PostgreSQL it is the newest row kept, which after a purge of everything can be lower than the last position
/// issued. A head that is too low is safe (a reader asks after it and is given only what is newer); one that is too
/// high would skip events, which neither backend can return.
pub async fn head(conn: &mut Conn<'_>) -> Result<i64, StoreError> {
    let head: i64 = match conn {
        postgres @ (Conn::Postgres(_) | Conn::PostgresWrite(_)) => {
            let connection = super::postgres_connection(postgres).await?;
            // The sequence's last value is only issued under the lock, but it may belong to a transaction that has
            // not committed yet; the newest committed row is the head a reader can rely on.
            sqlx::query_scalar("SELECT COALESCE(MAX(seq), 0) FROM outbox_events")
                .fetch_one(&mut *connection)
                .await?
        }
        sqlite => {
            let connection = super::sqlite_connection(sqlite).await?;
            sqlx::query_scalar(
                "SELECT MAX(COALESCE((SELECT MAX(seq) FROM outbox_events), 0), \
                 COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'outbox_events'), 0))",
            )
            .fetch_one(&mut *connection)
            .await?
        }
    };
    Ok(head)
}

/// How many events lie after `after`, and when the oldest of them was made.
pub async fn backlog(conn: &mut Conn<'_>, after: i64) -> Result<(i64, Option<DateTime<Utc>>), StoreError> {
    let (count, oldest): (i64, Option<DateTime<Utc>>) = dispatch!(conn, |connection| {
        sqlx::query_as("SELECT COUNT(*), MIN(created_at) FROM outbox_events WHERE seq > $1")
            .bind(after)
            .fetch_one(&mut *connection)
            .await?
    });
    Ok((count, oldest))
}

/// Deletes up to `limit` events at or below `through` that were made before `made_before`; returns how many.
pub async fn purge(
    conn: &mut Conn<'_>,
    through: i64,
    made_before: DateTime<Utc>,
    limit: i64,
) -> Result<u64, StoreError> {
    let affected = dispatch!(conn, |connection| {
        sqlx::query(
            "DELETE FROM outbox_events WHERE seq IN (SELECT seq FROM outbox_events WHERE seq <= $1 \
             AND created_at < $2 ORDER BY seq LIMIT $3)",
        )
        .bind(through)
        .bind(made_before)
        .bind(limit)
        .execute(&mut *connection)
        .await?
        .rows_affected()
    });
    Ok(affected)
}

/// The newest position the outbox ever gave (0 before the first event), also when purges removed that event: what
/// an archive carries so that a loaded realm goes on numbering after it (`portable.rs`), never reusing a position a
/// peer has already read.
pub(super) async fn postgres_head(connection: &mut sqlx::PgConnection) -> Result<i64, StoreError> {
    let (last_value, is_called): (i64, bool) = sqlx::query_as("SELECT last_value, is_called FROM outbox_seq")
        .fetch_one(&mut *connection)
        .await?;
    Ok(if is_called { last_value } else { 0 })
}

/// [`postgres_head`] for SQLite: AUTOINCREMENT's high-water mark.
pub(super) async fn sqlite_head(connection: &mut sqlx::SqliteConnection) -> Result<i64, StoreError> {
    let head: Option<i64> = sqlx::query_scalar("SELECT seq FROM sqlite_sequence WHERE name = 'outbox_events'")
        .fetch_optional(&mut *connection)
        .await?;
    Ok(head.unwrap_or(0))
}

/// After a load: the next position (PostgreSQL's sequence) follows `head` and every position loaded.
pub(super) async fn continue_postgres_positions(
    connection: &mut sqlx::PgConnection,
    head: i64,
) -> Result<(), StoreError> {
    sqlx::query(
        "SELECT setval('outbox_seq', GREATEST($1, (SELECT COALESCE(MAX(seq), 0) FROM outbox_events))) \
         WHERE GREATEST($1, (SELECT COALESCE(MAX(seq), 0) FROM outbox_events)) > 0",
    )
    .bind(head)
    .execute(&mut *connection)
    .await?;
    Ok(())
}

/// After a load: the next position (SQLite's AUTOINCREMENT mark, which the loaded rows already moved to their
/// highest) follows `head` too.
pub(super) async fn continue_sqlite_positions(
    connection: &mut sqlx::SqliteConnection,
    head: i64,
) -> Result<(), StoreError> {
    sqlx::query("UPDATE sqlite_sequence SET seq = MAX(seq, $1) WHERE name = 'outbox_events'")
        .bind(head)
        .execute(&mut *connection)
        .await?;
    sqlx::query(
        "INSERT INTO sqlite_sequence (name, seq) SELECT 'outbox_events', $1 \
         WHERE $1 > 0 AND NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'outbox_events')",
    )
    .bind(head)
    .execute(&mut *connection)
    .await?;
    Ok(())
}
