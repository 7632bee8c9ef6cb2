//! The secret and personal-data scan every write runs before it accepts text (spec §9, error `content_rejected`).
//!
//! A [`ContentScanner`] compiles its patterns once and is then shared (it is `Send + Sync`, so an `Arc`
//! is enough). It answers the first [`ScanFinding`]: which rule matched and in which field. The audit log uses
//! the same scanner to replace every string a rule matches by a marker naming the rule ([`ContentScanner::redact_json`]).
//!
//! Text is matched in a normalized form (see [`ContentScanner::normalized_for_scan`]): Unicode compatibility normalization (NFKC,
//! so fullwidth digits and letters become ASCII), invisible format characters removed (zero-width space and
//! joiners, word joiner, byte order mark, soft hyphen, every other `Cf` character, variation selectors), and
//! Unicode dashes read as `-`. A key split by U+200B or a card number in fullwidth digits is therefore found,
//! while the text itself is stored as written. Findings name the field, which normalization does not change.
//!
//! Invariant: a finding never carries the matched text, and nothing here logs. The text that matched is
//! exactly what must not spread further, so it is not copied into errors, logs or audit records. For the
//! same reason a finding inside a JSON object key names the object that holds the key, not the key.
//!
//! The rules aim at accidental leaks (an agent pasting its `.env`, a log line with a customer's e-mail),
//! not at a determined adversary, and they favour few false positives: technical text full of hashes,
//! UUIDs, dates, versions, IP addresses and documentation placeholders must pass. Each rule lists its
//! deliberate exceptions on its [`ScanRule`] variant; the module tests hold a corpus of harmless text.

use base64::Engine;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use std::borrow::Cow;

use regex::{Regex, RegexSet};
use serde_json::Value;
use unicode_normalization::UnicodeNormalization;

/// What kind of sensitive data a finding is. The order of the variants is the order rules are checked in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ScanRule {
    /// A PEM or PGP private key block: a `-----BEGIN … PRIVATE KEY-----` line (RSA, EC, DSA, OPENSSH,
    /// ENCRYPTED, PGP … BLOCK) followed by key material (at least 32 base64 characters, optionally after
    /// armor headers such as `Proc-Type:` or `Version:`). A bare header with `...` or nothing after it,
    /// as in documentation of the format, is not flagged.
    PrivateKey,
    /// A cloud credential: AWS access key IDs (`AKIA`/`ASIA` + 16), AWS secret keys assigned to
    /// `aws_secret_access_key` (40 base64 characters, also as a JSON object entry), Google API keys
    /// (`AIza` + 35), Azure `AccountKey=`/`SharedAccessKey=` values. AWS's documented examples (anything
    /// containing `EXAMPLE`) are not flagged.
    CloudAccessKey,
    /// An API token with a recognisable prefix: GitHub (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`,
    /// `github_pat_`), Slack (`xoxa-`, `xoxb-`, `xoxp-`, `xoxo-`, `xoxs-`, `xoxr-`), Stripe live keys
    /// (`sk_live_`, `rk_live_`), OpenAI-style `sk-` (including `sk-proj-`), Anthropic `sk-ant-`, GitLab
    /// `glpat-`, npm `npm_`, and this server's own `iak_` keys. Placeholders (a repeated character,
    /// `XXXX`, `EXAMPLE`, `your…`) are not flagged; Slack and `sk-` tokens must contain a digit, so that
    /// `xoxb-your-token` or a CSS class named `sk-…` pass.
    ApiToken,
    /// A JSON Web Token: three base64url segments whose first two decode to JSON objects.
    Jwt,
    /// A URL with a password in it (`scheme://user:password@host`). Not flagged: no password
    /// (`user@host`, `user:@host`); placeholder passwords (`password`, `pass`, `secret`, `changeme`,
    /// `your_password`, `foo`, `bar` and the like, also with digits appended as in `secret123`, `<…>`, `{…}`, `{{…}}`, `[…]`, `${…}`, `$NAME`, `%NAME%`, `%(…)s`,
    /// masks made only of `*`, `x`, `.` or `…`); a password equal to the user name (`postgres:postgres`);
    /// and hosts that cannot be someone else's server: `localhost`, loopback and unspecified addresses,
    /// reserved example domains.
    PasswordInUrl,
    /// A payment card number: 13 to 19 digits, grouped by single spaces or dashes into groups of 3 to 6
    /// digits (one kind of separator), or ungrouped with 13 to 16 digits; starting with 2–6 (the issuer
    /// ranges of the card networks), passing the Luhn check, not one repeated digit, and not part of a
    /// longer dotted or dashed number (a UUID, a decimal fraction), and not a power of two. Ungrouped runs of 17 to 19 digits are
    /// not flagged: in technical text they are 64-bit integers and snowflake IDs.
    CardNumber,
    /// A bank account number in IBAN form: a country code with the registered IBAN length for that country, two
    /// check digits and the account part, written without spaces (`DE89370400440532013000`) or in groups of four
    /// (`DE89 3704 0044 0532 0130 00`), that passes the ISO 13616 mod-97 check. Not flagged: unknown country codes,
    /// the wrong length for the country, a failed check, check digits `00`, `01` or `99`, lowercase letters, and a
    /// run that continues into further letters or digits.
    BankAccount,
    /// A national identification number: a US social security number written `AAA-GG-SSSS` that the SSA could
    /// have issued (area not `000`, `666` or `900`–`999`, group not `00`, serial not `0000`). Not flagged: the
    /// numbers the SSA publishes as never valid (`123-45-6789` and the advertising numbers `078-05-1120` and
    /// `219-09-9999`), nine digits without the dashes, other groupings (ISO dates, versions, ISBNs), and a number
    /// that continues a longer identifier (`ORD-536-22-8451`, `536-22-8451-2`, `536-22-8451.5`).
    NationalId,
    /// A person's e-mail address. Not flagged: role mailboxes (see [`ROLE_MAILBOXES`], also with a
    /// `+tag`), reserved example domains (see [`is_reserved_host`]), domains with a `noreply` label,
    /// domains whose suffix is not on the public suffix list (`icon@2x.png`), SSH algorithm names (see
    /// [`TECHNICAL_NAMESPACE_DOMAINS`]), the user part of a URL (`ssh://git@host`,
    /// `postgres://user@db.example.net`), and logins followed by a path (`deploy@build.acme.io:/srv`,
    /// `name@host.dev/path`).
    EmailAddress,
    /// A person's phone number: international (`+` and 8 to 15 digits, single spaces, dashes or dots
    /// between groups, optionally one parenthesised area code) or North American (`(NNN) NNN-NNNN`,
    /// `NNN-NNN-NNNN`, with area code and exchange starting 2–9). Not flagged: the fictional range
    /// 555-0100 to 555-0199, placeholders with six ascending digits (`+44 1234567`), numbers without
    /// phone punctuation, ISO dates with an expanded year
    /// (`+10000-12-31`), and the integer limits `+2147483647` and `+4294967295`.
    PhoneNumber,
}

impl ScanRule {
    /// Every rule, in the order they are checked.
    pub const ALL: [ScanRule; 10] = [
        ScanRule::PrivateKey,
        ScanRule::CloudAccessKey,
        ScanRule::ApiToken,
        ScanRule::Jwt,
        ScanRule::PasswordInUrl,
        ScanRule::CardNumber,
        ScanRule::BankAccount,
        ScanRule::NationalId,
        ScanRule::EmailAddress,
        ScanRule::PhoneNumber,
    ];

    /// The stable wire name, used in error details.
    pub fn as_str(self) -> &'static str {
        match self {
            ScanRule::PrivateKey => "private_key",
            ScanRule::CloudAccessKey => "cloud_access_key",
            ScanRule::ApiToken => "api_token",
            ScanRule::Jwt => "jwt",
            ScanRule::PasswordInUrl => "password_in_url",
            ScanRule::CardNumber => "card_number",
            ScanRule::BankAccount => "bank_account",
            ScanRule::NationalId => "national_id",
            ScanRule::EmailAddress => "email_address",
            ScanRule::PhoneNumber => "phone_number",
        }
    }

    /// A sentence for the person or agent whose write was rejected, saying what to do about it.
    pub fn description(self) -> &'static str {
        match self {
            ScanRule::PrivateKey => "a private key block; remove the key material",
            ScanRule::CloudAccessKey => {
                "a cloud access key or secret; remove it or use a placeholder such as AKIAXXXXXXXXXXXXXXXX"
            }
            ScanRule::ApiToken => "an API token; remove it or use a placeholder such as ghp_XXXX",
            ScanRule::Jwt => "a JSON Web Token; remove it or shorten it to eyJ...",
            ScanRule::PasswordInUrl => "a URL with a password; remove the password or write user:<password>@host",
            ScanRule::CardNumber => "a payment card number; remove it",
            ScanRule::BankAccount => {
                "a bank account number (IBAN); remove it or use a placeholder such as DE00 0000 0000 0000 0000 00"
            }
            ScanRule::NationalId => {
                "a national identification number (US social security number); remove it or use 123-45-6789"
            }
            ScanRule::EmailAddress => "a personal e-mail address; remove it or use an address at example.com",
            ScanRule::PhoneNumber => "a personal phone number; remove it or use 555-0100 to 555-0199",
        }
    }
}

impl std::fmt::Display for ScanRule {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// One reason to reject a write: the rule that matched and where. It never holds the matched text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanFinding {
    /// Which rule matched.
    pub rule: ScanRule,
    /// The input field, with a JSON-pointer-like path below it for structured fields
    /// (`structured_data/config/token`, `claims/3/text`).
    pub field: String,
}

impl ScanFinding {
    /// A safe message for the rejection error, e.g. "structured_data/token contains an API token; …".
    pub fn message(&self) -> String {
        format!("{} contains {}", self.field, self.rule.description())
    }
}

