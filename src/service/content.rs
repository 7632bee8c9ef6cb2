//! Publishing knowledge: new content items and revisions with their claims, subjects, sources, relations and
//! tags, and first-hand experiences with the usage they report.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

pub use super::content_requests::{ExperienceRequest, PublishRequest, RelationRequest, UsedRequest};
use super::content_validation::{
    SpaceReference, ValidatedContent, ValidatedSource, ValidatedSubject, check_experience_sizes, content_hash,
};
use super::limits::MAX_NOTE_CHARACTERS;

use super::revision_write::{ClaimToLink, RevisionWrite};
use super::trust::TrustTarget;
use super::unit_of_work::UnitOfWork;
use super::validation::{keyword, optional_text, parse_id, type_name};
use super::writes::{CallMetadata, WriteSummary, within_write};
use super::{ErrorCode, Service, ServiceError};
use crate::domain::change::Change;
use crate::domain::knowledge::{Claim, ContentItem, Entity, Revision, Source, Space};
use crate::domain::text::normalize_entity_name;
use crate::domain::{AuthenticatedActor, IdKind, PublicId, Scope, TrustStatus, TrustStatuses};
use crate::store::trust::TrustTargetKind;
use crate::store::{self, Transaction};

/// A claim of a published revision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PublishedClaim {
    /// The claim's ID.
    pub id: String,
    /// Whether an equivalent claim existed and was linked instead of created.
    pub matched_existing: bool,
}

/// What `publish` returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PublishOutcome {
    /// The content item.
    pub id: String,
    /// The new revision.
    pub revision_id: String,
    /// Its number.
    pub revision_no: i32,
    /// Its claims in order.
    pub claims: Vec<PublishedClaim>,
}

impl WriteSummary for PublishOutcome {
    fn summary(&self) -> String {
        format!(
            "published {} revision {} ({})",
            self.id, self.revision_no, self.revision_id
        )
    }
}

/// What `submit_experience` returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExperienceOutcome {
    /// The experience content item.
    pub id: String,
    /// Its revision.
    pub revision_id: String,
    /// One usage event per `used` entry, in order.
    pub usage_ids: Vec<String>,
    /// The usage events whose target is the work of the caller's own root controller: they weigh nothing
    /// (responses stored for idempotency before this field existed read as none).
    #[serde(default)]
    pub self_evidence_usage_ids: Vec<String>,
}

impl WriteSummary for ExperienceOutcome {
    fn summary(&self) -> String {
        format!("experience {} with {} usage events", self.id, self.usage_ids.len())
    }
}

impl Service {
    /// `publish`: a new content item, or a new revision of the caller's own item.
    pub async fn publish(
        &self,
        caller: &AuthenticatedActor,
        metadata: &CallMetadata,
        request: PublishRequest,
    ) -> Result<PublishOutcome, ServiceError> {
        self.require_scope(caller, Scope::Publish)?;
        let validated = self.validate_content(&request)?;
        let idempotency_key = request.idempotency_key.as_deref();
        within_write!(self, caller, metadata, idempotency_key, |unit| {
            self.publish_in(unit, caller, &validated).await
        })
    }

