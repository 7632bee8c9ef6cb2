//! The push's limits: how much of the outbox a round reads at once, how many requests it keeps in flight, how long
//! it starts requests and how long it holds its peer. They are policy about HTTP traffic to a peer, so they live
//! beside the concurrency code that obeys them (`apub/replicate.rs`: the windows, the per-object chains and the
//! semaphore); the service's cursor code (`service/federation/cursors.rs`) keeps the rules about cursors, backoff and
//! the circuit breaker and is given the values it needs (the lease time, the window) as parameters.

use chrono::TimeDelta;

/// Peers worked on per pass (push and pull each).
pub const PEERS_PER_PASS: i64 = 16;

/// Events read at a time for a healthy peer (a round reads its next window while it sends one; one event while
/// the peer's circuit is open, see `LeasedPeer::window`).
pub const PUSH_WINDOW: i64 = 256;

/// Windows a push round reads at most: its cursor is saved, and its lease given back, every this many windows.
pub const PUSH_ROUND_WINDOWS: usize = 4;

/// Requests in flight to one peer at once: most of the 64 an inbox of this software takes from one peer at once
/// (`apub::inbox::PEER_CONCURRENCY`), the rest left for its other requests (peering, key updates). Each request
/// waits for the receiver's commit, so requests in flight are what hides that wait: 48 delivered about a fifth
/// more than 32 (docs/benchmarks.md, "Push concurrency 48"), 64 no more than 48.
pub const PUSH_CONCURRENCY: usize = 48;

/// How long a push round starts requests: what is left then waits for the next round. With the transport's
/// request timeout (10 s) a round ends within [`PUSH_LEASE`], so no other process takes the peer while a round is
/// still sending, and a process killed mid-round holds the peer only that long.
pub const PUSH_ROUND_TIME: TimeDelta = TimeDelta::seconds(10);

/// How long a push round holds its peer.
pub const PUSH_LEASE: TimeDelta = TimeDelta::seconds(30);
