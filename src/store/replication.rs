//! Replication rows: each peer's replication state (push cursor into our outbox with its backoff and lease, pull
//! cursor into the peer's outbox with its backfill), the records of revisions and spaces as they federate (read in
//! batches, a few statements for many objects), and the snapshot a new peer backfills from.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sqlx::types::Json;

use super::statement::Statement;
use super::{Conn, StoreError, dispatch, stored_id};
use crate::domain::PublicId;
use crate::domain::knowledge::RelationType;
use crate::domain::peer::PeerReplication;
use crate::domain::replication::{
    ClaimRecord, EntityRecord, RelationRecord, RevisionRecord, SourceRecord, SpaceRecord,
};

/// A peer's replication columns as read (the domain's [`PeerReplication`]).
#[derive(sqlx::FromRow)]
struct ReplicationColumns {
    peer_realm: String,
    push_cursor: i64,
    consecutive_failures: i32,
    next_attempt_at: DateTime<Utc>,
    leased_until: Option<DateTime<Utc>>,
    failing_since: Option<DateTime<Utc>>,
    last_success_at: Option<DateTime<Utc>>,
    last_error_class: Option<String>,
    last_error: Option<String>,
    last_error_at: Option<DateTime<Utc>>,
    auth_refreshed_at: Option<DateTime<Utc>>,
    pulled_through: Option<i64>,
    pull_cursor: Option<i64>,
    backfill_after: Option<String>,
    backfill_head: Option<i64>,
    outbox_epoch: Option<String>,
    next_pull_at: DateTime<Utc>,
    pull_leased_until: Option<DateTime<Utc>>,
    last_pull_at: Option<DateTime<Utc>>,
    last_pull_error: Option<String>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl From<ReplicationColumns> for PeerReplication {
    fn from(columns: ReplicationColumns) -> PeerReplication {
        PeerReplication {
            peer_realm: columns.peer_realm,
            push_cursor: columns.push_cursor,
            consecutive_failures: columns.consecutive_failures,
            next_attempt_at: columns.next_attempt_at,
            leased_until: columns.leased_until,
            failing_since: columns.failing_since,
            last_success_at: columns.last_success_at,
            last_error_class: columns.last_error_class,
            last_error: columns.last_error,
            last_error_at: columns.last_error_at,
            auth_refreshed_at: columns.auth_refreshed_at,
            pulled_through: columns.pulled_through,
            pull_cursor: columns.pull_cursor,
            backfill_after: columns.backfill_after,
            backfill_head: columns.backfill_head,
            outbox_epoch: columns.outbox_epoch,
            next_pull_at: columns.next_pull_at,
            pull_leased_until: columns.pull_leased_until,
            last_pull_at: columns.last_pull_at,
            last_pull_error: columns.last_pull_error,
            created_at: columns.created_at,
            updated_at: columns.updated_at,
        }
    }
}

const REPLICATION_COLUMNS: &str = "peer_realm, push_cursor, consecutive_failures, next_attempt_at, leased_until, \
    failing_since, last_success_at, last_error_class, last_error, last_error_at, auth_refreshed_at, pulled_through, \
    pull_cursor, backfill_after, backfill_head, outbox_epoch, next_pull_at, pull_leased_until, last_pull_at, last_pull_error, \
    created_at, updated_at";

/// Creates a peer's replication state (push starting after `push_cursor`, a backfill pending) unless it has one.
/// Returns whether it was created.
pub async fn create_if_missing(
    conn: &mut Conn<'_>,
    realm: &str,
    push_cursor: i64,
    now: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let affected = dispatch!(conn, |connection| {
        sqlx::query(
            "INSERT INTO peer_replication (peer_realm, push_cursor, consecutive_failures, next_attempt_at, \
             next_pull_at, created_at, updated_at) VALUES ($1, $2, 0, $3, $3, $3, $3) \
             ON CONFLICT (peer_realm) DO NOTHING",
        )
        .bind(realm)
        .bind(push_cursor)
        .bind(now)
        .execute(&mut *connection)
        .await?
        .rows_affected()
    });
    Ok(affected == 1)
}

/// A peer's replication state.
pub async fn find(conn: &mut Conn<'_>, realm: &str) -> Result<Option<PeerReplication>, StoreError> {
    let row: Option<ReplicationColumns> = dispatch!(conn, |connection| {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {REPLICATION_COLUMNS} FROM peer_replication WHERE peer_realm = $1"
        )))
        .bind(realm)
        .fetch_optional(&mut *connection)
        .await?
    });
    Ok(row.map(PeerReplication::from))
}

