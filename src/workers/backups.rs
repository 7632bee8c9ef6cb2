//! The backup loops: every `INTERAI_BACKUP_INTERVAL_HOURS` of the injected clock (the scheduled loop), and whenever an
//! admin asks for one (the asked-for loop, which always runs), a backup of the database as `interai admin backup`
//! makes it, into `INTERAI_BACKUP_DIR`, keeping the newest `INTERAI_BACKUP_KEEP`. The two make their backups one at a
//! time ([`BackupMaker`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::{DateTime, TimeDelta, Utc};
use tokio::sync::watch;

use crate::config::Config;
use crate::service::backups::{self, BackupPace, BackupReport};
use crate::service::loop_health::BACKUP_LOOP;
use crate::service::{ErrorCode, Service, ServiceError};

/// What every scheduled backup's file name starts with; pruning deletes only files named so.
const FILE_PREFIX: &str = "interai-backup-";

/// Where and how this process makes its backups, shared by both loops so that they make one at a time.
#[derive(Debug)]
pub struct BackupMaker {
    service: Service,
    database_url: String,
    directory: PathBuf,
    keep: usize,
    pace: BackupPace,
    /// Held while a backup is made: a backup asked for during a scheduled one waits for it, and the other way round.
    one_at_a_time: tokio::sync::Mutex<()>,
}

impl BackupMaker {
    /// The backups of an instance with `config`.
    pub fn new(service: Service, config: &Config) -> BackupMaker {
        BackupMaker {
            service,
            database_url: config.database_url.clone(),
            directory: config.backup_dir.clone(),
            keep: usize::try_from(config.backup_keep).unwrap_or(usize::MAX),
            pace: BackupPace {
                max_mib_per_second: config.backup_max_mib_per_second,
            },
            one_at_a_time: tokio::sync::Mutex::new(()),
        }
    }

    /// One backup now, recorded for the overview and `/metrics`, then the oldest beyond the number to keep deleted.
    /// Returns the file and the report.
    pub async fn run_once(&self) -> Result<(PathBuf, BackupReport), ServiceError> {
        let _only_backup = self.one_at_a_time.lock().await;
        let now = self.service.now();
        let file = self.directory.join(file_name(now, &self.database_url));
        // A directory that cannot be made is the backup's failure too: the overview says so, not the log alone (an
        // admin who asked for the backup would otherwise see nothing happen).
        let outcome = match create_private_directory(&self.directory) {
            Ok(()) => backups::backup(&self.database_url, &file, now, None, self.pace).await,
            Err(error) => Err(ServiceError::new(
                ErrorCode::InternalError,
                format!("creating the backup directory {}: {error}", self.directory.display()),
            )),
        };
        self.service.record_backup(&file, &outcome).await?;
        let report = outcome?;
        prune(&self.directory, self.keep)
            .map_err(|error| ServiceError::internal(format!("deleting old backups: {error}")))?;
        Ok((file, report))
    }
}

/// The scheduled loop and its interval.
#[derive(Debug)]
pub struct ScheduledBackups {
    maker: Arc<BackupMaker>,
    interval: TimeDelta,
    passes: watch::Sender<u64>,
}

impl ScheduledBackups {
    /// The loop the configuration asks for, or `None` when `INTERAI_BACKUP_INTERVAL_HOURS` is 0.
    pub fn new(maker: Arc<BackupMaker>, config: &Config) -> Option<ScheduledBackups> {
        if config.backup_interval_hours == 0 {
            return None;
        }
        let (passes, _) = watch::channel(0);
        Some(ScheduledBackups {
            maker,
            interval: TimeDelta::hours(i64::from(config.backup_interval_hours)),
            passes,
        })
    }

    /// The time between two backups.
    pub fn interval(&self) -> TimeDelta {
        self.interval
    }

    /// How many passes have finished: a test waits on it instead of sleeping.
    pub fn passes(&self) -> watch::Receiver<u64> {
        self.passes.subscribe()
    }

