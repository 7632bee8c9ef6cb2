//! Instance trust: admins' pins of a peer's trust (`peer_trust_pins`) and the effective trust of every peer as the
//! last batch computed it (`instance_trust`, replaced whole by each batch; the batch's number is the setting
//! `instance_trust_epoch`).

use chrono::{DateTime, Utc};

use super::{Conn, StoreError, dispatch};
use crate::domain::peer::{PeerTrust, PeerTrustReason};

/// Every pin, by realm: `(realm, pinned trust)`.
pub async fn list_pins(conn: &mut Conn<'_>) -> Result<Vec<(String, f64)>, StoreError> {
    let pins: Vec<(String, f64)> = dispatch!(conn, |connection| {
        sqlx::query_as("SELECT peer_realm, pinned_trust FROM peer_trust_pins ORDER BY peer_realm")
            .fetch_all(&mut *connection)
            .await?
    });
    Ok(pins)
}

/// Pins `realm`'s trust at `trust` (in [0, 1]), replacing an earlier pin.
pub async fn save_pin(
    conn: &mut Conn<'_>,
    realm: &str,
    trust: f64,
    pinned_at: DateTime<Utc>,
) -> Result<(), StoreError> {
    dispatch!(conn, |connection| {
        sqlx::query(
            "INSERT INTO peer_trust_pins (peer_realm, pinned_trust, pinned_at) VALUES ($1, $2, $3) \
             ON CONFLICT (peer_realm) DO UPDATE SET pinned_trust = excluded.pinned_trust, pinned_at = excluded.pinned_at",
        )
        .bind(realm)
        .bind(trust)
        .bind(pinned_at)
        .execute(&mut *connection)
        .await?;
    });
    Ok(())
}

/// Removes `realm`'s pin; `false` when it had none.
pub async fn delete_pin(conn: &mut Conn<'_>, realm: &str) -> Result<bool, StoreError> {
    let deleted = dispatch!(conn, |connection| {
        sqlx::query("DELETE FROM peer_trust_pins WHERE peer_realm = $1")
            .bind(realm)
            .execute(&mut *connection)
            .await?
            .rows_affected()
    });
    Ok(deleted > 0)
}

/// Takes the next batch number (1 for the first), in the batch's transaction. The increment is its first write, so
/// on PostgreSQL a second batch running at once waits here until the first commits and then numbers itself after
/// it: batches never share a number.
pub async fn next_epoch(conn: &mut Conn<'_>, setting: &str, now: DateTime<Utc>) -> Result<i64, StoreError> {
    let epoch: String = dispatch!(conn, |connection| {
        sqlx::query_scalar(
            "INSERT INTO instance_settings (name, value, updated_at) VALUES ($1, '1', $2) \
             ON CONFLICT (name) DO UPDATE SET value = CAST(CAST(instance_settings.value AS BIGINT) + 1 AS TEXT), \
             updated_at = excluded.updated_at RETURNING value",
        )
        .bind(setting)
        .bind(now)
        .fetch_one(&mut *connection)
        .await?
    });
    epoch
        .parse()
        .map_err(|_| StoreError::Corrupt(format!("the setting {setting} holds {epoch:?}")))
}

/// Replaces the whole table with one batch's rows.
pub async fn replace_table(conn: &mut Conn<'_>, rows: &[PeerTrust]) -> Result<(), StoreError> {
    dispatch!(conn, |connection| {
        sqlx::query("DELETE FROM instance_trust")
            .execute(&mut *connection)
            .await?;
    });
    for row in rows {
        dispatch!(conn, |connection| {
            sqlx::query(
                "INSERT INTO instance_trust (peer_realm, trust, reason, agreements, disagreements, epoch, computed_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7)",
            )
            .bind(&row.peer_realm)
            .bind(row.trust)
            .bind(row.reason.to_text())
            .bind(i64::from(row.agreements))
            .bind(i64::from(row.disagreements))
            .bind(row.epoch)
            .bind(row.computed_at)
            .execute(&mut *connection)
            .await?;
        });
    }
    Ok(())
}

#[derive(sqlx::FromRow)]
struct PeerTrustColumns {
    peer_realm: String,
    trust: f64,
    reason: String,
    agreements: i64,
    disagreements: i64,
    epoch: i64,
    computed_at: DateTime<Utc>,
}

/// The table the last batch wrote, by realm.
pub async fn read_table(conn: &mut Conn<'_>) -> Result<Vec<PeerTrust>, StoreError> {
    let rows: Vec<PeerTrustColumns> = dispatch!(conn, |connection| {
        sqlx::query_as(
            "SELECT peer_realm, trust, reason, agreements, disagreements, epoch, computed_at FROM instance_trust \
             ORDER BY peer_realm",
        )
        .fetch_all(&mut *connection)
        .await?
    });
    rows.into_iter()
        .map(|row| {
            let reason = PeerTrustReason::parse(&row.reason).ok_or_else(|| {
                StoreError::Corrupt(format!(
                    "instance trust of {}: unknown reason {}",
                    row.peer_realm, row.reason
                ))
            })?;
            Ok(PeerTrust {
                peer_realm: row.peer_realm,
                trust: row.trust,
                reason,
                agreements: u32::try_from(row.agreements).unwrap_or(0),
                disagreements: u32::try_from(row.disagreements).unwrap_or(0),
                epoch: row.epoch,
                computed_at: row.computed_at,
            })
        })
        .collect()
}