/// Local parts that name a function rather than a person. Compared in lowercase, without a `+tag`.
pub const ROLE_MAILBOXES: &[&str] = &[
    "abuse",
    "admin",
    "administrator",
    "billing",
    "careers",
    "contact",
    "do-not-reply",
    "donotreply",
    "feedback",
    "git",
    "hello",
    "help",
    "hostmaster",
    "info",
    "jobs",
    "legal",
    "mailer-daemon",
    "marketing",
    "no-reply",
    "noreply",
    "notifications",
    "office",
    "postmaster",
    "press",
    "privacy",
    "root",
    "sales",
    "security",
    "support",
    "team",
    "webmaster",
];

/// Domains used as namespaces for protocol identifiers rather than for mailboxes.
pub const TECHNICAL_NAMESPACE_DOMAINS: &[&str] = &["libssh.org", "openssh.com"];

/// Passwords that stand for "your password here" rather than being one. Compared in lowercase.
const PLACEHOLDER_PASSWORDS: &[&str] = &[
    "bar",
    "baz",
    "changeme",
    "example",
    "foo",
    "my-password",
    "my_password",
    "mypassword",
    "pass",
    "passwd",
    "password",
    "placeholder",
    "pw",
    "pwd",
    "qux",
    "redacted",
    "secret",
    "your-password",
    "your_password",
    "yourpassword",
];

/// Hosts that cannot belong to a third party: loopback, unspecified, and the names RFC 2606
/// and RFC 6761 reserve for documentation and testing.
///
/// `example.com`, `example.org`, `example.net` and their subdomains; any name under `.example`, `.test`,
/// `.invalid`, `.localhost`; `localhost`; `127.0.0.0/8`, `0.0.0.0`, `::1`.
pub fn is_reserved_host(host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host == "localhost" || host == "0.0.0.0" || host == "::1" || host.starts_with("127.") {
        return true;
    }
    for reserved_domain in ["example.com", "example.org", "example.net"] {
        if host == reserved_domain || host.ends_with(&format!(".{reserved_domain}")) {
            return true;
        }
    }
    ["example", "test", "invalid", "localhost"]
        .iter()
        .any(|reserved_top_level| host == *reserved_top_level || host.ends_with(&format!(".{reserved_top_level}")))
}

/// Decodes JWT segments: base64url, padding optional, lenient about unused trailing bits.
const JWT_SEGMENT_ENGINE: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::URL_SAFE,
    GeneralPurposeConfig::new()
        .with_decode_allow_trailing_bits(true)
        .with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// What to check beyond the pattern for one kind of API token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TokenCheck {
    /// The pattern is specific enough; only placeholders are excused.
    PlaceholderOnly,
    /// The token body must also contain a digit, because the prefix also starts ordinary words.
    RequireDigit,
}

/// The compiled patterns of every rule. Build it once with [`ContentScanner::new`] and share it.
#[derive(Debug)]
pub struct ContentScanner {
    /// `-----BEGIN … PRIVATE KEY-----` followed by key material.
    private_key: Regex,
    /// AWS access key IDs.
    aws_access_key_id: Regex,
    /// An AWS secret key written next to its variable name, in any of the usual assignment syntaxes.
    aws_secret_key_assignment: Regex,
    /// The name of the AWS secret key variable, for JSON object entries whose value is scanned apart.
    aws_secret_key_name: Regex,
    /// Exactly an AWS secret key: 40 base64 characters.
    aws_secret_key_value: Regex,
    /// Google API keys.
    google_api_key: Regex,
    /// Azure storage and Service Bus connection-string keys.
    azure_connection_key: Regex,
    /// The token patterns with the extra check each needs; capture group 1 is the random part.
    api_tokens: Vec<(Regex, TokenCheck)>,
    /// Candidates for JSON Web Tokens; segments are decoded afterwards.
    jwt: Regex,
    /// `scheme://user:password@host`; groups: 1 user, 2 password, 3 host.
    password_in_url: Regex,
    /// Digit runs that could be card numbers; checked afterwards.
    card_number: Regex,
    /// The start of a possible IBAN: two capital letters and two digits at a word start; the rest is read by hand.
    iban_start: Regex,
    /// `AAA-GG-SSSS`; groups: 1 area, 2 group, 3 serial.
    social_security_number: Regex,
    /// Characters that do not change what text says: format characters (`Cf`: zero-width space and joiners,
    /// word joiner, byte order mark, soft hyphen, bidirectional marks, tag characters), the combining grapheme
    /// joiner, variation selectors and the Hangul fillers.
    invisible: Regex,
    /// Candidate e-mail addresses; groups: 1 local part, 2 domain.
    email_address: Regex,
    /// Candidate international phone numbers.
    international_phone: Regex,
    /// North American numbers with the area code in parentheses.
    north_american_phone_parenthesised: Regex,
    /// North American numbers written `NNN-NNN-NNNN`.
    north_american_phone_dashed: Regex,
    /// Every pattern a rule of [`ScanRule::ALL`] matches text with, as one set: a rule finds something only where
    /// one of its patterns matches, so text that none matches (most text) is clean after one pass over it, where
    /// the rules one by one made about twenty passes and took a regex cache from a shared pool for each.
    any_rule_pattern: RegexSet,
}

/// Compiles one of the built-in patterns below.
fn compile(pattern: &str) -> Regex {
    // The patterns are literals of this file and a test builds the scanner, so a failure here is a
    // programming error caught before release, never a runtime condition.
    Regex::new(pattern).expect("every built-in scan pattern is a valid regular expression")
}

impl Default for ContentScanner {
    fn default() -> ContentScanner {
        ContentScanner::new()
    }
}

