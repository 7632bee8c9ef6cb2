//! Peering: what an admin does with peers (add, approve, reject, block, unblock, set a level, remove), what peers'
//! peering activities do here, and the queue of peering messages to deliver.
//!
//! Messages are queued in the same transaction as the state change that calls for them, in a transport-neutral
//! form ([`PeeringMessage`]); the delivery worker renders them as ActivityStreams and signs each attempt afresh.

use chrono::{DateTime, Utc};
use federation::{KeyDescription, KeyEndorsement, PublicKey};
use serde::{Deserialize, Serialize};

use super::Federation;
use super::peer_state::{block_has_lapsed, normalize_realm};
use crate::domain::peer::{PeerRecord, PinnedPeerKey};
use crate::domain::peering_delivery::{DeliveryState, PeeringDelivery};
use crate::domain::{KeyPin, PeerLevel, PeerState, ShownPeerState};
use crate::service::{ErrorCode, ServiceError};
use crate::store::{self, Transaction};

/// A peering message to deliver to one peer, stored in the delivery queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "message", rename_all = "snake_case")]
pub enum PeeringMessage {
    /// Ask to peer; `follow_id` is the activity's ID.
    Follow {
        /// The `Follow`'s ID.
        follow_id: String,
    },
    /// Agree to the peer's `Follow`.
    Accept {
        /// The peer's `Follow`.
        follow_id: String,
    },
    /// Refuse the peer's `Follow`.
    Reject {
        /// The peer's `Follow`.
        follow_id: String,
    },
    /// Withdraw this instance's `Follow`.
    Undo {
        /// This instance's `Follow`.
        follow_id: String,
    },
    /// Announce the instance actor's keys, signed by the key being replaced.
    UpdateActor {
        /// The key that signs the request.
        sign_with_key_id: String,
    },
    /// A replicated activity a peer refused for good, queued again by an admin (`federation replay`): sent as it
    /// was, its origin proof unchanged, the request signed afresh.
    Replicated {
        /// The activity, as JSON text.
        activity: String,
    },
}

impl PeeringMessage {
    /// The ActivityStreams type it becomes.
    pub fn activity_type(&self) -> &'static str {
        match self {
            PeeringMessage::Follow { .. } => "Follow",
            PeeringMessage::Accept { .. } => "Accept",
            PeeringMessage::Reject { .. } => "Reject",
            PeeringMessage::Undo { .. } => "Undo",
            PeeringMessage::UpdateActor { .. } => "Update",
            PeeringMessage::Replicated { .. } => "Replicated",
        }
    }
}

/// What a peer's manifest says about it, read by the adapter that fetched it.
#[derive(Debug, Clone, PartialEq)]
pub struct PeerIntroduction {
    /// The peer's realm (host and port).
    pub realm: String,
    /// Its public URL.
    pub base_url: String,
    /// Its instance actor.
    pub actor_url: String,
    /// Its inbox.
    pub inbox_url: String,
    /// Its outbox.
    pub outbox_url: Option<String>,
    /// The keys it publishes.
    pub keys: Vec<KeyDescription>,
}

pub use super::peer_status::PeerView;

/// A key a peer announced in an `Update` of its actor, with the endorsement that lets a pinned key vouch for it.
#[derive(Debug, Clone, PartialEq)]
pub struct AnnouncedKey {
    /// ID, key and validity.
    pub description: KeyDescription,
    /// The endorsing key's signature.
    pub endorsement: Option<KeyEndorsement>,
}

/// A peering activity received from a peer, as the adapter read it.
#[derive(Debug, Clone, PartialEq)]
pub enum InboundPeering {
    /// The peer asks to peer.
    Follow {
        /// The `Follow`'s ID.
        follow_id: String,
    },
    /// The peer agreed to this instance's `Follow`.
    Accept {
        /// The `Follow` it answers.
        follow_id: String,
    },
    /// The peer refused this instance's `Follow` (or ended the peering).
    Reject {
        /// The `Follow` it answers.
        follow_id: String,
    },
    /// The peer withdrew its `Follow`.
    Undo {
        /// Its `Follow`.
        follow_id: String,
    },
    /// The peer announced its keys.
    UpdateKeys {
        /// Every key its actor lists.
        keys: Vec<AnnouncedKey>,
    },
}

