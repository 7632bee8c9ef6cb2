//! Applying what replicates from another realm: a content revision, a deletion, a space. Remote records are
//! validated exactly like local input (caps, display text, the secret scan, markdown neutralized, claim fingerprints
//! recomputed here), then written by the same revision writer as a local publish, with the object as its origin
//! signed it. Rules: an ID that exists under another origin is refused; a tombstone wins over any revision; a
//! revision already stored is a duplicate (ignored); a revision older than the current one is kept but does not
//! become current; the space of an item arrives with it when its own `Create` has not yet.
//!
//! Also the reading side: the records of our own outbox events and of our snapshot, for the adapter to render.

use super::content::ValidatedSubject;
use super::known_rows::KnownRows;
use super::references::{SourceReference, SubjectReference};
use super::revision_write::{ClaimToLink, RevisionWrite};
use super::unit_of_work::UnitOfWork;
use super::{Service, ServiceError};
use crate::domain::change::{Change, OutboxEvent};
use crate::domain::knowledge::{Claim, ContentItem, Entity, Revision, Source, Space, SpaceVisibility};
use crate::domain::replication::{FederatedObject, OriginProof, ReplicatedObject, RevisionRecord, SpaceRecord};
use crate::domain::tombstone::Tombstone;
use crate::domain::{IdKind, PublicId};
use crate::store::replication::SnapshotEntry;
use crate::store::{self};

/// The longest context key a replicated experience may carry.
const MAX_CONTEXT_KEY_BYTES: usize = 1024;

/// What applying one replicated object did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Applied {
    /// Written.
    Stored(String),
    /// Nothing to do: a duplicate, or superseded by a tombstone.
    Ignored(String),
    /// Refused: the object breaks a rule; nothing of it was written.
    Refused(String),
}

impl Applied {
    /// The intake log's outcome.
    pub fn outcome(&self) -> &'static str {
        match self {
            Applied::Stored(_) => "applied",
            Applied::Ignored(_) => "ignored",
            Applied::Refused(_) => "refused",
        }
    }

    /// The intake log's detail.
    pub fn detail(&self) -> &str {
        match self {
            Applied::Stored(detail) | Applied::Ignored(detail) | Applied::Refused(detail) => detail,
        }
    }
}

/// One outbox event with the record it names, as it is sent.
#[derive(Debug, Clone, PartialEq)]
pub struct OutboxEntry {
    /// The event.
    pub event: OutboxEvent,
    /// The object as it is now sent: `None` when the event's object is gone (it is skipped).
    pub object: Option<FederatedObject>,
}

/// One entry of the snapshot a new peer backfills from.
#[derive(Debug, Clone, PartialEq)]
pub struct SnapshotItem {
    /// The snapshot position (ask for what comes after it).
    pub position: String,
    /// The object.
    pub object: FederatedObject,
}

/// A replicated revision that passed the checks needing no database, ready for the ones that do.
pub(crate) struct CheckedRevision {
    content: super::content::ValidatedContent,
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

impl Service {
    /// Applies one verified replicated object from `sender` inside `unit`. Rule violations come back as
    /// [`Applied::Refused`] with nothing written; database failures as `Err` (the caller's unit rolls back).
    ///
    /// `checked` is the revision's [`Service::check_revision`] when the caller ran it before the transaction.
    pub(crate) async fn apply_replicated_in(
        &self,
        unit: &mut UnitOfWork,
        sender: &str,
        replicated: &ReplicatedObject,
        checked: Option<&Result<CheckedRevision, String>>,
        known: &mut KnownRows,
    ) -> Result<Applied, ServiceError> {
        let origin = replicated.object.origin();
        if origin.eq_ignore_ascii_case(self.realm()) {
            return Ok(Applied::Refused(format!(
                "the object claims this realm ({origin}) as its origin"
            )));
        }
        if !origin.eq_ignore_ascii_case(sender) {
            tracing::debug!(sender, origin, "a relayed object (its origin's proof was verified)");
        }
        let applied = match &replicated.object {
            FederatedObject::Revision(record) => {
                return self
                    .apply_revision_in(unit, record, &replicated.proof, checked, known)
                    .await;
            }
            FederatedObject::Deletion(tombstone) => self.apply_deletion_in(unit, tombstone, &replicated.proof).await,
            FederatedObject::Space(space) => self.apply_space_in(unit, space, &replicated.proof).await,
        };
        known.forget_object(&replicated.object);
        applied
    }

