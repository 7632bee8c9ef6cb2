//! Instance trust t_I from the admin level plus observed agreement (§2.10). Never transitive: t_I is what this
//! instance observed of I directly.
//!
//! Agreement events come only from first-party-only decisions, so remote evidence cannot feed back into the trust
//! that weighs it; one event per (instance, target) means floods cannot farm agreement.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use super::agreement_tally::{AgreementTally, FirstPartyDecision};
use super::evidence::Stance;
use super::params::TrustParameters;

/// Rounds `value` to a multiple of `quantum`. When the quantum is 1/n for a whole n (0.01, 0.05) the result is
/// computed as round(value·n)/n, which gives the nearest double to the decimal (0.57, not 0.5700000000000001).
pub(crate) fn quantise(value: f64, quantum: f64) -> f64 {
    if quantum <= 0.0 || !quantum.is_finite() {
        return value;
    }
    let steps_per_unit = 1.0 / quantum;
    if (steps_per_unit - steps_per_unit.round()).abs() < 1e-9 {
        let steps_per_unit = steps_per_unit.round();
        (value * steps_per_unit).round() / steps_per_unit
    } else {
        (value / quantum).round() * quantum
    }
}

/// Rounds a non-negative `value` to a multiple of `quantum` half-up, as §2.15 fixes it: `floor(value/quantum + 0.5)`
/// quanta (for 0.01: `floor(100·t + 0.5)/100`, divided by the whole number of quanta per unit when there is one,
/// so 0.57 is the nearest double to the decimal).
pub(crate) fn quantise_half_up(value: f64, quantum: f64) -> f64 {
    if quantum <= 0.0 || !quantum.is_finite() {
        return value;
    }
    let steps_per_unit = 1.0 / quantum;
    if (steps_per_unit - steps_per_unit.round()).abs() < 1e-9 {
        let steps_per_unit = steps_per_unit.round();
        (value * steps_per_unit + 0.5).floor() / steps_per_unit
    } else {
        (value / quantum + 0.5).floor() * quantum
    }
}

/// The admin's level for a peer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AdminTrustLevel {
    Blocked,
    Quarantine,
    Low,
    Standard,
    High,
}

/// The admin's setting for a peer: a level, optionally a pinned trust that overrides observation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InstanceTrustSetting {
    pub level: AdminTrustLevel,
    pub pinned: Option<f64>,
}

/// One observation of instance I on target x: the first-party-only decision on x and I's stance on x with the time
/// this instance received it.
#[derive(Debug, Clone, PartialEq)]
pub struct AgreementObservation {
    pub target_id: String,
    pub decision: FirstPartyDecision,
    pub decided_at: DateTime<Utc>,
    pub instance_stance: Stance,
    pub stance_received_at: DateTime<Utc>,
}

/// The computed trust of one instance, with its ingredients for the admin API.
#[derive(Debug, Clone, PartialEq)]
pub struct InstanceTrust {
    /// The base from the admin level.
    pub base: f64,
    /// min(t_max, base + bonus).
    pub ceiling: f64,
    /// Valid agreement and disagreement events (one per target at most).
    pub agreements: u32,
    pub disagreements: u32,
    /// g_I and b_I: decayed event counts.
    pub agreement_mass: f64,
    pub disagreement_mass: f64,
    /// A_I = (g + K/2)/(g + 2b + K).
    pub agreement: f64,
    /// t_I before quantisation.
    pub unquantised: f64,
    /// t_I quantised to the trust quantum: the value the trust table uses.
    pub trust: f64,
    /// Whether an admin pin decided the value.
    pub pinned: bool,
}

/// t_I from the admin setting and the observations (§2.10). An observation yields an event only if I's stance was
/// received before the decision and is not neutral; of several observations of one target the earliest decision
/// counts. Blocked and quarantined instances have t = 0 whatever they agreed with or a pin says.
pub fn instance_trust(
    setting: &InstanceTrustSetting,
    observations: &[AgreementObservation],
    now: DateTime<Utc>,
    params: &TrustParameters,
) -> InstanceTrust {
    let base = match setting.level {
        AdminTrustLevel::Blocked | AdminTrustLevel::Quarantine => 0.0,
        AdminTrustLevel::Low => params.admin_level_low,
        AdminTrustLevel::Standard => params.admin_level_standard,
        AdminTrustLevel::High => params.admin_level_high,
    };
    let ceiling = (base + params.instance_trust_ceiling_bonus).min(params.max_instance_trust);

    let mut first_decision_per_target: BTreeMap<&str, &AgreementObservation> = BTreeMap::new();
    for observation in observations {
        let entry = first_decision_per_target
            .entry(observation.target_id.as_str())
            .or_insert(observation);
        if (observation.decided_at, observation.stance_received_at) < (entry.decided_at, entry.stance_received_at) {
            *entry = observation;
        }
    }
    let mut tally = AgreementTally::new(now, params.agreement_half_life_days);
    for observation in first_decision_per_target.values() {
        if observation.stance_received_at >= observation.decided_at {
            continue;
        }
        tally.record(
            observation.decision,
            observation.instance_stance,
            observation.decided_at,
        );
    }
    let pseudo = params.agreement_pseudo_count;
    let agreement = tally.agreement(pseudo / 2.0, pseudo, params.disagreement_weight);
    let observed = if agreement >= 0.5 {
        base + (ceiling - base) * (2.0 * agreement - 1.0)
    } else {
        base * 2.0 * agreement
    };
    // §2.15: a block and quarantine are a hard 0 that no agreement and no pin lifts; a pin is clamped and used as
    // given; computed trust is quantised half-up.
    let blocked = matches!(setting.level, AdminTrustLevel::Blocked | AdminTrustLevel::Quarantine);
    let (unquantised, trust, pinned) = match setting.pinned {
        _ if blocked => (0.0, 0.0, false),
        Some(pin) => {
            let pin = pin.clamp(0.0, params.max_instance_trust);
            (pin, pin, true)
        }
        None => {
            let observed = observed.clamp(0.0, params.max_instance_trust);
            (
                observed,
                quantise_half_up(observed, params.instance_trust_quantum),
                false,
            )
        }
    };
    InstanceTrust {
        base,
        ceiling,
        agreements: tally.agreements(),
        disagreements: tally.disagreements(),
        agreement_mass: tally.agreement_mass(),
        disagreement_mass: tally.disagreement_mass(),
        agreement,
        unquantised,
        trust: trust.clamp(0.0, params.max_instance_trust),
        pinned,
    }
}
