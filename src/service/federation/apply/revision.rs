//! Applying a replicated content revision (`Article`): the checks needing no database before the transaction, then the
//! rules (IDs under their origin, duplicates ignored, older revisions kept but not current) and the shared revision writer.

use super::Applied;
use crate::domain::knowledge::{Claim, ContentItem, Entity, Revision, Source, Space, SpaceVisibility};
use crate::domain::replication::{OriginProof, RevisionRecord};
use crate::domain::{IdKind, PublicId};
use crate::service::ServiceError;
use crate::service::content_validation::ValidatedSubject;
use crate::service::federation::Federation;
use crate::service::known_rows::KnownRows;
use crate::service::references::{SourceReference, SubjectReference};
use crate::service::revision_write::{ClaimToLink, RevisionWrite};
use crate::service::unit_of_work::UnitOfWork;
use crate::store::{self};

/// The longest context key a replicated experience may carry.
const MAX_CONTEXT_KEY_BYTES: usize = 1024;

/// A replicated revision that passed the checks needing no database, ready for the ones that do.
pub(crate) struct CheckedRevision {
    content: crate::service::content_validation::ValidatedContent,
    space_name: String,
}

impl CheckedRevision {
    /// The fingerprints of its claims, as normalized here.
    pub(crate) fn claim_fingerprints(&self) -> impl Iterator<Item = &str> {
        self.content
            .claims
            .iter()
            .map(|(_, _, fingerprint)| fingerprint.as_str())
    }
}

impl Federation {
    /// The checks of a replicated revision that need no database: ID kinds, and the content validated like an
    /// agent's publish (caps, display text, the scan, the body neutralized, claims normalized). CPU work, so the
    /// intake runs it before its transaction takes the writer. `Err` is the refusal's reason.
    pub(crate) fn check_revision(&self, record: &RevisionRecord) -> Result<CheckedRevision, String> {
        let refuse = |why: String| Err(format!("{} revision {}: {why}", record.content_id, record.revision_no));
        for (id, kind) in [
            (&record.content_id, IdKind::Content),
            (&record.revision_id, IdKind::Revision),
            (&record.space_id, IdKind::Space),
        ] {
            if id.kind() != kind {
                return refuse(format!("{id} is not an ID of the right kind"));
            }
        }
        let actor_kinds = [IdKind::User, IdKind::Organization, IdKind::Agent];
        for id in [&record.author_id, &record.author_root_controller] {
            if !actor_kinds.contains(&id.kind()) {
                return refuse(format!("{id} is not an actor ID"));
            }
        }
        if record.revision_no < 1 {
            return refuse("revision numbers start at 1".to_owned());
        }
        // Validated like an agent's publish: caps, display text, the scan, the body neutralized, claims normalized.
        let request = crate::service::content::PublishRequest {
            content_type: record.content_type.clone(),
            title: record.title.clone(),
            summary: record.summary.clone(),
            body_markdown: record.body_markdown.clone(),
            structured_data: Some(record.structured_data.clone()),
            change_note: record.change_note.clone(),
            subjects: record
                .subjects
                .iter()
                .map(|subject| SubjectReference::Named {
                    name: subject.name.clone(),
                    entity_type: subject.entity_type.clone(),
                    aliases: subject.aliases.clone(),
                    description: Some(subject.description.clone()),
                })
                .collect(),
            claims: record.claims.iter().map(|claim| claim.text.clone()).collect(),
            sources: record
                .sources
                .iter()
                .map(|source| SourceReference::Url {
                    url: source.url.clone(),
                    title: source.title.clone(),
                })
                .collect(),
            relations: record
                .relations
                .iter()
                .map(|relation| crate::service::content::RelationRequest {
                    relation_type: relation.relation_type.as_str().to_owned(),
                    target: relation.target.as_str().to_owned(),
                    reason: relation.reason.clone(),
                })
                .collect(),
            tags: record.tags.clone(),
            language: record.language.clone(),
            ..crate::service::content::PublishRequest::default()
        };
        let mut content = match self.service().validate_content(&request) {
            Ok(content) => content,
            Err(error) => return refuse(error.to_string()),
        };
        if record.content_type == "experience" {
            match &record.context_key {
                Some(key) if key.len() <= MAX_CONTEXT_KEY_BYTES && !key.chars().any(char::is_control) => {
                    content.context_key = Some(key.clone());
                }
                Some(_) => return refuse("the context key is too long or holds control characters".to_owned()),
                None => {}
            }
        }
        let space_name = match crate::service::validation::display_text(
            "space/name",
            &record.space_name,
            crate::service::limits::MAX_NAME_CHARACTERS,
        ) {
            Ok(name) => name,
            Err(error) => return refuse(error.to_string()),
        };
        for claim in &record.claims {
            if claim.id.kind() != IdKind::Claim {
                return refuse(format!("{} is not a claim ID", claim.id));
            }
        }
        for subject in &record.subjects {
            if subject.id.kind() != IdKind::Entity {
                return refuse(format!("{} is not an entity ID", subject.id));
            }
        }
        for source in &record.sources {
            if source.id.kind() != IdKind::Source {
                return refuse(format!("{} is not a source ID", source.id));
            }
        }
        Ok(CheckedRevision { content, space_name })
    }

