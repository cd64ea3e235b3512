//! Change subscriptions over Streamable HTTP against ferromcp's own McpServer:
//! `subscriptions/listen` keeps its POST's SSE response open (2026-07-28
//! basic/transports/streamable-http "Listening for Messages from the Server", "Cancellation":
//! closing the response stream cancels), the events and the cache eviction
//! (basic/patterns/subscriptions §Receiving Notifications; server/utilities/caching), the
//! reconnection of a stream that drops without the server's answer (§Graceful Closure: "a
//! transport that closes without it indicates an unexpected disconnect, which the client MAY
//! treat as a trigger to reconnect"), and the 2025-11-25 fallback over an HTTP session.

#![cfg(feature = "http")]
#![allow(clippy::unwrap_used, clippy::panic)]

mod http_support;
mod listen_support;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use ferromcp_client::listen::{ListenEnd, ListenEvent, ListenOptions, SubscriptionFilter};
use ferromcp_client::{Client, HttpTransport, Lifecycle};
use ferromcp_http_server::HttpConfig as ServerConfig;
use ferromcp_types::Era;
use ferromcp_types::jsonrpc::ErrorCode;
use ferromcp_types::mcp::methods;
use http_support::{Flags, TestServer, start_with};
use listen_support::{Probe, server, until, within};

fn tools_and_a() -> SubscriptionFilter {
    SubscriptionFilter::new()
        .with_tools_list_changed(true)
        .with_resource_subscriptions(vec!["r://a".into()])
}

async fn connect(srv: &TestServer, mode: Lifecycle) -> Client {
    Client::builder()
        .lifecycle(mode)
        .connect(HttpTransport::new(srv.url()).unwrap())
        .await
        .unwrap()
}

async fn start(probe: &Probe) -> (ferromcp_server::McpServer, TestServer) {
    let s = server(probe);
    let srv = start_with(
        s.server().clone(),
        ServerConfig::default(),
        Arc::new(Flags::default()),
    )
    .await;
    (s, srv)
}

/// The listen POST carries `Mcp-Method: subscriptions/listen`; events arrive on its open SSE
/// response and evict the cache; dropping the subscription closes the response stream and
/// the server's handler stops, while the client keeps working.
#[tokio::test]
async fn http_listen_events_cache_and_drop() {
    within(async {
        let probe = Probe::default();
        let (s, srv) = start(&probe).await;
        let client = connect(&srv, Lifecycle::Modern).await;
        client.list_tools(None).await.unwrap();
        client.read_resource("r://a").await.unwrap();

        let mut sub = client.listen(tools_and_a()).await.unwrap();
        assert_eq!(sub.acknowledged(), tools_and_a());
        let posts = srv.with_mcp_method(methods::SUBSCRIPTIONS_LISTEN);
        assert_eq!(posts.len(), 1);
        assert_eq!(
            posts[0]
                .header("accept")
                .map(|a| a.contains("text/event-stream")),
            Some(true)
        );

        s.add_tool("t2", || async { "t2" }).unwrap();
        assert_eq!(sub.next().await, Some(ListenEvent::ToolListChanged));
        s.notify_resource_updated("r://a");
        assert_eq!(
            sub.next().await,
            Some(ListenEvent::ResourceUpdated("r://a".into()))
        );
        client.list_tools(None).await.unwrap();
        client.read_resource("r://a").await.unwrap();
        assert_eq!(probe.calls(methods::TOOLS_LIST), 2, "evicted by the event");
        assert_eq!(
            probe.calls(methods::RESOURCES_READ),
            2,
            "evicted by the event"
        );

        assert_eq!(probe.active(), 1);
        drop(sub);
        until(|| probe.active() == 0).await;
        client.list_tools(None).await.unwrap();
        assert_eq!(probe.started(), 1, "not reopened");
        client.shutdown().await;
    })
    .await;
}

