//! The pipeline every tool call runs through: caller, arguments, service call, audit, result mapping.

use std::future::Future;
use std::time::Instant;

use axum::http::request::Parts;
use rmcp::RoleServer;
use rmcp::model::{CallToolResult, ContentBlock, InitializeRequestParams, JsonObject};
use rmcp::service::RequestContext;
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::domain::AuthenticatedActor;
use crate::metrics::{Metrics, TOOL_OUTCOME_OK, TOOL_OUTCOME_UNKNOWN_TOOL, UNKNOWN_TOOL};
use crate::service::audit::CallAudit;
use crate::service::input_gate;
use crate::service::writes::{CallMetadata, WriteOperation};
use crate::service::{ErrorCode, Service, ServiceError};

/// A tool's output: serialized as `structuredContent`, summarized in one line of text.
pub trait ToolOutput: Serialize + JsonSchema {
    /// One line for the text rendering shown to models that ignore structured content.
    fn summary(&self) -> String;
}

/// Static facts about a tool that the pipeline needs.
#[derive(Debug, Clone, Copy)]
pub struct ToolFacts {
    /// The tool's name.
    pub name: &'static str,
    /// Whether a success counts against the write limit.
    pub is_write: bool,
}

/// What the pipeline knows about a call besides its caller and input: the request as the audit keeps it, the
/// client's self-description and when the call started. A write tool turns it into the service's [`CallMetadata`]
/// with its operation.
#[derive(Debug, Clone)]
pub struct CallInfo {
    /// The arguments as received (control characters escaped when the input gate refused them).
    pub request: Value,
    /// The client's self-reported name.
    pub client_name: Option<String>,
    /// The client's self-reported version.
    pub client_version: Option<String>,
    /// When the call started.
    pub started: Instant,
}

impl CallInfo {
    /// The service's metadata of this call as the write `operation`.
    pub fn for_write(self, operation: WriteOperation) -> CallMetadata {
        CallMetadata {
            operation,
            request: self.request,
            client_name: self.client_name,
            client_version: self.client_version,
            started: self.started,
        }
    }
}

/// The caller placed in the request extensions by the HTTP auth layer.
pub fn caller_of(context: &RequestContext<RoleServer>) -> Result<AuthenticatedActor, ServiceError> {
    context
        .extensions
        .get::<Parts>()
        .and_then(|parts| parts.extensions.get::<AuthenticatedActor>())
        .cloned()
        .ok_or_else(|| {
            ServiceError::new(
                ErrorCode::Unauthenticated,
                "this request carries no authenticated actor",
            )
        })
}

/// The client's name and version, when the request says (current-protocol clients send it with every call), with
/// control characters escaped: they are stored in the audit log as given otherwise.
pub fn client_of(context: &RequestContext<RoleServer>) -> (Option<String>, Option<String>) {
    match context.meta.client_info() {
        Some(implementation) => (
            Some(input_gate::audit_safe_text(&implementation.name)),
            Some(input_gate::audit_safe_text(&implementation.version)),
        ),
        None => (None, None),
    }
}

/// Parses tool arguments into the tool's input type; a mismatch is `validation_failed` naming the problem.
pub fn parse_arguments<Input: DeserializeOwned>(arguments: &JsonObject) -> Result<Input, ServiceError> {
    serde_path_to_error::deserialize(Value::Object(arguments.clone())).map_err(|error| {
        let path = error.path().to_string();
        let field = if path == "." { String::new() } else { path };
        ServiceError::new(
            ErrorCode::ValidationFailed,
            format!("the arguments do not match the tool's input schema: {}", error.inner()),
        )
        .with_details(json!({ "field": field }))
    })
}

/// Runs one tool call: resolves the caller, passes the raw arguments through the input gate (control characters),
/// parses them, calls `handler`, audits the call, counts it by tool and outcome in the instance's metrics, and maps
/// the outcome to a tool result (`isError: true` with the spec's error object on failure).
pub async fn run_tool<Input, Output, Handler, HandlerFuture>(
    service: &Service,
    facts: ToolFacts,
    context: &RequestContext<RoleServer>,
    arguments: JsonObject,
    handler: Handler,
) -> Result<CallToolResult, CallToolResult>
where
    Input: DeserializeOwned,
    Output: ToolOutput,
    Handler: FnOnce(AuthenticatedActor, Input, CallInfo) -> HandlerFuture,
    HandlerFuture: Future<Output = Result<Output, ServiceError>>,
{
    let result = audited_call(service, facts, context, arguments, handler).await;
    if let Some(metrics) = metrics_of(context) {
        let outcome = match &result {
            Ok(_) => TOOL_OUTCOME_OK,
            Err(error) => error.code.as_str(),
        };
        metrics.record_tool_call(facts.name, outcome);
    }
    result.map_err(|error| error_result(&error))
}

