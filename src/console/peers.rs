//! The peers pages: the list (`/console/peers`), one row per peer with what an admin checks each morning (its state
//! and level, the trust its evidence counts with, when it was last heard from, how far behind it is, what waits for
//! it, its last failure), and a peer's page (`/console/peers/{realm}`) with its pinned keys and their fingerprints,
//! its replication and its dead letters (the same peer views `GET /admin/peers` and `interai admin peer show` give),
//! and its replication lag over the last hour and day (`GET /admin/peers/{realm}/lag`).

use askama::Template;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use chrono::{DateTime, Utc};

use super::actions::{DoneQuery, Notice};
use super::plots::count_series_svg;
use super::session::{frame, page_session};
use super::views::{TimeView, age_shown};
use super::{ConsoleState, Frame, error_page, page};
use crate::domain::{PeerLevel, PeerState, ShownPeerState};
use crate::service::activity_history::HistoryPeriod;
use crate::service::federation::peer_lag_history::PeerLagBucket;
use crate::service::federation::peer_status::PeerView;

#[derive(Template)]
#[template(path = "console/peers.html")]
struct PeersPage {
    frame: Frame,
    now: TimeView,
    /// This instance's keys with their fingerprints.
    identity: Vec<IdentityKey>,
    peers: Vec<PeerRow>,
}

/// One peer as the page shows it.
struct PeerRow {
    realm: String,
    state: &'static str,
    /// Whether the state calls for attention (unreachable, blocked either way, waiting for an admin).
    alarming: bool,
    level: &'static str,
    /// The effective trust with what decided it (`0.50 (level:standard)`), or why there is none yet.
    trust: String,
    last_contact: Option<TimeView>,
    /// How long the oldest event not yet delivered has waited (`—` when nothing waits).
    outbox_lag: String,
    undelivered_events: i64,
    pending_peering_messages: i64,
    dead_letters: i64,
    /// The block's reason and end, for a peer this instance blocked.
    blocked: Option<String>,
    /// The last failure of any channel: its class and detail.
    last_error: Option<String>,
    last_error_at: Option<TimeView>,
}

fn trust_shown(view: &PeerView) -> String {
    match (&view.trust, view.trust_pin) {
        (Some(trust), _) => format!("{:.2} ({})", trust.trust, trust.reason.to_text()),
        (None, Some(pin)) => format!("pinned at {pin:.2}, counted from the next trust batch"),
        (None, None) => "not computed yet".to_owned(),
    }
}

fn row_of(view: &PeerView, now: DateTime<Utc>) -> PeerRow {
    let replication = view.replication.as_ref();
    let outbox_lag = replication
        .and_then(|lag| lag.oldest_undelivered_at)
        .map_or_else(|| "—".to_owned(), |oldest| age_shown(now - oldest));
    PeerRow {
        realm: view.peer.realm.clone(),
        state: view.state.as_str(),
        alarming: matches!(
            view.state,
            ShownPeerState::BlockedByPeer
                | ShownPeerState::Stored(PeerState::Unreachable | PeerState::Blocked | PeerState::PendingIn)
        ),
        level: view.peer.level.as_str(),
        trust: trust_shown(view),
        last_contact: view.peer.last_contact_at.map(TimeView::of),
        outbox_lag,
        undelivered_events: view.undelivered_events,
        pending_peering_messages: view.pending_peering_messages,
        dead_letters: replication.map_or(0, |lag| lag.dead_letters),
        blocked: (view.peer.state == PeerState::Blocked).then(|| {
            let reason = view.peer.blocked_reason.as_deref().unwrap_or("no reason given");
            match view.peer.blocked_until {
                Some(until) => format!("{reason}, until {}", TimeView::of(until).utc),
                None => format!("{reason}, until unblocked"),
            }
        }),
        last_error: view
            .last_error
            .as_ref()
            .map(|failure| format!("{}: {}", failure.class, failure.detail)),
        last_error_at: view.last_error.as_ref().map(|failure| TimeView::of(failure.at)),
    }
}

/// `GET /console/peers`.
pub async fn list(State(state): State<ConsoleState>, Query(query): Query<DoneQuery>, headers: HeaderMap) -> Response {
    let session = match page_session(&state, &headers).await {
        Ok(session) => session,
        Err(answer) => return answer,
    };
    let mut frame = frame(&state, &session, "Peers");
    frame.notice = Notice::done(query.done.as_deref());
    peers_page(&state, frame, StatusCode::OK).await
}

/// The peers page in `frame` with `status` (an action that failed shows it again with its notice).
pub async fn peers_page(state: &ConsoleState, frame: Frame, status: StatusCode) -> Response {
    let federation = state.client.federation();
    let views = match federation.list_peers().await {
        Ok(views) => views,
        Err(error) => return error_page(state, Some(frame), &error),
    };
    let identity = match federation.published_instance_keys().await {
        Ok(keys) => keys
            .iter()
            .map(|key| IdentityKey {
                key_id: key.description.key_id.clone(),
                fingerprint: key.description.public_key.fingerprint(),
            })
            .collect(),
        Err(error) => return error_page(state, Some(frame), &error),
    };
    let now = federation.now();
    page(
        status,
        &PeersPage {
            frame,
            now: TimeView::of(now),
            identity,
            peers: views.iter().map(|view| row_of(view, now)).collect(),
        },
    )
}

