//! Publishing knowledge: new content items and revisions with their claims, subjects, sources, relations and
//! tags, and first-hand experiences with the usage they report.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::limits::{
    MAX_ALIASES, MAX_BODY_BYTES, MAX_CLAIM_CHARACTERS, MAX_CLAIMS, MAX_ID_CHARACTERS, MAX_KEYWORD_CHARACTERS,
    MAX_LANGUAGE_CHARACTERS, MAX_NAME_CHARACTERS, MAX_NORMALIZED_NAME_BYTES, MAX_NOTE_CHARACTERS, MAX_RELATIONS,
    MAX_SOURCE_URL_CHARACTERS, MAX_SOURCES, MAX_SUBJECTS, MAX_SUMMARY_CHARACTERS, MAX_TAG_CHARACTERS, MAX_TAGS,
    MAX_TITLE_CHARACTERS, MAX_USED_ENTRIES,
};
use super::references::{SourceReference, SubjectReference};
use super::revision_write::{ClaimToLink, RevisionWrite};
use super::trust::TrustTarget;
use super::unit_of_work::UnitOfWork;
use super::validation::{
    cap_each_text, cap_items, cap_optional_text, cap_text, display_text, keyword, names_a_space_id,
    optional_display_text, optional_text, parse_id, required_text, type_name,
};
use super::writes::{CallMetadata, WriteSummary, within_write};
use super::{ErrorCode, Service, ServiceError};
use crate::domain::change::Change;
use crate::domain::knowledge::{
    ALTERNATIVE_REASONS, Claim, ContentItem, Entity, RelationType, Revision, Source, Space,
};
use crate::domain::text::{
    claim_fingerprint, normalize_claim_text, normalize_entity_name, normalize_source_url, normalize_tag,
};
use crate::domain::{AuthenticatedActor, IdKind, PublicId, Scope, TrustStatus};
use crate::store::trust::TrustTargetKind;
use crate::store::{self, Transaction};

/// A relation to declare.
#[derive(Debug, Clone, PartialEq)]
pub struct RelationRequest {
    /// `corrects`, `alternative_to`, `known_issue_of`, `supersedes` or `derived_from`.
    pub relation_type: String,
    /// The related object's ID.
    pub target: String,
    /// For `alternative_to`: one of the spec's reasons.
    pub reason: Option<String>,
}

/// Everything `publish` accepts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PublishRequest {
    /// Open-ended content type.
    pub content_type: String,
    /// Title.
    pub title: String,
    /// Summary.
    pub summary: String,
    /// Markdown body.
    pub body_markdown: String,
    /// Type-specific structured data.
    pub structured_data: Option<Value>,
    /// The caller's own content item this is a new revision of.
    pub revision_of: Option<String>,
    /// What changed.
    pub change_note: Option<String>,
    /// Subjects.
    pub subjects: Vec<SubjectReference>,
    /// Claim texts.
    pub claims: Vec<String>,
    /// Sources.
    pub sources: Vec<SourceReference>,
    /// Relations.
    pub relations: Vec<RelationRequest>,
    /// Tags.
    pub tags: Vec<String>,
    /// A `spc_` ID or space name; the default space when absent.
    pub space: Option<String>,
    /// Language tag.
    pub language: Option<String>,
    /// Idempotency key.
    pub idempotency_key: Option<String>,
}

/// A claim of a published revision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PublishedClaim {
    /// The claim's ID.
    pub id: String,
    /// Whether an equivalent claim existed and was linked instead of created.
    pub matched_existing: bool,
}

/// What `publish` returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PublishOutcome {
    /// The content item.
    pub id: String,
    /// The new revision.
    pub revision_id: String,
    /// Its number.
    pub revision_no: i32,
    /// Its claims in order.
    pub claims: Vec<PublishedClaim>,
}

impl WriteSummary for PublishOutcome {
    fn summary(&self) -> String {
        format!(
            "published {} revision {} ({})",
            self.id, self.revision_no, self.revision_id
        )
    }
}

