//! Discovery: `search` across content, claims and entities, ranked by relevance and trust, with signed cursors,
//! and the upkeep of the search documents it reads.
//!
//! Ranking contract (the same on both backends; only the text-relevance function differs):
//! `rank = relevance × (0.3 + 0.7 × lower_bound) × status_weight × context_boost`, where `relevance` ∈ (0, 1) is
//! the backend's text score mapped by x/(1+x), `lower_bound` is the 5% quantile of the trust interval (so unproven
//! items, whose lower bound is low, cannot outrank proven ones of equal relevance), `status_weight` is 1 for
//! unverified, supported and high_confidence, 0.6 for disputed and outdated, 0.5 for superseded and 0.3 for
//! incorrect, and `context_boost` is 1.25 when the item has usage or ratings in the requested context.

use base64::Engine;
use chrono::{DateTime, Utc};
use hmac::{Hmac, KeyInit, Mac};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::Sha256;

use super::limits::{
    MAX_CURSOR_CHARACTERS, MAX_KEYWORD_CHARACTERS, MAX_NAME_CHARACTERS, MAX_SEARCH_KINDS, MAX_SEARCH_TYPES,
    MAX_TAG_CHARACTERS, MAX_TAGS, MIN_SEARCH_LIMIT,
};
use super::validation::{
    cap_each_text, cap_items, cap_optional_text, cap_text, keyword, parse_id, parse_target, type_name,
};
use super::{Service, ServiceError};
use crate::domain::search_query::ParsedQuery;
use crate::domain::{AuthenticatedActor, IdKind, Scope, TrustStatus, TrustStatuses, TrustViewScope};
use crate::store::search::{SearchCandidate, SearchDocument, SearchFilter, SearchKind, SearchListing, SearchOrder};
use crate::store::{self, Conn};

pub use super::limits::{MAX_QUERY_CHARACTERS, MAX_SEARCH_LIMIT};
/// Results per page when the caller does not say.
pub const DEFAULT_SEARCH_LIMIT: u32 = 10;
/// How many of the most relevant matches are ranked by trust; a query's results come from these. A search with more
/// matches says so in its results ([`SearchCut`]).
pub const RELEVANCE_CANDIDATES: usize = 200;

/// Everything `search` accepts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SearchRequest {
    /// Words to look for; empty browses.
    pub query: Option<String>,
    /// `content`, `claim`, `entity` (default: all three).
    pub kinds: Vec<String>,
    /// Content types to include.
    pub content_types: Vec<String>,
    /// Entity types to include.
    pub entity_types: Vec<String>,
    /// Context facets: items with evidence in this context rank higher.
    pub context: Option<Value>,
    /// Return alternatives to this entity or content item, optionally for one reason.
    pub alternatives_to: Option<(String, Option<String>)>,
    /// A `spc_` ID or space name.
    pub space: Option<String>,
    /// Tags every content result must carry.
    pub tags: Vec<String>,
    /// `unverified` (default), `supported` or `high_confidence`.
    pub min_status: Option<String>,
    /// Whether disputed, outdated, incorrect and superseded items are included (default true).
    pub include_disputed: Option<bool>,
    /// `rank` (default), `trust` or `recent`.
    pub sort: Option<String>,
    /// Results per page (1–50, default 10).
    pub limit: Option<u32>,
    /// The `next_cursor` of the previous page.
    pub cursor: Option<String>,
    /// Whose evidence the statuses, the trust order and each result's trust weigh (`trust_view`, an extension).
    pub trust_view: TrustViewScope,
    /// Only objects from this realm: this instance's own, or a peer's (`origin`, an extension).
    pub origin: Option<String>,
}

/// A result's trust, as listings show it.
#[derive(Debug, Clone, PartialEq)]
pub struct TrustBrief {
    /// Posterior mean.
    pub value: f64,
    /// 5% quantile.
    pub lower_bound: f64,
    /// Independent confirming parties.
    pub independent_confirmations: i32,
    /// Contradicting parties.
    pub contradictions: i32,
    /// Confirming parties with a real-world success.
    pub real_world_confirmations: i32,
}

