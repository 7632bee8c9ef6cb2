//! The audit trail of MCP calls and the write rate limit that reads it.
//!
//! Every call is recorded with its outcome. Successful writes are counted per root controller over a
//! sliding hour, so the limit holds across several instance processes sharing one database.
//!
//! Invariant: no secret reaches the audit log. Whatever a call sent, and however early it failed, the row holds
//! only text the content scan passes; what a rule matches is stored as a marker naming the rule (see
//! [`Service::audit_record`]).

use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use serde_json::{Map, Value};

use super::activity_history::CountedCall;
use super::scan::{ContentScanner, ScanRule, redaction_marker};
use super::{ErrorCode, Service, ServiceError};
use crate::domain::{AuthenticatedActor, PublicId};
use crate::store::{self, audit::McpCallRecord};

/// Longest string kept verbatim in an audited request (and client name or version); longer ones are shortened with
/// their length noted.
const AUDIT_STRING_LIMIT: usize = 512;

/// One call to record.
#[derive(Debug, Clone)]
pub struct CallAudit<'a> {
    /// Who called.
    pub caller: &'a AuthenticatedActor,
    /// The tool or operation.
    pub tool: &'a str,
    /// Whether the call is a write (counts against the limit when it succeeds).
    pub is_write: bool,
    /// The structured request as received.
    pub request: &'a Value,
    /// A short result summary, or the error.
    pub outcome: Result<String, &'a ServiceError>,
    /// How long the call took.
    pub duration: Duration,
    /// The client's self-reported name.
    pub client_name: Option<String>,
    /// The client's self-reported version.
    pub client_version: Option<String>,
}

/// The prefix of the tool name an admin's action is audited under (`admin/peer.block`).
pub const ADMIN_ACTION_PREFIX: &str = "admin/";

/// One action an admin took, to record.
#[derive(Debug, Clone)]
pub struct AdminAction<'a> {
    /// The signed-in admin (the key they signed in with).
    pub caller: &'a AuthenticatedActor,
    /// What was done, as `noun.verb` (`peer.block`, `key.revoke`).
    pub action: &'a str,
    /// What the admin asked, as given (secrets never: a form's secret fields are left out by the caller).
    pub request: &'a Value,
    /// A short summary of what was done, or the error.
    pub outcome: Result<String, &'a ServiceError>,
    /// How long the action took.
    pub duration: Duration,
    /// Where it was taken (`interai console`).
    pub surface: &'a str,
}

/// The caller's position against the write limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteAllowance {
    /// Writes allowed per hour.
    pub writes_per_hour: u32,
    /// Writes left in the current sliding hour.
    pub remaining: u32,
    /// Seconds until one more write is allowed, when none remain.
    pub retry_after_seconds: Option<u64>,
}

impl Service {
    /// Records one MCP call that wrote nothing (a read, or a failed call; a successful write records itself inside
    /// its own transaction). Failures to record are logged and reported, never hidden.
    pub async fn record_call(&self, audit: CallAudit<'_>) -> Result<(), ServiceError> {
        self.count_call(if audit.outcome.is_ok() {
            CountedCall::Read
        } else {
            CountedCall::Error
        });
        let record = self.audit_record(audit);
        Ok(store::audit::append_unwritten_call(self.store(), &record).await?)
    }

    /// Records an action an admin took (through the web console): audited like a tool call, under the tool name
    /// `admin/<action>` (so the audit log's tool filter finds one kind, and no agent tool shares the name), with the
    /// signed-in key as the caller and `surface` as the client. It is not counted as a write: the write limit meters
    /// agents, not the people who run the instance.
    pub async fn record_admin_action(&self, action: AdminAction<'_>) -> Result<(), ServiceError> {
        let tool = format!("{ADMIN_ACTION_PREFIX}{}", action.action);
        self.record_call(CallAudit {
            caller: action.caller,
            tool: &tool,
            is_write: false,
            request: action.request,
            outcome: action.outcome,
            duration: action.duration,
            client_name: Some(action.surface.to_owned()),
            client_version: Some(env!("CARGO_PKG_VERSION").to_owned()),
        })
        .await
    }

