//! `Client::request_raw`: params sent as the caller's text, the result returned as the
//! server's, on the path a typed request takes (envelope, progress, timeouts, `resultType`
//! checks), in both eras.
//!
//! Spec: 2025-11-25 / 2026-07-28 server/tools (`tools/call`); basic/utilities/progress; the
//! 2026-07-28 request envelope (`_meta` `io.modelcontextprotocol/*`) and `resultType` rule
//! (schema "Result").

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use ferromcp_client::{Client, ClientError, Lifecycle, RequestOptions};
use ferromcp_dispatch::{DirectDispatcher, Dispatcher, handler_fn};
use ferromcp_types::jsonrpc::{ErrorCode, Payload, RawJson};
use ferromcp_types::mcp::{LoggingLevel, Meta};
use serde_json::{Value, json};

fn raw(text: &str) -> RawJson {
    RawJson::from_string(text.to_owned()).unwrap()
}

/// A server that answers the lifecycle of `era` and every other request with `answer`,
/// keeping the params text of each `tools/call` it got.
fn recording(
    modern: bool,
    answer: &'static str,
) -> (Arc<Mutex<Vec<String>>>, ferromcp_client::Connected) {
    recording_on(modern, answer, false)
}

/// [`recording`] over a JSON-RPC connection, or (`direct`) an in-process `DirectDispatcher`.
fn recording_on(
    modern: bool,
    answer: &'static str,
    direct: bool,
) -> (Arc<Mutex<Vec<String>>>, ferromcp_client::Connected) {
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let keep = seen.clone();
    let server = handler_fn(move |_ctx, method, params: Option<Payload>| {
        let keep = keep.clone();
        async move {
            match method.as_str() {
                "server/discover" if modern => Ok(Payload::from(json!({
                    "resultType": "complete",
                    "supportedVersions": ["2026-07-28"],
                    "capabilities": {"tools": {}},
                }))),
                "server/discover" => Err(ferromcp_types::jsonrpc::ErrorObject::method_not_found(
                    "server/discover",
                )
                .into()),
                "initialize" => Ok(Payload::from(json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "s", "version": "1"},
                }))),
                _ => {
                    let text = params.map(|p| p.to_json_string()).unwrap_or_default();
                    keep.lock().unwrap().push(text);
                    Ok(Payload::Raw(raw(answer)))
                }
            }
        }
    })
    .into_arc();
    if !direct {
        return (seen, raw_server(server));
    }
    let (client_end, server_end) = DirectDispatcher::pair();
    tokio::spawn(async move { server_end.run(server).await });
    (seen, ferromcp_client::Connected::new(Arc::new(client_end)))
}

