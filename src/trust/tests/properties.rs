//! The properties P1–P20 of §3 with the spec's reference numbers, and the "further tests" on review supersession,
//! reputation bounds and self-evidence.

use super::*;
use crate::domain::TrustStatus;
use crate::domain::evidence::{Grounding, UsageOutcome, Verdict};
use crate::trust::error::TrustError;
use crate::trust::status::StatusRule;
use crate::trust::target::RetractionAuthority;

fn open() -> TrustParameters {
    TrustParameters::with_open_gate()
}

fn empty_table() -> InstanceTrustTable {
    InstanceTrustTable::new("e")
}

/// `count` real-world reports with `result` from `origin`, each by a different remote controller.
fn flood(evidence: &mut Evidence, origin: &str, count: usize, days: f64, result: UsageOutcome) {
    for index in 0..count {
        evidence.remote_usage(origin, &format!("usr_{origin}_{index}"), days, result);
    }
}

#[test]
fn p1_agents_of_one_root_controller_collapse_into_one_party() {
    let params = open();
    let table = empty_table();
    let mut hundred = Evidence::default();
    for agent in 0..100 {
        hundred.usage_by(
            None,
            "usr_op",
            &format!("ai_op_{agent}"),
            0.0,
            true,
            UsageOutcome::Success,
        );
    }
    let mut one = Evidence::default();
    one.success("usr_op", 0.0);
    let many = full(&hundred.records, &params, 0.0, &table);
    let single = full(&one.records, &params, 0.0, &table);
    assert_printed(many.value, 0.6667, 4, "value");
    assert_printed(many.lower_bound, 0.2236, 4, "lower");
    assert_printed(many.upper_bound, 0.9747, 4, "upper");
    assert_eq!(many.counts.independent_confirmations.total(), 1);
    assert_eq!(many.counts.real_world_confirmations.total(), 1);
    assert_bit_identical(&many, &single);

    let mut mixed = Evidence::default();
    for agent in 0..100 {
        let result = if agent < 60 {
            UsageOutcome::Success
        } else {
            UsageOutcome::Failure
        };
        mixed.usage_by(None, "usr_op", &format!("ai_op_{agent}"), 0.0, true, result);
    }
    let collapsed = full(&mixed.records, &params, 0.0, &table);
    assert_printed(collapsed.evidence_units.first_party.belief, 0.6, 12, "R");
    assert_printed(collapsed.evidence_units.first_party.disbelief, 0.4, 12, "S");
}

#[test]
fn p2_an_instance_at_trust_zero_changes_nothing() {
    let params = open();
    let table = InstanceTrustTable::new("e").with("zero.test", 0.0);
    let mut evidence = Evidence::default();
    evidence.success("b", 0.0);
    evidence.review(None, "c", 1.0, Verdict::MostlyCorrect, 0.9, Grounding::OwnTestUsage);
    let before = full(&evidence.records, &params, 5.0, &table);
    assert_eq!(before.status, TrustStatus::Supported);
    flood(&mut evidence, "zero.test", 10_000, 2.0, UsageOutcome::Success);
    // An origin missing from the table is unknown and weighs 0 too.
    flood(&mut evidence, "unknown.test", 100, 2.0, UsageOutcome::Failure);
    let after = full(&evidence.records, &params, 5.0, &table);
    assert_bit_identical(&before, &after);
    let mut state =
        TargetState::from_records(target(), params.clone(), day_zero(), &evidence.records).expect("valid records");
    let explanation = state.explain(&at(5.0, &table), "r");
    assert_eq!(explanation.excluded.weight0_instances, 2);
    assert_eq!(explanation.excluded.weight0_instance_records, 10_100);
}

