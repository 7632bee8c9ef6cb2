//! The status rules R1–R11 of §2.8 as one pure function of a small set of facts. First match wins.
//!
//! The facts are computed by the target state (from maintained counters) or by the full recomputation (by scanning),
//! so the rules themselves are written once and can be tested rule by rule.

use crate::domain::TrustStatus;

use super::params::TrustParameters;

/// The rule that decided a status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum StatusRule {
    R1,
    R2,
    R3,
    R4,
    R5,
    R6,
    R7,
    R8,
    R9,
    R10,
    R11,
}

impl StatusRule {
    /// `R1` … `R11`.
    pub fn as_str(self) -> &'static str {
        match self {
            StatusRule::R1 => "R1",
            StatusRule::R2 => "R2",
            StatusRule::R3 => "R3",
            StatusRule::R4 => "R4",
            StatusRule::R5 => "R5",
            StatusRule::R6 => "R6",
            StatusRule::R7 => "R7",
            StatusRule::R8 => "R8",
            StatusRule::R9 => "R9",
            StatusRule::R10 => "R10",
            StatusRule::R11 => "R11",
        }
    }
}

/// Everything the status rules read. Success counts after a time are "at least" counts: they are counted up to the
/// larger of the contest and answer thresholds and no further, which is all the rules compare.
#[derive(Debug, Clone, PartialEq)]
pub struct StatusFacts {
    /// R1: a newer revision or an accepted superseding claim exists.
    pub superseded: bool,
    pub value: f64,
    pub lower_bound: f64,
    pub upper_bound: f64,
    /// The upper bound of the first-party posterior alone, which R5 reads (§2.15).
    pub first_party_upper_bound: f64,
    /// R: total belief mass after caps and discounts.
    pub belief_mass: f64,
    /// S: total disbelief mass after caps and discounts.
    pub disbelief_mass: f64,
    /// Parties (first-party controllers and trusted instances) with positive stance.
    pub independent_confirmations: u32,
    /// Parties with positive stance and at least one real-world success.
    pub real_world_confirmations: u32,
    /// First-party controllers with negative stance.
    pub first_party_contradictions: u32,
    /// Trusted remote instances with negative stance.
    pub remote_contradicting_instances: u32,
    /// Eligible first-party controllers with a strong refutation and negative stance.
    pub refuters: u32,
    /// succ_after(T_proof): first-party controllers with positive stance and a real-world success after the proof.
    /// Only meaningful when `refuters` reaches the proof threshold.
    pub successes_after_proof: u32,
    /// succ_after(T_ref) for a single refuter. Only meaningful when `refuters == 1`.
    pub successes_after_single_refutation: u32,
    /// First-party controllers with an outdated signal (§2.15: remote signals never count).
    pub outdated_signalling_first_party: u32,
    /// succ_after(time of the 2nd outdated signal). Only meaningful when the signal counts are reached.
    pub successes_after_outdated_signal: u32,
}

/// A status with the rule that fired and a one-line reason.
#[derive(Debug, Clone, PartialEq)]
pub struct StatusDecision {
    pub status: TrustStatus,
    pub rule: StatusRule,
    pub reason: String,
}

/// Whether the outdated rule of §2.8 holds: enough first-party controllers signalled obsolescence (§2.15: remote
/// signals never count), and fewer than the answer threshold of real-world successes came after the deciding signal.
pub fn outdated_rule_holds(facts: &StatusFacts, params: &TrustParameters) -> bool {
    facts.outdated_signalling_first_party >= params.outdated_min_parties
        && facts.successes_after_outdated_signal < params.successes_to_answer_refutation
}

