//! Applying a replicated space (`Collection`): created here when new, refused when its ID is taken under another origin.

use super::Applied;
use crate::domain::IdKind;
use crate::domain::knowledge::{Space, SpaceVisibility};
use crate::domain::replication::{OriginProof, SpaceRecord};
use crate::service::ServiceError;
use crate::service::federation::Federation;
use crate::service::unit_of_work::UnitOfWork;
use crate::store::{self};

impl Federation {
    pub(super) async fn apply_space_in(
        &self,
        unit: &mut UnitOfWork,
        record: &SpaceRecord,
        proof: &OriginProof,
    ) -> Result<Applied, ServiceError> {
        if record.id.kind() != IdKind::Space {
            return Ok(Applied::Refused(format!("{} is not a space ID", record.id)));
        }
        let name = match crate::service::validation::display_text(
            "name",
            &record.name,
            crate::service::limits::MAX_NAME_CHARACTERS,
        )
        .and_then(|name| self.service().scan_text("name", &name).map(|()| name))
        {
            Ok(name) => name,
            Err(error) => return Ok(Applied::Refused(format!("space {}: {error}", record.id))),
        };
        let description = match crate::service::validation::optional_text(
            "description",
            Some(&record.description),
            crate::service::limits::MAX_SUMMARY_CHARACTERS,
        )
        .and_then(|text| {
            let text = text.unwrap_or_default();
            self.service().scan_text("description", &text).map(|()| text)
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
}
