//! Idempotency records: the response of a write, kept per (actor, key) so that a retry returns it unchanged.

use chrono::{DateTime, Utc};
use sqlx::types::Json;

use super::{Conn, StoreError, dispatch};
use crate::domain::PublicId;

/// A stored write response.
#[derive(Debug, Clone, PartialEq)]
pub struct IdempotencyRecord {
    /// The tool that was called.
    pub tool: String,
    /// SHA-256 of the canonical request (without the key).
    pub request_sha256: String,
    /// The response the first call returned.
    pub response: serde_json::Value,
    /// When the first call was made.
    pub created_at: DateTime<Utc>,
}

/// The record for an actor's key.
pub async fn find(
    conn: &mut Conn<'_>,
    actor_id: &PublicId,
    idempotency_key: &str,
) -> Result<Option<IdempotencyRecord>, StoreError> {
    let row: Option<(String, String, Json<serde_json::Value>, DateTime<Utc>)> = dispatch!(conn, |connection| {
        sqlx::query_as(
            "SELECT tool, request_sha256, response, created_at FROM idempotency_records \
             WHERE actor_id = $1 AND idempotency_key = $2",
        )
        .bind(actor_id.as_str())
        .bind(idempotency_key)
        .fetch_optional(&mut *connection)
        .await?
    });
    Ok(
        row.map(|(tool, request_sha256, response, created_at)| IdempotencyRecord {
            tool,
            request_sha256,
            response: response.0,
            created_at,
        }),
    )
}

/// Stores a record. A concurrent insert of the same key fails with a unique violation.
pub async fn insert(
    conn: &mut Conn<'_>,
    actor_id: &PublicId,
    idempotency_key: &str,
    record: &IdempotencyRecord,
) -> Result<(), StoreError> {
    dispatch!(conn, |connection| {
        sqlx::query(
            "INSERT INTO idempotency_records (actor_id, idempotency_key, tool, request_sha256, response, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(actor_id.as_str())
        .bind(idempotency_key)
        .bind(&record.tool)
        .bind(&record.request_sha256)
        .bind(Json(&record.response))
        .bind(record.created_at)
        .execute(&mut *connection)
        .await?;
    });
    Ok(())
}
