//! Client-hosted tasks (MCP 2025-11-25 › Tasks): the server sends `elicitation/create` or
//! `sampling/createMessage` with `params.task`, the client answers a `CreateTaskResult` at once
//! and runs the request in the background, and the server polls it with `tasks/get`, fetches
//! the answer with `tasks/result`, lists with `tasks/list` and cancels with `tasks/cancel`.
//!
//! A handler starts one with [`RequestContext::elicit_as_task`] or
//! [`RequestContext::create_message_as_task`]; the client must have declared
//! `tasks.requests.elicitation.create` / `tasks.requests.sampling.createMessage` (besides the
//! `elicitation` / `sampling` capability), else the call fails with -32021
//! (`data.requiredCapabilities` names what is missing) and nothing is sent (Tasks ›
//! Capability Negotiation: requestors SHOULD only augment requests with a task if the
//! receiver declared it). The requests are related to the request being handled, so over
//! Streamable HTTP they travel on its SSE stream: use the [`ClientTask`] inside the handler.
//!
//! 2026-07-28 has no client-hosted tasks (the `io.modelcontextprotocol/tasks` extension
//! covers server-directed `tools/call` tasks only, and there is no server→client request
//! channel): there these methods fail with -32600.

use std::marker::PhantomData;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use ferromcp_dispatch::CallOptions;
use ferromcp_types::jsonrpc::{ErrorCode, ErrorObject, Payload};
use ferromcp_types::mcp::{
    ClientCapabilities, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, InputRequest, JsonObject, ListTasksResult, MissingRequiredClientCapabilityData,
    PaginatedRequestParams, Task, TaskElicitationRequests, TaskIdParams, TaskMetadata,
    TaskRequestsCapability, TaskSamplingRequests, TasksCapability, methods,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::context::{RequestContext, RequestPeer};

/// The first wait between `tasks/get` polls when the client suggests no interval.
pub const DEFAULT_CLIENT_TASK_INITIAL_POLL: Duration = Duration::from_millis(100);
/// The longest wait between `tasks/get` polls (the backoff's ceiling and the cap on the
/// client's suggestion), by default.
pub const DEFAULT_CLIENT_TASK_MAX_POLL: Duration = Duration::from_secs(5);
/// The shortest wait between `tasks/get` polls, whatever the client suggests.
pub const CLIENT_TASK_MIN_POLL: Duration = Duration::from_millis(10);

/// A task the client runs for this server (MCP 2025-11-25 client-hosted tasks): an
/// elicitation or a sampling request sent with `params.task`, started with
/// [`RequestContext::elicit_as_task`] or [`RequestContext::create_message_as_task`]. `R` is
/// the original request's result type.
///
/// The client must declare `tasks.requests.elicitation.create` /
/// `tasks.requests.sampling.createMessage` (else -32021 naming it, nothing sent); at
/// 2026-07-28 there are no client-hosted tasks (-32600). The polls are requests related to
/// the request being handled (over Streamable HTTP they travel on its SSE stream), so use
/// the task inside the handler.
pub struct ClientTask<R> {
    peer: RequestPeer,
    method: &'static str,
    last: Mutex<Task>,
    max_poll: Duration,
    _result: PhantomData<fn() -> R>,
}

impl<R> std::fmt::Debug for ClientTask<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientTask")
            .field("method", &self.method)
            .field(
                "last",
                &*self.last.lock().unwrap_or_else(PoisonError::into_inner),
            )
            .finish_non_exhaustive()
    }
}

fn missing(required: ClientCapabilities) -> ErrorObject {
    let data = MissingRequiredClientCapabilityData::new(required);
    ErrorObject::new(
        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        "Missing required client capability",
    )
    .with_data(serde_json::to_value(data).unwrap_or(Value::Null))
}

fn tasks_with(requests: TaskRequestsCapability) -> ClientCapabilities {
    let mut caps = ClientCapabilities::new();
    caps.tasks = Some(TasksCapability::new().with_requests(requests));
    caps
}

fn encode<T: Serialize>(v: &T) -> Result<Payload, ErrorObject> {
    Payload::from_serialize(v).map_err(|_| ErrorObject::internal_error("Internal error"))
}

fn decode<T: DeserializeOwned>(method: &str, p: Payload) -> Result<T, ErrorObject> {
    let value = p
        .into_value()
        .map_err(|e| ErrorObject::invalid_params(format!("invalid answer to {method}: {e}")))?;
    serde_json::from_value(value).map_err(|e| {
        ErrorObject::invalid_params(format!("the client's answer to {method} is not valid: {e}"))
    })
}

