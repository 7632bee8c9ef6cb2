//! The injected clock: the only way the instance learns what time it is.
//!
//! Nothing in the crate reads the system clock directly (clippy's `disallowed-methods` enforces it);
//! every component receives a [`Clock`] so that tests can move time explicitly instead of sleeping.
//! Background loops wait on the same clock ([`Clock::wait_until`]), so a test moves them on by moving the clock.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use chrono::{DateTime, DurationRound, TimeDelta, Utc};

/// A future that completes when a clock reaches an instant.
pub type ClockWait = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// A source of the current time.
pub trait Clock: Send + Sync + 'static {
    /// The current instant, truncated to whole microseconds so that it survives a round trip
    /// through both database backends unchanged (PostgreSQL keeps microseconds).
    fn now(&self) -> DateTime<Utc>;

    /// Completes once the clock reads `deadline` or later (at once when it already does).
    fn wait_until(&self, deadline: DateTime<Utc>) -> ClockWait;
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

    fn wait_until(&self, deadline: DateTime<Utc>) -> ClockWait {
        // The wall clock moves on its own: sleep for the distance, which a changed system time does not shorten.
        let distance = (deadline - self.now()).to_std().unwrap_or_default();
        Box::pin(tokio::time::sleep(distance))
    }
}

/// A clock that only moves when a test tells it to; whatever waits on it wakes when it is moved far enough.
#[derive(Debug, Clone)]
pub struct ManualClock {
    current: Arc<tokio::sync::watch::Sender<DateTime<Utc>>>,
}

impl ManualClock {
    /// A manual clock standing at `start`.
    pub fn starting_at(start: DateTime<Utc>) -> Self {
        let (sender, _) = tokio::sync::watch::channel(truncate_to_microseconds(start));
        Self {
            current: Arc::new(sender),
        }
    }

    /// Moves the clock forward (or backward, for a negative delta).
    pub fn advance(&self, delta: TimeDelta) {
        self.current
            .send_modify(|current| *current = truncate_to_microseconds(*current + delta));
    }

    /// Sets the clock to an exact instant.
    pub fn set(&self, instant: DateTime<Utc>) {
        self.current
            .send_modify(|current| *current = truncate_to_microseconds(instant));
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self.current.borrow()
    }

    fn wait_until(&self, deadline: DateTime<Utc>) -> ClockWait {
        let mut moves = self.current.subscribe();
        Box::pin(async move {
            // The sender lives as long as any clone of the clock, and the waiter's owner holds one.
            let _ = moves.wait_for(|now| *now >= deadline).await;
        })
    }
}

/// Drops sub-microsecond precision, which PostgreSQL would drop on its own and SQLite would keep,
/// so both backends return exactly the instant that was written.
pub fn truncate_to_microseconds(instant: DateTime<Utc>) -> DateTime<Utc> {
    instant.duration_trunc(TimeDelta::microseconds(1)).unwrap_or(instant)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_wait_on_the_manual_clock_ends_when_the_clock_is_moved_past_its_deadline() {
        let start = DateTime::parse_from_rfc3339("2026-11-01T09:00:00Z")
            .expect("valid instant")
            .to_utc();
        let clock = ManualClock::starting_at(start);
        let mut wait = clock.wait_until(start + TimeDelta::hours(1));
        assert!(
            futures_poll_once(&mut wait).is_pending(),
            "the clock has not reached the deadline"
        );
        clock.advance(TimeDelta::minutes(59));
        assert!(futures_poll_once(&mut wait).is_pending(), "still a minute short");
        clock.advance(TimeDelta::minutes(1));
        wait.await;
        clock.wait_until(start).await;
    }

    fn futures_poll_once(wait: &mut ClockWait) -> std::task::Poll<()> {
        let waker = std::task::Waker::noop();
        let mut context = std::task::Context::from_waker(waker);
        wait.as_mut().poll(&mut context)
    }
}