    async fn apply_space_in(
        &self,
        unit: &mut UnitOfWork,
        record: &SpaceRecord,
        proof: &OriginProof,
    ) -> Result<Applied, ServiceError> {
        if record.id.kind() != IdKind::Space {
            return Ok(Applied::Refused(format!("{} is not a space ID", record.id)));
        }
        let name = match super::validation::display_text("name", &record.name, super::limits::MAX_NAME_CHARACTERS)
            .and_then(|name| self.scan_text("name", &name).map(|()| name))
        {
            Ok(name) => name,
            Err(error) => return Ok(Applied::Refused(format!("space {}: {error}", record.id))),
        };
        let description = match super::validation::optional_text(
            "description",
            Some(&record.description),
            super::limits::MAX_SUMMARY_CHARACTERS,
        )
        .and_then(|text| {
            let text = text.unwrap_or_default();
            self.scan_text("description", &text).map(|()| text)
        }) {
            Ok(text) => text,
            Err(error) => return Ok(Applied::Refused(format!("space {}: {error}", record.id))),
        };
        if let Some(existing) = store::replication::find_space_origin(&mut unit.conn(), &record.id).await? {
            if existing.origin != record.origin {
                return Ok(Applied::Refused(format!(
                    "{} already exists here under the origin {}",
                    record.id, existing.origin
                )));
            }
            if existing.signed_object_known {
                return Ok(Applied::Ignored(format!("space {} is known already", record.id)));
            }
            // The space arrived with one of its items first (name only): its own object completes it.
            store::replication::complete_space(&mut unit.conn(), &record.id, &name, &description, &proof.signed_object)
                .await?;
            return Ok(Applied::Stored(format!(
                "space {} from {} completed",
                record.id, record.origin
            )));
        }
        let now = self.now();
        let space = Space {
            id: record.id.clone(),
            name,
            description,
            visibility: SpaceVisibility::Federated,
            is_default: false,
            origin: record.origin.clone(),
            created_by: record.created_by.clone(),
            created_at: record.created_at,
            received_at: now,
        };
        store::knowledge::insert_space(&mut unit.conn(), &space).await?;
        store::replication::record_space_proof(&mut unit.conn(), &record.id, &proof.signed_object).await?;
        Ok(Applied::Stored(format!("space {} from {}", space.id, space.origin)))
    }

