//! Backups while serving: a consistent copy of the database (a SQLite file copy, or an archive), made by
//! `interai admin backup`, the scheduled loop, or the backup loop when an admin asks for one now (both in
//! `workers/backups.rs`), and the last one's outcome, which the overview and `/metrics` show.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::ServiceError;
use super::archive::{archive_error, database_error, export_to_file_paced, io_error};
use crate::store::portable;

/// Backups an admin asked for (the console's "Back up now", `POST /admin/backups`), which the serving process's
/// backup loop makes one at a time. A backup takes seconds to minutes, longer than a request may, so asking only
/// wakes the loop; the overview shows the backup when it is made.
#[derive(Debug, Default)]
pub struct BackupRequests {
    /// Woken when a backup is asked for.
    asked: tokio::sync::Notify,
    /// Whether one was asked for and is not made yet: a second request joins it.
    outstanding: std::sync::atomic::AtomicBool,
}

/// What asking for a backup did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackupAsked {
    /// The backup loop was woken: a backup starts now.
    Started,
    /// A backup asked for earlier is not made yet; this request joins it.
    AlreadyUnderWay,
}

impl BackupAsked {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            BackupAsked::Started => "started",
            BackupAsked::AlreadyUnderWay => "already_under_way",
        }
    }
}

/// The instance setting that holds the last backup's outcome ([`BackupRecord`], JSON), for the overview and
/// `/metrics`: a setting rather than memory, so a backup made by `interai admin backup` shows as well as a scheduled
/// one, in every process on the database.
pub const SETTING_LAST_BACKUP: &str = "last_backup";
/// What kind of file a backup is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BackupKind {
    /// A copy of the SQLite database file (`VACUUM INTO`), which opens as it is.
    DatabaseFile,
    /// An archive (the database is not a file: PostgreSQL).
    Archive,
}

impl BackupKind {
    /// The kind's wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            BackupKind::DatabaseFile => "database_file",
            BackupKind::Archive => "archive",
        }
    }
}

/// A backup made.
#[derive(Debug, Clone, PartialEq)]
pub struct BackupReport {
    /// Its kind.
    pub kind: BackupKind,
    /// Its size.
    pub bytes: u64,
    /// Rows in it, counted for an archive (a database file's are not counted).
    pub rows: Option<u64>,
    /// How long it took.
    pub took: std::time::Duration,
}

/// How fast a backup that is an archive (PostgreSQL) is written: at most this many MiB a second on average, so that
/// it leaves the instance's requests their share of the cores; `0` for as fast as it can. A SQLite file copy is not
/// paced: it costs the writers nothing measurable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BackupPace {
    /// The most MiB written a second; 0: no limit.
    pub max_mib_per_second: u32,
}

impl BackupPace {
    /// As fast as it can.
    pub const UNLIMITED: BackupPace = BackupPace { max_mib_per_second: 0 };

    fn bytes_per_second(self) -> Option<u64> {
        (self.max_mib_per_second > 0).then(|| u64::from(self.max_mib_per_second) * 1024 * 1024)
    }
}

/// Makes a consistent copy of the database at `url` in the new file `destination` while the instance goes on
/// serving: a copy of the database file when it is one (SQLite), else an archive (with `key_encryption_key` in
/// its header when given; a database file's key goes beside it, which is the caller's to write), written at `pace`. A
/// failed backup leaves no file.
pub async fn backup(
    url: &str,
    destination: &std::path::Path,
    now: DateTime<Utc>,
    key_encryption_key: Option<String>,
    pace: BackupPace,
) -> Result<BackupReport, ServiceError> {
    let started = std::time::Instant::now();
    let result = backup_into(url, destination, now, key_encryption_key, pace).await;
    if result.is_err() {
        let _ = std::fs::remove_file(destination);
    }
    let (kind, rows) = result?;
    let bytes = std::fs::metadata(destination)
        .map_err(|error| io_error(&format!("reading {}", destination.display()), error))?
        .len();
    Ok(BackupReport {
        kind,
        bytes,
        rows,
        took: started.elapsed(),
    })
}

async fn backup_into(
    url: &str,
    destination: &std::path::Path,
    now: DateTime<Utc>,
    key_encryption_key: Option<String>,
    pace: BackupPace,
) -> Result<(BackupKind, Option<u64>), ServiceError> {
    if destination.exists() {
        return Err(archive_error(format!(
            "{} exists already; a backup never overwrites a file",
            destination.display()
        )));
    }
    if portable::copy_database_file(url, destination)
        .await
        .map_err(database_error)?
    {
        return Ok((BackupKind::DatabaseFile, None));
    }
    let summary = export_on_a_thread_of_its_own(url, destination, now, key_encryption_key, pace).await?;
    Ok((BackupKind::Archive, Some(summary.rows())))
}

