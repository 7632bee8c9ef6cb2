//! The full recomputation of one target from a slice of records: the reference the incremental state is checked
//! against, and the path for historical queries or verification.
//!
//! It shares with the incremental state only the per-record and per-row primitives (record weights, fixed-point
//! conversion, the cap shape and predicate, the epoch rule) and the read-time formulas; the selection of active
//! records, the grouping into rows and every count are recomputed here by plain scanning and sorting.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};

use super::error::TrustError;
use super::evidence::{EvidenceKind, EvidenceRecord, record_effect};
use super::explanation::{
    ControllerRowView, ExcludedCounts, Explanation, ExplanationInputs, InstanceRowView, build_explanation,
};
use super::fixed_point::{CapShape, FixedSums, days_between, epoch_for};
use super::params::TrustParameters;
use super::summary::{Assessment, Evaluation, FirstPartyTotals, InstanceReading, InstanceTotals, assemble};
use super::target::{TargetDescriptor, contribution_from_parts};

/// One controller's active records, accumulated by scanning.
#[derive(Debug, Default)]
struct ScannedRow {
    belief_fixed: i128,
    disbelief_fixed: i128,
    records: u32,
    real_world_success_times: Vec<DateTime<Utc>>,
    eligible_strong_refutation_times: Vec<DateTime<Utc>>,
    ineligible_strong_refutations: u32,
    outdated_signal_times: Vec<DateTime<Utc>>,
    cannot_verify_reviews: u32,
}

impl ScannedRow {
    fn cap_shape(&self, params: &TrustParameters) -> Option<CapShape> {
        CapShape::of_row(
            self.belief_fixed,
            self.disbelief_fixed,
            params.controller_cap,
            params.half_life_days,
        )
    }

    fn view<'a>(&self, controller: &'a str, params: &TrustParameters) -> ControllerRowView<'a> {
        ControllerRowView {
            controller,
            records: self.records,
            belief_fixed: self.belief_fixed,
            disbelief_fixed: self.disbelief_fixed,
            cap_shape: self.cap_shape(params),
            real_world_success: !self.real_world_success_times.is_empty(),
            eligible_strong_refutation: !self.eligible_strong_refutation_times.is_empty(),
            ineligible_strong_refutation: self.ineligible_strong_refutations > 0,
            outdated_signal: !self.outdated_signal_times.is_empty(),
        }
    }
}

/// The scan of one target: rows by (origin, controller) plus the excluded counts.
struct Scan {
    epoch: DateTime<Utc>,
    rows: BTreeMap<(Option<String>, String), ScannedRow>,
    excluded: ExcludedCounts,
    self_evidence_records: u32,
}

/// The latest review per (origin, actor), by (time, record id).
type LatestReviewByActor<'a> = BTreeMap<(Option<&'a str>, &'a str), (DateTime<Utc>, &'a str)>;