#[test]
fn p3_a_flood_cannot_lift_a_refuted_claim() {
    let params = open();
    let mut evidence = Evidence::default();
    for controller in ["b", "c", "d"] {
        evidence.success(controller, 0.0);
    }
    evidence.failure("r1", 0.0);
    evidence.failure("r2", 0.0);
    let none = empty_table();
    let refuted = full(&evidence.records, &params, 0.0, &none);
    assert_printed(refuted.value, 0.571, 3, "value");
    assert_eq!(refuted.status, TrustStatus::Incorrect);

    let mut flooded = evidence.clone();
    flood(&mut flooded, "peer.test", 10_000, 0.0, UsageOutcome::Success);
    let half = InstanceTrustTable::new("e").with("peer.test", 0.5);
    let at_half = full(&flooded.records, &params, 0.0, &half);
    assert_printed(at_half.evidence_units.remote.belief, 1.9992, 4, "R_remote at 0.5");
    assert_printed(at_half.value, 0.667, 3, "value at 0.5");
    assert_eq!(at_half.status, TrustStatus::Incorrect);
    let high = InstanceTrustTable::new("e").with("peer.test", 0.9);
    let at_high = full(&flooded.records, &params, 0.0, &high);
    assert_printed(at_high.evidence_units.remote.belief, 3.0, 9, "R_remote at 0.9");
    assert_printed(at_high.value, 0.700, 3, "value at 0.9");
    assert_eq!(at_high.status, TrustStatus::Incorrect);

    let mut five_peers = evidence.clone();
    let mut table = InstanceTrustTable::new("e");
    for peer in 0..5 {
        let origin = format!("peer{peer}.test");
        flood(&mut five_peers, &origin, 2_000, 0.0, UsageOutcome::Success);
        table.set(origin, 0.9);
    }
    let many = full(&five_peers.records, &params, 0.0, &table);
    assert_printed(many.evidence_units.remote.belief, 15.0, 9, "R_remote from 5 peers");
    assert_printed(many.value, 0.864, 3, "value with 5 peers");
    assert!(matches!(many.status, TrustStatus::Incorrect | TrustStatus::Disputed));
    assert_eq!(many.status, TrustStatus::Incorrect);
}

/// §2.15: R5 reads the first-party posterior's upper bound, and the outdated rule first-party signals only, so a
/// peer can neither lift a statistical refutation nor make a proven claim outdated.
#[test]
fn p3b_remote_evidence_cannot_lift_a_statistical_refutation_nor_explain_a_proof_as_obsolescence() {
    let params = open();
    let mut evidence = Evidence::default();
    // Seven first-party controllers, each with four failed test uses (0.3 units each, capped at one unit): seven
    // units of disbelief and no strong refutation.
    for controller in ["c1", "c2", "c3", "c4", "c5", "c6", "c7"] {
        for _ in 0..4 {
            evidence.usage_by(
                None,
                controller,
                &agent_of(controller),
                0.0,
                false,
                UsageOutcome::Failure,
            );
        }
    }
    let none = empty_table();
    let refuted = full(&evidence.records, &params, 0.0, &none);
    assert_eq!((refuted.status, refuted.rule.as_str()), (TrustStatus::Incorrect, "R5"));
    let mut flooded = evidence.clone();
    flood(&mut flooded, "peer.test", 10_000, 0.0, UsageOutcome::Success);
    let half = InstanceTrustTable::new("e").with("peer.test", 0.5);
    let at_half = full(&flooded.records, &params, 0.0, &half);
    assert!(
        at_half.upper_bound > params.statistical_incorrect_max_upper_bound,
        "the flood lifts the bound of all evidence"
    );
    assert_eq!((at_half.status, at_half.rule.as_str()), (TrustStatus::Incorrect, "R5"));

    // Proven (two refuters), then one first-party and one remote `outdated` review: the proof stands (R4, not R3).
    let mut proven = Evidence::default();
    proven.failure("r1", 0.0);
    proven.failure("r2", 0.0);
    proven.review(None, "o1", 1.0, Verdict::Outdated, 0.9, Grounding::OwnRealWorldUsage);
    proven.review(
        Some("peer.test"),
        "o2",
        1.0,
        Verdict::Outdated,
        0.9,
        Grounding::OwnRealWorldUsage,
    );
    let assessed = full(&proven.records, &params, 2.0, &half);
    assert_eq!(
        (assessed.status, assessed.rule.as_str()),
        (TrustStatus::Incorrect, "R4")
    );
    // A second first-party signal explains it.
    proven.review(None, "o3", 1.5, Verdict::Outdated, 0.9, Grounding::OwnRealWorldUsage);
    let explained = full(&proven.records, &params, 2.0, &half);
    assert_eq!(
        (explained.status, explained.rule.as_str()),
        (TrustStatus::Outdated, "R3")
    );
}

#[test]
fn p4_retraction_restores_the_exact_prior_state() {
    let params = open();
    let table = InstanceTrustTable::new("e").with("peer.test", 0.6);
    let mut evidence = Evidence::default();
    evidence.success("b", 0.0);
    evidence.failure("c", 3.0);
    evidence.review(None, "d", 4.0, Verdict::Questionable, 0.7, Grounding::OwnTestUsage);
    evidence.usage_by(None, "e", "ai_e", 5.0, false, UsageOutcome::Partial);
    flood(&mut evidence, "peer.test", 7, 6.0, UsageOutcome::Failure);
    let mut state =
        TargetState::from_records(target(), params.clone(), day_zero(), &evidence.records).expect("valid records");
    let before = state.assess(&at(30.0, &table));
    let explained_before = state.explain(&at(30.0, &table), "r");
    let extra = evidence.failure("f", 20.0);
    state.add(&extra).expect("valid record");
    let with_extra = state.assess(&at(30.0, &table));
    assert!(with_extra.value < before.value);
    state
        .retract(&extra.record_id, &RetractionAuthority::Local)
        .expect("held record");
    let after = state.assess(&at(30.0, &table));
    assert_bit_identical(&before, &after);
    let explained_after = state.explain(&at(30.0, &table), "r");
    assert_eq!(explained_after.excluded.retracted, 1);
    assert_eq!(explained_after.parties, explained_before.parties);
    assert_eq!(explained_after.assessment, explained_before.assessment);
}

