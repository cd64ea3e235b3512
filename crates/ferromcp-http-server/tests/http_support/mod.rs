//! Shared helpers of the HTTP tests: a test server, a raw HTTP/1.1 client (exact headers,
//! streamed bodies), and SSE reading with the codec's parser.
#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::needless_pass_by_value,
    dead_code,
    unreachable_pub
)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use ferromcp_dispatch::CallOptions;
use ferromcp_dispatch::codec::{SseEvent, SseParser};
use ferromcp_http_server::{HttpConfig, HttpServer, SseStreamControl};
use ferromcp_server::Server;
use ferromcp_server::tool_headers::FixedToolHeaders;
use ferromcp_types::jsonrpc::Payload;
use ferromcp_types::mcp::methods::{CallTool, ListTools};
use ferromcp_types::mcp::{
    CallToolRequestParams, CallToolResult, JsonObject, ListToolsResult, PaginatedRequestParams,
    Tool,
};
use http::{Method, Request, Response};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpStream;

/// The bound on any single wait in these tests.
pub const WAIT: Duration = Duration::from_secs(10);

/// Counters the test server's tools update.
#[derive(Default)]
pub struct Flags {
    /// Handlers that saw their cancellation signal.
    pub cancelled: AtomicUsize,
    /// Handlers that ran to the end.
    pub finished: AtomicUsize,
}

fn schema(v: Value) -> JsonObject {
    match v {
        Value::Object(m) => m,
        _ => JsonObject::new(),
    }
}

/// A server with tools: `echo {text}`, `notify` (one related notification, then a result),
/// `wait` (until cancelled, or `ms` milliseconds), `ask` (a server→client `roots/list`),
/// `region {region, n}` (annotated with `x-mcp-header`), `broadcast` (an unrelated
/// notification on the connection's standalone channel), `chatty` (20 related notifications), `reconnect` (closes its SSE stream, then
/// notifies and answers).
pub fn test_server(flags: Arc<Flags>) -> Server {
    let tools = vec![
        Tool::new(
            "echo",
            schema(json!({"type":"object","properties":{"text":{"type":"string"}}})),
        ),
        Tool::new("notify", schema(json!({"type":"object"}))),
        Tool::new(
            "wait",
            schema(json!({"type":"object","properties":{"ms":{"type":"integer"}}})),
        ),
        Tool::new("ask", schema(json!({"type":"object"}))),
        Tool::new("broadcast", schema(json!({"type":"object"}))),
        Tool::new("chatty", schema(json!({"type":"object"}))),
        Tool::new("reconnect", schema(json!({"type":"object"}))),
        Tool::new(
            "region",
            schema(json!({"type":"object","properties":{
                "region":{"type":"string","x-mcp-header":"Region"},
                "n":{"type":"integer","x-mcp-header":"N"}
            }})),
        ),
    ];
    // A low-level server names where its tools' `x-mcp-header` annotations are found.
    let headers = Arc::new(FixedToolHeaders::new(&tools));
    Server::builder("http-test", "1.0.0")
        .tool_headers(headers)
        .on::<ListTools, _, _, _>(move |_ctx, _p: PaginatedRequestParams| {
            let tools = tools.clone();
            async move { Ok(ListToolsResult::new(tools)) }
        })
        .on::<CallTool, _, _, _>(move |ctx, p: CallToolRequestParams| {
            let flags = flags.clone();
            async move {
                let arg = |k: &str| p.arguments.as_ref().and_then(|a| a.get(k)).cloned();
                Ok(match p.name.as_str() {
                    "echo" => CallToolResult::text(
                        arg("text")
                            .and_then(|v| v.as_str().map(str::to_owned))
                            .unwrap_or_default(),
                    ),
                    "notify" => {
                        let params = json!({"level":"info","data":"working"});
                        ctx.peer()
                            .notify("notifications/message", Some(Payload::from(params)))
                            .await;
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        CallToolResult::text("done")
                    }
                    "wait" => {
                        let ms = arg("ms").and_then(|v| v.as_u64()).unwrap_or(60_000);
                        tokio::select! {
                            () = ctx.cancellation().cancelled() => {
                                flags.cancelled.fetch_add(1, Ordering::SeqCst);
                                CallToolResult::error("cancelled")
                            }
                            () = tokio::time::sleep(Duration::from_millis(ms)) => {
                                flags.finished.fetch_add(1, Ordering::SeqCst);
                                CallToolResult::text("waited")
                            }
                        }
                    }
                    "ask" => match ctx
                        .peer()
                        .send_request("roots/list", None, CallOptions::new())
                        .await
                    {
                        Ok(r) => CallToolResult::text(r.to_json_string()),
                        Err(e) => CallToolResult::error(format!("{}: {}", e.code.0, e.message)),
                    },
                    "region" => CallToolResult::text("ok"),
                    "chatty" => {
                        for i in 0..20 {
                            let params = json!({"level":"info","data":i});
                            ctx.peer()
                                .notify("notifications/message", Some(Payload::from(params)))
                                .await;
                        }
                        CallToolResult::text("chatted")
                    }
                    "reconnect" => {
                        let control = ctx
                            .http_parts()
                            .and_then(|p| p.extensions.get::<SseStreamControl>().cloned());
                        let closed = control.is_some_and(|c| c.close());
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        let params = json!({"level":"info","data":"after the close"});
                        ctx.peer()
                            .notify("notifications/message", Some(Payload::from(params)))
                            .await;
                        CallToolResult::text(format!("closed={closed}"))
                    }
                    "broadcast" => {
                        ctx.connection().notify_tools_list_changed().await;
                        CallToolResult::text("sent")
                    }
                    other => CallToolResult::error(format!("unknown tool {other}")),
                })
            }
        })
        .build()
        .unwrap()
}

