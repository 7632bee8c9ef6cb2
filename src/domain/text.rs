//! Normalization of text used for matching: claims, tags, entity names, source URLs, rating dimensions.
//!
//! Two inputs that mean the same thing must normalize to the same string, so that evidence accumulates
//! on one claim, one tag, one source. The functions are pure and depend on nothing else in the crate.
//!
//! Invariant: every normalization is idempotent (normalizing a normalized value changes nothing), so a
//! stored normalized value can be compared with a freshly normalized input.

use sha2::{Digest, Sha256};
use unicode_normalization::UnicodeNormalization;

/// Why a tag or URL was refused. Messages may quote the offending character or scheme, never a whole
/// URL, since a URL can carry a secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TextError {
    /// The tag is empty after trimming.
    #[error("a tag must not be empty")]
    EmptyTag,
    /// The normalized tag is longer than [`TAG_MAX_CHARS`].
    #[error("a tag may have at most {TAG_MAX_CHARS} characters; this one has {length}")]
    TagTooLong {
        /// Characters after normalization.
        length: usize,
    },
    /// The normalized tag starts with something other than a letter or digit.
    #[error("a tag must start with a letter a-z or a digit, not {character:?}")]
    TagInvalidStart {
        /// The first character.
        character: char,
    },
    /// The normalized tag contains a character outside `a-z 0-9 . + # -`.
    #[error("a tag may contain only a-z, 0-9, '.', '+', '#' and '-'; {character:?} is not allowed")]
    TagInvalidCharacter {
        /// The first offending character.
        character: char,
    },
    /// The source URL could not be parsed.
    #[error("the URL is not valid: {reason}")]
    InvalidUrl {
        /// The parser's explanation.
        reason: String,
    },
    /// The source URL uses another scheme than http or https.
    #[error("only http and https URLs are accepted as sources, not {scheme:?}")]
    UrlSchemeNotAllowed {
        /// The scheme given.
        scheme: String,
    },
    /// The source URL has no host.
    #[error("the URL has no host")]
    UrlWithoutHost,
    /// The source URL carries a user name or password.
    #[error("the URL contains credentials (user name or password before '@'); remove them")]
    UrlHasCredentials,
}

/// The longest tag, in characters after normalization.
pub const TAG_MAX_CHARS: usize = 64;

/// The longest rating dimension name, in characters.
pub const DIMENSION_MAX_CHARS: usize = 64;

/// Query parameters that only track the visit and never change what a page says.
const TRACKING_QUERY_PARAMETERS: &[&str] = &[
    "dclid", "fbclid", "gbraid", "gclid", "igshid", "mc_cid", "mc_eid", "msclkid", "wbraid", "yclid",
];

/// Characters that end a sentence or clause and say nothing about a claim's content, including their
/// full-width and ideographic forms. (NFKC already turns the full-width forms and `…` into ASCII; they
/// are listed so the set reads complete on its own.)
const TRAILING_PUNCTUATION: &[char] = &[
    '.', '!', '?', ';', ':', ',', '…', '。', '．', '！', '？', '；', '：', '，', '、', '｡', '､',
];

/// A claim's text in the form used for matching equivalent claims: Unicode NFKC, full case folding,
/// whitespace runs collapsed to one space and trimmed, trailing punctuation removed.
pub fn normalize_claim_text(text: &str) -> String {
    let folded = fold_and_collapse(text);
    folded
        .trim_end_matches(|character: char| TRAILING_PUNCTUATION.contains(&character) || character == ' ')
        .to_owned()
}

/// The fingerprint of a normalized claim: lowercase hex SHA-256 of its UTF-8 bytes.
pub fn claim_fingerprint(normalized: &str) -> String {
    hex::encode(Sha256::digest(normalized.as_bytes()))
}

