//! Instance trust in action (trust model §2.10, §2.15): the effective trust t_I of every peer, computed in one batch
//! from its state, its level, an admin's pin and the agreement observed, stored with the batch's number
//! (`instance_trust_epoch`) and put in force for every trust read of this process at once. A batch runs on any admin
//! change of a peer (add, approve, reject, block, unblock, level, pin, unpin, remove), after the intake applied a
//! peering message (which may change a peer's state), on a schedule, and when an admin asks; other processes on the
//! same database load the new table at their federation loop's next check.
//!
//! Why a batch and not a computation at each read: agreement decays with time, so t_I computed at read time would
//! drift from one read to the next; a batch gives every read one table, named by its epoch in explanations.

use std::collections::HashMap;

use chrono::{DateTime, TimeDelta, Utc};

use super::Federation;
use super::peer_state::{block_has_lapsed, normalize_realm};
use super::peer_status::PeerView;
use crate::domain::peer::{PeerRecord, PeerTrust, PeerTrustReason};
use crate::domain::{PeerLevel, PeerState};
use crate::service::ServiceError;
use crate::service::origins::shares_content;
use crate::store;
use crate::trust::{
    AdminTrustLevel, AgreementObservation, FirstPartyDecision, InstanceTrustSetting, InstanceTrustTable, Stance,
    TrustParameters, instance_trust,
};

/// The instance setting that holds the number of the last batch.
const EPOCH_SETTING: &str = "instance_trust_epoch";

/// Set by migration 0020 when evidence from other realms was held before first-party values were stored.
const FIRST_PARTY_BACKFILL: &str = "first_party_trust_backfill";

/// The longest a table stays in force without a new batch (agreement decays; a timed block that ends sooner has its
/// batch then, see [`InstanceTrustBatch::next_due`]).
pub const RECOMPUTE_INTERVAL: TimeDelta = TimeDelta::minutes(10);

/// What one batch computed.
#[derive(Debug, Clone, PartialEq)]
pub struct InstanceTrustBatch {
    /// The batch's number, one more than the last.
    pub epoch: i64,
    /// When it ran.
    pub computed_at: DateTime<Utc>,
    /// Every peer's effective trust, by realm.
    pub peers: Vec<PeerTrust>,
    /// When the next batch is due: after [`RECOMPUTE_INTERVAL`], or sooner when a timed block ends.
    pub next_due: DateTime<Utc>,
}

impl Federation {
    /// Runs a batch now: computes every peer's effective trust, stores the table with the next epoch, and puts it in
    /// force for this process's trust reads.
    pub async fn recompute_instance_trust(&self) -> Result<InstanceTrustBatch, ServiceError> {
        let now = self.now();
        let parameters = self.service().trust_parameters().clone();
        let mut transaction = self.store().begin().await?;
        // Numbered first: a batch another process runs at the same moment waits for this one (see `next_epoch`).
        let epoch = store::instance_trust::next_epoch(&mut transaction.conn(), EPOCH_SETTING, now).await?;
        let peers = store::peers::list_peers(&mut transaction.conn()).await?;
        let pins: HashMap<String, f64> = store::instance_trust::list_pins(&mut transaction.conn())
            .await?
            .into_iter()
            .collect();
        let mut observations: HashMap<String, Vec<AgreementObservation>> = HashMap::new();
        for event in store::instance_trust::agreement_events(&mut transaction.conn()).await? {
            observations
                .entry(event.peer_realm.clone())
                .or_default()
                .push(agreement_observation(&event));
        }
        let rows: Vec<PeerTrust> = peers
            .iter()
            .map(|peer| {
                let observed = observations.get(&peer.realm).map_or(&[][..], Vec::as_slice);
                effective_trust(peer, pins.get(&peer.realm).copied(), observed, now, epoch, &parameters)
            })
            .collect();
        store::instance_trust::replace_table(&mut transaction.conn(), &rows).await?;
        // Migration 0020 asks for every target with other realms' evidence to be assessed again once, to store its
        // first-party values; the origins with evidence are then all "changed".
        let first_party_backfill = match store::settings::get(&mut transaction.conn(), FIRST_PARTY_BACKFILL).await? {
            Some(_) => Some(store::remote_evidence::origins_with_evidence(&mut transaction.conn()).await?),
            None => None,
        };
        transaction.commit().await?;
        let before = self.service().instance_trust_table();
        let table = table_of(&rows, epoch);
        let changed = match &first_party_backfill {
            Some(origins) => origins.clone(),
            None => super::trust_refresh::changed_origins(&before, &table, &parameters),
        };
        self.service().install_instance_trust_table(table, reasons_of(&rows));
        // Reads use the new table from here on; what search sorts and filters by follows.
        self.refresh_trust_of_origins(&changed).await?;
        if first_party_backfill.is_some() {
            let mut writer = self.store().begin().await?;
            store::settings::delete(&mut writer.conn(), FIRST_PARTY_BACKFILL).await?;
            writer.commit().await?;
            tracing::info!(
                origins = changed.len(),
                "first-party trust values of other realms' targets stored"
            );
        }
        let next_due = peers
            .iter()
            .filter(|peer| peer.state == PeerState::Blocked)
            .filter_map(|peer| peer.blocked_until)
            .filter(|until| *until > now)
            .fold(now + RECOMPUTE_INTERVAL, DateTime::min);
        tracing::debug!(epoch, peers = rows.len(), "instance trust recomputed");
        Ok(InstanceTrustBatch {
            epoch,
            computed_at: now,
            peers: rows,
            next_due,
        })
    }

