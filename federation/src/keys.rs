//! Ed25519 instance keys: signing, their public encodings (Multikey for FEP-521a, SPKI PEM for the legacy
//! `publicKey` block), the fingerprint an admin compares when pinning a peer, and key endorsements.
//!
//! An endorsement is a signature by one key over another key's identity and validity. It is how a peer learns
//! a rotated key without trusting the network: a new key counts only when a key the peer already pinned endorsed
//! it, whether the new key arrives in an `Update` of the instance actor or in a re-read instance actor.

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
use ed25519_dalek::pkcs8::{DecodePublicKey, EncodePublicKey};
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use sha2::{Digest, Sha256};

/// The multicodec prefix of an Ed25519 public key (`ed25519-pub`, 0xed as an unsigned varint).
const ED25519_MULTICODEC_PREFIX: [u8; 2] = [0xed, 0x01];

/// Why a key could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// The text is not a `z`-prefixed base58btc Multikey of an Ed25519 public key.
    #[error("not an Ed25519 Multikey: {0}")]
    Multikey(String),
    /// The text is not a PEM SubjectPublicKeyInfo of an Ed25519 public key.
    #[error("not an Ed25519 public key in PEM: {0}")]
    Pem(String),
    /// The bytes are not a valid Ed25519 public key.
    #[error("not a valid Ed25519 public key")]
    InvalidPoint,
    /// A signature is not 64 bytes of base64.
    #[error("malformed signature: {0}")]
    MalformedSignature(String),
}

/// An instance's private signing key. Its `Debug` output never shows the secret.
#[derive(Clone)]
pub struct InstanceKeyPair {
    signing_key: SigningKey,
}

impl std::fmt::Debug for InstanceKeyPair {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("InstanceKeyPair")
            .field("public_key", &self.public_key().to_multikey())
            .finish_non_exhaustive()
    }
}

impl InstanceKeyPair {
    /// The key pair of a 32-byte secret seed (RFC 8032). The caller draws the seed from a secure random source;
    /// this crate does no randomness of its own, so every test is reproducible.
    pub fn from_secret_bytes(secret: &[u8; 32]) -> InstanceKeyPair {
        InstanceKeyPair {
            signing_key: SigningKey::from_bytes(secret),
        }
    }

    /// The 32-byte secret seed, for storing it encrypted. Handle with care: this is the secret.
    pub fn secret_bytes(&self) -> [u8; 32] {
        self.signing_key.to_bytes()
    }

    /// The public half.
    pub fn public_key(&self) -> PublicKey {
        PublicKey(self.signing_key.verifying_key())
    }

    /// An Ed25519 signature of `message` (deterministic, RFC 8032).
    pub fn sign(&self, message: &[u8]) -> [u8; 64] {
        self.signing_key.sign(message).to_bytes()
    }

    /// Endorses `endorsed`: a signature over its key ID, its public key and its validity window, by this key
    /// (whose ID is `endorsing_key_id`).
    pub fn endorse(&self, endorsing_key_id: &str, endorsed: &KeyDescription) -> KeyEndorsement {
        let signature = self.sign(endorsement_message(endorsed).as_bytes());
        KeyEndorsement {
            endorsing_key_id: endorsing_key_id.to_owned(),
            signature: STANDARD.encode(signature),
        }
    }
}

/// An Ed25519 public key.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct PublicKey(VerifyingKey);

impl std::fmt::Debug for PublicKey {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_tuple("PublicKey").field(&self.to_multikey()).finish()
    }
}

impl PublicKey {
    /// The key of 32 raw bytes.
    pub fn from_bytes(bytes: &[u8; 32]) -> Result<PublicKey, KeyError> {
        VerifyingKey::from_bytes(bytes)
            .map(PublicKey)
            .map_err(|_| KeyError::InvalidPoint)
    }

    /// The 32 raw bytes.
    pub fn to_bytes(&self) -> [u8; 32] {
        self.0.to_bytes()
    }

    /// The FEP-521a `publicKeyMultibase` form: `z` + base58btc of the multicodec prefix and the key (`z6Mk…`).
    pub fn to_multikey(&self) -> String {
        let mut bytes = Vec::with_capacity(34);
        bytes.extend_from_slice(&ED25519_MULTICODEC_PREFIX);
        bytes.extend_from_slice(&self.0.to_bytes());
        format!("z{}", bs58::encode(bytes).into_string())
    }

