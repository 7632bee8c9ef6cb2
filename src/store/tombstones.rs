//! Deleted content: tombstones (kept for every deleted item, also one this instance never had, so that a late
//! `Create` cannot bring it back), the item's deletion mark, and removing its search document.

use chrono::{DateTime, Utc};

use super::statement::{self, Statement};
use super::{Conn, StoreError, dispatch, fetch_where_in};
use crate::domain::PublicId;
use crate::domain::tombstone::Tombstone;

#[derive(sqlx::FromRow)]
struct TombstoneRow {
    content_id: String,
    origin: String,
    deleted_at: DateTime<Utc>,
    deleted_by: String,
    reason: String,
    signed_object: Option<String>,
    received_at: DateTime<Utc>,
}

impl TombstoneRow {
    fn into_tombstone(self) -> Result<Tombstone, StoreError> {
        Ok(Tombstone {
            content_id: super::stored_id(&self.content_id, "tombstone content id")?,
            origin: self.origin,
            deleted_at: self.deleted_at,
            deleted_by: self.deleted_by,
            reason: self.reason,
            signed_object: self.signed_object,
            received_at: self.received_at,
        })
    }
}

/// Records a tombstone; `false` when the item already had one (a deletion is final, the first one stays).
pub async fn insert(conn: &mut Conn<'_>, tombstone: &Tombstone) -> Result<bool, StoreError> {
    let affected = dispatch!(conn, |connection| {
        sqlx::query(
            "INSERT INTO content_tombstones (content_id, origin, deleted_at, deleted_by, reason, signed_object, \
             received_at) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (content_id) DO NOTHING",
        )
        .bind(tombstone.content_id.as_str())
        .bind(&tombstone.origin)
        .bind(tombstone.deleted_at)
        .bind(&tombstone.deleted_by)
        .bind(&tombstone.reason)
        .bind(&tombstone.signed_object)
        .bind(tombstone.received_at)
        .execute(&mut *connection)
        .await?
        .rows_affected()
    });
    Ok(affected == 1)
}

/// The tombstone of a content item, if it was deleted.
pub async fn find(conn: &mut Conn<'_>, content_id: &PublicId) -> Result<Option<Tombstone>, StoreError> {
    let row: Option<TombstoneRow> = dispatch!(conn, |connection| {
        sqlx::query_as(
            "SELECT content_id, origin, deleted_at, deleted_by, reason, signed_object, received_at \
             FROM content_tombstones WHERE content_id = $1",
        )
        .bind(content_id.as_str())
        .fetch_optional(&mut *connection)
        .await?
    });
    row.map(TombstoneRow::into_tombstone).transpose()
}

/// The tombstones of these content items, in one statement; items that were not deleted are absent.
pub async fn find_many(conn: &mut Conn<'_>, content_ids: &[PublicId]) -> Result<Vec<Tombstone>, StoreError> {
    let rows = fetch_where_in!(
        conn,
        TombstoneRow,
        "SELECT content_id, origin, deleted_at, deleted_by, reason, signed_object, received_at FROM content_tombstones",
        "content_id",
        content_ids.iter().map(|id| id.as_str().to_owned()).collect(),
        ""
    );
    rows.into_iter().map(TombstoneRow::into_tombstone).collect()
}

/// Tombstones in content-ID order after `after`, at most `limit` (a peer's backfill snapshot reads them).
pub async fn list_after(
    conn: &mut Conn<'_>,
    origin: &str,
    after: &str,
    limit: i64,
) -> Result<Vec<Tombstone>, StoreError> {
    let rows: Vec<TombstoneRow> = dispatch!(conn, |connection| {
        sqlx::query_as(
            "SELECT content_id, origin, deleted_at, deleted_by, reason, signed_object, received_at \
             FROM content_tombstones WHERE origin = $1 AND content_id > $2 ORDER BY content_id LIMIT $3",
        )
        .bind(origin)
        .bind(after)
        .bind(limit)
        .fetch_all(&mut *connection)
        .await?
    });
    rows.into_iter().map(TombstoneRow::into_tombstone).collect()
}

/// Marks a content item deleted and removes its search document, so that search no longer finds it (its claims,
/// which other content may share, stay findable).
pub async fn mark_content_deleted(
    conn: &mut Conn<'_>,
    content_id: &PublicId,
    deleted_at: DateTime<Utc>,
) -> Result<(), StoreError> {
    statement::execute(
        conn,
        Statement::update(
            "content_items",
            "UPDATE content_items SET deleted_at = $2 WHERE id = $1 AND deleted_at IS NULL",
        )
        .bind(content_id.as_str())
        .bind(deleted_at),
    )
    .await?;
    if conn.is_postgres() {
        statement::execute(
            conn,
            Statement::delete("search_vectors", "DELETE FROM search_vectors WHERE object_id = $1")
                .bind(content_id.as_str()),
        )
        .await?;
    }
    statement::execute(
        conn,
        Statement::delete("search_documents", "DELETE FROM search_documents WHERE object_id = $1")
            .bind(content_id.as_str()),
    )
    .await
}
