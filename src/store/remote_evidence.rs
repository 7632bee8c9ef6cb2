//! Evidence from other realms: where each record came from (`evidence_provenance`), the retractions their origins
//! sent (`evidence_retractions`), and what replicating evidence asks of the rows: the space a target lives in (which
//! decides whether evidence about it leaves), and which targets already hold evidence that arrived before them.

use chrono::{DateTime, Utc};

use super::statement::{Column, Insert, InsertShape, OnConflict, SqlType};
use super::{Conn, StoreError, dispatch, fetch_where_in, stored_id};
use crate::domain::PublicId;
use crate::domain::knowledge::SpaceVisibility;
use crate::domain::replication::{EvidenceProvenance, EvidenceRetraction, OriginProof, ReceivedRetraction};

/// The stored name of a record's kind, from its ID's prefix.
fn record_kind(record_id: &PublicId) -> Result<&'static str, StoreError> {
    match record_id.kind() {
        crate::domain::IdKind::Usage => Ok("usage"),
        crate::domain::IdKind::Review => Ok("review"),
        crate::domain::IdKind::Rating => Ok("rating"),
        _ => Err(StoreError::Corrupt(format!("{record_id} is not an evidence record"))),
    }
}

/// A provenance row.
const PROVENANCE: InsertShape = InsertShape::new(
    "evidence_provenance",
    &[
        Column::new("record_id", SqlType::Text),
        Column::new("record_kind", SqlType::Text),
        Column::new("origin", SqlType::Text),
        Column::new("sender", SqlType::Text),
        Column::new("proof_key_id", SqlType::Text),
        Column::new("signed_object", SqlType::Text),
        Column::new("origin_created_at", SqlType::TimestampTz),
        Column::new("received_at", SqlType::TimestampTz),
        Column::new("target_id", SqlType::Text),
    ],
);

/// Keeps where a remote record came from, in the transaction that stores the record.
pub async fn insert_provenance(conn: &mut Conn<'_>, provenance: &EvidenceProvenance) -> Result<(), StoreError> {
    super::statement::execute(
        conn,
        Insert::new(&PROVENANCE)
            .bind(provenance.record_id.as_str())
            .bind(record_kind(&provenance.record_id)?)
            .bind(&provenance.origin)
            .bind(&provenance.sender)
            .bind(&provenance.proof.key_id)
            .bind(&provenance.proof.signed_object)
            .bind(provenance.origin_created_at)
            .bind(provenance.received_at)
            .bind(provenance.target_id.as_str()),
    )
    .await
}

#[derive(sqlx::FromRow)]
struct ProvenanceColumns {
    record_id: String,
    target_id: String,
    origin: String,
    sender: String,
    proof_key_id: String,
    signed_object: String,
    origin_created_at: DateTime<Utc>,
    received_at: DateTime<Utc>,
}

impl ProvenanceColumns {
    fn into_provenance(self) -> Result<EvidenceProvenance, StoreError> {
        Ok(EvidenceProvenance {
            record_id: stored_id(&self.record_id, "provenance record")?,
            target_id: stored_id(&self.target_id, "provenance target")?,
            origin: self.origin,
            sender: self.sender,
            proof: OriginProof {
                signed_object: self.signed_object,
                key_id: self.proof_key_id,
            },
            origin_created_at: self.origin_created_at,
            received_at: self.received_at,
        })
    }
}

const PROVENANCE_COLUMNS: &str =
    "record_id, target_id, origin, sender, proof_key_id, signed_object, origin_created_at, received_at";

/// Where a remote record came from; `None` for a record of this realm or one never received.
pub async fn find_provenance(
    conn: &mut Conn<'_>,
    record_id: &PublicId,
) -> Result<Option<EvidenceProvenance>, StoreError> {
    let row: Option<ProvenanceColumns> = dispatch!(conn, |connection| {
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "SELECT {PROVENANCE_COLUMNS} FROM evidence_provenance WHERE record_id = $1"
        )))
        .bind(record_id.as_str())
        .fetch_optional(&mut *connection)
        .await?
    });
    row.map(ProvenanceColumns::into_provenance).transpose()
}

