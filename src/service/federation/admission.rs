//! Admission: the one rule that decides whether a peer's pinned key may speak now and for what (an inbox request,
//! a read of the outbox, an origin proof), from the peer's state, who pinned the key and the key's validity window;
//! and, for an admitted sender, what it may send and how its evidence will count. The adapters only turn a
//! [`Refusal`] into their status codes and reasons.

use chrono::{DateTime, TimeDelta, Utc};

use super::super::origins::shares_content;
use super::Federation;
use super::inbox::InboxSender;
use crate::domain::{PeerLevel, PeerState};
use crate::service::ServiceError;

/// How far a peer's clock may be off from this instance's, in seconds: a key whose announced window begins less
/// than this far ahead may already sign. The HTTP signature clock policy allows a request's `created` the same
/// (`apub::signing_time`), so a peer that rotates keys right at a window's start is not refused for a skew the
/// signatures themselves are allowed.
pub const CLOCK_SKEW_SECONDS: i64 = 300;

/// What a sender's key is used for: each use asks something different of the peer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SenderPurpose<'a> {
    /// A request to the inbox, decided from its headers before its body is read: a blocked peer or a key outside
    /// its window is refused; any other peer is admitted with what it may send ([`MaySend`]), which the inbox
    /// applies once it has read the activity.
    InboxRequest,
    /// A signed read of this instance's outbox: a peer this instance shares with (active or unreachable), or one it
    /// asked to peer with (`pending_out`: its admin may approve, and pull, before its `Accept` arrives here), with a
    /// key an admin or a pinned key vouched for.
    OutboxRead,
    /// An origin proof on a replicated object of the realm `origin`: only that realm's own key vouches for it, and
    /// never a first contact's key. For content, only while the realm is an active (or unreachable) peer; for
    /// evidence, also while it is pending or rejected, as the trust model asks (§2.15, "Which origins count": such a
    /// record is stored and shown, and counts 0 until the origin is an active peer).
    OriginProof {
        /// The realm the object says it comes from, lower case.
        origin: &'a str,
        /// What the proof vouches for.
        proven: ProvenObject,
    },
}

/// What an origin proof vouches for: content and evidence follow different admission rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProvenObject {
    /// Content, a space or a tombstone: taken only from an origin this instance shares content with.
    Content,
    /// An evidence record or its retraction: taken from any peer that is not blocked, and weighed by its state.
    Evidence,
}

/// What an admitted sender may send to the inbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MaySend {
    /// Every activity the inbox takes: peering messages and replicated objects.
    Everything,
    /// Only the peering handshake (`Follow`, `Accept`, `Reject`, `Undo`, an `Update` of its instance actor): the
    /// peering is not active, or the key awaits an admin's approval. Anything else is refused with `otherwise`.
    PeeringOnly {
        /// The refusal of any other activity.
        otherwise: Refusal,
    },
}

/// How the evidence an admitted sender's realm originates will count here (trust model §2.5, §2.15).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EvidenceWeight {
    /// With the instance trust of its level (the level's base trust, which agreement and pins move).
    Level(PeerLevel),
    /// Stored and shown, weighing nothing.
    Inert(InertBecause),
}

/// Why an admitted sender's evidence weighs nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InertBecause {
    /// An admin put the peer in quarantine: received and stored, counts nothing.
    Quarantine,
    /// The peering is not active (or unreachable): pending and rejected peers count nothing.
    NotActive(PeerState),
}

/// Why a key may not speak now. Transport-neutral: the inbox, the outbox and the origin-proof checks each say it in
/// their own status and reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// No peer has a key pinned with this ID.
    UnknownKey,
    /// The key is pinned for another realm than the one the object comes from.
    KeyOfAnotherRealm {
        /// The realm the key is pinned for.
        key_realm: String,
    },
    /// An admin blocked the peer.
    Blocked,
    /// The peering is in this state, which does not allow what was asked.
    NotActive(PeerState),
    /// The key was read on first contact and awaits an admin's approval.
    FirstContactKey,
    /// The key's announced validity has ended.
    KeyExpired,
    /// The key's announced validity has not begun.
    KeyNotYetValid,
}

/// A sender whose key may speak now, for the purpose it was admitted for.
#[derive(Debug, Clone, PartialEq)]
pub struct AdmittedSender {
    /// The peer and the key (read with a lapsed block lifted).
    pub sender: InboxSender,
    /// What it may send to the inbox.
    pub may_send: MaySend,
}

impl AdmittedSender {
    /// The peer's realm.
    pub fn realm(&self) -> &str {
        &self.sender.peer.realm
    }

