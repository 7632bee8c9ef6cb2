//! The instance actor (`GET /actor`, type `Service`) with its keys, and the federation part of the manifest.
//!
//! Keys appear twice, for two kinds of reader: as FEP-521a `Multikey` entries under `assertionMethod` (every key
//! the instance holds, each with its validity window and, after a rotation, the endorsement by the key before
//! it), and as the legacy `publicKey` block with the current key in PEM, for software that only reads that.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{parse_rfc3339, rfc3339};
use crate::keys::{KeyDescription, KeyEndorsement, KeyError, PublicKey};

/// The instance actor document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServiceActor {
    /// The JSON-LD context.
    #[serde(rename = "@context", default, skip_serializing_if = "Value::is_null")]
    pub context: Value,
    /// `https://{realm}/actor`.
    pub id: String,
    /// Always `Service`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The realm, e.g. `alpha.example`.
    pub preferred_username: String,
    /// A display name.
    pub name: String,
    /// The realm this actor speaks for.
    pub realm: String,
    /// `https://{realm}/inbox`.
    pub inbox: String,
    /// `https://{realm}/outbox`.
    pub outbox: String,
    /// The instance's manifest, `https://{realm}/.well-known/inter-ai`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest: Option<String>,
    /// Every key the instance holds, current and announced.
    pub assertion_method: Vec<Multikey>,
    /// The current key in the legacy form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub public_key: Option<PublicKeyPem>,
}

/// One key as FEP-521a publishes it, with interai's validity and endorsement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Multikey {
    /// The key ID, `https://{realm}/actor#key-…`.
    pub id: String,
    /// Always `Multikey`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The actor that holds the key.
    pub controller: String,
    /// `z6Mk…`.
    pub public_key_multibase: String,
    /// First instant the key may sign (RFC 3339).
    pub valid_from: String,
    /// First instant it may no longer sign (RFC 3339), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<String>,
    /// The previous key's signature over this key, present for every key after the first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endorsement: Option<Endorsement>,
}

/// An endorsement on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Endorsement {
    /// The endorsing key's ID.
    pub endorsing_key: String,
    /// Base64 of the Ed25519 signature over the endorsement message (see `keys`).
    pub signature_value: String,
}

/// The legacy `publicKey` block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PublicKeyPem {
    /// The key ID (the same as the Multikey's).
    pub id: String,
    /// The actor that holds the key.
    pub owner: String,
    /// The SPKI PEM of the key.
    pub public_key_pem: String,
}

impl Multikey {
    /// The wire form of a key held by `controller`.
    pub fn from_description(controller: &str, key: &KeyDescription, endorsement: Option<&KeyEndorsement>) -> Multikey {
        Multikey {
            id: key.key_id.clone(),
            kind: "Multikey".to_owned(),
            controller: controller.to_owned(),
            public_key_multibase: key.public_key.to_multikey(),
            valid_from: rfc3339(key.valid_from),
            expires: key.valid_until.map(rfc3339),
            endorsement: endorsement.map(|endorsement| Endorsement {
                endorsing_key: endorsement.endorsing_key_id.clone(),
                signature_value: endorsement.signature.clone(),
            }),
        }
    }

    /// The key this entry describes, checked: a Multikey type, a readable key and times.
    pub fn description(&self) -> Result<KeyDescription, KeyError> {
        if self.kind != "Multikey" {
            return Err(KeyError::Multikey(format!("type {} is not Multikey", self.kind)));
        }
        let valid_from = parse_rfc3339(&self.valid_from)
            .ok_or_else(|| KeyError::Multikey(format!("validFrom {} is not an RFC 3339 time", self.valid_from)))?;
        let valid_until = match &self.expires {
            None => None,
            Some(expires) => Some(
                parse_rfc3339(expires)
                    .ok_or_else(|| KeyError::Multikey(format!("expires {expires} is not an RFC 3339 time")))?,
            ),
        };
        Ok(KeyDescription {
            key_id: self.id.clone(),
            public_key: PublicKey::from_multikey(&self.public_key_multibase)?,
            valid_from,
            valid_until,
        })
    }

    /// The endorsement, in the form `keys` checks.
    pub fn key_endorsement(&self) -> Option<KeyEndorsement> {
        self.endorsement.as_ref().map(|endorsement| KeyEndorsement {
            endorsing_key_id: endorsement.endorsing_key.clone(),
            signature: endorsement.signature_value.clone(),
        })
    }
}

