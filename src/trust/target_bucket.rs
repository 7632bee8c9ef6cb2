//! One bucket of a target state (§4): the first-party bucket or one remote instance's bucket, holding one row per
//! root controller and the aggregates the read path needs.
//!
//! Every change to a row goes through `detach` (remove the row's part from every aggregate), the change, and
//! `attach` (add the row's part back). Aggregates are integers or multisets, so they always equal a rescan of the
//! rows, whatever the order of changes.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};

use super::explanation::{ControllerRowView, InstanceRowView};
use super::fixed_point::{CapShape, FixedSums, OrderedDays, TimeMultiset};

/// What one active record adds to its controller's row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct RecordContribution {
    pub(crate) belief_fixed: i128,
    pub(crate) disbelief_fixed: i128,
    pub(crate) recorded_at: DateTime<Utc>,
    pub(crate) real_world_success: bool,
    pub(crate) eligible_strong_refutation: bool,
    pub(crate) ineligible_strong_refutation: bool,
    pub(crate) outdated_signal: bool,
    pub(crate) cannot_verify: bool,
}

/// One root controller's evidence on the target.
#[derive(Debug, Clone, Default)]
pub(crate) struct ControllerRow {
    /// Σ w·p·2^(t_i/h) relative to the epoch, in fixed point (Er).
    belief_fixed: i128,
    /// Σ w·n·2^(t_i/h) relative to the epoch, in fixed point (Es).
    disbelief_fixed: i128,
    /// Active records of this controller.
    records: u32,
    real_world_successes: TimeMultiset,
    eligible_strong_refutations: TimeMultiset,
    ineligible_strong_refutations: u32,
    outdated_signals: TimeMultiset,
    cannot_verify_reviews: u32,
    /// The row's cap behaviour, a function of (Er, Es) alone.
    cap_shape: Option<CapShape>,
    /// Whether the row is capped at the state's clock (and so listed in `cap_expiries`).
    capped_at_clock: bool,
}

impl ControllerRow {
    fn stance_sign(&self) -> std::cmp::Ordering {
        self.belief_fixed.cmp(&self.disbelief_fixed)
    }
}

/// A bucket: rows by controller plus the aggregates that make reads O(log k + expired caps).
#[derive(Debug, Clone, Default)]
pub(crate) struct Bucket {
    rows: Vec<ControllerRow>,
    row_by_controller: BTreeMap<String, usize>,
    /// K and Ref as classified at the state's clock.
    sums_at_clock: FixedSums,
    /// Capped rows at the clock, by the time their cap expires.
    cap_expiries: BTreeSet<(OrderedDays, usize)>,
    pub(crate) positive_rows: u32,
    pub(crate) negative_rows: u32,
    pub(crate) positive_rows_with_real_world_success: u32,
    pub(crate) real_world_success_records: u32,
    pub(crate) active_records: u32,
    pub(crate) active_controllers: u32,
    pub(crate) cannot_verify_reviews: u32,
    /// T_ref of every refuter row (negative stance, at least one eligible strong refutation).
    pub(crate) refutation_times: TimeMultiset,
    /// The first outdated signal of every row that has one.
    pub(crate) first_outdated_signal_times: TimeMultiset,
    /// The latest real-world success of every row with positive stance that has one (answers succ_after).
    pub(crate) last_success_of_positive_rows: TimeMultiset,
}

/// Whether a contribution is being added or removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Change {
    Add,
    Remove,
}

impl Bucket {
    /// Adds or removes one record's contribution to `controller`'s row, re-classifying the row at `clock_days`.
    pub(crate) fn apply(
        &mut self,
        controller: &str,
        contribution: &RecordContribution,
        change: Change,
        clock_days: f64,
        cap_units: f64,
        half_life_days: f64,
    ) {
        let index = match self.row_by_controller.get(controller) {
            Some(index) => *index,
            None => {
                self.rows.push(ControllerRow::default());
                self.row_by_controller
                    .insert(controller.to_string(), self.rows.len() - 1);
                self.rows.len() - 1
            }
        };
        self.detach(index);
        let row = &mut self.rows[index];
        let time = contribution.recorded_at;
        match change {
            Change::Add => {
                row.belief_fixed += contribution.belief_fixed;
                row.disbelief_fixed += contribution.disbelief_fixed;
                row.records += 1;
                if contribution.real_world_success {
                    row.real_world_successes.insert(time);
                }
                if contribution.eligible_strong_refutation {
                    row.eligible_strong_refutations.insert(time);
                }
                if contribution.ineligible_strong_refutation {
                    row.ineligible_strong_refutations += 1;
                }
                if contribution.outdated_signal {
                    row.outdated_signals.insert(time);
                }
                if contribution.cannot_verify {
                    row.cannot_verify_reviews += 1;
                }
            }
            Change::Remove => {
                row.belief_fixed -= contribution.belief_fixed;
                row.disbelief_fixed -= contribution.disbelief_fixed;
                row.records -= 1;
                if contribution.real_world_success {
                    row.real_world_successes.remove(time);
                }
                if contribution.eligible_strong_refutation {
                    row.eligible_strong_refutations.remove(time);
                }
                if contribution.ineligible_strong_refutation {
                    row.ineligible_strong_refutations -= 1;
                }
                if contribution.outdated_signal {
                    row.outdated_signals.remove(time);
                }
                if contribution.cannot_verify {
                    row.cannot_verify_reviews -= 1;
                }
            }
        }
        row.cap_shape = CapShape::of_row(row.belief_fixed, row.disbelief_fixed, cap_units, half_life_days);
        self.attach(index, clock_days);
    }

