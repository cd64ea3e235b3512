//! The HTTP side of the Redis model: session records written at creation, requests for
//! sessions owned by another node forwarded to it, and streams served from Redis (replay,
//! then a live tail) on any node.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use ferromcp_dispatch::codec::SseEvent;
use ferromcp_types::ProtocolVersion;
use ferromcp_types::jsonrpc::{ErrorObject, Message};
use http::header::HeaderValue;
use http::{Method, Response, StatusCode};
use redis::AsyncCommands;
use tokio::sync::mpsc;

use super::Node;
use super::events::entry_data;
use super::sessions::{Record, RedisSessionStore};
use super::tails::Subscription;
use crate::body::{McpBody, http_error, json_message, sse_response, status_only};
use crate::headers::{self, LAST_EVENT_ID, MCP_PROTOCOL_VERSION, MCP_SESSION_ID};
use crate::legacy::session::{Session, new_session_id};
use crate::legacy::streams::STANDALONE;
use crate::service::Shared;
use ferromcp_server::CallerId;

fn not_found() -> Response<McpBody> {
    http_error(StatusCode::NOT_FOUND, "Session not found")
}

fn with_session(mut r: Response<McpBody>, id: &str) -> Response<McpBody> {
    if let Ok(v) = HeaderValue::from_str(id) {
        r.headers_mut().insert(MCP_SESSION_ID, v);
    }
    r
}

/// Writes the record of a session just created on this node (before its `initialize` is
/// answered, so the client's next request finds it on any node).
pub(crate) async fn register(shared: &Shared, session: &Session, version: ProtocolVersion) {
    let Some(store) = shared.config.session_store.redis() else {
        return;
    };
    let record = Record {
        node: store.node.id.clone(),
        principal: session.principal.as_ref().map(|p| p.0.clone()),
        version: version.to_string(),
    };
    if let Err(e) = store.write_record(&session.id, &record).await {
        tracing::warn!(error = %e, "Redis session store: session record not written");
    }
}

/// Serves, before the local lookup, what the Redis model serves: resumptions (on every
/// node) and every request for a session owned by another node. `None`: go on locally.
pub(crate) async fn intercept(
    shared: &Arc<Shared>,
    parts: &Arc<http::request::Parts>,
    message: Option<&Message>,
) -> Option<Response<McpBody>> {
    let store = shared.config.session_store.redis()?;
    let sid = headers::single(&parts.headers, &MCP_SESSION_ID).ok()??;
    let principal = parts.extensions.get::<CallerId>();
    let last = headers::first(&parts.headers, &LAST_EVENT_ID)
        .filter(|_| parts.method == Method::GET && shared.config.event_store.is_some());
    if let Some(local) = store.local_session(sid) {
        store.touch(sid);
        // Resumptions are served from Redis on the owner too (no race between the replay
        // and live events); everything else, and every refusal, goes on locally.
        let last = last?;
        if local.is_terminated() || local.principal.as_ref() != principal {
            return None;
        }
        local.touch();
        local.mark_used();
        let owner = store.node.id.clone();
        return Some(resume(shared, store, sid, &owner, last).await);
    }
    let record = match store.read_record(sid).await {
        Ok(Some(r)) => r,
        Ok(None) => return Some(not_found()),
        Err(e) => {
            tracing::warn!(error = %e, "Redis session store: lookup failed");
            return Some(http_error(
                StatusCode::SERVICE_UNAVAILABLE,
                "Session store unavailable; try again later",
            ));
        }
    };
    if record.principal.as_deref() != principal.map(|p| p.0.as_str()) {
        return Some(not_found());
    }
    if record.node == store.node.id || !store.alive(&record.node).await {
        // Its owner is gone (or is this node, restarted): the session is lost. What the
        // owner stored can still be replayed (the stream then ends without a response).
        store.delete_record(sid).await;
        return Some(match last {
            Some(last) => resume(shared, store, sid, &record.node, last).await,
            None => not_found(),
        });
    }
    store.touch(sid);
    let r = match (&parts.method, message) {
        (&Method::POST, Some(m)) => forward(shared, store, sid, &record, parts, m).await,
        (&Method::GET, _) => match last {
            Some(last) => resume(shared, store, sid, &record.node, last).await,
            None => standalone(shared, store, sid, &record).await,
        },
        (&Method::DELETE, _) => {
            store.delete_record(sid).await;
            let _ = store.send_to_owner(&record.node, sid, "x", &[]).await;
            status_only(StatusCode::OK)
        }
        _ => return None,
    };
    Some(with_session(r, sid))
}

fn priming(record: &Record) -> bool {
    ProtocolVersion::parse(&record.version).is_some_and(|v| v >= ProtocolVersion::V2025_11_25)
}

