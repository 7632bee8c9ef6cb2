//! Applying a replicated deletion (`Tombstone`): a tombstone wins over any revision, even of an item never received.

use super::Applied;
use crate::domain::IdKind;
use crate::domain::replication::OriginProof;
use crate::domain::tombstone::Tombstone;
use crate::service::ServiceError;
use crate::service::federation::Federation;
use crate::service::unit_of_work::UnitOfWork;
use crate::store::{self};

impl Federation {
    pub(super) async fn apply_deletion_in(
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
        let reason = match crate::service::validation::required_text(
            "reason",
            &tombstone.reason,
            crate::service::deletion::MAX_DELETION_REASON_CHARACTERS,
        )
        .and_then(|reason| self.service().scan_text("reason", &reason).map(|()| reason))
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
}
