//! Fixed-point evidence arithmetic (§4): integer evidence relative to an epoch, the per-controller cap shape, the
//! epoch rule, and a small time multiset.
//!
//! Invariant: every quantity that is summed across records or controllers is an `i128` computed from one record or
//! one controller row alone. Integer sums do not depend on order, and removing a record subtracts exactly what adding
//! it added, so retraction restores the prior state bit for bit and incremental maintenance equals full recomputation.
//! Floats appear only in per-record and per-row conversions and in the final read-time formulas, which both paths
//! share.

use std::collections::BTreeMap;

use chrono::{DateTime, TimeDelta, Utc};

/// Fixed-point units per evidence unit.
pub(crate) const FIXED_POINT_SCALE: f64 = 1e12;

const MILLISECONDS_PER_DAY: f64 = 86_400_000.0;

/// Records may lie at most this many half-lives after the epoch before the epoch moves forward. At 48 half-lives a
/// record of weight 1.125 is below 3.2e26 fixed-point units, so an i128 (up to 1.7e38) holds the sum of 5e11 of them.
const REBASE_LIMIT_HALF_LIVES: f64 = 48.0;

/// The epoch moves in steps of this many half-lives, so that rebasing (a full pass) is rare.
const REBASE_STEP_HALF_LIVES: f64 = 16.0;

/// Days from `from` to `to`, at millisecond resolution.
pub(crate) fn days_between(from: DateTime<Utc>, to: DateTime<Utc>) -> f64 {
    (to - from).num_milliseconds() as f64 / MILLISECONDS_PER_DAY
}

/// 2^(days / h): how much a record made `days` after the epoch is scaled up in the fixed-point sums.
pub(crate) fn growth_factor(days_since_epoch: f64, half_life_days: f64) -> f64 {
    if half_life_days.is_infinite() {
        1.0
    } else {
        (days_since_epoch / half_life_days).exp2()
    }
}

/// 2^(−days / h): how much the fixed-point sums are scaled down when read `days` after the epoch.
pub(crate) fn decay_factor(days_since_epoch: f64, half_life_days: f64) -> f64 {
    if half_life_days.is_infinite() {
        1.0
    } else {
        (-days_since_epoch / half_life_days).exp2()
    }
}

/// `units · growth` in fixed point, rounded to the nearest integer.
pub(crate) fn to_fixed(units: f64, growth: f64) -> i128 {
    (units * growth * FIXED_POINT_SCALE).round() as i128
}

/// The epoch for a set of records whose latest time is `latest`: `base` unless the latest record lies more than
/// 48 half-lives after it, then `base` moved forward in steps of 16 half-lives. A pure function of the record set, so
/// an incremental state and a full recomputation over the same records use the same epoch.
pub(crate) fn epoch_for(base: DateTime<Utc>, latest: Option<DateTime<Utc>>, half_life_days: f64) -> DateTime<Utc> {
    let Some(latest) = latest else { return base };
    if half_life_days.is_infinite() {
        return base;
    }
    let span_half_lives = days_between(base, latest) / half_life_days;
    if span_half_lives <= REBASE_LIMIT_HALF_LIVES {
        return base;
    }
    let steps = ((span_half_lives - REBASE_LIMIT_HALF_LIVES) / REBASE_STEP_HALF_LIVES).ceil();
    let shift_milliseconds = (steps * REBASE_STEP_HALF_LIVES * half_life_days * MILLISECONDS_PER_DAY).round();
    base + TimeDelta::milliseconds(shift_milliseconds as i64)
}

/// How a controller row with fixed-point masses (Er, Es) behaves under the controller cap C: while its decayed mass
/// exceeds C it contributes the constant `C·(Er, Es)/(Er + Es)`; from `expiry_days` (days after the epoch) on, it
/// decays freely. The two forms meet exactly at the expiry time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct CapShape {
    /// h·log2((Er + Es)/C): the row is capped strictly before this time. ±∞ when there is no decay.
    pub(crate) expiry_days: f64,
    /// C·Er/(Er + Es) in fixed point.
    pub(crate) capped_belief: i128,
    /// C·Es/(Er + Es) in fixed point.
    pub(crate) capped_disbelief: i128,
}

impl CapShape {
    /// The cap shape of a row, or `None` for a row without mass (it is never capped and contributes nothing).
    pub(crate) fn of_row(belief: i128, disbelief: i128, cap_units: f64, half_life_days: f64) -> Option<CapShape> {
        let mass = belief + disbelief;
        if mass <= 0 {
            return None;
        }
        let mass_float = mass as f64;
        let cap_fixed = cap_units * FIXED_POINT_SCALE;
        let expiry_days = if half_life_days.is_infinite() {
            if mass_float > cap_fixed {
                f64::INFINITY
            } else {
                f64::NEG_INFINITY
            }
        } else {
            half_life_days * (mass_float / cap_fixed).log2()
        };
        Some(CapShape {
            expiry_days,
            capped_belief: (belief as f64 / mass_float * cap_fixed).round() as i128,
            capped_disbelief: (disbelief as f64 / mass_float * cap_fixed).round() as i128,
        })
    }

    /// The one cap predicate both the incremental state and the full recomputation use.
    pub(crate) fn is_capped_at(&self, now_days: f64) -> bool {
        now_days < self.expiry_days
    }
}

/// An f64 with a total order, for the cap-expiry index.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OrderedDays(pub(crate) f64);

impl PartialEq for OrderedDays {
    fn eq(&self, other: &Self) -> bool {
        self.0.total_cmp(&other.0).is_eq()
    }
}

impl Eq for OrderedDays {}