/// Every peer's replication state, by realm.
pub async fn list(conn: &mut Conn<'_>) -> Result<Vec<PeerReplication>, StoreError> {
    let rows: Vec<ReplicationColumns> = dispatch!(conn, |connection| {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {REPLICATION_COLUMNS} FROM peer_replication ORDER BY peer_realm"
        )))
        .fetch_all(&mut *connection)
        .await?
    });
    Ok(rows.into_iter().map(PeerReplication::from).collect())
}

/// Writes the push half of a peer's replication state (what a push round changes: cursor, failures, backoff, its
/// lease, the last success and error). Only those fields: a pull of the same peer may finish at the same moment
/// (the loop runs both at once, and so do two processes), and on PostgreSQL a round that wrote the whole row it
/// read would put back the pull's old cursor, and the pull its old failure count.
pub async fn save_push_state(conn: &mut Conn<'_>, row: &PeerReplication) -> Result<(), StoreError> {
    dispatch!(conn, |connection| {
        sqlx::query(
            "UPDATE peer_replication SET push_cursor = $2, consecutive_failures = $3, next_attempt_at = $4, \
             leased_until = $5, failing_since = $6, last_success_at = $7, last_error_class = $8, last_error = $9, \
             last_error_at = $10, auth_refreshed_at = $11, updated_at = $12 WHERE peer_realm = $1",
        )
        .bind(&row.peer_realm)
        .bind(row.push_cursor)
        .bind(row.consecutive_failures)
        .bind(row.next_attempt_at)
        .bind(row.leased_until)
        .bind(row.failing_since)
        .bind(row.last_success_at)
        .bind(&row.last_error_class)
        .bind(&row.last_error)
        .bind(row.last_error_at)
        .bind(row.auth_refreshed_at)
        .bind(row.updated_at)
        .execute(&mut *connection)
        .await?;
    });
    Ok(())
}

/// Writes the pull half of a peer's replication state (what a pull pass changes: cursor, backfill position, next
/// pull, its lease, the last pull and its error), leaving the push half alone (see [`save_push_state`]).
pub async fn save_pull_state(conn: &mut Conn<'_>, row: &PeerReplication) -> Result<(), StoreError> {
    dispatch!(conn, |connection| {
        sqlx::query(
            "UPDATE peer_replication SET pull_cursor = $2, backfill_after = $3, backfill_head = $4, \
             next_pull_at = $5, pull_leased_until = $6, last_pull_at = $7, last_pull_error = $8, updated_at = $9, \
             outbox_epoch = $10 WHERE peer_realm = $1",
        )
        .bind(&row.peer_realm)
        .bind(row.pull_cursor)
        .bind(&row.backfill_after)
        .bind(row.backfill_head)
        .bind(row.next_pull_at)
        .bind(row.pull_leased_until)
        .bind(row.last_pull_at)
        .bind(&row.last_pull_error)
        .bind(row.updated_at)
        .bind(&row.outbox_epoch)
        .execute(&mut *connection)
        .await?;
    });
    Ok(())
}

/// Forgets a peer's replication state (the peer was removed).
pub async fn delete(conn: &mut Conn<'_>, realm: &str) -> Result<(), StoreError> {
    dispatch!(conn, |connection| {
        sqlx::query("DELETE FROM peer_replication WHERE peer_realm = $1")
            .bind(realm)
            .execute(&mut *connection)
            .await?;
    });
    Ok(())
}

/// Records that a peer asked to read our outbox after `seq` (it holds everything up to there).
pub async fn record_pulled_through(conn: &mut Conn<'_>, realm: &str, seq: i64) -> Result<(), StoreError> {
    dispatch!(conn, |connection| {
        sqlx::query(
            "UPDATE peer_replication SET pulled_through = $2 WHERE peer_realm = $1 \
             AND (pulled_through IS NULL OR pulled_through < $2)",
        )
        .bind(realm)
        .bind(seq)
        .execute(&mut *connection)
        .await?;
    });
    Ok(())
}

/// Which of the two leases [`lease_due`] takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lease {
    /// Delivering our outbox to the peer: due when its next round is and our outbox has events after its cursor.
    Push,
    /// Pulling the peer's outbox: due when its next pull is.
    Pull,
}

