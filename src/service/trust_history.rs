//! A target's trust over time: the engine evaluates any past moment from the stored records, so the history of its
//! value, interval and status is a series of evaluations, not a table kept beside the summaries.
//!
//! A past moment is evaluated as the stored records tell it: the evidence recorded by then (a remote record at the
//! time its decay runs from, trust model §2.15), each record retracted only from its retraction on, and an older
//! revision superseded only from the next revision on. What the rows do not date is taken as it is today: the
//! instance-trust table in force, the controllers' standing, and an item-wide `supersedes` relation.
//!
//! In the first-party view each moment weighs this organization's own records alone, as a search or a read in that
//! view does now (`TrustViewScope::FirstParty`).

use chrono::{DateTime, Utc};

use super::trust::{TrustViewScope, empty_instance_trust_table};
use super::{Service, ServiceError};
use crate::domain::evidence::RecordStatus;
use crate::domain::{IdKind, PublicId, TrustStatus};
use crate::store::{self, trust::TrustTargetKind};
use crate::trust::{Evaluation, EvidenceRecord, StatusRule, assess_records};

/// The most moments one history evaluates: each is a full evaluation of the target's records.
pub const MAX_TRUST_HISTORY_POINTS: u32 = 100;

/// A target's assessment at one moment.
#[derive(Debug, Clone, PartialEq)]
pub struct TrustHistoryPoint {
    /// The moment.
    pub at: DateTime<Utc>,
    /// Posterior mean.
    pub value: f64,
    /// 5% quantile.
    pub lower_bound: f64,
    /// 95% quantile.
    pub upper_bound: f64,
    /// The status then.
    pub status: TrustStatus,
    /// The rule that decided it.
    pub rule: StatusRule,
}

/// A target's trust at evenly spaced moments.
#[derive(Debug, Clone, PartialEq)]
pub struct TrustHistory {
    /// The trust target evaluated (a content item's current revision when the item was named).
    pub target_id: PublicId,
    /// When the target came to be: no moment is earlier.
    pub target_created_at: DateTime<Utc>,
    /// The moments, oldest first.
    pub points: Vec<TrustHistoryPoint>,
}

/// A record with the moment it stopped counting, if it did.
struct DatedRecord {
    record: EvidenceRecord,
    /// `None` for an active record, and for a retracted one whose retraction time is not stored (it counts as
    /// retracted at every moment).
    retracted_at: Option<DateTime<Utc>>,
}