impl PartialOrd for OrderedDays {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for OrderedDays {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// Fixed-point sums of a bucket at one moment: capped rows' constants (K) and uncapped rows' epoch-relative masses
/// (Ref). The bucket's current evidence is `K + Ref·2^(−now/h)`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct FixedSums {
    pub(crate) capped_belief: i128,
    pub(crate) capped_disbelief: i128,
    pub(crate) free_belief: i128,
    pub(crate) free_disbelief: i128,
}

impl FixedSums {
    /// The current (r, s) in evidence units, given the decay factor of `now`.
    pub(crate) fn units(&self, decay: f64) -> (f64, f64) {
        (
            (self.capped_belief as f64 + self.free_belief as f64 * decay) / FIXED_POINT_SCALE,
            (self.capped_disbelief as f64 + self.free_disbelief as f64 * decay) / FIXED_POINT_SCALE,
        )
    }

    /// Adds a row's contribution, capped or free.
    pub(crate) fn add_row(&mut self, belief: i128, disbelief: i128, cap: Option<&CapShape>) {
        match cap {
            Some(shape) => {
                self.capped_belief += shape.capped_belief;
                self.capped_disbelief += shape.capped_disbelief;
            }
            None => {
                self.free_belief += belief;
                self.free_disbelief += disbelief;
            }
        }
    }

    /// Removes a row's contribution, capped or free.
    pub(crate) fn remove_row(&mut self, belief: i128, disbelief: i128, cap: Option<&CapShape>) {
        match cap {
            Some(shape) => {
                self.capped_belief -= shape.capped_belief;
                self.capped_disbelief -= shape.capped_disbelief;
            }
            None => {
                self.free_belief -= belief;
                self.free_disbelief -= disbelief;
            }
        }
    }
}

/// A multiset of times with counts, supporting exact removal (retraction) and small ordered queries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TimeMultiset {
    counts: BTreeMap<DateTime<Utc>, u32>,
    len: u32,
}

impl TimeMultiset {
    pub(crate) fn insert(&mut self, time: DateTime<Utc>) {
        *self.counts.entry(time).or_insert(0) += 1;
        self.len += 1;
    }

    /// Removes one occurrence of `time`; removing an absent time is a no-op (callers only remove what they added).
    pub(crate) fn remove(&mut self, time: DateTime<Utc>) {
        if let Some(count) = self.counts.get_mut(&time) {
            *count -= 1;
            self.len -= 1;
            if *count == 0 {
                self.counts.remove(&time);
            }
        }
    }

    pub(crate) fn len(&self) -> u32 {
        self.len
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub(crate) fn earliest(&self) -> Option<DateTime<Utc>> {
        self.counts.keys().next().copied()
    }

    pub(crate) fn latest(&self) -> Option<DateTime<Utc>> {
        self.counts.keys().next_back().copied()
    }

    /// The `n` earliest times, with repetition, in ascending order.
    pub(crate) fn earliest_n(&self, n: usize) -> Vec<DateTime<Utc>> {
        let mut times = Vec::with_capacity(n);
        for (time, count) in &self.counts {
            for _ in 0..*count {
                if times.len() == n {
                    return times;
                }
                times.push(*time);
            }
        }
        times
    }

    /// How many elements lie strictly after `time`, counting no further than `limit` (the status rules only
    /// compare these counts with small thresholds, so the query costs O(log n + limit)).
    pub(crate) fn count_after(&self, time: DateTime<Utc>, limit: u32) -> u32 {
        let mut counted = 0u32;
        for (candidate, count) in self.counts.iter().rev() {
            if *candidate <= time || counted >= limit {
                break;
            }
            counted = counted.saturating_add(*count);
        }
        counted.min(limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn cap_shape_is_continuous_at_expiry() {
        let belief = to_fixed(3.0, 1.0);
        let disbelief = to_fixed(1.0, 1.0);
        let shape = CapShape::of_row(belief, disbelief, 1.0, 365.0).expect("row has mass");
        assert!((shape.expiry_days - 730.0).abs() < 1e-9);
        let decay = decay_factor(shape.expiry_days, 365.0);
        let free = belief as f64 * decay / FIXED_POINT_SCALE;
        let capped = shape.capped_belief as f64 / FIXED_POINT_SCALE;
        assert!((free - capped).abs() < 1e-12);
        assert!(shape.is_capped_at(729.9) && !shape.is_capped_at(730.0));
    }

    #[test]
    fn epoch_moves_only_past_48_half_lives() {
        let base = Utc.with_ymd_and_hms(2020, 1, 1, 0, 0, 0).single().expect("valid date");
        let near = base + TimeDelta::days(48 * 30);
        assert_eq!(epoch_for(base, Some(near), 30.0), base);
        let far = base + TimeDelta::days(49 * 30);
        assert_eq!(epoch_for(base, Some(far), 30.0), base + TimeDelta::days(16 * 30));
        assert_eq!(epoch_for(base, Some(far), f64::INFINITY), base);
    }

    #[test]
    fn time_multiset_counts_after_with_limit() {
        let base = Utc.with_ymd_and_hms(2020, 1, 1, 0, 0, 0).single().expect("valid date");
        let mut set = TimeMultiset::default();
        for day in [1, 2, 2, 3, 5] {
            set.insert(base + TimeDelta::days(day));
        }
        assert_eq!(set.count_after(base + TimeDelta::days(1), 10), 4);
        assert_eq!(set.count_after(base + TimeDelta::days(1), 2), 2);
        assert_eq!(set.count_after(base + TimeDelta::days(5), 10), 0);
        assert_eq!(
            set.earliest_n(3),
            vec![
                base + TimeDelta::days(1),
                base + TimeDelta::days(2),
                base + TimeDelta::days(2)
            ]
        );
        set.remove(base + TimeDelta::days(2));
        assert_eq!(set.len(), 4);
        assert_eq!(set.latest(), Some(base + TimeDelta::days(5)));
    }
}