    async fn apply_deletion_in(
        &self,
        unit: &mut UnitOfWork,
        tombstone: &Tombstone,
        proof: &OriginProof,
    ) -> Result<Applied, ServiceError> {
        if tombstone.content_id.kind() != IdKind::Content {
            return Ok(Applied::Refused(format!(
                "{} is not a content ID",
                tombstone.content_id
            )));
        }
        let reason = match super::validation::required_text(
            "reason",
            &tombstone.reason,
            super::deletion::MAX_DELETION_REASON_CHARACTERS,
        )
        .and_then(|reason| self.scan_text("reason", &reason).map(|()| reason))
        {
            Ok(reason) => reason,
            Err(error) => {
                return Ok(Applied::Refused(format!(
                    "deletion of {}: {error}",
                    tombstone.content_id
                )));
            }
        };
        if store::tombstones::find(&mut unit.conn(), &tombstone.content_id)
            .await?
            .is_some()
        {
            return Ok(Applied::Ignored(format!("{} is deleted already", tombstone.content_id)));
        }
        let existing = store::knowledge::find_content_for_update(&mut unit.conn(), &tombstone.content_id).await?;
        if let Some(existing) = &existing
            && existing.origin != tombstone.origin
        {
            return Ok(Applied::Refused(format!(
                "{} belongs to {}: only its origin deletes it",
                tombstone.content_id, existing.origin
            )));
        }
        let now = self.now();
        let stored = Tombstone {
            reason,
            signed_object: Some(proof.signed_object.clone()),
            received_at: now,
            ..tombstone.clone()
        };
        store::tombstones::insert(&mut unit.conn(), &stored).await?;
        if existing.is_some() {
            store::tombstones::mark_content_deleted(&mut unit.conn(), &tombstone.content_id, now).await?;
        }
        Ok(Applied::Stored(format!(
            "{} deleted by {} at its origin {}",
            tombstone.content_id, tombstone.deleted_by, tombstone.origin
        )))
    }

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
        let request = super::content::PublishRequest {
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
                .map(|relation| super::content::RelationRequest {
                    relation_type: relation.relation_type.as_str().to_owned(),
                    target: relation.target.as_str().to_owned(),
                    reason: relation.reason.clone(),
                })
                .collect(),
            tags: record.tags.clone(),
            language: record.language.clone(),
            ..super::content::PublishRequest::default()
        };
        let mut content = match self.validate_content(&request) {
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
        let space_name =
            match super::validation::display_text("space/name", &record.space_name, super::limits::MAX_NAME_CHARACTERS)
            {
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

    async fn apply_revision_in(
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
                if stored.origin != record.origin && stored.origin != self.realm() {
                    return refuse(format!("{} exists here under the origin {}", subject.id, stored.origin));
                }
                stored_entities.push(subject.id.clone());
            }
        }
        let mut stored_sources: Vec<PublicId> = Vec::new();
        for (source, validated) in record.sources.iter().zip(&content.sources) {
            let stored = known.source(unit, &source.id).await?;
            if let (Some(stored), super::content::ValidatedSource::Url { normalized, .. }) = (&stored, validated)
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
                self.insert_entity(unit, &entity, now).await?;
                stored_entities.push(subject.id.clone());
            }
            if !subject_ids.contains(&subject.id) {
                subject_ids.push(subject.id.clone());
            }
        }
        let mut sources = Vec::with_capacity(record.sources.len());
        for (source, validated) in record.sources.iter().zip(&content.sources) {
            let super::content::ValidatedSource::Url {
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
                    .map_or_else(|| self.new_id(IdKind::Claim), |(_, id)| id.clone());
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
            content_sha256: super::content::content_hash(content),
            origin: record.origin.clone(),
            created_at: record.revised_at,
            received_at: now,
        };
        self.write_revision(
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
                proof: Some(proof),
            },
        )
        .await?;
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

    /// Up to `limit` events of our outbox after `after`, each with the object it names as it is now.
    pub async fn outbox_entries(&self, after: i64, limit: i64) -> Result<Vec<OutboxEntry>, ServiceError> {
        let mut reader = self.store().reader().await?;
        let events = store::outbox::after(&mut reader.conn(), after, limit).await?;
        let objects = self
            .federated_objects(&mut reader.conn(), events.iter().map(|event| &event.event.change))
            .await?;
        Ok(events
            .into_iter()
            .map(|event| {
                let object = objects
                    .iter()
                    .find(|object| event_names(&event.event.change, object))
                    .cloned();
                OutboxEntry { event, object }
            })
            .collect())
    }

    /// A replicated revision's object as its origin signed it, with the key that signed it (`None` for a local
    /// revision, which this instance signs when it sends it).
    pub async fn revision_origin_proof(
        &self,
        revision_id: &PublicId,
    ) -> Result<Option<(String, String)>, ServiceError> {
        let mut reader = self.store().reader().await?;
        Ok(store::replication::revision_proof(&mut reader.conn(), revision_id).await?)
    }

    /// Our outbox's head: the position of its newest event (0 when empty).
    pub async fn outbox_head(&self) -> Result<i64, ServiceError> {
        let mut reader = self.store().reader().await?;
        Ok(store::outbox::head(&mut reader.conn()).await?)
    }

