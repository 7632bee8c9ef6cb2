//! The activity-history loop: once a minute of the injected clock, adds the calls this process counted to the
//! database's history, samples every replicating peer's lag, and deletes history older than a week; once more when
//! the instance stops, so a stop loses no counted call. What the console's overview and peer pages plot.

use chrono::TimeDelta;
use tokio::sync::watch;

use crate::service::federation::Federation;
use crate::service::loop_health::ACTIVITY_HISTORY_LOOP;
use crate::service::{Service, ServiceError};

/// How long the loop waits between two passes: the history's resolution.
pub const PASS_INTERVAL: TimeDelta = TimeDelta::minutes(1);

/// What one pass did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistoryPass {
    /// Minutes of call counts added to the database.
    pub minutes_saved: usize,
    /// Peers sampled.
    pub peers_sampled: usize,
    /// History rows deleted for their age.
    pub rows_deleted: u64,
}

/// The loop.
#[derive(Debug)]
pub struct ActivityHistory {
    federation: Federation,
    passes: watch::Sender<u64>,
}

impl ActivityHistory {
    /// The loop of the instance whose federation use cases (and service, through them) are `federation`.
    pub fn new(federation: Federation) -> ActivityHistory {
        let (passes, _) = watch::channel(0);
        ActivityHistory { federation, passes }
    }

    fn service(&self) -> &Service {
        self.federation.service()
    }

    /// How many passes have finished: a test waits on it instead of sleeping.
    pub fn passes(&self) -> watch::Receiver<u64> {
        self.passes.subscribe()
    }

    /// One pass. Each step runs even when an earlier one failed (the first failure is returned): a database too
    /// busy to take the counts still gets its peers sampled when it can.
    pub async fn run_once(&self) -> Result<HistoryPass, ServiceError> {
        let saved = self.service().save_call_counts().await;
        let sampled = self.federation.sample_peer_lag().await;
        let deleted = self.service().prune_activity_history().await;
        Ok(HistoryPass {
            minutes_saved: saved?,
            peers_sampled: sampled?,
            rows_deleted: deleted?,
        })
    }

    /// Runs a pass every [`PASS_INTERVAL`] of the clock until `stop` turns true, then saves the counts once more.
    pub async fn run(self, mut stop: watch::Receiver<bool>) {
        let health = self.service().background_loops();
        let mut next_pass = self.service().clock().now() + PASS_INTERVAL;
        loop {
            let stopping = tokio::select! {
                biased;
                _ = stop.wait_for(|stopped| *stopped) => true,
                () = self.service().clock().wait_until(next_pass) => false,
            };
            if stopping {
                if let Err(error) = self.service().save_call_counts().await {
                    tracing::warn!(
                        code = error.code.as_str(),
                        error = %error,
                        "the last minute's call counts could not be saved at stop"
                    );
                }
                health.stopped(ACTIVITY_HISTORY_LOOP, self.service().now());
                return;
            }
            let pass = self.run_once().await;
            health.pass_finished(
                ACTIVITY_HISTORY_LOOP,
                self.service().now(),
                pass.as_ref().err().map(ToString::to_string),
            );
            match pass {
                Ok(pass) if pass.rows_deleted > 0 => {
                    tracing::debug!(
                        rows_deleted = pass.rows_deleted,
                        "activity history past its keeping deleted"
                    );
                }
                Ok(_) => {}
                Err(error) => tracing::warn!(
                    code = error.code.as_str(),
                    error = %error,
                    cause = error.cause.as_deref().unwrap_or(""),
                    "activity history pass failed; the next pass tries again"
                ),
            }
            // Set before the pass is reported, so a test that moves the clock after seeing the report moves it past
            // the deadline the loop waits for.
            next_pass = self.service().clock().now() + PASS_INTERVAL;
            self.passes.send_modify(|passes| *passes += 1);
        }
    }
}
