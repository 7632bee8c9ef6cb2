//! How this process's background loops are doing: each loop records its start, every pass with its outcome, and its
//! stop here, and the instance overview reads it. One record per instance (held by its [`super::Service`]), never
//! global, so instances in one test process keep theirs apart. It covers the loops of this process only: an admin
//! command runs none, and every process serving the same PostgreSQL database has its own.

use chrono::{DateTime, TimeDelta, Utc};

/// The loop that applies inbound activities, delivers, pushes, pulls and purges (`workers/federation.rs`).
pub const FEDERATION_LOOP: &str = "federation";

/// The loop that deletes audit records past their retention (`workers/audit_retention.rs`).
pub const AUDIT_RETENTION_LOOP: &str = "audit_retention";

/// The loop that makes scheduled backups (`workers/backups.rs`).
pub const BACKUP_LOOP: &str = "backups";

/// The loop that keeps the minute-by-minute history the console plots (`workers/activity_history.rs`).
pub const ACTIVITY_HISTORY_LOOP: &str = "activity_history";

/// Every loop an instance may run, in the order the overview lists them.
pub const KNOWN_LOOPS: [&str; 4] = [
    FEDERATION_LOOP,
    AUDIT_RETENTION_LOOP,
    BACKUP_LOOP,
    ACTIVITY_HISTORY_LOOP,
];

/// A loop that has not finished a pass for this long past its interval is reported `overdue`: at least five minutes,
/// since one federation pass goes on while work keeps arriving.
const OVERDUE_INTERVALS: i32 = 3;
const OVERDUE_AT_LEAST: TimeDelta = TimeDelta::minutes(5);

/// What a loop is doing, as the overview says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoopState {
    /// Running, and its last pass (if any yet) went well.
    Running,
    /// Running, but its last pass failed.
    Failing,
    /// Running, but no pass finished for much longer than its interval: it may be stuck.
    Overdue,
    /// It ran and stopped (the instance is shutting down).
    Stopped,
    /// The configuration turned it off (audit retention with `INTERAI_AUDIT_RETENTION_DAYS=0`).
    Disabled,
    /// Never started in this process (an admin command, or an instance that does not serve).
    NotRunning,
}

impl LoopState {
    /// The state's wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            LoopState::Running => "running",
            LoopState::Failing => "failing",
            LoopState::Overdue => "overdue",
            LoopState::Stopped => "stopped",
            LoopState::Disabled => "disabled",
            LoopState::NotRunning => "not_running",
        }
    }
}

/// One loop's record.
#[derive(Debug, Clone, PartialEq)]
pub struct LoopHealth {
    /// The loop's name (one of [`KNOWN_LOOPS`]).
    pub name: &'static str,
    /// What it is doing.
    pub state: LoopState,
    /// How long it waits between passes at most.
    pub interval: Option<TimeDelta>,
    /// When it started.
    pub started_at: Option<DateTime<Utc>>,
    /// When it stopped.
    pub stopped_at: Option<DateTime<Utc>>,
    /// Passes finished since it started.
    pub passes: u64,
    /// When its last pass finished.
    pub last_pass_at: Option<DateTime<Utc>>,
    /// When its last pass without failure finished.
    pub last_success_at: Option<DateTime<Utc>>,
    /// Passes in a row that failed.
    pub consecutive_failures: u64,
    /// The last failure (its code and safe message; the cause is in the log).
    pub last_error: Option<String>,
    /// When it happened.
    pub last_error_at: Option<DateTime<Utc>>,
}

impl LoopHealth {
    fn never_started(name: &'static str) -> LoopHealth {
        LoopHealth {
            name,
            state: LoopState::NotRunning,
            interval: None,
            started_at: None,
            stopped_at: None,
            passes: 0,
            last_pass_at: None,
            last_success_at: None,
            consecutive_failures: 0,
            last_error: None,
            last_error_at: None,
        }
    }
}

/// The records of one instance's loops.
#[derive(Debug, Default)]
pub struct BackgroundLoops {
    records: std::sync::Mutex<Vec<LoopHealth>>,
}

