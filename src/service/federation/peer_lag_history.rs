//! Each peer's replication over time: the activity-history loop samples every replicating peer once a minute (what
//! waits for it, how long the oldest has waited, its dead letters), and a peer's console page plots the samples of
//! the last hour and day. Kept as long as the calls' history (`service/activity_history.rs`).

use chrono::{DateTime, Utc};

use super::Federation;
use super::peer_state::normalize_realm;
use crate::service::ServiceError;
use crate::service::activity_history::HistoryPeriod;
use crate::store;
use crate::store::activity_history::PeerLagSample;

/// A peer's replication in one bucket of a history: the worst the samples in it saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerLagBucket {
    /// The bucket's start.
    pub start: DateTime<Utc>,
    /// What the samples in it saw; `None` when nothing was sampled then (no process was serving, or the peer was
    /// not replicating).
    pub sampled: Option<SampledLag>,
}

/// The worst of a bucket's samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SampledLag {
    /// The most events that waited for the peer.
    pub most_undelivered_events: i64,
    /// The longest the oldest of them had waited, in seconds.
    pub longest_wait_seconds: i64,
    /// Dead letters at the bucket's last sample.
    pub dead_letters: i64,
}

impl Federation {
    /// Records one sample of every peer with replication state (one that was ever active) for the minute `now`
    /// falls in; returns how many peers it sampled.
    pub async fn sample_peer_lag(&self) -> Result<usize, ServiceError> {
        let now = self.now();
        let minute_start = store::audit::minute_of(now);
        let samples: Vec<PeerLagSample> = self
            .list_peers()
            .await?
            .into_iter()
            .filter_map(|view| {
                let replication = view.replication.as_ref()?;
                let oldest_waiting_seconds = match replication.oldest_undelivered_at {
                    Some(oldest) if view.undelivered_events > 0 => (now - oldest).num_seconds().max(0),
                    _ => 0,
                };
                Some(PeerLagSample {
                    peer_realm: view.peer.realm.clone(),
                    minute_start,
                    undelivered_events: view.undelivered_events,
                    oldest_waiting_seconds,
                    dead_letters: replication.dead_letters,
                })
            })
            .collect();
        if samples.is_empty() {
            return Ok(0);
        }
        let mut transaction = self.store().begin().await?;
        for sample in &samples {
            store::activity_history::record_peer_lag_sample(&mut transaction.conn(), sample).await?;
        }
        transaction.commit().await?;
        Ok(samples.len())
    }

    /// A peer's replication in every bucket of `period`, oldest first; `not_found` for a realm that is not a peer.
    pub async fn peer_lag_history(
        &self,
        realm: &str,
        period: HistoryPeriod,
    ) -> Result<Vec<PeerLagBucket>, ServiceError> {
        let realm = normalize_realm(realm);
        let starts = period.bucket_starts(self.now());
        let Some(&first) = starts.first() else {
            return Ok(Vec::new());
        };
        let mut reader = self.store().reader().await?;
        if store::peers::find_peer(&mut reader.conn(), &realm).await?.is_none() {
            return Err(super::peering::not_found_peer(&realm));
        }
        let samples = store::activity_history::peer_lag_samples_since(&mut reader.conn(), &realm, first).await?;
        let mut buckets: Vec<PeerLagBucket> = starts
            .into_iter()
            .map(|start| PeerLagBucket { start, sampled: None })
            .collect();
        for sample in samples {
            let start = period.bucket_of(sample.minute_start);
            let Ok(index) = buckets.binary_search_by_key(&start, |bucket| bucket.start) else {
                continue;
            };
            let bucket = &mut buckets[index].sampled;
            *bucket = Some(match *bucket {
                None => SampledLag {
                    most_undelivered_events: sample.undelivered_events,
                    longest_wait_seconds: sample.oldest_waiting_seconds,
                    dead_letters: sample.dead_letters,
                },
                // Samples come oldest first, so the last one's dead letters stand.
                Some(seen) => SampledLag {
                    most_undelivered_events: seen.most_undelivered_events.max(sample.undelivered_events),
                    longest_wait_seconds: seen.longest_wait_seconds.max(sample.oldest_waiting_seconds),
                    dead_letters: sample.dead_letters,
                },
            });
        }
        Ok(buckets)
    }
}
