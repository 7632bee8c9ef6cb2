//! Federation use cases: the instance's identity and keys, peering, who may speak (admission), the inbox's database
//! steps and the intake of peers' activities, and the delivery queue. Transport-free: the `apub` adapter and the
//! workers do HTTP and ActivityStreams; this module uses the `federation` crate only for keys and their
//! endorsements.

pub mod admission;
pub mod cursors;
pub mod delivery;
pub mod identity;
pub mod inbox;
pub(crate) mod inbox_groups;
pub mod key_box;
pub mod peer_failure;
pub mod peer_state;
pub mod peer_status;
pub mod peering;
pub mod retry;
