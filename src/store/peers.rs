//! Peers (`peers`) and the keys pinned for them (`peer_keys`).

use super::statement::Statement;
use super::{Conn, StoreError, dispatch};
use crate::domain::peer::{PeerRecord, PinnedPeerKey};
use crate::domain::{KeyPin, PeerLevel, PeerState};
use chrono::{DateTime, Utc};

#[derive(sqlx::FromRow)]
struct PeerRow {
    realm: String,
    base_url: String,
    actor_url: String,
    inbox_url: String,
    outbox_url: Option<String>,
    state: String,
    level: String,
    our_follow_id: Option<String>,
    their_follow_id: Option<String>,
    blocked_reason: Option<String>,
    blocked_until: Option<DateTime<Utc>>,
    state_before_block: Option<String>,
    last_contact_at: Option<DateTime<Utc>>,
    last_error: Option<String>,
    last_error_at: Option<DateTime<Utc>>,
    manifest_refreshed_at: Option<DateTime<Utc>>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl PeerRow {
    fn into_record(self) -> Result<PeerRecord, StoreError> {
        let corrupt = |what: &str| StoreError::Corrupt(format!("peer {}: {what}", self.realm));
        let state = PeerState::parse(&self.state).ok_or_else(|| corrupt("unknown state"))?;
        let level = PeerLevel::parse(&self.level).ok_or_else(|| corrupt("unknown level"))?;
        let state_before_block = match self.state_before_block.as_deref() {
            Some(text) => Some(PeerState::parse(text).ok_or_else(|| corrupt("unknown state before block"))?),
            None => None,
        };
        Ok(PeerRecord {
            realm: self.realm,
            base_url: self.base_url,
            actor_url: self.actor_url,
            inbox_url: self.inbox_url,
            outbox_url: self.outbox_url,
            state,
            level,
            our_follow_id: self.our_follow_id,
            their_follow_id: self.their_follow_id,
            blocked_reason: self.blocked_reason,
            blocked_until: self.blocked_until,
            state_before_block,
            last_contact_at: self.last_contact_at,
            last_error: self.last_error,
            last_error_at: self.last_error_at,
            manifest_refreshed_at: self.manifest_refreshed_at,
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

const PEER_COLUMNS: &str = "realm, base_url, actor_url, inbox_url, outbox_url, state, level, our_follow_id, \
    their_follow_id, blocked_reason, blocked_until, state_before_block, last_contact_at, last_error, last_error_at, \
    manifest_refreshed_at, created_at, updated_at";

/// The peer with this realm.
pub async fn find_peer(conn: &mut Conn<'_>, realm: &str) -> Result<Option<PeerRecord>, StoreError> {
    let row: Option<PeerRow> = dispatch!(conn, |connection| {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {PEER_COLUMNS} FROM peers WHERE realm = $1"
        )))
        .bind(realm)
        .fetch_optional(&mut *connection)
        .await?
    });
    row.map(PeerRow::into_record).transpose()
}

/// Every peer, by realm.
pub async fn list_peers(conn: &mut Conn<'_>) -> Result<Vec<PeerRecord>, StoreError> {
    let rows: Vec<PeerRow> = dispatch!(conn, |connection| {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {PEER_COLUMNS} FROM peers ORDER BY realm"
        )))
        .fetch_all(&mut *connection)
        .await?
    });
    rows.into_iter().map(PeerRow::into_record).collect()
}

/// Inserts a peer, or replaces every field of the one with the same realm.
pub async fn save_peer(conn: &mut Conn<'_>, peer: &PeerRecord) -> Result<(), StoreError> {
    dispatch!(conn, |connection| {
        sqlx::query(
            "INSERT INTO peers (realm, base_url, actor_url, inbox_url, outbox_url, state, level, our_follow_id, \
             their_follow_id, blocked_reason, blocked_until, state_before_block, last_contact_at, last_error, \
             last_error_at, manifest_refreshed_at, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18) \
             ON CONFLICT (realm) DO UPDATE SET base_url = excluded.base_url, actor_url = excluded.actor_url, \
             inbox_url = excluded.inbox_url, outbox_url = excluded.outbox_url, state = excluded.state, \
             level = excluded.level, our_follow_id = excluded.our_follow_id, \
             their_follow_id = excluded.their_follow_id, blocked_reason = excluded.blocked_reason, \
             blocked_until = excluded.blocked_until, state_before_block = excluded.state_before_block, \
             last_contact_at = excluded.last_contact_at, last_error = excluded.last_error, \
             last_error_at = excluded.last_error_at, manifest_refreshed_at = excluded.manifest_refreshed_at, \
             updated_at = excluded.updated_at",
        )
        .bind(&peer.realm)
        .bind(&peer.base_url)
        .bind(&peer.actor_url)
        .bind(&peer.inbox_url)
        .bind(&peer.outbox_url)
        .bind(peer.state.as_str())
        .bind(peer.level.as_str())
        .bind(&peer.our_follow_id)
        .bind(&peer.their_follow_id)
        .bind(&peer.blocked_reason)
        .bind(peer.blocked_until)
        .bind(peer.state_before_block.map(PeerState::as_str))
        .bind(peer.last_contact_at)
        .bind(&peer.last_error)
        .bind(peer.last_error_at)
        .bind(peer.manifest_refreshed_at)
        .bind(peer.created_at)
        .bind(peer.updated_at)
        .execute(&mut *connection)
        .await?;
    });
    Ok(())
}

