//! The engine behind [`HttpTransport`](super::HttpTransport): one POST per outbound message,
//! each request's response (JSON or SSE) fed back as inbound messages; session state, the
//! standalone GET stream, resumption and re-initialization on an expired session.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use bytes::Bytes;
use ferromcp_dispatch::codec::SseParser;
use ferromcp_dispatch::{Inbound, MessageMeta, ResumptionHooks, TransportMessage};
use ferromcp_types::jsonrpc::{
    Decoder, ErrorCode, ErrorObject, Frame, Message, Notification, Payload, Request, RequestId,
};
use ferromcp_types::mcp::{META_PROTOCOL_VERSION, methods};
use http::header::{ACCEPT, CONTENT_TYPE};
use http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
use http_body_util::{BodyExt, Full, Limited};
use serde_json::{Value, json};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio::task::AbortHandle;

use super::client::{Body as Incoming, HttpClient};
use super::headers::{MCP_PROTOCOL_VERSION, MCP_SESSION_ID, ToolHeaders, modern_headers};
use super::stream::drain;
use super::{HttpConfig, MAX_AUTH_RETRIES};

const ACCEPT_BOTH: HeaderValue = HeaderValue::from_static("application/json, text/event-stream");
pub(super) const ACCEPT_SSE: HeaderValue = HeaderValue::from_static("text/event-stream");
const JSON: HeaderValue = HeaderValue::from_static("application/json");
/// The bound on an error response body read for its JSON-RPC error.
const MAX_ERROR_BODY: usize = 64 * 1024;
/// The most `tools/list` pages read to refresh tool annotations after a -32020.
const MAX_REFRESH_PAGES: usize = 16;
/// How long the rest of a response stream is read after its answer, so that the connection
/// can go back to the pool.
pub(super) const DRAIN_BOUND: Duration = Duration::from_secs(1);

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Handshake-era session state, learnt from the `initialize` exchange.
#[derive(Default)]
pub(super) struct Session {
    /// `Mcp-Session-Id` from the `initialize` response.
    pub(super) id: Option<HeaderValue>,
    /// The negotiated version, sent as `MCP-Protocol-Version` after the handshake.
    pub(super) version: Option<HeaderValue>,
    /// The `initialize` params, replayed when the session expires.
    pub(super) init_params: Option<Payload>,
    /// Bumped whenever the session changes (new `initialize`).
    pub(super) generation: u64,
}

/// A request POST in flight, so that a cancellation can abort it.
struct InFlight {
    abort: AbortHandle,
    modern: bool,
}

pub(crate) struct Engine {
    pub(super) client: HttpClient,
    pub(super) uri: Uri,
    pub(super) cfg: HttpConfig,
    pub(super) inbound: mpsc::Sender<Inbound>,
    pub(super) session: Mutex<Session>,
    pub(super) tools: Mutex<ToolHeaders>,
    in_flight: Mutex<HashMap<RequestId, InFlight>>,
    pub(super) get_stream: Mutex<Option<AbortHandle>>,
    /// Single-flight re-initialization.
    pub(super) reinit: tokio::sync::Mutex<()>,
    pub(super) reinit_seq: AtomicU64,
    pub(super) requests: Arc<Semaphore>,
    /// The version of the last modern-era request: set once the client runs in that era.
    pub(super) modern_version: Mutex<Option<HeaderValue>>,
    pub(super) closed: AtomicBool,
    /// Set once the connection speaks the 2024-11-05 HTTP+SSE transport.
    pub(super) legacy: std::sync::OnceLock<Arc<super::sse::SseLink>>,
}

/// The session headers a request was sent with.
struct Sent {
    with_session: bool,
    generation: u64,
}

fn error_for(id: &RequestId, code: ErrorCode, message: String, data: Option<Value>) -> Message {
    let mut e = ErrorObject::new(code, message);
    if let Some(d) = data {
        e = e.with_data(d);
    }
    Message::error(Some(id.clone()), e)
}

