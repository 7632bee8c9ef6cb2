//! Federation rows: the instance's signing keys, peers and their pinned keys, inbox nonces and queued activities,
//! peering deliveries, and the intake log.

use chrono::{DateTime, Utc};

use super::statement::Statement;
use super::{Conn, StoreError, dispatch};
use crate::domain::{KeyPin, PeerLevel, PeerState};

/// One of the instance's signing keys, its private half encrypted.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct InstanceKeyRow {
    /// The key ID (a URL under the public URL: `…/actor#key-…`).
    pub key_id: String,
    /// The public key, multibase (`z6Mk…`).
    pub public_key_multibase: String,
    /// The private key sealed under the key-encryption key (see `service::federation::key_box`).
    pub encrypted_private_key: String,
    /// First instant the key may sign.
    pub valid_from: DateTime<Utc>,
    /// First instant it may no longer sign.
    pub valid_until: Option<DateTime<Utc>>,
    /// The key that endorsed this one, for every key after the first.
    pub endorsed_by_key_id: Option<String>,
    /// That key's signature (base64) over this key's description.
    pub endorsement: Option<String>,
    /// When the key was made.
    pub created_at: DateTime<Utc>,
}

/// Stores a new instance key.
pub async fn insert_instance_key(conn: &mut Conn<'_>, key: &InstanceKeyRow) -> Result<(), StoreError> {
    dispatch!(conn, |connection| {
        sqlx::query(
            "INSERT INTO instance_keys (key_id, public_key_multibase, encrypted_private_key, valid_from, valid_until, \
             endorsed_by_key_id, endorsement, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(&key.key_id)
        .bind(&key.public_key_multibase)
        .bind(&key.encrypted_private_key)
        .bind(key.valid_from)
        .bind(key.valid_until)
        .bind(&key.endorsed_by_key_id)
        .bind(&key.endorsement)
        .bind(key.created_at)
        .execute(&mut *connection)
        .await?;
    });
    Ok(())
}

/// Ends a key's validity at `valid_until` (a rotation).
pub async fn retire_instance_key(
    conn: &mut Conn<'_>,
    key_id: &str,
    valid_until: DateTime<Utc>,
) -> Result<(), StoreError> {
    dispatch!(conn, |connection| {
        sqlx::query("UPDATE instance_keys SET valid_until = $2 WHERE key_id = $1")
            .bind(key_id)
            .bind(valid_until)
            .execute(&mut *connection)
            .await?;
    });
    Ok(())
}

/// Every instance key, oldest first.
pub async fn list_instance_keys(conn: &mut Conn<'_>) -> Result<Vec<InstanceKeyRow>, StoreError> {
    let rows: Vec<InstanceKeyRow> = dispatch!(conn, |connection| {
        sqlx::query_as(
            "SELECT key_id, public_key_multibase, encrypted_private_key, valid_from, valid_until, endorsed_by_key_id, \
             endorsement, created_at FROM instance_keys ORDER BY valid_from, created_at, key_id",
        )
        .fetch_all(&mut *connection)
        .await?
    });
    Ok(rows)
}

/// A peer as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct PeerRecord {
    /// The peer's realm (host and port), lower case: the key of everything about it.
    pub realm: String,
    /// Its public URL.
    pub base_url: String,
    /// Its instance actor.
    pub actor_url: String,
    /// Its inbox.
    pub inbox_url: String,
    /// Its outbox.
    pub outbox_url: Option<String>,
    /// Where the peering stands.
    pub state: PeerState,
    /// The admin's base trust.
    pub level: PeerLevel,
    /// The ID of the `Follow` this instance sent.
    pub our_follow_id: Option<String>,
    /// The ID of the `Follow` the peer sent.
    pub their_follow_id: Option<String>,
    /// Why it was blocked.
    pub blocked_reason: Option<String>,
    /// When the block lifts on its own.
    pub blocked_until: Option<DateTime<Utc>>,
    /// The state to return to when the block lifts.
    pub state_before_block: Option<PeerState>,
    /// The last authenticated request from the peer, or the last delivery to it.
    pub last_contact_at: Option<DateTime<Utc>>,
    /// The last failure with the peer, as the admin reads it.
    pub last_error: Option<String>,
    /// When it happened.
    pub last_error_at: Option<DateTime<Utc>>,
    /// When its manifest was last read after a signature failure (at most once per interval).
    pub manifest_refreshed_at: Option<DateTime<Utc>>,
    /// When the peer was first recorded.
    pub created_at: DateTime<Utc>,
    /// When the row last changed.
    pub updated_at: DateTime<Utc>,
}

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

