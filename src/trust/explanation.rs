//! The full explanation of one target's assessment (§2.13): the value fields, the evidence split, the counts, the
//! status with rule and reason, one row per party with caps and flags, the per-instance discount and which bound
//! binds, the excluded counts, and versioning.
//!
//! These are plain domain structs with public fields; the adapters convert them into their wire formats by hand.

use chrono::{DateTime, Utc};

use super::evidence::Stance;
use super::fixed_point::{CapShape, FIXED_POINT_SCALE, days_between, decay_factor};
use super::params::{MODEL_VERSION, TrustParameters};
use super::remote::InstanceBound;
use super::summary::{Assessment, Evaluation, InstanceReading};

/// A flag on a party row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PartyFlag {
    /// At least one real-world success.
    RealWorldSuccess,
    /// At least one strong refutation by an eligible first-party controller.
    StrongRefutation,
    /// A strong refutation whose controller did not pass the eligibility gate (it still weighs as a contradiction).
    IneligibleStrongRefutation,
    /// At least one outdated signal.
    OutdatedSignal,
    /// The target author's own evidence: listed, weighed 0.
    SelfEvidence,
}

impl PartyFlag {
    /// The stable snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            PartyFlag::RealWorldSuccess => "real_world_success",
            PartyFlag::StrongRefutation => "strong_refutation",
            PartyFlag::IneligibleStrongRefutation => "ineligible_strong_refutation",
            PartyFlag::OutdatedSignal => "outdated_signal",
            PartyFlag::SelfEvidence => "self",
        }
    }

    /// Why the flag's records weigh less than they might, for the flags that take something away: an agent that
    /// sees its refutation or its own evidence count for little can read why in the explanation itself.
    pub fn reason(self, params: &TrustParameters) -> Option<String> {
        match self {
            PartyFlag::IneligibleStrongRefutation => {
                let gate = &params.strong_refutation_gate;
                Some(format!(
                    "not yet eligible to strongly refute: a strong refutation (a real-world failure, or a grounded \
                     contradicted or false review with confidence at least {}) counts as one only from a first-party \
                     controller with reputation at \
                     least {} and either {} earlier valid evidence records or an account at least {} days old when \
                     the record was made, so new controllers cannot strongly refute yet; the record still weighs as a \
                     contradiction",
                    params.strong_refutation_min_confidence,
                    gate.min_reputation,
                    gate.min_prior_valid_records,
                    gate.min_account_age_days
                ))
            }
            PartyFlag::SelfEvidence => {
                Some("the target author's own root controller: its records are listed but weigh 0".to_owned())
            }
            PartyFlag::RealWorldSuccess | PartyFlag::StrongRefutation | PartyFlag::OutdatedSignal => None,
        }
    }
}

/// One first-party root controller (or the target author, flagged `self`).
#[derive(Debug, Clone, PartialEq)]
pub struct ControllerPartyExplanation {
    /// The root controller id.
    pub controller: String,
    /// Active records of this controller on the target.
    pub records: u32,
    /// Current belief units after the controller cap.
    pub belief: f64,
    /// Current disbelief units after the controller cap.
    pub disbelief: f64,
    /// Whether the controller cap binds at `now`.
    pub capped: bool,
    pub stance: Stance,
    pub flags: Vec<PartyFlag>,
    /// Why, for each flag that takes weight away ([`PartyFlag::reason`]).
    pub flag_reasons: Vec<(PartyFlag, String)>,
}

/// One remote origin instance, with its remote controllers collapsed inside it.
#[derive(Debug, Clone, PartialEq)]
pub struct InstancePartyExplanation {
    /// The origin realm, e.g. `beta.test`.
    pub origin: String,
    /// Active records from this origin.
    pub records: u32,
    /// Distinct remote controllers among them.
    pub remote_controllers: u32,
    /// t_I as used.
    pub instance_trust: f64,
    /// r_I and s_I after the per-controller collapse, before discounting.
    pub raw_belief: f64,
    pub raw_disbelief: f64,
    /// f_I = min(λ_I, C_INST / m_I).
    pub discount_factor: f64,
    /// f_I·r_I and f_I·s_I.
    pub belief: f64,
    pub disbelief: f64,
    /// Which bound produced the discount.
    pub bound: InstanceBound,
    pub stance: Stance,
    pub flags: Vec<PartyFlag>,
}

