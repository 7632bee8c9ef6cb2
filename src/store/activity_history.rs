//! The minute-by-minute history the web console plots: audited calls per minute (`call_minutes`) and each peer's
//! replication sampled once a minute (`peer_lag_samples`), with the deletion of what is past its keeping.

use chrono::{DateTime, Utc};

use super::{Conn, StoreError, dispatch};

/// The calls of one minute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallMinute {
    /// The minute's start.
    pub minute_start: DateTime<Utc>,
    /// Audited calls.
    pub calls: i64,
    /// Successful writes among them.
    pub writes: i64,
    /// Calls answered with an error code.
    pub errors: i64,
}

#[derive(sqlx::FromRow)]
struct CallMinuteRow {
    minute_start: DateTime<Utc>,
    calls: i64,
    writes: i64,
    errors: i64,
}

/// Adds `minute`'s counts to its row (made when missing): every serving process adds what it counted.
pub async fn add_call_minute(conn: &mut Conn<'_>, minute: &CallMinute) -> Result<(), StoreError> {
    dispatch!(conn, |connection| {
        sqlx::query(
            "INSERT INTO call_minutes (minute_start, calls, writes, errors) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (minute_start) DO UPDATE SET calls = call_minutes.calls + excluded.calls, \
             writes = call_minutes.writes + excluded.writes, errors = call_minutes.errors + excluded.errors",
        )
        .bind(minute.minute_start)
        .bind(minute.calls)
        .bind(minute.writes)
        .bind(minute.errors)
        .execute(&mut *connection)
        .await?;
    });
    Ok(())
}

/// The stored minutes from `from` on, oldest first (at most one row per minute).
pub async fn call_minutes_since(conn: &mut Conn<'_>, from: DateTime<Utc>) -> Result<Vec<CallMinute>, StoreError> {
    let rows: Vec<CallMinuteRow> = dispatch!(conn, |connection| {
        sqlx::query_as(
            "SELECT minute_start, calls, writes, errors FROM call_minutes WHERE minute_start >= $1 \
             ORDER BY minute_start",
        )
        .bind(from)
        .fetch_all(&mut *connection)
        .await?
    });
    Ok(rows
        .into_iter()
        .map(|row| CallMinute {
            minute_start: row.minute_start,
            calls: row.calls,
            writes: row.writes,
            errors: row.errors,
        })
        .collect())
}

/// One peer's replication at one minute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerLagSample {
    /// The peer.
    pub peer_realm: String,
    /// The minute it was sampled in.
    pub minute_start: DateTime<Utc>,
    /// Events of this instance's outbox waiting for the peer.
    pub undelivered_events: i64,
    /// How long the oldest of them had waited, in seconds (0 when none waited).
    pub oldest_waiting_seconds: i64,
    /// Dead letters kept for the peer.
    pub dead_letters: i64,
}

#[derive(sqlx::FromRow)]
struct PeerLagSampleRow {
    peer_realm: String,
    minute_start: DateTime<Utc>,
    undelivered_events: i64,
    oldest_waiting_seconds: i64,
    dead_letters: i64,
}

/// Stores a sample; a second sample of the same peer and minute (another process's) replaces the first.
pub async fn record_peer_lag_sample(conn: &mut Conn<'_>, sample: &PeerLagSample) -> Result<(), StoreError> {
    dispatch!(conn, |connection| {
        sqlx::query(
            "INSERT INTO peer_lag_samples \
             (peer_realm, minute_start, undelivered_events, oldest_waiting_seconds, dead_letters) \
             VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (peer_realm, minute_start) DO UPDATE SET \
             undelivered_events = excluded.undelivered_events, \
             oldest_waiting_seconds = excluded.oldest_waiting_seconds, dead_letters = excluded.dead_letters",
        )
        .bind(&sample.peer_realm)
        .bind(sample.minute_start)
        .bind(sample.undelivered_events)
        .bind(sample.oldest_waiting_seconds)
        .bind(sample.dead_letters)
        .execute(&mut *connection)
        .await?;
    });
    Ok(())
}

/// A peer's samples from `from` on, oldest first.
pub async fn peer_lag_samples_since(
    conn: &mut Conn<'_>,
    peer_realm: &str,
    from: DateTime<Utc>,
) -> Result<Vec<PeerLagSample>, StoreError> {
    let rows: Vec<PeerLagSampleRow> = dispatch!(conn, |connection| {
        sqlx::query_as(
            "SELECT peer_realm, minute_start, undelivered_events, oldest_waiting_seconds, dead_letters \
             FROM peer_lag_samples WHERE peer_realm = $1 AND minute_start >= $2 ORDER BY minute_start",
        )
        .bind(peer_realm)
        .bind(from)
        .fetch_all(&mut *connection)
        .await?
    });
    Ok(rows
        .into_iter()
        .map(|row| PeerLagSample {
            peer_realm: row.peer_realm,
            minute_start: row.minute_start,
            undelivered_events: row.undelivered_events,
            oldest_waiting_seconds: row.oldest_waiting_seconds,
            dead_letters: row.dead_letters,
        })
        .collect())
}

/// Deletes the history of the minutes before `cutoff` (both tables' minute columns are indexed); returns how many
/// rows went.
pub async fn delete_history_before(conn: &mut Conn<'_>, cutoff: DateTime<Utc>) -> Result<u64, StoreError> {
    let deleted = dispatch!(conn, |connection| {
        let calls = sqlx::query("DELETE FROM call_minutes WHERE minute_start < $1")
            .bind(cutoff)
            .execute(&mut *connection)
            .await?
            .rows_affected();
        let samples = sqlx::query("DELETE FROM peer_lag_samples WHERE minute_start < $1")
            .bind(cutoff)
            .execute(&mut *connection)
            .await?
            .rows_affected();
        calls + samples
    });
    Ok(deleted)
}