/// A received retraction's row (a second copy of the same retraction changes nothing).
const RETRACTION: InsertShape = InsertShape::new(
    "evidence_retractions",
    &[
        Column::new("record_id", SqlType::Text),
        Column::new("origin", SqlType::Text),
        Column::new("proof_key_id", SqlType::Text),
        Column::new("signed_object", SqlType::Text),
        Column::new("retracted_at", SqlType::TimestampTz),
        Column::new("received_at", SqlType::TimestampTz),
    ],
)
.on_conflict(OnConflict::Ignore { key: &["record_id"] });

/// Keeps a retraction received from a record's origin.
pub async fn insert_retraction(conn: &mut Conn<'_>, received: &ReceivedRetraction) -> Result<(), StoreError> {
    super::statement::execute(
        conn,
        Insert::new(&RETRACTION)
            .bind(received.retraction.record_id.as_str())
            .bind(&received.retraction.origin)
            .bind(&received.proof.key_id)
            .bind(&received.proof.signed_object)
            .bind(received.retraction.retracted_at)
            .bind(received.received_at),
    )
    .await
}

#[derive(sqlx::FromRow)]
struct RetractionColumns {
    record_id: String,
    origin: String,
    proof_key_id: String,
    signed_object: String,
    retracted_at: DateTime<Utc>,
    received_at: DateTime<Utc>,
}

impl RetractionColumns {
    fn into_retraction(self) -> Result<ReceivedRetraction, StoreError> {
        Ok(ReceivedRetraction {
            retraction: EvidenceRetraction {
                record_id: stored_id(&self.record_id, "retracted record")?,
                origin: self.origin,
                retracted_at: self.retracted_at,
            },
            proof: OriginProof {
                signed_object: self.signed_object,
                key_id: self.proof_key_id,
            },
            received_at: self.received_at,
        })
    }
}

/// The retraction received for a record, if any.
pub async fn find_retraction(
    conn: &mut Conn<'_>,
    record_id: &PublicId,
) -> Result<Option<ReceivedRetraction>, StoreError> {
    let row: Option<RetractionColumns> = dispatch!(conn, |connection| {
        sqlx::query_as(
            "SELECT record_id, origin, proof_key_id, signed_object, retracted_at, received_at \
             FROM evidence_retractions WHERE record_id = $1",
        )
        .bind(record_id.as_str())
        .fetch_optional(&mut *connection)
        .await?
    });
    row.map(RetractionColumns::into_retraction).transpose()
}

/// The seed of the advisory-lock keys of evidence targets (see [`lock_evidence_targets`]), so that they are not
/// the keys of the per-controller write windows (`store::audit`), which hash with seed 0.
const EVIDENCE_TARGET_LOCK_SEED: i64 = 0x6576_6964; // "evid"

/// On PostgreSQL, locks `target_ids` as evidence targets until the transaction ends, in ID order (two transactions
/// locking overlapping sets wait for each other instead of deadlocking; taking one again costs nothing).
///
/// Evidence can arrive before its target, and the two can be applied at the same time by two transactions (two
/// intake lanes, two inbox requests, two processes). Each takes this lock before it looks for the other: the record
/// before it looks for its target, the target's writer before it reads which evidence waits for it (with
/// [`targets_with_evidence`]). So whichever commits second sees the first's rows; without it each could miss the
/// other and the record would never count. SQLite runs one write transaction at a time and needs nothing.
pub async fn lock_evidence_targets(conn: &mut Conn<'_>, target_ids: &[&PublicId]) -> Result<(), StoreError> {
    if target_ids.is_empty() || !conn.is_postgres() {
        return Ok(());
    }
    let mut keys: Vec<&str> = target_ids.iter().map(|id| id.as_str()).collect();
    keys.sort_unstable();
    keys.dedup();
    let connection = super::postgres_connection(conn).await?;
    sqlx::query(
        "SELECT pg_advisory_xact_lock(hashtextextended(id, $2)) \
         FROM (SELECT id FROM unnest($1::text[]) AS id ORDER BY id) AS sorted",
    )
    .bind(keys)
    .bind(EVIDENCE_TARGET_LOCK_SEED)
    .execute(&mut *connection)
    .await?;
    Ok(())
}

