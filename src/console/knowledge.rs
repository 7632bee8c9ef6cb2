//! The knowledge pages: search over content, claims and entities with the filters of the `search` tool (space,
//! origin, status, trust view, kind, order), a page at a time (`/console/knowledge`), and an item's page
//! (`/console/knowledge/{id}`) with its revisions, its claims, its trust explanation laid out for a person
//! (first-party and per-origin parts, the rule that decided the status) and a plot of its value and interval over
//! time, in the trust view and over the range its own GET form chooses. On `Service::admin_search`,
//! `Service::admin_get` and `Service::trust_history`: the same search and read an agent's key gets, for the admin's
//! key.

use askama::Template;
use axum::Form;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde::Deserialize;

use super::actions::{Notice, audited, done, failed_status};
use super::plots::{TimeSeriesPlot, time_series_svg};
use super::session::{failed_frame, form_session, frame, page_session};
use super::views::TimeView;
use super::{ConsoleState, Frame, error_page, page};
use crate::service::console_sessions::ConsoleSession;
use crate::service::lookup::{GetRequest, ObjectView};
use crate::service::search::{SearchHit, SearchRequest};
use crate::service::trust::{ExplainedTrust, TrustViewScope};
use crate::service::trust_history::TrustHistory;
use crate::service::{ErrorCode, ServiceError};
use crate::trust::{Assessment, InstanceBound, PartyExplanation};

/// How many moments an item's trust plot shows, whatever its range.
pub const TRUST_PLOT_POINTS: u32 = 24;

/// Results a page of the search shows.
const RESULTS_PER_PAGE: u32 = 25;

/// The search form's fields, as the browser sends them back (empty fields are no filter).
#[derive(Debug, Default, Deserialize)]
pub struct KnowledgeFilters {
    #[serde(default)]
    q: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    space: String,
    #[serde(default)]
    origin: String,
    #[serde(default)]
    min_status: String,
    #[serde(default)]
    disputed: String,
    #[serde(default)]
    trust_view: String,
    #[serde(default)]
    sort: String,
    #[serde(default)]
    cursor: String,
    /// The action that sent the browser here (a deletion).
    #[serde(default)]
    done: Option<String>,
}

