//! The JSON-RPC front guard of `/mcp`: requests rmcp would answer with a plain-text HTTP error get a JSON-RPC
//! error that clients can read, and everything else reaches rmcp with its body unchanged.
//!
//! rmcp deserializes the body into its message type and answers anything that does not fit with
//! `415 Unsupported Media Type` and a line of text; a `tools/call` or `resources/read` without params becomes
//! "method not found"; a body that cannot be read (a `Content-Length` beside `Transfer-Encoding: chunked` whose
//! body is not chunked) becomes a 500. This guard reads the body under the configured cap and answers, with
//! HTTP 400 and `Content-Type: application/json`:
//!
//! - `-32700` parse error (`id: null`): the body is not UTF-8 or not JSON;
//! - `-32600` invalid request: a batch array, a non-object, a wrong `jsonrpc`, `id` or `method`, an unreadable
//!   body;
//! - `-32602` invalid params: params that are not an object, or missing where the method needs them
//!   (`initialize`, `tools/call` with its `name`, `resources/read` with its `uri`).
//!
//! `initialize` under protocol revision 2026-07-28 or later (which removed the handshake) gets `-32601` method not
//! found with HTTP 404, before its params are looked at.
//!
//! A body rmcp still cannot deserialize after these checks (say `initialize` without `protocolVersion`) comes
//! back from rmcp as 415; that answer is replaced by a `-32602` naming the method, with rmcp's reason. rmcp's other
//! refusals in text (a `Host` or `Origin` outside the allow-lists, another method, `Accept` or media type, an unknown
//! protocol revision) become `-32600` with the same status.
//! Every error's `data.error` is the spec's error object (`validation_failed`), as for tool errors.
//!
//! The guard runs after authentication (see `http::router`): an unauthenticated caller gets 401 whatever its body.

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::service::{ErrorCode, ServiceError};

/// JSON-RPC's "Parse error".
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC's "Invalid Request".
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC's "Method not found".
pub const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC's "Invalid params".
pub const INVALID_PARAMS: i64 = -32602;
/// JSON-RPC's "Internal error".
pub const INTERNAL_ERROR: i64 = -32603;
/// A server-defined code (JSON-RPC reserves -32000 to -32099 for them) for a request refused before dispatch
/// because it carries no valid API key. -32000 and -32001 are avoided: the MCP SDKs use them locally for
/// "connection closed" and "request timeout"; -32002 is MCP's "resource not found".
pub const UNAUTHENTICATED: i64 = -32003;

/// A JSON-RPC error response with `status`, for failures before (or instead of) dispatch. `id` is the request's
/// ID when it could be read; `data.error` is the spec's error object.
pub fn error_response(status: StatusCode, id: Option<&Value>, code: i64, error: &ServiceError) -> Response {
    let body = json!({
        "jsonrpc": "2.0",
        "id": id.cloned().unwrap_or(Value::Null),
        "error": {
            "code": code,
            "message": error.message,
            "data": {
                "error": { "code": error.code.as_str(), "message": error.message, "details": error.details }
            }
        }
    });
    (status, axum::Json(body)).into_response()
}

/// Why a request was refused, with what the answer needs.
#[derive(Debug)]
struct Refusal {
    status: StatusCode,
    code: i64,
    id: Option<Value>,
    message: String,
    details: Value,
}

impl Refusal {
    fn new(code: i64, id: Option<&Value>, message: impl Into<String>) -> Refusal {
        Refusal {
            status: StatusCode::BAD_REQUEST,
            code,
            id: id.cloned(),
            message: message.into(),
            details: json!({}),
        }
    }

    fn field(mut self, field: &str) -> Refusal {
        self.details = json!({ "field": field });
        self
    }

    fn into_response(self) -> Response {
        tracing::info!(code = self.code, reason = %self.message, "malformed MCP request refused");
        let error = ServiceError::new(ErrorCode::ValidationFailed, self.message).with_details(self.details);
        error_response(self.status, self.id.as_ref(), self.code, &error)
    }
}

