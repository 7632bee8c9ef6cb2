//! The incremental per-target state (§4): absorbs one new or retracted record in O(log n) without rescanning the
//! target, and evaluates value, interval and status at any `now` from maintained aggregates.
//!
//! Invariant: the state is a function of the set of records it holds (and the base epoch and parameters), never of
//! the order in which they arrived or of the times at which it was read. The clock only caches which controller caps
//! have expired; reading before the clock rescans instead. `assess_records` recomputes the same result from a slice,
//! independently, and the tests check that the two agree bit for bit.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};

use super::error::TrustError;
use super::evidence::{ControllerRef, EvidenceKind, EvidenceRecord, RecordEffect, record_effect};
use super::explanation::{ExcludedCounts, Explanation, ExplanationInputs, InstanceRowView, build_explanation};
use super::fixed_point::{TimeMultiset, days_between, epoch_for, growth_factor, to_fixed};
use super::params::TrustParameters;
use super::summary::{Assessment, Evaluation, FirstPartyTotals, InstanceReading, InstanceTotals, assemble};
use super::target_bucket::{Bucket, Change, RecordContribution};

/// The target a state is about: its id (a content revision or a claim) and its author's root controller, whose own
/// evidence weighs 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetDescriptor {
    pub target_id: String,
    pub author: ControllerRef,
}

/// Who asks for a retraction. The local instance may retract any record (its actors' own records, moderation);
/// a peer may retract only records that originated on that peer (first-party immutability, P9).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RetractionAuthority {
    Local,
    Peer(String),
}

/// Reviews are superseded per (origin, actor): remote actors are namespaced by their origin.
type ActorKey = (Option<String>, String);

/// An actor's counting reviews by (time, record id); the last one is the active one.
type ReviewsOfActor = BTreeSet<(DateTime<Utc>, String)>;

/// Why a held record does or does not count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Disposition {
    Active,
    Superseded,
    SelfEvidence,
    UnsignedRemote,
    Retracted,
}

/// A held record: what the state needs to apply, remove or re-apply it.
#[derive(Debug, Clone)]
struct HeldRecord {
    origin: Option<String>,
    controller: String,
    actor: String,
    recorded_at: DateTime<Utc>,
    is_review: bool,
    effect: RecordEffect,
    gate_passed: bool,
    disposition: Disposition,
}

/// The incremental trust state of one target.
#[derive(Debug, Clone)]
pub struct TargetState {
    /// The target and its author.
    descriptor: TargetDescriptor,
    /// The parameters every contribution was computed with.
    params: TrustParameters,
    /// The epoch the caller chose; the fixed-point epoch starts here and moves only for far-future records.
    base_epoch: DateTime<Utc>,
    /// The current fixed-point epoch, `epoch_for(base_epoch, latest held record)`.
    epoch: DateTime<Utc>,
    /// The time at which the buckets' cap classifications hold; `None` means before every possible time.
    clock: Option<DateTime<Utc>>,
    /// Every record ever given to the state, by id (retracted ones are kept as tombstones).
    records: BTreeMap<String, HeldRecord>,
    /// The times of the non-retracted records, for the epoch rule.
    held_record_times: TimeMultiset,
    /// First-party controllers.
    first_party: Bucket,
    /// One bucket per remote origin instance, by origin realm.
    instances: BTreeMap<String, Bucket>,
    /// Counting reviews per (origin, actor), by (time, id): only the last one is active.
    reviews_by_actor: BTreeMap<ActorKey, ReviewsOfActor>,
    self_evidence_records: u32,
    unsigned_remote_records: u32,
    retracted_records: u32,
    superseded_reviews: u32,
}

