//! Replicated objects on the wire: rendering this realm's records as signed ActivityStreams objects (an `Article`
//! per revision, a `Tombstone` per deletion, a `Collection` per federated space) inside `Create`, `Update` and
//! `Delete` activities, and reading a peer's back into the service's records after checking the origin's proof.
//!
//! A proof's `created` is the object's own time (the revision's, the deletion's, the space's), and Ed25519 is
//! deterministic, so rendering the same record with the same key gives the same bytes every time: a retry, a pull
//! and a backfill all carry the identical signed object.

use chrono::{DateTime, Utc};
use federation::integrity;
use federation::protocol::objects::{
    ARTICLE, COLLECTION, ClaimFacts, ContentObject, EntityFacts, EvidenceObject, FederatedDocument, MARKDOWN, RATING,
    RETRACTION, REVIEW, RelationFacts, RetractionObject, RevisionFacts, SourceFacts, SpaceObject, SpaceReference,
    TOMBSTONE, TombstoneObject, USAGE_REPORT,
};
use federation::protocol::{Activity, ActivityKind, ActivityObject, context::document_context, parse_rfc3339};
use serde_json::Value;

use super::discovery::InstanceUrls;
use super::rfc3339;
use crate::domain::evidence::{UsageOutcome, Verdict};
use crate::domain::knowledge::RelationType;
use crate::domain::replication::{
    ClaimRecord, EntityRecord, EvidenceFacts, EvidencePassport, EvidenceRetraction, FederatedObject, OriginProof,
    RelationRecord, ReplicatedObject, RevisionRecord, SourceRecord, SpaceRecord,
};
use crate::domain::tombstone::Tombstone;
use crate::domain::{ContextKey, PublicId};
use crate::service::federation::Federation;
use crate::service::federation::admission::{ProvenObject, Refusal, SenderPurpose};
use crate::service::federation::identity::SigningKey;
use crate::service::federation::inbox::InboxSender;

/// Why a replicated object was refused: a metrics reason and a detail for the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectRefusal {
    /// snake_case, as counted.
    pub reason: &'static str,
    /// What was wrong.
    pub detail: String,
}

fn refusal(reason: &'static str, detail: impl Into<String>) -> ObjectRefusal {
    ObjectRefusal {
        reason,
        detail: detail.into(),
    }
}

/// The activity type a replicated object travels in.
pub fn activity_kind(object: &FederatedObject) -> ActivityKind {
    match object {
        FederatedObject::Revision(record) if record.revision_no > 1 => ActivityKind::Update,
        FederatedObject::Revision(_) | FederatedObject::Space(_) | FederatedObject::Evidence(_) => ActivityKind::Create,
        FederatedObject::Deletion(_) => ActivityKind::Delete,
        FederatedObject::Retraction(_) => ActivityKind::Undo,
    }
}

/// Renders one of this realm's objects and signs it with `key` (the origin proof).
pub fn signed_object(urls: &InstanceUrls, object: &FederatedObject, key: &SigningKey) -> Result<Value, String> {
    let (document, created) = match object {
        FederatedObject::Revision(record) => (serde_json::to_value(content_object(urls, record)), record.revised_at),
        FederatedObject::Deletion(tombstone) => (
            serde_json::to_value(TombstoneObject {
                context: document_context(),
                id: urls.object(tombstone.content_id.as_str()),
                kind: TOMBSTONE.to_owned(),
                former_type: ARTICLE.to_owned(),
                public_id: tombstone.content_id.as_str().to_owned(),
                realm: tombstone.origin.clone(),
                deleted: rfc3339(tombstone.deleted_at),
                deleted_by: tombstone.deleted_by.clone(),
                reason: tombstone.reason.clone(),
                proof: None,
            }),
            tombstone.deleted_at,
        ),
        FederatedObject::Space(space) => (
            serde_json::to_value(SpaceObject {
                context: document_context(),
                id: urls.object(space.id.as_str()),
                kind: COLLECTION.to_owned(),
                public_id: space.id.as_str().to_owned(),
                realm: space.origin.clone(),
                name: space.name.clone(),
                summary: space.description.clone(),
                created_by: space.created_by.as_str().to_owned(),
                published: rfc3339(space.created_at),
                proof: None,
            }),
            space.created_at,
        ),
        FederatedObject::Evidence(passport) => (
            serde_json::to_value(evidence_object(urls, passport)),
            passport.created_at,
        ),
        FederatedObject::Retraction(retraction) => (
            serde_json::to_value(RetractionObject {
                context: document_context(),
                id: retraction_url(urls, &retraction.record_id),
                kind: RETRACTION.to_owned(),
                public_id: retraction.record_id.as_str().to_owned(),
                realm: retraction.origin.clone(),
                published: rfc3339(retraction.retracted_at),
                proof: None,
            }),
            retraction.retracted_at,
        ),
    };
    let document = document.map_err(|error| error.to_string())?;
    integrity::sign_owned_document(document, &key.key_pair, &key.key_id, created.timestamp())
        .map_err(|error| error.to_string())
}