/// Of `target_ids`, those that usage events or reviews already name (evidence that arrived before its target), in
/// one statement.
pub async fn targets_with_evidence(conn: &mut Conn<'_>, target_ids: &[PublicId]) -> Result<Vec<PublicId>, StoreError> {
    let keys: Vec<String> = target_ids.iter().map(|id| id.as_str().to_owned()).collect();
    let rows = fetch_where_in!(
        conn,
        (String,),
        "SELECT DISTINCT target_id FROM evidence_provenance",
        "target_id",
        keys,
        ""
    );
    rows.into_iter()
        .map(|(id,)| stored_id(&id, "evidence target"))
        .collect()
}

/// The space evidence about a target travels with, and its visibility: a revision's (or content item's) own space;
/// for a claim or an entity, the space of a revision that names it, a federated one when there is any. `None` when
/// the target is not held here, or when no revision names it.
pub async fn target_space(
    conn: &mut Conn<'_>,
    target_id: &PublicId,
    content_id: Option<&PublicId>,
) -> Result<Option<(PublicId, SpaceVisibility)>, StoreError> {
    let row: Option<(String, String)> = match (target_id.kind(), content_id) {
        (_, Some(_)) | (crate::domain::IdKind::Content, None) => {
            let content_id = content_id.unwrap_or(target_id);
            dispatch!(conn, |connection| {
                sqlx::query_as(
                    "SELECT s.id, s.visibility FROM content_items ci JOIN spaces s ON s.id = ci.space_id \
                     WHERE ci.id = $1",
                )
                .bind(content_id.as_str())
                .fetch_optional(&mut *connection)
                .await?
            })
        }
        (crate::domain::IdKind::Claim, None) => dispatch!(conn, |connection| {
            sqlx::query_as(
                "SELECT s.id, s.visibility FROM revision_claims rc \
                 JOIN content_revisions r ON r.id = rc.revision_id \
                 JOIN content_items ci ON ci.id = r.content_id JOIN spaces s ON s.id = ci.space_id \
                 WHERE rc.claim_id = $1 ORDER BY CASE WHEN s.visibility = 'federated' THEN 0 ELSE 1 END, s.id LIMIT 1",
            )
            .bind(target_id.as_str())
            .fetch_optional(&mut *connection)
            .await?
        }),
        (crate::domain::IdKind::Entity, None) => dispatch!(conn, |connection| {
            sqlx::query_as(
                "SELECT s.id, s.visibility FROM revision_subjects rs \
                 JOIN content_revisions r ON r.id = rs.revision_id \
                 JOIN content_items ci ON ci.id = r.content_id JOIN spaces s ON s.id = ci.space_id \
                 WHERE rs.entity_id = $1 ORDER BY CASE WHEN s.visibility = 'federated' THEN 0 ELSE 1 END, s.id LIMIT 1",
            )
            .bind(target_id.as_str())
            .fetch_optional(&mut *connection)
            .await?
        }),
        _ => None,
    };
    row.map(|(space_id, visibility)| {
        let visibility = SpaceVisibility::parse(&visibility)
            .ok_or_else(|| StoreError::Corrupt(format!("space {space_id}: unknown visibility")))?;
        Ok((stored_id(&space_id, "space")?, visibility))
    })
    .transpose()
}

/// When each remote record about a target first arrived here, by record ID.
pub async fn received_times_of_target(
    conn: &mut Conn<'_>,
    target_id: &PublicId,
) -> Result<Vec<(String, DateTime<Utc>)>, StoreError> {
    let rows: Vec<(String, DateTime<Utc>)> = dispatch!(conn, |connection| {
        sqlx::query_as("SELECT record_id, received_at FROM evidence_provenance WHERE target_id = $1")
            .bind(target_id.as_str())
            .fetch_all(&mut *connection)
            .await?
    });
    Ok(rows)
}

/// What a purge of one origin's evidence touched: the targets of its usage events and reviews, and the (target,
/// dimension) pairs of its ratings, read before the rows go.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OriginEvidence {
    /// Targets of its usage events and reviews.
    pub targets: Vec<PublicId>,
    /// Targets and dimensions of its ratings.
    pub rated: Vec<(PublicId, String)>,
}