/// One `used` entry of an experience.
#[derive(Debug, Clone, PartialEq)]
pub struct UsedRequest {
    /// What was used: `cnt_`, `rev_`, `clm_` or `ent_`.
    pub id: String,
    /// How it went.
    pub result: String,
    /// A note.
    pub note: Option<String>,
}

/// Everything `submit_experience` accepts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExperienceRequest {
    /// Title.
    pub title: String,
    /// Summary.
    pub summary: String,
    /// Markdown body.
    pub body_markdown: String,
    /// Subjects.
    pub subjects: Vec<SubjectReference>,
    /// Overall result.
    pub result: String,
    /// Production or real-world use.
    pub real_world_use: bool,
    /// Context facets.
    pub context: Option<Value>,
    /// Configuration used.
    pub configuration: Option<Value>,
    /// Observations.
    pub observations: Option<Value>,
    /// Metrics.
    pub metrics: Option<Value>,
    /// What was used, one usage event each.
    pub used: Vec<UsedRequest>,
    /// Tags.
    pub tags: Vec<String>,
    /// A `spc_` ID or space name.
    pub space: Option<String>,
    /// Language tag.
    pub language: Option<String>,
    /// Idempotency key.
    pub idempotency_key: Option<String>,
}

/// What `submit_experience` returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExperienceOutcome {
    /// The experience content item.
    pub id: String,
    /// Its revision.
    pub revision_id: String,
    /// One usage event per `used` entry, in order.
    pub usage_ids: Vec<String>,
    /// The usage events whose target is the work of the caller's own root controller: they weigh nothing
    /// (responses stored for idempotency before this field existed read as none).
    #[serde(default)]
    pub self_evidence_usage_ids: Vec<String>,
}