/// The activity that carries a signed object: `{base}/activities/{activity_key}` by this instance's actor.
///
/// Its `@context` is ActivityStreams alone: every member of the envelope is an ActivityStreams term, and the object
/// carries the whole context (JSON-LD scopes it to the object). Why: the inline context is about 1.7 KB, and sent a
/// third time in every activity (after the object's and its proof's) it was a fifth of each body that both sides
/// hash, serialize and parse.
pub fn activity_document(
    urls: &InstanceUrls,
    activity_key: &str,
    kind: &ActivityKind,
    object: Value,
    published: DateTime<Utc>,
) -> Value {
    // Built member by member rather than with `json!`, which would copy the signed object (most of the activity)
    // through the serializer.
    let mut activity = serde_json::Map::new();
    activity.insert(
        "@context".to_owned(),
        Value::from(federation::protocol::context::ACTIVITYSTREAMS),
    );
    activity.insert(
        "id".to_owned(),
        Value::from(format!("{}/activities/{activity_key}", urls.base)),
    );
    activity.insert("type".to_owned(), Value::from(kind.as_str()));
    activity.insert("actor".to_owned(), Value::from(urls.actor()));
    activity.insert("object".to_owned(), object);
    activity.insert("published".to_owned(), Value::from(rfc3339(published)));
    Value::Object(activity)
}

fn content_object(urls: &InstanceUrls, record: &RevisionRecord) -> ContentObject {
    ContentObject {
        context: document_context(),
        id: urls.object(record.content_id.as_str()),
        kind: ARTICLE.to_owned(),
        public_id: record.content_id.as_str().to_owned(),
        realm: record.origin.clone(),
        attributed_to: urls.object(record.author_id.as_str()),
        author: record.author_id.as_str().to_owned(),
        root_controller: record.author_root_controller.as_str().to_owned(),
        content_type: record.content_type.clone(),
        published: rfc3339(record.published_at),
        updated: rfc3339(record.revised_at),
        name: record.title.clone(),
        summary: record.summary.clone(),
        content: record.body_markdown.clone(),
        media_type: MARKDOWN.to_owned(),
        language: record.language.clone(),
        space: SpaceReference {
            public_id: record.space_id.as_str().to_owned(),
            name: record.space_name.clone(),
        },
        revision: RevisionFacts {
            public_id: record.revision_id.as_str().to_owned(),
            number: record.revision_no,
            change_note: record.change_note.clone(),
            context_key: record.context_key.clone(),
        },
        structured_data: record.structured_data.clone(),
        claims: record
            .claims
            .iter()
            .map(|claim| ClaimFacts {
                public_id: claim.id.as_str().to_owned(),
                text: claim.text.clone(),
            })
            .collect(),
        subjects: record
            .subjects
            .iter()
            .map(|entity| EntityFacts {
                public_id: entity.id.as_str().to_owned(),
                entity_type: entity.entity_type.clone(),
                name: entity.name.clone(),
                aliases: entity.aliases.clone(),
                description: entity.description.clone(),
            })
            .collect(),
        sources: record
            .sources
            .iter()
            .map(|source| SourceFacts {
                public_id: source.id.as_str().to_owned(),
                url: source.url.clone(),
                title: source.title.clone(),
            })
            .collect(),
        relations: record
            .relations
            .iter()
            .map(|relation| RelationFacts {
                relation_type: relation.relation_type.as_str().to_owned(),
                target: relation.target.as_str().to_owned(),
                reason: relation.reason.clone(),
            })
            .collect(),
        tags: record.tags.clone(),
        proof: None,
    }
}

