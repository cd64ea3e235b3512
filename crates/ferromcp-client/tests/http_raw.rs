//! HTTP client behaviour that ferromcp's own server never provokes, against a scripted raw
//! hyper server (2025-11-25 basic/transports/streamable-http): a 200 with a body in answer to
//! a notification is tolerated ("Sending Messages" 4 expects 202, clients must not choke on
//! more); a standalone GET refused with 400 or 404 ends quietly ("Listening for Messages from
//! the Server": the server may not offer the stream); a broken POST stream is resumed with
//! `Last-Event-ID` only after the server's `retry` delay ("Resumability and Redelivery").

#![cfg(feature = "http")]
#![allow(clippy::unwrap_used, clippy::panic)]

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use ferromcp_client::{Client, HttpTransport, Lifecycle};
use http::{Method, Request, Response};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};

const LIMIT: Duration = Duration::from_secs(30);

async fn within<F: std::future::Future>(f: F) -> F::Output {
    match tokio::time::timeout(LIMIT, f).await {
        Ok(v) => v,
        Err(_) => panic!("timed out after {LIMIT:?}"),
    }
}

/// A body of one frame (or none).
struct Once(Option<Bytes>);

impl hyper::body::Body for Once {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.0.take().map(|b| Ok(hyper::body::Frame::data(b))))
    }
}

/// What the raw server saw.
#[derive(Debug, Clone)]
struct Hit {
    method: Method,
    rpc: Option<String>,
    last_event_id: Option<String>,
    at: Instant,
}

/// The scripted handshake-era server.
struct Raw {
    url: String,
    hits: Arc<Mutex<Vec<Hit>>>,
    /// The status of a standalone GET (no `Last-Event-ID`).
    get_status: Arc<AtomicU16>,
}

impl Raw {
    fn hits(&self) -> Vec<Hit> {
        self.hits.lock().unwrap().clone()
    }
}

fn respond(status: u16, ctype: &str, body: String) -> Response<Once> {
    let mut r = Response::builder().status(status);
    if !ctype.is_empty() {
        r = r.header("content-type", ctype);
    }
    r.header("mcp-session-id", "raw-session")
        .body(Once((!body.is_empty()).then(|| body.into())))
        .unwrap()
}

/// `initialize` and `tools/list` answer as JSON; `notifications/initialized` gets a 200 with
/// a JSON body; `tools/call` answers with an SSE stream holding only a priming event (id `e1`,
/// `retry: 300`) and ending; a GET with `Last-Event-ID: e1` delivers the call's answer; a
/// standalone GET gets `get_status`.
async fn raw(get_status: u16) -> Raw {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let hits = Arc::new(Mutex::new(Vec::new()));
    let status = Arc::new(AtomicU16::new(get_status));
    let call_id = Arc::new(Mutex::new(Value::Null));
    let (h, st) = (hits.clone(), status.clone());
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let (h, st, call_id) = (h.clone(), st.clone(), call_id.clone());
            let svc = hyper::service::service_fn(move |req: Request<Incoming>| {
                let (h, st, call_id) = (h.clone(), st.clone(), call_id.clone());
                async move {
                    let method = req.method().clone();
                    let last_event_id = req
                        .headers()
                        .get("last-event-id")
                        .map(|v| v.to_str().unwrap().to_owned());
                    let body = req.into_body().collect().await.unwrap().to_bytes();
                    let msg: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                    let rpc = msg["method"].as_str().map(str::to_owned);
                    h.lock().unwrap().push(Hit {
                        method: method.clone(),
                        rpc: rpc.clone(),
                        last_event_id: last_event_id.clone(),
                        at: Instant::now(),
                    });
                    let id = msg["id"].clone();
                    let result = |r: Value| json!({"jsonrpc": "2.0", "id": id, "result": r});
                    let r = match (method, rpc.as_deref(), last_event_id.as_deref()) {
                        (Method::GET, _, Some("e1")) => {
                            let answer = json!({"jsonrpc": "2.0", "id": *call_id.lock().unwrap(),
                                "result": {"content": [{"type": "text", "text": "resumed"}]}});
                            respond(
                                200,
                                "text/event-stream",
                                format!("id: e2\ndata: {answer}\n\n"),
                            )
                        }
                        (Method::GET, _, _) => {
                            respond(st.load(Ordering::SeqCst), "", String::new())
                        }
                        (Method::DELETE, _, _) => respond(200, "", String::new()),
                        (_, Some("initialize"), _) => {
                            let r = result(json!({"protocolVersion": "2025-11-25",
                                "capabilities": {"tools": {}},
                                "serverInfo": {"name": "raw", "version": "1"}}));
                            respond(200, "application/json", r.to_string())
                        }
                        (_, Some("notifications/initialized"), _) => {
                            respond(200, "application/json", "{\"ok\": true}".into())
                        }
                        (_, Some("tools/list"), _) => respond(
                            200,
                            "application/json",
                            result(json!({"tools": []})).to_string(),
                        ),
                        (_, Some("tools/call"), _) => {
                            *call_id.lock().unwrap() = id.clone();
                            respond(
                                200,
                                "text/event-stream",
                                "id: e1\nretry: 300\ndata:\n\n".into(),
                            )
                        }
                        _ => respond(202, "", String::new()),
                    };
                    Ok::<_, Infallible>(r)
                }
            });
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    Raw {
        url,
        hits,
        get_status: status,
    }
}

async fn connect(raw: &Raw) -> Client {
    Client::builder()
        .lifecycle(Lifecycle::Handshake)
        .connect(HttpTransport::new(&raw.url).unwrap())
        .await
        .unwrap()
}

/// A 200 with a JSON body in answer to `notifications/initialized` is tolerated, and a
/// standalone GET refused with 400 or 404 is not retried; the session works on.
#[tokio::test]
async fn notification_200_with_body_and_refused_get_stream_are_tolerated() {
    within(async {
        for status in [400, 404] {
            let raw = raw(status).await;
            let client = connect(&raw).await;
            client.list_tools(None).await.unwrap();
            // Give a (wrong) retry loop the time to show: the default reconnection delay is 1 s.
            tokio::time::sleep(Duration::from_millis(1500)).await;
            client.list_tools(None).await.unwrap();
            let gets = raw
                .hits()
                .iter()
                .filter(|h| h.method == Method::GET)
                .count();
            assert_eq!(gets, 1, "GET {status} must end the standalone stream");
            assert_eq!(raw.get_status.load(Ordering::SeqCst), status);
            client.shutdown().await;
        }
    })
    .await;
}

/// The broken `tools/call` stream is resumed with `Last-Event-ID: e1`, no sooner than the
/// server's `retry: 300`, and the answer arrives on the resumed stream.
#[tokio::test]
async fn resumption_waits_for_the_servers_retry() {
    within(async {
        let raw = raw(405).await;
        let client = connect(&raw).await;
        let r = client.call_tool("x", json!({})).await.unwrap();
        assert_eq!(r.content[0].as_text(), Some("resumed"));
        let hits = raw.hits();
        let call = hits
            .iter()
            .find(|h| h.rpc.as_deref() == Some("tools/call"))
            .unwrap();
        let resume = hits
            .iter()
            .find(|h| h.last_event_id.as_deref() == Some("e1"))
            .unwrap();
        assert_eq!(resume.method, Method::GET);
        let waited = resume.at.duration_since(call.at);
        assert!(
            waited >= Duration::from_millis(300),
            "resumed after {waited:?}"
        );
        client.shutdown().await;
    })
    .await;
}
