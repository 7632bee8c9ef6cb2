//! The federation loop: applies queued inbound activities and sends due peering deliveries, then waits on the
//! injected clock until the next delivery is due (at most a poll interval), or until the inbox queues something.

use std::sync::Arc;

use chrono::TimeDelta;
use tokio::sync::{Notify, watch};

use crate::apub::outgoing::Outgoing;

/// The longest the loop sleeps: work queued by another process (an admin command, a second instance process) is
/// picked up within this time.
pub const POLL_INTERVAL: TimeDelta = TimeDelta::seconds(5);

/// Deliveries attempted per pass at most.
pub const DELIVERY_BATCH: i64 = 32;

/// The loop and what wakes it.
#[derive(Debug)]
pub struct FederationLoop {
    outgoing: Outgoing,
    inbox_work: Arc<Notify>,
    passes: watch::Sender<u64>,
}

impl FederationLoop {
    /// The loop of one instance; `inbox_work` is notified by the inbox when it queues an activity.
    pub fn new(outgoing: Outgoing, inbox_work: Arc<Notify>) -> FederationLoop {
        let (passes, _) = watch::channel(0);
        FederationLoop {
            outgoing,
            inbox_work,
            passes,
        }
    }

    /// How many passes have finished.
    pub fn passes(&self) -> watch::Receiver<u64> {
        self.passes.subscribe()
    }

    /// One pass: applies every due inbound activity and attempts every due delivery, until neither has any.
    /// Returns how many activities and attempts it handled.
    pub async fn run_once(&self) -> usize {
        let service = self.outgoing.service();
        let mut handled = 0;
        loop {
            let applied = match crate::apub::intake::apply_queued(service).await {
                Ok(applied) => applied,
                Err(error) => {
                    tracing::warn!(error = %error, cause = error.cause.as_deref().unwrap_or(""), "applying inbound activities failed");
                    0
                }
            };
            let delivered = match self.outgoing.deliver_due(DELIVERY_BATCH, None).await {
                Ok(delivered) => delivered,
                Err(error) => {
                    tracing::warn!(error = %error, cause = error.cause.as_deref().unwrap_or(""), "delivering failed");
                    0
                }
            };
            handled += applied + delivered;
            if applied == 0 && delivered == 0 {
                return handled;
            }
        }
    }

    /// Runs passes until `stop` turns true.
    pub async fn run(self, mut stop: watch::Receiver<bool>) {
        loop {
            self.run_once().await;
            self.passes.send_modify(|passes| *passes += 1);
            let service = self.outgoing.service();
            let now = service.now();
            let next_due = service.next_delivery_due().await.ok().flatten();
            let deadline = next_due.map_or(now + POLL_INTERVAL, |due| due.min(now + POLL_INTERVAL).max(now));
            tokio::select! {
                biased;
                _ = stop.wait_for(|stopped| *stopped) => return,
                () = self.inbox_work.notified() => {}
                () = service.clock().wait_until(deadline) => {}
            }
        }
    }
}