/// The URL of a record's retraction: one per record, since a record is retracted at most once.
fn retraction_url(urls: &InstanceUrls, record_id: &PublicId) -> String {
    format!("{}/retraction", urls.object(record_id.as_str()))
}

fn evidence_object(urls: &InstanceUrls, passport: &EvidencePassport) -> EvidenceObject {
    let mut object = EvidenceObject {
        context: document_context(),
        id: urls.object(passport.record_id.as_str()),
        kind: String::new(),
        public_id: passport.record_id.as_str().to_owned(),
        realm: passport.origin.clone(),
        attributed_to: urls.object(passport.actor_id.as_str()),
        author: passport.actor_id.as_str().to_owned(),
        root_controller: passport.root_controller_id.as_str().to_owned(),
        target: passport.target_id.as_str().to_owned(),
        target_content: passport.target_content_id.as_ref().map(|id| id.as_str().to_owned()),
        published: rfc3339(passport.created_at),
        usage_type: None,
        result: None,
        real_world_use: None,
        verdict: None,
        confidence: None,
        dimension: None,
        score: None,
        context_key: None,
        based_on_usage: None,
        proof: None,
    };
    match &passport.facts {
        EvidenceFacts::Usage {
            usage_type,
            result,
            real_world_use,
            context_key,
        } => {
            object.kind = USAGE_REPORT.to_owned();
            object.usage_type = Some(usage_type.clone());
            object.result = Some(result.as_str().to_owned());
            object.real_world_use = Some(*real_world_use);
            object.context_key = Some(context_key.to_string());
        }
        EvidenceFacts::Review {
            verdict,
            confidence,
            based_on_usage,
        } => {
            object.kind = REVIEW.to_owned();
            object.verdict = Some(verdict.as_str().to_owned());
            object.confidence = Some(*confidence);
            object.based_on_usage = based_on_usage.as_ref().map(|id| id.as_str().to_owned());
        }
        EvidenceFacts::Rating {
            dimension,
            score,
            confidence,
            context_key,
            based_on_usage,
        } => {
            object.kind = RATING.to_owned();
            object.dimension = Some(dimension.clone());
            object.score = Some(*score);
            object.confidence = Some(*confidence);
            object.context_key = Some(context_key.to_string());
            object.based_on_usage = based_on_usage.as_ref().map(|id| id.as_str().to_owned());
        }
    }
    object
}

/// Whether an activity carries a replicated object (so only an active peer may send it): `Create`, `Update` or
/// `Delete` of content, a space or an evidence record, or the `Undo` of an evidence record (a `Retraction`, which
/// the peering handshake's `Undo` of a `Follow` is not).
pub fn is_replication(activity: &Activity) -> bool {
    let ActivityObject::Other(value) = &activity.object else {
        return false;
    };
    let object_type = value.get("type").and_then(Value::as_str);
    match activity.kind {
        ActivityKind::Create | ActivityKind::Update | ActivityKind::Delete => matches!(
            object_type,
            Some(ARTICLE | TOMBSTONE | COLLECTION | USAGE_REPORT | REVIEW | RATING)
        ),
        ActivityKind::Undo => object_type == Some(RETRACTION),
        _ => false,
    }
}

