//! The agent-facing layer of every write: scope, idempotency, the per-root-controller rate limit and the MCP audit
//! row, on top of the transport-neutral unit of work (`unit_of_work.rs`) that holds the change itself.
//!
//! Counting the write in the same transaction as the change makes the limit exact: a write that commits is
//! counted, one that rolls back is not, and on PostgreSQL an advisory lock per root controller stops two processes
//! from both admitting the last write of the hour.

use std::time::Instant;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::audit::CallAudit;
use super::unit_of_work::{UNIT_ATTEMPTS, UnitOfWork};
use super::{ErrorCode, Service, ServiceError};
use crate::domain::{AuthenticatedActor, Scope};
use crate::store;

/// The operations an agent writes with: one per write tool. Its name is the tool's, as the audit log and the
/// idempotency records store it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WriteOperation {
    /// `publish`.
    Publish,
    /// `submit_experience`.
    SubmitExperience,
    /// `report_usage` (or the retraction of a usage event).
    ReportUsage,
    /// `review` (or the retraction of a review).
    Review,
    /// `rate` (or the retraction of a rating).
    Rate,
}

impl WriteOperation {
    /// Every write operation.
    pub const ALL: [WriteOperation; 5] = [
        WriteOperation::Publish,
        WriteOperation::SubmitExperience,
        WriteOperation::ReportUsage,
        WriteOperation::Review,
        WriteOperation::Rate,
    ];

    /// The tool's name, as stored in the audit log and with idempotency records.
    pub const fn tool_name(self) -> &'static str {
        match self {
            WriteOperation::Publish => "publish",
            WriteOperation::SubmitExperience => "submit_experience",
            WriteOperation::ReportUsage => "report_usage",
            WriteOperation::Review => "review",
            WriteOperation::Rate => "rate",
        }
    }

    /// The operation of the tool with this name.
    pub fn from_tool_name(name: &str) -> Option<WriteOperation> {
        WriteOperation::ALL
            .into_iter()
            .find(|operation| operation.tool_name() == name)
    }
}

/// What the adapter knows about a call, for the audit row written with the change.
#[derive(Debug, Clone)]
pub struct CallMetadata {
    /// The operation called.
    pub operation: WriteOperation,
    /// The arguments as received.
    pub request: Value,
    /// The client's self-reported name.
    pub client_name: Option<String>,
    /// The client's self-reported version.
    pub client_version: Option<String>,
    /// When the call started, for its duration.
    pub started: Instant,
}

impl CallMetadata {
    /// Metadata for a call made from code rather than through a transport (tests, the seeder).
    pub fn internal(operation: WriteOperation, request: Value) -> CallMetadata {
        CallMetadata {
            operation,
            request,
            client_name: Some("interai-internal".to_owned()),
            client_version: Some(env!("CARGO_PKG_VERSION").to_owned()),
            started: Instant::now(),
        }
    }
}

/// A write's result: a one-line summary for the audit log.
pub trait WriteSummary {
    /// One line describing what was written.
    fn summary(&self) -> String;
}

/// Longest accepted idempotency key.
pub const MAX_IDEMPOTENCY_KEY_CHARACTERS: usize = 128;

/// What an idempotency key may look like (a JSON Schema `pattern`): letters, digits, `.`, `_`, `:` and `-`. UUIDs,
/// ULIDs, hex digests and `publish-42` counters fit; e-mail addresses (`@`), URLs (`/`), base64 (`+`, `/`, `=`) and
/// anything with spaces do not. Keys are stored, so a key that fits and still looks like a secret (an AWS key ID, a
/// GitHub token, a card number) is refused by the content scan.
pub const IDEMPOTENCY_KEY_PATTERN: &str = "^[A-Za-z0-9._:-]{1,128}$";

/// An open write, between [`Service::begin_write`] and [`Service::finish_write`].
pub(super) struct OpenWrite {
    /// The unit of work every change of the write goes through.
    pub(super) unit: UnitOfWork,
    request_sha256: String,
}

/// How a write begins: with a stored response to replay, or with an open transaction.
pub(super) enum WriteStart<Outcome> {
    /// The idempotency key was used before with the same request: this is its response.
    Replay(Outcome),
    /// A fresh write.
    Open(Box<OpenWrite>),
}

/// How an attempt ends.
pub(super) enum WriteEnd<Outcome> {
    /// The final result.
    Done(Result<Outcome, ServiceError>),
    /// PostgreSQL aborted the transaction in a way a new attempt can fix.
    Retry,
}

