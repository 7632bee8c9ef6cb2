//! The HTTP adapter: the axum router with health checks, the authenticated MCP endpoint and the body cap.

pub mod admin;
pub mod agent_document_routes;
pub mod auth;
pub mod cors;
pub mod health;
pub mod json_body;
pub mod jsonrpc;
pub mod metrics;
pub mod request_deadline;
pub mod request_head;
pub mod request_log;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::get;

use crate::config::Config;
use crate::metrics::Metrics;
use crate::service::Service;

/// What the federation routes need from the composition root.
pub struct FederationParts {
    /// Signs and sends outgoing requests.
    pub client: crate::apub::client::FederationClient,
}

/// Builds the instance's router. The MCP endpoint's layers apply with `route_layer`, so unknown paths still answer
/// 404 rather than 401. From the outside in: CORS (a browser's preflight carries no key, so it is answered before
/// authentication), bearer authentication (an unauthenticated caller gets 401 whatever its body), the JSON-RPC
/// front guard (a malformed body gets a JSON-RPC error), then rmcp. `/metrics` is described in `http::metrics`; its
/// layer counts every request, whichever route answers it.
pub fn router(service: Service, config: &Config, federation: FederationParts, metrics: Metrics) -> Router {
    let facts = std::sync::Arc::new(crate::agent_documents::DocumentFacts {
        realm: config.realm.clone(),
        base_url: config.public_base_url(),
        software_version: env!("CARGO_PKG_VERSION").to_owned(),
        writes_per_hour: config.writes_per_hour,
        parameter_hash: service.trust_parameters().parameter_hash(),
    });
    let mcp = crate::mcp::streamable_http_service(service.clone(), config, facts.clone());
    let auth_state = auth::AuthState {
        service: service.clone(),
        max_request_bytes: config.max_request_bytes,
    };
    let cors_policy = cors::CorsPolicy::new(crate::mcp::origins_with_ports(&config.allowed_origins));
    let federation_use_cases = federation.client.federation().clone();
    let admin_state = admin::AdminState {
        client: federation.client.clone(),
    };
    let console_state = crate::console::ConsoleState::new(federation.client.clone(), config);
    let apub_state = crate::apub::ApubState {
        client: federation.client,
        facts: facts.clone(),
        inbox_body_cap: config.max_request_bytes.saturating_mul(2),
        peer_limits: std::sync::Arc::new(crate::apub::inbox::PeerLimits::default()),
        metrics: metrics.clone(),
    };
    let authenticated = Router::new()
        .nest_service("/mcp", mcp)
        .route_layer(axum::middleware::from_fn_with_state(
            config.max_request_bytes,
            jsonrpc::guard,
        ))
        .route_layer(axum::middleware::from_fn_with_state(
            auth_state,
            auth::require_bearer_key,
        ))
        .route_layer(axum::middleware::from_fn_with_state(cors_policy, cors::apply));
    let metrics_routes = metrics::routes(federation_use_cases, config.max_request_bytes, metrics.clone());
    let document_routes = agent_document_routes::routes(facts, service.clone());
    Router::new()
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(health::readyz))
        .with_state(service)
        .merge(document_routes)
        .merge(crate::apub::routes(apub_state))
        .merge(admin::routes(admin_state))
        .merge(crate::console::routes(console_state))
        .merge(authenticated)
        .merge(metrics_routes)
        .layer(DefaultBodyLimit::max(config.max_request_bytes))
        .layer(axum::middleware::from_fn_with_state(
            request_deadline::RequestDeadline::from_config(config),
            request_deadline::enforce,
        ))
        .layer(axum::middleware::from_fn(request_head::check_request_head))
        .layer(axum::middleware::from_fn(request_log::log_request))
        .layer(axum::middleware::from_fn_with_state(metrics, metrics::count_request))
}
