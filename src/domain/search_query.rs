//! A search query as a small syntax tree, parsed from user text; the store renders it in each backend's full-text
//! syntax (`store/search_syntax.rs`).
//!
//! User text never reaches `MATCH` or a tsquery function as typed: words are reduced to letters and digits here, and
//! each backend's text is rebuilt from the tree. Supported: words (all required), `"quoted phrases"`, `-excluded` words, and `or`
//! between two alternatives. English stop words are dropped outside phrases, as PostgreSQL's `english`
//! configuration drops them, so both backends require the same words.

/// English words too common to require (PostgreSQL's `english` stop list, abridged to the frequent ones).
const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "again", "all", "am", "an", "and", "any", "are", "as", "at", "be", "because", "been",
    "before", "being", "between", "both", "but", "by", "can", "did", "do", "does", "doing", "down", "during", "each",
    "few", "for", "from", "further", "had", "has", "have", "having", "he", "her", "here", "hers", "him", "his", "how",
    "i", "if", "in", "into", "is", "it", "its", "itself", "just", "me", "more", "most", "my", "no", "nor", "not",
    "now", "of", "off", "on", "once", "only", "other", "our", "ours", "out", "over", "own", "same", "she", "should",
    "so", "some", "such", "than", "that", "the", "their", "them", "then", "there", "these", "they", "this", "those",
    "through", "to", "too", "under", "until", "up", "very", "was", "we", "were", "what", "when", "where", "which",
    "while", "who", "whom", "why", "will", "with", "you", "your", "yours",
];

/// One required element: a word or a phrase, or a choice between several.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueryPart {
    /// A single word.
    Word(String),
    /// Words that must appear in this order.
    Phrase(Vec<String>),
    /// Any one of these.
    AnyOf(Vec<QueryPart>),
}

/// A parsed query: parts that must all match, and words that must not appear.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ParsedQuery {
    /// Required parts.
    pub required: Vec<QueryPart>,
    /// Excluded words.
    pub excluded: Vec<String>,
}

fn words_of(text: &str) -> Vec<String> {
    text.split(|character: char| !character.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .collect()
}

impl ParsedQuery {
    /// Parses user text. Returns `None` when nothing searchable is left.
    pub fn parse(text: &str) -> Option<ParsedQuery> {
        let mut tokens: Vec<(bool, bool, Vec<String>)> = Vec::new(); // (excluded, phrase, words)
        let mut rest = text;
        while !rest.is_empty() {
            let trimmed = rest.trim_start();
            if trimmed.is_empty() {
                break;
            }
            let (excluded, body) = match trimmed.strip_prefix('-') {
                Some(after) => (true, after),
                None => (false, trimmed),
            };
            if let Some(after_quote) = body.strip_prefix('"') {
                let end = after_quote.find('"').unwrap_or(after_quote.len());
                let words = words_of(&after_quote[..end]);
                if !words.is_empty() {
                    tokens.push((excluded, true, words));
                }
                rest = after_quote.get(end + 1..).unwrap_or("");
            } else {
                let end = body.find(char::is_whitespace).unwrap_or(body.len());
                for word in words_of(&body[..end]) {
                    tokens.push((excluded, false, vec![word]));
                }
                rest = &body[end..];
            }
        }
        let mut query = ParsedQuery::default();
        let mut pending_or = false;
        for (excluded, phrase, words) in tokens {
            if !excluded && !phrase && words.len() == 1 && words[0] == "or" {
                pending_or = !query.required.is_empty();
                continue;
            }
            if excluded {
                query.excluded.extend(words);
                pending_or = false;
                continue;
            }
            let part = if phrase && words.len() > 1 {
                QueryPart::Phrase(words)
            } else {
                let word = words.into_iter().next().unwrap_or_default();
                if !phrase && STOP_WORDS.contains(&word.as_str()) {
                    continue;
                }
                QueryPart::Word(word)
            };
            if pending_or {
                let previous = query.required.pop();
                let merged = match previous {
                    Some(QueryPart::AnyOf(mut choices)) => {
                        choices.push(part);
                        QueryPart::AnyOf(choices)
                    }
                    Some(other) => QueryPart::AnyOf(vec![other, part]),
                    None => part,
                };
                query.required.push(merged);
                pending_or = false;
            } else {
                query.required.push(part);
            }
        }
        (!query.required.is_empty()).then_some(query)
    }

    /// The same query with every required part made optional (any of them), for a second, broader pass.
    pub fn relaxed(&self) -> ParsedQuery {
        let mut choices = Vec::new();
        for part in &self.required {
            match part {
                QueryPart::AnyOf(inner) => choices.extend(inner.iter().cloned()),
                other => choices.push(other.clone()),
            }
        }
        ParsedQuery {
            required: if choices.len() > 1 {
                vec![QueryPart::AnyOf(choices)]
            } else {
                choices
            },
            excluded: self.excluded.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(text: &str) -> QueryPart {
        QueryPart::Word(text.to_owned())
    }

    #[test]
    fn words_are_required_and_stop_words_dropped() {
        let query = ParsedQuery::parse("How to retry failed webhook deliveries?").expect("query");
        assert_eq!(
            query.required,
            [word("retry"), word("failed"), word("webhook"), word("deliveries")]
        );
        assert!(query.excluded.is_empty());
        assert_eq!(ParsedQuery::parse("  -- \"\" the of  "), None);
    }

    #[test]
    fn phrases_exclusions_and_alternatives_are_kept() {
        let query = ParsedQuery::parse("\"delivery id\" redis or postgres -kafka").expect("query");
        assert_eq!(
            query.required,
            [
                QueryPart::Phrase(vec!["delivery".to_owned(), "id".to_owned()]),
                QueryPart::AnyOf(vec![word("redis"), word("postgres")])
            ]
        );
        assert_eq!(query.excluded, ["kafka"]);
    }

    #[test]
    fn a_relaxed_query_accepts_any_part() {
        let query = ParsedQuery::parse("retry webhook").expect("query");
        assert_eq!(
            query.relaxed().required,
            [QueryPart::AnyOf(vec![word("retry"), word("webhook")])]
        );
    }
}
