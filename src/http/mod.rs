//! The HTTP adapter: the axum router with health checks, the authenticated MCP endpoint and the body cap.

pub mod auth;
pub mod documents;
pub mod health;
pub mod request_log;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::get;

use crate::config::Config;
use crate::service::Service;

/// Builds the instance's router. The MCP endpoint sits behind bearer authentication applied with
/// `route_layer`, so unknown paths still answer 404 rather than 401.
pub fn router(service: Service, config: &Config) -> Router {
    let facts = std::sync::Arc::new(crate::documents::DocumentFacts {
        realm: config.realm.clone(),
        base_url: crate::documents::base_url_for_realm(&config.realm),
        software_version: env!("CARGO_PKG_VERSION").to_owned(),
        writes_per_hour: config.writes_per_hour,
        parameter_hash: service.trust_parameters().parameter_hash(),
    });
    let mcp = crate::mcp::streamable_http_service(service.clone(), config, facts.clone());
    let authenticated = Router::new()
        .nest_service("/mcp", mcp)
        .route_layer(axum::middleware::from_fn_with_state(
            service.clone(),
            auth::require_bearer_key,
        ));
    Router::new()
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(health::readyz))
        .with_state(service)
        .merge(documents::routes(facts))
        .merge(authenticated)
        .layer(DefaultBodyLimit::max(config.max_request_bytes))
        .layer(axum::middleware::from_fn(request_log::log_request))
}