    /// `submit_experience`: an experience content item and one usage event per `used` entry, in one transaction.
    pub async fn submit_experience(
        &self,
        caller: &AuthenticatedActor,
        metadata: &CallMetadata,
        request: ExperienceRequest,
    ) -> Result<ExperienceOutcome, ServiceError> {
        self.require_scope(caller, Scope::Publish)?;
        if !request.used.is_empty() {
            self.require_scope(caller, Scope::Usage)?;
        }
        check_experience_sizes(&request)?;
        let result = crate::domain::evidence::UsageOutcome::parse(keyword("result", &request.result)?)
            .ok_or_else(|| ServiceError::validation("result", "result must be success, partial, failure or unknown"))?;
        let (context, context_key) = super::validation::context("context", request.context.as_ref())?;
        let configuration = super::validation::object("configuration", request.configuration.as_ref())?;
        let observations = super::validation::object("observations", request.observations.as_ref())?;
        let metrics = super::validation::object("metrics", request.metrics.as_ref())?;
        let mut used = Vec::with_capacity(request.used.len());
        for (position, entry) in request.used.iter().enumerate() {
            let field = format!("used/{position}/id");
            let target = super::validation::parse_target(
                &field,
                &entry.id,
                &[IdKind::Content, IdKind::Revision, IdKind::Claim, IdKind::Entity],
                "submit_experience",
            )?;
            let entry_result = crate::domain::evidence::UsageOutcome::parse(keyword(
                &format!("used/{position}/result"),
                &entry.result,
            )?)
            .ok_or_else(|| {
                ServiceError::validation(
                    &format!("used/{position}/result"),
                    "result must be success, partial, failure or unknown",
                )
            })?;
            let note = optional_text(
                &format!("used/{position}/note"),
                entry.note.as_deref(),
                MAX_NOTE_CHARACTERS,
            )?;
            used.push((target, entry_result, note));
        }
        let structured_data = json!({
            "result": result.as_str(),
            "real_world_use": request.real_world_use,
            "context": context,
            "configuration": configuration,
            "observations": observations,
            "metrics": metrics,
        });
        let publish_request = PublishRequest {
            content_type: "experience".to_owned(),
            title: request.title.clone(),
            summary: request.summary.clone(),
            body_markdown: request.body_markdown.clone(),
            structured_data: Some(structured_data),
            subjects: request.subjects.clone(),
            tags: request.tags.clone(),
            space: request.space.clone(),
            language: request.language.clone(),
            ..PublishRequest::default()
        };
        let mut validated = self.validate_content(&publish_request)?;
        validated.context_key = Some(context_key.to_string());
        for (position, (_, _, note)) in used.iter().enumerate() {
            if let Some(note) = note {
                self.scan_text(&format!("used/{position}/note"), note)?;
            }
        }
        // The used targets and the caller's standing are read before the write opens (see `prepare_evidence`).
        let mut prepared = Vec::with_capacity(used.len());
        if !used.is_empty() {
            let mut reader = self.store().reader().await?;
            for (position, (target, _, _)) in used.iter().enumerate() {
                let evidence = self
                    .prepare_evidence(&mut reader.conn(), caller, target, &format!("used/{position}/id"))
                    .await?;
                prepared.push(evidence.after_earlier_records(position));
            }
        }
        let idempotency_key = request.idempotency_key.as_deref();
        within_write!(self, caller, metadata, idempotency_key, |unit| {
            self.record_experience_in(
                unit,
                caller,
                &validated,
                &used,
                &prepared,
                &request,
                &context,
                &context_key,
            )
            .await
        })
    }

    #[allow(clippy::too_many_arguments)] // The parts of one validated experience.
    async fn record_experience_in(
        &self,
        unit: &mut UnitOfWork,
        caller: &AuthenticatedActor,
        validated: &ValidatedContent,
        used: &[(PublicId, crate::domain::evidence::UsageOutcome, Option<String>)],
        prepared: &[super::evidence::PreparedEvidence],
        request: &ExperienceRequest,
        context: &Value,
        context_key: &crate::domain::ContextKey,
    ) -> Result<ExperienceOutcome, ServiceError> {
        {
            let published = self.publish_in(unit, caller, validated).await?;
            let experience_id = parse_id("id", &published.id)?;
            let mut usage_ids = Vec::with_capacity(used.len());
            let mut self_evidence_usage_ids = Vec::new();
            for (position, ((target, entry_result, note), evidence)) in used.iter().zip(prepared).enumerate() {
                let usage = super::evidence::NewUsage {
                    target: target.clone(),
                    field: format!("used/{position}/id"),
                    usage_type: "experience".to_owned(),
                    result: *entry_result,
                    real_world_use: request.real_world_use,
                    context: context.clone(),
                    context_key: context_key.clone(),
                    metrics: Value::Object(serde_json::Map::new()),
                    note: note.clone(),
                    experience_id: Some(experience_id.clone()),
                };
                let recorded = self.record_usage_in(unit, caller, usage, evidence.clone()).await?;
                if recorded.self_evidence {
                    self_evidence_usage_ids.push(recorded.id.clone());
                }
                usage_ids.push(recorded.id);
            }
            Ok(ExperienceOutcome {
                id: published.id,
                revision_id: published.revision_id,
                usage_ids,
                self_evidence_usage_ids,
            })
        }
    }

