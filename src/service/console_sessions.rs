//! Web console sessions: an admin signs in with an admin-scope API key and gets a session named by a random token
//! (the console keeps it in a cookie); every console request presents the token and is checked here, the session
//! first and then its key, so revoking the key or taking its admin scope away ends its sessions at once.
//!
//! The database keeps only the token's SHA-256, as for API keys: a copy of the database opens no session.

use base64::Engine;
use chrono::{DateTime, TimeDelta, Utc};
use hmac::{Hmac, KeyInit, Mac};
use rand::Rng;
use sha2::Sha256;

use super::keys::secret_sha256;
use super::{ErrorCode, Service, ServiceError};
use crate::domain::{AuthenticatedActor, Scope};
use crate::store;
use crate::store::console_sessions::ConsoleSessionRecord;

/// Every session token starts with this, so a leaked one is easy to recognise.
pub const SESSION_TOKEN_PREFIX: &str = "ics_";

/// A session's last use is written at most this often (a console page is several requests).
const TOUCH_INTERVAL: TimeDelta = TimeDelta::minutes(1);

/// How long a session lasts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConsoleSessionLimits {
    /// A session unused for this long has ended.
    pub idle: TimeDelta,
    /// A session ends this long after sign-in however it is used (sooner when its key expires sooner).
    pub absolute: TimeDelta,
}

/// A session that holds, and who it signs in.
#[derive(Debug, Clone)]
pub struct ConsoleSession {
    /// The session's ID (for logs; never a credential).
    pub id: String,
    /// The key's owner, the key and its scopes: whom every console action is done and audited as.
    pub caller: AuthenticatedActor,
    /// When it ends at the latest.
    pub expires_at: DateTime<Utc>,
    /// The token each state-changing form must carry back (derived from the session's token, so a page of another
    /// site, which cannot read the console's pages, cannot know it).
    pub form_token: String,
}

impl ConsoleSession {
    /// Whether `presented` is this session's form token (compared in constant time, so the time an answer takes
    /// tells nothing of how much of a guess was right).
    pub fn form_token_matches(&self, presented: &str) -> bool {
        let expected = self.form_token.as_bytes();
        let presented = presented.as_bytes();
        expected.len() == presented.len()
            && expected
                .iter()
                .zip(presented)
                .fold(0_u8, |difference, (left, right)| difference | (left ^ right))
                == 0
    }
}

fn unauthenticated(message: &str) -> ServiceError {
    ServiceError::new(ErrorCode::Unauthenticated, message)
}

