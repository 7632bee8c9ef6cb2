//! The people page (`/console/people`): the actors of this realm with their controllers, every actor's API keys
//! (scopes, expiry, last use, whether revoked), and the forms of `interai admin actor create`, `interai admin key
//! create` and `interai admin key revoke`, on the same service calls (`Service::create_actor`,
//! `Service::create_api_key`, `Service::revoke_api_key`), each audited with the signed-in key ([`actions`]).
//!
//! The actors are shown a page at a time ([`ACTORS_PER_PAGE`]), with a filter on the name or the ID, and the keys of
//! the actors shown; the forms' actor fields are text with the page's actors offered as suggestions, so the page
//! stays small in a realm of thousands of actors (7.5 MB of HTML at 6,407 actors when it listed them all).
//!
//! A new key's secret is shown once, on the page that answers the form (`200`, never a redirect, so it is in no URL
//! and no history entry; the console's pages are `Cache-Control: no-store`), and never audited: the audited request
//! is what the admin chose, the summary names the key by its ID. Revoking the key the admin signed in with ends their
//! session, so that answer goes to the sign-in page.

use std::collections::HashMap;

use askama::Template;
use axum::Form;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::json;

use super::actions::{self, Notice};
use super::session::{form_session, frame, page_session, presented_token, removed_cookie};
use super::views::{TimeView, link_with_query};
use super::{ConsoleState, Frame, error_page, page};
use crate::domain::{Actor, ActorType, PublicId, Scope, ScopeSet};
use crate::service::ServiceError;
use crate::service::actors::NewActor;
use crate::service::console_sessions::ConsoleSession;
use crate::service::keys::{ApiKeyRecord, IssuedApiKey, NewApiKey, expiry_from_text};
use crate::service::validation::parse_id;

/// Where the actions of this page send the browser back to.
const PAGE_PATH: &str = "/console/people";

/// The page's title (the navigation marks the current page by it).
const TITLE: &str = "People and keys";

/// Actors a page shows.
pub const ACTORS_PER_PAGE: usize = 100;

/// The page's query: which actors it shows, and what the last action did.
#[derive(Debug, Default, Deserialize)]
pub struct PeopleQuery {
    /// Only actors whose name or ID holds this (any case).
    #[serde(default)]
    find: String,
    /// The page of actors, from 1.
    #[serde(default)]
    page: String,
    /// The action just done (see [`actions`]).
    done: Option<String>,
}

/// Which actors a view of the page shows.
#[derive(Debug, Clone)]
struct ActorView {
    find: String,
    /// From 1.
    page: usize,
}

impl Default for ActorView {
    /// The first page, unfiltered: what a form's answer shows.
    fn default() -> ActorView {
        ActorView {
            find: String::new(),
            page: 1,
        }
    }
}

impl PeopleQuery {
    fn view(&self) -> Result<ActorView, ServiceError> {
        let page = match given(&self.page) {
            None => 1,
            Some(text) => text
                .parse::<usize>()
                .ok()
                .filter(|page| *page >= 1)
                .ok_or_else(|| ServiceError::validation("page", "page must be a whole number from 1"))?,
        };
        Ok(ActorView {
            find: self.find.trim().to_owned(),
            page,
        })
    }
}

#[derive(Template)]
#[template(path = "console/people.html")]
struct PeoplePage {
    frame: Frame,
    now: TimeView,
    actors: Vec<ActorRow>,
    keys: Vec<KeyRow>,
    /// The filter typed, shown back in its field.
    find: String,
    /// Which actors are shown out of how many, in words.
    shown: String,
    previous_page: Option<String>,
    next_page: Option<String>,
    /// The page's actors that may control another (humans and organizations), suggested for the new actor's
    /// controller.
    controllers: Vec<Choice>,
    /// The page's actors, suggested for the new key's actor.
    key_holders: Vec<Choice>,
    actor_draft: ActorDraft,
    scope_choices: Vec<ScopeChoice>,
    key_draft: KeyDraft,
}

/// An actor as the page shows it.
struct ActorRow {
    id: String,
    actor_type: &'static str,
    display_name: String,
    /// The controller's ID and name, for an actor that has one.
    controller: Option<String>,
    /// The root controller, when it is not the actor itself.
    root_controller: Option<String>,
    created: TimeView,
    active_keys: usize,
}

