//! Actors: creating and listing the humans, organizations and agents of this realm.

use super::{ErrorCode, Service, ServiceError};
use crate::domain::{Actor, ActorType, PublicId};
use crate::store::{self};

/// Input for creating an actor.
#[derive(Debug, Clone)]
pub struct NewActor {
    /// Human, organization or agent.
    pub actor_type: ActorType,
    /// Name shown to other actors (1–200 characters).
    pub display_name: String,
    /// The accountable controller; required for agents, optional otherwise.
    pub controller: Option<PublicId>,
}

/// Longest accepted display name, in characters.
pub const MAX_DISPLAY_NAME_CHARACTERS: usize = 200;

impl Service {
    /// Creates an actor of this realm.
    ///
    /// The controller must be an existing human or organization of this realm; because it must exist
    /// before the actor that names it and can never change, controller chains cannot form cycles.
    pub async fn create_actor(&self, new_actor: NewActor) -> Result<Actor, ServiceError> {
        let display_name = validate_display_name(&new_actor.display_name)?;
        if new_actor.actor_type == ActorType::Agent && new_actor.controller.is_none() {
            return Err(ServiceError::validation(
                "controller",
                "an ai actor needs an accountable controller (a usr_ or org_ ID)",
            ));
        }
        let mut transaction = self.store().begin().await?;
        let id = self.new_id(new_actor.actor_type.id_kind());
        let root_controller = match &new_actor.controller {
            Some(controller_id) => {
                if !controller_id.kind().is_actor() {
                    return Err(ServiceError::validation(
                        "controller",
                        "the controller must be a usr_ or org_ ID",
                    ));
                }
                let controller = store::actors::find(&mut transaction.conn(), controller_id)
                    .await?
                    .ok_or_else(|| ServiceError::not_found(controller_id.as_str()))?;
                if !controller.actor_type.can_control() {
                    return Err(ServiceError::validation(
                        "controller",
                        "only a usr_ or org_ actor can be a controller",
                    ));
                }
                if !self.realm().is(&controller.origin) {
                    return Err(ServiceError::validation(
                        "controller",
                        "the controller must belong to this realm",
                    ));
                }
                controller.root_controller
            }
            None => id.clone(),
        };
        let actor = Actor {
            id,
            actor_type: new_actor.actor_type,
            display_name,
            controller: new_actor.controller,
            root_controller,
            origin: self.realm().as_str().to_owned(),
            verified_by_email: false,
            verified_by_domain: false,
            created_at: self.now(),
        };
        store::actors::insert(&mut transaction.conn(), &actor).await?;
        transaction.commit().await?;
        tracing::info!(actor = %actor.id, actor_type = actor.actor_type.as_str(), "actor created");
        Ok(actor)
    }

    /// Every actor of this realm, oldest first.
    pub async fn list_actors(&self) -> Result<Vec<Actor>, ServiceError> {
        let mut reader = self.store().reader().await?;
        Ok(store::actors::list_by_origin(&mut reader.conn(), self.realm().as_str()).await?)
    }

    /// One page of this realm's actors, oldest first, and how many match: those whose name (any case) or ID holds
    /// `find` (every actor when it is empty), from the `offset`th on, at most `limit`.
    pub async fn actors_page(
        &self,
        find: &str,
        offset: usize,
        limit: usize,
    ) -> Result<(Vec<Actor>, usize), ServiceError> {
        let mut reader = self.store().reader().await?;
        let (actors, total) = store::actors::page_by_origin(
            &mut reader.conn(),
            self.realm().as_str(),
            find.trim(),
            i64::try_from(offset).unwrap_or(i64::MAX),
            i64::try_from(limit).unwrap_or(i64::MAX),
        )
        .await?;
        Ok((actors, usize::try_from(total).unwrap_or(0)))
    }

    /// The actors with these IDs (unknown ones left out), in one statement.
    pub async fn find_actors(&self, ids: &[PublicId]) -> Result<Vec<Actor>, ServiceError> {
        let mut reader = self.store().reader().await?;
        Ok(store::actors::find_many(&mut reader.conn(), ids).await?)
    }

    /// The actor with this ID.
    pub async fn find_actor(&self, id: &PublicId) -> Result<Actor, ServiceError> {
        if !id.kind().is_actor() {
            return Err(ServiceError::new(
                ErrorCode::InvalidTarget,
                "expected an actor ID (usr_, org_ or ai_)",
            ));
        }
        let mut reader = self.store().reader().await?;
        store::actors::find(&mut reader.conn(), id)
            .await?
            .ok_or_else(|| ServiceError::not_found(id.as_str()))
    }
}

fn validate_display_name(name: &str) -> Result<String, ServiceError> {
    let trimmed = name.trim();
    if trimmed.is_empty() {
        return Err(ServiceError::validation(
            "display_name",
            "the display name must not be empty",
        ));
    }
    if trimmed.chars().count() > MAX_DISPLAY_NAME_CHARACTERS {
        return Err(ServiceError::validation(
            "display_name",
            format!("the display name must be at most {MAX_DISPLAY_NAME_CHARACTERS} characters"),
        ));
    }
    if trimmed.chars().any(char::is_control) {
        return Err(ServiceError::validation(
            "display_name",
            "the display name must not contain control characters",
        ));
    }
    Ok(trimmed.to_owned())
}

/// What `whoami` reports about the caller.
#[derive(Debug, Clone, PartialEq)]
pub struct WhoAmI {
    /// The authenticated actor.
    pub actor: crate::domain::Actor,
    /// The scopes of the key used.
    pub scopes: crate::domain::ScopeSet,
    /// The root controller's reputation on the neutral-at-0.5 scale (see docs/trust-model.md).
    pub reputation: f64,
    /// The write limit and what is left of it.
    pub allowance: super::audit::WriteAllowance,
}

impl Service {
    /// The caller's identity, permissions, reputation and remaining write allowance.
    pub async fn whoami(&self, caller: &crate::domain::AuthenticatedActor) -> Result<WhoAmI, ServiceError> {
        let allowance = self.write_allowance(&caller.actor.root_controller).await?;
        Ok(WhoAmI {
            actor: caller.actor.clone(),
            scopes: caller.scopes.clone(),
            reputation: self.reputation_of(&caller.actor.root_controller).await?,
            allowance,
        })
    }

    /// The reputation of a root controller on the neutral-at-0.5 scale: the share A_c of its judged evidence that
    /// agreed with later decisions (trust model §2.11), 0.5 for a controller without judged evidence. The review
    /// weight multiplier is ρ = clamp(0.5 + A_c, 0.5, 1.25).
    pub async fn reputation_of(&self, root_controller: &PublicId) -> Result<f64, ServiceError> {
        let mut reader = self.store().reader().await?;
        let reputation = self.reputation_multiplier(&mut reader.conn(), root_controller).await?;
        Ok(reputation.agreement)
    }
}
