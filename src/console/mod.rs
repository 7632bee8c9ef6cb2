//! The web console under `/console/`: server-rendered pages for the people who run the instance, on the same service
//! calls as the admin API and the CLI. Thin: each route reads the request, calls the service, renders a template.
//!
//! Every page is HTML from the binary (askama templates checked at compile time, `templates/console/`) with its
//! stylesheet and script embedded and served under names that carry their hash, so nothing is fetched from another
//! site and a new build never meets a stale cached asset. Reading works without JavaScript; the script only shows
//! times in the reader's time zone. Each response carries a strict `Content-Security-Policy` (no inline script or
//! style), `X-Frame-Options: DENY` and `Referrer-Policy: no-referrer`.
//!
//! Sign-in exchanges an admin-scope API key for a server-side session ([`session`]); each state-changing form carries
//! the session's form token. A request whose body is larger than the instance takes gets a console page saying so
//! (413), before any handler runs.

mod actions;
mod assets;
mod audit;
mod knowledge;
mod overview;
mod peer_actions;
mod peers;
mod people;
mod plots;
mod session;
mod sign_in;
mod spaces;
mod views;

use std::sync::Arc;

use askama::Template;
use axum::Router;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};

use crate::apub::client::FederationClient;
use crate::config::Config;
use crate::service::console_sessions::{ConsoleSession, ConsoleSessionLimits};
use crate::service::{ErrorCode, ServiceError};

pub use assets::Assets;
pub use knowledge::TRUST_PLOT_POINTS;

/// Where the console lives.
pub const CONSOLE_PATH: &str = "/console";

/// The console's state.
#[derive(Clone, Debug)]
pub struct ConsoleState {
    /// The instance's use cases (and federation's, through it).
    pub client: FederationClient,
    /// How long a session lasts.
    pub limits: ConsoleSessionLimits,
    /// Whether the session cookie is marked `Secure` (the instance is reached over HTTPS).
    pub secure_cookie: bool,
    /// The stylesheet and the script, with their hashed names.
    pub assets: Arc<Assets>,
    /// The largest request body the instance takes (`INTERAI_MAX_REQUEST_BYTES`).
    pub max_request_bytes: usize,
}

impl ConsoleState {
    /// The state for an instance with `config`.
    pub fn new(client: FederationClient, config: &Config) -> ConsoleState {
        ConsoleState {
            client,
            limits: ConsoleSessionLimits {
                idle: chrono::TimeDelta::minutes(i64::from(config.console_idle_minutes)),
                absolute: chrono::TimeDelta::hours(i64::from(config.console_session_hours)),
            },
            secure_cookie: config.public_url.scheme() == "https",
            assets: Arc::new(Assets::embedded()),
            max_request_bytes: config.max_request_bytes,
        }
    }
}

/// The console's routes, each answer with the console's security headers.
pub fn routes(state: ConsoleState) -> Router {
    Router::new()
        .route(CONSOLE_PATH, get(|| async { Redirect::to("/console/") }))
        .route("/console/", get(overview::show))
        .route("/console/backup", post(overview::back_up_now))
        .route("/console/peers", get(peers::list))
        .route("/console/peers/look-up", post(peer_actions::look_up))
        .route("/console/peers/add", post(peer_actions::add))
        .route("/console/peers/{realm}", get(peers::show))
        .route("/console/peers/{realm}/{action}", post(peer_actions::act))
        .route("/console/dead-letters/{id}/{action}", post(peer_actions::dead_letter))
        .route("/console/identity/rotate-key", post(peer_actions::rotate_key))
        .route("/console/trust/recompute", post(peer_actions::recompute_trust))
        .route("/console/audit/prune", post(audit::prune))
        .route("/console/people", get(people::show))
        .route("/console/actors", post(people::create_actor))
        .route("/console/keys", post(people::create_key))
        .route("/console/keys/{key_id}/revoke", post(people::revoke_key))
        .route("/console/spaces", get(spaces::list).post(spaces::create))
        .route("/console/knowledge", get(knowledge::search))
        .route("/console/knowledge/{id}", get(knowledge::show))
        .route("/console/knowledge/{id}/delete", post(knowledge::delete))
        .route("/console/audit", get(audit::list))
        .route("/console/sign-in", get(sign_in::form).post(sign_in::sign_in))
        .route("/console/sign-out", post(sign_in::sign_out))
        .route("/console/assets/{name}", get(assets::serve))
        .layer(axum::middleware::from_fn_with_state(state.clone(), body_within_limit))
        .layer(axum::middleware::from_fn(security_headers))
        .with_state(state)
}

