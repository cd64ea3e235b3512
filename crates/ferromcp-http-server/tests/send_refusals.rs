//! A handler's request to the client is refused with a reason it can match (issue 17 point 5;
//! S136): where the transport or era has no back channel (2026-07-28 HTTP, stateless HTTP,
//! in-process at 2026-07-28) `RequestPeer::send_request` fails with
//! `SendRefused::NoBackChannel`; where there is one (in-process and Streamable HTTP sessions
//! of the handshake era), a send related to a request that has been answered fails with
//! `SendRefused::RequestAnswered`, and nothing reaches the client.
#![allow(clippy::unwrap_used, clippy::panic)]

mod http_support;

use std::net::SocketAddr;
use std::time::Duration;

use ferromcp_dispatch::{CallOptions, Dispatcher, Outbound, SendRefused, handler_fn};
use ferromcp_http_server::{HttpConfig, HttpServer};
use ferromcp_server::{RequestContext, Server};
use ferromcp_types::Era;
use ferromcp_types::jsonrpc::{ErrorObject, Payload};
use ferromcp_types::mcp::methods::CallTool;
use ferromcp_types::mcp::{CallToolRequestParams, CallToolResult};
use http_support::{
    Sse, envelope, hdrs, header, json_body, modern_call, modern_headers, open_session, post,
};
use serde_json::{Value, json};
use tokio::sync::mpsc;

async fn within<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(30), f)
        .await
        .unwrap()
}

/// The refusal's name, or what else the send gave.
fn refusal(outcome: Result<Payload, ErrorObject>) -> String {
    match outcome {
        Ok(_) => "sent".to_owned(),
        Err(e) => SendRefused::of(&e).map_or_else(|| format!("{e:?}"), |r| r.as_str().to_owned()),
    }
}

/// `ask` sends `roots/list` and answers with the refusal; `late` answers at once and sends
/// `roots/list` once its request has been answered, reporting the refusal on `late`.
fn server(late: mpsc::UnboundedSender<String>) -> Server {
    Server::builder("refusals", "1")
        .on::<CallTool, _, _, _>(move |ctx: RequestContext, p: CallToolRequestParams| {
            let late = late.clone();
            async move {
                if p.name == "late" {
                    tokio::spawn(async move {
                        while ctx.peer().can_send_request() {
                            tokio::time::sleep(Duration::from_millis(1)).await;
                        }
                        let sent = ctx
                            .peer()
                            .send_request("roots/list", None, CallOptions::new())
                            .await;
                        let _ = late.send(refusal(sent));
                    });
                    return Ok(CallToolResult::text("answered"));
                }
                let sent = ctx
                    .peer()
                    .send_request("roots/list", None, CallOptions::new())
                    .await;
                Ok(CallToolResult::text(refusal(sent)))
            }
        })
        .build()
        .unwrap()
}

fn call(id: i64, tool: &str, era: Era) -> Value {
    match era {
        Era::Modern => modern_call(id, tool, json!({})),
        _ => json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
                    "params":{"name":tool,"arguments":{}}}),
    }
}

fn text(answer: &Value) -> String {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("not a tool result: {answer}"))
        .to_owned()
}

/// A POST's JSON-RPC answer, whether it came as JSON or on an SSE stream.
async fn answer(resp: http::Response<hyper::body::Incoming>) -> Value {
    if header(&resp, "content-type").as_deref() == Some("text/event-stream") {
        Sse::new(resp).next_json().await.unwrap()
    } else {
        json_body(resp).await
    }
}

async fn start(config: HttpConfig, late: mpsc::UnboundedSender<String>) -> SocketAddr {
    let srv = HttpServer::bind("127.0.0.1:0", server(late), config)
        .await
        .unwrap();
    let addr = srv.local_addr();
    tokio::spawn(srv.run());
    addr
}

/// In-process, `tool` called in `era`: the answer's text.
async fn in_process(era: Era, tool: &str, late: mpsc::UnboundedSender<String>) -> String {
    let peer = server(late).in_process(era);
    let client = peer.clone();
    // A client that would answer `roots/list`: a refusal is the server's doing.
    let handler = handler_fn(|_, _, _| async { Ok(Payload::from_value(json!({"roots": []}))) });
    tokio::spawn(async move { client.run(handler.into_arc()).await });
    if era == Era::Handshake {
        let init = json!({"protocolVersion":"2025-11-25","capabilities":{"roots":{}},
                          "clientInfo":{"name":"t","version":"1"}});
        peer.send_request(
            "initialize",
            Some(Payload::from_value(init)),
            CallOptions::new(),
        )
        .await
        .unwrap();
        peer.notify("notifications/initialized", None).await;
    }
    let mut params = json!({"name": tool, "arguments": {}});
    if era == Era::Modern {
        params["_meta"] = envelope();
    }
    let answer = peer
        .send_request(
            "tools/call",
            Some(Payload::from_value(params)),
            CallOptions::new(),
        )
        .await
        .unwrap()
        .into_value()
        .unwrap();
    answer["content"][0]["text"].as_str().unwrap().to_owned()
}

/// S136: no back channel is `NoBackChannel` on every transport without one.
#[tokio::test]
async fn s136_no_back_channel_is_a_refusal_the_handler_can_match() {
    within(async {
        let (tx, _rx) = mpsc::unbounded_channel();
        assert_eq!(
            in_process(Era::Modern, "ask", tx.clone()).await,
            "noBackChannel"
        );

        let addr = start(HttpConfig::default(), tx.clone()).await;
        let h = modern_headers("ask");
        let modern = answer(post(addr, &hdrs(&h), &call(2, "ask", Era::Modern)).await).await;
        assert_eq!(text(&modern), "noBackChannel", "2026-07-28 HTTP");

        let addr = start(HttpConfig::default().stateless(true), tx).await;
        let h = [("mcp-protocol-version", "2025-11-25")];
        let stateless = answer(post(addr, &h, &call(2, "ask", Era::Handshake)).await).await;
        assert_eq!(text(&stateless), "noBackChannel", "stateless HTTP");
    })
    .await;
}

/// S136: where there is a back channel, a send after the request was answered is
/// `RequestAnswered`.
#[tokio::test]
async fn s136_a_send_after_the_answer_is_refused_as_request_answered() {
    within(async {
        let (tx, mut rx) = mpsc::unbounded_channel();
        assert_eq!(
            in_process(Era::Handshake, "late", tx.clone()).await,
            "answered"
        );
        assert_eq!(rx.recv().await.unwrap(), "requestAnswered", "in-process");

        let addr = start(HttpConfig::default(), tx).await;
        let sid = open_session(addr, "2025-11-25").await;
        let h = [
            ("mcp-session-id", sid.as_str()),
            ("mcp-protocol-version", "2025-11-25"),
        ];
        let late = answer(post(addr, &h, &call(2, "late", Era::Handshake)).await).await;
        assert_eq!(text(&late), "answered");
        assert_eq!(rx.recv().await.unwrap(), "requestAnswered", "HTTP session");
    })
    .await;
}
