//! Task machinery shared by the client and its dispatcher handler: the tools' declared task
//! support and the waiters that status notifications wake.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use ferromcp_types::jsonrpc::Payload;
use ferromcp_types::mcp::TaskSupport;
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::watch;

use crate::client::lock;

/// Task machinery shared by the client and its dispatcher handler: the tools' declared task
/// support (from `tools/list` results) and the waiters woken by status notifications.
#[derive(Default)]
pub(crate) struct TaskRuntime {
    support: Mutex<HashMap<String, Option<TaskSupport>>>,
    waiters: Mutex<HashMap<String, watch::Sender<()>>>,
    /// The tasks hosted for the server (`crate::hosted_tasks`), when enabled; set at connect.
    pub(crate) hosted: std::sync::OnceLock<Arc<crate::hosted_tasks::HostedTasks>>,
}

impl TaskRuntime {
    /// Records the `execution.taskSupport` of every tool of a `tools/list` result.
    pub(crate) fn observe_tools(&self, tools: &[Value]) {
        let mut support = lock(&self.support);
        for tool in tools {
            if let Some(name) = tool.get("name").and_then(Value::as_str) {
                let declared = tool
                    .get("execution")
                    .and_then(|e| e.get("taskSupport"))
                    .and_then(|v| TaskSupport::deserialize(v).ok());
                support.insert(name.to_owned(), declared);
            }
        }
    }

    /// The task support a seen `tools/list` declared for `tool`: `None` when the tool was
    /// not seen, `Some(None)` when it declared none.
    pub(super) fn support_of(&self, tool: &str) -> Option<Option<TaskSupport>> {
        lock(&self.support).get(tool).copied()
    }

    /// Wakes whoever waits on the task a status notification names.
    pub(crate) fn on_status_notification(&self, params: Option<&Payload>) {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Named {
            task_id: String,
        }
        let Some(named) = params.and_then(|p| p.parse::<Named>().ok()) else {
            return;
        };
        if let Some(tx) = lock(&self.waiters).get(&named.task_id) {
            tx.send_replace(());
        }
    }

    pub(super) fn subscribe(self: &Arc<Self>, task_id: &str) -> Subscription {
        let mut waiters = lock(&self.waiters);
        let rx = waiters
            .entry(task_id.to_owned())
            .or_insert_with(|| watch::channel(()).0)
            .subscribe();
        Subscription {
            runtime: self.clone(),
            task_id: task_id.to_owned(),
            rx,
        }
    }
}

/// A waiter's registration; removes the entry when the last waiter of a task leaves.
pub(super) struct Subscription {
    runtime: Arc<TaskRuntime>,
    task_id: String,
    pub(super) rx: watch::Receiver<()>,
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let mut waiters = lock(&self.runtime.waiters);
        // Our receiver is still alive here: the last one counts 1.
        if waiters
            .get(&self.task_id)
            .is_some_and(|tx| tx.receiver_count() <= 1)
        {
            waiters.remove(&self.task_id);
        }
    }
}