    async fn publish_in(
        &self,
        unit: &mut UnitOfWork,
        caller: &AuthenticatedActor,
        content: &ValidatedContent,
    ) -> Result<PublishOutcome, ServiceError> {
        let now = self.now();
        let author = &caller.actor;
        let (content_item, revision_no, previous_revision, visibility) = match &content.revision_of {
            Some(content_id) => {
                let existing = store::knowledge::find_content_for_update(&mut unit.conn(), content_id)
                    .await?
                    .ok_or_else(|| ServiceError::not_found(content_id.as_str()))?;
                if existing.deleted_at.is_some() {
                    return Err(deleted_content(content_id)
                        .with_details(json!({ "field": "revision_of", "id": content_id.as_str(), "deleted": true })));
                }
                if existing.author_id != author.id {
                    return Err(ServiceError::new(
                        ErrorCode::NotAuthor,
                        "you can only revise content you authored; publish a correction with a `corrects` relation instead",
                    )
                    .with_details(json!({ "field": "revision_of", "author": existing.author_id.as_str() })));
                }
                if existing.content_type != content.content_type {
                    return Err(ServiceError::validation(
                        "content_type",
                        format!("a revision keeps its item's content type ({})", existing.content_type),
                    ));
                }
                if let Some(space) = &content.space {
                    let space = self.resolve_space(&mut unit.conn(), Some(space)).await?;
                    if space.id != existing.space_id {
                        return Err(ServiceError::validation(
                            "space",
                            "a revision stays in its item's space",
                        ));
                    }
                }
                let visibility = store::knowledge::find_space(&mut unit.conn(), &existing.space_id)
                    .await?
                    .ok_or_else(|| ServiceError::internal(format!("content {} has no space", existing.id)))?
                    .visibility;
                let previous = existing.current_revision_id.clone();
                let number = existing.current_revision_no + 1;
                (existing, number, Some(previous), visibility)
            }
            None => {
                let space = self.resolve_space(&mut unit.conn(), content.space.as_ref()).await?;
                let visibility = space.visibility;
                let content_id = self.new_id(IdKind::Content);
                let item = ContentItem {
                    id: content_id,
                    content_type: content.content_type.clone(),
                    space_id: space.id,
                    author_id: author.id.clone(),
                    author_root_controller: author.root_controller.clone(),
                    origin: self.realm().as_str().to_owned(),
                    current_revision_id: self.new_id(IdKind::Revision),
                    current_revision_no: 1,
                    created_at: now,
                    updated_at: now,
                    received_at: now,
                    deleted_at: None,
                };
                (item, 1, None, visibility)
            }
        };
        let revision_id = if previous_revision.is_none() {
            content_item.current_revision_id.clone()
        } else {
            self.new_id(IdKind::Revision)
        };
        // Relation targets must exist before anything is written.
        let mut relation_targets = Vec::new();
        for (position, (relation_type, target, reason)) in content.relations.iter().enumerate() {
            self.require_object_exists(&mut unit.conn(), target, &format!("relations/{position}/target"))
                .await?;
            if target == &content_item.id {
                return Err(ServiceError::validation(
                    &format!("relations/{position}/target"),
                    "content cannot relate to itself",
                ));
            }
            relation_targets.push((*relation_type, target.clone(), reason.clone()));
        }

        let revision = Revision {
            id: revision_id.clone(),
            content_id: content_item.id.clone(),
            revision_no,
            title: content.title.clone(),
            summary: content.summary.clone(),
            body_markdown: content.body_markdown.clone(),
            structured_data: content.structured_data.clone(),
            language: content.language.clone(),
            change_note: content.change_note.clone(),
            context_key: content.context_key.clone(),
            author_id: author.id.clone(),
            content_sha256: content_hash(content),
            origin: self.realm().as_str().to_owned(),
            created_at: now,
            received_at: now,
        };
        // Claims are created with fresh IDs unless a claim with the same fingerprint exists (then they link to it).
        let claims: Vec<ClaimToLink> = content
            .claims
            .iter()
            .map(|(text, normalized, fingerprint)| ClaimToLink {
                new: Claim {
                    id: self.new_id(IdKind::Claim),
                    text: text.clone(),
                    normalized_text: normalized.clone(),
                    fingerprint: fingerprint.clone(),
                    author_id: author.id.clone(),
                    author_root_controller: author.root_controller.clone(),
                    origin: self.realm().as_str().to_owned(),
                    created_at: now,
                },
            })
            .collect();
        let mut subject_ids: Vec<PublicId> = Vec::new();
        for (position, subject) in content.subjects.iter().enumerate() {
            let entity_id = match subject {
                ValidatedSubject::Id(id) => {
                    store::knowledge::find_entity(&mut unit.conn(), id)
                        .await?
                        .ok_or_else(|| {
                            ServiceError::not_found(id.as_str())
                                .with_details(json!({ "id": id.as_str(), "field": format!("subjects/{position}") }))
                        })?
                        .id
                }
                ValidatedSubject::Named {
                    name,
                    normalized_name,
                    entity_type,
                    aliases,
                    description,
                } => {
                    self.find_or_create_entity(unit, author, name, normalized_name, entity_type, aliases, description)
                        .await?
                        .id
                }
            };
            // Two subject entries may name the same entity.
            if !subject_ids.contains(&entity_id) {
                subject_ids.push(entity_id);
            }
        }
        let mut sources = Vec::with_capacity(content.sources.len());
        for (position, source) in content.sources.iter().enumerate() {
            let (source, title) = self.resolve_source(&mut unit.conn(), source, position).await?;
            sources.push((source.id, title));
        }
        let linked = self
            .write_revision(
                unit,
                RevisionWrite {
                    item: &content_item,
                    new_item: previous_revision.is_none(),
                    becomes_current: true,
                    previous_revision: previous_revision.clone(),
                    revision: &revision,
                    claims: &claims,
                    subject_ids: &subject_ids,
                    sources: &sources,
                    relations: &relation_targets,
                    tags: &content.tags,
                    indexed_at: now,
                    existing_claims: None,
                    proof: None,
                    evidence_waiting: None,
                },
            )
            .await?;
        let published_claims: Vec<PublishedClaim> = linked
            .into_iter()
            .map(|claim| PublishedClaim {
                id: claim.id.into_string(),
                matched_existing: claim.matched_existing,
            })
            .collect();

        // Federation: the change leaves with this unit of work when its space is federated.
        let space_id = content_item.space_id.clone();
        unit.emit(
            self.new_internal_id(),
            Change::ContentRevised {
                content_id: content_item.id.as_str().to_owned(),
                revision_id: revision_id.as_str().to_owned(),
                revision_no,
            },
            &space_id,
            visibility,
            now,
        );
        Ok(PublishOutcome {
            id: content_item.id.into_string(),
            revision_id: revision_id.into_string(),
            revision_no,
            claims: published_claims,
        })
    }