/// A key as the page shows it.
struct KeyRow {
    id: String,
    actor: String,
    actor_name: String,
    scopes: String,
    label: Option<String>,
    created: TimeView,
    expires: Option<TimeView>,
    last_used: Option<TimeView>,
    /// `active`, `expired` or `revoked` (as `GET /admin/actors/{id}/keys` says).
    state: &'static str,
    revoked: Option<TimeView>,
    /// Whether the signed-in admin's session runs on this key (revoking it signs them out).
    signed_in_with: bool,
}

/// A suggestion of a text field (an `<option>` of its `<datalist>`).
struct Choice {
    id: String,
    label: String,
}

/// A scope's checkbox.
struct ScopeChoice {
    name: &'static str,
    checked: bool,
}

/// The actor form as the admin filled it (empty on a fresh page), so a refused form is shown again as it was.
#[derive(Debug, Default)]
struct ActorDraft {
    actor_type: String,
    display_name: String,
    controller: String,
}

/// The key form as the admin filled it.
#[derive(Debug)]
struct KeyDraft {
    actor: String,
    scopes: Vec<String>,
    expires: String,
    label: String,
}

impl Default for KeyDraft {
    /// A fresh form offers an agent's usual scopes, as the CLI gives without `--scopes`.
    fn default() -> KeyDraft {
        KeyDraft {
            actor: String::new(),
            scopes: ScopeSet::agent_default()
                .names()
                .into_iter()
                .map(str::to_owned)
                .collect(),
            expires: String::new(),
            label: String::new(),
        }
    }
}

/// A key's state as of `now`.
fn key_state(key: &ApiKeyRecord, now: DateTime<Utc>) -> &'static str {
    if key.revoked_at.is_some() {
        "revoked"
    } else if key.expires_at.is_some_and(|expires_at| expires_at <= now) {
        "expired"
    } else {
        "active"
    }
}

/// What the admin typed, trimmed, if anything.
fn given(text: &str) -> Option<&str> {
    let text = text.trim();
    (!text.is_empty()).then_some(text)
}

