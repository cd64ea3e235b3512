//! The inspector's HTTP server (hyper, HTTP/1.1, loopback): every request passes the
//! [`Guard`] first; then the page and its assets, the JSON API and the event stream. A
//! second listener serves the MCP Apps sandbox page from another origin.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Frame, Incoming};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::{broadcast, mpsc};

use super::assets;
use super::security::{Guard, Refusal};
use super::session::State;

type Body = BoxBody<Bytes, Infallible>;

/// Comments sent on an idle event stream.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into()).boxed()
}

fn respond(status: u16, content_type: &str, body: Body) -> Response<Body> {
    let mut r = Response::new(body);
    *r.status_mut() = http::StatusCode::from_u16(status).unwrap_or(http::StatusCode::OK);
    let h = r.headers_mut();
    if let Ok(v) = http::HeaderValue::from_str(content_type) {
        h.insert(http::header::CONTENT_TYPE, v);
    }
    h.insert(
        http::header::CACHE_CONTROL,
        http::HeaderValue::from_static("no-store"),
    );
    // The token is in the page's URL: never send it on as a Referer.
    h.insert(
        http::header::REFERRER_POLICY,
        http::HeaderValue::from_static("no-referrer"),
    );
    h.insert(
        http::header::X_CONTENT_TYPE_OPTIONS,
        http::HeaderValue::from_static("nosniff"),
    );
    r
}

fn json(status: u16, text: String) -> Response<Body> {
    respond(status, "application/json", full(text))
}

fn refused(r: Refusal) -> Response<Body> {
    let body = serde_json::json!({ "error": { "message": r.message() } }).to_string();
    json(r.status(), body)
}

fn header(req: &Request<Incoming>, name: http::header::HeaderName) -> Option<&str> {
    req.headers().get(name).and_then(|v| v.to_str().ok())
}

/// What one listener serves.
pub(crate) struct Site {
    pub(crate) guard: Guard,
    pub(crate) state: Arc<State>,
    pub(crate) streams: AtomicUsize,
    /// The sandbox listener's origins (the page's `frame-src`): its address, and its port
    /// under each `--allow-host` name.
    pub(crate) sandbox_origins: Vec<String>,
}