    /// How the evidence its realm originates counts: a blocked peer is never admitted, so what remains is its state
    /// and its level.
    pub fn evidence_weight(&self) -> EvidenceWeight {
        let peer = &self.sender.peer;
        if !shares_content(peer.state) {
            EvidenceWeight::Inert(InertBecause::NotActive(peer.state))
        } else if peer.level == PeerLevel::Quarantine {
            EvidenceWeight::Inert(InertBecause::Quarantine)
        } else {
            EvidenceWeight::Level(peer.level)
        }
    }
}

/// The refusal of a key outside its announced window at `now`, if it is: not before `valid_from` (less
/// [`CLOCK_SKEW_SECONDS`]), not from `valid_until` on.
pub fn key_window_refusal(
    valid_from: Option<DateTime<Utc>>,
    valid_until: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> Option<Refusal> {
    if valid_until.is_some_and(|until| until <= now) {
        return Some(Refusal::KeyExpired);
    }
    if valid_from.is_some_and(|from| from > now + TimeDelta::seconds(CLOCK_SKEW_SECONDS)) {
        return Some(Refusal::KeyNotYetValid);
    }
    None
}

/// The admission rule at `now`. The order of the checks is part of it (each use has always answered the first
/// that fails): for an origin proof, whose key it is; then a block; then what the purpose asks of the peering and
/// the key; then the key's window.
pub fn admit(sender: InboxSender, purpose: SenderPurpose<'_>, now: DateTime<Utc>) -> Result<AdmittedSender, Refusal> {
    let state = sender.peer.state;
    let provisional = sender.key.pinned_by.is_provisional();
    if let SenderPurpose::OriginProof { origin, .. } = purpose
        && sender.key.peer_realm != origin
    {
        return Err(Refusal::KeyOfAnotherRealm {
            key_realm: sender.key.peer_realm.clone(),
        });
    }
    if state == PeerState::Blocked {
        return Err(Refusal::Blocked);
    }
    let may_send = if !shares_content(state) {
        MaySend::PeeringOnly {
            otherwise: Refusal::NotActive(state),
        }
    } else if provisional {
        MaySend::PeeringOnly {
            otherwise: Refusal::FirstContactKey,
        }
    } else {
        MaySend::Everything
    };
    match purpose {
        // The inbox decides on the activity once it has read it.
        SenderPurpose::InboxRequest => {}
        SenderPurpose::OutboxRead => {
            if !(shares_content(state) || state == PeerState::PendingOut) {
                return Err(Refusal::NotActive(state));
            }
            if provisional {
                return Err(Refusal::FirstContactKey);
            }
        }
        SenderPurpose::OriginProof {
            proven: ProvenObject::Content,
            ..
        } => {
            if let MaySend::PeeringOnly { otherwise } = may_send {
                return Err(otherwise);
            }
        }
        // A pending or rejected origin's records are held inert (§2.15), but only under a key an admin or a pinned
        // key vouched for: a first contact's key may be an impostor's, whose records would count once the realm
        // became a peer under its real key.
        SenderPurpose::OriginProof {
            proven: ProvenObject::Evidence,
            ..
        } => {
            if provisional {
                return Err(Refusal::FirstContactKey);
            }
        }
    }
    if let Some(refusal) = key_window_refusal(sender.key.valid_from, sender.key.valid_until, now) {
        return Err(refusal);
    }
    Ok(AdmittedSender { sender, may_send })
}

impl Federation {
    /// Whether `sender` (a pinned key and its peer, as [`Federation::inbox_sender`] read them) may speak now for
    /// `purpose` (see [`admit`]).
    pub fn admit_sender(&self, sender: InboxSender, purpose: SenderPurpose<'_>) -> Result<AdmittedSender, Refusal> {
        admit(sender, purpose, self.now())
    }

    /// Whether the key `key_id` may speak now for `purpose`: [`Refusal::UnknownKey`] when no peer has it pinned.
    pub async fn admit_key(
        &self,
        key_id: &str,
        purpose: SenderPurpose<'_>,
    ) -> Result<Result<AdmittedSender, Refusal>, ServiceError> {
        Ok(match self.inbox_sender(key_id).await? {
            Some(sender) => self.admit_sender(sender, purpose),
            None => Err(Refusal::UnknownKey),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::KeyPin;
    use crate::domain::peer::{PeerRecord, PinnedPeerKey};

    fn now() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-11-01T09:00:00Z")
            .expect("instant")
            .to_utc()
    }

    fn sender(state: PeerState, pinned_by: KeyPin) -> InboxSender {
        let key_pair = federation::InstanceKeyPair::from_secret_bytes(&[7; 32]);
        InboxSender {
            peer: PeerRecord {
                realm: "beta.test".to_owned(),
                base_url: "https://beta.test".to_owned(),
                actor_url: "https://beta.test/actor".to_owned(),
                inbox_url: "https://beta.test/inbox".to_owned(),
                outbox_url: None,
                state,
                level: PeerLevel::Standard,
                our_follow_id: None,
                their_follow_id: None,
                blocked_reason: None,
                blocked_until: None,
                state_before_block: None,
                last_contact_at: None,
                last_error: None,
                last_error_at: None,
                manifest_refreshed_at: None,
                created_at: now(),
                updated_at: now(),
            },
            key: PinnedPeerKey {
                key_id: "https://beta.test/actor#key-1".to_owned(),
                peer_realm: "beta.test".to_owned(),
                public_key_multibase: key_pair.public_key().to_multikey(),
                fingerprint: key_pair.public_key().fingerprint(),
                valid_from: None,
                valid_until: None,
                pinned_by,
                pinned_at: now(),
            },
            public_key: key_pair.public_key(),
        }
    }

    const ORIGIN_PROOF: SenderPurpose<'static> = SenderPurpose::OriginProof {
        origin: "beta.test",
        proven: ProvenObject::Content,
    };
    const EVIDENCE_PROOF: SenderPurpose<'static> = SenderPurpose::OriginProof {
        origin: "beta.test",
        proven: ProvenObject::Evidence,
    };

    #[test]
    fn an_active_peer_with_a_vouched_for_key_may_do_everything() {
        for state in [PeerState::Active, PeerState::Unreachable] {
            for purpose in [
                SenderPurpose::InboxRequest,
                SenderPurpose::OutboxRead,
                ORIGIN_PROOF,
                EVIDENCE_PROOF,
            ] {
                let admitted = admit(sender(state, KeyPin::Admin), purpose, now()).expect("admitted");
                assert_eq!(admitted.may_send, MaySend::Everything);
                assert_eq!(admitted.realm(), "beta.test");
                assert_eq!(admitted.evidence_weight(), EvidenceWeight::Level(PeerLevel::Standard));
            }
        }
        let endorsed = KeyPin::EndorsedBy("https://beta.test/actor#key-0".to_owned());
        assert!(admit(sender(PeerState::Active, endorsed), ORIGIN_PROOF, now()).is_ok());
    }

    #[test]
    fn a_blocked_peer_is_refused_whatever_it_asks() {
        for purpose in [
            SenderPurpose::InboxRequest,
            SenderPurpose::OutboxRead,
            ORIGIN_PROOF,
            EVIDENCE_PROOF,
        ] {
            assert_eq!(
                admit(sender(PeerState::Blocked, KeyPin::Admin), purpose, now()),
                Err(Refusal::Blocked)
            );
        }
    }

    #[test]
    fn a_peer_that_is_not_active_or_a_first_contact_key_may_send_only_peering_messages() {
        for state in [PeerState::PendingIn, PeerState::PendingOut, PeerState::Rejected] {
            let admitted = admit(sender(state, KeyPin::Admin), SenderPurpose::InboxRequest, now()).expect("admitted");
            assert_eq!(
                admitted.may_send,
                MaySend::PeeringOnly {
                    otherwise: Refusal::NotActive(state)
                }
            );
            assert_eq!(
                admitted.evidence_weight(),
                EvidenceWeight::Inert(InertBecause::NotActive(state))
            );
            assert_eq!(
                admit(sender(state, KeyPin::Admin), ORIGIN_PROOF, now()),
                Err(Refusal::NotActive(state))
            );
            // Its evidence, relayed by a peer with its proof, is held and weighs nothing (§2.15).
            let relayed = admit(sender(state, KeyPin::Admin), EVIDENCE_PROOF, now()).expect("admitted");
            assert_eq!(
                relayed.evidence_weight(),
                EvidenceWeight::Inert(InertBecause::NotActive(state))
            );
        }
        // The state is named before the key: a pending peer on first contact hears that the peering is pending.
        let first_contact = admit(
            sender(PeerState::PendingIn, KeyPin::FirstContact),
            SenderPurpose::InboxRequest,
            now(),
        )
        .expect("admitted");
        assert_eq!(
            first_contact.may_send,
            MaySend::PeeringOnly {
                otherwise: Refusal::NotActive(PeerState::PendingIn)
            }
        );
        let approved_state = admit(
            sender(PeerState::Active, KeyPin::FirstContact),
            SenderPurpose::InboxRequest,
            now(),
        )
        .expect("admitted");
        assert_eq!(
            approved_state.may_send,
            MaySend::PeeringOnly {
                otherwise: Refusal::FirstContactKey
            }
        );
        for purpose in [ORIGIN_PROOF, EVIDENCE_PROOF] {
            assert_eq!(
                admit(sender(PeerState::Active, KeyPin::FirstContact), purpose, now()),
                Err(Refusal::FirstContactKey)
            );
        }
        // Nor does a pending peer's first-contact key vouch for its evidence.
        assert_eq!(
            admit(
                sender(PeerState::PendingIn, KeyPin::FirstContact),
                EVIDENCE_PROOF,
                now()
            ),
            Err(Refusal::FirstContactKey)
        );
    }

    #[test]
    fn the_outbox_is_read_by_peers_this_instance_shares_with_or_asked() {
        assert!(
            admit(
                sender(PeerState::PendingOut, KeyPin::Admin),
                SenderPurpose::OutboxRead,
                now()
            )
            .is_ok()
        );
        for state in [PeerState::PendingIn, PeerState::Rejected] {
            assert_eq!(
                admit(sender(state, KeyPin::Admin), SenderPurpose::OutboxRead, now()),
                Err(Refusal::NotActive(state))
            );
        }
        assert_eq!(
            admit(
                sender(PeerState::Active, KeyPin::FirstContact),
                SenderPurpose::OutboxRead,
                now()
            ),
            Err(Refusal::FirstContactKey)
        );
    }

    #[test]
    fn an_origin_proof_is_vouched_for_only_by_the_origins_own_key() {
        assert_eq!(
            admit(
                sender(PeerState::Active, KeyPin::Admin),
                SenderPurpose::OriginProof {
                    origin: "gamma.test",
                    proven: ProvenObject::Evidence,
                },
                now()
            ),
            Err(Refusal::KeyOfAnotherRealm {
                key_realm: "beta.test".to_owned()
            })
        );
        // Whose key it is comes first, even for a blocked peer.
        assert!(matches!(
            admit(
                sender(PeerState::Blocked, KeyPin::Admin),
                SenderPurpose::OriginProof {
                    origin: "gamma.test",
                    proven: ProvenObject::Evidence,
                },
                now()
            ),
            Err(Refusal::KeyOfAnotherRealm { .. })
        ));
    }

    #[test]
    fn a_key_speaks_only_inside_its_window_with_the_clock_skew_allowed_at_its_start() {
        let skew = TimeDelta::seconds(CLOCK_SKEW_SECONDS);
        let with_window = |from: Option<DateTime<Utc>>, until: Option<DateTime<Utc>>| {
            let mut sender = sender(PeerState::Active, KeyPin::Admin);
            sender.key.valid_from = from;
            sender.key.valid_until = until;
            sender
        };
        for purpose in [
            SenderPurpose::InboxRequest,
            SenderPurpose::OutboxRead,
            ORIGIN_PROOF,
            EVIDENCE_PROOF,
        ] {
            assert_eq!(
                admit(with_window(None, Some(now())), purpose, now()),
                Err(Refusal::KeyExpired),
                "the window's end is excluded"
            );
            assert!(admit(with_window(None, Some(now() + TimeDelta::seconds(1))), purpose, now()).is_ok());
            assert!(admit(with_window(Some(now() + skew), None), purpose, now()).is_ok());
            assert_eq!(
                admit(
                    with_window(Some(now() + skew + TimeDelta::seconds(1)), None),
                    purpose,
                    now()
                ),
                Err(Refusal::KeyNotYetValid)
            );
        }
        // A blocked peer hears of its block, not of its key.
        let mut blocked = with_window(None, Some(now()));
        blocked.peer.state = PeerState::Blocked;
        assert_eq!(
            admit(blocked, SenderPurpose::InboxRequest, now()),
            Err(Refusal::Blocked)
        );
        // The outbox names the peering before the key, as it always has.
        let mut pending = with_window(None, Some(now()));
        pending.peer.state = PeerState::PendingIn;
        assert_eq!(
            admit(pending.clone(), SenderPurpose::OutboxRead, now()),
            Err(Refusal::NotActive(PeerState::PendingIn))
        );
        assert_eq!(
            admit(pending, SenderPurpose::InboxRequest, now()),
            Err(Refusal::KeyExpired),
            "the inbox decides on the key from the headers, before it knows what is sent"
        );
    }

    #[test]
    fn a_quarantined_peer_is_admitted_and_its_evidence_weighs_nothing() {
        let mut quarantined = sender(PeerState::Active, KeyPin::Admin);
        quarantined.peer.level = PeerLevel::Quarantine;
        let admitted = admit(quarantined, ORIGIN_PROOF, now()).expect("admitted");
        assert_eq!(
            admitted.evidence_weight(),
            EvidenceWeight::Inert(InertBecause::Quarantine)
        );
    }
}
