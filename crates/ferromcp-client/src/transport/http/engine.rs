//! The engine behind [`HttpTransport`](super::HttpTransport): one POST per outbound message,
//! each request's response (JSON or SSE) fed back as inbound messages; session state, the
//! standalone GET stream, resumption and re-initialization on an expired session.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use bytes::Bytes;
use ferromcp_dispatch::codec::{SseError, SseParser};
use ferromcp_dispatch::{Inbound, MessageMeta, ResumptionHooks, TransportMessage};
use ferromcp_types::jsonrpc::{
    Decoder, ErrorCode, ErrorObject, Frame, Message, Notification, Payload, Request, RequestId,
};
use ferromcp_types::mcp::methods;
use http::header::{ACCEPT, CONTENT_TYPE};
use http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use serde_json::{Value, json};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio::task::AbortHandle;

use super::HttpConfig;
use super::client::HttpClient;
use super::headers::{
    LAST_EVENT_ID, MCP_PROTOCOL_VERSION, MCP_SESSION_ID, ToolHeaders, modern_headers,
};

const ACCEPT_BOTH: HeaderValue = HeaderValue::from_static("application/json, text/event-stream");
const ACCEPT_SSE: HeaderValue = HeaderValue::from_static("text/event-stream");
const JSON: HeaderValue = HeaderValue::from_static("application/json");
/// The bound on an error response body read for its JSON-RPC error.
const MAX_ERROR_BODY: usize = 64 * 1024;
/// How long the rest of a response stream is read after its answer, so that the connection
/// can go back to the pool.
const DRAIN_BOUND: Duration = Duration::from_secs(1);

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Handshake-era session state, learnt from the `initialize` exchange.
#[derive(Default)]
struct Session {
    /// `Mcp-Session-Id` from the `initialize` response.
    id: Option<HeaderValue>,
    /// The negotiated version, sent as `MCP-Protocol-Version` after the handshake.
    version: Option<HeaderValue>,
    /// The `initialize` params, replayed when the session expires.
    init_params: Option<Payload>,
    /// Bumped whenever the session changes (new `initialize`).
    generation: u64,
}

/// A request POST in flight, so that a cancellation can abort it.
struct InFlight {
    abort: AbortHandle,
    modern: bool,
}

pub(crate) struct Engine {
    client: HttpClient,
    uri: Uri,
    cfg: HttpConfig,
    inbound: mpsc::Sender<Inbound>,
    session: Mutex<Session>,
    tools: Mutex<ToolHeaders>,
    in_flight: Mutex<HashMap<RequestId, InFlight>>,
    get_stream: Mutex<Option<AbortHandle>>,
    /// Single-flight re-initialization.
    reinit: tokio::sync::Mutex<()>,
    reinit_seq: AtomicU64,
    requests: Arc<Semaphore>,
    closed: AtomicBool,
}

