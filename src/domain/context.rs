//! Context normalization: the `context_key` that ratings are aggregated under, and its hierarchical fallback chain.
//!
//! Key format: facets `key=value` joined by `;`, keys sorted, e.g. `deployment=self-hosted;language=python`. Keys and
//! text values are lowercased, booleans render as `true`/`false`, numbers in Rust's shortest round-trip form (so JSON
//! `3`, `3.0` and `3e0` all give `3`, and `3.12` gives `3.12`). The `note` key is free text and is left out. The
//! characters `%`, `;` and `=` inside keys and values are percent-encoded (`%25`, `%3b`, `%3d`) so that any input has
//! exactly one key and the key can be parsed back. A context with no facets is `*`, the all-context key.
//!
//! The key lives in `domain` because it travels between layers: the service normalizes it, the trust engine
//! aggregates ratings under it, the store keeps its rendering in a column and the wires show that rendering.
//! It does not depend on serde: the service converts JSON into [`ContextValue`]s (arrays, objects and null become
//! [`ContextValue::NonScalar`], which is refused with a clear error).

use std::fmt;

/// Why a context could not be normalized or a stored key could not be parsed back. The `Display` text is safe to
/// show to the caller that sent the input.
#[derive(Debug, Clone, PartialEq)]
pub enum ContextError {
    /// A context value was an array, an object or null; contexts hold scalars only.
    NonScalarContextValue { key: String },
    /// A context number was NaN or infinite.
    NonFiniteContextNumber { key: String },
    /// A context key was empty.
    EmptyContextKey,
    /// Two context keys became equal after lowercasing (for example `Lang` and `lang`).
    DuplicateContextKey { key: String },
    /// A stored context key could not be parsed back.
    MalformedContextKey { text: String },
}

impl fmt::Display for ContextError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ContextError::NonScalarContextValue { key } => {
                write!(
                    formatter,
                    "context value for `{key}` must be a string, number or boolean"
                )
            }
            ContextError::NonFiniteContextNumber { key } => {
                write!(formatter, "context value for `{key}` must be a finite number")
            }
            ContextError::EmptyContextKey => write!(formatter, "context keys must not be empty"),
            ContextError::DuplicateContextKey { key } => {
                write!(
                    formatter,
                    "context key `{key}` appears twice (keys are compared case-insensitively)"
                )
            }
            ContextError::MalformedContextKey { text } => write!(formatter, "malformed context key `{text}`"),
        }
    }
}

impl std::error::Error for ContextError {}

/// One context value as the service hands it over.
#[derive(Debug, Clone, PartialEq)]
pub enum ContextValue {
    Text(String),
    Number(f64),
    Bool(bool),
    /// An array, object or null: refused.
    NonScalar,
}

/// A normalized context: facets sorted by key. The empty context is `*`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ContextKey {
    facets: Vec<(String, String)>,
}

/// The key excluded from normalization because it carries free text, not a facet.
const NOTE_KEY: &str = "note";

/// The rendering of the empty context.
const ALL_CONTEXTS: &str = "*";

impl ContextKey {
    /// The all-context key `*`.
    pub fn all() -> Self {
        ContextKey { facets: Vec::new() }
    }

