//! What every console action does around its service call: it runs only for a live session whose form carries the
//! session's form token ([`super::session::form_session`]), it is audited with the signed-in key
//! ([`Service::record_admin_action`](crate::service::Service::record_admin_action)), and its result is shown on the
//! page the admin came from: after a success the browser is sent back to that page (`303`, so a reload does not send
//! the form again) with `?done=<action>`, which the page shows as a fixed sentence; after a failure the page is
//! shown at once with the error's message and the status of its code, and nothing was done.
//!
//! The sentence after a success comes from [`done_message`], never from the query: a link cannot make a console page
//! say something of its choosing.

use std::future::Future;
use std::time::Instant;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;
use serde_json::Value;

use super::ConsoleState;
use crate::service::ServiceError;
use crate::service::audit::AdminAction;
use crate::service::console_sessions::ConsoleSession;

/// The client name the audit log shows for an action taken in the console.
pub const CONSOLE_SURFACE: &str = "interai console";

/// What a page says above its content after an action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    /// Whether the action succeeded.
    pub succeeded: bool,
    /// The sentence.
    pub text: String,
}

impl Notice {
    /// The notice of a failed action.
    pub fn failed(error: &ServiceError) -> Notice {
        Notice {
            succeeded: false,
            text: format!("Nothing was done: {}", error.message),
        }
    }

    /// The notice a page shows for `?done=<action>`, if `action` is one the console takes.
    pub fn done(action: Option<&str>) -> Option<Notice> {
        action.and_then(done_message).map(|text| Notice {
            succeeded: true,
            text: text.to_owned(),
        })
    }
}

/// The `done` parameter of a page an action sends the browser back to.
#[derive(Debug, Default, Deserialize)]
pub struct DoneQuery {
    /// The action that succeeded.
    #[serde(default)]
    pub done: Option<String>,
}

/// The sentence a page shows after `action` succeeded.
pub fn done_message(action: &str) -> Option<&'static str> {
    Some(match action {
        "peer.add" => "The peer was added with its key pinned; it is asked to approve this instance.",
        "peer.approve" => "The peer was approved with its key pinned; it is told so.",
        "peer.reject" => "The peer's request was rejected; it is told so.",
        "peer.block" => "The peer is blocked: nothing from it is accepted, nothing is sent to it.",
        "peer.unblock" => "The peer is unblocked.",
        "peer.level" => "The peer's level was changed.",
        "peer.trust_pin" => "The peer's trust was pinned.",
        "peer.trust_unpin" => "The peer's trust pin was removed.",
        "peer.remove" => "The peer was removed, with its keys.",
        "peer.purge" => "Every evidence record the peer originated was deleted, and what it weighed on reassessed.",
        "identity.rotate_key" => {
            "This instance signs with a new key now; every peer is told, with the old key's endorsement."
        }
        "trust.recompute" => "Every peer's effective trust was recomputed.",
        "audit.prune" => "The older audit records were deleted.",
        "backup.start" => {
            "A backup has started in the background; the last backup below shows it when it is made (reload the page)."
        }
        "backup.under_way" => {
            "A backup asked for earlier is still being made; the last backup below shows it when it is made."
        }
        "content.delete" => "The content was deleted; its tombstone goes to the peers it was shared with.",
        "dead_letter.replay" => "The message was queued to be sent again.",
        "dead_letter.drop" => "The message was dropped.",
        "actor.create" => "The actor was created.",
        // Not a redirect's sentence: the page that shows the new key's secret says it.
        "key.create" => "The key was created. Its secret is below, shown this once.",
        "key.revoke" => "The key was revoked: it no longer authenticates anything.",
        "space.create" => "The space was created.",
        _ => return None,
    })
}

/// Runs `work` as the admin of `session` and audits it as `action` with `request` (what the form asked, without
/// secrets) and, after a success, `summary` of the result. A failure to audit is logged, not hidden, and does not
/// undo what was done.
pub async fn audited<T>(
    state: &ConsoleState,
    session: &ConsoleSession,
    action: &str,
    request: &Value,
    work: impl Future<Output = Result<T, ServiceError>>,
    summary: impl FnOnce(&T) -> String,
) -> Result<T, ServiceError> {
    let started = Instant::now();
    let result = work.await;
    let outcome = match &result {
        Ok(value) => Ok(summary(value)),
        Err(error) => Err(error),
    };
    let recorded = state
        .client
        .service()
        .record_admin_action(AdminAction {
            caller: &session.caller,
            action,
            request,
            outcome,
            duration: started.elapsed(),
            surface: CONSOLE_SURFACE,
        })
        .await;
    if let Err(error) = recorded {
        tracing::error!(action, error = %error.message, "a console action could not be audited");
    }
    result
}

/// The answer after `action` succeeded: back to `page` (a console path without a query), which says so.
pub fn done(page: &str, action: &str) -> Response {
    Redirect::to(&format!("{page}?done={action}")).into_response()
}

/// The status of a page shown again after a failed action.
pub fn failed_status(error: &ServiceError) -> StatusCode {
    super::status_of(error.code)
}