/// Why reading a response stream stopped without the answer.
enum StreamEnd {
    Eof,
    Failed(String),
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

fn transport_error(id: &RequestId, what: impl std::fmt::Display) -> Message {
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

/// The error chain of a hyper client error, which alone says little ("client error").
fn describe(e: &(dyn std::error::Error + 'static)) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(inner) = src {
        s.push_str(": ");
        s.push_str(&inner.to_string());
        src = inner.source();
    }
    s
}

fn content_type(h: &HeaderMap) -> String {
    h.get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase())
        .unwrap_or_default()
}

/// Whether `msg` answers request `id` (an error with a null id counts: servers send those
/// for requests they could not read).
fn answers(msg: &Message, id: &RequestId) -> bool {
    match msg {
        Message::Response(r) => &r.id == id,
        Message::Error(e) => e.id.as_ref().is_none_or(|i| i == id),
        _ => false,
    }
}

fn with_id(msg: Message, id: &RequestId) -> Message {
    match msg {
        Message::Error(mut e) => {
            e.id = Some(id.clone());
            Message::Error(e)
        }
        other => other,
    }
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
            closed: AtomicBool::new(false),
        }
    }

    fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// One outbound message: requests run as their own task (concurrently); notifications
    /// and responses are posted before this returns (so that `notifications/initialized`
    /// reaches the server before the next request).
    pub(crate) async fn send(self: &Arc<Self>, msg: TransportMessage) -> bool {
        if self.is_closed() {
            return false;
        }
        let TransportMessage { message, meta } = msg;
        match message {
            Message::Request(req) => {
                let Ok(permit) = self.requests.clone().acquire_owned().await else {
                    return false;
                };
                self.start_request(req, meta, permit);
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
            if let Some(f) = in_flight {
                // Closing the response stream cancels the request (2026-07-28); in the
                // handshake era the server is told below, and nobody waits for the stream.
                f.abort.abort();
                if f.modern {
                    return;
                }
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
            }
        }
        if let Some(extra) = extra {
            for (k, v) in extra {
                h.append(k, v.clone());
            }
        }
        (h, sent, modern)
    }

    async fn send_http(
        &self,
        method: Method,
        headers: HeaderMap,
        body: Bytes,
    ) -> Result<http::Response<Incoming>, String> {
        let mut req = http::Request::new(Full::new(body));
        *req.method_mut() = method;
        *req.uri_mut() = self.uri.clone();
        *req.headers_mut() = headers;
        self.client
            .request(req)
            .await
            .map_err(|e| describe(&e as &(dyn std::error::Error + 'static)))
    }

    fn start_request(
        self: &Arc<Self>,
        req: Request,
        meta: MessageMeta,
        permit: OwnedSemaphorePermit,
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
        loop {
            if retried {
                (headers, sent, _) = self.headers(Some((method, params)), extra.as_ref());
            }
            let resp = match self
                .send_http(Method::POST, headers.clone(), body.clone())
                .await
            {
                Ok(r) => r,
                Err(e) => return transport_error(id, e),
            };
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
                continue;
            }
            let session_id = resp.headers().get(MCP_SESSION_ID).cloned();
            let answer = self.read_answer(resp, id, hooks.as_deref()).await;
            if method == methods::INITIALIZE {
                self.adopt_session(session_id, &answer);
            }
            return answer;
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
        if let Ok(mut value) = r.result.parse::<Value>() {
            if lock(&self.tools).observe_list(&mut value) {
                r.result = Payload::from_value(value);
            }
        }
        Message::Response(r)
    }

    async fn deliver(&self, msg: Message) {
        let _ = self
            .inbound
            .send(Ok(TransportMessage::new(msg, MessageMeta::default())))
            .await;
    }

    /// Reads the answer to request `id` from its POST response: a JSON-RPC error body of an
    /// HTTP error, a JSON body, or an SSE stream (resumed when it breaks).
    async fn read_answer(
        self: &Arc<Self>,
        resp: http::Response<Incoming>,
        id: &RequestId,
        hooks: Option<&dyn ResumptionHooks>,
    ) -> Message {
        let status = resp.status();
        let ctype = content_type(resp.headers());
        if !status.is_success() {
            let body = tokio::time::timeout(
                self.cfg.connect_timeout,
                Limited::new(resp.into_body(), MAX_ERROR_BODY).collect(),
            )
            .await;
            if let Ok(Ok(body)) = body {
                if let Ok(msg) = Message::from_slice(&body.to_bytes()) {
                    if matches!(msg, Message::Error(_)) && answers(&msg, id) {
                        return with_id(msg, id);
                    }
                }
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
                    Err((end, _)) => match parser.last_event_id().map(str::to_owned) {
                        Some(last) => self.resume(id, &mut parser, last, Some(end), hooks).await,
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
                self.deliver(m).await;
            }
        }
        answer.unwrap_or_else(|| transport_error(id, "the JSON body held no answer"))
    }

    /// Reads SSE events, forwarding every message except the answer to `target`, which it
    /// returns. Ends with the reason and whether any event arrived.
    async fn pump(
        &self,
        body: &mut Incoming,
        parser: &mut SseParser,
        target: Option<&RequestId>,
        hooks: Option<&dyn ResumptionHooks>,
    ) -> Result<Message, (StreamEnd, bool)> {
        let mut got_event = false;
        loop {
            while let Some(event) = parser.next_event() {
                let event = match event {
                    Ok(e) => e,
                    Err(SseError::TooLarge { .. }) => {
                        tracing::warn!("an SSE event over the size limit was dropped");
                        continue;
                    }
                    Err(e) => {
                        tracing::debug!(error = %e, "bad SSE event");
                        continue;
                    }
                };
                got_event = true;
                if let (Some(h), Some(token)) = (hooks, &event.id) {
                    h.on_token(token);
                }
                if event.data.is_empty() || event.event_type() != "message" {
                    continue;
                }
                match Message::from_slice(event.data.as_bytes()) {
                    Ok(msg) => match target {
                        Some(id) if answers(&msg, id) => return Ok(with_id(msg, id)),
                        _ => self.deliver(msg).await,
                    },
                    Err(e) => tracing::debug!(error = %e, "undecodable SSE message dropped"),
                }
            }
            match body.frame().await {
                None => return Err((StreamEnd::Eof, got_event)),
                Some(Err(e)) => return Err((StreamEnd::Failed(e.to_string()), got_event)),
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        parser.feed(&data);
                    }
                }
            }
        }
    }

    /// The reconnection delay: the server's `retry` (or the default) on the first attempt,
    /// doubling after, capped.
    fn backoff(&self, retry_ms: Option<u64>, attempt: u32) -> Duration {
        let base = retry_ms.map_or(self.cfg.default_retry, Duration::from_millis);
        base.saturating_mul(1u32 << attempt.min(16))
            .min(self.cfg.max_retry.max(base))
    }

    /// Resumes request `id`'s stream with GET + `Last-Event-ID` (2025-11-25 "Resumability and
    /// Redelivery"), after the server's `retry` delay, a bounded number of times.
    async fn resume(
        &self,
        id: &RequestId,
        parser: &mut SseParser,
        mut last: String,
        mut end: Option<StreamEnd>,
        hooks: Option<&dyn ResumptionHooks>,
    ) -> Message {
        let mut attempt = 0u32;
        let mut retry = parser.retry();
        loop {
            if let Some(e) = &end {
                if attempt >= self.cfg.max_reconnect_attempts {
                    return transport_error(
                        id,
                        format!("the response stream {}; resumption gave up", e.describe()),
                    );
                }
                tokio::time::sleep(self.backoff(retry, attempt)).await;
                attempt += 1;
            }
            let mut headers = self.get_headers();
            if let Ok(v) = HeaderValue::from_str(&last) {
                headers.insert(LAST_EVENT_ID, v);
            }
            let resp = match self.send_http(Method::GET, headers, Bytes::new()).await {
                Ok(r) => r,
                Err(e) => {
                    end = Some(StreamEnd::Failed(e));
                    continue;
                }
            };
            let status = resp.status();
            if !status.is_success() || content_type(resp.headers()) != "text/event-stream" {
                if matches!(status.as_u16(), 400 | 404 | 405) {
                    return transport_error(
                        id,
                        format!(
                            "the response stream broke and could not be resumed (HTTP {status})"
                        ),
                    );
                }
                end = Some(StreamEnd::Failed(format!("HTTP {status}")));
                continue;
            }
            *parser = SseParser::with_max_event_size(self.cfg.max_event_size)
                .with_last_event_id(last.clone());
            let mut body = resp.into_body();
            match self.pump(&mut body, parser, Some(id), hooks).await {
                Ok(answer) => {
                    drain(body);
                    return answer;
                }
                Err((e, got_event)) => {
                    if got_event {
                        attempt = 0;
                    }
                    if let Some(l) = parser.last_event_id() {
                        last = l.to_owned();
                    }
                    retry = parser.retry().or(retry);
                    end = Some(e);
                }
            }
        }
    }

    /// The headers of a GET: `Accept: text/event-stream`, static and session headers.
    fn get_headers(&self) -> HeaderMap {
        let mut h = self.cfg.headers.clone();
        h.insert(ACCEPT, ACCEPT_SSE);
        let s = lock(&self.session);
        if let Some(id) = &s.id {
            h.insert(MCP_SESSION_ID, id.clone());
        }
        if let Some(v) = &s.version {
            h.insert(MCP_PROTOCOL_VERSION, v.clone());
        }
        h
    }

    /// Opens the standalone GET stream of a handshake-era session (when the session has an
    /// id and the config wants it).
    fn start_get_stream(self: &Arc<Self>) {
        if !self.cfg.standalone_stream || self.is_closed() {
            return;
        }
        let generation = {
            let s = lock(&self.session);
            if s.id.is_none() {
                return;
            }
            s.generation
        };
        let this = self.clone();
        let task = tokio::spawn(async move { this.get_stream(generation).await });
        if let Some(old) = lock(&self.get_stream).replace(task.abort_handle()) {
            old.abort();
        }
    }

    /// The standalone GET stream: every message on it goes to the dispatcher. 400, 404, 405
    /// and 409 end it silently; a stream that ends is reopened (with `Last-Event-ID` when it
    /// had event ids) after the `retry` delay, a bounded number of times in a row.
    async fn get_stream(&self, generation: u64) {
        let mut last: Option<String> = None;
        let mut retry = None;
        let mut failures = 0u32;
        loop {
            if self.is_closed() || lock(&self.session).generation != generation {
                return;
            }
            let mut headers = self.get_headers();
            if let Some(v) = last.as_deref().and_then(|l| HeaderValue::from_str(l).ok()) {
                headers.insert(LAST_EVENT_ID, v);
            }
            match self.send_http(Method::GET, headers, Bytes::new()).await {
                Ok(resp)
                    if resp.status().is_success()
                        && content_type(resp.headers()) == "text/event-stream" =>
                {
                    let mut parser = SseParser::with_max_event_size(self.cfg.max_event_size);
                    if let Some(l) = &last {
                        parser = parser.with_last_event_id(l.clone());
                    }
                    let mut body = resp.into_body();
                    let (_, got_event) = match self.pump(&mut body, &mut parser, None, None).await {
                        Ok(_) => (StreamEnd::Eof, true),
                        Err(e) => e,
                    };
                    last = parser.last_event_id().map(str::to_owned).or(last);
                    retry = parser.retry().or(retry);
                    failures = if got_event { 0 } else { failures + 1 };
                }
                Ok(resp) if matches!(resp.status().as_u16(), 400 | 404 | 405 | 409) => {
                    tracing::debug!(status = %resp.status(), "no standalone GET stream");
                    return;
                }
                Ok(resp) => {
                    tracing::debug!(status = %resp.status(), "the GET stream was refused");
                    failures += 1;
                }
                Err(e) => {
                    tracing::debug!(error = %e, "the GET stream failed");
                    failures += 1;
                }
            }
            if failures > self.cfg.max_reconnect_attempts {
                tracing::debug!("the GET stream gave up reconnecting");
                return;
            }
            tokio::time::sleep(self.backoff(retry, failures.saturating_sub(1))).await;
        }
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
        let answer = self.read_answer(resp, &id, None).await;
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

impl StreamEnd {
    fn describe(&self) -> String {
        match self {
            Self::Eof => "ended before the answer".into(),
            Self::Failed(e) => format!("failed before the answer ({e})"),
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

/// Reads what is left of a response stream for a moment, so that a connection whose stream
/// ends right after the answer goes back to the pool; then drops it.
fn drain(mut body: Incoming) {
    tokio::spawn(async move {
        let _ = tokio::time::timeout(DRAIN_BOUND, async {
            while let Some(Ok(_)) = body.frame().await {}
        })
        .await;
    });
}