impl TargetState {
    /// An empty state. `base_epoch` anchors the fixed-point sums; any fixed time works (the target's creation time
    /// is a good choice) as long as the full recomputation used for verification is given the same one.
    pub fn new(descriptor: TargetDescriptor, params: TrustParameters, base_epoch: DateTime<Utc>) -> Self {
        TargetState {
            descriptor,
            params,
            base_epoch,
            epoch: base_epoch,
            clock: None,
            records: BTreeMap::new(),
            held_record_times: TimeMultiset::default(),
            first_party: Bucket::default(),
            instances: BTreeMap::new(),
            reviews_by_actor: BTreeMap::new(),
            self_evidence_records: 0,
            unsigned_remote_records: 0,
            retracted_records: 0,
            superseded_reviews: 0,
        }
    }

    /// A state holding `records`, added one by one.
    pub fn from_records(
        descriptor: TargetDescriptor,
        params: TrustParameters,
        base_epoch: DateTime<Utc>,
        records: &[EvidenceRecord],
    ) -> Result<Self, TrustError> {
        let mut state = TargetState::new(descriptor, params, base_epoch);
        for record in records {
            state.add(record)?;
        }
        Ok(state)
    }

    /// The target this state is about.
    pub fn descriptor(&self) -> &TargetDescriptor {
        &self.descriptor
    }

    /// The parameters of this state.
    pub fn params(&self) -> &TrustParameters {
        &self.params
    }

    /// The current fixed-point epoch.
    pub fn epoch(&self) -> DateTime<Utc> {
        self.epoch
    }

    /// How many records the state holds, retracted ones included.
    pub fn held_records(&self) -> usize {
        self.records.len()
    }

    /// Whether the state holds a record of another realm (active or not).
    pub fn holds_remote_records(&self) -> bool {
        !self.instances.is_empty() || self.records.values().any(|record| record.origin.is_some())
    }

    /// Whether `record_id` is a held first-party record.
    pub fn holds_first_party_record(&self, record_id: &str) -> bool {
        self.records
            .get(record_id)
            .is_some_and(|record| record.origin.is_none())
    }

    /// Absorbs one record: O(log n) (a review may also reactivate or supersede one other review). A record that
    /// arrives already retracted is held and counted as retracted. Refuses a duplicate id or invalid fields.
    pub fn add(&mut self, record: &EvidenceRecord) -> Result<(), TrustError> {
        if self.records.contains_key(&record.record_id) {
            return Err(TrustError::DuplicateRecord {
                record_id: record.record_id.clone(),
            });
        }
        let effect = record_effect(record, &self.params)?;
        let gate_passed = self
            .params
            .strong_refutation_gate
            .is_eligible(&record.standing, record.recorded_at);
        let disposition = if record.retracted {
            Disposition::Retracted
        } else if record.is_remote() && !record.origin_signature_valid {
            Disposition::UnsignedRemote
        } else if record.origin == self.descriptor.author.origin
            && record.root_controller == self.descriptor.author.controller
        {
            Disposition::SelfEvidence
        } else {
            Disposition::Active
        };
        self.records.insert(
            record.record_id.clone(),
            HeldRecord {
                origin: record.origin.clone(),
                controller: record.root_controller.clone(),
                actor: record.actor.clone(),
                recorded_at: record.recorded_at,
                is_review: matches!(record.kind, EvidenceKind::Review { .. }),
                effect,
                gate_passed,
                disposition,
            },
        );
        match disposition {
            Disposition::Retracted => {
                self.retracted_records += 1;
                return Ok(());
            }
            Disposition::UnsignedRemote => self.unsigned_remote_records += 1,
            Disposition::SelfEvidence => self.self_evidence_records += 1,
            Disposition::Active | Disposition::Superseded => {}
        }
        self.held_record_times.insert(record.recorded_at);
        if self.epoch_needs_rebase() {
            self.rebuild();
        } else if disposition == Disposition::Active {
            self.place(&record.record_id);
        }
        Ok(())
    }

