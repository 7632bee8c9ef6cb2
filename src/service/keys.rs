//! API keys: issuing, listing, revoking, and authenticating a bearer secret.
//!
//! A secret is 32 random bytes, shown once; the database keeps only its SHA-256.

use base64::Engine;
use chrono::{DateTime, Utc};
use rand::Rng;
use sha2::{Digest, Sha256};

use super::{ErrorCode, Service, ServiceError};
use crate::domain::{AuthenticatedActor, IdKind, PublicId, ScopeSet};
use crate::store;

/// A stored key as the service returns it (never with its secret).
pub use crate::store::keys::ApiKeyRecord;

/// Every secret starts with this, so leaked keys are easy to recognise in scans.
pub const SECRET_PREFIX: &str = "iak_";

/// Input for issuing a key.
#[derive(Debug, Clone)]
pub struct NewApiKey {
    /// The actor the key authenticates.
    pub actor_id: PublicId,
    /// What the key may do; must not be empty.
    pub scopes: ScopeSet,
    /// When the key stops working, if ever.
    pub expires_at: Option<DateTime<Utc>>,
    /// A free label.
    pub label: Option<String>,
}

/// A newly issued key and its secret, which is never stored and cannot be shown again.
#[derive(Debug, Clone)]
pub struct IssuedApiKey {
    /// The stored key.
    pub key: ApiKeyRecord,
    /// The bearer secret.
    pub secret: String,
}

/// The hex SHA-256 of a secret, as stored.
pub fn secret_sha256(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

/// When a key expires, from what an admin typed (`interai admin key create --expires`, the console's expiry field):
/// an RFC 3339 time, a date (the key stops working as that day begins, in UTC), or a positive duration from `now`
/// (`90d`, `12h`, `30m`). Empty is never. Whether the moment is in the future is [`Service::create_api_key`]'s check.
pub fn expiry_from_text(field: &str, text: &str, now: DateTime<Utc>) -> Result<Option<DateTime<Utc>>, ServiceError> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    if let Ok(instant) = DateTime::parse_from_rfc3339(text) {
        return Ok(Some(instant.to_utc()));
    }
    if let Ok(date) = chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        return Ok(Some(date.and_time(chrono::NaiveTime::MIN).and_utc()));
    }
    // A duration too long for the calendar is refused like one that does not parse (adding it would panic).
    super::validation::positive_duration(text)
        .and_then(|delta| now.checked_add_signed(delta))
        .map(Some)
        .ok_or_else(|| {
            ServiceError::validation(
                field,
                format!(
                    "{field} must be a duration such as 90d, 12h or 30m, a date such as 2027-01-31, or an RFC 3339 time \
                     such as 2027-01-31T00:00:00Z"
                ),
            )
        })
}

