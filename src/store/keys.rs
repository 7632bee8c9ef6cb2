//! API key rows. Only the SHA-256 of a secret is ever stored.

use chrono::{DateTime, Utc};

use super::{Conn, StoreError, dispatch};
use crate::domain::{Actor, PublicId, ScopeSet};

/// A stored API key, without its secret.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiKeyRecord {
    /// The key's ID (`key_…`).
    pub id: PublicId,
    /// The actor the key authenticates.
    pub actor_id: PublicId,
    /// The key's scopes.
    pub scopes: ScopeSet,
    /// A free label set by the admin.
    pub label: Option<String>,
    /// When the key was created.
    pub created_at: DateTime<Utc>,
    /// When the key stops working, if ever.
    pub expires_at: Option<DateTime<Utc>>,
    /// When the key was revoked, if it was.
    pub revoked_at: Option<DateTime<Utc>>,
    /// When the key last authenticated a request (updated at most once a minute).
    pub last_used_at: Option<DateTime<Utc>>,
}

#[derive(sqlx::FromRow)]
struct ApiKeyRow {
    id: String,
    actor_id: String,
    scopes: String,
    label: Option<String>,
    created_at: DateTime<Utc>,
    expires_at: Option<DateTime<Utc>>,
    revoked_at: Option<DateTime<Utc>>,
    last_used_at: Option<DateTime<Utc>>,
}

impl ApiKeyRow {
    fn into_record(self) -> Result<ApiKeyRecord, StoreError> {
        let corrupt = |what: &str| StoreError::Corrupt(format!("api key {}: {what}", self.id));
        Ok(ApiKeyRecord {
            actor_id: PublicId::parse(&self.actor_id).map_err(|_| corrupt("bad actor_id"))?,
            scopes: ScopeSet::parse_list(&self.scopes).map_err(|_| corrupt("unknown scope"))?,
            id: PublicId::parse(&self.id).map_err(|_| corrupt("bad id"))?,
            label: self.label,
            created_at: self.created_at,
            expires_at: self.expires_at,
            revoked_at: self.revoked_at,
            last_used_at: self.last_used_at,
        })
    }
}

const KEY_COLUMNS: &str = "id, actor_id, scopes, label, created_at, expires_at, revoked_at, last_used_at";

/// Inserts a key with the hash of its secret.
pub async fn insert(conn: &mut Conn<'_>, key: &ApiKeyRecord, secret_sha256: &str) -> Result<(), StoreError> {
    dispatch!(conn, |connection| {
        sqlx::query(
            "INSERT INTO api_keys (id, actor_id, secret_sha256, scopes, label, created_at, expires_at, revoked_at, last_used_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        )
        .bind(key.id.as_str())
        .bind(key.actor_id.as_str())
        .bind(secret_sha256)
        .bind(key.scopes.to_list())
        .bind(&key.label)
        .bind(key.created_at)
        .bind(key.expires_at)
        .bind(key.revoked_at)
        .bind(key.last_used_at)
        .execute(&mut *connection)
        .await?;
    });
    Ok(())
}

#[derive(sqlx::FromRow)]
struct KeyWithActorRow {
    #[sqlx(flatten)]
    key: ApiKeyRow,
    actor_type: Option<String>,
    actor_display_name: Option<String>,
    actor_controller_id: Option<String>,
    actor_root_controller_id: Option<String>,
    actor_origin: Option<String>,
    actor_verified_by_email: Option<bool>,
    actor_verified_by_domain: Option<bool>,
    actor_created_at: Option<DateTime<Utc>>,
}

/// The key whose secret has this hash, with the actor it authenticates, in one statement (authentication reads
/// both for every request). The actor is `None` when the key names a missing actor.
pub async fn find_with_actor_by_secret_hash(
    conn: &mut Conn<'_>,
    secret_sha256: &str,
) -> Result<Option<(ApiKeyRecord, Option<Actor>)>, StoreError> {
    find_with_actor_where(conn, KeyMatch::SecretHash, secret_sha256).await
}

/// The key with this ID with the actor it authenticates (a console session names its key by ID).
pub async fn find_with_actor(
    conn: &mut Conn<'_>,
    id: &PublicId,
) -> Result<Option<(ApiKeyRecord, Option<Actor>)>, StoreError> {
    find_with_actor_where(conn, KeyMatch::Id, id.as_str()).await
}

/// Which column finds the key.
enum KeyMatch {
    SecretHash,
    Id,
}

async fn find_with_actor_where(
    conn: &mut Conn<'_>,
    key_match: KeyMatch,
    value: &str,
) -> Result<Option<(ApiKeyRecord, Option<Actor>)>, StoreError> {
    let column = match key_match {
        KeyMatch::SecretHash => "secret_sha256",
        KeyMatch::Id => "id",
    };
    let row: Option<KeyWithActorRow> = dispatch!(conn, |connection| {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT k.id, k.actor_id, k.scopes, k.label, k.created_at, k.expires_at, k.revoked_at, k.last_used_at, \
             a.actor_type, a.display_name AS actor_display_name, a.controller_id AS actor_controller_id, \
             a.root_controller_id AS actor_root_controller_id, a.origin AS actor_origin, \
             a.verified_by_email AS actor_verified_by_email, a.verified_by_domain AS actor_verified_by_domain, \
             a.created_at AS actor_created_at \
             FROM api_keys k LEFT JOIN actors a ON a.id = k.actor_id WHERE k.{column} = $1"
        )))
        .bind(value)
        .fetch_optional(&mut *connection)
        .await?
    });
    let Some(row) = row else {
        return Ok(None);
    };
    let actor = match (
        row.actor_type,
        row.actor_display_name,
        row.actor_root_controller_id,
        row.actor_origin,
        row.actor_created_at,
    ) {
        (Some(actor_type), Some(display_name), Some(root_controller_id), Some(origin), Some(created_at)) => Some(
            super::actors::ActorRow {
                id: row.key.actor_id.clone(),
                actor_type,
                display_name,
                controller_id: row.actor_controller_id,
                root_controller_id,
                origin,
                verified_by_email: row.actor_verified_by_email.unwrap_or(false),
                verified_by_domain: row.actor_verified_by_domain.unwrap_or(false),
                created_at,
            }
            .into_actor()?,
        ),
        _ => None,
    };
    Ok(Some((row.key.into_record()?, actor)))
}

