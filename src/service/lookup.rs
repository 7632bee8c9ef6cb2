//! `get`: any public object by ID, with provenance and trust, and the optional parts a caller asks for.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::limits::{
    MAX_CURSOR_CHARACTERS, MAX_ID_CHARACTERS, MAX_INCLUDE_NAMES, MAX_KEYWORD_CHARACTERS, MIN_REVISION_NUMBER,
};
use super::search::TrustBrief;
use super::trust::{ExplainedTrust, TrustTarget, TrustViewScope};
use super::validation::parse_id;
use super::{ErrorCode, Service, ServiceError};
use crate::domain::evidence::{Rating, Review, UsageEvent};
use crate::domain::knowledge::{Claim, ContentItem, Entity, Relation, Revision, Source, Space};
use crate::domain::{Actor, AuthenticatedActor, IdKind, PublicId, Scope, TrustStatus};
use crate::store::trust::RatingAggregateRecord;
use crate::store::{self, Conn};
use crate::trust::Assessment;

/// Most evidence records per page of `include: ["evidence"]`.
pub const EVIDENCE_PAGE_SIZE: i64 = 20;

/// The parts `get` can add to a content item (and, where they apply, to claims and entities).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Includes {
    /// Body and structured data.
    pub body: bool,
    /// Claims with their status.
    pub claims: bool,
    /// Relations declared by and pointing at the item.
    pub relations: bool,
    /// Counts of evidence.
    pub evidence_summary: bool,
    /// Individual evidence records, paginated.
    pub evidence: bool,
    /// Revision history.
    pub revisions: bool,
    /// The full trust explanation.
    pub explanation: bool,
}

impl Includes {
    /// The default when a caller names none: body, claims, relations, evidence summary.
    pub fn default_set() -> Includes {
        Includes {
            body: true,
            claims: true,
            relations: true,
            evidence_summary: true,
            ..Includes::default()
        }
    }

    /// Parses the names of the spec's `include` list.
    pub fn parse(names: &[String]) -> Result<Includes, ServiceError> {
        let mut includes = Includes::default();
        for (position, name) in names.iter().enumerate() {
            match name.trim() {
                "body" => includes.body = true,
                "claims" => includes.claims = true,
                "relations" => includes.relations = true,
                "evidence_summary" => includes.evidence_summary = true,
                "evidence" => includes.evidence = true,
                "revisions" => includes.revisions = true,
                "explanation" => includes.explanation = true,
                _ => {
                    return Err(ServiceError::validation(
                        &format!("include/{position}"),
                        "include names are body, claims, relations, evidence_summary, evidence, revisions and explanation",
                    ));
                }
            }
        }
        Ok(includes)
    }
}

/// Every size cap of a get (`limits`), checked before anything else reads the request.
fn check_get_sizes(request: &GetRequest) -> Result<(), ServiceError> {
    use super::validation::{cap_each_text, cap_items, cap_optional_text, cap_text};
    cap_text("id", &request.id, MAX_ID_CHARACTERS)?;
    if let Some(RevisionSelector::Id(text)) = &request.revision {
        cap_text("revision", text, MAX_ID_CHARACTERS)?;
    }
    if let Some(names) = &request.include {
        cap_items("include", names.len(), MAX_INCLUDE_NAMES)?;
        cap_each_text("include", names, MAX_KEYWORD_CHARACTERS)?;
    }
    cap_optional_text(
        "evidence_cursor",
        request.evidence_cursor.as_deref(),
        MAX_CURSOR_CHARACTERS,
    )
}

/// Which revision of a content item to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RevisionSelector {
    /// By number.
    Number(i32),
    /// By `rev_` ID.
    Id(String),
}

/// Everything `get` accepts.
#[derive(Debug, Clone, PartialEq)]
pub struct GetRequest {
    /// Any public ID.
    pub id: String,
    /// For content: an older revision.
    pub revision: Option<RevisionSelector>,
    /// Parts to include; `None` means the default set.
    pub include: Option<Vec<String>>,
    /// For `include: ["evidence"]`: the `next_cursor` of the previous evidence page.
    pub evidence_cursor: Option<String>,
    /// Whose evidence trust weighs: everything held (the default) or first-party evidence alone.
    pub trust_view: TrustViewScope,
}

