//! The trust status of a target (trust model §2.8): decided by the trust engine, stored by the store, filtered and
//! ranked by search and shown by every wire, so it lives here and every layer passes it typed.

/// The status of a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TrustStatus {
    Superseded,
    Disputed,
    Outdated,
    Incorrect,
    HighConfidence,
    Supported,
    Unverified,
}

impl TrustStatus {
    /// Every status, in declaration order.
    pub const ALL: [TrustStatus; 7] = [
        TrustStatus::Superseded,
        TrustStatus::Disputed,
        TrustStatus::Outdated,
        TrustStatus::Incorrect,
        TrustStatus::HighConfidence,
        TrustStatus::Supported,
        TrustStatus::Unverified,
    ];

    /// The stable snake_case name used on every wire and in every column.
    pub fn as_str(self) -> &'static str {
        match self {
            TrustStatus::Superseded => "superseded",
            TrustStatus::Disputed => "disputed",
            TrustStatus::Outdated => "outdated",
            TrustStatus::Incorrect => "incorrect",
            TrustStatus::HighConfidence => "high_confidence",
            TrustStatus::Supported => "supported",
            TrustStatus::Unverified => "unverified",
        }
    }

    /// Parses a name written by [`TrustStatus::as_str`].
    pub fn parse(name: &str) -> Option<TrustStatus> {
        TrustStatus::ALL.into_iter().find(|status| status.as_str() == name)
    }

    /// Whether independent evidence speaks against the target (`disputed`, `incorrect` or `outdated`): the statuses
    /// that compare and search flag as contested.
    pub fn is_contested(self) -> bool {
        matches!(
            self,
            TrustStatus::Disputed | TrustStatus::Incorrect | TrustStatus::Outdated
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for status in TrustStatus::ALL {
            assert_eq!(TrustStatus::parse(status.as_str()), Some(status));
        }
        assert_eq!(TrustStatus::parse("High_Confidence"), None);
    }
}