/// Leases the peers whose push (or pull) is due, at most `limit`, until `lease_until`, in a change of its own; only
/// active peers (and unreachable ones, which are probed). Two processes never work on the same peer at once: on
/// PostgreSQL a row another transaction is writing is waited for, and the lease is taken only if the row, as that
/// transaction left it, is still due and unleased. Rows are not skipped: a peer's push and pull share its row, and
/// the loop leases both at once, so skipping a row the pull had just locked left a due push for the next wake-up
/// (found as a test that counted one failure per round and saw fewer). The rows are locked in the order of their
/// realm, so two lease statements never wait for each other in a cycle.
///
/// It reads first, on both backends: most passes of the loop find nothing due, and a read costs less than a write (on
/// SQLite it takes no turn at the single writer; on PostgreSQL the locking `UPDATE` costs twice the read, and the loops
/// of two peered instances look for both kinds of lease eight times per pushed activity). When something is due, on
/// PostgreSQL the lease is one statement in its own implicit transaction, committed without waiting for the WAL flush
/// (`synchronous_commit` off for it alone): a lease lost to a crash of the database server is only a lease nobody
/// holds, which the next pass takes again. The lease is on the way of every activity pushed, so its write costs one
/// round trip instead of three (`BEGIN`, `UPDATE`, `COMMIT`) and no disk sync. On SQLite it is written through the
/// writer (whose commits do not wait for a disk sync either).
pub async fn lease_due(
    store: &super::Store,
    lease: Lease,
    now: DateTime<Utc>,
    lease_until: DateTime<Utc>,
    limit: i64,
) -> Result<Vec<PeerReplication>, StoreError> {
    let mut reader = store.reader().await?;
    // On SQLite the lease is a write, which waits for the writer: an idle pass reads first. On PostgreSQL an update
    // that matches no row writes nothing, so the lease is tried at once (one round trip less on the way of every
    // change to its peers).
    if store.backend() == super::Backend::Sqlite && !any_due(&mut reader.conn(), lease, now).await? {
        return Ok(Vec::new());
    }
    let lease_column = match lease {
        Lease::Push => "leased_until",
        Lease::Pull => "pull_leased_until",
    };
    let candidates = format!("{} ORDER BY r.next_attempt_at, r.peer_realm LIMIT $3", due_peers(lease));
    // The same condition on the row being leased, which PostgreSQL checks again on the newest version of a row it
    // waited for.
    let still_due = match lease {
        Lease::Push => "next_attempt_at <= $1 AND (leased_until IS NULL OR leased_until <= $1)",
        Lease::Pull => "next_pull_at <= $1 AND (pull_leased_until IS NULL OR pull_leased_until <= $1)",
    };
    let leasing = async |conn: &mut Conn<'_>, sql: String| -> Result<Vec<PeerReplication>, StoreError> {
        let rows: Vec<ReplicationColumns> = dispatch!(conn, |connection| {
            sqlx::query_as(sqlx::AssertSqlSafe(sql))
                .bind(now)
                .bind(lease_until)
                .bind(limit)
                .fetch_all(&mut *connection)
                .await?
        });
        Ok(rows.into_iter().map(PeerReplication::from).collect())
    };
    match store.backend() {
        super::Backend::Postgres => {
            let sql = format!(
                "WITH relaxed AS (SELECT set_config('synchronous_commit', 'off', true) AS setting), \
                 chosen AS MATERIALIZED (SELECT peer_realm FROM peer_replication WHERE peer_realm IN \
                 ({candidates}) ORDER BY peer_realm FOR UPDATE) \
                 UPDATE peer_replication SET {lease_column} = $2 FROM relaxed \
                 WHERE peer_realm IN (SELECT peer_realm FROM chosen) AND {still_due} \
                 RETURNING {REPLICATION_COLUMNS}"
            );
            leasing(&mut reader.conn(), sql).await
        }
        super::Backend::Sqlite => {
            drop(reader);
            let sql = format!(
                "UPDATE peer_replication SET {lease_column} = $2 WHERE peer_realm IN ({candidates}) \
                 RETURNING {REPLICATION_COLUMNS}"
            );
            let mut transaction = store.begin().await?;
            let rows = leasing(&mut transaction.conn(), sql).await?;
            transaction.commit().await?;
            Ok(rows)
        }
    }
}