/// Reads `/mcp` POST bodies that claim to be JSON, answers malformed ones with a JSON-RPC error and hands the others
/// on unchanged. `max_bytes` is the configured body cap.
pub async fn guard(State(max_bytes): State<usize>, request: Request, next: Next) -> Response {
    if request.method() != Method::POST || !declares_json(request.headers()) {
        // rmcp answers other methods (405) and other media types (415) itself, in text.
        let response = next.run(request).await;
        return in_json(response, None).await;
    }
    let (parts, body) = request.into_parts();
    let bytes = match read_body(body, max_bytes).await {
        Ok(bytes) => bytes,
        Err(refusal) => return refusal.into_response(),
    };
    let message = match check_message(&bytes, header_revision(&parts.headers)) {
        Ok(message) => message,
        Err(refusal) => return refusal.into_response(),
    };
    if let Some(tool) = &message.tool {
        super::request_log::record_tool(&parts.extensions, tool);
    }
    let response = next.run(Request::from_parts(parts, Body::from(bytes))).await;
    if response.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE {
        // The media type was JSON (checked above), so rmcp could not deserialize the message itself.
        return unreadable_by_transport(response, &message).await;
    }
    in_json(response, message.id.as_ref()).await
}

/// rmcp's own refusals are a line of text without a content type: a `Host` or `Origin` outside the allow-lists (403),
/// a method other than POST (405), an `Accept` without JSON (406), another media type (415), an unknown
/// `MCP-Protocol-Version` (400). Each becomes a JSON-RPC error with the same status (and `Allow`), rmcp's text as its
/// message and the spec's error object (`validation_failed`, naming the header at fault) as its data.
async fn in_json(response: Response, id: Option<&Value>) -> Response {
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.to_ascii_lowercase().contains("json"));
    if !status.is_client_error() || is_json {
        return response;
    }
    let (parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, 4096)
        .await
        .map(|bytes| String::from_utf8_lossy(&bytes).trim().to_owned())
        .unwrap_or_default();
    let message = if text.is_empty() {
        status.canonical_reason().unwrap_or("refused").to_owned()
    } else {
        text
    };
    let field = [
        ("Host header", "host"),
        ("Origin header", "origin"),
        ("MCP-Protocol-Version", "mcp-protocol-version"),
    ]
    .into_iter()
    .find(|(named, _)| message.contains(named))
    .map(|(_, field)| field)
    .or(match status {
        StatusCode::METHOD_NOT_ALLOWED => Some("method"),
        StatusCode::NOT_ACCEPTABLE => Some("accept"),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => Some("content-type"),
        _ => None,
    });
    let details = field.map_or_else(|| json!({}), |field| json!({ "field": field }));
    tracing::info!(status = status.as_u16(), reason = %message, "MCP request refused by the transport");
    let error = ServiceError::new(ErrorCode::ValidationFailed, message).with_details(details);
    let mut answer = error_response(status, id, INVALID_REQUEST, &error);
    if let Some(allow) = parts.headers.get(header::ALLOW) {
        answer.headers_mut().insert(header::ALLOW, allow.clone());
    }
    answer
}

/// The revision named by `MCP-Protocol-Version`, when it is one rmcp knows.
fn header_revision(headers: &HeaderMap) -> Option<&'static rmcp::model::ProtocolVersion> {
    let named = headers.get("mcp-protocol-version")?.to_str().ok()?;
    rmcp::model::ProtocolVersion::KNOWN_VERSIONS
        .iter()
        .find(|known| known.as_str() == named)
}

/// What the guard learned about a message that passed its checks.
#[derive(Debug)]
struct CheckedMessage {
    id: Option<Value>,
    method: Option<String>,
    /// The tool a `tools/call` names, for the request's log line.
    tool: Option<String>,
}

/// Whether `Content-Type` is `application/json` (with any parameters).
fn declares_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
}