/// Trust figures as `get` reports them, evaluated now.
#[derive(Debug, Clone, PartialEq)]
pub struct TrustView {
    /// The assessment.
    pub assessment: Assessment,
    /// The model's version.
    pub model_version: &'static str,
}

/// One claim of a revision with its standing.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimStanding {
    /// The claim.
    pub claim: Claim,
    /// Its status.
    pub status: TrustStatus,
    /// Its trust figures.
    pub trust: TrustBrief,
}

/// Relations around a content item.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RelationsView {
    /// Declared by the shown revision.
    pub client: Vec<Relation>,
    /// Declared by other content's current revisions and pointing at this item.
    pub incoming: Vec<Relation>,
}

/// Counts of evidence on a target.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EvidenceSummary {
    /// Active usage events by result.
    pub usage_by_result: Vec<(String, i64)>,
    /// Active real-world usage events.
    pub real_world_usage: i64,
    /// Active reviews by verdict.
    pub reviews_by_verdict: Vec<(String, i64)>,
    /// Active ratings by dimension (content and entities).
    pub ratings_by_dimension: Vec<(String, i64)>,
    /// Retracted records of every kind.
    pub retracted: i64,
}

/// One evidence record in a listing.
#[derive(Debug, Clone, PartialEq)]
pub enum EvidenceItem {
    /// A usage event.
    Usage(UsageEvent),
    /// A review.
    Review(Review),
    /// A rating.
    Rating(Rating),
}

impl EvidenceItem {
    /// The actor who wrote the record (and its note or rationale).
    fn author(&self) -> &PublicId {
        match self {
            EvidenceItem::Usage(usage) => &usage.author.actor_id,
            EvidenceItem::Review(review) => &review.author.actor_id,
            EvidenceItem::Rating(rating) => &rating.author.actor_id,
        }
    }

    fn position(&self) -> (DateTime<Utc>, String) {
        match self {
            EvidenceItem::Usage(usage) => (usage.created_at, usage.id.as_str().to_owned()),
            EvidenceItem::Review(review) => (review.created_at, review.id.as_str().to_owned()),
            EvidenceItem::Rating(rating) => (rating.created_at, rating.id.as_str().to_owned()),
        }
    }
}

/// A page of evidence records, newest first.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EvidencePage {
    /// The records.
    pub records: Vec<EvidenceItem>,
    /// The cursor for the next page.
    pub next_cursor: Option<String>,
}

/// A revision in the history list.
#[derive(Debug, Clone, PartialEq)]
pub struct RevisionBrief {
    /// The revision.
    pub revision: Revision,
    /// Its status.
    pub status: TrustStatus,
}

/// A content item as `get` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ContentView {
    /// The item.
    pub content: ContentItem,
    /// The shown revision.
    pub revision: Revision,
    /// The shown revision's trust, evaluated now.
    pub trust: TrustView,
    /// Subjects of the shown revision.
    pub subjects: Vec<Entity>,
    /// Tags of the shown revision.
    pub tags: Vec<String>,
    /// Sources cited by the shown revision.
    pub sources: Vec<Source>,
    /// Whether body and structured data are included.
    pub include_body: bool,
    /// Claims, when asked for.
    pub claims: Option<Vec<ClaimStanding>>,
    /// Relations, when asked for.
    pub relations: Option<RelationsView>,
    /// Evidence counts, when asked for.
    pub evidence_summary: Option<EvidenceSummary>,
    /// Evidence records, when asked for.
    pub evidence: Option<EvidencePage>,
    /// Revision history, when asked for.
    pub revisions: Option<Vec<RevisionBrief>>,
    /// The full explanation, when asked for.
    pub explanation: Option<ExplainedTrust>,
    /// Whether any text shown was written by someone other than the caller (see `content_view`).
    pub untrusted_content: bool,
    /// For an item from another realm: where from and how far this instance trusts it.
    pub foreign_origin: Option<super::origins::ForeignOrigin>,
}

