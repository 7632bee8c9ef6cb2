//! What went wrong with a peer, as every channel (peering deliveries, push rounds, pulls) stores it and as an admin
//! reads it: `class: detail`, the class being the peer's refusal reason (`blocked_sender`, `unknown_sender`, …),
//! `http_503`, `network`, …. The channels write and classify failures here; `peer_status` shows them.

use chrono::{DateTime, Utc};

/// The refusal reason of a peer that blocked this instance, as its inbox and outbox give it.
pub const BLOCKED_SENDER: &str = "blocked_sender";
/// The refusal reason of a peer that does not know this instance (it removed the peering, or never had it).
pub const UNKNOWN_SENDER: &str = "unknown_sender";

/// A failure with a peer as an admin reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerFailure {
    /// What kind of failure: the peer's refusal reason (`blocked_sender`, `unknown_sender`, …), `http_503`,
    /// `network`, `timeout`, ….
    pub class: String,
    /// The rest of the stored text (an excerpt of the answer, or the error).
    pub detail: String,
    /// When it happened.
    pub at: DateTime<Utc>,
}

impl PeerFailure {
    /// Reads a stored error text (`class: detail`, as every channel writes it).
    pub fn from_stored(text: &str, at: DateTime<Utc>) -> PeerFailure {
        let class = failure_class(text).to_owned();
        let detail = text
            .split_once(':')
            .filter(|(head, _)| head.trim() == class)
            .map_or(text, |(_, rest)| rest)
            .trim()
            .to_owned();
        PeerFailure { class, detail, at }
    }
}

/// The class of a stored error text: the snake_case word before its first `:`, or `error` when it has none.
pub fn failure_class(error: &str) -> &str {
    let head = error.split(':').next().unwrap_or("").trim();
    if !head.is_empty()
        && head
            .bytes()
            .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'_')
    {
        head
    } else {
        "error"
    }
}
