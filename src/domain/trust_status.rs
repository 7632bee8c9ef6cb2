//! The trust status of a target (trust model §2.8): decided by the trust engine, stored by the store, filtered and
//! ranked by search and shown by every wire, so it lives here and every layer passes it typed; and the trust view
//! (whose evidence a read weighs), which search, `get` and `compare` take alike.

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

/// Whose evidence a trust read weighs (`trust_view`, an extension of the spec): everything this instance holds, each
/// peer's evidence weighed by this instance's trust in it, or this organization's own evidence alone (what the same
/// instance would say with no peers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TrustViewScope {
    /// First-party and remote evidence (the default).
    #[default]
    All,
    /// First-party evidence only.
    FirstParty,
}

impl TrustViewScope {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            TrustViewScope::All => "all",
            TrustViewScope::FirstParty => "first_party",
        }
    }

    /// Parses a wire name.
    pub fn parse(text: &str) -> Option<TrustViewScope> {
        match text {
            "all" => Some(TrustViewScope::All),
            "first_party" => Some(TrustViewScope::FirstParty),
            _ => None,
        }
    }
}

/// A target's status in each trust view: with every origin's evidence weighed (`all`), and on this organization's own
/// evidence alone (`first_party`). Search filters and sorts by either, so both are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrustStatuses {
    /// The status with every origin's evidence weighed.
    pub all: TrustStatus,
    /// The status on first-party evidence alone.
    pub first_party: TrustStatus,
}

impl TrustStatuses {
    /// The statuses of a target that holds no other realm's evidence: both views agree.
    pub fn same(status: TrustStatus) -> TrustStatuses {
        TrustStatuses {
            all: status,
            first_party: status,
        }
    }

    /// The status in one view.
    pub fn of(self, view: TrustViewScope) -> TrustStatus {
        match view {
            TrustViewScope::All => self.all,
            TrustViewScope::FirstParty => self.first_party,
        }
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
