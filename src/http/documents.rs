//! The public documents for agents over HTTP: `/llms.txt`, `/ai.md`, `/SKILL.md` and `/.well-known/inter-ai`,
//! served without authentication.

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::http::HeaderValue;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE, X_CONTENT_TYPE_OPTIONS};
use axum::routing::get;

use crate::documents::{DocumentFacts, PublicDocument, render};

/// How long clients and proxies may cache a document.
const CACHE_POLICY: &str = "public, max-age=300";

/// The routes of the public documents. Each document is rendered once here, since its facts do not change while
/// the instance runs, and served as it is to every request (`GET` and `HEAD`).
pub fn routes(facts: Arc<DocumentFacts>) -> Router {
    let mut router = Router::new();
    for document in PublicDocument::ALL {
        // The manifest names the instance's keys, which live in the database: the federation adapter serves it.
        if document == PublicDocument::Manifest {
            continue;
        }
        let Some(path) = document.path() else {
            continue;
        };
        let body = Bytes::from(render(document, &facts));
        let content_type = HeaderValue::from_static(document.media_type());
        router = router.route(
            path,
            get(move || {
                let body = body.clone();
                let content_type = content_type.clone();
                async move {
                    (
                        [
                            (CONTENT_TYPE, content_type),
                            (CACHE_CONTROL, HeaderValue::from_static(CACHE_POLICY)),
                            (X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")),
                        ],
                        body,
                    )
                }
            }),
        );
    }
    router
}