fn given(text: &str) -> Option<String> {
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

impl KnowledgeFilters {
    /// The filters as the search request they ask for.
    fn request(&self) -> Result<SearchRequest, ServiceError> {
        Ok(SearchRequest {
            query: given(&self.q),
            kinds: given(&self.kind).into_iter().collect(),
            space: given(&self.space),
            origin: given(&self.origin),
            min_status: given(&self.min_status),
            include_disputed: Some(self.disputed.trim() != "leave_out"),
            trust_view: TrustViewScope::from_input(given(&self.trust_view).as_deref())?,
            sort: given(&self.sort),
            limit: Some(RESULTS_PER_PAGE),
            cursor: given(&self.cursor),
            ..SearchRequest::default()
        })
    }

    /// The page's address with these filters and `cursor`.
    fn link(&self, cursor: &str) -> String {
        let pairs = [
            ("q", self.q.as_str()),
            ("kind", self.kind.as_str()),
            ("space", self.space.as_str()),
            ("origin", self.origin.as_str()),
            ("min_status", self.min_status.as_str()),
            ("disputed", self.disputed.as_str()),
            ("trust_view", self.trust_view.as_str()),
            ("sort", self.sort.as_str()),
            ("cursor", cursor),
        ];
        super::views::link_with_query("/console/knowledge", &pairs)
    }
}

/// One choice of a select, marked when the form holds it.
struct Choice {
    value: String,
    label: String,
    selected: bool,
}

fn choices(current: &str, options: &[(&str, &str)]) -> Vec<Choice> {
    options
        .iter()
        .map(|(value, label)| Choice {
            value: (*value).to_owned(),
            label: (*label).to_owned(),
            selected: current.trim() == *value,
        })
        .collect()
}

#[derive(Template)]
#[template(path = "console/knowledge.html")]
struct KnowledgePage {
    frame: Frame,
    filters: KnowledgeFilters,
    kinds: Vec<Choice>,
    spaces: Vec<Choice>,
    origins: Vec<Choice>,
    statuses: Vec<Choice>,
    disputed: Vec<Choice>,
    views: Vec<Choice>,
    sorts: Vec<Choice>,
    /// Why the filters were refused, if they were.
    refusal: Option<String>,
    results: Vec<ResultRow>,
    /// Where the list ends although more objects match, said in a sentence.
    cut: Option<String>,
    next_page: Option<String>,
}

/// A result as the page shows it.
struct ResultRow {
    id: String,
    title: String,
    kind: String,
    space: String,
    origin: String,
    status: &'static str,
    alarming: bool,
    trust: String,
    updated: TimeView,
}

fn trust_figures(value: f64, lower_bound: f64) -> String {
    format!("{value:.3} (at least {lower_bound:.3})")
}

fn is_alarming(status: crate::domain::TrustStatus) -> bool {
    use crate::domain::TrustStatus;
    matches!(status, TrustStatus::Disputed | TrustStatus::Incorrect)
}

fn result_row(hit: SearchHit, space_names: &[(String, String)]) -> ResultRow {
    let space = hit.space.map_or_else(String::new, |id| {
        space_names
            .iter()
            .find(|(space_id, _)| *space_id == id)
            .map_or(id, |(_, name)| name.clone())
    });
    ResultRow {
        kind: if hit.kind == hit.object_type {
            hit.kind
        } else {
            format!("{} ({})", hit.kind, hit.object_type)
        },
        space,
        status: hit.status.as_str(),
        alarming: is_alarming(hit.status),
        trust: trust_figures(hit.trust.value, hit.trust.lower_bound),
        updated: TimeView::of(hit.updated_at),
        id: hit.id,
        title: hit.title,
        origin: hit.origin,
    }
}

/// `GET /console/knowledge`.
pub async fn search(
    State(state): State<ConsoleState>,
    Query(filters): Query<KnowledgeFilters>,
    headers: HeaderMap,
) -> Response {
    let session = match page_session(&state, &headers).await {
        Ok(session) => session,
        Err(answer) => return answer,
    };
    let mut frame = frame(&state, &session, "Knowledge");
    frame.notice = Notice::done(filters.done.as_deref());
    let service = state.client.service();
    let spaces = match service.list_spaces().await {
        Ok(spaces) => spaces,
        Err(error) => return error_page(&state, Some(frame), &error),
    };
    // The origin choice needs the peers' realms only, not their statuses (20 full peer views cost up to 47 ms p95
    // on PostgreSQL in benches/console.rs; this is one statement).
    let peer_realms = match state.client.federation().peer_realms().await {
        Ok(peer_realms) => peer_realms,
        Err(error) => return error_page(&state, Some(frame), &error),
    };
    let searched = match filters.request() {
        Ok(request) => service.admin_search(&session.caller, &request).await,
        Err(error) => Err(error),
    };
    let (found, refusal) = match searched {
        Ok(found) => (Some(found), None),
        Err(error) if error.code == ErrorCode::InternalError => return error_page(&state, Some(frame), &error),
        Err(error) => (None, Some(error.message)),
    };
    let realm = service.realm().as_str().to_owned();
    // A peer's space may share a name with one of ours (every realm has a `default`): its realm tells them apart.
    let space_names: Vec<(String, String)> = spaces
        .iter()
        .map(|space| {
            let name = if service.realm().is(&space.origin) {
                space.name.clone()
            } else {
                format!("{} ({})", space.name, space.origin)
            };
            (space.id.as_str().to_owned(), name)
        })
        .collect();
    let mut origin_options = vec![
        (String::new(), "Any realm".to_owned()),
        (realm.clone(), format!("{realm} (this instance)")),
    ];
    origin_options.extend(
        peer_realms
            .iter()
            .map(|peer_realm| (peer_realm.clone(), format!("{peer_realm} (peer)"))),
    );
    let mut space_options = vec![(String::new(), "Any space".to_owned())];
    space_options.extend(space_names.iter().map(|(id, name)| (id.clone(), name.clone())));
    let owned_choices = |current: &str, options: &[(String, String)]| {
        options
            .iter()
            .map(|(value, label)| Choice {
                value: value.clone(),
                label: label.clone(),
                selected: current.trim() == value,
            })
            .collect::<Vec<_>>()
    };
    let (results, cut, next_page) = match found {
        Some(found) => (
            found
                .results
                .into_iter()
                .map(|hit| result_row(hit, &space_names))
                .collect(),
            found.cut.map(|cut| {
                format!(
                    "More objects match than this search lists: its list ends after {} results. Add words or filters to narrow it.",
                    cut.after
                )
            }),
            found.next_cursor.map(|cursor| filters.link(&cursor)),
        ),
        None => (Vec::new(), None, None),
    };
    page(
        StatusCode::OK,
        &KnowledgePage {
            frame,
            kinds: choices(
                &filters.kind,
                &[
                    ("", "Any kind"),
                    ("content", "Content"),
                    ("claim", "Claims"),
                    ("entity", "Entities"),
                ],
            ),
            spaces: owned_choices(&filters.space, &space_options),
            origins: owned_choices(&filters.origin, &origin_options),
            statuses: choices(
                &filters.min_status,
                &[
                    ("", "unverified (all)"),
                    ("supported", "supported"),
                    ("high_confidence", "high_confidence"),
                ],
            ),
            disputed: choices(&filters.disputed, &[("", "Included"), ("leave_out", "Left out")]),
            views: choices(
                &filters.trust_view,
                &[("", "All evidence"), ("first_party", "First-party evidence alone")],
            ),
            sorts: choices(
                &filters.sort,
                &[("", "Relevance × trust"), ("trust", "Trust"), ("recent", "Most recent")],
            ),
            filters,
            refusal,
            results,
            cut,
            next_page,
        },
    )
}

#[derive(Template)]
#[template(path = "console/knowledge_item.html")]
struct ItemPage {
    frame: Frame,
    item: ItemFacts,
    revisions: Vec<RevisionRow>,
    claims: Vec<ClaimRow>,
    trust: TrustExplanationView,
    history: HistoryView,
}

/// What the page says of the item itself.
struct ItemFacts {
    id: String,
    kind: &'static str,
    title: String,
    summary: String,
    object_type: String,
    origin: String,
    author: String,
    /// The trust target the explanation and the plot are about (a content item's current revision).
    target: String,
    created: TimeView,
}

struct RevisionRow {
    number: i32,
    id: String,
    title: String,
    status: &'static str,
    created: TimeView,
    change_note: String,
    current: bool,
}

struct ClaimRow {
    id: String,
    text: String,
    status: &'static str,
    alarming: bool,
    trust: String,
}

/// An assessment's figures as the page shows them (three decimals).
struct AssessmentView {
    value: String,
    lower_bound: String,
    upper_bound: String,
    status: &'static str,
    alarming: bool,
    rule: &'static str,
    reason: String,
    confirmations: String,
    contradictions: String,
    real_world_confirmations: String,
    first_party_units: String,
    remote_units: String,
}

fn assessment_view(assessment: &Assessment) -> AssessmentView {
    let counts = &assessment.counts;
    let units = &assessment.evidence_units;
    AssessmentView {
        value: format!("{:.3}", assessment.value),
        lower_bound: format!("{:.3}", assessment.lower_bound),
        upper_bound: format!("{:.3}", assessment.upper_bound),
        status: assessment.status.as_str(),
        alarming: is_alarming(assessment.status),
        rule: assessment.rule.as_str(),
        reason: assessment.reason.clone(),
        confirmations: format!(
            "{} first-party, {} from peers",
            counts.independent_confirmations.first_party, counts.independent_confirmations.remote
        ),
        contradictions: format!(
            "{} first-party, {} from peers",
            counts.contradictions.first_party, counts.contradictions.remote
        ),
        real_world_confirmations: format!(
            "{} first-party, {} from peers",
            counts.real_world_confirmations.first_party, counts.real_world_confirmations.remote
        ),
        first_party_units: format!(
            "{:.3} for, {:.3} against",
            units.first_party.belief, units.first_party.disbelief
        ),
        remote_units: format!("{:.3} for, {:.3} against", units.remote.belief, units.remote.disbelief),
    }
}

/// A first-party controller's row.
struct ControllerRow {
    controller: String,
    records: u32,
    belief: String,
    disbelief: String,
    stance: &'static str,
    capped: bool,
    flags: String,
}

/// A peer's (or an unknown realm's) row.
struct OriginRow {
    origin: String,
    reason: String,
    records: u32,
    remote_controllers: u32,
    instance_trust: String,
    raw: String,
    discount: String,
    belief: String,
    disbelief: String,
    bound: String,
    stance: &'static str,
}

struct TrustExplanationView {
    computed: TimeView,
    combined: AssessmentView,
    first_party_only: AssessmentView,
    controllers: Vec<ControllerRow>,
    origins: Vec<OriginRow>,
    excluded: Vec<(String, u32)>,
    parameters: String,
    instance_trust_epoch: String,
}

fn stance_word(stance: crate::trust::Stance) -> &'static str {
    match stance {
        crate::trust::Stance::Positive => "confirms",
        crate::trust::Stance::Neutral => "neutral",
        crate::trust::Stance::Negative => "contradicts",
    }
}