/// A tag in canonical form: NFKC, lowercase, trimmed, runs of whitespace, underscores and dashes
/// turned into one `-`; then it must match `[a-z0-9][a-z0-9.+#-]{0,63}` (so `C++`, `C#` and
/// `Node.js` work).
pub fn normalize_tag(tag: &str) -> Result<String, TextError> {
    let lowercase: String = tag.nfkc().collect::<String>().to_lowercase();
    let mut normalized = String::with_capacity(lowercase.len());
    for character in lowercase.trim().chars() {
        if character.is_whitespace() || character == '_' || character == '-' {
            if !normalized.ends_with('-') {
                normalized.push('-');
            }
        } else {
            normalized.push(character);
        }
    }
    let mut characters = normalized.chars();
    let Some(first) = characters.next() else {
        return Err(TextError::EmptyTag);
    };
    if !(first.is_ascii_lowercase() || first.is_ascii_digit()) {
        return Err(TextError::TagInvalidStart { character: first });
    }
    if let Some(character) = characters.find(|character| {
        !(character.is_ascii_lowercase() || character.is_ascii_digit() || matches!(character, '.' | '+' | '#' | '-'))
    }) {
        return Err(TextError::TagInvalidCharacter { character });
    }
    let length = normalized.chars().count();
    if length > TAG_MAX_CHARS {
        return Err(TextError::TagTooLong { length });
    }
    Ok(normalized)
}

/// An entity name in the form used for matching: NFKC, full case folding, whitespace collapsed and
/// trimmed. Punctuation is kept, since it distinguishes names (`C++` and `C`).
pub fn normalize_entity_name(name: &str) -> String {
    fold_and_collapse(name)
}

/// A source URL as given and in the form used for matching, with its source family.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NormalizedUrl {
    /// The URL as given, trimmed.
    pub url: String,
    /// The URL for matching: lowercase scheme and host, no `www.`, no default port, no fragment, no
    /// tracking parameters, the other query parameters sorted, no trailing slash except for the root.
    pub normalized: String,
    /// The source family: the registrable domain under the public suffix list (`docs.python.org` →
    /// `python.org`, `foo.github.io` → `foo.github.io`), or the address for IP hosts.
    pub family: String,
}

/// Normalizes a source URL; only `http` and `https` URLs without credentials are accepted.
///
/// Hosts are compared in their ASCII (punycode) form. Paths keep their case and their percent-encoding
/// as written, since servers may treat them as significant.
pub fn normalize_source_url(url: &str) -> Result<NormalizedUrl, TextError> {
    let given = url.trim();
    let mut parsed = url::Url::parse(given).map_err(|error| TextError::InvalidUrl {
        reason: error.to_string(),
    })?;
    let scheme = parsed.scheme().to_owned();
    if scheme != "http" && scheme != "https" {
        return Err(TextError::UrlSchemeNotAllowed { scheme });
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(TextError::UrlHasCredentials);
    }
    let host = match parsed.host() {
        Some(url::Host::Domain(domain)) => SourceHost::Domain(domain.trim_end_matches('.').to_owned()),
        Some(url::Host::Ipv4(address)) => SourceHost::Address(address.to_string()),
        Some(url::Host::Ipv6(address)) => SourceHost::Address(address.to_string()),
        None => return Err(TextError::UrlWithoutHost),
    };
    let family = match &host {
        SourceHost::Domain(domain) => {
            let without_www = domain
                .strip_prefix("www.")
                .filter(|rest| psl::domain_str(rest).is_some())
                .unwrap_or(domain);
            if without_www != parsed.host_str().unwrap_or_default() {
                parsed
                    .set_host(Some(without_www))
                    .map_err(|error| TextError::InvalidUrl {
                        reason: error.to_string(),
                    })?;
            }
            psl::domain_str(without_www).unwrap_or(without_www).to_owned()
        }
        SourceHost::Address(address) => address.clone(),
    };
    parsed.set_fragment(None);
    let query = parsed.query().map(normalized_query);
    parsed.set_query(query.as_deref().filter(|query| !query.is_empty()));
    let path = parsed.path();
    if path.len() > 1 && path.ends_with('/') {
        let trimmed = path.trim_end_matches('/');
        let trimmed = if trimmed.is_empty() { "/" } else { trimmed }.to_owned();
        parsed.set_path(&trimmed);
    }
    Ok(NormalizedUrl {
        url: given.to_owned(),
        normalized: parsed.to_string(),
        family,
    })
}

