//! One error boundary for every transport (issue 17 point 1, DESIGN "One entrance"; B85): a
//! tool handler that panics is answered with the very same error object, -32603 `Internal
//! error` and nothing of the panic's text, whether the request came over stdio (line-framed
//! bytes), in-process (both eras), handshake-era Streamable HTTP (a session), 2026-07-28 HTTP,
//! stateless HTTP or the 2024-11-05 HTTP+SSE transport; and each transport goes on serving.
#![allow(clippy::unwrap_used, clippy::panic)]

mod http_support;

use std::net::SocketAddr;
use std::time::Duration;

use ferromcp_dispatch::{
    CallOptions, Dispatcher, LineTransportConfig, Outbound, TransportKind, handler_fn,
    line_transport,
};
use ferromcp_http_server::{HttpConfig, HttpServer};
use ferromcp_server::{McpServer, Server, StreamConfig, serve_stream};
use ferromcp_types::Era;
use ferromcp_types::jsonrpc::{ErrorObject, Payload};
use http::Method;
use http_support::{
    Sse, envelope, hdrs, header, json_body, modern_call, modern_headers, open_session, post,
    send_path,
};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// The wire error every transport must answer a panicking handler with.
fn expected() -> Value {
    json!({"code": -32603, "message": "Internal error"})
}

async fn within<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(30), f)
        .await
        .unwrap()
}

/// A server whose `boom` tool panics and whose `fine` tool answers.
fn server() -> Server {
    McpServer::builder("panics", "1.0.0")
        .tool("boom", || async {
            if std::hint::black_box(true) {
                panic!("a bug in a handler (secret text)");
            }
            "unreachable"
        })
        .tool("fine", || async { "ok" })
        .build()
        .unwrap()
        .server()
        .clone()
}

fn call_body(id: i64, tool: &str, era: Era) -> Value {
    match era {
        Era::Modern => modern_call(id, tool, json!({})),
        _ => json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
                    "params":{"name":tool,"arguments":{}}}),
    }
}

/// The answer's `error` member (`Null` for a result).
fn error_of(answer: &Value) -> Value {
    answer.get("error").cloned().unwrap_or(Value::Null)
}

/// stdio: `serve_stream` on a line-framed byte stream, as `serve_stdio` runs it on the
/// process's standard input and output. Returns the error of `boom` and whether `fine`
/// answered afterwards.
async fn stdio(era: Era) -> (Value, bool) {
    let (client, srv) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(srv);
    let (source, sink) = line_transport(read, write, LineTransportConfig::default());
    let server = server();
    tokio::spawn(async move {
        let config = StreamConfig::default().kind(TransportKind::Stdio);
        let _ = serve_stream(&server, source, sink, config).await;
    });
    let (read, mut write) = tokio::io::split(client);
    let mut lines = BufReader::new(read).lines();
    let mut send = Vec::new();
    if era == Era::Handshake {
        send.push(
            json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
            "protocolVersion":"2025-11-25","capabilities":{},
            "clientInfo":{"name":"t","version":"1"}}}),
        );
        send.push(json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
    }
    send.push(call_body(2, "boom", era));
    send.push(call_body(3, "fine", era));
    for message in send {
        write
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    }
    let (mut boom, mut fine) = (None, None);
    while boom.is_none() || fine.is_none() {
        let line = lines.next_line().await.unwrap().unwrap();
        let answer: Value = serde_json::from_str(&line).unwrap();
        match answer["id"].as_i64() {
            Some(2) => boom = Some(error_of(&answer)),
            Some(3) => fine = Some(answer.get("result").is_some()),
            _ => {}
        }
    }
    (boom.unwrap(), fine.unwrap())
}