impl RequestContext {
    /// Sends `elicitation/create` as a task the client runs (2025-11-25 client-hosted
    /// tasks, see [`ClientTask`]); `ttl` is the retention asked for (the client may grant
    /// less). -32021 when the client did not declare `tasks.requests.elicitation.create` or
    /// the elicitation mode; -32600 at 2026-07-28 or without a back channel.
    pub async fn elicit_as_task(
        &self,
        params: impl Into<ElicitRequestParams>,
        ttl: Option<Duration>,
    ) -> Result<ClientTask<ElicitResult>, ErrorObject> {
        let mut params = params.into();
        let task = task_metadata(ttl);
        match &mut params {
            ElicitRequestParams::Form(f) => f.task = Some(task),
            ElicitRequestParams::Url(u) => u.task = Some(task),
            _ => return Err(ErrorObject::invalid_params("unknown elicitation mode")),
        }
        let declared =
            |t: &TaskRequestsCapability| t.elicitation.as_ref().is_some_and(|e| e.create.is_some());
        let mut requests = TaskRequestsCapability::new();
        let mut e = TaskElicitationRequests::new();
        e.create = Some(Default::default());
        requests.elicitation = Some(e);
        self.check_client_tasks(&InputRequest::Elicit(params.clone()), declared, requests)?;
        self.start_client_task(methods::ELICITATION_CREATE, encode(&params)?)
            .await
    }

    /// Sends `sampling/createMessage` as a task the client runs (as
    /// [`RequestContext::elicit_as_task`]; needs `tasks.requests.sampling.createMessage`).
    pub async fn create_message_as_task(
        &self,
        mut params: CreateMessageRequestParams,
        ttl: Option<Duration>,
    ) -> Result<ClientTask<CreateMessageResult>, ErrorObject> {
        params.task = Some(task_metadata(ttl));
        let declared = |t: &TaskRequestsCapability| {
            t.sampling
                .as_ref()
                .is_some_and(|s| s.create_message.is_some())
        };
        let mut requests = TaskRequestsCapability::new();
        let mut s = TaskSamplingRequests::new();
        s.create_message = Some(Default::default());
        requests.sampling = Some(s);
        self.check_client_tasks(
            &InputRequest::CreateMessage(params.clone()),
            declared,
            requests,
        )?;
        self.start_client_task(methods::SAMPLING_CREATE_MESSAGE, encode(&params)?)
            .await
    }

    /// One page of the tasks the client runs for this server (`tasks/list`, 2025-11-25;
    /// -32021 when the client did not declare `tasks.list`).
    pub async fn list_client_tasks(
        &self,
        cursor: Option<String>,
    ) -> Result<ListTasksResult, ErrorObject> {
        self.check_era()?;
        let caps = self.connection().client_capabilities();
        let listable = caps
            .as_ref()
            .and_then(|c| c.tasks.as_ref())
            .is_some_and(|t| t.list.is_some());
        if !listable {
            let mut required = ClientCapabilities::new();
            required.tasks = Some(TasksCapability::new().with_list(JsonObject::new()));
            return Err(missing(required));
        }
        let mut params = PaginatedRequestParams::new();
        params.cursor = cursor;
        let answer = self
            .peer()
            .send_request(
                methods::TASKS_LIST,
                Some(encode(&params)?),
                CallOptions::new(),
            )
            .await?;
        decode(methods::TASKS_LIST, answer)
    }

    fn check_era(&self) -> Result<(), ErrorObject> {
        if self.protocol_version().is_modern() {
            return Err(ErrorObject::invalid_request(
                "client-hosted tasks exist at MCP 2025-11-25 only: the 2026-07-28 tasks \
                 extension has none (and no server-to-client requests)",
            ));
        }
        Ok(())
    }

    fn check_client_tasks(
        &self,
        request: &InputRequest,
        declared: impl Fn(&TaskRequestsCapability) -> bool,
        requests: TaskRequestsCapability,
    ) -> Result<(), ErrorObject> {
        self.check_era()?;
        let caps = self.connection().client_capabilities();
        crate::mcp_server::elicit_check_capability(caps.as_ref(), request)?;
        let ok = caps
            .as_ref()
            .and_then(|c| c.tasks.as_ref())
            .and_then(|t| t.requests.as_ref())
            .is_some_and(declared);
        if ok {
            Ok(())
        } else {
            Err(missing(tasks_with(requests)))
        }
    }

