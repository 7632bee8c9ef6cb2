//! The console's session cookie and the checks of every request: which session it presents (the service decides
//! whether it holds) and, for a form that changes something, that it came from a console page.

use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Redirect, Response};

use super::{ConsoleState, Frame, error_page};
use crate::service::console_sessions::ConsoleSession;
use crate::service::{ErrorCode, ServiceError};

/// The cookie that holds the session's token.
pub const COOKIE_NAME: &str = "interai_console";

/// The session token a request's cookies carry, if any.
pub fn presented_token(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE_NAME)
        .map(|(_, value)| value.trim().to_owned())
        .filter(|value| !value.is_empty())
}

/// The `Set-Cookie` value that gives the browser `token`: sent back only to the console's paths (`Path`), never to
/// a script (`HttpOnly`) nor with a request another site starts (`SameSite=Strict`), and only over HTTPS when the
/// instance is served so (`Secure`). No `Max-Age`: it ends with the browser, and the server ends it sooner.
pub fn session_cookie(token: &str, secure: bool) -> HeaderValue {
    let secure = if secure { "; Secure" } else { "" };
    HeaderValue::from_str(&format!(
        "{COOKIE_NAME}={token}; Path=/console; HttpOnly; SameSite=Strict{secure}"
    ))
    .unwrap_or_else(|_| HeaderValue::from_static("interai_console=; Path=/console; Max-Age=0"))
}

/// The `Set-Cookie` value that removes the session cookie.
pub fn removed_cookie(secure: bool) -> HeaderValue {
    if secure {
        HeaderValue::from_static("interai_console=; Path=/console; HttpOnly; SameSite=Strict; Secure; Max-Age=0")
    } else {
        HeaderValue::from_static("interai_console=; Path=/console; HttpOnly; SameSite=Strict; Max-Age=0")
    }
}

/// Where a request without a session is sent: the sign-in page (which says why when the cookie named a session that
/// `ended`), with the cookie removed.
fn to_sign_in(state: &ConsoleState, ended: bool) -> Response {
    let target = if ended {
        "/console/sign-in?ended=1"
    } else {
        "/console/sign-in"
    };
    let mut response = Redirect::to(target).into_response();
    response
        .headers_mut()
        .insert(header::SET_COOKIE, removed_cookie(state.secure_cookie));
    response
}

/// The session of a page request, or the answer to give instead: no session or an ended one goes to the sign-in
/// page; a key that lost the admin scope gets a 403 page.
pub async fn page_session(state: &ConsoleState, headers: &HeaderMap) -> Result<ConsoleSession, Response> {
    let Some(token) = presented_token(headers) else {
        return Err(to_sign_in(state, false));
    };
    match state.client.service().console_session(&token, state.limits).await {
        Ok(session) => Ok(session),
        Err(error) if error.code == ErrorCode::Unauthenticated => Err(to_sign_in(state, true)),
        Err(error) => Err(error_page(state, None, &error)),
    }
}

/// The live session the request's cookie names, if any (for a page that any visitor may get, in the frame of the
/// signed-in admin when there is one).
pub async fn live_session(state: &ConsoleState, headers: &HeaderMap) -> Option<ConsoleSession> {
    let token = presented_token(headers)?;
    state.client.service().console_session(&token, state.limits).await.ok()
}

/// The session of a form that changes something, or the refusal: without a session the form is refused (403, not a
/// redirect: nothing is done, and the browser is not sent anywhere by a page of another site), as is a form that a
/// page of another site sent (`Sec-Fetch-Site`) or without the session's form token.
pub async fn form_session(
    state: &ConsoleState,
    headers: &HeaderMap,
    presented_form_token: &str,
) -> Result<ConsoleSession, Response> {
    if let Some(refusal) = cross_site_refusal(state, headers) {
        return Err(refusal);
    }
    let forbidden = |message: &str| error_page(state, None, &ServiceError::new(ErrorCode::ForbiddenScope, message));
    let Some(token) = presented_token(headers) else {
        return Err(forbidden("sign in to the console first"));
    };
    let session = match state.client.service().console_session(&token, state.limits).await {
        Ok(session) => session,
        Err(error) if error.code == ErrorCode::Unauthenticated => {
            let mut response = forbidden(&error.message);
            response
                .headers_mut()
                .insert(header::SET_COOKIE, removed_cookie(state.secure_cookie));
            return Err(response);
        }
        Err(error) => return Err(error_page(state, None, &error)),
    };
    if !session.form_token_matches(presented_form_token) {
        return Err(forbidden(
            "the form did not carry this session's form token: reload the page and send it again",
        ));
    }
    Ok(session)
}

/// A 403 for a request a browser says another site started (`Sec-Fetch-Site` other than `same-origin`, or `none` for
/// what the user typed); a request without the header (not a browser, or an old one) is judged by its form token.
pub fn cross_site_refusal(state: &ConsoleState, headers: &HeaderMap) -> Option<Response> {
    let site = headers.get("sec-fetch-site")?.to_str().unwrap_or("cross-site");
    if site == "same-origin" || site == "none" {
        return None;
    }
    Some(error_page(
        state,
        None,
        &ServiceError::new(
            ErrorCode::ForbiddenScope,
            "the console takes forms only from its own pages",
        ),
    ))
}

/// The frame of a page for the signed-in `session`.
pub fn frame(state: &ConsoleState, session: &ConsoleSession, title: &str) -> Frame {
    state.frame(title, Some(session))
}

/// The frame of a page shown again after an action failed: titled `title`, for the signed-in `session`, saying why
/// nothing was done.
pub fn failed_frame(state: &ConsoleState, session: &ConsoleSession, title: &str, error: &ServiceError) -> Frame {
    let mut frame = state.frame(title, Some(session));
    frame.notice = Some(super::actions::Notice::failed(error));
    frame
}
