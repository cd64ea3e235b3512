//! A long-running tool a client may run as a task (MCP "Tasks"), over stdio:
//! `cargo run -p ferromcp --example task_tool`.
//!
//! A 2025-11-25 client calls `tools/call` with `params.task` and gets a task id at once; it
//! polls `tasks/get` (status and `statusMessage`), fetches the outcome with `tasks/result`
//! (which waits for it) or cancels with `tasks/cancel`. A 2026-07-28 client that declares
//! the tasks extension (`io.modelcontextprotocol/tasks`) gets a task handle and polls
//! `tasks/get`, the result inlined once done. A call without a task runs as a plain call,
//! since the tool's task support is `optional` (`required` refuses plain calls, the default
//! `forbidden` refuses tasks). The handler is the same function either way.
//!
//! The task outlives the request that created it: it runs until it completes, fails, is
//! cancelled or the server stops, and its result is kept for the task's TTL.

use std::time::Duration;

use ferromcp::server::mcp_server::{Args, ToolError, ToolSpec};
use ferromcp::server::tasks::TaskSettings;
use ferromcp::types::mcp::TaskSupport;
use ferromcp::{McpServer, RequestContext};

/// How much work to do.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct JobArgs {
    /// Steps of 100 ms each (at most 100).
    steps: u32,
}

/// Works step by step, reporting progress, and stops early when cancelled.
async fn long_job(ctx: RequestContext, Args(args): Args<JobArgs>) -> Result<String, ToolError> {
    if args.steps > 100 {
        return Err(ToolError::message("at most 100 steps"));
    }
    for step in 1..=args.steps {
        tokio::select! {
            // `tasks/cancel` (or `notifications/cancelled` for a plain call) lands here.
            () = ctx.cancellation().cancelled() => {
                return Err(ToolError::message("cancelled"));
            }
            () = tokio::time::sleep(Duration::from_millis(100)) => {}
        }
        let message = format!("step {step} of {}", args.steps);
        // In a task: what `tasks/get` shows as `statusMessage` (a no-op in a plain call).
        ctx.set_task_status(message.as_str()).await;
        // Sent only when the client asked for progress (`_meta.progressToken`).
        ctx.progress(f64::from(step), Some(f64::from(args.steps)), Some(&message))
            .await;
    }
    Ok(format!("done after {} steps", args.steps))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = McpServer::builder("tasks-example", "1.0.0")
        .tool(
            ToolSpec::new("long_job")
                .description("A slow job; run it as a task.")
                .task_support(TaskSupport::Optional),
            long_job,
        )
        // Optional: a task-capable tool turns tasks on with the defaults. The settings bound
        // the tasks (how long results are kept, how many run at once per caller) and choose
        // where they are stored (in memory here; Redis with the `redis` feature).
        .tasks(
            TaskSettings::new()
                .default_ttl(Duration::from_secs(600))
                .max_active_per_principal(8),
        )
        .build()?;
    ferromcp::server::serve_stdio(server.server()).await?;
    Ok(())
}