/// The peers whose push (or pull) is due and not leased, `$1` the time: a push is due only with events after the
/// peer's cursor.
fn due_peers(lease: Lease) -> String {
    let due = match lease {
        Lease::Push => {
            "r.next_attempt_at <= $1 AND (r.leased_until IS NULL OR r.leased_until <= $1) \
             AND EXISTS (SELECT 1 FROM outbox_events o WHERE o.seq > r.push_cursor)"
        }
        Lease::Pull => "r.next_pull_at <= $1 AND (r.pull_leased_until IS NULL OR r.pull_leased_until <= $1)",
    };
    format!(
        "SELECT r.peer_realm FROM peer_replication r JOIN peers p ON p.realm = r.peer_realm \
         WHERE p.state IN ('active', 'unreachable') AND {due}"
    )
}

/// Whether some peer's push (or pull) is due: read before leasing on SQLite, so an idle pass does not wait for the
/// writer.
pub async fn any_due(conn: &mut Conn<'_>, lease: Lease, now: DateTime<Utc>) -> Result<bool, StoreError> {
    let sql = format!("{} LIMIT 1", due_peers(lease));
    let due: Option<String> = dispatch!(conn, |connection| {
        sqlx::query_scalar(sqlx::AssertSqlSafe(sql.clone()))
            .bind(now)
            .fetch_optional(&mut *connection)
            .await?
    });
    Ok(due.is_some())
}

/// The earliest time a push or pull falls due for an active or unreachable peer (the worker waits until then).
pub async fn next_due(conn: &mut Conn<'_>) -> Result<Option<DateTime<Utc>>, StoreError> {
    let (push, pull): (Option<DateTime<Utc>>, Option<DateTime<Utc>>) = dispatch!(conn, |connection| {
        sqlx::query_as(
            "SELECT MIN(CASE WHEN EXISTS (SELECT 1 FROM outbox_events o WHERE o.seq > r.push_cursor) \
             THEN r.next_attempt_at END), MIN(r.next_pull_at) FROM peer_replication r \
             JOIN peers p ON p.realm = r.peer_realm WHERE p.state IN ('active', 'unreachable')",
        )
        .fetch_one(&mut *connection)
        .await?
    });
    Ok(match (push, pull) {
        (Some(push), Some(pull)) => Some(push.min(pull)),
        (push, pull) => push.or(pull),
    })
}

/// The lowest outbox position some peer still needs: every peer that may come back (all but rejected ones) keeps
/// what lies after its cursor (or after what it pulled, if further). `None` when no peer has replication state.
pub async fn retention_floor(conn: &mut Conn<'_>) -> Result<Option<i64>, StoreError> {
    let floor: Option<i64> = dispatch!(conn, |connection| {
        sqlx::query_scalar(
            "SELECT MIN(CASE WHEN r.pulled_through IS NOT NULL AND r.pulled_through > r.push_cursor \
             THEN r.pulled_through ELSE r.push_cursor END) FROM peer_replication r \
             JOIN peers p ON p.realm = r.peer_realm WHERE p.state <> 'rejected'",
        )
        .fetch_one(&mut *connection)
        .await?
    });
    Ok(floor)
}

// ---------------------------------------------------------------- records

/// One row of a revision's parts as read together: `part` says which (0 claim: ID, text; 1 subject: ID, type, name,
/// aliases as JSON text, description; 2 source: ID, URL, title; 3 relation: its ID, type, target, reason; 4 tag).
/// The statement's `ordinal` (a claim's or source's position, else 0) only orders the rows.
#[derive(sqlx::FromRow)]
struct RevisionPartRow {
    part: i32,
    revision_id: String,
    first: String,
    second: Option<String>,
    third: Option<String>,
    fourth: Option<String>,
    fifth: Option<String>,
}

/// A column a part always fills.
fn required(value: Option<String>, what: &str) -> Result<String, StoreError> {
    value.ok_or_else(|| StoreError::Corrupt(format!("{what} missing")))
}

#[derive(sqlx::FromRow)]
struct RevisionRecordRow {
    content_id: String,
    origin: String,
    content_type: String,
    space_id: String,
    space_name: String,
    author_id: String,
    author_root_controller_id: String,
    published_at: DateTime<Utc>,
    revision_id: String,
    revision_no: i32,
    revised_at: DateTime<Utc>,
    title: String,
    summary: String,
    body_markdown: String,
    structured_data: Json<serde_json::Value>,
    language: Option<String>,
    change_note: Option<String>,
    context_key: Option<String>,
}

