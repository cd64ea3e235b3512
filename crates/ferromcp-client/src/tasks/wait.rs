//! Polling a task to its end: `tasks/get`, `tasks/result`, the input rounds answered with
//! `tasks/update`, and the transparent wait of a `tools/call` that became a task.

use std::sync::Arc;

use ferromcp_types::Era;
use ferromcp_types::jsonrpc::ErrorCode;
use ferromcp_types::mcp::tasks_ext;
use ferromcp_types::mcp::{InputRequests, Task, TaskStatus, methods};
use serde_json::Value;

use super::handle::HandleState;
use super::{TaskInfo, TaskState, task_params};
use crate::client::{Inner, lock, result_type};
use crate::error::ClientError;
use crate::options::RequestOptions;

/// `tasks/get`, decoded for the era; records what it learns.
pub(super) async fn get(inner: &Inner, state: &HandleState) -> Result<TaskState, ClientError> {
    let params = task_params(&state.task_id);
    let value = inner
        .execute(methods::TASKS_GET, params, &RequestOptions::new(), false)
        .await?;
    let decoded = match inner.era() {
        Era::Modern => {
            let d: tasks_ext::DetailedTask = serde_json::from_value(value)
                .map_err(|e| ClientError::decode(methods::TASKS_GET, e))?;
            TaskState::from_detailed(d)
        }
        _ => {
            let t: Task = serde_json::from_value(value)
                .map_err(|e| ClientError::decode(methods::TASKS_GET, e))?;
            TaskState::plain(t.into())
        }
    };
    if decoded.info.task_id != state.task_id {
        return Err(ClientError::TaskEnded {
            task_id: state.task_id.clone(),
            status: None,
            detail: format!(
                "tasks/get answered for another task ({:?})",
                decoded.info.task_id
            ),
        });
    }
    state.record(&decoded.info);
    Ok(decoded)
}

/// `tasks/result` (2025-11-25): the original request's result, or its error.
pub(super) async fn payload(inner: &Inner, state: &HandleState) -> Result<Value, ClientError> {
    let params = task_params(&state.task_id);
    let mut value = inner
        .execute(methods::TASKS_RESULT, params, &RequestOptions::new(), false)
        .await?;
    // `tasks/result` answers once the task is terminal.
    state.progress_ended();
    if let Value::Object(map) = &mut value {
        map.entry("content")
            .or_insert_with(|| Value::Array(Vec::new()));
    }
    Ok(value)
}

/// The result of a terminal task.
async fn finish(inner: &Inner, handle: &HandleState, s: TaskState) -> Result<Value, ClientError> {
    let ended = |detail: &str| ClientError::TaskEnded {
        task_id: handle.task_id.clone(),
        status: Some(s.info.status),
        detail: s
            .info
            .status_message
            .clone()
            .unwrap_or_else(|| detail.to_owned()),
    };
    match (inner.era(), s.info.status) {
        (_, TaskStatus::Cancelled) => Err(ended("the task was cancelled")),
        (Era::Modern, TaskStatus::Completed) => match s.result {
            Some(mut result) => {
                result
                    .entry("content")
                    .or_insert_with(|| Value::Array(Vec::new()));
                Ok(Value::Object(result))
            }
            None => Err(ended("the completed task carries no result")),
        },
        (Era::Modern, _) => match s.error {
            Some(error) => Err(ClientError::Protocol(error)),
            None => Err(ended("the task failed without an error")),
        },
        // 2025-11-25: `tasks/result` returns exactly what the request would have returned.
        _ => payload(inner, handle).await,
    }
}

