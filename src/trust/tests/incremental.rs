//! Incremental maintenance (§4): incremental = full recomputation over long random operation sequences with time
//! jumps and instance-trust changes (P6), epoch rebasing, and the property tests of order independence,
//! incremental = full, monotonicity (P10) and the per-instance bound (P8).

use proptest::prelude::*;

use super::properties::mixed_records;
use super::*;
use crate::domain::evidence::{Grounding, UsageOutcome, Verdict};
use crate::trust::full_recompute::{assess_records, explain_records};
use crate::trust::target::RetractionAuthority;

/// Compares the incremental state with a full recomputation of `records` at `days`, assessment and explanation.
#[track_caller]
fn assert_incremental_equals_full(
    state: &mut TargetState,
    records: &[EvidenceRecord],
    params: &TrustParameters,
    days: f64,
    table: &InstanceTrustTable,
) {
    let evaluation = at(days, table);
    let shared_read = state.assess_without_advancing(&evaluation);
    let incremental = state.assess(&evaluation);
    let recomputed = assess_records(&target(), records, params, day_zero(), &evaluation).expect("valid records");
    assert_bit_identical(&incremental, &recomputed);
    assert_bit_identical(&shared_read, &recomputed);
    let explained = state.explain(&evaluation, "r");
    let explained_in_full =
        explain_records(&target(), records, params, day_zero(), &evaluation, "r").expect("valid records");
    assert_eq!(explained, explained_in_full);
}

#[test]
fn p6_incremental_equals_full_over_6000_operations_with_time_jumps_and_trust_changes() {
    let params = TrustParameters::with_open_gate();
    let pool = mixed_records(6_000, 11);
    let mut table = InstanceTrustTable::new("e")
        .with("peer.test", 0.5)
        .with("other.test", 0.0);
    let mut state = new_state(&params);
    let mut records: Vec<EvidenceRecord> = Vec::new();
    let mut generator = 0x0123_4567_89ab_cdefu64;
    let mut next = |modulus: u64| {
        generator ^= generator << 13;
        generator ^= generator >> 7;
        generator ^= generator << 17;
        generator % modulus
    };
    let mut clock_days = 0.0f64;
    let mut mismatches_checked = 0;
    for (operation, template) in pool.into_iter().enumerate() {
        clock_days += 0.25;
        match next(10) {
            0 | 1 if !records.is_empty() => {
                let index = next(records.len() as u64) as usize;
                if !records[index].retracted {
                    state
                        .retract(&records[index].record_id, &RetractionAuthority::Local)
                        .expect("held record");
                    records[index].retracted = true;
                }
            }
            2 => {
                let trust = [0.0, 0.3, 0.5, 0.65, 0.9][next(5) as usize];
                let origin = if next(2) == 0 { "peer.test" } else { "other.test" };
                table.set(origin, trust);
            }
            _ => {}
        }
        // Every operation also adds one record made around the current clock (some back-dated).
        let mut record = template;
        record.recorded_at = day((clock_days - next(30) as f64).max(0.0));
        state.add(&record).expect("valid record");
        records.push(record);
        if operation % 200 == 199 {
            assert_incremental_equals_full(&mut state, &records, &params, clock_days, &table);
            mismatches_checked += 1;
        }
    }
    assert!(clock_days >= 1_500.0);
    for jump in [100.0, 800.0, 3_000.0] {
        clock_days += jump;
        assert_incremental_equals_full(&mut state, &records, &params, clock_days, &table);
        mismatches_checked += 1;
    }
    // A historical read, before the clock, rescans and still agrees.
    assert_incremental_equals_full(&mut state, &records, &params, 700.0, &table);
    assert_eq!(mismatches_checked, 33);
}