/// Reads a replicated object from an activity and checks its origin's proof against the key pinned for that
/// origin (the sender, or for a relayed object another peer: active for content; for evidence, any peer not blocked,
/// whose records a pending or rejected state leaves inert). Nothing is stored here.
///
/// `known_sender` is the request's signer as the inbox already read it: when the proof names the same key, it is
/// not read again.
pub async fn read_replicated(
    federation: &Federation,
    activity: &Activity,
    known_sender: Option<&InboxSender>,
) -> Result<ReplicatedObject, ObjectRefusal> {
    let ActivityObject::Other(value) = &activity.object else {
        return Err(refusal("malformed_object", "the activity carries no replicated object"));
    };
    let document = FederatedDocument::from_value(value).map_err(|detail| refusal("malformed_object", detail))?;
    let expected_kind = match &document {
        FederatedDocument::Content(_) => [ActivityKind::Create, ActivityKind::Update].contains(&activity.kind),
        FederatedDocument::Tombstone(_) => activity.kind == ActivityKind::Delete,
        FederatedDocument::Space(_) | FederatedDocument::Evidence(_) => activity.kind == ActivityKind::Create,
        FederatedDocument::Retraction(_) => activity.kind == ActivityKind::Undo,
    };
    if !expected_kind {
        return Err(refusal(
            "malformed_object",
            format!("a {} does not carry this object", activity.kind.as_str()),
        ));
    }
    let key_id = integrity::proof_verification_method(value)
        .map_err(|error| refusal("invalid_origin_proof", error.to_string()))?
        .to_owned();
    let origin = document.realm().to_ascii_lowercase();
    // The admission rule decides whether the key vouches for the origin's objects now; the request's signer is not
    // read again when the proof names its key.
    let proven = match &document {
        FederatedDocument::Evidence(_) | FederatedDocument::Retraction(_) => ProvenObject::Evidence,
        FederatedDocument::Content(_) | FederatedDocument::Tombstone(_) | FederatedDocument::Space(_) => {
            ProvenObject::Content
        }
    };
    let purpose = SenderPurpose::OriginProof {
        origin: &origin,
        proven,
    };
    let admitted = match known_sender.filter(|sender| sender.key.key_id == key_id) {
        Some(sender) => federation.admit_sender(sender.clone(), purpose),
        None => federation
            .admit_key(&key_id, purpose)
            .await
            .map_err(|error| refusal("internal_error", error.to_string()))?,
    };
    let sender = admitted
        .map_err(|refused| origin_proof_refusal(&refused, &key_id, &origin))?
        .sender;
    // The object's URL, and a content item's author, are on the origin's own URL: a proof by the origin's key
    // vouches only for the origin's objects.
    let on_origin = |text: &str| match (url::Url::parse(text), url::Url::parse(&sender.peer.base_url)) {
        (Ok(url), Ok(base)) => url.origin() == base.origin(),
        _ => false,
    };
    let attributed_to = match &document {
        FederatedDocument::Content(object) => Some(object.attributed_to.as_str()),
        FederatedDocument::Evidence(object) => Some(object.attributed_to.as_str()),
        _ => None,
    };
    if let Some(stray) = std::iter::once(document.id())
        .chain(attributed_to)
        .find(|text| !on_origin(text))
    {
        return Err(refusal(
            "invalid_origin_proof",
            format!("{stray} is not under the origin's URL {}", sender.peer.base_url),
        ));
    }
    let key = sender.public_key;
    // The check's canonical walk gives the signed bytes that are stored with the object.
    let signed = integrity::verify_and_canonicalize(value, &key)
        .map_err(|error| refusal("invalid_origin_proof", error.to_string()))?;
    let signed_object = String::from_utf8(signed).map_err(|error| refusal("not_i_json", error.to_string()))?;
    let object = federated_object(document).map_err(|detail| refusal("malformed_object", detail))?;
    Ok(ReplicatedObject {
        object,
        proof: OriginProof { signed_object, key_id },
    })
}