/// A listen stream cut without the server's answer is re-established (a new POST); the
/// subscription reports `Reconnected` with the new acknowledgment, the cached entries it
/// covers are evicted (changes in the gap were not seen), and events flow again.
#[tokio::test]
async fn http_listen_dropped_stream_is_reconnected() {
    within(async {
        let probe = Probe::default();
        let (s, srv) = start(&probe).await;
        let client = connect(&srv, Lifecycle::Modern).await;
        client.read_resource("r://a").await.unwrap();
        srv.cut_next_sse.store(true, Ordering::SeqCst);
        let opts = ListenOptions::new().reconnect_delay(Duration::from_millis(20));
        let mut sub = client.listen_with(tools_and_a(), opts).await.unwrap();
        assert_eq!(
            sub.next().await,
            Some(ListenEvent::Reconnected {
                acknowledged: tools_and_a()
            })
        );
        assert_eq!(srv.with_mcp_method(methods::SUBSCRIPTIONS_LISTEN).len(), 2);
        // 2026-07-28 has no `Last-Event-ID` resumption: a new POST, never a GET.
        assert!(srv.seen().iter().all(|r| r.method != http::Method::GET));
        client.read_resource("r://a").await.unwrap();
        assert_eq!(
            probe.calls(methods::RESOURCES_READ),
            2,
            "the reconnection evicted r://a"
        );
        s.add_tool("t2", || async { "t2" }).unwrap();
        assert_eq!(sub.next().await, Some(ListenEvent::ToolListChanged));
        drop(sub);
        until(|| probe.active() == 0).await;
        client.shutdown().await;
    })
    .await;
}

/// The reconnection bound (`ListenOptions::max_reconnects`): with none allowed, a dropped
/// stream ends the subscription with `Failed` carrying the transport's -32000.
#[tokio::test]
async fn http_listen_reconnection_bound_ends_with_failed() {
    within(async {
        let probe = Probe::default();
        let (_s, srv) = start(&probe).await;
        let client = connect(&srv, Lifecycle::Modern).await;
        srv.cut_next_sse.store(true, Ordering::SeqCst);
        let opts = ListenOptions::new().max_reconnects(0);
        let mut sub = client.listen_with(tools_and_a(), opts).await.unwrap();
        match sub.next().await {
            Some(ListenEvent::Ended(ListenEnd::Failed(e))) => {
                assert_eq!(e.code, ErrorCode::CONNECTION_CLOSED, "{e:?}");
            }
            other => panic!("expected Failed, got {other:?}"),
        }
        assert_eq!(sub.next().await, None);
        assert_eq!(srv.with_mcp_method(methods::SUBSCRIPTIONS_LISTEN).len(), 1);
        client.shutdown().await;
    })
    .await;
}

/// 2025-11-25 over an HTTP session: the fallback subscribes with `resources/subscribe` and
/// receives the session's notifications on the standalone GET stream; closing unsubscribes.
#[tokio::test]
async fn http_handshake_fallback() {
    within(async {
        let probe = Probe::default();
        let (s, srv) = start(&probe).await;
        let client = connect(&srv, Lifecycle::Handshake).await;
        let mut sub = client.listen(tools_and_a()).await.unwrap();
        assert_eq!(sub.era(), Era::Handshake);
        assert_eq!(probe.calls(methods::RESOURCES_SUBSCRIBE), 1);
        // The GET stream may open just after the handshake: retry the change until it lands.
        let event = loop {
            s.notify_resource_updated("r://a");
            match tokio::time::timeout(Duration::from_millis(200), sub.next()).await {
                Ok(e) => break e,
                Err(_) => continue,
            }
        };
        assert_eq!(event, Some(ListenEvent::ResourceUpdated("r://a".into())));
        sub.close().await;
        assert_eq!(probe.calls(methods::RESOURCES_UNSUBSCRIBE), 1);
        client.shutdown().await;
    })
    .await;
}

/// A response body: the given SSE text as one frame, then either the end (`hold: false`, a
/// dropped stream) or nothing more, ever (`hold: true`, an open stream).
struct Sse {
    text: Option<bytes::Bytes>,
    hold: bool,
}

