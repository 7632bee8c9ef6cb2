//! Conversions from MCP wire inputs to service requests and from service outcomes to wire outputs, by hand.

use crate::service::ServiceError;
use crate::service::content::{ExperienceRequest, PublishOutcome, PublishRequest, RelationRequest, UsedRequest};
use crate::service::evidence::{RateRequest, ReviewRequest, UsageRequest};
use crate::service::references::{SourceReference, SubjectReference};

use super::wire::{
    ClaimInput, EvidenceOutput, PublishInput, PublishOutput, PublishedClaimOutput, RateInput, RelationInput,
    ReportUsageInput, ReviewInput, SourceInput, SubjectInput, SubmitExperienceInput,
};

fn subject(input: SubjectInput) -> SubjectReference {
    match input {
        SubjectInput::Id(id) => SubjectReference::Id(id),
        SubjectInput::Named(named) => SubjectReference::Named {
            name: named.name,
            entity_type: named.entity_type,
            aliases: named.aliases,
            description: named.description,
        },
    }
}

fn source(input: SourceInput) -> SourceReference {
    match input {
        SourceInput::Text(text) if text.trim().starts_with("src_") => SourceReference::Id(text),
        SourceInput::Text(url) => SourceReference::Url { url, title: None },
        SourceInput::Object(object) => match (object.id, object.url) {
            (Some(id), _) => SourceReference::Id(id),
            (None, url) => SourceReference::Url {
                url: url.unwrap_or_default(),
                title: object.title,
            },
        },
    }
}

fn relation(input: RelationInput) -> RelationRequest {
    RelationRequest {
        relation_type: input.relation_type,
        target: input.target,
        reason: input.reason,
    }
}

/// `publish` arguments as a service request.
pub fn publish_request(input: PublishInput) -> PublishRequest {
    PublishRequest {
        content_type: input.content_type,
        title: input.title,
        summary: input.summary,
        body_markdown: input.body_markdown,
        structured_data: input.structured_data,
        revision_of: input.revision_of,
        change_note: input.change_note,
        subjects: input.subjects.into_iter().map(subject).collect(),
        claims: input
            .claims
            .into_iter()
            .map(|claim| match claim {
                ClaimInput::Object(object) => object.text,
                ClaimInput::Text(text) => text,
            })
            .collect(),
        sources: input.sources.into_iter().map(source).collect(),
        relations: input.relations.into_iter().map(relation).collect(),
        tags: input.tags,
        space: input.space,
        language: input.language,
        idempotency_key: input.idempotency_key,
    }
}

/// `publish`'s outcome on the wire.
pub fn publish_output(outcome: PublishOutcome) -> PublishOutput {
    PublishOutput {
        id: outcome.id,
        revision_id: outcome.revision_id,
        revision_no: outcome.revision_no,
        claims: outcome
            .claims
            .into_iter()
            .map(|claim| PublishedClaimOutput {
                id: claim.id,
                matched_existing: claim.matched_existing,
            })
            .collect(),
    }
}

/// `submit_experience` arguments as a service request.
pub fn experience_request(input: SubmitExperienceInput) -> ExperienceRequest {
    ExperienceRequest {
        title: input.title,
        summary: input.summary,
        body_markdown: input.body_markdown,
        subjects: input.subjects.into_iter().map(subject).collect(),
        result: input.result,
        real_world_use: input.real_world_use,
        context: input.context,
        configuration: input.configuration,
        observations: input.observations,
        metrics: input.metrics,
        used: input
            .used
            .into_iter()
            .map(|used| UsedRequest {
                id: used.id,
                result: used.result,
                note: used.note,
            })
            .collect(),
        tags: input.tags,
        space: input.space,
        language: input.language,
        idempotency_key: input.idempotency_key,
    }
}

fn required<T>(field: &str, value: Option<T>) -> Result<T, ServiceError> {
    value.ok_or_else(|| ServiceError::validation(field, format!("{field} is required")))
}

/// Fails unless a retraction call carries nothing but `retract` and `idempotency_key`.
pub fn retraction_only(other_fields_present: bool) -> Result<(), ServiceError> {
    if other_fields_present {
        Err(ServiceError::validation(
            "retract",
            "a retraction takes only `retract` and optionally `idempotency_key`",
        ))
    } else {
        Ok(())
    }
}

/// `report_usage` arguments (not a retraction) as a service request.
pub fn usage_request(input: ReportUsageInput) -> Result<UsageRequest, ServiceError> {
    Ok(UsageRequest {
        target: required("target", input.target)?,
        usage_type: required("usage_type", input.usage_type)?,
        result: required("result", input.result)?,
        real_world_use: input.real_world_use.unwrap_or(false),
        context: input.context,
        metrics: input.metrics,
        note: input.note,
        idempotency_key: input.idempotency_key,
    })
}

