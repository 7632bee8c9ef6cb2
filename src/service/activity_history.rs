//! The minute-by-minute history the web console plots: every audited call counted by minute (all calls, successful
//! writes, errors), which the overview shows over the last hour and day. Each peer's sampled replication lag, the
//! other half of that history, is in `federation/peer_lag_history.rs`.
//!
//! A call is counted in this process's memory as it is audited, and the activity-history loop
//! (`workers/activity_history.rs`) adds the counts to the database once a minute. So no call waits on a row every
//! other call updates (on PostgreSQL one hot row would serialize every writer), every process serving one database
//! adds to the same minutes, and a process killed outright loses at most the minute it had not yet saved (a stop
//! saves it). Reading the history adds what this process has not saved yet, so its own calls show at once.

use std::collections::BTreeMap;

use chrono::{DateTime, DurationRound, TimeDelta, Utc};

use super::{Service, ServiceError};
use crate::store;
use crate::store::activity_history::CallMinute;

/// How long the history is kept: the loop deletes older minutes.
pub const HISTORY_KEPT: TimeDelta = TimeDelta::days(7);

/// The stretch of time a history covers, and the size of its buckets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HistoryPeriod {
    /// The last 60 minutes, a bucket per minute.
    LastHour,
    /// The last 24 hours, a bucket per hour.
    LastDay,
}

impl HistoryPeriod {
    /// Every period, shortest first.
    pub const ALL: [HistoryPeriod; 2] = [HistoryPeriod::LastHour, HistoryPeriod::LastDay];

    /// The period's wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            HistoryPeriod::LastHour => "hour",
            HistoryPeriod::LastDay => "day",
        }
    }

    /// The period a wire name names; `validation_failed` on `field` otherwise.
    pub fn parse(field: &str, text: &str) -> Result<HistoryPeriod, ServiceError> {
        HistoryPeriod::ALL
            .into_iter()
            .find(|period| period.as_str() == text.trim())
            .ok_or_else(|| ServiceError::validation(field, format!("{field} must be hour or day, not {text:?}")))
    }

    /// How long one bucket is.
    pub fn bucket(self) -> TimeDelta {
        match self {
            HistoryPeriod::LastHour => TimeDelta::minutes(1),
            HistoryPeriod::LastDay => TimeDelta::hours(1),
        }
    }

    /// How many buckets the period has (the last one is the bucket `now` falls in, still filling).
    pub fn bucket_count(self) -> i32 {
        match self {
            HistoryPeriod::LastHour => 60,
            HistoryPeriod::LastDay => 24,
        }
    }

    /// The period in words, for a page.
    pub fn described(self) -> &'static str {
        match self {
            HistoryPeriod::LastHour => "the last hour, per minute",
            HistoryPeriod::LastDay => "the last 24 hours, per hour",
        }
    }

    /// The start of each bucket, oldest first, the last one holding `now`.
    pub fn bucket_starts(self, now: DateTime<Utc>) -> Vec<DateTime<Utc>> {
        let current = now.duration_trunc(self.bucket()).unwrap_or(now);
        (0..self.bucket_count())
            .rev()
            .map(|back| current - self.bucket() * back)
            .collect()
    }

    /// The bucket (its start) `at` falls in.
    pub fn bucket_of(self, at: DateTime<Utc>) -> DateTime<Utc> {
        at.duration_trunc(self.bucket()).unwrap_or(at)
    }
}

/// The calls of one bucket of a history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallBucket {
    /// The bucket's start.
    pub start: DateTime<Utc>,
    /// Audited calls (MCP tools and resources, console actions).
    pub calls: i64,
    /// Successful writes among them.
    pub writes: i64,
    /// Calls answered with an error code (refused or failed).
    pub errors: i64,
}

/// How an audited call ended, as the history counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CountedCall {
    /// A write that committed.
    Write,
    /// A call that wrote nothing and succeeded (a read, a replayed write).
    Read,
    /// A call answered with an error code.
    Error,
}

/// The calls this process counted and has not saved yet, by minute. Held by the service, never global, so instances
/// in one test process keep theirs apart.
#[derive(Debug, Default)]
pub struct UnsavedCallCounts {
    minutes: std::sync::Mutex<BTreeMap<DateTime<Utc>, CallMinute>>,
}

impl UnsavedCallCounts {
    fn count(&self, at: DateTime<Utc>, call: CountedCall) {
        let minute_start = store::audit::minute_of(at);
        let mut minutes = self.minutes.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let counts = minutes.entry(minute_start).or_insert(CallMinute {
            minute_start,
            calls: 0,
            writes: 0,
            errors: 0,
        });
        counts.calls += 1;
        match call {
            CountedCall::Write => counts.writes += 1,
            CountedCall::Error => counts.errors += 1,
            CountedCall::Read => {}
        }
        // A process that never saves (no loop runs in it) keeps no more than the history would.
        while minutes
            .first_key_value()
            .is_some_and(|(oldest, _)| *oldest < minute_start - HISTORY_KEPT)
        {
            minutes.pop_first();
        }
    }

    fn take(&self) -> Vec<CallMinute> {
        let mut minutes = self.minutes.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        std::mem::take(&mut *minutes).into_values().collect()
    }

