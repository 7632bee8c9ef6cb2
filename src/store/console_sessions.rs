//! Web console sessions: one row per sign-in, found by the SHA-256 of its cookie's token (never the token itself).

use chrono::{DateTime, Utc};

use super::{Conn, StoreError, dispatch};
use crate::domain::PublicId;

/// A stored console session.
#[derive(Debug, Clone, PartialEq)]
pub struct ConsoleSessionRecord {
    /// Its ID (`ses_…`), which logs name; never a credential.
    pub id: String,
    /// The admin-scope key it was opened with; its owner is the session's caller.
    pub key_id: PublicId,
    /// When it was opened.
    pub created_at: DateTime<Utc>,
    /// When a request last used it (written at most once a minute).
    pub last_seen_at: DateTime<Utc>,
    /// When it ends whatever its use.
    pub expires_at: DateTime<Utc>,
    /// When it was signed out of, if it was.
    pub ended_at: Option<DateTime<Utc>>,
}

#[derive(sqlx::FromRow)]
struct ConsoleSessionRow {
    id: String,
    key_id: String,
    created_at: DateTime<Utc>,
    last_seen_at: DateTime<Utc>,
    expires_at: DateTime<Utc>,
    ended_at: Option<DateTime<Utc>>,
}

impl ConsoleSessionRow {
    fn into_record(self) -> Result<ConsoleSessionRecord, StoreError> {
        Ok(ConsoleSessionRecord {
            key_id: PublicId::parse(&self.key_id)
                .map_err(|_| StoreError::Corrupt(format!("console session {}: bad key_id", self.id)))?,
            id: self.id,
            created_at: self.created_at,
            last_seen_at: self.last_seen_at,
            expires_at: self.expires_at,
            ended_at: self.ended_at,
        })
    }
}

/// Stores a new session under the hash of its token.
pub async fn insert(conn: &mut Conn<'_>, session: &ConsoleSessionRecord, token_sha256: &str) -> Result<(), StoreError> {
    dispatch!(conn, |connection| {
        sqlx::query(
            "INSERT INTO console_sessions (id, token_sha256, key_id, created_at, last_seen_at, expires_at, ended_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(&session.id)
        .bind(token_sha256)
        .bind(session.key_id.as_str())
        .bind(session.created_at)
        .bind(session.last_seen_at)
        .bind(session.expires_at)
        .bind(session.ended_at)
        .execute(&mut *connection)
        .await?;
    });
    Ok(())
}

/// The session whose token has this hash.
pub async fn find_by_token_hash(
    conn: &mut Conn<'_>,
    token_sha256: &str,
) -> Result<Option<ConsoleSessionRecord>, StoreError> {
    let row: Option<ConsoleSessionRow> = dispatch!(conn, |connection| {
        sqlx::query_as(
            "SELECT id, key_id, created_at, last_seen_at, expires_at, ended_at FROM console_sessions \
             WHERE token_sha256 = $1",
        )
        .bind(token_sha256)
        .fetch_optional(&mut *connection)
        .await?
    });
    row.map(ConsoleSessionRow::into_record).transpose()
}

/// Records that the session was used at `at`.
pub async fn touch(conn: &mut Conn<'_>, id: &str, at: DateTime<Utc>) -> Result<(), StoreError> {
    dispatch!(conn, |connection| {
        sqlx::query("UPDATE console_sessions SET last_seen_at = $2 WHERE id = $1 AND last_seen_at < $2")
            .bind(id)
            .bind(at)
            .execute(&mut *connection)
            .await?;
    });
    Ok(())
}

/// Ends the session at `at` (sign-out) unless it already ended.
pub async fn end(conn: &mut Conn<'_>, id: &str, at: DateTime<Utc>) -> Result<(), StoreError> {
    dispatch!(conn, |connection| {
        sqlx::query("UPDATE console_sessions SET ended_at = $2 WHERE id = $1 AND ended_at IS NULL")
            .bind(id)
            .bind(at)
            .execute(&mut *connection)
            .await?;
    });
    Ok(())
}

/// Deletes the sessions that can no longer be used at `now`: signed out, past their expiry, unused since
/// `idle_since`, or opened with a key since revoked or expired. Returns how many.
pub async fn delete_ended(
    conn: &mut Conn<'_>,
    now: DateTime<Utc>,
    idle_since: DateTime<Utc>,
) -> Result<u64, StoreError> {
    let deleted = dispatch!(conn, |connection| {
        sqlx::query(
            "DELETE FROM console_sessions WHERE ended_at IS NOT NULL OR expires_at <= $1 OR last_seen_at <= $2 \
             OR key_id IN (SELECT id FROM api_keys WHERE revoked_at IS NOT NULL OR expires_at <= $1)",
        )
        .bind(now)
        .bind(idle_since)
        .execute(&mut *connection)
        .await?
        .rows_affected()
    });
    Ok(deleted)
}