    /// Retracts one record by id, removing its exact integer contribution (and reactivating the same actor's
    /// previous review if the retracted one was the latest). A peer may retract only records of its own origin.
    pub fn retract(&mut self, record_id: &str, authority: &RetractionAuthority) -> Result<(), TrustError> {
        let Some(held) = self.records.get(record_id) else {
            return Err(TrustError::UnknownRecord {
                record_id: record_id.to_string(),
            });
        };
        if held.disposition == Disposition::Retracted {
            return Err(TrustError::AlreadyRetracted {
                record_id: record_id.to_string(),
            });
        }
        if let RetractionAuthority::Peer(peer) = authority
            && held.origin.as_deref() != Some(peer.as_str())
        {
            return Err(TrustError::RetractionRefused {
                record_id: record_id.to_string(),
                requested_by: peer.clone(),
            });
        }
        let (disposition, recorded_at, is_review) = (held.disposition, held.recorded_at, held.is_review);
        let actor_key = (held.origin.clone(), held.actor.clone());
        match disposition {
            Disposition::Active => {
                self.deactivate(record_id);
                if is_review {
                    let reactivated = self.remove_from_review_index(&actor_key, recorded_at, record_id);
                    if let Some(previous_id) = reactivated {
                        self.superseded_reviews -= 1;
                        self.activate(&previous_id);
                    }
                }
            }
            Disposition::Superseded => {
                self.remove_from_review_index(&actor_key, recorded_at, record_id);
                self.superseded_reviews -= 1;
            }
            Disposition::SelfEvidence => self.self_evidence_records -= 1,
            Disposition::UnsignedRemote => self.unsigned_remote_records -= 1,
            Disposition::Retracted => {}
        }
        if let Some(held) = self.records.get_mut(record_id) {
            held.disposition = Disposition::Retracted;
        }
        self.retracted_records += 1;
        self.held_record_times.remove(recorded_at);
        if self.epoch_needs_rebase() {
            self.rebuild();
        }
        Ok(())
    }

    /// Moves the clock forward to `now`, expiring the controller caps that ran out in between. Reads at or after
    /// the clock are then O(log k + P_x). Moving backwards does nothing: reads before the clock rescan instead.
    pub fn advance_clock(&mut self, now: DateTime<Utc>) {
        if self.clock.is_some_and(|clock| clock >= now) {
            return;
        }
        let now_days = days_between(self.epoch, now);
        self.first_party.advance(now_days);
        for bucket in self.instances.values_mut() {
            bucket.advance(now_days);
        }
        self.clock = Some(now);
    }

    /// Value, interval, opinion, counts and status at `evaluation.now`. Advances the clock first.
    pub fn assess(&mut self, evaluation: &Evaluation<'_>) -> Assessment {
        self.advance_clock(evaluation.now);
        self.assess_without_advancing(evaluation)
    }

    /// The same as [`TargetState::assess`] through a shared reference: caps expired since the clock are adjusted
    /// on the fly instead of being committed.
    pub fn assess_without_advancing(&self, evaluation: &Evaluation<'_>) -> Assessment {
        self.read(evaluation).0
    }

    /// The full explanation (§2.13) at `evaluation.now`. Advances the clock first.
    pub fn explain(&mut self, evaluation: &Evaluation<'_>, reputation_epoch: &str) -> Explanation {
        self.advance_clock(evaluation.now);
        let (assessment, readings) = self.read(evaluation);
        let instance_rows: Vec<InstanceRowView> = self
            .instances
            .values()
            .filter(|bucket| bucket.active_records > 0)
            .map(|bucket| bucket.instance_row_view())
            .collect();
        let inputs = ExplanationInputs {
            target_id: &self.descriptor.target_id,
            author_controller: &self.descriptor.author.controller,
            self_evidence_records: self.self_evidence_records,
            epoch: self.epoch,
            evaluation,
            reputation_epoch,
            params: &self.params,
            reviews_cannot_verify: self.first_party.cannot_verify_reviews
                + self
                    .instances
                    .values()
                    .map(|bucket| bucket.cannot_verify_reviews)
                    .sum::<u32>(),
            excluded: ExcludedCounts {
                self_evidence: self.self_evidence_records,
                unsigned_remote: self.unsigned_remote_records,
                weight0_instances: 0,
                weight0_instance_records: 0,
                retracted: self.retracted_records,
                superseded_reviews: self.superseded_reviews,
            },
        };
        build_explanation(
            inputs,
            assessment,
            readings,
            self.first_party.row_views(),
            &instance_rows,
        )
    }