impl ContentScanner {
    /// Compiles every pattern. Takes a few milliseconds; do it once per process and share the result.
    pub fn new() -> ContentScanner {
        // Word boundaries are ASCII-only, `(?-u:\b)`: Unicode word boundaries would push the regex
        // engine off its fast path on non-ASCII text, and every token format here is ASCII anyway.
        let api_token_patterns: [(&str, TokenCheck); 9] = [
            (
                r"(?-u:\b)gh[pousr]_([A-Za-z0-9]{36})(?-u:\b)",
                TokenCheck::PlaceholderOnly,
            ),
            (
                r"(?-u:\b)github_pat_([A-Za-z0-9_]{22,255})",
                TokenCheck::PlaceholderOnly,
            ),
            (r"(?-u:\b)xox[abposr]-([A-Za-z0-9-]{10,})", TokenCheck::RequireDigit),
            (r"(?-u:\b)[rs]k_live_([A-Za-z0-9]{16,})", TokenCheck::PlaceholderOnly),
            (r"(?-u:\b)sk-([A-Za-z0-9_-]{32,})", TokenCheck::RequireDigit),
            (r"(?-u:\b)sk-ant-([A-Za-z0-9_-]{20,})", TokenCheck::RequireDigit),
            (r"(?-u:\b)glpat-([A-Za-z0-9_-]{20,})", TokenCheck::PlaceholderOnly),
            (r"(?-u:\b)npm_([A-Za-z0-9]{36})(?-u:\b)", TokenCheck::PlaceholderOnly),
            (r"(?-u:\b)iak_([A-Za-z0-9_-]{43,})", TokenCheck::PlaceholderOnly),
        ];
        let mut scanner = ContentScanner {
            any_rule_pattern: RegexSet::empty(),
            private_key: compile(
                r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?:\s|\\[rn])*(?:[A-Za-z][A-Za-z-]*:[^\r\n\\]*(?:\s|\\[rn])+)*[A-Za-z0-9+/=]{32}",
            ),
            aws_access_key_id: compile(r"(?-u:\b)(?:AKIA|ASIA)[A-Z0-9]{16}(?-u:\b)"),
            aws_secret_key_assignment: compile(
                r#"(?i:aws_?secret_?(?:access_?)?key)["']?\s*(?:=>|:=|[:=])\s*["']?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)"#,
            ),
            aws_secret_key_name: compile(r"^(?i:aws_?secret_?(?:access_?)?key)$"),
            aws_secret_key_value: compile(r"^\s*([A-Za-z0-9/+]{40})\s*$"),
            google_api_key: compile(r"(?-u:\b)AIza[0-9A-Za-z_-]{35}"),
            azure_connection_key: compile(r"(?i:AccountKey|SharedAccessKey)=[A-Za-z0-9+/]{40,}"),
            api_tokens: api_token_patterns
                .into_iter()
                .map(|(pattern, check)| (compile(pattern), check))
                .collect(),
            jwt: compile(r"(?-u:\b)(eyJ[A-Za-z0-9_-]{2,})\.(eyJ[A-Za-z0-9_-]{2,})\.[A-Za-z0-9_-]*"),
            password_in_url: compile(
                r#"(?-u:\b)[A-Za-z][A-Za-z0-9+.-]{0,31}://([^\s:/?#@]*):([^\s/?#@]+)@(\[[0-9A-Fa-f:.]+\]|[^\s/?#:@\[\]"'<>()`,;\\]+)"#,
            ),
            card_number: compile(r"(?-u:\b)[0-9](?:[ -]?[0-9]){12,18}(?-u:\b)"),
            iban_start: compile(r"(?-u:\b)[A-Z]{2}[0-9]{2}"),
            social_security_number: compile(r"(?-u:\b)([0-9]{3})-([0-9]{2})-([0-9]{4})(?-u:\b)"),
            invisible: compile(
                r"[\p{Cf}\x{034F}\x{115F}\x{1160}\x{3164}\x{FFA0}\x{FE00}-\x{FE0F}\x{E0100}-\x{E01EF}]+",
            ),
            email_address: compile(
                r"(?-u:\b)([A-Za-z0-9][A-Za-z0-9._%+-]{0,63})@((?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63})(?-u:\b)",
            ),
            // `\B` before `+`: the plus sign is not a word character, so this asks that no word character
            // comes right before it, which keeps `1+23456789` and semver build metadata out.
            international_phone: compile(r"(?-u:\B)\+[0-9]{1,4}(?:[ .-]?\([0-9]{1,5}\))?(?:[ .-]?[0-9]+)+"),
            north_american_phone_parenthesised: compile(r"\([2-9][0-9]{2}\) ?[2-9][0-9]{2}-[0-9]{4}(?-u:\b)"),
            north_american_phone_dashed: compile(r"(?-u:\b)[2-9][0-9]{2}-[2-9][0-9]{2}-[0-9]{4}(?-u:\b)"),
        };
        scanner.any_rule_pattern = RegexSet::new(scanner.rule_patterns().map(Regex::as_str))
            .expect("the rules' patterns compiled one by one, so they compile as a set");
        scanner
    }

    /// The patterns the rules of [`ScanRule::ALL`] match text with (see [`ScanRule`] and `rule_matches`); not the
    /// ones that only prepare text or read JSON entries.
    fn rule_patterns(&self) -> impl Iterator<Item = &Regex> {
        [
            &self.private_key,
            &self.aws_access_key_id,
            &self.aws_secret_key_assignment,
            &self.google_api_key,
            &self.azure_connection_key,
            &self.jwt,
            &self.password_in_url,
            &self.card_number,
            &self.iban_start,
            &self.social_security_number,
            &self.email_address,
            &self.international_phone,
            &self.north_american_phone_parenthesised,
            &self.north_american_phone_dashed,
        ]
        .into_iter()
        .chain(self.api_tokens.iter().map(|(pattern, _)| pattern))
    }

    /// The first finding in one text field, checking rules in the order of [`ScanRule::ALL`].
    pub fn scan_text(&self, field: &str, text: &str) -> Option<ScanFinding> {
        self.first_rule_matching(text).map(|rule| ScanFinding {
            rule,
            field: field.to_owned(),
        })
    }

    /// The first finding in a JSON value: every string, every object key and every integer, depth first
    /// in document order. The finding's field is `field` followed by the JSON pointer of the value
    /// (`structured_data/config/token`); for a finding in an object key, the pointer of that object.
    pub fn scan_json(&self, field: &str, value: &Value) -> Option<ScanFinding> {
        let mut path = field.to_owned();
        self.scan_json_at(&mut path, value)
    }

    /// The first finding over several `(field, text)` pairs, in the order given.
    pub fn scan_fields<'a>(&self, fields: impl IntoIterator<Item = (&'a str, &'a str)>) -> Option<ScanFinding> {
        fields.into_iter().find_map(|(field, text)| self.scan_text(field, text))
    }

    fn scan_json_at(&self, path: &mut String, value: &Value) -> Option<ScanFinding> {
        match value {
            Value::String(text) => self.scan_text(path, text),
            // Card numbers are sometimes stored as JSON numbers; nothing else fits in one.
            Value::Number(number) => self.scan_text(path, &number.to_string()),
            Value::Null | Value::Bool(_) => None,
            Value::Array(items) => items.iter().enumerate().find_map(|(index, item)| {
                let parent_length = path.len();
                path.push('/');
                path.push_str(&index.to_string());
                let finding = self.scan_json_at(path, item);
                path.truncate(parent_length);
                finding
            }),
            Value::Object(entries) => entries.iter().find_map(|(key, item)| {
                // The key is checked before it becomes part of any reported path, so a path never
                // contains a key that matched a rule.
                if let Some(rule) = self.first_rule_matching(key) {
                    return Some(ScanFinding {
                        rule,
                        field: path.clone(),
                    });
                }
                let parent_length = path.len();
                path.push('/');
                push_json_pointer_segment(path, key);
                let finding = match item {
                    Value::String(text) if self.is_aws_secret_entry(key, text) => Some(ScanFinding {
                        rule: ScanRule::CloudAccessKey,
                        field: path.clone(),
                    }),
                    _ => self.scan_json_at(path, item),
                };
                path.truncate(parent_length);
                finding
            }),
        }
    }

    /// `{"aws_secret_access_key": "…40 characters…"}`: the name and the value are separate strings in
    /// JSON, so the assignment pattern cannot see them together.
    fn is_aws_secret_entry(&self, key: &str, value: &str) -> bool {
        self.aws_secret_key_name.is_match(&self.normalized_for_scan(key))
            && self
                .aws_secret_key_value
                .captures(&self.normalized_for_scan(value))
                .and_then(|captures| captures.get(1))
                .is_some_and(|secret| !is_placeholder_token(secret.as_str()))
    }

    /// The first rule that matches `text`, checking rules in the order of [`ScanRule::ALL`].
    pub fn rule_matching(&self, text: &str) -> Option<ScanRule> {
        self.first_rule_matching(text)
    }

    /// A copy of `value` in which every string, object key and number that a rule matches is replaced by
    /// [`redaction_marker`] (for a key, [`redacted_key_marker`]), with the replaced texts and their rules. An object
    /// entry `"aws_secret_access_key": "…"` counts as a match of its value, as in [`ContentScanner::scan_json`].
    pub fn redact_json(&self, value: &Value) -> Redaction {
        let mut removed = Vec::new();
        let value = self.redact_json_into(value, &mut removed);
        Redaction { value, removed }
    }

    fn redact_json_into(&self, value: &Value, removed: &mut Vec<(String, ScanRule)>) -> Value {
        match value {
            Value::String(text) => self.redacted_text(text, removed).unwrap_or_else(|| value.clone()),
            // Card numbers are sometimes written as JSON numbers.
            Value::Number(number) => self
                .redacted_text(&number.to_string(), removed)
                .unwrap_or_else(|| value.clone()),
            Value::Null | Value::Bool(_) => value.clone(),
            Value::Array(items) => {
                Value::Array(items.iter().map(|item| self.redact_json_into(item, removed)).collect())
            }
            Value::Object(entries) => {
                let mut redacted = serde_json::Map::new();
                for (key, item) in entries {
                    let item = match item {
                        Value::String(text) if self.is_aws_secret_entry(key, text) => {
                            removed.push((text.clone(), ScanRule::CloudAccessKey));
                            Value::String(redaction_marker(ScanRule::CloudAccessKey))
                        }
                        _ => self.redact_json_into(item, removed),
                    };
                    let key = match self.first_rule_matching(key) {
                        Some(rule) => {
                            removed.push((key.clone(), rule));
                            // Two redacted keys of one object must stay two entries.
                            let marker = redacted_key_marker(rule);
                            let mut unique = marker.clone();
                            let mut number = 1;
                            while redacted.contains_key(&unique) || entries.contains_key(&unique) {
                                number += 1;
                                unique = format!("{marker} #{number}");
                            }
                            unique
                        }
                        None => key.clone(),
                    };
                    redacted.insert(key, item);
                }
                Value::Object(redacted)
            }
        }
    }

    /// The marker for `text` if a rule matches it (noting the text and rule in `removed`).
    fn redacted_text(&self, text: &str, removed: &mut Vec<(String, ScanRule)>) -> Option<Value> {
        let rule = self.first_rule_matching(text)?;
        removed.push((text.to_owned(), rule));
        Some(Value::String(redaction_marker(rule)))
    }

    /// `text` as the rules see it: NFKC-normalized, without invisible characters, with Unicode dashes as `-`.
    /// ASCII text is already in this form and is returned as it is, without copying.
    pub fn normalized_for_scan<'text>(&self, text: &'text str) -> Cow<'text, str> {
        if text.is_ascii() {
            return Cow::Borrowed(text);
        }
        let composed: String = text.nfkc().collect();
        let visible = self.invisible.replace_all(&composed, "");
        Cow::Owned(
            visible
                .chars()
                .map(|character| match character {
                    // Hyphen, non-breaking hyphen, figure dash, en dash, em dash, horizontal bar, minus sign.
                    '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
                    other => other,
                })
                .collect(),
        )
    }

    fn first_rule_matching(&self, text: &str) -> Option<ScanRule> {
        let text = self.normalized_for_scan(text);
        if !self.any_rule_pattern.is_match(&text) {
            return None;
        }
        ScanRule::ALL.into_iter().find(|rule| self.rule_matches(*rule, &text))
    }

    fn rule_matches(&self, rule: ScanRule, text: &str) -> bool {
        match rule {
            ScanRule::PrivateKey => self.private_key.is_match(text),
            ScanRule::CloudAccessKey => self.contains_cloud_access_key(text),
            ScanRule::ApiToken => self.contains_api_token(text),
            ScanRule::Jwt => self.contains_jwt(text),
            ScanRule::PasswordInUrl => self.contains_password_in_url(text),
            ScanRule::CardNumber => self.contains_card_number(text),
            ScanRule::BankAccount => self.contains_iban(text),
            ScanRule::NationalId => self.contains_social_security_number(text),
            ScanRule::EmailAddress => self.contains_personal_email_address(text),
            ScanRule::PhoneNumber => self.contains_phone_number(text),
        }
    }

    fn contains_cloud_access_key(&self, text: &str) -> bool {
        let access_key_id = self
            .aws_access_key_id
            .find_iter(text)
            .any(|candidate| !is_placeholder_token(candidate.as_str()));
        access_key_id
            || self
                .aws_secret_key_assignment
                .captures_iter(text)
                .filter_map(|captures| captures.get(1))
                .any(|secret| !is_placeholder_token(secret.as_str()))
            || self
                .google_api_key
                .find_iter(text)
                .any(|candidate| !is_placeholder_token(candidate.as_str()))
            || self
                .azure_connection_key
                .find_iter(text)
                .any(|candidate| !is_placeholder_token(candidate.as_str()))
    }

    fn contains_api_token(&self, text: &str) -> bool {
        self.api_tokens.iter().any(|(pattern, check)| {
            pattern
                .captures_iter(text)
                .filter_map(|captures| captures.get(1))
                .any(|body| {
                    let body = body.as_str();
                    !is_placeholder_token(body)
                        && (*check != TokenCheck::RequireDigit || body.bytes().any(|byte| byte.is_ascii_digit()))
                })
        })
    }

    fn contains_jwt(&self, text: &str) -> bool {
        self.jwt.captures_iter(text).any(|captures| {
            let decodes_to_object = |index: usize| {
                captures
                    .get(index)
                    .is_some_and(|segment| base64url_json_object(segment.as_str()))
            };
            decodes_to_object(1) && decodes_to_object(2)
        })
    }

    fn contains_password_in_url(&self, text: &str) -> bool {
        self.password_in_url.captures_iter(text).any(|captures| {
            let (Some(user), Some(password), Some(host)) = (captures.get(1), captures.get(2), captures.get(3)) else {
                return false;
            };
            !is_placeholder_password(password.as_str())
                && password.as_str() != user.as_str()
                && !is_reserved_host(host.as_str())
        })
    }

    fn contains_card_number(&self, text: &str) -> bool {
        self.card_number.find_iter(text).any(|candidate| {
            let digits: Vec<u8> = candidate
                .as_str()
                .bytes()
                .filter(u8::is_ascii_digit)
                .map(|byte| byte - b'0')
                .collect();
            let issuer_range = matches!(digits.first(), Some(2..=6));
            let one_repeated_digit = digits.windows(2).all(|pair| pair[0] == pair[1]);
            issuer_range
                && !one_repeated_digit
                && is_card_grouping(candidate.as_str(), digits.len())
                && !is_power_of_two(&digits)
                && passes_luhn(&digits)
                && !is_inside_longer_number(text, candidate.start(), candidate.end())
        })
    }

    fn contains_iban(&self, text: &str) -> bool {
        self.iban_start.find_iter(text).any(|start| {
            let country = &text[start.start()..start.start() + 2];
            iban_length(country)
                .and_then(|length| iban_at(&text[start.start()..], length))
                .is_some_and(|iban| passes_iban_check(&iban))
        })
    }

    fn contains_social_security_number(&self, text: &str) -> bool {
        self.social_security_number.captures_iter(text).any(|captures| {
            let (Some(whole), Some(area), Some(group), Some(serial)) =
                (captures.get(0), captures.get(1), captures.get(2), captures.get(3))
            else {
                return false;
            };
            let area = area.as_str();
            let issuable = area != "000"
                && area != "666"
                && !area.starts_with('9')
                && group.as_str() != "00"
                && serial.as_str() != "0000";
            let continues_identifier = text[..whole.start()].ends_with(['-', '.', '+', '#'])
                || is_inside_longer_number(text, whole.start(), whole.end());
            issuable && !continues_identifier && !NEVER_ISSUED_SOCIAL_SECURITY_NUMBERS.contains(&whole.as_str())
        })
    }

    fn contains_personal_email_address(&self, text: &str) -> bool {
        self.email_address.captures_iter(text).any(|captures| {
            let (Some(whole), Some(local_part), Some(domain)) = (captures.get(0), captures.get(1), captures.get(2))
            else {
                return false;
            };
            !is_in_url_authority(text, whole.start())
                && !continues_as_path(&text[whole.end()..])
                && is_personal_mailbox(local_part.as_str(), domain.as_str())
        })
    }

    fn contains_phone_number(&self, text: &str) -> bool {
        let international = self.international_phone.find_iter(text).any(|candidate| {
            let digit_count = candidate.as_str().bytes().filter(u8::is_ascii_digit).count();
            let followed_by_word = text[candidate.end()..]
                .chars()
                .next()
                .is_some_and(|next| next.is_alphanumeric() || next == '_');
            (8..=15).contains(&digit_count)
                && !followed_by_word
                && !is_expanded_year_date(candidate.as_str())
                && !INTEGER_LIMITS.contains(&candidate.as_str())
                && !has_counting_digits(candidate.as_str())
        });
        international
            || self
                .north_american_phone_parenthesised
                .find_iter(text)
                .any(|candidate| !is_fictional_north_american_number(candidate.as_str()))
            || self.north_american_phone_dashed.find_iter(text).any(|candidate| {
                !is_fictional_north_american_number(candidate.as_str())
                    && !is_inside_longer_number(text, candidate.start(), candidate.end())
                    && !text[..candidate.start()].ends_with(['-', '.'])
            })
    }
}