/// Writes the archive of a backup at `pace`, on a thread of its own with a runtime of its own (the pace sleeps that
/// thread), and waits for it without holding a worker of the caller's runtime: a scheduled backup shares its process
/// with the server. The thread alone did not spare the writers (their p99 24–27 ms with the export on the serving
/// runtime, 26–29 ms on its own thread, in one interleaved run); the pace did (docs/benchmarks.md, "Backup pace").
async fn export_on_a_thread_of_its_own(
    url: &str,
    destination: &std::path::Path,
    now: DateTime<Utc>,
    key_encryption_key: Option<String>,
    pace: BackupPace,
) -> Result<super::archive::ArchiveSummary, ServiceError> {
    let (url, destination) = (url.to_owned(), destination.to_path_buf());
    let (finished, outcome) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("interai-backup".to_owned())
        .spawn(move || {
            let result = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
                Ok(runtime) => runtime.block_on(export_to_file_paced(
                    &url,
                    &destination,
                    now,
                    key_encryption_key,
                    pace.bytes_per_second(),
                )),
                Err(error) => Err(io_error("starting the backup's runtime", error)),
            };
            let _ = finished.send(result);
        })
        .map_err(|error| io_error("starting the backup's thread", error))?;
    outcome
        .await
        .map_err(|_| ServiceError::internal("the backup's thread ended without an outcome"))?
}

/// The last backup's outcome, as the overview and `/metrics` show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BackupRecord {
    /// When it finished (or failed).
    pub finished_at: DateTime<Utc>,
    /// The file written (or that was to be).
    pub file: String,
    /// Its kind, when it was made.
    pub kind: Option<BackupKind>,
    /// Its size.
    pub bytes: Option<u64>,
    /// How long it took.
    pub seconds: f64,
    /// Why it failed.
    pub error: Option<String>,
    /// When the last backup that worked finished (this one, or an earlier one).
    pub last_success_at: Option<DateTime<Utc>>,
}

impl super::Service {
    /// The last backup's outcome, if any backup was made (or tried) on this database.
    pub async fn last_backup(&self) -> Result<Option<BackupRecord>, ServiceError> {
        let mut reader = self.store().reader().await?;
        let stored = crate::store::settings::get(&mut reader.conn(), SETTING_LAST_BACKUP).await?;
        Ok(stored.and_then(|text| serde_json::from_str(&text).ok()))
    }

    /// Records a backup's outcome (`file`, and the report or the failure), keeping the time of the last success.
    pub async fn record_backup(
        &self,
        file: &std::path::Path,
        outcome: &Result<BackupReport, ServiceError>,
    ) -> Result<BackupRecord, ServiceError> {
        let now = self.now();
        let previous = self.last_backup().await?;
        let record = match outcome {
            Ok(report) => BackupRecord {
                finished_at: now,
                file: file.display().to_string(),
                kind: Some(report.kind),
                bytes: Some(report.bytes),
                seconds: report.took.as_secs_f64(),
                error: None,
                last_success_at: Some(now),
            },
            Err(error) => BackupRecord {
                finished_at: now,
                file: file.display().to_string(),
                kind: None,
                bytes: None,
                seconds: 0.0,
                error: Some(error.to_string()),
                last_success_at: previous.and_then(|previous| previous.last_success_at),
            },
        };
        let text = serde_json::to_string(&record).map_err(|error| ServiceError::internal(error.to_string()))?;
        let mut transaction = self.store().begin().await?;
        crate::store::settings::put(&mut transaction.conn(), SETTING_LAST_BACKUP, &text, now).await?;
        transaction.commit().await?;
        Ok(record)
    }

    /// Asks the serving process's backup loop for a backup now, into the backup directory
    /// (`INTERAI_BACKUP_DIR`), keeping the newest `INTERAI_BACKUP_KEEP` there like the scheduled ones. Returns at once:
    /// the overview's last backup shows the outcome.
    pub fn ask_for_backup(&self) -> BackupAsked {
        let requests = &self.inner.backup_requests;
        if requests.outstanding.swap(true, std::sync::atomic::Ordering::AcqRel) {
            return BackupAsked::AlreadyUnderWay;
        }
        requests.asked.notify_one();
        BackupAsked::Started
    }

    /// Waits until a backup is asked for (the backup loop, which then makes it and calls
    /// [`Service::asked_backup_finished`]).
    pub async fn backup_asked(&self) {
        self.inner.backup_requests.asked.notified().await;
    }

    /// The backup asked for was made, or failed (its outcome is recorded): the next request starts another.
    pub fn asked_backup_finished(&self) {
        self.inner
            .backup_requests
            .outstanding
            .store(false, std::sync::atomic::Ordering::Release);
    }
}