/// Reads the whole body, refusing one larger than `max_bytes` (413) or one that cannot be read (400).
async fn read_body(body: Body, max_bytes: usize) -> Result<Bytes, Refusal> {
    let too_large = || Refusal {
        status: StatusCode::PAYLOAD_TOO_LARGE,
        ..Refusal::new(
            INVALID_REQUEST,
            None,
            format!("the request body is larger than {max_bytes} bytes"),
        )
    };
    if body.size_hint().lower() > max_bytes as u64 {
        return Err(too_large());
    }
    let mut body = std::pin::pin!(body);
    let mut collected: Vec<u8> = Vec::new();
    while let Some(frame) = std::future::poll_fn(|context| body.as_mut().poll_frame(context)).await {
        let frame = frame.map_err(|error| {
            // hyper reports framing it cannot decode (for example a body announced as chunked that is not) as a
            // body error: the request is malformed, not the server broken.
            Refusal::new(
                INVALID_REQUEST,
                None,
                format!("the request body could not be read: {error}"),
            )
        })?;
        if let Ok(data) = frame.into_data() {
            if data.len() > max_bytes.saturating_sub(collected.len()) {
                return Err(too_large());
            }
            collected.extend_from_slice(&data);
        }
    }
    Ok(Bytes::from(collected))
}

/// The JSON-RPC checks rmcp leaves to deserialization, in the order a reader would apply them. `header_revision` is
/// the protocol revision the request's `MCP-Protocol-Version` names.
fn check_message(
    bytes: &[u8],
    header_revision: Option<&rmcp::model::ProtocolVersion>,
) -> Result<CheckedMessage, Refusal> {
    let text = std::str::from_utf8(bytes)
        .map_err(|_| Refusal::new(PARSE_ERROR, None, "the request body is not valid UTF-8"))?;
    let value: Value = serde_json::from_str(text).map_err(|error| {
        Refusal::new(
            PARSE_ERROR,
            None,
            format!("the request body is not valid JSON: {error}"),
        )
    })?;
    let object = match value {
        Value::Object(object) => object,
        Value::Array(_) => {
            return Err(Refusal::new(
                INVALID_REQUEST,
                None,
                "batch requests are not supported: send one JSON-RPC message per HTTP request",
            ));
        }
        _ => {
            return Err(Refusal::new(
                INVALID_REQUEST,
                None,
                "the request body must be a JSON-RPC message (a JSON object)",
            ));
        }
    };
    let id = match object.get("id") {
        None => None,
        Some(id @ Value::String(_)) => Some(id.clone()),
        Some(id @ Value::Number(number)) if number.is_i64() || number.is_u64() => Some(id.clone()),
        Some(_) => {
            return Err(Refusal::new(INVALID_REQUEST, None, "id must be a string or an integer").field("id"));
        }
    };
    if object.get("jsonrpc") != Some(&json!("2.0")) {
        return Err(Refusal::new(INVALID_REQUEST, id.as_ref(), "jsonrpc must be \"2.0\"").field("jsonrpc"));
    }
    let method = match object.get("method") {
        Some(Value::String(method)) => method.clone(),
        Some(_) => return Err(Refusal::new(INVALID_REQUEST, id.as_ref(), "method must be a string").field("method")),
        None if id.is_some() && (object.contains_key("result") || object.contains_key("error")) => {
            // A response to a request of the server's.
            return Ok(CheckedMessage {
                id,
                method: None,
                tool: None,
            });
        }
        None => {
            return Err(Refusal::new(
                INVALID_REQUEST,
                id.as_ref(),
                "a JSON-RPC message needs a method (a request or notification) or an id with a result or error \
                 (a response)",
            )
            .field("method"));
        }
    };
    if method == "initialize" {
        refuse_initialize_without_handshake(object.get("params"), header_revision, id.as_ref())?;
    }
    check_params(&method, object.get("params"), id.as_ref())?;
    let tool = (method == "tools/call")
        .then(|| {
            object
                .get("params")
                .and_then(|params| params.get("name"))
                .and_then(Value::as_str)
        })
        .flatten()
        .map(str::to_owned);
    Ok(CheckedMessage {
        id,
        method: Some(method),
        tool,
    })
}

