//! The tasks methods (`tasks/get`, `tasks/cancel`, `tasks/update`, `tasks/list`,
//! `tasks/result`) and their registration on the low-level server, as an extension.

#[allow(
    clippy::wildcard_imports,
    reason = "a part of the tasks module: its imports and helpers"
)]
use super::*;
use ferromcp_types::mcp::{
    ServerCapabilities, TaskRequestsCapability, TaskToolsRequests, TasksCapability,
};

impl Tasks {
    /// The task named by `params.taskId`, if the requester owns it.
    async fn find(&self, ctx: &RequestContext, params: &Value) -> Result<TaskRecord, ErrorObject> {
        let Some(id) = params.get("taskId").and_then(Value::as_str) else {
            return Err(ErrorObject::invalid_params("taskId must be a string"));
        };
        let record = self
            .store()
            .get(id)
            .await
            .map_err(|e| store_error(&e))?
            .filter(|r| r.owner == owner_of(ctx));
        record.ok_or_else(|| unknown_task(id))
    }

    /// Marks the task cancelled (unless finished) and tells its handler.
    async fn cancel(&self, id: &str) -> Result<Option<TaskRecord>, ErrorObject> {
        let change: TaskChange = Box::new(|r| {
            if transition(r, TaskStatus::Cancelled) {
                r.status_message = Some("cancelled by the client".to_owned());
                r.input_requests.clear();
            }
        });
        let updated = self
            .store()
            .update(id, change)
            .await
            .map_err(|e| store_error(&e))?;
        if let Some(r) = &updated {
            self.publish(r).await;
        }
        if let Some(r) = self.running(id) {
            r.cancel.cancel();
            r.changed.notify_waiters();
        }
        Ok(updated)
    }

    /// `tasks/get`.
    async fn get(&self, ctx: RequestContext, params: Value) -> Result<Value, ErrorObject> {
        gate(&ctx)?;
        let r = self.find(&ctx, &params).await?;
        if ctx.protocol_version().is_modern() {
            let d = detailed(&r).with_result_type(ferromcp_types::mcp::ResultType::Complete);
            to_value(&d)
        } else {
            to_value(&core_task(&r))
        }
    }

    /// `tasks/cancel`.
    async fn cancel_request(
        &self,
        ctx: RequestContext,
        params: Value,
    ) -> Result<Value, ErrorObject> {
        gate(&ctx)?;
        let r = self.find(&ctx, &params).await?;
        if ctx.protocol_version().is_modern() {
            // SEP-2663: an acknowledgement, also for a finished task.
            self.cancel(&r.task_id).await?;
            return to_value(&tasks_ext::TaskAck::new());
        }
        if r.status.is_terminal() {
            return Err(ErrorObject::invalid_params(format!(
                "the task is already {}",
                status_name(r.status)
            )));
        }
        let updated = self
            .cancel(&r.task_id)
            .await?
            .ok_or_else(|| unknown_task(&r.task_id))?;
        to_value(&core_task(&updated))
    }

    /// `tasks/update` (2026-07-28): answers to outstanding input requests; answers to keys
    /// that are not outstanding are ignored.
    async fn update(&self, ctx: RequestContext, params: Value) -> Result<Value, ErrorObject> {
        if !ctx.protocol_version().is_modern() {
            return Err(ErrorObject::method_not_found(methods::TASKS_UPDATE));
        }
        gate(&ctx)?;
        let r = self.find(&ctx, &params).await?;
        let Some(responses) = params.get("inputResponses").and_then(Value::as_object) else {
            return Err(ErrorObject::invalid_params(
                "inputResponses must be an object",
            ));
        };
        let answers: Vec<(String, InputResponse)> = responses
            .iter()
            .filter_map(|(k, v)| {
                let response = serde_json::from_value::<InputResponse>(v.clone()).ok()?;
                Some((k.clone(), response))
            })
            .collect();
        let change: TaskChange = Box::new(move |rec| {
            if rec.status.is_terminal() {
                return;
            }
            for (key, response) in &answers {
                if rec.input_requests.remove(key).is_some() {
                    rec.input_responses.insert(key.clone(), response.clone());
                }
            }
            if rec.input_requests.is_empty() && rec.status == TaskStatus::InputRequired {
                rec.status = TaskStatus::Working;
            }
            rec.last_updated_at = now();
        });
        let updated = self
            .store()
            .update(&r.task_id, change)
            .await
            .map_err(|e| store_error(&e))?;
        if let Some(updated) = &updated {
            self.publish(updated).await;
        }
        self.touched(&r.task_id);
        to_value(&tasks_ext::TaskAck::new())
    }