#[test]
fn p5_any_permutation_of_the_records_gives_an_identical_output() {
    let params = open();
    let table = InstanceTrustTable::new("e")
        .with("peer.test", 0.5)
        .with("other.test", 0.8);
    let records = mixed_records(400, 7);
    let mut reference_state =
        TargetState::from_records(target(), params.clone(), day_zero(), &records).expect("valid records");
    let reference = reference_state.assess(&at(400.0, &table));
    let reference_explanation = reference_state.explain(&at(400.0, &table), "r");
    let mut generator = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..200 {
        let mut shuffled = records.clone();
        for index in (1..shuffled.len()).rev() {
            generator ^= generator << 13;
            generator ^= generator >> 7;
            generator ^= generator << 17;
            shuffled.swap(index, (generator % (index as u64 + 1)) as usize);
        }
        let mut state =
            TargetState::from_records(target(), params.clone(), day_zero(), &shuffled).expect("valid records");
        assert_bit_identical(&state.assess(&at(400.0, &table)), &reference);
        assert_eq!(state.explain(&at(400.0, &table), "r"), reference_explanation);
        assert_bit_identical(&full(&shuffled, &params, 400.0, &table), &reference);
    }
}

/// `count` mixed records over 30 controllers, 2 peers and 300 days, generated deterministically from `seed`.
pub(super) fn mixed_records(count: usize, seed: u64) -> Vec<EvidenceRecord> {
    let mut evidence = Evidence::default();
    let mut generator = seed.wrapping_mul(0x2545_f491_4f6c_dd1d) | 1;
    let mut next = |modulus: u64| {
        generator ^= generator << 13;
        generator ^= generator >> 7;
        generator ^= generator << 17;
        generator % modulus
    };
    let verdicts = [
        Verdict::Confirmed,
        Verdict::MostlyCorrect,
        Verdict::Questionable,
        Verdict::Misleading,
        Verdict::Contradicted,
        Verdict::False,
        Verdict::Outdated,
        Verdict::CannotVerify,
    ];
    let results = [
        UsageOutcome::Success,
        UsageOutcome::Partial,
        UsageOutcome::Failure,
        UsageOutcome::Unknown,
    ];
    let groundings = [
        Grounding::Ungrounded,
        Grounding::OwnTestUsage,
        Grounding::OwnRealWorldUsage,
    ];
    for _ in 0..count {
        let controller_number = next(30);
        let origin = match next(10) {
            0 => Some("peer.test"),
            1 => Some("other.test"),
            _ => None,
        };
        let controller = if controller_number == 29 {
            AUTHOR.to_string()
        } else {
            format!("usr_{controller_number}")
        };
        let actor = format!("ai_{controller_number}_{}", next(3));
        let days = next(300) as f64 + next(24) as f64 / 24.0;
        if next(3) == 0 {
            let verdict = verdicts[next(8) as usize];
            let confidence = next(11) as f64 / 10.0;
            let grounding = groundings[next(3) as usize];
            let record = evidence.push(
                origin,
                &controller,
                &actor,
                days,
                EvidenceKind::Review {
                    verdict,
                    confidence,
                    grounding,
                },
            );
            let _ = record;
        } else {
            let real_world_use = next(2) == 0;
            evidence.usage_by(
                origin,
                &controller,
                &actor,
                days,
                real_world_use,
                results[next(4) as usize],
            );
        }
        if let Some(last) = evidence.records.last_mut() {
            last.standing.reputation = 0.5 + next(8) as f64 / 10.0;
            last.origin_signature_valid = next(20) != 0;
        }
    }
    evidence.records
}