fn explanation_view(explained: &ExplainedTrust) -> TrustExplanationView {
    let explanation = &explained.explanation;
    let mut controllers = Vec::new();
    let mut origins = Vec::new();
    for party in &explanation.parties {
        match party {
            PartyExplanation::Controller(row) => controllers.push(ControllerRow {
                controller: row.controller.clone(),
                records: row.records,
                belief: format!("{:.3}", row.belief),
                disbelief: format!("{:.3}", row.disbelief),
                stance: stance_word(row.stance),
                capped: row.capped,
                flags: row
                    .flags
                    .iter()
                    .map(
                        |flag| match row.flag_reasons.iter().find(|(reason_flag, _)| reason_flag == flag) {
                            Some((_, reason)) => format!("{}: {reason}", flag.as_str()),
                            None => flag.as_str().to_owned(),
                        },
                    )
                    .collect::<Vec<_>>()
                    .join("; "),
            }),
            PartyExplanation::Instance(row) => origins.push(OriginRow {
                reason: explained
                    .origin_reasons
                    .get(&row.origin)
                    .cloned()
                    .unwrap_or_else(|| "not a peer".to_owned()),
                origin: row.origin.clone(),
                records: row.records,
                remote_controllers: row.remote_controllers,
                instance_trust: format!("{:.2}", row.instance_trust),
                raw: format!("{:.3} for, {:.3} against", row.raw_belief, row.raw_disbelief),
                discount: format!("{:.3}", row.discount_factor),
                belief: format!("{:.3}", row.belief),
                disbelief: format!("{:.3}", row.disbelief),
                bound: match row.bound {
                    InstanceBound::Quarantined => "weighs nothing (trust 0)".to_owned(),
                    InstanceBound::TrustDiscount { saturation } => {
                        format!("the trust discount (at most {saturation:.3} units)")
                    }
                    InstanceBound::InstanceCap { cap } => format!("the per-instance cap ({cap:.3} units)"),
                },
                stance: stance_word(row.stance),
            }),
        }
    }
    let counts = explanation.excluded;
    let excluded = [
        ("retracted records", counts.retracted),
        ("the author's own records", counts.self_evidence),
        (
            "reviews replaced by a later one of the same actor",
            counts.superseded_reviews,
        ),
        ("records of realms whose trust is 0", counts.weight0_instance_records),
        (
            "remote records without a valid origin signature",
            counts.unsigned_remote,
        ),
    ]
    .into_iter()
    .filter(|(_, count)| *count > 0)
    .map(|(label, count)| (label.to_owned(), count))
    .collect();
    TrustExplanationView {
        computed: TimeView::of(explanation.computed_at),
        combined: assessment_view(&explanation.assessment),
        first_party_only: assessment_view(&explained.first_party_only),
        controllers,
        origins,
        excluded,
        parameters: explanation.parameters.clone(),
        instance_trust_epoch: explanation.instance_trust_epoch.clone(),
    }
}

