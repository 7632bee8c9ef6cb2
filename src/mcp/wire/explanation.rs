//! Wire types of the full trust explanation that `get` returns with `include: ["explanation"]`.

use schemars::JsonSchema;
use serde::Serialize;

use super::round;
use crate::service::trust::ExplainedTrust;
use crate::trust::{InstanceBound, PartyExplanation};

/// One party row of an explanation.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PartyOutput {
    /// `ctrl:<root controller>` or `instance:<origin realm>`.
    pub party: String,
    /// Active records of the party on the target.
    pub records: u32,
    /// Belief units after caps and discounts.
    pub r: f64,
    /// Disbelief units after caps and discounts.
    pub s: f64,
    /// Controllers: whether the one-unit cap binds now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capped: Option<bool>,
    /// +, 0 or -.
    pub stance: String,
    /// real_world_success, strong_refutation, ineligible_strong_refutation, outdated_signal, self.
    pub flags: Vec<String>,
    /// Why, for each flag that takes weight away (ineligible_strong_refutation, self).
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub flag_reasons: std::collections::BTreeMap<String, String>,
    /// Instances: distinct remote controllers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote_controllers: Option<u32>,
    /// Instances: the trust this instance gives the origin.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance_trust: Option<f64>,
    /// Instances: why (`level:standard; agreement 10/0`, `pinned; …`, `blocked; …`, `quarantine; …`,
    /// `state:pending_out; …`, or `not a peer`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance_trust_reason: Option<String>,
    /// Instances: belief units before discounting.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_r: Option<f64>,
    /// Instances: disbelief units before discounting.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_s: Option<f64>,
    /// Instances: the factor applied.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub discount_factor: Option<f64>,
    /// Instances: which bound produced the factor.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cap_binding: Option<String>,
}

/// The full trust explanation (trust model §2.13).
#[derive(Debug, Serialize, JsonSchema)]
pub struct ExplanationOutput {
    /// The revision, claim or entity explained.
    pub target: String,
    /// Always trust-v1.
    pub model_version: String,
    /// The parameters in short form.
    pub params: String,
    /// A stable hash of the parameters.
    pub parameter_hash: String,
    /// The reputation snapshot used.
    pub reputation_epoch: String,
    /// The instance-trust table's epoch.
    pub instance_trust_epoch: String,
    /// When it was computed (RFC 3339).
    pub computed_at: String,
    /// Posterior mean.
    pub value: f64,
    /// 5% quantile.
    pub lower_bound: f64,
    /// 95% quantile.
    pub upper_bound: f64,
    /// Subjective-logic opinion: belief, disbelief, uncertainty, base rate.
    pub opinion: std::collections::BTreeMap<String, f64>,
    /// Evidence units after caps, split first_party / remote, each with r and s.
    pub evidence_units: std::collections::BTreeMap<String, std::collections::BTreeMap<String, f64>>,
    /// Counts with their first-party split.
    pub independent_confirmations: std::collections::BTreeMap<String, u32>,
    /// Counts with their first-party split.
    pub contradictions: std::collections::BTreeMap<String, u32>,
    /// Counts with their first-party split.
    pub real_world_confirmations: std::collections::BTreeMap<String, u32>,
    /// Eligible first-party strong refuters.
    pub strong_refutations_first_party: u32,
    /// Active cannot_verify reviews (counted only).
    pub reviews_cannot_verify: u32,
    /// The status.
    pub status: String,
    /// The rule that decided it.
    pub rule: String,
    /// Why.
    pub reason: String,
    /// Whose evidence this explanation weighs: all or first_party (the `trust_view` asked for).
    pub trust_view: String,
    /// What this instance would say on first-party evidence alone (trust model §2.15).
    pub first_party_only: FirstPartyOnlyOutput,
    /// One row per party.
    pub parties: Vec<PartyOutput>,
    /// Records held but weighing nothing, by reason.
    pub excluded: std::collections::BTreeMap<String, u32>,
}

/// The assessment on first-party evidence alone.
#[derive(Debug, Serialize, JsonSchema)]
pub struct FirstPartyOnlyOutput {
    /// Posterior mean.
    pub value: f64,
    /// 5% quantile.
    pub lower_bound: f64,
    /// 95% quantile.
    pub upper_bound: f64,
    /// The status.
    pub status: String,
    /// The rule that decided it.
    pub rule: String,
}

fn stance_symbol(stance: crate::trust::Stance) -> String {
    stance.symbol().to_owned()
}

