//! Benchmark of the trust engine (not a timed test): the cost of adding one record to a target that already holds
//! 1k, 10k and 100k records (10 per controller), of retracting one, and of evaluating value + interval + status.
//!
//! Run with `cargo bench --bench trust`. Each operation is timed alone with `Instant`; the report gives the median
//! and the 99th percentile in microseconds.

use std::time::Instant;

use chrono::{DateTime, TimeDelta, TimeZone, Utc};
use interai::domain::evidence::{Grounding, UsageOutcome, Verdict};
use interai::trust::{
    ControllerRef, ControllerStanding, Evaluation, EvidenceKind, EvidenceRecord, InstanceTrustTable,
    RetractionAuthority, TargetDescriptor, TargetState, TrustParameters, assess_records,
};

/// A small deterministic generator so that every run measures the same work.
struct Xorshift(u64);

impl Xorshift {
    fn next(&mut self, modulus: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % modulus
    }
}

fn day_zero() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 1, 1, 0, 0, 0).single().expect("valid date")
}

/// One record by controller `controller` at `minutes` after day zero: mostly real-world successes, some failures,
/// test usage, reviews and remote reports.
fn record(index: usize, controller: u64, minutes: i64, generator: &mut Xorshift) -> EvidenceRecord {
    let recorded_at = day_zero() + TimeDelta::minutes(minutes);
    let kind = match generator.next(10) {
        0 => EvidenceKind::Review {
            verdict: Verdict::Confirmed,
            confidence: 0.8,
            grounding: Grounding::OwnRealWorldUsage,
        },
        1 => EvidenceKind::Usage {
            real_world_use: true,
            result: UsageOutcome::Failure,
        },
        2 => EvidenceKind::Usage {
            real_world_use: false,
            result: UsageOutcome::Success,
        },
        _ => EvidenceKind::Usage {
            real_world_use: true,
            result: UsageOutcome::Success,
        },
    };
    let origin = if generator.next(20) == 0 {
        Some(format!("peer{}.test", generator.next(5)))
    } else {
        None
    };
    EvidenceRecord {
        record_id: format!("ev_{index:09}"),
        actor: format!("ai_{controller}_{}", generator.next(3)),
        root_controller: format!("usr_{controller:06}"),
        origin,
        origin_signature_valid: true,
        recorded_at,
        retracted: false,
        standing: ControllerStanding::new_controller(day_zero() - TimeDelta::days(100)),
        kind,
    }
}

fn percentile(sorted_microseconds: &[f64], fraction: f64) -> f64 {
    let index = ((sorted_microseconds.len() as f64 - 1.0) * fraction).round() as usize;
    sorted_microseconds[index]
}

fn summarize(mut samples: Vec<f64>) -> (f64, f64) {
    samples.sort_by(f64::total_cmp);
    (percentile(&samples, 0.5), percentile(&samples, 0.99))
}

fn main() {
    let params = TrustParameters::default();
    let descriptor = TargetDescriptor {
        target_id: "clm_bench@r1".to_string(),
        author: ControllerRef::first_party("usr_author"),
    };
    let mut table = InstanceTrustTable::new("bench");
    for peer in 0..5 {
        table.set(format!("peer{peer}.test"), 0.5);
    }
    println!("trust engine benchmark (times in microseconds; 10 records per controller)");
    println!(
        "{:>9} {:>12} {:>10} {:>10} {:>12} {:>12} {:>13} {:>13} {:>14}",
        "held",
        "controllers",
        "add p50",
        "add p99",
        "retract p50",
        "retract p99",
        "evaluate p50",
        "evaluate p99",
        "full recompute"
    );
    for held in [1_000usize, 10_000, 100_000] {
        let controllers = (held / 10) as u64;
        let mut generator = Xorshift(0x9e37_79b9_7f4a_7c15 ^ held as u64);
        // Held records spread over 300 days, in minutes.
        let held_records: Vec<EvidenceRecord> = (0..held)
            .map(|index| {
                let controller = generator.next(controllers);
                let minutes = (index as i64 * 300 * 1440) / held as i64;
                record(index, controller, minutes, &mut generator)
            })
            .collect();
        let mut state = TargetState::new(descriptor.clone(), params.clone(), day_zero());
        for held_record in &held_records {
            state.add(held_record).expect("valid record");
        }
        let start_minutes = 300 * 1440;
        state.advance_clock(day_zero() + TimeDelta::minutes(start_minutes));

        // Adds: 5,000 new records, one at a time, one minute apart, 10% of them from new controllers.
        let additions: Vec<EvidenceRecord> = (0..5_000)
            .map(|offset| {
                let controller = if generator.next(10) == 0 {
                    controllers + generator.next(1_000_000)
                } else {
                    generator.next(controllers)
                };
                record(held + offset, controller, start_minutes + offset as i64, &mut generator)
            })
            .collect();
        let mut add_samples = Vec::with_capacity(additions.len());
        for addition in &additions {
            let started = Instant::now();
            state.add(addition).expect("valid record");
            add_samples.push(started.elapsed().as_secs_f64() * 1e6);
        }

        // Retractions: 2,000 distinct held records (half of them for the smallest target).
        let retractions = 2_000usize.min(held / 2);
        let mut retract_samples = Vec::with_capacity(retractions);
        for step in 0..retractions {
            let record_id = &held_records[(step * 7_919) % held].record_id;
            let started = Instant::now();
            let result = state.retract(record_id, &RetractionAuthority::Local);
            retract_samples.push(started.elapsed().as_secs_f64() * 1e6);
            result.expect("held record");
        }

        // Evaluations: value + interval + status, the clock moving on by an hour each time.
        let mut evaluate_samples = Vec::with_capacity(2_000);
        let mut checksum = 0.0;
        for step in 0..2_000i64 {
            let now = day_zero() + TimeDelta::minutes(start_minutes + 5_000 + step * 60);
            let evaluation = Evaluation {
                now,
                instance_trust: &table,
                superseded: false,
            };
            let started = Instant::now();
            let assessment = state.assess(&evaluation);
            evaluate_samples.push(started.elapsed().as_secs_f64() * 1e6);
            checksum += assessment.value;
        }

        // One full recomputation of the same records, for comparison.
        let mut all_records = held_records.clone();
        all_records.extend(additions.iter().cloned());
        for step in 0..retractions {
            all_records[(step * 7_919) % held].retracted = true;
        }
        let now = day_zero() + TimeDelta::minutes(start_minutes + 5_000 + 1_999 * 60);
        let evaluation = Evaluation {
            now,
            instance_trust: &table,
            superseded: false,
        };
        let started = Instant::now();
        let recomputed =
            assess_records(&descriptor, &all_records, &params, day_zero(), &evaluation).expect("valid records");
        let full_milliseconds = started.elapsed().as_secs_f64() * 1e3;
        assert_eq!(
            recomputed,
            state.assess(&evaluation),
            "incremental must equal full recomputation"
        );

        let (add_median, add_p99) = summarize(add_samples);
        let (retract_median, retract_p99) = summarize(retract_samples);
        let (evaluate_median, evaluate_p99) = summarize(evaluate_samples);
        println!(
            "{held:>9} {controllers:>12} {add_median:>10.2} {add_p99:>10.2} {retract_median:>12.2} {retract_p99:>12.2} \
             {evaluate_median:>13.2} {evaluate_p99:>13.2} {full_milliseconds:>11.1} ms"
        );
        std::hint::black_box(checksum);
    }
}