/// The span an item's trust plot covers, up to the moment its trust is evaluated at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum HistoryRange {
    /// From the trust target's creation (the default).
    #[default]
    SinceCreated,
    LastDay,
    LastWeek,
    Last30Days,
}

impl HistoryRange {
    /// Every range with its name in the query and its label in the form, the default first.
    const ALL: [(HistoryRange, &'static str, &'static str); 4] = [
        (HistoryRange::SinceCreated, "since_created", "Since it was made"),
        (HistoryRange::LastDay, "last_day", "Last day"),
        (HistoryRange::LastWeek, "last_week", "Last week"),
        (HistoryRange::Last30Days, "last_30_days", "Last 30 days"),
    ];

    /// The first moment of the range ending `until` (the service moves a moment before the target's creation to
    /// its creation).
    fn start(self, until: chrono::DateTime<chrono::Utc>) -> chrono::DateTime<chrono::Utc> {
        match self {
            HistoryRange::SinceCreated => chrono::DateTime::<chrono::Utc>::MIN_UTC,
            HistoryRange::LastDay => until - chrono::TimeDelta::days(1),
            HistoryRange::LastWeek => until - chrono::TimeDelta::days(7),
            HistoryRange::Last30Days => until - chrono::TimeDelta::days(30),
        }
    }
}

