//! The instance's identity: its Ed25519 keys, made at the first start (or the first start after an upgrade),
//! stored sealed, published with their validity, and rotated with an endorsement by the key before.

use chrono::{DateTime, TimeDelta, Utc};
use federation::{InstanceKeyPair, KeyDescription, KeyEndorsement, PublicKey};

use super::Federation;
use crate::service::ServiceError;
use crate::store::{self, instance_keys::InstanceKeyRow};

/// How long a rotated-out key still verifies after its successor starts signing, so requests signed just before
/// the rotation (and retried) are still accepted.
pub const ROTATION_OVERLAP: TimeDelta = TimeDelta::days(7);

/// A key as the instance publishes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublishedKey {
    /// ID, public key and validity.
    pub description: KeyDescription,
    /// The previous key's endorsement, for every key after the first.
    pub endorsement: Option<KeyEndorsement>,
}

/// The key the instance signs with now, opened.
#[derive(Debug, Clone)]
pub struct SigningKey {
    /// Its ID.
    pub key_id: String,
    /// The key pair.
    pub key_pair: InstanceKeyPair,
}

fn unix_seconds(instant: DateTime<Utc>) -> i64 {
    instant.timestamp()
}

fn description_of(row: &InstanceKeyRow) -> Result<KeyDescription, ServiceError> {
    let public_key = PublicKey::from_multikey(&row.public_key_multibase)
        .map_err(|error| ServiceError::internal(format!("stored instance key {}: {error}", row.key_id)))?;
    Ok(KeyDescription {
        key_id: row.key_id.clone(),
        public_key,
        valid_from: unix_seconds(row.valid_from),
        valid_until: row.valid_until.map(unix_seconds),
    })
}

fn published_of(row: &InstanceKeyRow) -> Result<PublishedKey, ServiceError> {
    let endorsement = match (&row.endorsed_by_key_id, &row.endorsement) {
        (Some(endorsing_key_id), Some(signature)) => Some(KeyEndorsement {
            endorsing_key_id: endorsing_key_id.clone(),
            signature: signature.clone(),
        }),
        _ => None,
    };
    Ok(PublishedKey {
        description: description_of(row)?,
        endorsement,
    })
}

impl Federation {
    /// The instance's public URL without a trailing slash; every URL it emits starts with it.
    pub fn public_base_url(&self) -> &str {
        &self.service().settings().public_base_url
    }

    /// The instance actor's URL.
    pub fn instance_actor_url(&self) -> String {
        format!("{}/actor", self.public_base_url())
    }

    fn key_box(&self) -> Result<&super::key_box::KeyBox, ServiceError> {
        self.service()
            .settings()
            .key_box
            .as_ref()
            .ok_or_else(|| ServiceError::internal("no key-encryption key is configured"))
    }

    fn new_key_id(&self) -> String {
        format!("{}#key-{}", self.instance_actor_url(), self.service().new_internal_id())
    }

    /// Makes the instance's first key when it has none (a new realm, or the first start after the upgrade that
    /// brought federation), and checks that the stored keys open with the configured key-encryption key, so a wrong
    /// key stops the start instead of the first signature. Returns whether a key was made.
    pub async fn ensure_instance_key(&self) -> Result<bool, ServiceError> {
        let key_box = self.key_box()?;
        let mut transaction = self.store().begin().await?;
        let rows = store::instance_keys::list_instance_keys(&mut transaction.conn()).await?;
        if let Some(row) = rows.last() {
            key_box
                .open(&row.encrypted_private_key, &row.key_id)
                .map_err(|error| ServiceError::internal(error.to_string()))?;
            return Ok(false);
        }
        let now = self.now();
        let key_pair = generate_key_pair();
        let key_id = self.new_key_id();
        let row = InstanceKeyRow {
            public_key_multibase: key_pair.public_key().to_multikey(),
            encrypted_private_key: key_box.seal(&key_pair.secret_bytes(), &key_id),
            key_id,
            valid_from: now,
            valid_until: None,
            endorsed_by_key_id: None,
            endorsement: None,
            created_at: now,
        };
        store::instance_keys::insert_instance_key(&mut transaction.conn(), &row).await?;
        transaction.commit().await?;
        tracing::info!(key_id = %row.key_id, fingerprint = %key_pair.public_key().fingerprint(), "instance key created");
        Ok(true)
    }

    /// Every key the instance publishes: those valid now or later and those that stopped less than the overlap
    /// ago (peers may still verify retried requests with them), oldest first.
    pub async fn published_instance_keys(&self) -> Result<Vec<PublishedKey>, ServiceError> {
        let now = self.now();
        let mut reader = self.store().reader().await?;
        let rows = store::instance_keys::list_instance_keys(&mut reader.conn()).await?;
        rows.iter()
            .filter(|row| row.valid_until.is_none_or(|until| until + ROTATION_OVERLAP > now))
            .map(published_of)
            .collect()
    }