/// Runs one write of a caller: `begin_write`, the body (an expression evaluating to `Result<Outcome, ServiceError>`
/// that changes data only through `$unit`, the unit of work), then `finish_write`, retrying the whole attempt when
/// the database asks for it. A macro rather than a closure, because async closures borrowing the transaction cannot
/// be proven `Send` for every lifetime.
macro_rules! within_write {
    ($service:expr, $caller:expr, $metadata:expr, $idempotency_key:expr, |$unit:ident| $body:block) => {{
        let mut attempt = 0_usize;
        loop {
            attempt += 1;
            let mut open = match $service.begin_write($caller, $metadata, $idempotency_key).await? {
                $crate::service::writes::WriteStart::Replay(outcome) => break Ok(outcome),
                $crate::service::writes::WriteStart::Open(open) => open,
            };
            let result = {
                let $unit = &mut open.unit;
                $body
            };
            match $service
                .finish_write($caller, $metadata, $idempotency_key, open, result, attempt)
                .await
            {
                $crate::service::writes::WriteEnd::Done(result) => break result,
                $crate::service::writes::WriteEnd::Retry => continue,
            }
        }
    }};
}
pub(crate) use within_write;

impl Service {
    /// Fails with `forbidden_scope` unless the caller's key has `scope`.
    pub fn require_scope(&self, caller: &AuthenticatedActor, scope: Scope) -> Result<(), ServiceError> {
        if caller.scopes.contains(scope) {
            Ok(())
        } else {
            Err(ServiceError::new(
                ErrorCode::ForbiddenScope,
                format!("this API key lacks the `{scope}` scope this tool needs"),
            )
            .with_details(json!({ "required_scope": scope.as_str(), "scopes": caller.scopes.names() })))
        }
    }

    /// Opens a write: validates the idempotency key, takes the controller's write lock, answers a retry from its
    /// stored response, and enforces the rate limit.
    pub(super) async fn begin_write<Outcome>(
        &self,
        caller: &AuthenticatedActor,
        metadata: &CallMetadata,
        idempotency_key: Option<&str>,
    ) -> Result<WriteStart<Outcome>, ServiceError>
    where
        Outcome: DeserializeOwned + WriteSummary,
    {
        if let Some(key) = idempotency_key {
            validate_idempotency_key(&self.inner.content_scanner, key)?;
        }
        let request_sha256 = request_fingerprint(&metadata.request);
        let (transaction, window) = store::audit::begin_write_for(
            self.store(),
            &caller.actor.root_controller,
            super::audit::first_minute_of_window(self.now()),
        )
        .await?;
        let mut unit = UnitOfWork::new(transaction);
        if let Some(key) = idempotency_key
            && let Some(record) = store::idempotency::find(&mut unit.conn(), &caller.actor.id, key).await?
        {
            drop(unit);
            return self
                .replay(caller, metadata, record, &request_sha256)
                .await
                .map(WriteStart::Replay);
        }
        let allowance = self.allowance_from(window);
        if allowance.remaining == 0 {
            let retry_after = allowance.retry_after_seconds.unwrap_or(1);
            return Err(ServiceError::new(
                ErrorCode::RateLimited,
                format!(
                    "the write limit of {} per hour for your root controller is reached; retry in {retry_after} s",
                    allowance.writes_per_hour
                ),
            )
            .with_details(json!({ "retry_after": retry_after, "writes_per_hour": allowance.writes_per_hour })));
        }
        Ok(WriteStart::Open(Box::new(OpenWrite { unit, request_sha256 })))
    }

