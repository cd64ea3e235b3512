//! Issue 17 point 4, the result half: a typed result is written once to the text that goes
//! out and, when one pass over that text finds it valid with nothing to shape, sent as it is
//! on every transport (so a handler's own text keeps its number formatting and escapes); a
//! result that needs shaping is shaped as before, an invalid one is still -32603, a layer's
//! rewrite is what goes out, and 2026-07-28 results carry the kernel's stamps.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::Arc;

use common::{Transport, assert_code, connect, init_params, modern, within};
use ferromcp_dispatch::{
    CallOptions, DirectDispatcher, Dispatcher, HandlerError, LineTransportConfig, Outbound,
    line_transport,
};
use ferromcp_server::middleware::{McpRequest, McpResultBody, Next, middleware_fn};
use ferromcp_server::{Server, ServerBuilder, ServerRunner, StreamConfig, serve_stream};
use ferromcp_types::jsonrpc::{ErrorCode, Payload};
use ferromcp_types::mcp::CallToolRequestParams;
use ferromcp_types::mcp::methods::CallTool;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// A result as a handler writes it: an escape and number forms a parse would not keep.
const VERBATIM: &str = r#"{"content":[{"type":"text","text":"caf\u00e9 \"x\""}],"structuredContent":{"n":1.50,"e":1E2}}"#;

/// `tools/call` answers with the text its tool's name picks, as a handler of `Box<RawValue>`.
fn server(layers: impl FnOnce(ServerBuilder) -> ServerBuilder) -> Server {
    layers(Server::builder("raw-results", "1.2.3"))
        .on::<CallTool, _, _, _>(|_ctx, p: CallToolRequestParams| async move {
            let text = match p.name.as_str() {
                "verbatim" => VERBATIM,
                // `structuredContent` is 2025-06-18's: older revisions do not define it.
                "newer" => r#"{"content":[],"structuredContent":{"a":1}}"#,
                // A text block without its text.
                "invalid" => r#"{"content":[{"type":"text"}]}"#,
                _ => r#"{"content":[]}"#,
            };
            Ok(RawValue::from_string(text.to_owned()).unwrap())
        })
        .build()
        .unwrap()
}

fn call(name: &str) -> Option<Value> {
    Some(json!({"name": name, "arguments": {}}))
}

/// The result's text as the client's dispatcher received it.
fn text_of(payload: &Payload) -> &str {
    match payload {
        Payload::Raw(raw) => raw.get(),
        Payload::Value(v) => panic!("a value, not the text: {v}"),
    }
}

/// B74: an untouched typed result reaches the client as the text it was written to: in
/// process (a direct dispatcher hands the text over), on a stream, and on the newline
/// framing of stdio.
#[tokio::test]
async fn b74_an_untouched_result_goes_out_as_written() {
    within(async {
        for t in [Transport::Direct, Transport::JsonRpc, Transport::Stream] {
            let c = connect(t, &server(|b| b)).await;
            c.initialize().await;
            let got = c.payload("tools/call", call("verbatim")).await.unwrap();
            assert_eq!(text_of(&got), VERBATIM, "{t:?}");
            c.shutdown().await;
        }
        // Bytes on the wire, framed as stdio frames them.
        let (client, server_end) = tokio::io::duplex(1 << 16);
        let (read, write) = tokio::io::split(server_end);
        let (source, sink) = line_transport(read, write, LineTransportConfig::default());
        let served = server(|b| b);
        let task = tokio::spawn(async move {
            let _ = serve_stream(&served, source, sink, StreamConfig::default()).await;
        });
        let (read, mut write) = tokio::io::split(client);
        let mut lines = BufReader::new(read).lines();
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": init_params("2025-11-25")});
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let req = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "verbatim", "arguments": {}}});
        for m in [init, initialized, req] {
            write.write_all(format!("{m}\n").as_bytes()).await.unwrap();
        }
        lines.next_line().await.unwrap().unwrap();
        let line = lines.next_line().await.unwrap().unwrap();
        assert_eq!(
            line,
            format!(r#"{{"jsonrpc":"2.0","id":2,"result":{VERBATIM}}}"#)
        );
        drop(write);
        task.abort();
    })
    .await;
}