/// In-process: `Server::in_process`, the direct dispatcher.
async fn in_process(era: Era) -> (Value, bool) {
    let peer = server().in_process(era);
    let client = peer.clone();
    let handler =
        handler_fn(
            |_, method, _| async move { Err(ErrorObject::method_not_found(&method).into()) },
        );
    tokio::spawn(async move { client.run(handler.into_arc()).await });
    let request = |tool: &str| {
        let mut params = json!({"name": tool, "arguments": {}});
        if era == Era::Modern {
            params["_meta"] = envelope();
        }
        peer.send_request(
            "tools/call",
            Some(Payload::from_value(params)),
            CallOptions::new(),
        )
    };
    if era == Era::Handshake {
        let init = json!({"protocolVersion":"2025-11-25","capabilities":{},
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
    let boom = request("boom").await.unwrap_err();
    let fine = request("fine").await.is_ok();
    (serde_json::to_value(boom).unwrap(), fine)
}

async fn start(config: HttpConfig) -> SocketAddr {
    let srv = HttpServer::bind("127.0.0.1:0", server(), config)
        .await
        .unwrap();
    let addr = srv.local_addr();
    tokio::spawn(srv.run());
    addr
}

/// A POST's JSON-RPC answer, whether it came as JSON or on an SSE stream.
async fn answer(resp: http::Response<hyper::body::Incoming>) -> Value {
    if header(&resp, "content-type").as_deref() == Some("text/event-stream") {
        Sse::new(resp).next_json().await.unwrap()
    } else {
        json_body(resp).await
    }
}

/// Handshake-era Streamable HTTP: a session, then the calls.
async fn http_session() -> (Value, bool) {
    let addr = start(HttpConfig::default()).await;
    let sid = open_session(addr, "2025-11-25").await;
    let h = [
        ("mcp-session-id", sid.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let boom = answer(post(addr, &h, &call_body(2, "boom", Era::Handshake)).await).await;
    let fine = answer(post(addr, &h, &call_body(3, "fine", Era::Handshake)).await).await;
    (error_of(&boom), fine.get("result").is_some())
}

/// 2026-07-28 HTTP: one POST, one exchange, routing headers.
async fn http_modern() -> (Value, bool) {
    let addr = start(HttpConfig::default()).await;
    let call = |tool: &'static str, id| async move {
        let h = modern_headers(tool);
        answer(post(addr, &hdrs(&h), &call_body(id, tool, Era::Modern)).await).await
    };
    let boom = call("boom", 2).await;
    let fine = call("fine", 3).await;
    (error_of(&boom), fine.get("result").is_some())
}

/// Stateless handshake-era HTTP: every POST on a connection of its own.
async fn http_stateless() -> (Value, bool) {
    let addr = start(HttpConfig::default().stateless(true)).await;
    let h = [("mcp-protocol-version", "2025-11-25")];
    let boom = answer(post(addr, &h, &call_body(2, "boom", Era::Handshake)).await).await;
    let fine = answer(post(addr, &h, &call_body(3, "fine", Era::Handshake)).await).await;
    (error_of(&boom), fine.get("result").is_some())
}

/// The 2024-11-05 HTTP+SSE transport: answers come on the GET stream.
async fn http_sse() -> (Value, bool) {
    let addr = start(HttpConfig::default().legacy_sse(true)).await;
    let h = [("accept", "text/event-stream"), ("content-type", "")];
    let resp = send_path(addr, Method::GET, "/sse", &h, "").await;
    let mut sse = Sse::new(resp);
    let url = sse.next_event().await.unwrap().data;
    let send = |body: Value| {
        let url = url.clone();
        async move {
            let resp = send_path(addr, Method::POST, &url, &[], body.to_string()).await;
            assert_eq!(resp.status(), 202);
        }
    };
    send(
        json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
        "protocolVersion":"2024-11-05","capabilities":{},
        "clientInfo":{"name":"t","version":"1"}}}),
    )
    .await;
    assert_eq!(sse.next_json().await.unwrap()["id"], 1);
    send(json!({"jsonrpc":"2.0","method":"notifications/initialized"})).await;
    send(call_body(2, "boom", Era::Handshake)).await;
    let boom = sse.next_json().await.unwrap();
    assert_eq!(boom["id"], 2);
    send(call_body(3, "fine", Era::Handshake)).await;
    let fine = sse.next_json().await.unwrap();
    (error_of(&boom), fine.get("result").is_some())
}

/// B85 (issue 17 point 1): the same -32603 error object on every transport, the panic's text
/// on none, and the next request served.
#[tokio::test]
async fn b85_a_panicking_handler_gets_the_same_answer_on_every_transport() {
    within(async {
        let answers = [
            ("stdio, handshake era", stdio(Era::Handshake).await),
            ("stdio, 2026-07-28", stdio(Era::Modern).await),
            (
                "in-process, handshake era",
                in_process(Era::Handshake).await,
            ),
            ("in-process, 2026-07-28", in_process(Era::Modern).await),
            ("Streamable HTTP, session", http_session().await),
            ("Streamable HTTP, 2026-07-28", http_modern().await),
            ("Streamable HTTP, stateless", http_stateless().await),
            ("HTTP+SSE (2024-11-05)", http_sse().await),
        ];
        for (transport, (error, served_next)) in answers {
            assert_eq!(error, expected(), "{transport}");
            assert!(!error.to_string().contains("secret"), "{transport}");
            assert!(served_next, "{transport}: the next request was not served");
        }
    })
    .await;
}
