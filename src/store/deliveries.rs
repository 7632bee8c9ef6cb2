//! Peering messages waiting to be sent, sent, or dead (`federation_deliveries`).

use super::{Conn, StoreError, dispatch};
use crate::domain::peering_delivery::{DeliveryState, PeeringDelivery};
use chrono::{DateTime, Utc};

/// A delivery's columns as read (the domain's [`PeeringDelivery`]).
#[derive(sqlx::FromRow)]
struct DeliveryColumns {
    id: String,
    peer_realm: String,
    inbox_url: String,
    activity_id: String,
    activity_type: String,
    body: String,
    state: String,
    attempts: i32,
    next_attempt_at: DateTime<Utc>,
    last_error: Option<String>,
    created_at: DateTime<Utc>,
    finished_at: Option<DateTime<Utc>>,
}

impl DeliveryColumns {
    fn into_delivery(self) -> Result<PeeringDelivery, StoreError> {
        let state = DeliveryState::parse(&self.state)
            .ok_or_else(|| StoreError::Corrupt(format!("delivery {}: unknown state {}", self.id, self.state)))?;
        Ok(PeeringDelivery {
            id: self.id,
            peer_realm: self.peer_realm,
            inbox_url: self.inbox_url,
            activity_id: self.activity_id,
            activity_type: self.activity_type,
            body: self.body,
            state,
            attempts: self.attempts,
            next_attempt_at: self.next_attempt_at,
            last_error: self.last_error,
            created_at: self.created_at,
            finished_at: self.finished_at,
        })
    }
}

/// Deliveries read, as the domain's.
fn into_deliveries(rows: Vec<DeliveryColumns>) -> Result<Vec<PeeringDelivery>, StoreError> {
    rows.into_iter().map(DeliveryColumns::into_delivery).collect()
}

const DELIVERY_COLUMNS: &str = "id, peer_realm, inbox_url, activity_id, activity_type, body, state, attempts, \
    next_attempt_at, last_error, created_at, finished_at";

/// Queues a delivery.
pub async fn insert_delivery(conn: &mut Conn<'_>, row: &PeeringDelivery) -> Result<(), StoreError> {
    dispatch!(conn, |connection| {
        sqlx::query(
            "INSERT INTO federation_deliveries (id, peer_realm, inbox_url, activity_id, activity_type, body, state, \
             attempts, next_attempt_at, last_error, created_at, finished_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
        )
        .bind(&row.id)
        .bind(&row.peer_realm)
        .bind(&row.inbox_url)
        .bind(&row.activity_id)
        .bind(&row.activity_type)
        .bind(&row.body)
        .bind(row.state.as_str())
        .bind(row.attempts)
        .bind(row.next_attempt_at)
        .bind(&row.last_error)
        .bind(row.created_at)
        .bind(row.finished_at)
        .execute(&mut *connection)
        .await?;
    });
    Ok(())
}

