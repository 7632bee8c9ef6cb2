//! The federation loop: applies queued inbound activities, sends due peering deliveries, pushes the outbox to peers
//! whose round is due, pulls peers whose pull is due, and purges the outbox of what every peer has; then waits on
//! the injected clock until the next of these is due (at most a poll interval), or until something is queued.

use chrono::TimeDelta;
use tokio::sync::watch;

use crate::apub::client::FederationClient;
use crate::apub::replicate::PushPass;
use crate::service::loop_health::FEDERATION_LOOP;

/// The longest the loop sleeps: work queued by another process (an admin command, a second instance process) is
/// picked up within this time.
pub const POLL_INTERVAL: TimeDelta = TimeDelta::seconds(5);

/// Deliveries attempted per pass at most.
pub const DELIVERY_BATCH: i64 = 32;

/// How this instance replicates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplicationSettings {
    /// Whether the outbox is pushed to peers (pull works either way).
    pub push: bool,
    /// Between two pulls of a peer.
    pub pull_interval: TimeDelta,
    /// The least time an outbox event is kept.
    pub outbox_min_retention: TimeDelta,
}

/// How often the outbox is purged at most.
pub const PURGE_INTERVAL: TimeDelta = TimeDelta::minutes(10);

/// How often expired nonces and old processed inbound activities are purged at most (the inbox no longer does it
/// on its request path).
pub const INBOX_PURGE_INTERVAL: TimeDelta = TimeDelta::minutes(1);

/// Purge batches (each its own short transaction) one inbox purge runs at most.
const INBOX_PURGE_ROUNDS: usize = 100;

/// The loop and what wakes it.
#[derive(Debug)]
pub struct FederationLoop {
    client: FederationClient,
    passes: watch::Sender<u64>,
    settings: ReplicationSettings,
    last_purge: std::sync::Mutex<Option<chrono::DateTime<chrono::Utc>>>,
    last_inbox_purge: std::sync::Mutex<Option<chrono::DateTime<chrono::Utc>>>,
    /// When this process's next instance-trust batch is due (`None`: at the next pass).
    next_instance_trust_batch: std::sync::Mutex<Option<chrono::DateTime<chrono::Utc>>>,
    /// When this process last looked for a batch another process ran.
    last_instance_trust_check: std::sync::Mutex<Option<chrono::DateTime<chrono::Utc>>>,
    /// The last failure of the pass under way, for the loop's health record.
    pass_failure: std::sync::Mutex<Option<String>>,
}

impl FederationLoop {
    /// The loop of one instance.
    pub fn new(client: FederationClient, settings: ReplicationSettings) -> FederationLoop {
        let (passes, _) = watch::channel(0);
        FederationLoop {
            client,
            passes,
            settings,
            last_purge: std::sync::Mutex::new(None),
            last_inbox_purge: std::sync::Mutex::new(None),
            next_instance_trust_batch: std::sync::Mutex::new(None),
            last_instance_trust_check: std::sync::Mutex::new(None),
            pass_failure: std::sync::Mutex::new(None),
        }
    }

    /// How many passes have finished.
    pub fn passes(&self) -> watch::Receiver<u64> {
        self.passes.subscribe()
    }

    /// One pass: attempts every due delivery, pushes to every peer whose round is due, applies every due inbound
    /// activity and pulls every peer whose pull is due, until none has any (a push round that read to the outbox's
    /// end and did not fail counts as none left).
    /// Returns how many activities and attempts it handled.
    pub async fn run_once(&self) -> usize {
        let federation = self.client.federation();
        let mut handled = 0;
        loop {
            // The four kinds of work touch different rows and each takes its own lease, so they run at once: an
            // activity that woke the loop is applied, and a commit that woke it goes out, without waiting for the
            // other kinds' reads (and while one page of a peer's snapshot is fetched and its proofs checked, the
            // pages before it are applied).
            let delivering = async {
                match self.client.deliver_due(DELIVERY_BATCH, None).await {
                    Ok(delivered) => delivered,
                    Err(error) => {
                        tracing::warn!(error = %error, cause = error.cause.as_deref().unwrap_or(""), "delivering failed");
                        self.note_failure(&error);
                        0
                    }
                }
            };
            let pushing = async {
                if !self.settings.push {
                    return PushPass::default();
                }
                match self.client.push_due().await {
                    Ok(pushed) => pushed,
                    Err(error) => {
                        tracing::warn!(error = %error, cause = error.cause.as_deref().unwrap_or(""), "pushing the outbox failed");
                        self.note_failure(&error);
                        PushPass::default()
                    }
                }
            };
            let applying = async {
                match federation.apply_queued(crate::apub::queued_activity::read).await {
                    Ok(pass) => {
                        for batch in &pass.batches {
                            self.client.record_intake_batch(*batch);
                        }
                        self.client.record_remote_evidence();
                        pass.taken
                    }
                    Err(error) => {
                        tracing::warn!(error = %error, cause = error.cause.as_deref().unwrap_or(""), "applying inbound activities failed");
                        self.note_failure(&error);
                        0
                    }
                }
            };
            let pulling = async {
                match self.client.pull_due(self.settings.pull_interval).await {
                    Ok(pulled) => pulled,
                    Err(error) => {
                        tracing::warn!(error = %error, cause = error.cause.as_deref().unwrap_or(""), "pulling failed");
                        self.note_failure(&error);
                        0
                    }
                }
            };
            let (delivered, pushed, applied, pulled) = tokio::join!(delivering, pushing, applying, pulling);
            handled += applied + delivered + pushed.attempts + pulled;
            // Also under a load that never lets the loop idle.
            self.purge_inbox_if_due().await;
            // Another turn at once only when some kind may have more now. A push round that sent everything after
            // its cursor leaves nothing behind (an event committed since woke the loop again), so under light
            // traffic, where each commit wakes the loop for one round, the turn that would find nothing (four
            // reads, each a round trip to a database thread) is not taken.
            if applied == 0 && delivered == 0 && !pushed.more && pulled == 0 {
                self.purge_if_due().await;
                self.keep_instance_trust_current().await;
                return handled;
            }
        }
    }