/// The `federation` member of `/.well-known/inter-ai`: where to reach the instance and which keys it holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestFederation {
    /// `available` once federation runs.
    pub status: String,
    /// The protocol's name and version, `interai-federation-v1`.
    pub protocol: String,
    /// The instance actor's URL.
    pub actor: String,
    /// The inbox URL.
    pub inbox: String,
    /// The outbox URL.
    pub outbox: String,
    /// The instance's keys.
    pub keys: Vec<ManifestKey>,
    /// How a peer relationship starts: `follow` (admins on both sides agree).
    pub peering: String,
}

/// A key as the manifest lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestKey {
    /// The key ID.
    pub key_id: String,
    /// `z6Mk…`.
    pub public_key_multibase: String,
    /// What an admin compares before pinning (`SHA256:…`).
    pub fingerprint: String,
    /// First instant the key may sign (RFC 3339).
    pub valid_from: String,
    /// First instant it may no longer sign, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_until: Option<String>,
    /// The previous key's endorsement of this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endorsement: Option<Endorsement>,
}

impl ManifestKey {
    /// The manifest entry of `key`.
    pub fn from_description(key: &KeyDescription, endorsement: Option<&KeyEndorsement>) -> ManifestKey {
        ManifestKey {
            key_id: key.key_id.clone(),
            public_key_multibase: key.public_key.to_multikey(),
            fingerprint: key.public_key.fingerprint(),
            valid_from: rfc3339(key.valid_from),
            valid_until: key.valid_until.map(rfc3339),
            endorsement: endorsement.map(|endorsement| Endorsement {
                endorsing_key: endorsement.endorsing_key_id.clone(),
                signature_value: endorsement.signature.clone(),
            }),
        }
    }

    /// The key this entry describes. The listed fingerprint must match the key, so that what an admin read is
    /// what gets pinned.
    pub fn description(&self) -> Result<KeyDescription, KeyError> {
        let public_key = PublicKey::from_multikey(&self.public_key_multibase)?;
        if public_key.fingerprint() != self.fingerprint {
            return Err(KeyError::Multikey(format!(
                "the listed fingerprint {} is not the key's",
                self.fingerprint
            )));
        }
        let valid_from = parse_rfc3339(&self.valid_from)
            .ok_or_else(|| KeyError::Multikey(format!("valid_from {} is not an RFC 3339 time", self.valid_from)))?;
        let valid_until = match &self.valid_until {
            None => None,
            Some(until) => Some(
                parse_rfc3339(until)
                    .ok_or_else(|| KeyError::Multikey(format!("valid_until {until} is not an RFC 3339 time")))?,
            ),
        };
        Ok(KeyDescription {
            key_id: self.key_id.clone(),
            public_key,
            valid_from,
            valid_until,
        })
    }

    /// The endorsement, in the form `keys` checks.
    pub fn key_endorsement(&self) -> Option<KeyEndorsement> {
        self.endorsement.as_ref().map(|endorsement| KeyEndorsement {
            endorsing_key_id: endorsement.endorsing_key.clone(),
            signature: endorsement.signature_value.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::InstanceKeyPair;

    #[test]
    fn a_multikey_entry_round_trips_to_the_key_it_describes() {
        let first = InstanceKeyPair::from_secret_bytes(&[1; 32]);
        let second = InstanceKeyPair::from_secret_bytes(&[2; 32]);
        let description = KeyDescription {
            key_id: "https://alpha.test/actor#key-2".to_owned(),
            public_key: second.public_key(),
            valid_from: 1_800_000_000,
            valid_until: Some(1_900_000_000),
        };
        let endorsement = first.endorse("https://alpha.test/actor#key-1", &description);
        let entry = Multikey::from_description("https://alpha.test/actor", &description, Some(&endorsement));
        let json = serde_json::to_value(&entry).expect("serializes");
        assert_eq!(json["type"], "Multikey");
        assert_eq!(json["validFrom"], "2027-01-15T08:00:00Z");
        assert_eq!(json["endorsement"]["endorsingKey"], "https://alpha.test/actor#key-1");
        let read: Multikey = serde_json::from_value(json).expect("parses");
        assert_eq!(read.description(), Ok(description.clone()));
        let endorsement = read.key_endorsement().expect("endorsed");
        assert!(first.public_key().endorses(&description, &endorsement));
    }

    #[test]
    fn a_manifest_key_with_a_fingerprint_of_another_key_is_refused() {
        let key = InstanceKeyPair::from_secret_bytes(&[1; 32]).public_key();
        let description = KeyDescription {
            key_id: "k".to_owned(),
            public_key: key,
            valid_from: 0,
            valid_until: None,
        };
        let mut entry = ManifestKey::from_description(&description, None);
        assert_eq!(entry.description(), Ok(description));
        entry.fingerprint = InstanceKeyPair::from_secret_bytes(&[2; 32]).public_key().fingerprint();
        assert!(entry.description().is_err());
    }
}