/// The `_meta` key in which a request of revision 2026-07-28 or later names its revision.
const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

/// `initialize` sent under a revision that has no handshake (2026-07-28 and later, named by `MCP-Protocol-Version`
/// or by the request's `_meta`) is a method that revision does not have: JSON-RPC's "method not found", with HTTP 404
/// as that revision's transport pairs them (and as rmcp answers every other unknown method there). Checked before the
/// params, which a client of that revision does not shape as `initialize`'s. Without either, `initialize` keeps
/// negotiating an earlier revision, as initialize-era clients expect.
fn refuse_initialize_without_handshake(
    params: Option<&Value>,
    header_revision: Option<&rmcp::model::ProtocolVersion>,
    id: Option<&Value>,
) -> Result<(), Refusal> {
    let meta_revision = params
        .and_then(|params| params.get("_meta"))
        .and_then(|meta| meta.get(META_PROTOCOL_VERSION))
        .and_then(Value::as_str);
    let revision = header_revision
        .map(rmcp::model::ProtocolVersion::as_str)
        .or(meta_revision);
    let Some(revision) = revision else {
        return Ok(());
    };
    if revision < rmcp::model::ProtocolVersion::NO_INITIALIZE.as_str() {
        return Ok(());
    }
    Err(Refusal {
        status: StatusCode::NOT_FOUND,
        ..Refusal::new(
            METHOD_NOT_FOUND,
            id,
            format!(
                "initialize is not a method of MCP {revision}, which has no handshake: call server/discover, or \
                 send initialize without MCP-Protocol-Version {revision} to use an earlier revision"
            ),
        )
        .field("method")
    })
}

/// Params must be an object when present, and present for the methods that cannot do without them.
fn check_params(method: &str, params: Option<&Value>, id: Option<&Value>) -> Result<(), Refusal> {
    let needs = |what: &str| Refusal::new(INVALID_PARAMS, id, format!("{method} needs {what}"));
    let params = match params {
        None | Some(Value::Null) => {
            return match method {
                "initialize" | "tools/call" | "resources/read" => Err(needs("params (an object)").field("params")),
                _ => Ok(()),
            };
        }
        Some(Value::Object(params)) => params,
        Some(_) => return Err(Refusal::new(INVALID_PARAMS, id, "params must be an object").field("params")),
    };
    match method {
        "tools/call" => {
            if !params.get("name").is_some_and(Value::is_string) {
                return Err(needs("params.name, the tool's name (a string)").field("params/name"));
            }
            if !matches!(params.get("arguments"), None | Some(Value::Null | Value::Object(_))) {
                return Err(
                    Refusal::new(INVALID_PARAMS, id, "tools/call arguments must be an object")
                        .field("params/arguments"),
                );
            }
        }
        "resources/read" if !params.get("uri").is_some_and(Value::is_string) => {
            return Err(needs("params.uri, the resource's URI (a string)").field("params/uri"));
        }
        // rmcp answers params it cannot read as "method not found"; these are small, so reading them here as rmcp
        // will costs little and names the problem.
        "initialize" => fits::<rmcp::model::InitializeRequestParams>(method, params, id)?,
        "resources/read" => fits::<rmcp::model::ReadResourceRequestParams>(method, params, id)?,
        _ => {}
    }
    Ok(())
}

/// Whether `params` deserialize as rmcp's `Params` for `method`.
fn fits<Params: serde::de::DeserializeOwned>(
    method: &str,
    params: &serde_json::Map<String, Value>,
    id: Option<&Value>,
) -> Result<(), Refusal> {
    match serde_json::from_value::<Params>(Value::Object(params.clone())) {
        Ok(_) => Ok(()),
        Err(error) => {
            Err(Refusal::new(INVALID_PARAMS, id, format!("the params do not fit {method}: {error}")).field("params"))
        }
    }
}

