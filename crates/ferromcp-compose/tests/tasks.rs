//! Tasks through the front (F22): a backend's task-required tool shows its task support on
//! the front and completes as a front task in both eras; cancelling the front task cancels
//! the backend's; a backend that dies mid-task fails the front task naming it; the forwarded
//! tasks per backend are bounded (`Backend::max_tasks`); a plain front call a 2026-07-28
//! backend turns into a task is followed as one (C59).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use common::{DEADLINE, ERAS, backend, text};
use ferromcp_client::{
    Client, ClientError, Connected, Lifecycle, RequestOptions, TaskConfig, TaskHandle, ToolCall,
};
use ferromcp_compose::{Backend, Composer, DEFAULT_MAX_TASKS_PER_BACKEND};
use ferromcp_server::McpServer;
use ferromcp_types::Era;
use ferromcp_types::mcp::TaskSupport;
use serde_json::json;
use tokio::time::timeout;

const BACKEND_BIN: &str = env!("CARGO_BIN_EXE_ferromcp-compose-backend");

/// A client of `front` in `era` that uses tasks.
async fn task_client(front: &McpServer, era: Era) -> Client {
    let lifecycle = match era {
        Era::Handshake => Lifecycle::Handshake,
        Era::Modern => Lifecycle::Modern,
    };
    Client::builder()
        .lifecycle(lifecycle)
        .tasks(
            TaskConfig::new()
                .initial_poll_interval(Duration::from_millis(20))
                .min_poll_interval(Duration::from_millis(10)),
        )
        .connect(Connected::new(Arc::new(front.server().in_process(era))))
        .await
        .expect("the front client connects")
}

/// Starts `tool` as a front task.
async fn start(client: &Client, tool: &str, ms: u64, label: &str) -> TaskHandle {
    match client
        .call_tool_as_task(tool, json!({"ms": ms, "text": label}))
        .await
        .unwrap()
    {
        ToolCall::Task(h) => h,
        other => panic!("expected a front task, got {other:?}"),
    }
}

fn message(e: ClientError) -> String {
    match e {
        ClientError::Protocol(e) => e.message.to_string(),
        other => other.to_string(),
    }
}