    /// The read path shared by `assess` and `explain`.
    fn read(&self, evaluation: &Evaluation<'_>) -> (Assessment, Vec<InstanceReading>) {
        let now_days = days_between(self.epoch, evaluation.now);
        let clock_days = self
            .clock
            .map_or(f64::NEG_INFINITY, |clock| days_between(self.epoch, clock));
        let bucket = &self.first_party;
        let first_party = FirstPartyTotals {
            sums: bucket.sums_at(now_days, clock_days),
            positive_parties: bucket.positive_rows,
            negative_parties: bucket.negative_rows,
            positive_parties_with_real_world_success: bucket.positive_rows_with_real_world_success,
            refuters: bucket.refutation_times.len(),
            earliest_refutation_times: bucket
                .refutation_times
                .earliest_n(self.params.refuters_for_proof as usize),
            outdated_signalling_parties: bucket.first_outdated_signal_times.len(),
            earliest_outdated_signal_times: bucket
                .first_outdated_signal_times
                .earliest_n(self.params.outdated_min_parties as usize),
        };
        let instances: Vec<InstanceTotals<'_>> = self
            .instances
            .iter()
            .filter(|(_, bucket)| bucket.active_records > 0)
            .map(|(origin, bucket)| InstanceTotals {
                origin: origin.as_str(),
                sums: bucket.sums_at(now_days, clock_days),
                real_world_success_records: bucket.real_world_success_records,
                earliest_outdated_signal: bucket.first_outdated_signal_times.earliest(),
            })
            .collect();
        let successes_after =
            |time: DateTime<Utc>, limit: u32| bucket.last_success_of_positive_rows.count_after(time, limit);
        assemble(
            &first_party,
            &instances,
            &successes_after,
            self.epoch,
            evaluation,
            &self.params,
        )
    }

    /// Whether the epoch rule asks for a different epoch than the current one.
    fn epoch_needs_rebase(&self) -> bool {
        epoch_for(
            self.base_epoch,
            self.held_record_times.latest(),
            self.params.half_life_days,
        ) != self.epoch
    }

    /// Recomputes every contribution at the epoch the rule asks for (one full pass; rare by construction).
    fn rebuild(&mut self) {
        self.epoch = epoch_for(
            self.base_epoch,
            self.held_record_times.latest(),
            self.params.half_life_days,
        );
        self.first_party = Bucket::default();
        self.instances = BTreeMap::new();
        self.reviews_by_actor = BTreeMap::new();
        self.superseded_reviews = 0;
        let countable: Vec<String> = self
            .records
            .iter()
            .filter(|(_, held)| matches!(held.disposition, Disposition::Active | Disposition::Superseded))
            .map(|(record_id, _)| record_id.clone())
            .collect();
        for record_id in countable {
            if let Some(held) = self.records.get_mut(&record_id) {
                held.disposition = Disposition::Active;
            }
            self.place(&record_id);
        }
    }

