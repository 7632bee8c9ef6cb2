//! Purging a peer's evidence (`interai admin peer purge REALM`): every record whose origin is that realm goes, with
//! its provenance, its retractions and the agreement events it gave, and every target it was about is assessed
//! again from the rows that remain, so nothing of it is left in any value, count, sort key or aggregate. The peer
//! itself, its content and its keys stay: a block stops its evidence counting; a purge forgets it.

use super::Federation;
use super::peer_state::normalize_realm;
use crate::service::ServiceError;
use crate::service::trust::EvidenceChange;
use crate::service::unit_of_work::within_unit_of_work;
use crate::store;

/// What a purge removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PurgeReport {
    /// The realm whose evidence went.
    pub realm: String,
    /// Evidence records deleted.
    pub records: u64,
    /// Targets assessed again (usage and review targets, and rated targets).
    pub targets: u64,
}

impl Federation {
    /// Deletes every evidence record of `realm` and its effects, in one transaction; then a new instance-trust batch
    /// counts the agreement events that remain.
    pub async fn purge_peer_evidence(&self, realm: &str) -> Result<PurgeReport, ServiceError> {
        let realm = normalize_realm(realm);
        if self.realm().is(&realm) {
            return Err(ServiceError::validation(
                "realm",
                "this is this instance's own realm: its evidence is retracted by its authors, not purged",
            ));
        }
        let service = self.service();
        let report = within_unit_of_work!(service, |unit| {
            async {
                let touched = store::remote_evidence::evidence_of_origin(&mut unit.conn(), &realm).await?;
                let records = store::remote_evidence::delete_origin_evidence(&mut unit.conn(), &realm).await?;
                for target_id in &touched.targets {
                    // The state held for the target still holds the deleted records: it is built again from the rows.
                    service.forget_trust_state(target_id);
                    if let Some(target) = service.find_trust_target(&mut unit.conn(), target_id).await? {
                        let change = service
                            .apply_evidence_change(unit, &target, EvidenceChange::Reassess)
                            .await?;
                        service.after_evidence_change(unit, &target, &change).await?;
                    }
                }
                for (target_id, dimension) in &touched.rated {
                    service
                        .refresh_rating_aggregates_if_held(&mut unit.conn(), target_id, dimension)
                        .await?;
                }
                let targets = touched.targets.len() + touched.rated.len();
                Ok::<_, ServiceError>(PurgeReport {
                    realm: realm.clone(),
                    records,
                    targets: u64::try_from(targets).unwrap_or(u64::MAX),
                })
            }
            .await
        })?;
        tracing::info!(realm = %report.realm, records = report.records, targets = report.targets, "a peer's evidence was purged");
        self.recompute_instance_trust().await?;
        Ok(report)
    }
}
