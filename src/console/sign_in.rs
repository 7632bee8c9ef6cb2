//! Signing in to the console with an admin-scope API key, and signing out.

use askama::Template;
use axum::Form;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;

use super::session::{cross_site_refusal, form_session, presented_token, removed_cookie, session_cookie};
use super::{ConsoleState, Frame, page};
use crate::service::ErrorCode;

/// The sign-in page.
#[derive(Template)]
#[template(path = "console/sign_in.html")]
struct SignInPage {
    frame: Frame,
    /// Why the admin is asked to sign in again, or why the last try failed.
    notice: Option<String>,
}

/// What the sign-in page's link may say.
#[derive(Debug, Deserialize)]
pub struct SignInQuery {
    /// Set when a session ended (the admin is told why they are asked again).
    ended: Option<String>,
    /// Set after signing out.
    signed_out: Option<String>,
}

/// `GET /console/sign-in`.
pub async fn form(State(state): State<ConsoleState>, Query(query): Query<SignInQuery>) -> Response {
    let notice = if query.signed_out.is_some() {
        Some("You signed out.".to_owned())
    } else if query.ended.is_some() {
        Some(
            "Your session ended (signed out, unused for a while, expired, or its key was revoked). Sign in again."
                .to_owned(),
        )
    } else {
        None
    };
    page(
        StatusCode::OK,
        &SignInPage {
            frame: state.anonymous_frame("Sign in"),
            notice,
        },
    )
}

/// The sign-in form. A field left out is empty, so a form without a key gets the sign-in page's answer for a missing
/// key, not the extractor's plain-text refusal.
#[derive(Deserialize)]
pub struct SignInForm {
    /// The admin-scope API key.
    #[serde(default)]
    api_key: String,
}

/// `POST /console/sign-in`: a key with the admin scope opens a session and goes to the overview; another key gets
/// the form again with the reason (401 for a key that is not valid, 403 for one without the admin scope).
pub async fn sign_in(State(state): State<ConsoleState>, headers: HeaderMap, Form(form): Form<SignInForm>) -> Response {
    if let Some(refusal) = cross_site_refusal(&state, &headers) {
        return refusal;
    }
    match state
        .client
        .service()
        .open_console_session(&form.api_key, state.limits)
        .await
    {
        Ok((_, token)) => {
            let mut response = Redirect::to("/console/").into_response();
            response
                .headers_mut()
                .insert(header::SET_COOKIE, session_cookie(&token, state.secure_cookie));
            response
        }
        Err(error) => {
            let status = super::status_of(error.code);
            if error.code == ErrorCode::InternalError {
                tracing::error!(cause = error.cause.as_deref().unwrap_or(""), "console sign-in failed");
            }
            page(
                status,
                &SignInPage {
                    frame: state.anonymous_frame("Sign in"),
                    notice: Some(error.message),
                },
            )
        }
    }
}

/// The sign-out form (a form without its token is refused as one with a wrong token).
#[derive(Deserialize)]
pub struct SignOutForm {
    /// The session's form token.
    #[serde(default)]
    form_token: String,
}

/// `POST /console/sign-out`: the session ends at once and the cookie is removed.
pub async fn sign_out(
    State(state): State<ConsoleState>,
    headers: HeaderMap,
    Form(form): Form<SignOutForm>,
) -> Response {
    if let Err(refusal) = form_session(&state, &headers, &form.form_token).await {
        return refusal;
    }
    if let Some(token) = presented_token(&headers)
        && let Err(error) = state.client.service().end_console_session(&token).await
    {
        return super::error_page(&state, None, &error);
    }
    let mut response = Redirect::to("/console/sign-in?signed_out=1").into_response();
    response
        .headers_mut()
        .insert(header::SET_COOKIE, removed_cookie(state.secure_cookie));
    response
}
