//! The service layer's one error type: a stable spec error code, a safe message, details, and a private cause.

use std::fmt;

use serde_json::{Value, json};

use crate::domain::IdParseError;
use crate::store::StoreError;

/// The error codes of the spec (§10). Every wire reports them as these snake_case strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// Missing, invalid, expired or revoked API key.
    Unauthenticated,
    /// The ID does not exist or is not visible.
    NotFound,
    /// The target is of a kind the tool does not accept.
    InvalidTarget,
    /// Input does not match the schema.
    ValidationFailed,
    /// The reviewer shares a root controller with the author.
    SelfReview,
    /// `revision_of` or `retract` on another actor's record.
    NotAuthor,
    /// The same idempotency key was reused with a different request.
    IdempotencyConflict,
    /// The key lacks the scope the tool needs.
    ForbiddenScope,
    /// The write limit is reached.
    RateLimited,
    /// Secrets, personal data or disallowed content detected.
    ContentRejected,
    /// Unexpected failure; the cause is logged, never returned.
    InternalError,
}

impl ErrorCode {
    /// Every code, in the spec's order.
    pub const ALL: [ErrorCode; 11] = [
        ErrorCode::Unauthenticated,
        ErrorCode::NotFound,
        ErrorCode::InvalidTarget,
        ErrorCode::ValidationFailed,
        ErrorCode::SelfReview,
        ErrorCode::NotAuthor,
        ErrorCode::IdempotencyConflict,
        ErrorCode::ForbiddenScope,
        ErrorCode::RateLimited,
        ErrorCode::ContentRejected,
        ErrorCode::InternalError,
    ];

    /// The wire code.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::Unauthenticated => "unauthenticated",
            ErrorCode::NotFound => "not_found",
            ErrorCode::InvalidTarget => "invalid_target",
            ErrorCode::ValidationFailed => "validation_failed",
            ErrorCode::SelfReview => "self_review",
            ErrorCode::NotAuthor => "not_author",
            ErrorCode::IdempotencyConflict => "idempotency_conflict",
            ErrorCode::ForbiddenScope => "forbidden_scope",
            ErrorCode::RateLimited => "rate_limited",
            ErrorCode::ContentRejected => "content_rejected",
            ErrorCode::InternalError => "internal_error",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// A failed use case. `message` and `details` are safe to show the caller; `cause` is only logged.
#[derive(Debug, Clone, PartialEq)]
pub struct ServiceError {
    /// The spec's error code.
    pub code: ErrorCode,
    /// One sentence for the caller.
    pub message: String,
    /// Structured details for the caller (e.g. the failing field, `retry_after`).
    pub details: Value,
    /// The underlying cause, for the log only.
    pub cause: Option<String>,
    /// Whether the database aborted the work in a way a new attempt can fix (deadlock, serialization failure).
    pub retryable: bool,
}

impl ServiceError {
    /// The error for text the secret and personal-data scan rejected (`content_rejected`): it names the field and
    /// the rule, never the text that matched.
    pub(crate) fn content_rejected(finding: &super::scan::ScanFinding) -> ServiceError {
        ServiceError::new(
            ErrorCode::ContentRejected,
            format!(
                "{} was rejected: it appears to contain {} ({}); remove it and try again",
                finding.field,
                finding.rule.description(),
                finding.rule.as_str()
            ),
        )
        .with_details(json!({ "rule": finding.rule.as_str(), "field": finding.field }))
    }

    /// An error with a code, a message and empty details.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ServiceError {
        ServiceError {
            code,
            message: message.into(),
            details: json!({}),
            cause: None,
            retryable: false,
        }
    }

    /// Adds structured details.
    pub fn with_details(mut self, details: Value) -> ServiceError {
        self.details = details;
        self
    }

    /// `validation_failed` naming the offending field (a JSON pointer or argument name).
    pub fn validation(field: &str, message: impl Into<String>) -> ServiceError {
        ServiceError::new(ErrorCode::ValidationFailed, message).with_details(json!({ "field": field }))
    }

    /// `not_found` for an ID.
    pub fn not_found(id: &str) -> ServiceError {
        ServiceError::new(
            ErrorCode::NotFound,
            "no object with this ID exists or is visible to you",
        )
        .with_details(json!({ "id": id }))
    }

    /// `validation_failed` for a malformed ID in `field`.
    pub fn malformed_id(field: &str, error: &IdParseError) -> ServiceError {
        ServiceError::validation(field, format!("{field}: {error}"))
    }

    /// `validation_failed` with `details.reason = "too_expensive"`: the statement cut-off stopped the request's work
    /// (docs/spec-notes.md explains the choice of code). The cause is logged, not returned.
    pub fn too_expensive(cause: impl Into<String>) -> ServiceError {
        ServiceError {
            code: ErrorCode::ValidationFailed,
            message: "this request was too expensive: it needed more database work than one request may do; narrow it \
                      (fewer filters, a more specific query, a smaller page) instead of repeating it"
                .to_owned(),
            details: json!({ "reason": "too_expensive" }),
            cause: Some(cause.into()),
            retryable: false,
        }
    }

    /// `internal_error` with a cause for the log.
    pub fn internal(cause: impl Into<String>) -> ServiceError {
        ServiceError {
            code: ErrorCode::InternalError,
            message: "an unexpected server error occurred; it has been logged".to_owned(),
            details: json!({}),
            cause: Some(cause.into()),
            retryable: false,
        }
    }
}

impl fmt::Display for ServiceError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ServiceError {}

impl From<StoreError> for ServiceError {
    fn from(error: StoreError) -> ServiceError {
        if error.is_statement_cut_off() {
            return ServiceError::too_expensive(error.to_string());
        }
        let mut converted = ServiceError::internal(error.to_string());
        // A unique violation inside a write means another transaction committed the row this one was about to
        // create (two writers both found a subject, claim or source missing). A new attempt finds and matches it.
        converted.retryable = error.is_retryable() || error.is_unique_violation();
        converted
    }
}