pub(super) fn transport_error(id: &RequestId, what: impl std::fmt::Display) -> Message {
    error_for(
        id,
        ErrorCode::CONNECTION_CLOSED,
        format!("HTTP transport: {what}"),
        None,
    )
}

fn status_error(id: &RequestId, status: StatusCode) -> Message {
    error_for(
        id,
        ErrorCode::INTERNAL_ERROR,
        format!("HTTP {status} without a JSON-RPC answer"),
        Some(json!({"httpStatus": status.as_u16()})),
    )
}

pub(super) fn content_type(h: &HeaderMap) -> String {
    h.get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase())
        .unwrap_or_default()
}

/// Whether `msg` answers request `id` (an error with a null id counts: servers send those
/// for requests they could not read).
pub(super) fn answers(msg: &Message, id: &RequestId) -> bool {
    match msg {
        Message::Response(r) => &r.id == id,
        Message::Error(e) => e.id.as_ref().is_none_or(|i| i == id),
        _ => false,
    }
}

pub(super) fn with_id(msg: Message, id: &RequestId) -> Message {
    match msg {
        Message::Error(mut e) => {
            e.id = Some(id.clone());
            Message::Error(e)
        }
        other => other,
    }
}

/// Records the HTTP status in an error's `data` (when `data` is absent or an object without
/// one), so callers can tell a server's answer from a local failure that happens to share its
/// code: some servers answer HTTP 400 with -32000, which is also our "connection closed".
fn with_http_status(msg: Message, status: StatusCode) -> Message {
    match msg {
        Message::Error(mut e) => {
            match &mut e.error.data {
                None => e.error.data = Some(json!({"httpStatus": status.as_u16()})),
                Some(Value::Object(map)) => {
                    map.entry("httpStatus").or_insert(json!(status.as_u16()));
                }
                Some(_) => {}
            }
            Message::Error(e)
        }
        other => other,
    }
}

/// Whether request params carry the 2026-07-28 envelope.
fn modern_params(params: Option<&Value>) -> bool {
    params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(META_PROTOCOL_VERSION))
        .is_some()
}

/// A short, loggable prefix of a session id (never logged in full).
fn redact(v: &HeaderValue) -> String {
    let s = v.to_str().unwrap_or("");
    format!("{}…", s.chars().take(6).collect::<String>())
}

impl Engine {
    pub(crate) fn new(
        client: HttpClient,
        uri: Uri,
        cfg: HttpConfig,
        inbound: mpsc::Sender<Inbound>,
    ) -> Self {
        let permits = cfg.max_concurrent_requests.max(1);
        Self {
            client,
            uri,
            cfg,
            inbound,
            session: Mutex::new(Session::default()),
            tools: Mutex::new(ToolHeaders::default()),
            in_flight: Mutex::new(HashMap::new()),
            get_stream: Mutex::new(None),
            reinit: tokio::sync::Mutex::new(()),
            reinit_seq: AtomicU64::new(0),
            requests: Arc::new(Semaphore::new(permits)),
            modern_version: Mutex::new(None),
            closed: AtomicBool::new(false),
            legacy: std::sync::OnceLock::new(),
        }
    }

    /// Whether the connection runs in the modern era: modern requests seen, no handshake.
    fn in_modern_era(&self) -> bool {
        lock(&self.session).version.is_none() && lock(&self.modern_version).is_some()
    }

    pub(super) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// One outbound message: requests run as their own task (concurrently); notifications
    /// and responses are posted before this returns (so that `notifications/initialized`
    /// reaches the server before the next request).
    pub(crate) async fn send(self: &Arc<Self>, msg: TransportMessage) -> bool {
        if self.is_closed() {
            return false;
        }
        if let Some(link) = self.legacy.get() {
            return self.send_legacy(link, msg).await;
        }
        let TransportMessage { message, meta } = msg;
        match message {
            // A `subscriptions/listen` stream lasts as long as its subscription: it takes no
            // permit, so open subscriptions never starve calls.
            Message::Request(req) if req.method == methods::SUBSCRIPTIONS_LISTEN => {
                self.start_request(req, meta, None);
            }
            Message::Request(req) => {
                let Ok(permit) = self.requests.clone().acquire_owned().await else {
                    return false;
                };
                self.start_request(req, meta, Some(permit));
            }
            Message::Notification(n) => self.send_notification(n, meta).await,
            other => {
                let body = Bytes::from(other.to_vec());
                let headers = self.headers(None, meta.headers.as_ref()).0;
                self.post_one_way(body, headers).await;
            }
        }
        true
    }

