//! A small MCP client for tests, built on rmcp's Streamable HTTP client with a bearer key.

use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientLifecycleMode, ClientServiceExt, ServiceExt};
use serde_json::Value;

/// A connected client.
pub type McpClient = RunningService<RoleClient, ClientConfig>;

fn transport(url: &str, key: Option<&str>) -> StreamableHttpClientTransport<reqwest::Client> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    if let Some(key) = key {
        config = config.auth_header(key.to_owned());
    }
    StreamableHttpClientTransport::from_config(config)
}

fn client_config() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("interai-tests", "1.0.0"),
    )
}

/// Connects the way initialize-era clients do (protocol 2025-11-25 after negotiation).
pub async fn connect_initialize(
    url: &str,
    key: Option<&str>,
) -> Result<McpClient, rmcp::service::ClientInitializeError> {
    client_config().serve(transport(url, key)).await
}

/// Connects with the current protocol (2026-07-28): `server/discover`, no sessions.
pub async fn connect_discover(url: &str, key: &str) -> McpClient {
    client_config()
        .serve_with_lifecycle(
            transport(url, Some(key)),
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .expect("discover handshake succeeds")
}

/// The outcome of a tool call as a user sees it.
#[derive(Debug, Clone)]
pub struct ToolOutcome {
    /// `isError` of the result.
    pub is_error: bool,
    /// `structuredContent` of the result.
    pub structured: Value,
    /// The concatenated text content.
    pub text: String,
}

impl ToolOutcome {
    /// The error code of a failed call.
    pub fn error_code(&self) -> Option<&str> {
        self.structured.pointer("/error/code").and_then(Value::as_str)
    }

    /// Asserts success and returns the structured content.
    pub fn ok(self) -> Value {
        assert!(!self.is_error, "expected success, got {}", self.structured);
        self.structured
    }

    /// Asserts failure with `code` and returns the error object.
    pub fn err(self, code: &str) -> Value {
        assert!(self.is_error, "expected error {code}, got success {}", self.structured);
        assert_eq!(self.error_code(), Some(code), "unexpected error {}", self.structured);
        self.structured["error"].clone()
    }
}

/// Calls a tool with JSON arguments.
pub async fn call(client: &McpClient, tool: &str, arguments: Value) -> ToolOutcome {
    let arguments = arguments.as_object().cloned().unwrap_or_default();
    let result = client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments))
        .await
        .unwrap_or_else(|error| panic!("tool call {tool} failed at the protocol level: {error}"));
    let text = result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|text| text.text.clone()))
        .collect::<Vec<_>>()
        .join("\n");
    ToolOutcome {
        is_error: result.is_error.unwrap_or(false),
        structured: result.structured_content.unwrap_or(Value::Null),
        text,
    }
}
