//! Every check of published content that needs no database (sizes, formats, schemas, the content scan,
//! neutralized Markdown), shared by an agent's `publish` and a peer's replicated revision.

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::content_requests::{ExperienceRequest, PublishRequest};
use super::limits::{
    MAX_ALIASES, MAX_BODY_BYTES, MAX_CLAIM_CHARACTERS, MAX_CLAIMS, MAX_ID_CHARACTERS, MAX_KEYWORD_CHARACTERS,
    MAX_LANGUAGE_CHARACTERS, MAX_NAME_CHARACTERS, MAX_NORMALIZED_NAME_BYTES, MAX_NOTE_CHARACTERS, MAX_RELATIONS,
    MAX_SOURCE_URL_CHARACTERS, MAX_SOURCES, MAX_SUBJECTS, MAX_SUMMARY_CHARACTERS, MAX_TAG_CHARACTERS, MAX_TAGS,
    MAX_TITLE_CHARACTERS, MAX_USED_ENTRIES,
};
use super::references::{SourceReference, SubjectReference};
use super::validation::{
    cap_each_text, cap_items, cap_optional_text, cap_text, display_text, keyword, names_a_space_id,
    optional_display_text, optional_text, parse_id, required_text, type_name,
};
use super::{ErrorCode, Service, ServiceError};
use crate::domain::knowledge::{ALTERNATIVE_REASONS, RelationType};
use crate::domain::text::{
    claim_fingerprint, normalize_claim_text, normalize_entity_name, normalize_source_url, normalize_tag,
};
use crate::domain::{IdKind, PublicId};

/// A publish request after every check that needs no database.
pub(super) struct ValidatedContent {
    pub(super) content_type: String,
    pub(super) title: String,
    pub(super) summary: String,
    pub(super) body_markdown: String,
    pub(super) structured_data: Value,
    pub(super) revision_of: Option<PublicId>,
    pub(super) change_note: Option<String>,
    pub(super) subjects: Vec<ValidatedSubject>,
    pub(super) claims: Vec<(String, String, String)>,
    pub(super) sources: Vec<ValidatedSource>,
    pub(super) relations: Vec<(RelationType, PublicId, Option<String>)>,
    pub(super) tags: Vec<String>,
    pub(super) space: Option<SpaceReference>,
    pub(super) language: Option<String>,
    pub(super) context_key: Option<String>,
}

pub(super) enum ValidatedSubject {
    Id(PublicId),
    Named {
        name: String,
        normalized_name: String,
        entity_type: String,
        aliases: Vec<String>,
        description: String,
    },
}

pub(super) enum ValidatedSource {
    Id(PublicId),
    Url {
        url: String,
        normalized: String,
        family: String,
        title: Option<String>,
    },
}