impl hyper::body::Body for Sse {
    type Data = bytes::Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        match self.text.take() {
            Some(t) => std::task::Poll::Ready(Some(Ok(hyper::body::Frame::data(t)))),
            None if self.hold => std::task::Poll::Pending,
            None => std::task::Poll::Ready(None),
        }
    }
}

/// What the raw server does with the n-th (1-based) `subscriptions/listen` POST.
#[derive(Clone, Copy, Debug)]
enum Reply {
    /// The acknowledgment (with an SSE event id), then the stream ends without an answer.
    AckThenDrop,
    /// The acknowledgment, then the stream stays open.
    AckThenHold,
    /// The acknowledgment, then the result (graceful closure), then the end.
    AckThenAnswer,
    /// The acknowledgment and an extension's notification on the stream, then it stays open.
    AckThenExtension,
    /// A bare HTTP status.
    Status(u16),
}

/// A raw 2026-07-28 server: `server/discover` as JSON; `subscriptions/listen` scripted by
/// `script(n)`; records the `Last-Event-ID` of every GET (answered 405).
struct RawServer {
    url: String,
    listens: Arc<std::sync::atomic::AtomicUsize>,
    gets: Arc<std::sync::Mutex<Vec<Option<String>>>>,
}

async fn raw_server(script: fn(usize) -> Reply) -> RawServer {
    use http::{Method, Request, Response};
    use http_body_util::BodyExt;
    use hyper::body::Incoming;
    use hyper_util::rt::TokioIo;
    use serde_json::{Value, json};

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let listens = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let gets = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (l, g) = (listens.clone(), gets.clone());
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let (l, g) = (l.clone(), g.clone());
            let svc = hyper::service::service_fn(move |req: Request<Incoming>| {
                let (l, g) = (l.clone(), g.clone());
                async move {
                    let reply = |status: u16, ctype: &str, text: String, hold: bool| {
                        Ok::<_, std::convert::Infallible>(
                            Response::builder()
                                .status(status)
                                .header("content-type", ctype)
                                .body(Sse {
                                    text: Some(text.into()),
                                    hold,
                                })
                                .unwrap(),
                        )
                    };
                    if req.method() == Method::GET {
                        let last = req.headers().get("last-event-id");
                        g.lock()
                            .unwrap()
                            .push(last.map(|v| v.to_str().unwrap().to_owned()));
                        return reply(405, "text/plain", String::new(), false);
                    }
                    let body = req.into_body().collect().await.unwrap().to_bytes();
                    let msg: Value = serde_json::from_slice(&body).unwrap();
                    let id = msg["id"].clone();
                    match msg["method"].as_str() {
                        Some("server/discover") => {
                            let answer = json!({"jsonrpc": "2.0", "id": id, "result": {
                                "supportedVersions": ["2026-07-28"],
                                "capabilities": {"tools": {"listChanged": true}},
                                "_meta": {"io.modelcontextprotocol/serverInfo":
                                          {"name": "raw", "version": "1"}}
                            }});
                            reply(200, "application/json", answer.to_string(), false)
                        }
                        Some("subscriptions/listen") => {
                            let n = l.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
                            let tag = json!({"io.modelcontextprotocol/subscriptionId": id});
                            let ack = json!({"jsonrpc": "2.0",
                                "method": "notifications/subscriptions/acknowledged",
                                "params": {"_meta": tag, "notifications": {"toolsListChanged": true}}});
                            let ack = format!("id: ev-{n}\nretry: 10\ndata: {ack}\n\n");
                            match script(n) {
                                Reply::AckThenDrop => reply(200, "text/event-stream", ack, false),
                                Reply::AckThenHold => reply(200, "text/event-stream", ack, true),
                                Reply::AckThenExtension => {
                                    let note = json!({"jsonrpc": "2.0", "method": "notifications/tasks",
                                        "params": {"_meta": tag, "taskId": "t-1", "status": "working"}});
                                    reply(
                                        200,
                                        "text/event-stream",
                                        format!("{ack}data: {note}\n\n"),
                                        true,
                                    )
                                }
                                Reply::AckThenAnswer => {
                                    let done = json!({"jsonrpc": "2.0", "id": id,
                                        "result": {"resultType": "complete", "_meta": tag}});
                                    let text = format!("{ack}data: {done}\n\n");
                                    reply(200, "text/event-stream", text, false)
                                }
                                Reply::Status(code) => {
                                    reply(code, "text/plain", String::new(), false)
                                }
                            }
                        }
                        _ => {
                            let answer = json!({"jsonrpc": "2.0", "id": id,
                                                "error": {"code": -32601, "message": "no"}});
                            reply(200, "application/json", answer.to_string(), false)
                        }
                    }
                }
            });
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    RawServer {
        url: format!("http://{addr}/mcp"),
        listens,
        gets,
    }
}

