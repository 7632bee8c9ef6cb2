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

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};

use super::trust::{TrustViewScope, empty_instance_trust_table};
use super::{Service, ServiceError};
use crate::domain::evidence::RecordStatus;
use crate::domain::{IdKind, PublicId, TrustStatus};
use crate::store::{self, trust::TrustTargetKind};
use crate::trust::{
    Evaluation, EvidenceRecord, InstanceTrustTable, RetractionAuthority, StatusRule, TargetDescriptor, TargetState,
    TrustError, TrustParameters,
};

/// The most moments one history evaluates: each is one reading of the target's trust (see `assess_at_moments`).
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
#[derive(Debug, Clone)]
struct DatedRecord {
    record: EvidenceRecord,
    /// `None` for an active record, and for a retracted one whose retraction time is not stored (it counts as
    /// retracted at every moment).
    retracted_at: Option<DateTime<Utc>>,
}

impl Service {
    /// The trust of `id` (a content item, a revision, a claim or an entity) in `view` at `points` evenly spaced
    /// moments from `from` to `until`, both included; `from` earlier than the target is moved to its creation, and a
    /// span of no length is one moment. The records are read once and evaluated in one pass (see `assess_at_moments`).
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
        let moments = moments(from, until, points);
        let history = assess_at_moments(
            HistoryInputs {
                descriptor: self.descriptor(&target),
                params: self.trust_parameters(),
                base_epoch: target.created_at,
                instance_trust: &table,
                superseded_from,
            },
            records,
            &moments,
        )
        .map_err(|error| ServiceError::internal(format!("stored evidence is invalid: {error}")))?;
        Ok(TrustHistory {
            target_id: target.id,
            target_created_at: target.created_at,
            points: history,
        })
    }
}

/// What every moment of a history is evaluated with, besides the records.
struct HistoryInputs<'a> {
    descriptor: TargetDescriptor,
    params: &'a TrustParameters,
    /// The epoch the target's stored state uses (its creation), so that each moment equals a full recomputation.
    base_epoch: DateTime<Utc>,
    instance_trust: &'a InstanceTrustTable,
    /// When the target became superseded, if it did.
    superseded_from: Option<DateTime<Utc>>,
}