    /// `tasks/list` (2025-11-25): the requester's tasks, in pages.
    async fn list(&self, ctx: RequestContext, params: Value) -> Result<Value, ErrorObject> {
        let offset = match params.get("cursor") {
            None | Some(Value::Null) => 0,
            Some(c) => c
                .as_str()
                .and_then(|c| c.strip_prefix(CURSOR_PREFIX))
                .and_then(|n| n.parse::<usize>().ok())
                .ok_or_else(|| ErrorObject::invalid_params("Invalid cursor"))?,
        };
        let owner = owner_of(&ctx);
        // Anonymous callers share no identity: none of them sees the others' tasks (each
        // reaches its own by id).
        let all = if owner == ANONYMOUS {
            Vec::new()
        } else {
            self.store()
                .list(&owner)
                .await
                .map_err(|e| store_error(&e))?
        };
        if offset > all.len() {
            return Err(ErrorObject::invalid_params("Invalid cursor"));
        }
        let end = offset
            .saturating_add(self.settings.page_size)
            .min(all.len());
        let mut page = ListTasksResult::new(all[offset..end].iter().map(core_task).collect());
        if end < all.len() {
            page.next_cursor = Some(format!("{CURSOR_PREFIX}{end}"));
        }
        to_value(&page)
    }

    /// `tasks/result` (2025-11-25): waits until the task is finished, then answers what the
    /// call would have answered. While it waits, the task's input requests travel on its
    /// stream.
    async fn result(&self, ctx: RequestContext, params: Value) -> Result<Value, ErrorObject> {
        let r = self.find(&ctx, &params).await?;
        let id = r.task_id;
        let running = self.running(&id);
        let _stream = running
            .as_ref()
            .map(|run| StreamGuard::new(run, ctx.peer()));
        let record = loop {
            let notified = running.as_ref().map(|run| run.changed.notified());
            let record = self
                .store()
                .get(&id)
                .await
                .map_err(|e| store_error(&e))?
                .ok_or_else(|| unknown_task(&id))?;
            if record.status.is_terminal() {
                break record;
            }
            let wake: BoxFuture<'_, ()> = match notified {
                Some(n) => Box::pin(n),
                None => Box::pin(std::future::pending()),
            };
            tokio::select! {
                () = wake => {}
                () = tokio::time::sleep(self.settings.check_interval) => {}
                () = ctx.cancellation().cancelled() => {
                    return Err(ErrorObject::new(ErrorCode::REQUEST_CANCELLED, "Request cancelled"));
                }
            }
        };
        let related = json!({ META_RELATED_TASK: { "taskId": id } });
        match (record.status, record.result) {
            // A completed task, or (2025-11-25) one that failed with a tool error: the
            // tool's result, as the plain call would have answered.
            (TaskStatus::Completed, result) | (TaskStatus::Failed, result @ Some(_)) => {
                let mut result = result.unwrap_or_default();
                let meta = result
                    .entry("_meta")
                    .or_insert_with(|| Value::Object(JsonObject::new()));
                if let (Value::Object(meta), Value::Object(add)) = (meta, related) {
                    meta.extend(add);
                }
                Ok(Value::Object(result))
            }
            (TaskStatus::Failed, None) => Err(record.error.unwrap_or_else(internal)),
            _ => Err(
                ErrorObject::new(ErrorCode::REQUEST_CANCELLED, "the task was cancelled")
                    .with_data(related),
            ),
        }
    }
}

