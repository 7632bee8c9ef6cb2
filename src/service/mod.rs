//! The service layer: every use case of the instance and the one home of its business rules.
//!
//! Adapters (MCP, HTTP, CLI) parse input, call one method here and map the result. This module knows
//! no transport: no axum, no rmcp, no HTTP status codes. Time comes from the injected clock.

pub mod activity_history;
pub mod actors;
pub mod archive;
pub mod audit;
pub mod audit_retention;
pub mod backups;
pub mod bootstrap;
pub mod compare;
pub mod console_sessions;
pub mod content;
mod content_requests;
mod content_validation;
pub mod deletion;
pub mod error;
pub mod evidence;
pub mod federation;
pub mod input_gate;
pub mod keys;
pub(crate) mod known_rows;
pub mod limits;
pub mod lookup;
pub mod loop_health;
pub mod markdown;
pub mod origins;
pub mod overview;
pub mod paging;
pub mod references;
pub mod revision_write;
pub mod scan;
pub mod search;
pub mod spaces;
pub mod structured_data;
pub mod trust;
pub mod trust_history;
pub mod unit_of_work;
pub mod validation;
pub mod writes;

use std::sync::Arc;

use chrono::{DateTime, Utc};

pub use error::{ErrorCode, ServiceError};

use crate::clock::SharedClock;
use crate::domain::{IdKind, PublicId};
use crate::store::Store;

/// Settings the service layer reads; a subset of the configuration.
#[derive(Debug, Clone)]
pub struct ServiceSettings {
    /// This instance's realm.
    pub realm: String,
    /// Successful writes allowed per root controller per hour.
    pub writes_per_hour: u32,
    /// How many of a text search's candidates are considered at most, the most recently changed first.
    pub search_candidates: u32,
    /// The trust model's parameters.
    pub trust_parameters: crate::trust::TrustParameters,
    /// The public URL without its trailing slash (every URL the instance emits starts with it).
    pub public_base_url: String,
    /// Seals the instance's private keys; `None` only for instances that never federate (benchmarks).
    pub key_box: Option<federation::key_box::KeyBox>,
}

/// The use cases of one instance. Cheap to clone; every clone shares the same store and clock.
#[derive(Clone)]
pub struct Service {
    inner: Arc<ServiceInner>,
}

struct ServiceInner {
    store: Store,
    /// The realm this instance serves, from the settings.
    realm: crate::domain::Realm,
    clock: SharedClock,
    settings: ServiceSettings,
    /// Each controller's reputation snapshot of the day (see `trust.rs`).
    reputation_cache: std::sync::Mutex<trust::ReputationCache>,
    /// The secret and personal-data scanner, compiled once.
    content_scanner: scan::ContentScanner,
    /// The JSON Schemas of structured data, compiled once.
    structured_data_validator: structured_data::StructuredDataValidator,
    /// Incremental trust states of recently changed targets (see `trust.rs`).
    trust_cache: std::sync::Mutex<trust::TrustStateCache>,
    /// Produces strictly increasing ULIDs within a millisecond, so IDs created by one process sort in creation order.
    ulid_generator: std::sync::Mutex<ulid::Generator>,
    /// The secret that signs search cursors, read once from the database.
    cursor_secret: std::sync::Mutex<Option<String>>,
    /// Woken when a commit appended outbox events, so the federation loop pushes them at once instead of at its
    /// next poll (a commit in another process is seen at that poll).
    outbox_appended: tokio::sync::Notify,
    /// How this process's background loops are doing (see `loop_health.rs`).
    background_loops: loop_health::BackgroundLoops,
    /// The instance-trust table every trust read uses, replaced whole by each batch (see
    /// `federation/instance_trust.rs`).
    instance_trust: std::sync::RwLock<Arc<crate::trust::InstanceTrustTable>>,
    /// Why each peer has the trust the table gives it (`level:standard; agreement 10/0`), for explanations.
    instance_trust_reasons: std::sync::RwLock<Arc<std::collections::BTreeMap<String, String>>>,
    /// When this process's service was made (its uptime, on the overview), by the injected clock.
    started_at: chrono::DateTime<chrono::Utc>,
    /// The calls this process audited and has not added to the history yet (see `activity_history.rs`).
    unsaved_call_counts: activity_history::UnsavedCallCounts,
    /// Backups an admin asked for, waiting for the backup loop (see `backups.rs`).
    backup_requests: backups::BackupRequests,
}

impl std::fmt::Debug for Service {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Service")
            .field("realm", &self.inner.settings.realm)
            .finish_non_exhaustive()
    }
}

impl Service {
    /// A service over a connected store.
    pub fn new(store: Store, clock: SharedClock, settings: ServiceSettings) -> Service {
        let started_at = clock.now();
        Service {
            inner: Arc::new(ServiceInner {
                store,
                realm: crate::domain::Realm::from_name(&settings.realm),
                clock,
                settings,
                ulid_generator: std::sync::Mutex::new(ulid::Generator::new()),
                trust_cache: std::sync::Mutex::new(trust::TrustStateCache::default()),
                reputation_cache: std::sync::Mutex::new(trust::ReputationCache::new()),
                content_scanner: scan::ContentScanner::new(),
                structured_data_validator: structured_data::StructuredDataValidator::new(),
                cursor_secret: std::sync::Mutex::new(None),
                outbox_appended: tokio::sync::Notify::new(),
                background_loops: loop_health::BackgroundLoops::default(),
                instance_trust: std::sync::RwLock::new(Arc::new(trust::empty_instance_trust_table())),
                instance_trust_reasons: std::sync::RwLock::new(Arc::default()),
                started_at,
                unsaved_call_counts: activity_history::UnsavedCallCounts::default(),
                backup_requests: backups::BackupRequests::default(),
            }),
        }
    }

    /// Notified after a commit of this process appended outbox events.
    pub fn outbox_appended(&self) -> &tokio::sync::Notify {
        &self.inner.outbox_appended
    }

    /// The realm this instance serves.
    pub fn realm(&self) -> &crate::domain::Realm {
        &self.inner.realm
    }

    /// The settings in force.
    pub fn settings(&self) -> &ServiceSettings {
        &self.inner.settings
    }

    /// The current time from the injected clock.
    pub fn now(&self) -> DateTime<Utc> {
        self.inner.clock.now()
    }

    /// The injected clock, for the background loops that wait on it.
    pub fn clock(&self) -> &SharedClock {
        &self.inner.clock
    }

    /// Whether the database answers.
    pub async fn check_ready(&self) -> Result<(), ServiceError> {
        self.inner.store.ping().await.map_err(ServiceError::from)
    }

    fn store(&self) -> &Store {
        &self.inner.store
    }

    /// A fresh ID of `kind`, time-ordered by the injected clock.
    fn new_id(&self, kind: IdKind) -> PublicId {
        PublicId::from_ulid(kind, self.new_ulid())
    }

    /// A fresh lowercase ULID for rows that are not public objects (audit entries).
    fn new_internal_id(&self) -> String {
        self.new_ulid().to_string().to_ascii_lowercase()
    }

    fn new_ulid(&self) -> ulid::Ulid {
        let now: std::time::SystemTime = self.now().into();
        let mut generator = self
            .inner
            .ulid_generator
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        generator
            .generate_from_datetime(now)
            .unwrap_or_else(|overflow| overflow.commit_overflow_random())
    }
}
