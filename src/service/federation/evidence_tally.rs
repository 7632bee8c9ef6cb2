//! How the evidence records from other realms that this process applied ended, by origin: `applied` (stored, and
//! its origin counts now), `inert` (stored, and its origin counts 0: quarantined, blocked, not sharing), `refused`
//! (broke a rule; nothing stored) and `ignored` (a copy already held). Noted after the transaction that applied them
//! commits, and taken by the federation loop, which counts them in `/metrics`.

use std::collections::BTreeMap;
use std::sync::Mutex;

use super::Federation;
use crate::domain::replication::{FederatedObject, ReplicatedObject};

/// The counts not yet taken, by (origin, outcome).
#[derive(Debug, Default)]
pub(super) struct EvidenceTally {
    counts: Mutex<BTreeMap<(String, &'static str), u64>>,
}

impl EvidenceTally {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<(String, &'static str), u64>> {
        self.counts.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Federation {
    /// Notes how a committed evidence record ended, given its intake outcome (`applied`, `ignored` or `refused`);
    /// nothing for other objects.
    pub(super) fn note_evidence_outcome(&self, object: &ReplicatedObject, outcome: &str) {
        let FederatedObject::Evidence(passport) = &object.object else {
            return;
        };
        let label = match outcome {
            "applied" => {
                let table = self.service().instance_trust_table();
                if table.trust_of(&passport.origin, self.service().trust_parameters()) > 0.0 {
                    "applied"
                } else {
                    "inert"
                }
            }
            "refused" => "refused",
            _ => "ignored",
        };
        *self
            .inner
            .evidence_tally
            .lock()
            .entry((passport.origin.clone(), label))
            .or_insert(0) += 1;
    }

    /// Takes the counts noted since the last call: `(origin, outcome, records)`.
    pub fn take_remote_evidence_counts(&self) -> Vec<(String, &'static str, u64)> {
        std::mem::take(&mut *self.inner.evidence_tally.lock())
            .into_iter()
            .map(|((origin, outcome), count)| (origin, outcome, count))
            .collect()
    }
}