#[test]
fn the_epoch_moves_for_far_records_and_back_after_their_retraction() {
    // A one-day half-life makes the 48-half-life epoch limit reachable within a test.
    let params = TrustParameters {
        half_life_days: 1.0,
        ..TrustParameters::with_open_gate()
    };
    let table = InstanceTrustTable::new("e").with("peer.test", 0.5);
    let mut evidence = Evidence::default();
    let mut state = new_state(&params);
    for step in 0..120 {
        let days = step as f64 * 0.9;
        let record = if step % 3 == 0 {
            evidence.failure(&format!("usr_{}", step % 7), days)
        } else if step % 5 == 0 {
            evidence.remote_usage("peer.test", &format!("usr_{}", step % 4), days, UsageOutcome::Success)
        } else {
            evidence.success(&format!("usr_{}", step % 7), days)
        };
        state.add(&record).expect("valid record");
    }
    assert!(state.epoch() > day_zero(), "the epoch moved forward");
    assert_incremental_equals_full(&mut state, &evidence.records, &params, 108.0, &table);
    let last = evidence.records.last().expect("records").record_id.clone();
    let epoch_before = state.epoch();
    // Retract everything after day 60: the epoch returns to an earlier step.
    for record in &mut evidence.records {
        if record.recorded_at > day(60.0) {
            state
                .retract(&record.record_id, &RetractionAuthority::Local)
                .expect("held record");
            record.retracted = true;
        }
    }
    assert!(state.epoch() < epoch_before);
    assert_incremental_equals_full(&mut state, &evidence.records, &params, 108.0, &table);
    assert!(
        evidence
            .records
            .iter()
            .any(|record| record.record_id == last && record.retracted)
    );
}

#[test]
fn an_infinite_half_life_never_decays() {
    let params = TrustParameters {
        half_life_days: f64::INFINITY,
        ..TrustParameters::with_open_gate()
    };
    let table = InstanceTrustTable::new("e");
    let mut evidence = Evidence::default();
    let mut state = new_state(&params);
    for index in 0..3 {
        state.add(&evidence.success("b", index as f64)).expect("valid record");
        state
            .add(&evidence.success(&format!("usr_{index}"), 0.0))
            .expect("valid record");
    }
    let late = state.assess(&at(100_000.0, &table));
    assert_printed(late.evidence_units.first_party.belief, 4.0, 12, "R without decay");
    assert_incremental_equals_full(&mut state, &evidence.records, &params, 100_000.0, &table);
}

/// A compact description of a record for the property tests.
#[derive(Debug, Clone)]
struct RecordSpec {
    controller: u8,
    actor: u8,
    origin: u8,
    hours: u32,
    kind: u8,
    result_or_verdict: u8,
    confidence_tenths: u8,
    grounding: u8,
    reputation_tenths: u8,
}

fn record_spec() -> impl Strategy<Value = RecordSpec> {
    (
        0u8..8,
        0u8..3,
        0u8..4,
        0u32..(24 * 400),
        0u8..3,
        0u8..8,
        0u8..11,
        0u8..3,
        3u8..14,
    )
        .prop_map(
            |(
                controller,
                actor,
                origin,
                hours,
                kind,
                result_or_verdict,
                confidence_tenths,
                grounding,
                reputation_tenths,
            )| {
                RecordSpec {
                    controller,
                    actor,
                    origin,
                    hours,
                    kind,
                    result_or_verdict,
                    confidence_tenths,
                    grounding,
                    reputation_tenths,
                }
            },
        )
}

