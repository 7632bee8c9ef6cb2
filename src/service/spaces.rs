//! Spaces an admin creates: a name, a description and a visibility (`federated`, shared with every active peer, or
//! `local`, which never leaves the instance, nor does anything in it). A space's visibility is fixed when it is
//! created, so nothing that was local can later be sent.

use serde_json::json;

use super::limits::{MAX_NAME_CHARACTERS, MAX_SUMMARY_CHARACTERS};
use super::unit_of_work::within_unit_of_work;
use super::validation::{display_text, optional_text};
use super::{ErrorCode, Service, ServiceError};
use crate::domain::change::Change;
use crate::domain::knowledge::{Space, SpaceVisibility};
use crate::domain::{IdKind, PublicId};
use crate::store;

/// What `interai admin space create` and `POST /admin/spaces` take.
#[derive(Debug, Clone, PartialEq)]
pub struct NewSpace {
    /// Unique within the realm; agents name it in `publish`.
    pub name: String,
    /// What it is for.
    pub description: Option<String>,
    /// `federated` or `local`.
    pub visibility: SpaceVisibility,
}

impl Service {
    /// Creates a space of this realm on behalf of `created_by` (an admin). A federated space is announced to peers.
    pub async fn create_space(&self, created_by: &PublicId, request: NewSpace) -> Result<Space, ServiceError> {
        let name = display_text("name", &request.name, MAX_NAME_CHARACTERS)?;
        let description =
            optional_text("description", request.description.as_deref(), MAX_SUMMARY_CHARACTERS)?.unwrap_or_default();
        self.scan_text("name", &name)?;
        self.scan_text("description", &description)?;
        if super::validation::names_a_space_id(&name) {
            return Err(ServiceError::validation(
                "name",
                "a space name cannot look like a space ID (spc_…)",
            ));
        }
        let space = within_unit_of_work!(self, |unit| {
            async {
                let taken = store::knowledge::list_spaces(&mut unit.conn())
                    .await?
                    .into_iter()
                    .any(|space| self.realm().is(&space.origin) && space.name == name);
                if taken {
                    return Err(ServiceError::new(
                        ErrorCode::ValidationFailed,
                        format!("a space named {name:?} exists already"),
                    )
                    .with_details(json!({ "field": "name" })));
                }
                let now = self.now();
                let space = Space {
                    id: self.new_id(IdKind::Space),
                    name: name.clone(),
                    description: description.clone(),
                    visibility: request.visibility,
                    is_default: false,
                    origin: self.realm().as_str().to_owned(),
                    created_by: created_by.clone(),
                    created_at: now,
                    received_at: now,
                };
                store::knowledge::insert_space(&mut unit.conn(), &space).await?;
                unit.emit(
                    self.new_internal_id(),
                    Change::SpaceCreated {
                        space_id: space.id.as_str().to_owned(),
                    },
                    &space.id,
                    space.visibility,
                    now,
                );
                Ok::<Space, ServiceError>(space)
            }
            .await
        })?;
        tracing::info!(space = %space.id, name = %space.name, visibility = space.visibility.as_str(), "space created");
        Ok(space)
    }

    /// Every space this instance knows (its own and replicated ones), oldest first.
    pub async fn list_spaces(&self) -> Result<Vec<Space>, ServiceError> {
        let mut reader = self.store().reader().await?;
        Ok(store::knowledge::list_spaces(&mut reader.conn()).await?)
    }
}
