//! The admin API's instance overview (`GET /admin/instance`) and the rotation of the instance's federation key
//! (`POST /admin/federation/identity/rotate`, as `interai admin federation rotate-key`).

use axum::Router;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};

use super::{AdminState, ApiError, views};

/// The routes of this file (behind the admin layer of [`super::routes`]).
pub(super) fn routes() -> Router<AdminState> {
    Router::new()
        .route("/admin/instance", get(instance))
        .route("/admin/federation/identity/rotate", post(rotate_key))
}

async fn instance(State(state): State<AdminState>) -> Result<Response, ApiError> {
    Ok(axum::Json(views::instance(state.client.service()).await?).into_response())
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