/// An explanation on the wire.
pub fn explanation_output(explained: &ExplainedTrust) -> ExplanationOutput {
    let explanation = &explained.explanation;
    let assessment = &explanation.assessment;
    let first_party_only = &explained.first_party_only;
    let split = |count: crate::trust::PartyCount| {
        std::collections::BTreeMap::from([
            ("total".to_owned(), count.total()),
            ("first_party".to_owned(), count.first_party),
        ])
    };
    let units = |units: crate::trust::Units| {
        std::collections::BTreeMap::from([
            ("r".to_owned(), round(units.belief)),
            ("s".to_owned(), round(units.disbelief)),
        ])
    };
    ExplanationOutput {
        target: explanation.target_id.clone(),
        model_version: explanation.model_version.to_owned(),
        params: explanation.parameters.clone(),
        parameter_hash: explanation.parameter_hash.clone(),
        reputation_epoch: explanation.reputation_epoch.clone(),
        instance_trust_epoch: explanation.instance_trust_epoch.clone(),
        computed_at: explanation.computed_at.to_rfc3339(),
        value: round(assessment.value),
        lower_bound: round(assessment.lower_bound),
        upper_bound: round(assessment.upper_bound),
        opinion: std::collections::BTreeMap::from([
            ("b".to_owned(), round(assessment.opinion.belief)),
            ("d".to_owned(), round(assessment.opinion.disbelief)),
            ("u".to_owned(), round(assessment.opinion.uncertainty)),
            ("a".to_owned(), round(assessment.opinion.base_rate)),
        ]),
        evidence_units: std::collections::BTreeMap::from([
            ("first_party".to_owned(), units(assessment.evidence_units.first_party)),
            ("remote".to_owned(), units(assessment.evidence_units.remote)),
        ]),
        independent_confirmations: split(assessment.counts.independent_confirmations),
        contradictions: split(assessment.counts.contradictions),
        real_world_confirmations: split(assessment.counts.real_world_confirmations),
        strong_refutations_first_party: assessment.counts.strong_refutations_first_party,
        reviews_cannot_verify: explanation.reviews_cannot_verify,
        status: assessment.status.as_str().to_owned(),
        rule: assessment.rule.as_str().to_owned(),
        reason: assessment.reason.clone(),
        trust_view: explained.scope.as_str().to_owned(),
        first_party_only: FirstPartyOnlyOutput {
            value: round(first_party_only.value),
            lower_bound: round(first_party_only.lower_bound),
            upper_bound: round(first_party_only.upper_bound),
            status: first_party_only.status.as_str().to_owned(),
            rule: first_party_only.rule.as_str().to_owned(),
        },
        parties: explanation
            .parties
            .iter()
            .map(|party| party_output(party, explained))
            .collect(),
        excluded: std::collections::BTreeMap::from([
            ("self_evidence".to_owned(), explanation.excluded.self_evidence),
            ("unsigned_remote".to_owned(), explanation.excluded.unsigned_remote),
            ("weight0_instances".to_owned(), explanation.excluded.weight0_instances),
            (
                "weight0_instance_records".to_owned(),
                explanation.excluded.weight0_instance_records,
            ),
            ("retracted".to_owned(), explanation.excluded.retracted),
            ("superseded_reviews".to_owned(), explanation.excluded.superseded_reviews),
        ]),
    }
}

fn party_output(party: &PartyExplanation, explained: &ExplainedTrust) -> PartyOutput {
    match party {
        PartyExplanation::Controller(row) => PartyOutput {
            party: party.label(),
            records: row.records,
            r: round(row.belief),
            s: round(row.disbelief),
            capped: Some(row.capped),
            stance: stance_symbol(row.stance),
            flags: row.flags.iter().map(|flag| flag.as_str().to_owned()).collect(),
            flag_reasons: row
                .flag_reasons
                .iter()
                .map(|(flag, reason)| (flag.as_str().to_owned(), reason.clone()))
                .collect(),
            remote_controllers: None,
            instance_trust: None,
            instance_trust_reason: None,
            raw_r: None,
            raw_s: None,
            discount_factor: None,
            cap_binding: None,
        },
        PartyExplanation::Instance(row) => PartyOutput {
            party: party.label(),
            records: row.records,
            r: round(row.belief),
            s: round(row.disbelief),
            capped: None,
            stance: stance_symbol(row.stance),
            flags: row.flags.iter().map(|flag| flag.as_str().to_owned()).collect(),
            flag_reasons: std::collections::BTreeMap::new(),
            remote_controllers: Some(row.remote_controllers),
            instance_trust: Some(row.instance_trust),
            instance_trust_reason: explained.origin_reasons.get(&row.origin).cloned(),
            raw_r: Some(round(row.raw_belief)),
            raw_s: Some(round(row.raw_disbelief)),
            discount_factor: Some(row.discount_factor),
            cap_binding: Some(match row.bound {
                InstanceBound::Quarantined => "quarantined: instance trust 0".to_owned(),
                InstanceBound::TrustDiscount { saturation } => format!("SL bound W*t/(1-t)={saturation:.4}"),
                InstanceBound::InstanceCap { cap } => format!("C_INST={cap}"),
            }),
        },
    }
}