fn scan(
    target: &TargetDescriptor,
    records: &[EvidenceRecord],
    params: &TrustParameters,
    base_epoch: DateTime<Utc>,
) -> Result<Scan, TrustError> {
    let mut seen_ids = BTreeSet::new();
    let mut excluded = ExcludedCounts::default();
    let mut countable = Vec::new();
    let mut latest_held: Option<DateTime<Utc>> = None;
    for record in records {
        if !seen_ids.insert(record.record_id.as_str()) {
            return Err(TrustError::DuplicateRecord {
                record_id: record.record_id.clone(),
            });
        }
        let effect = record_effect(record, params)?;
        if record.retracted {
            excluded.retracted += 1;
            continue;
        }
        latest_held = latest_held.max(Some(record.recorded_at));
        if record.is_remote() && !record.origin_signature_valid {
            excluded.unsigned_remote += 1;
        } else if record.controller_ref() == target.author {
            excluded.self_evidence += 1;
        } else {
            countable.push((record, effect));
        }
    }
    let epoch = epoch_for(base_epoch, latest_held, params.half_life_days);

    // The latest review per (origin, actor) by (time, id); older ones are superseded.
    let mut latest_review: LatestReviewByActor<'_> = BTreeMap::new();
    for (record, _) in &countable {
        if matches!(record.kind, EvidenceKind::Review { .. }) {
            let key = (record.origin.as_deref(), record.actor.as_str());
            let candidate = (record.recorded_at, record.record_id.as_str());
            let entry = latest_review.entry(key).or_insert(candidate);
            if candidate > *entry {
                *entry = candidate;
            }
        }
    }

    let mut rows: BTreeMap<(Option<String>, String), ScannedRow> = BTreeMap::new();
    for (record, effect) in &countable {
        if matches!(record.kind, EvidenceKind::Review { .. }) {
            let key = (record.origin.as_deref(), record.actor.as_str());
            if latest_review.get(&key).map(|(_, id)| *id) != Some(record.record_id.as_str()) {
                excluded.superseded_reviews += 1;
                continue;
            }
        }
        let gate_passed = params
            .strong_refutation_gate
            .is_eligible(&record.standing, record.recorded_at);
        let contribution = contribution_from_parts(
            !record.is_remote(),
            record.recorded_at,
            effect,
            gate_passed,
            epoch,
            params,
        );
        let row = rows
            .entry((record.origin.clone(), record.root_controller.clone()))
            .or_default();
        row.belief_fixed += contribution.belief_fixed;
        row.disbelief_fixed += contribution.disbelief_fixed;
        row.records += 1;
        if contribution.real_world_success {
            row.real_world_success_times.push(record.recorded_at);
        }
        if contribution.eligible_strong_refutation {
            row.eligible_strong_refutation_times.push(record.recorded_at);
        }
        if contribution.ineligible_strong_refutation {
            row.ineligible_strong_refutations += 1;
        }
        if contribution.outdated_signal {
            row.outdated_signal_times.push(record.recorded_at);
        }
        if contribution.cannot_verify {
            row.cannot_verify_reviews += 1;
        }
    }
    let self_evidence_records = excluded.self_evidence;
    Ok(Scan {
        epoch,
        rows,
        excluded,
        self_evidence_records,
    })
}

/// Per-instance accumulation during the read.
#[derive(Debug, Default)]
struct ScannedInstance {
    sums: FixedSums,
    real_world_success_records: u32,
    earliest_outdated_signal: Option<DateTime<Utc>>,
    records: u32,
    controllers: u32,
}

