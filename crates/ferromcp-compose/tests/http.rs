//! Remote backends over HTTP (feature `http`): a ferromcp server over Streamable HTTP and
//! over the 2024-11-05 HTTP+SSE transport, mounted side by side; log records per request
//! (C60, and C63 for HTTP+SSE, whose records name no request).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{DEADLINE, ERAS, backend, front_client, text};
use ferromcp_client::Lifecycle;
use ferromcp_compose::{Backend, Composer};
use ferromcp_http_server::{HttpConfig, HttpServer};
use ferromcp_types::mcp::LoggingLevel;
use serde_json::json;
use tokio::time::timeout;

/// Streamable HTTP and HTTP+SSE backends serve through the front in both eras, questions
/// included (the Streamable HTTP backend negotiates 2026-07-28, the HTTP+SSE one speaks the
/// handshake era and asks with live requests on its stream).
#[tokio::test]
async fn streamable_http_and_http_sse_backends_are_mounted() {
    timeout(DEADLINE, async {
        let server = backend::server("remote");
        let config = HttpConfig::default().legacy_sse(true);
        let http = HttpServer::bind("127.0.0.1:0", server.server().clone(), config)
            .await
            .unwrap();
        let addr = http.local_addr();
        tokio::spawn(http.run());
        let composed = Composer::builder("hub", "1")
            .mount("h", Backend::http(&format!("http://{addr}/mcp")).unwrap())
            .mount(
                "old",
                Backend::legacy_sse(&format!("http://{addr}/sse")).unwrap(),
            )
            .build()
            .await
            .expect("both HTTP backends mount");
        for era in ERAS {
            let client = front_client(composed.server(), era).await;
            for mount in ["h", "old"] {
                let r = client
                    .call_tool(&format!("{mount}_echo"), json!({"text": mount}))
                    .await
                    .unwrap();
                assert_eq!(text(&r), mount);
                let r = client
                    .call_tool(&format!("{mount}_ask"), json!({"label": mount}))
                    .await
                    .unwrap();
                assert_eq!(
                    text(&r),
                    format!("{mount}: A(question for {mount})"),
                    "{era:?}"
                );
            }
            let read = client.read_resource("old+mem://items/3").await.unwrap();
            assert_eq!(read.contents.len(), 1);
            client.shutdown().await;
        }
        composed.shutdown().await;
    })
    .await
    .expect("within the deadline");
}

/// C60: a Streamable HTTP backend's log records come on the forwarded request's own response
/// stream, so with two calls in flight on it each front request (both front eras) gets its
/// own records and only those, whichever era the backend speaks.
#[tokio::test]
async fn c60_an_http_backends_records_reach_the_request_they_came_with() {
    timeout(DEADLINE, async {
        let server = backend::logging_server("remote");
        let http = HttpServer::bind(
            "127.0.0.1:0",
            server.server().clone(),
            HttpConfig::default(),
        )
        .await
        .unwrap();
        let url = format!("http://{}/mcp", http.local_addr());
        tokio::spawn(http.run());
        let composed = Composer::builder("hub", "1")
            .mount("m", Backend::http(&url).unwrap())
            .mount(
                "h",
                Backend::http(&url).unwrap().lifecycle(Lifecycle::Handshake),
            )
            .build()
            .await
            .unwrap();
        for era in ERAS {
            let client = front_client(composed.server(), era).await;
            // At 2026-07-28 a request gets records only when it opts in.
            client.set_logging_level(LoggingLevel::Debug).await.unwrap();
            for mount in ["m", "h"] {
                let tool = format!("{mount}_say");
                let (a, b) = tokio::join!(say(&client, &tool, "a"), say(&client, &tool, "b"));
                let what = format!("backend {mount}, {era:?} front");
                assert_eq!(a, vec!["a-1".to_owned(), "a-2".to_owned()], "{what}");
                assert_eq!(b, vec!["b-1".to_owned(), "b-2".to_owned()], "{what}");
            }
            client.shutdown().await;
        }
        composed.shutdown().await;
    })
    .await
    .expect("within the deadline");
}

/// C63: the 2024-11-05 HTTP+SSE transport carries every server message on the one stream, so
/// a backend's log record names no request (that revision puts the relation nowhere): as over
/// stdio, it goes to the one call in flight on that backend when there is one (that front
/// request gets it), and to the handshake-era front sessions (session-level records, at
/// their levels) while several are.
#[tokio::test]
async fn c63_an_http_sse_backends_records_follow_the_one_call_in_flight() {
    timeout(DEADLINE, async {
        let server = backend::logging_server("remote");
        let config = HttpConfig::default().legacy_sse(true);
        let http = HttpServer::bind("127.0.0.1:0", server.server().clone(), config)
            .await
            .unwrap();
        let url = format!("http://{}/sse", http.local_addr());
        tokio::spawn(http.run());
        let composed = Composer::builder("hub", "1")
            .mount("old", Backend::legacy_sse(&url).unwrap())
            .build()
            .await
            .unwrap();
        for era in ERAS {
            let (client, mut session) = logged_front(composed.server(), era).await;
            client.set_logging_level(LoggingLevel::Debug).await.unwrap();
            // One call in flight: its records reach it.
            let seen = say(&client, "old_note", "one").await;
            assert_eq!(seen, ["one-1", "one-2"], "{era:?} front");
            // Two: the records cannot be told apart; they reach the (handshake-era) session.
            let (a, b) = tokio::join!(say(&client, "old_say", "a"), say(&client, "old_say", "b"));
            assert_eq!((a, b), (Vec::new(), Vec::new()), "{era:?} front");
            if era == ferromcp_types::Era::Handshake {
                let mut records = Vec::new();
                while records.len() < 4 {
                    records.push(session.recv().await.unwrap());
                }
                records.sort();
                assert_eq!(records, ["a-1", "a-2", "b-1", "b-2"]);
            }
            assert!(session.try_recv().is_err(), "{era:?} front");
            client.shutdown().await;
        }
        composed.shutdown().await;
    })
    .await
    .expect("within the deadline");
}

/// A front client in `era` and the session-level log records it receives.
async fn logged_front(
    front: &ferromcp_server::McpServer,
    era: ferromcp_types::Era,
) -> (
    ferromcp_client::Client,
    tokio::sync::mpsc::UnboundedReceiver<String>,
) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let lifecycle = match era {
        ferromcp_types::Era::Handshake => Lifecycle::Handshake,
        ferromcp_types::Era::Modern => Lifecycle::Modern,
    };
    let client = ferromcp_client::Client::builder()
        .lifecycle(lifecycle)
        .on_logging(move |log| {
            let tx = tx.clone();
            async move {
                let _ = tx.send(log.data.as_str().unwrap_or_default().to_owned());
            }
        })
        .connect(ferromcp_client::Connected::new(std::sync::Arc::new(
            front.server().in_process(era),
        )))
        .await
        .unwrap();
    (client, rx)
}

/// Calls `tool` with `label`; the log records that reached this front request.
async fn say(client: &ferromcp_client::Client, tool: &str, label: &str) -> Vec<String> {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = seen.clone();
    let opts = ferromcp_client::RequestOptions::new().on_log(move |log| {
        let data = log.data.as_str().unwrap_or_default().to_owned();
        sink.lock().unwrap().push(data);
    });
    let r = client
        .call_tool_with(tool, json!({"label": label}), opts)
        .await
        .unwrap();
    assert_eq!(text(&r), label);
    seen.lock().unwrap().clone()
}
