//! The time rules of what a peer signs: the receiver's clock policy for request signatures, and the validity window
//! of a pinned key, checked for request signatures and origin proofs alike.

use chrono::{DateTime, TimeDelta, Utc};
use federation::signature::TimePolicy;

/// The receiver's clock policy: `created` within ±300 s, `expires` at most 300 s after `created`.
pub const TIME_POLICY: TimePolicy = TimePolicy {
    max_clock_skew: 300,
    max_validity: 300,
};

/// Why a key may not sign now: the reason code peers see, and a sentence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyOutsideWindow {
    /// `key_expired` or `key_not_yet_valid`.
    pub reason: &'static str,
    /// What it means.
    pub detail: &'static str,
}

/// A pinned key may sign only inside its announced window: not before `validFrom` (less the clock skew the policy
/// allows), not from its end on.
pub fn key_outside_window(
    valid_from: Option<DateTime<Utc>>,
    valid_until: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> Option<KeyOutsideWindow> {
    if valid_until.is_some_and(|until| until <= now) {
        return Some(KeyOutsideWindow {
            reason: "key_expired",
            detail: "the signing key's validity has ended",
        });
    }
    if valid_from.is_some_and(|from| from > now + TimeDelta::seconds(TIME_POLICY.max_clock_skew)) {
        return Some(KeyOutsideWindow {
            reason: "key_not_yet_valid",
            detail: "the signing key's validity has not begun",
        });
    }
    None
}