/// Pushes `ids` as one `IN (…)` list of binds onto `builder`.
fn push_id_list<Database: sqlx::Database>(builder: &mut sqlx::QueryBuilder<Database>, ids: &[String])
where
    for<'t> String: sqlx::Encode<'t, Database> + sqlx::Type<Database>,
{
    builder.push(" IN (");
    let mut separated = builder.separated(", ");
    for id in ids {
        separated.push_bind(id.as_str().to_owned());
    }
    builder.push(")");
}

/// The records of these revisions (missing ones are absent), in a fixed number of statements for any number of
/// revisions: the revisions with their items and spaces, then their claims, subjects, sources, relations and tags.
pub async fn revision_records(conn: &mut Conn<'_>, revision_ids: &[String]) -> Result<Vec<RevisionRecord>, StoreError> {
    if revision_ids.is_empty() {
        return Ok(Vec::new());
    }
    let rows: Vec<RevisionRecordRow> = dispatch!(conn, |connection| {
        let mut builder = sqlx::QueryBuilder::new(
            "SELECT ci.id AS content_id, ci.origin, ci.content_type, ci.space_id, s.name AS space_name, ci.author_id, \
             ci.author_root_controller_id, ci.created_at AS published_at, r.id AS revision_id, r.revision_no, \
             r.created_at AS revised_at, r.title, r.summary, r.body_markdown, r.structured_data, r.language, \
             r.change_note, r.context_key FROM content_revisions r JOIN content_items ci ON ci.id = r.content_id \
             JOIN spaces s ON s.id = ci.space_id WHERE r.id",
        );
        push_id_list(&mut builder, revision_ids);
        builder.build_query_as().fetch_all(&mut *connection).await?
    });
    // Their claims, subjects, sources, relations and tags in one statement (one round trip instead of five: this
    // read is on the way of every push round and snapshot page), as rows of one shape: the part, the revision, an
    // ordinal and up to five text columns, in the order each part's list keeps.
    let parts: Vec<RevisionPartRow> = dispatch!(conn, |connection| {
        let mut builder = sqlx::QueryBuilder::new(
            "SELECT 0 AS part, rc.revision_id, rc.position AS ordinal, c.id AS first, c.text AS second, \
             NULL AS third, NULL AS fourth, NULL AS fifth FROM revision_claims rc JOIN claims c ON c.id = rc.claim_id \
             WHERE rc.revision_id",
        );
        push_id_list(&mut builder, revision_ids);
        builder.push(
            " UNION ALL SELECT 1, rs.revision_id, 0, e.id, e.entity_type, e.name, CAST(e.aliases AS TEXT), \
             e.description FROM revision_subjects rs JOIN entities e ON e.id = rs.entity_id WHERE rs.revision_id",
        );
        push_id_list(&mut builder, revision_ids);
        builder.push(
            " UNION ALL SELECT 2, rs.revision_id, rs.position, s.id, s.url, rs.title, NULL, NULL FROM revision_sources rs \
             JOIN sources s ON s.id = rs.source_id WHERE rs.revision_id",
        );
        push_id_list(&mut builder, revision_ids);
        builder.push(
            " UNION ALL SELECT 3, source_revision_id, 0, id, relation_type, target_id, reason, NULL FROM relations \
             WHERE source_revision_id",
        );
        push_id_list(&mut builder, revision_ids);
        builder.push(
            " UNION ALL SELECT 4, revision_id, 0, tag, NULL, NULL, NULL, NULL FROM revision_tags WHERE revision_id",
        );
        push_id_list(&mut builder, revision_ids);
        builder.push(" ORDER BY 1, 2, 3, 4");
        builder.build_query_as().fetch_all(&mut *connection).await?
    });

    let mut records: Vec<RevisionRecord> = Vec::with_capacity(rows.len());
    let mut position_of: HashMap<String, usize> = HashMap::with_capacity(rows.len());
    for row in rows {
        position_of.insert(row.revision_id.clone(), records.len());
        records.push(RevisionRecord {
            content_id: stored_id(&row.content_id, "content id")?,
            origin: row.origin,
            content_type: row.content_type,
            space_id: stored_id(&row.space_id, "space id")?,
            space_name: row.space_name,
            author_id: stored_id(&row.author_id, "author id")?,
            author_root_controller: stored_id(&row.author_root_controller_id, "author root")?,
            published_at: row.published_at,
            revision_id: stored_id(&row.revision_id, "revision id")?,
            revision_no: row.revision_no,
            revised_at: row.revised_at,
            title: row.title,
            summary: row.summary,
            body_markdown: row.body_markdown,
            structured_data: row.structured_data.0,
            language: row.language,
            change_note: row.change_note,
            context_key: row.context_key,
            claims: Vec::new(),
            subjects: Vec::new(),
            sources: Vec::new(),
            relations: Vec::new(),
            tags: Vec::new(),
        });
    }
    let record_of = |revision_id: &str| position_of.get(revision_id).copied();
    for part in parts {
        let Some(at) = record_of(&part.revision_id) else {
            continue;
        };
        let record = &mut records[at];
        match part.part {
            0 => record.claims.push(ClaimRecord {
                id: stored_id(&part.first, "claim id")?,
                text: required(part.second, "claim text")?,
            }),
            1 => {
                let aliases = required(part.fourth, "entity aliases")?;
                record.subjects.push(EntityRecord {
                    id: stored_id(&part.first, "entity id")?,
                    entity_type: required(part.second, "entity type")?,
                    name: required(part.third, "entity name")?,
                    aliases: serde_json::from_str(&aliases)
                        .map_err(|error| StoreError::Corrupt(format!("entity aliases {aliases}: {error}")))?,
                    description: required(part.fifth, "entity description")?,
                });
            }
            2 => record.sources.push(SourceRecord {
                id: stored_id(&part.first, "source id")?,
                url: required(part.second, "source url")?,
                title: part.third,
            }),
            3 => {
                let relation_type = required(part.second, "relation type")?;
                record.relations.push(RelationRecord {
                    relation_type: RelationType::parse(&relation_type)
                        .ok_or_else(|| StoreError::Corrupt(format!("relation type {relation_type}")))?,
                    target: stored_id(&required(part.third, "relation target")?, "relation target")?,
                    reason: part.fourth,
                });
            }
            4 => record.tags.push(part.first),
            other => return Err(StoreError::Corrupt(format!("revision part {other}"))),
        }
    }
    Ok(records)
}