    /// The row that records a call. Nothing in it may hold text a scan rule matches, whatever the outcome and
    /// whichever check refused the call first: every string, object key and number of the request that a rule
    /// matches is replaced by a marker naming the rule, the summary or error message loses every quotation of
    /// such input (or is withheld when it still holds something a rule matches), and so do the client's name
    /// and version.
    pub(super) fn audit_record(&self, audit: CallAudit<'_>) -> McpCallRecord {
        let scanner = &self.inner.content_scanner;
        let redaction = scanner.redact_json(audit.request);
        let (outcome, reported) = match &audit.outcome {
            Ok(summary) => ("ok".to_owned(), summary.as_str()),
            Err(error) => (error.code.as_str().to_owned(), error.message.as_str()),
        };
        let result_summary = scrubbed_summary(scanner, reported, &redaction.removed);
        // A request rejected for its content may hold the rejected text in a form only the write path's own
        // normalization revealed: keep nothing but its shape and the markers.
        let request = if matches!(&audit.outcome, Err(error) if error.code == ErrorCode::ContentRejected) {
            redact_all_values(&redaction.value)
        } else {
            shorten_long_strings(&redaction.value)
        };
        let client_text = |text: Option<String>| text.map(|text| stored_client_text(scanner, &text));
        McpCallRecord {
            id: self.new_internal_id(),
            actor_id: audit.caller.actor.id.clone(),
            root_controller_id: audit.caller.actor.root_controller.clone(),
            key_id: audit.caller.key_id.clone(),
            tool: audit.tool.to_owned(),
            is_write: audit.is_write,
            request,
            outcome,
            result_summary,
            duration_micros: i64::try_from(audit.duration.as_micros()).unwrap_or(i64::MAX),
            client_name: client_text(audit.client_name),
            client_version: client_text(audit.client_version),
            created_at: self.now(),
        }
    }

    /// How many writes the root controller has left in the sliding hour.
    pub async fn write_allowance(&self, root_controller: &PublicId) -> Result<WriteAllowance, ServiceError> {
        let mut reader = self.store().reader().await?;
        self.write_allowance_on(&mut reader.conn(), root_controller).await
    }

    pub(super) async fn write_allowance_on(
        &self,
        conn: &mut store::Conn<'_>,
        root_controller: &PublicId,
    ) -> Result<WriteAllowance, ServiceError> {
        let window = store::audit::writes_in_window(conn, root_controller, first_minute_of_window(self.now())).await?;
        Ok(self.allowance_from(window))
    }

    /// The allowance left by the writes counted in the window.
    pub(super) fn allowance_from(&self, window: store::audit::WriteWindow) -> WriteAllowance {
        let limit = self.settings().writes_per_hour;
        let used = u32::try_from(window.writes).unwrap_or(u32::MAX);
        let remaining = limit.saturating_sub(used);
        let retry_after_seconds = (remaining == 0).then(|| retry_after(window.oldest_minute, self.now()));
        WriteAllowance {
            writes_per_hour: limit,
            remaining,
            retry_after_seconds,
        }
    }

    /// Recent audited calls of an actor, newest first.
    pub async fn recent_calls(&self, actor_id: &PublicId, limit: u32) -> Result<Vec<McpCallRecord>, ServiceError> {
        let mut reader = self.store().reader().await?;
        Ok(store::audit::recent_for_actor(&mut reader.conn(), actor_id, i64::from(limit)).await?)
    }
}

/// How long the write window is. Writes are counted per minute, and the window holds the current minute and the
/// sixty before it: between an hour and an hour and a minute of writes, never less than an hour.
pub(super) const WINDOW_MINUTES: i64 = 60;

/// The first minute bucket of the window that ends now.
pub(super) fn first_minute_of_window(now: DateTime<Utc>) -> DateTime<Utc> {
    store::audit::minute_of(now) - TimeDelta::minutes(WINDOW_MINUTES)
}

/// Seconds until the writes of the oldest minute in the window leave it (at least one).
fn retry_after(oldest_minute_in_window: Option<DateTime<Utc>>, now: DateTime<Utc>) -> u64 {
    match oldest_minute_in_window {
        Some(oldest) => {
            let frees_at = oldest + TimeDelta::minutes(WINDOW_MINUTES + 1);
            let milliseconds = u64::try_from((frees_at - now).num_milliseconds()).unwrap_or(0);
            milliseconds.div_ceil(1000).max(1)
        }
        None => 1,
    }
}

