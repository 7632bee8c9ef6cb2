//! Fixtures: controllers and agents with keys, and shorthand for calling write use cases from tests.

use interai::domain::{ActorType, AuthenticatedActor, PublicId, ScopeSet};
use interai::service::Service;
use interai::service::actors::NewActor;
use interai::service::content::{PublishOutcome, PublishRequest};
use interai::service::evidence::{ReviewRequest, UsageRequest};
use interai::service::keys::NewApiKey;
use interai::service::writes::{CallMetadata, WriteOperation};
use serde_json::json;

/// An agent with its key.
#[derive(Debug, Clone)]
pub struct Agent {
    /// The authenticated actor, as the MCP layer would hand it to the service.
    pub caller: AuthenticatedActor,
    /// The bearer key.
    pub key: String,
}

impl Agent {
    /// The agent's root controller.
    pub fn controller(&self) -> &PublicId {
        &self.caller.actor.root_controller
    }
}

/// A new human controller.
pub async fn controller(service: &Service, name: &str) -> PublicId {
    service
        .create_actor(NewActor {
            actor_type: ActorType::User,
            display_name: name.to_owned(),
            controller: None,
        })
        .await
        .expect("controller created")
        .id
}

/// A new agent of `controller` with the scopes given.
pub async fn agent_of_with_scopes(service: &Service, controller: &PublicId, name: &str, scopes: &str) -> Agent {
    let actor = service
        .create_actor(NewActor {
            actor_type: ActorType::Agent,
            display_name: name.to_owned(),
            controller: Some(controller.clone()),
        })
        .await
        .expect("agent created");
    let issued = service
        .create_api_key(NewApiKey {
            actor_id: actor.id.clone(),
            scopes: ScopeSet::parse_list(scopes).expect("scopes"),
            expires_at: None,
            label: None,
        })
        .await
        .expect("key issued");
    let caller = service.authenticate(&issued.secret).await.expect("key works");
    Agent {
        caller,
        key: issued.secret,
    }
}

/// A new agent of `controller` with every agent scope.
pub async fn agent_of(service: &Service, controller: &PublicId, name: &str) -> Agent {
    agent_of_with_scopes(service, controller, name, "read,publish,usage,review,rate").await
}

/// A new agent with a controller of its own.
pub async fn agent(service: &Service, name: &str) -> Agent {
    let owner = controller(service, &format!("{name}'s owner")).await;
    agent_of(service, &owner, name).await
}

/// Metadata for a call made from a test, named by its tool.
pub fn metadata(tool: &'static str) -> CallMetadata {
    metadata_with(tool, json!({}))
}

/// Metadata carrying the request, as idempotency compares it.
pub fn metadata_with(tool: &'static str, request: serde_json::Value) -> CallMetadata {
    let operation = WriteOperation::from_tool_name(tool).unwrap_or_else(|| panic!("{tool} is not a write tool"));
    CallMetadata::internal(operation, request)
}

/// Publishes a simple procedure with the given claims.
pub async fn publish_procedure(service: &Service, author: &Agent, title: &str, claims: &[&str]) -> PublishOutcome {
    service
        .publish(
            &author.caller,
            &metadata("publish"),
            PublishRequest {
                content_type: "procedure".to_owned(),
                title: title.to_owned(),
                summary: format!("How to {title}."),
                body_markdown: format!("# {title}\n\n1. Do the thing.\n2. Check it worked.\n"),
                claims: claims.iter().map(|claim| (*claim).to_owned()).collect(),
                ..PublishRequest::default()
            },
        )
        .await
        .expect("publish succeeds")
}

/// Reports a use of `target`.
pub async fn use_it(service: &Service, agent: &Agent, target: &str, result: &str, real_world: bool) -> String {
    service
        .report_usage(
            &agent.caller,
            &metadata("report_usage"),
            UsageRequest {
                target: target.to_owned(),
                usage_type: "implementation".to_owned(),
                result: result.to_owned(),
                real_world_use: real_world,
                ..UsageRequest::default()
            },
        )
        .await
        .expect("report_usage succeeds")
        .id
}

/// Reviews `target`.
pub async fn review_it(
    service: &Service,
    agent: &Agent,
    target: &str,
    verdict: &str,
    confidence: f64,
    based_on_usage: Option<&str>,
) -> String {
    service
        .review(
            &agent.caller,
            &metadata("review"),
            ReviewRequest {
                target: target.to_owned(),
                verdict: verdict.to_owned(),
                confidence,
                based_on_usage: based_on_usage.map(str::to_owned),
                ..ReviewRequest::default()
            },
        )
        .await
        .expect("review succeeds")
        .id
}