/// The records of these spaces (missing ones are absent).
pub async fn space_records(conn: &mut Conn<'_>, space_ids: &[String]) -> Result<Vec<SpaceRecord>, StoreError> {
    if space_ids.is_empty() {
        return Ok(Vec::new());
    }
    let rows: Vec<(String, String, String, String, String, DateTime<Utc>)> = dispatch!(conn, |connection| {
        let mut builder = sqlx::QueryBuilder::new(
            "SELECT id, origin, name, description, created_by, created_at FROM spaces WHERE id",
        );
        push_id_list(&mut builder, space_ids);
        builder.build_query_as().fetch_all(&mut *connection).await?
    });
    rows.into_iter()
        .map(|(id, origin, name, description, created_by, created_at)| {
            Ok(SpaceRecord {
                id: stored_id(&id, "space id")?,
                origin,
                name,
                description,
                created_by: stored_id(&created_by, "space creator")?,
                created_at,
            })
        })
        .collect()
}

/// Which of these content items are deleted.
pub async fn deleted_among(conn: &mut Conn<'_>, content_ids: &[String]) -> Result<Vec<String>, StoreError> {
    if content_ids.is_empty() {
        return Ok(Vec::new());
    }
    let rows: Vec<(String,)> = dispatch!(conn, |connection| {
        let mut builder = sqlx::QueryBuilder::new("SELECT content_id FROM content_tombstones WHERE content_id");
        push_id_list(&mut builder, content_ids);
        builder.build_query_as().fetch_all(&mut *connection).await?
    });
    Ok(rows.into_iter().map(|(id,)| id).collect())
}

/// One entry of the snapshot a new peer backfills from, in object-ID order.
#[derive(Debug, Clone, PartialEq)]
pub enum SnapshotEntry {
    /// A federated space of this realm.
    Space(PublicId),
    /// A content item of this realm in a federated space, at its current revision.
    Revision(PublicId),
    /// A deleted content item of this realm.
    Deleted(PublicId),
    /// An active evidence record of this realm about a target in a federated space.
    Evidence(PublicId),
}

