//! Actor reputation ρ per root controller (§2.11): an input to review weights and to the strong-refutation gate,
//! computed from the controller's valid observations only.
//!
//! ρ scales reviews only and always sits under the 1-unit controller cap, so perfect reputation can never make one
//! party count as more than one; it only lets a party reach its unit through fewer reviews.

use chrono::{DateTime, Utc};

use super::agreement_tally::{AgreementTally, FirstPartyDecision};
use super::evidence::Stance;
use super::instance_trust::quantise;
use super::params::TrustParameters;

/// One of a controller's reviews or usage reports on a target whose first-party status was decided. The service
/// computes the decision leave-one-out: the first-party-only status without this controller's own evidence (for
/// example with `assess_records` over the other first-party records and an empty trust table).
#[derive(Debug, Clone, PartialEq)]
pub struct ReputationObservation {
    pub target_id: String,
    /// The stance of the controller's record (positive for success/confirmation, negative for failure/refutation).
    pub stance: Stance,
    pub recorded_at: DateTime<Utc>,
    pub decision: FirstPartyDecision,
    pub decided_at: DateTime<Utc>,
    /// Observations on the controller's own targets are not valid.
    pub target_authored_by_controller: bool,
}

/// The reputation of one controller with its ingredients.
#[derive(Debug, Clone, PartialEq)]
pub struct ControllerReputation {
    /// Valid observations that agreed and disagreed.
    pub agreements: u32,
    pub disagreements: u32,
    /// g_c and b_c: decayed counts (half-life 180 d by default).
    pub agreement_mass: f64,
    pub disagreement_mass: f64,
    /// A_c = (g + 5)/(g + b + 10).
    pub agreement: f64,
    /// ρ = clamp(0.5 + A_c, ρ_min, ρ_max) before quantisation.
    pub unquantised: f64,
    /// ρ quantised to the reputation quantum: the daily snapshot value.
    pub reputation: f64,
}

/// ρ for one controller. Valid observations were made before the decision, on targets the controller did not
/// author, with a non-neutral stance; a controller without any has ρ = 1.
pub fn controller_reputation(
    observations: &[ReputationObservation],
    now: DateTime<Utc>,
    params: &TrustParameters,
) -> ControllerReputation {
    let mut sorted: Vec<&ReputationObservation> = observations.iter().collect();
    sorted.sort_by(|left, right| {
        (&left.target_id, left.recorded_at, left.decided_at).cmp(&(
            &right.target_id,
            right.recorded_at,
            right.decided_at,
        ))
    });
    let mut tally = AgreementTally::new(now, params.reputation_half_life_days);
    for observation in sorted {
        if observation.target_authored_by_controller || observation.recorded_at >= observation.decided_at {
            continue;
        }
        tally.record(observation.decision, observation.stance, observation.decided_at);
    }
    // A disagreement weighs one agreement here (1·b is b exactly, so the value is the same bytes as g + b).
    let agreement = tally.agreement(
        params.reputation_prior_agreements,
        params.reputation_prior_observations,
        1.0,
    );
    let unquantised = (0.5 + agreement).clamp(params.reputation_min, params.reputation_max);
    let reputation = quantise(unquantised, params.reputation_quantum);
    ControllerReputation {
        agreements: tally.agreements(),
        disagreements: tally.disagreements(),
        agreement_mass: tally.agreement_mass(),
        disagreement_mass: tally.disagreement_mass(),
        agreement,
        unquantised,
        reputation: reputation.clamp(params.reputation_min, params.reputation_max),
    }
}