    async fn send_notification(self: &Arc<Self>, n: Notification, meta: MessageMeta) {
        if n.method == ferromcp_dispatch::utility::CANCELLED {
            let target = n
                .params
                .as_ref()
                .and_then(|p| p.parse::<Value>().ok())
                .and_then(|v| v.get("requestId").cloned())
                .and_then(|v| serde_json::from_value::<RequestId>(v).ok());
            let in_flight = target.and_then(|id| lock(&self.in_flight).remove(&id));
            let modern = match in_flight {
                Some(f) => {
                    // Closing the response stream cancels the request (2026-07-28); in the
                    // handshake era the server is told below, and nobody waits for the
                    // stream.
                    f.abort.abort();
                    f.modern
                }
                None => self.in_modern_era(),
            };
            if modern {
                // No `notifications/cancelled` over Streamable HTTP in 2026-07-28.
                return;
            }
        }
        let start_stream = n.method == methods::NOTIFICATION_INITIALIZED;
        let body = Bytes::from(Message::Notification(n).to_vec());
        let headers = self.headers(None, meta.headers.as_ref()).0;
        self.post_one_way(body, headers).await;
        if start_stream {
            self.start_get_stream();
        }
    }

    /// POSTs a notification or response: 202 expected; a 200 with a body is tolerated (and
    /// ignored); failures are logged.
    async fn post_one_way(&self, body: Bytes, headers: HeaderMap) {
        match self.send_http(Method::POST, headers, body).await {
            Ok(resp) if resp.status().is_success() => {
                if content_type(resp.headers()) == "application/json" {
                    let _ = tokio::time::timeout(
                        DRAIN_BOUND,
                        Limited::new(resp.into_body(), MAX_ERROR_BODY).collect(),
                    )
                    .await;
                }
            }
            Ok(resp) => {
                tracing::debug!(status = %resp.status(), "a notification or response POST was refused");
            }
            Err(e) => tracing::debug!(error = %e, "a notification or response POST failed"),
        }
    }

    /// The headers of a POST: `Accept`, `Content-Type`, static headers; then either the
    /// modern request metadata (when `params` carry the envelope) or the session headers;
    /// then the call's own headers.
    fn headers(
        &self,
        request: Option<(&str, Option<&Value>)>,
        extra: Option<&HeaderMap>,
    ) -> (HeaderMap, Sent, bool) {
        let mut h = self.cfg.headers.clone();
        h.insert(ACCEPT, ACCEPT_BOTH);
        h.insert(CONTENT_TYPE, JSON);
        let mut modern = false;
        if let Some((method, params)) = request {
            let facts = modern_headers(method, params, &lock(&self.tools), &mut h);
            if let Some(v) = facts.modern_version {
                if let Ok(v) = HeaderValue::from_str(&v) {
                    *lock(&self.modern_version) = Some(v.clone());
                    h.insert(MCP_PROTOCOL_VERSION, v);
                }
                modern = true;
            }
        }
        let initialize = request.is_some_and(|(m, _)| m == methods::INITIALIZE);
        let mut sent = Sent {
            with_session: false,
            generation: 0,
        };
        if !modern && !initialize {
            let s = lock(&self.session);
            sent.generation = s.generation;
            if let Some(id) = &s.id {
                h.insert(MCP_SESSION_ID, id.clone());
                sent.with_session = true;
            }
            if let Some(v) = &s.version {
                h.insert(MCP_PROTOCOL_VERSION, v.clone());
            } else if let Some(v) = lock(&self.modern_version).clone() {
                // A notification in the modern era: the era's version header.
                h.insert(MCP_PROTOCOL_VERSION, v);
            }
        }
        if let Some(extra) = extra {
            for (k, v) in extra {
                h.append(k, v.clone());
            }
        }
        (h, sent, modern)
    }