fn read(
    scan: &Scan,
    evaluation: &Evaluation<'_>,
    params: &TrustParameters,
) -> (Assessment, Vec<InstanceReading>, Vec<InstanceRowView>) {
    let now_days = days_between(scan.epoch, evaluation.now);
    let mut first_party_sums = FixedSums::default();
    let mut positive_parties = 0;
    let mut negative_parties = 0;
    let mut positive_parties_with_real_world_success = 0;
    let mut refutation_times = Vec::new();
    let mut outdated_signal_times = Vec::new();
    let mut last_success_of_positive_rows = Vec::new();
    let mut instances: BTreeMap<&str, ScannedInstance> = BTreeMap::new();
    for ((origin, _), row) in &scan.rows {
        let shape = row.cap_shape(params);
        let capped = shape.filter(|shape| shape.is_capped_at(now_days));
        let positive = row.belief_fixed > row.disbelief_fixed;
        let negative = row.belief_fixed < row.disbelief_fixed;
        let first_outdated_signal = row.outdated_signal_times.iter().min().copied();
        match origin {
            None => {
                first_party_sums.add_row(row.belief_fixed, row.disbelief_fixed, capped.as_ref());
                if positive {
                    positive_parties += 1;
                    if let Some(last_success) = row.real_world_success_times.iter().max() {
                        positive_parties_with_real_world_success += 1;
                        last_success_of_positive_rows.push(*last_success);
                    }
                }
                if negative {
                    negative_parties += 1;
                    if let Some(first_refutation) = row.eligible_strong_refutation_times.iter().min() {
                        refutation_times.push(*first_refutation);
                    }
                }
                if let Some(signal_time) = first_outdated_signal {
                    outdated_signal_times.push(signal_time);
                }
            }
            Some(origin) => {
                let instance = instances.entry(origin.as_str()).or_default();
                instance
                    .sums
                    .add_row(row.belief_fixed, row.disbelief_fixed, capped.as_ref());
                instance.real_world_success_records += row.real_world_success_times.len() as u32;
                instance.records += row.records;
                instance.controllers += 1;
                if let Some(signal_time) = first_outdated_signal {
                    instance.earliest_outdated_signal = Some(
                        instance
                            .earliest_outdated_signal
                            .map_or(signal_time, |time| time.min(signal_time)),
                    );
                }
            }
        }
    }
    refutation_times.sort();
    outdated_signal_times.sort();
    let refuters = refutation_times.len() as u32;
    let outdated_signalling_parties = outdated_signal_times.len() as u32;
    refutation_times.truncate(params.refuters_for_proof as usize);
    outdated_signal_times.truncate(params.outdated_min_parties as usize);
    let first_party = FirstPartyTotals {
        sums: first_party_sums,
        positive_parties,
        negative_parties,
        positive_parties_with_real_world_success,
        refuters,
        earliest_refutation_times: refutation_times,
        outdated_signalling_parties,
        earliest_outdated_signal_times: outdated_signal_times,
    };
    let instance_totals: Vec<InstanceTotals<'_>> = instances
        .iter()
        .map(|(origin, instance)| InstanceTotals {
            origin,
            sums: instance.sums,
            real_world_success_records: instance.real_world_success_records,
            earliest_outdated_signal: instance.earliest_outdated_signal,
        })
        .collect();
    let instance_rows: Vec<InstanceRowView> = instances
        .values()
        .map(|instance| InstanceRowView {
            records: instance.records,
            remote_controllers: instance.controllers,
            real_world_success: instance.real_world_success_records > 0,
            outdated_signal: instance.earliest_outdated_signal.is_some(),
        })
        .collect();
    let successes_after = |time: DateTime<Utc>, limit: u32| {
        (last_success_of_positive_rows
            .iter()
            .filter(|success| **success > time)
            .count() as u32)
            .min(limit)
    };
    let (assessment, readings) = assemble(
        &first_party,
        &instance_totals,
        &successes_after,
        scan.epoch,
        evaluation,
        params,
    );
    (assessment, readings, instance_rows)
}

/// Value, interval, opinion, counts and status of a target recomputed from all its records. Gives the same
/// result, bit for bit, as a [`super::TargetState`] with the same base epoch holding the same records.
pub fn assess_records(
    target: &TargetDescriptor,
    records: &[EvidenceRecord],
    params: &TrustParameters,
    base_epoch: DateTime<Utc>,
    evaluation: &Evaluation<'_>,
) -> Result<Assessment, TrustError> {
    let scan = scan(target, records, params, base_epoch)?;
    Ok(read(&scan, evaluation, params).0)
}

/// The full explanation of a target recomputed from all its records.
pub fn explain_records(
    target: &TargetDescriptor,
    records: &[EvidenceRecord],
    params: &TrustParameters,
    base_epoch: DateTime<Utc>,
    evaluation: &Evaluation<'_>,
    reputation_epoch: &str,
) -> Result<Explanation, TrustError> {
    let scan = scan(target, records, params, base_epoch)?;
    let (assessment, readings, instance_rows) = read(&scan, evaluation, params);
    let cannot_verify = scan.rows.values().map(|row| row.cannot_verify_reviews).sum();
    let inputs = ExplanationInputs {
        target_id: &target.target_id,
        author_controller: &target.author.controller,
        self_evidence_records: scan.self_evidence_records,
        epoch: scan.epoch,
        evaluation,
        reputation_epoch,
        params,
        reviews_cannot_verify: cannot_verify,
        excluded: scan.excluded,
    };
    let controller_rows = scan
        .rows
        .iter()
        .filter(|((origin, _), _)| origin.is_none())
        .map(|((_, controller), row)| row.view(controller, params));
    Ok(build_explanation(
        inputs,
        assessment,
        readings,
        controller_rows,
        &instance_rows,
    ))
}
