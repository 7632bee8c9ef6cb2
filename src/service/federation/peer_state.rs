//! A peer's stored state as every federation use case reads and saves it: its realm's stored form, whether a timed
//! block has run out, and saving a peer together with the replication state an active peer needs.

use chrono::{DateTime, Utc};

use crate::domain::PeerState;
use crate::domain::peer::PeerRecord;
use crate::store::{self, Conn, StoreError};

/// A peer realm as stored: lower case, without a trailing dot.
pub fn normalize_realm(realm: &str) -> String {
    realm.trim().trim_end_matches('.').to_ascii_lowercase()
}

/// Whether a timed block has run out at `now`.
pub fn block_has_lapsed(peer: &PeerRecord, now: DateTime<Utc>) -> bool {
    peer.state == PeerState::Blocked && peer.blocked_until.is_some_and(|until| until <= now)
}

/// Saves a peer and, when it is active, makes sure it has replication state: pushing starts after our outbox's
/// head at this moment (what came before is in the snapshot the peer backfills from), and our pull of its outbox
/// starts with a backfill. In the caller's transaction, so a peering never becomes active without it.
pub(crate) async fn save_peer_state(
    conn: &mut Conn<'_>,
    peer: &PeerRecord,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    store::peers::save_peer(conn, peer).await?;
    if peer.state == PeerState::Active {
        let head = store::outbox::head(conn).await?;
        store::replication::create_if_missing(conn, &peer.realm, head, now).await?;
    }
    Ok(())
}
