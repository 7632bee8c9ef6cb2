//! What a batch of replicated objects needs to know of the database before it writes (does the item exist, under
//! which origin; is it deleted; do its claims, subjects, sources and space exist), read for the whole batch in one
//! statement per table instead of one per object and table.
//!
//! Why: on SQLite every statement is a round trip to the connection's thread made while the single writer is held,
//! and the intake's existence checks were most of an applied revision's round trips; the writes that follow are
//! held back and sent together (see `store::statement`), so with the checks answered here a whole batch costs a
//! handful of round trips. On PostgreSQL each saved statement is a saved round trip to the server.
//!
//! The rule that keeps it exact: a row read here is the row as it was when the batch began, so once an object of
//! the batch writes a key (an item, a revision, a claim, …) that key is forgotten and the next object that asks
//! reads the database again, inside the same transaction, as it did before this existed. The one exception is a
//! space an object creates: it is recorded as written, since the objects after it in the same space would all
//! read it back. A batch that applies anything else than replicated objects forgets everything.

use std::collections::HashMap;

use super::ServiceError;
use super::unit_of_work::UnitOfWork;
use crate::domain::PublicId;
use crate::domain::knowledge::{Claim, ContentItem, Entity, Revision, Source, Space};
use crate::domain::replication::{FederatedObject, ReplicatedObject};
use crate::domain::tombstone::Tombstone;
use crate::store;

/// Rows read ahead for a batch; a key is present when it was read (`None`: no such row) and not written since.
#[derive(Debug, Default)]
pub(crate) struct KnownRows {
    tombstones: HashMap<PublicId, Option<Tombstone>>,
    revisions: HashMap<PublicId, Option<Revision>>,
    contents: HashMap<PublicId, Option<ContentItem>>,
    spaces: HashMap<PublicId, Option<Space>>,
    claims: HashMap<PublicId, Option<Claim>>,
    claims_by_fingerprint: HashMap<String, Option<Claim>>,
    /// The batch's targets (revisions, claims, entities, and content items for ratings) that evidence from other
    /// realms already names; `None` when
    /// nothing was read ahead. Evidence applied in the batch adds its target.
    evidence_targets: Option<std::collections::HashSet<PublicId>>,
    entities: HashMap<PublicId, Option<Entity>>,
    sources: HashMap<PublicId, Option<Source>>,
    /// The evidence targets whose lock this transaction holds (`store::remote_evidence::lock_evidence_targets`):
    /// held until the commit, so never forgotten while the batch lasts.
    locked_evidence_targets: std::collections::HashSet<PublicId>,
}

/// The keys of `found` as known rows: each of `keys`, with the row found for it or `None`.
fn known<K, T>(keys: &[K], found: Vec<T>, key_of: impl Fn(&T) -> K) -> HashMap<K, Option<T>>
where
    K: std::hash::Hash + Eq + Clone,
{
    let mut known: HashMap<K, Option<T>> = keys.iter().map(|key| (key.clone(), None)).collect();
    for row in found {
        known.insert(key_of(&row), Some(row));
    }
    known
}

impl KnownRows {
    /// Nothing known: every lookup reads the database.
    pub(crate) fn none() -> KnownRows {
        KnownRows::default()
    }

