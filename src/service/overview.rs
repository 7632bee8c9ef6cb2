//! The instance overview an admin starts from: realm, version, backend, how much the instance holds, its peers by
//! state, and how each background loop of this process is doing.

use chrono::{DateTime, Utc};

use super::loop_health::LoopHealth;
use super::{Service, ServiceError};
use crate::domain::PeerState;
use crate::store;

/// The overview.
#[derive(Debug, Clone, PartialEq)]
pub struct InstanceOverview {
    /// This instance's realm.
    pub realm: String,
    /// The software's version.
    pub version: &'static str,
    /// The database backend's name (`sqlite` or `postgresql`).
    pub backend: &'static str,
    /// When the overview was taken.
    pub now: DateTime<Utc>,
    /// When this process started serving (its service was made): `now - started_at` is its uptime.
    pub started_at: DateTime<Utc>,
    /// How much the instance holds.
    pub counts: store::overview::InstanceCounts,
    /// How many peers are in each state (every state, zeros included).
    pub peers_by_state: Vec<(PeerState, i64)>,
    /// Each background loop of this process.
    pub loops: Vec<LoopHealth>,
    /// The last backup made or tried on this database.
    pub last_backup: Option<super::backups::BackupRecord>,
}

impl Service {
    /// The records of this instance's background loops, which the loops update and the overview reads.
    pub fn background_loops(&self) -> &super::loop_health::BackgroundLoops {
        &self.inner.background_loops
    }

    /// The instance overview.
    pub async fn instance_overview(&self) -> Result<InstanceOverview, ServiceError> {
        let now = self.now();
        let mut reader = self.store().reader().await?;
        let counts = store::overview::count_everything(&mut reader.conn(), self.realm().as_str(), now).await?;
        let by_state = store::peers::count_peers_by_state(&mut reader.conn()).await?;
        let peers_by_state = PeerState::ALL
            .iter()
            .map(|state| {
                let count = by_state
                    .iter()
                    .find(|(counted, _)| counted == state)
                    .map_or(0, |(_, count)| *count);
                (*state, count)
            })
            .collect();
        Ok(InstanceOverview {
            realm: self.realm().as_str().to_owned(),
            version: env!("CARGO_PKG_VERSION"),
            backend: self.store().backend().name(),
            now,
            started_at: self.inner.started_at,
            counts,
            peers_by_state,
            loops: self.background_loops().report(now),
            last_backup: self.last_backup().await?,
        })
    }
}