/// B75: a result that needs shaping (a field newer than the connection's revision) is shaped
/// exactly as before; an invalid one is -32603 as before.
#[tokio::test]
async fn b75_results_that_need_shaping_or_fail_answer_as_before() {
    within(async {
        for t in Transport::ALL {
            let c = connect(t, &server(|b| b)).await;
            c.initialize_at("2025-03-26").await;
            let r = c.ok("tools/call", call("newer")).await;
            assert_eq!(r, json!({"content": []}), "{t:?}");
            let e = c.fail("tools/call", call("invalid")).await;
            assert_code(&e, ErrorCode::INTERNAL_ERROR);
            c.shutdown().await;
            // The same field where the revision defines it stays.
            let c = connect(t, &server(|b| b)).await;
            c.initialize_at("2025-06-18").await;
            let r = c.ok("tools/call", call("newer")).await;
            assert_eq!(r["structuredContent"], json!({"a": 1}), "{t:?}");
            c.shutdown().await;
        }
    })
    .await;
}

/// B76: a layer that changes the result (here one that arrived as text) makes its change
/// what goes out; a layer that only reads a member leaves the text as written.
#[tokio::test]
async fn b76_a_layers_change_goes_out_and_a_look_leaves_the_text() {
    within(async {
        let rewriter = || {
            middleware_fn(|req: McpRequest, next: Next| async move {
                if req.method != "tools/call" {
                    return next.run(req).await;
                }
                let rewrite =
                    req.params_value().and_then(|p| p.get("name")) == Some(&json!("rewrite"));
                let mut body = next.run(req).await?;
                // Reading a member: from the text, which stays.
                assert_eq!(body.get("content").as_deref(), Some(&json!([])));
                if rewrite {
                    body.as_object_mut()
                        .unwrap()
                        .insert("isError".into(), json!(true));
                }
                Ok::<McpResultBody, HandlerError>(body)
            })
        };
        for t in [Transport::Direct, Transport::JsonRpc] {
            let c = connect(t, &server(|b| b.middleware(rewriter()))).await;
            c.initialize().await;
            let got = c.payload("tools/call", call("rewrite")).await.unwrap();
            let got = got.into_value().unwrap();
            assert_eq!(got, json!({"content": [], "isError": true}), "{t:?}");
            let got = c.payload("tools/call", call("plain")).await.unwrap();
            assert_eq!(text_of(&got), r#"{"content":[]}"#, "{t:?}");
            c.shutdown().await;
        }
    })
    .await;
}

/// B77: at 2026-07-28 a typed result goes out with the kernel's stamps: `resultType`, the
/// server info in `_meta`, and the cache hint of a cacheable method.
#[tokio::test]
async fn b77_modern_results_carry_the_stamps() {
    within(async {
        let (client, srv) = DirectDispatcher::pair();
        let runner = Arc::new(ServerRunner::modern(server(|b| b), Arc::new(srv.clone())));
        tokio::spawn(async move {
            let _ = srv.run(runner).await;
        });
        let c = client.clone();
        tokio::spawn(async move {
            let _ = c
                .run(
                    ferromcp_dispatch::handler_fn(|_c, _m, _p| async {
                        Ok(Payload::empty_object())
                    })
                    .into_arc(),
                )
                .await;
        });
        let params = modern(json!({"name": "verbatim", "arguments": {}}));
        let got = client
            .send_request(
                "tools/call",
                Some(Payload::from(params)),
                CallOptions::new(),
            )
            .await
            .unwrap();
        let text = text_of(&got).to_owned();
        assert!(text.starts_with(&VERBATIM[..VERBATIM.len() - 1]), "{text}");
        let r: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(r["resultType"], "complete");
        assert_eq!(
            r["_meta"]["io.modelcontextprotocol/serverInfo"],
            json!({"name": "raw-results", "version": "1.2.3"})
        );
        let list = client
            .send_request(
                "server/discover",
                Some(Payload::from(modern(json!({})))),
                CallOptions::new(),
            )
            .await
            .unwrap();
        let list = list.into_value().unwrap();
        assert_eq!(list["resultType"], "complete", "{list}");
        assert!(
            list["ttlMs"].is_u64() && list["cacheScope"].is_string(),
            "{list}"
        );
        client.close();
    })
    .await;
}