/// The page for `session`, answered with `status`, saying `notice` above its content and showing the forms as
/// `actor_draft` and `key_draft` hold them.
async fn render(
    state: &ConsoleState,
    session: &ConsoleSession,
    status: StatusCode,
    notice: Option<Notice>,
    view: ActorView,
    actor_draft: ActorDraft,
    key_draft: KeyDraft,
) -> Response {
    let mut frame = frame(state, session, TITLE);
    frame.notice = notice;
    let service = state.client.service();
    let first = (view.page - 1).saturating_mul(ACTORS_PER_PAGE);
    let (actors, found) = match service.actors_page(&view.find, first, ACTORS_PER_PAGE).await {
        Ok(page) => page,
        Err(error) => return error_page(state, Some(frame), &error),
    };
    let needle = view.find.trim();
    let page_link = |page: usize| link_with_query(PAGE_PATH, &[("find", &view.find), ("page", &page.to_string())]);
    let previous_page = (view.page > 1 && first <= found).then(|| page_link(view.page - 1));
    let next_page = (first + ACTORS_PER_PAGE < found).then(|| page_link(view.page + 1));
    let shown = match (actors.first(), found) {
        (None, 0) if needle.is_empty() => "No actor yet.".to_owned(),
        (None, 0) => format!("No actor has a name or ID that holds “{}”.", view.find),
        (None, total) => format!("No actor on page {}: there are {total}.", view.page),
        (Some(_), total) => format!(
            "Actors {} to {} of {total}{}.",
            first + 1,
            first + actors.len(),
            if needle.is_empty() {
                String::new()
            } else {
                format!(" whose name or ID holds “{}”", view.find)
            }
        ),
    };
    // The controllers named on the page that are not on it themselves.
    let mut named_ids: Vec<PublicId> = actors
        .iter()
        .flat_map(|actor| actor.controller.iter().chain(std::iter::once(&actor.root_controller)))
        .filter(|id| !actors.iter().any(|actor| &actor.id == *id))
        .cloned()
        .collect();
    named_ids.sort_by(|left, right| left.as_str().cmp(right.as_str()));
    named_ids.dedup();
    let named_actors = match service.find_actors(&named_ids).await {
        Ok(named_actors) => named_actors,
        Err(error) => return error_page(state, Some(frame), &error),
    };
    let actor_ids: Vec<PublicId> = actors.iter().map(|actor| actor.id.clone()).collect();
    let keys = match service.list_api_keys_of_actors(&actor_ids).await {
        Ok(keys) => keys,
        Err(error) => return error_page(state, Some(frame), &error),
    };
    // Each actor's keys, oldest first, as the rows list them.
    let mut keys_by_actor: HashMap<&PublicId, Vec<&ApiKeyRecord>> = HashMap::new();
    for key in &keys {
        keys_by_actor.entry(&key.actor_id).or_default().push(key);
    }
    let keys_of = |actor: &Actor| keys_by_actor.get(&actor.id).map_or(&[][..], Vec::as_slice);
    let now = service.now();
    let names: HashMap<&str, &str> = actors
        .iter()
        .chain(&named_actors)
        .map(|actor| (actor.id.as_str(), actor.display_name.as_str()))
        .collect();
    let named = |id: &str| match names.get(id) {
        Some(name) => format!("{name} ({id})"),
        None => id.to_owned(),
    };
    let actor_rows = actors
        .iter()
        .map(|actor| ActorRow {
            id: actor.id.as_str().to_owned(),
            actor_type: actor.actor_type.as_str(),
            display_name: actor.display_name.clone(),
            controller: actor.controller.as_ref().map(|controller| named(controller.as_str())),
            root_controller: (actor.root_controller != actor.id).then(|| named(actor.root_controller.as_str())),
            created: TimeView::of(actor.created_at),
            active_keys: keys_of(actor)
                .iter()
                .filter(|key| key_state(key, now) == "active")
                .count(),
        })
        .collect();
    let key_rows = actors
        .iter()
        .flat_map(|actor| keys_of(actor).iter().map(move |key| (actor, *key)))
        .map(|(actor, key)| KeyRow {
            id: key.id.as_str().to_owned(),
            actor: actor.id.as_str().to_owned(),
            actor_name: actor.display_name.clone(),
            scopes: key.scopes.names().join(", "),
            label: key.label.clone(),
            created: TimeView::of(key.created_at),
            expires: key.expires_at.map(TimeView::of),
            last_used: key.last_used_at.map(TimeView::of),
            state: key_state(key, now),
            revoked: key.revoked_at.map(TimeView::of),
            signed_in_with: key.id == session.caller.key_id,
        })
        .collect();
    let choice = |actor: &Actor| Choice {
        id: actor.id.as_str().to_owned(),
        label: format!("{} ({})", actor.display_name, actor.actor_type.as_str()),
    };
    let controllers = actors
        .iter()
        .filter(|actor| actor.actor_type.can_control())
        .map(choice)
        .collect();
    let key_holders = actors.iter().map(choice).collect();
    let scope_choices = Scope::ALL
        .into_iter()
        .map(|scope| ScopeChoice {
            name: scope.as_str(),
            checked: key_draft.scopes.iter().any(|name| name == scope.as_str()),
        })
        .collect();
    page(
        status,
        &PeoplePage {
            frame,
            now: TimeView::of(now),
            actors: actor_rows,
            keys: key_rows,
            find: view.find,
            shown,
            previous_page,
            next_page,
            controllers,
            key_holders,
            actor_draft,
            scope_choices,
            key_draft,
        },
    )
}

/// `GET /console/people`.
pub async fn show(State(state): State<ConsoleState>, Query(query): Query<PeopleQuery>, headers: HeaderMap) -> Response {
    let session = match page_session(&state, &headers).await {
        Ok(session) => session,
        Err(answer) => return answer,
    };
    let (status, notice, view) = match query.view() {
        Ok(view) => (StatusCode::OK, Notice::done(query.done.as_deref()), view),
        Err(error) => (
            StatusCode::BAD_REQUEST,
            Some(Notice {
                succeeded: false,
                text: error.message,
            }),
            ActorView {
                find: query.find.trim().to_owned(),
                page: 1,
            },
        ),
    };
    render(
        &state,
        &session,
        status,
        notice,
        view,
        ActorDraft::default(),
        KeyDraft::default(),
    )
    .await
}

