//! A stored task as each era's wire types show it.

#[allow(
    clippy::wildcard_imports,
    reason = "a part of the tasks module: its imports and helpers"
)]
use super::*;

pub(super) fn core_task(r: &TaskRecord) -> Task {
    let mut t = Task::new(
        r.task_id.clone(),
        r.status,
        r.created_at.clone(),
        r.last_updated_at.clone(),
        Some(r.ttl_ms),
    )
    .with_poll_interval(r.poll_interval_ms);
    t.status_message.clone_from(&r.status_message);
    t
}

pub(super) fn ext_task(r: &TaskRecord) -> tasks_ext::Task {
    let mut t = tasks_ext::Task::new(
        r.task_id.clone(),
        r.status,
        r.created_at.clone(),
        r.last_updated_at.clone(),
        Some(r.ttl_ms),
    )
    .with_poll_interval_ms(r.poll_interval_ms);
    t.status_message.clone_from(&r.status_message);
    t
}

/// The `tasks/get` answer (and `notifications/tasks` params) at 2026-07-28.
pub(super) fn detailed(r: &TaskRecord) -> tasks_ext::DetailedTask {
    let mut d = tasks_ext::DetailedTask::new(ext_task(r));
    match r.status {
        TaskStatus::InputRequired if !r.input_requests.is_empty() => {
            d.input_requests = Some(r.input_requests.clone());
        }
        TaskStatus::Completed => d.result.clone_from(&r.result),
        TaskStatus::Failed => d.error.clone_from(&r.error),
        _ => {}
    }
    d
}

pub(super) fn status_name(s: TaskStatus) -> String {
    serde_json::to_value(s)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}