/// `review` arguments (not a retraction) as a service request.
pub fn review_request(input: ReviewInput) -> Result<ReviewRequest, ServiceError> {
    Ok(ReviewRequest {
        target: required("target", input.target)?,
        verdict: required("verdict", input.verdict)?,
        confidence: required("confidence", input.confidence)?,
        rationale_markdown: input.rationale_markdown,
        sources: input.sources.into_iter().map(source).collect(),
        based_on_usage: input.based_on_usage,
        idempotency_key: input.idempotency_key,
    })
}

/// `rate` arguments (not a retraction) as a service request.
pub fn rate_request(input: RateInput) -> Result<RateRequest, ServiceError> {
    Ok(RateRequest {
        target: required("target", input.target)?,
        context: input.context,
        dimension: required("dimension", input.dimension)?,
        score: required("score", input.score)?,
        confidence: input.confidence.unwrap_or(1.0),
        based_on_usage: input.based_on_usage,
        rationale_markdown: input.rationale_markdown,
        idempotency_key: input.idempotency_key,
    })
}

/// A created evidence record on the wire: a review (which is never self-evidence: reviewing your own work is refused).
pub fn evidence_output(id: String, target_revision: Option<String>) -> EvidenceOutput {
    EvidenceOutput {
        id,
        target_revision,
        ..EvidenceOutput::default()
    }
}

/// A created usage report on the wire, saying when it counts for nothing.
pub fn usage_output(outcome: crate::service::evidence::UsageOutcomeReport) -> EvidenceOutput {
    EvidenceOutput {
        id: outcome.id,
        target_revision: outcome.target_revision,
        counts_toward_trust: Some(!outcome.self_evidence),
        note: outcome
            .self_evidence
            .then(|| crate::service::evidence::SELF_USAGE_NOTE.to_owned()),
        ..EvidenceOutput::default()
    }
}

/// A created rating on the wire, saying when it counts for nothing.
pub fn rating_output(outcome: crate::service::evidence::RateOutcome) -> EvidenceOutput {
    EvidenceOutput {
        id: outcome.id,
        counts_toward_trust: Some(!outcome.self_evidence),
        note: outcome
            .self_evidence
            .then(|| crate::service::evidence::SELF_RATING_NOTE.to_owned()),
        ..EvidenceOutput::default()
    }
}

/// A recorded experience on the wire, naming the usage events that count for nothing.
pub fn experience_output(outcome: crate::service::content::ExperienceOutcome) -> super::wire::SubmitExperienceOutput {
    let note = (!outcome.self_evidence_usage_ids.is_empty())
        .then(|| crate::service::evidence::self_usage_in_experience_note(&outcome.self_evidence_usage_ids));
    super::wire::SubmitExperienceOutput {
        id: outcome.id,
        revision_id: outcome.revision_id,
        usage_ids: outcome.usage_ids,
        self_evidence_usage_ids: outcome.self_evidence_usage_ids,
        note,
    }
}

/// A retraction on the wire.
pub fn retraction_output(outcome: crate::service::evidence::RetractOutcome) -> EvidenceOutput {
    EvidenceOutput {
        id: outcome.id,
        target_revision: None,
        status: Some(outcome.status),
        target: Some(outcome.target),
        already_retracted: Some(outcome.already_retracted),
        ..EvidenceOutput::default()
    }
}

/// `search` arguments as a service request (an unknown `trust_view` is a validation error).
pub fn search_request(
    input: super::wire::SearchInput,
) -> Result<crate::service::search::SearchRequest, crate::service::ServiceError> {
    Ok(crate::service::search::SearchRequest {
        query: input.query,
        kinds: input.kinds,
        content_types: input.content_types,
        entity_types: input.entity_types,
        context: input.context,
        alternatives_to: input
            .alternatives_to
            .map(|alternatives| (alternatives.id, alternatives.reason)),
        space: input.space,
        tags: input.tags,
        min_status: input.min_status,
        include_disputed: input.include_disputed,
        sort: input.sort,
        limit: input.limit,
        cursor: input.cursor,
        trust_view: crate::service::trust::TrustViewScope::from_input(input.trust_view.as_deref())?,
        origin: input.origin,
    })
}

/// `get` arguments as a service request (an unknown `trust_view` is a validation error).
pub fn get_request(
    input: super::wire::GetInput,
) -> Result<crate::service::lookup::GetRequest, crate::service::ServiceError> {
    use super::wire::RevisionInput;
    use crate::service::lookup::RevisionSelector;
    Ok(crate::service::lookup::GetRequest {
        id: input.id,
        revision: input.revision.map(|revision| match revision {
            RevisionInput::Number(number) => RevisionSelector::Number(number),
            RevisionInput::Id(id) => RevisionSelector::Id(id),
        }),
        include: input.include,
        evidence_cursor: input.evidence_cursor,
        trust_view: crate::service::trust::TrustViewScope::from_input(input.trust_view.as_deref())?,
    })
}