/// The steps of [`run_tool`] up to the result, which is an error with its spec code when the call failed.
async fn audited_call<Input, Output, Handler, HandlerFuture>(
    service: &Service,
    facts: ToolFacts,
    context: &RequestContext<RoleServer>,
    arguments: JsonObject,
    handler: Handler,
) -> Result<CallToolResult, ServiceError>
where
    Input: DeserializeOwned,
    Output: ToolOutput,
    Handler: FnOnce(AuthenticatedActor, Input, CallInfo) -> HandlerFuture,
    HandlerFuture: Future<Output = Result<Output, ServiceError>>,
{
    let started = Instant::now();
    let caller = caller_of(context)?;
    let (client_name, client_version) = client_of(context);
    let gate = input_gate::check_arguments(&arguments);
    // A refused request may hold what no database column accepts (PostgreSQL's `jsonb` and `text` refuse NUL); its
    // audit row keeps it with control characters escaped. A request that passed the gate holds none.
    let request = match &gate {
        Ok(()) => Value::Object(arguments.clone()),
        Err(_) => input_gate::sanitized_for_audit(&Value::Object(arguments.clone())),
    };
    let metadata = CallInfo {
        request,
        client_name: client_name.clone(),
        client_version: client_version.clone(),
        started,
    };
    let outcome = match gate.and_then(|()| parse_arguments::<Input>(&arguments)) {
        Ok(input) => handler(caller.clone(), input, metadata.clone()).await,
        Err(error) => Err(error),
    };
    // A successful write was audited inside its own transaction (with the count the rate limit sums);
    // everything else is audited here.
    let audit = if facts.is_write && outcome.is_ok() {
        Ok(())
    } else {
        let audited = match &outcome {
            Ok(output) => Ok(output.summary()),
            Err(error) => Err(error),
        };
        service
            .record_call(CallAudit {
                caller: &caller,
                tool: facts.name,
                is_write: facts.is_write,
                request: &metadata.request,
                outcome: audited,
                duration: started.elapsed(),
                client_name,
                client_version,
            })
            .await
    };
    if let Err(error) = audit {
        // An unaudited call must not look successful: report it as the internal error it is.
        log_error(facts.name, &error);
        return Err(error);
    }
    match outcome {
        Ok(output) => success_result(&output),
        Err(error) => {
            log_error(facts.name, &error);
            Err(error)
        }
    }
}

/// The instance's metrics, placed in the request extensions by the HTTP layer (`http::metrics::count_request`) the
/// way the caller is; `None` only for a server run without that layer.
pub fn metrics_of(context: &RequestContext<RoleServer>) -> Option<Metrics> {
    context
        .extensions
        .get::<Parts>()
        .and_then(|parts| parts.extensions.get::<Metrics>())
        .cloned()
}

/// Counts a call naming a tool the server does not have, under one `tool` label for all such names (rmcp answers it
/// with a JSON-RPC error before any tool runs).
pub fn count_unknown_tool(context: &RequestContext<RoleServer>) {
    if let Some(metrics) = metrics_of(context) {
        metrics.record_tool_call(UNKNOWN_TOOL, TOOL_OUTCOME_UNKNOWN_TOOL);
    }
}

/// Audits an `initialize` handshake with the client's self-description. Failures are logged only:
/// refusing the handshake would not make the audit trail any more complete.
pub async fn audit_initialize(
    service: &Service,
    context: &RequestContext<RoleServer>,
    request: &InitializeRequestParams,
) {
    let Ok(caller) = caller_of(context) else {
        return;
    };
    let client_name = input_gate::audit_safe_text(&request.client_info.name);
    let client_version = input_gate::audit_safe_text(&request.client_info.version);
    let request_value = json!({
        "protocolVersion": input_gate::audit_safe_text(&request.protocol_version.to_string()),
        "clientInfo": { "name": client_name, "version": client_version },
    });
    let result = service
        .record_call(CallAudit {
            caller: &caller,
            tool: "initialize",
            is_write: false,
            request: &request_value,
            outcome: Ok(format!("protocol {}", request.protocol_version)),
            duration: std::time::Duration::ZERO,
            client_name: Some(client_name.clone()),
            client_version: Some(client_version.clone()),
        })
        .await;
    if let Err(error) = result {
        log_error("initialize", &error);
    }
}

fn log_error(tool: &str, error: &ServiceError) {
    if error.code == ErrorCode::InternalError {
        tracing::error!(
            tool,
            code = error.code.as_str(),
            cause = error.cause.as_deref().unwrap_or(""),
            "tool call failed"
        );
    } else if let Some(cause) = error.cause.as_deref() {
        // A refusal the database decided (the statement cut-off): operators should see which calls hit it.
        tracing::warn!(
            tool,
            code = error.code.as_str(),
            cause,
            "tool call refused by the database"
        );
    } else {
        tracing::debug!(tool, code = error.code.as_str(), "tool call refused");
    }
}

/// A successful result: the output as `structuredContent`, and a text block with a summary line and the JSON,
/// for clients that only read text.
pub fn success_result<Output: ToolOutput>(output: &Output) -> Result<CallToolResult, ServiceError> {
    let value = serde_json::to_value(output).map_err(|error| ServiceError::internal(error.to_string()))?;
    let text = format!("{}\n\n{}", output.summary(), value);
    let mut result = CallToolResult::structured(value);
    result.content = vec![ContentBlock::text(text)];
    Ok(result)
}

/// A failed result: `isError: true`, `structuredContent = { "error": { code, message, details } }` (which every
/// tool's output schema accepts, see `mcp::schema`), and a text block with a line and the same JSON, so that clients
/// that only read text still see `details` (the offending field, `retry_after`).
pub fn error_result(error: &ServiceError) -> CallToolResult {
    let body = json!({ "error": { "code": error.code.as_str(), "message": error.message, "details": error.details } });
    let text = format!("Error [{}]: {}\n\n{}", error.code, error.message, body);
    let mut result = CallToolResult::structured_error(body);
    result.content = vec![ContentBlock::text(text)];
    result
}