    /// Normalizes (key, value) pairs: keys and scalar values lowercased, keys sorted, `note` left out, non-scalar
    /// values refused. Equal contexts give equal keys whatever their order and case.
    pub fn normalize<K: AsRef<str>>(
        entries: impl IntoIterator<Item = (K, ContextValue)>,
    ) -> Result<ContextKey, ContextError> {
        let mut facets: Vec<(String, String)> = Vec::new();
        for (key, value) in entries {
            let key = key.as_ref().to_lowercase();
            if key.is_empty() {
                return Err(ContextError::EmptyContextKey);
            }
            if key == NOTE_KEY {
                continue;
            }
            let rendered = match value {
                ContextValue::Text(text) => text.to_lowercase(),
                ContextValue::Bool(flag) => flag.to_string(),
                ContextValue::Number(number) if number.is_finite() => {
                    // Rust prints -0.0 as "-0"; both zeros are the same context.
                    if number == 0.0 {
                        "0".to_string()
                    } else {
                        number.to_string()
                    }
                }
                ContextValue::Number(_) => return Err(ContextError::NonFiniteContextNumber { key }),
                ContextValue::NonScalar => return Err(ContextError::NonScalarContextValue { key }),
            };
            facets.push((escape(&key), escape(&rendered)));
        }
        facets.sort();
        for pair in facets.windows(2) {
            if pair[0].0 == pair[1].0 {
                return Err(ContextError::DuplicateContextKey {
                    key: unescape(&pair[0].0),
                });
            }
        }
        Ok(ContextKey { facets })
    }

    /// Parses a key rendered by `Display` (as stored by the service).
    pub fn parse(text: &str) -> Result<ContextKey, ContextError> {
        if text == ALL_CONTEXTS {
            return Ok(ContextKey::all());
        }
        let malformed = || ContextError::MalformedContextKey { text: text.to_string() };
        let mut facets = Vec::new();
        for facet in text.split(';') {
            let (key, value) = facet.split_once('=').ok_or_else(malformed)?;
            if key.is_empty() || key != key.to_lowercase() || value != value.to_lowercase() {
                return Err(malformed());
            }
            facets.push((key.to_string(), value.to_string()));
        }
        let mut sorted = facets.clone();
        sorted.sort();
        sorted.dedup_by(|left, right| left.0 == right.0);
        if sorted != facets {
            return Err(malformed());
        }
        Ok(ContextKey { facets })
    }

    /// Whether this is the all-context key `*`.
    pub fn is_all(&self) -> bool {
        self.facets.is_empty()
    }

    /// The facets as a JSON object of escaped names and values, as the key holds them: what a remote record keeps as
    /// its context, since only the key travels.
    pub fn facets_object(&self) -> serde_json::Value {
        serde_json::Value::Object(
            self.facets()
                .iter()
                .map(|(name, value)| (name.clone(), serde_json::Value::from(value.as_str())))
                .collect(),
        )
    }

    /// The facets as (escaped key, escaped value) pairs, sorted by key.
    pub fn facets(&self) -> &[(String, String)] {
        &self.facets
    }

    /// The key with its last facet dropped; `*` has no parent.
    pub fn parent(&self) -> Option<ContextKey> {
        if self.facets.is_empty() {
            return None;
        }
        Some(ContextKey {
            facets: self.facets[..self.facets.len() - 1].to_vec(),
        })
    }

    /// This key, then each parent, ending with `*`: `lang=python;ver=3.12` → `lang=python` → `*`.
    pub fn fallback_chain(&self) -> Vec<ContextKey> {
        let mut chain = vec![self.clone()];
        while let Some(parent) = chain.last().and_then(ContextKey::parent) {
            chain.push(parent);
        }
        chain
    }

    /// Whether a rating made in context `rating_context` belongs to the aggregate for this (query) key: every facet
    /// of the query appears in the rating's context. `*` contains every context.
    pub fn contains(&self, rating_context: &ContextKey) -> bool {
        self.facets
            .iter()
            .all(|facet| rating_context.facets.binary_search(facet).is_ok())
    }
}

impl fmt::Display for ContextKey {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.facets.is_empty() {
            return formatter.write_str(ALL_CONTEXTS);
        }
        for (index, (key, value)) in self.facets.iter().enumerate() {
            if index > 0 {
                formatter.write_str(";")?;
            }
            write!(formatter, "{key}={value}")?;
        }
        Ok(())
    }
}

fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '%' => escaped.push_str("%25"),
            ';' => escaped.push_str("%3b"),
            '=' => escaped.push_str("%3d"),
            other => escaped.push(other),
        }
    }
    escaped
}