/// A party row.
#[derive(Debug, Clone, PartialEq)]
pub enum PartyExplanation {
    Controller(ControllerPartyExplanation),
    Instance(InstancePartyExplanation),
}

impl PartyExplanation {
    /// `ctrl:<id>` or `instance:<origin>`, as in the example explanation.
    pub fn label(&self) -> String {
        match self {
            PartyExplanation::Controller(row) => format!("ctrl:{}", row.controller),
            PartyExplanation::Instance(row) => format!("instance:{}", row.origin),
        }
    }
}

/// Records held but weighing nothing, by reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ExcludedCounts {
    /// Records by the target author's own root controller.
    pub self_evidence: u32,
    /// Remote records whose origin signature is missing or invalid.
    pub unsigned_remote: u32,
    /// Instances with evidence on the target whose trust is 0 (unknown, blocked or quarantined).
    pub weight0_instances: u32,
    /// The records of those instances.
    pub weight0_instance_records: u32,
    /// Retracted records.
    pub retracted: u32,
    /// Reviews replaced by a later review of the same actor.
    pub superseded_reviews: u32,
}

/// The full explanation of §2.13.
#[derive(Debug, Clone, PartialEq)]
pub struct Explanation {
    pub target_id: String,
    /// Always `trust-v1`.
    pub model_version: &'static str,
    /// The short parameter summary, e.g. `W=2,a=0.5,C_CTRL=1,C_INST=3,h=365d,interval=beta-90%`.
    pub parameters: String,
    /// [`TrustParameters::parameter_hash`].
    pub parameter_hash: String,
    /// The reputation snapshot the records' ρ came from.
    pub reputation_epoch: String,
    /// The instance-trust table's epoch.
    pub instance_trust_epoch: String,
    /// The `now` of the evaluation.
    pub computed_at: DateTime<Utc>,
    /// The epoch of the fixed-point sums (§4); part of the state's identity.
    pub fixed_point_epoch: DateTime<Utc>,
    /// Value, interval, opinion, evidence units, counts and status.
    pub assessment: Assessment,
    /// Active `cannot_verify` reviews (counted only).
    pub reviews_cannot_verify: u32,
    /// First-party controllers by id, then the author's own row if any, then instances by origin.
    pub parties: Vec<PartyExplanation>,
    pub excluded: ExcludedCounts,
}

/// A first-party controller row as both computation paths hold it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ControllerRowView<'a> {
    pub(crate) controller: &'a str,
    pub(crate) records: u32,
    pub(crate) belief_fixed: i128,
    pub(crate) disbelief_fixed: i128,
    pub(crate) cap_shape: Option<CapShape>,
    pub(crate) real_world_success: bool,
    pub(crate) eligible_strong_refutation: bool,
    pub(crate) ineligible_strong_refutation: bool,
    pub(crate) outdated_signal: bool,
}

/// An instance's record and controller counts as both computation paths hold them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct InstanceRowView {
    pub(crate) records: u32,
    pub(crate) remote_controllers: u32,
    pub(crate) real_world_success: bool,
    pub(crate) outdated_signal: bool,
}

/// Everything besides the assessment that the explanation reports.
pub(crate) struct ExplanationInputs<'a, 'b> {
    pub(crate) target_id: &'a str,
    pub(crate) author_controller: &'a str,
    pub(crate) self_evidence_records: u32,
    pub(crate) epoch: DateTime<Utc>,
    pub(crate) evaluation: &'a Evaluation<'b>,
    pub(crate) reputation_epoch: &'a str,
    pub(crate) params: &'a TrustParameters,
    pub(crate) reviews_cannot_verify: u32,
    pub(crate) excluded: ExcludedCounts,
}

fn flag_reasons(flags: &[PartyFlag], params: &TrustParameters) -> Vec<(PartyFlag, String)> {
    flags
        .iter()
        .filter_map(|flag| flag.reason(params).map(|reason| (*flag, reason)))
        .collect()
}