/// The key with this ID.
pub async fn find(conn: &mut Conn<'_>, id: &PublicId) -> Result<Option<ApiKeyRecord>, StoreError> {
    let row: Option<ApiKeyRow> = dispatch!(conn, |connection| {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {KEY_COLUMNS} FROM api_keys WHERE id = $1"
        )))
        .bind(id.as_str())
        .fetch_optional(&mut *connection)
        .await?
    });
    row.map(ApiKeyRow::into_record).transpose()
}

/// Every key of an actor, oldest first.
pub async fn list_for_actor(conn: &mut Conn<'_>, actor_id: &PublicId) -> Result<Vec<ApiKeyRecord>, StoreError> {
    let rows: Vec<ApiKeyRow> = dispatch!(conn, |connection| {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {KEY_COLUMNS} FROM api_keys WHERE actor_id = $1 ORDER BY created_at, id"
        )))
        .bind(actor_id.as_str())
        .fetch_all(&mut *connection)
        .await?
    });
    rows.into_iter().map(ApiKeyRow::into_record).collect()
}

/// Every key of the actors `actor_ids`, oldest first, in one statement: the IDs are bound as one JSON array, so the
/// text is the same whatever their number (prepared once, and no limit on bound values to meet). IDs of no actor
/// read nothing.
pub async fn list_for_actors(conn: &mut Conn<'_>, actor_ids: &[PublicId]) -> Result<Vec<ApiKeyRecord>, StoreError> {
    if actor_ids.is_empty() {
        return Ok(Vec::new());
    }
    let ids = serde_json::json!(actor_ids.iter().map(PublicId::as_str).collect::<Vec<_>>());
    let ids_in = match conn {
        Conn::Postgres(_) | Conn::PostgresWrite(_) => "SELECT jsonb_array_elements_text($1)",
        _ => "SELECT value FROM json_each($1)",
    };
    let rows: Vec<ApiKeyRow> = dispatch!(conn, |connection| {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {KEY_COLUMNS} FROM api_keys WHERE actor_id IN ({ids_in}) ORDER BY created_at, id"
        )))
        .bind(&ids)
        .fetch_all(&mut *connection)
        .await?
    });
    rows.into_iter().map(ApiKeyRow::into_record).collect()
}

/// Marks a key revoked at `revoked_at` unless it already is. Returns whether a row changed.
pub async fn revoke(conn: &mut Conn<'_>, id: &PublicId, revoked_at: DateTime<Utc>) -> Result<bool, StoreError> {
    let affected = dispatch!(conn, |connection| {
        sqlx::query("UPDATE api_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL")
            .bind(id.as_str())
            .bind(revoked_at)
            .execute(&mut *connection)
            .await?
            .rows_affected()
    });
    Ok(affected > 0)
}

/// Records that a key was used, unless that was already recorded within the last minute.
pub async fn touch(conn: &mut Conn<'_>, id: &PublicId, used_at: DateTime<Utc>) -> Result<(), StoreError> {
    let threshold = used_at - chrono::TimeDelta::minutes(1);
    dispatch!(conn, |connection| {
        sqlx::query(
            "UPDATE api_keys SET last_used_at = $2 WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $3)",
        )
        .bind(id.as_str())
        .bind(used_at)
        .bind(threshold)
        .execute(&mut *connection)
        .await?;
    });
    Ok(())
}
