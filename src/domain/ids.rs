//! Public identifiers: `<prefix>_<ULID>` in lowercase, one prefix per kind of object.
//!
//! IDs are globally unique so that objects replicated from other realms keep the ID their origin gave them.

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Utc};
use ulid::Ulid;

/// The kind of object an ID names, given by its prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IdKind {
    /// `usr_`: a human.
    User,
    /// `org_`: an organization.
    Organization,
    /// `ai_`: an AI agent.
    Agent,
    /// `spc_`: a space.
    Space,
    /// `ent_`: an entity (any identifiable subject).
    Entity,
    /// `src_`: a source.
    Source,
    /// `thr_`: a thread.
    Thread,
    /// `cnt_`: a content item.
    Content,
    /// `rev_`: an immutable revision of a content item.
    Revision,
    /// `clm_`: a claim.
    Claim,
    /// `ast_`: an asset.
    Asset,
    /// `use_`: a usage event.
    Usage,
    /// `rvw_`: a review.
    Review,
    /// `rat_`: a rating.
    Rating,
    /// `key_`: an API key (administrative, never served through MCP).
    ApiKey,
}

impl IdKind {
    /// Every kind, in prefix order of the spec.
    pub const ALL: [IdKind; 15] = [
        IdKind::User,
        IdKind::Organization,
        IdKind::Agent,
        IdKind::Space,
        IdKind::Entity,
        IdKind::Source,
        IdKind::Thread,
        IdKind::Content,
        IdKind::Revision,
        IdKind::Claim,
        IdKind::Asset,
        IdKind::Usage,
        IdKind::Review,
        IdKind::Rating,
        IdKind::ApiKey,
    ];

    /// The prefix without the underscore.
    pub fn prefix(self) -> &'static str {
        match self {
            IdKind::User => "usr",
            IdKind::Organization => "org",
            IdKind::Agent => "ai",
            IdKind::Space => "spc",
            IdKind::Entity => "ent",
            IdKind::Source => "src",
            IdKind::Thread => "thr",
            IdKind::Content => "cnt",
            IdKind::Revision => "rev",
            IdKind::Claim => "clm",
            IdKind::Asset => "ast",
            IdKind::Usage => "use",
            IdKind::Review => "rvw",
            IdKind::Rating => "rat",
            IdKind::ApiKey => "key",
        }
    }

    /// The kind named by a prefix, if any.
    pub fn from_prefix(prefix: &str) -> Option<IdKind> {
        IdKind::ALL.into_iter().find(|kind| kind.prefix() == prefix)
    }

    /// Whether objects of this kind are actors.
    pub fn is_actor(self) -> bool {
        matches!(self, IdKind::User | IdKind::Organization | IdKind::Agent)
    }
}

impl fmt::Display for IdKind {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.prefix())
    }
}

/// Why a string is not a valid public ID. The message never repeats the input, which may be long or hostile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdParseError {
    /// There is no `_` separating prefix and ULID.
    #[error("an ID has the form <prefix>_<ULID>, e.g. cnt_01j9zq3k5m8n2p4r6t8v0w2x4y")]
    MissingSeparator,
    /// The prefix is not one the spec defines.
    #[error(
        "unknown ID prefix; known prefixes are usr, org, ai, spc, ent, src, thr, cnt, rev, clm, ast, use, rvw, rat"
    )]
    UnknownPrefix,
    /// The part after the prefix is not a 26-character Crockford base32 ULID.
    #[error("the part after the prefix must be a 26-character ULID")]
    MalformedUlid,
    /// The ULID's first character is above `7`: 26 base32 characters hold 130 bits, a ULID only 128, so such a
    /// text names no ULID (decoding it would silently drop the top bits and reach another ID).
    #[error("the ULID after the prefix must start with a digit from 0 to 7")]
    UlidOutOfRange,
}

/// A validated public ID in canonical (lowercase) form.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PublicId {
    kind: IdKind,
    canonical: String,
}

impl PublicId {
    /// A new ID of `kind` whose ULID carries `created_at` and the given randomness.
    pub fn generate(kind: IdKind, created_at: DateTime<Utc>, randomness: u128) -> PublicId {
        let milliseconds = u64::try_from(created_at.timestamp_millis()).unwrap_or(0);
        PublicId::from_ulid(kind, Ulid::from_parts(milliseconds, randomness))
    }

    /// The ID of `kind` with this ULID.
    pub fn from_ulid(kind: IdKind, ulid: Ulid) -> PublicId {
        PublicId {
            kind,
            canonical: format!("{}_{}", kind.prefix(), ulid.to_string().to_ascii_lowercase()),
        }
    }