fn new_token() -> String {
    let mut bytes = [0_u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    format!(
        "{SESSION_TOKEN_PREFIX}{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    )
}

fn new_session_id() -> String {
    let mut bytes = [0_u8; 12];
    rand::rng().fill_bytes(&mut bytes);
    format!("ses_{}", hex::encode(bytes))
}

/// The form token of the session whose token is `token`: an HMAC of a fixed label keyed by the token.
fn form_token(token: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(token.as_bytes()).expect("HMAC takes a key of any length");
    mac.update(b"interai console form token v1");
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
}

impl Service {
    /// Signs in with an API key: a key that authenticates and has the `admin` scope opens a session. Returns the
    /// session and its token (which only the caller ever holds). Sessions that can no longer be used are deleted
    /// on the way, so the table holds only live ones.
    pub async fn open_console_session(
        &self,
        secret: &str,
        limits: ConsoleSessionLimits,
    ) -> Result<(ConsoleSession, String), ServiceError> {
        let caller = self.authenticate(secret.trim()).await?;
        if !caller.scopes.contains(Scope::Admin) {
            return Err(ServiceError::new(
                ErrorCode::ForbiddenScope,
                "the console needs a key with the admin scope",
            ));
        }
        let now = self.now();
        let mut transaction = self.store().begin().await?;
        let key_expires_at = store::keys::find(&mut transaction.conn(), &caller.key_id)
            .await?
            .and_then(|key| key.expires_at);
        let expires_at = key_expires_at.map_or(now + limits.absolute, |at| at.min(now + limits.absolute));
        let record = ConsoleSessionRecord {
            id: new_session_id(),
            key_id: caller.key_id.clone(),
            created_at: now,
            last_seen_at: now,
            expires_at,
            ended_at: None,
        };
        let token = new_token();
        let removed = store::console_sessions::delete_ended(&mut transaction.conn(), now, now - limits.idle).await?;
        store::console_sessions::insert(&mut transaction.conn(), &record, &secret_sha256(&token)).await?;
        transaction.commit().await?;
        tracing::info!(session = %record.id, key = %caller.key_id, actor = %caller.actor.id, ended_sessions_removed = removed, "console session opened");
        Ok((
            ConsoleSession {
                id: record.id,
                caller,
                expires_at,
                form_token: form_token(&token),
            },
            token,
        ))
    }

    /// The session a console request presents with `token`, or `unauthenticated` when there is none or it ended
    /// (signed out, idle, expired), and `forbidden_scope` when its key lost the admin scope. A key that was revoked
    /// or expired ends it too.
    pub async fn console_session(
        &self,
        token: &str,
        limits: ConsoleSessionLimits,
    ) -> Result<ConsoleSession, ServiceError> {
        if token.is_empty() {
            return Err(unauthenticated("sign in to the console"));
        }
        let now = self.now();
        let mut reader = self.store().reader().await?;
        let session = store::console_sessions::find_by_token_hash(&mut reader.conn(), &secret_sha256(token))
            .await?
            .ok_or_else(|| unauthenticated("the console session is not known: sign in again"))?;
        if session.ended_at.is_some() {
            return Err(unauthenticated("you signed out of this console session: sign in again"));
        }
        if session.expires_at <= now {
            return Err(unauthenticated("the console session has expired: sign in again"));
        }
        if session.last_seen_at + limits.idle <= now {
            return Err(unauthenticated(
                "the console session ended after a while without use: sign in again",
            ));
        }
        let (key, actor) = store::keys::find_with_actor(&mut reader.conn(), &session.key_id)
            .await?
            .ok_or_else(|| ServiceError::internal(format!("console session {} names a missing key", session.id)))?;
        drop(reader);
        if key.revoked_at.is_some() {
            return Err(unauthenticated(
                "the API key of this console session has been revoked: sign in with another",
            ));
        }
        if key.expires_at.is_some_and(|expires_at| expires_at <= now) {
            return Err(unauthenticated("the API key of this console session has expired"));
        }
        if !key.scopes.contains(Scope::Admin) {
            return Err(ServiceError::new(
                ErrorCode::ForbiddenScope,
                "the API key of this console session no longer has the admin scope",
            ));
        }
        let actor = actor.ok_or_else(|| ServiceError::internal(format!("key {} names a missing actor", key.id)))?;
        if now - session.last_seen_at >= TOUCH_INTERVAL {
            let mut transaction = self.store().begin().await?;
            store::console_sessions::touch(&mut transaction.conn(), &session.id, now).await?;
            transaction.commit().await?;
        }
        Ok(ConsoleSession {
            id: session.id,
            caller: AuthenticatedActor {
                actor,
                key_id: key.id,
                scopes: key.scopes,
            },
            expires_at: session.expires_at,
            form_token: form_token(token),
        })
    }

    /// Signs out: the session of `token` ends at once (a session already ended or unknown is left as it is).
    pub async fn end_console_session(&self, token: &str) -> Result<(), ServiceError> {
        let now = self.now();
        let mut transaction = self.store().begin().await?;
        if let Some(session) =
            store::console_sessions::find_by_token_hash(&mut transaction.conn(), &secret_sha256(token)).await?
        {
            store::console_sessions::end(&mut transaction.conn(), &session.id, now).await?;
            tracing::info!(session = %session.id, "console session signed out");
        }
        transaction.commit().await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_form_token_depends_on_its_session_token_alone() {
        let first = new_token();
        let second = new_token();
        assert!(first.starts_with(SESSION_TOKEN_PREFIX));
        assert_ne!(first, second);
        assert_eq!(form_token(&first), form_token(&first));
        assert_ne!(form_token(&first), form_token(&second));
        assert!(!form_token(&first).contains(&first[SESSION_TOKEN_PREFIX.len()..]));
    }
}