/// Binds a test server on 127.0.0.1:0 and runs it; returns its address.
pub async fn start(config: HttpConfig) -> (SocketAddr, Arc<Flags>) {
    let flags = Arc::new(Flags::default());
    let srv = HttpServer::bind("127.0.0.1:0", test_server(flags.clone()), config)
        .await
        .unwrap();
    let addr = srv.local_addr();
    tokio::spawn(srv.run());
    (addr, flags)
}

/// Sends one request on a fresh connection. Default headers: `Host`, JSON content type,
/// `Accept: application/json, text/event-stream`; `headers` add to or replace them (an empty
/// value removes one).
pub async fn send(
    addr: SocketAddr,
    method: Method,
    headers: &[(&str, &str)],
    body: impl Into<Bytes>,
) -> Response<Incoming> {
    send_path(addr, method, "/mcp", headers, body).await
}

/// [`send`] to another path.
pub async fn send_path(
    addr: SocketAddr,
    method: Method,
    path: &str,
    headers: &[(&str, &str)],
    body: impl Into<Bytes>,
) -> Response<Incoming> {
    let stream = TcpStream::connect(addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(conn);
    let mut req = Request::builder().method(method).uri(path);
    let host = addr.to_string();
    let mut all: Vec<(String, String)> = vec![
        ("host".into(), host),
        ("content-type".into(), "application/json".into()),
        (
            "accept".into(),
            "application/json, text/event-stream".into(),
        ),
    ];
    for (k, v) in headers {
        let k = k.to_ascii_lowercase();
        all.retain(|(n, _)| *n != k || k.starts_with("mcp-param"));
        if !v.is_empty() {
            all.push((k, (*v).to_owned()));
        }
    }
    for (k, v) in all {
        req = req.header(k, v);
    }
    let req = req.body(Full::new(body.into())).unwrap();
    tokio::time::timeout(WAIT, sender.send_request(req))
        .await
        .unwrap()
        .unwrap()
}

/// POSTs a JSON value.
pub async fn post(addr: SocketAddr, headers: &[(&str, &str)], body: &Value) -> Response<Incoming> {
    send(addr, Method::POST, headers, body.to_string()).await
}

/// The whole body as text.
pub async fn text(resp: Response<Incoming>) -> String {
    let body = tokio::time::timeout(WAIT, resp.into_body().collect())
        .await
        .unwrap()
        .unwrap()
        .to_bytes();
    String::from_utf8(body.to_vec()).unwrap()
}

/// The whole body as JSON.
pub async fn json_body(resp: Response<Incoming>) -> Value {
    let t = text(resp).await;
    serde_json::from_str(&t).unwrap_or_else(|e| panic!("not JSON ({e}): {t:?}"))
}

/// A response header as text.
pub fn header(resp: &Response<Incoming>, name: &str) -> Option<String> {
    resp.headers()
        .get(name)
        .map(|v| v.to_str().unwrap().to_owned())
}

/// Reads an SSE body with the codec's parser.
pub struct Sse {
    body: Incoming,
    pub parser: SseParser,
    /// Bytes seen, for keep-alive checks.
    pub raw: Vec<u8>,
}

impl Sse {
    /// Starts reading `resp`'s body (asserting it is an event stream).
    pub fn new(resp: Response<Incoming>) -> Self {
        assert_eq!(
            header(&resp, "content-type").as_deref(),
            Some("text/event-stream")
        );
        Self {
            body: resp.into_body(),
            parser: SseParser::new(),
            raw: Vec::new(),
        }
    }

    /// The next event (priming events with empty data included); `None` at the end.
    pub async fn next_event(&mut self) -> Option<SseEvent> {
        loop {
            if let Some(e) = self.parser.next_event() {
                return Some(e.unwrap());
            }
            let frame = tokio::time::timeout(WAIT, self.body.frame())
                .await
                .unwrap()?;
            if let Ok(data) = frame.unwrap().into_data() {
                self.raw.extend_from_slice(&data);
                self.parser.feed(&data);
            }
        }
    }

    /// The next event with data, parsed as JSON; `None` at the end.
    pub async fn next_json(&mut self) -> Option<Value> {
        loop {
            let e = self.next_event().await?;
            if !e.data.is_empty() {
                return Some(serde_json::from_str(&e.data).unwrap());
            }
        }
    }

    /// Every remaining event with data, as JSON.
    pub async fn rest(&mut self) -> Vec<Value> {
        let mut out = Vec::new();
        while let Some(v) = self.next_json().await {
            out.push(v);
        }
        out
    }
}

/// The 2026-07-28 envelope.
pub fn envelope() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"}
    })
}