#[test]
fn p7_relayed_evidence_is_weighted_by_its_origin_only() {
    let params = open();
    let mut evidence = Evidence::default();
    // Q's 50 records arrive relayed by P: the record names its origin Q; the relay is not part of the record.
    flood(&mut evidence, "q.test", 50, 0.0, UsageOutcome::Success);
    let q_unknown = InstanceTrustTable::new("e").with("p.test", 0.9);
    assert_eq!(
        full(&evidence.records, &params, 0.0, &q_unknown)
            .evidence_units
            .remote
            .belief,
        0.0
    );
    let q_trusted = InstanceTrustTable::new("e").with("p.test", 0.9).with("q.test", 0.5);
    let q_only = full(&evidence.records, &params, 0.0, &q_trusted);
    assert_printed(q_only.evidence_units.remote.belief, 1.851852, 6, "Q via P");
    flood(&mut evidence, "p.test", 100, 0.0, UsageOutcome::Success);
    let both = full(&evidence.records, &params, 0.0, &q_trusted);
    assert_printed(both.evidence_units.remote.belief, 4.8519, 4, "P + Q");
    let mut state =
        TargetState::from_records(target(), params.clone(), day_zero(), &evidence.records).expect("valid records");
    let explanation = state.explain(&at(0.0, &q_trusted), "r");
    let instance_beliefs: Vec<(String, f64)> = explanation
        .parties
        .iter()
        .filter_map(|party| match party {
            crate::trust::explanation::PartyExplanation::Instance(row) => Some((row.origin.clone(), row.belief)),
            _ => None,
        })
        .collect();
    assert_eq!(instance_beliefs[0].0, "p.test");
    assert_printed(instance_beliefs[0].1, 3.0, 9, "P's own bucket");
    assert_printed(instance_beliefs[1].1, 1.851852, 6, "Q's bucket");
}

