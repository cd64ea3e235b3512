//! `RequestOptions::on_log`: the log records a server sends in relation to a request reach
//! that request's callback, with several requests in flight, in both eras: in process (the
//! server's handler sent them while handling it) and over Streamable HTTP (they came on the
//! request's own response stream; 2025-11-25 basic/transports › Sending Messages to the
//! Server, item 6: messages on a POST's SSE stream relate to that request). Over stdio
//! nothing names the request: the records reach the notification handlers, as before (see
//! ferromcp-compose's tests/logging.rs, C60, with a stdio backend).

#![cfg(feature = "http")]
#![allow(clippy::unwrap_used, clippy::panic)]

mod http_support;

use std::sync::{Arc, Mutex};

use ferromcp_client::{Client, ClientBuilder, Connected, HttpTransport, Lifecycle, RequestOptions};
use ferromcp_http_server::HttpConfig as ServerConfig;
use ferromcp_server::mcp_server::RawArgs;
use ferromcp_server::{McpServer, RequestContext};
use ferromcp_types::Era;
use ferromcp_types::mcp::LoggingLevel;
use http_support::{Flags, first_text, start_with, within};
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// `say {label}` logs `{label}-1`, waits for a second `say` to have logged too, logs
/// `{label}-2` and answers `label`.
fn server() -> McpServer {
    let meet = Arc::new(tokio::sync::Barrier::new(2));
    McpServer::builder("logs", "1.0.0")
        .tool("say", move |ctx: RequestContext, RawArgs(a): RawArgs| {
            let meet = meet.clone();
            async move {
                let label = a
                    .get("label")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                ctx.log(LoggingLevel::Info, None, json!(format!("{label}-1")))
                    .await;
                meet.wait().await;
                ctx.log(LoggingLevel::Info, None, json!(format!("{label}-2")))
                    .await;
                label
            }
        })
        .build()
        .unwrap()
}

/// A client in `era` and the records its notification handlers receive.
fn builder(era: Era) -> (ClientBuilder, mpsc::UnboundedReceiver<String>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let builder = Client::builder()
        .lifecycle(match era {
            Era::Modern => Lifecycle::Modern,
            _ => Lifecycle::Handshake,
        })
        .on_logging(move |log| {
            let tx = tx.clone();
            async move {
                let _ = tx.send(log.data.as_str().unwrap_or_default().to_owned());
            }
        });
    (builder, rx)
}

/// Calls `say` with `label`; its answer and the records its `on_log` received.
async fn say(client: &Client, label: &str) -> (String, Vec<String>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let opts = RequestOptions::new().on_log(move |log| {
        sink.lock()
            .unwrap()
            .push(log.data.as_str().unwrap_or_default().to_owned());
    });
    let r = client
        .call_tool_with("say", json!({"label": label}), opts)
        .await
        .unwrap();
    let seen = seen.lock().unwrap().clone();
    (first_text(&r), seen)
}

/// Two calls in flight at once, each gets its own records and only those.
async fn each_gets_its_own(client: &Client, what: &str) {
    // At 2026-07-28 a request gets records only when it opts in.
    client.set_logging_level(LoggingLevel::Debug).await.unwrap();
    let (a, b) = tokio::join!(say(client, "a"), say(client, "b"));
    assert_eq!(a, ("a".into(), vec!["a-1".into(), "a-2".into()]), "{what}");
    assert_eq!(b, ("b".into(), vec!["b-1".into(), "b-2".into()]), "{what}");
}

#[tokio::test]
async fn related_log_records_reach_their_requests_callback() {
    within(Box::pin(async {
        let s = server();
        let srv = start_with(
            s.server().clone(),
            ServerConfig::default(),
            Arc::new(Flags::default()),
        )
        .await;
        for era in [Era::Handshake, Era::Modern] {
            let (b, mut handled) = builder(era);
            let client = b
                .connect(Connected::new(Arc::new(s.server().in_process(era))))
                .await
                .unwrap();
            each_gets_its_own(&client, &format!("in process, {era:?}")).await;
            client.shutdown().await;
            assert!(
                handled.try_recv().is_err(),
                "in process, {era:?}: none left"
            );

            let (b, mut handled) = builder(era);
            let client = b
                .connect(HttpTransport::new(srv.url()).unwrap())
                .await
                .unwrap();
            each_gets_its_own(&client, &format!("HTTP, {era:?}")).await;
            client.shutdown().await;
            assert!(handled.try_recv().is_err(), "HTTP, {era:?}: none left");
        }
    }))
    .await;
}
