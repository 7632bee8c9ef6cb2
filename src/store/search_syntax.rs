//! A parsed search query (`domain::search_query`) in each backend's full-text syntax: an FTS5 `MATCH` expression
//! with every term quoted, and the text PostgreSQL's `websearch_to_tsquery` reads, which cannot fail on its input.

use crate::domain::search_query::{ParsedQuery, QueryPart};

/// The FTS5 `MATCH` expression: every term quoted.
pub(super) fn render_fts5(query: &ParsedQuery) -> String {
    fn render(part: &QueryPart) -> String {
        match part {
            QueryPart::Word(word) => format!("\"{word}\""),
            QueryPart::Phrase(words) => format!("\"{}\"", words.join(" ")),
            QueryPart::AnyOf(choices) => {
                format!("({})", choices.iter().map(render).collect::<Vec<_>>().join(" OR "))
            }
        }
    }
    let mut expression = query.required.iter().map(render).collect::<Vec<_>>().join(" AND ");
    for word in &query.excluded {
        expression = format!("({expression}) NOT \"{word}\"");
    }
    expression
}

/// The text for PostgreSQL's `websearch_to_tsquery`, rebuilt from sanitized words.
pub(super) fn render_websearch(query: &ParsedQuery) -> String {
    fn render(part: &QueryPart) -> String {
        match part {
            QueryPart::Word(word) => word.clone(),
            QueryPart::Phrase(words) => format!("\"{}\"", words.join(" ")),
            QueryPart::AnyOf(choices) => choices.iter().map(render).collect::<Vec<_>>().join(" or "),
        }
    }
    let mut parts: Vec<String> = query.required.iter().map(render).collect();
    parts.extend(query.excluded.iter().map(|word| format!("-{word}")));
    parts.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::search_query::ParsedQuery;

    #[test]
    fn words_phrases_exclusions_and_alternatives_reach_each_backend_as_the_same_query() {
        // (user text, FTS5 expression, websearch_to_tsquery text)
        let cases = [
            (
                "How to retry failed webhook deliveries?",
                "\"retry\" AND \"failed\" AND \"webhook\" AND \"deliveries\"",
                "retry failed webhook deliveries",
            ),
            (
                "\"delivery id\" redis or postgres -kafka",
                "(\"delivery id\" AND (\"redis\" OR \"postgres\")) NOT \"kafka\"",
                "\"delivery id\" redis or postgres -kafka",
            ),
        ];
        for (text, fts5, websearch) in cases {
            let query = ParsedQuery::parse(text).expect("query");
            assert_eq!(render_fts5(&query), fts5, "{text}");
            assert_eq!(render_websearch(&query), websearch, "{text}");
        }
    }

    #[test]
    fn syntax_characters_never_reach_the_backend() {
        let query = ParsedQuery::parse("title:x* NEAR(a b) ) \" ' ; DROP TABLE").expect("query");
        let fts = render_fts5(&query);
        assert!(!fts.contains('*') && !fts.contains(':') && !fts.contains(';') && !fts.contains('\''));
        // The lone quote opens a phrase that runs to the end of the text.
        assert_eq!(render_websearch(&query), "title x near b \"drop table\"");
        assert_eq!(ParsedQuery::parse("  -- \"\" the of  "), None);
    }

    #[test]
    fn a_relaxed_query_accepts_any_part() {
        let query = ParsedQuery::parse("retry webhook").expect("query");
        assert_eq!(render_fts5(&query.relaxed()), "(\"retry\" OR \"webhook\")");
        assert_eq!(render_websearch(&query.relaxed()), "retry or webhook");
    }
}
