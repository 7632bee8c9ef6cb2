//! Audit retention: deleting audit records older than an age, in short batches, while the write limits keep counting
//! from `write_counts`, which pruning never touches.

use chrono::{DateTime, TimeDelta, Utc};

use super::{Service, ServiceError};
use crate::store;

/// Audit rows one transaction deletes at most, so that the calls audited meanwhile never wait long: on SQLite, whose
/// single writer every write queues for, 200 rows of about 1 KB took 20 to 50 ms on a busy two-core machine, 1,000
/// rows about 150 ms.
pub const PRUNE_BATCH_ROWS: i64 = 200;

/// The youngest age a prune may reach: the write-limit window (the current minute and the sixty before it). Limits
/// read `write_counts`, not the audit log, so this costs them nothing; it keeps the records of every write the limit
/// is counting, so an admin can still see what it counted.
pub fn minimum_audit_age() -> TimeDelta {
    TimeDelta::minutes(super::audit::WINDOW_MINUTES + 1)
}

/// What a prune did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuditPrune {
    /// Records made before this instant were deleted.
    pub cutoff: DateTime<Utc>,
    /// How many went.
    pub deleted: u64,
    /// Whether every record before the cutoff went (false when the prune was told to stop between batches).
    pub complete: bool,
}

impl Service {
    /// Deletes the audit records made more than `older_than` ago, a batch per transaction.
    pub async fn prune_audit(&self, older_than: TimeDelta) -> Result<AuditPrune, ServiceError> {
        self.prune_audit_unless_stopped(older_than, || false).await
    }

    /// Like [`Service::prune_audit`], but asks `stop_requested` before each batch and ends early when it says so
    /// (a background prune of a large backlog must not hold up the instance's shutdown).
    pub async fn prune_audit_unless_stopped(
        &self,
        older_than: TimeDelta,
        stop_requested: impl Fn() -> bool,
    ) -> Result<AuditPrune, ServiceError> {
        if older_than < minimum_audit_age() {
            return Err(ServiceError::validation(
                "older_than",
                format!(
                    "audit records are kept for at least {} minutes, the write-limit window",
                    minimum_audit_age().num_minutes()
                ),
            ));
        }
        let cutoff = self.now() - older_than;
        let mut deleted = 0;
        loop {
            if stop_requested() {
                return Ok(AuditPrune {
                    cutoff,
                    deleted,
                    complete: false,
                });
            }
            let mut transaction = self.store().begin().await?;
            let batch = store::audit::delete_calls_before(&mut transaction.conn(), cutoff, PRUNE_BATCH_ROWS).await?;
            transaction.commit().await?;
            deleted += batch;
            if batch < u64::try_from(PRUNE_BATCH_ROWS).unwrap_or(u64::MAX) {
                return Ok(AuditPrune {
                    cutoff,
                    deleted,
                    complete: true,
                });
            }
            // Let the calls queued behind this batch take the writer before the next one.
            tokio::task::yield_now().await;
        }
    }

    /// How many audit records were made before `cutoff`.
    pub async fn audit_records_before(&self, cutoff: DateTime<Utc>) -> Result<i64, ServiceError> {
        let mut reader = self.store().reader().await?;
        Ok(store::audit::count_calls_before(&mut reader.conn(), cutoff).await?)
    }
}