pub(super) enum SpaceReference {
    Id(PublicId),
    Name(String),
}
impl Service {
    /// Every check of a publish that needs no database: sizes, formats, schemas and the content scan.
    pub(super) fn validate_content(&self, request: &PublishRequest) -> Result<ValidatedContent, ServiceError> {
        check_publish_sizes(request)?;
        let content_type = type_name("content_type", &request.content_type)?;
        let title = display_text("title", &request.title, MAX_TITLE_CHARACTERS)?;
        let summary = optional_text("summary", Some(&request.summary), MAX_SUMMARY_CHARACTERS)?.unwrap_or_default();
        if request.body_markdown.len() > MAX_BODY_BYTES {
            return Err(ServiceError::validation(
                "body_markdown",
                format!("body_markdown must be at most {MAX_BODY_BYTES} bytes"),
            )
            .with_details(json!({ "field": "body_markdown", "limit_bytes": MAX_BODY_BYTES })));
        }
        let structured_data = request.structured_data.clone().unwrap_or_else(|| json!({}));
        let structured_data = if structured_data.is_null() {
            json!({})
        } else {
            structured_data
        };
        self.inner
            .structured_data_validator
            .validate(&content_type, &structured_data)
            .map_err(|error| {
                ServiceError::new(
                    ErrorCode::ValidationFailed,
                    format!("structured_data{}: {}", error.pointer, error.message),
                )
                .with_details(json!({ "field": "structured_data", "pointer": error.pointer }))
            })?;
        let revision_of = request
            .revision_of
            .as_deref()
            .filter(|text| !text.trim().is_empty())
            .map(|text| super::validation::parse_target("revision_of", text, &[IdKind::Content], "revision_of"))
            .transpose()?;
        let change_note = optional_text("change_note", request.change_note.as_deref(), MAX_NOTE_CHARACTERS)?;
        let language = request
            .language
            .as_deref()
            .map(str::trim)
            .filter(|language| !language.is_empty())
            .map(validate_language)
            .transpose()?;

        if request.claims.len() > MAX_CLAIMS {
            return Err(
                ServiceError::validation("claims", format!("at most {MAX_CLAIMS} claims per publish"))
                    .with_details(json!({ "field": "claims", "limit": MAX_CLAIMS })),
            );
        }
        let mut claims: Vec<(String, String, String)> = Vec::new();
        for (position, text) in request.claims.iter().enumerate() {
            let text = required_text(&format!("claims/{position}/text"), text, MAX_CLAIM_CHARACTERS)?;
            super::validation::visible(&format!("claims/{position}/text"), &text)?;
            let normalized = normalize_claim_text(&text);
            if normalized.is_empty() {
                return Err(ServiceError::validation(
                    &format!("claims/{position}/text"),
                    "a claim needs words, not only punctuation",
                ));
            }
            let fingerprint = claim_fingerprint(&normalized);
            // The same claim twice in one publish is one claim.
            if !claims.iter().any(|(_, _, existing)| *existing == fingerprint) {
                claims.push((text, normalized, fingerprint));
            }
        }
        if request.relations.len() > MAX_RELATIONS {
            return Err(ServiceError::validation(
                "relations",
                format!("at most {MAX_RELATIONS} relations per publish"),
            )
            .with_details(json!({ "field": "relations", "limit": MAX_RELATIONS })));
        }
        let mut relations = Vec::new();
        for (position, relation) in request.relations.iter().enumerate() {
            let relation_type = RelationType::parse(keyword(
                &format!("relations/{position}/type"),
                &relation.relation_type,
            )?)
            .ok_or_else(|| {
                ServiceError::validation(
                    &format!("relations/{position}/type"),
                    "relation type must be corrects, alternative_to, known_issue_of, supersedes or derived_from",
                )
            })?;
            let target = super::validation::parse_target(
                &format!("relations/{position}/target"),
                &relation.target,
                &[IdKind::Content, IdKind::Revision, IdKind::Entity, IdKind::Claim],
                "a relation",
            )?;
            let reason = match relation
                .reason
                .as_deref()
                .map(|reason| keyword(&format!("relations/{position}/reason"), reason))
                .transpose()?
                .filter(|reason| !reason.is_empty())
            {
                None => None,
                Some(reason) if relation_type == RelationType::AlternativeTo => {
                    if !ALTERNATIVE_REASONS.contains(&reason) {
                        return Err(ServiceError::validation(
                            &format!("relations/{position}/reason"),
                            format!("reason must be one of {}", ALTERNATIVE_REASONS.join(", ")),
                        ));
                    }
                    Some(reason.to_owned())
                }
                Some(_) => {
                    return Err(ServiceError::validation(
                        &format!("relations/{position}/reason"),
                        "a reason is given only with alternative_to",
                    ));
                }
            };
            if revision_of.as_ref() == Some(&target) {
                return Err(ServiceError::validation(
                    &format!("relations/{position}/target"),
                    "content cannot relate to itself",
                ));
            }
            if !relations.iter().any(|(existing_type, existing_target, _)| {
                *existing_type == relation_type && *existing_target == target
            }) {
                relations.push((relation_type, target, reason));
            }
        }
        if request.tags.len() > MAX_TAGS {
            return Err(ServiceError::validation("tags", format!("at most {MAX_TAGS} tags")));
        }
        let mut tags = Vec::new();
        for (position, tag) in request.tags.iter().enumerate() {
            // Tags are stored lowercased, which hides an access key from the scan of the validated content.
            self.scan_text(&format!("tags/{position}"), tag)?;
            let tag = normalize_tag(tag)
                .map_err(|error| ServiceError::validation(&format!("tags/{position}"), format!("tag: {error}")))?;
            if !tags.contains(&tag) {
                tags.push(tag);
            }
        }
        if request.subjects.len() > MAX_SUBJECTS {
            return Err(ServiceError::validation(
                "subjects",
                format!("at most {MAX_SUBJECTS} subjects"),
            ));
        }
        let mut subjects = Vec::new();
        for (position, subject) in request.subjects.iter().enumerate() {
            subjects.push(match subject {
                SubjectReference::Id(text) => ValidatedSubject::Id(super::validation::parse_target(
                    &format!("subjects/{position}"),
                    text,
                    &[IdKind::Entity],
                    "subjects",
                )?),
                SubjectReference::Named {
                    name,
                    entity_type,
                    aliases,
                    description,
                } => {
                    let name = display_text(&format!("subjects/{position}/name"), name, MAX_NAME_CHARACTERS)?;
                    let entity_type = type_name(&format!("subjects/{position}/type"), entity_type)?;
                    let mut cleaned_aliases = Vec::new();
                    for (alias_position, alias) in aliases.iter().enumerate() {
                        let alias = display_text(
                            &format!("subjects/{position}/aliases/{alias_position}"),
                            alias,
                            MAX_NAME_CHARACTERS,
                        )?;
                        if !cleaned_aliases.contains(&alias) {
                            cleaned_aliases.push(alias);
                        }
                    }
                    let normalized_name = normalize_entity_name(&name);
                    if normalized_name.len() > MAX_NORMALIZED_NAME_BYTES {
                        return Err(ServiceError::validation(
                            &format!("subjects/{position}/name"),
                            format!(
                                "subjects/{position}/name is longer than {MAX_NORMALIZED_NAME_BYTES} bytes once \
                                 normalized (NFKC and case folding expand some characters); use a shorter name"
                            ),
                        ));
                    }
                    ValidatedSubject::Named {
                        normalized_name,
                        name,
                        entity_type,
                        aliases: cleaned_aliases,
                        description: optional_text(
                            &format!("subjects/{position}/description"),
                            description.as_deref(),
                            MAX_SUMMARY_CHARACTERS,
                        )?
                        .unwrap_or_default(),
                    }
                }
            });
        }
        if request.sources.len() > MAX_SOURCES {
            return Err(ServiceError::validation(
                "sources",
                format!("at most {MAX_SOURCES} sources"),
            ));
        }
        let sources = self.validate_sources(&request.sources)?;
        let space = request
            .space
            .as_deref()
            .map(str::trim)
            .filter(|space| !space.is_empty())
            .map(|space| {
                if names_a_space_id(space) {
                    parse_id("space", space).map(SpaceReference::Id)
                } else {
                    Ok(SpaceReference::Name(space.to_owned()))
                }
            })
            .transpose()?;

        let validated = ValidatedContent {
            content_type,
            title,
            summary,
            body_markdown: self.neutralize_body(&request.body_markdown),
            structured_data,
            revision_of,
            change_note,
            subjects,
            claims,
            sources,
            relations,
            tags,
            space,
            language,
            context_key: None,
        };
        self.scan_content(&validated)?;
        Ok(validated)
    }