fn build(specs: &[RecordSpec]) -> Vec<EvidenceRecord> {
    let mut evidence = Evidence::default();
    for spec in specs {
        let origin = match spec.origin {
            0 => Some("peer.test"),
            1 => Some("other.test"),
            _ => None,
        };
        let controller = if spec.controller == 7 {
            AUTHOR.to_string()
        } else {
            format!("usr_{}", spec.controller)
        };
        let actor = format!("ai_{}_{}", spec.controller, spec.actor);
        let days = spec.hours as f64 / 24.0;
        let kind = if spec.kind == 0 {
            let verdict = [
                Verdict::Confirmed,
                Verdict::MostlyCorrect,
                Verdict::Questionable,
                Verdict::Misleading,
                Verdict::Contradicted,
                Verdict::False,
                Verdict::Outdated,
                Verdict::CannotVerify,
            ][spec.result_or_verdict as usize];
            let grounding = [
                Grounding::Ungrounded,
                Grounding::OwnTestUsage,
                Grounding::OwnRealWorldUsage,
            ][spec.grounding as usize];
            EvidenceKind::Review {
                verdict,
                confidence: spec.confidence_tenths as f64 / 10.0,
                grounding,
            }
        } else {
            let result = [
                UsageOutcome::Success,
                UsageOutcome::Partial,
                UsageOutcome::Failure,
                UsageOutcome::Unknown,
            ][(spec.result_or_verdict % 4) as usize];
            EvidenceKind::Usage {
                real_world_use: spec.kind == 1,
                result,
            }
        };
        evidence.push(origin, &controller, &actor, days, kind);
        if let Some(last) = evidence.records.last_mut() {
            last.standing.reputation = spec.reputation_tenths as f64 / 10.0;
        }
    }
    evidence.records
}

