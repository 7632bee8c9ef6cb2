//! The evidence model: usage reports, reviews and ratings with every field the trust model reads, the parties they
//! belong to, and the per-record weights and flags of §2.2.
//!
//! These are domain types, not wire types: they carry no serde derives. The service layer fills them from stored
//! rows (deriving `grounding` from `based_on_usage`, the standing from the controller's reputation snapshot) and the
//! engine never looks anything up on its own.

use chrono::{DateTime, Utc};

use crate::domain::evidence::{Grounding, UsageOutcome, Verdict};

use super::error::TrustError;
use super::params::TrustParameters;
use crate::domain::ContextKey;

/// A root controller as a party: a first-party `usr_`/`org_` (no origin) or a remote controller namespaced by the
/// origin instance it belongs to. Remote controllers can never collide with local ones because the origin is part of
/// the identity.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ControllerRef {
    /// `None` for a first-party controller, the origin realm (e.g. `beta.test`) for a remote one.
    pub origin: Option<String>,
    /// The controller id as its origin knows it, e.g. `usr_01j…` or `org_01j…`.
    pub controller: String,
}

impl ControllerRef {
    /// A first-party root controller.
    pub fn first_party(controller: impl Into<String>) -> Self {
        ControllerRef {
            origin: None,
            controller: controller.into(),
        }
    }

    /// A controller of a remote origin instance.
    pub fn remote(origin: impl Into<String>, controller: impl Into<String>) -> Self {
        ControllerRef {
            origin: Some(origin.into()),
            controller: controller.into(),
        }
    }

    /// The namespaced display form: `usr_x` for first party, `beta.test/usr_x` for remote.
    pub fn namespaced(&self) -> String {
        match &self.origin {
            None => self.controller.clone(),
            Some(origin) => format!("{origin}/{}", self.controller),
        }
    }
}

/// What the strong-refutation gate needs to know about the controller behind a record, as of the record's time.
/// Carried on the record so that eligibility and review weight are pure functions of the record.
#[derive(Debug, Clone, PartialEq)]
pub struct ControllerStanding {
    /// ρ from the reputation snapshot (§2.11); new controllers have 1.0. Scales reviews only.
    pub reputation: f64,
    /// How many valid evidence records the controller had made before this one.
    pub prior_valid_records: u32,
    /// When the controller's account was created.
    pub account_created_at: DateTime<Utc>,
}

impl ControllerStanding {
    /// The standing of a controller with neutral reputation and no history.
    pub fn new_controller(account_created_at: DateTime<Utc>) -> Self {
        ControllerStanding {
            reputation: 1.0,
            prior_valid_records: 0,
            account_created_at,
        }
    }
}

/// The kind-specific fields of an evidence record.
#[derive(Debug, Clone, PartialEq)]
pub enum EvidenceKind {
    /// A usage report (`report_usage`). All usage reports count; none supersedes another.
    Usage { real_world_use: bool, result: UsageOutcome },
    /// A review. Only the latest review per (actor, target) counts.
    Review {
        verdict: Verdict,
        confidence: f64,
        grounding: Grounding,
    },
}

/// One usage report or review on one target, with everything the trust model reads.
#[derive(Debug, Clone, PartialEq)]
pub struct EvidenceRecord {
    /// The record's globally unique id; retraction names it.
    pub record_id: String,
    /// The acting agent (`ai_…`) or human; reviews are superseded per actor.
    pub actor: String,
    /// The actor's root controller as its origin knows it (`usr_…`/`org_…`).
    pub root_controller: String,
    /// `None` for first-party evidence; the signed origin realm (e.g. `beta.test`) for remote evidence. A relaying
    /// instance is deliberately not part of the record: relayed evidence is weighted by its origin only.
    pub origin: Option<String>,
    /// For remote records: whether the origin's signature verified. Unsigned or invalid remote records weigh 0.
    /// Ignored for first-party records.
    pub origin_signature_valid: bool,
    /// When the record was made (its evidence time t_i).
    pub recorded_at: DateTime<Utc>,
    /// A retracted record weighs 0 and is counted under `excluded.retracted`.
    pub retracted: bool,
    /// The controller's standing at the record's time (reputation for review weight, history for the gate).
    pub standing: ControllerStanding,
    /// Usage or review fields.
    pub kind: EvidenceKind,
}

impl EvidenceRecord {
    /// The party identity of the record's controller (namespaced by origin for remote records).
    pub fn controller_ref(&self) -> ControllerRef {
        ControllerRef {
            origin: self.origin.clone(),
            controller: self.root_controller.clone(),
        }
    }

    /// Whether this record came from another instance.
    pub fn is_remote(&self) -> bool {
        self.origin.is_some()
    }
}