    /// Ends a write: on success stores the idempotency record and the audit row and commits the unit of work; on a
    /// retryable failure asks for another attempt; otherwise rolls back and returns the error.
    pub(super) async fn finish_write<Outcome>(
        &self,
        caller: &AuthenticatedActor,
        metadata: &CallMetadata,
        idempotency_key: Option<&str>,
        open: Box<OpenWrite>,
        result: Result<Outcome, ServiceError>,
        attempt: usize,
    ) -> WriteEnd<Outcome>
    where
        Outcome: Serialize + DeserializeOwned + WriteSummary,
    {
        let OpenWrite {
            mut unit,
            request_sha256,
        } = *open;
        let outcome = match result {
            Ok(outcome) => outcome,
            Err(error) if error.retryable && attempt < UNIT_ATTEMPTS => {
                tracing::debug!(
                    tool = metadata.operation.tool_name(),
                    attempt,
                    "retrying write after a transient database error"
                );
                return WriteEnd::Retry;
            }
            Err(error) => return WriteEnd::Done(Err(error)),
        };
        let stored: Result<(), WriteFailure> = async {
            if let Some(key) = idempotency_key {
                let response = serde_json::to_value(&outcome)
                    .map_err(|error| WriteFailure::Service(ServiceError::internal(error.to_string())))?;
                let record = store::idempotency::IdempotencyRecord {
                    tool: metadata.operation.tool_name().to_owned(),
                    request_sha256: request_sha256.clone(),
                    response,
                    created_at: self.now(),
                };
                store::idempotency::insert(&mut unit.conn(), &caller.actor.id, key, &record)
                    .await
                    .map_err(|error| WriteFailure::from_store(error, true))?;
            }
            let audit = self.audit_record(CallAudit {
                caller,
                tool: metadata.operation.tool_name(),
                is_write: true,
                request: &metadata.request,
                outcome: Ok(outcome.summary()),
                duration: metadata.started.elapsed(),
                client_name: metadata.client_name.clone(),
                client_version: metadata.client_version.clone(),
            });
            store::audit::insert(&mut unit.conn(), &audit)
                .await
                .map_err(|error| WriteFailure::from_store(error, false))?;
            let now = self.now();
            store::audit::count_write(
                &mut unit.conn(),
                &caller.actor.root_controller,
                store::audit::minute_of(now),
                super::audit::first_minute_of_window(now),
            )
            .await
            .map_err(|error| WriteFailure::from_store(error, false))?;
            self.commit_unit(unit)
                .await
                .map_err(|error| WriteFailure::from_store(error, idempotency_key.is_some()))
        }
        .await;
        match stored {
            Ok(()) => {
                self.count_call(super::activity_history::CountedCall::Write);
                WriteEnd::Done(Ok(outcome))
            }
            Err(WriteFailure::Retryable(_)) if attempt < UNIT_ATTEMPTS => WriteEnd::Retry,
            Err(WriteFailure::Retryable(cause)) => WriteEnd::Done(Err(ServiceError::internal(cause))),
            Err(WriteFailure::Service(error)) => WriteEnd::Done(Err(error)),
            Err(WriteFailure::DuplicateIdempotencyKey) => {
                // A concurrent call with the same key committed first: answer as its retry would be answered.
                let key = idempotency_key.unwrap_or_default();
                let found = async {
                    let mut reader = self.store().reader().await?;
                    Ok::<_, ServiceError>(store::idempotency::find(&mut reader.conn(), &caller.actor.id, key).await?)
                }
                .await;
                WriteEnd::Done(match found {
                    Ok(Some(record)) => self.replay(caller, metadata, record, &request_sha256).await,
                    Ok(None) => Err(ServiceError::internal("idempotency record vanished after a conflict")),
                    Err(error) => Err(error),
                })
            }
        }
    }
}

impl Service {
    /// Answers a retry: the stored response if the request is the same, `idempotency_conflict` otherwise.
    /// A replay changes nothing, so it is audited as a read.
    async fn replay<Outcome: DeserializeOwned + WriteSummary>(
        &self,
        caller: &AuthenticatedActor,
        metadata: &CallMetadata,
        record: store::idempotency::IdempotencyRecord,
        request_sha256: &str,
    ) -> Result<Outcome, ServiceError> {
        if record.tool != metadata.operation.tool_name() || record.request_sha256 != request_sha256 {
            return Err(ServiceError::new(
                ErrorCode::IdempotencyConflict,
                "this idempotency key was already used with a different request; use a new key for a new request",
            )
            .with_details(json!({ "first_used_at": record.created_at.to_rfc3339(), "first_tool": record.tool })));
        }
        let outcome: Outcome = serde_json::from_value(record.response)
            .map_err(|error| ServiceError::internal(format!("stored idempotent response is unreadable: {error}")))?;
        self.record_call(CallAudit {
            caller,
            tool: metadata.operation.tool_name(),
            is_write: false,
            request: &metadata.request,
            outcome: Ok(format!("idempotent replay: {}", outcome.summary())),
            duration: metadata.started.elapsed(),
            client_name: metadata.client_name.clone(),
            client_version: metadata.client_version.clone(),
        })
        .await?;
        Ok(outcome)
    }
}