/// A claim as `get` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimView {
    /// The claim (the canonical one when `get` named an alias).
    pub claim: Claim,
    /// Other realms' IDs of the same claim, each with its realm.
    pub aliases: Vec<crate::domain::knowledge::ClaimAlias>,
    /// Its trust, evaluated now.
    pub trust: TrustView,
    /// Content items whose current revision makes it.
    pub made_by: Vec<PublicId>,
    /// Evidence counts, when asked for.
    pub evidence_summary: Option<EvidenceSummary>,
    /// Evidence records, when asked for.
    pub evidence: Option<EvidencePage>,
    /// The full explanation, when asked for.
    pub explanation: Option<ExplainedTrust>,
    /// Whether the claim's first author, or the author of any evidence record shown, is someone other than the caller.
    pub untrusted_content: bool,
}

/// An entity as `get` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct EntityView {
    /// The entity.
    pub entity: Entity,
    /// Its trust (from usage reports on it), evaluated now.
    pub trust: TrustView,
    /// Stored rating aggregates by dimension and context.
    pub ratings: Vec<RatingAggregateRecord>,
    /// Evidence counts, when asked for.
    pub evidence_summary: Option<EvidenceSummary>,
    /// Evidence records, when asked for.
    pub evidence: Option<EvidencePage>,
    /// The full explanation, when asked for.
    pub explanation: Option<ExplainedTrust>,
    /// Whether the creator, or the author of any evidence record shown, is someone other than the caller.
    pub untrusted_content: bool,
}

/// Whatever `get` found.
#[derive(Debug, Clone, PartialEq)]
pub enum ObjectView {
    /// A content item or revision.
    Content(Box<ContentView>),
    /// A claim.
    Claim(Box<ClaimView>),
    /// An entity.
    Entity(Box<EntityView>),
    /// An actor, with its root controller's reputation.
    Actor(Box<Actor>, f64),
    /// A space.
    Space(Box<Space>),
    /// A source.
    Source(Box<Source>),
    /// A usage event.
    Usage(Box<UsageEvent>),
    /// A review.
    Review(Box<Review>),
    /// A rating.
    Rating(Box<Rating>),
}

#[derive(Debug, Serialize, Deserialize)]
struct EvidenceCursor {
    target: String,
    created_at: DateTime<Utc>,
    id: String,
}

impl Service {
    /// `get`: any public object.
    pub async fn get(&self, caller: &AuthenticatedActor, request: &GetRequest) -> Result<ObjectView, ServiceError> {
        self.require_scope(caller, Scope::Read)?;
        self.get_permitted(caller, request).await
    }

    /// [`Service::get`] for an admin (the console's item page): an admin key holds the `admin` scope and not
    /// necessarily `read`, and reads what `get` reads, the same way.
    pub async fn admin_get(
        &self,
        caller: &AuthenticatedActor,
        request: &GetRequest,
    ) -> Result<ObjectView, ServiceError> {
        self.require_scope(caller, Scope::Admin)?;
        self.get_permitted(caller, request).await
    }