/// A rating of one dimension of a target, in a context, on the 0–100 scale.
#[derive(Debug, Clone, PartialEq)]
pub struct RatingRecord {
    pub record_id: String,
    pub actor: String,
    pub root_controller: String,
    pub origin: Option<String>,
    pub origin_signature_valid: bool,
    pub recorded_at: DateTime<Utc>,
    pub retracted: bool,
    /// The rated dimension, e.g. `usefulness`.
    pub dimension: String,
    /// The normalized context the rating applies to (`*` for none).
    pub context: ContextKey,
    /// The score, 0–100.
    pub score: f64,
    /// The rater's confidence, 0–1.
    pub confidence: f64,
}

/// The sign of a party's evidence: `Positive` when its belief mass exceeds its disbelief mass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stance {
    Positive,
    Neutral,
    Negative,
}

impl Stance {
    /// The sign symbol used in explanations: `+`, `0` or `-`.
    pub fn symbol(self) -> &'static str {
        match self {
            Stance::Positive => "+",
            Stance::Neutral => "0",
            Stance::Negative => "-",
        }
    }

    /// The stance of a difference `belief − disbelief`.
    pub fn of_difference(difference: f64) -> Stance {
        if difference > 0.0 {
            Stance::Positive
        } else if difference < 0.0 {
            Stance::Negative
        } else {
            Stance::Neutral
        }
    }
}

/// What one record contributes before decay and caps (§2.2): `belief_units = w·p`, `disbelief_units = w·n`, and
/// the flags the status rules read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RecordEffect {
    /// w·p
    pub belief_units: f64,
    /// w·n
    pub disbelief_units: f64,
    /// A real-world usage with result `success`.
    pub real_world_success: bool,
    /// A real-world failure, or a grounded `contradicted`/`false` review at confidence ≥ 0.7. Whether it counts also
    /// depends on the record being first-party and its controller passing the gate.
    pub strong_refutation_candidate: bool,
    /// An `outdated` review at confidence ≥ 0.5.
    pub outdated_signal: bool,
    /// A `cannot_verify` review (counted only).
    pub cannot_verify: bool,
}

/// The (p, n) pair of a review verdict (§2.2 verdict table).
pub fn verdict_belief_disbelief(verdict: Verdict) -> (f64, f64) {
    match verdict {
        Verdict::Confirmed => (1.0, 0.0),
        Verdict::MostlyCorrect => (0.75, 0.25),
        Verdict::Questionable => (0.0, 0.5),
        Verdict::Misleading => (0.0, 0.75),
        Verdict::Contradicted | Verdict::False => (0.0, 1.0),
        Verdict::Outdated => (0.0, 0.5),
        Verdict::CannotVerify => (0.0, 0.0),
    }
}

/// The (p, n) pair of a usage result.
pub fn usage_belief_disbelief(result: UsageOutcome) -> (f64, f64) {
    match result {
        UsageOutcome::Success => (1.0, 0.0),
        UsageOutcome::Partial => (0.5, 0.5),
        UsageOutcome::Failure => (0.0, 1.0),
        UsageOutcome::Unknown => (0.0, 0.0),
    }
}

