//! The built-in demo server, on the high-level `McpServer`. Besides a few friendly tools it
//! exposes the fixtures the official MCP conformance harness checks, under their exact names.

// The MCP App (a counter view and its tools): own file.
mod apps;
// The fixtures that ask the client for input (elicitation, sampling, roots): own file.
mod input;
// The skills (the `sep-2640-skills-*` scenarios): own file.
mod skills;
// The task fixtures (the `tasks-*` scenarios): own file.
mod tasks;

use std::time::Duration;

use ferromcp_server::McpServer;
use ferromcp_server::RequestContext;
use ferromcp_server::mcp_server::{
    Args, Blob, CompletionRequest, Json, ProgressReporter, PromptSpec, RawArgs, ResourceSpec,
    ToolError, ToolSpec,
};
use ferromcp_types::jsonrpc::{ErrorCode, ErrorObject};
use ferromcp_types::mcp::{
    CallToolResult, ContentBlock, ElicitationSchema, EmbeddedResource, JsonObject, LoggingLevel,
    PromptMessage, Role, TextResourceContents,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// What the demo server exposes, for `--help`.
pub(crate) const CONTENTS: &str = "\
tools:     add (a + b), echo (text), countdown (seconds; progress, cancellation),
           protocol_info (structured: the revision the request was served at),
           and the conformance fixtures: test_simple_text, test_image_content,
           test_audio_content, test_embedded_resource, test_multiple_content_types,
           test_tool_with_logging, test_tool_with_progress, test_error_handling,
           test_missing_capability, test_trigger_tool_change, test_trigger_prompt_change,
           test_x_mcp_header, test_logging_tool, test_streaming_elicitation,
           test_reconnection, json_schema_2020_12_tool
apps:      counter (linked to the MCP App ui://ferromcp-demo/counter),
           increment_counter (visible to the app only)
resources: demo://readme, test://static-text, test://static-binary, test://watched-resource,
           template test://template/{id}/data
prompts:   greet, test_simple_prompt, test_prompt_with_arguments,
           test_prompt_with_embedded_resource, test_prompt_with_image (with completions)
input:     test_sampling (prompt), test_elicitation (message),
           test_elicitation_sep1034_defaults, test_elicitation_sep1330_enums,
           test_input_required_result_{elicitation,sampling,list_roots,request_state,
           multiple_inputs,multi_round,tampered_state,capabilities}, prompt
           test_input_required_result_prompt (live requests before 2026-07-28,
           InputRequiredResult rounds at 2026-07-28)
logging:   logging/setLevel (handshake era), per-request logLevel (2026-07-28)";

const README: &str = "ferromcp demo server: a Rust MCP server serving every protocol revision.";
/// A 1×1 transparent PNG.
const PNG_1PX: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";
/// A minimal WAV header (no samples).
const WAV_EMPTY: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=";

/// Two numbers to add.
#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    /// The first number.
    a: f64,
    /// The second number.
    b: f64,
}

/// Text to echo.
#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    /// The text.
    text: String,
}

/// How long to count down.
#[derive(Deserialize, JsonSchema)]
struct CountdownArgs {
    /// Seconds (at most 60).
    seconds: u64,
}

/// The revision a request was served at, as `protocol_info` reports it.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct ProtocolInfo {
    /// The protocol revision of the request, such as `2026-07-28`.
    protocol_version: String,
    /// Its era: `handshake` (negotiated by `initialize`) or `modern` (per-request envelope).
    era: &'static str,
}

/// The `protocol_info` tool: which revision the server served this request at (structured
/// output), so a peer client can check the version the server side negotiated.
async fn protocol_info(ctx: RequestContext) -> Json<ProtocolInfo> {
    let version = ctx.protocol_version();
    let era = if version.is_modern() {
        "modern"
    } else {
        "handshake"
    };
    Json(ProtocolInfo {
        protocol_version: version.to_string(),
        era,
    })
}

/// The template's variable.
#[derive(Deserialize, JsonSchema)]
struct ItemVars {
    id: String,
}

/// Two arguments the prompt repeats.
#[derive(Deserialize, JsonSchema)]
struct TwoArgs {
    /// The first argument.
    arg1: String,
    /// The second argument.
    arg2: String,
}