/// The admission rule's refusal of an origin proof's key, as the refusal of the object.
fn origin_proof_refusal(refused: &Refusal, key_id: &str, origin: &str) -> ObjectRefusal {
    let detail = match refused {
        Refusal::UnknownKey => format!("{key_id} is not a pinned key of a peer"),
        Refusal::KeyOfAnotherRealm { .. } => format!("{key_id} is not a key of the object's origin {origin}"),
        Refusal::Blocked | Refusal::NotActive(_) | Refusal::FirstContactKey => {
            format!("the origin {origin} is not an active peer")
        }
        Refusal::KeyExpired => format!("{key_id} is not valid now (key_expired)"),
        Refusal::KeyNotYetValid => format!("{key_id} is not valid now (key_not_yet_valid)"),
    };
    refusal("invalid_origin_proof", detail)
}

/// Reads a replicated object that was verified when it arrived (the intake applies queued activities).
pub fn read_verified(activity: &Activity) -> Result<ReplicatedObject, String> {
    // (The activity was read with `integrity::parse_i_json`, which keeps every number exact.)
    let ActivityObject::Other(value) = &activity.object else {
        return Err("the activity carries no replicated object".to_owned());
    };
    let document = FederatedDocument::from_value(value)?;
    let key_id = integrity::proof_verification_method(value)
        .map_err(|error| error.to_string())?
        .to_owned();
    let signed = integrity::canonicalize(value).map_err(|error| error.to_string())?;
    let signed_object = String::from_utf8(signed).map_err(|error| error.to_string())?;
    Ok(ReplicatedObject {
        object: federated_object(document)?,
        proof: OriginProof { signed_object, key_id },
    })
}

fn id(text: &str, what: &str) -> Result<PublicId, String> {
    PublicId::parse(text).map_err(|error| format!("{what} {text:?}: {error}"))
}

fn time(text: &str, what: &str) -> Result<DateTime<Utc>, String> {
    parse_rfc3339(text)
        .and_then(|seconds| DateTime::from_timestamp(seconds, 0))
        .ok_or_else(|| format!("{what} {text:?} is not an RFC 3339 time"))
}

fn federated_object(document: FederatedDocument) -> Result<FederatedObject, String> {
    Ok(match document {
        FederatedDocument::Content(object) => {
            if object.media_type != MARKDOWN {
                return Err(format!("content must be {MARKDOWN}"));
            }
            let object = *object;
            let claims = object
                .claims
                .iter()
                .map(|claim| {
                    Ok(ClaimRecord {
                        id: id(&claim.public_id, "claim")?,
                        text: claim.text.clone(),
                    })
                })
                .collect::<Result<Vec<_>, String>>()?;
            let subjects = object
                .subjects
                .iter()
                .map(|entity| {
                    Ok(EntityRecord {
                        id: id(&entity.public_id, "entity")?,
                        entity_type: entity.entity_type.clone(),
                        name: entity.name.clone(),
                        aliases: entity.aliases.clone(),
                        description: entity.description.clone(),
                    })
                })
                .collect::<Result<Vec<_>, String>>()?;
            let sources = object
                .sources
                .iter()
                .map(|source| {
                    Ok(SourceRecord {
                        id: id(&source.public_id, "source")?,
                        url: source.url.clone(),
                        title: source.title.clone(),
                    })
                })
                .collect::<Result<Vec<_>, String>>()?;
            let relations = object
                .relations
                .iter()
                .map(|relation| {
                    Ok(RelationRecord {
                        relation_type: RelationType::parse(&relation.relation_type)
                            .ok_or_else(|| format!("relation type {:?}", relation.relation_type))?,
                        target: id(&relation.target, "relation target")?,
                        reason: relation.reason.clone(),
                    })
                })
                .collect::<Result<Vec<_>, String>>()?;
            FederatedObject::Revision(Box::new(RevisionRecord {
                content_id: id(&object.public_id, "content")?,
                origin: object.realm.to_ascii_lowercase(),
                content_type: object.content_type,
                space_id: id(&object.space.public_id, "space")?,
                space_name: object.space.name,
                author_id: id(&object.author, "author")?,
                author_root_controller: id(&object.root_controller, "root controller")?,
                published_at: time(&object.published, "published")?,
                revision_id: id(&object.revision.public_id, "revision")?,
                revision_no: object.revision.number,
                revised_at: time(&object.updated, "updated")?,
                title: object.name,
                summary: object.summary,
                body_markdown: object.content,
                structured_data: object.structured_data,
                language: object.language,
                change_note: object.revision.change_note,
                context_key: object.revision.context_key,
                claims,
                subjects,
                sources,
                relations,
                tags: object.tags,
            }))
        }
        FederatedDocument::Tombstone(object) if object.former_type != ARTICLE => {
            return Err(format!("a Tombstone's formerType must be {ARTICLE}"));
        }
        FederatedDocument::Tombstone(object) => FederatedObject::Deletion(Tombstone {
            content_id: id(&object.public_id, "content")?,
            origin: object.realm.to_ascii_lowercase(),
            deleted_at: time(&object.deleted, "deleted")?,
            deleted_by: object.deleted_by,
            reason: object.reason,
            signed_object: None,
            received_at: DateTime::<Utc>::UNIX_EPOCH,
        }),
        FederatedDocument::Space(object) => FederatedObject::Space(SpaceRecord {
            id: id(&object.public_id, "space")?,
            origin: object.realm.to_ascii_lowercase(),
            name: object.name,
            description: object.summary,
            created_by: id(&object.created_by, "space creator")?,
            created_at: time(&object.published, "published")?,
        }),
        FederatedDocument::Evidence(object) => FederatedObject::Evidence(Box::new(evidence_passport(*object)?)),
        FederatedDocument::Retraction(object) => FederatedObject::Retraction(EvidenceRetraction {
            record_id: id(&object.public_id, "retracted record")?,
            origin: object.realm.to_ascii_lowercase(),
            retracted_at: time(&object.published, "published")?,
        }),
    })
}

