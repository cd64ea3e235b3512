//! Calling a tool as a task, a request whose task comes back as a handle
//! ([`Client::request_once_or_task`]), and the client's other task methods: [`Client::task`],
//! `tasks/list`, and the task-support checks of 2025-11-25.

use std::sync::Arc;
use std::time::Duration;

use ferromcp_dispatch::KeepProgress;
use ferromcp_types::Era;
use ferromcp_types::mcp::methods::Request;
use ferromcp_types::mcp::tasks_ext;
use ferromcp_types::mcp::{
    CallToolRequestParams, Cursor, JsonObject, ListTasksResult, MaybeInputRequired,
    PaginatedRequestParams, Task, TaskMetadata, TaskSupport, methods,
};
use serde_json::Value;

use super::handle::{HandleState, OnceOrTask, TaskHandle, ToolCall};
use super::wait::created_2026;
use super::{TaskInfo, decode_result, not_enabled, server_declares};
use crate::client::{Client, result_type};
use crate::error::ClientError;
use crate::options::RequestOptions;

fn arguments_object(arguments: Value) -> Result<Option<JsonObject>, ClientError> {
    match arguments {
        Value::Null => Ok(None),
        Value::Object(map) => Ok(Some(map)),
        other => Err(ClientError::Encode {
            method: methods::TOOLS_CALL.into(),
            detail: format!("tool arguments must be an object, got {other}"),
        }),
    }
}

impl Client {
    /// Calls a tool so that it may run as a task, and returns the task's handle without
    /// waiting (or the result, when the server answered at once).
    ///
    /// At 2025-11-25 the call carries `params.task`: the server must declare
    /// `tasks.requests.tools.call` (else [`ClientError::NotAvailable`]) and the tool's
    /// `execution.taskSupport` must be `optional` or `required` (else
    /// [`ClientError::TaskRefused`]; the client lists the tools once if it has not seen this
    /// one). At 2026-07-28 the server decides; the call is a plain `tools/call` (with
    /// `input_required` rounds driven as usual) whose task handle is handed back.
    pub async fn call_tool_as_task(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<ToolCall, ClientError> {
        self.call_tool_as_task_with(name, arguments, None, RequestOptions::new())
            .await
    }

    /// [`Client::call_tool_as_task`] with a requested retention (`params.task.ttl`,
    /// 2025-11-25; the server may grant another, see [`TaskHandle::ttl`]; 2026-07-28 has no
    /// such request and ignores it) and options for the `tools/call` request.
    ///
    /// At 2025-11-25 the progress token stays valid for the task's lifetime (Tasks › Task
    /// Progress Notifications): `opts.on_progress` keeps receiving the server's reports after
    /// the task is created, until the task is seen terminal or every clone of its
    /// [`TaskHandle`] is dropped. At 2026-07-28 tasks report no progress (SEP-2663).
    pub async fn call_tool_as_task_with(
        &self,
        name: &str,
        arguments: Value,
        ttl: Option<Duration>,
        opts: RequestOptions,
    ) -> Result<ToolCall, ClientError> {
        let inner = &self.inner;
        if inner.settings.tasks.is_none() {
            return Err(not_enabled(methods::TOOLS_CALL));
        }
        let mut params = CallToolRequestParams::new(name);
        params.arguments = arguments_object(arguments)?;
        if inner.era() == Era::Modern {
            let params = crate::calls::to_object(methods::TOOLS_CALL, &params)?;
            let value = inner
                .execute(methods::TOOLS_CALL, params, &opts, true)
                .await?;
            if result_type(&value) == Some(tasks_ext::RESULT_TYPE_TASK) {
                let (state, _) = created_2026(value)?;
                return Ok(ToolCall::Task(self.handle(state)));
            }
            return decode_result(value).map(ToolCall::Complete);
        }
        server_declares(inner, methods::TOOLS_CALL, |t| {
            t.requests.as_ref().is_some_and(|r| r.tools.is_some())
        })?;
        self.check_task_support(name).await?;
        let mut task = TaskMetadata::new();
        if let Some(ttl) = ttl {
            task = task.with_ttl(u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX));
        }
        params.task = Some(task);
        let params = crate::calls::to_object(methods::TOOLS_CALL, &params)?;
        // The progress token stays valid for the task's lifetime (Tasks › Task Progress
        // Notifications): the call's progress route outlives its answer while the handle does.
        let keep = opts.on_progress.is_some().then(KeepProgress::new);
        let mut call = inner.call_options(methods::TOOLS_CALL, &opts);
        call.keep_progress.clone_from(&keep);
        let value = inner
            .send_once(methods::TOOLS_CALL, params, &opts, call, false)
            .await?;
        match value.get("task") {
            Some(task) if task.is_object() => {
                let task: Task = serde_json::from_value(task.clone())
                    .map_err(|e| ClientError::decode(methods::TOOLS_CALL, e))?;
                let info = TaskInfo::from(task);
                let state = HandleState::with_progress(info.task_id.clone(), Some(info), keep);
                Ok(ToolCall::Task(self.handle(state)))
            }
            // The server ran it plainly (it may ignore the task request).
            _ => decode_result(value).map(ToolCall::Complete),
        }
    }