    /// Validates cited sources (shared with reviews).
    pub(super) fn validate_sources(&self, sources: &[SourceReference]) -> Result<Vec<ValidatedSource>, ServiceError> {
        let mut validated = Vec::new();
        for (position, source) in sources.iter().enumerate() {
            validated.push(match source {
                SourceReference::Id(text) => ValidatedSource::Id(super::validation::parse_target(
                    &format!("sources/{position}"),
                    text,
                    &[IdKind::Source],
                    "sources",
                )?),
                SourceReference::Url { url, title } => {
                    let normalized = normalize_source_url(url).map_err(|error| {
                        ServiceError::validation(&format!("sources/{position}/url"), format!("source URL: {error}"))
                    })?;
                    if normalized.normalized.chars().nth(MAX_SOURCE_URL_CHARACTERS).is_some() {
                        return Err(ServiceError::validation(
                            &format!("sources/{position}/url"),
                            format!(
                                "a source URL may have at most {MAX_SOURCE_URL_CHARACTERS} characters, also once \
                                 normalized (percent-encoded)"
                            ),
                        ));
                    }
                    let title = optional_display_text(
                        &format!("sources/{position}/title"),
                        title.as_deref(),
                        MAX_TITLE_CHARACTERS,
                    )?;
                    self.scan_text(&format!("sources/{position}/url"), &normalized.url)?;
                    if let Some(title) = &title {
                        self.scan_text(&format!("sources/{position}/title"), title)?;
                    }
                    ValidatedSource::Url {
                        url: normalized.url,
                        normalized: normalized.normalized,
                        family: normalized.family,
                        title,
                    }
                }
            });
        }
        Ok(validated)
    }