fn unescape(text: &str) -> String {
    text.replace("%3b", ";").replace("%3d", "=").replace("%25", "%")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(value: &str) -> ContextValue {
        ContextValue::Text(value.to_string())
    }

    #[test]
    fn equal_contexts_give_equal_keys_regardless_of_order_and_case() {
        let first = ContextKey::normalize([("Language", text("Python")), ("deployment", text("Self-Hosted"))])
            .expect("scalar context");
        let second = ContextKey::normalize([("DEPLOYMENT", text("self-hosted")), ("language", text("PYTHON"))])
            .expect("scalar context");
        assert_eq!(first, second);
        assert_eq!(first.to_string(), "deployment=self-hosted;language=python");
    }

    #[test]
    fn note_is_excluded_and_scalars_render_stably() {
        let key = ContextKey::normalize([
            ("note", text("tried on a Friday")),
            ("ver", ContextValue::Number(3.12)),
            ("major", ContextValue::Number(3.0)),
            ("gpu", ContextValue::Bool(true)),
            ("Note", text("another note")),
        ])
        .expect("scalar context");
        assert_eq!(key.to_string(), "gpu=true;major=3;ver=3.12");
        assert_eq!(
            ContextKey::normalize(Vec::<(&str, ContextValue)>::new())
                .expect("empty")
                .to_string(),
            "*"
        );
        assert_eq!(
            ContextKey::normalize([("note", text("x"))])
                .expect("only a note")
                .to_string(),
            "*"
        );
    }

    #[test]
    fn non_scalar_values_and_bad_keys_are_refused() {
        assert_eq!(
            ContextKey::normalize([("tags", ContextValue::NonScalar)]),
            Err(ContextError::NonScalarContextValue { key: "tags".into() })
        );
        assert_eq!(
            ContextKey::normalize([("Lang", text("a")), ("lang", text("b"))]),
            Err(ContextError::DuplicateContextKey { key: "lang".into() })
        );
        assert_eq!(
            ContextKey::normalize([("", text("a"))]),
            Err(ContextError::EmptyContextKey)
        );
        assert!(ContextKey::normalize([("x", ContextValue::Number(f64::NAN))]).is_err());
        let message = ContextKey::normalize([("tags", ContextValue::NonScalar)])
            .expect_err("refused")
            .to_string();
        assert_eq!(message, "context value for `tags` must be a string, number or boolean");
    }

    #[test]
    fn separators_are_escaped_and_keys_round_trip() {
        let key = ContextKey::normalize([("a=b", text("x;y%z")), ("lang", text("python"))]).expect("scalar context");
        assert_eq!(key.to_string(), "a%3db=x%3by%25z;lang=python");
        assert_eq!(ContextKey::parse(&key.to_string()), Ok(key.clone()));
        assert_eq!(ContextKey::parse("*"), Ok(ContextKey::all()));
        assert!(ContextKey::parse("ver=3;lang=python").is_err());
        assert!(ContextKey::parse("lang").is_err());
    }

    #[test]
    fn the_fallback_chain_drops_the_last_facet_then_ends_at_all() {
        let key = ContextKey::parse("lang=python;ver=3.12").expect("well-formed");
        let chain: Vec<String> = key.fallback_chain().iter().map(ToString::to_string).collect();
        assert_eq!(chain, ["lang=python;ver=3.12", "lang=python", "*"]);
        assert_eq!(ContextKey::all().fallback_chain(), vec![ContextKey::all()]);
    }

    #[test]
    fn a_query_key_contains_every_context_with_its_facets() {
        let python = ContextKey::parse("lang=python").expect("well-formed");
        let python_312 = ContextKey::parse("lang=python;ver=3.12").expect("well-formed");
        let hosted_python = ContextKey::parse("deployment=self-hosted;lang=python").expect("well-formed");
        assert!(python.contains(&python_312) && python.contains(&hosted_python) && python.contains(&python));
        assert!(!python_312.contains(&python));
        assert!(ContextKey::all().contains(&python_312));
    }
}