/// Leases the deliveries that are due, at most `limit`, and only the oldest pending one of each peer (a peer gets
/// its activities in order: a later one waits while an earlier one backs off). Each leased row is leased until
/// `lease_until` and its attempts go up by one; on PostgreSQL rows another transaction holds are skipped,
/// so two processes never send the same delivery at once.
pub async fn lease_due_deliveries(
    conn: &mut Conn<'_>,
    now: DateTime<Utc>,
    lease_until: DateTime<Utc>,
    limit: i64,
    only_peer: Option<&str>,
) -> Result<Vec<PeeringDelivery>, StoreError> {
    const DUE: &str = "SELECT d.id FROM federation_deliveries d WHERE d.state = 'pending' AND d.next_attempt_at <= $1 \
         AND (d.leased_until IS NULL OR d.leased_until <= $1) \
         AND ($4 IS NULL OR d.peer_realm = $4) \
         AND NOT EXISTS (SELECT 1 FROM federation_deliveries e WHERE e.peer_realm = d.peer_realm \
         AND e.state = 'pending' AND (e.created_at < d.created_at OR (e.created_at = d.created_at AND e.id < d.id))) \
         ORDER BY d.created_at, d.id LIMIT $3";
    let rows: Vec<DeliveryColumns> = match conn {
        postgres @ (Conn::Postgres(_) | Conn::PostgresWrite(_)) => {
            let connection = super::postgres_connection(postgres).await?;
            sqlx::query_as(sqlx::AssertSqlSafe(format!(
                "UPDATE federation_deliveries SET leased_until = $2, attempts = attempts + 1 WHERE id IN \
                 ({DUE} FOR UPDATE OF d SKIP LOCKED) RETURNING {DELIVERY_COLUMNS}"
            )))
            .bind(now)
            .bind(lease_until)
            .bind(limit)
            .bind(only_peer)
            .fetch_all(&mut *connection)
            .await?
        }
        sqlite => {
            let connection = super::sqlite_connection(sqlite).await?;
            sqlx::query_as(sqlx::AssertSqlSafe(format!(
                "UPDATE federation_deliveries SET leased_until = $2, attempts = attempts + 1 WHERE id IN \
                 ({DUE}) RETURNING {DELIVERY_COLUMNS}"
            )))
            .bind(now)
            .bind(lease_until)
            .bind(limit)
            .bind(only_peer)
            .fetch_all(&mut *connection)
            .await?
        }
    };
    let mut rows = into_deliveries(rows)?;
    rows.sort_by(|left, right| (left.created_at, &left.id).cmp(&(right.created_at, &right.id)));
    Ok(rows)
}

/// Records the end of one attempt: `delivered`, `dead` (a permanent refusal), or `pending` again with the next
/// attempt time.
pub async fn finish_delivery_attempt(
    conn: &mut Conn<'_>,
    id: &str,
    state: DeliveryState,
    next_attempt_at: DateTime<Utc>,
    last_error: Option<&str>,
    finished_at: Option<DateTime<Utc>>,
) -> Result<(), StoreError> {
    dispatch!(conn, |connection| {
        sqlx::query(
            "UPDATE federation_deliveries SET state = $2, next_attempt_at = $3, last_error = $4, finished_at = $5, \
             leased_until = NULL WHERE id = $1",
        )
        .bind(id)
        .bind(state.as_str())
        .bind(next_attempt_at)
        .bind(last_error)
        .bind(finished_at)
        .execute(&mut *connection)
        .await?;
    });
    Ok(())
}

/// Whether a pending delivery (optionally to one peer) is due and not leased: read before leasing.
pub async fn deliveries_due(
    conn: &mut Conn<'_>,
    now: DateTime<Utc>,
    only_peer: Option<&str>,
) -> Result<bool, StoreError> {
    let due: Option<i32> = match only_peer {
        Some(realm) => dispatch!(conn, |connection| {
            sqlx::query_scalar(
                "SELECT 1 FROM federation_deliveries WHERE state = 'pending' AND next_attempt_at <= $1 \
                 AND (leased_until IS NULL OR leased_until <= $1) AND peer_realm = $2 LIMIT 1",
            )
            .bind(now)
            .bind(realm)
            .fetch_optional(&mut *connection)
            .await?
        }),
        None => dispatch!(conn, |connection| {
            sqlx::query_scalar(
                "SELECT 1 FROM federation_deliveries WHERE state = 'pending' AND next_attempt_at <= $1 \
                 AND (leased_until IS NULL OR leased_until <= $1) LIMIT 1",
            )
            .bind(now)
            .fetch_optional(&mut *connection)
            .await?
        }),
    };
    Ok(due.is_some())
}

/// The earliest time a pending delivery falls due, if any.
pub async fn next_delivery_due(conn: &mut Conn<'_>) -> Result<Option<DateTime<Utc>>, StoreError> {
    let due: Option<DateTime<Utc>> = dispatch!(conn, |connection| {
        sqlx::query_scalar("SELECT MIN(next_attempt_at) FROM federation_deliveries WHERE state = 'pending'")
            .fetch_one(&mut *connection)
            .await?
    });
    Ok(due)
}

