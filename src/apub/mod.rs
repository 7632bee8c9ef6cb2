//! The federation adapter: the instance actor and the other federation documents, the inbox, the outbox, and
//! the outgoing signed requests. It converts between the `federation` crate's wire types and the service's
//! transport-neutral ones; business rules stay in `service::federation`.

pub mod client;
pub mod discovery;
pub mod inbox;
pub mod objects;
pub mod peering_messages;
pub mod queued_activity;
pub mod replicate;
pub mod signing_time;

use std::sync::Arc;

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use chrono::{DateTime, Utc};
use federation::protocol::{ACTIVITY_JSON, LD_JSON_ACTIVITYSTREAMS};
use federation::signature::parse_signature;
use serde::Deserialize;
use serde_json::json;

use crate::agent_documents::DocumentFacts;
use crate::domain::PublicId;
use crate::service::federation::admission::{Refusal, SenderPurpose};
use client::FederationClient;
use discovery::InstanceUrls;

/// What the federation routes share.
#[derive(Clone)]
pub struct ApubState {
    /// Outgoing requests, and through them the federation.
    pub client: FederationClient,
    /// The facts the manifest is made of.
    pub facts: Arc<DocumentFacts>,
    /// The inbox's body cap: twice the MCP request cap, so a maximal `publish` with its envelope and proof fits.
    pub inbox_body_cap: usize,
    /// Per-peer rate and concurrency limits.
    pub peer_limits: Arc<inbox::PeerLimits>,
    /// The instance's metrics (inbox requests by outcome and reason).
    pub metrics: crate::metrics::Metrics,
}

impl std::fmt::Debug for ApubState {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("ApubState").finish_non_exhaustive()
    }
}

impl ApubState {
    fn urls(&self) -> InstanceUrls {
        InstanceUrls {
            base: self.client.federation().public_base_url().to_owned(),
        }
    }

    fn record_inbox(&self, verdict: &inbox::InboxVerdict) {
        let outcome = match verdict.outcome {
            "accepted" => crate::metrics::InboxOutcome::Accepted,
            "duplicate" => crate::metrics::InboxOutcome::Duplicate,
            _ => crate::metrics::InboxOutcome::Rejected { reason: verdict.reason },
        };
        self.metrics.record_inbox(outcome);
    }
}

/// RFC 3339 with whole seconds and `Z`, as activities carry times.
pub fn rfc3339(instant: DateTime<Utc>) -> String {
    instant.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// The federation routes.
pub fn routes(state: ApubState) -> Router {
    Router::new()
        .route("/actor", get(instance_actor))
        .route("/o/{id}", get(object))
        .route("/inbox", post(inbox::receive))
        .route("/outbox", get(outbox))
        .route("/.well-known/webfinger", get(webfinger))
        .route("/.well-known/nodeinfo", get(nodeinfo_links))
        .route("/nodeinfo/2.1", get(nodeinfo))
        .route("/.well-known/inter-ai", get(manifest))
        .with_state(state)
}

/// The media type to answer with: JSON-LD with the ActivityStreams profile when the client asked for it,
/// `application/activity+json` otherwise.
fn activity_media_type(headers: &HeaderMap) -> &'static str {
    let accept = headers
        .get(header::ACCEPT)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    if accept.contains("application/ld+json") && !accept.contains("application/activity+json") {
        LD_JSON_ACTIVITYSTREAMS
    } else {
        ACTIVITY_JSON
    }
}

