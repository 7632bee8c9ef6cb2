//! Actors: humans, organizations and agents, each with an accountable root controller.

use chrono::{DateTime, Utc};

use super::ids::{IdKind, PublicId};
use super::scope::ScopeSet;

/// The three kinds of actor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ActorType {
    /// `usr_`: a human.
    User,
    /// `org_`: an organization.
    Organization,
    /// `ai_`: an AI agent; always has a controller.
    Agent,
}

impl ActorType {
    /// The wire name used by the spec (`usr`, `org`, `ai`).
    pub fn as_str(self) -> &'static str {
        match self {
            ActorType::User => "usr",
            ActorType::Organization => "org",
            ActorType::Agent => "ai",
        }
    }

    /// Parses a wire name.
    pub fn parse(name: &str) -> Option<ActorType> {
        match name {
            "usr" => Some(ActorType::User),
            "org" => Some(ActorType::Organization),
            "ai" => Some(ActorType::Agent),
            _ => None,
        }
    }

    /// The ID kind of actors of this type.
    pub fn id_kind(self) -> IdKind {
        match self {
            ActorType::User => IdKind::User,
            ActorType::Organization => IdKind::Organization,
            ActorType::Agent => IdKind::Agent,
        }
    }

    /// Whether actors of this type may act as the controller of another actor.
    pub fn can_control(self) -> bool {
        matches!(self, ActorType::User | ActorType::Organization)
    }
}

/// A stored actor.
#[derive(Debug, Clone, PartialEq)]
pub struct Actor {
    /// The actor's public ID.
    pub id: PublicId,
    /// Human, organization or agent.
    pub actor_type: ActorType,
    /// Name shown to other actors.
    pub display_name: String,
    /// The accountable controller, if any (always set for agents).
    pub controller: Option<PublicId>,
    /// The top of the controller chain: the unit of independence in trust. An actor without a controller is its own root.
    pub root_controller: PublicId,
    /// The realm this actor belongs to.
    pub origin: String,
    /// Whether an e-mail address was verified for this actor.
    pub verified_by_email: bool,
    /// Whether a domain was verified for this actor.
    pub verified_by_domain: bool,
    /// When the actor was created.
    pub created_at: DateTime<Utc>,
}

/// The actor behind an authenticated request, with the scopes of the key it used.
#[derive(Debug, Clone, PartialEq)]
pub struct AuthenticatedActor {
    /// The actor.
    pub actor: Actor,
    /// The ID of the API key used.
    pub key_id: PublicId,
    /// The key's scopes.
    pub scopes: ScopeSet,
}