/// The params text goes out as written (members in the caller's order, which a tree would
/// sort), with the envelope and the options' `_meta` in front at 2026-07-28; the result text
/// comes back as the server wrote it.
#[tokio::test]
async fn params_and_result_stay_text_in_both_eras() {
    within(async {
        let answer = r#"{"zeta":1,"content":[{"type":"text","text":"3"}],"alpha":2}"#;
        for modern in [false, true] {
            let (seen, connected) = recording(modern, answer);
            let client = Client::builder()
                .lifecycle(if modern {
                    Lifecycle::Auto
                } else {
                    Lifecycle::Handshake
                })
                .connect(connected)
                .await
                .unwrap();
            let params = raw(r#"{"name":"add","arguments":{"b":2,"a":1}}"#);
            let opts = RequestOptions::new().meta(Meta::new().with_log_level(LoggingLevel::Info));
            let opts = if modern { opts } else { RequestOptions::new() };
            let got = client
                .request_raw("tools/call", params, opts)
                .await
                .unwrap();
            assert_eq!(got.get(), answer, "modern={modern}");
            let sent = seen.lock().unwrap().pop().unwrap();
            assert!(
                sent.ends_with(r#""name":"add","arguments":{"b":2,"a":1}}"#),
                "modern={modern}: {sent}"
            );
            let sent: Value = serde_json::from_str(&sent).unwrap();
            let meta = &sent["_meta"];
            if modern {
                assert_eq!(
                    meta["io.modelcontextprotocol/protocolVersion"],
                    "2026-07-28"
                );
                assert!(
                    meta["io.modelcontextprotocol/clientInfo"]["name"].is_string(),
                    "{meta}"
                );
                assert!(
                    meta["io.modelcontextprotocol/clientCapabilities"].is_object(),
                    "{meta}"
                );
                assert_eq!(meta["io.modelcontextprotocol/logLevel"], "info");
            } else {
                assert_eq!(meta, &json!({}), "{sent}");
            }
        }
    })
    .await;
}

/// C66: at 2026-07-28 a raw request with progress goes out with one `_meta`, first, holding
/// the progress token and then the envelope's members, and the caller's members after it as
/// written (the dispatcher writes both into the text in one copy, `CallOptions::meta`); in
/// process (`DirectDispatcher`, which routes progress by the request and sends no token) the
/// envelope's members alone.
#[tokio::test]
async fn c66_the_envelope_and_the_progress_token_go_out_in_one_meta() {
    within(async {
        for direct in [false, true] {
            let (seen, connected) = recording_on(true, r#"{"content":[]}"#, direct);
            let client = Client::builder()
                .lifecycle(Lifecycle::Auto)
                .connect(connected)
                .await
                .unwrap();
            let opts = RequestOptions::new().on_progress(|_| {});
            let params = raw(r#"{"name":"add","arguments":{"b":2,"a":1}}"#);
            client
                .request_raw("tools/call", params, opts)
                .await
                .unwrap();
            let sent = seen.lock().unwrap().pop().unwrap();
            let first = match direct {
                false => r#"{"_meta":{"progressToken":"#,
                true => r#"{"_meta":{"io.modelcontextprotocol/"#,
            };
            assert!(sent.starts_with(first), "direct={direct}: {sent}");
            assert!(
                sent.ends_with(r#"},"name":"add","arguments":{"b":2,"a":1}}"#),
                "direct={direct}: {sent}"
            );
            let value: Value = serde_json::from_str(&sent).unwrap();
            let meta = value["_meta"].as_object().unwrap();
            assert_eq!(
                meta["io.modelcontextprotocol/protocolVersion"],
                "2026-07-28"
            );
            assert!(meta["io.modelcontextprotocol/clientInfo"]["name"].is_string());
            assert!(meta["io.modelcontextprotocol/clientCapabilities"].is_object());
            assert_eq!(meta.contains_key("progressToken"), !direct, "{sent}");
            assert_eq!(meta.len(), if direct { 3 } else { 4 }, "{sent}");
        }
    })
    .await;
}

/// Progress: the token goes into the params' `_meta` (after the envelope's members) and the
/// reports reach the callback; the request's timeout applies.
#[tokio::test]
async fn progress_and_timeout_as_for_typed_requests() {
    within(async {
        for mode in [Lifecycle::Handshake, Lifecycle::Modern] {
            let server = base("raw")
                .on::<ferromcp_types::mcp::methods::CallTool, _, _, _>(
                    |ctx, p: ferromcp_types::mcp::CallToolRequestParams| async move {
                        if p.name == "slow" {
                            tokio::time::sleep(Duration::from_secs(30)).await;
                        }
                        for i in 1..=2 {
                            ctx.progress(f64::from(i), Some(2.0), None).await;
                        }
                        Ok(ferromcp_types::mcp::CallToolResult::text("done"))
                    },
                )
                .build()
                .unwrap();
            let client = connect_mode(mode, server).await;
            let seen: Arc<Mutex<Vec<f64>>> = Arc::default();
            let s = seen.clone();
            let opts =
                RequestOptions::new().on_progress(move |p| s.lock().unwrap().push(p.progress));
            let got = client
                .request_raw("tools/call", raw(r#"{"name":"p"}"#), opts)
                .await
                .unwrap();
            let got: Value = serde_json::from_str(got.get()).unwrap();
            assert_eq!(got["content"][0]["text"], "done", "{mode:?}");
            assert_eq!(*seen.lock().unwrap(), [1.0, 2.0], "{mode:?}");
            let opts = RequestOptions::new().timeout(Duration::from_millis(100));
            let err = client
                .request_raw("tools/call", raw(r#"{"name":"slow"}"#), opts)
                .await
                .unwrap_err();
            assert_eq!(
                err.code(),
                Some(ErrorCode::REQUEST_TIMEOUT),
                "{mode:?}: {err:?}"
            );
        }
    })
    .await;
}

/// The `resultType` checks of typed requests: `input_required` comes back as it is for
/// `tools/call`, a task handle from a client without tasks and any unknown type are errors, a
/// tool result without `content` gets an empty one; params that are not an object are
/// refused before anything is sent.
#[tokio::test]
async fn result_checks_as_for_typed_requests() {
    within(async {
        let asks = r#"{"resultType":"input_required","inputRequests":{}}"#;
        let (_, connected) = recording(true, asks);
        let client = Client::builder().connect(connected).await.unwrap();
        let got = client
            .request_raw("tools/call", raw(r#"{"name":"x"}"#), RequestOptions::new())
            .await
            .unwrap();
        assert_eq!(got.get(), asks);
        // `input_required` is not an answer `tools/list` may give.
        let err = client
            .request_raw("tools/list", raw("{}"), RequestOptions::new())
            .await
            .unwrap_err();
        assert!(
            matches!(err, ClientError::UnexpectedResultType { .. }),
            "{err:?}"
        );

        let (_, connected) = recording(true, r#"{"resultType":"task","task":{}}"#);
        let client = Client::builder().connect(connected).await.unwrap();
        let err = client
            .request_raw("tools/call", raw(r#"{"name":"x"}"#), RequestOptions::new())
            .await
            .unwrap_err();
        assert!(
            matches!(err, ClientError::UnexpectedResultType { .. }),
            "{err:?}"
        );

        let (seen, connected) = recording(true, r#"{"resultType":"complete"}"#);
        let client = Client::builder().connect(connected).await.unwrap();
        let got = client
            .request_raw("tools/call", raw(r#"{"name":"x"}"#), RequestOptions::new())
            .await
            .unwrap();
        assert_eq!(got.get(), r#"{"content":[],"resultType":"complete"}"#);
        let err = client
            .request_raw("tools/call", raw("[1]"), RequestOptions::new())
            .await
            .unwrap_err();
        assert!(matches!(err, ClientError::Encode { .. }), "{err:?}");
        assert_eq!(seen.lock().unwrap().len(), 1, "the array was not sent");
    })
    .await;
}
