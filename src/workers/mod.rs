//! Background loops owned by the instance: started when it serves, stopped before its database closes.
//!
//! Each loop waits on the injected clock ([`crate::clock::Clock::wait_until`]), never on a timer of its own, so a test
//! moves a loop on by moving its `ManualClock`, and can run one pass of it directly.

pub mod activity_history;
pub mod audit_retention;
pub mod backups;
pub mod federation;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::config::Config;
use crate::service::Service;

/// The running background loops of one instance.
#[derive(Debug)]
pub struct Workers {
    stop: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
}

impl Workers {
    /// Starts every loop the configuration asks for.
    pub fn start(
        service: &Service,
        config: &Config,
        federation: federation::FederationLoop,
        history: activity_history::ActivityHistory,
    ) -> Workers {
        use crate::service::loop_health::{ACTIVITY_HISTORY_LOOP, AUDIT_RETENTION_LOOP, BACKUP_LOOP, FEDERATION_LOOP};
        let (stop, stopped) = watch::channel(false);
        let mut tasks = Vec::new();
        // Recorded here, before any request is served, so the overview never reads a started loop as not running.
        let health = service.background_loops();
        health.started(FEDERATION_LOOP, federation::POLL_INTERVAL, service.now());
        tasks.push(tokio::spawn(federation.run(stopped.clone())));
        if let Some(retention) = audit_retention::AuditRetention::new(service.clone(), config.audit_retention_days) {
            health.started(AUDIT_RETENTION_LOOP, audit_retention::PASS_INTERVAL, service.now());
            tasks.push(tokio::spawn(retention.run(stopped.clone())));
        } else {
            health.disabled(AUDIT_RETENTION_LOOP);
        }
        let backup_maker = std::sync::Arc::new(backups::BackupMaker::new(service.clone(), config));
        if let Some(backups) = backups::ScheduledBackups::new(backup_maker.clone(), config) {
            health.started(BACKUP_LOOP, backups.interval(), service.now());
            tasks.push(tokio::spawn(backups.run(stopped.clone())));
        } else {
            health.disabled(BACKUP_LOOP);
        }
        // Not a loop of the overview's: it has no schedule to keep, and each backup's outcome is the last backup's.
        tasks.push(tokio::spawn(
            backups::AskedBackups::new(backup_maker).run(stopped.clone()),
        ));
        health.started(ACTIVITY_HISTORY_LOOP, activity_history::PASS_INTERVAL, service.now());
        tasks.push(tokio::spawn(history.run(stopped.clone())));
        Workers { stop, tasks }
    }

    /// Asks every loop to stop and waits until they have (a loop stops between two steps of its work).
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        for task in self.tasks {
            if let Err(error) = task.await {
                tracing::error!(error = %error, "a background loop ended abnormally");
            }
        }
    }
}
