//! One status per peer, which every surface reads (`interai admin peer list` and `show`, `/admin/peers`, the
//! `interai_peers` gauge): the state as shown, the last failure with its class and time whichever channel it came
//! from (peering deliveries, push rounds, pulls), everything still waiting for the peer, and the last contact.
//!
//! Before, each surface read a different part: the header row of `peer list` showed the peer row's error (written by
//! peering deliveries only) and counted only peering messages, while its `outbox` line showed the push failures and
//! the undelivered events, so one peer read as healthy and failing at once.

use chrono::{DateTime, Utc};

use super::super::ServiceError;
use super::peer_failure::{BLOCKED_SENDER, PeerFailure, failure_class};
use crate::domain::peer::{PeerRecord, PeerReplication, PeerTrust, PinnedPeerKey};
use crate::domain::{PeerState, ShownPeerState};
use crate::store::{self, Reader};

/// What an operator sees of one peer's replication.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplicationLag {
    /// The state.
    pub replication: PeerReplication,
    /// Events of our outbox the peer has not been sent.
    pub undelivered: i64,
    /// When the oldest of them was committed.
    pub oldest_undelivered_at: Option<DateTime<Utc>>,
    /// Dead letters kept for the peer.
    pub dead_letters: i64,
}

/// A peer with everything an admin is shown of it.
#[derive(Debug, Clone, PartialEq)]
pub struct PeerView {
    /// The stored peer.
    pub peer: PeerRecord,
    /// Its pinned keys.
    pub keys: Vec<PinnedPeerKey>,
    /// The state shown (the stored one, or `blocked_by_peer`).
    pub state: ShownPeerState,
    /// The newest failure of any channel (peering deliveries, push rounds, pulls), kept after a recovery (compare
    /// with `peer.last_contact_at`).
    pub last_error: Option<PeerFailure>,
    /// Everything waiting to reach the peer: peering messages plus replicated events not yet delivered.
    pub pending_deliveries: i64,
    /// Peering messages (`Follow`, `Accept`, `Update`, …) not yet delivered.
    pub pending_peering_messages: i64,
    /// Events of this instance's outbox not yet delivered to the peer; 0 for a peer nothing is pushed to any more
    /// (pending, rejected).
    pub undelivered_events: i64,
    /// The peer's replication (cursors, lag, dead letters), for a peer that was ever active.
    pub replication: Option<ReplicationLag>,
    /// The trust an admin pinned for it, if any (see `instance_trust.rs`).
    pub trust_pin: Option<f64>,
    /// Its effective trust as the last instance-trust batch computed it (`None` before a batch included it).
    pub trust: Option<PeerTrust>,
}

/// Whether a peer's current failures say it blocked this instance: its last push round or its last pull is failing
/// with `blocked_sender`.
fn blocked_by_peer(lag: Option<&ReplicationLag>) -> bool {
    let Some(lag) = lag else {
        return false;
    };
    let row = &lag.replication;
    let pushing_refused = row.consecutive_failures > 0
        && row
            .last_error_class
            .as_deref()
            .is_some_and(|class| class == BLOCKED_SENDER);
    let pulling_refused = row
        .last_pull_error
        .as_deref()
        .is_some_and(|error| failure_class(error) == BLOCKED_SENDER);
    pushing_refused || pulling_refused
}

/// The state shown for `peer` given its replication.
pub fn shown_state(peer: &PeerRecord, lag: Option<&ReplicationLag>) -> ShownPeerState {
    if matches!(peer.state, PeerState::Active | PeerState::Unreachable) && blocked_by_peer(lag) {
        ShownPeerState::BlockedByPeer
    } else {
        ShownPeerState::Stored(peer.state)
    }
}

/// The newest failure among the peer row's (peering deliveries, and every channel since this version) and its
/// replication row's (push rounds).
fn newest_failure(peer: &PeerRecord, lag: Option<&ReplicationLag>) -> Option<PeerFailure> {
    let from_peer = match (&peer.last_error, peer.last_error_at) {
        (Some(text), Some(at)) => Some(PeerFailure::from_stored(text, at)),
        _ => None,
    };
    let from_push = lag.and_then(|lag| {
        let row = &lag.replication;
        match (&row.last_error, row.last_error_at) {
            (Some(text), Some(at)) => {
                let mut failure = PeerFailure::from_stored(text, at);
                if let Some(class) = &row.last_error_class {
                    failure.class.clone_from(class);
                }
                Some(failure)
            }
            _ => None,
        }
    });
    match (from_peer, from_push) {
        (Some(peer), Some(push)) => Some(if push.at > peer.at { push } else { peer }),
        (peer, push) => peer.or(push),
    }
}

/// Builds the status of `peer` from what the database holds.
pub(super) async fn status_of(reader: &mut Reader, peer: PeerRecord) -> Result<PeerView, ServiceError> {
    let keys = store::peers::list_peer_keys(&mut reader.conn(), &peer.realm).await?;
    let pending_peering_messages = store::deliveries::count_pending_deliveries(&mut reader.conn(), &peer.realm).await?;
    let replication = match store::replication::find(&mut reader.conn(), &peer.realm).await? {
        Some(replication) => {
            let (undelivered, oldest_undelivered_at) =
                store::outbox::backlog(&mut reader.conn(), replication.push_cursor).await?;
            let dead_letters = store::deliveries::count_dead_letters(&mut reader.conn(), &peer.realm).await?;
            Some(ReplicationLag {
                replication,
                undelivered,
                oldest_undelivered_at,
                dead_letters,
            })
        }
        None => None,
    };
    // Events wait for a peer that is pushed to (active, unreachable) or held for it while this side blocks it.
    let undelivered_events = match (&replication, peer.state) {
        (Some(lag), PeerState::Active | PeerState::Unreachable | PeerState::Blocked) => lag.undelivered,
        _ => 0,
    };
    let trust_pin = store::instance_trust::find_pin(&mut reader.conn(), &peer.realm).await?;
    let trust = store::instance_trust::find_peer_trust(&mut reader.conn(), &peer.realm).await?;
    Ok(PeerView {
        trust_pin,
        trust,
        state: shown_state(&peer, replication.as_ref()),
        last_error: newest_failure(&peer, replication.as_ref()),
        pending_deliveries: pending_peering_messages.saturating_add(undelivered_events),
        pending_peering_messages,
        undelivered_events,
        replication,
        keys,
        peer,
    })
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, Utc};

    use super::*;

    #[test]
    fn a_stored_error_reads_as_its_class_and_detail() {
        let at = DateTime::<Utc>::UNIX_EPOCH;
        let failure = PeerFailure::from_stored("blocked_sender: HTTP 403 from the inbox", at);
        assert_eq!(failure.class, "blocked_sender");
        assert_eq!(failure.detail, "HTTP 403 from the inbox");
        let failure = PeerFailure::from_stored("the peer said no", at);
        assert_eq!(failure.class, "error");
        assert_eq!(failure.detail, "the peer said no");
        assert_eq!(failure_class("http_503: {\"busy\": true}"), "http_503");
        assert_eq!(failure_class("Network: down"), "error");
    }
}
