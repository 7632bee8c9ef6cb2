//! The references a write names as its caller gives them: the subjects and cited sources of a publish, a review or
//! a replicated revision, and the caps they share.

use super::ServiceError;
use super::limits::{MAX_ID_CHARACTERS, MAX_SOURCE_URL_CHARACTERS, MAX_SOURCES, MAX_TITLE_CHARACTERS};
use super::validation::{cap_items, cap_optional_text, cap_text};

/// A subject of a publish: an existing entity, or one named by type and name (found or created).
#[derive(Debug, Clone, PartialEq)]
pub enum SubjectReference {
    /// An `ent_` ID.
    Id(String),
    /// An entity named by type and name; matched by normalized name and type, created when missing.
    Named {
        /// The entity's name.
        name: String,
        /// The entity's type, lower_snake_case.
        entity_type: String,
        /// Other names (used only when the entity is created).
        aliases: Vec<String>,
        /// A description (used only when the entity is created).
        description: Option<String>,
    },
}

/// A cited source: an existing `src_` ID or a URL.
#[derive(Debug, Clone, PartialEq)]
pub enum SourceReference {
    /// A `src_` ID.
    Id(String),
    /// A URL with an optional title.
    Url {
        /// The URL.
        url: String,
        /// A title.
        title: Option<String>,
    },
}

/// The caps of cited sources (shared with reviews).
pub(super) fn check_source_sizes(sources: &[SourceReference]) -> Result<(), ServiceError> {
    cap_items("sources", sources.len(), MAX_SOURCES)?;
    for (position, source) in sources.iter().enumerate() {
        match source {
            SourceReference::Id(id) => cap_text(&format!("sources/{position}"), id, MAX_ID_CHARACTERS)?,
            SourceReference::Url { url, title } => {
                cap_text(&format!("sources/{position}/url"), url, MAX_SOURCE_URL_CHARACTERS)?;
                cap_optional_text(
                    &format!("sources/{position}/title"),
                    title.as_deref(),
                    MAX_TITLE_CHARACTERS,
                )?;
            }
        }
    }
    Ok(())
}
