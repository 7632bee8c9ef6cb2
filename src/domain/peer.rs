//! Peers: the other realms an instance federates with, their states and the base trust an admin gives them.

use std::fmt;

/// Where a peering stands, as `peer list` shows it and the database stores it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PeerState {
    /// This instance sent a `Follow` and waits for the answer.
    PendingOut,
    /// The peer sent a `Follow` and waits for this instance's admin.
    PendingIn,
    /// Both sides agreed: activities flow.
    Active,
    /// The admin blocked the peer: its requests get 403, its evidence stops counting.
    Blocked,
    /// Deliveries have failed for the whole delivery horizon; probed, never dropped.
    Unreachable,
    /// One side refused or withdrew the peering.
    Rejected,
}

impl PeerState {
    /// Every state, in the order `peer list` and the metrics use.
    pub const ALL: [PeerState; 6] = [
        PeerState::PendingOut,
        PeerState::PendingIn,
        PeerState::Active,
        PeerState::Blocked,
        PeerState::Unreachable,
        PeerState::Rejected,
    ];

    /// The stored and displayed name.
    pub const fn as_str(self) -> &'static str {
        match self {
            PeerState::PendingOut => "pending_out",
            PeerState::PendingIn => "pending_in",
            PeerState::Active => "active",
            PeerState::Blocked => "blocked",
            PeerState::Unreachable => "unreachable",
            PeerState::Rejected => "rejected",
        }
    }

    /// The state with this name.
    pub fn parse(text: &str) -> Option<PeerState> {
        PeerState::ALL.into_iter().find(|state| state.as_str() == text)
    }

    /// Whether the peer may send any activity (an active peer, or one the peering is being set up with; the inbox
    /// lets the latter send peering activities only).
    pub fn may_send_peering(self) -> bool {
        matches!(
            self,
            PeerState::Active
                | PeerState::PendingOut
                | PeerState::PendingIn
                | PeerState::Unreachable
                | PeerState::Rejected
        )
    }
}

impl fmt::Display for PeerState {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// The state an admin is shown for a peer, the same in `interai admin peer list`, `/admin/peers` and the
/// `interai_peers` gauge: the stored [`PeerState`], except that an active (or unreachable) peer that refuses this
/// instance's requests as blocked (403 `blocked_sender`) shows as `blocked_by_peer`. That condition is not stored: it
/// lasts as long as the peer's answers say so, and the peering is still active here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ShownPeerState {
    /// The stored state.
    Stored(PeerState),
    /// Active here, but the peer blocked this instance: its inbox or outbox answers 403 `blocked_sender`.
    BlockedByPeer,
}

impl ShownPeerState {
    /// Every state shown, in the order `peer list` and the metrics use.
    pub const ALL: [ShownPeerState; 7] = [
        ShownPeerState::Stored(PeerState::PendingOut),
        ShownPeerState::Stored(PeerState::PendingIn),
        ShownPeerState::Stored(PeerState::Active),
        ShownPeerState::Stored(PeerState::Blocked),
        ShownPeerState::Stored(PeerState::Unreachable),
        ShownPeerState::Stored(PeerState::Rejected),
        ShownPeerState::BlockedByPeer,
    ];

    /// The displayed name.
    pub const fn as_str(self) -> &'static str {
        match self {
            ShownPeerState::Stored(state) => state.as_str(),
            ShownPeerState::BlockedByPeer => "blocked_by_peer",
        }
    }
}

impl fmt::Display for ShownPeerState {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// The admin's base trust in a peer (trust model: instance trust).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PeerLevel {
    /// Received and stored, counts nothing.
    Quarantine,
    /// Base trust 0.3.
    Low,
    /// Base trust 0.5.
    Standard,
    /// Base trust 0.7.
    High,
}

impl PeerLevel {
    /// Every level, lowest first.
    pub const ALL: [PeerLevel; 4] = [
        PeerLevel::Quarantine,
        PeerLevel::Low,
        PeerLevel::Standard,
        PeerLevel::High,
    ];

    /// The stored and displayed name.
    pub fn as_str(self) -> &'static str {
        match self {
            PeerLevel::Quarantine => "quarantine",
            PeerLevel::Low => "low",
            PeerLevel::Standard => "standard",
            PeerLevel::High => "high",
        }
    }

    /// The level with this name.
    pub fn parse(text: &str) -> Option<PeerLevel> {
        PeerLevel::ALL.into_iter().find(|level| level.as_str() == text)
    }

    /// The base trust of the level (trust model §instance trust; a block is 0 whatever the level).
    pub fn base_trust(self) -> f64 {
        match self {
            PeerLevel::Quarantine => 0.0,
            PeerLevel::Low => 0.3,
            PeerLevel::Standard => 0.5,
            PeerLevel::High => 0.7,
        }
    }
}

impl fmt::Display for PeerLevel {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_and_levels_round_trip_through_their_names() {
        for state in PeerState::ALL {
            assert_eq!(PeerState::parse(state.as_str()), Some(state));
        }
        for level in PeerLevel::ALL {
            assert_eq!(PeerLevel::parse(level.as_str()), Some(level));
        }
        assert_eq!(PeerState::parse("active "), None);
        assert_eq!(PeerLevel::parse("blocked"), None, "a block is a state, not a level");
    }
}
