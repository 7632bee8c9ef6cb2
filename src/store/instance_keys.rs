//! The instance's own signing keys (`instance_keys`), their private halves sealed by the service.

use super::{Conn, StoreError, dispatch};
use chrono::{DateTime, Utc};

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