    /// Keeps a failure of this pass for the loop's health record (the log has already said it).
    fn note_failure(&self, error: &crate::service::ServiceError) {
        *self
            .pass_failure
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(error.to_string());
    }

    async fn purge_inbox_if_due(&self) {
        let federation = self.client.federation();
        if !interval_elapsed(&self.last_inbox_purge, federation.now(), INBOX_PURGE_INTERVAL) {
            return;
        }
        let mut purged = 0;
        for _ in 0..INBOX_PURGE_ROUNDS {
            match federation.purge_inbox_records().await {
                Ok(0) => break,
                Ok(rows) => purged += rows,
                Err(error) => {
                    tracing::warn!(error = %error, "purging expired nonces and old inbound activities failed");
                    break;
                }
            }
        }
        if purged > 0 {
            tracing::debug!(purged, "expired nonces and old inbound activities were purged");
        }
    }

    /// Runs the instance-trust batch when it is due (on a schedule, and when a timed block ends), and otherwise,
    /// at most every [`POLL_INTERVAL`], puts in force a batch another process on the database ran.
    async fn keep_instance_trust_current(&self) {
        let federation = self.client.federation();
        let now = federation.now();
        let due = self
            .next_instance_trust_batch
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .is_none_or(|due| due <= now);
        if due {
            match federation.recompute_instance_trust().await {
                Ok(batch) => {
                    *self
                        .next_instance_trust_batch
                        .lock()
                        .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(batch.next_due);
                }
                Err(error) => tracing::warn!(error = %error, "recomputing instance trust failed"),
            }
            return;
        }
        if interval_elapsed(&self.last_instance_trust_check, now, POLL_INTERVAL)
            && let Err(error) = federation.follow_instance_trust().await
        {
            tracing::warn!(error = %error, "loading the instance trust another process computed failed");
        }
    }

    async fn purge_if_due(&self) {
        let federation = self.client.federation();
        if !interval_elapsed(&self.last_purge, federation.now(), PURGE_INTERVAL) {
            return;
        }
        match federation.purge_outbox(self.settings.outbox_min_retention).await {
            Ok(0) => {}
            Ok(purged) => tracing::info!(purged, "outbox events every peer has were purged"),
            Err(error) => tracing::warn!(error = %error, "purging the outbox failed"),
        }
    }

    /// Runs passes until `stop` turns true.
    pub async fn run(self, mut stop: watch::Receiver<bool>) {
        let health = self.client.service().background_loops();
        loop {
            self.run_once().await;
            let failure = self
                .pass_failure
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .take();
            health.pass_finished(FEDERATION_LOOP, self.client.service().now(), failure);
            self.passes.send_modify(|passes| *passes += 1);
            let federation = self.client.federation();
            let now = federation.now();
            let next_delivery = federation.next_delivery_due().await.ok().flatten();
            let next_replication = federation.next_replication_due().await.ok().flatten();
            let next_due = match (next_delivery, next_replication) {
                (Some(delivery), Some(replication)) => Some(delivery.min(replication)),
                (delivery, replication) => delivery.or(replication),
            };
            let deadline = next_due.map_or(now + POLL_INTERVAL, |due| due.min(now + POLL_INTERVAL).max(now));
            tokio::select! {
                biased;
                _ = stop.wait_for(|stopped| *stopped) => {
                    health.stopped(FEDERATION_LOOP, federation.now());
                    return;
                }
                () = federation.inbound_queued().notified() => {}
                () = federation.service().outbox_appended().notified() => {}
                () = federation.service().clock().wait_until(deadline) => {}
            }
        }
    }
}

/// Whether `interval` has passed since the time in `last` (then `last` becomes `now`).
fn interval_elapsed(
    last: &std::sync::Mutex<Option<chrono::DateTime<chrono::Utc>>>,
    now: chrono::DateTime<chrono::Utc>,
    interval: TimeDelta,
) -> bool {
    let mut last = last.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if last.is_some_and(|at| now - at < interval) {
        return false;
    }
    *last = Some(now);
    true
}