    /// Re-assesses the current revisions of content that `source_content` declares it supersedes, because whether
    /// that relation is effective can change with a new revision or with the source's trust. With
    /// `replaced_revision`, content that this earlier revision of the source superseded is re-assessed too: its
    /// relations stopped counting when it stopped being current.
    pub(super) async fn reassess_superseded_targets(
        &self,
        unit: &mut UnitOfWork,
        source_content: &PublicId,
        replaced_revision: Option<&PublicId>,
    ) -> Result<(), ServiceError> {
        let mut relations =
            store::knowledge::supersedes_relations_of_current_revision(&mut unit.conn(), source_content).await?;
        if let Some(replaced) = replaced_revision {
            relations.extend(store::knowledge::supersedes_relations_declared_by(&mut unit.conn(), replaced).await?);
        }
        let mut reassessed: Vec<PublicId> = Vec::new();
        for relation in &relations {
            let target_content = match relation.target_id.kind() {
                IdKind::Content => Some(relation.target_id.clone()),
                IdKind::Revision => store::knowledge::revision_target(
                    &mut unit.conn(),
                    store::knowledge::RevisionOf::Revision(&relation.target_id),
                )
                .await?
                .map(|(content, _, _)| content.id),
                _ => None,
            };
            let Some(target_content) = target_content else {
                continue;
            };
            if reassessed.contains(&target_content) {
                continue;
            }
            let current = store::knowledge::revision_target(
                &mut unit.conn(),
                store::knowledge::RevisionOf::CurrentOf(&target_content),
            )
            .await?;
            if let Some((content, revision_id, revision_created_at)) = current {
                let target = super::trust::revision_trust_target(revision_id, revision_created_at, content);
                self.apply_evidence_change(unit, &target, super::trust::EvidenceChange::Reassess)
                    .await?;
            }
            reassessed.push(target_content);
        }
        Ok(())
    }