    /// Reads the `publicKeyMultibase` form.
    pub fn from_multikey(text: &str) -> Result<PublicKey, KeyError> {
        let encoded = text
            .strip_prefix('z')
            .ok_or_else(|| KeyError::Multikey("a base58btc multibase value starts with `z`".to_owned()))?;
        let bytes = bs58::decode(encoded)
            .into_vec()
            .map_err(|error| KeyError::Multikey(error.to_string()))?;
        let key = bytes
            .strip_prefix(&ED25519_MULTICODEC_PREFIX[..])
            .ok_or_else(|| KeyError::Multikey("the multicodec prefix is not ed25519-pub (0xed01)".to_owned()))?;
        let key: &[u8; 32] = key
            .try_into()
            .map_err(|_| KeyError::Multikey(format!("an Ed25519 key has 32 bytes, not {}", key.len())))?;
        PublicKey::from_bytes(key)
    }

    /// The legacy `publicKeyPem` form: a PEM SubjectPublicKeyInfo.
    pub fn to_spki_pem(&self) -> String {
        // Encoding 32 known-good bytes into SPKI cannot fail; the fallback keeps this function total.
        self.0
            .to_public_key_pem(ed25519_dalek::pkcs8::spki::der::pem::LineEnding::LF)
            .unwrap_or_default()
    }

    /// Reads the `publicKeyPem` form.
    pub fn from_spki_pem(text: &str) -> Result<PublicKey, KeyError> {
        VerifyingKey::from_public_key_pem(text.trim())
            .map(PublicKey)
            .map_err(|error| KeyError::Pem(error.to_string()))
    }

    /// What an admin compares before pinning a peer: `SHA256:` and the unpadded base64 of the SHA-256 of the raw
    /// key, as OpenSSH prints key fingerprints.
    pub fn fingerprint(&self) -> String {
        format!("SHA256:{}", STANDARD_NO_PAD.encode(Sha256::digest(self.0.to_bytes())))
    }

    /// Whether `signature` is this key's Ed25519 signature of `message`. Uses strict verification (no
    /// malleable or small-order signatures).
    pub fn verifies(&self, message: &[u8], signature: &[u8; 64]) -> bool {
        self.0.verify_strict(message, &Signature::from_bytes(signature)).is_ok()
    }

    /// Whether `endorsement` is this key's endorsement of `endorsed`.
    pub fn endorses(&self, endorsed: &KeyDescription, endorsement: &KeyEndorsement) -> bool {
        let Ok(signature) = decode_signature(&endorsement.signature) else {
            return false;
        };
        self.verifies(endorsement_message(endorsed).as_bytes(), &signature)
    }
}

/// A key as an instance publishes it: its ID, public key and validity window (Unix seconds).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyDescription {
    /// The key ID, a URL such as `https://alpha.test/actor#key-01j…`.
    pub key_id: String,
    /// The public key.
    pub public_key: PublicKey,
    /// First second the key may sign.
    pub valid_from: i64,
    /// First second the key may no longer sign (`None`: until replaced).
    pub valid_until: Option<i64>,
}

impl KeyDescription {
    /// Whether the key may sign at `now` (Unix seconds).
    pub fn is_valid_at(&self, now: i64) -> bool {
        now >= self.valid_from && self.valid_until.is_none_or(|until| now < until)
    }
}

/// One key's signature over another key's description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyEndorsement {
    /// The ID of the endorsing key.
    pub endorsing_key_id: String,
    /// Base64 of the 64-byte Ed25519 signature over the endorsement message.
    pub signature: String,
}

/// The exact bytes an endorsement signs: a fixed label, then the key ID, the multikey and the first second of the
/// window, one per line, so no two keys share a message.
fn endorsement_message(endorsed: &KeyDescription) -> String {
    // The end of the window is left out on purpose: a key's end is set when it is rotated out, after its successor
    // endorsed it, and an endorsement must stay verifiable for as long as the key is listed.
    format!(
        "interai-key-endorsement-v1\n{}\n{}\n{}",
        endorsed.key_id,
        endorsed.public_key.to_multikey(),
        endorsed.valid_from
    )
}

