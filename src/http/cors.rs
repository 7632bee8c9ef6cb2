//! CORS for `/mcp`, so that a web client served from an allowed origin can connect.
//!
//! A browser sends a preflight `OPTIONS` without credentials before a cross-origin POST that carries
//! `Authorization`; behind authentication it would get 401 and the real request would never be sent. So this layer
//! sits in front of authentication: a preflight from an allowed origin is answered here (204) with the methods and
//! headers MCP needs, a preflight from any other origin gets 403. Other requests from an allowed origin go on as
//! usual and their answers (401 included, so the client can read the challenge) carry
//! `Access-Control-Allow-Origin` and expose the headers clients read. Requests without `Origin` are untouched.
//!
//! The allowed origins are the ones rmcp checks the `Origin` header against (`INTERAI_ALLOWED_ORIGINS`), so a
//! browser is never invited to send what the transport would refuse.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::jsonrpc;
use crate::service::ServiceError;

/// The request headers a browser MCP client sends: the bearer key, the media type, and MCP's own headers.
const ALLOWED_HEADERS: &str = "Authorization, Content-Type, Accept, Mcp-Protocol-Version, Mcp-Session-Id, Last-Event-ID, \
Mcp-Method, Mcp-Name";
/// The response headers a browser MCP client reads.
const EXPOSED_HEADERS: &str = "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate";
/// The methods `/mcp` serves: POST alone. The transport's GET (a stream) and DELETE (ending a session) answer 405
/// in stateless mode, and a preflight offering them would invite browsers to send what cannot work.
const ALLOWED_METHODS: &str = "POST";
/// How long a browser may cache a preflight answer, in seconds.
const PREFLIGHT_MAX_AGE_SECONDS: &str = "600";

/// The origins allowed to call `/mcp` from a browser, as `scheme://host:port` (ports spelled out).
#[derive(Debug, Clone)]
pub struct CorsPolicy {
    allowed_origins: Arc<Vec<String>>,
}

impl CorsPolicy {
    /// A policy for origins given as `scheme://host:port`.
    pub fn new(allowed_origins: Vec<String>) -> CorsPolicy {
        CorsPolicy {
            allowed_origins: Arc::new(allowed_origins),
        }
    }

    /// Whether `origin` (as a browser sends it) is one of the allowed origins.
    pub fn allows(&self, origin: &str) -> bool {
        crate::mcp::normalize_origin(origin).is_some_and(|origin| self.allowed_origins.contains(&origin))
    }
}

/// The CORS layer of `/mcp` (see the module documentation).
pub async fn apply(State(policy): State<CorsPolicy>, request: Request, next: Next) -> Response {
    let Some(origin) = request.headers().get(header::ORIGIN).cloned() else {
        return next.run(request).await;
    };
    let allowed = origin.to_str().is_ok_and(|origin| policy.allows(origin));
    let is_preflight =
        request.method() == Method::OPTIONS && request.headers().contains_key(header::ACCESS_CONTROL_REQUEST_METHOD);
    if is_preflight {
        return if allowed {
            preflight_answer(&origin, request.headers())
        } else {
            let error = ServiceError::validation(
                "origin",
                "this origin may not call the MCP endpoint (see INTERAI_ALLOWED_ORIGINS)",
            );
            tracing::info!(origin = ?origin, "CORS preflight from an origin that is not allowed refused");
            jsonrpc::error_response(StatusCode::FORBIDDEN, None, jsonrpc::INVALID_REQUEST, &error)
        };
    }
    let mut response = next.run(request).await;
    if allowed {
        let headers = response.headers_mut();
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        headers.insert(
            header::ACCESS_CONTROL_EXPOSE_HEADERS,
            HeaderValue::from_static(EXPOSED_HEADERS),
        );
        headers.append(header::VARY, HeaderValue::from_static("Origin"));
    }
    response
}

/// 204 with the allowed origin, methods and headers. The headers are MCP's, plus any `Mcp-*` header the browser
/// asks for (the current protocol's `Mcp-Param-*` headers are named after tool parameters, so they cannot be listed
/// in advance).
fn preflight_answer(origin: &HeaderValue, request_headers: &HeaderMap) -> Response {
    let mut allowed_headers = ALLOWED_HEADERS.to_owned();
    let requested = request_headers
        .get(header::ACCESS_CONTROL_REQUEST_HEADERS)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default();
    for name in requested.split(',').map(str::trim) {
        let listed = allowed_headers
            .split(',')
            .any(|allowed| allowed.trim().eq_ignore_ascii_case(name));
        let is_mcp_header = name.len() > 4 && name[..4].eq_ignore_ascii_case("mcp-");
        if is_mcp_header && !listed && name.bytes().all(|byte| byte.is_ascii_alphanumeric() || byte == b'-') {
            allowed_headers.push_str(", ");
            allowed_headers.push_str(name);
        }
    }
    let mut response = StatusCode::NO_CONTENT.into_response();
    let headers = response.headers_mut();
    headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin.clone());
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static(ALLOWED_METHODS),
    );
    if let Ok(value) = HeaderValue::from_str(&allowed_headers) {
        headers.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, value);
    }
    headers.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from_static(PREFLIGHT_MAX_AGE_SECONDS),
    );
    headers.insert(
        header::VARY,
        HeaderValue::from_static("Origin, Access-Control-Request-Method, Access-Control-Request-Headers"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_match_with_their_default_ports_spelled_out() {
        let policy = CorsPolicy::new(vec![
            "https://acme.example:443".to_owned(),
            "http://[::1]:8080".to_owned(),
        ]);
        assert!(policy.allows("https://acme.example"));
        assert!(policy.allows("https://ACME.example:443"));
        assert!(policy.allows("http://[::1]:8080"));
        assert!(!policy.allows("http://acme.example"));
        assert!(!policy.allows("https://acme.example:8443"));
        assert!(!policy.allows("null"));
        assert!(!policy.allows("https://acme.example/path"));
    }
}