const CURSOR_PREFIX: &str = "ferromcp-tasks:v1:";

fn to_value<T: Serialize>(v: &T) -> Result<Value, ErrorObject> {
    serde_json::to_value(v).map_err(|_| internal())
}

/// 2026-07-28: the tasks methods need the extension in the request's capabilities.
pub(super) fn gate(ctx: &RequestContext) -> Result<(), ErrorObject> {
    if ctx.protocol_version().is_modern()
        && !declares_extension(ctx.connection().client_capabilities().as_ref())
    {
        return Err(missing_extension());
    }
    Ok(())
}

/// Registers a pending `tasks/result` stream with a running task for as long as it waits.
struct StreamGuard {
    running: Arc<Running>,
    key: u64,
}

impl StreamGuard {
    fn new(running: &Arc<Running>, peer: &RequestPeer) -> Self {
        let key = u64::from(running.next_stream.fetch_add(1, Ordering::Relaxed));
        lock(&running.result_streams).push((key, peer.clone()));
        running.changed.notify_waiters();
        Self {
            running: running.clone(),
            key,
        }
    }
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        lock(&self.running.result_streams).retain(|(k, _)| *k != self.key);
    }
}

pub(super) fn object<T: Serialize>(v: &T) -> Result<JsonObject, ErrorObject> {
    match serde_json::to_value(v) {
        Ok(Value::Object(map)) => Ok(map),
        _ => Err(internal()),
    }
}

/// Registers the tasks methods of both eras on `low` and announces the capability.
pub(crate) fn register(low: ServerBuilder, tasks: &Arc<Tasks>) -> ServerBuilder {
    type Method =
        fn(Arc<Tasks>, RequestContext, Value) -> BoxFuture<'static, Result<Value, ErrorObject>>;
    let table: [(&str, Method); 5] = [
        (methods::TASKS_GET, |t, c, p| {
            Box::pin(async move { t.get(c, p).await })
        }),
        (methods::TASKS_CANCEL, |t, c, p| {
            Box::pin(async move { t.cancel_request(c, p).await })
        }),
        (methods::TASKS_UPDATE, |t, c, p| {
            Box::pin(async move { t.update(c, p).await })
        }),
        (methods::TASKS_LIST, |t, c, p| {
            Box::pin(async move { t.list(c, p).await })
        }),
        (methods::TASKS_RESULT, |t, c, p| {
            Box::pin(async move { t.result(c, p).await })
        }),
    ];
    // The 2026-07-28 extension serves `tasks/get` and `tasks/cancel`, which that revision's
    // schema does not define, and answers a task-augmented call with a task handle.
    let mut low = low
        .contribute_capabilities(announce)
        .extension_method(methods::TASKS_GET)
        .extension_method(methods::TASKS_CANCEL)
        .extension_result_type(tasks_ext::RESULT_TYPE_TASK);
    for (method, f) in table {
        let tasks = tasks.clone();
        low = low.on_request_quiet::<Value, Value, _, _>(method, move |ctx, params| {
            let fut = f(tasks.clone(), ctx, params);
            async move { fut.await.map_err(Into::into) }
        });
    }
    low
}

/// The tasks share of the capabilities: the `tasks` capability at 2025-11-25 (task-augmented
/// `tools/call`, `tasks/list`, `tasks/cancel`), the tasks extension at 2026-07-28, nothing
/// before 2025-11-25.
fn announce(version: ProtocolVersion, caps: &mut ServerCapabilities) {
    if version.is_modern() {
        caps.extensions
            .get_or_insert_with(Default::default)
            .insert(EXTENSION_TASKS.to_owned(), JsonObject::new());
    } else if version >= ProtocolVersion::V2025_11_25 {
        let mut tools = TaskToolsRequests::new();
        tools.call = Some(JsonObject::new());
        let mut requests = TaskRequestsCapability::new();
        requests.tools = Some(tools);
        caps.tasks = Some(
            TasksCapability::new()
                .with_list(JsonObject::new())
                .with_cancel(JsonObject::new())
                .with_requests(requests),
        );
    }
}