    /// Puts back counts that could not be saved, adding them to what was counted meanwhile.
    fn put_back(&self, unsaved: Vec<CallMinute>) {
        let mut minutes = self.minutes.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        for minute in unsaved {
            let counts = minutes.entry(minute.minute_start).or_insert(CallMinute {
                minute_start: minute.minute_start,
                calls: 0,
                writes: 0,
                errors: 0,
            });
            counts.calls += minute.calls;
            counts.writes += minute.writes;
            counts.errors += minute.errors;
        }
    }

    fn since(&self, from: DateTime<Utc>) -> Vec<CallMinute> {
        let minutes = self.minutes.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        minutes.range(from..).map(|(_, minute)| *minute).collect()
    }
}

impl Service {
    /// Counts one audited call in this process's unsaved history.
    pub(super) fn count_call(&self, call: CountedCall) {
        self.inner.unsaved_call_counts.count(self.now(), call);
    }

    /// Adds the calls counted since the last save to the database's history, in one transaction; returns how many
    /// minutes it wrote. Counts that could not be saved are kept for the next try.
    pub async fn save_call_counts(&self) -> Result<usize, ServiceError> {
        let unsaved = self.inner.unsaved_call_counts.take();
        if unsaved.is_empty() {
            return Ok(0);
        }
        let saved: Result<(), ServiceError> = async {
            let mut transaction = self.store().begin().await?;
            for minute in &unsaved {
                store::activity_history::add_call_minute(&mut transaction.conn(), minute).await?;
            }
            transaction.commit().await?;
            Ok(())
        }
        .await;
        match saved {
            Ok(()) => Ok(unsaved.len()),
            Err(error) => {
                self.inner.unsaved_call_counts.put_back(unsaved);
                Err(error)
            }
        }
    }

    /// The audited calls of every bucket of `period` (zeros included), oldest first: what the database holds plus
    /// what this process has not saved yet. A read that falls between a save's taking the counts and its commit
    /// misses them for that instant; the next read has them.
    pub async fn call_history(&self, period: HistoryPeriod) -> Result<Vec<CallBucket>, ServiceError> {
        let starts = period.bucket_starts(self.now());
        let Some(&first) = starts.first() else {
            return Ok(Vec::new());
        };
        let mut reader = self.store().reader().await?;
        let mut minutes = store::activity_history::call_minutes_since(&mut reader.conn(), first).await?;
        drop(reader);
        minutes.extend(self.inner.unsaved_call_counts.since(first));
        let mut buckets: Vec<CallBucket> = starts
            .into_iter()
            .map(|start| CallBucket {
                start,
                calls: 0,
                writes: 0,
                errors: 0,
            })
            .collect();
        for minute in minutes {
            let start = period.bucket_of(minute.minute_start);
            if let Ok(index) = buckets.binary_search_by_key(&start, |bucket| bucket.start) {
                let bucket = &mut buckets[index];
                bucket.calls += minute.calls;
                bucket.writes += minute.writes;
                bucket.errors += minute.errors;
            }
        }
        Ok(buckets)
    }

    /// Deletes the history (calls and peers' samples) older than [`HISTORY_KEPT`]; returns how many rows went.
    pub async fn prune_activity_history(&self) -> Result<u64, ServiceError> {
        let cutoff = self.now() - HISTORY_KEPT;
        let mut transaction = self.store().begin().await?;
        let deleted = store::activity_history::delete_history_before(&mut transaction.conn(), cutoff).await?;
        transaction.commit().await?;
        Ok(deleted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).expect("time").with_timezone(&Utc)
    }

    #[test]
    fn buckets_end_with_the_one_now_falls_in() {
        let now = at("2026-12-07T10:42:31Z");
        let hour = HistoryPeriod::LastHour.bucket_starts(now);
        assert_eq!(hour.len(), 60);
        assert_eq!(hour.first().copied(), Some(at("2026-12-07T09:43:00Z")));
        assert_eq!(hour.last().copied(), Some(at("2026-12-07T10:42:00Z")));
        let day = HistoryPeriod::LastDay.bucket_starts(now);
        assert_eq!(day.len(), 24);
        assert_eq!(day.first().copied(), Some(at("2026-12-06T11:00:00Z")));
        assert_eq!(day.last().copied(), Some(at("2026-12-07T10:00:00Z")));
    }

    #[test]
    fn unsaved_counts_add_up_and_survive_a_failed_save() {
        let counts = UnsavedCallCounts::default();
        let now = at("2026-12-07T10:42:31Z");
        counts.count(now, CountedCall::Write);
        counts.count(now, CountedCall::Read);
        counts.count(now + TimeDelta::minutes(1), CountedCall::Error);
        let taken = counts.take();
        assert_eq!(taken.len(), 2);
        assert_eq!((taken[0].calls, taken[0].writes, taken[0].errors), (2, 1, 0));
        counts.count(now, CountedCall::Read);
        counts.put_back(taken);
        let again = counts.since(at("2026-12-07T10:42:00Z"));
        assert_eq!((again[0].calls, again[0].writes, again[0].errors), (3, 1, 0));
        assert_eq!((again[1].calls, again[1].writes, again[1].errors), (1, 0, 1));
    }

    #[test]
    fn a_process_that_never_saves_keeps_no_more_than_the_history() {
        let counts = UnsavedCallCounts::default();
        let start = at("2026-12-01T00:00:00Z");
        counts.count(start, CountedCall::Read);
        counts.count(start + HISTORY_KEPT + TimeDelta::minutes(2), CountedCall::Read);
        assert_eq!(counts.since(start).len(), 1);
    }
}
