//! The spaces page (`/console/spaces`): every space this instance knows, its own and its peers' (what `interai admin
//! space list` and `GET /admin/spaces` show), and the form of `interai admin space create` on the same
//! `Service::create_space`, audited with the signed-in key ([`actions`]) and created on behalf of the signed-in admin.

use askama::Template;
use axum::Form;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde::Deserialize;
use serde_json::json;

use super::actions::{self, DoneQuery, Notice};
use super::session::{form_session, frame, page_session};
use super::views::TimeView;
use super::{ConsoleState, Frame, error_page, page};
use crate::domain::knowledge::{Space, SpaceVisibility};
use crate::service::ServiceError;
use crate::service::console_sessions::ConsoleSession;
use crate::service::spaces::NewSpace;

/// Where the form sends the browser back to.
const PAGE_PATH: &str = "/console/spaces";

#[derive(Template)]
#[template(path = "console/spaces.html")]
struct SpacesPage {
    frame: Frame,
    spaces: Vec<SpaceRow>,
    draft: SpaceDraft,
}

/// A space as the page shows it.
struct SpaceRow {
    id: String,
    name: String,
    visibility: &'static str,
    /// Whether content goes there when an agent names no space.
    is_default: bool,
    origin: String,
    description: String,
    created: TimeView,
}

/// The form as the admin filled it, shown again after a refusal (a fresh form proposes a local space: nothing leaves
/// the instance unless the admin says so).
#[derive(Debug)]
struct SpaceDraft {
    name: String,
    visibility: String,
    description: String,
}

impl Default for SpaceDraft {
    fn default() -> SpaceDraft {
        SpaceDraft {
            name: String::new(),
            visibility: SpaceVisibility::Local.as_str().to_owned(),
            description: String::new(),
        }
    }
}

fn row_of(space: &Space) -> SpaceRow {
    SpaceRow {
        id: space.id.as_str().to_owned(),
        name: space.name.clone(),
        visibility: space.visibility.as_str(),
        is_default: space.is_default,
        origin: space.origin.clone(),
        description: space.description.clone(),
        created: TimeView::of(space.created_at),
    }
}

async fn render(
    state: &ConsoleState,
    session: &ConsoleSession,
    status: StatusCode,
    notice: Option<Notice>,
    draft: SpaceDraft,
) -> Response {
    let mut frame = frame(state, session, "Spaces");
    frame.notice = notice;
    match state.client.service().list_spaces().await {
        Ok(spaces) => page(
            status,
            &SpacesPage {
                frame,
                spaces: spaces.iter().map(row_of).collect(),
                draft,
            },
        ),
        Err(error) => error_page(state, Some(frame), &error),
    }
}

/// `GET /console/spaces`.
pub async fn list(State(state): State<ConsoleState>, Query(query): Query<DoneQuery>, headers: HeaderMap) -> Response {
    let session = match page_session(&state, &headers).await {
        Ok(session) => session,
        Err(answer) => return answer,
    };
    render(
        &state,
        &session,
        StatusCode::OK,
        Notice::done(query.done.as_deref()),
        SpaceDraft::default(),
    )
    .await
}

/// The space form (every field may be missing: the page then says what is wrong).
#[derive(Debug, Deserialize)]
pub struct SpaceForm {
    #[serde(default)]
    form_token: String,
    #[serde(default)]
    name: String,
    /// `local` or `federated`.
    #[serde(default)]
    visibility: String,
    #[serde(default)]
    description: String,
}

/// `POST /console/spaces`: `interai admin space create NAME --visibility … [--description …]`.
pub async fn create(State(state): State<ConsoleState>, headers: HeaderMap, Form(form): Form<SpaceForm>) -> Response {
    let session = match form_session(&state, &headers, &form.form_token).await {
        Ok(session) => session,
        Err(refusal) => return refusal,
    };
    let description = Some(form.description.trim())
        .filter(|text| !text.is_empty())
        .map(str::to_owned);
    let request = json!({
        "name": form.name,
        "visibility": form.visibility,
        "description": description,
    });
    let work = async {
        // Read as `POST /admin/spaces` reads its body.
        let visibility = SpaceVisibility::parse(form.visibility.trim())
            .ok_or_else(|| ServiceError::validation("visibility", "visibility must be federated or local"))?;
        state
            .client
            .service()
            .create_space(
                &session.caller.actor.id,
                NewSpace {
                    name: form.name.clone(),
                    description: description.clone(),
                    visibility,
                },
            )
            .await
    };
    let summary = |space: &Space| format!("created {} ({})", space.id, space.visibility.as_str());
    match actions::audited(&state, &session, "space.create", &request, work, summary).await {
        Ok(_) => actions::done(PAGE_PATH, "space.create"),
        Err(error) => {
            let draft = SpaceDraft {
                name: form.name,
                visibility: form.visibility,
                description: form.description,
            };
            render(
                &state,
                &session,
                actions::failed_status(&error),
                Some(Notice::failed(&error)),
                draft,
            )
            .await
        }
    }
}