/// Builds the explanation from the assessment, the instance readings and the rows of both kinds.
pub(crate) fn build_explanation<'r>(
    inputs: ExplanationInputs<'_, '_>,
    assessment: Assessment,
    readings: Vec<InstanceReading>,
    controller_rows: impl Iterator<Item = ControllerRowView<'r>>,
    instance_rows: &[InstanceRowView],
) -> Explanation {
    let now_days = days_between(inputs.epoch, inputs.evaluation.now);
    let decay = decay_factor(now_days, inputs.params.half_life_days);
    let mut parties = Vec::new();
    for row in controller_rows {
        if row.records == 0 {
            continue;
        }
        let capped = row.cap_shape.is_some_and(|shape| shape.is_capped_at(now_days));
        let (belief, disbelief) = match (&row.cap_shape, capped) {
            (Some(shape), true) => (
                shape.capped_belief as f64 / FIXED_POINT_SCALE,
                shape.capped_disbelief as f64 / FIXED_POINT_SCALE,
            ),
            _ => (
                row.belief_fixed as f64 * decay / FIXED_POINT_SCALE,
                row.disbelief_fixed as f64 * decay / FIXED_POINT_SCALE,
            ),
        };
        let mut flags = Vec::new();
        if row.real_world_success {
            flags.push(PartyFlag::RealWorldSuccess);
        }
        if row.eligible_strong_refutation {
            flags.push(PartyFlag::StrongRefutation);
        }
        if row.ineligible_strong_refutation {
            flags.push(PartyFlag::IneligibleStrongRefutation);
        }
        if row.outdated_signal {
            flags.push(PartyFlag::OutdatedSignal);
        }
        let flag_reasons = flag_reasons(&flags, inputs.params);
        parties.push(PartyExplanation::Controller(ControllerPartyExplanation {
            controller: row.controller.to_string(),
            records: row.records,
            belief,
            disbelief,
            capped,
            stance: if row.belief_fixed > row.disbelief_fixed {
                Stance::Positive
            } else if row.belief_fixed < row.disbelief_fixed {
                Stance::Negative
            } else {
                Stance::Neutral
            },
            flags,
            flag_reasons,
        }));
    }
    if inputs.self_evidence_records > 0 {
        parties.push(PartyExplanation::Controller(ControllerPartyExplanation {
            controller: inputs.author_controller.to_string(),
            records: inputs.self_evidence_records,
            belief: 0.0,
            disbelief: 0.0,
            capped: false,
            stance: Stance::Neutral,
            flags: vec![PartyFlag::SelfEvidence],
            flag_reasons: flag_reasons(&[PartyFlag::SelfEvidence], inputs.params),
        }));
    }
    let mut excluded = inputs.excluded;
    for (reading, row) in readings.into_iter().zip(instance_rows) {
        if reading.discount.instance_trust <= 0.0 {
            excluded.weight0_instances += 1;
            excluded.weight0_instance_records += row.records;
        }
        let mut flags = Vec::new();
        if row.real_world_success {
            flags.push(PartyFlag::RealWorldSuccess);
        }
        if row.outdated_signal {
            flags.push(PartyFlag::OutdatedSignal);
        }
        parties.push(PartyExplanation::Instance(InstancePartyExplanation {
            origin: reading.origin,
            records: row.records,
            remote_controllers: row.remote_controllers,
            instance_trust: reading.discount.instance_trust,
            raw_belief: reading.raw.belief,
            raw_disbelief: reading.raw.disbelief,
            discount_factor: reading.discount.discount_factor,
            belief: reading.discounted.belief,
            disbelief: reading.discounted.disbelief,
            bound: reading.discount.bound,
            stance: reading.stance,
            flags,
        }));
    }
    Explanation {
        target_id: inputs.target_id.to_string(),
        model_version: MODEL_VERSION,
        parameters: inputs.params.summary(),
        parameter_hash: inputs.params.parameter_hash(),
        reputation_epoch: inputs.reputation_epoch.to_string(),
        instance_trust_epoch: inputs.evaluation.instance_trust.epoch().to_string(),
        computed_at: inputs.evaluation.now,
        fixed_point_epoch: inputs.epoch,
        assessment,
        reviews_cannot_verify: inputs.reviews_cannot_verify,
        parties,
        excluded,
    }
}