    /// Sends one HTTP request. With an auth provider, every request (POST, GET stream,
    /// DELETE) carries its credentials, and a 401 or 403 it answers is retried
    /// ([`MAX_AUTH_RETRIES`] at most).
    pub(super) async fn send_http(
        &self,
        method: Method,
        headers: HeaderMap,
        body: Bytes,
    ) -> Result<http::Response<Incoming>, String> {
        self.send_http_to(&self.uri, method, headers, body).await
    }

    /// [`send_http`](Self::send_http) to another URL of the same origin (the HTTP+SSE
    /// endpoint).
    pub(super) async fn send_http_to(
        &self,
        uri: &Uri,
        method: Method,
        mut headers: HeaderMap,
        body: Bytes,
    ) -> Result<http::Response<Incoming>, String> {
        let mut challenges = 0;
        loop {
            if let Some(auth) = &self.cfg.auth {
                auth.0.prepare().await;
                auth.0.apply(&method, uri, &mut headers);
            }
            let mut req = http::Request::new(Full::new(body.clone()));
            *req.method_mut() = method.clone();
            *req.uri_mut() = uri.clone();
            *req.headers_mut() = headers.clone();
            let resp = self.client.request(req).await.map_err(|e| e.to_string())?;
            let Some(auth) = &self.cfg.auth else {
                return Ok(resp);
            };
            let status = resp.status();
            auth.0.observe(status, resp.headers());
            if (status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN)
                && challenges < MAX_AUTH_RETRIES
                && auth.0.on_challenge_response(status, resp.headers()).await
            {
                challenges += 1;
                drain(resp.into_body());
                continue;
            }
            return Ok(resp);
        }
    }

    fn start_request(
        self: &Arc<Self>,
        req: Request,
        meta: MessageMeta,
        permit: Option<OwnedSemaphorePermit>,
    ) {
        let id = req.id.clone();
        let params: Option<Value> = req.params.as_ref().and_then(|p| match p {
            Payload::Value(v) => Some(v.clone()),
            Payload::Raw(_) => p.parse().ok(),
        });
        let (headers, sent, modern) =
            self.headers(Some((&req.method, params.as_ref())), meta.headers.as_ref());
        if req.method == methods::INITIALIZE {
            lock(&self.session).init_params = req.params.clone();
        }
        let body = Bytes::from(Message::Request(req.clone()).to_vec());
        let this = self.clone();
        let method = req.method;
        let extra = meta.headers;
        let hooks = meta.resumption;
        let task_id = id.clone();
        let mut table = lock(&self.in_flight);
        let task = tokio::spawn(async move {
            let _permit = permit;
            let answer = this
                .run_request(
                    &task_id,
                    &method,
                    params.as_ref(),
                    body,
                    (headers, sent),
                    extra,
                    hooks,
                )
                .await;
            lock(&this.in_flight).remove(&task_id);
            let answer = this.post_process(&method, modern, answer);
            this.deliver(answer).await;
        });
        table.insert(
            id,
            InFlight {
                abort: task.abort_handle(),
                modern,
            },
        );
    }