/// The actor form (every field may be missing: the page then says what is wrong).
#[derive(Debug, Deserialize)]
pub struct ActorForm {
    #[serde(default)]
    form_token: String,
    /// `usr`, `org` or `ai`.
    #[serde(default)]
    actor_type: String,
    #[serde(default)]
    display_name: String,
    /// A `usr_` or `org_` ID, or empty.
    #[serde(default)]
    controller: String,
}

/// `POST /console/actors`: `interai admin actor create --type … --name … [--controller …]`.
pub async fn create_actor(
    State(state): State<ConsoleState>,
    headers: HeaderMap,
    Form(form): Form<ActorForm>,
) -> Response {
    let session = match form_session(&state, &headers, &form.form_token).await {
        Ok(session) => session,
        Err(refusal) => return refusal,
    };
    let request = json!({
        "type": form.actor_type,
        "display_name": form.display_name,
        "controller": given(&form.controller),
    });
    let service = state.client.service();
    let work = async {
        // Read as `POST /admin/actors` reads its body.
        let actor_type = ActorType::parse(form.actor_type.trim())
            .ok_or_else(|| ServiceError::validation("type", "type must be usr, org or ai"))?;
        let controller = given(&form.controller)
            .map(|text| parse_id("controller", text))
            .transpose()?;
        service
            .create_actor(NewActor {
                actor_type,
                display_name: form.display_name.clone(),
                controller,
            })
            .await
    };
    let summary = |actor: &Actor| format!("created {} ({})", actor.id, actor.actor_type.as_str());
    match actions::audited(&state, &session, "actor.create", &request, work, summary).await {
        Ok(_) => actions::done(PAGE_PATH, "actor.create"),
        Err(error) => {
            let draft = ActorDraft {
                actor_type: form.actor_type,
                display_name: form.display_name,
                controller: form.controller,
            };
            render(
                &state,
                &session,
                actions::failed_status(&error),
                Some(Notice::failed(&error)),
                ActorView::default(),
                draft,
                KeyDraft::default(),
            )
            .await
        }
    }
}

/// The key form. Its scopes are checkboxes that share one name, so it is read as the list of fields the browser
/// sent (the form extractor keeps only one value per name).
#[derive(Debug, Default)]
struct KeyForm {
    form_token: String,
    actor: String,
    scopes: Vec<String>,
    expires: String,
    label: String,
}

impl KeyForm {
    fn from_fields(fields: Vec<(String, String)>) -> KeyForm {
        let mut form = KeyForm::default();
        for (name, value) in fields {
            match name.as_str() {
                "form_token" => form.form_token = value,
                "actor" => form.actor = value,
                "scopes" => form.scopes.push(value),
                "expires" => form.expires = value,
                "label" => form.label = value,
                _ => {}
            }
        }
        form
    }
}

#[derive(Template)]
#[template(path = "console/key_created.html")]
struct KeyCreatedPage {
    frame: Frame,
    /// The bearer secret, shown this once.
    secret: String,
    key: KeyRow,
}

