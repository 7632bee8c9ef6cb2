//! The admin API's listings: the audit log (`GET /admin/audit`) and content (`GET /admin/content`), filtered by
//! query parameters and paged with the `next_cursor` each page gives, and a target's trust over time
//! (`GET /admin/trust/{id}/history`).

use axum::Router;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Deserialize;

use super::{AdminState, ApiError, views};
use crate::service::ServiceError;
use crate::service::audit::AuditQuery;
use crate::service::content::ContentQuery;
use crate::service::trust::TrustViewScope;

/// The routes of this file (behind the admin layer of [`super::routes`]).
pub(super) fn routes() -> Router<AdminState> {
    Router::new()
        .route("/admin/audit", get(audit))
        .route("/admin/content", get(content))
        .route("/admin/trust/{id}/history", get(trust_history))
}

/// A query string that names an unknown parameter or cannot be read, in the admin API's error form.
fn query_refused(rejection: QueryRejection) -> ApiError {
    ApiError(ServiceError::validation("query", rejection.body_text()))
}

/// `limit` as given: a whole number, whose bounds the service checks.
fn page_limit(text: Option<&str>) -> Result<Option<u32>, ApiError> {
    match text.map(str::trim).filter(|text| !text.is_empty()) {
        None => Ok(None),
        Some(text) => text.parse::<u32>().map(Some).map_err(|_| {
            ApiError(ServiceError::validation(
                "limit",
                format!(
                    "limit must be a whole number from 1 to {}",
                    crate::service::paging::MAX_PAGE_SIZE
                ),
            ))
        }),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AuditParameters {
    actor: Option<String>,
    tool: Option<String>,
    outcome: Option<String>,
    from: Option<String>,
    until: Option<String>,
    cursor: Option<String>,
    limit: Option<String>,
}

async fn audit(
    State(state): State<AdminState>,
    query: Result<Query<AuditParameters>, QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(parameters) = query.map_err(query_refused)?;
    let query = AuditQuery {
        limit: page_limit(parameters.limit.as_deref())?,
        actor: parameters.actor,
        tool: parameters.tool,
        outcome: parameters.outcome,
        from: parameters.from,
        until: parameters.until,
        cursor: parameters.cursor,
    };
    Ok(axum::Json(views::audit(state.client.service(), query).await?).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ContentParameters {
    space: Option<String>,
    origin: Option<String>,
    status: Option<String>,
    cursor: Option<String>,
    limit: Option<String>,
}

async fn content(
    State(state): State<AdminState>,
    query: Result<Query<ContentParameters>, QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(parameters) = query.map_err(query_refused)?;
    let query = ContentQuery {
        limit: page_limit(parameters.limit.as_deref())?,
        space: parameters.space,
        origin: parameters.origin,
        status: parameters.status,
        cursor: parameters.cursor,
    };
    Ok(axum::Json(views::content(state.client.service(), query).await?).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TrustHistoryParameters {
    from: Option<String>,
    until: Option<String>,
    points: Option<String>,
    trust_view: Option<String>,
}

async fn trust_history(
    State(state): State<AdminState>,
    Path(id): Path<String>,
    query: Result<Query<TrustHistoryParameters>, QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(parameters) = query.map_err(query_refused)?;
    let points = match parameters
        .points
        .as_deref()
        .map(str::trim)
        .filter(|text| !text.is_empty())
    {
        None => None,
        Some(text) => Some(text.parse::<u32>().map_err(|_| {
            ApiError(ServiceError::validation(
                "points",
                format!(
                    "points must be a whole number from 1 to {}",
                    crate::service::trust_history::MAX_TRUST_HISTORY_POINTS
                ),
            ))
        })?),
    };
    let view = TrustViewScope::from_input(
        parameters
            .trust_view
            .as_deref()
            .map(str::trim)
            .filter(|text| !text.is_empty()),
    )?;
    let answer = views::trust_history(
        state.client.service(),
        &id,
        view,
        parameters.from.as_deref(),
        parameters.until.as_deref(),
        points,
    )
    .await?;
    Ok(axum::Json(answer).into_response())
}