    pub(super) async fn apply_revision_in(
        &self,
        unit: &mut UnitOfWork,
        record: &RevisionRecord,
        proof: &OriginProof,
        checked: Option<&Result<CheckedRevision, String>>,
        known: &mut KnownRows,
    ) -> Result<Applied, ServiceError> {
        let refuse = |why: String| {
            Ok(Applied::Refused(format!(
                "{} revision {}: {why}",
                record.content_id, record.revision_no
            )))
        };
        let checked_here;
        let checked = match checked {
            Some(checked) => checked,
            None => {
                checked_here = self.check_revision(record);
                &checked_here
            }
        };
        let (content, space_name) = match checked {
            Ok(checked) => (&checked.content, checked.space_name.clone()),
            Err(reason) => return Ok(Applied::Refused(reason.clone())),
        };

        // The rules that need the database, all checked before anything is written.
        if known.tombstone(unit, &record.content_id).await?.is_some() {
            return Ok(Applied::Ignored(format!(
                "{} was deleted: the tombstone wins",
                record.content_id
            )));
        }
        if let Some(existing) = known.revision(unit, &record.revision_id).await? {
            if existing.origin != record.origin || existing.content_id != record.content_id {
                return refuse(format!(
                    "{} already exists here under another origin or item",
                    record.revision_id
                ));
            }
            return Ok(Applied::Ignored(format!("{} is stored already", record.revision_id)));
        }
        let existing_item = known.content_for_update(unit, &record.content_id).await?;
        if let Some(existing) = &existing_item {
            if existing.origin != record.origin {
                return refuse(format!("the ID exists here under the origin {}", existing.origin));
            }
            if existing.space_id != record.space_id || existing.content_type != record.content_type {
                return refuse("a revision keeps its item's space and content type".to_owned());
            }
        }
        let space = match known.space(unit, &record.space_id).await? {
            Some(space) if space.origin != record.origin => {
                return refuse(format!("its space {} belongs to {}", space.id, space.origin));
            }
            Some(space) => Some(space),
            None => None,
        };
        let claim_ids = record.claims.iter().map(|claim| claim.id.clone());
        let mut record_claims: Vec<(String, PublicId)> = Vec::new();
        for (claim, id) in record.claims.iter().zip(claim_ids) {
            let fingerprint =
                crate::domain::text::claim_fingerprint(&crate::domain::text::normalize_claim_text(&claim.text));
            if let Some(stored) = known.claim(unit, &id).await?
                && stored.fingerprint != fingerprint
            {
                return refuse(format!("{id} exists here with another text"));
            }
            record_claims.push((fingerprint, id));
        }
        // The subjects and sources that exist: the writing below creates the others.
        let mut stored_entities: Vec<PublicId> = Vec::new();
        for subject in &record.subjects {
            if let Some(stored) = known.entity(unit, &subject.id).await? {
                if stored.origin != record.origin && !self.realm().is(&stored.origin) {
                    return refuse(format!("{} exists here under the origin {}", subject.id, stored.origin));
                }
                stored_entities.push(subject.id.clone());
            }
        }
        let mut stored_sources: Vec<PublicId> = Vec::new();
        for (source, validated) in record.sources.iter().zip(&content.sources) {
            let stored = known.source(unit, &source.id).await?;
            if let (Some(stored), crate::service::content_validation::ValidatedSource::Url { normalized, .. }) =
                (&stored, validated)
                && stored.normalized_url != *normalized
            {
                return refuse(format!("{} exists here with another URL", source.id));
            }
            if stored.is_some() {
                stored_sources.push(source.id.clone());
            }
        }
        let fingerprints: Vec<&str> = content
            .claims
            .iter()
            .map(|(_, _, fingerprint)| fingerprint.as_str())
            .collect();
        let existing_claims = known.claims_with_fingerprints(unit, &fingerprints).await?;

        // Writing: the space when it has not arrived yet, the entities and sources it names, then the revision.
        // What the batch read ahead of the keys written here is stale from now on.
        let claim_ids: Vec<&PublicId> = record.claims.iter().map(|claim| &claim.id).collect();
        known.forget_revision_keys(
            &record.content_id,
            &record.revision_id,
            &claim_ids,
            &fingerprints,
            &record.subjects.iter().map(|subject| &subject.id).collect::<Vec<_>>(),
            &record.sources.iter().map(|source| &source.id).collect::<Vec<_>>(),
        );
        let now = self.now();
        if space.is_none() {
            let space = Space {
                id: record.space_id.clone(),
                name: space_name,
                description: String::new(),
                visibility: SpaceVisibility::Federated,
                is_default: false,
                origin: record.origin.clone(),
                created_by: record.author_id.clone(),
                created_at: record.published_at,
                received_at: now,
            };
            store::knowledge::insert_space(&mut unit.conn(), &space).await?;
            known.space_written(&space);
        }
        let mut subject_ids: Vec<PublicId> = Vec::with_capacity(record.subjects.len());
        for (subject, validated) in record.subjects.iter().zip(&content.subjects) {
            let ValidatedSubject::Named {
                name,
                normalized_name,
                entity_type,
                aliases,
                description,
            } = validated
            else {
                continue;
            };
            if !stored_entities.contains(&subject.id) {
                let entity = Entity {
                    id: subject.id.clone(),
                    entity_type: entity_type.clone(),
                    name: name.clone(),
                    normalized_name: normalized_name.clone(),
                    aliases: aliases.clone(),
                    description: description.clone(),
                    origin: record.origin.clone(),
                    created_by: record.author_id.clone(),
                    created_by_root_controller: record.author_root_controller.clone(),
                    created_at: record.revised_at,
                };
                let waiting = known.evidence_waiting(std::iter::once(&subject.id));
                self.service()
                    .insert_entity(unit, &entity, now, waiting.as_deref())
                    .await?;
                if waiting.as_ref().is_none_or(|waiting| !waiting.is_empty()) {
                    self.service()
                        .refresh_waiting_rating_aggregates(unit, &subject.id)
                        .await?;
                }
                stored_entities.push(subject.id.clone());
            }
            if !subject_ids.contains(&subject.id) {
                subject_ids.push(subject.id.clone());
            }
        }
        let mut sources = Vec::with_capacity(record.sources.len());
        for (source, validated) in record.sources.iter().zip(&content.sources) {
            let crate::service::content_validation::ValidatedSource::Url {
                url,
                normalized,
                family,
                title,
            } = validated
            else {
                continue;
            };
            if !stored_sources.contains(&source.id) {
                store::knowledge::insert_source(
                    &mut unit.conn(),
                    &Source {
                        id: source.id.clone(),
                        url: url.clone(),
                        normalized_url: normalized.clone(),
                        title: title.clone(),
                        family: family.clone(),
                        origin: record.origin.clone(),
                        created_at: record.revised_at,
                    },
                )
                .await?;
                stored_sources.push(source.id.clone());
            }
            sources.push((source.id.clone(), title.clone()));
        }
        let claims: Vec<ClaimToLink> = content
            .claims
            .iter()
            .map(|(text, normalized, fingerprint)| {
                let id = record_claims
                    .iter()
                    .find(|(candidate, _)| candidate == fingerprint)
                    .map_or_else(|| self.service().new_id(IdKind::Claim), |(_, id)| id.clone());
                ClaimToLink {
                    new: Claim {
                        id,
                        text: text.clone(),
                        normalized_text: normalized.clone(),
                        fingerprint: fingerprint.clone(),
                        author_id: record.author_id.clone(),
                        author_root_controller: record.author_root_controller.clone(),
                        origin: record.origin.clone(),
                        created_at: record.revised_at,
                    },
                }
            })
            .collect();
        let becomes_current = existing_item
            .as_ref()
            .is_none_or(|existing| record.revision_no > existing.current_revision_no);
        let previous_revision = existing_item
            .as_ref()
            .filter(|_| becomes_current)
            .map(|existing| existing.current_revision_id.clone());
        let item = match &existing_item {
            Some(existing) if becomes_current => ContentItem {
                current_revision_id: record.revision_id.clone(),
                current_revision_no: record.revision_no,
                updated_at: record.revised_at,
                ..existing.clone()
            },
            Some(existing) => existing.clone(),
            None => ContentItem {
                id: record.content_id.clone(),
                content_type: content.content_type.clone(),
                space_id: record.space_id.clone(),
                author_id: record.author_id.clone(),
                author_root_controller: record.author_root_controller.clone(),
                origin: record.origin.clone(),
                current_revision_id: record.revision_id.clone(),
                current_revision_no: record.revision_no,
                created_at: record.published_at,
                updated_at: record.revised_at,
                received_at: now,
                deleted_at: None,
            },
        };
        let revision = Revision {
            id: record.revision_id.clone(),
            content_id: record.content_id.clone(),
            revision_no: record.revision_no,
            title: content.title.clone(),
            summary: content.summary.clone(),
            body_markdown: content.body_markdown.clone(),
            structured_data: content.structured_data.clone(),
            language: content.language.clone(),
            change_note: content.change_note.clone(),
            context_key: content.context_key.clone(),
            author_id: record.author_id.clone(),
            content_sha256: crate::service::content_validation::content_hash(content),
            origin: record.origin.clone(),
            created_at: record.revised_at,
            received_at: now,
        };
        self.service()
            .write_revision(
                unit,
                RevisionWrite {
                    item: &item,
                    new_item: existing_item.is_none(),
                    becomes_current,
                    previous_revision,
                    revision: &revision,
                    claims: &claims,
                    subject_ids: &subject_ids,
                    sources: &sources,
                    relations: &content.relations,
                    tags: &content.tags,
                    indexed_at: now,
                    existing_claims: Some(existing_claims),
                    evidence_waiting: known.evidence_waiting(
                        std::iter::once(&record.revision_id).chain(record.claims.iter().map(|claim| &claim.id)),
                    ),
                    proof: Some(proof),
                },
            )
            .await?;
        // Ratings of the item that arrived before it: its aggregates are computed now that it is held.
        if existing_item.is_none()
            && known
                .evidence_waiting(std::iter::once(&record.content_id))
                .is_none_or(|waiting| !waiting.is_empty())
        {
            self.service()
                .refresh_waiting_rating_aggregates(unit, &record.content_id)
                .await?;
        }
        Ok(Applied::Stored(format!(
            "{} revision {} from {}{}",
            record.content_id,
            record.revision_no,
            record.origin,
            if becomes_current {
                ""
            } else {
                " (older than the current revision: kept, not current)"
            }
        )))
    }
}
