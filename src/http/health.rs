//! Liveness and readiness probes.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;

use crate::service::Service;

/// `GET /healthz`: the process is up and serving HTTP.
pub async fn healthz() -> impl IntoResponse {
    (StatusCode::OK, "ok\n")
}

/// `GET /readyz`: the database answers, so requests can be served.
pub async fn readyz(State(service): State<Service>) -> impl IntoResponse {
    match service.check_ready().await {
        Ok(()) => (StatusCode::OK, "ready\n"),
        Err(error) => {
            tracing::warn!(error = %error, cause = error.cause.as_deref().unwrap_or(""), "readiness check failed");
            (StatusCode::SERVICE_UNAVAILABLE, "database unavailable\n")
        }
    }
}
