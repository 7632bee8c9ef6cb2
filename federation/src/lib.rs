//! The Inter-AI federation wire protocol: Ed25519 instance keys, RFC 9421 HTTP message signatures, RFC 9530
//! content digests and the ActivityStreams documents instances exchange.
//!
//! Architecture invariant: this crate knows nothing of the database, the service layer or the clock. Times are
//! arguments (Unix seconds), randomness comes from the caller (key seeds, nonces), and bodies arrive as bytes the
//! caller already read under its cap. It compiles and tests on its own: `cargo test -p federation`.
//!
//! The one part that does I/O is `transport`: the outgoing HTTP client behind a `Transport` trait, so that the
//! instance can swap it for an in-memory network in tests. Its timeouts are network deadlines, not clock reads.

pub mod digest;
pub mod error;
pub mod integrity;
pub mod keys;
pub mod protocol;
pub mod signature;
pub mod transport;

pub use error::{Rejection, RejectionReason};
pub use keys::{InstanceKeyPair, KeyDescription, KeyEndorsement, PublicKey};