    /// When the first backup is due: at once when the last recorded backup that worked is older than the interval
    /// (or there is none), else one interval after it, so a restart does not make a backup each time.
    async fn first_due(&self) -> DateTime<Utc> {
        let now = self.maker.service.now();
        match self.maker.service.last_backup().await {
            Ok(Some(record)) => record.last_success_at.map_or(now, |at| (at + self.interval).max(now)),
            _ => now,
        }
    }

    /// Runs until `stop` turns true (or its sender goes): a backup when one is due, then one every interval.
    pub async fn run(self, mut stop: watch::Receiver<bool>) {
        let health = self.maker.service.background_loops();
        let mut next = self.first_due().await;
        tracing::debug!(directory = %self.maker.directory.display(), interval_hours = self.interval.num_hours(), "scheduled backups started");
        loop {
            tokio::select! {
                biased;
                _ = stop.wait_for(|stopped| *stopped) => {
                    health.stopped(BACKUP_LOOP, self.maker.service.now());
                    return;
                }
                () = self.maker.service.clock().wait_until(next) => {}
            }
            let pass = self.maker.run_once().await;
            health.pass_finished(
                BACKUP_LOOP,
                self.maker.service.now(),
                pass.as_ref().err().map(ToString::to_string),
            );
            log_outcome(&pass, "scheduled; a failed one is tried again after the interval");
            next = self.maker.service.clock().now() + self.interval;
            self.passes.send_modify(|passes| *passes += 1);
        }
    }
}

/// The loop that makes the backups an admin asks for ([`Service::ask_for_backup`]), whatever the schedule.
#[derive(Debug)]
pub struct AskedBackups {
    maker: Arc<BackupMaker>,
}

impl AskedBackups {
    /// The loop of this process.
    pub fn new(maker: Arc<BackupMaker>) -> AskedBackups {
        AskedBackups { maker }
    }

    /// Runs until `stop` turns true (or its sender goes): a backup each time one is asked for. A backup under way
    /// when the instance stops is finished first, as the scheduled loop's is.
    pub async fn run(self, mut stop: watch::Receiver<bool>) {
        loop {
            tokio::select! {
                biased;
                _ = stop.wait_for(|stopped| *stopped) => return,
                () = self.maker.service.backup_asked() => {}
            }
            let made = self.maker.run_once().await;
            self.maker.service.asked_backup_finished();
            log_outcome(&made, "asked for by an admin");
        }
    }
}

/// Logs what a backup loop's backup came to; `why` says which loop made it.
fn log_outcome(made: &Result<(PathBuf, BackupReport), ServiceError>, why: &'static str) {
    match made {
        Ok((file, report)) => tracing::info!(
            why,
            file = %file.display(),
            bytes = report.bytes,
            seconds = report.took.as_secs_f64(),
            "backup made"
        ),
        Err(error) => tracing::warn!(
            why,
            code = error.code.as_str(),
            error = %error,
            cause = error.cause.as_deref().unwrap_or(""),
            "backup failed"
        ),
    }
}

/// `interai-backup-20261207T081500Z.db` (a SQLite file) or `….archive`: names that sort by time.
fn file_name(now: DateTime<Utc>, database_url: &str) -> String {
    let extension = if database_url.starts_with("sqlite:") {
        "db"
    } else {
        "archive"
    };
    format!("{FILE_PREFIX}{}.{extension}", now.format("%Y%m%dT%H%M%S%.6fZ"))
}

/// Deletes the oldest scheduled backups in `directory` beyond the newest `keep` (files named by [`file_name`] only;
/// anything else there is left alone).
fn prune(directory: &Path, keep: usize) -> std::io::Result<()> {
    let mut backups: Vec<PathBuf> = std::fs::read_dir(directory)?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| {
            path.file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.starts_with(FILE_PREFIX) && !name.ends_with(".tmp"))
        })
        .collect();
    backups.sort();
    let excess = backups.len().saturating_sub(keep);
    for old in &backups[..excess] {
        std::fs::remove_file(old)?;
        tracing::debug!(file = %old.display(), "old scheduled backup deleted");
    }
    Ok(())
}

fn create_private_directory(path: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(path)
}
