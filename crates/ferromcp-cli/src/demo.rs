//! The built-in demo server, written on the low-level `Server`.

use std::time::Duration;

use ferromcp_server::{RequestContext, Server};
use ferromcp_types::jsonrpc::ErrorObject;
use ferromcp_types::mcp::methods::{
    CallTool, Complete, GetPrompt, ListPrompts, ListResources, ListTools, ReadResource, SetLevel,
};
use ferromcp_types::mcp::{
    CallToolRequestParams, CallToolResult, CompleteRequestParams, CompleteResult, Completion,
    EmptyResult, GetPromptRequestParams, GetPromptResult, JsonObject, ListPromptsResult,
    ListResourcesResult, ListToolsResult, LoggingLevel, PaginatedRequestParams, Prompt,
    PromptArgument, PromptMessage, ReadResourceRequestParams, ReadResourceResult, Resource,
    SetLevelRequestParams, TextResourceContents, Tool,
};
use serde_json::{Value, json};

/// What the demo server exposes, for `--help`.
pub(crate) const CONTENTS: &str = "\
tools:     add (a + b), echo (text), countdown (seconds; reports progress, honours cancellation)
resources: demo://readme (text/plain)
prompts:   greet (name; completes names)
logging:   logging/setLevel (handshake era), per-request logLevel (2026-07-28)";

const README: &str = "ferromcp demo server: a Rust MCP server serving every protocol revision.";
const NAMES: [&str; 4] = ["Ada", "Alan", "Grace", "Linus"];

fn schema(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "add",
            schema(json!({
                "type": "object",
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                "required": ["a", "b"]
            })),
        )
        .with_description("Adds two numbers."),
        Tool::new(
            "echo",
            schema(json!({
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"]
            })),
        )
        .with_description("Returns its text."),
        Tool::new(
            "countdown",
            schema(json!({
                "type": "object",
                "properties": {"seconds": {"type": "integer", "minimum": 0, "maximum": 60}},
                "required": ["seconds"]
            })),
        )
        .with_description("Counts down, reporting progress each second."),
    ]
}

fn arg<'a>(params: &'a CallToolRequestParams, name: &str) -> Option<&'a Value> {
    params.arguments.as_ref()?.get(name)
}

async fn call_tool(ctx: RequestContext, params: CallToolRequestParams) -> CallToolResult {
    match params.name.as_str() {
        "add" => match (
            arg(&params, "a").and_then(Value::as_f64),
            arg(&params, "b").and_then(Value::as_f64),
        ) {
            (Some(a), Some(b)) => CallToolResult::text((a + b).to_string()),
            _ => CallToolResult::error("add needs numbers a and b"),
        },
        "echo" => match arg(&params, "text").and_then(Value::as_str) {
            Some(text) => CallToolResult::text(text),
            None => CallToolResult::error("echo needs a string text"),
        },
        "countdown" => {
            let seconds = arg(&params, "seconds")
                .and_then(Value::as_u64)
                .unwrap_or(0)
                .min(60);
            for left in (1..=seconds).rev() {
                let done = (seconds - left) as f64;
                ctx.progress(done, Some(seconds as f64), Some(&format!("{left} s left")))
                    .await;
                ctx.log(
                    LoggingLevel::Info,
                    Some("countdown"),
                    json!({ "left": left }),
                )
                .await;
                tokio::select! {
                    () = ctx.cancellation().cancelled() => return CallToolResult::error("cancelled"),
                    () = tokio::time::sleep(Duration::from_secs(1)) => {}
                }
            }
            ctx.progress(seconds as f64, Some(seconds as f64), Some("done"))
                .await;
            CallToolResult::text("liftoff")
        }
        other => CallToolResult::error(format!("unknown tool {other:?}")),
    }
}

/// Builds the demo server.
pub(crate) fn server() -> Server {
    let built = Server::builder("ferromcp-demo", env!("CARGO_PKG_VERSION"))
        .instructions("A demo server: try the add, echo and countdown tools.")
        .on::<ListTools, _, _, _>(|_ctx, _p: PaginatedRequestParams| async {
            Ok(ListToolsResult::new(tools()))
        })
        .on::<CallTool, _, _, _>(|ctx, p| async move { Ok(call_tool(ctx, p).await) })
        .on::<ListResources, _, _, _>(|_ctx, _p: PaginatedRequestParams| async {
            let readme = Resource::new("demo://readme", "readme").with_mime_type("text/plain");
            Ok(ListResourcesResult::new(vec![readme]))
        })
        .on::<ReadResource, _, _, _>(|ctx, p: ReadResourceRequestParams| async move {
            if p.uri != "demo://readme" {
                return Err(resource_not_found(&ctx, &p.uri).into());
            }
            let contents = TextResourceContents::new(p.uri, README).with_mime_type("text/plain");
            Ok(ReadResourceResult::new(vec![contents.into()]))
        })
        .on::<ListPrompts, _, _, _>(|_ctx, _p: PaginatedRequestParams| async {
            let name = PromptArgument::new("name").with_required(true);
            Ok(ListPromptsResult::new(vec![
                Prompt::new("greet").with_arguments(vec![name]),
            ]))
        })
        .on::<GetPrompt, _, _, _>(|_ctx, p: GetPromptRequestParams| async move {
            if p.name != "greet" {
                return Err(
                    ErrorObject::invalid_params(format!("unknown prompt {:?}", p.name)).into(),
                );
            }
            let who = p
                .arguments
                .as_ref()
                .and_then(|a| a.get("name"))
                .cloned()
                .unwrap_or_default();
            Ok(GetPromptResult::new(vec![PromptMessage::user_text(
                format!("Say hello to {who}."),
            )]))
        })
        .on::<Complete, _, _, _>(|_ctx, p: CompleteRequestParams| async move {
            let prefix = p.argument.value.to_lowercase();
            let values = NAMES
                .iter()
                .filter(|n| n.to_lowercase().starts_with(&prefix))
                .map(|n| (*n).to_owned())
                .collect();
            Ok(CompleteResult::new(Completion::new(values)))
        })
        .on::<SetLevel, _, _, _>(|ctx, p: SetLevelRequestParams| async move {
            ctx.connection().set_log_level(p.level);
            Ok(EmptyResult::new())
        })
        .build();
    match built {
        Ok(server) => server,
        // Every registration above is valid; a failure here is a bug in this file.
        Err(e) => unreachable!("the demo server is valid: {e}"),
    }
}

/// Resource not found: -32002 in the handshake era, -32602 at 2026-07-28.
fn resource_not_found(ctx: &RequestContext, uri: &str) -> ErrorObject {
    let e = if ctx.protocol_version().is_modern() {
        ErrorObject::invalid_params("Resource not found")
    } else {
        ErrorObject::new(
            ferromcp_types::jsonrpc::ErrorCode::RESOURCE_NOT_FOUND,
            "Resource not found",
        )
    };
    e.with_data(json!({ "uri": uri }))
}
