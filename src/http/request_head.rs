//! Checks of the request head that no route should have to repeat, applied before routing:
//!
//! - more than one `Host` header line is 400 (RFC 9112 §3.2 requires it). Which of the lines counts would be a
//!   guess, and two parts of a deployment guessing differently (a proxy routing by the first, the allow-list checking
//!   the last) is how a request reaches what it should not;
//! - a control character percent-encoded in the path or the query (`%00`, `%1F`, `%7F`) is 400. No ID, realm or
//!   parameter holds one, and PostgreSQL refuses a NUL in a text value outright, so such a request would otherwise
//!   reach a statement and come back as a server error on one backend and as "not found" on the other.
//!
//! Refusals carry the spec's error object (`validation_failed` with `details.field`), as a JSON-RPC error on `/mcp`,
//! where clients read those.

use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::jsonrpc;
use crate::service::{ErrorCode, ServiceError};

/// Lets a request through when its head passes the checks of the module documentation; otherwise answers 400.
pub async fn check_request_head(request: Request, next: Next) -> Response {
    let refusal = if request.headers().get_all(header::HOST).iter().nth(1).is_some() {
        Some((
            "host",
            "the request carries more than one Host header: send exactly one",
        ))
    } else if has_encoded_control_character(request.uri().path()) {
        Some(("path", "the path holds a percent-encoded control character"))
    } else if request.uri().query().is_some_and(has_encoded_control_character) {
        Some(("query", "the query holds a percent-encoded control character"))
    } else {
        None
    };
    let Some((field, message)) = refusal else {
        return next.run(request).await;
    };
    tracing::info!(field, "request refused before routing");
    let error = ServiceError::new(ErrorCode::ValidationFailed, message).with_details(json!({ "field": field }));
    let path = request.uri().path();
    if path == "/mcp" || path.starts_with("/mcp/") {
        return jsonrpc::error_response(StatusCode::BAD_REQUEST, None, jsonrpc::INVALID_REQUEST, &error);
    }
    let body = json!({ "error": { "code": error.code.as_str(), "message": error.message, "details": error.details } });
    (StatusCode::BAD_REQUEST, axum::Json(body)).into_response()
}

/// Whether `text` (a path or query as sent) holds `%XX` for a C0 control character or DEL. Raw control bytes never get
/// this far: hyper refuses them in the request line.
fn has_encoded_control_character(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.windows(3).any(|window| {
        window[0] == b'%'
            && std::str::from_utf8(&window[1..])
                .ok()
                .and_then(|hex| u8::from_str_radix(hex, 16).ok())
                .is_some_and(|byte| byte < 0x20 || byte == 0x7f)
    })
}

#[cfg(test)]
mod tests {
    use super::has_encoded_control_character;

    #[test]
    fn encoded_control_characters_are_found_and_other_escapes_are_not() {
        for text in ["/o/%00", "/a%1fb", "/x%7F", "resource=acct:a%0A@b", "%0d"] {
            assert!(has_encoded_control_character(text), "{text}");
        }
        for text in ["/o/cnt_01", "/a%20b", "%2500", "%2F", "%", "%0", "%zz", "100%"] {
            assert!(!has_encoded_control_character(text), "{text}");
        }
    }
}
