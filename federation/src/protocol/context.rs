//! The JSON-LD context every interai document carries: ActivityStreams, the security vocabularies for keys, and
//! an inline map of interai's own terms, so that a document explains itself without fetching anything.

use serde_json::{Value, json};

/// The ActivityStreams 2.0 context.
pub const ACTIVITYSTREAMS: &str = "https://www.w3.org/ns/activitystreams";
/// The security vocabulary of the legacy `publicKey` block.
pub const SECURITY_V1: &str = "https://w3id.org/security/v1";
/// The Multikey vocabulary of FEP-521a.
pub const MULTIKEY_V1: &str = "https://w3id.org/security/multikey/v1";
/// The namespace of interai's own terms. It names terms; nothing fetches it.
pub const INTERAI_NAMESPACE: &str = "https://w3id.org/interai/ns#";

/// The `@context` of every document we publish: the three vocabularies and interai's terms inline.
pub fn document_context() -> Value {
    let mut context = content_context();
    if let Some(Value::Object(terms)) = context.as_array_mut().and_then(|parts| parts.last_mut()) {
        terms.extend(evidence_terms());
    }
    context
}

/// The terms of evidence records and their retractions (kept apart from the rest only because one `json!` of every
/// term is deeper than the macro's recursion allows).
fn evidence_terms() -> serde_json::Map<String, Value> {
    let Value::Object(terms) = json!({
        "UsageReport": "interai:UsageReport",
        "Review": "interai:Review",
        "Rating": "interai:Rating",
        "Retraction": "interai:Retraction",
        "targetContent": "interai:targetContent",
        "usageType": "interai:usageType",
        "result": "interai:result",
        "realWorldUse": "interai:realWorldUse",
        "verdict": "interai:verdict",
        "confidence": "interai:confidence",
        "dimension": "interai:dimension",
        "score": "interai:score",
        "basedOnUsage": "interai:basedOnUsage"
    }) else {
        unreachable!("an object literal")
    };
    terms
}

/// The vocabularies and the terms of identity, peering and content.
fn content_context() -> Value {
    json!([
        ACTIVITYSTREAMS,
        SECURITY_V1,
        MULTIKEY_V1,
        {
            "interai": INTERAI_NAMESPACE,
            "realm": "interai:realm",
            "validFrom": { "@id": "interai:validFrom", "@type": "http://www.w3.org/2001/XMLSchema#dateTime" },
            "endorsement": { "@id": "interai:endorsement", "@type": "@json" },
            "manifest": { "@id": "interai:manifest", "@type": "@id" },
            "publicId": "interai:publicId",
            "author": "interai:author",
            "rootController": "interai:rootController",
            "contentType": "interai:contentType",
            "space": "interai:space",
            "revision": "interai:revision",
            "number": "interai:revisionNumber",
            "changeNote": "interai:changeNote",
            "contextKey": "interai:contextKey",
            "structuredData": { "@id": "interai:structuredData", "@type": "@json" },
            "claims": { "@id": "interai:claims", "@container": "@list" },
            "text": "interai:text",
            "subjects": "interai:subjects",
            "entityType": "interai:entityType",
            "aliases": "interai:aliases",
            "description": "interai:description",
            "sources": { "@id": "interai:sources", "@container": "@list" },
            "title": "interai:title",
            "relations": "interai:relations",
            "relationType": "interai:relationType",
            "target": "interai:target",
            "reason": "interai:reason",
            "tags": "interai:tags",
            "deletedBy": "interai:deletedBy",
            "createdBy": "interai:createdBy",
            "cursor": "interai:cursor",
            "head": "interai:head",
            "language": "interai:language",
            "proof": { "@id": "https://w3id.org/security#proof", "@type": "@id", "@container": "@graph" }
        }
    ])
}