    /// Puts the table the last batch stored in force at start: one read of the epoch, and of the table when there
    /// is one.
    pub async fn load_instance_trust(&self) -> Result<(), ServiceError> {
        self.take_stored_instance_trust().await.map(|_| ())
    }

    /// Puts in force a batch another process ran (a command beside the server, another server on the database),
    /// when there is a newer one, and assesses again the targets of every origin whose trust it changed. That process
    /// assessed them again too, but this one may have applied records of those origins with the table it had until
    /// now, after that (the second process's evidence would otherwise keep the old weight in search's stored values
    /// until the next change of their targets).
    pub async fn follow_instance_trust(&self) -> Result<(), ServiceError> {
        if let Some(changed) = self.take_stored_instance_trust().await? {
            self.refresh_trust_of_origins(&changed).await?;
        }
        Ok(())
    }

    /// Installs the stored table when it is newer than the one in force: one read of the epoch, and of the table only
    /// when it changed. Returns the origins whose trust the new table changed, or `None` when it installed nothing.
    async fn take_stored_instance_trust(&self) -> Result<Option<Vec<String>>, ServiceError> {
        let mut reader = self.store().reader().await?;
        let epoch = stored_epoch(&mut reader.conn()).await?;
        let before = self.service().instance_trust_table();
        if epoch == 0 || before.epoch() == epoch.to_string() {
            return Ok(None);
        }
        let rows = store::instance_trust::read_table(&mut reader.conn()).await?;
        drop(reader);
        let table = table_of(&rows, epoch);
        let changed = super::trust_refresh::changed_origins(&before, &table, self.service().trust_parameters());
        self.service().install_instance_trust_table(table, reasons_of(&rows));
        Ok(Some(changed))
    }

    /// The table the last batch stored, by realm, and its epoch (0 before the first batch).
    pub async fn instance_trust_table(&self) -> Result<(i64, Vec<PeerTrust>), ServiceError> {
        let mut reader = self.store().reader().await?;
        let epoch = stored_epoch(&mut reader.conn()).await?;
        Ok((epoch, store::instance_trust::read_table(&mut reader.conn()).await?))
    }

    /// Pins a peer's trust at `trust` (in [0, 1]; the engine uses at most 0.9), overriding its level and agreement
    /// but never a block or quarantine, and recomputes the table.
    pub async fn pin_peer_trust(&self, realm: &str, trust: f64) -> Result<PeerView, ServiceError> {
        if !trust.is_finite() || !(0.0..=1.0).contains(&trust) {
            return Err(ServiceError::validation(
                "trust",
                format!("a pinned trust is a number from 0 to 1 (used up to 0.9), not {trust}"),
            ));
        }
        let realm = normalize_realm(realm);
        let mut transaction = self.store().begin().await?;
        known_peer(&mut transaction, &realm).await?;
        store::instance_trust::save_pin(&mut transaction.conn(), &realm, trust, self.now()).await?;
        transaction.commit().await?;
        tracing::info!(peer = %realm, trust, "peer trust pinned");
        self.recompute_instance_trust().await?;
        self.peer_view(&realm).await
    }

