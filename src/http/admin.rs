//! The admin JSON API under `/admin/` (keys with the `admin` scope): every operation of `interai admin` (actors, API
//! keys, the audit log, peers, the federation identity and its rotation, dead letters, spaces, content) and the
//! instance overview, for a dashboard. Thin: each route parses, calls the service, renders. What each answer holds is
//! in [`views`], shared with `interai admin … --json`; the routes are documented in `docs/admin-api.md`.

mod accounts;
mod knowledge;
mod listings;
mod overview;
pub mod views;

use axum::Router;
use axum::extract::{Path, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::json;

use super::json_body::JsonBody;
use crate::apub::client::FederationClient;
use crate::domain::{PeerLevel, Scope};
use crate::service::{ErrorCode, ServiceError};
use views::peer_wire;

/// The admin API's state.
#[derive(Clone, Debug)]
pub struct AdminState {
    /// Outgoing requests (reading a new peer's manifest, delivering at once), and through them the federation and the service.
    pub client: FederationClient,
}

/// The routes, behind [`require_admin`].
pub fn routes(state: AdminState) -> Router {
    Router::new()
        .route("/admin/peers", get(list_peers).post(add_peer))
        .route("/admin/peers/{realm}", get(show_peer).delete(remove_peer))
        .route("/admin/peers/{realm}/approve", post(approve_peer))
        .route("/admin/peers/{realm}/reject", post(reject_peer))
        .route("/admin/peers/{realm}/block", post(block_peer))
        .route("/admin/peers/{realm}/unblock", post(unblock_peer))
        .route("/admin/peers/{realm}/level", post(set_level))
        .route("/admin/peers/{realm}/pin", post(pin_trust).delete(unpin_trust))
        .route("/admin/peers/{realm}/purge", post(purge_peer))
        .route("/admin/federation/trust/recompute", post(recompute_trust))
        .route("/admin/federation/identity", get(identity))
        .route("/admin/federation/dead-letters", get(dead_letters))
        .route(
            "/admin/federation/dead-letters/{id}",
            axum::routing::delete(drop_dead_letter),
        )
        .route("/admin/federation/dead-letters/{id}/replay", post(replay_dead_letter))
        .route("/admin/spaces", get(list_spaces).post(create_space))
        .route("/admin/content/{id}", axum::routing::delete(delete_content))
        .merge(accounts::routes())
        .merge(listings::routes())
        .merge(knowledge::routes())
        .merge(overview::routes())
        .route_layer(axum::middleware::from_fn_with_state(state.clone(), require_admin))
        .with_state(state)
}

/// An error as the admin API answers it: `{ "error": { code, message, details } }` with a matching status.
struct ApiError(ServiceError);

impl From<ServiceError> for ApiError {
    fn from(error: ServiceError) -> ApiError {
        ApiError(error)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = match self.0.code {
            ErrorCode::Unauthenticated => StatusCode::UNAUTHORIZED,
            ErrorCode::ForbiddenScope => StatusCode::FORBIDDEN,
            ErrorCode::NotFound => StatusCode::NOT_FOUND,
            ErrorCode::InternalError => StatusCode::INTERNAL_SERVER_ERROR,
            _ => StatusCode::BAD_REQUEST,
        };
        if self.0.code == ErrorCode::InternalError {
            tracing::error!(cause = self.0.cause.as_deref().unwrap_or(""), "admin request failed");
        }
        let body =
            json!({ "error": { "code": self.0.code.as_str(), "message": self.0.message, "details": self.0.details } });
        (status, axum::Json(body)).into_response()
    }
}

/// Lets a request through only with a bearer key that has the `admin` scope.
async fn require_admin(State(state): State<AdminState>, mut request: Request, next: Next) -> Response {
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| {
            let (scheme, token) = value.trim().split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| token.trim().to_owned())
        })
        .unwrap_or_default();
    match state.client.service().authenticate(&presented).await {
        Ok(caller) if caller.scopes.contains(Scope::Admin) => {
            super::request_log::record_caller(request.extensions(), &caller);
            request.extensions_mut().insert(AdminCaller(caller.clone()));
            next.run(request).await
        }
        Ok(_) => ApiError(ServiceError::new(
            ErrorCode::ForbiddenScope,
            "the admin API needs a key with the admin scope",
        ))
        .into_response(),
        Err(error) => {
            // RFC 6750 §3.1: the challenge names an error only when a token was sent.
            let challenge = if presented.is_empty() {
                "Bearer"
            } else {
                "Bearer error=\"invalid_token\""
            };
            let mut response = ApiError(error).into_response();
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, header::HeaderValue::from_static(challenge));
            response
        }
    }
}

