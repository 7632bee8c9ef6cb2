//! Applying what replicates from another realm: a content revision, a deletion, a space. Remote records are
//! validated exactly like local input (caps, display text, the secret scan, markdown neutralized, claim fingerprints
//! recomputed here), then written by the same revision writer as a local publish, with the object as its origin
//! signed it. Rules: an ID that exists under another origin is refused; a tombstone wins over any revision; a
//! revision already stored is a duplicate (ignored); a revision older than the current one is kept but does not
//! become current; the space of an item arrives with it when its own `Create` has not yet.
//!
//! One file per kind of object: `revision.rs`, `deletion.rs`, `space.rs`, and `evidence.rs` for evidence records and
//! their retractions (trust model §2.15).

mod deletion;
mod evidence;
mod revision;
mod space;

pub(crate) use revision::CheckedRevision;

use crate::domain::replication::{FederatedObject, ReplicatedObject};
use crate::service::ServiceError;
use crate::service::federation::Federation;
use crate::service::known_rows::KnownRows;
use crate::service::unit_of_work::UnitOfWork;

/// What applying one replicated object did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Applied {
    /// Written.
    Stored(String),
    /// Nothing to do: a duplicate, or superseded by a tombstone.
    Ignored(String),
    /// Refused: the object breaks a rule; nothing of it was written.
    Refused(String),
}

impl Applied {
    /// The intake log's outcome.
    pub fn outcome(&self) -> &'static str {
        match self {
            Applied::Stored(_) => "applied",
            Applied::Ignored(_) => "ignored",
            Applied::Refused(_) => "refused",
        }
    }

    /// The intake log's detail.
    pub fn detail(&self) -> &str {
        match self {
            Applied::Stored(detail) | Applied::Ignored(detail) | Applied::Refused(detail) => detail,
        }
    }
}

impl Federation {
    /// Applies one verified replicated object from `sender` inside `unit`. Rule violations come back as
    /// [`Applied::Refused`] with nothing written; database failures as `Err` (the caller's unit rolls back).
    ///
    /// `checked` is the revision's [`Federation::check_revision`] when the caller ran it before the transaction.
    pub(crate) async fn apply_replicated_in(
        &self,
        unit: &mut UnitOfWork,
        sender: &str,
        replicated: &ReplicatedObject,
        checked: Option<&Result<CheckedRevision, String>>,
        known: &mut KnownRows,
    ) -> Result<Applied, ServiceError> {
        let origin = replicated.object.origin();
        if self.realm().is(origin) {
            return Ok(Applied::Refused(format!(
                "the object claims this realm ({origin}) as its origin"
            )));
        }
        if !origin.eq_ignore_ascii_case(sender) {
            tracing::debug!(sender, origin, "a relayed object (its origin's proof was verified)");
        }
        let applied = match &replicated.object {
            FederatedObject::Revision(record) => {
                return self
                    .apply_revision_in(unit, record, &replicated.proof, checked, known)
                    .await;
            }
            FederatedObject::Deletion(tombstone) => self.apply_deletion_in(unit, tombstone, &replicated.proof).await,
            FederatedObject::Space(space) => self.apply_space_in(unit, space, &replicated.proof).await,
            FederatedObject::Evidence(passport) => {
                self.apply_evidence_in(unit, sender, passport, &replicated.proof, known)
                    .await
            }
            FederatedObject::Retraction(retraction) => {
                self.apply_retraction_in(unit, retraction, &replicated.proof).await
            }
        };
        known.forget_object(&replicated.object);
        applied
    }
}