    #[allow(clippy::too_many_arguments)]
    async fn run_request(
        self: &Arc<Self>,
        id: &RequestId,
        method: &str,
        params: Option<&Value>,
        body: Bytes,
        first: (HeaderMap, Sent),
        extra: Option<HeaderMap>,
        hooks: Option<Arc<dyn ResumptionHooks>>,
    ) -> Message {
        let (mut headers, mut sent) = first;
        if let Some(token) = hooks.as_ref().and_then(|h| h.resume_from()) {
            let mut parser = SseParser::with_max_event_size(self.cfg.max_event_size);
            return self
                .resume(id, &mut parser, token, None, hooks.as_deref())
                .await;
        }
        let mut retried = false;
        let mut relisted = false;
        loop {
            let resp = match self
                .send_http(Method::POST, headers.clone(), body.clone())
                .await
            {
                Ok(r) => r,
                Err(e) => return transport_error(id, e),
            };
            if self.wants_sse_fallback(method, &resp) {
                let refused = self.read_answer(resp, id, hooks.as_deref(), false).await;
                return self.fall_back_to_sse(id, body).await.unwrap_or(refused);
            }
            if resp.status() == StatusCode::NOT_FOUND
                && sent.with_session
                && method != methods::INITIALIZE
            {
                if retried || !self.cfg.reinitialize_on_expiry {
                    return session_expired(id, "the server ended the session");
                }
                tracing::debug!(%id, "session expired (404): re-initializing");
                if let Err(why) = self.reinitialize(sent.generation).await {
                    return session_expired(id, &why);
                }
                retried = true;
                (headers, sent, _) = self.headers(Some((method, params)), extra.as_ref());
                continue;
            }
            let session_id = resp.headers().get(MCP_SESSION_ID).cloned();
            let modern = modern_params(params);
            let answer = self.read_answer(resp, id, hooks.as_deref(), modern).await;
            if method == methods::INITIALIZE {
                self.adopt_session(session_id, &answer);
            }
            let mismatch = matches!(&answer, Message::Error(e)
                if e.error.code == ErrorCode::HEADER_MISMATCH);
            if mismatch && !relisted && method == methods::TOOLS_CALL && modern_params(params) {
                // 2026-07-28 "Custom Headers from Tool Parameters › Client Behavior": re-read
                // the tool's inputSchema, then retry with the right headers (once).
                relisted = true;
                self.refresh_tools(params).await;
                (headers, sent, _) = self.headers(Some((method, params)), extra.as_ref());
                continue;
            }
            return answer;
        }
    }

    /// Lists the tools (modern era, with the failed call's envelope, up to
    /// [`MAX_REFRESH_PAGES`] pages) to learn their `x-mcp-header` annotations.
    async fn refresh_tools(self: &Arc<Self>, call_params: Option<&Value>) {
        let meta = call_params.and_then(|p| p.get("_meta")).cloned();
        let mut cursor: Option<Value> = None;
        for _ in 0..MAX_REFRESH_PAGES {
            let mut params = json!({ "_meta": meta.clone().unwrap_or_else(|| json!({})) });
            if let Some(c) = cursor.take() {
                params["cursor"] = c;
            }
            let n = self.reinit_seq.fetch_add(1, Ordering::Relaxed) + 1;
            let id = RequestId::String(format!("ferromcp-tools-refresh-{n}").into());
            let (headers, _, _) = self.headers(Some((methods::TOOLS_LIST, Some(&params))), None);
            let body = Message::Request(Request::new(
                id.clone(),
                methods::TOOLS_LIST,
                Some(Payload::from_value(params)),
            ))
            .to_vec();
            let Ok(resp) = self
                .send_http(Method::POST, headers, Bytes::from(body))
                .await
            else {
                return;
            };
            let Message::Response(r) = self.read_answer(resp, &id, None, true).await else {
                return;
            };
            let Ok(mut value) = r.result.parse::<Value>() else {
                return;
            };
            lock(&self.tools).observe_list(&mut value);
            match value.get("nextCursor") {
                Some(c) if !c.is_null() => cursor = Some(c.clone()),
                _ => return,
            }
        }
    }