/// Why one attempt at a write did not produce an outcome.
enum WriteFailure {
    /// A rule refused the write, or it failed for good.
    Service(ServiceError),
    /// PostgreSQL aborted the transaction (deadlock or serialization failure); trying again can succeed.
    Retryable(String),
    /// Another call stored the same idempotency key first.
    DuplicateIdempotencyKey,
}

impl WriteFailure {
    fn from_store(error: store::StoreError, may_be_duplicate_key: bool) -> WriteFailure {
        // The store's retry decision comes first: it counts a held-back write of the body that failed on a unique
        // index (a concurrent write created the same row first), which is not the idempotency key's insert.
        if error.is_retryable() {
            WriteFailure::Retryable(error.to_string())
        } else if may_be_duplicate_key && error.is_unique_violation() {
            WriteFailure::DuplicateIdempotencyKey
        } else {
            WriteFailure::Service(ServiceError::from(error))
        }
    }
}

/// Keys are stored with the response, so only a safe alphabet is accepted (see [`IDEMPOTENCY_KEY_PATTERN`]), and a
/// key that still looks like a secret (an AWS key ID, a card number) is `content_rejected` like any other text.
fn validate_idempotency_key(scanner: &super::scan::ContentScanner, key: &str) -> Result<(), ServiceError> {
    let allowed = |byte: u8| byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'_' | b':' | b'-');
    if key.is_empty() || key.len() > MAX_IDEMPOTENCY_KEY_CHARACTERS || !key.bytes().all(allowed) {
        return Err(ServiceError::validation(
            "idempotency_key",
            format!(
                "an idempotency key is 1 to {MAX_IDEMPOTENCY_KEY_CHARACTERS} characters from A-Z, a-z, 0-9, `.`, `_`, `:` \
                 and `-` (a UUID or ULID fits)"
            ),
        ));
    }
    match scanner.scan_text("idempotency_key", key) {
        Some(finding) => Err(ServiceError::content_rejected(&finding)),
        None => Ok(()),
    }
}

/// SHA-256 of the request's canonical JSON (object keys sorted, IDs in their canonical form), without the
/// idempotency key itself.
pub fn request_fingerprint(request: &Value) -> String {
    let mut without_key = request.clone();
    if let Value::Object(fields) = &mut without_key {
        fields.remove("idempotency_key");
        canonicalize_ids(fields);
    }
    let canonical = canonical_json(&without_key).to_string();
    hex::encode(Sha256::digest(canonical.as_bytes()))
}

/// Arguments of the write tools that hold one public ID (`space` holds an ID or a name).
const ID_ARGUMENTS: [&str; 5] = ["target", "revision_of", "retract", "based_on_usage", "space"];
/// Array arguments whose entries are an ID, or objects with an ID under the given key.
const ID_ENTRIES: [(&str, &str); 4] = [
    ("subjects", ""),
    ("sources", "id"),
    ("used", "id"),
    ("relations", "target"),
];

/// Rewrites the IDs of a write's arguments to their canonical form, so that a retry spelling an ID in upper case
/// or with spaces around it is the same request (the write itself reads them the same way). Only the places that
/// hold IDs are touched: a title that happens to look like an ID is text and stays as written.
fn canonicalize_ids(fields: &mut Map<String, Value>) {
    for name in ID_ARGUMENTS {
        if let Some(value) = fields.get_mut(name) {
            canonicalize_id(value);
        }
    }
    for (name, key) in ID_ENTRIES {
        let Some(Value::Array(entries)) = fields.get_mut(name) else {
            continue;
        };
        for entry in entries {
            match entry {
                Value::Object(object) if !key.is_empty() => {
                    if let Some(value) = object.get_mut(key) {
                        canonicalize_id(value);
                    }
                }
                // `subjects` and `sources` also take a bare ID (a source may be a URL, which does not parse).
                Value::String(_) => canonicalize_id(entry),
                _ => {}
            }
        }
    }
}

fn canonicalize_id(value: &mut Value) {
    if let Value::String(text) = value
        && let Ok(id) = crate::domain::PublicId::parse(text.trim())
    {
        *text = id.into_string();
    }
}

