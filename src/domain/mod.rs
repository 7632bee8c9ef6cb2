//! Domain types shared by every layer: public IDs, actors, scopes. Nothing here performs I/O.

pub mod actor;
pub mod ids;
pub mod scope;
pub mod text;

pub use actor::{Actor, ActorType, AuthenticatedActor};
pub use ids::{IdKind, IdParseError, PublicId};
pub use scope::{Scope, ScopeSet};