impl BackgroundLoops {
    fn update(&self, name: &'static str, change: impl FnOnce(&mut LoopHealth)) {
        let mut records = self.records.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let at = match records.iter().position(|record| record.name == name) {
            Some(at) => at,
            None => {
                records.push(LoopHealth::never_started(name));
                records.len() - 1
            }
        };
        change(&mut records[at]);
    }

    /// A loop started at `at` and passes at least every `interval`.
    pub fn started(&self, name: &'static str, interval: TimeDelta, at: DateTime<Utc>) {
        self.update(name, |record| {
            *record = LoopHealth {
                state: LoopState::Running,
                interval: Some(interval),
                started_at: Some(at),
                ..LoopHealth::never_started(name)
            };
        });
    }

    /// The configuration turned a loop off.
    pub fn disabled(&self, name: &'static str) {
        self.update(name, |record| {
            *record = LoopHealth {
                state: LoopState::Disabled,
                ..LoopHealth::never_started(name)
            };
        });
    }

    /// A pass finished at `at`: well, or with the error given.
    pub fn pass_finished(&self, name: &'static str, at: DateTime<Utc>, failure: Option<String>) {
        self.update(name, |record| {
            record.passes += 1;
            record.last_pass_at = Some(at);
            match failure {
                None => {
                    record.state = LoopState::Running;
                    record.last_success_at = Some(at);
                    record.consecutive_failures = 0;
                }
                Some(error) => {
                    record.state = LoopState::Failing;
                    record.consecutive_failures += 1;
                    record.last_error = Some(error);
                    record.last_error_at = Some(at);
                }
            }
        });
    }

    /// A loop stopped at `at`.
    pub fn stopped(&self, name: &'static str, at: DateTime<Utc>) {
        self.update(name, |record| {
            record.state = LoopState::Stopped;
            record.stopped_at = Some(at);
        });
    }

    /// Every known loop's record as of `now` (a running loop whose last pass is long past is `overdue`), then any
    /// other loop that recorded itself.
    pub fn report(&self, now: DateTime<Utc>) -> Vec<LoopHealth> {
        let records = self
            .records
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone();
        let mut report: Vec<LoopHealth> = KNOWN_LOOPS
            .iter()
            .map(|name| {
                records
                    .iter()
                    .find(|record| record.name == *name)
                    .cloned()
                    .unwrap_or_else(|| LoopHealth::never_started(name))
            })
            .collect();
        report.extend(records.into_iter().filter(|record| !KNOWN_LOOPS.contains(&record.name)));
        for record in &mut report {
            if record.state == LoopState::Running
                && let (Some(interval), Some(since)) = (record.interval, record.last_pass_at.or(record.started_at))
                && now - since > (interval * OVERDUE_INTERVALS).max(OVERDUE_AT_LEAST)
            {
                record.state = LoopState::Overdue;
            }
        }
        report
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).expect("instant").to_utc()
    }

    #[test]
    fn a_loop_reads_running_failing_overdue_and_stopped_as_it_goes() {
        let loops = BackgroundLoops::default();
        let start = at("2026-11-01T09:00:00Z");
        assert_eq!(loops.report(start)[0].state, LoopState::NotRunning);
        loops.started(FEDERATION_LOOP, TimeDelta::seconds(5), start);
        loops.disabled(AUDIT_RETENTION_LOOP);
        let report = loops.report(start);
        assert_eq!(
            (report[0].state, report[1].state),
            (LoopState::Running, LoopState::Disabled)
        );
        loops.pass_finished(FEDERATION_LOOP, start, Some("internal_error: the database".to_owned()));
        loops.pass_finished(FEDERATION_LOOP, start, Some("internal_error: the database".to_owned()));
        let failing = &loops.report(start)[0];
        assert_eq!(
            (failing.state, failing.consecutive_failures, failing.passes),
            (LoopState::Failing, 2, 2)
        );
        loops.pass_finished(FEDERATION_LOOP, start, None);
        assert_eq!(loops.report(start)[0].state, LoopState::Running);
        assert_eq!(loops.report(start + TimeDelta::minutes(4))[0].state, LoopState::Running);
        assert_eq!(loops.report(start + TimeDelta::minutes(6))[0].state, LoopState::Overdue);
        loops.stopped(FEDERATION_LOOP, start);
        assert_eq!(loops.report(start + TimeDelta::minutes(6))[0].state, LoopState::Stopped);
    }
}