/// The admin key of a request and its actor (who deletes content or creates a space, who reads knowledge).
#[derive(Debug, Clone)]
struct AdminCaller(crate::domain::AuthenticatedActor);

fn level(text: &str) -> Result<PeerLevel, ApiError> {
    PeerLevel::parse(text.trim()).ok_or_else(|| {
        ApiError(ServiceError::validation(
            "level",
            "level must be quarantine, low, standard or high",
        ))
    })
}

async fn list_peers(State(state): State<AdminState>) -> Result<Response, ApiError> {
    Ok(axum::Json(views::peers(state.client.federation()).await?).into_response())
}

async fn show_peer(State(state): State<AdminState>, Path(realm): Path<String>) -> Result<Response, ApiError> {
    Ok(axum::Json(views::peer(state.client.federation(), &realm).await?).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AddPeerBody {
    url: String,
    #[serde(default)]
    level: Option<String>,
    /// Required: the API cannot ask, and a key is never pinned without being compared.
    fingerprint: String,
}

async fn add_peer(
    State(state): State<AdminState>,
    JsonBody(body): JsonBody<AddPeerBody>,
) -> Result<Response, ApiError> {
    let level = body
        .level
        .as_deref()
        .map(level)
        .transpose()?
        .unwrap_or(PeerLevel::Standard);
    let introduction = state.client.look_up_peer(&body.url).await?;
    let view = state
        .client
        .federation()
        .add_compared_peer(&introduction, level, &body.fingerprint)
        .await?;
    deliver_now(&state, &view.peer.realm).await;
    let view = state.client.federation().peer_view(&view.peer.realm).await?;
    Ok((StatusCode::CREATED, axum::Json(peer_wire(view))).into_response())
}

/// Sends what an operation queued for `realm` right away; failures stay queued for the federation loop.
async fn deliver_now(state: &AdminState, realm: &str) {
    if let Err(error) = state.client.deliver_due(8, Some(realm)).await {
        tracing::warn!(peer = realm, error = %error, "immediate delivery failed; the federation loop retries");
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct ApproveBody {
    #[serde(default)]
    level: Option<String>,
    #[serde(default)]
    fingerprint: Option<String>,
}

async fn approve_peer(
    State(state): State<AdminState>,
    Path(realm): Path<String>,
    body: Option<JsonBody<ApproveBody>>,
) -> Result<Response, ApiError> {
    let body = body.map(|JsonBody(body)| body).unwrap_or_default();
    let level = body.level.as_deref().map(level).transpose()?;
    let view = state
        .client
        .federation()
        .approve_peer(&realm, level, body.fingerprint.as_deref())
        .await?;
    deliver_now(&state, &view.peer.realm).await;
    Ok(axum::Json(peer_wire(view)).into_response())
}

async fn reject_peer(State(state): State<AdminState>, Path(realm): Path<String>) -> Result<Response, ApiError> {
    let view = state.client.federation().reject_peer(&realm).await?;
    deliver_now(&state, &view.peer.realm).await;
    Ok(axum::Json(peer_wire(view)).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BlockBody {
    reason: String,
    #[serde(default)]
    until: Option<DateTime<Utc>>,
}

async fn block_peer(
    State(state): State<AdminState>,
    Path(realm): Path<String>,
    JsonBody(body): JsonBody<BlockBody>,
) -> Result<Response, ApiError> {
    let view = state
        .client
        .federation()
        .block_peer(&realm, &body.reason, body.until)
        .await?;
    Ok(axum::Json(peer_wire(view)).into_response())
}

async fn unblock_peer(State(state): State<AdminState>, Path(realm): Path<String>) -> Result<Response, ApiError> {
    Ok(axum::Json(peer_wire(state.client.federation().unblock_peer(&realm).await?)).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LevelBody {
    level: String,
}

async fn set_level(
    State(state): State<AdminState>,
    Path(realm): Path<String>,
    JsonBody(body): JsonBody<LevelBody>,
) -> Result<Response, ApiError> {
    let level = level(&body.level)?;
    Ok(axum::Json(peer_wire(
        state.client.federation().set_peer_level(&realm, level).await?,
    ))
    .into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PinBody {
    trust: f64,
}

async fn pin_trust(
    State(state): State<AdminState>,
    Path(realm): Path<String>,
    JsonBody(body): JsonBody<PinBody>,
) -> Result<Response, ApiError> {
    Ok(axum::Json(peer_wire(
        state.client.federation().pin_peer_trust(&realm, body.trust).await?,
    ))
    .into_response())
}

async fn unpin_trust(State(state): State<AdminState>, Path(realm): Path<String>) -> Result<Response, ApiError> {
    Ok(axum::Json(peer_wire(state.client.federation().unpin_peer_trust(&realm).await?)).into_response())
}

async fn purge_peer(State(state): State<AdminState>, Path(realm): Path<String>) -> Result<Response, ApiError> {
    Ok(axum::Json(views::purge_peer_evidence(state.client.federation(), &realm).await?).into_response())
}

async fn recompute_trust(State(state): State<AdminState>) -> Result<Response, ApiError> {
    Ok(axum::Json(views::recompute_instance_trust(state.client.federation()).await?).into_response())
}

async fn remove_peer(State(state): State<AdminState>, Path(realm): Path<String>) -> Result<Response, ApiError> {
    state.client.federation().remove_peer(&realm).await?;
    deliver_now(&state, &realm).await;
    Ok(StatusCode::NO_CONTENT.into_response())
}

async fn identity(State(state): State<AdminState>) -> Result<Response, ApiError> {
    Ok(axum::Json(views::identity(state.client.federation()).await?).into_response())
}

#[derive(Deserialize)]
struct DeadLetterQuery {
    #[serde(default)]
    peer: Option<String>,
}

async fn dead_letters(
    State(state): State<AdminState>,
    axum::extract::Query(query): axum::extract::Query<DeadLetterQuery>,
) -> Result<Response, ApiError> {
    let answer = views::dead_letters(state.client.federation(), query.peer.as_deref()).await?;
    Ok(axum::Json(answer).into_response())
}

async fn replay_dead_letter(State(state): State<AdminState>, Path(id): Path<String>) -> Result<Response, ApiError> {
    let row = state.client.federation().replay_dead_letter(&id).await?;
    deliver_now(&state, &row.peer_realm).await;
    Ok(axum::Json(views::delivery_wire(&row)).into_response())
}

async fn drop_dead_letter(State(state): State<AdminState>, Path(id): Path<String>) -> Result<Response, ApiError> {
    state.client.federation().drop_dead_letter(&id).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

async fn list_spaces(State(state): State<AdminState>) -> Result<Response, ApiError> {
    Ok(axum::Json(views::spaces(state.client.service()).await?).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SpaceBody {
    name: String,
    visibility: String,
    #[serde(default)]
    description: Option<String>,
}

async fn create_space(
    State(state): State<AdminState>,
    axum::Extension(caller): axum::Extension<AdminCaller>,
    JsonBody(body): JsonBody<SpaceBody>,
) -> Result<Response, ApiError> {
    let visibility = crate::domain::knowledge::SpaceVisibility::parse(body.visibility.trim()).ok_or_else(|| {
        ApiError(ServiceError::validation(
            "visibility",
            "visibility must be federated or local",
        ))
    })?;
    let space = state
        .client
        .service()
        .create_space(
            &caller.0.actor.id,
            crate::service::spaces::NewSpace {
                name: body.name,
                description: body.description,
                visibility,
            },
        )
        .await?;
    Ok((StatusCode::CREATED, axum::Json(views::space_wire(&space))).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DeleteBody {
    reason: String,
}

async fn delete_content(
    State(state): State<AdminState>,
    axum::Extension(caller): axum::Extension<AdminCaller>,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<DeleteBody>,
) -> Result<Response, ApiError> {
    let deletion = state
        .client
        .service()
        .delete_content(&caller.0.actor.id, &id, &body.reason)
        .await?;
    let tombstone = &deletion.tombstone;
    Ok(axum::Json(json!({
        "id": tombstone.content_id.as_str(),
        "deleted": true,
        "already_deleted": deletion.already_deleted,
        "deleted_at": tombstone.deleted_at,
        "deleted_by": tombstone.deleted_by,
        "reason": tombstone.reason,
    }))
    .into_response())
}