/// `realm`'s pin, if it has one.
pub async fn find_pin(conn: &mut Conn<'_>, realm: &str) -> Result<Option<f64>, StoreError> {
    let pin: Option<f64> = dispatch!(conn, |connection| {
        sqlx::query_scalar("SELECT pinned_trust FROM peer_trust_pins WHERE peer_realm = $1")
            .bind(realm)
            .fetch_optional(&mut *connection)
            .await?
    });
    Ok(pin)
}

/// `realm`'s row of the table, when the last batch included it.
pub async fn find_peer_trust(conn: &mut Conn<'_>, realm: &str) -> Result<Option<PeerTrust>, StoreError> {
    // The table holds a row per peer (a few dozen): reading it whole keeps one decoding of a row.
    Ok(read_table(conn).await?.into_iter().find(|row| row.peer_realm == realm))
}

/// A target's first first-party-only decision, if it has had one: whether it was positive, and when.
pub async fn first_party_decision(
    conn: &mut Conn<'_>,
    target_id: &str,
) -> Result<Option<(bool, DateTime<Utc>)>, StoreError> {
    let row: Option<(String, DateTime<Utc>)> = dispatch!(conn, |connection| {
        sqlx::query_as("SELECT decision, decided_at FROM first_party_decisions WHERE target_id = $1")
            .bind(target_id)
            .fetch_optional(&mut *connection)
            .await?
    });
    Ok(row.map(|(decision, decided_at)| (decision == "positive", decided_at)))
}

/// Records a target's first first-party-only decision (a later one of the same target changes nothing).
pub async fn save_first_party_decision(
    conn: &mut Conn<'_>,
    target_id: &str,
    positive: bool,
    decided_at: DateTime<Utc>,
) -> Result<(), StoreError> {
    dispatch!(conn, |connection| {
        sqlx::query(
            "INSERT INTO first_party_decisions (target_id, decision, decided_at) VALUES ($1, $2, $3) \
             ON CONFLICT (target_id) DO NOTHING",
        )
        .bind(target_id)
        .bind(if positive { "positive" } else { "negative" })
        .bind(decided_at)
        .execute(&mut *connection)
        .await?;
    });
    Ok(())
}

/// One agreement event: a peer's stance on a target against the target's first first-party-only decision.
#[derive(Debug, Clone, PartialEq)]
pub struct AgreementEvent {
    /// The peer.
    pub peer_realm: String,
    /// The target.
    pub target_id: String,
    /// Whether the decision was positive.
    pub positive_decision: bool,
    /// When it was made.
    pub decided_at: DateTime<Utc>,
    /// Whether the peer's stance was positive.
    pub positive_stance: bool,
    /// When this instance received the last of the peer's records that made its stance.
    pub stance_received_at: DateTime<Utc>,
}

fn polarity(positive: bool) -> &'static str {
    if positive { "positive" } else { "negative" }
}

/// Records an agreement event (one per peer and target: a second changes nothing).
pub async fn save_agreement_event(conn: &mut Conn<'_>, event: &AgreementEvent) -> Result<(), StoreError> {
    dispatch!(conn, |connection| {
        sqlx::query(
            "INSERT INTO agreement_events \
             (peer_realm, target_id, decision, decided_at, stance, stance_received_at) \
             VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (peer_realm, target_id) DO NOTHING",
        )
        .bind(&event.peer_realm)
        .bind(&event.target_id)
        .bind(polarity(event.positive_decision))
        .bind(event.decided_at)
        .bind(polarity(event.positive_stance))
        .bind(event.stance_received_at)
        .execute(&mut *connection)
        .await?;
    });
    Ok(())
}

#[derive(sqlx::FromRow)]
struct AgreementEventColumns {
    peer_realm: String,
    target_id: String,
    decision: String,
    decided_at: DateTime<Utc>,
    stance: String,
    stance_received_at: DateTime<Utc>,
}

/// Every agreement event, by peer and target.
pub async fn agreement_events(conn: &mut Conn<'_>) -> Result<Vec<AgreementEvent>, StoreError> {
    let rows: Vec<AgreementEventColumns> = dispatch!(conn, |connection| {
        sqlx::query_as(
            "SELECT peer_realm, target_id, decision, decided_at, stance, stance_received_at \
             FROM agreement_events ORDER BY peer_realm, target_id",
        )
        .fetch_all(&mut *connection)
        .await?
    });
    Ok(rows
        .into_iter()
        .map(|row| AgreementEvent {
            peer_realm: row.peer_realm,
            target_id: row.target_id,
            positive_decision: row.decision == "positive",
            decided_at: row.decided_at,
            positive_stance: row.stance == "positive",
            stance_received_at: row.stance_received_at,
        })
        .collect())
}
