//! Shared harness of the HTTP transport tests: ferromcp's own Streamable HTTP server on
//! 127.0.0.1:0, behind a thin hyper front that records every request's method and headers
//! (and can play a handshake-only server that answers 400 to the 2026-07-28 wire).

#![allow(
    dead_code,
    reason = "each test binary uses a different part of the harness"
)]
#![allow(clippy::unwrap_used, clippy::panic, unreachable_pub)]

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use ferromcp_http_server::{HttpConfig, McpBody, McpHttpService};
use ferromcp_server::{RequestContext, Server};
use ferromcp_types::mcp::methods::{CallTool, ListTools};
use ferromcp_types::mcp::{
    CallToolRequestParams, CallToolResult, JsonObject, ListToolsResult, PaginatedRequestParams,
    Tool,
};
use http::{HeaderMap, Method, Request, Response, StatusCode};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpListener;

/// How long any test may take before it counts as hung.
pub const LIMIT: Duration = Duration::from_secs(30);

/// Runs `f`, failing the test if it does not finish within [`LIMIT`].
pub async fn within<F: Future>(f: F) -> F::Output {
    match tokio::time::timeout(LIMIT, f).await {
        Ok(v) => v,
        Err(_) => panic!("timed out after {LIMIT:?}"),
    }
}

/// Counters the test server's tools update.
#[derive(Default)]
pub struct Flags {
    /// `wait` handlers that saw their cancellation signal.
    pub cancelled: AtomicUsize,
    /// `wait` handlers that ran to the end.
    pub finished: AtomicUsize,
}

fn schema(v: Value) -> JsonObject {
    match v {
        Value::Object(m) => m,
        _ => JsonObject::new(),
    }
}