/// A string of the request as stored: whole up to [`AUDIT_STRING_LIMIT`] characters, otherwise its beginning and
/// its length.
fn shortened(text: &str) -> String {
    let length = text.chars().count();
    if length > AUDIT_STRING_LIMIT {
        let kept: String = text.chars().take(AUDIT_STRING_LIMIT).collect();
        format!("{kept}… ({length} characters)")
    } else {
        text.to_owned()
    }
}

fn shorten_long_strings(value: &Value) -> Value {
    match value {
        Value::String(text) => Value::String(shortened(text)),
        Value::Array(items) => Value::Array(items.iter().map(shorten_long_strings).collect()),
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                .map(|(name, field)| (name.clone(), shorten_long_strings(field)))
                .collect::<Map<String, Value>>(),
        ),
        other => other.clone(),
    }
}

/// Every string becomes `[redacted]`, except the markers of the scan, which say why.
fn redact_all_values(value: &Value) -> Value {
    match value {
        Value::String(text) if ScanRule::ALL.iter().any(|rule| *text == redaction_marker(*rule)) => value.clone(),
        Value::String(_) => Value::String("[redacted]".to_owned()),
        Value::Array(items) => Value::Array(items.iter().map(redact_all_values).collect()),
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                .map(|(name, field)| (name.clone(), redact_all_values(field)))
                .collect::<Map<String, Value>>(),
        ),
        other => other.clone(),
    }
}

/// The client's self-reported name or version as stored: a marker if a rule matches it, else shortened.
fn stored_client_text(scanner: &ContentScanner, text: &str) -> String {
    match scanner.rule_matching(text) {
        Some(rule) => redaction_marker(rule),
        None => shortened(text),
    }
}

/// Shortest run of letters and digits of redacted input whose reappearance withholds a summary: long enough that
/// ordinary words of a message rarely reach it, short enough to catch a key, token or password reworded by a
/// validator (lowercased, escaped as a JSON pointer, cut short).
const ECHOED_RUN_CHARACTERS: usize = 8;

/// A result summary or error message as stored. Messages may quote the input that failed (serde quotes a value of
/// the wrong type, an unknown field or variant; a JSON pointer names the keys on its way), so every quotation of
/// redacted input, as written or escaped, is replaced by its marker. If the text then still contains a run of
/// [`ECHOED_RUN_CHARACTERS`] letters and digits of redacted input (in any case), or anything a rule matches, it is
/// withheld whole: only the rule is kept.
fn scrubbed_summary(scanner: &ContentScanner, text: &str, removed: &[(String, ScanRule)]) -> String {
    let mut scrubbed = text.to_owned();
    for (original, rule) in removed {
        let marker = redaction_marker(*rule);
        for quotation in quotations(original) {
            if !quotation.is_empty() && scrubbed.contains(&quotation) {
                scrubbed = scrubbed.replace(&quotation, &marker);
            }
        }
    }
    let mut without_markers = scrubbed.clone();
    for rule in ScanRule::ALL {
        without_markers = without_markers.replace(&redaction_marker(rule), " ");
    }
    let without_markers = without_markers.to_lowercase();
    let echoed = removed
        .iter()
        .find(|(original, _)| {
            long_runs(original)
                .into_iter()
                .any(|run| without_markers.contains(&run))
        })
        .map(|(_, rule)| *rule);
    match echoed.or_else(|| scanner.rule_matching(&scrubbed)) {
        Some(rule) => format!("[withheld: it repeated input matching the {rule} rule]"),
        None => scrubbed,
    }
}

/// The ways a message may quote `original`: as written, escaped as Rust's `{:?}` does (serde's messages), and
/// escaped as a JSON string.
fn quotations(original: &str) -> Vec<String> {
    let debug = format!("{original:?}");
    let json = serde_json::to_string(original).unwrap_or_default();
    let mut forms = vec![original.to_owned()];
    for quoted in [debug, json] {
        let inner = quoted
            .strip_prefix('"')
            .and_then(|rest| rest.strip_suffix('"'))
            .unwrap_or_default()
            .to_owned();
        if !forms.contains(&inner) {
            forms.push(inner);
        }
    }
    forms
}