impl WriteSummary for ExperienceOutcome {
    fn summary(&self) -> String {
        format!("experience {} with {} usage events", self.id, self.usage_ids.len())
    }
}

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
    /// `publish`: a new content item, or a new revision of the caller's own item.
    pub async fn publish(
        &self,
        caller: &AuthenticatedActor,
        metadata: &CallMetadata,
        request: PublishRequest,
    ) -> Result<PublishOutcome, ServiceError> {
        self.require_scope(caller, Scope::Publish)?;
        let validated = self.validate_content(&request)?;
        let idempotency_key = request.idempotency_key.as_deref();
        within_write!(self, caller, metadata, idempotency_key, |unit| {
            self.publish_in(unit, caller, &validated).await
        })
    }

    /// `submit_experience`: an experience content item and one usage event per `used` entry, in one transaction.
    pub async fn submit_experience(
        &self,
        caller: &AuthenticatedActor,
        metadata: &CallMetadata,
        request: ExperienceRequest,
    ) -> Result<ExperienceOutcome, ServiceError> {
        self.require_scope(caller, Scope::Publish)?;
        if !request.used.is_empty() {
            self.require_scope(caller, Scope::Usage)?;
        }
        check_experience_sizes(&request)?;
        let result = crate::domain::evidence::UsageOutcome::parse(keyword("result", &request.result)?)
            .ok_or_else(|| ServiceError::validation("result", "result must be success, partial, failure or unknown"))?;
        let (context, context_key) = super::validation::context("context", request.context.as_ref())?;
        let configuration = super::validation::object("configuration", request.configuration.as_ref())?;
        let observations = super::validation::object("observations", request.observations.as_ref())?;
        let metrics = super::validation::object("metrics", request.metrics.as_ref())?;
        let mut used = Vec::with_capacity(request.used.len());
        for (position, entry) in request.used.iter().enumerate() {
            let field = format!("used/{position}/id");
            let target = super::validation::parse_target(
                &field,
                &entry.id,
                &[IdKind::Content, IdKind::Revision, IdKind::Claim, IdKind::Entity],
                "submit_experience",
            )?;
            let entry_result = crate::domain::evidence::UsageOutcome::parse(keyword(
                &format!("used/{position}/result"),
                &entry.result,
            )?)
            .ok_or_else(|| {
                ServiceError::validation(
                    &format!("used/{position}/result"),
                    "result must be success, partial, failure or unknown",
                )
            })?;
            let note = optional_text(
                &format!("used/{position}/note"),
                entry.note.as_deref(),
                MAX_NOTE_CHARACTERS,
            )?;
            used.push((target, entry_result, note));
        }
        let structured_data = json!({
            "result": result.as_str(),
            "real_world_use": request.real_world_use,
            "context": context,
            "configuration": configuration,
            "observations": observations,
            "metrics": metrics,
        });
        let publish_request = PublishRequest {
            content_type: "experience".to_owned(),
            title: request.title.clone(),
            summary: request.summary.clone(),
            body_markdown: request.body_markdown.clone(),
            structured_data: Some(structured_data),
            subjects: request.subjects.clone(),
            tags: request.tags.clone(),
            space: request.space.clone(),
            language: request.language.clone(),
            ..PublishRequest::default()
        };
        let mut validated = self.validate_content(&publish_request)?;
        validated.context_key = Some(context_key.to_string());
        for (position, (_, _, note)) in used.iter().enumerate() {
            if let Some(note) = note {
                self.scan_text(&format!("used/{position}/note"), note)?;
            }
        }
        // The used targets and the caller's standing are read before the write opens (see `prepare_evidence`).
        let mut prepared = Vec::with_capacity(used.len());
        if !used.is_empty() {
            let mut reader = self.store().reader().await?;
            for (position, (target, _, _)) in used.iter().enumerate() {
                let evidence = self
                    .prepare_evidence(&mut reader.conn(), caller, target, &format!("used/{position}/id"))
                    .await?;
                prepared.push(evidence.after_earlier_records(position));
            }
        }
        let idempotency_key = request.idempotency_key.as_deref();
        within_write!(self, caller, metadata, idempotency_key, |unit| {
            self.record_experience_in(
                unit,
                caller,
                &validated,
                &used,
                &prepared,
                &request,
                &context,
                &context_key,
            )
            .await
        })
    }

    #[allow(clippy::too_many_arguments)] // The parts of one validated experience.
    async fn record_experience_in(
        &self,
        unit: &mut UnitOfWork,
        caller: &AuthenticatedActor,
        validated: &ValidatedContent,
        used: &[(PublicId, crate::domain::evidence::UsageOutcome, Option<String>)],
        prepared: &[super::evidence::PreparedEvidence],
        request: &ExperienceRequest,
        context: &Value,
        context_key: &crate::domain::ContextKey,
    ) -> Result<ExperienceOutcome, ServiceError> {
        {
            let published = self.publish_in(unit, caller, validated).await?;
            let experience_id = parse_id("id", &published.id)?;
            let mut usage_ids = Vec::with_capacity(used.len());
            let mut self_evidence_usage_ids = Vec::new();
            for (position, ((target, entry_result, note), evidence)) in used.iter().zip(prepared).enumerate() {
                let usage = super::evidence::NewUsage {
                    target: target.clone(),
                    field: format!("used/{position}/id"),
                    usage_type: "experience".to_owned(),
                    result: *entry_result,
                    real_world_use: request.real_world_use,
                    context: context.clone(),
                    context_key: context_key.clone(),
                    metrics: Value::Object(serde_json::Map::new()),
                    note: note.clone(),
                    experience_id: Some(experience_id.clone()),
                };
                let recorded = self.record_usage_in(unit, caller, usage, evidence.clone()).await?;
                if recorded.self_evidence {
                    self_evidence_usage_ids.push(recorded.id.clone());
                }
                usage_ids.push(recorded.id);
            }
            Ok(ExperienceOutcome {
                id: published.id,
                revision_id: published.revision_id,
                usage_ids,
                self_evidence_usage_ids,
            })
        }
    }

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

    async fn publish_in(
        &self,
        unit: &mut UnitOfWork,
        caller: &AuthenticatedActor,
        content: &ValidatedContent,
    ) -> Result<PublishOutcome, ServiceError> {
        let now = self.now();
        let author = &caller.actor;
        let (content_item, revision_no, previous_revision, visibility) = match &content.revision_of {
            Some(content_id) => {
                let existing = store::knowledge::find_content_for_update(&mut unit.conn(), content_id)
                    .await?
                    .ok_or_else(|| ServiceError::not_found(content_id.as_str()))?;
                if existing.deleted_at.is_some() {
                    return Err(deleted_content(content_id)
                        .with_details(json!({ "field": "revision_of", "id": content_id.as_str(), "deleted": true })));
                }
                if existing.author_id != author.id {
                    return Err(ServiceError::new(
                        ErrorCode::NotAuthor,
                        "you can only revise content you authored; publish a correction with a `corrects` relation instead",
                    )
                    .with_details(json!({ "field": "revision_of", "author": existing.author_id.as_str() })));
                }
                if existing.content_type != content.content_type {
                    return Err(ServiceError::validation(
                        "content_type",
                        format!("a revision keeps its item's content type ({})", existing.content_type),
                    ));
                }
                if let Some(space) = &content.space {
                    let space = self.resolve_space(&mut unit.conn(), Some(space)).await?;
                    if space.id != existing.space_id {
                        return Err(ServiceError::validation(
                            "space",
                            "a revision stays in its item's space",
                        ));
                    }
                }
                let visibility = store::knowledge::find_space(&mut unit.conn(), &existing.space_id)
                    .await?
                    .ok_or_else(|| ServiceError::internal(format!("content {} has no space", existing.id)))?
                    .visibility;
                let previous = existing.current_revision_id.clone();
                let number = existing.current_revision_no + 1;
                (existing, number, Some(previous), visibility)
            }
            None => {
                let space = self.resolve_space(&mut unit.conn(), content.space.as_ref()).await?;
                let visibility = space.visibility;
                let content_id = self.new_id(IdKind::Content);
                let item = ContentItem {
                    id: content_id,
                    content_type: content.content_type.clone(),
                    space_id: space.id,
                    author_id: author.id.clone(),
                    author_root_controller: author.root_controller.clone(),
                    origin: self.realm().to_owned(),
                    current_revision_id: self.new_id(IdKind::Revision),
                    current_revision_no: 1,
                    created_at: now,
                    updated_at: now,
                    received_at: now,
                    deleted_at: None,
                };
                (item, 1, None, visibility)
            }
        };
        let revision_id = if previous_revision.is_none() {
            content_item.current_revision_id.clone()
        } else {
            self.new_id(IdKind::Revision)
        };
        // Relation targets must exist before anything is written.
        let mut relation_targets = Vec::new();
        for (position, (relation_type, target, reason)) in content.relations.iter().enumerate() {
            self.require_object_exists(&mut unit.conn(), target, &format!("relations/{position}/target"))
                .await?;
            if target == &content_item.id {
                return Err(ServiceError::validation(
                    &format!("relations/{position}/target"),
                    "content cannot relate to itself",
                ));
            }
            relation_targets.push((*relation_type, target.clone(), reason.clone()));
        }

        let revision = Revision {
            id: revision_id.clone(),
            content_id: content_item.id.clone(),
            revision_no,
            title: content.title.clone(),
            summary: content.summary.clone(),
            body_markdown: content.body_markdown.clone(),
            structured_data: content.structured_data.clone(),
            language: content.language.clone(),
            change_note: content.change_note.clone(),
            context_key: content.context_key.clone(),
            author_id: author.id.clone(),
            content_sha256: content_hash(content),
            origin: self.realm().to_owned(),
            created_at: now,
            received_at: now,
        };
        // Claims are created with fresh IDs unless a claim with the same fingerprint exists (then they link to it).
        let claims: Vec<ClaimToLink> = content
            .claims
            .iter()
            .map(|(text, normalized, fingerprint)| ClaimToLink {
                new: Claim {
                    id: self.new_id(IdKind::Claim),
                    text: text.clone(),
                    normalized_text: normalized.clone(),
                    fingerprint: fingerprint.clone(),
                    author_id: author.id.clone(),
                    author_root_controller: author.root_controller.clone(),
                    origin: self.realm().to_owned(),
                    created_at: now,
                },
            })
            .collect();
        let mut subject_ids: Vec<PublicId> = Vec::new();
        for (position, subject) in content.subjects.iter().enumerate() {
            let entity_id = match subject {
                ValidatedSubject::Id(id) => {
                    store::knowledge::find_entity(&mut unit.conn(), id)
                        .await?
                        .ok_or_else(|| {
                            ServiceError::not_found(id.as_str())
                                .with_details(json!({ "id": id.as_str(), "field": format!("subjects/{position}") }))
                        })?
                        .id
                }
                ValidatedSubject::Named {
                    name,
                    normalized_name,
                    entity_type,
                    aliases,
                    description,
                } => {
                    self.find_or_create_entity(unit, author, name, normalized_name, entity_type, aliases, description)
                        .await?
                        .id
                }
            };
            // Two subject entries may name the same entity.
            if !subject_ids.contains(&entity_id) {
                subject_ids.push(entity_id);
            }
        }
        let mut sources = Vec::with_capacity(content.sources.len());
        for (position, source) in content.sources.iter().enumerate() {
            let (source, title) = self.resolve_source(&mut unit.conn(), source, position).await?;
            sources.push((source.id, title));
        }
        let linked = self
            .write_revision(
                unit,
                RevisionWrite {
                    item: &content_item,
                    new_item: previous_revision.is_none(),
                    becomes_current: true,
                    previous_revision: previous_revision.clone(),
                    revision: &revision,
                    claims: &claims,
                    subject_ids: &subject_ids,
                    sources: &sources,
                    relations: &relation_targets,
                    tags: &content.tags,
                    indexed_at: now,
                    existing_claims: None,
                    proof: None,
                },
            )
            .await?;
        let published_claims: Vec<PublishedClaim> = linked
            .into_iter()
            .map(|claim| PublishedClaim {
                id: claim.id.into_string(),
                matched_existing: claim.matched_existing,
            })
            .collect();

        // Federation: the change leaves with this unit of work when its space is federated.
        let space_id = content_item.space_id.clone();
        unit.emit(
            self.new_internal_id(),
            Change::ContentRevised {
                content_id: content_item.id.as_str().to_owned(),
                revision_id: revision_id.as_str().to_owned(),
                revision_no,
            },
            &space_id,
            visibility,
            now,
        );
        Ok(PublishOutcome {
            id: content_item.id.into_string(),
            revision_id: revision_id.into_string(),
            revision_no,
            claims: published_claims,
        })
    }

    /// Re-assesses the current revisions of content that `source_content` declares it supersedes, because whether
    /// that relation is effective can change with a new revision or with the source's trust. With
    /// `replaced_revision`, content that this earlier revision of the source superseded is re-assessed too: its
    /// relations stopped counting when it stopped being current.
    pub(super) async fn reassess_superseded_targets(
        &self,
        unit: &mut UnitOfWork,
        source_content: &PublicId,
        replaced_revision: Option<&PublicId>,
    ) -> Result<(), ServiceError> {
        let mut relations =
            store::knowledge::supersedes_relations_of_current_revision(&mut unit.conn(), source_content).await?;
        if let Some(replaced) = replaced_revision {
            relations.extend(store::knowledge::supersedes_relations_declared_by(&mut unit.conn(), replaced).await?);
        }
        let mut reassessed: Vec<PublicId> = Vec::new();
        for relation in &relations {
            let target_content = match relation.target_id.kind() {
                IdKind::Content => Some(relation.target_id.clone()),
                IdKind::Revision => store::knowledge::revision_target(
                    &mut unit.conn(),
                    store::knowledge::RevisionOf::Revision(&relation.target_id),
                )
                .await?
                .map(|(content, _, _)| content.id),
                _ => None,
            };
            let Some(target_content) = target_content else {
                continue;
            };
            if reassessed.contains(&target_content) {
                continue;
            }
            let current = store::knowledge::revision_target(
                &mut unit.conn(),
                store::knowledge::RevisionOf::CurrentOf(&target_content),
            )
            .await?;
            if let Some((content, revision_id, revision_created_at)) = current {
                let target = super::trust::revision_trust_target(revision_id, revision_created_at, content);
                self.apply_evidence_change(unit, &target, super::trust::EvidenceChange::Reassess)
                    .await?;
            }
            reassessed.push(target_content);
        }
        Ok(())
    }

    async fn resolve_space(
        &self,
        conn: &mut store::Conn<'_>,
        reference: Option<&SpaceReference>,
    ) -> Result<Space, ServiceError> {
        let space = match reference {
            None => store::knowledge::find_default_space(conn, self.realm())
                .await?
                .ok_or_else(|| ServiceError::internal("this realm has no default space"))?,
            Some(SpaceReference::Id(id)) => store::knowledge::find_space(conn, id).await?.ok_or_else(|| {
                ServiceError::not_found(id.as_str()).with_details(json!({ "id": id.as_str(), "field": "space" }))
            })?,
            Some(SpaceReference::Name(name)) => store::knowledge::list_spaces(conn)
                .await?
                .into_iter()
                .find(|space| space.origin == self.realm() && space.name == *name)
                .ok_or_else(|| {
                    ServiceError::new(ErrorCode::NotFound, format!("no space named {name:?} exists"))
                        .with_details(json!({ "field": "space" }))
                })?,
        };
        if space.origin != self.realm() {
            return Err(ServiceError::validation(
                "space",
                "this space belongs to another realm and cannot be written here",
            ));
        }
        Ok(space)
    }

    /// Fails with `not_found` unless `id` names an existing object of a kind relations may point at.
    async fn require_object_exists(
        &self,
        conn: &mut store::Conn<'_>,
        id: &PublicId,
        field: &str,
    ) -> Result<(), ServiceError> {
        let exists = match id.kind() {
            IdKind::Content => store::knowledge::find_content(conn, id).await?.is_some(),
            IdKind::Revision => store::knowledge::find_revision(conn, id).await?.is_some(),
            IdKind::Entity => store::knowledge::find_entity(conn, id).await?.is_some(),
            IdKind::Claim => store::knowledge::find_claim(conn, id).await?.is_some(),
            _ => false,
        };
        if exists {
            Ok(())
        } else {
            Err(ServiceError::not_found(id.as_str()).with_details(json!({ "id": id.as_str(), "field": field })))
        }
    }

    #[allow(clippy::too_many_arguments)] // The fields of one named subject; a struct would only rename them.
    async fn find_or_create_entity(
        &self,
        unit: &mut UnitOfWork,
        author: &crate::domain::Actor,
        name: &str,
        normalized_name: &str,
        entity_type: &str,
        aliases: &[String],
        description: &str,
    ) -> Result<Entity, ServiceError> {
        if let Some(entity) =
            store::knowledge::find_entity_by_name(&mut unit.conn(), self.realm(), entity_type, normalized_name).await?
        {
            return Ok(entity);
        }
        let entity = Entity {
            id: self.new_id(IdKind::Entity),
            entity_type: entity_type.to_owned(),
            name: name.to_owned(),
            normalized_name: normalized_name.to_owned(),
            aliases: aliases.to_vec(),
            description: description.to_owned(),
            origin: self.realm().to_owned(),
            created_by: author.id.clone(),
            created_by_root_controller: author.root_controller.clone(),
            created_at: self.now(),
        };
        let indexed_at = entity.created_at;
        self.insert_entity(unit, &entity, indexed_at).await?;
        Ok(entity)
    }

    /// Stores a new entity with its first trust assessment and its search document (which says it arrived at
    /// `indexed_at`: when it was made here, or when a replicated one was received). Shared by local subjects and
    /// replication.
    pub(super) async fn insert_entity(
        &self,
        unit: &mut UnitOfWork,
        entity: &Entity,
        indexed_at: chrono::DateTime<chrono::Utc>,
    ) -> Result<(), ServiceError> {
        store::knowledge::insert_entity(&mut unit.conn(), entity).await?;
        let target = TrustTarget {
            id: entity.id.clone(),
            kind: TrustTargetKind::Entity,
            content_id: None,
            author_root_controller: entity.created_by_root_controller.clone(),
            author_origin: entity.origin.clone(),
            created_at: entity.created_at,
        };
        let statuses = self.initialize_trust_summaries(unit, &[(target, false)]).await?;
        let status = statuses.first().copied().unwrap_or(TrustStatus::Unverified);
        let mut document = super::search::entity_document(entity, status);
        document.created_at = indexed_at;
        // A new entity: its document cannot exist yet.
        self.index_documents(&mut unit.conn(), &[document], store::search::DocumentsAre::New)
            .await?;
        Ok(())
    }

    /// Finds or creates a cited source; returns it with the title given in this citation.
    pub(super) async fn resolve_source(
        &self,
        conn: &mut store::Conn<'_>,
        source: &ValidatedSource,
        position: usize,
    ) -> Result<(Source, Option<String>), ServiceError> {
        match source {
            ValidatedSource::Id(id) => {
                let found = store::knowledge::find_source(conn, id).await?.ok_or_else(|| {
                    ServiceError::not_found(id.as_str())
                        .with_details(json!({ "id": id.as_str(), "field": format!("sources/{position}") }))
                })?;
                Ok((found, None))
            }
            ValidatedSource::Url {
                url,
                normalized,
                family,
                title,
            } => {
                if let Some(found) = store::knowledge::find_source_by_url(conn, self.realm(), normalized).await? {
                    return Ok((found, title.clone()));
                }
                let created = Source {
                    id: self.new_id(IdKind::Source),
                    url: url.clone(),
                    normalized_url: normalized.clone(),
                    title: title.clone(),
                    family: family.clone(),
                    origin: self.realm().to_owned(),
                    created_at: self.now(),
                };
                store::knowledge::insert_source(conn, &created).await?;
                Ok((created, title.clone()))
            }
        }
    }

    /// The entity of this realm with the given type and (normalized) name.
    pub async fn find_entity_by_name(&self, entity_type: &str, name: &str) -> Result<Entity, ServiceError> {
        let entity_type = type_name("type", entity_type)?;
        let normalized = normalize_entity_name(name);
        let mut reader = self.store().reader().await?;
        store::knowledge::find_entity_by_name(&mut reader.conn(), self.realm(), &entity_type, &normalized)
            .await?
            .ok_or_else(|| ServiceError::new(ErrorCode::NotFound, format!("no {entity_type} named {name:?} exists")))
    }

    /// Makes sure this realm has its default space (created on first start, and for databases bootstrapped
    /// before spaces existed).
    pub(super) async fn ensure_default_space(
        &self,
        transaction: &mut Transaction,
        created_by: &PublicId,
    ) -> Result<Space, ServiceError> {
        if let Some(space) = store::knowledge::find_default_space(&mut transaction.conn(), self.realm()).await? {
            return Ok(space);
        }
        let space = Space {
            id: self.new_id(IdKind::Space),
            name: "default".to_owned(),
            description: "Where content goes when no space is named. Federated with active peers.".to_owned(),
            visibility: crate::domain::knowledge::SpaceVisibility::Federated,
            is_default: true,
            origin: self.realm().to_owned(),
            created_by: created_by.clone(),
            created_at: self.now(),
            received_at: self.now(),
        };
        store::knowledge::insert_space(&mut transaction.conn(), &space).await?;
        Ok(space)
    }
}

