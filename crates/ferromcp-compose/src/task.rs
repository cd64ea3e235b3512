//! Tasks through the front: a backend tool's task support on the front's tool, and a call of
//! it followed as a backend task (status messages, cancellation, result, a backend that dies).

use ferromcp_client::{TaskState, ToolCall};
use ferromcp_server::RequestContext;
use ferromcp_types::jsonrpc::ErrorObject;
use ferromcp_types::mcp::{CallToolResult, JsonObject, TaskSupport, Tool, methods};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::forward::Route;

/// The backend tool's declared task support (`execution.taskSupport`; absent is forbidden).
pub(crate) fn support(tool: &Tool) -> TaskSupport {
    tool.execution
        .as_ref()
        .and_then(|e| e.task_support)
        .unwrap_or(TaskSupport::Forbidden)
}

/// Whether a call of a tool with `support` goes to the backend as a task: every call of a
/// task-capable tool does (a 2026-07-28 backend runs it as a task anyway once the client
/// declares tasks; a task-required one can be called no other way). A plain front call then
/// waits for the backend task; a front task follows it.
pub(crate) fn as_task(support: TaskSupport, _ctx: &RequestContext) -> bool {
    !matches!(support, TaskSupport::Forbidden)
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
        let start = self.client.call_tool_as_task(name, Value::Object(args));
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
            if let Some(message) = &state.info.status_message {
                if last.as_ref() != Some(message) {
                    last = Some(message.clone());
                    // A full queue drops a message: the next one supersedes it.
                    let _ = tx.try_send(message.clone());
                }
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