/// Appends one JSON pointer reference token (RFC 6901): `~` becomes `~0` and `/` becomes `~1`.
fn push_json_pointer_segment(path: &mut String, segment: &str) {
    for character in segment.chars() {
        match character {
            '~' => path.push_str("~0"),
            '/' => path.push_str("~1"),
            other => path.push(other),
        }
    }
}

/// Whether `position` lies in the authority of a URL (`scheme://user:password@host`), before any path.
/// An address-shaped `user@host` there is a login name, not a mailbox; a password there is the concern
/// of [`ScanRule::PasswordInUrl`].
fn is_in_url_authority(text: &str, position: usize) -> bool {
    // Looking back a bounded distance keeps the scan linear on long texts without whitespace.
    let mut window_start = position.saturating_sub(512);
    while !text.is_char_boundary(window_start) {
        window_start += 1;
    }
    let preceding = &text[window_start..position];
    let word_start = preceding
        .char_indices()
        .rev()
        .find(|(_, character)| {
            character.is_whitespace() || matches!(character, '(' | '<' | '"' | '\'' | '`' | '[' | ']' | ',' | ';' | '=')
        })
        .map_or(0, |(index, character)| index + character.len_utf8());
    let word = &preceding[word_start..];
    word.find("://")
        .is_some_and(|separator| !word[separator + 3..].contains('/'))
}

/// Whether what follows an address-shaped `user@host` makes it a login and path rather than a mailbox:
/// `deploy@build.acme.io:/srv/app` (scp), `friends-mcp@ouro.bot/friends` (a package path).
fn continues_as_path(following: &str) -> bool {
    let mut characters = following.chars();
    match characters.next() {
        Some('/') => true,
        Some(':') => characters.next().is_some_and(|next| !next.is_whitespace()),
        _ => false,
    }
}

/// Whether a token-shaped string is a documentation placeholder rather than a credential.
fn is_placeholder_token(token: &str) -> bool {
    let lowercase = token.to_ascii_lowercase();
    let mut characters = lowercase.chars().filter(|character| character.is_ascii_alphanumeric());
    let one_repeated_character = match characters.next() {
        Some(first) => characters.all(|character| character == first),
        None => true,
    };
    one_repeated_character
        || lowercase.contains("xxxx")
        || lowercase.contains("example")
        || lowercase.contains("your")
        || lowercase.contains("placeholder")
        || lowercase.contains("redacted")
}

/// Whether the password part of a URL stands for a password instead of being one.
fn is_placeholder_password(password: &str) -> bool {
    let lowercase = password.to_ascii_lowercase();
    // `password123` and `secret1` are the same placeholders with a digit suffix.
    let without_digit_suffix = lowercase.trim_end_matches(|character: char| character.is_ascii_digit());
    if PLACEHOLDER_PASSWORDS.contains(&without_digit_suffix) {
        return true;
    }
    let wrapped_in = |open: &str, close: &str| {
        lowercase.len() >= open.len() + close.len() && lowercase.starts_with(open) && lowercase.ends_with(close)
    };
    let template = wrapped_in("<", ">")
        || wrapped_in("{", "}")
        || wrapped_in("[", "]")
        || wrapped_in("${", "}")
        || wrapped_in("$(", ")")
        || wrapped_in("%(", ")s")
        || wrapped_in("%", "%");
    let environment_variable = password.strip_prefix('$').is_some_and(|name| {
        !name.is_empty()
            && name
                .chars()
                .all(|character| character.is_ascii_uppercase() || character.is_ascii_digit() || character == '_')
    });
    let mask = password
        .chars()
        .all(|character| matches!(character, '*' | 'x' | 'X' | '.' | '…' | '•'));
    template || environment_variable || mask
}

/// Whether a base64url segment decodes to a JSON object, as a JWT header and payload do.
fn base64url_json_object(segment: &str) -> bool {
    JWT_SEGMENT_ENGINE
        .decode(segment)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
        .is_some_and(|decoded| decoded.is_object())
}

/// Whether digits are grouped the way card numbers are printed: either one run of 13 to 16 digits (longer
/// runs are far more often 64-bit integers and snowflake IDs than 19-digit cards), or groups of 3 to 6
/// digits joined by one kind of separator (4-4-4-4, 4-6-5, 4-4-4-4-3), not `0 1 2 3 4 …`.
fn is_card_grouping(candidate: &str, digit_count: usize) -> bool {
    let uses_spaces = candidate.contains(' ');
    let uses_dashes = candidate.contains('-');
    match (uses_spaces, uses_dashes) {
        (false, false) => digit_count <= 16,
        (true, true) => false,
        _ => candidate.split([' ', '-']).all(|group| (3..=6).contains(&group.len())),
    }
}

/// Powers of two are constants (`35184372088832` is 2^45), whatever Luhn says about them.
fn is_power_of_two(digits: &[u8]) -> bool {
    let value = digits.iter().try_fold(0_u64, |value, digit| {
        value.checked_mul(10)?.checked_add(u64::from(*digit))
    });
    value.is_some_and(u64::is_power_of_two)
}

