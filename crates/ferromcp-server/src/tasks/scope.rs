//! [`TaskScope`]: what a task's handler runs with (its input requests park the task), and
//! the [`RequestContext`] methods that read it.

#[allow(
    clippy::wildcard_imports,
    reason = "a part of the tasks module: its imports and helpers"
)]
use super::*;

impl RequestContext {
    /// The id of the task this handler runs as, if it runs as one (see [`crate::tasks`]).
    pub fn task_id(&self) -> Option<&str> {
        self.extensions().get::<Arc<TaskScope>>().map(|t| t.id())
    }

    /// Inside a task: sets the task's `statusMessage` (what `tasks/get` shows, e.g. how far
    /// the work is); whether the message was recorded (`false` outside a task, or once the
    /// task is finished).
    pub async fn set_task_status(&self, message: impl Into<String>) -> bool {
        match self.extensions().get::<Arc<TaskScope>>() {
            Some(task) => task.set_message(message.into()).await,
            None => false,
        }
    }
}

/// What a task's handler asks through: its input requests park the task.
pub(crate) struct TaskScope {
    pub(super) tasks: Arc<Tasks>,
    pub(super) task_id: String,
    pub(super) modern: bool,
    pub(super) next_key: AtomicU32,
    pub(super) running: Arc<Running>,
}

impl std::fmt::Debug for TaskScope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskScope")
            .field("task_id", &self.task_id)
            .finish_non_exhaustive()
    }
}

impl TaskScope {
    /// The task's id.
    pub(crate) fn id(&self) -> &str {
        &self.task_id
    }

    /// Signals after which the task's progress reports are dropped: its outcome is known, or
    /// it is being cancelled.
    pub(crate) fn progress_ends(&self) -> Vec<CancellationToken> {
        vec![self.running.ended.clone(), self.running.cancel.clone()]
    }

    /// Sets the task's `statusMessage`; whether it was recorded.
    pub(crate) async fn set_message(&self, message: String) -> bool {
        let change: TaskChange = Box::new(move |r| {
            if !r.status.is_terminal() {
                r.status_message = Some(message.clone());
                r.last_updated_at = now();
            }
        });
        match self.tasks.store().update(&self.task_id, change).await {
            Ok(Some(r)) if !r.status.is_terminal() => {
                self.tasks.publish(&r).await;
                true
            }
            Ok(_) => false,
            Err(e) => {
                tracing::warn!(task = %self.task_id, error = %e, "could not record a status message");
                false
            }
        }
    }

    fn cancelled() -> ErrorObject {
        ErrorObject::new(ErrorCode::REQUEST_CANCELLED, "the task was cancelled")
    }

    async fn set_status(&self, status: TaskStatus) -> Result<(), ErrorObject> {
        let change: TaskChange = Box::new(move |r| {
            transition(r, status);
        });
        match self.tasks.store().update(&self.task_id, change).await {
            Ok(Some(r)) if !r.status.is_terminal() => {
                self.tasks.publish(&r).await;
                Ok(())
            }
            Ok(_) => Err(Self::cancelled()),
            Err(e) => Err(store_error(&e)),
        }
    }

    async fn wait(&self, notified: tokio::sync::futures::Notified<'_>) -> Result<(), ErrorObject> {
        tokio::select! {
            () = notified => Ok(()),
            () = tokio::time::sleep(self.tasks.settings.check_interval) => Ok(()),
            () = self.running.cancel.cancelled() => Err(Self::cancelled()),
        }
    }

    /// Asks the client `request` from inside the task and waits for the answer.
    pub(crate) async fn ask(
        &self,
        ctx: &RequestContext,
        request: &InputRequest,
    ) -> Result<InputResponse, ErrorObject> {
        elicit_check_capability(ctx.connection().client_capabilities().as_ref(), request)?;
        if self.modern {
            self.ask_polled(request).await
        } else {
            self.ask_live(ctx, request).await
        }
    }

