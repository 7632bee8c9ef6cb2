//! The HTTP side of the instance's metrics: the layer that counts every request by route template and status, and
//! `GET /metrics`, which renders the registry for an API key with the `admin` scope.
//!
//! Who may read: the counts say how busy the instance is, which tools fail and (with federation) which peers it
//! talks to, which is operator knowledge, not public. So `/metrics` takes the same bearer authentication as `/mcp`
//! (401 without a valid key) and wants the `admin` scope (403 otherwise); a scraper is given an admin key of its own
//! (`interai admin key create … --scopes admin`), which it can lose without taking a person's key along.

use axum::Router;
use axum::extract::{Extension, MatchedPath, Request, State};
use axum::http::{HeaderMap, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use super::auth;
use crate::domain::{AuthenticatedActor, Scope};
use crate::metrics::{ExpositionFormat, Metrics};
use crate::service::federation::Federation;

/// Counts the request once its response head is ready, under the template of the route that matched (so
/// `/o/{id}`, not the ID), or `unmatched` for a path no route serves. Applied to the whole router with
/// `Router::layer`, which runs after routing, so the matched path is known here; requests refused by an inner layer
/// (401, 403, 413) are counted under their route too.
///
/// The layer also places the metrics in the request's extensions: rmcp copies them into each tool call's context,
/// which is how the MCP adapter counts tool calls (`mcp::call::run_tool`) without a handle of its own, the same way
/// it learns the caller (`http::auth`).
pub async fn count_request(State(metrics): State<Metrics>, mut request: Request, next: Next) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(|matched| matched.as_str().to_owned());
    request.extensions_mut().insert(metrics.clone());
    let started = std::time::Instant::now();
    let response = next.run(request).await;
    metrics.record_http_duration(route.as_deref(), started.elapsed().as_secs_f64());
    metrics.record_http_request(route.as_deref(), response.status().as_u16());
    response
}

/// What `GET /metrics` needs: the service (scope check) and the registry it renders.
#[derive(Clone)]
struct MetricsEndpoint {
    federation: Federation,
    metrics: Metrics,
}

/// The `/metrics` route, behind bearer authentication.
pub fn routes(federation: Federation, max_request_bytes: usize, metrics: Metrics) -> Router {
    let auth_state = auth::AuthState {
        service: federation.service().clone(),
        max_request_bytes,
    };
    Router::new()
        .route("/metrics", get(render_metrics))
        .with_state(MetricsEndpoint { federation, metrics })
        .route_layer(axum::middleware::from_fn_with_state(
            auth_state,
            auth::require_bearer_key,
        ))
}

/// `GET /metrics`: the registry as OpenMetrics text when the scraper asks for it (`Accept:
/// application/openmetrics-text`, as Prometheus does), as Prometheus text 0.0.4 otherwise; 403 without the `admin`
/// scope.
async fn render_metrics(
    State(endpoint): State<MetricsEndpoint>,
    Extension(caller): Extension<AuthenticatedActor>,
    headers: HeaderMap,
) -> Response {
    if let Err(error) = endpoint.federation.service().require_scope(&caller, Scope::Admin) {
        return auth::error_response(None, &error);
    }
    // The peer gauges are read from the database at each scrape, so every process on it reports the same, and from
    // the one status `peer list` and `/admin/peers` show: a peer's state and what waits for it agree everywhere (a
    // rejected peer has nothing waiting, whatever its old cursor says).
    match endpoint.federation.list_peers().await {
        Ok(views) => {
            let counts: Vec<(&str, i64)> = views.iter().map(|view| (view.state.as_str(), 1)).collect();
            endpoint.metrics.set_peer_counts(&counts);
            let now = endpoint.federation.now();
            let lags: Vec<(String, i64, i64)> = views
                .iter()
                .filter_map(|view| {
                    let lag = view.replication.as_ref()?;
                    let age = lag
                        .oldest_undelivered_at
                        .filter(|_| view.undelivered_events > 0)
                        .map_or(0, |at| (now - at).num_seconds().max(0));
                    Some((view.peer.realm.clone(), view.undelivered_events, age))
                })
                .collect();
            endpoint.metrics.set_replication_lag(&lags);
        }
        Err(error) => tracing::warn!(error = %error, "the peers' status for /metrics could not be read"),
    }
    endpoint.metrics.refresh_process_metrics();
    match endpoint.federation.inbound_queue_depth().await {
        Ok(depth) => endpoint.metrics.set_inbox_queue_depth(depth),
        Err(error) => tracing::warn!(error = %error, "the inbox queue depth for /metrics could not be read"),
    }
    match endpoint.federation.service().last_backup().await {
        Ok(Some(record)) => endpoint.metrics.set_last_backup(
            record.last_success_at.map_or(0, |at| at.timestamp()),
            record.bytes.map_or(0, |bytes| i64::try_from(bytes).unwrap_or(i64::MAX)),
            record.error.is_some(),
        ),
        Ok(None) => {}
        Err(error) => tracing::warn!(error = %error, "the last backup for /metrics could not be read"),
    }
    let accept = headers.get(header::ACCEPT).and_then(|value| value.to_str().ok());
    let format = format_for_accept(accept);
    (
        [(header::CONTENT_TYPE, format.content_type())],
        endpoint.metrics.render_as(format),
    )
        .into_response()
}