/// The resource to embed.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct ResourceArg {
    /// Its URI.
    resource_uri: String,
}

/// Whom to greet.
#[derive(Deserialize, JsonSchema)]
struct GreetArgs {
    /// The person's name.
    name: String,
}

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

fn embedded(uri: &str, mime: &str, text: &str) -> ContentBlock {
    let contents = TextResourceContents::new(uri, text).with_mime_type(mime);
    EmbeddedResource::new(contents).into()
}

async fn countdown(
    Args(a): Args<CountdownArgs>,
    ctx: RequestContext,
    cancel: CancellationToken,
) -> CallToolResult {
    let seconds = a.seconds.min(60);
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
            () = cancel.cancelled() => return CallToolResult::error("cancelled"),
            () = tokio::time::sleep(Duration::from_secs(1)) => {}
        }
    }
    ctx.progress(seconds as f64, Some(seconds as f64), Some("done"))
        .await;
    CallToolResult::text("liftoff")
}

async fn with_logging(ctx: RequestContext) -> &'static str {
    for text in [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ] {
        ctx.log(LoggingLevel::Info, Some("conformance"), json!(text))
            .await;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    "Logging complete"
}

async fn with_progress(progress: ProgressReporter) -> &'static str {
    for step in [0.0, 50.0, 100.0] {
        progress.report(step, Some(100.0), None).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    "Progress complete"
}

async fn missing_capability(ctx: RequestContext) -> Result<&'static str, ToolError> {
    let has_sampling = ctx
        .connection()
        .client_capabilities()
        .is_some_and(|c| c.sampling.is_some());
    if has_sampling {
        return Ok("the client can sample");
    }
    let error = ErrorObject::new(
        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        "Missing required client capability",
    )
    .with_data(json!({ "requiredCapabilities": { "sampling": {} } }));
    Err(ToolError::protocol(error))
}

/// Logs one record: at 2026-07-28 it must reach the client only when the request opted in
/// with `io.modelcontextprotocol/logLevel`.
async fn logging_tool(ctx: RequestContext) -> &'static str {
    ctx.log(
        LoggingLevel::Info,
        Some("conformance"),
        json!("test_logging_tool called"),
    )
    .await;
    "Logged one record (if the request asked for logs)"
}

/// Asks the client for input with a server-to-client request. Handshake-era sessions carry
/// it on the call's stream; a 2026-07-28 exchange has no back channel, so the request fails
/// and nothing but notifications and the result may appear on the response stream.
async fn streaming_elicitation(ctx: RequestContext) -> Result<String, String> {
    let form = json!({
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"]
    });
    let schema: ElicitationSchema = serde_json::from_value(form).map_err(|e| e.to_string())?;
    let answer = ctx
        .elicit_form_raw("What is your name?", schema)
        .await
        .map_err(|e| format!("cannot ask the client here: {}", e.message))?;
    let answer = serde_json::to_string(&answer).map_err(|e| e.to_string())?;
    Ok(format!("The client answered: {answer}"))
}

/// A tool whose `region` argument is mirrored in the `Mcp-Param-Region` header (2026-07-28).
fn x_mcp_header_schema() -> JsonObject {
    object(json!({
        "type": "object",
        "properties": {
            "region": {
                "type": "string",
                "description": "A region name, also sent as the Mcp-Param-Region header.",
                "x-mcp-header": "Region"
            }
        },
        "required": ["region"]
    }))
}

fn json_schema_2020_12() -> JsonObject {
    object(json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
                "required": ["street", "city"]
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"}
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false
    }))
}

/// SEP-1699 polling: over a handshake-era HTTP session the handler closes its request's SSE
/// stream (after the priming event) and answers a moment later; the client reconnects with
/// `Last-Event-ID` and gets the answer from the event store. Elsewhere it simply answers.
async fn reconnection(ctx: RequestContext) -> &'static str {
    let control = ctx.http_parts().and_then(|p| {
        p.extensions
            .get::<ferromcp_http_server::SseStreamControl>()
            .cloned()
    });
    if let Some(control) = control {
        control.close();
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    "Reconnection test completed"
}