/// Whether a rating dimension is lower_snake_case (`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`) and at most
/// [`DIMENSION_MAX_CHARS`] long.
pub fn is_lower_snake_case(dimension: &str) -> bool {
    if dimension.is_empty() || dimension.len() > DIMENSION_MAX_CHARS {
        return false;
    }
    let starts_with_letter = dimension.as_bytes()[0].is_ascii_lowercase();
    let words_are_well_formed = dimension.split('_').all(|word| {
        !word.is_empty()
            && word
                .bytes()
                .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit())
    });
    starts_with_letter && words_are_well_formed
}

enum SourceHost {
    Domain(String),
    Address(String),
}

/// NFKC, full case folding, NFKC again (folding can produce text that is no longer NFKC, and the second
/// pass makes the whole idempotent), then whitespace runs collapsed to one space and trimmed.
fn fold_and_collapse(text: &str) -> String {
    let compatible: String = text.nfkc().collect();
    let folded: String = caseless::default_case_fold_str(&compatible).nfkc().collect();
    let mut collapsed = String::with_capacity(folded.len());
    for word in folded.split_whitespace() {
        if !collapsed.is_empty() {
            collapsed.push(' ');
        }
        collapsed.push_str(word);
    }
    collapsed
}

/// The query without tracking parameters, the rest sorted. Parameters are compared and kept as
/// written (still percent-encoded), so that sorting never changes what the server receives.
fn normalized_query(query: &str) -> String {
    let mut parameters: Vec<&str> = query
        .split('&')
        .filter(|parameter| !parameter.is_empty())
        .filter(|parameter| {
            let name = parameter.split('=').next().unwrap_or_default().to_ascii_lowercase();
            !(name.starts_with("utm_") || TRACKING_QUERY_PARAMETERS.contains(&name.as_str()))
        })
        .collect();
    parameters.sort_unstable();
    parameters.join("&")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_normalize_case_width_space_and_trailing_punctuation() {
        assert_eq!(
            normalize_claim_text("  Deduplicating   by delivery ID\tprevents double processing.  "),
            "deduplicating by delivery id prevents double processing"
        );
        assert_eq!(normalize_claim_text("It works!!!"), "it works");
        assert_eq!(normalize_claim_text("Really?! …"), "really");
        assert_eq!(normalize_claim_text("Ｆｕｌｌ　ｗｉｄｔｈ！"), "full width");
        assert_eq!(normalize_claim_text("句読点。"), "句読点");
        assert_eq!(normalize_claim_text("Die Straße ist groß"), "die strasse ist gross");
        assert_eq!(normalize_claim_text("ΣΊΣΥΦΟΣ"), normalize_claim_text("σίσυφος"));
        assert_eq!(normalize_claim_text("ﬁle ①"), "file 1");
        assert_eq!(normalize_claim_text("version 1.2.3 is fine."), "version 1.2.3 is fine");
        assert_eq!(normalize_claim_text("...?"), "");
    }

    #[test]
    fn inner_punctuation_is_kept() {
        assert_eq!(normalize_claim_text("Use C++; not C."), "use c++; not c");
    }

    #[test]
    fn equivalent_claims_share_a_fingerprint() {
        let first = claim_fingerprint(&normalize_claim_text("Retries need JITTER."));
        let second = claim_fingerprint(&normalize_claim_text("retries  need jitter"));
        assert_eq!(first, second);
        assert_eq!(
            claim_fingerprint(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(claim_fingerprint("abc").len(), 64);
        assert_eq!(
            claim_fingerprint("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn tags_are_canonical() {
        assert_eq!(normalize_tag("Webhook"), Ok("webhook".to_owned()));
        assert_eq!(normalize_tag("  C++ "), Ok("c++".to_owned()));
        assert_eq!(normalize_tag("C#"), Ok("c#".to_owned()));
        assert_eq!(normalize_tag("Node.js"), Ok("node.js".to_owned()));
        assert_eq!(normalize_tag("rate_limiting"), Ok("rate-limiting".to_owned()));
        assert_eq!(normalize_tag("machine   learning"), Ok("machine-learning".to_owned()));
        assert_eq!(normalize_tag("a _ - b"), Ok("a-b".to_owned()));
        assert_eq!(normalize_tag("ＡＰＩ"), Ok("api".to_owned()));
        assert_eq!(normalize_tag("3d-printing"), Ok("3d-printing".to_owned()));
        assert_eq!(normalize_tag(&"a".repeat(64)), Ok("a".repeat(64)));
    }

    #[test]
    fn bad_tags_are_refused_with_a_reason() {
        assert_eq!(normalize_tag("   "), Err(TextError::EmptyTag));
        assert_eq!(normalize_tag(""), Err(TextError::EmptyTag));
        assert_eq!(
            normalize_tag(".net"),
            Err(TextError::TagInvalidStart { character: '.' })
        );
        assert_eq!(normalize_tag("-x"), Err(TextError::TagInvalidStart { character: '-' }));
        assert_eq!(
            normalize_tag("café"),
            Err(TextError::TagInvalidCharacter { character: 'é' })
        );
        assert_eq!(
            normalize_tag("a/b"),
            Err(TextError::TagInvalidCharacter { character: '/' })
        );
        assert_eq!(
            normalize_tag(&"a".repeat(65)),
            Err(TextError::TagTooLong { length: 65 })
        );
        let message = normalize_tag("a/b").expect_err("refused").to_string();
        assert_eq!(
            message,
            "a tag may contain only a-z, 0-9, '.', '+', '#' and '-'; '/' is not allowed"
        );
    }

    #[test]
    fn entity_names_fold_but_keep_punctuation() {
        assert_eq!(normalize_entity_name("  PostgreSQL   16 "), "postgresql 16");
        assert_eq!(normalize_entity_name("C++"), "c++");
        assert_eq!(normalize_entity_name("Straße.io!"), "strasse.io!");
    }

    fn normalized(url: &str) -> NormalizedUrl {
        normalize_source_url(url).expect("a valid source URL")
    }

    #[test]
    fn source_urls_are_normalized() {
        let result = normalized("  HTTPS://WWW.Example.COM:443/Docs/Guide/?b=2&utm_source=x&a=1&fbclid=y#intro ");
        assert_eq!(
            result.url,
            "HTTPS://WWW.Example.COM:443/Docs/Guide/?b=2&utm_source=x&a=1&fbclid=y#intro"
        );
        assert_eq!(result.normalized, "https://example.com/Docs/Guide?a=1&b=2");
        assert_eq!(result.family, "example.com");
        assert_eq!(normalized("http://example.com:80/").normalized, "http://example.com/");
        assert_eq!(normalized("http://example.com").normalized, "http://example.com/");
        assert_eq!(
            normalized("https://example.com:8443/a").normalized,
            "https://example.com:8443/a"
        );
        assert_eq!(
            normalized("https://example.com/a?utm_medium=m&gclid=g").normalized,
            "https://example.com/a"
        );
        assert_eq!(normalized("https://example.com/a?").normalized, "https://example.com/a");
        assert_eq!(
            normalized("https://example.com/a//").normalized,
            "https://example.com/a"
        );
        assert_eq!(
            normalized("https://example.com/a/?q=1").normalized,
            "https://example.com/a?q=1"
        );
        assert_eq!(
            normalized("https://example.com/%7Euser/A%20B").normalized,
            "https://example.com/%7Euser/A%20B"
        );
    }

    #[test]
    fn normalizing_a_normalized_url_changes_nothing() {
        for url in [
            "https://www.example.com/a/?b=2&a=1#x",
            "http://[2001:DB8::1]:8080/x/",
            "https://docs.python.org/3/library/",
            "https://Bücher.example/Straße?x=%20",
        ] {
            let once = normalized(url);
            let twice = normalized(&once.normalized);
            assert_eq!(twice.normalized, once.normalized, "{url}");
            assert_eq!(twice.family, once.family, "{url}");
        }
    }

    #[test]
    fn source_families_follow_the_public_suffix_list() {
        assert_eq!(normalized("https://docs.python.org/3/").family, "python.org");
        assert_eq!(normalized("https://foo.github.io/project/").family, "foo.github.io");
        assert_eq!(normalized("https://www.bbc.co.uk/news").family, "bbc.co.uk");
        assert_eq!(normalized("https://news.bbc.co.uk/").family, "bbc.co.uk");
        assert_eq!(normalized("https://a.b.example.com/").family, "example.com");
        assert_eq!(normalized("http://localhost:8080/x").family, "localhost");
        assert_eq!(normalized("https://münchen.de/").family, "xn--mnchen-3ya.de");
        assert_eq!(normalized("https://example.com./a").family, "example.com");
    }

    #[test]
    fn www_is_dropped_only_before_a_registrable_domain() {
        assert_eq!(
            normalized("https://www.rust-lang.org/").normalized,
            "https://rust-lang.org/"
        );
        assert_eq!(normalized("https://www.co.uk/").normalized, "https://www.co.uk/");
        assert_eq!(
            normalized("https://www2.example.com/").normalized,
            "https://www2.example.com/"
        );
    }

    #[test]
    fn ip_hosts_are_their_own_family() {
        assert_eq!(normalized("http://192.168.1.10:8080/status").family, "192.168.1.10");
        let ipv6 = normalized("http://[2001:DB8::1]/");
        assert_eq!(ipv6.family, "2001:db8::1");
        assert_eq!(ipv6.normalized, "http://[2001:db8::1]/");
    }

    #[test]
    fn unacceptable_urls_are_refused() {
        assert_eq!(
            normalize_source_url("https://user:pass@example.com/"),
            Err(TextError::UrlHasCredentials)
        );
        assert_eq!(
            normalize_source_url("https://user@example.com/"),
            Err(TextError::UrlHasCredentials)
        );
        assert_eq!(
            normalize_source_url("ftp://example.com/file"),
            Err(TextError::UrlSchemeNotAllowed {
                scheme: "ftp".to_owned()
            })
        );
        assert_eq!(
            normalize_source_url("javascript:alert(1)"),
            Err(TextError::UrlSchemeNotAllowed {
                scheme: "javascript".to_owned()
            })
        );
        assert!(matches!(
            normalize_source_url("not a url"),
            Err(TextError::InvalidUrl { .. })
        ));
        assert!(matches!(
            normalize_source_url("/relative/path"),
            Err(TextError::InvalidUrl { .. })
        ));
        let message = normalize_source_url("https://alice:s3cret@example.com/")
            .expect_err("refused")
            .to_string();
        assert!(!message.contains("s3cret"), "{message}");
    }

    #[test]
    fn dimensions_are_lower_snake_case() {
        for good in ["accuracy", "integration_effort", "p99_latency", "a", "cost2"] {
            assert!(is_lower_snake_case(good), "{good}");
        }
        let too_long = "a".repeat(65);
        for bad in [
            "",
            "Accuracy",
            "integration-effort",
            "_cost",
            "cost_",
            "two__words",
            "2fast",
            "café",
            too_long.as_str(),
        ] {
            assert!(!is_lower_snake_case(bad), "{bad}");
        }
        assert!(is_lower_snake_case(&"a".repeat(64)));
    }

    proptest::proptest! {
        #[test]
        fn normalizations_are_idempotent(text in "\\PC{0,60}") {
            let claim = normalize_claim_text(&text);
            proptest::prop_assert_eq!(normalize_claim_text(&claim), claim.clone());
            let name = normalize_entity_name(&text);
            proptest::prop_assert_eq!(normalize_entity_name(&name), name);
            if let Ok(tag) = normalize_tag(&text) {
                proptest::prop_assert_eq!(normalize_tag(&tag), Ok(tag.clone()));
            }
        }

        #[test]
        fn tags_made_of_allowed_pieces_normalize(tag in "[A-Za-z0-9][A-Za-z0-9.+# _-]{0,40}") {
            let normalized = normalize_tag(&tag);
            proptest::prop_assert!(normalized.is_ok(), "{:?} -> {:?}", tag, normalized);
        }
    }
}
