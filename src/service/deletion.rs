//! Deleting content (an admin's decision): the item becomes a tombstone that says who deleted it, when and why;
//! search stops finding it, `get` reports the tombstone, and a deletion of this realm's own federated content is
//! sent to every peer, which keeps the same tombstone. Deletion is final: nothing revives a tombstone.

use serde_json::json;

use super::unit_of_work::within_unit_of_work;
use super::validation::{parse_target, required_text};
use super::{Service, ServiceError};
use crate::domain::change::Change;
use crate::domain::tombstone::Tombstone;
use crate::domain::{IdKind, PublicId};
use crate::store;

/// The longest reason a deletion may give.
pub const MAX_DELETION_REASON_CHARACTERS: usize = 500;

/// What became of a deletion request.
#[derive(Debug, Clone, PartialEq)]
pub struct Deletion {
    /// The tombstone (the first one, when the item was deleted before).
    pub tombstone: Tombstone,
    /// Whether the item had been deleted already (nothing changed).
    pub already_deleted: bool,
}

impl Service {
    /// Deletes a content item on behalf of `deleted_by` (an admin of this realm). Content replicated from another
    /// realm is deleted here only (its origin alone deletes it for every peer).
    pub async fn delete_content(
        &self,
        deleted_by: &PublicId,
        id: &str,
        reason: &str,
    ) -> Result<Deletion, ServiceError> {
        let content_id = parse_target("id", id, &[IdKind::Content], "a deletion")?;
        let reason = required_text("reason", reason, MAX_DELETION_REASON_CHARACTERS)?;
        self.scan_text("reason", &reason)?;
        let deletion = within_unit_of_work!(self, |unit| {
            async {
                if let Some(tombstone) = store::tombstones::find(&mut unit.conn(), &content_id).await? {
                    return Ok(Deletion {
                        tombstone,
                        already_deleted: true,
                    });
                }
                let content = store::knowledge::find_content_for_update(&mut unit.conn(), &content_id)
                    .await?
                    .ok_or_else(|| {
                        ServiceError::not_found(content_id.as_str()).with_details(json!({ "id": content_id.as_str() }))
                    })?;
                let space = store::knowledge::find_space(&mut unit.conn(), &content.space_id)
                    .await?
                    .ok_or_else(|| ServiceError::internal(format!("content {} has no space", content.id)))?;
                let now = self.now();
                let tombstone = Tombstone {
                    content_id: content.id.clone(),
                    origin: content.origin.clone(),
                    deleted_at: now,
                    deleted_by: deleted_by.as_str().to_owned(),
                    reason: reason.clone(),
                    signed_object: None,
                    received_at: now,
                };
                store::tombstones::insert(&mut unit.conn(), &tombstone).await?;
                store::tombstones::mark_content_deleted(&mut unit.conn(), &content.id, now).await?;
                if self.realm().is(&content.origin) {
                    unit.emit(
                        self.new_internal_id(),
                        Change::ContentDeleted {
                            content_id: content.id.as_str().to_owned(),
                        },
                        &space.id,
                        space.visibility,
                        now,
                    );
                }
                Ok::<Deletion, ServiceError>(Deletion {
                    tombstone,
                    already_deleted: false,
                })
            }
            .await
        })?;
        if !deletion.already_deleted {
            tracing::warn!(content = %content_id, deleted_by = %deleted_by, reason = %deletion.tombstone.reason, "content deleted");
        }
        Ok(deletion)
    }

    /// The tombstone of a content item, if it was deleted.
    pub async fn tombstone(&self, content_id: &PublicId) -> Result<Option<Tombstone>, ServiceError> {
        let mut reader = self.store().reader().await?;
        Ok(store::tombstones::find(&mut reader.conn(), content_id).await?)
    }
}