/// One search result.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchHit {
    /// The object's ID.
    pub id: String,
    /// `content`, `claim` or `entity`.
    pub kind: String,
    /// Content type, entity type, or `claim`.
    pub object_type: String,
    /// Title, claim text or entity name.
    pub title: String,
    /// Summary or description.
    pub summary: String,
    /// Trust status.
    pub status: TrustStatus,
    /// Trust figures.
    pub trust: TrustBrief,
    /// Who wrote it.
    pub author: Option<String>,
    /// Its realm.
    pub origin: String,
    /// A content item's space (`spc_` ID).
    pub space: Option<String>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
    /// The ranking score (for `rank`), for transparency.
    pub score: f64,
    /// For an object from another realm: where from and how far this instance trusts it.
    pub foreign_origin: Option<super::origins::ForeignOrigin>,
}

/// Where a text search's list of results ends although more objects match: its pages end after `after` results.
/// Said on every page of such a search, so that a caller paging through it knows from the first page on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchCut {
    /// How many results the search lists at most; the matches past them are left out.
    pub after: usize,
    /// Which bound cut the list.
    pub reason: CutReason,
}

/// The bound that cut a search's results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum CutReason {
    /// `sort: rank` ranks only the [`RELEVANCE_CANDIDATES`] most relevant matches of the pool.
    Ranking,
    /// A text query considers only its pool: the `INTERAI_SEARCH_CANDIDATES` most recently changed matches.
    Candidates,
}

impl CutReason {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            CutReason::Ranking => "ranking",
            CutReason::Candidates => "candidates",
        }
    }
}

/// A page of results.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchResults {
    /// The results in order.
    pub results: Vec<SearchHit>,
    /// The cursor for the next page, when there is one.
    pub next_cursor: Option<String>,
    /// Whether the required words matched nothing and the results match any of them instead.
    pub relaxed: bool,
    /// Where the list ends although more objects match, when it does.
    pub cut: Option<SearchCut>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum Sort {
    Rank,
    Trust,
    Recent,
}

/// What a cursor remembers: which search it belongs to, the snapshot, and where the next page starts.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct CursorState {
    /// Fingerprint of the search parameters (without cursor and limit).
    search: String,
    /// Only objects created up to this instant take part, so pages stay stable while new items arrive.
    as_of: DateTime<Utc>,
    /// Whether the first page fell back to matching any word.
    relaxed: bool,
    /// Where the first page found the list cut (`sort: trust` and `recent` with a query, whose pages cannot see it
    /// themselves). Absent from cursors made before it existed.
    #[serde(default)]
    cut: Option<SearchCut>,
    position: CursorPosition,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
enum CursorPosition {
    Rank { score: f64, id: String },
    Trust { rank: i32, lower_bound: f64, id: String },
    Recent { updated_at: DateTime<Utc>, id: String },
}

impl Service {
    /// `search`: content, claims and entities matching the request, best first.
    pub async fn search(
        &self,
        caller: &AuthenticatedActor,
        request: &SearchRequest,
    ) -> Result<SearchResults, ServiceError> {
        self.require_scope(caller, Scope::Read)?;
        self.search_permitted(request).await
    }

    /// [`Service::search`] for an admin (the console's knowledge page): an admin key holds the `admin` scope and
    /// not necessarily `read`, and reads what `search` reads, the same way.
    pub async fn admin_search(
        &self,
        caller: &AuthenticatedActor,
        request: &SearchRequest,
    ) -> Result<SearchResults, ServiceError> {
        self.require_scope(caller, Scope::Admin)?;
        self.search_permitted(request).await
    }

