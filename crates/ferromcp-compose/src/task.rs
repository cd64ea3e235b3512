//! Tasks through the front: a backend tool's task support on the front's tool, and a call of
//! it followed as a backend task (status messages, cancellation, result, a backend that dies),
//! whether the front asked for a task or a 2026-07-28 backend made one of a plain call.

use ferromcp_client::{Client, OnceOrTask, RequestOptions, TaskHandle, TaskState, ToolCall};
use ferromcp_server::RequestContext;
use ferromcp_types::Era;
use ferromcp_types::jsonrpc::ErrorObject;
use ferromcp_types::mcp::methods::CallTool;
use ferromcp_types::mcp::{
    CallToolRequestParams, CallToolResult, EXTENSION_TASKS, JsonObject, MaybeInputRequired,
    TaskSupport, Tool, methods,
};
use serde_json::Value;
use tokio::sync::{OwnedSemaphorePermit, mpsc};

use crate::forward::Route;
use crate::report::{NO_PROGRESS, Report, queue, report};

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

/// Cancels the backend task (`tasks/cancel`, in the background) when dropped armed: the front
/// gave up on it (its request was cancelled or timed out, or its connection ended).
struct CancelOnDrop(Option<TaskHandle>);

impl CancelOnDrop {
    fn disarm(&mut self) {
        self.0 = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(handle) = self.0.take() else { return };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn(async move {
            if let Err(e) = handle.cancel().await {
                tracing::warn!(task = handle.id(), error = %e, "cancelling the backend task failed");
            }
        });
    }
}

impl Route {
    /// A place among this backend's followed tasks ([`Backend::max_tasks`](crate::Backend::max_tasks)).
    fn task_permit(&self) -> Result<OwnedSemaphorePermit, ErrorObject> {
        let mount = &self.mount;
        self.tasks.clone().try_acquire_owned().map_err(|_| {
            ErrorObject::internal_error(format!(
                "composed server: backend {mount:?} already has its maximum of forwarded tasks \
                 (Backend::max_tasks)"
            ))
        })
    }

    /// Sends one round of a plain front call's `tools/call`; a task the backend makes of it
    /// (2026-07-28) is followed to its end on behalf of `ctx` and takes a
    /// [`Backend::max_tasks`](crate::Backend::max_tasks) place meanwhile (none left: the
    /// backend task is cancelled and the call fails naming the limit).
    pub(crate) async fn call_once(
        &self,
        ctx: &RequestContext,
        params: CallToolRequestParams,
        opts: RequestOptions,
        reports: &mpsc::Sender<Report>,
    ) -> Result<MaybeInputRequired<CallToolResult>, ErrorObject> {
        let answer = self
            .client
            .request_once_or_task::<CallTool>(params, opts)
            .await
            .map_err(|e| self.client_error(methods::TOOLS_CALL, e))?;
        let handle = match answer {
            OnceOrTask::Complete(result) => return Ok(MaybeInputRequired::Complete(result)),
            OnceOrTask::InputRequired(input) => {
                return Ok(MaybeInputRequired::InputRequired(input));
            }
            OnceOrTask::Task(handle) => handle,
            _ => {
                return Err(ErrorObject::internal_error(format!(
                    "composed server: backend {:?} answered tools/call with a result of an \
                     unknown kind",
                    self.mount
                )));
            }
        };
        let _task = match self.task_permit() {
            Ok(permit) => permit,
            Err(e) => {
                if let Err(c) = handle.cancel().await {
                    tracing::warn!(mount = %self.mount, task = handle.id(), error = %c, "cancelling the backend task failed");
                }
                return Err(e);
            }
        };
        self.follow(ctx, &handle, reports)
            .await
            .map(MaybeInputRequired::Complete)
    }

    /// Follows the backend task `handle` for the front request `ctx` until it ends: its new
    /// status messages go to `reports`, cancelling `ctx` cancels it (`tasks/cancel`), and so
    /// does dropping this future before it ends.
    async fn follow(
        &self,
        ctx: &RequestContext,
        handle: &TaskHandle,
        reports: &mpsc::Sender<Report>,
    ) -> Result<CallToolResult, ErrorObject> {
        let mut guard = CancelOnDrop(Some(handle.clone()));
        let tx = reports.clone();
        let (dropped, mount) = (self.dropped_reports.clone(), self.mount.clone());
        let mut last: Option<String> = None;
        let wait = handle.wait_with(move |state: &TaskState| {
            if let Some(message) = &state.info.status_message
                && last.as_ref() != Some(message)
            {
                last = Some(message.clone());
                // A full queue drops a message: the next one supersedes it.
                queue(&tx, Report::Status(message.clone()), &dropped, &mount);
            }
        });
        let done = tokio::select! {
            biased;
            () = ctx.cancellation().cancelled() => {
                guard.disarm();
                if let Err(e) = handle.cancel().await {
                    tracing::warn!(mount = %self.mount, task = handle.id(), error = %e, "cancelling the backend task failed");
                }
                return Err(ErrorObject::internal_error("composed server: the task was cancelled"));
            }
            done = wait => done,
        };
        guard.disarm();
        done.map_err(|e| self.client_error(methods::TASKS_GET, e))
    }

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
        let _task = self.task_permit()?;
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
        let (tx, mut rx) = mpsc::channel(self.max_queued_reports);
        let follow = self.follow(ctx, &handle, &tx);
        tokio::pin!(follow);
        let mut last = NO_PROGRESS;
        loop {
            tokio::select! {
                biased;
                done = &mut follow => return done,
                Some(r) = rx.recv() => report(ctx, r, &mut last).await,
            }
        }
    }
}