/// Reads a base64 (standard alphabet, padded or not) 64-byte signature.
pub fn decode_signature(text: &str) -> Result<[u8; 64], KeyError> {
    let bytes = STANDARD
        .decode(text.trim())
        .or_else(|_| STANDARD_NO_PAD.decode(text.trim()))
        .map_err(|error| KeyError::MalformedSignature(error.to_string()))?;
    bytes
        .as_slice()
        .try_into()
        .map_err(|_| KeyError::MalformedSignature(format!("an Ed25519 signature has 64 bytes, not {}", bytes.len())))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 8032 §7.1, TEST 1.
    const RFC8032_SECRET: [u8; 32] = [
        0x9d, 0x61, 0xb1, 0x9d, 0xef, 0xfd, 0x5a, 0x60, 0xba, 0x84, 0x4a, 0xf4, 0x92, 0xec, 0x2c, 0xc4, 0x44, 0x49,
        0xc5, 0x69, 0x7b, 0x32, 0x69, 0x19, 0x70, 0x3b, 0xac, 0x03, 0x1c, 0xae, 0x7f, 0x60,
    ];

    #[test]
    fn the_rfc_8032_test_key_signs_the_empty_message_as_published() {
        let pair = InstanceKeyPair::from_secret_bytes(&RFC8032_SECRET);
        assert_eq!(
            hex(&pair.public_key().to_bytes()),
            "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"
        );
        assert_eq!(
            hex(&pair.sign(b"")),
            "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"
        );
    }

    #[test]
    fn multikey_follows_fep_521a_and_round_trips() {
        let key = InstanceKeyPair::from_secret_bytes(&RFC8032_SECRET).public_key();
        let multikey = key.to_multikey();
        assert!(multikey.starts_with("z6Mk"), "{multikey}");
        assert_eq!(PublicKey::from_multikey(&multikey), Ok(key));
        assert!(PublicKey::from_multikey("6Mk").is_err());
        assert!(PublicKey::from_multikey("zQ3s").is_err());
    }

    #[test]
    fn pem_round_trips_and_reads_the_rfc_9421_test_key() {
        let key = InstanceKeyPair::from_secret_bytes(&RFC8032_SECRET).public_key();
        let pem = key.to_spki_pem();
        assert!(pem.starts_with("-----BEGIN PUBLIC KEY-----"));
        assert_eq!(PublicKey::from_spki_pem(&pem), Ok(key));
        let rfc_9421 = "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAJrQLj5P/89iXES9+vFgrIy29clF9CC/oPPsw3c5D0bs=\n-----END PUBLIC KEY-----\n";
        assert!(PublicKey::from_spki_pem(rfc_9421).is_ok());
    }

    #[test]
    fn fingerprints_differ_between_keys_and_look_like_openssh() {
        let first = InstanceKeyPair::from_secret_bytes(&[1; 32]).public_key();
        let second = InstanceKeyPair::from_secret_bytes(&[2; 32]).public_key();
        assert!(first.fingerprint().starts_with("SHA256:"));
        assert_eq!(first.fingerprint().len(), "SHA256:".len() + 43);
        assert_ne!(first.fingerprint(), second.fingerprint());
    }

    #[test]
    fn an_endorsement_holds_only_for_the_endorsed_description_and_the_endorsing_key() {
        let old = InstanceKeyPair::from_secret_bytes(&[1; 32]);
        let new = InstanceKeyPair::from_secret_bytes(&[2; 32]);
        let description = KeyDescription {
            key_id: "https://alpha.test/actor#key-2".to_owned(),
            public_key: new.public_key(),
            valid_from: 1_800_000_000,
            valid_until: None,
        };
        let endorsement = old.endorse("https://alpha.test/actor#key-1", &description);
        assert!(old.public_key().endorses(&description, &endorsement));
        assert!(!new.public_key().endorses(&description, &endorsement));
        let mut stretched = description.clone();
        stretched.valid_from -= 1;
        assert!(!old.public_key().endorses(&stretched, &endorsement));
        let mut retired = description.clone();
        retired.valid_until = Some(retired.valid_from + 86_400);
        assert!(
            old.public_key().endorses(&retired, &endorsement),
            "retiring the endorsed key later does not void its endorsement"
        );
        let mut other_key = description;
        other_key.public_key = InstanceKeyPair::from_secret_bytes(&[3; 32]).public_key();
        assert!(!old.public_key().endorses(&other_key, &endorsement));
    }

    #[test]
    fn validity_windows_are_half_open() {
        let description = KeyDescription {
            key_id: "k".to_owned(),
            public_key: InstanceKeyPair::from_secret_bytes(&[1; 32]).public_key(),
            valid_from: 100,
            valid_until: Some(200),
        };
        assert!(!description.is_valid_at(99));
        assert!(description.is_valid_at(100));
        assert!(description.is_valid_at(199));
        assert!(!description.is_valid_at(200));
    }

    #[test]
    fn debug_output_never_shows_the_secret() {
        let pair = InstanceKeyPair::from_secret_bytes(&RFC8032_SECRET);
        let shown = format!("{pair:?}");
        assert!(!shown.contains("9d61"), "{shown}");
        assert!(shown.contains("z6Mk"));
    }

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|byte| format!("{byte:02x}")).collect()
    }
}