    /// Up to `limit` objects of our snapshot after `after` (`""` from the start): what a new peer backfills. Also how
    /// many entries were read and the last one's position (`None` when none were), which say whether more may
    /// follow even when an entry's object could not be read.
    pub async fn snapshot_items(
        &self,
        after: &str,
        limit: i64,
    ) -> Result<(Vec<SnapshotItem>, Option<(i64, String)>), ServiceError> {
        let mut reader = self.store().reader().await?;
        let entries = store::replication::snapshot_after(&mut reader.conn(), self.realm(), after, limit).await?;
        let read_through = entries
            .last()
            .map(|(position, _)| (i64::try_from(entries.len()).unwrap_or(i64::MAX), position.clone()));
        let mut revisions = Vec::new();
        let mut spaces = Vec::new();
        let mut deleted = Vec::new();
        for (_, entry) in &entries {
            match entry {
                SnapshotEntry::Space(id) => spaces.push(id.as_str().to_owned()),
                SnapshotEntry::Revision(id) => revisions.push(id.as_str().to_owned()),
                SnapshotEntry::Deleted(id) => deleted.push(id.clone()),
            }
        }
        let revision_records = store::replication::revision_records(&mut reader.conn(), &revisions).await?;
        let space_records = store::replication::space_records(&mut reader.conn(), &spaces).await?;
        let mut tombstones = Vec::with_capacity(deleted.len());
        for id in &deleted {
            if let Some(tombstone) = store::tombstones::find(&mut reader.conn(), id).await? {
                tombstones.push(tombstone);
            }
        }
        let mut items = Vec::with_capacity(entries.len());
        for (position, entry) in entries {
            let object = match entry {
                SnapshotEntry::Space(id) => space_records
                    .iter()
                    .find(|space| space.id == id)
                    .cloned()
                    .map(FederatedObject::Space),
                SnapshotEntry::Revision(id) => revision_records
                    .iter()
                    .find(|record| record.revision_id == id)
                    .cloned()
                    .map(|record| FederatedObject::Revision(Box::new(record))),
                SnapshotEntry::Deleted(id) => tombstones
                    .iter()
                    .find(|tombstone| tombstone.content_id == id)
                    .cloned()
                    .map(FederatedObject::Deletion),
            };
            if let Some(object) = object {
                items.push(SnapshotItem { position, object });
            }
        }
        Ok((items, read_through))
    }

    /// The objects a batch of changes names, read in a fixed number of statements.
    async fn federated_objects<'a>(
        &self,
        conn: &mut store::Conn<'_>,
        changes: impl Iterator<Item = &'a Change>,
    ) -> Result<Vec<FederatedObject>, ServiceError> {
        let mut revisions = Vec::new();
        let mut spaces = Vec::new();
        let mut deleted = Vec::new();
        for change in changes {
            match change {
                Change::ContentRevised { revision_id, .. } => revisions.push(revision_id.clone()),
                Change::SpaceCreated { space_id } => spaces.push(space_id.clone()),
                Change::ContentDeleted { content_id } => deleted.push(content_id.clone()),
            }
        }
        let mut objects: Vec<FederatedObject> = store::replication::revision_records(conn, &revisions)
            .await?
            .into_iter()
            .map(|record| FederatedObject::Revision(Box::new(record)))
            .collect();
        objects.extend(
            store::replication::space_records(conn, &spaces)
                .await?
                .into_iter()
                .map(FederatedObject::Space),
        );
        for id in deleted {
            let Ok(id) = PublicId::parse(&id) else { continue };
            if let Some(tombstone) = store::tombstones::find(conn, &id).await? {
                objects.push(FederatedObject::Deletion(tombstone));
            }
        }
        Ok(objects)
    }
}

/// Whether `object` is the one `change` names.
fn event_names(change: &Change, object: &FederatedObject) -> bool {
    match (change, object) {
        (Change::ContentRevised { revision_id, .. }, FederatedObject::Revision(record)) => {
            record.revision_id.as_str() == revision_id
        }
        (Change::SpaceCreated { space_id }, FederatedObject::Space(space)) => space.id.as_str() == space_id,
        (Change::ContentDeleted { content_id }, FederatedObject::Deletion(tombstone)) => {
            tombstone.content_id.as_str() == content_id
        }
        _ => false,
    }
}
