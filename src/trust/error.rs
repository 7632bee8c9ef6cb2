//! The one error type of the trust engine: invalid evidence and refused state changes. (Invalid context input is a
//! [`crate::domain::ContextError`], refused where the context key is built.)

use std::fmt;

/// Everything the trust engine can refuse. Each variant carries the identifiers needed to say what was wrong,
/// and the `Display` text is safe to show to the caller that sent the input.
#[derive(Debug, Clone, PartialEq)]
pub enum TrustError {
    /// A confidence was outside [0, 1] or not a number.
    ConfidenceOutOfRange { record_id: String, confidence: f64 },
    /// A rating score was outside [0, 100] or not a number.
    ScoreOutOfRange { record_id: String, score: f64 },
    /// A reputation multiplier was not a finite number.
    ReputationNotFinite { record_id: String },
    /// A record with this id is already held by the target state.
    DuplicateRecord { record_id: String },
    /// No record with this id is held by the target state.
    UnknownRecord { record_id: String },
    /// The record was already retracted.
    AlreadyRetracted { record_id: String },
    /// A peer tried to retract a record that did not originate on that peer (first-party immutability, P9).
    RetractionRefused { record_id: String, requested_by: String },
}

impl fmt::Display for TrustError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TrustError::ConfidenceOutOfRange { record_id, confidence } => {
                write!(
                    formatter,
                    "record {record_id}: confidence {confidence} is outside [0, 1]"
                )
            }
            TrustError::ScoreOutOfRange { record_id, score } => {
                write!(formatter, "record {record_id}: score {score} is outside [0, 100]")
            }
            TrustError::ReputationNotFinite { record_id } => {
                write!(
                    formatter,
                    "record {record_id}: reputation multiplier is not a finite number"
                )
            }
            TrustError::DuplicateRecord { record_id } => write!(formatter, "record {record_id} is already held"),
            TrustError::UnknownRecord { record_id } => write!(formatter, "record {record_id} is not held"),
            TrustError::AlreadyRetracted { record_id } => {
                write!(formatter, "record {record_id} is already retracted")
            }
            TrustError::RetractionRefused {
                record_id,
                requested_by,
            } => write!(
                formatter,
                "peer {requested_by} may not retract record {record_id}: it did not originate there"
            ),
        }
    }
}

impl std::error::Error for TrustError {}
