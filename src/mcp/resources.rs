//! MCP resources (spec §11): the instance's documents and every public object by URI, each also reachable
//! through `get`.

use std::time::Instant;

use rmcp::model::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, Resource, ResourceContents, ResourceTemplate,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::json;

use super::InteraiMcp;
use super::call::{caller_of, client_of};
use crate::agent_documents::{PublicDocument, RESOURCE_TEMPLATES, render};
use crate::service::audit::CallAudit;
use crate::service::lookup::{GetRequest, RevisionSelector};
use crate::service::{ErrorCode, ServiceError};

/// The fixed resources: the instance's documents for agents.
pub fn list_resources() -> ListResourcesResult {
    let resources = PublicDocument::ALL
        .into_iter()
        .filter_map(|document| {
            let uri = document.resource_uri()?;
            let (name, title, description) = match document {
                PublicDocument::About => (
                    "about",
                    "About this instance",
                    "What this instance is: realm, versions, endpoints, limits.",
                ),
                PublicDocument::Instructions => (
                    "instructions",
                    "How to use this instance",
                    "How an agent should use this instance, including the untrusted-content rule.",
                ),
                _ => (
                    "trust-model",
                    "The trust model (trust-v1)",
                    "How evidence becomes trust: parties, weights, caps, statuses.",
                ),
            };
            Some(
                Resource::new(uri, name)
                    .with_title(title)
                    .with_description(description)
                    .with_mime_type(document.media_type()),
            )
        })
        .collect();
    ListResourcesResult::with_all_items(resources)
}

/// The resource templates: any public object by ID, a content item, and a content item's revision by number. They
/// come from `documents::RESOURCE_TEMPLATES`, which the manifest and the `about` resource list too.
pub fn list_resource_templates() -> ListResourceTemplatesResult {
    ListResourceTemplatesResult::with_all_items(
        RESOURCE_TEMPLATES
            .iter()
            .map(|template| {
                ResourceTemplate::new(template.uri_template, template.name)
                    .with_title(template.title)
                    .with_description(template.description)
                    .with_mime_type("application/json")
            })
            .collect(),
    )
}

impl InteraiMcp {
    /// Reads one resource; objects go through the same use case as `get` (scope `read`, audited). The documents are
    /// rendered for each read, with the federation as it is now.
    pub(super) async fn read_resource_uri(
        &self,
        uri: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<ReadResourceResult, ErrorData> {
        for document in PublicDocument::ALL {
            if document.resource_uri() == Some(uri) {
                let federation = self
                    .service
                    .federation_summary()
                    .await
                    .map_err(|error| protocol_error(uri, &error))?;
                let text = render(document, &self.documents, &federation);
                return Ok(ReadResourceResult::new(vec![
                    ResourceContents::text(text, uri.to_owned()).with_mime_type(document.media_type()),
                ]));
            }
        }
        let started = Instant::now();
        let caller = caller_of(context).map_err(|error| protocol_error(uri, &error))?;
        let request = parse_object_uri(uri).map_err(|error| protocol_error(uri, &error))?;
        let outcome = self.service.get(&caller, &request).await;
        let (client_name, client_version) = client_of(context);
        let audited = match &outcome {
            Ok(_) => Ok(format!("read {uri}")),
            Err(error) => Err(error),
        };
        let audit = self
            .service
            .record_call(CallAudit {
                caller: &caller,
                tool: "resources/read",
                is_write: false,
                request: &json!({ "uri": uri }),
                outcome: audited,
                duration: started.elapsed(),
                client_name,
                client_version,
            })
            .await;
        if let Err(error) = audit {
            return Err(protocol_error(uri, &error));
        }
        let view = outcome.map_err(|error| protocol_error(uri, &error))?;
        let output = super::wire::get_output(view);
        let text = serde_json::to_string_pretty(&output)
            .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
        Ok(ReadResourceResult::new(vec![
            ResourceContents::text(text, uri.to_owned()).with_mime_type("application/json"),
        ]))
    }
}

/// `interai://{id}`, `interai://content/{cnt_id}` or `interai://content/{cnt_id}/revision/{n}` as a `get` request.
fn parse_object_uri(uri: &str) -> Result<GetRequest, ServiceError> {
    let unknown =
        || ServiceError::new(ErrorCode::NotFound, "no resource has this URI").with_details(json!({ "uri": uri }));
    let rest = uri.strip_prefix("interai://").ok_or_else(unknown)?;
    let segments: Vec<&str> = rest.split('/').collect();
    let (id, revision) = match segments.as_slice() {
        [id] => (*id, None),
        ["content", id] => (*id, None),
        ["content", id, "revision", number] => {
            let number: i32 = number
                .parse()
                .map_err(|_| ServiceError::validation("revision_no", "the revision number must be a whole number"))?;
            (*id, Some(RevisionSelector::Number(number)))
        }
        _ => return Err(unknown()),
    };
    Ok(GetRequest {
        id: id.to_owned(),
        revision,
        include: None,
        evidence_cursor: None,
        trust_view: Default::default(),
    })
}

/// Resource reads fail with protocol errors; the data carries the URI (as MCP's resource-not-found error does) and
/// the spec's error object.
fn protocol_error(uri: &str, error: &ServiceError) -> ErrorData {
    let data = Some(json!({
        "uri": uri,
        "error": { "code": error.code.as_str(), "message": error.message, "details": error.details },
    }));
    match error.code {
        ErrorCode::NotFound => ErrorData::resource_not_found(error.message.clone(), data),
        ErrorCode::ValidationFailed | ErrorCode::InvalidTarget => {
            ErrorData::invalid_params(error.message.clone(), data)
        }
        ErrorCode::InternalError => {
            tracing::error!(cause = error.cause.as_deref().unwrap_or(""), "resource read failed");
            ErrorData::internal_error(error.message.clone(), data)
        }
        _ => ErrorData::invalid_request(error.message.clone(), data),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_uris_become_get_requests() {
        assert_eq!(parse_object_uri("interai://clm_x").expect("valid").id, "clm_x");
        let revision = parse_object_uri("interai://content/cnt_x/revision/3").expect("valid");
        assert_eq!(revision.revision, Some(RevisionSelector::Number(3)));
        assert!(parse_object_uri("interai://content/cnt_x/revision/three").is_err());
        assert!(parse_object_uri("https://example.com").is_err());
        assert!(parse_object_uri("interai://a/b").is_err());
    }
}