    /// Reads, inside `unit`, the rows the revisions among `objects` will look up (content items locked as
    /// [`store::knowledge::find_content_for_update`] locks one). `fingerprints` are those of their claims.
    pub(crate) async fn read(
        unit: &mut UnitOfWork,
        objects: &[&ReplicatedObject],
        fingerprints: &[String],
    ) -> Result<KnownRows, ServiceError> {
        let mut content_ids: Vec<PublicId> = Vec::new();
        let mut revision_ids = Vec::new();
        let mut space_ids: Vec<PublicId> = Vec::new();
        let mut claim_ids = Vec::new();
        let mut entity_ids = Vec::new();
        let mut source_ids = Vec::new();
        for object in objects {
            let FederatedObject::Revision(record) = &object.object else {
                continue;
            };
            content_ids.push(record.content_id.clone());
            revision_ids.push(record.revision_id.clone());
            if !space_ids.contains(&record.space_id) {
                space_ids.push(record.space_id.clone());
            }
            claim_ids.extend(record.claims.iter().map(|claim| claim.id.clone()));
            entity_ids.extend(record.subjects.iter().map(|subject| subject.id.clone()));
            source_ids.extend(record.sources.iter().map(|source| source.id.clone()));
        }
        let tombstones = store::tombstones::find_many(&mut unit.conn(), &content_ids).await?;
        let contents = store::knowledge::find_contents_for_update(&mut unit.conn(), &content_ids).await?;
        let revisions = store::knowledge::find_revisions(&mut unit.conn(), &revision_ids).await?;
        let spaces = store::knowledge::find_spaces(&mut unit.conn(), &space_ids).await?;
        let claims = store::knowledge::find_claims(&mut unit.conn(), &claim_ids).await?;
        let fingerprint_refs: Vec<&str> = fingerprints.iter().map(String::as_str).collect();
        let claims_by_fingerprint =
            store::knowledge::find_claims_by_fingerprints(&mut unit.conn(), &fingerprint_refs).await?;
        let entities = store::knowledge::find_entities(&mut unit.conn(), &entity_ids).await?;
        let sources = store::knowledge::find_sources(&mut unit.conn(), &source_ids).await?;
        let targets: Vec<PublicId> = revision_ids
            .iter()
            .chain(&claim_ids)
            .chain(&entity_ids)
            .chain(&content_ids)
            .cloned()
            .collect();
        // The batch's targets and those its evidence names, locked before anything looks for the other (see
        // `store::remote_evidence::lock_evidence_targets`).
        let evidence_named = objects.iter().filter_map(|object| match &object.object {
            FederatedObject::Evidence(passport) => Some(&passport.target_id),
            _ => None,
        });
        let locked: Vec<&PublicId> = targets.iter().chain(evidence_named).collect();
        store::remote_evidence::lock_evidence_targets(&mut unit.conn(), &locked).await?;
        let locked_evidence_targets = locked.into_iter().cloned().collect();
        let evidence_targets = store::remote_evidence::targets_with_evidence(&mut unit.conn(), &targets).await?;
        Ok(KnownRows {
            tombstones: known(&content_ids, tombstones, |row| row.content_id.clone()),
            revisions: known(&revision_ids, revisions, |row| row.id.clone()),
            contents: known(&content_ids, contents, |row| row.id.clone()),
            spaces: known(&space_ids, spaces, |row| row.id.clone()),
            claims: known(&claim_ids, claims, |row| row.id.clone()),
            claims_by_fingerprint: known(fingerprints, claims_by_fingerprint, |row| row.fingerprint.clone()),
            entities: known(&entity_ids, entities, |row| row.id.clone()),
            sources: known(&source_ids, sources, |row| row.id.clone()),
            evidence_targets: Some(evidence_targets.into_iter().collect()),
            locked_evidence_targets,
        })
    }

    /// Takes the evidence-target lock of `target_id` in `unit`, unless the batch took it already (a PostgreSQL
    /// round trip per record saved; the lock is held until the commit either way).
    pub(crate) async fn lock_evidence_target(
        &mut self,
        unit: &mut UnitOfWork,
        target_id: &PublicId,
    ) -> Result<(), ServiceError> {
        if !self.locked_evidence_targets.contains(target_id) {
            store::remote_evidence::lock_evidence_targets(&mut unit.conn(), &[target_id]).await?;
            self.locked_evidence_targets.insert(target_id.clone());
        }
        Ok(())
    }