    fn scan_content(&self, content: &ValidatedContent) -> Result<(), ServiceError> {
        let mut fields: Vec<(String, &str)> = vec![
            ("title".to_owned(), content.title.as_str()),
            ("summary".to_owned(), content.summary.as_str()),
            ("body_markdown".to_owned(), content.body_markdown.as_str()),
        ];
        if let Some(note) = &content.change_note {
            fields.push(("change_note".to_owned(), note.as_str()));
        }
        for (position, (text, _, _)) in content.claims.iter().enumerate() {
            fields.push((format!("claims/{position}/text"), text.as_str()));
        }
        for (position, tag) in content.tags.iter().enumerate() {
            fields.push((format!("tags/{position}"), tag.as_str()));
        }
        for (position, subject) in content.subjects.iter().enumerate() {
            if let ValidatedSubject::Named {
                name,
                aliases,
                description,
                ..
            } = subject
            {
                fields.push((format!("subjects/{position}/name"), name.as_str()));
                fields.push((format!("subjects/{position}/description"), description.as_str()));
                for (alias_position, alias) in aliases.iter().enumerate() {
                    fields.push((format!("subjects/{position}/aliases/{alias_position}"), alias.as_str()));
                }
            }
        }
        for (field, text) in &fields {
            self.scan_text(field, text)?;
        }
        if let Some(finding) = self
            .inner
            .content_scanner
            .scan_json("structured_data", &content.structured_data)
        {
            return Err(ServiceError::content_rejected(&finding));
        }
        Ok(())
    }

    /// Refuses text that carries a secret or personal data; the error names the rule and field, never the match.
    pub(super) fn scan_text(&self, field: &str, text: &str) -> Result<(), ServiceError> {
        match self.inner.content_scanner.scan_text(field, text) {
            Some(finding) => Err(ServiceError::content_rejected(&finding)),
            None => Ok(()),
        }
    }

    /// Markdown with raw HTML and active links neutralized, as every stored body is.
    pub(super) fn neutralize_body(&self, markdown: &str) -> String {
        super::markdown::neutralize_markdown(markdown)
    }
}

/// Every size cap of a publish (`limits`), checked before anything else reads the request. Experiences share it:
/// they are published as content.
fn check_publish_sizes(request: &PublishRequest) -> Result<(), ServiceError> {
    cap_text("content_type", &request.content_type, MAX_KEYWORD_CHARACTERS)?;
    cap_text("title", &request.title, MAX_TITLE_CHARACTERS)?;
    cap_text("summary", &request.summary, super::limits::MAX_SUMMARY_CHARACTERS)?;
    if request.body_markdown.len() > MAX_BODY_BYTES {
        return Err(ServiceError::validation(
            "body_markdown",
            format!("body_markdown must be at most {MAX_BODY_BYTES} bytes"),
        )
        .with_details(json!({ "field": "body_markdown", "limit_bytes": MAX_BODY_BYTES })));
    }
    cap_optional_text("revision_of", request.revision_of.as_deref(), MAX_ID_CHARACTERS)?;
    cap_optional_text("change_note", request.change_note.as_deref(), MAX_NOTE_CHARACTERS)?;
    check_subject_sizes(&request.subjects)?;
    cap_items("claims", request.claims.len(), MAX_CLAIMS)?;
    for (position, claim) in request.claims.iter().enumerate() {
        // A claim may come as its text or as `{ "text": … }`; either way the text is what the cap counts.
        cap_text(&format!("claims/{position}"), claim, MAX_CLAIM_CHARACTERS)?;
    }
    super::references::check_source_sizes(&request.sources)?;
    cap_items("relations", request.relations.len(), MAX_RELATIONS)?;
    for (position, relation) in request.relations.iter().enumerate() {
        cap_text(
            &format!("relations/{position}/type"),
            &relation.relation_type,
            MAX_KEYWORD_CHARACTERS,
        )?;
        cap_text(
            &format!("relations/{position}/target"),
            &relation.target,
            MAX_ID_CHARACTERS,
        )?;
        cap_optional_text(
            &format!("relations/{position}/reason"),
            relation.reason.as_deref(),
            MAX_KEYWORD_CHARACTERS,
        )?;
    }
    cap_items("tags", request.tags.len(), MAX_TAGS)?;
    cap_each_text("tags", &request.tags, MAX_TAG_CHARACTERS)?;
    cap_optional_text("space", request.space.as_deref(), MAX_NAME_CHARACTERS)?;
    cap_optional_text("language", request.language.as_deref(), MAX_LANGUAGE_CHARACTERS)?;
    Ok(())
}