    /// The read itself, once the caller's scope allowed it.
    async fn get_permitted(
        &self,
        caller: &AuthenticatedActor,
        request: &GetRequest,
    ) -> Result<ObjectView, ServiceError> {
        check_get_sizes(request)?;
        let id = parse_id("id", &request.id)?;
        if let Some(RevisionSelector::Number(number)) = &request.revision
            && *number < MIN_REVISION_NUMBER
        {
            return Err(ServiceError::validation(
                "revision",
                format!("a revision number is {MIN_REVISION_NUMBER} or more"),
            ));
        }
        let includes = match &request.include {
            None => Includes::default_set(),
            Some(names) => Includes::parse(names)?,
        };
        if request.revision.is_some() && !matches!(id.kind(), IdKind::Content) {
            return Err(ServiceError::validation(
                "revision",
                "revision applies only to cnt_ IDs",
            ));
        }
        let mut reader = self.store().reader().await?;
        let conn = &mut reader.conn();
        let not_found = || ServiceError::not_found(id.as_str());
        let caller_id = &caller.actor.id;
        Ok(match id.kind() {
            IdKind::Content | IdKind::Revision => {
                let (content, revision) = if id.kind() == IdKind::Content {
                    let Some(content) = store::knowledge::find_content(conn, &id).await? else {
                        // A tombstone of an item this instance never received (it was deleted before it arrived).
                        return Err(match store::tombstones::find(conn, &id).await? {
                            Some(tombstone) => tombstone_error(&tombstone),
                            None => not_found(),
                        });
                    };
                    if content.deleted_at.is_some() {
                        return Err(deleted(conn, &content).await);
                    }
                    let revision = match &request.revision {
                        None => store::knowledge::find_revision(conn, &content.current_revision_id).await?,
                        Some(RevisionSelector::Number(number)) => {
                            store::knowledge::find_revision_by_number(conn, &content.id, *number).await?
                        }
                        Some(RevisionSelector::Id(text)) => {
                            let revision_id =
                                super::validation::parse_target("revision", text, &[IdKind::Revision], "revision")?;
                            store::knowledge::find_revision(conn, &revision_id)
                                .await?
                                .filter(|revision| revision.content_id == content.id)
                        }
                    }
                    .ok_or_else(|| {
                        ServiceError::new(ErrorCode::NotFound, "this content item has no such revision")
                            .with_details(serde_json::json!({ "id": id.as_str(), "field": "revision" }))
                    })?;
                    (content, revision)
                } else {
                    let revision = store::knowledge::find_revision(conn, &id)
                        .await?
                        .ok_or_else(not_found)?;
                    let content = store::knowledge::find_content(conn, &revision.content_id)
                        .await?
                        .ok_or_else(|| ServiceError::internal("revision without content"))?;
                    if content.deleted_at.is_some() {
                        return Err(deleted(conn, &content).await);
                    }
                    (content, revision)
                };
                ObjectView::Content(Box::new(
                    self.content_view(conn, caller_id, content, revision, includes, request)
                        .await?,
                ))
            }
            IdKind::Claim => {
                // Any alias answers for the canonical claim (trust model §2.15).
                let claim = self.find_canonical_claim(conn, &id).await?.ok_or_else(not_found)?;
                let id = claim.id.clone();
                let target = self.trust_target(conn, &id).await?;
                let (trust, explanation) = self
                    .trust_and_explanation(conn, &target, includes.explanation, request.trust_view)
                    .await?;
                let evidence = self
                    .optional_evidence(conn, includes.evidence, &id, None, request)
                    .await?;
                ObjectView::Claim(Box::new(ClaimView {
                    aliases: store::knowledge::aliases_of_claim(conn, &id).await?,
                    trust,
                    made_by: store::knowledge::contents_making_claim(conn, &id).await?,
                    evidence_summary: self
                        .optional_summary(conn, includes.evidence_summary, &id, None)
                        .await?,
                    untrusted_content: claim.author_id != *caller_id
                        || evidence_by_others(evidence.as_ref(), caller_id),
                    evidence,
                    explanation,
                    claim,
                }))
            }
            IdKind::Entity => {
                let entity = store::knowledge::find_entity(conn, &id).await?.ok_or_else(not_found)?;
                let target = self.trust_target(conn, &id).await?;
                let (trust, explanation) = self
                    .trust_and_explanation(conn, &target, includes.explanation, request.trust_view)
                    .await?;
                let evidence = self
                    .optional_evidence(conn, includes.evidence, &id, Some(&id), request)
                    .await?;
                ObjectView::Entity(Box::new(EntityView {
                    trust,
                    ratings: store::trust::rating_aggregates_of_target(conn, &id).await?,
                    evidence_summary: self
                        .optional_summary(conn, includes.evidence_summary, &id, Some(&id))
                        .await?,
                    untrusted_content: entity.created_by != *caller_id
                        || evidence_by_others(evidence.as_ref(), caller_id),
                    evidence,
                    explanation,
                    entity,
                }))
            }
            IdKind::User | IdKind::Organization | IdKind::Agent => {
                let actor = store::actors::find(conn, &id).await?.ok_or_else(not_found)?;
                let reputation = self
                    .reputation_multiplier(conn, &actor.root_controller)
                    .await?
                    .agreement;
                ObjectView::Actor(Box::new(actor), reputation)
            }
            IdKind::Space => ObjectView::Space(Box::new(
                store::knowledge::find_space(conn, &id).await?.ok_or_else(not_found)?,
            )),
            IdKind::Source => ObjectView::Source(Box::new(
                store::knowledge::find_source(conn, &id).await?.ok_or_else(not_found)?,
            )),
            IdKind::Usage => ObjectView::Usage(Box::new(
                store::evidence::find_usage(conn, &id).await?.ok_or_else(not_found)?,
            )),
            IdKind::Review => ObjectView::Review(Box::new(
                store::evidence::find_review(conn, &id).await?.ok_or_else(not_found)?,
            )),
            IdKind::Rating => ObjectView::Rating(Box::new(
                store::evidence::find_rating(conn, &id).await?.ok_or_else(not_found)?,
            )),
            // Threads and assets are reserved prefixes: no such objects exist on this instance.
            IdKind::Thread | IdKind::Asset | IdKind::ApiKey => return Err(not_found()),
        })
    }