    /// Of `targets`, those that evidence from other realms names, when the batch read it ahead (`None` otherwise).
    pub(crate) fn evidence_waiting<'a>(&self, targets: impl Iterator<Item = &'a PublicId>) -> Option<Vec<PublicId>> {
        let known = self.evidence_targets.as_ref()?;
        Some(targets.filter(|target| known.contains(*target)).cloned().collect())
    }

    /// The tombstone of a content item.
    pub(crate) async fn tombstone(
        &self,
        unit: &mut UnitOfWork,
        content_id: &PublicId,
    ) -> Result<Option<Tombstone>, ServiceError> {
        match self.tombstones.get(content_id) {
            Some(known) => Ok(known.clone()),
            None => Ok(store::tombstones::find(&mut unit.conn(), content_id).await?),
        }
    }

    /// A revision.
    pub(crate) async fn revision(
        &self,
        unit: &mut UnitOfWork,
        id: &PublicId,
    ) -> Result<Option<Revision>, ServiceError> {
        match self.revisions.get(id) {
            Some(known) => Ok(known.clone()),
            None => Ok(store::knowledge::find_revision(&mut unit.conn(), id).await?),
        }
    }

    /// A content item, locked for the rest of the transaction.
    pub(crate) async fn content_for_update(
        &self,
        unit: &mut UnitOfWork,
        id: &PublicId,
    ) -> Result<Option<ContentItem>, ServiceError> {
        match self.contents.get(id) {
            Some(known) => Ok(known.clone()),
            None => Ok(store::knowledge::find_content_for_update(&mut unit.conn(), id).await?),
        }
    }

    /// A space.
    pub(crate) async fn space(&self, unit: &mut UnitOfWork, id: &PublicId) -> Result<Option<Space>, ServiceError> {
        match self.spaces.get(id) {
            Some(known) => Ok(known.clone()),
            None => Ok(store::knowledge::find_space(&mut unit.conn(), id).await?),
        }
    }

    /// A claim by ID.
    pub(crate) async fn claim(&self, unit: &mut UnitOfWork, id: &PublicId) -> Result<Option<Claim>, ServiceError> {
        match self.claims.get(id) {
            Some(known) => Ok(known.clone()),
            None => Ok(store::knowledge::find_claim(&mut unit.conn(), id).await?),
        }
    }

    /// The claims with these fingerprints (missing ones absent): from what is known when every one of them is.
    pub(crate) async fn claims_with_fingerprints(
        &self,
        unit: &mut UnitOfWork,
        fingerprints: &[&str],
    ) -> Result<Vec<Claim>, ServiceError> {
        let known: Option<Vec<&Option<Claim>>> = fingerprints
            .iter()
            .map(|fingerprint| self.claims_by_fingerprint.get(*fingerprint))
            .collect();
        match known {
            Some(known) => Ok(known.into_iter().flatten().cloned().collect()),
            None => Ok(store::knowledge::find_claims_by_fingerprints(&mut unit.conn(), fingerprints).await?),
        }
    }

    /// An entity.
    pub(crate) async fn entity(&self, unit: &mut UnitOfWork, id: &PublicId) -> Result<Option<Entity>, ServiceError> {
        match self.entities.get(id) {
            Some(known) => Ok(known.clone()),
            None => Ok(store::knowledge::find_entity(&mut unit.conn(), id).await?),
        }
    }

    /// A source.
    pub(crate) async fn source(&self, unit: &mut UnitOfWork, id: &PublicId) -> Result<Option<Source>, ServiceError> {
        match self.sources.get(id) {
            Some(known) => Ok(known.clone()),
            None => Ok(store::knowledge::find_source(&mut unit.conn(), id).await?),
        }
    }

    /// The space `space` was written: the objects after it see it.
    pub(crate) fn space_written(&mut self, space: &Space) {
        self.spaces.insert(space.id.clone(), Some(space.clone()));
    }

    /// A revision is about to write these keys: forget them.
    pub(crate) fn forget_revision_keys(
        &mut self,
        content_id: &PublicId,
        revision_id: &PublicId,
        claim_ids: &[&PublicId],
        fingerprints: &[&str],
        entity_ids: &[&PublicId],
        source_ids: &[&PublicId],
    ) {
        self.tombstones.remove(content_id);
        self.contents.remove(content_id);
        self.revisions.remove(revision_id);
        for id in claim_ids {
            self.claims.remove(*id);
        }
        for fingerprint in fingerprints {
            self.claims_by_fingerprint.remove(*fingerprint);
        }
        for id in entity_ids {
            self.entities.remove(*id);
        }
        for id in source_ids {
            self.sources.remove(*id);
        }
    }

    /// An object other than a revision was applied: forget what it may have written (a deletion its item, its
    /// tombstone and the item's revisions; a space the space).
    pub(crate) fn forget_object(&mut self, object: &FederatedObject) {
        match object {
            FederatedObject::Revision(_) => {}
            FederatedObject::Deletion(tombstone) => {
                self.tombstones.remove(&tombstone.content_id);
                self.contents.remove(&tombstone.content_id);
                self.revisions.retain(|_, revision| {
                    revision
                        .as_ref()
                        .is_none_or(|revision| revision.content_id != tombstone.content_id)
                });
            }
            FederatedObject::Space(space) => {
                self.spaces.remove(&space.id);
            }
            // Evidence may wait for a target a later object of the batch brings.
            FederatedObject::Evidence(passport) => {
                if let Some(targets) = &mut self.evidence_targets {
                    targets.insert(passport.target_id.clone());
                }
            }
            FederatedObject::Retraction(_) => {}
        }
    }

    /// Something else than a replicated object was applied: nothing is known any more.
    pub(crate) fn forget_all(&mut self) {
        // The locks stay held until the commit.
        let locked_evidence_targets = std::mem::take(&mut self.locked_evidence_targets);
        *self = KnownRows {
            locked_evidence_targets,
            ..KnownRows::default()
        };
    }
}
