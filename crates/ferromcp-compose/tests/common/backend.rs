//! The backend the composition tests mount: in-process (tests/common) and as the stdio
//! child `ferromcp-compose-backend` (tests/bin/backend.rs).

use std::time::Duration;

use ferromcp_server::mcp_server::{PromptSpec, RawArgs, ResourceSpec};
use ferromcp_server::{McpServer, RequestContext};
use ferromcp_types::mcp::{
    ElicitAction, ElicitValue, ElicitationSchema, JsonObject, PromptArgument,
};

fn arg(args: &JsonObject, key: &str) -> String {
    args.get(key)
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

async fn echo(RawArgs(a): RawArgs) -> String {
    arg(&a, "text")
}

/// Asks the user a question naming `label`, so each caller's answer can be told apart.
async fn ask(ctx: RequestContext, RawArgs(a): RawArgs) -> Result<String, String> {
    let label = arg(&a, "label");
    let schema = serde_json::json!({
        "type": "object",
        "properties": {"answer": {"type": "string"}},
        "required": ["answer"]
    });
    let schema: ElicitationSchema = serde_json::from_value(schema).map_err(|e| e.to_string())?;
    match ctx
        .elicit_form_raw(format!("question for {label}"), schema)
        .await
    {
        Ok(r) if r.action == ElicitAction::Accept => {
            let answer = r.content.as_ref().and_then(|c| c.get("answer"));
            Ok(format!(
                "{label}: {}",
                answer.map_or_else(String::new, |v| match v {
                    ElicitValue::String(s) => s.clone(),
                    other => format!("{other:?}"),
                })
            ))
        }
        Ok(_) => Ok(format!("{label}: declined")),
        Err(e) => Err(e.message.to_string()),
    }
}

/// Reports progress, then sleeps `ms` milliseconds.
async fn slow(ctx: RequestContext, RawArgs(a): RawArgs) -> String {
    ctx.progress(1.0, Some(2.0), Some("halfway")).await;
    let ms = a.get("ms").and_then(serde_json::Value::as_u64).unwrap_or(0);
    tokio::time::sleep(Duration::from_millis(ms)).await;
    "done".to_string()
}

async fn die() -> String {
    std::process::exit(3)
}

async fn greet(RawArgs(a): RawArgs) -> String {
    format!("Hello, {}!", arg(&a, "name"))
}

/// The sample backend, named `name` (its server info).
pub fn server(name: &str) -> McpServer {
    McpServer::builder(name, "1.0.0")
        .tool("echo", echo)
        .tool("ask", ask)
        .tool("slow", slow)
        .tool("die", die)
        .prompt(
            PromptSpec::new("greet").arguments(vec![PromptArgument::new("name")]),
            greet,
        )
        .prompt_completion("greet", "name", |req| async move {
            ["alice", "albert", "bob"]
                .into_iter()
                .filter(|n| n.starts_with(&req.value))
                .map(String::from)
                .collect()
        })
        .resource(
            ResourceSpec::new("mem://readme", "readme").mime_type("text/plain"),
            || async { "read me".to_string() },
        )
        .resource_template(
            ResourceSpec::new("mem://items/{id}", "item"),
            |RawArgs(v): RawArgs| async move { format!("item {}", arg(&v, "id")) },
        )
        .template_completion("mem://items/{id}", "id", |req| async move {
            ["7", "70", "8"]
                .into_iter()
                .filter(|v| v.starts_with(&req.value))
                .map(String::from)
                .collect()
        })
        .build()
        .expect("the sample backend builds")
}

/// `job`'s work: reports `working on {text}` as its task status, waits `ms`, answers
/// `done: {text}`; a cancelled job sets `cancelled` and ends.
async fn job(
    ctx: RequestContext,
    RawArgs(a): RawArgs,
    cancelled: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> Result<String, String> {
    let text = arg(&a, "text");
    ctx.set_task_status(format!("working on {text}")).await;
    let ms = a.get("ms").and_then(serde_json::Value::as_u64).unwrap_or(0);
    tokio::select! {
        () = tokio::time::sleep(Duration::from_millis(ms)) => Ok(format!("done: {text}")),
        () = ctx.cancellation().cancelled() => {
            cancelled.store(true, std::sync::atomic::Ordering::SeqCst);
            Err("cancelled".to_owned())
        }
    }
}

/// The sample backend with a task-required tool `job` (see [`job`]), a task-optional tool
/// `maybe` (answers `task` or `plain`: how it ran) and `die`; `cancelled` is set when a `job`
/// is cancelled.
pub fn task_server(
    name: &str,
    cancelled: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> McpServer {
    use ferromcp_server::mcp_server::ToolSpec;
    use ferromcp_types::mcp::TaskSupport;
    McpServer::builder(name, "1.0.0")
        .tool(
            ToolSpec::new("job")
                .description("Works for `ms` milliseconds (task only).")
                .task_support(TaskSupport::Required),
            move |ctx: RequestContext, args: RawArgs| job(ctx, args, cancelled.clone()),
        )
        .tool(
            ToolSpec::new("maybe")
                .description("Says whether it runs as a task (task optional).")
                .task_support(TaskSupport::Optional),
            |ctx: RequestContext| async move {
                if ctx.task_id().is_some() {
                    "task"
                } else {
                    "plain"
                }
            },
        )
        .tool("die", die)
        .build()
        .expect("the task backend builds")
}

/// A backend whose `say {label}` logs `{label}-1` (info), waits until another `say` has
/// logged its first record too (two calls meet), logs `{label}-2` and answers `label`: two
/// concurrent calls are both in flight while each logs. Its `note {label}` logs `{label}-1`
/// and `{label}-2` and answers `label` 100 ms later (its records arrive while it runs, over
/// any transport).
pub fn logging_server(name: &str) -> McpServer {
    let meet = std::sync::Arc::new(tokio::sync::Barrier::new(2));
    McpServer::builder(name, "1.0.0")
        .tool(
            "note",
            |ctx: RequestContext, RawArgs(a): RawArgs| async move {
                let label = arg(&a, "label");
                let info = ferromcp_types::mcp::LoggingLevel::Info;
                ctx.log(info, None, format!("{label}-1").into()).await;
                ctx.log(info, None, format!("{label}-2").into()).await;
                tokio::time::sleep(Duration::from_millis(100)).await;
                label
            },
        )
        .tool("say", move |ctx: RequestContext, RawArgs(a): RawArgs| {
            let meet = meet.clone();
            async move {
                let label = arg(&a, "label");
                let info = ferromcp_types::mcp::LoggingLevel::Info;
                ctx.log(info, None, format!("{label}-1").into()).await;
                meet.wait().await;
                ctx.log(info, None, format!("{label}-2").into()).await;
                label
            }
        })
        .build()
        .expect("the logging backend builds")
}