/// Replaces rmcp's plain-text 415 for a message it could not deserialize with a JSON-RPC error.
async fn unreadable_by_transport(response: Response, message: &CheckedMessage) -> Response {
    let reason = axum::body::to_bytes(response.into_body(), 4096)
        .await
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .unwrap_or_default();
    let reason = reason.trim_start_matches("fail to deserialize request body").trim();
    let refusal = match &message.method {
        Some(method) => Refusal::new(
            INVALID_PARAMS,
            message.id.as_ref(),
            format!("the params do not fit {method}: {reason}"),
        )
        .field("params"),
        None => Refusal::new(
            INVALID_REQUEST,
            message.id.as_ref(),
            format!("the message is not a valid JSON-RPC response: {reason}"),
        ),
    };
    refusal.into_response()
}

/// The request's `id` when the body is a JSON object with a string or integer `id`, for answers (such as 401) that
/// are given before the body is otherwise looked at.
pub fn request_id(bytes: &[u8]) -> Option<Value> {
    let value: Value = serde_json::from_slice(bytes).ok()?;
    match value.get("id")? {
        id @ Value::String(_) => Some(id.clone()),
        id @ Value::Number(number) if number.is_i64() || number.is_u64() => Some(id.clone()),
        _ => None,
    }
}

/// Reads a body for [`request_id`], up to `max_bytes`; `None` when it is larger or unreadable.
pub async fn read_for_id(body: Body, max_bytes: usize) -> Option<Value> {
    let bytes = read_body(body, max_bytes).await.ok()?;
    request_id(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(body: &str) -> (i64, Option<Value>) {
        let refusal = check_message(body.as_bytes(), None).expect_err(body);
        (refusal.code, refusal.id)
    }

    #[test]
    fn malformed_messages_get_the_json_rpc_code_that_names_the_problem() {
        assert_eq!(refused("{\"jsonrpc\":"), (PARSE_ERROR, None));
        assert_eq!(refused("[]"), (INVALID_REQUEST, None));
        assert_eq!(refused("\"text\""), (INVALID_REQUEST, None));
        assert_eq!(
            refused(r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#),
            (INVALID_REQUEST, None)
        );
        assert_eq!(
            refused(r#"{"id":4,"method":"tools/list"}"#),
            (INVALID_REQUEST, Some(json!(4)))
        );
        assert_eq!(
            refused(r#"{"jsonrpc":"2.0","id":"a","method":"tools/call"}"#),
            (INVALID_PARAMS, Some(json!("a")))
        );
        assert_eq!(
            refused(r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"arguments":{}}}"#),
            (INVALID_PARAMS, Some(json!(5)))
        );
        assert_eq!(
            refused(r#"{"jsonrpc":"2.0","id":5,"method":"tools/list","params":[]}"#),
            (INVALID_PARAMS, Some(json!(5)))
        );
        assert_eq!(
            refused(r#"{"jsonrpc":"2.0","id":6,"method":"resources/read","params":{}}"#),
            (INVALID_PARAMS, Some(json!(6)))
        );
        assert_eq!(
            refused(r#"{"jsonrpc":"2.0","id":8,"method":"initialize","params":{"capabilities":{}}}"#),
            (INVALID_PARAMS, Some(json!(8)))
        );
        assert_eq!(
            refused(r#"{"jsonrpc":"2.0","id":7}"#),
            (INVALID_REQUEST, Some(json!(7)))
        );
    }

    #[test]
    fn well_formed_messages_pass() {
        for body in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"whoami"}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":{}}"#,
        ] {
            assert!(check_message(body.as_bytes(), None).is_ok(), "{body}");
        }
        assert_eq!(request_id(br#"{"id":9}"#), Some(json!(9)));
        assert_eq!(request_id(b"not json"), None);
    }
}
