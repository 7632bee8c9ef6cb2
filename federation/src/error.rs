//! The crate's one error type: why a signed request or a document was refused, with a stable reason code for
//! metrics and logs, kept apart from a human-readable detail.

/// Why a request was refused. The snake_case names are stable: they label metrics and appear in logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RejectionReason {
    /// No `Signature-Input` or `Signature` field.
    SignatureMissing,
    /// The signature fields are not valid structured fields, or lack a required parameter.
    SignatureMalformed,
    /// The signature does not cover every component the receiver requires.
    ComponentsMissing,
    /// A covered component this implementation does not know how to reproduce.
    ComponentUnsupported,
    /// An `alg` other than `ed25519`.
    AlgorithmUnsupported,
    /// `created` lies too far in the future.
    CreatedInFuture,
    /// `created` lies too far in the past.
    CreatedTooOld,
    /// `expires` has passed.
    Expired,
    /// `expires` lies too long after `created`.
    ValidityTooLong,
    /// No `Content-Digest` field on a request with a body.
    DigestMissing,
    /// `Content-Digest` is malformed or has no `sha-256` member.
    DigestMalformed,
    /// `Content-Digest` does not match the body.
    DigestMismatch,
    /// The signature does not verify with the key.
    SignatureInvalid,
}

impl RejectionReason {
    /// The stable snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            RejectionReason::SignatureMissing => "signature_missing",
            RejectionReason::SignatureMalformed => "signature_malformed",
            RejectionReason::ComponentsMissing => "components_missing",
            RejectionReason::ComponentUnsupported => "component_unsupported",
            RejectionReason::AlgorithmUnsupported => "algorithm_unsupported",
            RejectionReason::CreatedInFuture => "created_in_future",
            RejectionReason::CreatedTooOld => "created_too_old",
            RejectionReason::Expired => "expired",
            RejectionReason::ValidityTooLong => "validity_too_long",
            RejectionReason::DigestMissing => "digest_missing",
            RejectionReason::DigestMalformed => "digest_malformed",
            RejectionReason::DigestMismatch => "digest_mismatch",
            RejectionReason::SignatureInvalid => "signature_invalid",
        }
    }
}

impl std::fmt::Display for RejectionReason {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// A refusal: its reason and a detail safe to show to the sender (it never contains key material).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}: {detail}")]
pub struct Rejection {
    /// The stable reason.
    pub reason: RejectionReason,
    /// What exactly was wrong.
    pub detail: String,
}

impl Rejection {
    /// A rejection for `reason` with `detail`.
    pub fn new(reason: RejectionReason, detail: impl Into<String>) -> Rejection {
        Rejection {
            reason,
            detail: detail.into(),
        }
    }
}