/// Builds the demo server, its tasks in memory.
pub(crate) fn server() -> McpServer {
    server_with_tasks(ferromcp_server::tasks::TaskSettings::new())
}

/// Builds the demo server with these task settings (`serve --redis`: tasks in Redis).
pub(crate) fn server_with_tasks(tasks: ferromcp_server::tasks::TaskSettings) -> McpServer {
    let demo = McpServer::builder("ferromcp-demo", env!("CARGO_PKG_VERSION"));
    let built = apps::register(skills::register(demo))
        .instructions("A demo server: try the add, echo and countdown tools.")
        .tasks(tasks)
        .tool(
            ToolSpec::new("add").description("Adds two numbers."),
            |Args(a): Args<AddArgs>| async move { (a.a + a.b).to_string() },
        )
        .tool(
            ToolSpec::new("echo").description("Returns its text."),
            |Args(a): Args<EchoArgs>| async move { a.text },
        )
        .tool(
            ToolSpec::new("countdown").description("Counts down, reporting progress each second."),
            countdown,
        )
        .tool(
            ToolSpec::new("protocol_info")
                .description("Reports the protocol revision this request was served at."),
            protocol_info,
        )
        .tool(
            ToolSpec::new("test_simple_text").description("Returns simple text."),
            || async { "This is a simple text response for testing." },
        )
        .tool(
            ToolSpec::new("test_image_content").description("Returns an image."),
            || async { ContentBlock::image(PNG_1PX, "image/png") },
        )
        .tool(
            ToolSpec::new("test_audio_content").description("Returns audio."),
            || async { ContentBlock::audio(WAV_EMPTY, "audio/wav") },
        )
        .tool(
            ToolSpec::new("test_embedded_resource").description("Returns an embedded resource."),
            || async {
                embedded(
                    "test://embedded-resource",
                    "text/plain",
                    "This is an embedded resource content.",
                )
            },
        )
        .tool(
            ToolSpec::new("test_multiple_content_types")
                .description("Returns text, an image and a resource."),
            || async {
                vec![
                    ContentBlock::text("Multiple content types test:"),
                    ContentBlock::image(PNG_1PX, "image/png"),
                    embedded(
                        "test://mixed-content-resource",
                        "application/json",
                        r#"{"test":"data","value":123}"#,
                    ),
                ]
            },
        )
        .tool(
            ToolSpec::new("test_tool_with_logging").description("Logs three messages."),
            with_logging,
        )
        .tool(
            ToolSpec::new("test_tool_with_progress").description("Reports progress three times."),
            with_progress,
        )
        .tool(
            ToolSpec::new("test_error_handling").description("Always fails with a tool error."),
            || async { Err::<String, _>("This tool intentionally returns an error for testing") },
        )
        .tool(
            ToolSpec::new("test_missing_capability")
                .description("Needs the client's sampling capability."),
            missing_capability,
        )
        .tool(
            ToolSpec::new("test_x_mcp_header")
                .description("Returns its region argument, mirrored in a header.")
                .input_schema(x_mcp_header_schema()),
            |RawArgs(args): RawArgs| async move {
                let region = args.get("region").and_then(Value::as_str).unwrap_or("");
                format!("Region: {region}")
            },
        )
        .tool(
            ToolSpec::new("test_logging_tool").description("Logs one record."),
            logging_tool,
        )
        .tool(
            ToolSpec::new("test_reconnection")
                .description("Closes its SSE stream before answering; the client resumes."),
            reconnection,
        )
        .tool(
            ToolSpec::new("test_streaming_elicitation")
                .description("Asks the client for input with a server-to-client request."),
            streaming_elicitation,
        )
        .tool(
            ToolSpec::new("json_schema_2020_12_tool")
                .description("Takes arguments described by a JSON Schema 2020-12 document.")
                .input_schema(json_schema_2020_12()),
            |RawArgs(args): RawArgs| async move { Value::Object(args).to_string() },
        )
        .resource(
            ResourceSpec::new("demo://readme", "readme").mime_type("text/plain"),
            || async { README.to_string() },
        )
        .resource(
            ResourceSpec::new("test://static-text", "static-text")
                .description("A static text resource.")
                .mime_type("text/plain"),
            || async { "This is the content of the static text resource.".to_string() },
        )
        .resource(
            ResourceSpec::new("test://static-binary", "static-binary")
                .description("A static binary resource.")
                .mime_type("image/png"),
            || async { Blob::from_base64(PNG_1PX, "image/png") },
        )
        .resource(
            ResourceSpec::new("test://watched-resource", "watched-resource")
                .description("A resource to subscribe to.")
                .mime_type("text/plain"),
            || async { "Watched resource content.".to_string() },
        )
        .resource_template(
            ResourceSpec::new("test://template/{id}/data", "template")
                .description("Data by id.")
                .mime_type("application/json"),
            |Args(v): Args<ItemVars>| async move {
                json!({"id": v.id, "templateTest": true, "data": format!("Data for ID: {}", v.id)})
                    .to_string()
            },
        )
        .prompt(
            PromptSpec::new("greet").description("Greets someone."),
            |Args(a): Args<GreetArgs>| async move { format!("Say hello to {}.", a.name) },
        )
        .prompt(
            PromptSpec::new("test_simple_prompt").description("A simple prompt."),
            || async { "This is a simple prompt for testing.".to_string() },
        )
        .prompt(
            PromptSpec::new("test_prompt_with_arguments")
                .description("A prompt with two arguments."),
            |Args(a): Args<TwoArgs>| async move {
                format!(
                    "Prompt with arguments: arg1='{}', arg2='{}'",
                    a.arg1, a.arg2
                )
            },
        )
        .prompt(
            PromptSpec::new("test_prompt_with_embedded_resource")
                .description("A prompt with an embedded resource."),
            |Args(a): Args<ResourceArg>| async move {
                vec![
                    PromptMessage::new(
                        Role::User,
                        embedded(
                            &a.resource_uri,
                            "text/plain",
                            "Embedded resource content for testing.",
                        ),
                    ),
                    PromptMessage::user_text("Please process the embedded resource above."),
                ]
            },
        )
        .prompt(
            PromptSpec::new("test_prompt_with_image").description("A prompt with an image."),
            || async {
                vec![
                    PromptMessage::new(Role::User, ContentBlock::image(PNG_1PX, "image/png")),
                    PromptMessage::user_text("Please analyze the image above."),
                ]
            },
        )
        .prompt_completion("greet", "name", complete_names)
        .prompt_completion("test_prompt_with_arguments", "arg1", |_r| async {
            Vec::new()
        })
        .build();
    let server = match built {
        Ok(server) => server,
        // Every registration above is valid; a failure here is a bug in this file.
        Err(e) => unreachable!("the demo server is valid: {e}"),
    };
    add_change_triggers(&server);
    input::add(&server);
    tasks::add(&server);
    server
}