impl RawServer {
    async fn client(&self) -> Client {
        Client::builder()
            .lifecycle(Lifecycle::Modern)
            .connect(HttpTransport::new(&self.url).unwrap())
            .await
            .unwrap()
    }

    fn listens(&self) -> usize {
        self.listens.load(Ordering::SeqCst)
    }
}

fn tools_only() -> SubscriptionFilter {
    SubscriptionFilter::new().with_tools_list_changed(true)
}

fn fast() -> ListenOptions {
    ListenOptions::new().reconnect_delay(Duration::from_millis(10))
}

/// 2026-07-28 basic/transports/streamable-http: "Resumable SSE streams via `Last-Event-ID`
/// are not supported". A listen stream that carries SSE event ids and drops after the
/// acknowledgment is replaced by a new listen POST (`Reconnected`); no GET with
/// `Last-Event-ID` is ever sent.
#[tokio::test]
async fn http_modern_stream_with_event_ids_is_reposted_not_resumed() {
    within(async {
        let srv = raw_server(|n| {
            if n == 1 {
                Reply::AckThenDrop
            } else {
                Reply::AckThenHold
            }
        })
        .await;
        let client = srv.client().await;
        let mut sub = client.listen_with(tools_only(), fast()).await.unwrap();
        assert_eq!(
            sub.next().await,
            Some(ListenEvent::Reconnected {
                acknowledged: tools_only()
            })
        );
        assert_eq!(srv.listens(), 2);
        let gets = srv.gets.lock().unwrap().clone();
        assert!(gets.is_empty(), "GETs: {gets:?}");
        drop(sub);
        client.shutdown().await;
    })
    .await;
}

/// Reconnection policy: transient refusals (HTTP 503 without a JSON-RPC answer) count as
/// failed attempts and are retried with backoff; the next acknowledged stream resumes the
/// subscription.
#[tokio::test]
async fn http_listen_retries_transient_refusals() {
    within(async {
        let srv = raw_server(|n| match n {
            1 => Reply::AckThenDrop,
            2 | 3 => Reply::Status(503),
            _ => Reply::AckThenHold,
        })
        .await;
        let client = srv.client().await;
        let mut sub = client.listen_with(tools_only(), fast()).await.unwrap();
        assert_eq!(
            sub.next().await,
            Some(ListenEvent::Reconnected {
                acknowledged: tools_only()
            })
        );
        assert_eq!(srv.listens(), 4);
        drop(sub);
        client.shutdown().await;
    })
    .await;
}

