//! The admin's forms about peers, the same operations `interai admin peer …` and `/admin/peers` offer: look a peer up
//! and add it once its key's fingerprint is compared, approve (with the fingerprint) or reject one that asked, end a
//! peering, block (with a reason and an optional end) and unblock, set its level, pin or unpin its trust, remove it,
//! and replay or drop a dead letter. Each goes through [`super::actions`]: form token, audit, then the page again.

use askama::Template;
use axum::Form;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde::Deserialize;
use serde_json::json;

use super::actions::{audited, done, failed_status};
use super::peers::{level_choices, peer_page, peers_page};
use super::session::{failed_frame, form_session, frame};
use super::{ConsoleState, Frame, page};
use crate::domain::PeerLevel;
use crate::service::ServiceError;
use crate::service::console_sessions::ConsoleSession;
use crate::service::federation::peering::PeerIntroduction;
use crate::service::validation::instant_or_duration;

/// Every field a peer form may send; each action reads its own. A field left out is empty, so that it gets the
/// action's own refusal, not the extractor's plain-text one.
#[derive(Debug, Default, Deserialize)]
pub struct PeerForm {
    #[serde(default)]
    form_token: String,
    /// The peer's URL (look-up, add).
    #[serde(default)]
    url: String,
    /// The fingerprint the peer's admin read out (add, approve).
    #[serde(default)]
    fingerprint: String,
    /// `quarantine`, `low`, `standard` or `high` (add, approve, level).
    #[serde(default)]
    level: String,
    /// Why it is blocked (block).
    #[serde(default)]
    reason: String,
    /// When a block lifts: an RFC 3339 time or a duration (`7d`); empty for never (block).
    #[serde(default)]
    until: String,
    /// The trust to pin, 0 to 0.9 (pin).
    #[serde(default)]
    trust: String,
    /// The peer whose page a dead-letter form came from.
    #[serde(default)]
    peer: String,
}

fn parsed_level(text: &str) -> Result<PeerLevel, ServiceError> {
    PeerLevel::parse(text.trim())
        .ok_or_else(|| ServiceError::validation("level", "level must be quarantine, low, standard or high"))
}