    /// Parses any public ID. Upper-case input is accepted and canonicalized to lowercase.
    pub fn parse(input: &str) -> Result<PublicId, IdParseError> {
        let (prefix, ulid_text) = input.split_once('_').ok_or(IdParseError::MissingSeparator)?;
        let kind = IdKind::from_prefix(&prefix.to_ascii_lowercase()).ok_or(IdParseError::UnknownPrefix)?;
        if ulid_text.len() != 26 {
            return Err(IdParseError::MalformedUlid);
        }
        // The first of 26 characters carries only the top 3 of 128 bits; the decoder would shift anything larger
        // out of range without a word, so `cnt_g…` would name the same object as `cnt_0…`.
        if !ulid_text.starts_with(|first: char| ('0'..='7').contains(&first)) {
            return Err(if ulid_text.starts_with(|first: char| first.is_ascii_alphanumeric()) {
                IdParseError::UlidOutOfRange
            } else {
                IdParseError::MalformedUlid
            });
        }
        let ulid = Ulid::from_string(&ulid_text.to_ascii_uppercase()).map_err(|_| IdParseError::MalformedUlid)?;
        Ok(PublicId {
            kind,
            canonical: format!("{}_{}", kind.prefix(), ulid.to_string().to_ascii_lowercase()),
        })
    }

    /// The kind given by the prefix.
    pub fn kind(&self) -> IdKind {
        self.kind
    }

    /// The canonical text, e.g. `cnt_01j9zq3k5m8n2p4r6t8v0w2x4y`.
    pub fn as_str(&self) -> &str {
        &self.canonical
    }

    /// Consumes the ID into its canonical text.
    pub fn into_string(self) -> String {
        self.canonical
    }
}

impl fmt::Display for PublicId {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.canonical)
    }
}

impl FromStr for PublicId {
    type Err = IdParseError;

    fn from_str(input: &str) -> Result<Self, Self::Err> {
        PublicId::parse(input)
    }
}

impl AsRef<str> for PublicId {
    fn as_ref(&self) -> &str {
        &self.canonical
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_ids_parse_back_to_themselves() {
        let instant = DateTime::parse_from_rfc3339("2026-11-29T12:00:00Z")
            .expect("valid")
            .to_utc();
        for kind in IdKind::ALL {
            let id = PublicId::generate(kind, instant, 0x1234_5678_9abc_def0_1234_5678);
            let parsed = PublicId::parse(id.as_str()).expect("round trip");
            assert_eq!(parsed, id);
            assert_eq!(parsed.kind(), kind);
            assert!(id.as_str().starts_with(&format!("{}_", kind.prefix())));
            assert_eq!(id.as_str(), id.as_str().to_ascii_lowercase());
        }
    }

    #[test]
    fn upper_case_input_is_canonicalized() {
        let id = PublicId::parse("CNT_01J9ZQ3K5M8N2P4R6T8V0W2X4Y").expect("valid");
        assert_eq!(id.as_str(), "cnt_01j9zq3k5m8n2p4r6t8v0w2x4y");
    }

    #[test]
    fn malformed_ids_are_rejected_with_a_reason() {
        assert_eq!(PublicId::parse("cnt01j9"), Err(IdParseError::MissingSeparator));
        assert_eq!(
            PublicId::parse("xyz_01j9zq3k5m8n2p4r6t8v0w2x4y"),
            Err(IdParseError::UnknownPrefix)
        );
        assert_eq!(PublicId::parse("cnt_short"), Err(IdParseError::MalformedUlid));
        assert_eq!(
            PublicId::parse("cnt_01j9zq3k5m8n2p4r6t8v0w2x4!"),
            Err(IdParseError::MalformedUlid)
        );
    }

    #[test]
    fn a_ulid_above_128_bits_is_rejected_instead_of_wrapping_to_another_id() {
        // `g` is 16 in base32: 16 << 125 overflows 128 bits, and the decoder used to drop the top bits, so this
        // text resolved to the `cnt_0…` ID with the same tail.
        let tail = "1j9zq3k5m8n2p4r6t8v0w2x4y";
        for first in ['8', '9', 'a', 'g', 'z', 'G', 'Z'] {
            assert_eq!(
                PublicId::parse(&format!("cnt_{first}{tail}")),
                Err(IdParseError::UlidOutOfRange),
                "{first}"
            );
        }
        for first in '0'..='7' {
            let id = PublicId::parse(&format!("cnt_{first}{tail}")).expect("in range");
            assert_eq!(id.as_str(), format!("cnt_{first}{tail}"));
        }
        assert_eq!(
            PublicId::parse("cnt_7zzzzzzzzzzzzzzzzzzzzzzzzz").map(|id| id.into_string()),
            Ok("cnt_7zzzzzzzzzzzzzzzzzzzzzzzzz".to_owned()),
            "the largest ULID"
        );
        assert_eq!(
            PublicId::parse("cnt_-1j9zq3k5m8n2p4r6t8v0w2x4y"),
            Err(IdParseError::MalformedUlid)
        );
    }
}