/// Serves `listener` with the inspector until the process ends.
pub(crate) async fn serve(listener: TcpListener, site: Arc<Site>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let site = site.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                let site = site.clone();
                async move { Ok::<_, Infallible>(handle(&site, req).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

async fn handle(site: &Arc<Site>, req: Request<Incoming>) -> Response<Body> {
    if req.uri().path() == super::oauth::CALLBACK_PATH && req.method() == http::Method::GET {
        return oauth_callback(site, &req);
    }
    let token_header = http::header::HeaderName::from_static("x-inspector-token");
    if let Err(r) = site.guard.check(
        header(&req, http::header::HOST),
        header(&req, http::header::ORIGIN),
        header(&req, token_header),
        req.uri().query(),
    ) {
        return refused(r);
    }
    let path = req.uri().path().to_owned();
    let state = &site.state;
    match *req.method() {
        http::Method::GET if path == "/" || path == "/index.html" => page(site),
        http::Method::GET if path == "/api/events" => events(site),
        http::Method::GET if path.starts_with("/api/") => match super::api::get(state, &path) {
            Some((status, text)) => json(status, text),
            None => json(404, r#"{"error":{"message":"no such API"}}"#.into()),
        },
        http::Method::GET => match assets::asset(&path) {
            Some((content_type, bytes)) => {
                respond(200, content_type, full(Bytes::from_static(bytes)))
            }
            None => respond(404, "text/plain", full("not found")),
        },
        http::Method::POST if path.starts_with("/api/") => post(site, path, req).await,
        _ => respond(405, "text/plain", full("method not allowed")),
    }
}

/// The authorization server's redirect after a sign-in in the browser: no token (the
/// authorization server cannot know it), but the Host check, the Origin check when an
/// Origin is sent, and a flow waiting under the redirect's `state` (once).
fn oauth_callback(site: &Site, req: &Request<Incoming>) -> Response<Body> {
    if !site.guard.host_ok(header(req, http::header::HOST)) {
        return refused(Refusal::Host);
    }
    if header(req, http::header::ORIGIN).is_some_and(|o| o != site.guard.origin()) {
        return refused(Refusal::Origin);
    }
    let query = req.uri().query().unwrap_or_default();
    if site.state.oauth.deliver(query) {
        respond(
            200,
            "text/html; charset=utf-8",
            full(
                "<!doctype html><title>Signed in</title><p>Signed in: you can close this tab.</p>",
            ),
        )
    } else {
        respond(400, "text/plain", full("no sign-in waits for this state"))
    }
}

/// The page, with the token in its asset URLs and a strict content security policy.
fn page(site: &Site) -> Response<Body> {
    let html = assets::INDEX_HTML.replace("{{TOKEN}}", site.guard.token());
    let mut r = respond(200, "text/html; charset=utf-8", full(html));
    let frames = if site.sandbox_origins.is_empty() {
        "'none'".to_owned()
    } else {
        site.sandbox_origins.join(" ")
    };
    let csp = format!(
        "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
         img-src 'self' data:; media-src 'self' data:; connect-src 'self'; \
         frame-src {frames}; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
    );
    if let Ok(v) = http::HeaderValue::from_str(&csp) {
        r.headers_mut()
            .insert(http::header::CONTENT_SECURITY_POLICY, v);
    }
    r
}

async fn post(site: &Arc<Site>, path: String, req: Request<Incoming>) -> Response<Body> {
    // JSON only: a cross-site page cannot send it without a preflight (which fails).
    let is_json = header(&req, http::header::CONTENT_TYPE).is_some_and(|t| {
        t.trim_start()
            .to_ascii_lowercase()
            .starts_with("application/json")
    });
    if !is_json {
        return json(
            415,
            r#"{"error":{"message":"send application/json"}}"#.into(),
        );
    }
    let limit = site.state.limits.max_body;
    let bytes = match Limited::new(req.into_body(), limit).collect().await {
        Ok(c) => c.to_bytes(),
        Err(_) => {
            let msg = format!("the body is over {limit} bytes (--max-body)");
            return json(
                413,
                serde_json::json!({ "error": { "message": msg } }).to_string(),
            );
        }
    };
    let body: serde_json::Value = match serde_json::from_slice(&bytes) {
        Ok(v) => v,
        Err(e) => {
            let msg = format!("the body is not JSON: {e}");
            return json(
                400,
                serde_json::json!({ "error": { "message": msg } }).to_string(),
            );
        }
    };
    let (status, value) = super::api::post(&site.state, &path, body).await;
    json(status, value.to_string())
}

/// The event stream: the kept events, then live ones, as Server-Sent Events.
fn events(site: &Arc<Site>) -> Response<Body> {
    let max = site.state.limits.max_event_streams;
    if site.streams.fetch_add(1, Ordering::SeqCst) >= max {
        site.streams.fetch_sub(1, Ordering::SeqCst);
        let msg = format!("at most {max} event streams at once");
        return json(
            429,
            serde_json::json!({ "error": { "message": msg } }).to_string(),
        );
    }
    let (kept, rx) = site.state.log.subscribe();
    let (tx, body_rx) = mpsc::channel::<Bytes>(64);
    let site = site.clone();
    tokio::spawn(async move {
        forward(kept, rx, tx).await;
        site.streams.fetch_sub(1, Ordering::SeqCst);
    });
    respond(200, "text/event-stream", SseBody(body_rx).boxed())
}

fn frame(event: &str) -> Bytes {
    Bytes::from(format!("data: {event}\n\n"))
}

async fn forward(
    kept: Vec<super::events::Event>,
    mut rx: broadcast::Receiver<super::events::Event>,
    tx: mpsc::Sender<Bytes>,
) {
    if tx
        .send(Bytes::from_static(b": inspector events\n\n"))
        .await
        .is_err()
    {
        return;
    }
    for e in kept {
        if tx.send(frame(&e)).await.is_err() {
            return;
        }
    }
    loop {
        let next = tokio::time::timeout(KEEP_ALIVE, rx.recv()).await;
        let bytes = match next {
            Ok(Ok(e)) => frame(&e),
            Ok(Err(broadcast::error::RecvError::Lagged(n))) => {
                frame(&serde_json::json!({ "kind": "lagged", "missed": n }).to_string())
            }
            Ok(Err(broadcast::error::RecvError::Closed)) => return,
            Err(_) => Bytes::from_static(b": keep-alive\n\n"),
        };
        if tx.send(bytes).await.is_err() {
            return;
        }
    }
}

/// A body fed from a channel.
struct SseBody(mpsc::Receiver<Bytes>);

impl http_body::Body for SseBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.0.poll_recv(cx).map(|b| b.map(|b| Ok(Frame::data(b))))
    }
}

/// Serves the MCP Apps sandbox page on `listener` (another origin than the inspector's):
/// `apps_host::SANDBOX_PATH` to a GET whose `Host` is the listener's own and whose
/// `?host=` names one of `page_origins` (the inspector page's origins), with the headers of
/// `apps_host::sandbox_headers` for that origin; 403 for another `?host=`, nothing else.
pub(crate) async fn serve_sandbox(listener: TcpListener, guard: Guard, page_origins: Vec<String>) {
    let guard = Arc::new(guard);
    let page_origins = Arc::new(page_origins);
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let guard = guard.clone();
        let page_origins = page_origins.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                let r = sandbox_page(&guard, &page_origins, &req);
                async move { Ok::<_, Infallible>(r) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// The sandbox listener's answer to `req`.
fn sandbox_page(guard: &Guard, page_origins: &[String], req: &Request<Incoming>) -> Response<Body> {
    use crate::apps_host;
    if !guard.host_ok(header(req, http::header::HOST)) {
        return refused(Refusal::Host);
    }
    if req.method() != http::Method::GET {
        return respond(405, "text/plain", full("method not allowed"));
    }
    if req.uri().path() != apps_host::SANDBOX_PATH {
        return respond(404, "text/plain", full("not found"));
    }
    let allowed: Vec<&str> = page_origins.iter().map(String::as_str).collect();
    let query = req.uri().query().unwrap_or_default();
    let Some(headers) =
        apps_host::requested_host_origin(query, &allowed).and_then(apps_host::sandbox_headers)
    else {
        return respond(
            403,
            "text/plain",
            full("not a host origin of this inspector"),
        );
    };
    let mut r = Response::new(full(Bytes::from_static(apps_host::SANDBOX_HTML.as_bytes())));
    for (name, value) in headers {
        if let (Ok(n), Ok(v)) = (
            http::HeaderName::from_bytes(name.as_bytes()),
            http::HeaderValue::from_str(&value),
        ) {
            r.headers_mut().insert(n, v);
        }
    }
    r
}