/// The targets an origin's evidence is about, through its provenance (indexed by origin: every remote record has
/// one).
pub async fn evidence_of_origin(conn: &mut Conn<'_>, origin: &str) -> Result<OriginEvidence, StoreError> {
    let targets: Vec<String> = dispatch!(conn, |connection| {
        sqlx::query_scalar(
            "SELECT DISTINCT target_id FROM evidence_provenance WHERE origin = $1 AND record_kind <> 'rating' \
             ORDER BY 1",
        )
        .bind(origin)
        .fetch_all(&mut *connection)
        .await?
    });
    let rated: Vec<(String, String)> = dispatch!(conn, |connection| {
        sqlx::query_as(
            "SELECT DISTINCT p.target_id, r.dimension FROM evidence_provenance p JOIN ratings r ON r.id = p.record_id \
             WHERE p.origin = $1 AND p.record_kind = 'rating' ORDER BY 1, 2",
        )
        .bind(origin)
        .fetch_all(&mut *connection)
        .await?
    });
    Ok(OriginEvidence {
        targets: targets
            .iter()
            .map(|id| stored_id(id, "evidence target"))
            .collect::<Result<_, _>>()?,
        rated: rated
            .into_iter()
            .map(|(id, dimension)| Ok((stored_id(&id, "rating target")?, dimension)))
            .collect::<Result<_, StoreError>>()?,
    })
}

/// Deletes every evidence record of `origin` with its provenance, its retractions and the agreement events it gave,
/// and returns how many records went. Never call it with this realm's own name.
pub async fn delete_origin_evidence(conn: &mut Conn<'_>, origin: &str) -> Result<u64, StoreError> {
    let mut records = 0;
    for table in ["usage_events", "reviews", "ratings"] {
        records += dispatch!(conn, |connection| {
            sqlx::query(sqlx::AssertSqlSafe(format!("DELETE FROM {table} WHERE origin = $1")))
                .bind(origin)
                .execute(&mut *connection)
                .await?
                .rows_affected()
        });
    }
    for statement in [
        "DELETE FROM evidence_provenance WHERE origin = $1",
        "DELETE FROM evidence_retractions WHERE origin = $1",
        "DELETE FROM agreement_events WHERE peer_realm = $1",
    ] {
        dispatch!(conn, |connection| {
            sqlx::query(statement).bind(origin).execute(&mut *connection).await?;
        });
    }
    Ok(records)
}

/// The targets any of `origins`' usage events and reviews are about, and the (target, dimension) pairs of their
/// ratings: what an instance-trust change of those origins re-assesses (the origin → targets index).
pub async fn evidence_of_origins(conn: &mut Conn<'_>, origins: &[String]) -> Result<OriginEvidence, StoreError> {
    let mut evidence = OriginEvidence::default();
    for origin in origins {
        let one = evidence_of_origin(conn, origin).await?;
        for target in one.targets {
            if !evidence.targets.contains(&target) {
                evidence.targets.push(target);
            }
        }
        for rated in one.rated {
            if !evidence.rated.contains(&rated) {
                evidence.rated.push(rated);
            }
        }
    }
    Ok(evidence)
}

/// Every origin whose evidence is held here.
pub async fn origins_with_evidence(conn: &mut Conn<'_>) -> Result<Vec<String>, StoreError> {
    let origins: Vec<String> = dispatch!(conn, |connection| {
        sqlx::query_scalar("SELECT DISTINCT origin FROM evidence_provenance ORDER BY origin")
            .fetch_all(&mut *connection)
            .await?
    });
    Ok(origins)
}

/// The dimensions other realms rated `target` on (ratings that may have arrived before it).
pub async fn rated_dimensions(conn: &mut Conn<'_>, target_id: &PublicId) -> Result<Vec<String>, StoreError> {
    let dimensions: Vec<String> = dispatch!(conn, |connection| {
        sqlx::query_scalar(
            "SELECT DISTINCT r.dimension FROM evidence_provenance p JOIN ratings r ON r.id = p.record_id \
             WHERE p.target_id = $1 AND p.record_kind = 'rating' ORDER BY 1",
        )
        .bind(target_id.as_str())
        .fetch_all(&mut *connection)
        .await?
    });
    Ok(dimensions)
}