fn json_response(media_type: &'static str, body: &impl serde::Serialize) -> Response {
    match serde_json::to_vec(body) {
        Ok(bytes) => (
            [
                (header::CONTENT_TYPE, HeaderValue::from_static(media_type)),
                (header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=60")),
                (header::VARY, HeaderValue::from_static("Accept")),
            ],
            bytes,
        )
            .into_response(),
        Err(error) => failure(&error.to_string()),
    }
}

fn failure(cause: &str) -> Response {
    tracing::error!(cause, "federation document failed");
    (
        StatusCode::INTERNAL_SERVER_ERROR,
        axum::Json(json!({ "error": "internal_error" })),
    )
        .into_response()
}

fn not_found() -> Response {
    (StatusCode::NOT_FOUND, axum::Json(json!({ "error": "not_found" }))).into_response()
}

async fn instance_actor(State(state): State<ApubState>, headers: HeaderMap) -> Response {
    let federation = state.client.federation();
    let (keys, signing) = match (
        federation.published_instance_keys().await,
        federation.signing_key().await,
    ) {
        (Ok(keys), Ok(signing)) => (keys, signing),
        (Err(error), _) | (_, Err(error)) => return failure(&error.to_string()),
    };
    let actor = discovery::instance_actor(&state.urls(), federation.realm().as_str(), &keys, &signing.key_id);
    json_response(activity_media_type(&headers), &actor)
}

/// `GET /o/{id}`: this realm's actors. Every other ID is 404, whether or not it names something: replicated objects
/// carry `/o/{id}` as their `id`, but they are shared only with peers, signed, through the outbox (an unsigned GET here
/// would hand a federated space's content to anyone, and a local space's must never leave), and a 404 for all of them
/// alike does not tell a stranger which IDs exist.
async fn object(State(state): State<ApubState>, Path(id): Path<String>, headers: HeaderMap) -> Response {
    let Some(public_id) = actor_id(&id) else {
        return not_found();
    };
    match state.client.service().find_actor(&public_id).await {
        Ok(actor) if state.client.federation().realm().is(&actor.origin) => json_response(
            activity_media_type(&headers),
            &discovery::local_actor(&state.urls(), &actor),
        ),
        Ok(_) => not_found(),
        Err(error) if error.code == crate::service::ErrorCode::NotFound => not_found(),
        Err(error) => failure(&error.to_string()),
    }
}

/// The actor ID (`usr_`, `org_`, `ai_`) that `text` is, if it is one; the only IDs `/o/` and WebFinger resolve.
fn actor_id(text: &str) -> Option<PublicId> {
    PublicId::parse(text).ok().filter(|id| id.kind().is_actor())
}

#[derive(Deserialize)]
struct OutboxParameters {
    after: Option<String>,
    limit: Option<i64>,
    snapshot: Option<bool>,
}

#[derive(Deserialize)]
struct WebfingerQuery {
    resource: Option<String>,
}

/// WebFinger, readable by a page on any origin: RFC 7033 §5 asks for `Access-Control-Allow-Origin: *` on every
/// answer (the documents are public, and no credentials are involved).
async fn webfinger(
    state: State<ApubState>,
    query: Result<Query<WebfingerQuery>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let mut response = match query {
        Ok(query) => webfinger_answer(state, query).await,
        Err(rejection) => (
            StatusCode::BAD_REQUEST,
            axum::Json(json!({ "error": format!("the query is not readable: {}", rejection.body_text()) })),
        )
            .into_response(),
    };
    response
        .headers_mut()
        .insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
    response
}

async fn webfinger_answer(State(state): State<ApubState>, Query(query): Query<WebfingerQuery>) -> Response {
    let Some(resource) = query.resource else {
        return (
            StatusCode::BAD_REQUEST,
            axum::Json(json!({ "error": "resource is required" })),
        )
            .into_response();
    };
    let federation = state.client.federation();
    let urls = state.urls();
    let realm = federation.realm().as_str().to_owned();
    if resource == urls.actor() || resource.eq_ignore_ascii_case(&format!("acct:{realm}@{realm}")) {
        return json_response(
            federation::protocol::discovery::JRD_MEDIA_TYPE,
            &discovery::webfinger(&resource, &urls.actor()),
        );
    }
    let Some((user, host)) = resource
        .strip_prefix("acct:")
        .and_then(|account| account.rsplit_once('@'))
    else {
        return not_found();
    };
    if !host.eq_ignore_ascii_case(&realm) {
        return not_found();
    }
    let Some(public_id) = actor_id(user) else {
        return not_found();
    };
    match federation.service().find_actor(&public_id).await {
        Ok(actor) if federation.realm().is(&actor.origin) => json_response(
            federation::protocol::discovery::JRD_MEDIA_TYPE,
            &discovery::webfinger(&resource, &urls.object(actor.id.as_str())),
        ),
        Ok(_) => not_found(),
        Err(error) if error.code == crate::service::ErrorCode::NotFound => not_found(),
        Err(error) => failure(&error.to_string()),
    }
}

async fn nodeinfo_links(State(state): State<ApubState>) -> Response {
    json_response("application/json", &discovery::nodeinfo_links(&state.urls()))
}

async fn nodeinfo(State(state): State<ApubState>) -> Response {
    let federation = state.client.federation();
    let users = match federation.service().list_actors().await {
        Ok(actors) => actors
            .iter()
            .filter(|actor| federation.realm().is(&actor.origin))
            .count(),
        Err(error) => return failure(&error.to_string()),
    };
    json_response(
        federation::protocol::discovery::NODEINFO_21_MEDIA_TYPE,
        &discovery::nodeinfo(&state.facts.software_version, users as u64, federation.realm().as_str()),
    )
}

async fn manifest(State(state): State<ApubState>) -> Response {
    let federation = state.client.federation();
    let keys = match federation.published_instance_keys().await {
        Ok(keys) => keys,
        Err(error) => return failure(&error.to_string()),
    };
    let mut document = crate::agent_documents::manifest(&state.facts);
    match serde_json::to_value(discovery::manifest_federation(&state.urls(), &keys)) {
        Ok(federation) => document["federation"] = federation,
        Err(error) => return failure(&error.to_string()),
    }
    let mut response = json_response("application/json", &document);
    // The same policy as the other public documents (a rotated key is announced to peers by an Update anyway).
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=300"));
    response.headers_mut().remove(header::VARY);
    response
}

/// `GET /outbox`: for signed GETs from peers only (active, or asked by us and about to answer: the admission rule's
/// [`SenderPurpose::OutboxRead`]), checked the way the inbox checks a POST (sender, time, signature, nonce). Without a query: the collection (its head and first pages); with `after` (and `limit`): a page
/// of the history after that position; with `snapshot=true`: a page of the current objects after that object.
/// Every page is filtered to what the peer may see: only federated spaces and their content ever enter it.
async fn outbox(
    State(state): State<ApubState>,
    Query(query): Query<OutboxParameters>,
    request: axum::http::Request<axum::body::Body>,
) -> Response {
    let (parts, _) = request.into_parts();
    let signature = match parse_signature(&parts.headers) {
        Ok(signature) => signature,
        Err(rejection) => {
            return (
                StatusCode::UNAUTHORIZED,
                axum::Json(json!({ "reason": rejection.reason.as_str() })),
            )
                .into_response();
        }
    };
    let federation = state.client.federation();
    // The admission rule, with the inbox's reasons, so that a peer reading them learns what its pushes learn:
    // blocked, not (or no longer) a peer at all, a peering that is not active, or a key outside its window.
    let sender = match federation.admit_key(&signature.key_id, SenderPurpose::OutboxRead).await {
        Ok(Ok(admitted)) => admitted.sender,
        Ok(Err(refusal)) => {
            let (status, reason) = match refusal {
                Refusal::Blocked => (StatusCode::FORBIDDEN, "blocked_sender"),
                Refusal::NotActive(_) | Refusal::FirstContactKey => (StatusCode::FORBIDDEN, "peer_not_active"),
                // (No origin is named in reading the outbox: a key of another realm cannot be its refusal.)
                Refusal::UnknownKey | Refusal::KeyOfAnotherRealm { .. } => (StatusCode::FORBIDDEN, "unknown_sender"),
                Refusal::KeyExpired => (StatusCode::UNAUTHORIZED, "key_expired"),
                Refusal::KeyNotYetValid => (StatusCode::UNAUTHORIZED, "key_not_yet_valid"),
            };
            return (status, axum::Json(json!({ "reason": reason }))).into_response();
        }
        Err(error) => return failure(&error.to_string()),
    };
    let now = federation.now();
    let checks = signature
        .check_time(now.timestamp(), signing_time::TIME_POLICY)
        .and_then(|()| signature.check_coverage(false));
    if let Err(rejection) = checks {
        return (
            StatusCode::UNAUTHORIZED,
            axum::Json(json!({ "reason": rejection.reason.as_str() })),
        )
            .into_response();
    }
    let Some(target) = inbox::target_uri(&state, &parts.uri) else {
        return (
            StatusCode::BAD_REQUEST,
            axum::Json(json!({ "reason": "malformed_target" })),
        )
            .into_response();
    };
    let key = sender.public_key;
    let request_parts = federation::signature::RequestParts {
        method: &parts.method,
        target_uri: &target,
        headers: &parts.headers,
    };
    if let Err(rejection) = signature.verify(&request_parts, &key) {
        return (
            StatusCode::UNAUTHORIZED,
            axum::Json(json!({ "reason": rejection.reason.as_str() })),
        )
            .into_response();
    }
    let expiry = now + chrono::TimeDelta::seconds(signing_time::TIME_POLICY.max_clock_skew * 2);
    match federation
        .record_inbox_nonce(&sender.peer.realm, &signature.nonce, expiry)
        .await
    {
        Ok(true) => {}
        Ok(false) => {
            return (
                StatusCode::UNAUTHORIZED,
                axum::Json(json!({ "reason": "replayed_nonce" })),
            )
                .into_response();
        }
        Err(error) => return failure(&error.to_string()),
    }
    let page = match (query.after, query.snapshot.unwrap_or(false)) {
        (None, false) => replicate::outbox_collection(federation).await,
        (after, snapshot) => {
            let query = replicate::OutboxQuery {
                snapshot,
                after: after.unwrap_or_default(),
                limit: query.limit.unwrap_or(replicate::PULL_PAGE),
            };
            replicate::outbox_page(federation, &sender.peer.realm, &query).await
        }
    };
    let collection = match page {
        Ok(page) => page,
        Err(error) if error.code == crate::service::ErrorCode::ValidationFailed => {
            return (
                StatusCode::BAD_REQUEST,
                axum::Json(json!({ "reason": "malformed_query", "detail": error.message })),
            )
                .into_response();
        }
        Err(error) => return failure(&error.to_string()),
    };
    let mut response = json_response(activity_media_type(&parts.headers), &collection);
    // What a peer may see of the outbox depends on the peer: never cached by anything in between.
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("private, no-store"));
    response
}
