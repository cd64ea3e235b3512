//! The demo server's task fixtures: the tools the conformance harness's `tasks-*` scenarios
//! (the 2026-07-28 `io.modelcontextprotocol/tasks` extension, SEP-2663) call, under their
//! exact names. Each handler is an ordinary tool handler; its `taskSupport` decides whether
//! a call runs as a task (2025-11-25: when the client asks with `params.task`; 2026-07-28:
//! when the client declares the extension).

use std::time::Duration;

use ferromcp_server::mcp_server::Args;
use ferromcp_server::mcp_server::{Ask, ResolveError, Resolved, Resolver, ToolError, ToolSpec};
use ferromcp_server::{McpServer, RequestContext};
use ferromcp_types::jsonrpc::ErrorObject;
use ferromcp_types::mcp::{ElicitAction, ElicitResult, ElicitationSchema, TaskSupport};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// The longest `slow_compute` sleeps.
const MAX_SECONDS: f64 = 3600.0;

/// `greet`'s arguments.
#[derive(Deserialize, JsonSchema)]
struct GreetArgs {
    /// Who to greet.
    name: String,
}

/// `slow_compute`'s arguments.
#[derive(Deserialize, JsonSchema)]
struct SlowArgs {
    /// How long to work, in seconds (0 answers at once).
    #[serde(default)]
    seconds: f64,
    /// A label echoed in the result.
    #[serde(default)]
    label: Option<String>,
}

/// `confirm_delete`'s arguments.
#[derive(Deserialize, JsonSchema)]
struct DeleteArgs {
    /// The file to (pretend to) delete.
    filename: String,
}

/// A form with the given properties (each `{"type": ...}`), parsed from JSON.
fn form(properties: &Value) -> Result<ElicitationSchema, ToolError> {
    serde_json::from_value(json!({ "type": "object", "properties": properties }))
        .map_err(|e| ToolError::protocol(ErrorObject::internal_error(e.to_string())))
}

fn described(answer: &ElicitResult) -> String {
    let content = answer
        .content
        .as_ref()
        .and_then(|c| serde_json::to_string(c).ok())
        .unwrap_or_else(|| "{}".to_owned());
    format!("{:?} {content}", answer.action).to_lowercase()
}

/// `slow_compute`: works `seconds` seconds (cancellable; a status message while it runs as a
/// task), then reports.
async fn slow_compute(
    Args(a): Args<SlowArgs>,
    ctx: RequestContext,
    cancel: CancellationToken,
) -> Result<String, ToolError> {
    let seconds = a.seconds.clamp(0.0, MAX_SECONDS);
    let label = a.label.unwrap_or_else(|| "job".to_owned());
    // Run as a task, the message shows on `tasks/get`; a plain call records nothing.
    ctx.set_task_status(format!("computing {label} for {seconds}s"))
        .await;
    tokio::select! {
        () = tokio::time::sleep(Duration::from_secs_f64(seconds)) => {
            Ok(format!("Computed {label} in {seconds}s"))
        }
        () = cancel.cancelled() => Err(ToolError::protocol(ErrorObject::new(
            ferromcp_types::jsonrpc::ErrorCode::REQUEST_CANCELLED,
            "cancelled",
        ))),
    }
}

/// `failing_job`: a tool error after about a second.
async fn failing_job() -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Err(ToolError::Message(
        "The job failed: the input could not be processed".to_owned(),
    ))
}

/// `protocol_error_job`: a protocol-level failure (the task ends `failed`).
async fn protocol_error_job() -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_millis(200)).await;
    Err(ToolError::protocol(ErrorObject::internal_error(
        "the job crashed",
    )))
}

