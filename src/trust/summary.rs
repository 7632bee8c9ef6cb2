//! The compact assessment of one target and the read-time formulas that produce it from fixed-point totals (§2.6,
//! §2.7): decay, remote discounting, the Beta posterior, the opinion, the counts and the status facts.
//!
//! Both the incremental state and the full recomputation call [`assemble`] with the same integers, so they produce
//! the same bytes.

use chrono::{DateTime, Utc};

use super::evidence::Stance;
use super::fixed_point::{FixedSums, days_between, decay_factor};
use super::interval::beta_interval;
use super::params::TrustParameters;
use super::remote::{InstanceTrustTable, RemoteDiscount, remote_discount};
use super::status::{StatusFacts, StatusRule, decide_status};
use crate::domain::TrustStatus;

/// What an evaluation depends on besides the evidence: the time, the instance-trust table and the structural
/// superseded flag (R1).
#[derive(Debug, Clone, Copy)]
pub struct Evaluation<'a> {
    pub now: DateTime<Utc>,
    pub instance_trust: &'a InstanceTrustTable,
    /// A newer revision or an accepted superseding claim exists.
    pub superseded: bool,
}

/// A subjective-logic opinion (b, d, u, a); b + a·u equals the value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Opinion {
    pub belief: f64,
    pub disbelief: f64,
    pub uncertainty: f64,
    pub base_rate: f64,
}

/// Evidence units (r, s).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Units {
    pub belief: f64,
    pub disbelief: f64,
}

/// Evidence units after caps and discounts, split first-party / remote.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct EvidenceUnits {
    pub first_party: Units,
    pub remote: Units,
}

/// A party count split first-party / remote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PartyCount {
    pub first_party: u32,
    pub remote: u32,
}

impl PartyCount {
    pub fn total(&self) -> u32 {
        self.first_party + self.remote
    }
}

/// The counts of §2.7. Counts do not decay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AssessmentCounts {
    /// Parties with positive stance (remote: instances with t > 0).
    pub independent_confirmations: PartyCount,
    /// Parties with negative stance.
    pub contradictions: PartyCount,
    /// Parties with positive stance and at least one real-world success.
    pub real_world_confirmations: PartyCount,
    /// Eligible first-party controllers with negative stance and a strong refutation.
    pub strong_refutations_first_party: u32,
}

/// The compact result of evaluating one target: what listings and rankings need.
#[derive(Debug, Clone, PartialEq)]
pub struct Assessment {
    pub value: f64,
    pub lower_bound: f64,
    pub upper_bound: f64,
    pub opinion: Opinion,
    pub evidence_units: EvidenceUnits,
    pub counts: AssessmentCounts,
    pub status: TrustStatus,
    pub rule: StatusRule,
    /// One line saying why the rule fired.
    pub reason: String,
}

/// First-party totals at one moment, however they were obtained.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FirstPartyTotals {
    pub(crate) sums: FixedSums,
    pub(crate) positive_parties: u32,
    pub(crate) negative_parties: u32,
    pub(crate) positive_parties_with_real_world_success: u32,
    /// Eligible refuters with negative stance.
    pub(crate) refuters: u32,
    /// The earliest T_ref of the refuters, ascending, at most K_REF of them.
    pub(crate) earliest_refutation_times: Vec<DateTime<Utc>>,
    /// Controllers with at least one outdated signal.
    pub(crate) outdated_signalling_parties: u32,
    /// The earliest first-signal times of those controllers, ascending, at most `outdated_min_parties` of them.
    pub(crate) earliest_outdated_signal_times: Vec<DateTime<Utc>>,
}

/// One instance's totals at one moment.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct InstanceTotals<'a> {
    pub(crate) origin: &'a str,
    pub(crate) sums: FixedSums,
    pub(crate) real_world_success_records: u32,
    pub(crate) earliest_outdated_signal: Option<DateTime<Utc>>,
}

/// One instance as read at `now`: its collapsed evidence, the discount and the result.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct InstanceReading {
    pub(crate) origin: String,
    pub(crate) raw: Units,
    pub(crate) discount: RemoteDiscount,
    pub(crate) discounted: Units,
    pub(crate) stance: Stance,
}

/// succ_after(T) limited to `limit`: first-party controllers with positive stance and a real-world success after T.
pub(crate) type SuccessesAfter<'a> = &'a dyn Fn(DateTime<Utc>, u32) -> u32;