    /// Removes a peer's pin (its level and agreement decide again) and recomputes the table. A peer without a pin
    /// is left as it is.
    pub async fn unpin_peer_trust(&self, realm: &str) -> Result<PeerView, ServiceError> {
        let realm = normalize_realm(realm);
        let mut transaction = self.store().begin().await?;
        known_peer(&mut transaction, &realm).await?;
        let removed = store::instance_trust::delete_pin(&mut transaction.conn(), &realm).await?;
        transaction.commit().await?;
        if removed {
            tracing::info!(peer = %realm, "peer trust unpinned");
            self.recompute_instance_trust().await?;
        }
        self.peer_view(&realm).await
    }
}

/// `not_found` unless `realm` is a peer.
async fn known_peer(transaction: &mut store::Transaction, realm: &str) -> Result<(), ServiceError> {
    match store::peers::find_peer(&mut transaction.conn(), realm).await? {
        Some(_) => Ok(()),
        None => Err(super::peering::not_found_peer(realm)),
    }
}

/// The epoch of the last batch, 0 before the first.
async fn stored_epoch(conn: &mut store::Conn<'_>) -> Result<i64, ServiceError> {
    let stored = store::settings::get(conn, EPOCH_SETTING).await?;
    match stored {
        None => Ok(0),
        Some(text) => text
            .parse()
            .map_err(|_| ServiceError::internal(format!("the setting {EPOCH_SETTING} holds {text:?}"))),
    }
}

/// An agreement event as the engine counts it (§2.10).
fn agreement_observation(event: &store::instance_trust::AgreementEvent) -> AgreementObservation {
    let polarity = |positive: bool| {
        if positive {
            (FirstPartyDecision::Positive, Stance::Positive)
        } else {
            (FirstPartyDecision::Negative, Stance::Negative)
        }
    };
    AgreementObservation {
        target_id: event.target_id.clone(),
        decision: polarity(event.positive_decision).0,
        decided_at: event.decided_at,
        instance_stance: polarity(event.positive_stance).1,
        stance_received_at: event.stance_received_at,
    }
}

/// Why each peer has its trust, as explanations show it: the reason, and the agreement events counted.
fn reasons_of(rows: &[PeerTrust]) -> std::collections::BTreeMap<String, String> {
    rows.iter()
        .map(|row| {
            (
                row.peer_realm.clone(),
                format!(
                    "{}; agreement {}/{}",
                    row.reason.to_text(),
                    row.agreements,
                    row.disagreements
                ),
            )
        })
        .collect()
}

/// The table the trust engine reads from a batch's rows.
fn table_of(rows: &[PeerTrust], epoch: i64) -> InstanceTrustTable {
    rows.iter()
        .fold(InstanceTrustTable::new(epoch.to_string()), |table, row| {
            table.with(row.peer_realm.clone(), row.trust)
        })
}

/// A peer's effective trust at `now` (§2.15): its origin counts only while the peering is active or unreachable
/// and not blocked (a timed block that has ended counts as lifted); then the engine's §2.10 rule decides from the
/// level, the pin and the agreement observed.
fn effective_trust(
    peer: &PeerRecord,
    pin: Option<f64>,
    observations: &[AgreementObservation],
    now: DateTime<Utc>,
    epoch: i64,
    parameters: &TrustParameters,
) -> PeerTrust {
    let state = if block_has_lapsed(peer, now) {
        peer.state_before_block.unwrap_or(PeerState::Active)
    } else {
        peer.state
    };
    let level = match (state, peer.level) {
        (PeerState::Blocked, _) => AdminTrustLevel::Blocked,
        (_, PeerLevel::Quarantine) => AdminTrustLevel::Quarantine,
        (_, PeerLevel::Low) => AdminTrustLevel::Low,
        (_, PeerLevel::Standard) => AdminTrustLevel::Standard,
        (_, PeerLevel::High) => AdminTrustLevel::High,
    };
    let computed = instance_trust(
        &InstanceTrustSetting { level, pinned: pin },
        observations,
        now,
        parameters,
    );
    let (trust, reason) = match level {
        AdminTrustLevel::Blocked => (0.0, PeerTrustReason::Blocked),
        AdminTrustLevel::Quarantine => (0.0, PeerTrustReason::Quarantine),
        _ if !shares_content(state) => (0.0, PeerTrustReason::NotSharing(state)),
        _ if computed.pinned => (computed.trust, PeerTrustReason::Pinned),
        _ => (computed.trust, PeerTrustReason::Level(peer.level)),
    };
    PeerTrust {
        peer_realm: peer.realm.clone(),
        trust,
        reason,
        agreements: computed.agreements,
        disagreements: computed.disagreements,
        epoch,
        computed_at: now,
    }
}
