//! The injected clock: the only way the instance learns what time it is.
//!
//! Nothing in the crate reads the system clock directly (clippy's `disallowed-methods` enforces it);
//! every component receives a [`Clock`] so that tests can move time explicitly instead of sleeping.

use std::sync::{Arc, Mutex};

use chrono::{DateTime, DurationRound, TimeDelta, Utc};

/// A source of the current time.
pub trait Clock: Send + Sync + 'static {
    /// The current instant, truncated to whole microseconds so that it survives a round trip
    /// through both database backends unchanged (PostgreSQL keeps microseconds).
    fn now(&self) -> DateTime<Utc>;
}

/// Shared handle to a clock.
pub type SharedClock = Arc<dyn Clock>;

/// The wall clock of the machine.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    #[allow(clippy::disallowed_methods)] // This is the one place allowed to read the system clock.
    fn now(&self) -> DateTime<Utc> {
        truncate_to_microseconds(Utc::now())
    }
}

/// A clock that only moves when a test tells it to.
#[derive(Debug, Clone)]
pub struct ManualClock {
    current: Arc<Mutex<DateTime<Utc>>>,
}

impl ManualClock {
    /// A manual clock standing at `start`.
    pub fn starting_at(start: DateTime<Utc>) -> Self {
        Self {
            current: Arc::new(Mutex::new(truncate_to_microseconds(start))),
        }
    }

    /// Moves the clock forward (or backward, for a negative delta).
    pub fn advance(&self, delta: TimeDelta) {
        let mut current = self.current.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        *current = truncate_to_microseconds(*current + delta);
    }

    /// Sets the clock to an exact instant.
    pub fn set(&self, instant: DateTime<Utc>) {
        let mut current = self.current.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        *current = truncate_to_microseconds(instant);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self.current.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Drops sub-microsecond precision, which PostgreSQL would drop on its own and SQLite would keep,
/// so both backends return exactly the instant that was written.
pub fn truncate_to_microseconds(instant: DateTime<Utc>) -> DateTime<Utc> {
    instant.duration_trunc(TimeDelta::microseconds(1)).unwrap_or(instant)
}
