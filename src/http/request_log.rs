//! The instance's one log line per HTTP request: method, path, status and duration, at INFO (successful health
//! probes at DEBUG, so that a load balancer polling them does not fill the log). Which tool a call ran is in the
//! audit log; libraries' own per-request lines are filtered out (see `instance::init_logging`).

use std::time::Instant;

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;

/// Logs the request once its response head is ready (a streamed body may still be on its way).
pub async fn log_request(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().clone();
    // The path alone: a query string may carry what its sender would not want logged.
    let path = request.uri().path().to_owned();
    let response = next.run(request).await;
    let status = response.status().as_u16();
    let duration_ms = (started.elapsed().as_secs_f64() * 10_000.0).round() / 10.0;
    if matches!(path.as_str(), "/healthz" | "/readyz") && response.status().is_success() {
        tracing::debug!(method = %method, path = %path, status, duration_ms, "request");
    } else {
        tracing::info!(method = %method, path = %path, status, duration_ms, "request");
    }
    response
}
