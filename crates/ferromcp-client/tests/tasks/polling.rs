//! Waiting on a task: the server's interval hint honoured and clamped, back-off without one, status
//! notifications ending the wait early, and `TaskHandle::wait_with` reporting each state.

use std::time::Duration;

use crate::common::*;
use crate::script::{BOTH, Script, connect_script, tasks_client, text};
use ferromcp_client::{Client, Lifecycle, TaskConfig};
use ferromcp_types::mcp::TaskStatus;
use serde_json::json;
use tokio::time::Instant;

/// SEP-2663 › Task Polling ("clients SHOULD respect pollIntervalMs") and 2025-11-25 tasks ›
/// Getting Tasks (`pollInterval`): the polls come at the hinted interval (paused clock).
#[tokio::test(start_paused = true)]
async fn polling_honours_the_servers_interval_hint() {
    within(async {
        for era in BOTH {
            let script = Script::new(Some(2_000));
            let client = connect_script(tasks_client(), &script, era).await;
            let task = client.call_tool_as_task("slow", json!({})).await.unwrap();
            let created = Instant::now();
            task.result().await.unwrap();
            let times = script.times_of("tasks/get");
            assert_eq!(times.len(), 3, "{era:?}");
            // Handles poll at once; then the hint's interval between polls.
            assert!(times[0] - created < Duration::from_millis(100), "{era:?}");
            for w in times.windows(2) {
                let gap = w[1] - w[0];
                assert!(
                    gap >= Duration::from_millis(2_000) && gap < Duration::from_millis(2_100),
                    "{era:?}: {gap:?}"
                );
            }
        }
    })
    .await;
}

/// Polling without a hint backs off from the initial interval, doubling; the seed state of
/// an unsolicited task counts as the first poll (paused clock).
#[tokio::test(start_paused = true)]
async fn polling_without_a_hint_backs_off() {
    within(async {
        let script = Script::new(None);
        let client = connect_script(
            Client::builder().tasks(
                TaskConfig::new()
                    .initial_poll_interval(Duration::from_millis(100))
                    .max_poll_interval(Duration::from_millis(300)),
            ),
            &script,
            Lifecycle::Modern,
        )
        .await;
        let start = Instant::now();
        client.call_tool("slow", json!({})).await.unwrap();
        let times: Vec<u128> = script
            .times_of("tasks/get")
            .iter()
            .map(|t| (*t - start).as_millis())
            .collect();
        // 100, then +200, then +300 (the ceiling).
        assert_eq!(times.len(), 3);
        let expect = [100, 300, 600];
        for (got, want) in times.iter().zip(expect) {
            assert!(got.abs_diff(want) < 20, "{times:?}");
        }
    })
    .await;
}

/// The polling limits: a server's hint above `max_poll_interval` is lowered to it, one below
/// `min_poll_interval` raised to it (paused clock).
#[tokio::test(start_paused = true)]
async fn polling_interval_limits_clamp_the_hint() {
    within(async {
        for (hint, want) in [(3_600_000, 1_000), (0, 50)] {
            let script = Script::new(Some(hint));
            let client = connect_script(
                Client::builder().tasks(
                    TaskConfig::new()
                        .min_poll_interval(Duration::from_millis(50))
                        .max_poll_interval(Duration::from_secs(1)),
                ),
                &script,
                Lifecycle::Modern,
            )
            .await;
            client.call_tool("slow", json!({})).await.unwrap();
            let times = script.times_of("tasks/get");
            for w in times.windows(2) {
                let gap = (w[1] - w[0]).as_millis();
                assert!(gap.abs_diff(want) < 20, "hint {hint}: {gap}");
            }
        }
    })
    .await;
}
/// 2025-11-25 tasks › Task Status Notification and SEP-2663 › Task Status Notifications: a
/// status notification ends the wait early, long before the (hour-long) hinted interval.
#[tokio::test]
async fn status_notification_ends_the_wait_early() {
    within(async {
        for era in BOTH {
            let script = Script::new(Some(3_600_000));
            let client = connect_script(
                tasks_client()
                    .tasks(TaskConfig::new().max_poll_interval(Duration::from_secs(3600))),
                &script,
                era,
            )
            .await;
            let started = std::time::Instant::now();
            let r = client
                .call_tool_as_task("notify", json!({}))
                .await
                .unwrap()
                .result()
                .await
                .unwrap();
            assert_eq!(text(&r), "done task-1", "{era:?}");
            assert!(started.elapsed() < Duration::from_secs(10), "{era:?}");
        }
    })
    .await;
}

/// `TaskHandle::wait_with` reports every polled state (2025-11-25 tasks › Task Status /
/// SEP-2663 › Task Status): statuses in order, with the input requests of `input_required`.
#[tokio::test]
async fn wait_with_reports_each_polled_state() {
    within(async {
        for (era, tool, want) in [
            (
                Lifecycle::Handshake,
                "slow",
                vec![
                    TaskStatus::Working,
                    TaskStatus::Working,
                    TaskStatus::Completed,
                ],
            ),
            (
                Lifecycle::Modern,
                "ask",
                vec![
                    TaskStatus::InputRequired,
                    TaskStatus::InputRequired,
                    TaskStatus::Completed,
                ],
            ),
        ] {
            let script = Script::new(Some(1));
            let client = connect_script(tasks_client(), &script, era).await;
            let call = client.call_tool_as_task(tool, json!({})).await.unwrap();
            let mut seen = Vec::new();
            let mut asked = 0;
            call.task()
                .unwrap()
                .wait_with(|s| {
                    seen.push(s.info.status);
                    asked += s.input_requests.as_ref().map_or(0, |r| r.len());
                })
                .await
                .unwrap();
            assert_eq!(seen, want, "{era:?}");
            let want_asked = if era == Lifecycle::Modern { 2 } else { 0 };
            assert_eq!(asked, want_asked, "{era:?}");
        }
    })
    .await;
}
