//! Federation use cases: the instance's identity and keys, peering, who may speak (admission), the inbox's database
//! steps, the inbound queue with its fast path and the intake of peers' activities, and the delivery queue.
//! Transport-free: the `apub` adapter and the workers do HTTP and ActivityStreams (the intake reads a queued body
//! back with the adapter's reading, handed to it as a function); this module uses the `federation` crate only for
//! keys and their endorsements.

pub mod admission;
pub mod apply;
pub mod cursors;
pub mod delivery;
mod evidence_tally;
pub mod held_objects;
pub mod identity;
pub mod inbox;
pub(crate) mod inbox_groups;
pub mod instance_trust;
pub mod intake;
pub mod key_box;
pub mod outbox;
pub mod peer_failure;
pub mod peer_lag_history;
pub mod peer_state;
pub mod peer_status;
pub mod peering;
pub mod purge;
pub mod retry;
mod trust_refresh;

use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::Service;
use crate::domain::Realm;
use crate::store::Store;

/// The federation use cases of one instance, composed by the instance beside the agent-facing [`Service`]: peers and
/// their keys, the inbox's database steps and the intake, deliveries, push and pull cursors, the outbox as peers
/// read it, and applying what peers send. It shares the service's store, clock and unit of work (a replicated
/// revision is written by the same writer as a publish) and keeps federation's own state: the inbox's waiting list,
/// the inbound queue's wake-up and held objects, and the decoded pinned keys. Cheap to clone; every clone shares the same state.
#[derive(Clone)]
pub struct Federation {
    inner: Arc<FederationInner>,
}

struct FederationInner {
    /// The agent-facing use cases, whose store, clock, IDs and validation federation shares.
    service: Service,
    /// Inbound activities waiting to be stored together (see `inbox_groups.rs`).
    inbound_groups: inbox_groups::InboundGroups,
    /// Pinned keys as decoded from their text (see `inbox.rs`).
    decoded_keys: inbox::DecodedKeys,
    /// Woken when an inbound activity is queued, so the intake applies it without waiting for its next pass.
    inbound_queued: tokio::sync::Notify,
    /// Objects the inbox verified whose activities were queued (see `held_objects.rs`).
    held_objects: held_objects::HeldObjects,
    /// How the evidence records of other realms applied here ended, until the federation loop counts them.
    evidence_tally: evidence_tally::EvidenceTally,
}

impl std::fmt::Debug for Federation {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Federation")
            .field("realm", self.realm())
            .finish_non_exhaustive()
    }
}

impl Federation {
    /// The federation of the instance whose agent-facing use cases are `service`.
    pub fn new(service: Service) -> Federation {
        Federation {
            inner: Arc::new(FederationInner {
                service,
                inbound_groups: inbox_groups::InboundGroups::default(),
                decoded_keys: inbox::DecodedKeys::default(),
                inbound_queued: tokio::sync::Notify::new(),
                held_objects: held_objects::HeldObjects::default(),
                evidence_tally: evidence_tally::EvidenceTally::default(),
            }),
        }
    }

    /// The agent-facing use cases this federation shares its store and clock with.
    pub fn service(&self) -> &Service {
        &self.inner.service
    }

    /// The realm this instance serves.
    pub fn realm(&self) -> &Realm {
        self.inner.service.realm()
    }

    /// The current time from the injected clock.
    pub fn now(&self) -> DateTime<Utc> {
        self.inner.service.now()
    }

    fn store(&self) -> &Store {
        self.inner.service.store()
    }

    /// The inbox's waiting list (see `inbox_groups.rs`).
    pub(crate) fn inbound_groups(&self) -> &inbox_groups::InboundGroups {
        &self.inner.inbound_groups
    }

    /// Pinned keys as decoded from their text (see `inbox.rs`).
    fn decoded_keys(&self) -> &inbox::DecodedKeys {
        &self.inner.decoded_keys
    }

    /// Woken when an inbound activity is queued: the federation loop waits on it to run the intake at once.
    pub fn inbound_queued(&self) -> &tokio::sync::Notify {
        &self.inner.inbound_queued
    }

    /// Objects the inbox verified whose activities were queued (see `held_objects.rs`).
    pub(crate) fn held_objects(&self) -> &held_objects::HeldObjects {
        &self.inner.held_objects
    }
}