#[tokio::test]
async fn f22_a_task_required_backend_tool_completes_through_the_front() {
    timeout(DEADLINE, async {
        // A 2025-11-25 backend lists its tools' task support: the front's tool shows it, and
        // the front task follows the backend task (its status message too), in both eras.
        let server = backend::task_server("t", Arc::default());
        let composed = Composer::builder("hub", "1")
            .mount("t", Backend::in_process_era(&server, Era::Handshake))
            .build()
            .await
            .unwrap();
        for era in ERAS {
            let client = task_client(composed.server(), era).await;
            let tools = client.list_all_tools().await.unwrap();
            let job = tools.iter().find(|t| t.name == "t_job").unwrap();
            if era == Era::Handshake {
                let support = job.execution.as_ref().and_then(|e| e.task_support);
                assert_eq!(support, Some(TaskSupport::Required));
            }
            let handle = start(&client, "t_job", 2000, "x").await;
            let mut seen = Vec::new();
            let r = handle
                .wait_with(|s| seen.extend(s.info.status_message.clone()))
                .await
                .unwrap();
            assert_eq!(text(&r), "done: x", "{era:?} in front");
            assert!(
                seen.iter().any(|m| m == "working on x"),
                "the backend's status reaches the front task ({era:?}): {seen:?}"
            );
            client.shutdown().await;
        }
        composed.shutdown().await;
        // A 2026-07-28 backend's listing carries no task support (the server decides per
        // call): a plain call through the front completes with the task the backend makes of
        // it (see C56 for front tasks).
        let server = backend::task_server("t", Arc::default());
        let composed = Composer::builder("hub", "1")
            .mount("t", Backend::in_process_era(&server, Era::Modern))
            .build()
            .await
            .unwrap();
        for era in ERAS {
            let client = task_client(composed.server(), era).await;
            let r = client
                .call_tool("t_job", json!({"ms": 100, "text": "y"}))
                .await
                .unwrap();
            assert_eq!(text(&r), "done: y", "{era:?} in front");
            client.shutdown().await;
        }
        composed.shutdown().await;
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn f22_cancelling_the_front_task_cancels_the_backend_task() {
    timeout(DEADLINE, async {
        for era in ERAS {
            let cancelled = Arc::new(AtomicBool::new(false));
            let server = backend::task_server("t", cancelled.clone());
            let composed = Composer::builder("hub", "1")
                .mount("t", Backend::in_process_era(&server, Era::Handshake))
                .build()
                .await
                .unwrap();
            let client = task_client(composed.server(), era).await;
            let handle = start(&client, "t_job", 60_000, "long").await;
            tokio::time::sleep(Duration::from_millis(300)).await;
            handle.cancel().await.unwrap();
            while !cancelled.load(Ordering::SeqCst) {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            client.shutdown().await;
            composed.shutdown().await;
        }
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn f22_a_backend_dying_mid_task_fails_the_front_task_naming_it() {
    timeout(DEADLINE, async {
        let composed = Composer::builder("hub", "1")
            .mount(
                "s",
                Backend::command(BACKEND_BIN, ["--tasks"]).lifecycle(Lifecycle::Handshake),
            )
            .build()
            .await
            .unwrap();
        let client = task_client(composed.server(), Era::Handshake).await;
        let handle = start(&client, "s_job", 60_000, "doomed").await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let _ = client.call_tool("s_die", json!({})).await;
        let e = handle.wait().await.unwrap_err();
        let m = message(e);
        assert!(m.contains("backend \"s\""), "{m}");
        client.shutdown().await;
        composed.shutdown().await;
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn s97_forwarded_tasks_per_backend_are_bounded() {
    assert_eq!(DEFAULT_MAX_TASKS_PER_BACKEND, 64);
    timeout(DEADLINE, async {
        let server = backend::task_server("t", Arc::default());
        let composed = Composer::builder("hub", "1")
            .mount(
                "t",
                Backend::in_process_era(&server, Era::Handshake).max_tasks(1),
            )
            .build()
            .await
            .unwrap();
        let client = task_client(composed.server(), Era::Handshake).await;
        let first = start(&client, "t_job", 60_000, "one").await;
        tokio::time::sleep(Duration::from_millis(200)).await;
        let second = start(&client, "t_job", 0, "two").await;
        let m = message(second.wait().await.unwrap_err());
        assert!(m.contains("Backend::max_tasks"), "{m}");
        first.cancel().await.unwrap();
        // Once the first ends, its slot is free again.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let third = start(&client, "t_job", 0, "three").await;
        assert_eq!(text(&third.wait().await.unwrap()), "done: three");
        client.shutdown().await;
        composed.shutdown().await;
    })
    .await
    .unwrap();
}

/// C55: a 2025-11-25 backend's task-optional tool called plainly through the front is a plain
/// backend call (it takes no `Backend::max_tasks` place: none is left here); called as a front
/// task it runs as a backend task. Both front eras.
#[tokio::test]
async fn c55_an_optional_task_tool_runs_as_a_backend_task_only_when_the_front_asked() {
    timeout(DEADLINE, async {
        let server = backend::task_server("t", Arc::default());
        let composed = Composer::builder("hub", "1")
            .mount(
                "t",
                Backend::in_process_era(&server, Era::Handshake).max_tasks(1),
            )
            .build()
            .await
            .unwrap();
        for era in ERAS {
            // The one task place is taken for the whole round.
            let tasks = task_client(composed.server(), era).await;
            let long = start(&tasks, "t_job", 60_000, "long").await;
            tokio::time::sleep(Duration::from_millis(200)).await;
            let plain = common::front_client(composed.server(), era).await;
            let r = plain.call_tool("t_maybe", json!({})).await.unwrap();
            assert_eq!(text(&r), "plain", "{era:?} in front");
            plain.shutdown().await;
            long.cancel().await.unwrap();
            tokio::time::sleep(Duration::from_millis(300)).await;
            match tasks.call_tool_as_task("t_maybe", json!({})).await.unwrap() {
                ToolCall::Task(h) => assert_eq!(text(&h.wait().await.unwrap()), "task"),
                other => panic!("expected a front task ({era:?}), got {other:?}"),
            }
            tasks.shutdown().await;
        }
        composed.shutdown().await;
    })
    .await
    .unwrap();
}

/// C56: a 2026-07-28 backend that announces the tasks extension (its listing carries no task
/// support) has its tools listed `optional` on a 2025-11-25 front; a front task (both front
/// eras) follows the task the backend makes of the call: its status message, its result, and
/// cancelling the front task cancels the backend's.
#[tokio::test]
async fn c56_a_modern_backends_task_tools_work_as_front_tasks() {
    timeout(DEADLINE, async {
        for era in ERAS {
            let cancelled = Arc::new(AtomicBool::new(false));
            let server = backend::task_server("t", cancelled.clone());
            let composed = Composer::builder("hub", "1")
                .mount("t", Backend::in_process_era(&server, Era::Modern))
                .build()
                .await
                .unwrap();
            let client = task_client(composed.server(), era).await;
            if era == Era::Handshake {
                let tools = client.list_all_tools().await.unwrap();
                for name in ["t_job", "t_maybe"] {
                    let tool = tools.iter().find(|t| t.name == name).unwrap();
                    let support = tool.execution.as_ref().and_then(|e| e.task_support);
                    assert_eq!(support, Some(TaskSupport::Optional), "{name}");
                }
            }
            let handle = start(&client, "t_job", 500, "x").await;
            let mut seen = Vec::new();
            let r = handle
                .wait_with(|s| seen.extend(s.info.status_message.clone()))
                .await
                .unwrap();
            assert_eq!(text(&r), "done: x", "{era:?} in front");
            assert!(
                seen.iter().any(|m| m == "working on x"),
                "the backend's status reaches the front task ({era:?}): {seen:?}"
            );
            let handle = start(&client, "t_job", 60_000, "long").await;
            tokio::time::sleep(Duration::from_millis(300)).await;
            handle.cancel().await.unwrap();
            while !cancelled.load(Ordering::SeqCst) {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            client.shutdown().await;
            composed.shutdown().await;
        }
    })
    .await
    .unwrap();
}

/// F27: a task-capable backend mounted while the front serves (the front was built with no
/// task-capable tool) works as front tasks: the front serves tasks whatever it was built with.
#[tokio::test]
async fn f27_a_task_backend_mounted_at_run_time_serves_front_tasks() {
    timeout(DEADLINE, async {
        let composed = Composer::builder("hub", "1").build().await.unwrap();
        let server = backend::task_server("t", Arc::default());
        composed
            .mount("t", Backend::in_process_era(&server, Era::Handshake))
            .await
            .unwrap();
        for era in ERAS {
            let client = task_client(composed.server(), era).await;
            let handle = start(&client, "t_job", 0, "late").await;
            assert_eq!(text(&handle.wait().await.unwrap()), "done: late", "{era:?}");
            client.shutdown().await;
        }
        composed.shutdown().await;
    })
    .await
    .unwrap();
}

/// C59: a plain front call (both front eras) that a 2026-07-28 backend turns into a task is
/// followed as the backend task it is: its status messages reach the front call as progress
/// notifications, and cancelling the front call cancels the backend task (`tasks/cancel`).
#[tokio::test]
async fn c59_a_plain_call_a_modern_backend_makes_a_task_shows_its_status_and_cancels_it() {
    timeout(DEADLINE, async {
        for era in ERAS {
            let cancelled = Arc::new(AtomicBool::new(false));
            let server = backend::task_server("t", cancelled.clone());
            let composed = Composer::builder("hub", "1")
                .mount("t", Backend::in_process_era(&server, Era::Modern))
                .build()
                .await
                .unwrap();
            let client = common::front_client(composed.server(), era).await;
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
            let opts = RequestOptions::new().on_progress(move |p| {
                let _ = tx.send(p.message.unwrap_or_default());
            });
            let r = client
                .call_tool_with("t_job", json!({"ms": 800, "text": "x"}), opts)
                .await
                .unwrap();
            assert_eq!(text(&r), "done: x", "{era:?} in front");
            let mut seen = Vec::new();
            while let Ok(m) = rx.try_recv() {
                seen.push(m);
            }
            assert!(
                seen.iter().any(|m| m == "working on x"),
                "the backend task's status reaches the plain front call ({era:?}): {seen:?}"
            );
            // The front call given up (its future dropped: the front request is cancelled).
            let gave_up = timeout(
                Duration::from_millis(400),
                client.call_tool("t_job", json!({"ms": 60_000, "text": "long"})),
            )
            .await;
            assert!(gave_up.is_err(), "{era:?}: {gave_up:?}");
            while !cancelled.load(Ordering::SeqCst) {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            client.shutdown().await;
            composed.shutdown().await;
        }
    })
    .await
    .unwrap();
}

/// C59: the task a 2026-07-28 backend makes of a plain front call takes a
/// `Backend::max_tasks` place while it runs: with none left the call fails naming the limit
/// (and the backend task is cancelled); once the running one ends the place is free again.
#[tokio::test]
async fn c59_a_plain_call_a_modern_backend_makes_a_task_counts_against_max_tasks() {
    timeout(DEADLINE, async {
        let cancelled = Arc::new(AtomicBool::new(false));
        let server = backend::task_server("t", cancelled.clone());
        let composed = Composer::builder("hub", "1")
            .mount(
                "t",
                Backend::in_process_era(&server, Era::Modern).max_tasks(1),
            )
            .build()
            .await
            .unwrap();
        let client = common::front_client(composed.server(), Era::Modern).await;
        let long = {
            let client = client.clone();
            tokio::spawn(async move {
                client
                    .call_tool("t_job", json!({"ms": 60_000, "text": "long"}))
                    .await
            })
        };
        tokio::time::sleep(Duration::from_millis(300)).await;
        let e = client
            .call_tool("t_job", json!({"ms": 0, "text": "two"}))
            .await
            .unwrap_err();
        let m = message(e);
        assert!(m.contains("Backend::max_tasks"), "{m}");
        // Ending the first call (its front request cancelled) frees the place.
        long.abort();
        while !cancelled.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let mut done = None;
        for _ in 0..50 {
            match client
                .call_tool("t_job", json!({"ms": 0, "text": "three"}))
                .await
            {
                Ok(r) => {
                    done = Some(r);
                    break;
                }
                Err(e) => {
                    let m = message(e);
                    assert!(m.contains("Backend::max_tasks"), "{m}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
        assert_eq!(text(&done.expect("the place is freed")), "done: three");
        client.shutdown().await;
        composed.shutdown().await;
    })
    .await
    .unwrap();
}