impl Service {
    /// The trust of `id` (a content item, a revision, a claim or an entity) in `view` at `points` evenly spaced
    /// moments from `from` to `until`, both included; `from` earlier than the target is moved to its creation, and a
    /// span of no length is one moment. The records are read once and each moment costs one evaluation of them.
    pub async fn trust_history(
        &self,
        id: &PublicId,
        view: TrustViewScope,
        from: DateTime<Utc>,
        until: DateTime<Utc>,
        points: u32,
    ) -> Result<TrustHistory, ServiceError> {
        if !(1..=MAX_TRUST_HISTORY_POINTS).contains(&points) {
            return Err(ServiceError::validation(
                "points",
                format!("points must be from 1 to {MAX_TRUST_HISTORY_POINTS}"),
            ));
        }
        let mut reader = self.store().reader().await?;
        let target_id = match id.kind() {
            IdKind::Content => {
                store::knowledge::find_content(&mut reader.conn(), id)
                    .await?
                    .filter(|content| content.deleted_at.is_none())
                    .ok_or_else(|| ServiceError::not_found(id.as_str()))?
                    .current_revision_id
            }
            IdKind::Revision | IdKind::Claim | IdKind::Entity => id.clone(),
            _ => {
                return Err(ServiceError::validation(
                    "id",
                    "a trust history is of a content item, a revision, a claim or an entity",
                ));
            }
        };
        let target = self.trust_target(&mut reader.conn(), &target_id).await?;
        let from = from.max(target.created_at);
        if until < from {
            return Err(ServiceError::validation(
                "until",
                "until must not be earlier than from, nor than the target's creation",
            ));
        }
        let superseded_now = self.is_superseded(&mut reader.conn(), &target).await?;
        // An older revision was superseded when the next one was made.
        let superseded_from = match (&target.kind, &target.content_id) {
            (TrustTargetKind::Revision, Some(content_id)) if superseded_now => {
                let later = store::knowledge::list_revisions(&mut reader.conn(), content_id)
                    .await?
                    .into_iter()
                    .filter(|revision| revision.created_at > target.created_at)
                    .map(|revision| revision.created_at)
                    .min();
                // The current revision is superseded by an item-wide relation whose time the rows do not keep.
                Some(later.unwrap_or(target.created_at))
            }
            _ => None,
        };
        let usage = store::evidence::usage_on_target(&mut reader.conn(), &target.id).await?;
        let reviews = store::evidence::reviews_of_target(&mut reader.conn(), &target.id).await?;
        drop(reader);
        let dated = |record: EvidenceRecord, status: RecordStatus, retracted_at: Option<DateTime<Utc>>| DatedRecord {
            record,
            retracted_at: (status == RecordStatus::Retracted).then_some(retracted_at).flatten(),
        };
        let mut records: Vec<DatedRecord> = usage
            .iter()
            .map(|event| dated(self.usage_record(event), event.status, event.retracted_at))
            .collect();
        records.extend(
            reviews
                .iter()
                .map(|review| dated(self.review_record(review), review.status, review.retracted_at)),
        );
        // The first-party view, as `Service::live_trust` gives it: no other realm's record, and no peer counted.
        let table = match view {
            TrustViewScope::All => self.instance_trust_table(),
            TrustViewScope::FirstParty => {
                records.retain(|dated| dated.record.origin.is_none());
                std::sync::Arc::new(empty_instance_trust_table())
            }
        };
        let descriptor = self.descriptor(&target);
        let moments = moments(from, until, points);
        let mut history = Vec::with_capacity(moments.len());
        for at in moments {
            let known: Vec<EvidenceRecord> = records
                .iter()
                .filter(|dated| dated.record.recorded_at <= at)
                .map(|dated| {
                    let mut record = dated.record.clone();
                    if let Some(retracted_at) = dated.retracted_at {
                        record.retracted = retracted_at <= at;
                    }
                    record
                })
                .collect();
            let assessment = assess_records(
                &descriptor,
                &known,
                self.trust_parameters(),
                target.created_at,
                &Evaluation {
                    now: at,
                    instance_trust: &table,
                    superseded: superseded_from.is_some_and(|since| since <= at),
                },
            )
            .map_err(|error| ServiceError::internal(format!("stored evidence is invalid: {error}")))?;
            history.push(TrustHistoryPoint {
                at,
                value: assessment.value,
                lower_bound: assessment.lower_bound,
                upper_bound: assessment.upper_bound,
                status: assessment.status,
                rule: assessment.rule,
            });
        }
        Ok(TrustHistory {
            target_id: target.id,
            target_created_at: target.created_at,
            points: history,
        })
    }
}

/// `points` moments evenly spaced from `from` to `until`, both included (one when the span has no length).
fn moments(from: DateTime<Utc>, until: DateTime<Utc>, points: u32) -> Vec<DateTime<Utc>> {
    let span = (until - from).num_milliseconds();
    if span <= 0 || points == 1 {
        return vec![until];
    }
    let steps = i64::from(points - 1);
    (0..=steps)
        .map(|step| from + chrono::TimeDelta::milliseconds(span * step / steps))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moments_are_evenly_spaced_and_include_both_ends() {
        let from = DateTime::parse_from_rfc3339("2026-12-01T00:00:00Z")
            .expect("a time")
            .to_utc();
        let until = from + chrono::TimeDelta::days(4);
        let moments = moments(from, until, 5);
        assert_eq!(moments.len(), 5);
        assert_eq!(moments[0], from);
        assert_eq!(moments[1], from + chrono::TimeDelta::days(1));
        assert_eq!(moments[4], until);
        assert_eq!(super::moments(from, from, 5), vec![from]);
    }
}