/// Reads the request's body up to the instance's limit before any handler runs, so that a form too large to take
/// gets a console page (413, in the console's frame, nothing done) where the form extractor would answer axum's line
/// of plain text. A body within the limit goes on to the handler as it came.
async fn body_within_limit(
    axum::extract::State(state): axum::extract::State<ConsoleState>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let (parts, body) = request.into_parts();
    let declared_too_large = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok())
        .is_some_and(|length| length > u64::try_from(state.max_request_bytes).unwrap_or(u64::MAX));
    let bytes = if declared_too_large {
        None
    } else {
        match read_within(body, state.max_request_bytes).await {
            Ok(bytes) => bytes,
            Err(error) => {
                // A connection that broke or a body that trickled (the request deadline answers 408 for that).
                tracing::info!(error = %error, "a console request's body could not be read");
                let refusal = ServiceError::new(ErrorCode::ValidationFailed, "the request's body could not be read");
                return error_page(&state, None, &refusal);
            }
        }
    };
    match bytes {
        Some(bytes) => {
            next.run(axum::extract::Request::from_parts(parts, axum::body::Body::from(bytes)))
                .await
        }
        None => {
            tracing::info!(path = %parts.uri.path(), limit = state.max_request_bytes, "a console form was too large");
            let session = session::live_session(&state, &parts.headers).await;
            let frame = state.frame("Form too large", session.as_ref());
            status_page(
                StatusCode::PAYLOAD_TOO_LARGE,
                frame,
                &format!(
                    "The form was larger than this instance takes ({} bytes), so nothing was done. Send less text, \
                     or raise INTERAI_MAX_REQUEST_BYTES.",
                    state.max_request_bytes
                ),
            )
        }
    }
}

/// The body, or `None` as soon as it is longer than `limit` bytes.
async fn read_within(body: axum::body::Body, limit: usize) -> Result<Option<axum::body::Bytes>, axum::Error> {
    use futures_util::TryStreamExt;

    let mut chunks = body.into_data_stream();
    let mut read = Vec::new();
    while let Some(chunk) = chunks.try_next().await? {
        if read.len() + chunk.len() > limit {
            return Ok(None);
        }
        read.extend_from_slice(&chunk);
    }
    Ok(Some(read.into()))
}

/// The headers every console answer carries: no script, style, frame or form target from anywhere else, no
/// framing, no referrer, no guessing of types, and (for pages) no caching of what may hold secrets.
async fn security_headers(request: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; form-action 'self'; \
             frame-ancestors 'none'; base-uri 'none'",
        ),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    if !headers.contains_key(header::CACHE_CONTROL) {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    response
}

/// What every page's frame shows: the signed-in admin, the form token of the sign-out button, the assets.
#[derive(Debug, Clone)]
pub struct Frame {
    /// The page's title.
    pub title: String,
    /// The realm.
    pub realm: String,
    /// Who is signed in (`None` on the sign-in page).
    pub signed_in_as: Option<String>,
    /// The session's form token (for the sign-out form).
    pub form_token: String,
    /// The stylesheet's path.
    pub stylesheet: String,
    /// The script's path.
    pub script: String,
    /// What the page says above its content after an action (see [`actions`]).
    pub notice: Option<actions::Notice>,
}

/// A rendered page with `status`, or the error page when the template fails.
fn page(status: StatusCode, template: &impl Template) -> Response {
    match template.render() {
        Ok(html) => (
            status,
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/html; charset=utf-8"),
            )],
            html,
        )
            .into_response(),
        Err(error) => {
            tracing::error!(error = %error, "a console page failed to render");
            (StatusCode::INTERNAL_SERVER_ERROR, "the page failed to render").into_response()
        }
    }
}

/// The error page.
#[derive(Template)]
#[template(path = "console/error.html")]
struct ErrorPage {
    frame: Frame,
    heading: String,
    message: String,
}

/// The status of a console answer that shows an error with this code.
fn status_of(code: ErrorCode) -> StatusCode {
    match code {
        ErrorCode::Unauthenticated => StatusCode::UNAUTHORIZED,
        ErrorCode::ForbiddenScope => StatusCode::FORBIDDEN,
        ErrorCode::NotFound => StatusCode::NOT_FOUND,
        ErrorCode::InternalError => StatusCode::INTERNAL_SERVER_ERROR,
        _ => StatusCode::BAD_REQUEST,
    }
}

/// An error as the console shows it: a page with the error's message and the status of its code.
fn error_page(state: &ConsoleState, frame: Option<Frame>, error: &ServiceError) -> Response {
    let status = status_of(error.code);
    if error.code == ErrorCode::InternalError {
        tracing::error!(cause = error.cause.as_deref().unwrap_or(""), "a console request failed");
    }
    let frame = frame.unwrap_or_else(|| state.anonymous_frame("Error"));
    status_page(status, frame, &error.message)
}

/// The error page with `status`, saying `message` in `frame`.
fn status_page(status: StatusCode, frame: Frame, message: &str) -> Response {
    page(
        status,
        &ErrorPage {
            frame,
            heading: status.canonical_reason().unwrap_or("Error").to_owned(),
            message: message.to_owned(),
        },
    )
}

impl ConsoleState {
    /// The frame of a page shown to someone not signed in.
    fn anonymous_frame(&self, title: &str) -> Frame {
        self.frame(title, None)
    }

    /// The frame of a page titled `title`, for the signed-in `session` if there is one.
    fn frame(&self, title: &str, session: Option<&ConsoleSession>) -> Frame {
        Frame {
            title: title.to_owned(),
            realm: self.client.service().realm().as_str().to_owned(),
            signed_in_as: session.map(|session| {
                let actor = &session.caller.actor;
                format!("{} ({})", actor.display_name, actor.id)
            }),
            form_token: session.map_or_else(String::new, |session| session.form_token.clone()),
            stylesheet: self.assets.stylesheet_path(),
            script: self.assets.script_path(),
            notice: None,
        }
    }
}