/// What the add page shows: the peer's manifest, its keys' fingerprints, and the form that pins one once the
/// admin typed what the peer's admin read out.
#[derive(Template)]
#[template(path = "console/peer_add.html")]
struct AddPeerPage {
    frame: Frame,
    url: String,
    realm: String,
    base_url: String,
    actor_url: String,
    /// (key ID, fingerprint).
    keys: Vec<(String, String)>,
    levels: Vec<(&'static str, bool)>,
    /// What the admin typed last time (kept after a refusal).
    fingerprint: String,
}

fn add_page(frame: Frame, url: &str, introduction: &PeerIntroduction, form: &PeerForm, status: StatusCode) -> Response {
    let level = PeerLevel::parse(form.level.trim()).unwrap_or(PeerLevel::Standard);
    page(
        status,
        &AddPeerPage {
            frame,
            url: url.trim().to_owned(),
            realm: introduction.realm.clone(),
            base_url: introduction.base_url.clone(),
            actor_url: introduction.actor_url.clone(),
            keys: introduction
                .keys
                .iter()
                .map(|key| (key.key_id.clone(), key.public_key.fingerprint()))
                .collect(),
            levels: level_choices(level),
            fingerprint: form.fingerprint.trim().to_owned(),
        },
    )
}

async fn session_of(state: &ConsoleState, headers: &HeaderMap, form: &PeerForm) -> Result<ConsoleSession, Response> {
    form_session(state, headers, &form.form_token).await
}

/// `POST /console/peers/look-up`: reads the peer's manifest and shows its fingerprints with the add form. Changes
/// nothing, so it is not audited; it is a form (with the token) because it makes this instance call a URL.
pub async fn look_up(State(state): State<ConsoleState>, headers: HeaderMap, Form(form): Form<PeerForm>) -> Response {
    let session = match session_of(&state, &headers, &form).await {
        Ok(session) => session,
        Err(refusal) => return refusal,
    };
    match state.client.look_up_peer(&form.url).await {
        Ok(introduction) => add_page(
            frame(&state, &session, &format!("Add {}", introduction.realm)),
            &form.url,
            &introduction,
            &form,
            StatusCode::OK,
        ),
        Err(error) => {
            let frame = failed_frame(&state, &session, "Peers", &error);
            peers_page(&state, frame, failed_status(&error)).await
        }
    }
}

/// `POST /console/peers/add`: reads the manifest again (what is pinned is what the peer serves now) and adds the peer
/// if the fingerprint the admin typed is one of its keys'; otherwise the add page again, nothing pinned.
pub async fn add(State(state): State<ConsoleState>, headers: HeaderMap, Form(form): Form<PeerForm>) -> Response {
    let session = match session_of(&state, &headers, &form).await {
        Ok(session) => session,
        Err(refusal) => return refusal,
    };
    let introduction = match state.client.look_up_peer(&form.url).await {
        Ok(introduction) => introduction,
        Err(error) => {
            let frame = failed_frame(&state, &session, "Peers", &error);
            return peers_page(&state, frame, failed_status(&error)).await;
        }
    };
    let request = json!({ "url": form.url.trim(), "level": form.level.trim(), "fingerprint": form.fingerprint.trim() });
    let added = audited(
        &state,
        &session,
        "peer.add",
        &request,
        async {
            let level = parsed_level(&form.level)?;
            state
                .client
                .federation()
                .add_compared_peer(&introduction, level, &form.fingerprint)
                .await
        },
        |view| {
            format!(
                "{} is {} at level {}",
                view.peer.realm,
                view.state.as_str(),
                view.peer.level
            )
        },
    )
    .await;
    match added {
        Ok(view) => {
            deliver_now(&state, &view.peer.realm).await;
            done(&format!("/console/peers/{}", view.peer.realm), "peer.add")
        }
        Err(error) => {
            let frame = failed_frame(&state, &session, &format!("Add {}", introduction.realm), &error);
            add_page(frame, &form.url, &introduction, &form, failed_status(&error))
        }
    }
}

/// The actions on one peer's page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PeerAction {
    Approve,
    Reject,
    Block,
    Unblock,
    Level,
    PinTrust,
    UnpinTrust,
    PurgeEvidence,
    Remove,
}

impl PeerAction {
    fn from_path(text: &str) -> Option<PeerAction> {
        Some(match text {
            "approve" => PeerAction::Approve,
            "reject" => PeerAction::Reject,
            "block" => PeerAction::Block,
            "unblock" => PeerAction::Unblock,
            "level" => PeerAction::Level,
            "pin" => PeerAction::PinTrust,
            "unpin" => PeerAction::UnpinTrust,
            "purge" => PeerAction::PurgeEvidence,
            "remove" => PeerAction::Remove,
            _ => return None,
        })
    }

    /// The name it is audited and announced under.
    fn audited_as(self) -> &'static str {
        match self {
            PeerAction::Approve => "peer.approve",
            PeerAction::Reject => "peer.reject",
            PeerAction::Block => "peer.block",
            PeerAction::Unblock => "peer.unblock",
            PeerAction::Level => "peer.level",
            PeerAction::PinTrust => "peer.trust_pin",
            PeerAction::UnpinTrust => "peer.trust_unpin",
            PeerAction::PurgeEvidence => "peer.purge",
            PeerAction::Remove => "peer.remove",
        }
    }

    /// Whether it queues a peering message worth sending at once (as `/admin/peers` does).
    fn tells_the_peer(self) -> bool {
        matches!(self, PeerAction::Approve | PeerAction::Reject | PeerAction::Remove)
    }
}