/// A 2026-07-28 `tools/call` body.
pub fn modern_call(id: i64, tool: &str, args: Value) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
           "params":{"name":tool,"arguments":args,"_meta":envelope()}})
}

/// The routing headers of a 2026-07-28 `tools/call`.
pub fn modern_headers(tool: &str) -> Vec<(&'static str, String)> {
    vec![
        ("mcp-protocol-version", "2026-07-28".to_owned()),
        ("mcp-method", "tools/call".to_owned()),
        ("mcp-name", tool.to_owned()),
    ]
}

/// Borrows a header list.
pub fn hdrs<'a>(h: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    h.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

/// An `initialize` body.
pub fn initialize(id: i64, version: &str) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"initialize","params":{
        "protocolVersion": version, "capabilities": {"roots": {}},
        "clientInfo": {"name": "t", "version": "1"}}})
}

/// Opens a handshake-era session (initialize + initialized); returns its id.
pub async fn open_session(addr: SocketAddr, version: &str) -> String {
    let resp = post(addr, &[], &initialize(1, version)).await;
    assert_eq!(resp.status(), 200);
    let sid = header(&resp, "mcp-session-id").unwrap();
    let mut sse = Sse::new(resp);
    let init = sse.next_json().await.unwrap();
    assert_eq!(init["result"]["protocolVersion"], version);
    let note = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
    let resp = post(
        addr,
        &[("mcp-session-id", &sid), ("mcp-protocol-version", version)],
        &note,
    )
    .await;
    assert_eq!(resp.status(), 202);
    sid
}

/// A handshake-era `tools/call` body.
pub fn call(id: i64, tool: &str, args: Value) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":tool,"arguments":args}})
}

/// Writes a raw HTTP/1.1 POST on a fresh socket and reads up to the end of the response
/// head; returns the head and the socket (dropping it closes the connection for real).
pub async fn raw_post(addr: SocketAddr, extra: &[(&str, &str)], body: &str) -> (String, TcpStream) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = TcpStream::connect(addr).await.unwrap();
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: {}\r\n",
        body.len()
    );
    for (k, v) in extra {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    head.push_str(body);
    s.write_all(head.as_bytes()).await.unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    while !got.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = tokio::time::timeout(WAIT, s.read(&mut buf))
            .await
            .unwrap()
            .unwrap();
        assert!(n > 0, "connection closed before the response head");
        got.extend_from_slice(&buf[..n]);
    }
    (String::from_utf8_lossy(&got).into_owned(), s)
}
