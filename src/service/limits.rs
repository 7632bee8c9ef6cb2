//! The size limits of writes, in one place so that validation, documents and tests agree.

/// Largest `body_markdown`, in bytes (spec §9: 200 KB).
pub const MAX_BODY_BYTES: usize = 200 * 1024;
/// Largest serialized `structured_data`, in bytes (spec §9: 64 KB).
pub const MAX_STRUCTURED_DATA_BYTES: usize = super::structured_data::STRUCTURED_DATA_MAX_BYTES;
/// Most claims per publish (spec §9).
pub const MAX_CLAIMS: usize = 50;
/// Most relations per publish (spec §9).
pub const MAX_RELATIONS: usize = 50;
/// Longest title, in characters.
pub const MAX_TITLE_CHARACTERS: usize = 300;
/// Longest summary, in characters.
pub const MAX_SUMMARY_CHARACTERS: usize = 2000;
/// Longest claim text, in characters.
pub const MAX_CLAIM_CHARACTERS: usize = 2000;
/// Longest change note, note or rationale, in characters.
pub const MAX_NOTE_CHARACTERS: usize = 20_000;
/// Most tags per publish.
pub const MAX_TAGS: usize = 30;
/// Most subjects per publish.
pub const MAX_SUBJECTS: usize = 50;
/// Most sources per publish or review.
pub const MAX_SOURCES: usize = 50;
/// Most `used` entries per experience.
pub const MAX_USED_ENTRIES: usize = 50;
/// Largest serialized context, metrics, configuration or observations object, in bytes.
pub const MAX_AUXILIARY_OBJECT_BYTES: usize = 16 * 1024;
/// Most facets in a context.
pub const MAX_CONTEXT_FACETS: usize = 20;