/// The reconnection bound: `max_reconnects` failed attempts in a row end the subscription
/// with `Failed`, carrying the last error (here the 503, `data.httpStatus`).
#[tokio::test]
async fn http_listen_gives_up_after_max_reconnects() {
    within(async {
        let srv = raw_server(|n| {
            if n == 1 {
                Reply::AckThenDrop
            } else {
                Reply::Status(503)
            }
        })
        .await;
        let client = srv.client().await;
        let mut sub = client
            .listen_with(tools_only(), fast().max_reconnects(2))
            .await
            .unwrap();
        match sub.next().await {
            Some(ListenEvent::Ended(ListenEnd::Failed(e))) => {
                let status = e.data.as_ref().and_then(|d| d["httpStatus"].as_u64());
                assert_eq!(status, Some(503), "{e:?}");
            }
            other => panic!("expected Failed, got {other:?}"),
        }
        assert_eq!(srv.listens(), 3, "the first stream and two attempts");
        client.shutdown().await;
    })
    .await;
}

/// §Graceful Closure over HTTP: the result on the listen stream ends the subscription with
/// `ServerClosed`; it is not reconnected. A refusal at opening (HTTP 403) is the opening's
/// error, not retried.
#[tokio::test]
async fn http_listen_graceful_closure_and_refused_opening() {
    within(async {
        let srv = raw_server(|n| {
            if n == 1 {
                Reply::AckThenAnswer
            } else {
                Reply::Status(403)
            }
        })
        .await;
        let client = srv.client().await;
        let mut sub = client.listen_with(tools_only(), fast()).await.unwrap();
        assert_eq!(
            sub.next().await,
            Some(ListenEvent::Ended(ListenEnd::ServerClosed))
        );
        assert_eq!(sub.next().await, None);
        let err = client.listen_with(tools_only(), fast()).await.unwrap_err();
        let status = err
            .as_protocol()
            .and_then(|e| e.data.as_ref())
            .and_then(|d| d["httpStatus"].as_u64());
        assert_eq!(status, Some(403), "{err}");
        assert_eq!(srv.listens(), 2);
        client.shutdown().await;
    })
    .await;
}

/// §Receiving Notifications: any other notification tagged with the subscription id (here
/// the tasks extension's `notifications/tasks`) is delivered as `Other`, params as sent.
#[tokio::test]
async fn http_listen_delivers_other_tagged_notifications() {
    within(async {
        let srv = raw_server(|_| Reply::AckThenExtension).await;
        let client = srv.client().await;
        let mut sub = client.listen_with(tools_only(), fast()).await.unwrap();
        match sub.next().await {
            Some(ListenEvent::Other { method, params }) => {
                assert_eq!(method, "notifications/tasks");
                let params = params.unwrap();
                assert_eq!(params["taskId"], "t-1");
                assert_eq!(params["status"], "working");
            }
            other => panic!("expected Other, got {other:?}"),
        }
        drop(sub);
        client.shutdown().await;
    })
    .await;
}

/// `HttpConfig::max_concurrent_requests` bounds calls, not subscriptions: with a bound of one,
/// two open listen streams leave room for calls. The listen stream's SSE keep-alive comments
/// (2026-07-28 streamable-http: "clients must ignore such lines") are ignored.
#[tokio::test]
async fn http_listen_streams_do_not_take_request_permits() {
    within(async {
        let probe = Probe::default();
        let s = server(&probe);
        let mut config = ServerConfig::default();
        config.keep_alive = Duration::from_millis(10);
        let srv = start_with(s.server().clone(), config, Arc::new(Flags::default())).await;
        let transport = HttpTransport::new(srv.url()).unwrap().config(
            ferromcp_client::transport::http::HttpConfig::default().max_concurrent_requests(1),
        );
        let client = Client::builder()
            .lifecycle(Lifecycle::Modern)
            .connect(transport)
            .await
            .unwrap();
        let mut a = client.listen(tools_and_a()).await.unwrap();
        let _b = client.listen(tools_and_a()).await.unwrap();
        client.list_tools(None).await.unwrap();
        // Let keep-alive comments flow on both streams, then change something.
        tokio::time::sleep(Duration::from_millis(100)).await;
        s.add_tool("t2", || async { "t2" }).unwrap();
        assert_eq!(a.next().await, Some(ListenEvent::ToolListChanged));
        client.shutdown().await;
    })
    .await;
}
