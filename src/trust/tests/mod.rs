//! Tests of the trust engine against the spec's reference numbers (trust-model.md §2 and §3), plus the property
//! tests of order independence, incremental = full recomputation, monotonicity and the per-instance bound.
//!
//! Shared helpers live here: a day-based clock, a record factory and evaluation shortcuts.

mod incremental;
mod instance_trust_and_reputation;
mod properties;
mod ratings;
mod timeline;
mod worked_example;

use chrono::{DateTime, TimeDelta, TimeZone, Utc};

use super::evidence::{ControllerRef, ControllerStanding, EvidenceKind, EvidenceRecord};
use super::params::TrustParameters;
use super::remote::InstanceTrustTable;
use super::summary::{Assessment, Evaluation};
use super::target::{TargetDescriptor, TargetState};
use crate::domain::evidence::{Grounding, UsageOutcome, Verdict};

/// Day 0 of every scenario.
pub(super) fn day_zero() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 1, 1, 0, 0, 0).single().expect("valid date")
}

/// Day `days` of a scenario (fractions allowed, millisecond resolution).
pub(super) fn day(days: f64) -> DateTime<Utc> {
    day_zero() + TimeDelta::milliseconds((days * 86_400_000.0).round() as i64)
}

/// The author of every test target; listed controllers never include it unless a test says so.
pub(super) const AUTHOR: &str = "usr_author";

pub(super) fn target() -> TargetDescriptor {
    TargetDescriptor {
        target_id: "clm_1@r3".to_string(),
        author: ControllerRef::first_party(AUTHOR),
    }
}

pub(super) fn new_state(params: &TrustParameters) -> TargetState {
    TargetState::new(target(), params.clone(), day_zero())
}

/// A growing list of records with sequential ids.
#[derive(Debug, Default, Clone)]
pub(super) struct Evidence {
    pub(super) records: Vec<EvidenceRecord>,
}

impl Evidence {
    fn push(
        &mut self,
        origin: Option<&str>,
        controller: &str,
        actor: &str,
        days: f64,
        kind: EvidenceKind,
    ) -> EvidenceRecord {
        let record = EvidenceRecord {
            record_id: format!("ev_{:07}", self.records.len()),
            actor: actor.to_string(),
            root_controller: controller.to_string(),
            origin: origin.map(str::to_string),
            origin_signature_valid: true,
            recorded_at: day(days),
            retracted: false,
            standing: ControllerStanding::new_controller(day(-1000.0)),
            kind,
        };
        self.records.push(record.clone());
        record
    }

    /// A usage report by `controller`'s agent `actor`.
    pub(super) fn usage_by(
        &mut self,
        origin: Option<&str>,
        controller: &str,
        actor: &str,
        days: f64,
        real_world_use: bool,
        result: UsageOutcome,
    ) -> EvidenceRecord {
        self.push(
            origin,
            controller,
            actor,
            days,
            EvidenceKind::Usage { real_world_use, result },
        )
    }

    /// A first-party real-world success by `controller`'s single agent.
    pub(super) fn success(&mut self, controller: &str, days: f64) -> EvidenceRecord {
        self.usage_by(
            None,
            controller,
            &agent_of(controller),
            days,
            true,
            UsageOutcome::Success,
        )
    }

    /// A first-party real-world failure by `controller`'s single agent.
    pub(super) fn failure(&mut self, controller: &str, days: f64) -> EvidenceRecord {
        self.usage_by(
            None,
            controller,
            &agent_of(controller),
            days,
            true,
            UsageOutcome::Failure,
        )
    }

    /// A remote real-world usage report from `origin`.
    pub(super) fn remote_usage(
        &mut self,
        origin: &str,
        controller: &str,
        days: f64,
        result: UsageOutcome,
    ) -> EvidenceRecord {
        self.usage_by(Some(origin), controller, &agent_of(controller), days, true, result)
    }

    /// A review by `controller`'s single agent.
    pub(super) fn review(
        &mut self,
        origin: Option<&str>,
        controller: &str,
        days: f64,
        verdict: Verdict,
        confidence: f64,
        grounding: Grounding,
    ) -> EvidenceRecord {
        let actor = agent_of(controller);
        self.push(
            origin,
            controller,
            &actor,
            days,
            EvidenceKind::Review {
                verdict,
                confidence,
                grounding,
            },
        )
    }
}

/// The single agent of a test controller.
pub(super) fn agent_of(controller: &str) -> String {
    format!("ai_{controller}")
}

/// An evaluation at `days` with `table`.
pub(super) fn at<'a>(days: f64, table: &'a InstanceTrustTable) -> Evaluation<'a> {
    Evaluation {
        now: day(days),
        instance_trust: table,
        superseded: false,
    }
}

/// The assessment of `records` recomputed in full at `days`.
pub(super) fn full(
    records: &[EvidenceRecord],
    params: &TrustParameters,
    days: f64,
    table: &InstanceTrustTable,
) -> Assessment {
    super::full_recompute::assess_records(&target(), records, params, day_zero(), &at(days, table))
        .expect("valid records")
}

/// Asserts that `actual` rounds to the printed `expected` with `digits` decimals.
#[track_caller]
pub(super) fn assert_printed(actual: f64, expected: f64, digits: i32, what: &str) {
    let tolerance = 0.5 * 10f64.powi(-digits) + 1e-12;
    assert!(
        (actual - expected).abs() <= tolerance,
        "{what}: got {actual}, spec prints {expected}"
    );
}

/// Asserts two assessments are identical bit for bit (floats compared by their bits).
#[track_caller]
pub(super) fn assert_bit_identical(left: &Assessment, right: &Assessment) {
    let bits = |assessment: &Assessment| {
        [
            assessment.value,
            assessment.lower_bound,
            assessment.upper_bound,
            assessment.opinion.belief,
            assessment.opinion.disbelief,
            assessment.opinion.uncertainty,
            assessment.evidence_units.first_party.belief,
            assessment.evidence_units.first_party.disbelief,
            assessment.evidence_units.remote.belief,
            assessment.evidence_units.remote.disbelief,
        ]
        .map(f64::to_bits)
    };
    assert_eq!(bits(left), bits(right), "float fields differ:\n{left:?}\n{right:?}");
    assert_eq!(left, right);
}
