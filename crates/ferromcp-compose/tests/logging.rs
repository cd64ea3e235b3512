//! `logging/setLevel` through the front (C58): a handshake-era backend is sent the most
//! verbose level the live front sessions set, each front session still gets only the records
//! at its own level, and a 2026-07-28 backend gets the front request's level per request.
//! With several calls in flight, each backend record reaches the front request it belongs to,
//! or, when the backend names none (stdio), the front sessions (C60).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{DEADLINE, backend, text};
use ferromcp_client::{Client, Connected, Lifecycle, RequestOptions};
use ferromcp_compose::{Backend, Composer};
use ferromcp_server::{McpServer, RequestContext};
use ferromcp_types::Era;
use ferromcp_types::mcp::LoggingLevel;
use serde_json::json;
use tokio::sync::mpsc;
use tokio::time::timeout;

const BACKEND_BIN: &str = env!("CARGO_BIN_EXE_ferromcp-compose-backend");

/// A backend whose `log` tool logs `d` (debug), `i` (info) and `e` (error), in that order,
/// and answers with the level it lets through: its session's (`logging/setLevel`, handshake
/// era) or the request's (2026-07-28), as `debug:info`.
fn noisy() -> McpServer {
    McpServer::builder("n", "1")
        .tool("log", |ctx: RequestContext| async move {
            for (level, data) in [
                (LoggingLevel::Debug, "d"),
                (LoggingLevel::Info, "i"),
                (LoggingLevel::Error, "e"),
            ] {
                ctx.log(level, None, json!(data)).await;
            }
            let peer = ctx.peer();
            format!(
                "{}:{}",
                peer.log_enabled(LoggingLevel::Debug),
                peer.log_enabled(LoggingLevel::Info)
            )
        })
        .build()
        .unwrap()
}

/// A front client in `era` and the log records it receives.
async fn logged_client(front: &McpServer, era: Era) -> (Client, mpsc::UnboundedReceiver<String>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let lifecycle = match era {
        Era::Handshake => Lifecycle::Handshake,
        Era::Modern => Lifecycle::Modern,
    };
    let client = Client::builder()
        .lifecycle(lifecycle)
        .on_logging(move |log| {
            let tx = tx.clone();
            async move {
                let _ = tx.send(log.data.as_str().unwrap_or_default().to_owned());
            }
        })
        .connect(Connected::new(Arc::new(front.server().in_process(era))))
        .await
        .unwrap();
    (client, rx)
}

/// Calls `n_log` and returns its answer and the records received up to the last one (`e`).
async fn call(client: &Client, rx: &mut mpsc::UnboundedReceiver<String>) -> (String, Vec<String>) {
    let r = client.call_tool("n_log", json!({})).await.unwrap();
    let mut seen = Vec::new();
    while seen.last().map(String::as_str) != Some("e") {
        seen.push(rx.recv().await.unwrap());
    }
    (text(&r), seen)
}