/// `confirm_delete`: asks the user to confirm, then answers.
async fn confirm_delete(
    Args(a): Args<DeleteArgs>,
    ctx: RequestContext,
) -> Result<String, ToolError> {
    let schema = form(&json!({ "confirm": { "type": "boolean", "description": "Delete it?" } }))?;
    let answer = ctx
        .elicit_form_raw(format!("Delete {}?", a.filename), schema)
        .await
        .map_err(ToolError::protocol)?;
    let confirmed = answer.action == ElicitAction::Accept
        && answer
            .content
            .as_ref()
            .and_then(|c| c.get("confirm"))
            .and_then(|v| serde_json::to_value(v).ok())
            == Some(Value::Bool(true));
    Ok(if confirmed {
        format!("Deleted {}", a.filename)
    } else {
        format!("Kept {}", a.filename)
    })
}

/// `multi_input`: two questions at once (two keys pending together).
async fn multi_input(ctx: RequestContext) -> Result<String, ToolError> {
    let name = form(&json!({ "name": { "type": "string" } }))?;
    let confirm = form(&json!({ "confirm": { "type": "boolean" } }))?;
    let (first, second) = tokio::join!(
        ctx.elicit_form_raw("What is your name?", name),
        ctx.elicit_form_raw("Proceed?", confirm),
    );
    let (first, second) = (
        first.map_err(ToolError::protocol)?,
        second.map_err(ToolError::protocol)?,
    );
    Ok(format!(
        "Got both answers: {}; {}",
        described(&first),
        described(&second)
    ))
}

/// The user's name for `test_tool_with_task`, asked before the task exists (multi-round at
/// 2026-07-28, a live request before).
struct UserName;

/// The form `UserName` asks.
#[derive(Deserialize, JsonSchema)]
struct NameForm {
    /// Your name.
    name: String,
}

impl Resolver for UserName {
    type Output = String;

    async fn resolve(ask: &Ask) -> Result<String, ResolveError> {
        let answer = ask
            .elicit_form::<NameForm>("user_name", "What is your name?")
            .await?;
        Ok(answer
            .accepted()
            .map_or_else(|| "stranger".to_owned(), |f| f.name))
    }
}

/// Registers the task fixtures on `server` (which must serve tasks).
pub(crate) fn add(server: &McpServer) {
    let registered = server
        .add_tool(
            ToolSpec::new("greet").description("Greets someone (never a task)."),
            |Args(a): Args<GreetArgs>| async move { format!("Hello, {}!", a.name) },
        )
        .and_then(|()| {
            server.add_tool(
                ToolSpec::new("slow_compute")
                    .description("Works for `seconds` seconds, then reports; may run as a task.")
                    .task_support(TaskSupport::Optional),
                slow_compute,
            )
        })
        .and_then(|()| {
            server.add_tool(
                ToolSpec::new("failing_job")
                    .description("Always ends with a tool error after about a second (task only).")
                    .task_support(TaskSupport::Required),
                failing_job,
            )
        })
        .and_then(|()| {
            server.add_tool(
                ToolSpec::new("protocol_error_job")
                    .description("Always fails with a protocol error; may run as a task.")
                    .task_support(TaskSupport::Optional),
                protocol_error_job,
            )
        })
        .and_then(|()| {
            server.add_tool(
                ToolSpec::new("confirm_delete")
                    .description("Asks the user to confirm a deletion; may run as a task.")
                    .task_support(TaskSupport::Optional),
                confirm_delete,
            )
        })
        .and_then(|()| {
            server.add_tool(
                ToolSpec::new("multi_input")
                    .description("Asks two questions at once; may run as a task.")
                    .task_support(TaskSupport::Optional),
                multi_input,
            )
        })
        .and_then(|()| {
            server.add_tool(
                ToolSpec::new("test_tool_with_task")
                    .description("Asks the user's name, then greets them from a task.")
                    .task_support(TaskSupport::Required),
                |Resolved(name): Resolved<UserName>| async move {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    format!("Hello, {name}! (from a task)")
                },
            )
        });
    if let Err(e) = registered {
        unreachable!("the demo server's task fixtures are valid: {e}");
    }
}
