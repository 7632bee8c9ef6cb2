//! The receiver's clock policy for request signatures (`created` and `expires`), a protocol matter. Whether a pinned
//! key may sign at all now (its validity window) is the service's admission rule
//! (`service::federation::admission`).

use federation::signature::TimePolicy;

use crate::service::federation::admission::CLOCK_SKEW_SECONDS;

/// The receiver's clock policy: `created` within ±300 s, `expires` at most 300 s after `created`. The skew is the
/// one the admission rule allows at a key's window start.
pub const TIME_POLICY: TimePolicy = TimePolicy {
    max_clock_skew: CLOCK_SKEW_SECONDS,
    max_validity: 300,
};