/// A key pinned for a peer.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct PeerKeyRow {
    /// The key ID, a URL under the peer's public URL.
    pub key_id: String,
    /// The peer.
    pub peer_realm: String,
    /// The public key, multibase.
    pub public_key_multibase: String,
    /// `SHA256:…` of the key, as admins compare it.
    pub fingerprint: String,
    /// First instant the key may sign, when published.
    pub valid_from: Option<DateTime<Utc>>,
    /// First instant it may no longer sign, when published.
    pub valid_until: Option<DateTime<Utc>>,
    /// Who pinned it (stored as `admin`, `first_contact`, or the ID of the pinned key that endorsed it).
    #[sqlx(try_from = "String")]
    pub pinned_by: KeyPin,
    /// When it was pinned.
    pub pinned_at: DateTime<Utc>,
}

/// Pins a key, or updates the pin of the same key ID (a first-contact key an admin approves, a new validity).
pub async fn save_peer_key(conn: &mut Conn<'_>, key: &PeerKeyRow) -> Result<(), StoreError> {
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
) -> Result<Option<(PeerKeyRow, PeerRecord)>, StoreError> {
    let sql = format!(
        "SELECT {}, {} FROM peer_keys k JOIN peers p ON p.realm = k.peer_realm WHERE k.key_id = $1",
        qualified("k", PEER_KEY_COLUMNS),
        qualified("p", PEER_COLUMNS)
    );
    let found: Option<(PeerKeyRow, PeerRow)> = dispatch!(conn, |connection| {
        match sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(key_id)
            .fetch_optional(&mut *connection)
            .await?
        {
            Some(row) => Some((sqlx::FromRow::from_row(&row)?, sqlx::FromRow::from_row(&row)?)),
            None => None,
        }
    });
    found.map(|(key, peer)| Ok((key, peer.into_record()?))).transpose()
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
pub async fn list_peer_keys(conn: &mut Conn<'_>, realm: &str) -> Result<Vec<PeerKeyRow>, StoreError> {
    let rows: Vec<PeerKeyRow> = dispatch!(conn, |connection| {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {PEER_KEY_COLUMNS} FROM peer_keys WHERE peer_realm = $1 ORDER BY pinned_at, key_id"
        )))
        .bind(realm)
        .fetch_all(&mut *connection)
        .await?
    });
    Ok(rows)
}

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

/// A peering activity waiting for (or done with) delivery to one peer.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct DeliveryRow {
    /// The delivery's own ID.
    pub id: String,
    /// The peer it goes to.
    pub peer_realm: String,
    /// The peer's inbox at the time it was queued.
    pub inbox_url: String,
    /// The activity's `id`.
    pub activity_id: String,
    /// `Follow`, `Accept`, `Reject`, `Undo` or `Update`.
    pub activity_type: String,
    /// What to send, in the transport-neutral form of `service::federation::peering::PeeringMessage`.
    pub body: String,
    /// `pending`, `delivered` or `dead`.
    pub state: String,
    /// Attempts so far.
    pub attempts: i32,
    /// When the next attempt is due.
    pub next_attempt_at: DateTime<Utc>,
    /// The last failure.
    pub last_error: Option<String>,
    /// When it was queued.
    pub created_at: DateTime<Utc>,
    /// When it was delivered or given up on.
    pub finished_at: Option<DateTime<Utc>>,
}

const DELIVERY_COLUMNS: &str = "id, peer_realm, inbox_url, activity_id, activity_type, body, state, attempts, \
    next_attempt_at, last_error, created_at, finished_at";