    async fn resolve_space(
        &self,
        conn: &mut store::Conn<'_>,
        reference: Option<&SpaceReference>,
    ) -> Result<Space, ServiceError> {
        let space = match reference {
            None => store::knowledge::find_default_space(conn, self.realm().as_str())
                .await?
                .ok_or_else(|| ServiceError::internal("this realm has no default space"))?,
            Some(SpaceReference::Id(id)) => store::knowledge::find_space(conn, id).await?.ok_or_else(|| {
                ServiceError::not_found(id.as_str()).with_details(json!({ "id": id.as_str(), "field": "space" }))
            })?,
            Some(SpaceReference::Name(name)) => store::knowledge::list_spaces(conn)
                .await?
                .into_iter()
                .find(|space| self.realm().is(&space.origin) && space.name == *name)
                .ok_or_else(|| {
                    ServiceError::new(ErrorCode::NotFound, format!("no space named {name:?} exists"))
                        .with_details(json!({ "field": "space" }))
                })?,
        };
        if !self.realm().is(&space.origin) {
            return Err(ServiceError::validation(
                "space",
                "this space belongs to another realm and cannot be written here",
            ));
        }
        Ok(space)
    }

    /// Fails with `not_found` unless `id` names an existing object of a kind relations may point at.
    async fn require_object_exists(
        &self,
        conn: &mut store::Conn<'_>,
        id: &PublicId,
        field: &str,
    ) -> Result<(), ServiceError> {
        let exists = match id.kind() {
            IdKind::Content => store::knowledge::find_content(conn, id).await?.is_some(),
            IdKind::Revision => store::knowledge::find_revision(conn, id).await?.is_some(),
            IdKind::Entity => store::knowledge::find_entity(conn, id).await?.is_some(),
            IdKind::Claim => store::knowledge::find_claim(conn, id).await?.is_some(),
            _ => false,
        };
        if exists {
            Ok(())
        } else {
            Err(ServiceError::not_found(id.as_str()).with_details(json!({ "id": id.as_str(), "field": field })))
        }
    }

    #[allow(clippy::too_many_arguments)] // The fields of one named subject; a struct would only rename them.
    async fn find_or_create_entity(
        &self,
        unit: &mut UnitOfWork,
        author: &crate::domain::Actor,
        name: &str,
        normalized_name: &str,
        entity_type: &str,
        aliases: &[String],
        description: &str,
    ) -> Result<Entity, ServiceError> {
        if let Some(entity) =
            store::knowledge::find_entity_by_name(&mut unit.conn(), self.realm().as_str(), entity_type, normalized_name)
                .await?
        {
            return Ok(entity);
        }
        let entity = Entity {
            id: self.new_id(IdKind::Entity),
            entity_type: entity_type.to_owned(),
            name: name.to_owned(),
            normalized_name: normalized_name.to_owned(),
            aliases: aliases.to_vec(),
            description: description.to_owned(),
            origin: self.realm().as_str().to_owned(),
            created_by: author.id.clone(),
            created_by_root_controller: author.root_controller.clone(),
            created_at: self.now(),
        };
        let indexed_at = entity.created_at;
        self.insert_entity(unit, &entity, indexed_at, None).await?;
        Ok(entity)
    }

