//! The admin API's actors and API keys: `interai admin actor …` and `interai admin key …` over HTTP.

use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;

use super::{AdminState, ApiError, views};
use crate::domain::{ActorType, ScopeSet};
use crate::http::json_body::JsonBody;
use crate::service::ServiceError;
use crate::service::actors::NewActor;
use crate::service::keys::NewApiKey;
use crate::service::validation::parse_id;

/// The routes of this file (behind the admin layer of [`super::routes`]).
pub(super) fn routes() -> Router<AdminState> {
    Router::new()
        .route("/admin/actors", get(list_actors).post(create_actor))
        .route("/admin/actors/{id}", get(show_actor))
        .route("/admin/actors/{id}/keys", get(list_keys).post(create_key))
        .route("/admin/keys/{id}/revoke", post(revoke_key))
}

async fn list_actors(State(state): State<AdminState>) -> Result<Response, ApiError> {
    Ok(axum::Json(views::actors(state.client.service()).await?).into_response())
}

async fn show_actor(State(state): State<AdminState>, Path(id): Path<String>) -> Result<Response, ApiError> {
    Ok(axum::Json(views::actor(state.client.service(), &id).await?).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ActorBody {
    /// `usr`, `org` or `ai`.
    #[serde(rename = "type")]
    actor_type: String,
    display_name: String,
    #[serde(default)]
    controller: Option<String>,
}

async fn create_actor(
    State(state): State<AdminState>,
    JsonBody(body): JsonBody<ActorBody>,
) -> Result<Response, ApiError> {
    let actor_type = ActorType::parse(body.actor_type.trim())
        .ok_or_else(|| ServiceError::validation("type", "type must be usr, org or ai"))?;
    let controller = body
        .controller
        .as_deref()
        .filter(|text| !text.trim().is_empty())
        .map(|text| parse_id("controller", text))
        .transpose()?;
    let actor = state
        .client
        .service()
        .create_actor(NewActor {
            actor_type,
            display_name: body.display_name,
            controller,
        })
        .await?;
    Ok((StatusCode::CREATED, axum::Json(views::actor_wire(&actor))).into_response())
}

async fn list_keys(State(state): State<AdminState>, Path(id): Path<String>) -> Result<Response, ApiError> {
    Ok(axum::Json(views::keys(state.client.service(), &id).await?).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KeyBody {
    /// The scopes; without them, an agent's usual ones (read, publish, usage, review, rate), as the CLI gives.
    #[serde(default)]
    scopes: Option<Vec<String>>,
    /// An RFC 3339 time.
    #[serde(default)]
    expires_at: Option<String>,
    #[serde(default)]
    label: Option<String>,
}

async fn create_key(
    State(state): State<AdminState>,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<KeyBody>,
) -> Result<Response, ApiError> {
    let actor_id = parse_id("actor", &id)?;
    let scopes = match body.scopes {
        None => ScopeSet::agent_default(),
        Some(names) => ScopeSet::parse_list(&names.join(",")).map_err(|unknown| {
            ServiceError::validation(
                "scopes",
                format!(
                    "unknown scope {unknown:?}; known scopes are read, publish, usage, review, rate, moderate, admin"
                ),
            )
        })?,
    };
    let expires_at = crate::service::paging::optional_instant("expires_at", body.expires_at.as_deref())?;
    let service = state.client.service();
    let issued = service
        .create_api_key(NewApiKey {
            actor_id,
            scopes,
            expires_at,
            label: body.label,
        })
        .await?;
    Ok((
        StatusCode::CREATED,
        axum::Json(views::issued_key_wire(&issued, service.now())),
    )
        .into_response())
}

async fn revoke_key(State(state): State<AdminState>, Path(id): Path<String>) -> Result<Response, ApiError> {
    let key_id = parse_id("id", &id)?;
    let service = state.client.service();
    let key = service.revoke_api_key(&key_id).await?;
    Ok(axum::Json(views::key_wire(&key, service.now())).into_response())
}