    /// Records the session of an `initialize` answer: its `Mcp-Session-Id` and version.
    fn adopt_session(&self, session_id: Option<HeaderValue>, answer: &Message) {
        let Message::Response(r) = answer else { return };
        let version = r
            .result
            .parse::<Value>()
            .ok()
            .and_then(|v| v.get("protocolVersion")?.as_str().map(str::to_owned))
            .and_then(|v| HeaderValue::from_str(&v).ok());
        let mut s = lock(&self.session);
        if let Some(id) = &session_id {
            tracing::debug!(session = %redact(id), "session started");
        }
        s.id = session_id;
        s.version = version;
        s.generation += 1;
    }

    /// Filters tools with invalid `x-mcp-header` annotations out of a modern `tools/list`
    /// result and remembers the valid annotations.
    fn post_process(&self, method: &str, modern: bool, answer: Message) -> Message {
        if method != methods::TOOLS_LIST || !modern {
            return answer;
        }
        let Message::Response(mut r) = answer else {
            return answer;
        };
        if let Ok(mut value) = r.result.parse::<Value>()
            && lock(&self.tools).observe_list(&mut value)
        {
            r.result = Payload::from_value(value);
        }
        Message::Response(r)
    }

    pub(super) async fn deliver(&self, msg: Message) {
        self.deliver_related(msg, None).await;
    }

    /// Hands `msg` to the dispatcher as related to this side's request `related` (it came on
    /// that request's POST response).
    pub(super) async fn deliver_related(&self, msg: Message, related: Option<&RequestId>) {
        let mut meta = MessageMeta::default();
        meta.related_request_id = related.cloned();
        let _ = self
            .inbound
            .send(Ok(TransportMessage::new(msg, meta)))
            .await;
    }

    /// Reads the answer to request `id` from its POST response: a JSON-RPC error body of an
    /// HTTP error, a JSON body, or an SSE stream (resumed when it breaks, unless `modern`).
    async fn read_answer(
        self: &Arc<Self>,
        resp: http::Response<Incoming>,
        id: &RequestId,
        hooks: Option<&dyn ResumptionHooks>,
        modern: bool,
    ) -> Message {
        let status = resp.status();
        let ctype = content_type(resp.headers());
        if !status.is_success() {
            let body = tokio::time::timeout(
                self.cfg.client.connect_timeout,
                Limited::new(resp.into_body(), MAX_ERROR_BODY).collect(),
            )
            .await;
            if let Ok(Ok(body)) = body
                && let Ok(msg) = Message::from_slice(&body.to_bytes())
                && matches!(msg, Message::Error(_))
                && answers(&msg, id)
            {
                return with_http_status(with_id(msg, id), status);
            }
            return status_error(id, status);
        }
        if status == StatusCode::ACCEPTED {
            return error_for(
                id,
                ErrorCode::INTERNAL_ERROR,
                "HTTP 202 Accepted: the server sent no answer to the request".into(),
                Some(json!({"httpStatus": 202})),
            );
        }
        match ctype.as_str() {
            "application/json" => {
                let body = match Limited::new(resp.into_body(), self.cfg.max_body_size)
                    .collect()
                    .await
                {
                    Ok(b) => b.to_bytes(),
                    Err(e) => return transport_error(id, format!("reading the body: {e}")),
                };
                self.answer_from_json(&body, id).await
            }
            "text/event-stream" => {
                let mut parser = SseParser::with_max_event_size(self.cfg.max_event_size);
                let mut body = resp.into_body();
                match self.pump(&mut body, &mut parser, Some(id), hooks).await {
                    Ok(answer) => {
                        drain(body);
                        answer
                    }
                    // 2026-07-28 has no resumption ("Resumable SSE streams via
                    // `Last-Event-ID` are not supported"): a broken modern stream fails.
                    Err((end, _)) => match parser.last_event_id().filter(|_| !modern) {
                        Some(last) => {
                            let last = last.to_owned();
                            self.resume(id, &mut parser, last, Some(end), hooks).await
                        }
                        None => transport_error(id, end.describe()),
                    },
                }
            }
            other => transport_error(id, format!("unexpected content type {other:?}")),
        }
    }