fn canonical_json(value: &Value) -> Value {
    match value {
        Value::Object(fields) => {
            let mut names: Vec<&String> = fields.keys().collect();
            names.sort();
            let mut sorted = Map::new();
            for name in names {
                sorted.insert(name.clone(), canonical_json(&fields[name]));
            }
            Value::Object(sorted)
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical_json).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idempotency_keys_come_from_a_safe_alphabet() {
        let scanner = crate::service::scan::ContentScanner::new();
        for key in [
            "550e8400-e29b-41d4-a716-446655440000",
            "01HQ3Z8X9Y7K6M5N4P3Q2R1S0T",
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "publish-1",
            "retry_strategy:v2.1",
            &"k".repeat(MAX_IDEMPOTENCY_KEY_CHARACTERS),
        ] {
            assert_eq!(validate_idempotency_key(&scanner, key), Ok(()), "{key}");
        }
        for key in [
            "",
            "jane.doe@gmail.com",
            "https://acme.io/x",
            "two words",
            "Zq8Kd93jVb1/Lm0Rx7Ty5Nw2Pq4Hs6Jk8Gf0Da3S",
            "schlüssel",
            "tab\there",
            &"k".repeat(MAX_IDEMPOTENCY_KEY_CHARACTERS + 1),
        ] {
            let error = validate_idempotency_key(&scanner, key).expect_err(key);
            assert_eq!(error.code, ErrorCode::ValidationFailed, "{key}");
            assert!(
                !error.message.contains(key) || key.is_empty(),
                "the message does not repeat the key"
            );
        }
    }

    #[test]
    fn idempotency_keys_that_look_like_secrets_are_rejected() {
        let scanner = crate::service::scan::ContentScanner::new();
        for (key, rule) in [
            (["AKIA", "Q3EGTLZ7KRW4WN5B"].concat(), "cloud_access_key"),
            (["ghp_", "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"].concat(), "api_token"),
            (
                [
                    "eyJhbGciOiJIUzI1NiJ9",
                    ".eyJ1c2VyIjoiYWxpY2UiLCJyb2xlIjoiYWRtaW4ifQ",
                    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
                ]
                .concat(),
                "jwt",
            ),
            ("4111-1111-1111-1111".to_owned(), "card_number"),
            ("DE89370400440532013000".to_owned(), "bank_account"),
        ] {
            let error = validate_idempotency_key(&scanner, &key).expect_err(&key);
            assert_eq!(error.code, ErrorCode::ContentRejected, "{key}");
            assert_eq!(error.details["rule"], rule);
            assert!(!error.message.contains(&key));
        }
    }

    #[test]
    fn the_fingerprint_ignores_key_order_and_the_idempotency_key() {
        let first = json!({ "target": "cnt_x", "result": "success", "idempotency_key": "a" });
        let second = json!({ "result": "success", "idempotency_key": "b", "target": "cnt_x" });
        assert_eq!(request_fingerprint(&first), request_fingerprint(&second));
        let different = json!({ "result": "failure", "target": "cnt_x" });
        assert_ne!(request_fingerprint(&first), request_fingerprint(&different));
    }

    #[test]
    fn the_fingerprint_compares_ids_in_their_canonical_form() {
        let id = "cnt_01j9zq3k5m8n2p4r6t8v0w2x4y";
        let upper = id.to_ascii_uppercase();
        let source = "src_01j9zq3k5m8n2p4r6t8v0w2x4y";
        let lower = json!({
            "target": id, "revision_of": id, "subjects": ["ent_01j9zq3k5m8n2p4r6t8v0w2x4y", { "name": "n", "type": "t" }],
            "sources": [source, { "id": source }, "https://example.com/A"], "used": [{ "id": id, "result": "success" }],
            "relations": [{ "type": "corrects", "target": id }], "title": id,
        });
        let mixed = json!({
            "target": upper, "revision_of": format!(" {id} "), "subjects": ["ENT_01J9ZQ3K5M8N2P4R6T8V0W2X4Y", { "name": "n", "type": "t" }],
            "sources": [source.to_ascii_uppercase(), { "id": source.to_ascii_uppercase() }, "https://example.com/A"],
            "used": [{ "id": upper, "result": "success" }], "relations": [{ "type": "corrects", "target": upper }], "title": id,
        });
        assert_eq!(request_fingerprint(&lower), request_fingerprint(&mixed));
        // Text is not an ID, even when it reads like one, and URLs keep their case.
        let title = json!({ "target": id, "title": upper });
        assert_ne!(
            request_fingerprint(&title),
            request_fingerprint(&json!({ "target": id, "title": id }))
        );
        let url = json!({ "sources": ["https://example.com/a"] });
        assert_ne!(
            request_fingerprint(&url),
            request_fingerprint(&json!({ "sources": ["https://example.com/A"] }))
        );
    }
}
