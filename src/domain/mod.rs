//! Domain types shared by every layer: public IDs, actors, scopes, and the value types (trust status, verdicts,
//! usage outcomes, grounding, context keys) that travel typed between layers. Nothing here performs I/O.

pub mod actor;
pub mod change;
pub mod context;
pub mod evidence;
pub mod ids;
pub mod intake_log;
pub mod knowledge;
pub mod peer;
pub mod peering_delivery;
pub mod realm;
pub mod replication;
pub mod scope;
pub mod search_query;
pub mod text;
pub mod tombstone;
pub mod trust_status;

pub use actor::{Actor, ActorType, AuthenticatedActor};
pub use context::{ContextError, ContextKey, ContextValue};
pub use ids::{IdKind, IdParseError, PublicId};
pub use peer::{KeyPin, PeerLevel, PeerState, ShownPeerState};
pub use realm::Realm;
pub use scope::{Scope, ScopeSet};
pub use trust_status::{TrustStatus, TrustStatuses, TrustViewScope};
