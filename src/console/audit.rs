//! The audit page (`/console/audit`): the audit log, newest first, filtered by actor, tool, outcome and time, a page
//! at a time; the same `Service::audit_log` that `GET /admin/audit` and `interai admin audit list` read. A filter
//! that does not parse is shown with its reason above the form, not as an error page.

use askama::Template;
use axum::Form;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde::Deserialize;

use super::actions::{Notice, audited, done, failed_status};
use super::session::{failed_frame, form_session, frame, page_session};
use super::views::TimeView;
use super::{ConsoleState, Frame, page};
use crate::service::ServiceError;
use crate::service::audit::AuditQuery;
use crate::service::validation::positive_duration;

/// The form's fields, as the browser sends them back (empty fields are no filter).
#[derive(Debug, Default, Deserialize)]
pub struct AuditFilters {
    #[serde(default)]
    actor: String,
    #[serde(default)]
    tool: String,
    #[serde(default)]
    outcome: String,
    #[serde(default)]
    from: String,
    #[serde(default)]
    until: String,
    #[serde(default)]
    cursor: String,
    /// The action that sent the browser here (the prune form).
    #[serde(default)]
    done: Option<String>,
}

fn given(text: &str) -> Option<String> {
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

#[derive(Template)]
#[template(path = "console/audit.html")]
struct AuditPageView {
    frame: Frame,
    filters: AuditFilters,
    /// Why the filters were refused, if they were.
    refusal: Option<String>,
    records: Vec<AuditRow>,
    /// The link to the next page (the same filters, the next cursor).
    next_page: Option<String>,
}

/// A record as the page shows it.
struct AuditRow {
    at: TimeView,
    actor: String,
    key: String,
    tool: String,
    outcome: String,
    failed: bool,
    summary: String,
    duration: String,
}

/// `GET /console/audit`.
pub async fn list(
    State(state): State<ConsoleState>,
    Query(filters): Query<AuditFilters>,
    headers: HeaderMap,
) -> Response {
    let session = match page_session(&state, &headers).await {
        Ok(session) => session,
        Err(answer) => return answer,
    };
    let mut frame = frame(&state, &session, "Audit log");
    frame.notice = Notice::done(filters.done.as_deref());
    audit_page(&state, frame, filters, StatusCode::OK).await
}

/// The audit page in `frame` with `status`, for `filters`.
async fn audit_page(state: &ConsoleState, frame: Frame, filters: AuditFilters, status: StatusCode) -> Response {
    let query = AuditQuery {
        actor: given(&filters.actor),
        tool: given(&filters.tool),
        outcome: given(&filters.outcome),
        from: given(&filters.from),
        until: given(&filters.until),
        cursor: given(&filters.cursor),
        limit: None,
    };
    let (records, next_cursor, refusal) = match state.client.service().audit_log(query).await {
        Ok(found) => (found.records, found.next_cursor, None),
        Err(error) if error.code == crate::service::ErrorCode::InternalError => {
            return super::error_page(state, Some(frame), &error);
        }
        Err(error) => (Vec::new(), None, Some(error.message)),
    };
    let next_page = next_cursor.map(|cursor| {
        let pairs = [
            ("actor", filters.actor.as_str()),
            ("tool", filters.tool.as_str()),
            ("outcome", filters.outcome.as_str()),
            ("from", filters.from.as_str()),
            ("until", filters.until.as_str()),
            ("cursor", cursor.as_str()),
        ];
        super::views::link_with_query("/console/audit", &pairs)
    });
    let records = records
        .into_iter()
        .map(|record| AuditRow {
            at: TimeView::of(record.created_at),
            actor: record.actor_id.to_string(),
            key: record.key_id.to_string(),
            failed: record.outcome != "ok",
            tool: record.tool,
            outcome: record.outcome,
            summary: record.result_summary,
            #[allow(clippy::cast_precision_loss)]
            duration: format!("{:.1} ms", record.duration_micros as f64 / 1000.0),
        })
        .collect();
    page(
        status,
        &AuditPageView {
            frame,
            filters,
            refusal,
            records,
            next_page,
        },
    )
}

/// The prune form.
#[derive(Debug, Default, Deserialize)]
pub struct PruneForm {
    #[serde(default)]
    form_token: String,
    /// How old a record must be to go: `30d`, `12h`, `90m`.
    #[serde(default)]
    older_than: String,
}

/// `POST /console/audit/prune` (`interai admin audit prune --older-than 30d`): deletes the records older than the
/// age given, at once (the retention loop does so daily for `INTERAI_AUDIT_RETENTION_DAYS`).
pub async fn prune(State(state): State<ConsoleState>, headers: HeaderMap, Form(form): Form<PruneForm>) -> Response {
    let session = match form_session(&state, &headers, &form.form_token).await {
        Ok(session) => session,
        Err(refusal) => return refusal,
    };
    let older_than = form.older_than.trim().to_owned();
    let pruned = audited(
        &state,
        &session,
        "audit.prune",
        &serde_json::json!({ "older_than": older_than }),
        async {
            let age = positive_duration(&older_than).ok_or_else(|| {
                ServiceError::validation(
                    "older_than",
                    "older_than must be a positive duration such as 30d, 12h or 90m",
                )
            })?;
            state.client.service().prune_audit(age).await
        },
        |pruned| {
            format!(
                "{} records older than {} deleted",
                pruned.deleted,
                pruned.cutoff.to_rfc3339()
            )
        },
    )
    .await;
    match pruned {
        Ok(_) => done("/console/audit", "audit.prune"),
        Err(error) => {
            let frame = failed_frame(&state, &session, "Audit log", &error);
            audit_page(&state, frame, AuditFilters::default(), failed_status(&error)).await
        }
    }
}