/// An evidence record's passport from its object (whose members `check_members` already matched to its type).
fn evidence_passport(object: EvidenceObject) -> Result<EvidencePassport, String> {
    let missing = |name: &str| format!("a {} needs {name}", object.kind);
    let context_key = |text: &Option<String>| -> Result<ContextKey, String> {
        let text = text.as_deref().ok_or_else(|| missing("contextKey"))?;
        ContextKey::parse(text).map_err(|error| format!("contextKey {text:?}: {error}"))
    };
    let based_on_usage = object
        .based_on_usage
        .as_deref()
        .map(|text| id(text, "basedOnUsage"))
        .transpose()?;
    let confidence = object.confidence.ok_or_else(|| missing("confidence"));
    let facts = match object.kind.as_str() {
        USAGE_REPORT => EvidenceFacts::Usage {
            usage_type: object.usage_type.clone().ok_or_else(|| missing("usageType"))?,
            result: object
                .result
                .as_deref()
                .and_then(UsageOutcome::parse)
                .ok_or_else(|| format!("result {:?} is not a usage outcome", object.result))?,
            real_world_use: object.real_world_use.ok_or_else(|| missing("realWorldUse"))?,
            context_key: context_key(&object.context_key)?,
        },
        REVIEW => EvidenceFacts::Review {
            verdict: object
                .verdict
                .as_deref()
                .and_then(Verdict::parse)
                .ok_or_else(|| format!("verdict {:?} is not a verdict", object.verdict))?,
            confidence: confidence?,
            based_on_usage,
        },
        _ => EvidenceFacts::Rating {
            dimension: object.dimension.clone().ok_or_else(|| missing("dimension"))?,
            score: object.score.ok_or_else(|| missing("score"))?,
            confidence: confidence?,
            context_key: context_key(&object.context_key)?,
            based_on_usage,
        },
    };
    Ok(EvidencePassport {
        record_id: id(&object.public_id, "record")?,
        origin: object.realm.to_ascii_lowercase(),
        target_id: id(&object.target, "target")?,
        target_content_id: object
            .target_content
            .as_deref()
            .map(|text| id(text, "targetContent"))
            .transpose()?,
        actor_id: id(&object.author, "author")?,
        root_controller_id: id(&object.root_controller, "root controller")?,
        created_at: time(&object.published, "published")?,
        facts,
    })
}