/// The admin's decisions that need the peer's key fingerprint confirmed.
fn fingerprints(keys: &[KeyDescription]) -> Vec<String> {
    keys.iter().map(|key| key.public_key.fingerprint()).collect()
}

pub(super) fn not_found_peer(realm: &str) -> ServiceError {
    ServiceError::new(ErrorCode::NotFound, format!("no peer {realm}"))
        .with_details(serde_json::json!({ "peer": realm }))
}

impl Federation {
    fn new_activity_id(&self) -> String {
        format!(
            "{}/activities/{}",
            self.public_base_url(),
            self.service().new_internal_id()
        )
    }

    /// Queues `message` for `peer` inside `transaction`.
    pub(crate) async fn queue_peering_message(
        &self,
        transaction: &mut Transaction,
        peer: &PeerRecord,
        message: PeeringMessage,
    ) -> Result<(), ServiceError> {
        let now = self.now();
        let activity_id = match &message {
            PeeringMessage::Follow { follow_id } => follow_id.clone(),
            _ => self.new_activity_id(),
        };
        let body = serde_json::to_string(&message).map_err(|error| ServiceError::internal(error.to_string()))?;
        let row = PeeringDelivery {
            id: self.service().new_internal_id(),
            peer_realm: peer.realm.clone(),
            inbox_url: peer.inbox_url.clone(),
            activity_id,
            activity_type: message.activity_type().to_owned(),
            body,
            state: DeliveryState::Pending,
            attempts: 0,
            next_attempt_at: now,
            last_error: None,
            created_at: now,
            finished_at: None,
        };
        store::deliveries::insert_delivery(&mut transaction.conn(), &row).await?;
        Ok(())
    }

    /// The rows that pin `keys` for `realm`, `pinned_by` an admin, a first contact or an endorsing key.
    pub(super) fn pin_keys(&self, realm: &str, keys: &[KeyDescription], pinned_by: &KeyPin) -> Vec<PinnedPeerKey> {
        let now = self.now();
        keys.iter()
            .map(|key| PinnedPeerKey {
                key_id: key.key_id.clone(),
                peer_realm: realm.to_owned(),
                public_key_multibase: key.public_key.to_multikey(),
                fingerprint: key.public_key.fingerprint(),
                valid_from: DateTime::from_timestamp(key.valid_from, 0),
                valid_until: key.valid_until.and_then(|until| DateTime::from_timestamp(until, 0)),
                pinned_by: pinned_by.clone(),
                pinned_at: now,
            })
            .collect()
    }

    /// Adds a peer from its manifest at `level`, pinning its keys: the admin saw their fingerprints (the adapter
    /// showed them and had them confirmed). A new peer is sent a `Follow` and is `pending_out`; a peer that had
    /// asked first (`pending_in`) is accepted at once and becomes `active`; an active one keeps its state and takes
    /// the new level. A blocked peer must be unblocked first.
    pub async fn add_peer(&self, introduction: &PeerIntroduction, level: PeerLevel) -> Result<PeerView, ServiceError> {
        if introduction.keys.is_empty() {
            return Err(ServiceError::validation("manifest", "the peer's manifest lists no key"));
        }
        let realm = normalize_realm(&introduction.realm);
        if self.realm().is(&realm) {
            return Err(ServiceError::validation("url", "this is the instance itself"));
        }
        let now = self.now();
        let mut transaction = self.store().begin().await?;
        let existing = store::peers::find_peer(&mut transaction.conn(), &realm).await?;
        let mut peer = match existing {
            Some(peer) if peer.state == PeerState::Blocked => {
                return Err(ServiceError::validation(
                    "peer",
                    format!("{realm} is blocked; unblock it first (interai admin peer unblock {realm})"),
                ));
            }
            Some(peer) => peer,
            None => PeerRecord {
                realm: realm.clone(),
                base_url: introduction.base_url.clone(),
                actor_url: introduction.actor_url.clone(),
                inbox_url: introduction.inbox_url.clone(),
                outbox_url: introduction.outbox_url.clone(),
                state: PeerState::PendingOut,
                level,
                our_follow_id: None,
                their_follow_id: None,
                blocked_reason: None,
                blocked_until: None,
                state_before_block: None,
                last_contact_at: None,
                last_error: None,
                last_error_at: None,
                manifest_refreshed_at: Some(now),
                created_at: now,
                updated_at: now,
            },
        };
        peer.base_url = introduction.base_url.clone();
        peer.actor_url = introduction.actor_url.clone();
        peer.inbox_url = introduction.inbox_url.clone();
        peer.outbox_url = introduction.outbox_url.clone();
        peer.level = level;
        peer.updated_at = now;
        let message = match peer.state {
            PeerState::Active => None,
            PeerState::PendingIn => {
                peer.state = PeerState::Active;
                peer.their_follow_id
                    .clone()
                    .map(|follow_id| PeeringMessage::Accept { follow_id })
            }
            _ => {
                let follow_id = self.new_activity_id();
                peer.state = PeerState::PendingOut;
                peer.our_follow_id = Some(follow_id.clone());
                Some(PeeringMessage::Follow { follow_id })
            }
        };
        super::peer_state::save_peer_state(&mut transaction.conn(), &peer, now).await?;
        for key in self.pin_keys(&realm, &introduction.keys, &KeyPin::Admin) {
            store::peers::save_peer_key(&mut transaction.conn(), &key).await?;
        }
        if let Some(message) = message {
            self.queue_peering_message(&mut transaction, &peer, message).await?;
        }
        transaction.commit().await?;
        tracing::info!(peer = %realm, state = %peer.state, level = %level, fingerprints = ?fingerprints(&introduction.keys), "peer added");
        self.recompute_instance_trust().await?;
        self.peer_view(&realm).await
    }