    /// The search itself, once the caller's scope allowed it.
    async fn search_permitted(&self, request: &SearchRequest) -> Result<SearchResults, ServiceError> {
        check_search_sizes(request)?;
        let limit = request.limit.unwrap_or(DEFAULT_SEARCH_LIMIT);
        if !(MIN_SEARCH_LIMIT..=MAX_SEARCH_LIMIT).contains(&limit) {
            return Err(ServiceError::validation(
                "limit",
                format!("limit must be from {MIN_SEARCH_LIMIT} to {MAX_SEARCH_LIMIT}"),
            ));
        }
        let query_text = request.query.as_deref().map(str::trim).filter(|text| !text.is_empty());
        let parsed = query_text.and_then(ParsedQuery::parse);
        let sort = match request.sort.as_deref().map(|sort| keyword("sort", sort)).transpose()? {
            None | Some("") | Some("rank") => {
                if parsed.is_some() {
                    Sort::Rank
                } else {
                    Sort::Trust
                }
            }
            Some("trust") => Sort::Trust,
            Some("recent") => Sort::Recent,
            Some(_) => return Err(ServiceError::validation("sort", "sort must be rank, trust or recent")),
        };
        let kinds = parse_kinds(&request.kinds)?;
        let content_types = request
            .content_types
            .iter()
            .enumerate()
            .map(|(position, name)| type_name(&format!("content_types/{position}"), name))
            .collect::<Result<Vec<_>, _>>()?;
        let entity_types = request
            .entity_types
            .iter()
            .enumerate()
            .map(|(position, name)| type_name(&format!("entity_types/{position}"), name))
            .collect::<Result<Vec<_>, _>>()?;
        let tags = request
            .tags
            .iter()
            .enumerate()
            .map(|(position, tag)| {
                crate::domain::text::normalize_tag(tag)
                    .map_err(|error| ServiceError::validation(&format!("tags/{position}"), format!("tag: {error}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let statuses = allowed_statuses(request.min_status.as_deref(), request.include_disputed.unwrap_or(true))?;
        let (_, context_key) = super::validation::context("context", request.context.as_ref())?;
        let context_facets: Vec<String> = context_key
            .facets()
            .iter()
            .map(|(key, value)| format!("{key}={value}"))
            .collect();
        let alternatives = match &request.alternatives_to {
            None => None,
            Some((id, reason)) => {
                let target = parse_target(
                    "alternatives_to/id",
                    id,
                    &[IdKind::Entity, IdKind::Content],
                    "alternatives_to",
                )?;
                let reason = reason
                    .as_deref()
                    .map(|reason| keyword("alternatives_to/reason", reason))
                    .transpose()?
                    .filter(|reason| !reason.is_empty());
                if let Some(reason) = reason
                    && !crate::domain::knowledge::ALTERNATIVE_REASONS.contains(&reason)
                {
                    return Err(ServiceError::validation(
                        "alternatives_to/reason",
                        format!(
                            "reason must be one of {}",
                            crate::domain::knowledge::ALTERNATIVE_REASONS.join(", ")
                        ),
                    ));
                }
                Some((target, reason.map(str::to_owned)))
            }
        };
        let mut search_parameters = json!({
            "query": query_text, "kinds": request.kinds, "content_types": content_types, "entity_types": entity_types,
            "context": context_key.to_string(), "alternatives_to": request.alternatives_to.as_ref().map(|(id, reason)| json!([id, reason])),
            "space": request.space, "tags": tags,
            "statuses": statuses.iter().map(|status| status.as_str()).collect::<Vec<_>>(), "sort": format!("{sort:?}"),
        });
        if request.trust_view != TrustViewScope::All {
            // Only another view is named, so that cursors made before there were views stay valid.
            search_parameters["trust_view"] = json!(request.trust_view.as_str());
        }
        let origin = origin_filter(request.origin.as_deref());
        if let Some(origin) = &origin {
            // Named only when given, for the same reason.
            search_parameters["origin"] = json!(origin);
        }
        let search_fingerprint = super::writes::request_fingerprint(&search_parameters);
        let mut reader = self.store().reader().await?;
        let secret = self.signing_secret(&mut reader.conn()).await?;
        let cursor = match request.cursor.as_deref().filter(|cursor| !cursor.is_empty()) {
            Some(text) => {
                let state = decode_cursor(&secret, text)?;
                if state.search != search_fingerprint {
                    return Err(ServiceError::validation(
                        "cursor",
                        "this cursor belongs to a different search; repeat the same parameters or drop the cursor",
                    ));
                }
                Some(state)
            }
            None => None,
        };
        let as_of = cursor.as_ref().map_or_else(|| self.now(), |state| state.as_of);

        let space_id = match request
            .space
            .as_deref()
            .map(str::trim)
            .filter(|space| !space.is_empty())
        {
            None => None,
            Some(space) if super::validation::names_a_space_id(space) => {
                let id = parse_id("space", space)?;
                store::knowledge::find_space(&mut reader.conn(), &id)
                    .await?
                    .ok_or_else(|| ServiceError::not_found(id.as_str()))?;
                Some(id.into_string())
            }
            Some(name) => Some(
                store::knowledge::list_spaces(&mut reader.conn())
                    .await?
                    .into_iter()
                    .find(|space| space.name == name)
                    .ok_or_else(|| {
                        ServiceError::new(super::ErrorCode::NotFound, format!("no space named {name:?} exists"))
                    })?
                    .id
                    .into_string(),
            ),
        };
        let restrict_to = match &alternatives {
            None => None,
            Some((target, reason)) => Some(
                self.alternative_ids(&mut reader.conn(), target, reason.as_deref())
                    .await?,
            ),
        };
        let base_filter = SearchFilter {
            text: None,
            kinds,
            content_types,
            entity_types,
            tags,
            space_id,
            origin,
            statuses,
            trust_view: request.trust_view,
            // A first page runs at `as_of` itself, so nothing can have been created after it.
            created_at_or_before: cursor.is_some().then_some(as_of),
            restrict_to,
            order: SearchOrder::Recent { after: None },
            candidates: i64::from(self.settings().search_candidates),
            limit: i64::from(limit) + 1,
        };

        let (mut hits, relaxed, cut) = match sort {
            Sort::Rank => {
                let Some(parsed) = &parsed else {
                    return Err(ServiceError::internal("rank without a query"));
                };
                let mut relaxed = cursor.as_ref().is_some_and(|state| state.relaxed);
                // One more than are ranked, to learn whether the ranking leaves matches out.
                let mut filter = SearchFilter {
                    text: Some(if relaxed { parsed.relaxed() } else { parsed.clone() }),
                    order: SearchOrder::Relevance {
                        best: RELEVANCE_CANDIDATES + 1,
                    },
                    ..base_filter.clone()
                };
                let mut candidates = store::search::search(&mut reader.conn(), &filter).await?;
                if candidates.is_empty() && cursor.is_none() && parsed.required.len() > 1 {
                    relaxed = true;
                    filter.text = Some(parsed.relaxed());
                    candidates = store::search::search(&mut reader.conn(), &filter).await?;
                }
                // The most relevant of the pool take part in the ranking.
                candidates.sort_by(|left, right| {
                    right
                        .relevance
                        .total_cmp(&left.relevance)
                        .then_with(|| left.object_id.cmp(&right.object_id))
                });
                let cut = if candidates.len() > RELEVANCE_CANDIDATES {
                    Some(SearchCut {
                        after: RELEVANCE_CANDIDATES,
                        reason: CutReason::Ranking,
                    })
                } else if i64::try_from(candidates.len()).unwrap_or(i64::MAX) >= filter.candidates
                    && store::search::more_matches_than(&mut reader.conn(), &filter, filter.candidates).await?
                {
                    // The whole pool was ranked (a pool smaller than the ranking), and it was full.
                    Some(SearchCut {
                        after: candidates.len(),
                        reason: CutReason::Candidates,
                    })
                } else {
                    None
                };
                candidates.truncate(RELEVANCE_CANDIDATES);
                let boosted = if context_facets.is_empty() {
                    Vec::new()
                } else {
                    let ids: Vec<String> = candidates.iter().map(|candidate| candidate.object_id.clone()).collect();
                    store::search::objects_with_evidence_in_context(&mut reader.conn(), &ids, &context_facets).await?
                };
                let mut scored: Vec<(SearchCandidate, f64)> = candidates
                    .into_iter()
                    .map(|candidate| {
                        let boost = if boosted.contains(&candidate.object_id) {
                            1.25
                        } else {
                            1.0
                        };
                        let score = candidate.relevance
                            * (0.3 + 0.7 * candidate.lower_bound)
                            * status_weight(candidate.status)
                            * boost;
                        (candidate, score)
                    })
                    .collect();
                scored.sort_by(|(left, left_score), (right, right_score)| {
                    right_score
                        .total_cmp(left_score)
                        .then_with(|| left.object_id.cmp(&right.object_id))
                });
                if let Some(CursorState {
                    position: CursorPosition::Rank { score, id },
                    ..
                }) = &cursor
                {
                    scored.retain(|(candidate, candidate_score)| {
                        *candidate_score < *score || (*candidate_score == *score && candidate.object_id > *id)
                    });
                }
                scored.truncate(usize::try_from(limit).unwrap_or(10) + 1);
                (listed(&mut reader.conn(), scored).await?, relaxed, cut)
            }
            Sort::Trust | Sort::Recent => {
                let order = match (sort, &cursor) {
                    (
                        Sort::Trust,
                        Some(CursorState {
                            position: CursorPosition::Trust { rank, lower_bound, id },
                            ..
                        }),
                    ) => SearchOrder::Trust {
                        after: Some((*rank, *lower_bound, id.clone())),
                    },
                    (Sort::Trust, _) => SearchOrder::Trust { after: None },
                    (
                        _,
                        Some(CursorState {
                            position: CursorPosition::Recent { updated_at, id },
                            ..
                        }),
                    ) => SearchOrder::Recent {
                        after: Some((*updated_at, id.clone())),
                    },
                    _ => SearchOrder::Recent { after: None },
                };
                // With a text query the store pages through its pool of candidates, otherwise through everything.
                let filter = SearchFilter {
                    text: parsed.clone(),
                    order,
                    ..base_filter.clone()
                };
                // Whether the pool leaves matches out: learned once, on the first page, and carried by the cursor.
                let cut = match &cursor {
                    Some(state) => state.cut,
                    None if filter.text.is_some()
                        && store::search::more_matches_than(&mut reader.conn(), &filter, filter.candidates).await? =>
                    {
                        Some(SearchCut {
                            after: usize::try_from(filter.candidates).unwrap_or(usize::MAX),
                            reason: CutReason::Candidates,
                        })
                    }
                    None => None,
                };
                let candidates = store::search::search(&mut reader.conn(), &filter).await?;
                let scored = candidates
                    .into_iter()
                    .map(|candidate| {
                        let score = candidate.relevance;
                        (candidate, score)
                    })
                    .collect();
                (listed(&mut reader.conn(), scored).await?, false, cut)
            }
        };
        let page_size = usize::try_from(limit).unwrap_or(10);
        let next_cursor = if hits.len() > page_size {
            hits.truncate(page_size);
            let last = hits
                .last()
                .ok_or_else(|| ServiceError::internal("empty page with more results"))?;
            let position = match sort {
                Sort::Rank => CursorPosition::Rank {
                    score: last.score,
                    id: last.id.clone(),
                },
                Sort::Trust => CursorPosition::Trust {
                    rank: status_rank(last.status),
                    lower_bound: last.trust.lower_bound,
                    id: last.id.clone(),
                },
                Sort::Recent => CursorPosition::Recent {
                    updated_at: last.updated_at,
                    id: last.id.clone(),
                },
            };
            Some(encode_cursor(
                &secret,
                &CursorState {
                    search: search_fingerprint,
                    as_of,
                    relaxed,
                    cut,
                    position,
                },
            )?)
        } else {
            None
        };
        if hits.iter().any(|hit| !self.realm().is(&hit.origin)) {
            let mut reader = self.store().reader().await?;
            let origins: Vec<String> = hits.iter().map(|hit| hit.origin.clone()).collect();
            let foreign = self
                .foreign_origins(&mut reader.conn(), origins.iter().map(String::as_str))
                .await?;
            for hit in &mut hits {
                hit.foreign_origin = foreign.iter().find(|known| known.realm == hit.origin).cloned();
            }
        }
        Ok(SearchResults {
            results: hits,
            next_cursor,
            relaxed,
            cut,
        })
    }

    /// The objects that count as alternatives to `target`: content declaring `alternative_to` it (for `reason`
    /// when given), the entities those alternatives are about, and content about the same subjects that declares
    /// itself an alternative.
    async fn alternative_ids(
        &self,
        conn: &mut Conn<'_>,
        target: &crate::domain::PublicId,
        reason: Option<&str>,
    ) -> Result<Vec<String>, ServiceError> {
        // Alternatives to nothing are not an empty list: the caller named an object that does not exist.
        let exists = match target.kind() {
            IdKind::Entity => store::knowledge::find_entity(conn, target).await?.is_some(),
            _ => store::knowledge::find_content(conn, target).await?.is_some(),
        };
        if !exists {
            return Err(ServiceError::not_found(target.as_str())
                .with_details(json!({ "id": target.as_str(), "field": "alternatives_to/id" })));
        }
        let mut ids = store::search::alternatives_declared_for(conn, target.as_str(), reason).await?;
        let mut subject_ids: Vec<String> = Vec::new();
        let target_subjects: Vec<String> = match target.kind() {
            IdKind::Entity => vec![target.as_str().to_owned()],
            _ => store::search::subjects_of_contents(conn, &[target.as_str().to_owned()])
                .await?
                .into_iter()
                .map(|(_, entity)| entity)
                .collect(),
        };
        for (_, entity) in store::search::subjects_of_contents(conn, &ids).await? {
            if entity != target.as_str() && !target_subjects.contains(&entity) && !subject_ids.contains(&entity) {
                subject_ids.push(entity);
            }
        }
        if reason.is_none() {
            for content in store::search::alternative_contents_about(conn, &target_subjects).await? {
                if content != target.as_str() && !ids.contains(&content) {
                    ids.push(content);
                }
            }
        }
        ids.extend(subject_ids);
        ids.retain(|id| id != target.as_str());
        Ok(ids)
    }

    /// The instance's secret for signing cursors.
    pub(super) async fn signing_secret(&self, conn: &mut Conn<'_>) -> Result<String, ServiceError> {
        // The secret is made once by a migration and never changes, so one read per process is enough.
        let cached = self
            .inner
            .cursor_secret
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone();
        if let Some(secret) = cached {
            return Ok(secret);
        }
        let secret = store::settings::get(conn, "cursor_secret")
            .await?
            .ok_or_else(|| ServiceError::internal("the cursor secret is missing"))?;
        *self
            .inner
            .cursor_secret
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(secret.clone());
        Ok(secret)
    }

    /// Writes (or rewrites) search documents, all in one statement (`documents_are` says whether any may exist).
    pub(super) async fn index_documents(
        &self,
        conn: &mut store::Conn<'_>,
        documents: &[SearchDocument],
        documents_are: store::search::DocumentsAre,
    ) -> Result<(), ServiceError> {
        store::search::upsert_documents(conn, documents, documents_are).await?;
        Ok(())
    }
}

/// The search document of a content item from its current revision (with its trust status), its claims and tags.
pub(super) fn content_document(
    content: &crate::domain::knowledge::ContentItem,
    revision: &crate::domain::knowledge::Revision,
    claims: &[String],
    tags: &[String],
    statuses: TrustStatuses,
) -> SearchDocument {
    let mut body = super::markdown::plain_text_excerpt(&revision.body_markdown, 60_000);
    for claim in claims {
        body.push('\n');
        body.push_str(claim);
    }
    if !tags.is_empty() {
        body.push('\n');
        body.push_str(&tags.join(" "));
    }
    SearchDocument {
        object_id: content.id.as_str().to_owned(),
        kind: SearchKind::Content,
        object_type: content.content_type.clone(),
        space_id: Some(content.space_id.as_str().to_owned()),
        trust_target_id: revision.id.as_str().to_owned(),
        author_id: Some(content.author_id.as_str().to_owned()),
        origin: content.origin.clone(),
        title: revision.title.clone(),
        summary: revision.summary.clone(),
        body,
        // When the item arrived here (its publication when local): search snapshots compare it, so an item
        // replicated late, however old, never shifts a page already read.
        created_at: content.received_at,
        updated_at: revision.created_at,
        tags: tags.to_vec(),
        statuses,
    }
}

/// The search document of a claim with its trust status.
pub(super) fn claim_document(claim: &crate::domain::knowledge::Claim, statuses: TrustStatuses) -> SearchDocument {
    SearchDocument {
        object_id: claim.id.as_str().to_owned(),
        kind: SearchKind::Claim,
        object_type: "claim".to_owned(),
        space_id: None,
        trust_target_id: claim.id.as_str().to_owned(),
        author_id: Some(claim.author_id.as_str().to_owned()),
        origin: claim.origin.clone(),
        title: claim.text.clone(),
        summary: String::new(),
        body: String::new(),
        created_at: claim.created_at,
        updated_at: claim.created_at,
        tags: Vec::new(),
        statuses,
    }
}

/// The search document of an entity with its trust status.
pub(super) fn entity_document(entity: &crate::domain::knowledge::Entity, statuses: TrustStatuses) -> SearchDocument {
    SearchDocument {
        object_id: entity.id.as_str().to_owned(),
        kind: SearchKind::Entity,
        object_type: entity.entity_type.clone(),
        space_id: None,
        trust_target_id: entity.id.as_str().to_owned(),
        author_id: Some(entity.created_by.as_str().to_owned()),
        origin: entity.origin.clone(),
        title: entity.name.clone(),
        summary: entity.description.clone(),
        body: entity.aliases.join(" "),
        created_at: entity.created_at,
        updated_at: entity.created_at,
        tags: Vec::new(),
        statuses,
    }
}

/// The hits of ordered, scored candidates, with what each shows read for them alone (a candidate whose document
/// went away since it was found is left out).
async fn listed(conn: &mut Conn<'_>, scored: Vec<(SearchCandidate, f64)>) -> Result<Vec<SearchHit>, ServiceError> {
    let ids: Vec<String> = scored
        .iter()
        .map(|(candidate, _)| candidate.object_id.clone())
        .collect();
    let mut listings: std::collections::HashMap<String, SearchListing> = store::search::listings(conn, &ids)
        .await?
        .into_iter()
        .map(|listing| (listing.object_id.clone(), listing))
        .collect();
    Ok(scored
        .into_iter()
        .filter_map(|(candidate, score)| {
            let listing = listings.remove(&candidate.object_id)?;
            Some(hit(candidate, listing, score))
        })
        .collect())
}

fn hit(candidate: SearchCandidate, listing: SearchListing, score: f64) -> SearchHit {
    SearchHit {
        id: candidate.object_id,
        kind: listing.kind,
        object_type: listing.object_type,
        title: listing.title,
        summary: listing.summary,
        status: candidate.status,
        trust: TrustBrief {
            value: candidate.value,
            lower_bound: candidate.lower_bound,
            independent_confirmations: candidate.independent_confirmations,
            contradictions: candidate.contradictions,
            real_world_confirmations: candidate.real_world_confirmations,
        },
        author: listing.author_id,
        origin: listing.origin,
        space: listing.space_id,
        updated_at: listing.updated_at,
        score,
        foreign_origin: None,
    }
}

/// Every size cap of a search (`limits`), checked before anything else reads the request.
fn check_search_sizes(request: &SearchRequest) -> Result<(), ServiceError> {
    cap_optional_text("query", request.query.as_deref(), MAX_QUERY_CHARACTERS)?;
    cap_items("kinds", request.kinds.len(), MAX_SEARCH_KINDS)?;
    cap_each_text("kinds", &request.kinds, MAX_KEYWORD_CHARACTERS)?;
    cap_items("content_types", request.content_types.len(), MAX_SEARCH_TYPES)?;
    cap_each_text("content_types", &request.content_types, MAX_KEYWORD_CHARACTERS)?;
    cap_items("entity_types", request.entity_types.len(), MAX_SEARCH_TYPES)?;
    cap_each_text("entity_types", &request.entity_types, MAX_KEYWORD_CHARACTERS)?;
    cap_items("tags", request.tags.len(), MAX_TAGS)?;
    cap_each_text("tags", &request.tags, MAX_TAG_CHARACTERS)?;
    if let Some((id, reason)) = &request.alternatives_to {
        cap_text("alternatives_to/id", id, super::limits::MAX_ID_CHARACTERS)?;
        cap_optional_text("alternatives_to/reason", reason.as_deref(), MAX_KEYWORD_CHARACTERS)?;
    }
    cap_optional_text("space", request.space.as_deref(), MAX_NAME_CHARACTERS)?;
    cap_optional_text("origin", request.origin.as_deref(), MAX_NAME_CHARACTERS)?;
    cap_optional_text("min_status", request.min_status.as_deref(), MAX_KEYWORD_CHARACTERS)?;
    cap_optional_text("sort", request.sort.as_deref(), MAX_KEYWORD_CHARACTERS)?;
    cap_optional_text("cursor", request.cursor.as_deref(), MAX_CURSOR_CHARACTERS)?;
    Ok(())
}

/// The realm an `origin` filter names, as objects store it (lowercase, without a trailing dot); empty is no filter.
fn origin_filter(origin: Option<&str>) -> Option<String> {
    origin
        .map(|origin| origin.trim().trim_end_matches('.').to_ascii_lowercase())
        .filter(|origin| !origin.is_empty())
}

fn parse_kinds(kinds: &[String]) -> Result<Vec<SearchKind>, ServiceError> {
    if kinds.is_empty() {
        return Ok(vec![SearchKind::Content, SearchKind::Claim, SearchKind::Entity]);
    }
    let mut parsed = Vec::new();
    for (position, kind) in kinds.iter().enumerate() {
        let kind = match kind.trim() {
            "content" => SearchKind::Content,
            "claim" => SearchKind::Claim,
            "entity" => SearchKind::Entity,
            _ => {
                return Err(ServiceError::validation(
                    &format!("kinds/{position}"),
                    "kinds are content, claim and entity",
                ));
            }
        };
        if !parsed.contains(&kind) {
            parsed.push(kind);
        }
    }
    Ok(parsed)
}

/// Statuses a search includes: the positive ladder from `min_status` up, and the disputed family when asked for.
fn allowed_statuses(min_status: Option<&str>, include_disputed: bool) -> Result<Vec<TrustStatus>, ServiceError> {
    let ladder = [
        TrustStatus::Unverified,
        TrustStatus::Supported,
        TrustStatus::HighConfidence,
    ];
    let start = match min_status.map(str::trim).filter(|status| !status.is_empty()) {
        None => 0,
        Some(status) => ladder
            .iter()
            .position(|candidate| candidate.as_str() == status)
            .ok_or_else(|| {
                ServiceError::validation(
                    "min_status",
                    "min_status must be unverified, supported or high_confidence",
                )
            })?,
    };
    let mut statuses = ladder[start..].to_vec();
    if include_disputed {
        statuses.extend([
            TrustStatus::Disputed,
            TrustStatus::Outdated,
            TrustStatus::Incorrect,
            TrustStatus::Superseded,
        ]);
    }
    Ok(statuses)
}

fn status_weight(status: TrustStatus) -> f64 {
    match status {
        TrustStatus::Disputed | TrustStatus::Outdated => 0.6,
        TrustStatus::Superseded => 0.5,
        TrustStatus::Incorrect => 0.3,
        TrustStatus::HighConfidence | TrustStatus::Supported | TrustStatus::Unverified => 1.0,
    }
}

/// The order of statuses in `sort: trust`: the store's, which its statements write in SQL and its browsing index
/// holds, so that there is one definition.
pub use crate::store::search::status_rank;

type CursorMac = Hmac<Sha256>;

fn encode_cursor(secret: &str, state: &CursorState) -> Result<String, ServiceError> {
    sign_token(secret, state)
}

fn decode_cursor(secret: &str, text: &str) -> Result<CursorState, ServiceError> {
    verify_token(secret, text, "cursor")
}

/// A tamper-evident token: base64url JSON, a dot, and the first 16 bytes of its HMAC-SHA256.
pub(super) fn sign_token<T: Serialize>(secret: &str, state: &T) -> Result<String, ServiceError> {
    let payload = serde_json::to_vec(state).map_err(|error| ServiceError::internal(error.to_string()))?;
    let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let mut mac =
        CursorMac::new_from_slice(secret.as_bytes()).map_err(|error| ServiceError::internal(error.to_string()))?;
    mac.update(&payload);
    let tag = mac.finalize().into_bytes();
    Ok(format!("{}.{}", engine.encode(&payload), engine.encode(&tag[..16])))
}

/// Reads a token made by [`sign_token`]; anything altered is `validation_failed` on `field`.
pub(super) fn verify_token<T: serde::de::DeserializeOwned>(
    secret: &str,
    text: &str,
    field: &str,
) -> Result<T, ServiceError> {
    let invalid = || {
        ServiceError::validation(
            field,
            format!("{field} is invalid or was altered; use it exactly as returned"),
        )
    };
    let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let (payload, tag) = text.split_once('.').ok_or_else(invalid)?;
    let payload = engine.decode(payload).map_err(|_| invalid())?;
    let tag = engine.decode(tag).map_err(|_| invalid())?;
    let mut mac =
        CursorMac::new_from_slice(secret.as_bytes()).map_err(|error| ServiceError::internal(error.to_string()))?;
    mac.update(&payload);
    mac.verify_truncated_left(&tag).map_err(|_| invalid())?;
    serde_json::from_slice(&payload).map_err(|_| invalid())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_reject_tampering() {
        let state = CursorState {
            search: "abc".to_owned(),
            as_of: DateTime::parse_from_rfc3339("2026-11-29T12:00:00Z")
                .expect("valid")
                .to_utc(),
            relaxed: false,
            cut: None,
            position: CursorPosition::Rank {
                score: 0.5,
                id: "cnt_x".to_owned(),
            },
        };
        let cursor = encode_cursor("secret", &state).expect("encode");
        assert_eq!(decode_cursor("secret", &cursor).expect("decode").search, "abc");
        assert!(decode_cursor("other secret", &cursor).is_err());
        let mut forged = cursor.clone();
        forged.replace_range(0..1, if cursor.starts_with('e') { "f" } else { "e" });
        assert!(decode_cursor("secret", &forged).is_err());
        assert!(decode_cursor("secret", "nonsense").is_err());
    }

    #[test]
    fn min_status_and_include_disputed_choose_statuses() {
        assert_eq!(
            allowed_statuses(Some("supported"), false).expect("valid"),
            vec![TrustStatus::Supported, TrustStatus::HighConfidence]
        );
        assert_eq!(allowed_statuses(None, true).expect("valid").len(), 7);
        assert!(allowed_statuses(Some("great"), true).is_err());
    }
}