/// The assessment at each of `moments` (oldest first) of the records known then. One incremental state (the
/// engine's `TargetState`, which equals a full recomputation of the records it holds, bit for bit) takes each
/// record when its moment reaches the record's time and each retraction when it reaches the retraction's, so a
/// history costs one pass over the records and one reading a moment, rather than a full evaluation a moment (an item
/// with 2,000 usage reports spent most of its page on those: see docs/benchmarks.md, "Console").
fn assess_at_moments(
    inputs: HistoryInputs<'_>,
    mut records: Vec<DatedRecord>,
    moments: &[DateTime<Utc>],
) -> Result<Vec<TrustHistoryPoint>, TrustError> {
    records.sort_by_key(|dated| dated.record.recorded_at);
    let mut state = TargetState::new(inputs.descriptor, inputs.params.clone(), inputs.base_epoch);
    let mut unread = records.into_iter().peekable();
    // Records taken while still counting, by the moment their retraction takes effect.
    let mut retractions: BTreeSet<(DateTime<Utc>, String)> = BTreeSet::new();
    let mut history = Vec::with_capacity(moments.len());
    for &at in moments {
        while let Some(DatedRecord {
            mut record,
            retracted_at,
        }) = unread.next_if(|dated| dated.record.recorded_at <= at)
        {
            if let Some(retracted_at) = retracted_at {
                record.retracted = false;
                retractions.insert((retracted_at, record.record_id.clone()));
            }
            state.add(&record)?;
        }
        while let Some(first) = retractions.first()
            && first.0 <= at
        {
            if let Some((_, record_id)) = retractions.pop_first() {
                state.retract(&record_id, &RetractionAuthority::Local)?;
            }
        }
        let assessment = state.assess(&Evaluation {
            now: at,
            instance_trust: inputs.instance_trust,
            superseded: inputs.superseded_from.is_some_and(|since| since <= at),
        });
        history.push(TrustHistoryPoint {
            at,
            value: assessment.value,
            lower_bound: assessment.lower_bound,
            upper_bound: assessment.upper_bound,
            status: assessment.status,
            rule: assessment.rule,
        });
    }
    Ok(history)
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
    use crate::domain::evidence::{Grounding, UsageOutcome, Verdict};
    use crate::trust::{ControllerRef, ControllerStanding, EvidenceKind, assess_records};

    fn at(days: i64, hours: i64) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-12-01T00:00:00Z")
            .expect("a time")
            .to_utc()
            + chrono::TimeDelta::days(days)
            + chrono::TimeDelta::hours(hours)
    }

    fn record(number: usize, controller: &str, origin: Option<&str>, recorded_at: DateTime<Utc>) -> EvidenceRecord {
        EvidenceRecord {
            record_id: format!("rec_{number:03}"),
            actor: format!("ai_{controller}"),
            root_controller: controller.to_owned(),
            origin: origin.map(str::to_owned),
            origin_signature_valid: true,
            recorded_at,
            retracted: false,
            standing: ControllerStanding::new_controller(at(-30, 0)),
            kind: EvidenceKind::Usage {
                real_world_use: !number.is_multiple_of(3),
                result: if number.is_multiple_of(4) {
                    UsageOutcome::Failure
                } else {
                    UsageOutcome::Success
                },
            },
        }
    }

    /// Usage from several controllers here and on a peer, reviews that supersede one another, records retracted at
    /// a known time (before and after some moments) and one retracted at no known time.
    fn dated_records() -> Vec<DatedRecord> {
        let mut records = Vec::new();
        for number in 0_usize..60 {
            let controller = format!("usr_{}", number % 7);
            let origin = number.is_multiple_of(5).then_some("beta.test");
            let recorded_at = at(
                i64::try_from(number % 20).expect("small"),
                i64::try_from(number).expect("small"),
            );
            let mut record = record(number, &controller, origin, recorded_at);
            let retracted_at = match number % 9 {
                0 => Some(recorded_at + chrono::TimeDelta::days(3)),
                1 => Some(recorded_at),
                _ => None,
            };
            record.retracted = retracted_at.is_some() || number == 17;
            records.push(DatedRecord { record, retracted_at });
        }
        for (number, verdict) in [
            (100, Verdict::Confirmed),
            (101, Verdict::Misleading),
            (102, Verdict::Confirmed),
        ] {
            let mut review = record(
                number,
                "usr_reviewer",
                None,
                at(i64::try_from(number - 95).expect("small"), 0),
            );
            review.kind = EvidenceKind::Review {
                verdict,
                confidence: 0.8,
                grounding: Grounding::OwnRealWorldUsage,
            };
            let retracted_at = (number == 102).then(|| at(12, 0));
            review.retracted = retracted_at.is_some();
            records.push(DatedRecord {
                record: review,
                retracted_at,
            });
        }
        records
    }

    #[test]
    fn a_history_equals_a_full_recomputation_of_what_each_moment_knew() {
        let params = TrustParameters::default();
        let table = InstanceTrustTable::new("test").with("beta.test", 0.6);
        let descriptor = TargetDescriptor {
            target_id: "rev_target".to_owned(),
            author: ControllerRef {
                origin: None,
                controller: "usr_author".to_owned(),
            },
        };
        let records = dated_records();
        let moments = moments(at(-1, 0), at(30, 0), 24);
        let superseded_from = Some(at(25, 0));
        let history = assess_at_moments(
            HistoryInputs {
                descriptor: descriptor.clone(),
                params: &params,
                base_epoch: at(-1, 0),
                instance_trust: &table,
                superseded_from,
            },
            records.clone(),
            &moments,
        )
        .expect("valid records");
        assert_eq!(history.len(), 24);
        let mut values = std::collections::BTreeSet::new();
        for (point, moment) in history.iter().zip(&moments) {
            // What the moment knew: the records made by then, each retracted from its retraction on.
            let known: Vec<EvidenceRecord> = records
                .iter()
                .filter(|dated| dated.record.recorded_at <= *moment)
                .map(|dated| {
                    let mut record = dated.record.clone();
                    if let Some(retracted_at) = dated.retracted_at {
                        record.retracted = retracted_at <= *moment;
                    }
                    record
                })
                .collect();
            let full = assess_records(
                &descriptor,
                &known,
                &params,
                at(-1, 0),
                &Evaluation {
                    now: *moment,
                    instance_trust: &table,
                    superseded: superseded_from.is_some_and(|since| since <= *moment),
                },
            )
            .expect("valid records");
            assert_eq!(point.at, *moment);
            assert_eq!(
                (
                    point.value,
                    point.lower_bound,
                    point.upper_bound,
                    point.status,
                    point.rule
                ),
                (full.value, full.lower_bound, full.upper_bound, full.status, full.rule),
                "at {moment}"
            );
            values.insert(point.value.to_bits());
        }
        assert!(
            values.len() > 10,
            "the records move the value over the span: {values:?}"
        );
    }

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