async fn complete_names(r: CompletionRequest) -> Vec<String> {
    let prefix = r.value.to_lowercase();
    ["Ada", "Alan", "Grace", "Linus"]
        .iter()
        .filter(|n| n.to_lowercase().starts_with(&prefix))
        .map(|n| (*n).to_owned())
        .collect()
}

/// Tools that change the tool and prompt lists, so clients see list-changed notifications.
fn add_change_triggers(server: &McpServer) {
    let tools = server.clone();
    let prompts = server.clone();
    let trigger_tools = ToolSpec::new("test_trigger_tool_change")
        .description("Adds a tool, so the tool list changes.");
    let trigger_prompts = ToolSpec::new("test_trigger_prompt_change")
        .description("Adds a prompt, so the prompt list changes.");
    let registered = server
        .add_tool(trigger_tools, move || {
            let tools = tools.clone();
            async move {
                let spec = ToolSpec::new("test_dynamic_tool").description("Added at run time.");
                tools
                    .add_tool(spec, || async { "dynamic" })
                    .map(|()| "tool list changed")
            }
        })
        .and_then(|()| {
            server.add_tool(trigger_prompts, move || {
                let prompts = prompts.clone();
                async move {
                    let spec =
                        PromptSpec::new("test_dynamic_prompt").description("Added at run time.");
                    prompts.add_prompt(spec, || async { "dynamic".to_string() });
                    "prompt list changed"
                }
            })
        });
    if let Err(e) = registered {
        unreachable!("the demo server's trigger tools are valid: {e}");
    }
}