#[tokio::test]
async fn c58_the_most_verbose_front_level_reaches_a_handshake_backend() {
    timeout(DEADLINE, async {
        let server = noisy();
        let composed = Composer::builder("hub", "1")
            .mount("n", Backend::in_process_era(&server, Era::Handshake))
            .build()
            .await
            .unwrap();
        let (a, mut a_logs) = logged_client(composed.server(), Era::Handshake).await;
        let (b, mut b_logs) = logged_client(composed.server(), Era::Handshake).await;
        // No level set anywhere: the backend sends everything.
        assert_eq!(
            call(&a, &mut a_logs).await,
            ("true:true".into(), vec!["d".into(), "i".into(), "e".into()])
        );
        a.set_logging_level(LoggingLevel::Error).await.unwrap();
        let (level, seen) = call(&a, &mut a_logs).await;
        assert_eq!(level, "false:false", "the backend was sent error");
        assert_eq!(seen, ["e"]);
        b.set_logging_level(LoggingLevel::Info).await.unwrap();
        let (level, seen) = call(&b, &mut b_logs).await;
        assert_eq!(
            level, "false:true",
            "the backend was sent the most verbose level, info"
        );
        assert_eq!(seen, ["i", "e"]);
        // The backend sends info now, but A still gets only errors.
        let (level, seen) = call(&a, &mut a_logs).await;
        assert_eq!(level, "false:true");
        assert_eq!(seen, ["e"]);
        // B leaves: the backend goes back to A's level.
        b.shutdown().await;
        loop {
            let (level, _) = call(&a, &mut a_logs).await;
            if level == "false:false" {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // A backend mounted now is sent the level too.
        let late = noisy();
        composed
            .mount("m", Backend::in_process_era(&late, Era::Handshake))
            .await
            .unwrap();
        let r = a.call_tool("m_log", json!({})).await.unwrap();
        assert_eq!(text(&r), "false:false");
        a.shutdown().await;
        composed.shutdown().await;
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn c58_a_modern_backend_gets_the_front_requests_level() {
    timeout(DEADLINE, async {
        let server = noisy();
        let composed = Composer::builder("hub", "1")
            .mount("n", Backend::in_process_era(&server, Era::Modern))
            .build()
            .await
            .unwrap();
        // A handshake front session's level travels with each forwarded request.
        let (a, mut a_logs) = logged_client(composed.server(), Era::Handshake).await;
        a.set_logging_level(LoggingLevel::Info).await.unwrap();
        let (level, seen) = call(&a, &mut a_logs).await;
        assert_eq!(level, "false:true");
        assert_eq!(seen, ["i", "e"]);
        // A 2026-07-28 front request's own opt-in does too; without one, nothing is logged.
        let (m, _m_logs) = logged_client(composed.server(), Era::Modern).await;
        let r = m.call_tool("n_log", json!({})).await.unwrap();
        assert_eq!(text(&r), "false:false");
        m.set_logging_level(LoggingLevel::Debug).await.unwrap();
        let r = m.call_tool("n_log", json!({})).await.unwrap();
        assert_eq!(text(&r), "true:true");
        a.shutdown().await;
        m.shutdown().await;
        composed.shutdown().await;
    })
    .await
    .unwrap();
}

/// Calls `tool` with `label`, collecting the log records that reach this front request
/// (`RequestOptions::on_log`), and returns its answer and those records.
async fn say(client: &Client, tool: &str, label: &str) -> (String, Vec<String>) {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = seen.clone();
    let opts = RequestOptions::new().on_log(move |log| {
        let data = log.data.as_str().unwrap_or_default().to_owned();
        sink.lock().unwrap().push(data);
    });
    let r = client
        .call_tool_with(tool, json!({"label": label}), opts)
        .await
        .unwrap();
    let seen = seen.lock().unwrap().clone();
    (text(&r), seen)
}

/// C60: with two calls in flight on one backend, each logging, the backend's records go to
/// the front request they belong to (an in-process backend in either era relates each record
/// to its request; so does a Streamable HTTP one, by the response stream it comes on): each
/// front request (both front eras) sees its own records and only those, none is lost.
#[tokio::test]
async fn c60_concurrent_calls_each_get_their_own_backend_log_records() {
    timeout(DEADLINE, async {
        for backend_era in common::ERAS {
            let server = backend::logging_server("l");
            let composed = Composer::builder("hub", "1")
                .mount("l", Backend::in_process_era(&server, backend_era))
                .build()
                .await
                .unwrap();
            for era in common::ERAS {
                let (client, _logs) = logged_client(composed.server(), era).await;
                // At 2026-07-28 a request gets records only when it opts in.
                client.set_logging_level(LoggingLevel::Debug).await.unwrap();
                let (a, b) = tokio::join!(say(&client, "l_say", "a"), say(&client, "l_say", "b"));
                let what = format!("{backend_era:?} backend, {era:?} front");
                assert_eq!(a, ("a".into(), vec!["a-1".into(), "a-2".into()]), "{what}");
                assert_eq!(b, ("b".into(), vec!["b-1".into(), "b-2".into()]), "{what}");
                client.shutdown().await;
            }
            composed.shutdown().await;
        }
    })
    .await
    .unwrap();
}

/// C60: a stdio backend's records name no request: with two calls in flight, a record goes to
/// the front sessions as a session-level record (each at its own level), never dropped; a
/// session whose level is above the record's does not get it.
#[tokio::test]
async fn c60_unrelated_backend_log_records_reach_the_front_sessions() {
    timeout(DEADLINE, async {
        let composed = Composer::builder("hub", "1")
            .mount(
                "s",
                Backend::command(BACKEND_BIN, ["--logging"]).lifecycle(Lifecycle::Handshake),
            )
            .build()
            .await
            .unwrap();
        let (client, mut logs) = logged_client(composed.server(), Era::Handshake).await;
        client.set_logging_level(LoggingLevel::Info).await.unwrap();
        let (quiet, mut quiet_logs) = logged_client(composed.server(), Era::Handshake).await;
        quiet.set_logging_level(LoggingLevel::Error).await.unwrap();
        let (a, b) = tokio::join!(
            client.call_tool("s_say", json!({"label": "a"})),
            client.call_tool("s_say", json!({"label": "b"}))
        );
        assert_eq!(
            (text(&a.unwrap()), text(&b.unwrap())),
            ("a".into(), "b".into())
        );
        let mut seen = Vec::new();
        while seen.len() < 4 {
            seen.push(logs.recv().await.unwrap());
        }
        seen.sort();
        assert_eq!(seen, ["a-1", "a-2", "b-1", "b-2"]);
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(
            quiet_logs.try_recv().is_err(),
            "info records stay below error"
        );
        client.shutdown().await;
        quiet.shutdown().await;
        composed.shutdown().await;
    })
    .await
    .unwrap();
}