    async fn content_view(
        &self,
        conn: &mut Conn<'_>,
        caller_id: &PublicId,
        content: ContentItem,
        revision: Revision,
        includes: Includes,
        request: &GetRequest,
    ) -> Result<ContentView, ServiceError> {
        let target = TrustTarget {
            id: revision.id.clone(),
            kind: store::trust::TrustTargetKind::Revision,
            content_id: Some(content.id.clone()),
            author_root_controller: content.author_root_controller.clone(),
            author_origin: content.origin.clone(),
            created_at: revision.created_at,
        };
        let (trust, explanation) = self
            .trust_and_explanation(conn, &target, includes.explanation, request.trust_view)
            .await?;
        let claims = if includes.claims {
            let claims = store::knowledge::claims_of_revision(conn, &revision.id).await?;
            let claim_ids: Vec<PublicId> = claims.iter().map(|claim| claim.id.clone()).collect();
            let mut summaries = summaries_by_target(store::trust::find_summaries(conn, &claim_ids).await?);
            let mut standings = Vec::new();
            for claim in claims {
                let (status, trust) = match summaries.remove(claim.id.as_str()) {
                    Some(summary) => (
                        summary.status,
                        TrustBrief {
                            value: summary.value,
                            lower_bound: summary.lower_bound,
                            independent_confirmations: summary.independent_confirmations,
                            contradictions: summary.contradictions,
                            real_world_confirmations: summary.real_world_confirmations,
                        },
                    ),
                    None => (TrustStatus::Unverified, prior_brief()),
                };
                standings.push(ClaimStanding { claim, status, trust });
            }
            Some(standings)
        } else {
            None
        };
        let mut incoming_relations_by_others = false;
        let relations = if includes.relations {
            let incoming = store::knowledge::current_relations_targeting(conn, &content.id).await?;
            // An incoming relation's reason was written by the author of the item that declares it.
            for relation in &incoming {
                let declared_by_caller = store::knowledge::find_content(conn, &relation.source_content_id)
                    .await?
                    .is_some_and(|source| source.author_id == *caller_id);
                incoming_relations_by_others |= !declared_by_caller;
            }
            Some(RelationsView {
                client: store::knowledge::relations_of_revision(conn, &revision.id).await?,
                incoming,
            })
        } else {
            None
        };
        let revisions = if includes.revisions {
            let listed_revisions = store::knowledge::list_revisions(conn, &content.id).await?;
            let revision_ids: Vec<PublicId> = listed_revisions.iter().map(|listed| listed.id.clone()).collect();
            let mut summaries = summaries_by_target(store::trust::find_summaries(conn, &revision_ids).await?);
            let mut briefs = Vec::new();
            for listed in listed_revisions {
                let status = summaries
                    .remove(listed.id.as_str())
                    .map_or(TrustStatus::Unverified, |summary| summary.status);
                briefs.push(RevisionBrief {
                    revision: listed,
                    status,
                });
            }
            Some(briefs)
        } else {
            None
        };
        let subjects = store::knowledge::subjects_of_revision(conn, &revision.id).await?;
        let sources = store::knowledge::sources_of_revision(conn, &revision.id).await?;
        let evidence = self
            .optional_evidence(conn, includes.evidence, &revision.id, Some(&content.id), request)
            .await?;
        // Every text the result shows, by who wrote it: the item and its revisions (title, summary, body, change
        // notes, tags, outgoing relations) by their authors; matched claims by their first authors, who may be
        // others; subjects by the actors who created the entities; incoming relations by the authors of the items
        // declaring them; evidence records by their authors. Sources are shared by every item that cites them and
        // record no author, so their URL and title count as someone else's.
        let untrusted_content = content.author_id != *caller_id
            || revision.author_id != *caller_id
            || claims
                .iter()
                .flatten()
                .any(|standing| standing.claim.author_id != *caller_id)
            || subjects.iter().any(|entity| entity.created_by != *caller_id)
            || !sources.is_empty()
            || incoming_relations_by_others
            || evidence_by_others(evidence.as_ref(), caller_id)
            || revisions
                .iter()
                .flatten()
                .any(|brief| brief.revision.author_id != *caller_id);
        let foreign_origin = self
            .foreign_origins(conn, [content.origin.as_str()])
            .await?
            .into_iter()
            .next();
        Ok(ContentView {
            foreign_origin,
            subjects,
            tags: store::knowledge::tags_of_revision(conn, &revision.id).await?,
            sources,
            include_body: includes.body,
            claims,
            relations,
            evidence_summary: self
                .optional_summary(conn, includes.evidence_summary, &revision.id, Some(&content.id))
                .await?,
            evidence,
            revisions,
            explanation,
            untrusted_content,
            trust,
            content,
            revision,
        })
    }