    async fn start_client_task<R>(
        &self,
        method: &'static str,
        params: Payload,
    ) -> Result<ClientTask<R>, ErrorObject> {
        let answer = self
            .peer()
            .send_request(method, Some(params), CallOptions::new())
            .await?;
        let value = answer
            .into_value()
            .map_err(|e| ErrorObject::invalid_params(format!("invalid answer to {method}: {e}")))?;
        let task = value.get("task").cloned().ok_or_else(|| {
            ErrorObject::invalid_params(format!(
                "the client answered {method} without creating a task (no CreateTaskResult)"
            ))
        })?;
        let task: Task = serde_json::from_value(task).map_err(|e| {
            ErrorObject::invalid_params(format!("the client's CreateTaskResult is not valid: {e}"))
        })?;
        Ok(ClientTask {
            peer: self.peer().clone(),
            method,
            last: Mutex::new(task),
            max_poll: DEFAULT_CLIENT_TASK_MAX_POLL,
            _result: PhantomData,
        })
    }
}

fn task_metadata(ttl: Option<Duration>) -> TaskMetadata {
    let mut task = TaskMetadata::new();
    if let Some(ttl) = ttl {
        task = task.with_ttl(u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX));
    }
    task
}

impl<R: DeserializeOwned> ClientTask<R> {
    /// The task's id (chosen by the client).
    pub fn id(&self) -> String {
        self.last().task_id
    }

    /// The task as last seen (at creation, or by the last poll).
    pub fn last(&self) -> Task {
        self.last
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Sets the longest wait between polls of [`ClientTask::wait`] (default 5 s).
    #[must_use]
    pub fn max_poll_interval(mut self, d: Duration) -> Self {
        self.max_poll = d.max(CLIENT_TASK_MIN_POLL);
        self
    }

    async fn send(&self, method: &str) -> Result<Payload, ErrorObject> {
        let params = encode(&TaskIdParams::new(self.id()))?;
        self.peer
            .send_request(method, Some(params), CallOptions::new())
            .await
    }

    /// Asks the client for the task's state (`tasks/get`).
    pub async fn status(&self) -> Result<Task, ErrorObject> {
        let task: Task = decode(methods::TASKS_GET, self.send(methods::TASKS_GET).await?)?;
        *self.last.lock().unwrap_or_else(PoisonError::into_inner) = task.clone();
        Ok(task)
    }

    /// The original request's answer (`tasks/result`, which the client holds until the task
    /// ends): the result, or the error the request ended with.
    pub async fn result(&self) -> Result<R, ErrorObject> {
        decode(self.method, self.send(methods::TASKS_RESULT).await?)
    }

    /// Polls `tasks/get` (the client's `pollInterval` when it suggests one, else a backoff
    /// from 100 ms doubling, both capped by [`ClientTask::max_poll_interval`]) until the
    /// task ends, then fetches the answer with `tasks/result`. Ends with -32800 when the
    /// request being handled is cancelled (the client's task goes on; cancel it with
    /// [`ClientTask::cancel`]).
    pub async fn wait(&self) -> Result<R, ErrorObject> {
        let mut backoff = DEFAULT_CLIENT_TASK_INITIAL_POLL;
        loop {
            let task = self.status().await?;
            if task.status.is_terminal() {
                return self.result().await;
            }
            let interval = match task.poll_interval {
                Some(ms) => Duration::from_millis(ms),
                None => {
                    let d = backoff;
                    backoff = backoff.saturating_mul(2);
                    d
                }
            };
            let cap = self.max_poll.max(CLIENT_TASK_MIN_POLL);
            let cancelled = self.peer.dispatch_context().cancellation();
            tokio::select! {
                () = tokio::time::sleep(interval.clamp(CLIENT_TASK_MIN_POLL, cap)) => {}
                () = cancelled.cancelled() => {
                    return Err(ErrorObject::new(ErrorCode::REQUEST_CANCELLED, "Request cancelled"));
                }
            }
        }
    }

    /// Asks the client to cancel the task (`tasks/cancel`; -32021 when the client did not
    /// declare `tasks.cancel`); returns the cancelled task.
    pub async fn cancel(&self) -> Result<Task, ErrorObject> {
        let declared = self
            .peer
            .connection()
            .client_capabilities()
            .and_then(|c| c.tasks)
            .is_some_and(|t| t.cancel.is_some());
        if !declared {
            let mut required = ClientCapabilities::new();
            required.tasks = Some(TasksCapability::new().with_cancel(JsonObject::new()));
            return Err(missing(required));
        }
        let task: Task = decode(
            methods::TASKS_CANCEL,
            self.send(methods::TASKS_CANCEL).await?,
        )?;
        *self.last.lock().unwrap_or_else(PoisonError::into_inner) = task.clone();
        Ok(task)
    }
}
