//! The size limits of every tool input, in one place so that validation, input schemas, documents and tests agree.
//!
//! Every array and every free string a tool accepts has a cap here. Validation enforces each cap before any
//! statement is built, and the MCP input schemas declare the same constants (`maxItems`, `maxLength`, `minimum`,
//! `maximum`), so a client that follows the schema is never refused for a size, and a request the schema forbids is
//! never run. Lengths count Unicode scalar values (what JSON Schema's `maxLength` counts), before any trimming.
//! The free-form JSON objects (`structured_data`, `context`, `metrics`, `configuration`, `observations`) are capped
//! by their serialized size instead.

// ---------------------------------------------------------------- text

/// Largest `body_markdown`, in bytes of UTF-8 (spec §9: 200 KB). The schema declares the same number as
/// `maxLength`, which the byte cap implies (a character takes at least one byte).
pub const MAX_BODY_BYTES: usize = 200 * 1024;
/// Largest serialized `structured_data`, in bytes (spec §9: 64 KB).
pub const MAX_STRUCTURED_DATA_BYTES: usize = super::structured_data::STRUCTURED_DATA_MAX_BYTES;
/// Longest title (content, experience, source), in characters.
pub const MAX_TITLE_CHARACTERS: usize = 300;
/// Longest summary or entity description, in characters.
pub const MAX_SUMMARY_CHARACTERS: usize = 2000;
/// Longest claim text, in characters.
pub const MAX_CLAIM_CHARACTERS: usize = 2000;
/// Longest change note, note or rationale, in characters.
pub const MAX_NOTE_CHARACTERS: usize = 20_000;
/// Longest entity name or alias, and longest space name, in characters.
pub const MAX_NAME_CHARACTERS: usize = 200;
/// Largest entity name once normalized (NFKC and case folding can expand a character many times over), in bytes:
/// the normalized name is a key of a database index, whose entries PostgreSQL limits to about 2.7 KB.
pub const MAX_NORMALIZED_NAME_BYTES: usize = 1024;
/// Longest source URL, in characters, as given and once normalized (percent-encoding can triple its length; the
/// normalized URL is a key of a database index).
pub const MAX_SOURCE_URL_CHARACTERS: usize = 2048;
/// Longest search query, in characters.
pub const MAX_QUERY_CHARACTERS: usize = 1000;
/// Longest field that holds a public ID (`cnt_…`, 29 or 30 characters), with room for surrounding spaces.
pub const MAX_ID_CHARACTERS: usize = 40;
/// Longest enumerated word or lower_snake_case name: content, entity and usage types, results, verdicts, kinds,
/// include names, relation types, alternative reasons, sort orders and statuses.
pub const MAX_KEYWORD_CHARACTERS: usize = 40;
/// Longest rating dimension, in characters.
pub const MAX_DIMENSION_CHARACTERS: usize = crate::domain::text::DIMENSION_MAX_CHARS;
/// Longest tag as given, in characters (it must also be at most this long once normalized).
pub const MAX_TAG_CHARACTERS: usize = crate::domain::text::TAG_MAX_CHARS;
/// Longest language tag (BCP 47 tags in practice stay well below this).
pub const MAX_LANGUAGE_CHARACTERS: usize = 35;
/// Longest pagination cursor (`cursor`, `evidence_cursor`); the server's own cursors are a few hundred characters.
pub const MAX_CURSOR_CHARACTERS: usize = 1024;
/// Longest idempotency key (defined with its validation in `writes`).
pub const MAX_IDEMPOTENCY_KEY_CHARACTERS: usize = super::writes::MAX_IDEMPOTENCY_KEY_CHARACTERS;

// ---------------------------------------------------------------- arrays

/// Most claims per publish (spec §9).
pub const MAX_CLAIMS: usize = 50;
/// Most relations per publish (spec §9).
pub const MAX_RELATIONS: usize = 50;
/// Most tags per publish or experience, and most tags a search may require.
pub const MAX_TAGS: usize = 30;
/// Most subjects per publish or experience.
pub const MAX_SUBJECTS: usize = 50;
/// Most aliases of a named subject.
pub const MAX_ALIASES: usize = 20;
/// Most sources per publish or review.
pub const MAX_SOURCES: usize = 50;
/// Most `used` entries per experience.
pub const MAX_USED_ENTRIES: usize = 50;
/// Most content types, and most entity types, one search may filter by (the publish cap of tags: a filter longer
/// than that names types nobody uses at once).
pub const MAX_SEARCH_TYPES: usize = MAX_TAGS;
/// Most `kinds` of a search: there are three (content, claim, entity).
pub const MAX_SEARCH_KINDS: usize = 3;
/// Most `include` names of a get: there are seven (body, claims, relations, evidence_summary, evidence, revisions,
/// explanation).
pub const MAX_INCLUDE_NAMES: usize = 7;
/// Fewest IDs compare takes.
pub const MIN_COMPARE_ITEMS: usize = 2;
/// Most IDs compare takes.
pub const MAX_COMPARE_ITEMS: usize = 10;
/// Most dimensions compare takes.
pub const MAX_COMPARE_DIMENSIONS: usize = 20;

// ---------------------------------------------------------------- numbers

/// Fewest search results per page.
pub const MIN_SEARCH_LIMIT: u32 = 1;
/// Most search results per page.
pub const MAX_SEARCH_LIMIT: u32 = 50;
/// The first revision number of a content item; `get`'s `revision` counts from here.
pub const MIN_REVISION_NUMBER: i32 = 1;
/// Lowest confidence of a review or rating.
pub const MIN_CONFIDENCE: f64 = 0.0;
/// Highest confidence of a review or rating.
pub const MAX_CONFIDENCE: f64 = 1.0;
/// Lowest rating score.
pub const MIN_RATING_SCORE: f64 = 0.0;
/// Highest rating score.
pub const MAX_RATING_SCORE: f64 = 100.0;

// ---------------------------------------------------------------- JSON objects

/// Largest serialized context, metrics, configuration or observations object, in bytes.
pub const MAX_AUXILIARY_OBJECT_BYTES: usize = 16 * 1024;
/// Most facets in a context.
pub const MAX_CONTEXT_FACETS: usize = 20;
/// Longest facet name in a context, in characters.
pub const MAX_CONTEXT_FACET_NAME_CHARACTERS: usize = 64;
/// Longest text value of a context facet, in characters (the free-text `note` facet may be as long as a summary).
pub const MAX_CONTEXT_FACET_VALUE_CHARACTERS: usize = 200;
/// Longest `note` in a context, in characters; it is free text and not part of the context key.
pub const MAX_CONTEXT_NOTE_CHARACTERS: usize = MAX_SUMMARY_CHARACTERS;
/// Largest normalized context key (`key=value` pairs joined by `;`), in bytes: it is a key of database indexes,
/// whose entries PostgreSQL limits to about 2.7 KB.
pub const MAX_CONTEXT_KEY_BYTES: usize = 1024;
