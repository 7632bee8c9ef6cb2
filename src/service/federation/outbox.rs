//! Reading this realm's side of replication for the adapter: outbox events with the records they name as they are
//! now, the head position, and the snapshot a new peer backfills from.

use chrono::{DateTime, Utc};

use super::Federation;
use crate::domain::change::{Change, OutboxEvent};
use crate::domain::replication::{EvidenceFacts, EvidencePassport, EvidenceRetraction, FederatedObject};
use crate::domain::{IdKind, PublicId};
use crate::service::ServiceError;
use crate::store::replication::SnapshotEntry;
use crate::store::{self};

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

impl Federation {
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

    /// Our outbox's epoch: the name of its run of positions, new after a restore from a backup (set by the
    /// migration that made it, and by `interai admin restore`).
    pub async fn outbox_epoch(&self) -> Result<String, ServiceError> {
        let mut reader = self.store().reader().await?;
        store::settings::get(&mut reader.conn(), crate::service::archive::SETTING_OUTBOX_EPOCH)
            .await?
            .ok_or_else(|| ServiceError::internal("the outbox has no epoch (migration 0021 sets one)"))
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
        let entries =
            store::replication::snapshot_after(&mut reader.conn(), self.realm().as_str(), after, limit).await?;
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
                SnapshotEntry::Evidence(_) => {}
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
                SnapshotEntry::Evidence(id) => self.evidence_object(&mut reader.conn(), &id, false).await?,
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
        let mut evidence = Vec::new();
        for change in changes {
            match change {
                Change::ContentRevised { revision_id, .. } => revisions.push(revision_id.clone()),
                Change::SpaceCreated { space_id } => spaces.push(space_id.clone()),
                Change::ContentDeleted { content_id } => deleted.push(content_id.clone()),
                Change::EvidenceRecorded { record_id } => evidence.push((record_id.clone(), false)),
                Change::EvidenceRetracted { record_id } => evidence.push((record_id.clone(), true)),
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
        for (id, retracted) in evidence {
            let Ok(id) = PublicId::parse(&id) else { continue };
            if let Some(object) = self.evidence_object(conn, &id, retracted).await? {
                objects.push(object);
            }
        }
        Ok(objects)
    }

    /// One of this realm's evidence records as it is sent (its passport), or its retraction; `None` when it is not
    /// this realm's, or for a retraction, when it is not retracted.
    async fn evidence_object(
        &self,
        conn: &mut store::Conn<'_>,
        record_id: &PublicId,
        retraction: bool,
    ) -> Result<Option<FederatedObject>, ServiceError> {
        let Some((passport, retracted_at)) = self.evidence_passport(conn, record_id).await? else {
            return Ok(None);
        };
        Ok(match (retraction, retracted_at) {
            (false, _) => Some(FederatedObject::Evidence(Box::new(passport))),
            (true, Some(retracted_at)) => Some(FederatedObject::Retraction(EvidenceRetraction {
                record_id: passport.record_id,
                origin: passport.origin,
                retracted_at,
            })),
            (true, None) => None,
        })
    }

    /// The passport of one of this realm's evidence records, with when it was retracted.
    async fn evidence_passport(
        &self,
        conn: &mut store::Conn<'_>,
        record_id: &PublicId,
    ) -> Result<Option<(EvidencePassport, Option<DateTime<Utc>>)>, ServiceError> {
        let found = match record_id.kind() {
            IdKind::Usage => store::evidence::find_usage(conn, record_id).await?.map(|usage| {
                let facts = EvidenceFacts::Usage {
                    usage_type: usage.usage_type,
                    result: usage.result,
                    real_world_use: usage.real_world_use,
                    context_key: usage.context_key,
                };
                (
                    usage.author,
                    usage.target_id,
                    usage.target_content_id,
                    usage.created_at,
                    usage.retracted_at,
                    facts,
                )
            }),
            IdKind::Review => store::evidence::find_review(conn, record_id).await?.map(|review| {
                let facts = EvidenceFacts::Review {
                    verdict: review.verdict,
                    confidence: review.confidence,
                    based_on_usage: review.based_on_usage_id,
                };
                (
                    review.author,
                    review.target_id,
                    review.target_content_id,
                    review.created_at,
                    review.retracted_at,
                    facts,
                )
            }),
            IdKind::Rating => store::evidence::find_rating(conn, record_id).await?.map(|rating| {
                let facts = EvidenceFacts::Rating {
                    dimension: rating.dimension,
                    score: rating.score,
                    confidence: rating.confidence,
                    context_key: rating.context_key,
                    based_on_usage: rating.based_on_usage_id,
                };
                (
                    rating.author,
                    rating.target_id,
                    None,
                    rating.created_at,
                    rating.retracted_at,
                    facts,
                )
            }),
            _ => None,
        };
        Ok(found.filter(|(author, ..)| self.realm().is(&author.origin)).map(
            |(author, target_id, target_content_id, created_at, retracted_at, facts)| {
                (
                    EvidencePassport {
                        record_id: record_id.clone(),
                        origin: author.origin,
                        target_id,
                        target_content_id,
                        actor_id: author.actor_id,
                        root_controller_id: author.root_controller_id,
                        created_at,
                        facts,
                    },
                    retracted_at,
                )
            },
        ))
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
        (Change::EvidenceRecorded { record_id }, FederatedObject::Evidence(passport)) => {
            passport.record_id.as_str() == record_id
        }
        (Change::EvidenceRetracted { record_id }, FederatedObject::Retraction(retraction)) => {
            retraction.record_id.as_str() == record_id
        }
        _ => false,
    }
}