/// `POST /console/keys`: `interai admin key create --actor … --scopes … [--expires …] [--label …]`. The answer is
/// the page that shows the secret, once.
pub async fn create_key(
    State(state): State<ConsoleState>,
    headers: HeaderMap,
    Form(fields): Form<Vec<(String, String)>>,
) -> Response {
    let form = KeyForm::from_fields(fields);
    let session = match form_session(&state, &headers, &form.form_token).await {
        Ok(session) => session,
        Err(refusal) => return refusal,
    };
    // What the admin chose; there is no secret in it, nor in the summary, which names the key by its ID.
    let request = json!({
        "actor": form.actor,
        "scopes": form.scopes,
        "expires": given(&form.expires),
        "label": given(&form.label),
    });
    let service = state.client.service();
    let now = service.now();
    let work = async {
        let actor_id = parse_id("actor", form.actor.trim())?;
        let scopes = ScopeSet::parse_list(&form.scopes.join(",")).map_err(|unknown| {
            ServiceError::validation(
                "scopes",
                format!(
                    "unknown scope {unknown:?}; known scopes are read, publish, usage, review, rate, moderate, admin"
                ),
            )
        })?;
        let expires_at = expiry_from_text("expires", &form.expires, now)?;
        service
            .create_api_key(NewApiKey {
                actor_id,
                scopes,
                expires_at,
                label: given(&form.label).map(str::to_owned),
            })
            .await
    };
    let summary = |issued: &IssuedApiKey| {
        let expiry = issued
            .key
            .expires_at
            .map_or_else(|| "never".to_owned(), |at| TimeView::of(at).utc);
        format!(
            "issued {} to {} with scopes {}, expires {expiry}",
            issued.key.id,
            issued.key.actor_id,
            issued.key.scopes.to_list()
        )
    };
    match actions::audited(&state, &session, "key.create", &request, work, summary).await {
        Ok(issued) => {
            let actor_name = service
                .find_actor(&issued.key.actor_id)
                .await
                .map(|actor| actor.display_name)
                .unwrap_or_default();
            let mut frame = frame(&state, &session, "New key");
            frame.notice = Notice::done(Some("key.create"));
            let key = &issued.key;
            page(
                StatusCode::OK,
                &KeyCreatedPage {
                    frame,
                    key: KeyRow {
                        id: key.id.as_str().to_owned(),
                        actor: key.actor_id.as_str().to_owned(),
                        actor_name,
                        scopes: key.scopes.names().join(", "),
                        label: key.label.clone(),
                        created: TimeView::of(key.created_at),
                        expires: key.expires_at.map(TimeView::of),
                        last_used: None,
                        state: key_state(key, now),
                        revoked: None,
                        signed_in_with: false,
                    },
                    secret: issued.secret,
                },
            )
        }
        Err(error) => {
            let draft = KeyDraft {
                actor: form.actor,
                scopes: form.scopes,
                expires: form.expires,
                label: form.label,
            };
            render(
                &state,
                &session,
                actions::failed_status(&error),
                Some(Notice::failed(&error)),
                ActorView::default(),
                ActorDraft::default(),
                draft,
            )
            .await
        }
    }
}

/// A form that only carries the session's form token.
#[derive(Debug, Deserialize)]
pub struct TokenForm {
    #[serde(default)]
    form_token: String,
}

/// `POST /console/keys/{key_id}/revoke`: `interai admin key revoke …`. Revoking the key the admin signed in with
/// ends their session: the answer goes to the sign-in page, which says the session ended.
pub async fn revoke_key(
    State(state): State<ConsoleState>,
    Path(key_id): Path<String>,
    headers: HeaderMap,
    Form(form): Form<TokenForm>,
) -> Response {
    let session = match form_session(&state, &headers, &form.form_token).await {
        Ok(session) => session,
        Err(refusal) => return refusal,
    };
    let request = json!({ "key": key_id });
    let service = state.client.service();
    let work = async {
        let key_id = parse_id("key", key_id.trim())?;
        service.revoke_api_key(&key_id).await
    };
    let summary = |key: &ApiKeyRecord| format!("revoked {} of {}", key.id, key.actor_id);
    match actions::audited(&state, &session, "key.revoke", &request, work, summary).await {
        Ok(key) if key.id == session.caller.key_id => {
            // The session can no longer be used; end it now rather than at its next request.
            if let Some(token) = presented_token(&headers)
                && let Err(error) = service.end_console_session(&token).await
            {
                tracing::warn!(error = %error.message, "the session of a revoked key could not be ended at once");
            }
            let mut response = Redirect::to("/console/sign-in?ended=1").into_response();
            response
                .headers_mut()
                .insert(header::SET_COOKIE, removed_cookie(state.secure_cookie));
            response
        }
        Ok(_) => actions::done(PAGE_PATH, "key.revoke"),
        Err(error) => {
            render(
                &state,
                &session,
                actions::failed_status(&error),
                Some(Notice::failed(&error)),
                ActorView::default(),
                ActorDraft::default(),
                KeyDraft::default(),
            )
            .await
        }
    }
}