/// `POST /console/peers/{realm}/{action}`.
pub async fn act(
    State(state): State<ConsoleState>,
    Path((realm, action)): Path<(String, String)>,
    headers: HeaderMap,
    Form(form): Form<PeerForm>,
) -> Response {
    let session = match session_of(&state, &headers, &form).await {
        Ok(session) => session,
        Err(refusal) => return refusal,
    };
    let Some(action) = PeerAction::from_path(&action) else {
        return super::error_page(
            &state,
            Some(frame(&state, &session, "Not found")),
            &ServiceError::not_found(&format!("{realm}/{action}")),
        );
    };
    let request = match action {
        PeerAction::Approve => {
            json!({ "peer": realm, "level": form.level.trim(), "fingerprint": form.fingerprint.trim() })
        }
        PeerAction::Block => json!({ "peer": realm, "reason": form.reason.trim(), "until": form.until.trim() }),
        PeerAction::Level => json!({ "peer": realm, "level": form.level.trim() }),
        PeerAction::PinTrust => json!({ "peer": realm, "trust": form.trust.trim() }),
        _ => json!({ "peer": realm }),
    };
    let federation = state.client.federation();
    let result = audited(
        &state,
        &session,
        action.audited_as(),
        &request,
        async {
            let view = match action {
                PeerAction::Approve => {
                    let level = Some(form.level.trim())
                        .filter(|level| !level.is_empty())
                        .map(parsed_level)
                        .transpose()?;
                    federation.approve_peer(&realm, level, Some(&form.fingerprint)).await?
                }
                PeerAction::Reject => federation.reject_peer(&realm).await?,
                PeerAction::Block => {
                    let until = Some(form.until.trim())
                        .filter(|until| !until.is_empty())
                        .map(|until| instant_or_duration("until", until, federation.now()))
                        .transpose()?;
                    federation.block_peer(&realm, &form.reason, until).await?
                }
                PeerAction::Unblock => federation.unblock_peer(&realm).await?,
                PeerAction::Level => federation.set_peer_level(&realm, parsed_level(&form.level)?).await?,
                PeerAction::PinTrust => {
                    let trust = form.trust.trim().parse::<f64>().map_err(|_| {
                        ServiceError::validation("trust", "trust must be a number from 0 to 0.9, such as 0.4")
                    })?;
                    federation.pin_peer_trust(&realm, trust).await?
                }
                PeerAction::UnpinTrust => federation.unpin_peer_trust(&realm).await?,
                PeerAction::PurgeEvidence => {
                    let report = federation.purge_peer_evidence(&realm).await?;
                    tracing::info!(
                        peer = %report.realm,
                        records = report.records,
                        targets = report.targets,
                        "evidence purged from the console"
                    );
                    federation.peer_view(&realm).await?
                }
                PeerAction::Remove => {
                    federation.remove_peer(&realm).await?;
                    return Ok(None);
                }
            };
            Ok(Some(view))
        },
        |view| match view {
            Some(view) => format!(
                "{} is {} at level {}",
                view.peer.realm,
                view.state.as_str(),
                view.peer.level
            ),
            None => format!("{realm} removed"),
        },
    )
    .await;
    match result {
        Ok(view) => {
            let shown_realm = view.as_ref().map_or(realm.as_str(), |view| view.peer.realm.as_str());
            if action.tells_the_peer() {
                deliver_now(&state, shown_realm).await;
            }
            match view {
                Some(view) => done(&format!("/console/peers/{}", view.peer.realm), action.audited_as()),
                None => done("/console/peers", action.audited_as()),
            }
        }
        Err(error) => {
            let frame = failed_frame(&state, &session, &format!("Peer {realm}"), &error);
            peer_page(&state, frame, &realm, failed_status(&error)).await
        }
    }
}

