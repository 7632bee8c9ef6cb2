//! Peers: the other realms an instance federates with, their states, the base trust an admin gives them, and who
//! pinned their keys.

use std::fmt;

use chrono::{DateTime, Utc};

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

/// Who pinned a peer's key, which decides what the key may sign: an admin (who compared its fingerprint), a
/// stranger's first contact (read from its actor, unconfirmed until an admin approves the peer), or a key already
/// pinned that endorsed it (a rotation announced in an `Update`, or found when the peer's actor was re-read).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum KeyPin {
    /// An admin compared the key's fingerprint (adding the peer, or approving its first contact).
    Admin,
    /// Read from a stranger's actor on its first `Follow`: it may sign only peering messages until an admin approves.
    FirstContact,
    /// Endorsed by the pinned key with this ID.
    EndorsedBy(String),
}

impl KeyPin {
    /// The stored and displayed name: `admin`, `first_contact`, or the endorsing key's ID.
    pub fn as_str(&self) -> &str {
        match self {
            KeyPin::Admin => "admin",
            KeyPin::FirstContact => "first_contact",
            KeyPin::EndorsedBy(key_id) => key_id,
        }
    }

    /// The pin with this stored name. Every name is one: a key ID is neither `admin` nor `first_contact` (it is a
    /// URL).
    pub fn parse(text: String) -> KeyPin {
        match text.as_str() {
            "admin" => KeyPin::Admin,
            "first_contact" => KeyPin::FirstContact,
            _ => KeyPin::EndorsedBy(text),
        }
    }

    /// Whether the key awaits an admin's approval: read on first contact, so it vouches for nothing yet (it may
    /// neither sign more than peering messages nor endorse another key).
    pub fn is_provisional(&self) -> bool {
        *self == KeyPin::FirstContact
    }
}

impl From<String> for KeyPin {
    fn from(text: String) -> KeyPin {
        KeyPin::parse(text)
    }
}

/// Compares with the name an admin reads (`peer list`, `/admin/peers`).
impl PartialEq<&str> for KeyPin {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl fmt::Display for KeyPin {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// A peer as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct PeerRecord {
    /// The peer's realm (host and port), lower case: the key of everything about it.
    pub realm: String,
    /// Its public URL.
    pub base_url: String,
    /// Its instance actor.
    pub actor_url: String,
    /// Its inbox.
    pub inbox_url: String,
    /// Its outbox.
    pub outbox_url: Option<String>,
    /// Where the peering stands.
    pub state: PeerState,
    /// The admin's base trust.
    pub level: PeerLevel,
    /// The ID of the `Follow` this instance sent.
    pub our_follow_id: Option<String>,
    /// The ID of the `Follow` the peer sent.
    pub their_follow_id: Option<String>,
    /// Why it was blocked.
    pub blocked_reason: Option<String>,
    /// When the block lifts on its own.
    pub blocked_until: Option<DateTime<Utc>>,
    /// The state to return to when the block lifts.
    pub state_before_block: Option<PeerState>,
    /// The last authenticated request from the peer, or the last delivery to it.
    pub last_contact_at: Option<DateTime<Utc>>,
    /// The last failure with the peer, as the admin reads it.
    pub last_error: Option<String>,
    /// When it happened.
    pub last_error_at: Option<DateTime<Utc>>,
    /// When its manifest was last read after a signature failure (at most once per interval).
    pub manifest_refreshed_at: Option<DateTime<Utc>>,
    /// When the peer was first recorded.
    pub created_at: DateTime<Utc>,
    /// When the row last changed.
    pub updated_at: DateTime<Utc>,
}

/// A key pinned for a peer.
#[derive(Debug, Clone, PartialEq)]
pub struct PinnedPeerKey {
    /// The key ID, a URL under the peer's public URL.
    pub key_id: String,
    /// The peer.
    pub peer_realm: String,
    /// The public key, multibase.
    pub public_key_multibase: String,
    /// `SHA256:…` of the key, as admins compare it.
    pub fingerprint: String,
    /// First instant the key may sign, when published.
    pub valid_from: Option<DateTime<Utc>>,
    /// First instant it may no longer sign, when published.
    pub valid_until: Option<DateTime<Utc>>,
    /// Who pinned it (stored as `admin`, `first_contact`, or the ID of the pinned key that endorsed it).
    pub pinned_by: KeyPin,
    /// When it was pinned.
    pub pinned_at: DateTime<Utc>,
}

/// Why a peer's effective trust is what it is (trust model §2.15), as the instance-trust batch decided it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeerTrustReason {
    /// Its level's base, moved by observed agreement (§2.10).
    Level(PeerLevel),
    /// An admin's pin, used as given.
    Pinned,
    /// Blocked: a hard 0 that neither agreement nor a pin lifts.
    Blocked,
    /// In quarantine: received and shown, a hard 0.
    Quarantine,
    /// The peering is in this state, whose origin counts 0 (pending, rejected).
    NotSharing(PeerState),
}

