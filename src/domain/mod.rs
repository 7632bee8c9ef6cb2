//! Domain types shared by every layer: public IDs, actors, scopes. Nothing here performs I/O.

pub mod actor;
pub mod change;
pub mod evidence;
pub mod ids;
pub mod knowledge;
pub mod peer;
pub mod replication;
pub mod scope;
pub mod text;
pub mod tombstone;

pub use actor::{Actor, ActorType, AuthenticatedActor};
pub use ids::{IdKind, IdParseError, PublicId};
pub use peer::{PeerLevel, PeerState};
pub use scope::{Scope, ScopeSet};