    /// Stores a new entity with its first trust assessment and its search document (which says it arrived at
    /// `indexed_at`: when it was made here, or when a replicated one was received). Shared by local subjects and
    /// replication; `evidence_waiting` as for [`Service::initialize_trust_summaries`].
    pub(super) async fn insert_entity(
        &self,
        unit: &mut UnitOfWork,
        entity: &Entity,
        indexed_at: chrono::DateTime<chrono::Utc>,
        evidence_waiting: Option<&[PublicId]>,
    ) -> Result<(), ServiceError> {
        store::knowledge::insert_entity(&mut unit.conn(), entity).await?;
        let target = TrustTarget {
            id: entity.id.clone(),
            kind: TrustTargetKind::Entity,
            content_id: None,
            author_root_controller: entity.created_by_root_controller.clone(),
            author_origin: entity.origin.clone(),
            created_at: entity.created_at,
        };
        let statuses = self
            .initialize_trust_summaries(unit, &[(target, false)], evidence_waiting)
            .await?;
        let status = statuses
            .first()
            .copied()
            .unwrap_or(TrustStatuses::same(TrustStatus::Unverified));
        let mut document = super::search::entity_document(entity, status);
        document.created_at = indexed_at;
        // A new entity: its document cannot exist yet.
        self.index_documents(&mut unit.conn(), &[document], store::search::DocumentsAre::New)
            .await?;
        Ok(())
    }

    /// Finds or creates a cited source; returns it with the title given in this citation.
    pub(super) async fn resolve_source(
        &self,
        conn: &mut store::Conn<'_>,
        source: &ValidatedSource,
        position: usize,
    ) -> Result<(Source, Option<String>), ServiceError> {
        match source {
            ValidatedSource::Id(id) => {
                let found = store::knowledge::find_source(conn, id).await?.ok_or_else(|| {
                    ServiceError::not_found(id.as_str())
                        .with_details(json!({ "id": id.as_str(), "field": format!("sources/{position}") }))
                })?;
                Ok((found, None))
            }
            ValidatedSource::Url {
                url,
                normalized,
                family,
                title,
            } => {
                if let Some(found) =
                    store::knowledge::find_source_by_url(conn, self.realm().as_str(), normalized).await?
                {
                    return Ok((found, title.clone()));
                }
                let created = Source {
                    id: self.new_id(IdKind::Source),
                    url: url.clone(),
                    normalized_url: normalized.clone(),
                    title: title.clone(),
                    family: family.clone(),
                    origin: self.realm().as_str().to_owned(),
                    created_at: self.now(),
                };
                store::knowledge::insert_source(conn, &created).await?;
                Ok((created, title.clone()))
            }
        }
    }

    /// The entity of this realm with the given type and (normalized) name.
    pub async fn find_entity_by_name(&self, entity_type: &str, name: &str) -> Result<Entity, ServiceError> {
        let entity_type = type_name("type", entity_type)?;
        let normalized = normalize_entity_name(name);
        let mut reader = self.store().reader().await?;
        store::knowledge::find_entity_by_name(&mut reader.conn(), self.realm().as_str(), &entity_type, &normalized)
            .await?
            .ok_or_else(|| ServiceError::new(ErrorCode::NotFound, format!("no {entity_type} named {name:?} exists")))
    }

    /// Makes sure this realm has its default space (created on first start, and for databases bootstrapped
    /// before spaces existed).
    pub(super) async fn ensure_default_space(
        &self,
        transaction: &mut Transaction,
        created_by: &PublicId,
    ) -> Result<Space, ServiceError> {
        if let Some(space) =
            store::knowledge::find_default_space(&mut transaction.conn(), self.realm().as_str()).await?
        {
            return Ok(space);
        }
        let space = Space {
            id: self.new_id(IdKind::Space),
            name: "default".to_owned(),
            description: "Where content goes when no space is named. Federated with active peers.".to_owned(),
            visibility: crate::domain::knowledge::SpaceVisibility::Federated,
            is_default: true,
            origin: self.realm().as_str().to_owned(),
            created_by: created_by.clone(),
            created_at: self.now(),
            received_at: self.now(),
        };
        store::knowledge::insert_space(&mut transaction.conn(), &space).await?;
        Ok(space)
    }
}