fn table_with(peer_trust: f64, other_trust: f64) -> InstanceTrustTable {
    InstanceTrustTable::new("e")
        .with("peer.test", peer_trust)
        .with("other.test", other_trust)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn any_order_of_adding_gives_the_identical_state(
        specs in prop::collection::vec(record_spec(), 0..60),
        permutation_seed in any::<u64>(),
        now_hours in 0u32..(24 * 2000),
    ) {
        let params = TrustParameters::with_open_gate();
        let table = table_with(0.5, 0.9);
        let records = build(&specs);
        let mut shuffled = records.clone();
        let mut generator = permutation_seed | 1;
        for index in (1..shuffled.len()).rev() {
            generator ^= generator << 13;
            generator ^= generator >> 7;
            generator ^= generator << 17;
            shuffled.swap(index, (generator % (index as u64 + 1)) as usize);
        }
        let now = now_hours as f64 / 24.0;
        let mut forward = TargetState::from_records(target(), params.clone(), day_zero(), &records).expect("valid");
        let mut permuted = TargetState::from_records(target(), params.clone(), day_zero(), &shuffled).expect("valid");
        let left = forward.explain(&at(now, &table), "r");
        let right = permuted.explain(&at(now, &table), "r");
        prop_assert_eq!(left, right);
    }

    #[test]
    fn incremental_equals_full_for_random_adds_retractions_time_jumps_and_trust_changes(
        specs in prop::collection::vec(record_spec(), 1..50),
        operations in prop::collection::vec((0u8..4, any::<u16>(), 0u32..(24 * 500)), 1..40),
    ) {
        let params = TrustParameters::with_open_gate();
        let mut records = build(&specs);
        let mut state = new_state(&params);
        let mut held: Vec<usize> = Vec::new();
        let mut next_record = 0usize;
        let mut now = 0.0f64;
        let mut table = table_with(0.5, 0.0);
        for (kind, pick, hours) in operations {
            match kind {
                0 if next_record < records.len() => {
                    state.add(&records[next_record]).expect("valid record");
                    held.push(next_record);
                    next_record += 1;
                }
                1 if !held.is_empty() => {
                    let index = held.remove(pick as usize % held.len());
                    state.retract(&records[index].record_id, &RetractionAuthority::Local).expect("held");
                    records[index].retracted = true;
                }
                2 => table = table_with([0.0, 0.3, 0.5, 0.9][pick as usize % 4], (pick % 10) as f64 / 10.0),
                _ => now += hours as f64 / 24.0,
            }
            let included: Vec<EvidenceRecord> = records[..next_record].to_vec();
            let evaluation = at(now, &table);
            let incremental = state.assess(&evaluation);
            let recomputed = assess_records(&target(), &included, &params, day_zero(), &evaluation).expect("valid");
            prop_assert_eq!(incremental.value.to_bits(), recomputed.value.to_bits());
            prop_assert_eq!(&incremental, &recomputed);
        }
    }

    #[test]
    fn a_positive_record_never_lowers_the_value_and_a_negative_one_never_raises_it(
        specs in prop::collection::vec(record_spec(), 0..40),
        controller in 0u8..9,
        origin in 0u8..3,
        positive_kind in 0u8..3,
        record_hours in 0u32..(24 * 400),
        extra_hours in 0u32..(24 * 400),
        trust_tenths in 0u8..10,
    ) {
        let params = TrustParameters::with_open_gate();
        let table = table_with(trust_tenths as f64 / 10.0, 0.9);
        let records = build(&specs);
        let now = (record_hours + extra_hours) as f64 / 24.0;
        let before = full(&records, &params, now, &table);
        let origin = [Some("peer.test"), Some("other.test"), None][origin as usize];
        let controller_name = format!("usr_{controller}");
        for positive in [true, false] {
            let mut evidence = Evidence { records: records.clone() };
            let days = record_hours as f64 / 24.0;
            // A fresh actor, so that no review of an existing actor is superseded by the new record.
            let actor = "ai_fresh";
            let kind = match (positive, positive_kind) {
                (true, 0) => EvidenceKind::Usage { real_world_use: true, result: UsageOutcome::Success },
                (true, 1) => EvidenceKind::Usage { real_world_use: false, result: UsageOutcome::Success },
                (true, _) => EvidenceKind::Review {
                    verdict: Verdict::Confirmed,
                    confidence: 0.9,
                    grounding: Grounding::OwnTestUsage,
                },
                (false, 0) => EvidenceKind::Usage { real_world_use: true, result: UsageOutcome::Failure },
                (false, 1) => EvidenceKind::Usage { real_world_use: false, result: UsageOutcome::Failure },
                (false, _) => EvidenceKind::Review {
                    verdict: Verdict::Misleading,
                    confidence: 0.9,
                    grounding: Grounding::OwnTestUsage,
                },
            };
            evidence.push(origin, &controller_name, actor, days, kind);
            let after = full(&evidence.records, &params, now, &table);
            if positive {
                prop_assert!(after.value >= before.value - 1e-12, "positive lowered {} → {}", before.value, after.value);
            } else {
                prop_assert!(after.value <= before.value + 1e-12, "negative raised {} → {}", before.value, after.value);
            }
        }
    }

    #[test]
    fn one_instance_never_contributes_more_than_its_bound(
        results in prop::collection::vec((0u16..500, 0u8..4, 0u32..(24 * 100)), 1..300),
        trust_hundredths in 0u8..100,
        now_hours in 0u32..(24 * 200),
    ) {
        let params = TrustParameters::with_open_gate();
        let trust = trust_hundredths as f64 / 100.0;
        let table = InstanceTrustTable::new("e").with("peer.test", trust);
        let mut evidence = Evidence::default();
        for (controller, result, hours) in results {
            let result = [UsageOutcome::Success, UsageOutcome::Partial, UsageOutcome::Failure, UsageOutcome::Unknown]
                [result as usize];
            evidence.remote_usage("peer.test", &format!("usr_{controller}"), hours as f64 / 24.0, result);
        }
        let assessment = full(&evidence.records, &params, now_hours as f64 / 24.0, &table);
        let used_trust = trust.min(params.max_instance_trust);
        let bound = params.instance_cap.min(params.prior_weight * used_trust / (1.0 - used_trust));
        let remote = assessment.evidence_units.remote;
        prop_assert!(remote.belief + remote.disbelief <= bound + 1e-9, "{} > {}", remote.belief + remote.disbelief, bound);
    }
}