#[test]
fn p8_one_instance_contributes_at_most_min_of_c_inst_and_w_t_over_one_minus_t() {
    let params = open();
    // (trust, [(records, expected units, printed digits)]).
    type BoundCase = (f64, &'static [(usize, f64, u32)]);
    let cases: [BoundCase; 2] = [
        (
            0.5,
            &[
                (1, 0.4, 1),
                (3, 0.857, 3),
                (10, 1.43, 2),
                (100, 1.92, 2),
                (10_000, 1.9992, 4),
            ],
        ),
        (0.9, &[(1, 0.857, 3), (3, 2.35, 2), (10, 3.0, 9), (10_000, 3.0, 9)]),
    ];
    for (trust, expectations) in cases {
        let table = InstanceTrustTable::new("e").with("peer.test", trust);
        let bound = (params.instance_cap).min(params.prior_weight * trust / (1.0 - trust));
        for &(count, expected, digits) in expectations {
            let mut evidence = Evidence::default();
            flood(&mut evidence, "peer.test", count, 0.0, UsageOutcome::Success);
            let remote = full(&evidence.records, &params, 0.0, &table)
                .evidence_units
                .remote
                .belief;
            assert_printed(remote, expected, digits as i32, &format!("t = {trust}, N = {count}"));
            assert!(remote <= bound + 1e-12);
        }
    }
}

#[test]
fn p9_a_peer_cannot_retract_or_replace_a_local_record() {
    let params = open();
    let table = InstanceTrustTable::new("e").with("peer.test", 0.5);
    let mut evidence = Evidence::default();
    let local = evidence.success("b", 0.0);
    let remote = evidence.remote_usage("peer.test", "usr_x", 0.0, UsageOutcome::Success);
    let other_remote = evidence.remote_usage("other.test", "usr_y", 0.0, UsageOutcome::Success);
    let mut state =
        TargetState::from_records(target(), params.clone(), day_zero(), &evidence.records).expect("valid records");
    let before = state.assess(&at(1.0, &table));
    let peer = RetractionAuthority::Peer("peer.test".to_string());
    assert!(matches!(
        state.retract(&local.record_id, &peer),
        Err(TrustError::RetractionRefused { .. })
    ));
    assert!(matches!(
        state.retract(&other_remote.record_id, &peer),
        Err(TrustError::RetractionRefused { .. })
    ));
    assert_bit_identical(&state.assess(&at(1.0, &table)), &before);
    // A remote controller with the same id as a local one is a different party: it cannot replace the local row.
    let mut clash = evidence.clone();
    clash.remote_usage("peer.test", "b", 0.0, UsageOutcome::Failure);
    let with_clash = full(&clash.records, &params, 1.0, &table);
    assert_eq!(with_clash.counts.independent_confirmations.first_party, 1);
    assert_eq!(with_clash.evidence_units.first_party, before.evidence_units.first_party);
    // The peer may retract its own record.
    state
        .retract(&remote.record_id, &peer)
        .expect("a peer retracts its own record");
}

#[test]
fn p10_a_positive_record_never_lowers_the_value_on_a_fixed_scenario() {
    // The random version is in the property tests; this is the case the undecayed-cap variant got wrong: a party
    // with old records that adds a fresh positive record.
    let params = open();
    let table = empty_table();
    let mut evidence = Evidence::default();
    for _ in 0..5 {
        evidence.failure("c", 0.0);
    }
    evidence.success("b", 0.0);
    let before = full(&evidence.records, &params, 400.0, &table);
    evidence.success("c", 399.0);
    let after = full(&evidence.records, &params, 400.0, &table);
    assert!(after.value >= before.value, "{} < {}", after.value, before.value);
}

#[test]
fn p11_the_second_strong_refutation_overrides_majority_support() {
    let params = open();
    let table = empty_table();
    let mut evidence = Evidence::default();
    evidence.review(None, "a", 1.0, Verdict::Confirmed, 0.8, Grounding::Ungrounded);
    evidence.success("b", 2.0);
    for controller in ["c", "d", "e", "f", "g"] {
        evidence.success(controller, 10.0);
    }
    evidence.success("h", 20.0);
    evidence.success("i", 20.0);
    evidence.failure("r1", 30.0);
    evidence.success("j", 40.0);
    evidence.success("k", 40.0);
    evidence.review(None, "r2", 50.0, Verdict::False, 0.9, Grounding::OwnRealWorldUsage);
    let proven = full(&evidence.records, &params, 50.0, &table);
    assert_printed(proven.value, 0.795, 3, "value");
    assert_eq!((proven.status, proven.rule), (TrustStatus::Incorrect, StatusRule::R4));
    for (index, controller) in ["l", "m", "n"].iter().enumerate() {
        evidence.success(controller, 60.0 + index as f64);
        assert_eq!(
            full(&evidence.records, &params, 63.0, &table).status,
            TrustStatus::Incorrect
        );
    }
    evidence.success("o", 63.0);
    let contested = full(&evidence.records, &params, 63.0, &table);
    assert_eq!(
        (contested.status, contested.rule),
        (TrustStatus::Disputed, StatusRule::R2)
    );
}

#[test]
fn p12_a_single_refutation_blocks_high_confidence_while_it_stands() {
    let params = open();
    let table = empty_table();
    let mut evidence = Evidence::default();
    for index in 0..12 {
        evidence.success(&format!("usr_{index}"), 0.0);
    }
    let refutation = evidence.failure("r1", 1.0);
    let disputed = full(&evidence.records, &params, 1.0, &table);
    assert_eq!(
        (disputed.status, disputed.rule),
        (TrustStatus::Disputed, StatusRule::R7)
    );
    evidence.success("j", 2.0);
    evidence.success("k", 2.0);
    let answered = full(&evidence.records, &params, 2.0, &table);
    assert!(answered.lower_bound >= 0.70, "lower {}", answered.lower_bound);
    assert_eq!(
        (answered.status, answered.rule),
        (TrustStatus::Supported, StatusRule::R10)
    );
    for record in &mut evidence.records {
        if record.record_id == refutation.record_id {
            record.retracted = true;
        }
    }
    assert_eq!(
        full(&evidence.records, &params, 2.0, &table).status,
        TrustStatus::HighConfidence
    );
}

#[test]
fn p14_a_record_aged_one_half_life_weighs_exactly_half() {
    let mut evidence = Evidence::default();
    evidence.success("b", 0.0);
    let assessment = full(&evidence.records, &open(), 365.0, &empty_table());
    assert_printed(assessment.evidence_units.first_party.belief, 0.5, 12, "R");
    assert_printed(assessment.value, 0.6, 12, "value");
}

#[test]
fn p15_k_sybil_controllers_move_s_by_at_most_k_units() {
    let params = open();
    for controllers in [1usize, 3, 10] {
        let mut evidence = Evidence::default();
        for controller in 0..controllers {
            for agent in 0..100 {
                evidence.usage_by(
                    None,
                    &format!("usr_sybil{controller}"),
                    &format!("ai_{controller}_{agent}"),
                    0.0,
                    true,
                    UsageOutcome::Failure,
                );
            }
        }
        let assessment = full(&evidence.records, &params, 0.0, &empty_table());
        assert_printed(
            assessment.evidence_units.first_party.disbelief,
            controllers as f64,
            9,
            "S",
        );
    }
}

#[test]
fn p16_self_evidence_is_ignored() {
    let params = open();
    let table = empty_table();
    let mut evidence = Evidence::default();
    evidence.success("b", 0.0);
    evidence.review(None, "c", 0.0, Verdict::Misleading, 0.6, Grounding::Ungrounded);
    let before = full(&evidence.records, &params, 1.0, &table);
    for index in 0..3 {
        evidence.usage_by(
            None,
            AUTHOR,
            &format!("ai_author_{index}"),
            0.5,
            true,
            UsageOutcome::Success,
        );
        evidence.review(
            None,
            AUTHOR,
            0.5 + index as f64 / 10.0,
            Verdict::Confirmed,
            1.0,
            Grounding::OwnRealWorldUsage,
        );
    }
    let after = full(&evidence.records, &params, 1.0, &table);
    assert_bit_identical(&before, &after);
    let mut state =
        TargetState::from_records(target(), params.clone(), day_zero(), &evidence.records).expect("valid records");
    let explanation = state.explain(&at(1.0, &table), "r");
    assert_eq!(explanation.excluded.self_evidence, 6);
    assert!(
        explanation
            .parties
            .iter()
            .any(|party| party.label() == format!("ctrl:{AUTHOR}"))
    );
}

#[test]
fn p17_remote_evidence_cannot_prove_incorrect() {
    let params = open();
    let mut evidence = Evidence::default();
    let mut table = InstanceTrustTable::new("e");
    for peer in 0..5 {
        let origin = format!("peer{peer}.test");
        flood(&mut evidence, &origin, 1_000, 0.0, UsageOutcome::Failure);
        table.set(origin, 0.9);
    }
    let assessment = full(&evidence.records, &params, 0.0, &table);
    assert_printed(assessment.value, 0.059, 3, "value");
    assert_printed(assessment.upper_bound, 0.171, 3, "upper");
    assert_eq!(
        (assessment.status, assessment.rule),
        (TrustStatus::Disputed, StatusRule::R8)
    );
    assert_eq!(assessment.counts.strong_refutations_first_party, 0);
}

#[test]
fn p18_one_peer_cannot_dispute_alone() {
    let params = open();
    let mut evidence = Evidence::default();
    for controller in ["b", "c", "d"] {
        evidence.success(controller, 0.0);
    }
    flood(&mut evidence, "peer1.test", 10_000, 0.0, UsageOutcome::Failure);
    let one_peer = InstanceTrustTable::new("e")
        .with("peer1.test", 0.9)
        .with("peer2.test", 0.9);
    let alone = full(&evidence.records, &params, 0.0, &one_peer);
    assert_printed(alone.evidence_units.remote.disbelief, 3.0, 9, "S");
    assert_printed(alone.value, 0.5, 9, "value");
    assert_eq!(alone.counts.contradictions.total(), 1);
    assert_eq!((alone.status, alone.rule), (TrustStatus::Unverified, StatusRule::R11));
    flood(&mut evidence, "peer2.test", 10_000, 0.0, UsageOutcome::Failure);
    let two = full(&evidence.records, &params, 0.0, &one_peer);
    assert_eq!((two.status, two.rule), (TrustStatus::Disputed, StatusRule::R8));
}

#[test]
fn p20_high_confidence_needs_three_sources_and_a_lower_bound_of_0_70() {
    let params = open();
    let table = empty_table();
    let mut evidence = Evidence::default();
    for index in 0..7 {
        evidence.success(&format!("usr_{index}"), 0.0);
    }
    let seven = full(&evidence.records, &params, 0.0, &table);
    assert_printed(seven.lower_bound, 0.688, 3, "lower with 7");
    assert_eq!(seven.status, TrustStatus::Supported);
    evidence.success("usr_7", 0.0);
    let eight = full(&evidence.records, &params, 0.0, &table);
    assert_printed(eight.lower_bound, 0.717, 3, "lower with 8");
    assert_eq!(eight.status, TrustStatus::HighConfidence);

    let mut peers = Evidence::default();
    let mut trust = InstanceTrustTable::new("e");
    for peer in 0..3 {
        let origin = format!("peer{peer}.test");
        flood(&mut peers, &origin, 10, 0.0, UsageOutcome::Success);
        trust.set(origin, 0.8);
    }
    let two_peers: Vec<EvidenceRecord> = peers
        .records
        .iter()
        .filter(|record| record.origin.as_deref() != Some("peer2.test"))
        .cloned()
        .collect();
    let two = full(&two_peers, &params, 0.0, &trust);
    assert_printed(two.lower_bound, 0.652, 3, "lower with 2 peers");
    assert_eq!(two.status, TrustStatus::Supported);
    let three = full(&peers.records, &params, 0.0, &trust);
    assert_printed(three.lower_bound, 0.741, 3, "lower with 3 peers");
    assert_eq!(three.status, TrustStatus::HighConfidence);
    assert_eq!(three.counts.independent_confirmations.first_party, 0);

    // The spec's "parties needed for lower ≥ L" list.
    for (lower, parties) in [
        (0.5, 4),
        (0.6, 5),
        (0.65, 6),
        (0.7, 8),
        (0.75, 10),
        (0.8, 13),
        (0.9, 28),
    ] {
        let needed = (1..100)
            .find(|count| crate::trust::interval::beta_quantile(1.0 + *count as f64, 1.0, 0.05) >= lower)
            .expect("some count reaches the bound");
        assert_eq!(needed, parties, "parties for lower ≥ {lower}");
    }
    // "With one contradiction, L = 0.7 needs 12."
    let needed = (1..100)
        .find(|count| crate::trust::interval::beta_quantile(1.0 + *count as f64, 2.0, 0.05) >= 0.7)
        .expect("some count reaches the bound");
    assert_eq!(needed, 12);
}

#[test]
fn section_2_8_thresholds_for_single_records() {
    let params = open();
    let table = empty_table();
    let one = |record: fn(&mut Evidence)| {
        let mut evidence = Evidence::default();
        record(&mut evidence);
        full(&evidence.records, &params, 0.0, &table)
    };
    let success = one(|evidence| {
        evidence.success("b", 0.0);
    });
    assert_printed(success.value, 0.667, 3, "value");
    assert_eq!(success.status, TrustStatus::Supported);
    let test_success = one(|evidence| {
        evidence.usage_by(None, "b", "ai_b", 0.0, false, UsageOutcome::Success);
    });
    assert_eq!(test_success.status, TrustStatus::Unverified);
    let ungrounded_review = one(|evidence| {
        evidence.review(None, "b", 0.0, Verdict::Confirmed, 1.0, Grounding::Ungrounded);
    });
    assert_eq!(ungrounded_review.status, TrustStatus::Unverified);
    let grounded_review = one(|evidence| {
        evidence.review(None, "b", 0.0, Verdict::Confirmed, 1.0, Grounding::OwnRealWorldUsage);
    });
    assert_printed(
        grounded_review.evidence_units.first_party.belief,
        0.9,
        12,
        "grounded review units",
    );
    assert_eq!(grounded_review.status, TrustStatus::Supported);
}

#[test]
fn the_latest_review_per_actor_supersedes_older_ones() {
    let params = open();
    let table = empty_table();
    let mut evidence = Evidence::default();
    evidence.success("b", 0.0);
    let first = evidence.review(None, "c", 1.0, Verdict::Confirmed, 1.0, Grounding::OwnTestUsage);
    let second = evidence.review(None, "c", 2.0, Verdict::False, 0.9, Grounding::OwnRealWorldUsage);
    let assessment = full(&evidence.records, &params, 2.0, &table);
    assert_eq!(assessment.counts.contradictions.first_party, 1);
    assert_eq!(assessment.counts.independent_confirmations.first_party, 1);

    // Incrementally, in either arrival order, with the same result.
    let mut in_order = new_state(&params);
    let mut reversed = new_state(&params);
    for record in &evidence.records {
        in_order.add(record).expect("valid record");
    }
    for record in evidence.records.iter().rev() {
        reversed.add(record).expect("valid record");
    }
    assert_bit_identical(&in_order.assess(&at(2.0, &table)), &assessment);
    assert_bit_identical(&reversed.assess(&at(2.0, &table)), &assessment);
    let explanation = in_order.explain(&at(2.0, &table), "r");
    assert_eq!(explanation.excluded.superseded_reviews, 1);

    // Retracting the latest review reinstates the previous one.
    in_order
        .retract(&second.record_id, &RetractionAuthority::Local)
        .expect("held record");
    let reinstated = in_order.assess(&at(2.0, &table));
    let mut only_first = Evidence::default();
    only_first.success("b", 0.0);
    let mut first_copy = first.clone();
    first_copy.record_id = "ev_only_first".into();
    only_first.records.push(first_copy);
    let expected = full(&only_first.records, &params, 2.0, &table);
    assert_bit_identical(&reinstated, &expected);
    assert_eq!(in_order.explain(&at(2.0, &table), "r").excluded.superseded_reviews, 0);

    // Another agent of the same controller does not supersede: reviews are per actor, the party is the controller.
    let mut two_agents = Evidence::default();
    two_agents.push(
        None,
        "c",
        "ai_c1",
        1.0,
        EvidenceKind::Review {
            verdict: Verdict::Confirmed,
            confidence: 1.0,
            grounding: Grounding::Ungrounded,
        },
    );
    two_agents.push(
        None,
        "c",
        "ai_c2",
        2.0,
        EvidenceKind::Review {
            verdict: Verdict::Confirmed,
            confidence: 1.0,
            grounding: Grounding::Ungrounded,
        },
    );
    let both = full(&two_agents.records, &params, 2.0, &table);
    assert!(both.evidence_units.first_party.belief > 0.9);
}

#[test]
fn reputation_stays_under_the_controller_cap() {
    let params = open();
    let table = empty_table();
    let scenario = |reputation: f64| {
        let mut evidence = Evidence::default();
        evidence.success("b", 0.0);
        evidence.review(None, "b", 0.0, Verdict::Confirmed, 1.0, Grounding::OwnRealWorldUsage);
        for record in &mut evidence.records {
            record.standing.reputation = reputation;
        }
        full(&evidence.records, &params, 0.0, &table)
    };
    // A capped party's output does not change with ρ, whatever ρ is, and ρ is clamped to [0.5, 1.25].
    assert_bit_identical(&scenario(0.5), &scenario(1.25));
    assert_bit_identical(&scenario(0.1), &scenario(9.0));
    assert_printed(scenario(9.0).evidence_units.first_party.belief, 1.0, 12, "capped party");
    // Uncapped, ρ scales a review within [0.5, 1.25].
    let review_units = |reputation: f64| {
        let mut evidence = Evidence::default();
        evidence.review(None, "c", 0.0, Verdict::Confirmed, 1.0, Grounding::Ungrounded);
        evidence.records[0].standing.reputation = reputation;
        full(&evidence.records, &params, 0.0, &table)
            .evidence_units
            .first_party
            .belief
    };
    assert_printed(review_units(0.1), 0.25, 12, "ρ clamped up to 0.5");
    assert_printed(review_units(3.0), 0.625, 12, "ρ clamped down to 1.25");
}

#[test]
fn the_eligibility_gate_decides_who_refutes_strongly() {
    let params = TrustParameters::default();
    let table = empty_table();
    let mut evidence = Evidence::default();
    for controller in ["b", "c", "d"] {
        evidence.success(controller, 0.0);
    }
    evidence.failure("r1", 30.0);
    evidence.failure("r2", 30.0);
    // Both refuters are new accounts (created at day 29) with no history: not eligible.
    for record in evidence.records.iter_mut().skip(3) {
        record.standing = ControllerStanding {
            reputation: 1.0,
            prior_valid_records: 0,
            account_created_at: day(29.0),
        };
    }
    let gated = full(&evidence.records, &params, 30.0, &table);
    assert_eq!(gated.counts.strong_refutations_first_party, 0);
    assert_ne!(gated.status, TrustStatus::Incorrect);
    // Five earlier valid records make r1 eligible; an old account makes r2 eligible.
    evidence.records[3].standing.prior_valid_records = 5;
    evidence.records[4].standing.account_created_at = day(15.0);
    let eligible = full(&evidence.records, &params, 30.0, &table);
    assert_eq!(eligible.counts.strong_refutations_first_party, 2);
    assert_eq!(eligible.status, TrustStatus::Incorrect);
    // Low reputation closes the gate again.
    evidence.records[3].standing.reputation = 0.7;
    assert_eq!(
        full(&evidence.records, &params, 30.0, &table)
            .counts
            .strong_refutations_first_party,
        1
    );
}

#[test]
fn unsigned_remote_records_weigh_nothing() {
    let params = open();
    let table = InstanceTrustTable::new("e").with("peer.test", 0.9);
    let mut evidence = Evidence::default();
    evidence.success("b", 0.0);
    let before = full(&evidence.records, &params, 0.0, &table);
    for index in 0..5 {
        let mut record = evidence.remote_usage("peer.test", &format!("usr_{index}"), 0.0, UsageOutcome::Failure);
        record.origin_signature_valid = false;
        if let Some(last) = evidence.records.last_mut() {
            last.origin_signature_valid = false;
        }
        let _ = &mut record;
    }
    assert_bit_identical(&full(&evidence.records, &params, 0.0, &table), &before);
    let mut state =
        TargetState::from_records(target(), params.clone(), day_zero(), &evidence.records).expect("valid records");
    assert_eq!(state.explain(&at(0.0, &table), "r").excluded.unsigned_remote, 5);
}

#[test]
fn duplicate_and_unknown_records_are_refused() {
    let params = open();
    let mut evidence = Evidence::default();
    let record = evidence.success("b", 0.0);
    let mut state = new_state(&params);
    state.add(&record).expect("valid record");
    assert!(matches!(state.add(&record), Err(TrustError::DuplicateRecord { .. })));
    assert!(matches!(
        state.retract("ev_missing", &RetractionAuthority::Local),
        Err(TrustError::UnknownRecord { .. })
    ));
    state
        .retract(&record.record_id, &RetractionAuthority::Local)
        .expect("held record");
    assert!(matches!(
        state.retract(&record.record_id, &RetractionAuthority::Local),
        Err(TrustError::AlreadyRetracted { .. })
    ));
}