/// The caps of an experience's own fields; the rest (title, subjects, tags, …) is checked when it is validated as
/// a publish.
pub(super) fn check_experience_sizes(request: &ExperienceRequest) -> Result<(), ServiceError> {
    cap_text("result", &request.result, MAX_KEYWORD_CHARACTERS)?;
    cap_items("used", request.used.len(), MAX_USED_ENTRIES)?;
    for (position, used) in request.used.iter().enumerate() {
        cap_text(&format!("used/{position}/id"), &used.id, MAX_ID_CHARACTERS)?;
        cap_text(&format!("used/{position}/result"), &used.result, MAX_KEYWORD_CHARACTERS)?;
        cap_optional_text(
            &format!("used/{position}/note"),
            used.note.as_deref(),
            MAX_NOTE_CHARACTERS,
        )?;
    }
    Ok(())
}

fn check_subject_sizes(subjects: &[SubjectReference]) -> Result<(), ServiceError> {
    cap_items("subjects", subjects.len(), MAX_SUBJECTS)?;
    for (position, subject) in subjects.iter().enumerate() {
        match subject {
            SubjectReference::Id(id) => cap_text(&format!("subjects/{position}"), id, MAX_ID_CHARACTERS)?,
            SubjectReference::Named {
                name,
                entity_type,
                aliases,
                description,
            } => {
                cap_text(&format!("subjects/{position}/name"), name, MAX_NAME_CHARACTERS)?;
                cap_text(
                    &format!("subjects/{position}/type"),
                    entity_type,
                    MAX_KEYWORD_CHARACTERS,
                )?;
                cap_items(&format!("subjects/{position}/aliases"), aliases.len(), MAX_ALIASES)?;
                cap_each_text(&format!("subjects/{position}/aliases"), aliases, MAX_NAME_CHARACTERS)?;
                cap_optional_text(
                    &format!("subjects/{position}/description"),
                    description.as_deref(),
                    super::limits::MAX_SUMMARY_CHARACTERS,
                )?;
            }
        }
    }
    Ok(())
}

fn validate_language(language: &str) -> Result<String, ServiceError> {
    let mut parts = language.split('-');
    let primary = parts.next().unwrap_or_default();
    let primary_ok =
        (2..=3).contains(&primary.len()) && primary.chars().all(|character| character.is_ascii_alphabetic());
    let rest_ok = parts
        .all(|part| (1..=8).contains(&part.len()) && part.chars().all(|character| character.is_ascii_alphanumeric()));
    if primary_ok && rest_ok {
        Ok(language.to_ascii_lowercase())
    } else {
        Err(ServiceError::validation(
            "language",
            "language must be a language tag such as en, de or pt-br",
        ))
    }
}

pub(super) fn content_hash(content: &ValidatedContent) -> String {
    let canonical = json!({
        "title": content.title,
        "summary": content.summary,
        "body_markdown": content.body_markdown,
        "structured_data": content.structured_data,
        "language": content.language,
    });
    hex::encode(Sha256::digest(canonical.to_string().as_bytes()))
}
