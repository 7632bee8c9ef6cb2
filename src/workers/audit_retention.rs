//! The audit retention loop: once at start and then every hour of the injected clock, deletes the audit records
//! older than `INTERAI_AUDIT_RETENTION_DAYS` (none when it is 0).

use chrono::TimeDelta;
use tokio::sync::watch;

use crate::service::audit_retention::AuditPrune;
use crate::service::loop_health::AUDIT_RETENTION_LOOP;
use crate::service::{Service, ServiceError};

/// How long the loop waits between two passes. Records then live at most an hour past their retention, and each
/// pass finds about an hour's worth of them.
pub const PASS_INTERVAL: TimeDelta = TimeDelta::hours(1);

/// The loop and its settings.
#[derive(Debug)]
pub struct AuditRetention {
    service: Service,
    keep: TimeDelta,
    passes: watch::Sender<u64>,
}

impl AuditRetention {
    /// The loop that keeps `retention_days` of audit records, or `None` when 0 asks to keep every record.
    pub fn new(service: Service, retention_days: u32) -> Option<AuditRetention> {
        if retention_days == 0 {
            return None;
        }
        let (passes, _) = watch::channel(0);
        Some(AuditRetention {
            service,
            keep: TimeDelta::days(i64::from(retention_days)),
            passes,
        })
    }

    /// How many passes have finished: a test waits on it instead of sleeping.
    pub fn passes(&self) -> watch::Receiver<u64> {
        self.passes.subscribe()
    }

    /// One pass: deletes every record older than the retention, in batches.
    pub async fn run_once(&self) -> Result<AuditPrune, ServiceError> {
        self.service.prune_audit(self.keep).await
    }

    /// Runs a pass now and then every [`PASS_INTERVAL`] of the clock, until `stop` turns true (or its sender goes).
    /// A pass in progress stops between two batches.
    pub async fn run(self, mut stop: watch::Receiver<bool>) {
        tracing::debug!(retention_days = self.keep.num_days(), "audit retention started");
        let health = self.service.background_loops();
        let mut next_pass = self.service.clock().now();
        loop {
            tokio::select! {
                biased;
                _ = stop.wait_for(|stopped| *stopped) => {
                    health.stopped(AUDIT_RETENTION_LOOP, self.service.now());
                    return;
                }
                () = self.service.clock().wait_until(next_pass) => {}
            }
            let stopping = stop.clone();
            let pass = self
                .service
                .prune_audit_unless_stopped(self.keep, || *stopping.borrow())
                .await;
            health.pass_finished(
                AUDIT_RETENTION_LOOP,
                self.service.now(),
                pass.as_ref().err().map(ToString::to_string),
            );
            match pass {
                Ok(prune) if prune.deleted > 0 => tracing::info!(
                    deleted = prune.deleted,
                    cutoff = %prune.cutoff.to_rfc3339(),
                    complete = prune.complete,
                    "audit records past their retention deleted"
                ),
                Ok(_) => {}
                Err(error) => tracing::warn!(
                    code = error.code.as_str(),
                    error = %error,
                    cause = error.cause.as_deref().unwrap_or(""),
                    "audit retention pass failed; the next pass tries again"
                ),
            }
            // The next deadline is set before the pass is reported, so a test that moves the clock after seeing the
            // report always moves it past the deadline the loop waits for.
            next_pass = self.service.clock().now() + PASS_INTERVAL;
            self.passes.send_modify(|passes| *passes += 1);
        }
    }
}
