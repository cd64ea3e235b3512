//! Tasks through the front: a backend tool's task support on the front's tool, and a call of
//! it followed as a backend task (status messages, cancellation, result, a backend that dies).

use ferromcp_client::{Client, TaskState, ToolCall};
use ferromcp_server::RequestContext;
use ferromcp_types::Era;
use ferromcp_types::jsonrpc::ErrorObject;
use ferromcp_types::mcp::{
    CallToolResult, EXTENSION_TASKS, JsonObject, TaskSupport, Tool, methods,
};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::forward::Route;

/// The task support the front declares for a backend tool.
///
/// - A handshake-era backend's tool: its own `execution.taskSupport` (absent is forbidden).
/// - A 2026-07-28 backend's tool: its listing has no `execution` (the revision dropped it:
///   with the tasks extension the server decides per call whether a call becomes a task). So
///   every tool of a backend that announces the `io.modelcontextprotocol/tasks` extension is
///   `optional` on the front (a front task follows whatever the backend makes of the call:
///   a backend task, or a plain answer); a backend without the extension makes no tasks, so
///   its tools are forbidden.
pub(crate) fn front_support(tool: &Tool, client: &Client) -> TaskSupport {
    let declared = tool.execution.as_ref().and_then(|e| e.task_support);
    let session = client.session();
    if session.era != Era::Modern {
        return declared.unwrap_or(TaskSupport::Forbidden);
    }
    let extension = session
        .capabilities
        .extensions
        .as_ref()
        .is_some_and(|e| e.contains_key(EXTENSION_TASKS));
    if !extension {
        return TaskSupport::Forbidden;
    }
    match declared {
        Some(TaskSupport::Required) => TaskSupport::Required,
        _ => TaskSupport::Optional,
    }
}

/// Whether a call of a tool with `support` goes to the backend as a task: a task-required
/// tool's always does (it can be called no other way); a task-optional tool's only when the
/// front request asked for a task (it runs as a front task), so a plain call stays a plain
/// backend call and takes no [`Backend::max_tasks`](crate::Backend::max_tasks) place.
pub(crate) fn as_task(support: TaskSupport, ctx: &RequestContext) -> bool {
    match support {
        TaskSupport::Required => true,
        TaskSupport::Optional => ctx.task_id().is_some(),
        _ => false,
    }
}

impl Route {
    /// Calls `name` on the backend as a task and follows it on behalf of the front request
    /// (or front task) `ctx` until it ends.
    pub(crate) async fn forward_task(
        &self,
        ctx: &RequestContext,
        name: &str,
        args: JsonObject,
    ) -> Result<CallToolResult, ErrorObject> {
        let _permits = self.admit()?;
        let mount = &self.mount;
        let _task = self.tasks.clone().try_acquire_owned().map_err(|_| {
            ErrorObject::internal_error(format!(
                "composed server: backend {mount:?} already has its maximum of forwarded tasks \
                 (Backend::max_tasks)"
            ))
        })?;
        let _inflight = self.inflight.enter(ctx.clone());
        let opts = self.options(ctx);
        let start = self
            .client
            .call_tool_as_task_with(name, Value::Object(args), None, opts);
        let call = tokio::select! {
            biased;
            () = ctx.cancellation().cancelled() => {
                return Err(ErrorObject::internal_error("composed server: the request was cancelled"));
            }
            call = start => call.map_err(|e| self.client_error(methods::TOOLS_CALL, e))?,
        };
        let handle = match call {
            ToolCall::Task(handle) => handle,
            ToolCall::Complete(result) => return Ok(result),
            other => {
                return Err(ErrorObject::internal_error(format!(
                    "composed server: backend {mount:?} answered {name} with {other:?}"
                )));
            }
        };
        let (tx, mut rx) = mpsc::channel::<String>(8);
        let mut last: Option<String> = None;
        let wait = handle.wait_with(move |state: &TaskState| {
            if let Some(message) = &state.info.status_message
                && last.as_ref() != Some(message)
            {
                last = Some(message.clone());
                // A full queue drops a message: the next one supersedes it.
                let _ = tx.try_send(message.clone());
            }
        });
        tokio::pin!(wait);
        loop {
            tokio::select! {
                biased;
                () = ctx.cancellation().cancelled() => {
                    if let Err(e) = handle.cancel().await {
                        tracing::warn!(mount = %mount, task = handle.id(), error = %e, "cancelling the backend task failed");
                    }
                    return Err(ErrorObject::internal_error("composed server: the task was cancelled"));
                }
                done = &mut wait => {
                    return done.map_err(|e| self.client_error(methods::TASKS_GET, e));
                }
                Some(message) = rx.recv() => {
                    ctx.set_task_status(message).await;
                }
            }
        }
    }
}