/// OpenMetrics when the `Accept` header lists `application/openmetrics-text` with a quality at least as high as
/// its best `text/plain` (or wildcard) range; Prometheus text, which every scraper and `curl` reads, otherwise.
fn format_for_accept(accept: Option<&str>) -> ExpositionFormat {
    let Some(accept) = accept else {
        return ExpositionFormat::PrometheusText;
    };
    let mut openmetrics_quality: f32 = 0.0;
    let mut text_quality: f32 = 0.0;
    for range in accept.split(',') {
        let mut parts = range.split(';');
        let media_type = parts.next().unwrap_or("").trim().to_ascii_lowercase();
        let quality = parts
            .filter_map(|parameter| parameter.trim().split_once('='))
            .find(|(name, _)| name.trim().eq_ignore_ascii_case("q"))
            .and_then(|(_, value)| value.trim().parse::<f32>().ok())
            .unwrap_or(1.0);
        match media_type.as_str() {
            "application/openmetrics-text" => openmetrics_quality = openmetrics_quality.max(quality),
            "text/plain" | "text/*" | "*/*" => text_quality = text_quality.max(quality),
            _ => {}
        }
    }
    if openmetrics_quality > 0.0 && openmetrics_quality >= text_quality {
        ExpositionFormat::OpenMetrics
    } else {
        ExpositionFormat::PrometheusText
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openmetrics_is_served_only_to_scrapers_that_prefer_it() {
        // Prometheus 2.x and 3.x scrape headers.
        assert_eq!(
            format_for_accept(Some(
                "application/openmetrics-text;version=1.0.0;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,\
                 text/plain;version=0.0.4;q=0.3,*/*;q=0.2"
            )),
            ExpositionFormat::OpenMetrics
        );
        assert_eq!(
            format_for_accept(Some(
                "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,\
                 text/plain;version=0.0.4;q=0.3,*/*;q=0.1"
            )),
            ExpositionFormat::OpenMetrics
        );
        assert_eq!(format_for_accept(None), ExpositionFormat::PrometheusText);
        assert_eq!(format_for_accept(Some("*/*")), ExpositionFormat::PrometheusText);
        assert_eq!(
            format_for_accept(Some("text/plain;version=0.0.4")),
            ExpositionFormat::PrometheusText
        );
        assert_eq!(
            format_for_accept(Some("text/plain;q=0.9,application/openmetrics-text;q=0.5")),
            ExpositionFormat::PrometheusText
        );
        assert_eq!(
            format_for_accept(Some("application/openmetrics-text;q=0")),
            ExpositionFormat::PrometheusText
        );
        assert_eq!(
            format_for_accept(Some("Application/OpenMetrics-Text")),
            ExpositionFormat::OpenMetrics
        );
    }
}