/// The error for writing to or through a deleted content item: it is gone, as `get` reports it.
pub(super) fn deleted_content(id: &PublicId) -> ServiceError {
    ServiceError::new(
        ErrorCode::NotFound,
        format!("{} was deleted; `get` shows when, by whom and why", id.as_str()),
    )
    .with_details(json!({ "id": id.as_str(), "deleted": true }))
}

/// What `interai admin content list` and `GET /admin/content` ask for, as given: every filter optional, checked here.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ContentQuery {
    /// Only items of this space (a `spc_` ID).
    pub space: Option<String>,
    /// Only items made by this realm.
    pub origin: Option<String>,
    /// Only items in this state: `deleted`, or a trust status of the current revision (`unverified`, `supported`, …).
    pub status: Option<String>,
    /// The `next_cursor` of the previous page.
    pub cursor: Option<String>,
    /// Items per page (default and bounds in `paging`).
    pub limit: Option<u32>,
}

/// One page of content items, newest first.
#[derive(Debug, Clone, PartialEq)]
pub struct ContentPage {
    /// The items.
    pub items: Vec<store::knowledge::ContentListing>,
    /// Where the next page starts, when there is one.
    pub next_cursor: Option<String>,
}

/// The longest realm name an origin filter may give (a DNS name).
const MAX_ORIGIN_FILTER_CHARACTERS: usize = 253;

impl Service {
    /// A page of content items (this realm's and replicated ones, deleted ones too) that the query's filters select,
    /// newest first.
    pub async fn list_content(&self, query: ContentQuery) -> Result<ContentPage, ServiceError> {
        use store::knowledge::ContentStatusFilter;
        let limit = super::paging::page_size(query.limit)?;
        let origin = optional_text("origin", query.origin.as_deref(), MAX_ORIGIN_FILTER_CHARACTERS)?;
        let status = match query.status.as_deref().map(str::trim).filter(|text| !text.is_empty()) {
            None => None,
            Some("deleted") => Some(ContentStatusFilter::Deleted),
            Some(text) => Some(ContentStatusFilter::Trust(TrustStatus::parse(text).ok_or_else(
                || {
                    let names: Vec<&str> = TrustStatus::ALL.iter().map(|status| status.as_str()).collect();
                    ServiceError::validation(
                        "status",
                        format!("status must be deleted or a trust status: {}", names.join(", ")),
                    )
                },
            )?)),
        };
        let after = super::paging::decode_cursor(query.cursor.as_deref())?;
        let mut reader = self.store().reader().await?;
        let space_id = match query.space.as_deref().map(str::trim).filter(|text| !text.is_empty()) {
            None => None,
            Some(space) => {
                let space_id = super::validation::parse_target("space", space, &[IdKind::Space], "the space filter")?;
                // An unknown space is named rather than answered with an empty page, which would look like silence.
                store::knowledge::find_space(&mut reader.conn(), &space_id)
                    .await?
                    .ok_or_else(|| ServiceError::not_found(space_id.as_str()))?;
                Some(space_id)
            }
        };
        let filter = store::knowledge::ContentFilter {
            space_id,
            origin,
            status,
            after,
        };
        let mut items = store::knowledge::list_content(&mut reader.conn(), &filter, i64::from(limit) + 1).await?;
        let more = items.len() > limit as usize;
        items.truncate(limit as usize);
        let next_cursor = if more {
            items
                .last()
                .map(|last| super::paging::encode_cursor(last.content.created_at, last.content.id.as_str()))
        } else {
            None
        };
        Ok(ContentPage { items, next_cursor })
    }
}