    /// Removes row `index`'s part from every aggregate.
    fn detach(&mut self, index: usize) {
        let row = &self.rows[index];
        if row.records > 0 {
            self.active_controllers -= 1;
        }
        self.active_records -= row.records;
        self.real_world_success_records -= row.real_world_successes.len();
        self.cannot_verify_reviews -= row.cannot_verify_reviews;
        let cap = if row.capped_at_clock {
            row.cap_shape.as_ref()
        } else {
            None
        };
        self.sums_at_clock
            .remove_row(row.belief_fixed, row.disbelief_fixed, cap);
        if let Some(shape) = cap {
            self.cap_expiries.remove(&(OrderedDays(shape.expiry_days), index));
        }
        match row.stance_sign() {
            std::cmp::Ordering::Greater => {
                self.positive_rows -= 1;
                if let Some(last_success) = row.real_world_successes.latest() {
                    self.positive_rows_with_real_world_success -= 1;
                    self.last_success_of_positive_rows.remove(last_success);
                }
            }
            std::cmp::Ordering::Less => {
                self.negative_rows -= 1;
                if let Some(first_refutation) = row.eligible_strong_refutations.earliest() {
                    self.refutation_times.remove(first_refutation);
                }
            }
            std::cmp::Ordering::Equal => {}
        }
        if let Some(first_signal) = row.outdated_signals.earliest() {
            self.first_outdated_signal_times.remove(first_signal);
        }
    }

    /// Adds row `index`'s part to every aggregate, classifying its cap at `clock_days`.
    fn attach(&mut self, index: usize, clock_days: f64) {
        let row = &mut self.rows[index];
        row.capped_at_clock = row.cap_shape.is_some_and(|shape| shape.is_capped_at(clock_days));
        let row = &self.rows[index];
        if row.records > 0 {
            self.active_controllers += 1;
        }
        self.active_records += row.records;
        self.real_world_success_records += row.real_world_successes.len();
        self.cannot_verify_reviews += row.cannot_verify_reviews;
        let cap = if row.capped_at_clock {
            row.cap_shape.as_ref()
        } else {
            None
        };
        self.sums_at_clock.add_row(row.belief_fixed, row.disbelief_fixed, cap);
        if let Some(shape) = cap {
            self.cap_expiries.insert((OrderedDays(shape.expiry_days), index));
        }
        match row.stance_sign() {
            std::cmp::Ordering::Greater => {
                self.positive_rows += 1;
                if let Some(last_success) = row.real_world_successes.latest() {
                    self.positive_rows_with_real_world_success += 1;
                    self.last_success_of_positive_rows.insert(last_success);
                }
            }
            std::cmp::Ordering::Less => {
                self.negative_rows += 1;
                if let Some(first_refutation) = row.eligible_strong_refutations.earliest() {
                    self.refutation_times.insert(first_refutation);
                }
            }
            std::cmp::Ordering::Equal => {}
        }
        if let Some(first_signal) = row.outdated_signals.earliest() {
            self.first_outdated_signal_times.insert(first_signal);
        }
    }

    /// Moves every row whose cap expired by `clock_days` from the capped sums to the free sums.
    pub(crate) fn advance(&mut self, clock_days: f64) {
        while let Some(&(expiry, index)) = self.cap_expiries.first() {
            if expiry.0 > clock_days {
                break;
            }
            self.cap_expiries.remove(&(expiry, index));
            let row = &mut self.rows[index];
            row.capped_at_clock = false;
            let (belief, disbelief, shape) = (row.belief_fixed, row.disbelief_fixed, row.cap_shape);
            self.sums_at_clock.remove_row(belief, disbelief, shape.as_ref());
            self.sums_at_clock.add_row(belief, disbelief, None);
        }
    }

    /// K and Ref at `now_days`, without changing the bucket. From a clock at or before `now_days` only the caps
    /// expired in between are adjusted; before the clock (a historical read) the rows are rescanned.
    pub(crate) fn sums_at(&self, now_days: f64, clock_days: f64) -> FixedSums {
        if now_days >= clock_days {
            let mut sums = self.sums_at_clock;
            for (expiry, index) in &self.cap_expiries {
                if expiry.0 > now_days {
                    break;
                }
                let row = &self.rows[*index];
                sums.remove_row(row.belief_fixed, row.disbelief_fixed, row.cap_shape.as_ref());
                sums.add_row(row.belief_fixed, row.disbelief_fixed, None);
            }
            sums
        } else {
            let mut sums = FixedSums::default();
            for row in &self.rows {
                let capped = row.cap_shape.filter(|shape| shape.is_capped_at(now_days));
                sums.add_row(row.belief_fixed, row.disbelief_fixed, capped.as_ref());
            }
            sums
        }
    }

    /// The rows in controller order, as the explanation reads them.
    pub(crate) fn row_views(&self) -> impl Iterator<Item = ControllerRowView<'_>> {
        self.row_by_controller.iter().map(|(controller, index)| {
            let row = &self.rows[*index];
            ControllerRowView {
                controller: controller.as_str(),
                records: row.records,
                belief_fixed: row.belief_fixed,
                disbelief_fixed: row.disbelief_fixed,
                cap_shape: row.cap_shape,
                real_world_success: !row.real_world_successes.is_empty(),
                eligible_strong_refutation: !row.eligible_strong_refutations.is_empty(),
                ineligible_strong_refutation: row.ineligible_strong_refutations > 0,
                outdated_signal: !row.outdated_signals.is_empty(),
            }
        })
    }

    /// The instance summary the explanation reads.
    pub(crate) fn instance_row_view(&self) -> InstanceRowView {
        InstanceRowView {
            records: self.active_records,
            remote_controllers: self.active_controllers,
            real_world_success: self.real_world_success_records > 0,
            outdated_signal: !self.first_outdated_signal_times.is_empty(),
        }
    }
}