/// The runs of at least [`ECHOED_RUN_CHARACTERS`] letters and digits in `text`, lowercased.
fn long_runs(text: &str) -> Vec<String> {
    text.split(|character: char| !character.is_alphanumeric())
        .filter(|run| run.chars().count() >= ECHOED_RUN_CHARACTERS)
        .map(str::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rejected_requests_keep_only_their_shape() {
        let request = json!({ "title": "AKIAIOSFODNN7EXAMPLE", "claims": [{ "text": "secret" }], "limit": 3 });
        assert_eq!(
            redact_all_values(&request),
            json!({ "title": "[redacted]", "claims": [{ "text": "[redacted]" }], "limit": 3 })
        );
    }

    fn token() -> String {
        ["ghp_", "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"].concat()
    }

    fn scrub(message: &str, request: &Value) -> String {
        let scanner = ContentScanner::new();
        let redaction = scanner.redact_json(request);
        scrubbed_summary(&scanner, message, &redaction.removed)
    }

    #[test]
    fn a_message_quoting_redacted_input_keeps_its_marker_instead() {
        let token = token();
        let request = json!({ "limit": token });
        let message =
            format!("the arguments do not match the tool's input schema: invalid type: string {token:?}, expected u32");
        assert_eq!(
            scrub(&message, &request),
            "the arguments do not match the tool's input schema: invalid type: string \"[redacted: api_token]\", expected u32"
        );
        let message = format!("unknown field `{token}`, expected one of `query`, `limit`");
        let request = json!({ token.clone(): 1 });
        assert_eq!(
            scrub(&message, &request),
            "unknown field `[redacted: api_token]`, expected one of `query`, `limit`"
        );
    }

    #[test]
    fn a_message_quoting_escaped_input_loses_it_too() {
        let key = [
            "-----BEGIN RSA ",
            "PRIVATE KEY-----\nMIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi8Q1cVbI0PsGSa0HpZ0EJ2\n",
        ]
        .concat();
        let request = json!({ "claims": key });
        let message = format!("invalid type: string {key:?}, expected a sequence");
        let stored = scrub(&message, &request);
        assert_eq!(
            stored,
            "invalid type: string \"[redacted: private_key]\", expected a sequence"
        );
    }

    #[test]
    fn a_message_repeating_reworded_input_is_withheld() {
        let access_key = ["AKIA", "Q3EGTLZ7KRW4WN5B"].concat();
        let request = json!({ "context": { "region": access_key } });
        // A validator that lowercases what it quotes.
        let message = format!("context: region={} is not allowed", access_key.to_lowercase());
        assert_eq!(
            scrub(&message, &request),
            "[withheld: it repeated input matching the cloud_access_key rule]"
        );
        // A JSON pointer escapes the `/` of a key.
        let url = "postgres://app:Tr0ub4dor&3@db.internal.acme.io/app";
        let request = json!({ "structured_data": { url: 1 } });
        let message = "structured_data/postgres:~1~1app:Tr0ub4dor&3@db.internal.acme.io~1app: not allowed";
        assert!(scrub(message, &request).starts_with("[withheld"));
    }

    #[test]
    fn a_message_with_something_a_rule_matches_is_withheld_even_without_redacted_input() {
        assert_eq!(
            scrub("owner is jane.doe@gmail.com", &json!({})),
            "[withheld: it repeated input matching the email_address rule]"
        );
        assert_eq!(
            scrub("title must be at most 300 characters", &json!({ "title": "x" })),
            "title must be at most 300 characters"
        );
    }

    #[test]
    fn client_names_with_secrets_become_markers() {
        let scanner = ContentScanner::new();
        assert_eq!(
            stored_client_text(&scanner, &format!("agent {}", token())),
            "[redacted: api_token]"
        );
        assert_eq!(stored_client_text(&scanner, "claude-code"), "claude-code");
        assert!(stored_client_text(&scanner, &"x".repeat(2000)).ends_with("(2000 characters)"));
    }

    #[test]
    fn rejected_requests_keep_the_markers_of_the_scan() {
        let scanner = ContentScanner::new();
        let request = json!({ "title": "fine", "body_markdown": format!("token {}", token()) });
        assert_eq!(
            redact_all_values(&scanner.redact_json(&request).value),
            json!({ "title": "[redacted]", "body_markdown": "[redacted: api_token]" })
        );
    }

    #[test]
    fn long_strings_are_shortened_with_their_length() {
        let long = "x".repeat(2000);
        let shortened = shorten_long_strings(&json!({ "body": long }));
        let text = shortened["body"].as_str().expect("string");
        assert!(text.ends_with("(2000 characters)"));
        assert!(text.chars().count() < 600);
    }

    #[test]
    fn retry_after_counts_until_the_oldest_minute_leaves_the_window() {
        let now = DateTime::parse_from_rfc3339("2026-11-29T12:00:30Z")
            .expect("valid")
            .to_utc();
        // The window starts at 11:00; the writes of 11:00 leave it when 12:01 begins.
        let first = first_minute_of_window(now);
        assert_eq!(
            first,
            DateTime::parse_from_rfc3339("2026-11-29T11:00:00Z")
                .expect("valid")
                .to_utc()
        );
        assert_eq!(retry_after(Some(first), now), 30);
        assert_eq!(retry_after(Some(first + TimeDelta::minutes(59)), now), 59 * 60 + 30);
        assert_eq!(retry_after(None, now), 1);
    }
}

/// What `interai admin audit list` and `GET /admin/audit` ask for, as given: every filter optional, checked here.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AuditQuery {
    /// Only this actor's calls (a `usr_`, `org_` or `ai_` ID).
    pub actor: Option<String>,
    /// Only calls of this tool (or operation, such as `resources/read`).
    pub tool: Option<String>,
    /// Only calls with this outcome: `ok` or an error code.
    pub outcome: Option<String>,
    /// Only calls made at or after this RFC 3339 time.
    pub from: Option<String>,
    /// Only calls made before this RFC 3339 time.
    pub until: Option<String>,
    /// The `next_cursor` of the previous page.
    pub cursor: Option<String>,
    /// Records per page (default and bounds in `paging`).
    pub limit: Option<u32>,
}