    /// Places a countable record: a usage report is activated; a review becomes active if it is its actor's latest
    /// (superseding the previous latest) and is held as superseded otherwise.
    fn place(&mut self, record_id: &str) {
        let Some(held) = self.records.get(record_id) else {
            return;
        };
        if !held.is_review {
            self.activate(record_id);
            return;
        }
        let actor_key = (held.origin.clone(), held.actor.clone());
        let entry = (held.recorded_at, record_id.to_string());
        let reviews = self.reviews_by_actor.entry(actor_key).or_default();
        let previous_latest = reviews.last().cloned();
        reviews.insert(entry.clone());
        let is_latest = reviews.last() == Some(&entry);
        if !is_latest {
            // An older review arriving late: it is held, superseded from the start.
            self.superseded_reviews += 1;
            if let Some(held) = self.records.get_mut(record_id) {
                held.disposition = Disposition::Superseded;
            }
            return;
        }
        if let Some((_, previous_id)) = previous_latest {
            self.deactivate(&previous_id);
            self.superseded_reviews += 1;
            if let Some(previous) = self.records.get_mut(&previous_id) {
                previous.disposition = Disposition::Superseded;
            }
        }
        self.activate(record_id);
    }

    /// Removes a review from its actor's index and returns the id of the review that becomes the latest, if the
    /// removed one was the latest.
    fn remove_from_review_index(
        &mut self,
        actor_key: &ActorKey,
        recorded_at: DateTime<Utc>,
        record_id: &str,
    ) -> Option<String> {
        let reviews = self.reviews_by_actor.get_mut(actor_key)?;
        let entry = (recorded_at, record_id.to_string());
        let was_latest = reviews.last() == Some(&entry);
        reviews.remove(&entry);
        let successor = if was_latest {
            reviews.last().map(|(_, id)| id.clone())
        } else {
            None
        };
        if reviews.is_empty() {
            self.reviews_by_actor.remove(actor_key);
        }
        successor
    }

    /// Adds a record's contribution to its bucket and marks it active.
    fn activate(&mut self, record_id: &str) {
        self.change_contribution(record_id, Change::Add, Disposition::Active);
    }

    /// Removes a record's contribution from its bucket (the caller sets the new disposition).
    fn deactivate(&mut self, record_id: &str) {
        self.change_contribution(record_id, Change::Remove, Disposition::Active);
    }

    fn change_contribution(&mut self, record_id: &str, change: Change, disposition_after: Disposition) {
        let Some(held) = self.records.get_mut(record_id) else {
            return;
        };
        if change == Change::Add {
            held.disposition = disposition_after;
        }
        let held = &*held;
        let contribution = contribution_of(held, self.epoch, &self.params);
        let clock_days = self
            .clock
            .map_or(f64::NEG_INFINITY, |clock| days_between(self.epoch, clock));
        let bucket = match &held.origin {
            None => &mut self.first_party,
            Some(origin) => self.instances.entry(origin.clone()).or_default(),
        };
        bucket.apply(
            &held.controller,
            &contribution,
            change,
            clock_days,
            self.params.controller_cap,
            self.params.half_life_days,
        );
    }
}

/// A held record's contribution at `epoch`: the same integers every time, so removal is exact.
fn contribution_of(held: &HeldRecord, epoch: DateTime<Utc>, params: &TrustParameters) -> RecordContribution {
    contribution_from_parts(
        held.origin.is_none(),
        held.recorded_at,
        &held.effect,
        held.gate_passed,
        epoch,
        params,
    )
}

/// The contribution of one record from its parts; the full recomputation uses the same function.
pub(crate) fn contribution_from_parts(
    first_party: bool,
    recorded_at: DateTime<Utc>,
    effect: &RecordEffect,
    gate_passed: bool,
    epoch: DateTime<Utc>,
    params: &TrustParameters,
) -> RecordContribution {
    let growth = growth_factor(days_between(epoch, recorded_at), params.half_life_days);
    let strong_refutation = first_party && effect.strong_refutation_candidate;
    RecordContribution {
        belief_fixed: to_fixed(effect.belief_units, growth),
        disbelief_fixed: to_fixed(effect.disbelief_units, growth),
        recorded_at,
        real_world_success: effect.real_world_success,
        eligible_strong_refutation: strong_refutation && gate_passed,
        ineligible_strong_refutation: strong_refutation && !gate_passed,
        outdated_signal: effect.outdated_signal,
        cannot_verify: effect.cannot_verify,
    }
}