    /// The trust view of a target and, when wanted, its full explanation, from one evaluation.
    async fn trust_and_explanation(
        &self,
        conn: &mut Conn<'_>,
        target: &TrustTarget,
        explain: bool,
        scope: TrustViewScope,
    ) -> Result<(TrustView, Option<ExplainedTrust>), ServiceError> {
        let (assessment, explanation) = self.live_trust(conn, target, explain, scope).await?;
        Ok((
            TrustView {
                assessment,
                model_version: crate::trust::MODEL_VERSION,
            },
            explanation,
        ))
    }

    /// Evidence counts for a trust target and, for ratings, the rated object.
    async fn optional_summary(
        &self,
        conn: &mut Conn<'_>,
        wanted: bool,
        target_id: &PublicId,
        rated_id: Option<&PublicId>,
    ) -> Result<Option<EvidenceSummary>, ServiceError> {
        if !wanted {
            return Ok(None);
        }
        let mut summary = EvidenceSummary::default();
        for (result, real_world, status, count) in store::evidence::usage_counts(conn, target_id).await? {
            if status == "retracted" {
                summary.retracted += count;
                continue;
            }
            add_count(&mut summary.usage_by_result, &result, count);
            if real_world {
                summary.real_world_usage += count;
            }
        }
        for (verdict, status, count) in store::evidence::review_counts(conn, target_id).await? {
            if status == "retracted" {
                summary.retracted += count;
            } else {
                add_count(&mut summary.reviews_by_verdict, &verdict, count);
            }
        }
        if let Some(rated_id) = rated_id {
            for (dimension, status, count) in store::evidence::rating_counts(conn, rated_id).await? {
                if status == "retracted" {
                    summary.retracted += count;
                } else {
                    add_count(&mut summary.ratings_by_dimension, &dimension, count);
                }
            }
        }
        Ok(Some(summary))
    }

