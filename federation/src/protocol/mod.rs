//! The documents instances exchange, as wire types: the instance actor with its keys, the peering activities,
//! WebFinger and NodeInfo, and the federation part of the `/.well-known/inter-ai` manifest.
//!
//! These are plain serde types for JSON-LD compacted with the context of [`context::document_context`]; no
//! JSON-LD processing happens here or anywhere in interai (documents are produced and read in this one compacted
//! form). Conversions to and from the instance's own domain types live in the instance's `apub` adapter.

pub mod activity;
pub mod actor;
pub mod context;
pub mod discovery;
pub mod objects;

pub use activity::{Activity, ActivityKind, ActivityObject};
pub use actor::{ManifestFederation, ManifestKey, Multikey, PublicKeyPem, ServiceActor};

/// `application/activity+json`, the media type we send.
pub const ACTIVITY_JSON: &str = "application/activity+json";
/// The JSON-LD media type with the ActivityStreams profile, which we accept as an equivalent.
pub const LD_JSON_ACTIVITYSTREAMS: &str = "application/ld+json; profile=\"https://www.w3.org/ns/activitystreams\"";

/// Whether a `Content-Type` or an `Accept` member names ActivityStreams JSON: `application/activity+json`, or
/// `application/ld+json` with the ActivityStreams profile (parameters and case as HTTP allows).
pub fn is_activity_json(media_type: &str) -> bool {
    let mut parts = media_type.split(';').map(str::trim);
    let essence = parts.next().unwrap_or("").to_ascii_lowercase();
    match essence.as_str() {
        "application/activity+json" => true,
        "application/ld+json" => parts.any(|parameter| {
            let Some((name, value)) = parameter.split_once('=') else {
                return false;
            };
            name.trim().eq_ignore_ascii_case("profile")
                && value
                    .trim()
                    .trim_matches('"')
                    .split_whitespace()
                    .any(|profile| profile == "https://www.w3.org/ns/activitystreams")
        }),
        _ => false,
    }
}

/// Unix seconds as an RFC 3339 UTC timestamp (`2026-12-02T08:00:00Z`).
pub fn rfc3339(seconds: i64) -> String {
    chrono::DateTime::from_timestamp(seconds, 0)
        .map(|instant| instant.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .unwrap_or_default()
}

/// An RFC 3339 timestamp as Unix seconds.
pub fn parse_rfc3339(text: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|instant| instant.timestamp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_activitystreams_media_types_are_recognized_and_nothing_else() {
        assert!(is_activity_json("application/activity+json"));
        assert!(is_activity_json("Application/Activity+JSON; charset=utf-8"));
        assert!(is_activity_json(LD_JSON_ACTIVITYSTREAMS));
        assert!(is_activity_json(
            "application/ld+json;profile=\"https://www.w3.org/ns/activitystreams https://example.test/p\""
        ));
        assert!(!is_activity_json("application/ld+json"));
        assert!(!is_activity_json("application/json"));
        assert!(!is_activity_json("text/html"));
    }

    #[test]
    fn timestamps_round_trip() {
        assert_eq!(rfc3339(1_800_000_000), "2027-01-15T08:00:00Z");
        assert_eq!(parse_rfc3339("2027-01-15T08:00:00Z"), Some(1_800_000_000));
        assert_eq!(parse_rfc3339("yesterday"), None);
    }
}
