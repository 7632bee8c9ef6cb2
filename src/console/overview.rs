//! The overview page (`/console/`): the realm, what it holds, its peers by state, each background loop of this
//! process and the last backup (the same overview `GET /admin/instance` answers), and the calls, writes and errors
//! of the last hour and day as plots with their numbers (`GET /admin/activity`); and "Back up now"
//! (`POST /admin/backups`).

use askama::Template;
use axum::extract::{Form, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::json;

use super::actions::{DoneQuery, Notice, audited, done};
use super::peer_actions::TokenForm;
use super::plots::count_series_svg;
use super::session::{form_session, frame, page_session};
use super::views::{TimeView, age_shown, bytes_shown, seconds_shown};
use super::{ConsoleState, Frame, error_page, page};
use crate::service::activity_history::{CallBucket, HistoryPeriod};

#[derive(Template)]
#[template(path = "console/overview.html")]
struct OverviewPage {
    frame: Frame,
    version: String,
    backend: String,
    now: TimeView,
    /// How long this process has served, and since when.
    uptime: String,
    started: TimeView,
    /// What the instance holds: (label, number).
    counts: Vec<(&'static str, i64)>,
    /// Peers in each state: (state, number).
    peers_by_state: Vec<(&'static str, i64)>,
    loops: Vec<LoopRow>,
    backup: Option<BackupRow>,
    /// The calls of the last hour and of the last day.
    activity: Vec<ActivityView>,
}

/// One period of the calls' history as the page shows it.
struct ActivityView {
    /// The section's anchor.
    id: &'static str,
    /// The period in words.
    heading: String,
    /// The period's totals in a sentence.
    totals: String,
    writes_plot: Option<String>,
    errors_plot: Option<String>,
    rows: Vec<ActivityRow>,
}

/// One bucket of the calls' history.
struct ActivityRow {
    start: TimeView,
    calls: i64,
    writes: i64,
    errors: i64,
}

fn plural(count: i64, one: &str, many: &str) -> String {
    format!("{count} {}", if count == 1 { one } else { many })
}

fn activity_view(period: HistoryPeriod, buckets: &[CallBucket]) -> ActivityView {
    let (id, unit) = match period {
        HistoryPeriod::LastHour => ("activity-hour", "minute"),
        HistoryPeriod::LastDay => ("activity-day", "hour"),
    };
    let sum = |count: fn(&CallBucket) -> i64| buckets.iter().map(count).sum::<i64>();
    let (calls, writes, errors) = (
        sum(|bucket| bucket.calls),
        sum(|bucket| bucket.writes),
        sum(|bucket| bucket.errors),
    );
    let series = |count: fn(&CallBucket) -> i64| -> Vec<_> {
        buckets.iter().map(|bucket| (bucket.start, count(bucket))).collect()
    };
    let described = period.described();
    ActivityView {
        id,
        heading: format!("Calls over {described}"),
        totals: format!(
            "{}, of which {} and {}.",
            plural(calls, "audited call", "audited calls"),
            plural(writes, "successful write", "successful writes"),
            plural(errors, "error", "errors")
        ),
        writes_plot: count_series_svg(
            format!("Successful writes per {unit} over {described}: {writes} in all"),
            &format!("writes per {unit}"),
            &series(|bucket| bucket.writes),
        ),
        errors_plot: count_series_svg(
            format!("Calls answered with an error per {unit} over {described}: {errors} in all"),
            &format!("errors per {unit}"),
            &series(|bucket| bucket.errors),
        ),
        rows: buckets
            .iter()
            .map(|bucket| ActivityRow {
                start: TimeView::of(bucket.start),
                calls: bucket.calls,
                writes: bucket.writes,
                errors: bucket.errors,
            })
            .collect(),
    }
}

/// One background loop as the page shows it.
struct LoopRow {
    name: &'static str,
    state: &'static str,
    /// Whether the state calls for attention (failing, overdue).
    alarming: bool,
    passes: u64,
    last_pass: Option<TimeView>,
    last_error: Option<String>,
}

/// The last backup as the page shows it.
struct BackupRow {
    finished: TimeView,
    file: String,
    kind: &'static str,
    size: String,
    took: String,
    error: Option<String>,
    last_success: Option<TimeView>,
}

/// `POST /console/backup` (`interai admin backup`, into the backup directory): asks the backup loop for a backup
/// now and sends the browser back to the overview, which shows the backup as the last one when it is made.
pub async fn back_up_now(
    State(state): State<ConsoleState>,
    headers: HeaderMap,
    Form(form): Form<TokenForm>,
) -> Response {
    let session = match form_session(&state, &headers, &form.form_token).await {
        Ok(session) => session,
        Err(refusal) => return refusal,
    };
    let asked = audited(
        &state,
        &session,
        "backup.start",
        &json!({}),
        async { Ok(state.client.service().ask_for_backup()) },
        |asked| asked.as_str().to_owned(),
    )
    .await;
    match asked {
        Ok(crate::service::backups::BackupAsked::Started) => done("/console/", "backup.start"),
        Ok(crate::service::backups::BackupAsked::AlreadyUnderWay) => done("/console/", "backup.under_way"),
        Err(error) => error_page(&state, Some(frame(&state, &session, "Overview")), &error),
    }
}

/// `GET /console/`.
pub async fn show(State(state): State<ConsoleState>, Query(query): Query<DoneQuery>, headers: HeaderMap) -> Response {
    let session = match page_session(&state, &headers).await {
        Ok(session) => session,
        Err(answer) => return answer,
    };
    let mut frame = frame(&state, &session, "Overview");
    frame.notice = Notice::done(query.done.as_deref());
    let overview = match state.client.service().instance_overview().await {
        Ok(overview) => overview,
        Err(error) => return error_page(&state, Some(frame), &error),
    };
    let mut activity = Vec::with_capacity(HistoryPeriod::ALL.len());
    for period in HistoryPeriod::ALL {
        match state.client.service().call_history(period).await {
            Ok(buckets) => activity.push(activity_view(period, &buckets)),
            Err(error) => return error_page(&state, Some(frame), &error),
        }
    }
    let counts = &overview.counts;
    let page_data = OverviewPage {
        frame,
        version: overview.version.to_owned(),
        backend: overview.backend.to_owned(),
        now: TimeView::of(overview.now),
        uptime: age_shown(overview.now - overview.started_at),
        started: TimeView::of(overview.started_at),
        counts: vec![
            ("Actors", counts.actors),
            ("Active API keys", counts.active_api_keys),
            ("Content items", counts.content),
            ("Deleted content items", counts.deleted_content),
            ("Claims", counts.claims),
            ("Evidence records", counts.evidence),
            ("Peers", counts.peers),
        ],
        peers_by_state: overview
            .peers_by_state
            .iter()
            .map(|(peer_state, count)| (peer_state.as_str(), *count))
            .collect(),
        loops: overview
            .loops
            .iter()
            .map(|health| LoopRow {
                name: health.name,
                state: health.state.as_str(),
                alarming: matches!(
                    health.state,
                    crate::service::loop_health::LoopState::Failing | crate::service::loop_health::LoopState::Overdue
                ),
                passes: health.passes,
                last_pass: health.last_pass_at.map(TimeView::of),
                last_error: health.last_error.clone(),
            })
            .collect(),
        backup: overview.last_backup.as_ref().map(|backup| BackupRow {
            finished: TimeView::of(backup.finished_at),
            file: backup.file.clone(),
            kind: backup.kind.map_or("none", |kind| kind.as_str()),
            size: backup.bytes.map_or_else(|| "—".to_owned(), bytes_shown),
            took: seconds_shown(backup.seconds),
            error: backup.error.clone(),
            last_success: backup.last_success_at.map(TimeView::of),
        }),
        activity,
    };
    page(StatusCode::OK, &page_data)
}
