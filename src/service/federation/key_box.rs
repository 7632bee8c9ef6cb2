//! Sealing the instance's private keys for the database: XChaCha20-Poly1305 under the key-encryption key, so the
//! database alone never holds a usable signing key.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use chacha20poly1305::aead::{Aead, Generate, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};

/// Bytes of a key-encryption key.
pub const KEY_ENCRYPTION_KEY_BYTES: usize = 32;

/// The format tag every sealed value starts with, so a later format can be told apart.
const SEALED_PREFIX: &str = "xc20p1:";

/// A key-encryption key: seals and opens private keys. Its `Debug` form shows nothing of it.
#[derive(Clone)]
pub struct KeyBox {
    cipher: XChaCha20Poly1305,
}

impl std::fmt::Debug for KeyBox {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("KeyBox(…)")
    }
}

/// Why a key-encryption key or a sealed value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyBoxError {
    /// The configured key is not 32 bytes of base64.
    #[error("the key-encryption key must be {KEY_ENCRYPTION_KEY_BYTES} bytes in base64")]
    MalformedKey,
    /// The sealed value was not made by this format.
    #[error("a stored private key is not in a known sealed format")]
    MalformedSealed,
    /// The sealed value does not open with this key: another key sealed it, or it was altered.
    #[error(
        "a stored private key does not open with the configured key-encryption key (another key sealed it, or the \
         value was altered)"
    )]
    WrongKey,
}

impl KeyBox {
    /// A box from the 32 raw bytes of a key-encryption key.
    pub fn from_bytes(bytes: &[u8; KEY_ENCRYPTION_KEY_BYTES]) -> KeyBox {
        KeyBox {
            cipher: XChaCha20Poly1305::new(&(*bytes).into()),
        }
    }

    /// A box from the base64 text of a key-encryption key (`INTERAI_KEY_ENCRYPTION_KEY` or the key file).
    pub fn from_base64(text: &str) -> Result<KeyBox, KeyBoxError> {
        let bytes = STANDARD.decode(text.trim()).map_err(|_| KeyBoxError::MalformedKey)?;
        let bytes: [u8; KEY_ENCRYPTION_KEY_BYTES] = bytes.try_into().map_err(|_| KeyBoxError::MalformedKey)?;
        Ok(KeyBox::from_bytes(&bytes))
    }

    /// A new random key-encryption key, as base64 text for its file.
    pub fn generate_base64() -> String {
        let mut bytes = [0_u8; KEY_ENCRYPTION_KEY_BYTES];
        rand::Rng::fill_bytes(&mut rand::rng(), &mut bytes);
        STANDARD.encode(bytes)
    }

    /// Seals `secret`, bound to `context` (the key ID), so a sealed key cannot be moved to another key's row.
    pub fn seal(&self, secret: &[u8], context: &str) -> String {
        let nonce = XNonce::generate();
        let ciphertext = self
            .cipher
            .encrypt(
                &nonce,
                Payload {
                    msg: secret,
                    aad: context.as_bytes(),
                },
            )
            .unwrap_or_default();
        let mut sealed = nonce.to_vec();
        sealed.extend_from_slice(&ciphertext);
        format!("{SEALED_PREFIX}{}", STANDARD.encode(sealed))
    }

    /// Opens a value sealed for `context`.
    pub fn open(&self, sealed: &str, context: &str) -> Result<Vec<u8>, KeyBoxError> {
        let encoded = sealed.strip_prefix(SEALED_PREFIX).ok_or(KeyBoxError::MalformedSealed)?;
        let bytes = STANDARD.decode(encoded).map_err(|_| KeyBoxError::MalformedSealed)?;
        if bytes.len() < 24 + 16 {
            return Err(KeyBoxError::MalformedSealed);
        }
        let (nonce, ciphertext) = bytes.split_at(24);
        let nonce = XNonce::try_from(nonce).map_err(|_| KeyBoxError::MalformedSealed)?;
        self.cipher
            .decrypt(
                &nonce,
                Payload {
                    msg: ciphertext,
                    aad: context.as_bytes(),
                },
            )
            .map_err(|_| KeyBoxError::WrongKey)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_key_opens_only_with_its_key_and_context_and_never_shows_the_secret() {
        let key_box = KeyBox::from_base64(&KeyBox::generate_base64()).expect("a generated key is valid");
        let secret = [7_u8; 32];
        let sealed = key_box.seal(&secret, "https://alpha.test/actor#key-1");
        assert!(sealed.starts_with(SEALED_PREFIX));
        assert!(
            !sealed.contains(&STANDARD.encode(secret)),
            "the secret is not in the sealed text"
        );
        assert_eq!(
            key_box.open(&sealed, "https://alpha.test/actor#key-1").expect("opens"),
            secret
        );
        assert_eq!(
            key_box.open(&sealed, "https://alpha.test/actor#key-2"),
            Err(KeyBoxError::WrongKey),
            "bound to its key ID"
        );
        let other = KeyBox::from_base64(&KeyBox::generate_base64()).expect("valid");
        assert_eq!(
            other.open(&sealed, "https://alpha.test/actor#key-1"),
            Err(KeyBoxError::WrongKey)
        );
        assert_eq!(key_box.open("plain", "x"), Err(KeyBoxError::MalformedSealed));
        assert_eq!(KeyBox::from_base64("c2hvcnQ=").err(), Some(KeyBoxError::MalformedKey));
        assert_ne!(
            key_box.seal(&secret, "k"),
            key_box.seal(&secret, "k"),
            "a fresh nonce every time"
        );
        assert_eq!(format!("{key_box:?}"), "KeyBox(…)");
    }
}
