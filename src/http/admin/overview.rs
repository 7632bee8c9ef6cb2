//! The admin API's instance overview (`GET /admin/instance`), the calls' and a peer's lag history the console
//! plots (`GET /admin/activity`, `GET /admin/peers/{realm}/lag`), a backup now (`POST /admin/backups`, as
//! `interai admin backup` into the backup directory), and the rotation of the instance's federation key
//! (`POST /admin/federation/identity/rotate`, as `interai admin federation rotate-key`).

use axum::Router;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use serde::Deserialize;

use super::{AdminState, ApiError, views};
use crate::service::ServiceError;
use crate::service::activity_history::HistoryPeriod;

/// The routes of this file (behind the admin layer of [`super::routes`]).
pub(super) fn routes() -> Router<AdminState> {
    Router::new()
        .route("/admin/instance", get(instance))
        .route("/admin/activity", get(activity))
        .route("/admin/peers/{realm}/lag", get(peer_lag))
        .route("/admin/backups", post(back_up_now))
        .route("/admin/federation/identity/rotate", post(rotate_key))
}

/// Asks the backup loop for a backup now and answers `202 Accepted` at once: a backup takes longer than a request
/// may. `GET /admin/instance` shows it as the last backup when it is made.
async fn back_up_now(State(state): State<AdminState>) -> Response {
    let asked = state.client.service().ask_for_backup();
    tracing::info!(asked = asked.as_str(), "backup asked for through the admin API");
    (
        axum::http::StatusCode::ACCEPTED,
        axum::Json(serde_json::json!({ "backup": asked.as_str() })),
    )
        .into_response()
}

async fn instance(State(state): State<AdminState>) -> Result<Response, ApiError> {
    Ok(axum::Json(views::instance(state.client.service()).await?).into_response())
}

/// The query of the history routes: `period=hour` (the default) or `period=day`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HistoryParameters {
    period: Option<String>,
}

fn history_period(query: Result<Query<HistoryParameters>, QueryRejection>) -> Result<HistoryPeriod, ApiError> {
    let Query(parameters) =
        query.map_err(|rejection| ApiError(ServiceError::validation("query", rejection.body_text())))?;
    match parameters.period.as_deref() {
        None => Ok(HistoryPeriod::LastHour),
        Some(text) => Ok(HistoryPeriod::parse("period", text)?),
    }
}

async fn activity(
    State(state): State<AdminState>,
    query: Result<Query<HistoryParameters>, QueryRejection>,
) -> Result<Response, ApiError> {
    let period = history_period(query)?;
    Ok(axum::Json(views::activity(state.client.service(), period).await?).into_response())
}

async fn peer_lag(
    State(state): State<AdminState>,
    Path(realm): Path<String>,
    query: Result<Query<HistoryParameters>, QueryRejection>,
) -> Result<Response, ApiError> {
    let period = history_period(query)?;
    Ok(axum::Json(views::peer_lag(state.client.federation(), &realm, period).await?).into_response())
}

/// Makes a new signing key endorsed by the current one, announces it to every active peer at once (what fails stays
/// queued for the federation loop), and answers with the identity as it is now.
async fn rotate_key(State(state): State<AdminState>) -> Result<Response, ApiError> {
    let federation = state.client.federation();
    let key = federation.rotate_instance_key().await?;
    tracing::info!(key_id = %key.description.key_id, "instance key rotated through the admin API");
    if let Err(error) = state.client.deliver_due(32, None).await {
        tracing::warn!(error = %error, "announcing the new key at once failed; the federation loop retries");
    }
    Ok(axum::Json(views::identity(federation).await?).into_response())
}