    /// A page of evidence records (usage and reviews of the trust target, ratings of the rated object), newest first.
    async fn optional_evidence(
        &self,
        conn: &mut Conn<'_>,
        wanted: bool,
        target_id: &PublicId,
        rated_id: Option<&PublicId>,
        request: &GetRequest,
    ) -> Result<Option<EvidencePage>, ServiceError> {
        if !wanted {
            return Ok(None);
        }
        let secret = self.signing_secret(conn).await?;
        let before = match request.evidence_cursor.as_deref().filter(|cursor| !cursor.is_empty()) {
            Some(text) => {
                let cursor: EvidenceCursor = super::search::verify_token(&secret, text, "evidence_cursor")?;
                if cursor.target != target_id.as_str() {
                    return Err(ServiceError::validation(
                        "evidence_cursor",
                        "this cursor belongs to another object",
                    ));
                }
                Some((cursor.created_at, cursor.id))
            }
            None => None,
        };
        let fetch = EVIDENCE_PAGE_SIZE + 1;
        let mut records: Vec<EvidenceItem> = store::evidence::usage_page(conn, target_id, before.as_ref(), fetch)
            .await?
            .into_iter()
            .map(EvidenceItem::Usage)
            .collect();
        records.extend(
            store::evidence::review_page(conn, target_id, before.as_ref(), fetch)
                .await?
                .into_iter()
                .map(EvidenceItem::Review),
        );
        if let Some(rated_id) = rated_id {
            records.extend(
                store::evidence::rating_page(conn, rated_id, before.as_ref(), fetch)
                    .await?
                    .into_iter()
                    .map(EvidenceItem::Rating),
            );
        }
        records.sort_by_key(|record| std::cmp::Reverse(record.position()));
        let page_size = usize::try_from(EVIDENCE_PAGE_SIZE).unwrap_or(20);
        let next_cursor = if records.len() > page_size {
            records.truncate(page_size);
            let (created_at, id) = records
                .last()
                .map(EvidenceItem::position)
                .ok_or_else(|| ServiceError::internal("empty evidence page"))?;
            Some(super::search::sign_token(
                &secret,
                &EvidenceCursor {
                    target: target_id.as_str().to_owned(),
                    created_at,
                    id,
                },
            )?)
        } else {
            None
        };
        Ok(Some(EvidencePage { records, next_cursor }))
    }
}

/// Whether a page of evidence shows a record (with its note or rationale) written by someone other than `caller`.
fn evidence_by_others(page: Option<&EvidencePage>, caller: &PublicId) -> bool {
    page.is_some_and(|page| page.records.iter().any(|record| record.author() != caller))
}

/// Summaries keyed by their target's ID, for looking each one up as its object is listed.
fn summaries_by_target(
    summaries: Vec<store::trust::TrustSummaryRecord>,
) -> std::collections::HashMap<String, store::trust::TrustSummaryRecord> {
    summaries
        .into_iter()
        .map(|summary| (summary.target_id.as_str().to_owned(), summary))
        .collect()
}

fn add_count(counts: &mut Vec<(String, i64)>, name: &str, count: i64) {
    match counts.iter_mut().find(|(existing, _)| existing == name) {
        Some((_, total)) => *total += count,
        None => counts.push((name.to_owned(), count)),
    }
}

fn prior_brief() -> TrustBrief {
    TrustBrief {
        value: 0.5,
        lower_bound: 0.05,
        independent_confirmations: 0,
        contradictions: 0,
        real_world_confirmations: 0,
    }
}

/// The answer to `get` on a deleted item: `not_found`, saying it was deleted, when, by whom and why, and where.
async fn deleted(conn: &mut store::Conn<'_>, content: &crate::domain::knowledge::ContentItem) -> ServiceError {
    match store::tombstones::find(conn, &content.id).await {
        Ok(Some(tombstone)) => tombstone_error(&tombstone),
        Ok(None) => ServiceError::new(ErrorCode::NotFound, format!("{} was deleted", content.id))
            .with_details(serde_json::json!({ "id": content.id.as_str(), "deleted": true, "origin": content.origin })),
        Err(error) => error.into(),
    }
}

fn tombstone_error(tombstone: &crate::domain::tombstone::Tombstone) -> ServiceError {
    ServiceError::new(
        ErrorCode::NotFound,
        format!(
            "{} was deleted by {}: {}",
            tombstone.content_id, tombstone.deleted_by, tombstone.reason
        ),
    )
    .with_details(serde_json::json!({
        "id": tombstone.content_id.as_str(),
        "deleted": true,
        "deleted_at": tombstone.deleted_at,
        "deleted_by": tombstone.deleted_by,
        "reason": tombstone.reason,
        "origin": tombstone.origin,
    }))
}