    /// The key to sign with now: the newest key whose window holds the current time.
    pub async fn signing_key(&self) -> Result<SigningKey, ServiceError> {
        let now = self.now();
        let mut reader = self.store().reader().await?;
        let rows = store::instance_keys::list_instance_keys(&mut reader.conn()).await?;
        let row = rows
            .iter()
            .rev()
            .find(|row| row.valid_from <= now && row.valid_until.is_none_or(|until| now < until))
            .ok_or_else(|| ServiceError::internal("the instance has no key valid now"))?;
        self.open_key(row)
    }

    /// The key with this ID, opened (a rotation's announcement is signed by the key it replaces).
    pub(crate) async fn instance_key_by_id(&self, key_id: &str) -> Result<SigningKey, ServiceError> {
        let mut reader = self.store().reader().await?;
        let rows = store::instance_keys::list_instance_keys(&mut reader.conn()).await?;
        let row = rows
            .iter()
            .find(|row| row.key_id == key_id)
            .ok_or_else(|| ServiceError::internal(format!("no instance key {key_id}")))?;
        self.open_key(row)
    }

    fn open_key(&self, row: &InstanceKeyRow) -> Result<SigningKey, ServiceError> {
        let secret = self
            .key_box()?
            .open(&row.encrypted_private_key, &row.key_id)
            .map_err(|error| ServiceError::internal(error.to_string()))?;
        let secret: [u8; 32] = secret
            .try_into()
            .map_err(|_| ServiceError::internal(format!("instance key {} is not 32 bytes", row.key_id)))?;
        Ok(SigningKey {
            key_id: row.key_id.clone(),
            key_pair: InstanceKeyPair::from_secret_bytes(&secret),
        })
    }

    /// Rotates the signing key: a new key valid from now, endorsed by the current one, which keeps verifying for
    /// [`ROTATION_OVERLAP`]; every active, unreachable or pending peer is sent an `Update` of the instance actor signed by the old key, so
    /// it can pin the new one. Returns the new key.
    pub async fn rotate_instance_key(&self) -> Result<PublishedKey, ServiceError> {
        let old = self.signing_key().await?;
        let key_box = self.key_box()?;
        let now = self.now();
        let key_pair = generate_key_pair();
        let key_id = self.new_key_id();
        let description = KeyDescription {
            key_id: key_id.clone(),
            public_key: key_pair.public_key(),
            valid_from: unix_seconds(now),
            valid_until: None,
        };
        let endorsement = old.key_pair.endorse(&old.key_id, &description);
        let row = InstanceKeyRow {
            public_key_multibase: key_pair.public_key().to_multikey(),
            encrypted_private_key: key_box.seal(&key_pair.secret_bytes(), &key_id),
            key_id: key_id.clone(),
            valid_from: now,
            valid_until: None,
            endorsed_by_key_id: Some(old.key_id.clone()),
            endorsement: Some(endorsement.signature.clone()),
            created_at: now,
        };
        let mut transaction = self.store().begin().await?;
        store::instance_keys::retire_instance_key(&mut transaction.conn(), &old.key_id, now + ROTATION_OVERLAP).await?;
        store::instance_keys::insert_instance_key(&mut transaction.conn(), &row).await?;
        let peers = store::peers::list_peers(&mut transaction.conn()).await?;
        // Every peer that has pinned (or may pin) this instance's key hears of the new one; a blocked or rejected
        // peer re-reads the actor if the peering resumes.
        for peer in peers.iter().filter(|peer| {
            use crate::domain::PeerState;
            matches!(
                peer.state,
                PeerState::Active | PeerState::Unreachable | PeerState::PendingOut | PeerState::PendingIn
            )
        }) {
            self.queue_peering_message(
                &mut transaction,
                peer,
                super::peering::PeeringMessage::UpdateActor {
                    sign_with_key_id: old.key_id.clone(),
                },
            )
            .await?;
        }
        transaction.commit().await?;
        tracing::info!(key_id = %key_id, replaces = %old.key_id, "instance key rotated");
        Ok(PublishedKey {
            description,
            endorsement: Some(endorsement),
        })
    }
}

fn generate_key_pair() -> InstanceKeyPair {
    let mut secret = [0_u8; 32];
    rand::Rng::fill_bytes(&mut rand::rng(), &mut secret);
    InstanceKeyPair::from_secret_bytes(&secret)
}