/// `POST /console/dead-letters/{id}/{replay|drop}`: sends a dead letter again or forgets it, then back to the page of
/// the peer it was for (the form's `peer`).
pub async fn dead_letter(
    State(state): State<ConsoleState>,
    Path((id, action)): Path<(String, String)>,
    headers: HeaderMap,
    Form(form): Form<PeerForm>,
) -> Response {
    let session = match session_of(&state, &headers, &form).await {
        Ok(session) => session,
        Err(refusal) => return refusal,
    };
    let federation = state.client.federation();
    // The page to go back to is the peer's, checked to be one: never a path the form made up.
    let peer = match federation.peer_view(&form.peer).await {
        Ok(view) => view.peer.realm,
        Err(error) => return super::error_page(&state, Some(frame(&state, &session, "Not found")), &error),
    };
    let request = json!({ "dead_letter": id, "peer": peer });
    let (name, result) = match action.as_str() {
        "replay" => (
            "dead_letter.replay",
            audited(
                &state,
                &session,
                "dead_letter.replay",
                &request,
                async { federation.replay_dead_letter(&id).await.map(drop) },
                |()| format!("{id} queued again"),
            )
            .await,
        ),
        "drop" => (
            "dead_letter.drop",
            audited(
                &state,
                &session,
                "dead_letter.drop",
                &request,
                federation.drop_dead_letter(&id),
                |()| format!("{id} dropped"),
            )
            .await,
        ),
        _ => {
            return super::error_page(
                &state,
                Some(frame(&state, &session, "Not found")),
                &ServiceError::not_found(&format!("{id}/{action}")),
            );
        }
    };
    match result {
        Ok(()) => {
            if name == "dead_letter.replay" {
                deliver_now(&state, &peer).await;
            }
            done(&format!("/console/peers/{peer}"), name)
        }
        Err(error) => {
            let frame = failed_frame(&state, &session, &format!("Peer {peer}"), &error);
            peer_page(&state, frame, &peer, failed_status(&error)).await
        }
    }
}

/// The token of a form that carries nothing else.
#[derive(Debug, Default, Deserialize)]
pub struct TokenForm {
    #[serde(default)]
    pub(super) form_token: String,
}

/// `POST /console/identity/rotate-key` (`interai admin federation rotate-key`): a new signing key, endorsed by the
/// old one and announced to every peer; the peers page shows the new fingerprint.
pub async fn rotate_key(
    State(state): State<ConsoleState>,
    headers: HeaderMap,
    Form(form): Form<TokenForm>,
) -> Response {
    let session = match form_session(&state, &headers, &form.form_token).await {
        Ok(session) => session,
        Err(refusal) => return refusal,
    };
    let federation = state.client.federation();
    let rotated = audited(
        &state,
        &session,
        "identity.rotate_key",
        &json!({}),
        federation.rotate_instance_key(),
        |key| format!("now signing with {}", key.description.public_key.fingerprint()),
    )
    .await;
    match rotated {
        Ok(_) => {
            if let Err(error) = state.client.deliver_due(32, None).await {
                tracing::warn!(error = %error, "immediate delivery failed; the federation loop retries");
            }
            done("/console/peers", "identity.rotate_key")
        }
        Err(error) => {
            let frame = failed_frame(&state, &session, "Peers", &error);
            peers_page(&state, frame, failed_status(&error)).await
        }
    }
}

/// `POST /console/trust/recompute` (`interai admin federation trust recompute`): every peer's effective trust now.
pub async fn recompute_trust(
    State(state): State<ConsoleState>,
    headers: HeaderMap,
    Form(form): Form<TokenForm>,
) -> Response {
    let session = match form_session(&state, &headers, &form.form_token).await {
        Ok(session) => session,
        Err(refusal) => return refusal,
    };
    let recomputed = audited(
        &state,
        &session,
        "trust.recompute",
        &json!({}),
        state.client.federation().recompute_instance_trust(),
        |batch| format!("epoch {}, {} peers", batch.epoch, batch.peers.len()),
    )
    .await;
    match recomputed {
        Ok(_) => done("/console/peers", "trust.recompute"),
        Err(error) => {
            let frame = failed_frame(&state, &session, "Peers", &error);
            peers_page(&state, frame, failed_status(&error)).await
        }
    }
}

/// Sends what an action queued for `realm` right away; what fails stays queued for the federation loop.
async fn deliver_now(state: &ConsoleState, realm: &str) {
    if let Err(error) = state.client.deliver_due(8, Some(realm)).await {
        tracing::warn!(peer = realm, error = %error, "immediate delivery failed; the federation loop retries");
    }
}
