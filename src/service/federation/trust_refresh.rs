//! What an instance-trust batch changes beyond the reads (trust model §2.15, "When t_I changes"): every trust read
//! uses the new table at once, but the stored assessments that search filters and sorts by (`trust_summaries`, the
//! status term of each search document) and the stored rating aggregates were computed with the table of their last
//! evidence change. After a batch, the targets of every origin whose trust changed are assessed again with the new
//! table, found through the origin's evidence (`evidence_provenance` by origin, the origin → targets index).

use std::collections::BTreeSet;

use super::Federation;
use crate::service::ServiceError;
use crate::service::trust::EvidenceChange;
use crate::service::unit_of_work::within_unit_of_work;
use crate::store;
use crate::trust::{InstanceTrustTable, TrustParameters};

/// How many targets one transaction of a refresh assesses again (bounded transactions, each short).
const REFRESH_CHUNK: usize = 256;

/// The origins whose trust differs between two tables.
pub(super) fn changed_origins(
    before: &InstanceTrustTable,
    after: &InstanceTrustTable,
    parameters: &TrustParameters,
) -> Vec<String> {
    let origins: BTreeSet<&str> = before
        .origins()
        .chain(after.origins())
        .map(|(origin, _)| origin)
        .collect();
    origins
        .into_iter()
        .filter(|origin| before.trust_of(origin, parameters).to_bits() != after.trust_of(origin, parameters).to_bits())
        .map(str::to_owned)
        .collect()
}

impl Federation {
    /// Assesses again, with the table in force, every target the evidence of `origins` is about, and refreshes the
    /// rating aggregates they rated; returns how many targets and aggregates were refreshed.
    pub(super) async fn refresh_trust_of_origins(&self, origins: &[String]) -> Result<usize, ServiceError> {
        if origins.is_empty() {
            return Ok(0);
        }
        let started_at = self.now();
        let touched = {
            let mut reader = self.store().reader().await?;
            store::remote_evidence::evidence_of_origins(&mut reader.conn(), origins).await?
        };
        let service = self.service();
        for chunk in touched.targets.chunks(REFRESH_CHUNK) {
            within_unit_of_work!(service, |unit| {
                async {
                    for target_id in chunk {
                        if let Some(target) = service.find_trust_target(&mut unit.conn(), target_id).await? {
                            let change = service
                                .apply_evidence_change(unit, &target, EvidenceChange::Reassess)
                                .await?;
                            service.after_evidence_change(unit, &target, &change).await?;
                        }
                    }
                    Ok::<_, ServiceError>(())
                }
                .await
            })?;
        }
        for chunk in touched.rated.chunks(REFRESH_CHUNK) {
            within_unit_of_work!(service, |unit| {
                async {
                    for (target_id, dimension) in chunk {
                        service
                            .refresh_rating_aggregates_if_held(&mut unit.conn(), target_id, dimension)
                            .await?;
                    }
                    Ok::<_, ServiceError>(())
                }
                .await
            })?;
        }
        let refreshed = touched.targets.len() + touched.rated.len();
        // At info: a refresh can take seconds with many records, and the loop that runs it waits meanwhile.
        tracing::info!(
            origins = origins.len(),
            targets = touched.targets.len(),
            rating_aggregates = touched.rated.len(),
            elapsed_ms = (self.now() - started_at).num_milliseconds(),
            "stored trust refreshed after an instance-trust change"
        );
        Ok(refreshed)
    }
}