/// What an authenticated request from a peer records: its contact time (at most once a minute), and the reset of
/// its backoff, since it just proved it is there: every pending delivery to it falls due at `at` (a delivery a
/// worker holds keeps its lease, so it is not sent twice at once), and its push round too, with its failures
/// forgotten. Each part changes nothing when there is nothing to change. Nobody reads the result: on SQLite the
/// three statements ride with the write's next statement; on PostgreSQL they are one statement (three
/// data-modifying parts on three tables, none reading another's rows), one round trip on every request.
pub async fn record_peer_contact(conn: &mut Conn<'_>, realm: &str, at: DateTime<Utc>) -> Result<(), StoreError> {
    const TOUCH: &str = "UPDATE peers SET last_contact_at = $2 WHERE realm = $1 \
                         AND (last_contact_at IS NULL OR last_contact_at < $3)";
    const DELIVERIES: &str = "UPDATE federation_deliveries SET next_attempt_at = $2 WHERE peer_realm = $1 \
                              AND state = 'pending' AND next_attempt_at > $2 AND attempts > 0";
    const ROUND: &str = "UPDATE peer_replication SET next_attempt_at = $2, consecutive_failures = 0, \
                         failing_since = NULL WHERE peer_realm = $1 AND (next_attempt_at > $2 OR consecutive_failures > 0)";
    let threshold = at - chrono::TimeDelta::minutes(1);
    match conn {
        Conn::Postgres(_) | Conn::PostgresWrite(_) => {
            let statement = Statement::update("peer_replication", ROUND)
                .with_queries(format!(
                    "touched AS ({TOUCH} RETURNING 1), deliveries AS ({DELIVERIES} RETURNING 1)"
                ))
                .also_writes("peers")
                .also_writes("federation_deliveries");
            super::statement::execute(conn, statement.bind(realm).bind(at).bind(threshold)).await
        }
        Conn::Sqlite(_) | Conn::SqliteWrite(_) => {
            let touch = Statement::update("peers", TOUCH).bind(realm).bind(at).bind(threshold);
            super::statement::execute(conn, touch).await?;
            let deliveries = Statement::update("federation_deliveries", DELIVERIES)
                .bind(realm)
                .bind(at);
            super::statement::execute(conn, deliveries).await?;
            let round = Statement::update("peer_replication", ROUND).bind(realm).bind(at);
            super::statement::execute(conn, round).await
        }
    }
}

/// Deletes a peer with its keys and queued deliveries. Returns whether it existed.
pub async fn delete_peer(conn: &mut Conn<'_>, realm: &str) -> Result<bool, StoreError> {
    let affected = dispatch!(conn, |connection| {
        sqlx::query("DELETE FROM peer_keys WHERE peer_realm = $1")
            .bind(realm)
            .execute(&mut *connection)
            .await?;
        sqlx::query("DELETE FROM federation_deliveries WHERE peer_realm = $1 AND state = 'pending'")
            .bind(realm)
            .execute(&mut *connection)
            .await?;
        sqlx::query("DELETE FROM peers WHERE realm = $1")
            .bind(realm)
            .execute(&mut *connection)
            .await?
            .rows_affected()
    });
    Ok(affected > 0)
}

/// How many peers are in each state (states without peers are absent).
pub async fn count_peers_by_state(conn: &mut Conn<'_>) -> Result<Vec<(PeerState, i64)>, StoreError> {
    let rows: Vec<(String, i64)> = dispatch!(conn, |connection| {
        sqlx::query_as("SELECT state, COUNT(*) FROM peers GROUP BY state")
            .fetch_all(&mut *connection)
            .await?
    });
    rows.into_iter()
        .map(|(state, count)| {
            PeerState::parse(&state)
                .map(|state| (state, count))
                .ok_or_else(|| StoreError::Corrupt(format!("unknown peer state {state}")))
        })
        .collect()
}

