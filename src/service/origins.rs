//! Where a result from another realm comes from, as readers are told it: the origin realm, how far this instance
//! trusts it (its peer level, none when the origin is not a peer) and a label to show next to it. Shared by
//! `search` and `get`, and summed up for the documents for agents ([`Service::federation_summary`]), so that what
//! they say of other realms is what `search` and `get` do.

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

/// A peer state whose realm's content this instance takes and shows with a peer level: `active`, and
/// `unreachable` (a peer this instance cannot reach may still send). Anything else counts nothing here.
pub fn shares_content(state: crate::domain::PeerState) -> bool {
    matches!(
        state,
        crate::domain::PeerState::Active | crate::domain::PeerState::Unreachable
    )
}

/// What the documents for agents say of this instance's federation now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FederationSummary {
    /// Peer realms whose content this instance takes now (see [`shares_content`]).
    pub peer_realms_sharing_content: u64,
}

impl Service {
    /// How many peer realms share content with this instance now, read from the peers' stored states the way
    /// [`Service::foreign_origins`] reads them. One small query: the public documents call it for every request.
    pub async fn federation_summary(&self) -> Result<FederationSummary, ServiceError> {
        let mut reader = self.store().reader().await?;
        let counts = store::peers::count_peers_by_state(&mut reader.conn()).await?;
        let sharing: i64 = counts
            .into_iter()
            .filter(|(state, _)| shares_content(*state))
            .map(|(_, count)| count)
            .sum();
        Ok(FederationSummary {
            peer_realms_sharing_content: u64::try_from(sharing).unwrap_or(0),
        })
    }

    /// What to tell a reader of an object from `origin`; `None` for this realm's own objects.
    pub(crate) async fn foreign_origins(
        &self,
        conn: &mut store::Conn<'_>,
        origins: impl IntoIterator<Item = &str>,
    ) -> Result<Vec<ForeignOrigin>, ServiceError> {
        let mut foreign: Vec<ForeignOrigin> = Vec::new();
        let mut peers: Option<Vec<crate::domain::peer::PeerRecord>> = None;
        for origin in origins {
            if self.realm().is(origin) || foreign.iter().any(|known| known.realm == origin) {
                continue;
            }
            if peers.is_none() {
                peers = Some(store::peers::list_peers(conn).await?);
            }
            let peer = peers
                .iter()
                .flatten()
                .find(|peer| peer.realm.eq_ignore_ascii_case(origin));
            let peer_level = peer.filter(|peer| shares_content(peer.state)).map(|peer| peer.level);
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