/// The plot's form as the browser sends it (`?trust_view=first_party&range=last_week`; empty is the default).
#[derive(Debug, Default, Deserialize)]
pub struct HistoryQuery {
    #[serde(default)]
    trust_view: String,
    #[serde(default)]
    range: String,
}

/// What the plot shows: which evidence, over which span.
#[derive(Debug, Clone, Copy, Default)]
struct HistoryChoice {
    view: TrustViewScope,
    range: HistoryRange,
}

impl HistoryChoice {
    /// The choice the query names, or why it names none.
    fn of(query: &HistoryQuery) -> Result<HistoryChoice, ServiceError> {
        let view = TrustViewScope::from_input(given(&query.trust_view).as_deref())?;
        let range = match given(&query.range) {
            None => HistoryRange::default(),
            Some(name) => HistoryRange::ALL
                .iter()
                .find(|(_, known, _)| *known == name)
                .map(|(range, _, _)| *range)
                .ok_or_else(|| {
                    ServiceError::validation(
                        "range",
                        "range must be since_created, last_day, last_week or last_30_days",
                    )
                })?,
        };
        Ok(HistoryChoice { view, range })
    }

    /// The form's choices, this one selected.
    fn form(self) -> HistoryForm {
        HistoryForm {
            views: [
                (TrustViewScope::All, "All evidence"),
                (TrustViewScope::FirstParty, "First-party evidence alone"),
            ]
            .into_iter()
            .map(|(view, label)| Choice {
                value: view.as_str().to_owned(),
                label: label.to_owned(),
                selected: view == self.view,
            })
            .collect(),
            ranges: HistoryRange::ALL
                .iter()
                .map(|(range, name, label)| Choice {
                    value: (*name).to_owned(),
                    label: (*label).to_owned(),
                    selected: *range == self.range,
                })
                .collect(),
        }
    }

    /// The view in words, for the plot's description and the table's caption.
    fn evidence(self) -> &'static str {
        match self.view {
            TrustViewScope::All => "on all evidence",
            TrustViewScope::FirstParty => "on first-party evidence alone",
        }
    }
}

/// The plot's form.
struct HistoryForm {
    views: Vec<Choice>,
    ranges: Vec<Choice>,
}

/// The plot and its table.
struct HistoryView {
    /// The inline SVG, when it could be drawn.
    svg: Option<String>,
    /// Which evidence the moments weigh, in words.
    evidence: &'static str,
    form: HistoryForm,
    rows: Vec<HistoryRow>,
}

struct HistoryRow {
    at: TimeView,
    value: String,
    interval: String,
    status: &'static str,
    rule: &'static str,
}