    /// Adds a peer whose key the admin compared: `confirmed_fingerprint` (what the peer's admin read out) must be
    /// the fingerprint of a key its manifest lists, or nothing is pinned and the error lists the manifest's
    /// fingerprints. The admin API, the console and the CLI's `--fingerprint` all add a peer this way.
    pub async fn add_compared_peer(
        &self,
        introduction: &PeerIntroduction,
        level: PeerLevel,
        confirmed_fingerprint: &str,
    ) -> Result<PeerView, ServiceError> {
        let listed = fingerprints(&introduction.keys);
        if !listed.iter().any(|listed| listed == confirmed_fingerprint.trim()) {
            return Err(ServiceError::validation(
                "fingerprint",
                format!(
                    "{}'s key does not have the fingerprint {}; nothing was pinned. Compare with the fingerprint \
                     {}'s admin reads out (interai admin federation identity on their side)",
                    introduction.realm,
                    confirmed_fingerprint.trim(),
                    introduction.realm
                ),
            )
            .with_details(serde_json::json!({ "field": "fingerprint", "peer_fingerprints": listed })));
        }
        self.add_peer(introduction, level).await
    }

    /// Approves a peer that asked to peer (`pending_in`): its first-contact keys become pinned by the admin, it
    /// becomes `active` at `level` (or its current level) and is sent an `Accept`. `confirmed_fingerprint` must
    /// match one of its keys; it may be left out only when an admin already pinned them (a key is never pinned
    /// without being compared).
    pub async fn approve_peer(
        &self,
        realm: &str,
        level: Option<PeerLevel>,
        confirmed_fingerprint: Option<&str>,
    ) -> Result<PeerView, ServiceError> {
        let realm = normalize_realm(realm);
        let now = self.now();
        let mut transaction = self.store().begin().await?;
        let mut peer = store::peers::find_peer(&mut transaction.conn(), &realm)
            .await?
            .ok_or_else(|| not_found_peer(&realm))?;
        if peer.state != PeerState::PendingIn {
            return Err(ServiceError::validation(
                "peer",
                format!("{realm} is {}, not waiting for approval (pending_in)", peer.state),
            ));
        }
        let keys = store::peers::list_peer_keys(&mut transaction.conn(), &realm).await?;
        let provisional = keys.iter().any(|key| key.pinned_by.is_provisional());
        if provisional && confirmed_fingerprint.is_none() {
            return Err(ServiceError::validation(
                "fingerprint",
                format!(
                    "{realm}'s key was read on first contact; confirm its fingerprint ({}) with {realm}'s admin and \
                     give it to approve",
                    keys.iter()
                        .map(|key| key.fingerprint.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        if let Some(fingerprint) = confirmed_fingerprint
            && !keys.iter().any(|key| key.fingerprint == fingerprint.trim())
        {
            return Err(ServiceError::validation(
                "fingerprint",
                format!(
                    "{fingerprint} is not the fingerprint of {realm}'s key ({}); do not approve until you have the right one",
                    keys.iter()
                        .map(|key| key.fingerprint.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        for mut key in keys {
            if key.pinned_by.is_provisional() {
                key.pinned_by = KeyPin::Admin;
                key.pinned_at = now;
                store::peers::save_peer_key(&mut transaction.conn(), &key).await?;
            }
        }
        peer.state = PeerState::Active;
        if let Some(level) = level {
            peer.level = level;
        }
        peer.updated_at = now;
        super::peer_state::save_peer_state(&mut transaction.conn(), &peer, now).await?;
        if let Some(follow_id) = peer.their_follow_id.clone() {
            self.queue_peering_message(&mut transaction, &peer, PeeringMessage::Accept { follow_id })
                .await?;
        }
        transaction.commit().await?;
        tracing::info!(peer = %realm, level = %peer.level, "peer approved");
        self.recompute_instance_trust().await?;
        self.peer_view(&realm).await
    }

    /// Refuses a peer's request to peer, or ends an active peering: the peer becomes `rejected` and is sent a
    /// `Reject` of its `Follow` and an `Undo` of this instance's, so that it stops too.
    pub async fn reject_peer(&self, realm: &str) -> Result<PeerView, ServiceError> {
        let realm = normalize_realm(realm);
        let mut transaction = self.store().begin().await?;
        let mut peer = store::peers::find_peer(&mut transaction.conn(), &realm)
            .await?
            .ok_or_else(|| not_found_peer(&realm))?;
        if !matches!(peer.state, PeerState::PendingIn | PeerState::Active) {
            return Err(ServiceError::validation(
                "peer",
                format!(
                    "{realm} is {}; only a pending or active peering can be rejected",
                    peer.state
                ),
            ));
        }
        let was_active = peer.state == PeerState::Active;
        peer.state = PeerState::Rejected;
        peer.updated_at = self.now();
        super::peer_state::save_peer_state(&mut transaction.conn(), &peer, self.now()).await?;
        if let Some(follow_id) = peer.their_follow_id.clone() {
            self.queue_peering_message(&mut transaction, &peer, PeeringMessage::Reject { follow_id })
                .await?;
        }
        if was_active && let Some(follow_id) = peer.our_follow_id.clone() {
            self.queue_peering_message(&mut transaction, &peer, PeeringMessage::Undo { follow_id })
                .await?;
        }
        transaction.commit().await?;
        tracing::info!(peer = %realm, "peer rejected");
        self.recompute_instance_trust().await?;
        self.peer_view(&realm).await
    }

    /// Blocks a peer: from the next request on, its requests get 403 (in every process on the database), until
    /// `until` if given. Nothing it sent is deleted.
    pub async fn block_peer(
        &self,
        realm: &str,
        reason: &str,
        until: Option<DateTime<Utc>>,
    ) -> Result<PeerView, ServiceError> {
        let realm = normalize_realm(realm);
        let reason = reason.trim();
        if reason.is_empty() || reason.chars().count() > 500 {
            return Err(ServiceError::validation(
                "reason",
                "a block needs a reason of 1 to 500 characters",
            ));
        }
        let now = self.now();
        if until.is_some_and(|until| until <= now) {
            return Err(ServiceError::validation(
                "until",
                "the block's end must be in the future",
            ));
        }
        let mut transaction = self.store().begin().await?;
        let mut peer = store::peers::find_peer(&mut transaction.conn(), &realm)
            .await?
            .ok_or_else(|| not_found_peer(&realm))?;
        if peer.state != PeerState::Blocked {
            peer.state_before_block = Some(peer.state);
        }
        peer.state = PeerState::Blocked;
        peer.blocked_reason = Some(reason.to_owned());
        peer.blocked_until = until;
        peer.updated_at = now;
        super::peer_state::save_peer_state(&mut transaction.conn(), &peer, now).await?;
        transaction.commit().await?;
        tracing::warn!(peer = %realm, reason, until = ?until, "peer blocked");
        self.recompute_instance_trust().await?;
        self.peer_view(&realm).await
    }

    /// Lifts a block: the peer returns to the state it had.
    pub async fn unblock_peer(&self, realm: &str) -> Result<PeerView, ServiceError> {
        let realm = normalize_realm(realm);
        let mut transaction = self.store().begin().await?;
        let mut peer = store::peers::find_peer(&mut transaction.conn(), &realm)
            .await?
            .ok_or_else(|| not_found_peer(&realm))?;
        if peer.state != PeerState::Blocked {
            return Err(ServiceError::validation("peer", format!("{realm} is not blocked")));
        }
        lift_block(&mut peer, self.now());
        super::peer_state::save_peer_state(&mut transaction.conn(), &peer, self.now()).await?;
        transaction.commit().await?;
        tracing::info!(peer = %realm, state = %peer.state, "peer unblocked");
        self.recompute_instance_trust().await?;
        self.peer_view(&realm).await
    }

    /// Sets a peer's level.
    pub async fn set_peer_level(&self, realm: &str, level: PeerLevel) -> Result<PeerView, ServiceError> {
        let realm = normalize_realm(realm);
        let mut transaction = self.store().begin().await?;
        let mut peer = store::peers::find_peer(&mut transaction.conn(), &realm)
            .await?
            .ok_or_else(|| not_found_peer(&realm))?;
        peer.level = level;
        peer.updated_at = self.now();
        super::peer_state::save_peer_state(&mut transaction.conn(), &peer, self.now()).await?;
        transaction.commit().await?;
        tracing::info!(peer = %realm, level = %level, "peer level set");
        self.recompute_instance_trust().await?;
        self.peer_view(&realm).await
    }

    /// Removes a peer and its pinned keys, and tells the peer: a `Reject` of its `Follow` when it had asked (so a peer
    /// whose `Follow` this side approved stops pushing at once instead of retrying against `unknown_sender`), and an
    /// `Undo` of this instance's `Follow` when there was one.
    pub async fn remove_peer(&self, realm: &str) -> Result<(), ServiceError> {
        let realm = normalize_realm(realm);
        let mut transaction = self.store().begin().await?;
        let peer = store::peers::find_peer(&mut transaction.conn(), &realm)
            .await?
            .ok_or_else(|| not_found_peer(&realm))?;
        store::peers::delete_peer(&mut transaction.conn(), &realm).await?;
        store::replication::delete(&mut transaction.conn(), &realm).await?;
        if let Some(follow_id) = peer.their_follow_id.clone()
            && matches!(
                peer.state,
                PeerState::Active | PeerState::PendingIn | PeerState::Unreachable
            )
        {
            self.queue_peering_message(&mut transaction, &peer, PeeringMessage::Reject { follow_id })
                .await?;
        }
        if let Some(follow_id) = peer.our_follow_id.clone()
            && matches!(
                peer.state,
                PeerState::Active | PeerState::PendingOut | PeerState::Unreachable
            )
        {
            self.queue_peering_message(&mut transaction, &peer, PeeringMessage::Undo { follow_id })
                .await?;
        }
        transaction.commit().await?;
        tracing::info!(peer = %realm, "peer removed");
        self.recompute_instance_trust().await?;
        Ok(())
    }

    /// One peer with its keys and queue.
    pub async fn peer_view(&self, realm: &str) -> Result<PeerView, ServiceError> {
        let realm = normalize_realm(realm);
        let mut reader = self.store().reader().await?;
        let peer = store::peers::find_peer(&mut reader.conn(), &realm)
            .await?
            .ok_or_else(|| not_found_peer(&realm))?;
        self.view_of(&mut reader, peer).await
    }

    async fn view_of(&self, reader: &mut store::Reader, mut peer: PeerRecord) -> Result<PeerView, ServiceError> {
        if block_has_lapsed(&peer, self.now()) {
            lift_block(&mut peer, self.now());
        }
        super::peer_status::status_of(reader, peer).await
    }

    /// Every peer, by realm.
    pub async fn list_peers(&self) -> Result<Vec<PeerView>, ServiceError> {
        let mut reader = self.store().reader().await?;
        let peers = store::peers::list_peers(&mut reader.conn()).await?;
        let mut views = Vec::with_capacity(peers.len());
        for peer in peers {
            views.push(self.view_of(&mut reader, peer).await?);
        }
        Ok(views)
    }

    /// The realm of every peer, in order (one statement: for a choice of peers, without each peer's status).
    pub async fn peer_realms(&self) -> Result<Vec<String>, ServiceError> {
        let mut reader = self.store().reader().await?;
        let peers = store::peers::list_peers(&mut reader.conn()).await?;
        Ok(peers.into_iter().map(|peer| peer.realm).collect())
    }

    /// How many peers are in each state as shown (every state listed, lapsed blocks counted as lifted, a peer that
    /// blocked this instance as `blocked_by_peer`): the same states `peer list` and `/admin/peers` show.
    pub async fn peer_counts(&self) -> Result<Vec<(ShownPeerState, i64)>, ServiceError> {
        let views = self.list_peers().await?;
        Ok(ShownPeerState::ALL
            .into_iter()
            .map(|state| {
                let count = views.iter().filter(|view| view.state == state).count();
                (state, i64::try_from(count).unwrap_or(i64::MAX))
            })
            .collect())
    }

    /// Applies a peer's peering activity inside `transaction`; returns what it did, for the intake log.
    pub(crate) async fn apply_inbound_peering(
        &self,
        transaction: &mut Transaction,
        peer: &mut PeerRecord,
        signing_key_id: &str,
        message: &InboundPeering,
    ) -> Result<(&'static str, String), ServiceError> {
        let now = self.now();
        let outcome = match message {
            InboundPeering::Follow { follow_id } => {
                peer.their_follow_id = Some(follow_id.clone());
                match peer.state {
                    PeerState::PendingOut | PeerState::Active | PeerState::Unreachable => {
                        // This instance had already asked for (or has) the peering: accept at once.
                        peer.state = PeerState::Active;
                        self.queue_peering_message(
                            transaction,
                            peer,
                            PeeringMessage::Accept {
                                follow_id: follow_id.clone(),
                            },
                        )
                        .await?;
                        (
                            "applied",
                            "follow accepted at once: this instance had added the peer".to_owned(),
                        )
                    }
                    PeerState::PendingIn | PeerState::Rejected => {
                        peer.state = PeerState::PendingIn;
                        ("applied", "follow recorded; waiting for an admin's approval".to_owned())
                    }
                    PeerState::Blocked => ("ignored", "the peer is blocked".to_owned()),
                }
            }
            InboundPeering::Accept { follow_id } => {
                if peer.our_follow_id.as_deref() == Some(follow_id.as_str())
                    && matches!(
                        peer.state,
                        PeerState::PendingOut | PeerState::Active | PeerState::Unreachable
                    )
                {
                    peer.state = PeerState::Active;
                    ("applied", "our follow was accepted: the peering is active".to_owned())
                } else {
                    (
                        "ignored",
                        "an accept of a follow this instance did not send or no longer waits on".to_owned(),
                    )
                }
            }
            InboundPeering::Reject { follow_id } => {
                if peer.our_follow_id.as_deref() == Some(follow_id.as_str()) && peer.state != PeerState::Blocked {
                    peer.state = PeerState::Rejected;
                    ("applied", "our follow was rejected".to_owned())
                } else {
                    ("ignored", "a reject of a follow this instance did not send".to_owned())
                }
            }
            InboundPeering::Undo { follow_id } => {
                if peer.their_follow_id.as_deref() == Some(follow_id.as_str()) && peer.state != PeerState::Blocked {
                    peer.state = PeerState::Rejected;
                    peer.their_follow_id = None;
                    ("applied", "the peer withdrew its follow".to_owned())
                } else {
                    ("ignored", "an undo of a follow the peer did not send".to_owned())
                }
            }
            InboundPeering::UpdateKeys { keys } => {
                let pinned = store::peers::list_peer_keys(&mut transaction.conn(), &peer.realm).await?;
                let mut added = Vec::new();
                let mut refused = Vec::new();
                for announced in keys {
                    if let Some(known) = pinned.iter().find(|key| key.key_id == announced.description.key_id) {
                        // A pinned key keeps its pin; only its announced window is taken (its end, once rotated out).
                        if known.public_key_multibase == announced.description.public_key.to_multikey() {
                            let mut updated = known.clone();
                            updated.valid_until = announced
                                .description
                                .valid_until
                                .and_then(|until| DateTime::from_timestamp(until, 0));
                            if updated != *known {
                                store::peers::save_peer_key(&mut transaction.conn(), &updated).await?;
                            }
                        }
                        continue;
                    }
                    let endorser = announced.endorsement.as_ref().and_then(|endorsement| {
                        pinned
                            .iter()
                            .find(|key| key.key_id == endorsement.endorsing_key_id && !key.pinned_by.is_provisional())
                            .and_then(|key| PublicKey::from_multikey(&key.public_key_multibase).ok())
                            .filter(|public_key| public_key.endorses(&announced.description, endorsement))
                            .map(|_| endorsement.endorsing_key_id.clone())
                    });
                    match endorser {
                        Some(endorsing_key_id) => {
                            for row in self.pin_keys(
                                &peer.realm,
                                std::slice::from_ref(&announced.description),
                                &KeyPin::EndorsedBy(endorsing_key_id),
                            ) {
                                store::peers::save_peer_key(&mut transaction.conn(), &row).await?;
                            }
                            added.push(announced.description.key_id.clone());
                        }
                        None => refused.push(announced.description.key_id.clone()),
                    }
                }
                if refused.is_empty() {
                    (
                        "applied",
                        format!(
                            "keys pinned through endorsement by a pinned key: {added:?} (signed by {signing_key_id})"
                        ),
                    )
                } else {
                    (
                        "applied",
                        format!("keys pinned: {added:?}; refused (no endorsement by a pinned key): {refused:?}"),
                    )
                }
            }
        };
        peer.updated_at = now;
        super::peer_state::save_peer_state(&mut transaction.conn(), peer, now).await?;
        Ok(outcome)
    }
}

/// How often a peer's actor may be re-read because a request named a key this instance has not pinned.
pub const KEY_REFRESH_INTERVAL: chrono::TimeDelta = chrono::TimeDelta::hours(1);

impl Federation {
    /// Whether `realm`'s actor may be re-read now for its keys: never while the peer is blocked (a block whose time
    /// has run out no longer counts), and at most once per [`KEY_REFRESH_INTERVAL`]; when it may, the time is
    /// recorded at once, so concurrent requests do not all fetch.
    pub async fn claim_key_refresh(&self, realm: &str) -> Result<bool, ServiceError> {
        let realm = normalize_realm(realm);
        let now = self.now();
        let mut transaction = self.store().begin().await?;
        let Some(mut peer) = store::peers::find_peer(&mut transaction.conn(), &realm).await? else {
            return Ok(false);
        };
        if peer.state == PeerState::Blocked && !block_has_lapsed(&peer, now) {
            return Ok(false);
        }
        if peer
            .manifest_refreshed_at
            .is_some_and(|at| now - at < KEY_REFRESH_INTERVAL)
        {
            return Ok(false);
        }
        peer.manifest_refreshed_at = Some(now);
        super::peer_state::save_peer_state(&mut transaction.conn(), &peer, now).await?;
        transaction.commit().await?;
        Ok(true)
    }

    /// Pins the keys of a re-read actor that a pinned key endorsed (never any other), as an `Update` would.
    pub async fn refresh_peer_keys(&self, realm: &str, keys: Vec<AnnouncedKey>) -> Result<String, ServiceError> {
        let realm = normalize_realm(realm);
        let mut transaction = self.store().begin().await?;
        let mut peer = store::peers::find_peer(&mut transaction.conn(), &realm)
            .await?
            .ok_or_else(|| not_found_peer(&realm))?;
        let (_, detail) = self
            .apply_inbound_peering(
                &mut transaction,
                &mut peer,
                "re-read actor",
                &InboundPeering::UpdateKeys { keys },
            )
            .await?;
        transaction.commit().await?;
        tracing::info!(peer = %realm, detail = %detail, "peer keys re-read after a request signed with an unknown key");
        Ok(detail)
    }
}

fn lift_block(peer: &mut PeerRecord, now: DateTime<Utc>) {
    peer.state = peer.state_before_block.take().unwrap_or(PeerState::Rejected);
    peer.blocked_reason = None;
    peer.blocked_until = None;
    peer.updated_at = now;
}