fn store_failed() -> Response<McpBody> {
    http_error(
        StatusCode::SERVICE_UNAVAILABLE,
        "Session store unavailable; try again later",
    )
}

/// A POST for a session owned by another node: queued on the owner's inbox; a request is
/// answered with its own stream, tailed from Redis.
async fn forward(
    shared: &Shared,
    store: &RedisSessionStore,
    sid: &str,
    record: &Record,
    parts: &http::request::Parts,
    message: &Message,
) -> Response<McpBody> {
    let version = headers::first(&parts.headers, &MCP_PROTOCOL_VERSION).unwrap_or_default();
    let text = message.to_vec();
    let Message::Request(request) = message else {
        let fields = [("m", text.as_slice()), ("v", version.as_bytes())];
        return match store.send_to_owner(&record.node, sid, "m", &fields).await {
            Ok(()) => status_only(StatusCode::ACCEPTED),
            Err(_) => store_failed(),
        };
    };
    let Some(stream) = new_session_id().map(|h| format!("f{}", &h[..16])) else {
        return store_failed();
    };
    let node = &store.node;
    let Ok(first) = node.append(sid, &stream, &[]).await else {
        return store_failed();
    };
    let fields = [
        ("m", text.as_slice()),
        ("v", version.as_bytes()),
        ("t", stream.as_bytes()),
    ];
    if store
        .send_to_owner(&record.node, sid, "r", &fields)
        .await
        .is_err()
    {
        return store_failed();
    }
    let c = &shared.config;
    let Some((_, entry)) = first.split_once(':') else {
        return store_failed();
    };
    let tail = Tail::new(node.clone(), sid, &stream, entry, &record.node);
    if c.json_response {
        return match tail.final_message().await {
            Some(m) => json_message(StatusCode::OK, &m),
            None => crate::body::error(
                StatusCode::INTERNAL_SERVER_ERROR,
                Some(request.id.clone()),
                ErrorObject::internal_error("the session ended before the request was answered"),
            ),
        };
    }
    let (tx, rx) = mpsc::channel(c.stream_queue.max(2));
    if priming(record)
        && let Ok(frame) = SseEvent::new("")
            .with_id(first)
            .with_retry(c.retry_ms)
            .to_bytes()
    {
        let _ = tx.try_send(Bytes::from(frame));
    }
    tokio::spawn(tail.pipe(tx));
    sse_response(
        rx,
        c.keep_alive,
        None,
        Some(shared.timers.keep_alive.clone()),
    )
}

/// A GET with `Last-Event-ID`: the stored events after it, then the stream live.
async fn resume(
    shared: &Shared,
    store: &RedisSessionStore,
    sid: &str,
    owner: &str,
    last: &str,
) -> Response<McpBody> {
    let node = &store.node;
    let replay = match node.replay(sid, last).await {
        Ok(Some(r)) => r,
        Ok(None) => {
            return with_session(
                http_error(
                    StatusCode::BAD_REQUEST,
                    "Bad Request: unknown Last-Event-ID",
                ),
                sid,
            );
        }
        Err(_) => return store_failed(),
    };
    let c = &shared.config;
    let (tx, rx) = mpsc::channel(c.stream_queue.max(replay.events.len() + 1));
    let mut after = last
        .split_once(':')
        .map(|(_, e)| e.to_owned())
        .unwrap_or_default();
    let mut done = false;
    for e in replay.events {
        done = is_final(&replay.stream, &e.data);
        if let Some((_, entry)) = e.id.split_once(':') {
            after = entry.to_owned();
        }
        if let Some(frame) = frame(&e.id, &e.data) {
            let _ = tx.try_send(frame);
        }
        if done {
            break;
        }
    }
    if !done {
        let tail = Tail::new(node.clone(), sid, &replay.stream, &after, owner);
        tokio::spawn(tail.pipe(tx));
    }
    with_session(
        sse_response(
            rx,
            c.keep_alive,
            None,
            Some(shared.timers.keep_alive.clone()),
        ),
        sid,
    )
}

/// A GET without `Last-Event-ID` for a session owned by another node: the standalone
/// stream, tailed from a fresh priming event.
async fn standalone(
    shared: &Shared,
    store: &RedisSessionStore,
    sid: &str,
    record: &Record,
) -> Response<McpBody> {
    let node = &store.node;
    let Ok(first) = node.append(sid, STANDALONE, &[]).await else {
        return store_failed();
    };
    let Some((_, entry)) = first.split_once(':') else {
        return store_failed();
    };
    let c = &shared.config;
    let (tx, rx) = mpsc::channel(c.stream_queue.max(2));
    if priming(record)
        && let Ok(f) = SseEvent::new("")
            .with_id(first.as_str())
            .with_retry(c.retry_ms)
            .to_bytes()
    {
        let _ = tx.try_send(Bytes::from(f));
    }
    let tail = Tail::new(node.clone(), sid, STANDALONE, entry, &record.node);
    tokio::spawn(tail.pipe(tx));
    sse_response(
        rx,
        c.keep_alive,
        None,
        Some(shared.timers.keep_alive.clone()),
    )
}