fn history_view(history: &TrustHistory, title: &str, choice: HistoryChoice) -> HistoryView {
    let (Some(first), Some(last)) = (history.points.first(), history.points.last()) else {
        return HistoryView {
            svg: None,
            evidence: choice.evidence(),
            form: choice.form(),
            rows: Vec::new(),
        };
    };
    let plot = TimeSeriesPlot {
        description: format!(
            "Trust value of {title} {} with its 90% interval, at {} moments from {} to {}",
            choice.evidence(),
            history.points.len(),
            TimeView::of(first.at).utc,
            TimeView::of(last.at).utc
        ),
        y_unit: "trust value (0–1)".to_owned(),
        y_range: Some((0.0, 1.0)),
        points: history.points.iter().map(|point| (point.at, point.value)).collect(),
        band: Some(
            history
                .points
                .iter()
                .map(|point| (point.lower_bound, point.upper_bound))
                .collect(),
        ),
    };
    let svg = match time_series_svg(&plot) {
        Ok(svg) => Some(svg),
        Err(error) => {
            tracing::warn!(error = %error, target = %history.target_id, "an item's trust plot was not drawn");
            None
        }
    };
    HistoryView {
        svg,
        evidence: choice.evidence(),
        form: choice.form(),
        rows: history
            .points
            .iter()
            .map(|point| HistoryRow {
                at: TimeView::of(point.at),
                value: format!("{:.3}", point.value),
                interval: format!("{:.3} – {:.3}", point.lower_bound, point.upper_bound),
                status: point.status.as_str(),
                rule: point.rule.as_str(),
            })
            .collect(),
    }
}

/// `GET /console/knowledge/{id}`, with the plot's trust view and range in the query (a value it does not know is a
/// 400 page).
pub async fn show(
    State(state): State<ConsoleState>,
    Path(id): Path<String>,
    query: Result<Query<HistoryQuery>, QueryRejection>,
    headers: HeaderMap,
) -> Response {
    let session = match page_session(&state, &headers).await {
        Ok(session) => session,
        Err(answer) => return answer,
    };
    let frame = frame(&state, &session, "Knowledge");
    let choice = match query {
        Ok(Query(query)) => HistoryChoice::of(&query),
        Err(rejection) => Err(ServiceError::validation("query", rejection.body_text())),
    };
    match choice {
        Ok(choice) => item_page(&state, &session, frame, &id, choice, StatusCode::OK).await,
        Err(error) => error_page(&state, Some(frame), &error),
    }
}

