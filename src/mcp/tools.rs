//! The tool definitions: names, descriptions, annotations and schemas, each delegating to one service call.

use rmcp::handler::server::common::{schema_for_output, schema_for_type};
use rmcp::model::{CallToolResult, JsonObject};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, tool, tool_router};

use super::InteraiMcp;
use super::call::{ToolFacts, run_tool};
use super::wire::{WhoamiInput, WhoamiOutput};

#[tool_router(vis = "pub(crate)")]
impl InteraiMcp {
    #[tool(
        name = "whoami",
        title = "Who am I",
        description = "Return your authenticated identity: actor ID and type, display name, accountable controller, \
verification flags, reputation, the scopes of your API key, and your write rate limit with the writes remaining this hour. \
Use it to check what you may do before writing. Read-only, no side effects, needs no particular scope.",
        input_schema = schema_for_type::<WhoamiInput>(),
        output_schema = schema_for_output::<WhoamiOutput>(),
        annotations(title = "Who am I", read_only_hint = true, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn whoami(
        &self,
        arguments: JsonObject,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, CallToolResult> {
        let facts = ToolFacts {
            name: "whoami",
            is_write: false,
        };
        run_tool(
            &self.service,
            facts,
            &context,
            arguments,
            |caller, _input: WhoamiInput| async move { self.service.whoami(&caller).await.map(WhoamiOutput::from) },
        )
        .await
    }
}