/// The Luhn checksum every payment card number satisfies.
fn passes_luhn(digits: &[u8]) -> bool {
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(position, digit)| {
            let digit = u32::from(*digit);
            if position % 2 == 1 {
                let doubled = digit * 2;
                if doubled > 9 { doubled - 9 } else { doubled }
            } else {
                digit
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

/// Whether the digits at `start..end` continue a longer number through a dot or dash, as in a UUID
/// made of digits, a decimal fraction or a dotted version: then they are not a number on their own.
fn is_inside_longer_number(text: &str, start: usize, end: usize) -> bool {
    let before = &text.as_bytes()[..start];
    let after = &text.as_bytes()[end..];
    let continues_before = matches!(before, [.., digit, b'.' | b'-'] if digit.is_ascii_digit());
    let continues_after = matches!(after, [b'.' | b'-', digit, ..] if digit.is_ascii_digit());
    continues_before || continues_after
}

/// Signed integer limits that technical text writes with a plus sign, e.g. "-2147483648 to +2147483647".
const INTEGER_LIMITS: &[&str] = &["+2147483647", "+4294967295"];

/// Placeholder numbers count: `+44 1234567`, `+1 234 567 890`. Six ascending digits in a row are
/// vanishingly rare in real numbers.
fn has_counting_digits(candidate: &str) -> bool {
    let digits: String = candidate.chars().filter(char::is_ascii_digit).collect();
    ["123456", "234567", "345678", "456789"]
        .iter()
        .any(|run| digits.contains(run))
}

/// What [`ContentScanner::redact_json`] made of a JSON value.
#[derive(Debug, Clone, PartialEq)]
pub struct Redaction {
    /// The value with every matching string, key and number replaced by a marker.
    pub value: Value,
    /// The replaced texts (numbers in their JSON form) with the rule each matched, in document order. They are
    /// the secrets themselves: use them to scrub other text, never store or log them.
    pub removed: Vec<(String, ScanRule)>,
}

/// How every marker starts.
const REDACTION_MARKER_START: &str = "[redacted";

/// What replaces a string that a rule matched: `[redacted: api_token]`. It names the rule, never the text.
pub fn redaction_marker(rule: ScanRule) -> String {
    format!("{REDACTION_MARKER_START}: {rule}]")
}

/// What replaces an object key that a rule matched: `[redacted key: email_address]`.
pub fn redacted_key_marker(rule: ScanRule) -> String {
    format!("{REDACTION_MARKER_START} key: {rule}]")
}

/// Social security numbers the SSA states were never valid: the one every form uses as its example, and the two
/// printed in advertisements (a wallet insert, a brochure) and voided afterwards.
const NEVER_ISSUED_SOCIAL_SECURITY_NUMBERS: &[&str] = &["123-45-6789", "078-05-1120", "219-09-9999"];

/// IBAN lengths by country code, from the SWIFT IBAN registry.
const IBAN_LENGTHS: &[(&str, usize)] = &[
    ("AD", 24),
    ("AE", 23),
    ("AL", 28),
    ("AT", 20),
    ("AZ", 28),
    ("BA", 20),
    ("BE", 16),
    ("BG", 22),
    ("BH", 22),
    ("BI", 27),
    ("BR", 29),
    ("BY", 28),
    ("CH", 21),
    ("CR", 22),
    ("CY", 28),
    ("CZ", 24),
    ("DE", 22),
    ("DJ", 27),
    ("DK", 18),
    ("DO", 28),
    ("EE", 20),
    ("EG", 29),
    ("ES", 24),
    ("FI", 18),
    ("FK", 18),
    ("FO", 18),
    ("FR", 27),
    ("GB", 22),
    ("GE", 22),
    ("GI", 23),
    ("GL", 18),
    ("GR", 27),
    ("GT", 28),
    ("HN", 28),
    ("HR", 21),
    ("HU", 28),
    ("IE", 22),
    ("IL", 23),
    ("IQ", 23),
    ("IS", 26),
    ("IT", 27),
    ("JO", 30),
    ("KW", 30),
    ("KZ", 20),
    ("LB", 28),
    ("LC", 32),
    ("LI", 21),
    ("LT", 20),
    ("LU", 20),
    ("LV", 21),
    ("LY", 25),
    ("MC", 27),
    ("MD", 24),
    ("ME", 22),
    ("MK", 19),
    ("MN", 20),
    ("MR", 27),
    ("MT", 31),
    ("MU", 30),
    ("NI", 28),
    ("NL", 18),
    ("NO", 15),
    ("OM", 23),
    ("PK", 24),
    ("PL", 28),
    ("PS", 29),
    ("PT", 25),
    ("QA", 29),
    ("RO", 24),
    ("RS", 22),
    ("RU", 33),
    ("SA", 24),
    ("SC", 31),
    ("SD", 18),
    ("SE", 24),
    ("SI", 19),
    ("SK", 24),
    ("SM", 27),
    ("SO", 23),
    ("ST", 25),
    ("SV", 28),
    ("TL", 23),
    ("TN", 24),
    ("TR", 26),
    ("UA", 29),
    ("VA", 22),
    ("VG", 24),
    ("XK", 20),
    ("YE", 30),
];

/// The IBAN length of a country, if it has IBANs.
fn iban_length(country: &str) -> Option<usize> {
    IBAN_LENGTHS
        .iter()
        .find(|(code, _)| *code == country)
        .map(|(_, length)| *length)
}

/// The IBAN of `length` characters that `text` starts with, without its spaces: either written in one run or in
/// groups of four separated by single spaces (the last group may be shorter). The character after it must not be a
/// letter or digit, so a longer run is not read as an IBAN with something after it.
fn iban_at(text: &str, length: usize) -> Option<String> {
    let bytes = text.as_bytes();
    let is_iban_character = |byte: &u8| byte.is_ascii_uppercase() || byte.is_ascii_digit();
    let compact_end = bytes
        .iter()
        .position(|byte| !is_iban_character(byte))
        .unwrap_or(bytes.len());
    if compact_end == length {
        return Some(text[..length].to_owned());
    }
    if compact_end != 4 {
        return None;
    }
    // Grouped: `CCdd AAAA BBBB …`.
    let mut iban = String::with_capacity(length);
    let mut position = 0;
    while iban.len() < length {
        let group_end = (position + 4).min(position + length - iban.len());
        let group = bytes.get(position..group_end)?;
        if !group.iter().all(is_iban_character) {
            return None;
        }
        iban.push_str(&text[position..group_end]);
        position = group_end;
        if iban.len() < length {
            if bytes.get(position) != Some(&b' ') {
                return None;
            }
            position += 1;
        }
    }
    match bytes.get(position) {
        Some(next) if next.is_ascii_alphanumeric() => None,
        _ => Some(iban),
    }
}

/// The ISO 13616 check: check digits from 02 to 98, and the number formed by moving the first four characters to
/// the end and reading letters as 10 to 35 leaves remainder 1 when divided by 97.
fn passes_iban_check(iban: &str) -> bool {
    let check_digits = &iban[2..4];
    if matches!(check_digits, "00" | "01" | "99") {
        return false;
    }
    let rearranged = iban[4..].bytes().chain(iban[..4].bytes());
    let mut remainder: u32 = 0;
    for byte in rearranged {
        let value = match byte {
            b'0'..=b'9' => u32::from(byte - b'0'),
            b'A'..=b'Z' => u32::from(byte - b'A') + 10,
            _ => return false,
        };
        let scale = if value >= 10 { 100 } else { 10 };
        remainder = (remainder * scale + value) % 97;
    }
    remainder == 1
}

/// ISO 8601 dates with an expanded year carry a sign: `+10000-12-31`, `+002016-07-08 01:46`.
fn is_expanded_year_date(candidate: &str) -> bool {
    let digit_run = |text: &str| text.bytes().take_while(u8::is_ascii_digit).count();
    let rest = candidate.trim_start_matches('+');
    let year = digit_run(rest);
    let Some(rest) = rest[year..].strip_prefix('-') else {
        return false;
    };
    let month = digit_run(rest);
    let Some(rest) = rest[month..].strip_prefix('-') else {
        return false;
    };
    let day = digit_run(rest);
    let after_day = rest[day..].chars().next();
    year >= 4
        && (1..=2).contains(&month)
        && (1..=2).contains(&day)
        && after_day.is_none_or(|next| next == ' ' || next == 'T')
}

/// 555-0100 to 555-0199 are reserved for fiction and examples in North America.
fn is_fictional_north_american_number(number: &str) -> bool {
    let digits: String = number.chars().filter(char::is_ascii_digit).collect();
    digits.len() == 10 && digits[3..].starts_with("55501")
}

/// Whether an address most likely reaches one person rather than a role, a test domain or nothing.
fn is_personal_mailbox(local_part: &str, domain: &str) -> bool {
    let local_part = local_part.to_ascii_lowercase();
    let mailbox = local_part.split('+').next().unwrap_or_default();
    if ROLE_MAILBOXES.contains(&mailbox) {
        return false;
    }
    let domain = domain.to_ascii_lowercase();
    if is_reserved_host(&domain) {
        return false;
    }
    if domain.split('.').any(|label| label == "noreply" || label == "no-reply") {
        return false;
    }
    // SSH names its algorithms and extensions `name@openssh.com` (`chacha20-poly1305@openssh.com`).
    if TECHNICAL_NAMESPACE_DOMAINS.contains(&domain.as_str()) {
        return false;
    }
    // `icon@2x.png` and `name@host.internal` look like addresses, but `.png` and `.internal` are not
    // suffixes anyone can register under, so no mailbox can be there.
    psl::suffix(domain.as_bytes()).is_some_and(|suffix| suffix.is_known())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn scanner() -> ContentScanner {
        ContentScanner::new()
    }

    /// The rule that fires on `text`, if any.
    fn rule_of(text: &str) -> Option<ScanRule> {
        scanner().scan_text("body_markdown", text).map(|finding| finding.rule)
    }

    fn assert_flags(rule: ScanRule, text: &str) {
        let finding = scanner().scan_text("body_markdown", text);
        assert_eq!(
            finding,
            Some(ScanFinding {
                rule,
                field: "body_markdown".to_owned()
            }),
            "expected {rule} in {text:?}"
        );
    }

    fn assert_passes(text: &str) {
        assert_eq!(rule_of(text), None, "unexpected finding in {text:?}");
    }

    /// Builds secrets at run time, so that this file does not itself look like a leak to other scanners.
    fn joined(parts: &[&str]) -> String {
        parts.concat()
    }

    #[test]
    fn the_one_pass_over_clean_text_holds_every_pattern_a_rule_matches_with() {
        let scanner = scanner();
        // Every `Regex` of the scanner but the three that prepare text or read JSON entries (`invisible`,
        // `aws_secret_key_name`, `aws_secret_key_value`): 14 fields and the 9 token patterns.
        assert_eq!(scanner.any_rule_pattern.len(), 14 + 9);
        let patterns: Vec<&str> = scanner.rule_patterns().map(Regex::as_str).collect();
        assert_eq!(scanner.any_rule_pattern.patterns(), &patterns[..]);
        // Clean text goes through the one pass and nothing else; text a pattern matches but no rule accepts (a
        // fictional number, a placeholder key) still goes through the rules.
        assert!(
            !scanner
                .any_rule_pattern
                .is_match("Rotate the signing key of replica set 7 in four minutes.")
        );
        assert!(scanner.any_rule_pattern.is_match("Call (555) 555-0123."));
        assert_passes("Call (555) 555-0123.");
    }

    // Positive examples, two or more per rule, each with its field checked.

    #[test]
    fn private_key_blocks_are_flagged() {
        let rsa = joined(&[
            "-----BEGIN RSA ",
            "PRIVATE KEY-----\nMIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi8Q1cVbI0PsGSa0HpZ0EJ2\n-----END RSA PRIVATE KEY-----",
        ]);
        assert_flags(ScanRule::PrivateKey, &rsa);
        let openssh = joined(&[
            "key:\n```\n-----BEGIN OPENSSH ",
            "PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n```",
        ]);
        assert_flags(ScanRule::PrivateKey, &openssh);
        let encrypted = joined(&[
            "-----BEGIN EC ",
            "PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,9F4E0A1B2C3D4E5F\n\nMHcCAQEEIIrYSSNQFaA2Hwf1duRSxKtLYX5CB04fSeQ6tF1aY/PuoAoGCCqGSM49",
        ]);
        assert_flags(ScanRule::PrivateKey, &encrypted);
        let pgp = joined(&[
            "-----BEGIN PGP ",
            "PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\nlQOYBF8s1aQBCADJ2x6n5T0rq2A3X1L9hU3o6u7J8kq9cM2Yw4Zp5Ve",
        ]);
        assert_flags(ScanRule::PrivateKey, &pgp);
        let escaped_in_json_source = joined(&[
            r#"{"private_key": "-----BEGIN "#,
            r#"PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n"}"#,
        ]);
        assert_flags(ScanRule::PrivateKey, &escaped_in_json_source);
    }

    #[test]
    fn cloud_access_keys_are_flagged() {
        assert_flags(
            ScanRule::CloudAccessKey,
            &joined(&["export AWS_ACCESS_KEY_ID=AKIA", "Q3EGTLZ7KRW4WN5B"]),
        );
        assert_flags(
            ScanRule::CloudAccessKey,
            &joined(&["session key ASIA", "Y34FZKBOKMUTVV7A here"]),
        );
        assert_flags(
            ScanRule::CloudAccessKey,
            &joined(&["aws_secret_access_key = ", "Zq8Kd93jVb1/Lm0Rx7Ty5Nw2Pq4Hs6Jk8Gf0Da3S"]),
        );
        assert_flags(
            ScanRule::CloudAccessKey,
            &joined(&[
                r#""AWS_SECRET_ACCESS_KEY": ""#,
                r#"Zq8Kd93jVb1/Lm0Rx7Ty5Nw2Pq4Hs6Jk8Gf0Da3S""#,
            ]),
        );
        assert_flags(
            ScanRule::CloudAccessKey,
            &joined(&["const key = \"AIza", "SyD4kR2mN8pQ1vX7wT5zB3cH6jL9fG0aE2s\";"]),
        );
        assert_flags(
            ScanRule::CloudAccessKey,
            &joined(&[
                "DefaultEndpointsProtocol=https;AccountName=store;AccountKey=",
                "Kq7mZ2rT9vB4nX1pL6wS3dF8hJ0cY5gA2eR7tU9iO4kM1qW6zN3xV8bC5jH0lP2sD7fG4yT9rE1wQ6uI3oA==;",
            ]),
        );
    }

    #[test]
    fn api_tokens_are_flagged() {
        let examples = [
            joined(&["token: ghp_", "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"]),
            joined(&["gho_", "1234567890abcdefghijABCDEFGHIJ123456"]),
            joined(&[
                "github_pat_",
                "11ABCDEFG0123456789abc_defghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRS",
            ]),
            joined(&["SLACK_TOKEN=xoxb-", "17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy"]),
            joined(&["stripe.api_key = \"sk_live_", "4eC39HqLyjWDarjtT1zdp7dc\""]),
            joined(&["rk_live_", "51H8sQ2eZvKYlo2C0aBcDeFgHiJ"]),
            joined(&["OPENAI_API_KEY=sk-", "proj-Ab3De5Gh7Jk9Mn1Pq3St5Vw7Yz9Bc1Ef3Hi5"]),
            joined(&["sk-", "T3BlbkFJ1234567890abcdefghijklmnopqrstuvwx"]),
            joined(&["ANTHROPIC_API_KEY=sk-ant-", "api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe"]),
            joined(&["glpat-", "Xy12Ab34Cd56Ef78Gh90"]),
            joined(&[
                "//registry.npmjs.org/:_authToken=npm_",
                "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
            ]),
            joined(&[
                "Authorization: Bearer iak_",
                "Qm9vbGVhbjEyMzQ1Njc4OTBhYmNkZWZnaGlqa2xtbm8",
            ]),
        ];
        for example in &examples {
            assert_flags(ScanRule::ApiToken, example);
        }
    }

    #[test]
    fn json_web_tokens_are_flagged() {
        let jwt_io_example = joined(&[
            "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
            ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ",
            ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
        ]);
        assert_flags(ScanRule::Jwt, &format!("Authorization: Bearer {jwt_io_example}"));
        // An unsigned token (`alg: none`) has an empty third segment and still carries claims.
        let unsigned = joined(&["eyJhbGciOiJub25lIn0", ".eyJ1c2VyIjoiYWxpY2UiLCJyb2xlIjoiYWRtaW4ifQ."]);
        assert_flags(ScanRule::Jwt, &format!("cookie session={unsigned}; Path=/"));
    }

    #[test]
    fn passwords_in_urls_are_flagged() {
        assert_flags(
            ScanRule::PasswordInUrl,
            "DATABASE_URL=postgres://app:Tr0ub4dor&3@db.internal.acme.io:5432/app",
        );
        assert_flags(
            ScanRule::PasswordInUrl,
            "git clone https://alice:hunter2hunter2@git.acme.io/team/repo.git",
        );
        assert_flags(ScanRule::PasswordInUrl, "amqp://guest:9fj2KLm1@10.0.4.17:5672/");
        assert_flags(ScanRule::PasswordInUrl, "redis://:s3cr3tValue@cache:6379/0");
    }

    #[test]
    fn card_numbers_are_flagged() {
        assert_flags(ScanRule::CardNumber, "Paid with 4111 1111 1111 1111, expires 12/27.");
        assert_flags(ScanRule::CardNumber, "card=5555555555554444");
        assert_flags(ScanRule::CardNumber, "Amex: 3782-822463-10005");
        assert_flags(ScanRule::CardNumber, "6011-1111-1111-1117");
        assert_flags(ScanRule::CardNumber, "Visa 19: 4111 1111 1111 1111 003");
    }

    #[test]
    fn personal_email_addresses_are_flagged() {
        assert_flags(ScanRule::EmailAddress, "Contact jane.doe@gmail.com for access.");
        assert_flags(ScanRule::EmailAddress, "Owner: jane.doe@gmail.com: ask her first");
        assert_flags(
            ScanRule::EmailAddress,
            "Reported-by: Bob Smith <bob.smith+bugs@acme.co.uk>",
        );
        assert_flags(ScanRule::EmailAddress, "[mail me](mailto:carol@protonmail.ch)");
        assert_flags(
            ScanRule::EmailAddress,
            "https://crm.acme.io/search?contact=dave.jones@yahoo.com",
        );
        assert_flags(ScanRule::EmailAddress, "Kontakt:\u{3000}erika.mustermann@web.de");
    }

    #[test]
    fn phone_numbers_are_flagged() {
        assert_flags(ScanRule::PhoneNumber, "Call +1 (415) 867-5309 after 5pm.");
        assert_flags(ScanRule::PhoneNumber, "Tel: +44 20 7946 0958");
        assert_flags(ScanRule::PhoneNumber, "Handy: +49-151-2384-6719");
        assert_flags(ScanRule::PhoneNumber, "phone: +33.1.42.68.53.00");
        assert_flags(ScanRule::PhoneNumber, "Office (212) 736-5000");
        assert_flags(ScanRule::PhoneNumber, "reach me at 312-867-5309 anytime");
        assert_flags(ScanRule::PhoneNumber, "+4915127384619");
    }

    // Exceptions and placeholders, rule by rule.

    #[test]
    fn private_key_headers_without_material_pass() {
        assert_passes(&joined(&[
            "OpenSSH keys start with `-----BEGIN OPENSSH ",
            "PRIVATE KEY-----`.",
        ]));
        assert_passes(&joined(&[
            "-----BEGIN RSA ",
            "PRIVATE KEY-----\n...\n-----END RSA PRIVATE KEY-----",
        ]));
        assert_passes(
            "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo\n-----END PUBLIC KEY-----",
        );
        assert_passes(
            "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJ\n-----END CERTIFICATE-----",
        );
    }

    #[test]
    fn documented_cloud_key_placeholders_pass() {
        assert_passes("aws_access_key_id = AKIAIOSFODNN7EXAMPLE");
        assert_passes("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY");
        assert_passes("AWS_ACCESS_KEY_ID=AKIAXXXXXXXXXXXXXXXX");
        assert_passes("AccountKey=<your-key>;EndpointSuffix=core.windows.net");
    }

    #[test]
    fn token_placeholders_and_lookalikes_pass() {
        assert_passes("GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
        assert_passes("Use a token like ghp_... with the repo scope.");
        assert_passes("SLACK_TOKEN=xoxb-your-bot-token-here");
        assert_passes("OPENAI_API_KEY=sk-your-openai-key-goes-in-this-variable");
        assert_passes(r#"<div class="sk-loading-spinner-component-wrapper-outer">"#);
        assert_passes("iak_ keys are shown once; store them in a secret manager.");
        assert_passes("stripe keys look like sk_live_... and sk_test_...");
    }

    #[test]
    fn jwt_lookalikes_pass() {
        assert_passes("A JWT looks like eyJhbGciOi...eyJzdWIi...signature");
        assert_passes("eyJub3QiOiJqc29u.eyJub3QgYW4gb2JqZWN0.abc");
    }

    #[test]
    fn url_password_placeholders_pass() {
        for text in [
            "postgres://user:password@db.acme.io/app",
            "postgres://user:<password>@db.acme.io/app",
            "mysql://root:${MYSQL_PASSWORD}@db.acme.io/app",
            "redis://default:$REDIS_PASSWORD@cache.acme.io:6379",
            "https://bot:****@ci.acme.io",
            "https://bot:xxxxxxxx@ci.acme.io",
            "mongodb://admin:{{password}}@mongo.acme.io",
            "amqp://guest:guest@rabbit.acme.io:5672",
            "postgres://postgres:Sup3rS3cret@localhost:5432/dev",
            "postgres://app:Sup3rS3cret@127.0.0.1/dev",
            "https://alice:Sup3rS3cret@git.example.com/repo",
            "ftp://user:@files.acme.io/",
            "postgres://user@host/db",
            "ssh://git@github.com:22/rust-lang/rust.git",
            "Url::parse(\"ftp://rms:secret123@example.com\")?;",
            "moz://foo:bar@servo/baz",
        ] {
            assert_passes(text);
        }
    }

    #[test]
    fn card_number_lookalikes_pass() {
        for text in [
            "order 4111111111111112 was refunded",
            "4111 1111 1111 1112",
            "0000 0000 0000 0000",
            "4444444444444444",
            "epoch millis 1700000000000 and 1700000000017",
            "id 12345678-1234-1234-1234-123456789012",
            "pi = 3.1415926535897932384",
            "build 7.0.4111111111111111",
            "30 => (0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20)",
            "snowflake id 4111111111111111113 and u64 5229781508510959783",
            "4111 1111-1111 1111",
            "pub const HWCAP2_SVE_B16B16: u64 = 35184372088832;",
        ] {
            assert_passes(text);
        }
    }

    #[test]
    fn role_and_example_addresses_pass() {
        for text in [
            "Write to support@acme.io or security+reports@acme.io.",
            "From: noreply@github.com",
            "alice@example.com, bob@mail.example.org, carol@example.net",
            "alice@alpha.test and bob@beta.example and x@y.invalid and root@localhost",
            "Co-authored-by: bot <123456+bot@users.noreply.github.com>",
            "git@github.com:rust-lang/rust.git",
            "![logo](images/logo@2x.png)",
            "npm install lodash@4.17.21 @types/node@20.11.5",
            "docker pull nginx@sha256:0d17b565c37bcbd895e9d92315a05c1c3c9a29f762b011a10c54a66cd53c9b31",
            "postgres://alice@db.acme.io/app",
            "Ciphers chacha20-poly1305@openssh.com,aes256-gcm@openssh.com",
            "scp build.tar deploy@build.acme.io:/srv/app and friends-mcp@ouro.bot/friends",
        ] {
            assert_passes(text);
        }
    }

    #[test]
    fn phone_lookalikes_pass() {
        for text in [
            "Released 2024-01-15T10:30:00+01:00 as version 1.2.3",
            "semver 1.0.0+20130313144700",
            "Call 555-0123 or (555) 555-0199 for the demo line",
            "Fictional: 212-555-0142",
            "ISBN 978-3-16-148410-0",
            "a+12345678 is arithmetic",
            "Order number 4155552671 shipped",
            "+5 points, +10 more",
            "UUID 550e8400-e29b-41d4-a716-446655440000",
            "range 123-456-7890",
            "assert!(parse(\"+10000-09-09 01:46:39\").is_ok()); year +262142-12-31",
            "i32 ranges from -2147483648 to +2147483647",
            "Please call \"John Doe\" at \"+44 1234567\" or +1 234 567 890",
        ] {
            assert_passes(text);
        }
    }

    /// Harmless technical text, the kind agents publish all the time, must not be rejected.
    #[test]
    fn realistic_technical_corpus_passes() {
        let corpus = r#"
# Idempotent webhook handling (v2.3.1)

Deduplicate by delivery id. Tested on 2024-03-15 at 14:05:09Z with Python 3.12.1 and PostgreSQL 16.2.

```python
import hashlib, uuid
DELIVERY = uuid.UUID("550e8400-e29b-41d4-a716-446655440000")
digest = hashlib.sha256(b"payload").hexdigest()  # e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
ULID = "01HQ3Z8X9Y7K6M5N4P3Q2R1S0T"
commit = "9fceb02d0ae598e95dc970b74767f19372d61af8"
ts_ms = 1710511509123
port = 8080
addresses = ["192.168.1.10", "10.0.0.1", "2001:db8::1", "fe80::1ff:fe23:4567:890a"]
```

Run the server on `http://localhost:8080` or `http://127.0.0.1:3000/health`. The database URL is
`postgres://user@host/db` locally; in CI it is `postgres://postgres:postgres@localhost:5432/test`.
Mail alerts go to ops-alerts@example.com; reply to noreply@acme.io is ignored.

| metric | value |
|---|---|
| p99 latency | 12.5 ms |
| throughput | 1,234,567 events/day |
| error rate | 0.0012 |
| card test (Luhn fails) | 1234 5678 9012 3456 |

Embedded image: `data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==`

```rust
const MAGIC: u64 = 0xDEAD_BEEF_CAFE_F00D;
let checksum = "sha512-9/u6bgY2+JDlb7vzKD5STG+jIErimDgtYkdB0NxmODJuKCxBvl5CVNiCB3LFUYosWowMf37aGVlKfrU5RT4e1w==";
let jwt_header_only = "eyJhbGciOiJIUzI1NiJ9";
let key_prefix = "iak_";
let task_name = "risk-assessment-framework-and-long-kebab-case-identifier-here";
```

See https://docs.python.org/3/library/hashlib.html#hashlib.sha256 and RFC 9110 section 15.5.
Version matrix: 1.2.3, 10.0.19045.3693, 2.0.0-rc.1+build.5. IPv4 255.255.255.255, mask /24.
Phone lines in tests use 555-0100 through 555-0199.
"#;
        assert_passes(corpus);
    }

    #[test]
    fn findings_name_the_field_and_never_the_text() {
        let secret = joined(&["ghp_", "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"]);
        let finding = scanner()
            .scan_text("summary", &format!("token {secret}"))
            .expect("a GitHub token is found");
        assert_eq!(finding.field, "summary");
        assert!(!format!("{finding:?}").contains(&secret));
        assert!(!finding.message().contains(&secret));
        assert_eq!(
            finding.message(),
            "summary contains an API token; remove it or use a placeholder such as ghp_XXXX"
        );
    }

    #[test]
    fn json_findings_carry_a_pointer_below_the_field() {
        let token = joined(&["glpat-", "Xy12Ab34Cd56Ef78Gh90"]);
        let data = json!({
            "language": "python",
            "config": { "retries": 3, "token": token },
        });
        let finding = scanner().scan_json("structured_data", &data).expect("a token is found");
        assert_eq!(finding.rule, ScanRule::ApiToken);
        assert_eq!(finding.field, "structured_data/config/token");

        let data = json!({ "steps": ["install", "mail jane.doe@gmail.com"] });
        let finding = scanner()
            .scan_json("structured_data", &data)
            .expect("an address is found");
        assert_eq!(finding.rule, ScanRule::EmailAddress);
        assert_eq!(finding.field, "structured_data/steps/1");

        let data = json!({ "a/b": { "c~d": "Paid with 4111 1111 1111 1111" } });
        let finding = scanner().scan_json("structured_data", &data).expect("a card is found");
        assert_eq!(finding.field, "structured_data/a~1b/c~0d");

        let data = json!({ "payment": { "card": 4_111_111_111_111_111_u64 } });
        let finding = scanner()
            .scan_json("structured_data", &data)
            .expect("a numeric card is found");
        assert_eq!(finding.rule, ScanRule::CardNumber);
        assert_eq!(finding.field, "structured_data/payment/card");
    }

    #[test]
    fn findings_in_object_keys_name_the_holding_object() {
        let data = json!({ "contacts": { "jane.doe@gmail.com": "owner" } });
        let finding = scanner()
            .scan_json("structured_data", &data)
            .expect("the key is flagged");
        assert_eq!(finding.rule, ScanRule::EmailAddress);
        assert_eq!(finding.field, "structured_data/contacts");
    }

    #[test]
    fn aws_secret_as_a_json_entry_is_flagged() {
        let secret = joined(&["Zq8Kd93jVb1/Lm0Rx7Ty5Nw2", "Pq4Hs6Jk8Gf0Da3S"]);
        let data = json!({ "credentials": { "aws_secret_access_key": secret } });
        let finding = scanner()
            .scan_json("structured_data", &data)
            .expect("the secret is flagged");
        assert_eq!(finding.rule, ScanRule::CloudAccessKey);
        assert_eq!(finding.field, "structured_data/credentials/aws_secret_access_key");
        let placeholder = json!({ "aws_secret_access_key": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY" });
        assert_eq!(scanner().scan_json("structured_data", &placeholder), None);
    }

    #[test]
    fn scan_fields_returns_the_first_finding_in_order() {
        let fields = [
            ("title", "Retry strategy"),
            ("summary", "call +44 20 7946 0958"),
            ("body_markdown", "mail jane.doe@gmail.com"),
        ];
        let finding = scanner().scan_fields(fields).expect("a finding");
        assert_eq!(finding.rule, ScanRule::PhoneNumber);
        assert_eq!(finding.field, "summary");
        assert_eq!(
            scanner().scan_fields([("title", "fine"), ("summary", "also fine")]),
            None
        );
    }

    #[test]
    fn rules_are_checked_in_severity_order() {
        let text = joined(&["mail jane.doe@gmail.com, key AKIA", "Q3EGTLZ7KRW4WN5B"]);
        assert_eq!(rule_of(&text), Some(ScanRule::CloudAccessKey));
    }

    #[test]
    fn rule_names_are_stable_snake_case() {
        let names: Vec<&str> = ScanRule::ALL.iter().map(|rule| rule.as_str()).collect();
        assert_eq!(
            names,
            [
                "private_key",
                "cloud_access_key",
                "api_token",
                "jwt",
                "password_in_url",
                "card_number",
                "bank_account",
                "national_id",
                "email_address",
                "phone_number"
            ]
        );
    }

    #[test]
    fn the_scanner_is_shareable() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<ContentScanner>();
    }

    // Unicode normalization before matching.

    #[test]
    fn secrets_split_by_invisible_characters_are_flagged() {
        // Zero-width space, zero-width joiner, word joiner, byte order mark, soft hyphen.
        for separator in ["\u{200B}", "\u{200D}", "\u{2060}", "\u{FEFF}", "\u{00AD}"] {
            assert_flags(
                ScanRule::CloudAccessKey,
                &joined(&["aws_access_key_id = AKIA", separator, "Q3EGTLZ7KRW4WN5B"]),
            );
            assert_flags(
                ScanRule::ApiToken,
                &joined(&["ghp_aB3dE5fG7hJ9k", separator, "L1mN3pQ5rS7tU9vW1xY3z5A"]),
            );
        }
        assert_flags(ScanRule::EmailAddress, "mail jane.doe\u{200B}@\u{200C}gmail.com please");
        // Variation selectors and bidirectional marks are invisible too.
        assert_flags(ScanRule::CardNumber, "card 4111\u{FE0F} 1111 1111\u{200E} 1111");
    }

    #[test]
    fn compatibility_forms_are_read_as_ascii() {
        // Fullwidth digits, as typed with an East Asian input method.
        assert_flags(ScanRule::CardNumber, "カード番号 ４１１１ １１１１ １１１１ １１１１");
        assert_flags(ScanRule::CardNumber, "card=５５５５５５５５５５５５４４４４");
        // Fullwidth letters and the fullwidth commercial at.
        assert_flags(ScanRule::CloudAccessKey, "ＡＫＩＡＱ３ＥＧＴＬＺ７ＫＲＷ４ＷＮ５Ｂ");
        assert_flags(ScanRule::EmailAddress, "jane.doe＠gmail.com");
        // No-break spaces between groups and Unicode dashes as separators.
        assert_flags(ScanRule::CardNumber, "4111\u{00A0}1111\u{00A0}1111\u{00A0}1111");
        assert_flags(ScanRule::CardNumber, "6011\u{2013}1111\u{2013}1111\u{2013}1117");
        assert_flags(ScanRule::NationalId, "SSN 536\u{2011}22\u{2011}8451");
        // Mathematical bold digits.
        assert_flags(ScanRule::PhoneNumber, "call +𝟒𝟗 𝟏𝟓𝟏 𝟐𝟑𝟖𝟒 𝟔𝟕𝟏𝟗");
    }

    #[test]
    fn ordinary_unicode_text_passes() {
        for text in [
            "Grüße aus Köln: die Straße ist gesperrt — Umleitung über die Brücke.",
            "東京のサーバーで 2024年1月15日 に再起動しました（バージョン 1.2.3）。",
            "👩\u{200D}💻 pair programming, ❤\u{FE0F} the ﬁle layout, x² + y² = z²",
            "Приложение: заказ № 4711, 12 шт., итого 34,50 €",
            "٢٠٢٤ and शुभ",
        ] {
            assert_passes(text);
        }
    }

    #[test]
    fn normalization_leaves_ascii_text_alone() {
        let text = "plain ASCII stays borrowed";
        assert!(matches!(scanner().normalized_for_scan(text), Cow::Borrowed(_)));
        assert_eq!(scanner().normalized_for_scan("a\u{200B}b\u{00AD}c１"), "abc1");
    }

    // National ID and bank account numbers.

    #[test]
    fn social_security_numbers_are_flagged() {
        assert_flags(ScanRule::NationalId, "SSN: 536-22-8451");
        assert_flags(ScanRule::NationalId, "employee ssn=772-10-0042; start 2024-02-01");
        assert_flags(ScanRule::NationalId, "(001-01-0001)");
        assert_flags(ScanRule::NationalId, "https://hr.acme.io/people/665-99-9999/profile");
    }

    #[test]
    fn social_security_number_lookalikes_pass() {
        for text in [
            "000-12-3456",
            "666-12-3456",
            "900-12-3456 and 987-65-4321",
            "536-00-8451",
            "536-22-0000",
            "the form says 123-45-6789; ads used 078-05-1120 and 219-09-9999",
            "released 2024-01-15, version 1.2.3, ISBN 978-3-16-148410-0",
            "order ORD-536-22-8451 shipped",
            "part 536-22-8451-2 and build 536-22-8451.5 and v.536-22-8451",
            "ticket #536-22-8451",
            "nine digits 536228451 without dashes",
            "range 536-22-84510",
            "fictional phone 212-555-0142",
        ] {
            assert_passes(text);
        }
    }

    /// Check digits that make `country` + `bban` a valid IBAN (ISO 13616), for building test numbers.
    fn with_check_digits(country: &str, bban: &str) -> String {
        let draft = format!("{country}00{bban}");
        let rearranged = draft[4..].bytes().chain(draft[..4].bytes());
        let mut remainder: u32 = 0;
        for byte in rearranged {
            let value = if byte.is_ascii_digit() {
                u32::from(byte - b'0')
            } else {
                u32::from(byte - b'A') + 10
            };
            remainder = (remainder * if value >= 10 { 100 } else { 10 } + value) % 97;
        }
        format!("{country}{:02}{bban}", 98 - remainder)
    }

    #[test]
    fn ibans_are_flagged() {
        for text in [
            "IBAN: DE89 3704 0044 0532 0130 00",
            "iban=DE89370400440532013000;",
            "GB82 WEST 1234 5698 7654 32",
            "Konto FR14 2004 1010 0505 0001 3M02 606, BIC PSSTFRPPXXX",
            "NL91ABNA0417164300",
            "BE68 5390 0754 7034 (2024)",
            "CH93 0076 2011 6238 5295 7",
            "pay to NO9386011117947.",
        ] {
            assert_flags(ScanRule::BankAccount, text);
        }
        assert_flags(ScanRule::BankAccount, &with_check_digits("AT", "1904300234573201"));
    }

    #[test]
    fn iban_lookalikes_pass() {
        let wrong_length = with_check_digits("DE", "3704004405320130001");
        assert!(
            passes_iban_check(&wrong_length),
            "the check digits are right, only the length is not"
        );
        for text in [
            "DE89 3704 0044 0532 0130 01",
            "DE89370400440532013001",
            "DE893704004405320130001",
            "DE89370400440532013000X",
            "de89370400440532013000",
            "XX89370400440532013000",
            "DE00 0000 0000 0000 0000 00",
            "DE89 370400440532013000",
            wrong_length.as_str(),
            "ES2015 and ES2022 features, released 2024-01-15, version 10.0.19045.3693",
            "order AB12CD34EF56GH78IJ90 and SKU GB12-3456-7890",
            "UUID 550e8400-e29b-41d4-a716-446655440000, ULID 01HQ3Z8X9Y7K6M5N4P3Q2R1S0T",
        ] {
            assert_passes(text);
        }
    }

    #[test]
    fn the_iban_table_has_plausible_lengths() {
        for (country, length) in IBAN_LENGTHS {
            assert_eq!(country.len(), 2);
            assert!(country.bytes().all(|byte| byte.is_ascii_uppercase()));
            assert!((15..=34).contains(length), "{country}");
        }
        let mut countries: Vec<&str> = IBAN_LENGTHS.iter().map(|(country, _)| *country).collect();
        countries.sort_unstable();
        countries.dedup();
        assert_eq!(countries.len(), IBAN_LENGTHS.len());
    }

    // Redaction for the audit log.

    #[test]
    fn redaction_replaces_matching_strings_keys_and_numbers_by_their_rule() {
        let token = joined(&["ghp_", "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"]);
        let secret = joined(&["Zq8Kd93jVb1/Lm0Rx7Ty5Nw2", "Pq4Hs6Jk8Gf0Da3S"]);
        let request = json!({
            "title": "Retry strategy",
            "query": format!("why does {token} fail"),
            "limit": 4_111_111_111_111_111_u64,
            "count": 3,
            "structured_data": {
                "jane.doe@gmail.com": "owner",
                "aws_secret_access_key": secret,
                "steps": ["install", "SSN 536-22-8451"],
            },
        });
        let redaction = scanner().redact_json(&request);
        assert_eq!(
            redaction.value,
            json!({
                "title": "Retry strategy",
                "query": "[redacted: api_token]",
                "limit": "[redacted: card_number]",
                "count": 3,
                "structured_data": {
                    "[redacted key: email_address]": "owner",
                    "aws_secret_access_key": "[redacted: cloud_access_key]",
                    "steps": ["install", "[redacted: national_id]"],
                },
            })
        );
        let rules: Vec<ScanRule> = redaction.removed.iter().map(|(_, rule)| *rule).collect();
        assert_eq!(rules.len(), 5);
        for rule in [
            ScanRule::ApiToken,
            ScanRule::CardNumber,
            ScanRule::EmailAddress,
            ScanRule::CloudAccessKey,
            ScanRule::NationalId,
        ] {
            assert!(rules.contains(&rule), "{rule}");
        }
        let stored = redaction.value.to_string();
        assert!(!stored.contains(&token) && !stored.contains(&secret) && !stored.contains("jane.doe"));
    }

    #[test]
    fn two_redacted_keys_of_one_object_stay_two_entries() {
        let redaction = scanner().redact_json(&json!({ "a.b@gmail.com": 1, "c.d@gmail.com": 2 }));
        let Value::Object(entries) = &redaction.value else {
            panic!("an object stays an object");
        };
        assert_eq!(entries.len(), 2);
        assert!(entries.contains_key("[redacted key: email_address]"));
        assert!(entries.contains_key("[redacted key: email_address] #2"));
    }

    #[test]
    fn redaction_keeps_clean_values_as_they_are() {
        let request = json!({ "title": "Ünïcode ok", "tags": ["a", "b"], "limit": 10, "flag": true, "none": null });
        let redaction = scanner().redact_json(&request);
        assert_eq!(redaction.value, request);
        assert!(redaction.removed.is_empty());
    }

    #[test]
    fn luhn_check_matches_known_numbers() {
        let digits = |text: &str| -> Vec<u8> { text.bytes().map(|byte| byte - b'0').collect() };
        assert!(passes_luhn(&digits("79927398713")));
        assert!(passes_luhn(&digits("4111111111111111")));
        assert!(!passes_luhn(&digits("4111111111111112")));
    }
}