/// The tools: `echo {text}`, `wait {ms}` (sleeps, or until cancelled), `progress` (two
/// progress reports, then a result), `ask` (a server→client `roots/list`), `region {region,
/// n}` (annotated with `x-mcp-header`), `broken` (an invalid `x-mcp-header` annotation),
/// `broadcast` (`tools/list_changed` on the connection's standalone channel).
pub fn test_server(flags: Arc<Flags>) -> Server {
    let tools = vec![
        Tool::new(
            "echo",
            schema(json!({"type":"object","properties":{"text":{"type":"string"}}})),
        ),
        Tool::new(
            "wait",
            schema(json!({"type":"object","properties":{"ms":{"type":"integer"}}})),
        ),
        Tool::new("progress", schema(json!({"type":"object"}))),
        Tool::new("ask", schema(json!({"type":"object"}))),
        Tool::new("broadcast", schema(json!({"type":"object"}))),
        Tool::new(
            "region",
            schema(json!({"type":"object","properties":{
                "region":{"type":"string","x-mcp-header":"Region"},
                "n":{"type":"integer","x-mcp-header":"N"}
            }})),
        ),
        Tool::new(
            "broken",
            schema(json!({"type":"object","properties":{
                "x":{"type":"number","x-mcp-header":"X"}
            }})),
        ),
    ];
    // A low-level server names where its tools' `x-mcp-header` annotations are found.
    let headers = Arc::new(ferromcp_server::tool_headers::FixedToolHeaders::new(&tools));
    Server::builder("http-client-test", "1.0.0")
        .tool_headers(headers)
        .on::<ListTools, _, _, _>(move |_ctx, _p: PaginatedRequestParams| {
            let tools = tools.clone();
            async move { Ok(ListToolsResult::new(tools)) }
        })
        .on::<CallTool, _, _, _>(move |ctx: RequestContext, p: CallToolRequestParams| {
            let flags = flags.clone();
            async move {
                let arg = |k: &str| p.arguments.as_ref().and_then(|a| a.get(k)).cloned();
                Ok(match p.name.as_str() {
                    "echo" => CallToolResult::text(
                        arg("text")
                            .and_then(|v| v.as_str().map(str::to_owned))
                            .unwrap_or_default(),
                    ),
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
                    "progress" => {
                        ctx.progress(1.0, Some(2.0), Some("half")).await;
                        ctx.progress(2.0, Some(2.0), None).await;
                        CallToolResult::text("done")
                    }
                    "ask" => match ctx
                        .peer()
                        .send_request("roots/list", None, ferromcp_dispatch::CallOptions::new())
                        .await
                    {
                        Ok(r) => CallToolResult::text(r.to_json_string()),
                        Err(e) => CallToolResult::error(format!("{}: {}", e.code.0, e.message)),
                    },
                    "region" => CallToolResult::text("ok"),
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

/// One request the server saw.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: Method,
    pub headers: HeaderMap,
}

impl Seen {
    /// A header as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// A running test server.
pub struct TestServer {
    pub addr: SocketAddr,
    pub flags: Arc<Flags>,
    pub seen: Arc<Mutex<Vec<Seen>>>,
    /// Answer every request carrying `MCP-Protocol-Version: 2026-07-28` with a bare 400, as a
    /// handshake-only server does.
    pub legacy_only: Arc<AtomicBool>,
    /// Answer the next POST with a bare 404 (a session the server forgot).
    pub forget_next: Arc<AtomicBool>,
    /// End the next POST's SSE response after its first frame (the priming event), as a
    /// dropped connection would.
    pub cut_next_sse: Arc<AtomicBool>,
    /// TCP connections accepted.
    pub connections: Arc<AtomicUsize>,
}

impl TestServer {
    /// The endpoint URL.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// Every request seen so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    /// The POSTs seen whose `Mcp-Method` header is `method`.
    pub fn with_mcp_method(&self, method: &str) -> Vec<Seen> {
        self.seen()
            .into_iter()
            .filter(|s| s.header("mcp-method") == Some(method))
            .collect()
    }
}

/// Starts ferromcp's HTTP service with `config` on 127.0.0.1:0 behind the recording front.
pub async fn start(config: HttpConfig) -> TestServer {
    let flags = Arc::new(Flags::default());
    start_with(test_server(flags.clone()), config, flags).await
}

/// [`start`] with any server.
pub async fn start_with(server: Server, config: HttpConfig, flags: Arc<Flags>) -> TestServer {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let service = McpHttpService::new(server, config);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let legacy_only = Arc::new(AtomicBool::new(false));
    let forget_next = Arc::new(AtomicBool::new(false));
    let cut_next_sse = Arc::new(AtomicBool::new(false));
    let connections = Arc::new(AtomicUsize::new(0));
    let accepted = connections.clone();
    let (s, l, f, c) = (
        seen.clone(),
        legacy_only.clone(),
        forget_next.clone(),
        cut_next_sse.clone(),
    );
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            stream.set_nodelay(true).unwrap();
            accepted.fetch_add(1, Ordering::SeqCst);
            let (service, seen, legacy, forget, cut) =
                (service.clone(), s.clone(), l.clone(), f.clone(), c.clone());
            let svc = hyper::service::service_fn(move |req: Request<Incoming>| {
                let (service, seen, legacy, forget, cut) = (
                    service.clone(),
                    seen.clone(),
                    legacy.clone(),
                    forget.clone(),
                    cut.clone(),
                );
                async move {
                    seen.lock().unwrap().push(Seen {
                        method: req.method().clone(),
                        headers: req.headers().clone(),
                    });
                    let modern = req
                        .headers()
                        .get("mcp-protocol-version")
                        .is_some_and(|v| v == "2026-07-28");
                    if legacy.load(Ordering::SeqCst) && modern {
                        return Ok::<_, std::convert::Infallible>(status(StatusCode::BAD_REQUEST));
                    }
                    let post = req.method() == Method::POST;
                    if post && forget.swap(false, Ordering::SeqCst) {
                        return Ok(status(StatusCode::NOT_FOUND));
                    }
                    let resp = service.handle(req).await;
                    let sse = resp
                        .headers()
                        .get("content-type")
                        .is_some_and(|v| v == "text/event-stream");
                    let cut = post && sse && cut.swap(false, Ordering::SeqCst);
                    Ok(resp.map(|inner| Cut {
                        inner,
                        cut,
                        done: false,
                    }))
                }
            });
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    TestServer {
        addr,
        flags,
        seen,
        legacy_only,
        forget_next,
        cut_next_sse,
        connections,
    }
}

fn status(code: StatusCode) -> Response<Cut> {
    let mut r = Response::new(Cut {
        inner: McpBody::empty(),
        cut: false,
        done: false,
    });
    *r.status_mut() = code;
    r
}

/// A response body that can end after its first frame.
pub struct Cut {
    inner: McpBody,
    cut: bool,
    done: bool,
}

impl hyper::body::Body for Cut {
    type Data = <McpBody as hyper::body::Body>::Data;
    type Error = <McpBody as hyper::body::Body>::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        if self.done {
            return Poll::Ready(None);
        }
        let r = Pin::new(&mut self.inner).poll_frame(cx);
        if self.cut && matches!(r, Poll::Ready(Some(Ok(_)))) {
            self.done = true;
        }
        r
    }
}

/// The text of a tool result's first content block.
pub fn first_text(r: &CallToolResult) -> String {
    r.content
        .first()
        .and_then(|c| c.as_text())
        .unwrap_or_default()
        .to_owned()
}

/// ferromcp's MCP endpoint over TLS on 127.0.0.1:0; counts completed TLS handshakes.
pub async fn start_tls(config: Arc<rustls::ServerConfig>) -> (SocketAddr, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let service = McpHttpService::new(
        test_server(Arc::new(Flags::default())),
        ferromcp_http_server::HttpConfig::default(),
    );
    let acceptor = tokio_rustls::TlsAcceptor::from(config);
    let handshakes = Arc::new(AtomicUsize::new(0));
    let done = handshakes.clone();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (acceptor, service, done) = (acceptor.clone(), service.clone(), done.clone());
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                done.fetch_add(1, Ordering::SeqCst);
                let svc = hyper::service::service_fn(move |req: Request<Incoming>| {
                    let service = service.clone();
                    async move { Ok::<_, std::convert::Infallible>(service.handle(req).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tls), svc)
                    .await;
            });
        }
    });
    (addr, handshakes)
}