/// The page of the item `id` in `frame` with `status`, its plot as `choice` says (a refused deletion shows it again
/// with its notice).
async fn item_page(
    state: &ConsoleState,
    session: &ConsoleSession,
    frame: Frame,
    id: &str,
    choice: HistoryChoice,
    status: StatusCode,
) -> Response {
    let service = state.client.service();
    let request = GetRequest {
        id: id.to_owned(),
        revision: None,
        include: Some(
            ["claims", "revisions", "explanation"]
                .into_iter()
                .map(str::to_owned)
                .collect(),
        ),
        evidence_cursor: None,
        trust_view: TrustViewScope::All,
    };
    let not_an_item = || {
        ServiceError::new(
            ErrorCode::NotFound,
            format!("{id} is not a content item, a revision, a claim or an entity held here"),
        )
    };
    let view = match service.admin_get(&session.caller, &request).await {
        Ok(view) => view,
        Err(error) => return error_page(state, Some(frame), &error),
    };
    let (item, target, revisions, claims, explained) = match view {
        ObjectView::Content(content) => {
            let current = content.content.current_revision_id.clone();
            let revisions = content
                .revisions
                .unwrap_or_default()
                .into_iter()
                .rev()
                .map(|brief| RevisionRow {
                    number: brief.revision.revision_no,
                    current: brief.revision.id == current,
                    id: brief.revision.id.as_str().to_owned(),
                    title: brief.revision.title.clone(),
                    status: brief.status.as_str(),
                    created: TimeView::of(brief.revision.created_at),
                    change_note: brief.revision.change_note.clone().unwrap_or_default(),
                })
                .collect();
            let claims = content
                .claims
                .unwrap_or_default()
                .into_iter()
                .map(|standing| ClaimRow {
                    id: standing.claim.id.as_str().to_owned(),
                    text: standing.claim.text,
                    status: standing.status.as_str(),
                    alarming: is_alarming(standing.status),
                    trust: trust_figures(standing.trust.value, standing.trust.lower_bound),
                })
                .collect();
            let item = ItemFacts {
                id: content.content.id.as_str().to_owned(),
                kind: "Content",
                title: content.revision.title.clone(),
                summary: content.revision.summary.clone(),
                object_type: content.content.content_type.clone(),
                origin: content.content.origin.clone(),
                author: content.content.author_id.as_str().to_owned(),
                target: content.revision.id.as_str().to_owned(),
                created: TimeView::of(content.content.created_at),
            };
            (
                item,
                content.revision.id.clone(),
                revisions,
                claims,
                content.explanation,
            )
        }
        ObjectView::Claim(claim) => (
            ItemFacts {
                id: claim.claim.id.as_str().to_owned(),
                kind: "Claim",
                title: claim.claim.text.clone(),
                summary: String::new(),
                object_type: "claim".to_owned(),
                origin: claim.claim.origin.clone(),
                author: claim.claim.author_id.as_str().to_owned(),
                target: claim.claim.id.as_str().to_owned(),
                created: TimeView::of(claim.claim.created_at),
            },
            claim.claim.id.clone(),
            Vec::new(),
            Vec::new(),
            claim.explanation,
        ),
        ObjectView::Entity(entity) => (
            ItemFacts {
                id: entity.entity.id.as_str().to_owned(),
                kind: "Entity",
                title: entity.entity.name.clone(),
                summary: entity.entity.description.clone(),
                object_type: entity.entity.entity_type.clone(),
                origin: entity.entity.origin.clone(),
                author: entity.entity.created_by.as_str().to_owned(),
                target: entity.entity.id.as_str().to_owned(),
                created: TimeView::of(entity.entity.created_at),
            },
            entity.entity.id.clone(),
            Vec::new(),
            Vec::new(),
            entity.explanation,
        ),
        _ => return error_page(state, Some(frame), &not_an_item()),
    };
    let Some(explained) = explained else {
        return error_page(
            state,
            Some(frame),
            &ServiceError::internal("an explanation was asked for and not given"),
        );
    };
    // The chosen span (by default the target's whole life) up to the moment the explanation was evaluated at, at
    // the same number of moments whatever its length.
    let until = explained.explanation.computed_at;
    let history = match service
        .trust_history(
            &target,
            choice.view,
            choice.range.start(until),
            until,
            TRUST_PLOT_POINTS,
        )
        .await
    {
        Ok(history) => history,
        Err(error) => return error_page(state, Some(frame), &error),
    };
    let frame = Frame {
        title: format!("{} · Knowledge", item.title),
        ..frame
    };
    page(
        status,
        &ItemPage {
            frame,
            history: history_view(&history, &item.title, choice),
            trust: explanation_view(&explained),
            item,
            revisions,
            claims,
        },
    )
}

/// The deletion form.
#[derive(Debug, Default, Deserialize)]
pub struct DeleteForm {
    #[serde(default)]
    form_token: String,
    /// Why (kept in the tombstone that peers receive).
    #[serde(default)]
    reason: String,
}

/// `POST /console/knowledge/{id}/delete` (`interai admin content delete ID --reason …`): deletes a content item on
/// behalf of the signed-in admin; content from another realm is deleted here only.
pub async fn delete(
    State(state): State<ConsoleState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    Form(form): Form<DeleteForm>,
) -> Response {
    let session = match form_session(&state, &headers, &form.form_token).await {
        Ok(session) => session,
        Err(refusal) => return refusal,
    };
    let deleted = audited(
        &state,
        &session,
        "content.delete",
        &serde_json::json!({ "id": id, "reason": form.reason.trim() }),
        state
            .client
            .service()
            .delete_content(&session.caller.actor.id, &id, &form.reason),
        |deletion| format!("{} deleted", deletion.tombstone.content_id),
    )
    .await;
    match deleted {
        Ok(_) => done("/console/knowledge", "content.delete"),
        Err(error) => {
            let frame = failed_frame(&state, &session, "Knowledge", &error);
            item_page(
                &state,
                &session,
                frame,
                &id,
                HistoryChoice::default(),
                failed_status(&error),
            )
            .await
        }
    }
}