    /// Sends a typed request once, as [`Client::request_once`] does, but hands back the task
    /// a 2026-07-28 server makes of a `tools/call` (the `io.modelcontextprotocol/tasks`
    /// extension; the client must have tasks enabled, [`ClientBuilder::tasks`], to declare it)
    /// instead of waiting for it: the caller can then show its status
    /// ([`TaskHandle::status`], [`TaskHandle::wait_with`]), cancel it ([`TaskHandle::cancel`])
    /// and wait for its result, where [`Client::request_once`] waits inside the call and
    /// dropping that wait leaves the task running at the server.
    ///
    /// An `input_required` answer comes back as it came, for callers that drive the rounds
    /// themselves. At 2025-11-25 a server makes a task only of a call that asks for one (see
    /// [`Client::call_tool_as_task`]), so the answer is never [`OnceOrTask::Task`] there.
    ///
    /// [`ClientBuilder::tasks`]: crate::ClientBuilder::tasks
    pub async fn request_once_or_task<R: Request>(
        &self,
        params: R::Params,
        opts: RequestOptions,
    ) -> Result<OnceOrTask<R::Result>, ClientError> {
        let params = crate::calls::to_object(R::METHOD, &params)?;
        let value = self.inner.execute(R::METHOD, params, &opts, false).await?;
        if R::METHOD == methods::TOOLS_CALL
            && result_type(&value) == Some(tasks_ext::RESULT_TYPE_TASK)
        {
            let (state, _) = created_2026(value)?;
            return Ok(OnceOrTask::Task(self.handle(state)));
        }
        let answer: MaybeInputRequired<R::Result> =
            serde_json::from_value(value).map_err(|e| ClientError::decode(R::METHOD, e))?;
        Ok(match answer {
            MaybeInputRequired::Complete(r) => OnceOrTask::Complete(r),
            MaybeInputRequired::InputRequired(i) => OnceOrTask::InputRequired(i),
        })
    }

    /// A handle on a task by id, for example one persisted before a restart or created on
    /// another connection. Nothing is sent until it is polled.
    pub fn task(&self, task_id: impl Into<String>) -> TaskHandle {
        self.handle(HandleState::new(task_id.into(), None))
    }

    /// `tasks/list` (2025-11-25; the server must declare `tasks.list`): one page.
    pub async fn list_tasks(&self, cursor: Option<Cursor>) -> Result<ListTasksResult, ClientError> {
        self.tasks_listable()?;
        let params = match cursor {
            Some(c) => PaginatedRequestParams::new().with_cursor(c),
            None => PaginatedRequestParams::new(),
        };
        self.request::<methods::ListTasks>(params, RequestOptions::new())
            .await
    }

    /// Every task, following `nextCursor` (bounded like the other `list_all_*` calls).
    pub async fn list_all_tasks(&self) -> Result<Vec<Task>, ClientError> {
        self.tasks_listable()?;
        self.list_all::<methods::ListTasks>().await
    }

    fn tasks_listable(&self) -> Result<(), ClientError> {
        if self.inner.era() == Era::Modern {
            return Err(ClientError::not_available(
                methods::TASKS_LIST,
                "the 2026-07-28 tasks extension has no tasks/list",
            ));
        }
        server_declares(&self.inner, methods::TASKS_LIST, |t| t.list.is_some())
    }

    fn handle(&self, state: Arc<HandleState>) -> TaskHandle {
        TaskHandle {
            client: self.clone(),
            state,
        }
    }

    /// Refuses a task for a tool whose `execution.taskSupport` is absent or `forbidden`
    /// (2025-11-25).
    async fn check_task_support(&self, name: &str) -> Result<(), ClientError> {
        let runtime = &self.inner.handlers.tasks;
        let support = match runtime.support_of(name) {
            Some(s) => s,
            None => {
                self.list_all_tools().await?;
                match runtime.support_of(name) {
                    Some(s) => s,
                    // Not listed: the server will say what it thinks of it.
                    None => return Ok(()),
                }
            }
        };
        match support {
            Some(TaskSupport::Optional | TaskSupport::Required) => Ok(()),
            _ => Err(ClientError::TaskRefused {
                tool: name.to_owned(),
                detail: "its execution.taskSupport is forbidden (or absent): it must not be \
                         called as a task"
                    .into(),
            }),
        }
    }

    /// Whether a plain call of `name` must run as a task: a 2025-11-25 tool this client saw
    /// declared `execution.taskSupport: required`. Fails when this client cannot run it so.
    pub(crate) fn must_run_as_task(&self, name: &str) -> Result<bool, ClientError> {
        let inner = &self.inner;
        if inner.era() == Era::Modern
            || inner.handlers.tasks.support_of(name) != Some(Some(TaskSupport::Required))
        {
            return Ok(false);
        }
        if inner.settings.tasks.is_none() {
            return Err(ClientError::TaskRefused {
                tool: name.to_owned(),
                detail: "its execution.taskSupport is required, and tasks are not enabled on \
                         this client (see ClientBuilder::tasks)"
                    .into(),
            });
        }
        Ok(true)
    }
}