/// One page of the audit log, newest first.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditPage {
    /// The records.
    pub records: Vec<McpCallRecord>,
    /// Where the next page starts, when there is one.
    pub next_cursor: Option<String>,
}

/// The longest tool name a filter may give.
const MAX_TOOL_FILTER_CHARACTERS: usize = 100;

impl Service {
    /// A page of the audit log: the records the query's filters select, newest first.
    pub async fn audit_log(&self, query: AuditQuery) -> Result<AuditPage, ServiceError> {
        let limit = super::paging::page_size(query.limit)?;
        let (from, until) = super::paging::time_range(query.from.as_deref(), query.until.as_deref())?;
        let tool = super::validation::optional_text("tool", query.tool.as_deref(), MAX_TOOL_FILTER_CHARACTERS)?;
        let outcome = match query.outcome.as_deref().map(str::trim).filter(|text| !text.is_empty()) {
            None => None,
            Some(outcome) if outcome == "ok" || ErrorCode::ALL.iter().any(|code| code.as_str() == outcome) => {
                Some(outcome.to_owned())
            }
            Some(_) => {
                let mut known = vec!["ok"];
                known.extend(ErrorCode::ALL.iter().map(|code| code.as_str()));
                return Err(ServiceError::validation(
                    "outcome",
                    format!("outcome must be ok or an error code: {}", known.join(", ")),
                ));
            }
        };
        let actor_id = match query.actor.as_deref().map(str::trim).filter(|text| !text.is_empty()) {
            None => None,
            Some(actor) => {
                let actor_id = super::validation::parse_id("actor", actor)?;
                // An unknown actor is named rather than answered with an empty page, which would look like silence.
                Some(self.find_actor(&actor_id).await?.id)
            }
        };
        let filter = store::audit::CallFilter {
            actor_id,
            tool,
            outcome,
            from,
            until,
            after: super::paging::decode_cursor(query.cursor.as_deref())?,
        };
        let mut reader = self.store().reader().await?;
        let mut records = store::audit::list_calls(&mut reader.conn(), &filter, i64::from(limit) + 1).await?;
        let more = records.len() > limit as usize;
        records.truncate(limit as usize);
        let next_cursor = if more {
            records
                .last()
                .map(|last| super::paging::encode_cursor(last.created_at, &last.id))
        } else {
            None
        };
        Ok(AuditPage { records, next_cursor })
    }
}