/// The deliveries of a peer (or of every peer), newest first, at most `limit`.
pub async fn list_deliveries(
    conn: &mut Conn<'_>,
    realm: Option<&str>,
    limit: i64,
) -> Result<Vec<PeeringDelivery>, StoreError> {
    let rows: Vec<DeliveryColumns> = dispatch!(conn, |connection| {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {DELIVERY_COLUMNS} FROM federation_deliveries WHERE ($1 IS NULL OR peer_realm = $1) \
             ORDER BY created_at DESC, id DESC LIMIT $2"
        )))
        .bind(realm)
        .bind(limit)
        .fetch_all(&mut *connection)
        .await?
    });
    into_deliveries(rows)
}

/// Notes which outbox event a dead letter carried.
pub async fn set_delivery_outbox_seq(conn: &mut Conn<'_>, id: &str, seq: i64) -> Result<(), StoreError> {
    dispatch!(conn, |connection| {
        sqlx::query("UPDATE federation_deliveries SET outbox_seq = $2 WHERE id = $1")
            .bind(id)
            .bind(seq)
            .execute(&mut *connection)
            .await?;
    });
    Ok(())
}

/// One delivery by its ID.
pub async fn find_delivery(conn: &mut Conn<'_>, id: &str) -> Result<Option<PeeringDelivery>, StoreError> {
    let row: Option<DeliveryColumns> = dispatch!(conn, |connection| {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {DELIVERY_COLUMNS} FROM federation_deliveries WHERE id = $1"
        )))
        .bind(id)
        .fetch_optional(&mut *connection)
        .await?
    });
    row.map(DeliveryColumns::into_delivery).transpose()
}

/// Dead letters (deliveries refused for good) of a peer or of every peer, newest first.
pub async fn list_dead_letters(
    conn: &mut Conn<'_>,
    realm: Option<&str>,
    limit: i64,
) -> Result<Vec<PeeringDelivery>, StoreError> {
    let rows: Vec<DeliveryColumns> = dispatch!(conn, |connection| {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {DELIVERY_COLUMNS} FROM federation_deliveries WHERE state = 'dead' \
             AND ($1 IS NULL OR peer_realm = $1) ORDER BY created_at DESC, id DESC LIMIT $2"
        )))
        .bind(realm)
        .bind(limit)
        .fetch_all(&mut *connection)
        .await?
    });
    into_deliveries(rows)
}

/// How many dead letters a peer has.
pub async fn count_dead_letters(conn: &mut Conn<'_>, realm: &str) -> Result<i64, StoreError> {
    let count: i64 = dispatch!(conn, |connection| {
        sqlx::query_scalar("SELECT COUNT(*) FROM federation_deliveries WHERE state = 'dead' AND peer_realm = $1")
            .bind(realm)
            .fetch_one(&mut *connection)
            .await?
    });
    Ok(count)
}

/// How many peering messages wait for delivery to a peer (queued, not yet delivered or given up).
pub async fn count_pending_deliveries(conn: &mut Conn<'_>, realm: &str) -> Result<i64, StoreError> {
    let count: i64 = dispatch!(conn, |connection| {
        sqlx::query_scalar("SELECT COUNT(*) FROM federation_deliveries WHERE state = 'pending' AND peer_realm = $1")
            .bind(realm)
            .fetch_one(&mut *connection)
            .await?
    });
    Ok(count)
}

/// Deletes a dead letter; `false` when there is none with this ID.
pub async fn delete_dead_letter(conn: &mut Conn<'_>, id: &str) -> Result<bool, StoreError> {
    let affected = dispatch!(conn, |connection| {
        sqlx::query("DELETE FROM federation_deliveries WHERE id = $1 AND state = 'dead'")
            .bind(id)
            .execute(&mut *connection)
            .await?
            .rows_affected()
    });
    Ok(affected == 1)
}
