//! The admin API's reads of knowledge, for a person or a dashboard rather than an agent: `POST /admin/search` and
//! `POST /admin/get` take the `search` and `get` tools' arguments as their JSON body and answer the tools' structured
//! output, for a key with the `admin` scope (the tools need `read`). The console's knowledge pages make the same
//! service calls.

use axum::Router;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::post;

use super::{AdminCaller, AdminState, ApiError};
use crate::http::json_body::JsonBody;
use crate::mcp::wire::{GetInput, SearchInput, get_output, search_output};
use crate::mcp::wire_conversion::{get_request, search_request};

/// The routes of this file (behind the admin layer of [`super::routes`]).
pub(super) fn routes() -> Router<AdminState> {
    Router::new()
        .route("/admin/search", post(search_knowledge))
        .route("/admin/get", post(get_object))
}

async fn search_knowledge(
    State(state): State<AdminState>,
    axum::Extension(caller): axum::Extension<AdminCaller>,
    JsonBody(input): JsonBody<SearchInput>,
) -> Result<Response, ApiError> {
    let request = search_request(input)?;
    let results = state.client.service().admin_search(&caller.0, &request).await?;
    Ok(axum::Json(search_output(results)).into_response())
}

async fn get_object(
    State(state): State<AdminState>,
    axum::Extension(caller): axum::Extension<AdminCaller>,
    JsonBody(input): JsonBody<GetInput>,
) -> Result<Response, ApiError> {
    let request = get_request(input)?;
    let view = state.client.service().admin_get(&caller.0, &request).await?;
    Ok(axum::Json(get_output(view)).into_response())
}