/// Answers the input requests not answered yet with `tasks/update` (2026-07-28); whether it
/// sent anything.
async fn answer_input(
    inner: &Inner,
    handle: &HandleState,
    requests: InputRequests,
) -> Result<bool, ClientError> {
    let fresh: InputRequests = {
        let answered = lock(&handle.answered);
        requests
            .into_iter()
            .filter(|(k, _)| !answered.contains(k))
            .collect()
    };
    if fresh.is_empty() {
        return Ok(false);
    }
    let keys: Vec<String> = fresh.keys().cloned().collect();
    let responses = crate::multiround::answer_all(&inner.handlers, fresh).await?;
    let params = tasks_ext::UpdateTaskRequestParams::new(handle.task_id.clone(), responses);
    let params = match serde_json::to_value(&params) {
        Ok(Value::Object(map)) => map,
        Ok(_) | Err(_) => {
            return Err(ClientError::Encode {
                method: methods::TASKS_UPDATE.into(),
                detail: "the input responses do not encode".into(),
            });
        }
    };
    inner
        .execute(methods::TASKS_UPDATE, params, &RequestOptions::new(), false)
        .await?;
    lock(&handle.answered).extend(keys);
    Ok(true)
}

/// Polls the task to its end and returns the original request's result.
pub(super) async fn wait_value(
    inner: &Inner,
    handle: &HandleState,
    first: Option<TaskState>,
    on_state: &mut (dyn FnMut(&TaskState) + Send),
) -> Result<Value, ClientError> {
    let config = inner.settings.tasks.clone().unwrap_or_default();
    let mut subscription = inner.handlers.tasks.subscribe(&handle.task_id);
    let mut backoff = config.initial_poll_interval;
    let mut rounds = 0u32;
    let mut known = first;
    loop {
        let s = match known.take() {
            Some(s) => s,
            None => get(inner, handle).await?,
        };
        on_state(&s);
        if s.info.is_terminal() {
            return finish(inner, handle, s).await;
        }
        if s.info.status == TaskStatus::InputRequired {
            match inner.era() {
                Era::Modern => {
                    if let Some(requests) = s.input_requests.clone().filter(|r| !r.is_empty()) {
                        let has_fresh = {
                            let answered = lock(&handle.answered);
                            requests.keys().any(|k| !answered.contains(k))
                        };
                        if has_fresh {
                            if rounds >= inner.settings.max_rounds {
                                return Err(ClientError::RoundsExceeded {
                                    method: methods::TASKS_UPDATE.to_owned(),
                                    rounds,
                                });
                            }
                            rounds += 1;
                            answer_input(inner, handle, requests).await?;
                            backoff = config.initial_poll_interval;
                        }
                    }
                }
                // 2025-11-25: the server delivers its requests while `tasks/result` is open
                // (the handlers answer them); it returns once the task ends. A timeout of that
                // request is not the task's failure: go back to polling.
                _ => match payload(inner, handle).await {
                    Err(e) if e.code() == Some(ErrorCode::REQUEST_TIMEOUT) => {}
                    other => return other,
                },
            }
        }
        let interval = config.next_interval(s.info.poll_interval, &mut backoff);
        tokio::select! {
            () = tokio::time::sleep(interval) => {}
            changed = subscription.rx.changed() => {
                if changed.is_err() {
                    tokio::time::sleep(interval).await;
                }
            }
        }
    }
}

/// What `tools/call` answered when the answer is a task handle (2026-07-28): the handle's
/// state and the first known state.
pub(super) fn created_2026(value: Value) -> Result<(Arc<HandleState>, TaskState), ClientError> {
    let created: tasks_ext::CreateTaskResult =
        serde_json::from_value(value).map_err(|e| ClientError::decode(methods::TOOLS_CALL, e))?;
    let info = TaskInfo::from(created.task);
    let state = HandleState::new(info.task_id.clone(), Some(info.clone()));
    Ok((state, TaskState::plain(info)))
}

/// Settles a result the typed calls received: a `tools/call` answered with a task handle
/// (2026-07-28) is waited for, anything else passes.
pub(crate) async fn settle(
    inner: &Inner,
    method: &str,
    value: Value,
) -> Result<Value, ClientError> {
    if method != methods::TOOLS_CALL || result_type(&value) != Some(tasks_ext::RESULT_TYPE_TASK) {
        return Ok(value);
    }
    let (state, first) = created_2026(value)?;
    tracing::debug!(task_id = %state.task_id, "tools/call became a task: waiting for it");
    // The seed state counts as the first poll: the next comes after its interval.
    wait_value(inner, &state, Some(first), &mut |_| {}).await
}
