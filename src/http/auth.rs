//! Bearer authentication for the MCP endpoint: API key → actor, placed in the request extensions.
//!
//! rmcp copies the request's `http::request::Parts` (extensions included) into each tool call's context,
//! which is how tools learn the caller. Tools never accept an actor from their arguments.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use serde_json::json;

use super::jsonrpc;
use crate::service::{ErrorCode, Service, ServiceError};

/// What authentication needs: the service, and the body cap for reading a refused request's `id`.
#[derive(Clone)]
pub struct AuthState {
    /// The instance's use cases.
    pub service: Service,
    /// The configured body cap.
    pub max_request_bytes: usize,
}

/// Authenticates `Authorization: Bearer <key>`. A request without a valid key gets 401 with
/// `WWW-Authenticate: Bearer` and a JSON-RPC error body (the request's `id` when it can be read cheaply, see
/// `read_id`); a request with more than one `Authorization` header gets 400, because which of them counts would be
/// a guess.
pub async fn require_bearer_key(State(state): State<AuthState>, mut request: Request, next: Next) -> Response {
    let mut values = request.headers().get_all(header::AUTHORIZATION).iter();
    let first = values.next();
    if values.next().is_some() {
        let error = ServiceError::new(
            ErrorCode::Unauthenticated,
            "the request carries more than one Authorization header: send exactly one",
        )
        .with_details(json!({ "field": "authorization" }));
        let (parts, body) = request.into_parts();
        let id = read_id(&parts.headers, body, state.max_request_bytes).await;
        tracing::info!(
            code = error.code.as_str(),
            "request with several Authorization headers refused"
        );
        return jsonrpc::error_response(StatusCode::BAD_REQUEST, id.as_ref(), jsonrpc::INVALID_REQUEST, &error);
    }
    let presented = first
        .and_then(|value| value.to_str().ok())
        .and_then(|value| {
            let (scheme, token) = value.trim().split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| token.trim().to_owned())
        })
        .unwrap_or_default();
    match state.service.authenticate(&presented).await {
        Ok(caller) => {
            super::request_log::record_caller(request.extensions(), &caller);
            request.extensions_mut().insert(caller);
            next.run(request).await
        }
        Err(error) => {
            let (parts, body) = request.into_parts();
            let id = read_id(&parts.headers, body, state.max_request_bytes).await;
            let sent = if presented.is_empty() {
                Credentials::Absent
            } else {
                Credentials::Refused
            };
            refusal(id.as_ref(), &error, sent)
        }
    }
}

/// Whether a refused request carried a bearer key, which decides what its challenge says (RFC 6750 §3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Credentials {
    /// No bearer key: the challenge names no error, as the RFC asks of a request that lacked authentication.
    Absent,
    /// A key that is not valid (unknown, expired, revoked): `error="invalid_token"`.
    Refused,
}

/// The largest body read for the `id` of a refused request.
const ID_PROBE_MAX_BYTES: u64 = 64 * 1024;
/// How long a refused request's body may take to arrive before the answer goes out with `id: null`.
const ID_PROBE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// The `id` of a refused request, read from a body that announces at most [`ID_PROBE_MAX_BYTES`] and arrives within
/// [`ID_PROBE_TIMEOUT`]: a caller without a key gets no more of the server's time than that (before, the body was
/// not read at all).
async fn read_id(headers: &HeaderMap, body: Body, max_bytes: usize) -> Option<serde_json::Value> {
    let announced: u64 = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse().ok())?;
    if announced > ID_PROBE_MAX_BYTES {
        return None;
    }
    let probe_bytes = max_bytes.min(ID_PROBE_MAX_BYTES as usize);
    tokio::time::timeout(ID_PROBE_TIMEOUT, jsonrpc::read_for_id(body, probe_bytes))
        .await
        .ok()
        .flatten()
}

/// The answer to a request refused before a tool runs: the HTTP status of the spec's code, a JSON-RPC error body
/// whose `data.error` is the spec's error object, and for 401 a `WWW-Authenticate: Bearer` challenge naming
/// `invalid_token` (the caller sent a key that is not valid).
pub fn error_response(id: Option<&serde_json::Value>, error: &ServiceError) -> Response {
    refusal(id, error, Credentials::Refused)
}

/// [`error_response`], with a challenge that names an error only when `credentials` were sent.
fn refusal(id: Option<&serde_json::Value>, error: &ServiceError, credentials: Credentials) -> Response {
    let (status, code) = match error.code {
        ErrorCode::Unauthenticated => (StatusCode::UNAUTHORIZED, jsonrpc::UNAUTHENTICATED),
        ErrorCode::ForbiddenScope => (StatusCode::FORBIDDEN, jsonrpc::INVALID_REQUEST),
        ErrorCode::RateLimited => (StatusCode::TOO_MANY_REQUESTS, jsonrpc::INVALID_REQUEST),
        ErrorCode::InternalError => (StatusCode::INTERNAL_SERVER_ERROR, jsonrpc::INTERNAL_ERROR),
        _ => (StatusCode::BAD_REQUEST, jsonrpc::INVALID_REQUEST),
    };
    if error.code == ErrorCode::InternalError {
        tracing::error!(cause = error.cause.as_deref().unwrap_or(""), "request failed");
    } else {
        // The request line (http::request_log) already reports the status; the reason is for debugging.
        tracing::debug!(code = error.code.as_str(), "request refused");
    }
    let mut response = jsonrpc::error_response(status, id, code, error);
    if status == StatusCode::UNAUTHORIZED {
        let challenge = match credentials {
            Credentials::Absent => "Bearer".to_owned(),
            Credentials::Refused => format!(
                "Bearer error=\"invalid_token\", error_description=\"{}\"",
                error.message.replace('"', "'")
            ),
        };
        if let Ok(value) = HeaderValue::from_str(&challenge) {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, value);
        } else {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
    }
    response
}