/// One of this instance's own keys, for the admin to read out to a peer's admin.
struct IdentityKey {
    key_id: String,
    fingerprint: String,
}

/// The choices of a level `<select>`: (level, whether it is selected).
pub fn level_choices(selected: PeerLevel) -> Vec<(&'static str, bool)> {
    PeerLevel::ALL
        .iter()
        .map(|level| (level.as_str(), *level == selected))
        .collect()
}

/// The most dead letters a peer's page lists (`interai admin federation dead-letters` lists them all).
const DEAD_LETTERS_SHOWN: i64 = 50;

#[derive(Template)]
#[template(path = "console/peer.html")]
struct PeerPage {
    frame: Frame,
    now: TimeView,
    row: PeerRow,
    /// Which of the admin's forms the peer's state allows.
    actions: PeerActions,
    /// The level form's choices, the current level selected.
    levels: Vec<(&'static str, bool)>,
    base_url: String,
    added: TimeView,
    keys: Vec<KeyRow>,
    replication: Option<ReplicationRows>,
    dead_letters: Vec<DeadLetterRow>,
    /// Its replication lag over the last hour and the last day.
    lag_history: Vec<LagHistoryView>,
}

/// One period of a peer's sampled replication lag as the page shows it.
struct LagHistoryView {
    /// The section's anchor.
    id: &'static str,
    heading: String,
    /// Whether any bucket of the period was sampled.
    sampled: bool,
    /// The longest wait of each sampled bucket.
    plot: Option<String>,
    rows: Vec<LagRow>,
}

/// One bucket of a peer's lag history.
struct LagRow {
    start: TimeView,
    /// `None` when nothing was sampled then.
    undelivered_events: Option<i64>,
    longest_wait: String,
    dead_letters: Option<i64>,
}

fn lag_history_view(realm: &str, period: HistoryPeriod, buckets: &[PeerLagBucket]) -> LagHistoryView {
    let id = match period {
        HistoryPeriod::LastHour => "lag-hour",
        HistoryPeriod::LastDay => "lag-day",
    };
    let described = period.described();
    // Buckets nothing sampled are left out of the plot rather than drawn as no lag.
    let waits: Vec<_> = buckets
        .iter()
        .filter_map(|bucket| Some((bucket.start, bucket.sampled?.longest_wait_seconds)))
        .collect();
    LagHistoryView {
        id,
        heading: format!("Lag over {described}"),
        sampled: !waits.is_empty(),
        plot: if waits.is_empty() {
            None
        } else {
            count_series_svg(
                format!(
                    "How long the oldest event waiting for {realm} had waited, the longest sampled in each bucket of \
                     {described}"
                ),
                "oldest wait (seconds)",
                &waits,
            )
        },
        rows: buckets
            .iter()
            .map(|bucket| LagRow {
                start: TimeView::of(bucket.start),
                undelivered_events: bucket.sampled.map(|sampled| sampled.most_undelivered_events),
                longest_wait: bucket.sampled.map_or_else(
                    || "not sampled".to_owned(),
                    |sampled| age_shown(chrono::TimeDelta::seconds(sampled.longest_wait_seconds)),
                ),
                dead_letters: bucket.sampled.map(|sampled| sampled.dead_letters),
            })
            .collect(),
    }
}

/// Which forms a peer's page offers, by its state: an admin is never shown a button the service would refuse.
struct PeerActions {
    /// It asked to peer: approve (with the fingerprint) or reject.
    approve: bool,
    /// A peering that exists or is asked for, which the admin may end.
    end_peering: bool,
    /// Not blocked: it may be blocked.
    block: bool,
    /// Blocked: it may be unblocked.
    unblock: bool,
    /// Its trust is pinned: the pin may be removed.
    unpin: bool,
    /// The pinned trust, or the effective trust, as the pin form's starting value.
    trust_value: String,
}

impl PeerActions {
    fn of(view: &PeerView) -> PeerActions {
        let state = view.peer.state;
        PeerActions {
            approve: state == PeerState::PendingIn,
            end_peering: matches!(
                state,
                PeerState::Active | PeerState::PendingOut | PeerState::Unreachable
            ),
            block: state != PeerState::Blocked,
            unblock: state == PeerState::Blocked,
            unpin: view.trust_pin.is_some(),
            trust_value: view
                .trust_pin
                .or(view.trust.as_ref().map(|trust| trust.trust))
                .map_or_else(|| "0.50".to_owned(), |trust| format!("{trust:.2}")),
        }
    }
}

/// A pinned key as the page shows it.
struct KeyRow {
    key_id: String,
    fingerprint: String,
    pinned_by: String,
    pinned_at: TimeView,
    valid: String,
}

/// The peer's replication as the page shows it: (what, value) pairs.
struct ReplicationRows {
    facts: Vec<(&'static str, String)>,
}

/// A dead letter as the page shows it.
struct DeadLetterRow {
    id: String,
    activity_type: String,
    attempts: i32,
    error: String,
    created: TimeView,
}

fn optional_time(at: Option<DateTime<Utc>>) -> String {
    at.map_or_else(|| "never".to_owned(), |at| TimeView::of(at).utc)
}

fn replication_rows(view: &PeerView) -> Option<ReplicationRows> {
    let lag = view.replication.as_ref()?;
    let row = &lag.replication;
    let push_failing = if row.consecutive_failures > 0 {
        format!(
            "{} rounds in a row, since {}",
            row.consecutive_failures,
            optional_time(row.failing_since)
        )
    } else {
        "no".to_owned()
    };
    Some(ReplicationRows {
        facts: vec![
            ("Pushed through position", row.push_cursor.to_string()),
            ("Next push round", TimeView::of(row.next_attempt_at).utc),
            ("Push failing", push_failing),
            ("Last push delivered", optional_time(row.last_success_at)),
            (
                "Pulled through position",
                row.pull_cursor
                    .map_or_else(|| "not yet".to_owned(), |cursor| cursor.to_string()),
            ),
            ("Last pull", optional_time(row.last_pull_at)),
            (
                "Last pull error",
                row.last_pull_error.clone().unwrap_or_else(|| "none".to_owned()),
            ),
            (
                "Its outbox epoch",
                row.outbox_epoch.clone().unwrap_or_else(|| "not read yet".to_owned()),
            ),
            (
                "It has read our outbox through",
                row.pulled_through
                    .map_or_else(|| "—".to_owned(), |position| position.to_string()),
            ),
        ],
    })
}

/// `GET /console/peers/{realm}`.
pub async fn show(
    State(state): State<ConsoleState>,
    Path(realm): Path<String>,
    Query(query): Query<DoneQuery>,
    headers: HeaderMap,
) -> Response {
    let session = match page_session(&state, &headers).await {
        Ok(session) => session,
        Err(answer) => return answer,
    };
    let mut frame = frame(&state, &session, &format!("Peer {realm}"));
    frame.notice = Notice::done(query.done.as_deref());
    peer_page(&state, frame, &realm, StatusCode::OK).await
}

/// The page of the peer `realm` in `frame` with `status` (an action that failed shows it again with its notice).
pub async fn peer_page(state: &ConsoleState, frame: Frame, realm: &str, status: StatusCode) -> Response {
    let federation = state.client.federation();
    let view = match federation.peer_view(realm).await {
        Ok(view) => view,
        Err(error) => return error_page(state, Some(frame), &error),
    };
    let dead_letters = match federation
        .dead_letters(Some(&view.peer.realm), DEAD_LETTERS_SHOWN)
        .await
    {
        Ok(dead_letters) => dead_letters,
        Err(error) => return error_page(state, Some(frame), &error),
    };
    let mut lag_history = Vec::with_capacity(HistoryPeriod::ALL.len());
    for period in HistoryPeriod::ALL {
        match federation.peer_lag_history(&view.peer.realm, period).await {
            Ok(buckets) => lag_history.push(lag_history_view(&view.peer.realm, period, &buckets)),
            Err(error) => return error_page(state, Some(frame), &error),
        }
    }
    let now = federation.now();
    page(
        status,
        &PeerPage {
            frame,
            now: TimeView::of(now),
            row: row_of(&view, now),
            actions: PeerActions::of(&view),
            levels: level_choices(view.peer.level),
            base_url: view.peer.base_url.clone(),
            added: TimeView::of(view.peer.created_at),
            keys: view
                .keys
                .iter()
                .map(|key| KeyRow {
                    key_id: key.key_id.clone(),
                    fingerprint: key.fingerprint.clone(),
                    pinned_by: key.pinned_by.as_str().to_owned(),
                    pinned_at: TimeView::of(key.pinned_at),
                    valid: match (key.valid_from, key.valid_until) {
                        (None, None) => "always".to_owned(),
                        (from, until) => format!(
                            "from {} until {}",
                            from.map_or_else(|| "the start".to_owned(), |at| TimeView::of(at).utc),
                            until.map_or_else(|| "revoked".to_owned(), |at| TimeView::of(at).utc)
                        ),
                    },
                })
                .collect(),
            replication: replication_rows(&view),
            dead_letters: dead_letters
                .iter()
                .map(|delivery| DeadLetterRow {
                    id: delivery.id.clone(),
                    activity_type: delivery.activity_type.clone(),
                    attempts: delivery.attempts,
                    error: delivery.last_error.clone().unwrap_or_default(),
                    created: TimeView::of(delivery.created_at),
                })
                .collect(),
            lag_history,
        },
    )
}