/// The read-time formulas of §2.5–§2.8 over fixed-point totals.
pub(crate) fn assemble(
    first_party: &FirstPartyTotals,
    instances: &[InstanceTotals<'_>],
    successes_after: SuccessesAfter<'_>,
    epoch: DateTime<Utc>,
    evaluation: &Evaluation<'_>,
    params: &TrustParameters,
) -> (Assessment, Vec<InstanceReading>) {
    let decay = decay_factor(days_between(epoch, evaluation.now), params.half_life_days);
    let (first_party_belief, first_party_disbelief) = first_party.sums.units(decay);
    let success_limit = params
        .successes_to_contest_proof
        .max(params.successes_to_answer_refutation);

    let mut remote = Units::default();
    let mut counts = AssessmentCounts {
        independent_confirmations: PartyCount {
            first_party: first_party.positive_parties,
            remote: 0,
        },
        contradictions: PartyCount {
            first_party: first_party.negative_parties,
            remote: 0,
        },
        real_world_confirmations: PartyCount {
            first_party: first_party.positive_parties_with_real_world_success,
            remote: 0,
        },
        strong_refutations_first_party: first_party.refuters,
    };
    // §2.15: the outdated rule reads first-party signals only (an instance's are shown in its row, never counted).
    let outdated_signal_times = &first_party.earliest_outdated_signal_times;
    let mut readings = Vec::with_capacity(instances.len());
    for instance in instances {
        let trust = evaluation.instance_trust.trust_of(instance.origin, params);
        let (raw_belief, raw_disbelief) = instance.sums.units(decay);
        let discount = remote_discount(trust, raw_belief + raw_disbelief, params);
        let discounted = Units {
            belief: discount.discount_factor * raw_belief,
            disbelief: discount.discount_factor * raw_disbelief,
        };
        let stance = Stance::of_difference(raw_belief - raw_disbelief);
        if trust > 0.0 {
            remote.belief += discounted.belief;
            remote.disbelief += discounted.disbelief;
            match stance {
                Stance::Positive => {
                    counts.independent_confirmations.remote += 1;
                    if instance.real_world_success_records > 0 {
                        counts.real_world_confirmations.remote += 1;
                    }
                }
                Stance::Negative => counts.contradictions.remote += 1,
                Stance::Neutral => {}
            }
        }
        readings.push(InstanceReading {
            origin: instance.origin.to_string(),
            raw: Units {
                belief: raw_belief,
                disbelief: raw_disbelief,
            },
            discount,
            discounted,
            stance,
        });
    }

    let belief_mass = first_party_belief + remote.belief;
    let disbelief_mass = first_party_disbelief + remote.disbelief;
    let alpha = params.prior_weight * params.base_rate + belief_mass;
    let beta = params.prior_weight * (1.0 - params.base_rate) + disbelief_mass;
    let value = alpha / (alpha + beta);
    let (lower_bound, upper_bound) = beta_interval(alpha, beta, params.lower_quantile, params.upper_quantile);
    // §2.15: R5 reads the bound of the first-party posterior alone, so no peer can lift a statistical refutation.
    let (_, first_party_upper_bound) = beta_interval(
        params.prior_weight * params.base_rate + first_party_belief,
        params.prior_weight * (1.0 - params.base_rate) + first_party_disbelief,
        params.lower_quantile,
        params.upper_quantile,
    );
    let opinion_total = belief_mass + disbelief_mass + params.prior_weight;
    let opinion = Opinion {
        belief: belief_mass / opinion_total,
        disbelief: disbelief_mass / opinion_total,
        uncertainty: params.prior_weight / opinion_total,
        base_rate: params.base_rate,
    };

    let proof_index = params.refuters_for_proof.max(1) as usize - 1;
    let successes_after_proof = match first_party.earliest_refutation_times.get(proof_index) {
        Some(proof_time) if first_party.refuters >= params.refuters_for_proof => {
            successes_after(*proof_time, success_limit)
        }
        _ => 0,
    };
    let successes_after_single_refutation = match first_party.earliest_refutation_times.first() {
        Some(refutation_time) if first_party.refuters == 1 => successes_after(*refutation_time, success_limit),
        _ => 0,
    };
    let deciding_signal_index = params.outdated_min_parties.max(1) as usize - 1;
    let successes_after_outdated_signal = match outdated_signal_times.get(deciding_signal_index) {
        Some(signal_time) => successes_after(*signal_time, success_limit),
        None => 0,
    };

    let facts = StatusFacts {
        superseded: evaluation.superseded,
        value,
        lower_bound,
        upper_bound,
        first_party_upper_bound,
        belief_mass,
        disbelief_mass,
        independent_confirmations: counts.independent_confirmations.total(),
        real_world_confirmations: counts.real_world_confirmations.total(),
        first_party_contradictions: counts.contradictions.first_party,
        remote_contradicting_instances: counts.contradictions.remote,
        refuters: first_party.refuters,
        successes_after_proof,
        successes_after_single_refutation,
        outdated_signalling_first_party: first_party.outdated_signalling_parties,
        successes_after_outdated_signal,
    };
    let decision = decide_status(&facts, params);
    let assessment = Assessment {
        value,
        lower_bound,
        upper_bound,
        opinion,
        evidence_units: EvidenceUnits {
            first_party: Units {
                belief: first_party_belief,
                disbelief: first_party_disbelief,
            },
            remote,
        },
        counts,
        status: decision.status,
        rule: decision.rule,
        reason: decision.reason,
    };
    (assessment, readings)
}