    /// 2026-07-28: the request joins the task's `inputRequests`; `tasks/update` answers it.
    async fn ask_polled(&self, request: &InputRequest) -> Result<InputResponse, ErrorObject> {
        let n = self.next_key.fetch_add(1, Ordering::Relaxed) + 1;
        let kind = match request {
            InputRequest::Elicit(_) => "elicitation",
            InputRequest::CreateMessage(_) => "sampling",
            _ => "roots",
        };
        let key = format!("{kind}-{n}");
        let (k, q) = (key.clone(), request.clone());
        let change: TaskChange = Box::new(move |r| {
            if transition(r, TaskStatus::InputRequired) {
                r.input_requests.insert(k.clone(), q.clone());
            }
        });
        match self.tasks.store().update(&self.task_id, change).await {
            Ok(Some(r)) if !r.status.is_terminal() => self.tasks.publish(&r).await,
            Ok(_) => return Err(Self::cancelled()),
            Err(e) => return Err(store_error(&e)),
        }
        loop {
            let notified = self.running.changed.notified();
            let record = self
                .tasks
                .store()
                .get(&self.task_id)
                .await
                .map_err(|e| store_error(&e))?;
            let Some(record) = record.filter(|r| !r.status.is_terminal()) else {
                return Err(Self::cancelled());
            };
            if let Some(answer) = record.input_responses.get(&key).cloned() {
                let k = key.clone();
                let change: TaskChange = Box::new(move |r| {
                    r.input_responses.remove(&k);
                });
                self.tasks
                    .store()
                    .update(&self.task_id, change)
                    .await
                    .map_err(|e| store_error(&e))?;
                return Ok(answer);
            }
            self.wait(notified).await?;
        }
    }

    /// 2025-11-25: a live request with the related-task `_meta`, on the stream of a pending
    /// `tasks/result` (off HTTP, on the connection).
    async fn ask_live(
        &self,
        ctx: &RequestContext,
        request: &InputRequest,
    ) -> Result<InputResponse, ErrorObject> {
        let mut params = match request {
            InputRequest::ListRoots(None) => JsonObject::new(),
            InputRequest::CreateMessage(p) => object(p)?,
            InputRequest::ListRoots(Some(p)) => object(p)?,
            InputRequest::Elicit(p) => object(p)?,
            _ => return Err(internal()),
        };
        let meta = params
            .entry("_meta")
            .or_insert_with(|| Value::Object(JsonObject::new()));
        if let Value::Object(meta) = meta {
            meta.insert(
                META_RELATED_TASK.to_owned(),
                json!({ "taskId": self.task_id }),
            );
        }
        let params = Payload::from_serialize(&params).map_err(|_| internal())?;
        self.set_status(TaskStatus::InputRequired).await?;
        let off_http =
            ctx.peer().dispatch_context().transport().kind != TransportKind::StreamableHttp;
        let answer = loop {
            let notified = self.running.changed.notified();
            let stream = lock(&self.running.result_streams)
                .last()
                .map(|(_, s)| s.clone());
            let send: Option<BoxFuture<'_, Result<Payload, ErrorObject>>> =
                if let Some(peer) = stream {
                    let params = Some(params.clone());
                    Some(Box::pin(async move {
                        peer.send_request(request.method(), params, CallOptions::new())
                            .await
                    }))
                } else if off_http && ctx.connection().can_send_requests() {
                    Some(ctx.connection().outbound().send_request(
                        request.method(),
                        Some(params.clone()),
                        CallOptions::new(),
                    ))
                } else {
                    None
                };
            let sent = match send {
                Some(send) => tokio::select! {
                    r = send => Some(r),
                    () = self.running.cancel.cancelled() => return Err(Self::cancelled()),
                },
                None => None,
            };
            if let Some(sent) = sent {
                break sent?;
            }
            self.wait(notified).await?;
        };
        self.set_status(TaskStatus::Working).await?;
        let value = answer
            .into_value()
            .map_err(|e| ErrorObject::invalid_params(format!("invalid answer: {e}")))?;
        serde_json::from_value(value).map_err(|e| {
            ErrorObject::invalid_params(format!(
                "the client's answer to {} is not valid: {e}",
                request.method()
            ))
        })
    }
}