/// The error for writing to or through a deleted content item: it is gone, as `get` reports it.
pub(super) fn deleted_content(id: &PublicId) -> ServiceError {
    ServiceError::new(
        ErrorCode::NotFound,
        format!("{} was deleted; `get` shows when, by whom and why", id.as_str()),
    )
    .with_details(json!({ "id": id.as_str(), "deleted": true }))
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
fn check_experience_sizes(request: &ExperienceRequest) -> Result<(), ServiceError> {
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

/// What `interai admin content list` and `GET /admin/content` ask for, as given: every filter optional, checked here.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ContentQuery {
    /// Only items of this space (a `spc_` ID).
    pub space: Option<String>,
    /// Only items made by this realm.
    pub origin: Option<String>,
    /// Only items in this state: `deleted`, or a trust status of the current revision (`unverified`, `supported`, …).
    pub status: Option<String>,
    /// The `next_cursor` of the previous page.
    pub cursor: Option<String>,
    /// Items per page (default and bounds in `paging`).
    pub limit: Option<u32>,
}

/// One page of content items, newest first.
#[derive(Debug, Clone, PartialEq)]
pub struct ContentPage {
    /// The items.
    pub items: Vec<store::knowledge::ContentListing>,
    /// Where the next page starts, when there is one.
    pub next_cursor: Option<String>,
}

/// The longest realm name an origin filter may give (a DNS name).
const MAX_ORIGIN_FILTER_CHARACTERS: usize = 253;

impl Service {
    /// A page of content items (this realm's and replicated ones, deleted ones too) that the query's filters select,
    /// newest first.
    pub async fn list_content(&self, query: ContentQuery) -> Result<ContentPage, ServiceError> {
        use store::knowledge::ContentStatusFilter;
        let limit = super::paging::page_size(query.limit)?;
        let origin = optional_text("origin", query.origin.as_deref(), MAX_ORIGIN_FILTER_CHARACTERS)?;
        let status = match query.status.as_deref().map(str::trim).filter(|text| !text.is_empty()) {
            None => None,
            Some("deleted") => Some(ContentStatusFilter::Deleted),
            Some(text) => Some(ContentStatusFilter::Trust(TrustStatus::parse(text).ok_or_else(
                || {
                    let names: Vec<&str> = TrustStatus::ALL.iter().map(|status| status.as_str()).collect();
                    ServiceError::validation(
                        "status",
                        format!("status must be deleted or a trust status: {}", names.join(", ")),
                    )
                },
            )?)),
        };
        let after = super::paging::decode_cursor(query.cursor.as_deref())?;
        let mut reader = self.store().reader().await?;
        let space_id = match query.space.as_deref().map(str::trim).filter(|text| !text.is_empty()) {
            None => None,
            Some(space) => {
                let space_id = super::validation::parse_target("space", space, &[IdKind::Space], "the space filter")?;
                // An unknown space is named rather than answered with an empty page, which would look like silence.
                store::knowledge::find_space(&mut reader.conn(), &space_id)
                    .await?
                    .ok_or_else(|| ServiceError::not_found(space_id.as_str()))?;
                Some(space_id)
            }
        };
        let filter = store::knowledge::ContentFilter {
            space_id,
            origin,
            status,
            after,
        };
        let mut items = store::knowledge::list_content(&mut reader.conn(), &filter, i64::from(limit) + 1).await?;
        let more = items.len() > limit as usize;
        items.truncate(limit as usize);
        let next_cursor = if more {
            items
                .last()
                .map(|last| super::paging::encode_cursor(last.content.created_at, last.content.id.as_str()))
        } else {
            None
        };
        Ok(ContentPage { items, next_cursor })
    }
}
