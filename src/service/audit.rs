//! The audit trail of MCP calls and the write rate limit that reads it.
//!
//! Every call is recorded with its outcome. Successful writes are counted per root controller over a
//! sliding hour, so the limit holds across several instance processes sharing one database.

use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use serde_json::{Map, Value};

use super::{ErrorCode, Service, ServiceError};
use crate::domain::{AuthenticatedActor, PublicId};
use crate::store::{self, audit::McpCallRecord};

/// Longest string kept verbatim in an audited request; longer ones are shortened with their length noted.
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
        let record = self.audit_record(audit);
        Ok(store::audit::append_unwritten_call(self.store(), &record).await?)
    }

    pub(super) fn audit_record(&self, audit: CallAudit<'_>) -> McpCallRecord {
        let (outcome, result_summary) = match &audit.outcome {
            Ok(summary) => ("ok".to_owned(), summary.clone()),
            Err(error) => (error.code.as_str().to_owned(), error.message.clone()),
        };
        // A rejected request may hold the very secret that was rejected: keep only its shape.
        let request = if matches!(&audit.outcome, Err(error) if error.code == ErrorCode::ContentRejected) {
            redact_all_values(audit.request)
        } else {
            shorten_long_strings(audit.request)
        };
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
            client_name: audit.client_name,
            client_version: audit.client_version,
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

fn shorten_long_strings(value: &Value) -> Value {
    match value {
        Value::String(text) if text.chars().count() > AUDIT_STRING_LIMIT => {
            let kept: String = text.chars().take(AUDIT_STRING_LIMIT).collect();
            Value::String(format!("{kept}… ({} characters)", text.chars().count()))
        }
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

fn redact_all_values(value: &Value) -> Value {
    match value {
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
