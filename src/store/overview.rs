//! What the instance overview counts: actors, API keys, content, claims, evidence and peers, in one statement.

use chrono::{DateTime, Utc};

use super::{Conn, StoreError, dispatch};

/// How much the instance holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct InstanceCounts {
    /// Actors of this realm.
    pub actors: i64,
    /// API keys neither revoked nor expired.
    pub active_api_keys: i64,
    /// Content items not deleted (this realm's and replicated ones).
    pub content: i64,
    /// Deleted content items (tombstones).
    pub deleted_content: i64,
    /// Claims.
    pub claims: i64,
    /// Evidence records: usage reports, reviews and ratings, retracted ones included.
    pub evidence: i64,
    /// Peers in any state.
    pub peers: i64,
}

/// Counts what the instance holds; `realm` is this instance's realm, `now` decides which keys have expired.
pub async fn count_everything(
    conn: &mut Conn<'_>,
    realm: &str,
    now: DateTime<Utc>,
) -> Result<InstanceCounts, StoreError> {
    let row: (i64, i64, i64, i64, i64, i64, i64) = dispatch!(conn, |connection| {
        sqlx::query_as(
            "SELECT (SELECT COUNT(*) FROM actors WHERE origin = $1), \
             (SELECT COUNT(*) FROM api_keys WHERE revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2)), \
             (SELECT COUNT(*) FROM content_items), \
             (SELECT COUNT(*) FROM content_items WHERE deleted_at IS NOT NULL), \
             (SELECT COUNT(*) FROM claims), \
             (SELECT COUNT(*) FROM usage_events) + (SELECT COUNT(*) FROM reviews) + (SELECT COUNT(*) FROM ratings), \
             (SELECT COUNT(*) FROM peers)",
        )
        .bind(realm)
        .bind(now)
        .fetch_one(&mut *connection)
        .await?
    });
    // Every item, less the deleted ones: the deleted are counted from their partial index (migration 0024), where
    // counting the live ones by their `deleted_at` would read every item's row.
    let (actors, active_api_keys, all_content, deleted_content, claims, evidence, peers) = row;
    Ok(InstanceCounts {
        actors,
        active_api_keys,
        content: all_content - deleted_content,
        deleted_content,
        claims,
        evidence,
        peers,
    })
}
