//! Where a result from another realm comes from, as readers are told it: the origin realm, how far this instance
//! trusts it (its peer level, none when the origin is not a peer) and a label to show next to it. Shared by
//! `search` and `get`.

use super::{Service, ServiceError};
use crate::store;

/// What a reader is told about an object from another realm: where it comes from, how far this instance trusts that
/// realm (its peer level, `None` when the origin is not, or no longer, a peer: then it counts nothing), and a label
/// to show next to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForeignOrigin {
    /// The origin realm.
    pub realm: String,
    /// The admin's level for it, when it is a peer.
    pub peer_level: Option<crate::domain::PeerLevel>,
    /// `from another realm: …`, for people and agents alike.
    pub label: String,
}

impl Service {
    /// What to tell a reader of an object from `origin`; `None` for this realm's own objects.
    pub(crate) async fn foreign_origins(
        &self,
        conn: &mut store::Conn<'_>,
        origins: impl IntoIterator<Item = &str>,
    ) -> Result<Vec<ForeignOrigin>, ServiceError> {
        let mut foreign: Vec<ForeignOrigin> = Vec::new();
        let mut peers: Option<Vec<crate::store::federation::PeerRecord>> = None;
        for origin in origins {
            if origin.eq_ignore_ascii_case(self.realm()) || foreign.iter().any(|known| known.realm == origin) {
                continue;
            }
            if peers.is_none() {
                peers = Some(store::federation::list_peers(conn).await?);
            }
            let peer = peers
                .iter()
                .flatten()
                .find(|peer| peer.realm.eq_ignore_ascii_case(origin));
            let peer_level = peer
                .filter(|peer| {
                    matches!(
                        peer.state,
                        crate::domain::PeerState::Active | crate::domain::PeerState::Unreachable
                    )
                })
                .map(|peer| peer.level);
            let label = match peer_level {
                Some(level) => format!("from another realm: {origin} (a peer trusted at level {level})"),
                None => format!("from another realm: {origin} (not a peer of this instance: counts nothing here)"),
            };
            foreign.push(ForeignOrigin {
                realm: origin.to_owned(),
                peer_level,
                label,
            });
        }
        Ok(foreign)
    }
}
