//! The trust engine (trust-v1): pure functions from evidence, parameters and `now` to values, intervals and statuses.
//!
//! Architecture invariant: nothing in this module performs I/O, reads a clock, draws random numbers, runs async code
//! or depends on serde. `now` is always an argument, every collection whose order reaches an output is a `BTreeMap`,
//! a `BTreeSet` or a sorted vector, and the same inputs therefore give the same bytes out. The service layer converts
//! stored rows into the evidence types of [`evidence`] and converts [`Explanation`] into its wire format by hand.
//!
//! Entry points:
//! - [`TargetState`]: the incremental per-target state of §4 of the spec (`add`, `retract`, `assess`, `explain`).
//! - [`assess_records`] and [`explain_records`]: the full recomputation of one target from a slice of records,
//!   written independently of the incremental bookkeeping, so that each checks the other.
//! - [`decide_status`]: the status rules R1–R11 as a pure function of [`StatusFacts`].
//! - [`aggregate_ratings`]: rating aggregation per (target, dimension, context) with context fallback.
//! - [`instance_trust`] and [`controller_reputation`]: §2.10 and §2.11 over observation lists, both counting with
//!   one [`AgreementTally`].

pub mod agreement_tally;
pub mod error;
pub mod evidence;
pub mod explanation;
mod fixed_point;
mod full_recompute;
pub mod instance_trust;
pub mod interval;
pub mod params;
pub mod rating;
pub mod remote;
pub mod reputation;
pub mod status;
pub mod summary;
pub mod target;
mod target_bucket;

#[cfg(test)]
mod tests;

pub use agreement_tally::{AgreementTally, FirstPartyDecision};
pub use error::TrustError;
pub use evidence::{
    ControllerRef, ControllerStanding, EvidenceKind, EvidenceRecord, RatingRecord, RecordEffect, Stance, record_effect,
};
pub use explanation::{
    ControllerPartyExplanation, ExcludedCounts, Explanation, InstancePartyExplanation, PartyExplanation, PartyFlag,
};
pub use full_recompute::{assess_records, explain_records};
pub use instance_trust::{AdminTrustLevel, AgreementObservation, InstanceTrust, InstanceTrustSetting, instance_trust};
pub use interval::{beta_interval, beta_quantile};
pub use params::{MODEL_VERSION, StrongRefutationGate, TrustParameters};
pub use rating::{RatingAggregate, RatingQuery, aggregate_ratings};
pub use remote::{InstanceBound, InstanceTrustTable, RemoteDiscount, remote_discount};
pub use reputation::{ControllerReputation, ReputationObservation, controller_reputation};
pub use status::{StatusDecision, StatusFacts, StatusRule, decide_status};
pub use summary::{Assessment, AssessmentCounts, Evaluation, EvidenceUnits, Opinion, PartyCount, Units};
pub use target::{RetractionAuthority, TargetDescriptor, TargetState};