/// The weight and flags of one record (§2.2). Fails on a confidence outside [0, 1] or a non-finite reputation, so
/// that bad input is refused at the boundary instead of silently weighing something.
pub fn record_effect(record: &EvidenceRecord, params: &TrustParameters) -> Result<RecordEffect, TrustError> {
    match &record.kind {
        EvidenceKind::Usage { real_world_use, result } => {
            let weight = if *real_world_use {
                params.real_world_usage_weight
            } else {
                params.test_usage_weight
            };
            let (belief, disbelief) = usage_belief_disbelief(*result);
            Ok(RecordEffect {
                belief_units: weight * belief,
                disbelief_units: weight * disbelief,
                real_world_success: *real_world_use && *result == UsageOutcome::Success,
                strong_refutation_candidate: *real_world_use && *result == UsageOutcome::Failure,
                outdated_signal: false,
                cannot_verify: false,
            })
        }
        EvidenceKind::Review {
            verdict,
            confidence,
            grounding,
        } => {
            if !(0.0..=1.0).contains(confidence) {
                return Err(TrustError::ConfidenceOutOfRange {
                    record_id: record.record_id.clone(),
                    confidence: *confidence,
                });
            }
            if !record.standing.reputation.is_finite() {
                return Err(TrustError::ReputationNotFinite {
                    record_id: record.record_id.clone(),
                });
            }
            let grounding_multiplier = match grounding {
                Grounding::Ungrounded => 1.0,
                Grounding::OwnTestUsage => params.grounding_own_test_usage,
                Grounding::OwnRealWorldUsage => params.grounding_own_real_world_usage,
            };
            let reputation = record
                .standing
                .reputation
                .clamp(params.reputation_min, params.reputation_max);
            let weight = params.review_base_weight * confidence * grounding_multiplier * reputation;
            let (belief, disbelief) = verdict_belief_disbelief(*verdict);
            let refuting_verdict = matches!(verdict, Verdict::Contradicted | Verdict::False);
            Ok(RecordEffect {
                belief_units: weight * belief,
                disbelief_units: weight * disbelief,
                real_world_success: false,
                strong_refutation_candidate: refuting_verdict
                    && *confidence >= params.strong_refutation_min_confidence
                    && *grounding != Grounding::Ungrounded,
                outdated_signal: *verdict == Verdict::Outdated && *confidence >= params.outdated_signal_min_confidence,
                cannot_verify: *verdict == Verdict::CannotVerify,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn record(kind: EvidenceKind) -> EvidenceRecord {
        let created = Utc.with_ymd_and_hms(2020, 1, 1, 0, 0, 0).single().expect("valid date");
        EvidenceRecord {
            record_id: "ev_1".into(),
            actor: "ai_1".into(),
            root_controller: "usr_1".into(),
            origin: None,
            origin_signature_valid: true,
            recorded_at: created,
            retracted: false,
            standing: ControllerStanding::new_controller(created),
            kind,
        }
    }

    #[test]
    fn the_spec_examples_of_section_2_2_hold() {
        let params = TrustParameters::default();
        let success = record_effect(
            &record(EvidenceKind::Usage {
                real_world_use: true,
                result: UsageOutcome::Success,
            }),
            &params,
        )
        .expect("valid record");
        assert_eq!((success.belief_units, success.disbelief_units), (1.0, 0.0));
        assert!(success.real_world_success);

        let confirmed = record_effect(
            &record(EvidenceKind::Review {
                verdict: Verdict::Confirmed,
                confidence: 0.8,
                grounding: Grounding::Ungrounded,
            }),
            &params,
        )
        .expect("valid record");
        assert!((confirmed.belief_units - 0.4).abs() < 1e-12);
        assert_eq!(confirmed.disbelief_units, 0.0);

        let false_review = record_effect(
            &record(EvidenceKind::Review {
                verdict: Verdict::False,
                confidence: 0.9,
                grounding: Grounding::OwnRealWorldUsage,
            }),
            &params,
        )
        .expect("valid record");
        assert_eq!(false_review.belief_units, 0.0);
        assert!((false_review.disbelief_units - 0.81).abs() < 1e-12);
        assert!(false_review.strong_refutation_candidate);
    }

    #[test]
    fn the_largest_review_weighs_1_125_and_test_usage_0_3() {
        let params = TrustParameters::default();
        let mut strongest = record(EvidenceKind::Review {
            verdict: Verdict::Confirmed,
            confidence: 1.0,
            grounding: Grounding::OwnRealWorldUsage,
        });
        strongest.standing.reputation = 5.0;
        let effect = record_effect(&strongest, &params).expect("valid record");
        assert!((effect.belief_units - 1.125).abs() < 1e-12);
        let test_usage = record_effect(
            &record(EvidenceKind::Usage {
                real_world_use: false,
                result: UsageOutcome::Failure,
            }),
            &params,
        )
        .expect("valid record");
        assert!((test_usage.disbelief_units - 0.3).abs() < 1e-12);
        assert!(!test_usage.strong_refutation_candidate);
    }

    #[test]
    fn verdict_flags_follow_the_table() {
        let params = TrustParameters::default();
        let review = |verdict, confidence, grounding| {
            record_effect(
                &record(EvidenceKind::Review {
                    verdict,
                    confidence,
                    grounding,
                }),
                &params,
            )
            .expect("valid record")
        };
        assert!(!review(Verdict::Contradicted, 0.9, Grounding::Ungrounded).strong_refutation_candidate);
        assert!(!review(Verdict::Contradicted, 0.69, Grounding::OwnTestUsage).strong_refutation_candidate);
        assert!(review(Verdict::Contradicted, 0.7, Grounding::OwnTestUsage).strong_refutation_candidate);
        assert!(!review(Verdict::Misleading, 1.0, Grounding::OwnRealWorldUsage).strong_refutation_candidate);
        assert!(review(Verdict::Outdated, 0.5, Grounding::Ungrounded).outdated_signal);
        assert!(!review(Verdict::Outdated, 0.49, Grounding::Ungrounded).outdated_signal);
        let cannot = review(Verdict::CannotVerify, 1.0, Grounding::Ungrounded);
        assert!(cannot.cannot_verify);
        assert_eq!((cannot.belief_units, cannot.disbelief_units), (0.0, 0.0));
        let mostly = review(Verdict::MostlyCorrect, 1.0, Grounding::Ungrounded);
        assert!((mostly.belief_units - 0.375).abs() < 1e-12 && (mostly.disbelief_units - 0.125).abs() < 1e-12);
    }

    #[test]
    fn out_of_range_confidence_is_refused() {
        let params = TrustParameters::default();
        let bad = record(EvidenceKind::Review {
            verdict: Verdict::Confirmed,
            confidence: 1.5,
            grounding: Grounding::Ungrounded,
        });
        assert!(matches!(
            record_effect(&bad, &params),
            Err(TrustError::ConfidenceOutOfRange { .. })
        ));
        let nan = record(EvidenceKind::Review {
            verdict: Verdict::Confirmed,
            confidence: f64::NAN,
            grounding: Grounding::Ungrounded,
        });
        assert!(record_effect(&nan, &params).is_err());
    }
}