/// The status rules R1–R11 (§2.8), first match wins.
pub fn decide_status(facts: &StatusFacts, params: &TrustParameters) -> StatusDecision {
    let decision = |status, rule, reason: String| StatusDecision { status, rule, reason };
    let proven = facts.refuters >= params.refuters_for_proof;
    let outdated = outdated_rule_holds(facts, params);
    let total_mass = facts.belief_mass + facts.disbelief_mass;
    let disbelief_share = if total_mass > 0.0 {
        facts.disbelief_mass / total_mass
    } else {
        0.0
    };

    if facts.superseded {
        return decision(
            TrustStatus::Superseded,
            StatusRule::R1,
            "a newer revision or an accepted superseding claim exists".to_string(),
        );
    }
    if proven && facts.successes_after_proof >= params.successes_to_contest_proof {
        return decision(
            TrustStatus::Disputed,
            StatusRule::R2,
            format!(
                "proof by {} first-party strong refutations contested by {} later independent real-world successes",
                facts.refuters, facts.successes_after_proof
            ),
        );
    }
    if proven && outdated {
        return decision(
            TrustStatus::Outdated,
            StatusRule::R3,
            format!(
                "{} first-party strong refutations explained by {} outdated signals",
                facts.refuters, facts.outdated_signalling_first_party
            ),
        );
    }
    if proven {
        return decision(
            TrustStatus::Incorrect,
            StatusRule::R4,
            format!("{} independent first-party strong refutations", facts.refuters),
        );
    }
    if facts.first_party_upper_bound < params.statistical_incorrect_max_upper_bound
        && facts.first_party_contradictions >= params.statistical_incorrect_min_contradictions
    {
        return decision(
            TrustStatus::Incorrect,
            StatusRule::R5,
            format!(
                "first-party upper bound {:.3} below {} with {} first-party contradictions",
                facts.first_party_upper_bound,
                params.statistical_incorrect_max_upper_bound,
                facts.first_party_contradictions
            ),
        );
    }
    if outdated {
        return decision(
            TrustStatus::Outdated,
            StatusRule::R6,
            format!(
                "{} parties signal obsolescence and fewer than {} real-world successes came after",
                facts.outdated_signalling_first_party, params.successes_to_answer_refutation
            ),
        );
    }
    if facts.refuters == 1 && facts.successes_after_single_refutation < params.successes_to_answer_refutation {
        return decision(
            TrustStatus::Disputed,
            StatusRule::R7,
            format!(
                "1 first-party strong refutation answered by {} of {} needed later real-world successes",
                facts.successes_after_single_refutation, params.successes_to_answer_refutation
            ),
        );
    }
    if (facts.first_party_contradictions >= 1
        || facts.remote_contradicting_instances >= params.disputed_min_remote_instances)
        && facts.disbelief_mass >= params.disputed_min_disbelief_mass
        && disbelief_share >= params.disputed_min_disbelief_share
    {
        return decision(
            TrustStatus::Disputed,
            StatusRule::R8,
            format!(
                "contradicting evidence S = {:.3} is {:.0}% of the evidence mass",
                facts.disbelief_mass,
                disbelief_share * 100.0
            ),
        );
    }
    if facts.lower_bound >= params.high_confidence_min_lower_bound
        && facts.independent_confirmations >= params.high_confidence_min_confirmations
        && facts.real_world_confirmations >= params.high_confidence_min_real_world
        && facts.refuters == 0
    {
        return decision(
            TrustStatus::HighConfidence,
            StatusRule::R9,
            format!(
                "lower bound {:.3} from {} independent confirmations, {} real-world",
                facts.lower_bound, facts.independent_confirmations, facts.real_world_confirmations
            ),
        );
    }
    if facts.value >= params.supported_min_value
        && total_mass >= params.supported_min_mass
        && facts.independent_confirmations >= params.supported_min_confirmations
    {
        return decision(
            TrustStatus::Supported,
            StatusRule::R10,
            format!(
                "value {:.3} from {} independent confirmations",
                facts.value, facts.independent_confirmations
            ),
        );
    }
    decision(
        TrustStatus::Unverified,
        StatusRule::R11,
        "not enough independent evidence".to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quiet_facts() -> StatusFacts {
        StatusFacts {
            superseded: false,
            value: 0.5,
            lower_bound: 0.05,
            upper_bound: 0.95,
            first_party_upper_bound: 0.95,
            belief_mass: 0.0,
            disbelief_mass: 0.0,
            independent_confirmations: 0,
            real_world_confirmations: 0,
            first_party_contradictions: 0,
            remote_contradicting_instances: 0,
            refuters: 0,
            successes_after_proof: 0,
            successes_after_single_refutation: 0,
            outdated_signalling_first_party: 0,
            successes_after_outdated_signal: 0,
        }
    }

    #[test]
    fn every_rule_fires_on_its_own_facts() {
        let params = TrustParameters::with_open_gate();
        let rule_of = |facts: &StatusFacts| decide_status(facts, &params).rule;
        assert_eq!(rule_of(&quiet_facts()), StatusRule::R11);
        assert_eq!(
            rule_of(&StatusFacts {
                superseded: true,
                refuters: 5,
                ..quiet_facts()
            }),
            StatusRule::R1
        );
        let proven = StatusFacts {
            refuters: 2,
            ..quiet_facts()
        };
        assert_eq!(rule_of(&proven), StatusRule::R4);
        assert_eq!(
            rule_of(&StatusFacts {
                successes_after_proof: 4,
                ..proven.clone()
            }),
            StatusRule::R2
        );
        assert_eq!(
            rule_of(&StatusFacts {
                successes_after_proof: 3,
                ..proven.clone()
            }),
            StatusRule::R4
        );
        let outdated = StatusFacts {
            outdated_signalling_first_party: 2,
            ..quiet_facts()
        };
        assert_eq!(
            rule_of(&StatusFacts {
                refuters: 2,
                ..outdated.clone()
            }),
            StatusRule::R3
        );
        assert_eq!(rule_of(&outdated), StatusRule::R6);
        assert_eq!(
            rule_of(&StatusFacts {
                successes_after_outdated_signal: 2,
                ..outdated.clone()
            }),
            StatusRule::R11
        );
        // §2.15: one first-party signal is not enough, whatever remote instances signal.
        assert_eq!(
            rule_of(&StatusFacts {
                outdated_signalling_first_party: 1,
                ..outdated
            }),
            StatusRule::R11
        );
        assert_eq!(
            rule_of(&StatusFacts {
                first_party_upper_bound: 0.34,
                first_party_contradictions: 2,
                ..quiet_facts()
            }),
            StatusRule::R5
        );
        // §2.15: R5 reads the first-party posterior: a low bound of all evidence is not a statistical refutation.
        assert_eq!(
            rule_of(&StatusFacts {
                upper_bound: 0.34,
                first_party_contradictions: 2,
                ..quiet_facts()
            }),
            StatusRule::R11
        );
        assert_eq!(
            rule_of(&StatusFacts {
                refuters: 1,
                ..quiet_facts()
            }),
            StatusRule::R7
        );
        assert_eq!(
            rule_of(&StatusFacts {
                refuters: 1,
                successes_after_single_refutation: 2,
                ..quiet_facts()
            }),
            StatusRule::R11
        );
        let contested = StatusFacts {
            first_party_contradictions: 1,
            belief_mass: 1.5,
            disbelief_mass: 0.5,
            ..quiet_facts()
        };
        assert_eq!(rule_of(&contested), StatusRule::R8);
        assert_eq!(
            rule_of(&StatusFacts {
                disbelief_mass: 0.49,
                ..contested.clone()
            }),
            StatusRule::R11
        );
        assert_eq!(
            rule_of(&StatusFacts {
                first_party_contradictions: 0,
                remote_contradicting_instances: 1,
                ..contested.clone()
            }),
            StatusRule::R11
        );
        assert_eq!(
            rule_of(&StatusFacts {
                first_party_contradictions: 0,
                remote_contradicting_instances: 2,
                ..contested
            }),
            StatusRule::R8
        );
        let confident = StatusFacts {
            value: 0.9,
            lower_bound: 0.70,
            belief_mass: 8.0,
            independent_confirmations: 3,
            real_world_confirmations: 1,
            ..quiet_facts()
        };
        assert_eq!(rule_of(&confident), StatusRule::R9);
        assert_eq!(
            rule_of(&StatusFacts {
                real_world_confirmations: 0,
                ..confident.clone()
            }),
            StatusRule::R10
        );
        assert_eq!(
            rule_of(&StatusFacts {
                lower_bound: 0.699,
                ..confident.clone()
            }),
            StatusRule::R10
        );
        assert_eq!(
            rule_of(&StatusFacts {
                refuters: 1,
                successes_after_single_refutation: 2,
                ..confident.clone()
            }),
            StatusRule::R10
        );
        assert_eq!(
            rule_of(&StatusFacts {
                lower_bound: 0.5,
                belief_mass: 0.79,
                ..confident
            }),
            StatusRule::R11
        );
    }

    #[test]
    fn reasons_are_one_line() {
        let params = TrustParameters::default();
        let decision = decide_status(
            &StatusFacts {
                refuters: 2,
                ..quiet_facts()
            },
            &params,
        );
        assert_eq!(decision.reason, "2 independent first-party strong refutations");
        assert!(!decision.reason.contains('\n'));
        assert_eq!(decision.status.as_str(), "incorrect");
        assert_eq!(decision.rule.as_str(), "R4");
    }
}
