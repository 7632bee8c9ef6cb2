//! The instance's one log line per HTTP request: method, path, status and duration, and, when known, the client's
//! address, the authenticated actor and the public ID of its API key (never the secret), and the tool an MCP
//! `tools/call` named; at INFO (successful health probes at DEBUG, so that a load balancer polling them does not fill
//! the log). What the call did is in the audit log; libraries' own per-request lines are filtered out (see
//! `instance::init_logging`).
//!
//! The log layer is the outermost but one, so it runs before authentication has found the caller. It puts a
//! [`RequestLogFacts`] slot into the request's extensions before the inner layers run; they fill it
//! ([`record_caller`] from `http::auth` and the admin API's check, [`record_tool`] from the JSON-RPC guard), and the
//! line is written from it once the response is ready. One slot per request, shared with the layers of that request
//! alone: nothing global.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::extract::{ConnectInfo, Request};
use axum::middleware::Next;
use axum::response::Response;

use crate::domain::AuthenticatedActor;

/// What the inner layers learned of a request, for its log line.
#[derive(Debug, Clone, Default)]
pub struct RequestLogFacts {
    inner: Arc<Mutex<Facts>>,
}

#[derive(Debug, Default, Clone)]
struct Facts {
    actor: Option<String>,
    key_id: Option<String>,
    tool: Option<String>,
}

impl RequestLogFacts {
    fn lock(&self) -> std::sync::MutexGuard<'_, Facts> {
        self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Notes the authenticated caller of the request whose extensions are `extensions`: its actor ID and the public ID
/// of the key it used. Does nothing outside a logged request.
pub fn record_caller(extensions: &http::Extensions, caller: &AuthenticatedActor) {
    if let Some(facts) = extensions.get::<RequestLogFacts>() {
        let mut facts = facts.lock();
        facts.actor = Some(caller.actor.id.as_str().to_owned());
        facts.key_id = Some(caller.key_id.as_str().to_owned());
    }
}

/// The most characters of a tool name logged: every tool's name is far shorter, and a name is the caller's text.
const TOOL_NAME_MAX_CHARACTERS: usize = 64;

/// Notes the tool an MCP `tools/call` named. A name that is not a plain identifier (letters, digits, `_`, `-`, `.`) is
/// logged as `invalid`, so that no caller's text of any shape reaches the log.
pub fn record_tool(extensions: &http::Extensions, tool: &str) {
    if let Some(facts) = extensions.get::<RequestLogFacts>() {
        let plain = !tool.is_empty()
            && tool.chars().count() <= TOOL_NAME_MAX_CHARACTERS
            && tool
                .chars()
                .all(|character| character.is_ascii_alphanumeric() || matches!(character, '_' | '-' | '.'));
        facts.lock().tool = Some(if plain { tool.to_owned() } else { "invalid".to_owned() });
    }
}

/// Logs the request once its response head is ready (a streamed body may still be on its way).
pub async fn log_request(mut request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().clone();
    // The path alone: a query string may carry what its sender would not want logged.
    let path = request.uri().path().to_owned();
    // Put there by the accept loop; absent when the router is called in process (tests), and then not logged.
    let client = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(address)| address.to_string());
    let facts = RequestLogFacts::default();
    request.extensions_mut().insert(facts.clone());
    let response = next.run(request).await;
    let status = response.status().as_u16();
    let duration_ms = (started.elapsed().as_secs_f64() * 10_000.0).round() / 10.0;
    let facts = facts.lock().clone();
    let (actor, key_id, tool) = (facts.actor.as_deref(), facts.key_id.as_deref(), facts.tool.as_deref());
    let client = client.as_deref();
    if matches!(path.as_str(), "/healthz" | "/readyz") && response.status().is_success() {
        tracing::debug!(method = %method, path = %path, status, duration_ms, client, "request");
    } else {
        tracing::info!(method = %method, path = %path, status, duration_ms, client, actor, key_id, tool, "request");
    }
    response
}