/// A pinned key's columns as read (the domain's [`PinnedPeerKey`]).
#[derive(sqlx::FromRow)]
struct PeerKeyColumns {
    key_id: String,
    peer_realm: String,
    public_key_multibase: String,
    fingerprint: String,
    valid_from: Option<DateTime<Utc>>,
    valid_until: Option<DateTime<Utc>>,
    #[sqlx(try_from = "String")]
    pinned_by: KeyPin,
    pinned_at: DateTime<Utc>,
}

impl From<PeerKeyColumns> for PinnedPeerKey {
    fn from(columns: PeerKeyColumns) -> PinnedPeerKey {
        PinnedPeerKey {
            key_id: columns.key_id,
            peer_realm: columns.peer_realm,
            public_key_multibase: columns.public_key_multibase,
            fingerprint: columns.fingerprint,
            valid_from: columns.valid_from,
            valid_until: columns.valid_until,
            pinned_by: columns.pinned_by,
            pinned_at: columns.pinned_at,
        }
    }
}

/// Pins a key, or updates the pin of the same key ID (a first-contact key an admin approves, a new validity).
pub async fn save_peer_key(conn: &mut Conn<'_>, key: &PinnedPeerKey) -> Result<(), StoreError> {
    dispatch!(conn, |connection| {
        sqlx::query(
            "INSERT INTO peer_keys (key_id, peer_realm, public_key_multibase, fingerprint, valid_from, valid_until, \
             pinned_by, pinned_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
             ON CONFLICT (key_id) DO UPDATE SET valid_from = excluded.valid_from, valid_until = excluded.valid_until, \
             pinned_by = excluded.pinned_by, pinned_at = excluded.pinned_at \
             WHERE peer_keys.peer_realm = excluded.peer_realm \
             AND peer_keys.public_key_multibase = excluded.public_key_multibase",
        )
        .bind(&key.key_id)
        .bind(&key.peer_realm)
        .bind(&key.public_key_multibase)
        .bind(&key.fingerprint)
        .bind(key.valid_from)
        .bind(key.valid_until)
        .bind(key.pinned_by.as_str())
        .bind(key.pinned_at)
        .execute(&mut *connection)
        .await?;
    });
    Ok(())
}

const PEER_KEY_COLUMNS: &str =
    "key_id, peer_realm, public_key_multibase, fingerprint, valid_from, valid_until, pinned_by, pinned_at";

/// The pinned key with this ID and the peer it belongs to, in one statement (the inbox reads both for every
/// request). `None` when there is no such key, or no such peer.
pub async fn find_peer_key_and_peer(
    conn: &mut Conn<'_>,
    key_id: &str,
) -> Result<Option<(PinnedPeerKey, PeerRecord)>, StoreError> {
    let sql = format!(
        "SELECT {}, {} FROM peer_keys k JOIN peers p ON p.realm = k.peer_realm WHERE k.key_id = $1",
        qualified("k", PEER_KEY_COLUMNS),
        qualified("p", PEER_COLUMNS)
    );
    let found: Option<(PeerKeyColumns, PeerRow)> = dispatch!(conn, |connection| {
        match sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(key_id)
            .fetch_optional(&mut *connection)
            .await?
        {
            Some(row) => Some((sqlx::FromRow::from_row(&row)?, sqlx::FromRow::from_row(&row)?)),
            None => None,
        }
    });
    found
        .map(|(key, peer)| Ok((key.into(), peer.into_record()?)))
        .transpose()
}

/// `a, b` → `t.a, t.b`: a column list qualified by a table alias (the lists' names do not overlap, so the rows
/// decode by name as if read alone).
fn qualified(alias: &str, columns: &str) -> String {
    columns
        .split(',')
        .map(|column| format!("{alias}.{}", column.trim()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Every key pinned for a peer, oldest pin first.
pub async fn list_peer_keys(conn: &mut Conn<'_>, realm: &str) -> Result<Vec<PinnedPeerKey>, StoreError> {
    let rows: Vec<PeerKeyColumns> = dispatch!(conn, |connection| {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {PEER_KEY_COLUMNS} FROM peer_keys WHERE peer_realm = $1 ORDER BY pinned_at, key_id"
        )))
        .bind(realm)
        .fetch_all(&mut *connection)
        .await?
    });
    Ok(rows.into_iter().map(PinnedPeerKey::from).collect())
}