/// Whether the evidence target `{target}` (with its content item `{content}`, a column or NULL) lives in a
/// federated space of content that is not deleted: the rule `UnitOfWork::emit` applies to a new record, as SQL.
macro_rules! federated_target {
    ($target:literal, $content:literal) => {
        concat!(
            "(EXISTS (SELECT 1 FROM content_items ci JOIN spaces s ON s.id = ci.space_id \
               WHERE ci.id = COALESCE(",
            $content,
            ", ",
            $target,
            ") AND s.visibility = 'federated' \
               AND ci.deleted_at IS NULL) \
             OR EXISTS (SELECT 1 FROM revision_claims rc JOIN content_revisions r ON r.id = rc.revision_id \
               JOIN content_items ci ON ci.id = r.content_id JOIN spaces s ON s.id = ci.space_id \
               WHERE rc.claim_id = ",
            $target,
            " AND s.visibility = 'federated') \
             OR EXISTS (SELECT 1 FROM revision_subjects rs JOIN content_revisions r ON r.id = rs.revision_id \
               JOIN content_items ci ON ci.id = r.content_id JOIN spaces s ON s.id = ci.space_id \
               WHERE rs.entity_id = ",
            $target,
            " AND s.visibility = 'federated'))"
        )
    };
}

/// Up to `limit` entries of this realm's snapshot after the object `after` (`""` for the start): its federated
/// spaces, the current revisions of its content in them, its tombstones, and its active evidence records about
/// targets in them, in object-ID order (spaces sort before
/// content: `cnt_` < `spc_` would not hold, so the order is by ID within each kind, spaces first).
pub async fn snapshot_after(
    conn: &mut Conn<'_>,
    origin: &str,
    after: &str,
    limit: i64,
) -> Result<Vec<(String, SnapshotEntry)>, StoreError> {
    // One ordered list over the four kinds, keyed so that every space comes before every content item, and every
    // content item before every evidence record (so a new peer holds a record's target before the record).
    let rows: Vec<(String, String, String)> = dispatch!(conn, |connection| {
        sqlx::query_as(concat!(
            "SELECT position, kind, id FROM ( \
               SELECT '0:' || s.id AS position, 'space' AS kind, s.id AS id FROM spaces s \
                 WHERE s.origin = $1 AND s.visibility = 'federated' \
               UNION ALL \
               SELECT '1:' || ci.id, 'revision', ci.current_revision_id FROM content_items ci \
                 JOIN spaces s ON s.id = ci.space_id \
                 WHERE ci.origin = $1 AND s.visibility = 'federated' AND ci.deleted_at IS NULL \
               UNION ALL \
               SELECT '1:' || t.content_id, 'deleted', t.content_id FROM content_tombstones t \
                 JOIN content_items ci ON ci.id = t.content_id JOIN spaces s ON s.id = ci.space_id \
                 WHERE t.origin = $1 AND s.visibility = 'federated' \
               UNION ALL \
               SELECT '2:' || u.id, 'evidence', u.id FROM usage_events u \
                 WHERE u.origin = $1 AND u.status = 'active' AND ",
            federated_target!("u.target_id", "u.target_content_id"),
            " UNION ALL \
               SELECT '2:' || v.id, 'evidence', v.id FROM reviews v \
                 WHERE v.origin = $1 AND v.status = 'active' AND ",
            federated_target!("v.target_id", "v.target_content_id"),
            " UNION ALL \
               SELECT '2:' || g.id, 'evidence', g.id FROM ratings g \
                 WHERE g.origin = $1 AND g.status = 'active' AND ",
            federated_target!("g.target_id", "NULL"),
            " ) entries WHERE position > $2 ORDER BY position LIMIT $3"
        ))
        .bind(origin)
        .bind(after)
        .bind(limit)
        .fetch_all(&mut *connection)
        .await?
    });
    rows.into_iter()
        .map(|(position, kind, id)| {
            let id = stored_id(&id, "snapshot entry")?;
            let entry = match kind.as_str() {
                "space" => SnapshotEntry::Space(id),
                "revision" => SnapshotEntry::Revision(id),
                "evidence" => SnapshotEntry::Evidence(id),
                _ => SnapshotEntry::Deleted(id),
            };
            Ok((position, entry))
        })
        .collect()
}