    async fn answer_from_json(&self, body: &[u8], id: &RequestId) -> Message {
        let frame = match Decoder::new().decode(body) {
            Ok(f) => f,
            Err(e) => return transport_error(id, format!("undecodable JSON body: {e}")),
        };
        let messages = match frame {
            Frame::Single(m) => vec![m],
            Frame::Batch(items) => items.into_iter().filter_map(Result::ok).collect(),
        };
        let mut answer = None;
        for m in messages {
            if answer.is_none() && answers(&m, id) {
                answer = Some(with_id(m, id));
            } else {
                self.deliver_related(m, Some(id)).await;
            }
        }
        answer.unwrap_or_else(|| transport_error(id, "the JSON body held no answer"))
    }

    /// Starts a new session after a 404 (2025-11-25 "Session Management" 4): replays the
    /// `initialize` request without a session id, adopts the new session, sends
    /// `notifications/initialized` and reopens the GET stream. Single-flight: requests that
    /// failed with the same session wait for one re-initialization.
    async fn reinitialize(self: &Arc<Self>, seen: u64) -> Result<(), String> {
        let _one = self.reinit.lock().await;
        let params = {
            let mut s = lock(&self.session);
            if s.generation != seen {
                return Ok(());
            }
            s.id = None;
            s.version = None;
            s.init_params.clone()
        };
        if let Some(old) = lock(&self.get_stream).take() {
            old.abort();
        }
        let Some(params) = params else {
            return Err("no initialize request to replay".into());
        };
        let n = self.reinit_seq.fetch_add(1, Ordering::Relaxed) + 1;
        let id = RequestId::String(format!("ferromcp-reinitialize-{n}").into());
        let body = Bytes::from(
            Message::Request(Request::new(id.clone(), methods::INITIALIZE, Some(params))).to_vec(),
        );
        let (headers, _, _) = self.headers(Some((methods::INITIALIZE, None)), None);
        let resp = self
            .send_http(Method::POST, headers, body)
            .await
            .map_err(|e| format!("re-initialize failed: {e}"))?;
        let session_id = resp.headers().get(MCP_SESSION_ID).cloned();
        let answer = self.read_answer(resp, &id, None, false).await;
        if let Message::Error(e) = &answer {
            return Err(format!("re-initialize failed: {}", e.error.message));
        }
        self.adopt_session(session_id, &answer);
        let note = Message::Notification(Notification::new(
            methods::NOTIFICATION_INITIALIZED,
            Some(Payload::empty_object()),
        ));
        let (headers, _, _) = self.headers(None, None);
        self.post_one_way(Bytes::from(note.to_vec()), headers).await;
        self.start_get_stream();
        Ok(())
    }

    /// Ends the transport: aborts every POST and the GET stream, then DELETEs the session
    /// (405 and failures ignored), bounded by the shutdown timeout.
    pub(crate) async fn shutdown(&self) {
        if self.closed.swap(true, Ordering::AcqRel) {
            return;
        }
        self.requests.close();
        for (_, f) in lock(&self.in_flight).drain() {
            f.abort.abort();
        }
        if let Some(get) = lock(&self.get_stream).take() {
            get.abort();
        }
        if let Some(link) = self.legacy.get() {
            link.close();
        }
        if lock(&self.session).id.is_none() {
            return;
        }
        let headers = self.get_headers();
        match tokio::time::timeout(
            self.cfg.shutdown_timeout,
            self.send_http(Method::DELETE, headers, Bytes::new()),
        )
        .await
        {
            Ok(Ok(resp)) => tracing::debug!(status = %resp.status(), "session DELETE answered"),
            Ok(Err(e)) => tracing::debug!(error = %e, "session DELETE failed"),
            Err(_) => tracing::debug!("session DELETE timed out"),
        }
    }
}

fn session_expired(id: &RequestId, why: &str) -> Message {
    error_for(
        id,
        ErrorCode::INVALID_REQUEST,
        format!("Session terminated: {why}"),
        Some(json!({"httpStatus": 404, "sessionExpired": true})),
    )
}