/// Queues a delivery.
pub async fn insert_delivery(conn: &mut Conn<'_>, row: &DeliveryRow) -> Result<(), StoreError> {
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
        .bind(&row.state)
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
) -> Result<Vec<DeliveryRow>, StoreError> {
    const DUE: &str = "SELECT d.id FROM federation_deliveries d WHERE d.state = 'pending' AND d.next_attempt_at <= $1 \
         AND (d.leased_until IS NULL OR d.leased_until <= $1) \
         AND ($4 IS NULL OR d.peer_realm = $4) \
         AND NOT EXISTS (SELECT 1 FROM federation_deliveries e WHERE e.peer_realm = d.peer_realm \
         AND e.state = 'pending' AND (e.created_at < d.created_at OR (e.created_at = d.created_at AND e.id < d.id))) \
         ORDER BY d.created_at, d.id LIMIT $3";
    let rows: Vec<DeliveryRow> = match conn {
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
    let mut rows = rows;
    rows.sort_by(|left, right| (left.created_at, &left.id).cmp(&(right.created_at, &right.id)));
    Ok(rows)
}

/// Records the end of one attempt: `delivered`, `dead` (a permanent refusal), or `pending` again with the next
/// attempt time.
pub async fn finish_delivery_attempt(
    conn: &mut Conn<'_>,
    id: &str,
    state: &str,
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
        .bind(state)
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
) -> Result<Vec<DeliveryRow>, StoreError> {
    let rows: Vec<DeliveryRow> = dispatch!(conn, |connection| {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {DELIVERY_COLUMNS} FROM federation_deliveries WHERE ($1 IS NULL OR peer_realm = $1) \
             ORDER BY created_at DESC, id DESC LIMIT $2"
        )))
        .bind(realm)
        .bind(limit)
        .fetch_all(&mut *connection)
        .await?
    });
    Ok(rows)
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
pub async fn find_delivery(conn: &mut Conn<'_>, id: &str) -> Result<Option<DeliveryRow>, StoreError> {
    let row: Option<DeliveryRow> = dispatch!(conn, |connection| {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {DELIVERY_COLUMNS} FROM federation_deliveries WHERE id = $1"
        )))
        .bind(id)
        .fetch_optional(&mut *connection)
        .await?
    });
    Ok(row)
}

/// Dead letters (deliveries refused for good) of a peer or of every peer, newest first.
pub async fn list_dead_letters(
    conn: &mut Conn<'_>,
    realm: Option<&str>,
    limit: i64,
) -> Result<Vec<DeliveryRow>, StoreError> {
    let rows: Vec<DeliveryRow> = dispatch!(conn, |connection| {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {DELIVERY_COLUMNS} FROM federation_deliveries WHERE state = 'dead' \
             AND ($1 IS NULL OR peer_realm = $1) ORDER BY created_at DESC, id DESC LIMIT $2"
        )))
        .bind(realm)
        .bind(limit)
        .fetch_all(&mut *connection)
        .await?
    });
    Ok(rows)
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

/// One line of the intake log.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct IntakeRow {
    /// The line's ID.
    pub id: String,
    /// The peer whose activity it was.
    pub peer_realm: String,
    /// The activity.
    pub activity_id: String,
    /// Its type.
    pub activity_type: String,
    /// The key that signed it.
    pub key_id: String,
    /// `applied`, `ignored` or `refused`.
    pub outcome: String,
    /// What it did, for the admin.
    pub detail: String,
    /// When.
    pub created_at: DateTime<Utc>,
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
pub async fn list_intake(conn: &mut Conn<'_>, realm: Option<&str>, limit: i64) -> Result<Vec<IntakeRow>, StoreError> {
    // Two statements rather than `$1 IS NULL OR peer_realm = $1`, which no planner can serve from the peer's index.
    const COLUMNS: &str = "SELECT id, peer_realm, activity_id, activity_type, key_id, outcome, detail, created_at \
         FROM federation_intake";
    let rows: Vec<IntakeRow> = match realm {
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
    Ok(rows)
}