fn frame(id: &str, data: &[u8]) -> Option<Bytes> {
    let text = String::from_utf8_lossy(data).into_owned();
    SseEvent::new(text)
        .with_id(id)
        .to_bytes()
        .ok()
        .map(Bytes::from)
}

/// Whether `data` ends its stream: a JSON-RPC response or error, on a request stream.
fn is_final(stream: &str, data: &[u8]) -> bool {
    if stream == STANDALONE || data.is_empty() {
        return false;
    }
    matches!(decode(data), Some(Message::Response(_) | Message::Error(_)))
}

/// Decodes a stored message.
pub(crate) fn decode(data: &[u8]) -> Option<Message> {
    ferromcp_types::jsonrpc::Decoder::new()
        .decode_message(data)
        .ok()
}

/// Reads one SSE stream of a session from Redis, live, from an entry on, through the node's
/// shared reader ([`Tails`](super::tails::Tails)).
struct Tail {
    node: Arc<Node>,
    key: String,
    record: String,
    alive: String,
    stream: String,
    after: String,
    sub: Option<Subscription>,
    checked: tokio::time::Instant,
    ended: bool,
}

impl Tail {
    fn new(node: Arc<Node>, sid: &str, stream: &str, after: &str, owner: &str) -> Self {
        Self {
            key: node.events_key(sid, stream),
            record: node.record_key(sid),
            alive: node.alive_key(owner),
            stream: stream.to_owned(),
            after: after.to_owned(),
            sub: None,
            checked: tokio::time::Instant::now(),
            ended: false,
            node,
        }
    }

    fn block_ms(&self) -> u64 {
        u64::try_from(self.node.heartbeat.as_millis())
            .unwrap_or(1000)
            .clamp(10, 1000)
    }

    /// Whether the session still exists and its owner still beats.
    async fn live(&mut self) -> bool {
        self.checked = tokio::time::Instant::now();
        let mut c = self.node.conn.clone();
        let (record, alive): (bool, bool) = redis::pipe()
            .exists(&self.record)
            .exists(&self.alive)
            .query_async(&mut c)
            .await
            .unwrap_or((false, false));
        record && alive
    }

    /// The next events (id, data); empty after a quiet interval; `None` once the stream
    /// cannot go on (the session ended, its owner died, Redis failed for good).
    async fn next(&mut self) -> Option<Vec<(String, Bytes)>> {
        if self.ended {
            return None;
        }
        let block_ms = self.block_ms();
        let sub = match self.sub.as_mut() {
            Some(s) => s,
            None => {
                let s = self
                    .node
                    .tails
                    .subscribe(self.key.clone(), &self.after)
                    .await?;
                self.sub.insert(s)
            }
        };
        match tokio::time::timeout(Duration::from_millis(block_ms), sub.rx.recv()).await {
            Ok(Some(entries)) => {
                // A busy stream is checked as often as a quiet one; what was read is still
                // delivered.
                if self.checked.elapsed() >= Duration::from_millis(block_ms) {
                    self.ended = !self.live().await;
                }
                let mut out = Vec::with_capacity(entries.len());
                for (id, fields) in entries {
                    out.push((format!("{}:{id}", self.stream), entry_data(fields)));
                    self.after = id;
                }
                Some(out)
            }
            // The shared reader stopped (it does not while subscribed): follow again.
            Ok(None) => {
                self.sub = None;
                self.live().await.then(Vec::new)
            }
            Err(_) => self.live().await.then(Vec::new),
        }
    }

    /// Sends the stream's SSE frames to `tx` until its response, the client leaves, or the
    /// stream cannot go on.
    async fn pipe(mut self, tx: mpsc::Sender<Bytes>) {
        while let Some(events) = self.next().await {
            if tx.is_closed() {
                return;
            }
            for (id, data) in events {
                let done = is_final(&self.stream, &data);
                if let Some(f) = frame(&id, &data)
                    && tx.send(f).await.is_err()
                {
                    return;
                }
                if done {
                    return;
                }
            }
        }
    }

    /// The stream's response, for JSON-response mode.
    async fn final_message(mut self) -> Option<Message> {
        while let Some(events) = self.next().await {
            for (_, data) in events {
                if is_final(&self.stream, &data) {
                    return decode(&data);
                }
            }
        }
        None
    }
}

impl RedisSessionStore {
    /// Whether `node` sent a heartbeat lately.
    pub(crate) async fn alive(&self, node: &str) -> bool {
        let mut c = self.node.conn.clone();
        c.exists(self.node.alive_key(node)).await.unwrap_or(false)
    }
}
