//! The public documents for agents over HTTP: `/llms.txt`, `/ai.md` and `/SKILL.md`, served without
//! authentication (the manifest, which names the instance's keys, is served by the federation adapter).

use std::sync::Arc;

use axum::Router;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE, X_CONTENT_TYPE_OPTIONS};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;

use crate::agent_documents::{DocumentFacts, PublicDocument, render};
use crate::service::Service;

/// How long clients and proxies may cache a document.
const CACHE_POLICY: &str = "public, max-age=300";

/// The routes of the public documents (`GET` and `HEAD`). Each request renders its document afresh: what the
/// documents say of other realms (whether peers share content) changes while the instance runs, and one count of
/// the peers by state is cheap next to the request itself.
pub fn routes(facts: Arc<DocumentFacts>, service: Service) -> Router {
    let mut router = Router::new();
    for document in PublicDocument::ALL {
        // The manifest names the instance's keys, which live in the database: the federation adapter serves it.
        if document == PublicDocument::Manifest {
            continue;
        }
        let Some(path) = document.path() else {
            continue;
        };
        let facts = facts.clone();
        let service = service.clone();
        router = router.route(
            path,
            get(move || {
                let facts = facts.clone();
                let service = service.clone();
                async move { serve(document, &facts, &service).await }
            }),
        );
    }
    router
}

/// One document, rendered with the federation as it is now.
async fn serve(document: PublicDocument, facts: &DocumentFacts, service: &Service) -> Response {
    let federation = match service.federation_summary().await {
        Ok(federation) => federation,
        Err(error) => {
            // A document that cannot say whether peers exist would have to guess; say the instance is not ready.
            tracing::warn!(
                document = document.path().unwrap_or_default(),
                cause = error.cause.as_deref().unwrap_or(""),
                "a public document could not read the peers"
            );
            return (
                StatusCode::SERVICE_UNAVAILABLE,
                axum::Json(
                    json!({ "error": { "code": error.code.as_str(), "message": error.message, "details": {} } }),
                ),
            )
                .into_response();
        }
    };
    (
        [
            (CONTENT_TYPE, HeaderValue::from_static(document.media_type())),
            (CACHE_CONTROL, HeaderValue::from_static(CACHE_POLICY)),
            (X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")),
        ],
        render(document, facts, &federation),
    )
        .into_response()
}
