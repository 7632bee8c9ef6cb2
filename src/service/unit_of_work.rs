//! The unit of work every change runs in, whoever asked for it: one transaction, the trust states it changed (cached
//! once it commits), and the changes that leave the instance with it (outbox events, appended in the same transaction
//! just before the commit, so that an event exists exactly when its change does).
//!
//! This layer knows no caller. The agent-facing layer (`writes.rs`) adds scope, idempotency, the per-root-controller
//! rate limit and the MCP audit row on top of it; the federation intake and the admin's operations use it as it is,
//! so a peer's activity never borrows an agent's key, audit row or write limit.

use chrono::{DateTime, Utc};

use super::trust::PendingTrustStates;
use super::{Service, ServiceError};
use crate::domain::change::{Change, ChangeEvent};
use crate::domain::{PublicId, knowledge::SpaceVisibility};
use crate::store::{self, Conn, StoreError, Transaction};

/// How often a unit of work is attempted when PostgreSQL reports a deadlock or serialization failure.
pub(super) const UNIT_ATTEMPTS: usize = 3;

/// One open change: its transaction, the trust states it produced, and the outbox events it emits.
pub(crate) struct UnitOfWork {
    transaction: Transaction,
    trust_states: PendingTrustStates,
    changes: Vec<ChangeEvent>,
}

impl store::HoldsTransaction for UnitOfWork {
    fn transaction(&mut self) -> &mut Transaction {
        &mut self.transaction
    }
}

impl UnitOfWork {
    /// A unit of work over an open transaction.
    pub(super) fn new(transaction: Transaction) -> UnitOfWork {
        UnitOfWork {
            transaction,
            trust_states: PendingTrustStates::default(),
            changes: Vec::new(),
        }
    }

    /// The connection to pass to store functions.
    pub(super) fn conn(&mut self) -> Conn<'_> {
        self.transaction.conn()
    }

    /// The transaction and the trust states, for the trust glue that works on both at once.
    pub(super) fn parts(&mut self) -> (&mut Transaction, &mut PendingTrustStates) {
        (&mut self.transaction, &mut self.trust_states)
    }

    /// The transaction, for steps that need nothing else of the unit.
    pub(super) fn transaction(&mut self) -> &mut Transaction {
        &mut self.transaction
    }

    /// The trust states the unit changed so far.
    pub(super) fn trust_states(&mut self) -> &mut PendingTrustStates {
        &mut self.trust_states
    }

    /// Emits a change that leaves the instance with this unit: it joins the outbox when the unit commits, and not
    /// at all when it does not. A change in a local space never leaves, so it is not emitted.
    pub(super) fn emit(
        &mut self,
        event_id: String,
        change: Change,
        space_id: &PublicId,
        visibility: SpaceVisibility,
        at: DateTime<Utc>,
    ) {
        if visibility == SpaceVisibility::Local {
            return;
        }
        self.changes.push(ChangeEvent {
            event_id,
            change,
            space_id: space_id.clone(),
            created_at: at,
        });
    }
}

/// Runs a unit of work: `begin_unit`, the body (an expression evaluating to `Result<T, ServiceError>` that changes
/// data only through `$unit`), then `commit_unit`, retrying the whole attempt when the database asks for it. For
/// callers without an agent (the federation intake, the admin); the agent-facing layer has `within_write!`.
macro_rules! within_unit_of_work {
    ($service:expr, |$unit:ident| $body:block) => {
        $crate::service::unit_of_work::within_unit_of_work!($service, begin_unit, |$unit| $body)
    };
    // `redoable`: a change redone from durable state when it is lost (see `Store::begin_redoable`).
    ($service:expr, redoable, |$unit:ident| $body:block) => {
        $crate::service::unit_of_work::within_unit_of_work!($service, begin_redoable_unit, |$unit| $body)
    };
    ($service:expr, $begin:ident, |$unit:ident| $body:block) => {{
        let mut attempt = 0_usize;
        loop {
            attempt += 1;
            let mut open = $service.$begin().await?;
            let result = {
                let $unit = &mut open;
                $body
            };
            match result {
                Ok(value) => match $service.commit_unit(open).await {
                    Ok(()) => break Ok(value),
                    Err(error) if $crate::service::unit_of_work::worth_another_attempt(&error, attempt) => continue,
                    Err(error) => break Err($crate::service::ServiceError::from(error)),
                },
                Err(error) if error.retryable && attempt < $crate::service::unit_of_work::UNIT_ATTEMPTS => continue,
                Err(error) => break Err(error),
            }
        }
    }};
}
pub(crate) use within_unit_of_work;

/// Whether a failed commit deserves another attempt: the store says a new attempt can succeed
/// ([`StoreError::is_retryable`]), and attempts remain.
pub(crate) fn worth_another_attempt(error: &StoreError, attempt: usize) -> bool {
    attempt < UNIT_ATTEMPTS && error.is_retryable()
}

impl Service {
    /// Opens a unit of work on a fresh transaction.
    pub(super) async fn begin_unit(&self) -> Result<UnitOfWork, ServiceError> {
        Ok(UnitOfWork::new(self.store().begin().await?))
    }

    /// Opens a unit of work for a change that is redone from durable state when it is lost: its commit does not
    /// wait for the database's disk sync ([`store::Store::begin_redoable`]).
    pub(super) async fn begin_redoable_unit(&self) -> Result<UnitOfWork, ServiceError> {
        Ok(UnitOfWork::new(self.store().begin_redoable().await?))
    }

    /// Commits a unit of work: appends its outbox events (in commit order, see `store::outbox::append`), caches its
    /// trust states, and commits. On failure nothing of it stays: the transaction rolls back and its trust states
    /// leave the cache again.
    pub(super) async fn commit_unit(&self, unit: UnitOfWork) -> Result<(), StoreError> {
        let UnitOfWork {
            mut transaction,
            trust_states,
            changes,
        } = unit;
        let appends = !changes.is_empty();
        if appends {
            store::outbox::append(&mut transaction.conn(), &changes).await?;
        }
        // The new trust states enter the cache before the commit, because on SQLite the next write of the same
        // group commit reads this write's summaries before the group's COMMIT. A state is found only by the
        // version this write gave its summary, which no other write can see unless this one commits; a
        // failed commit takes its states out again.
        let cached = self.cache_trust_states(trust_states);
        let committed = transaction.commit().await;
        if committed.is_err() {
            self.forget_trust_states(&cached);
        } else if appends {
            self.outbox_appended().notify_one();
        }
        committed
    }
}
