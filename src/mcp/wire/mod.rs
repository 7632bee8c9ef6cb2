//! MCP wire types: the JSON shapes of the spec, one file per tool, kept apart from domain types and converted by
//! hand. Everything is re-exported here, so adapters name `wire::X` whatever file `X` lives in.

mod compare;
mod evidence;
mod experience;
mod explanation;
mod get;
mod input_schema;
mod publish;
mod records;
mod search;
mod whoami;

pub use compare::*;
pub use evidence::*;
pub use experience::*;
pub use explanation::*;
pub use get::*;
pub use publish::*;
pub use records::*;
pub use search::*;
pub use whoami::*;

use crate::domain::TrustStatus;

/// The URI under which an object is also readable as an MCP resource.
pub fn resource_uri(id: &str) -> String {
    if id.starts_with("cnt_") {
        format!("interai://content/{id}")
    } else {
        format!("interai://{id}")
    }
}

/// A status's warning label, for the statuses that need one.
pub fn status_warning(status: TrustStatus) -> Option<String> {
    let text = match status {
        TrustStatus::Disputed => {
            "disputed: independent evidence contradicts this; read the trust explanation before relying on it"
        }
        TrustStatus::Outdated => "outdated: independent evidence says this no longer holds",
        TrustStatus::Incorrect => "incorrect: independent strong refutations or overwhelming contradiction",
        TrustStatus::Superseded => "superseded: a newer revision or replacing content exists",
        TrustStatus::HighConfidence | TrustStatus::Supported | TrustStatus::Unverified => return None,
    };
    Some(text.to_owned())
}

/// Rounds a figure to 4 decimals for the wire, as the trust model's examples print them.
pub(super) fn round(value: f64) -> f64 {
    (value * 10_000.0).round() / 10_000.0
}