fn generate_secret() -> String {
    let mut bytes = [0_u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    format!(
        "{SECRET_PREFIX}{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    )
}

impl Service {
    /// Issues a key for an actor of this realm.
    pub async fn create_api_key(&self, new_key: NewApiKey) -> Result<IssuedApiKey, ServiceError> {
        let mut transaction = self.store().begin().await?;
        let issued = self.create_api_key_in(&mut transaction, new_key).await?;
        transaction.commit().await?;
        Ok(issued)
    }

    pub(super) async fn create_api_key_in(
        &self,
        transaction: &mut store::Transaction,
        new_key: NewApiKey,
    ) -> Result<IssuedApiKey, ServiceError> {
        if new_key.scopes.is_empty() {
            return Err(ServiceError::validation("scopes", "a key needs at least one scope"));
        }
        let now = self.now();
        if let Some(expires_at) = new_key.expires_at
            && expires_at <= now
        {
            return Err(ServiceError::validation("expires", "the expiry must be in the future"));
        }
        let actor = store::actors::find(&mut transaction.conn(), &new_key.actor_id)
            .await?
            .ok_or_else(|| ServiceError::not_found(new_key.actor_id.as_str()))?;
        if !self.realm().is(&actor.origin) {
            return Err(ServiceError::validation(
                "actor",
                "keys can only be issued to actors of this realm",
            ));
        }
        let key = ApiKeyRecord {
            id: self.new_id(IdKind::ApiKey),
            actor_id: actor.id,
            scopes: new_key.scopes,
            label: new_key
                .label
                .map(|label| label.trim().to_owned())
                .filter(|label| !label.is_empty()),
            created_at: now,
            expires_at: new_key.expires_at,
            revoked_at: None,
            last_used_at: None,
        };
        let secret = generate_secret();
        store::keys::insert(&mut transaction.conn(), &key, &secret_sha256(&secret)).await?;
        tracing::info!(key = %key.id, actor = %key.actor_id, scopes = %key.scopes.to_list(), "api key issued");
        Ok(IssuedApiKey { key, secret })
    }

    /// Every key of an actor, oldest first.
    pub async fn list_api_keys(&self, actor_id: &PublicId) -> Result<Vec<ApiKeyRecord>, ServiceError> {
        let mut reader = self.store().reader().await?;
        store::actors::find(&mut reader.conn(), actor_id)
            .await?
            .ok_or_else(|| ServiceError::not_found(actor_id.as_str()))?;
        Ok(store::keys::list_for_actor(&mut reader.conn(), actor_id).await?)
    }

    /// Every key of the actors `actor_ids`, oldest first, read at once (a page that lists many actors' keys makes
    /// one query, not one per actor). An ID of no actor has no keys.
    pub async fn list_api_keys_of_actors(&self, actor_ids: &[PublicId]) -> Result<Vec<ApiKeyRecord>, ServiceError> {
        let mut reader = self.store().reader().await?;
        Ok(store::keys::list_for_actors(&mut reader.conn(), actor_ids).await?)
    }

    /// Revokes a key at once. Revoking an already revoked key changes nothing and is not an error.
    pub async fn revoke_api_key(&self, key_id: &PublicId) -> Result<ApiKeyRecord, ServiceError> {
        if key_id.kind() != IdKind::ApiKey {
            return Err(ServiceError::validation("key", "expected a key_ ID"));
        }
        let mut transaction = self.store().begin().await?;
        store::keys::find(&mut transaction.conn(), key_id)
            .await?
            .ok_or_else(|| ServiceError::not_found(key_id.as_str()))?;
        store::keys::revoke(&mut transaction.conn(), key_id, self.now()).await?;
        let key = store::keys::find(&mut transaction.conn(), key_id)
            .await?
            .ok_or_else(|| ServiceError::not_found(key_id.as_str()))?;
        transaction.commit().await?;
        tracing::info!(key = %key_id, "api key revoked");
        Ok(key)
    }

    /// The actor a bearer secret authenticates, or `unauthenticated` for a missing, unknown, expired or revoked key.
    pub async fn authenticate(&self, secret: &str) -> Result<AuthenticatedActor, ServiceError> {
        let unauthenticated = |message: &str| ServiceError::new(ErrorCode::Unauthenticated, message);
        if secret.is_empty() {
            return Err(unauthenticated(
                "an API key is required: send Authorization: Bearer <key>",
            ));
        }
        let now = self.now();
        let mut reader = self.store().reader().await?;
        let (key, actor) = store::keys::find_with_actor_by_secret_hash(&mut reader.conn(), &secret_sha256(secret))
            .await?
            .ok_or_else(|| unauthenticated("the API key is not valid"))?;
        drop(reader);
        if key.revoked_at.is_some() {
            return Err(unauthenticated("the API key has been revoked"));
        }
        if key.expires_at.is_some_and(|expires_at| expires_at <= now) {
            return Err(unauthenticated("the API key has expired"));
        }
        let actor = actor.ok_or_else(|| ServiceError::internal(format!("key {} names a missing actor", key.id)))?;
        // Recording use costs a write, so it happens at most once a minute per key.
        if key
            .last_used_at
            .is_none_or(|last_used| now - last_used >= chrono::TimeDelta::minutes(1))
        {
            let mut transaction = self.store().begin().await?;
            store::keys::touch(&mut transaction.conn(), &key.id, now).await?;
            transaction.commit().await?;
        }
        Ok(AuthenticatedActor {
            actor,
            key_id: key.id,
            scopes: key.scopes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_expiry_is_a_time_a_date_or_a_duration_from_now() {
        let now = DateTime::parse_from_rfc3339("2026-12-07T10:00:00Z")
            .expect("a time")
            .to_utc();
        let at = |text: &str| DateTime::parse_from_rfc3339(text).expect("a time").to_utc();
        assert_eq!(expiry_from_text("expires", "  ", now).expect("empty"), None);
        assert_eq!(
            expiry_from_text("expires", "90d", now).expect("a duration"),
            Some(now + chrono::TimeDelta::days(90))
        );
        assert_eq!(
            expiry_from_text("expires", "2027-01-31", now).expect("a date"),
            Some(at("2027-01-31T00:00:00Z"))
        );
        assert_eq!(
            expiry_from_text("expires", "2027-01-31T12:30:00+01:00", now).expect("a time"),
            Some(at("2027-01-31T11:30:00Z"))
        );
        for refused in ["soon", "0d", "-3d", "90", "31/01/2027", "99999999999d"] {
            let error = expiry_from_text("expires", refused, now).expect_err(refused);
            assert_eq!(error.code, ErrorCode::ValidationFailed, "{refused}");
        }
    }
}
