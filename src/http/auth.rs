//! Bearer authentication for the MCP endpoint: API key → actor, placed in the request extensions.
//!
//! rmcp copies the request's `http::request::Parts` (extensions included) into each tool call's context,
//! which is how tools learn the caller. Tools never accept an actor from their arguments.

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::service::{ErrorCode, Service, ServiceError};

/// Authenticates `Authorization: Bearer <key>`; answers 401 with `WWW-Authenticate: Bearer` otherwise.
pub async fn require_bearer_key(State(service): State<Service>, mut request: Request, next: Next) -> Response {
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| {
            let (scheme, token) = value.trim().split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| token.trim().to_owned())
        })
        .unwrap_or_default();
    match service.authenticate(&presented).await {
        Ok(caller) => {
            request.extensions_mut().insert(caller);
            next.run(request).await
        }
        Err(error) => error_response(&error),
    }
}

/// The spec's error body with the matching HTTP status, for failures before a tool runs.
pub fn error_response(error: &ServiceError) -> Response {
    let status = match error.code {
        ErrorCode::Unauthenticated => StatusCode::UNAUTHORIZED,
        ErrorCode::ForbiddenScope => StatusCode::FORBIDDEN,
        ErrorCode::RateLimited => StatusCode::TOO_MANY_REQUESTS,
        ErrorCode::InternalError => StatusCode::INTERNAL_SERVER_ERROR,
        _ => StatusCode::BAD_REQUEST,
    };
    if error.code == ErrorCode::InternalError {
        tracing::error!(cause = error.cause.as_deref().unwrap_or(""), "request failed");
    } else {
        // The request line (http::request_log) already reports the status; the reason is for debugging.
        tracing::debug!(code = error.code.as_str(), "request refused");
    }
    let body = json!({ "error": { "code": error.code.as_str(), "message": error.message, "details": error.details } });
    let mut response = (status, axum::Json(body)).into_response();
    if status == StatusCode::UNAUTHORIZED {
        let challenge = format!(
            "Bearer error=\"invalid_token\", error_description=\"{}\"",
            error.message.replace('"', "'")
        );
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