impl PeerTrustReason {
    /// The stored and displayed form: `level:standard`, `pinned`, `blocked`, `quarantine`, `state:pending_in`.
    pub fn to_text(self) -> String {
        match self {
            PeerTrustReason::Level(level) => format!("level:{level}"),
            PeerTrustReason::Pinned => "pinned".to_owned(),
            PeerTrustReason::Blocked => "blocked".to_owned(),
            PeerTrustReason::Quarantine => "quarantine".to_owned(),
            PeerTrustReason::NotSharing(state) => format!("state:{state}"),
        }
    }

    /// The reason written as [`PeerTrustReason::to_text`] writes it.
    pub fn parse(text: &str) -> Option<PeerTrustReason> {
        match text {
            "pinned" => Some(PeerTrustReason::Pinned),
            "blocked" => Some(PeerTrustReason::Blocked),
            "quarantine" => Some(PeerTrustReason::Quarantine),
            _ => {
                if let Some(level) = text.strip_prefix("level:") {
                    PeerLevel::parse(level).map(PeerTrustReason::Level)
                } else {
                    PeerState::parse(text.strip_prefix("state:")?).map(PeerTrustReason::NotSharing)
                }
            }
        }
    }
}

/// A peer's effective trust t_I as one instance-trust batch computed it: what its evidence is weighed by here.
#[derive(Debug, Clone, PartialEq)]
pub struct PeerTrust {
    /// The peer.
    pub peer_realm: String,
    /// t_I in [0, 0.9].
    pub trust: f64,
    /// What decided it.
    pub reason: PeerTrustReason,
    /// Agreement events counted (§2.10), one per target at most.
    pub agreements: u32,
    /// Disagreement events counted.
    pub disagreements: u32,
    /// The batch that computed it (`instance_trust_epoch`).
    pub epoch: i64,
    /// When that batch ran.
    pub computed_at: DateTime<Utc>,
}

/// One peer's replication state.
#[derive(Debug, Clone, PartialEq)]
pub struct PeerReplication {
    /// The peer.
    pub peer_realm: String,
    /// Every outbox event at or below this was delivered to the peer (or dead-lettered).
    pub push_cursor: i64,
    /// Failed delivery rounds in a row (a round that fails counts once, however many requests failed in it).
    pub consecutive_failures: i32,
    /// When the next delivery round may start.
    pub next_attempt_at: DateTime<Utc>,
    /// A worker delivers to the peer until then; nobody else does.
    pub leased_until: Option<DateTime<Utc>>,
    /// When the current run of failures began.
    pub failing_since: Option<DateTime<Utc>>,
    /// The last delivery round that delivered something.
    pub last_success_at: Option<DateTime<Utc>>,
    /// The last failure's class (`network`, `http_503`, …).
    pub last_error_class: Option<String>,
    /// Its excerpt.
    pub last_error: Option<String>,
    /// When.
    pub last_error_at: Option<DateTime<Utc>>,
    /// When a 401 or 403 last led to the one key refresh allowed before such answers are final.
    pub auth_refreshed_at: Option<DateTime<Utc>>,
    /// The highest position of our outbox the peer has asked to read after (it has everything up to there).
    pub pulled_through: Option<i64>,
    /// The peer's outbox, pulled up to here; `None` until its snapshot was read (a backfill).
    pub pull_cursor: Option<i64>,
    /// While a backfill runs: the last object of the peer's snapshot read so far.
    pub backfill_after: Option<String>,
    /// While a backfill runs: the peer's outbox head when its snapshot began.
    pub backfill_head: Option<i64>,
    /// The epoch of the peer's outbox as last read (`None` before the first page, or from a peer that names
    /// none): positions count within one epoch only.
    pub outbox_epoch: Option<String>,
    /// When the next pull (anti-entropy check) is due.
    pub next_pull_at: DateTime<Utc>,
    /// A worker pulls from the peer until then; nobody else does.
    pub pull_leased_until: Option<DateTime<Utc>>,
    /// The last pull that answered.
    pub last_pull_at: Option<DateTime<Utc>>,
    /// The last pull's failure.
    pub last_pull_error: Option<String>,
    /// When the row was made (the peering became active).
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
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
        for pin in [
            KeyPin::Admin,
            KeyPin::FirstContact,
            KeyPin::EndorsedBy("https://beta.test/actor#key-1".to_owned()),
        ] {
            assert_eq!(KeyPin::parse(pin.as_str().to_owned()), pin);
        }
        assert!(KeyPin::FirstContact.is_provisional());
        assert!(!KeyPin::EndorsedBy("https://beta.test/actor#key-1".to_owned()).is_provisional());
    }

    #[test]
    fn trust_reasons_round_trip_through_their_text() {
        let mut reasons = vec![
            PeerTrustReason::Pinned,
            PeerTrustReason::Blocked,
            PeerTrustReason::Quarantine,
        ];
        reasons.extend(PeerLevel::ALL.map(PeerTrustReason::Level));
        reasons.extend(PeerState::ALL.map(PeerTrustReason::NotSharing));
        for reason in reasons {
            assert_eq!(PeerTrustReason::parse(&reason.to_text()), Some(reason), "{reason:?}");
        }
        assert_eq!(PeerTrustReason::parse("level:blocked"), None);
        assert_eq!(PeerTrustReason::parse("state:"), None);
    }
}