/// Keeps a replicated space's object exactly as its origin signed it.
pub async fn record_space_proof(
    conn: &mut Conn<'_>,
    space_id: &PublicId,
    signed_object: &str,
) -> Result<(), StoreError> {
    super::statement::execute(
        conn,
        Statement::update("spaces", "UPDATE spaces SET signed_object = $1 WHERE id = $2")
            .bind(signed_object)
            .bind(space_id.as_str()),
    )
    .await
}

/// A replicated revision's signed object and proof key, when it has them.
pub async fn revision_proof(
    conn: &mut Conn<'_>,
    revision_id: &PublicId,
) -> Result<Option<(String, String)>, StoreError> {
    let row: Option<(Option<String>, Option<String>)> = dispatch!(conn, |connection| {
        sqlx::query_as("SELECT signed_object, proof_key_id FROM content_revisions WHERE id = $1")
            .bind(revision_id.as_str())
            .fetch_optional(&mut *connection)
            .await?
    });
    Ok(row.and_then(|(object, key)| object.zip(key)))
}

/// A stored space's origin and whether its own signed object arrived (a space first seen through one of its items
/// has only its name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpaceOrigin {
    /// The realm it comes from.
    pub origin: String,
    /// Whether its own object is stored.
    pub signed_object_known: bool,
}

/// The origin of a stored space, if any.
pub async fn find_space_origin(conn: &mut Conn<'_>, space_id: &PublicId) -> Result<Option<SpaceOrigin>, StoreError> {
    let row: Option<(String, Option<String>)> = dispatch!(conn, |connection| {
        sqlx::query_as("SELECT origin, signed_object FROM spaces WHERE id = $1")
            .bind(space_id.as_str())
            .fetch_optional(&mut *connection)
            .await?
    });
    Ok(row.map(|(origin, signed_object)| SpaceOrigin {
        origin,
        signed_object_known: signed_object.is_some(),
    }))
}

/// Completes a space first seen through one of its items with its own object: name, description, signed object.
pub async fn complete_space(
    conn: &mut Conn<'_>,
    space_id: &PublicId,
    name: &str,
    description: &str,
    signed_object: &str,
) -> Result<(), StoreError> {
    dispatch!(conn, |connection| {
        sqlx::query("UPDATE spaces SET name = $1, description = $2, signed_object = $3 WHERE id = $4")
            .bind(name)
            .bind(description)
            .bind(signed_object)
            .bind(space_id.as_str())
            .execute(&mut *connection)
            .await?;
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn a_push_round_and_a_pull_finishing_at_once_each_keep_what_the_other_wrote() {
        let directory = tempfile::tempdir().expect("temporary directory");
        let url = format!("sqlite://{}", directory.path().join("halves.db").display());
        let store = super::super::Store::connect(&url, 2, Duration::from_secs(5))
            .await
            .expect("store opens");
        let now = DateTime::parse_from_rfc3339("2026-11-01T09:00:00Z")
            .expect("time")
            .with_timezone(&Utc);
        let mut transaction = store.begin().await.expect("write");
        create_if_missing(&mut transaction.conn(), "beta.test", 0, now)
            .await
            .expect("created");
        transaction.commit().await.expect("committed");
        let read = async || {
            let mut reader = store.reader().await.expect("reader");
            find(&mut reader.conn(), "beta.test")
                .await
                .expect("read")
                .expect("the row")
        };
        // Both read the row before either writes, as a push round and a pull of the same peer do when they end
        // together.
        let (mut pushed, mut pulled) = (read().await, read().await);
        pushed.push_cursor = 7;
        pushed.consecutive_failures = 3;
        pushed.last_error = Some("connect: refused".to_owned());
        pulled.pull_cursor = Some(5);
        pulled.last_pull_error = Some("timeout".to_owned());
        let mut transaction = store.begin().await.expect("write");
        save_push_state(&mut transaction.conn(), &pushed)
            .await
            .expect("push saved");
        transaction.commit().await.expect("committed");
        let mut transaction = store.begin().await.expect("write");
        save_pull_state(&mut transaction.conn(), &pulled)
            .await
            .expect("pull saved");
        transaction.commit().await.expect("committed");
        let row = read().await;
        assert_eq!(
            (
                row.push_cursor,
                row.consecutive_failures,
                row.last_error.as_deref(),
                row.pull_cursor,
                row.last_pull_error.as_deref()
            ),
            (7, 3, Some("connect: refused"), Some(5), Some("timeout"))
        );
        store.close().await;
    }
}
