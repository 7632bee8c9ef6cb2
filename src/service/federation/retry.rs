//! Retry timing shared by every queue of the federation: how long a worker holds work it took, the backoff with full
//! jitter between attempts, the delivery horizon after which a peer is `unreachable`, and how an attempt ended.

use chrono::TimeDelta;

/// How long a worker holds a peering delivery or a peer's pull it took before another may take it (a crashed
/// worker's work comes back after this). Inbound activities need no lease: the applying transaction claims them.
pub const LEASE: TimeDelta = TimeDelta::seconds(60);

/// The first retry waits up to this long (full jitter: a random time between zero and the bound).
pub const BACKOFF_BASE: TimeDelta = TimeDelta::seconds(5);
/// No retry waits longer than this (so a peer that is down is probed at least hourly).
pub const BACKOFF_CAP: TimeDelta = TimeDelta::hours(1);
/// A peer whose deliveries have failed for this long is `unreachable`: still probed, its queue kept, never dropped.
pub const DELIVERY_HORIZON: TimeDelta = TimeDelta::days(7);

/// How one attempt ended, as the worker saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttemptResult {
    /// The peer answered 2xx.
    Delivered,
    /// A failure that may pass (network, 5xx, 408, 429): retried after the backoff, or after `retry_after` when the
    /// peer gave one (at most the cap).
    Retry {
        /// The error class and an excerpt, for the admin.
        error: String,
        /// The peer's `Retry-After`.
        retry_after: Option<TimeDelta>,
    },
    /// A permanent refusal (another 4xx): the delivery becomes a dead letter.
    Refused {
        /// The status and an excerpt.
        error: String,
    },
}

/// The bound of the backoff before attempt `attempts + 1`: base × 2^(attempts − 1), capped.
pub fn backoff_bound(attempts: i32) -> TimeDelta {
    let exponent = u32::try_from(attempts.saturating_sub(1)).unwrap_or(0).min(20);
    let bound = BACKOFF_BASE * 2_i32.saturating_pow(exponent);
    bound.min(BACKOFF_CAP)
}

/// A random wait between zero and `bound` (full jitter), so peers that failed together do not retry together.
pub(crate) fn jitter(bound: TimeDelta) -> TimeDelta {
    let milliseconds = bound.num_milliseconds().max(1);
    let chosen = rand::random_range(0..=milliseconds);
    TimeDelta::milliseconds(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backoff_doubles_from_five_seconds_up_to_an_hour() {
        assert_eq!(backoff_bound(1), TimeDelta::seconds(5));
        assert_eq!(backoff_bound(2), TimeDelta::seconds(10));
        assert_eq!(backoff_bound(5), TimeDelta::seconds(80));
        assert_eq!(backoff_bound(11), TimeDelta::hours(1));
        assert_eq!(backoff_bound(1000), TimeDelta::hours(1));
        for _ in 0..100 {
            let wait = jitter(backoff_bound(3));
            assert!(wait >= TimeDelta::zero() && wait <= TimeDelta::seconds(20));
        }
    }
}
