//! The handshake-era wire (MCP 2025-03-26 … 2025-11-25 "Streamable HTTP"): sessions, the
//! standalone GET stream, DELETE, resumable SSE streams; and the stateless mode.

pub(crate) mod session;
pub(crate) mod sse;
pub(crate) mod streams;
mod transport;

use std::sync::Arc;

use ferromcp_dispatch::{
    Dispatcher, DispatcherConfig, JsonRpcDispatcher, MessageMeta, Outbound, TransportInfo,
    TransportKind, TransportMessage,
};
use ferromcp_types::ProtocolVersion;
use ferromcp_types::jsonrpc::{DecodeError, ErrorObject, Message};
use ferromcp_types::mcp::methods;
use http::header::HeaderValue;
use http::{Response, StatusCode};
use serde_json::Value;

use super::body::{McpBody, error, http_error, sse_queue_response, status_only};
use super::exchange::{self, ExchangeOptions};
use super::headers::{
    self, EVENT_STREAM, JSON, LAST_EVENT_ID, MCP_PROTOCOL_VERSION, MCP_SESSION_ID,
};
use super::service::Shared;
use ferromcp_server::CallerId;
use ferromcp_server::Connection;
use ferromcp_server::ServerRunner;
use session::{Session, SessionSlot, Timeouts, new_session_id};
use streams::{OpenError, Streams};
use transport::{Inbox, InboxSource, PushError, SessionSink};

/// The version a handshake-era request speaks: its header's, or 2025-03-26 without one.
fn header_version(parts: &http::request::Parts) -> ProtocolVersion {
    headers::first(&parts.headers, &MCP_PROTOCOL_VERSION)
        .and_then(ProtocolVersion::parse)
        .unwrap_or(ProtocolVersion::HTTP_HEADERLESS_DEFAULT)
}

fn with_session(mut r: Response<McpBody>, session: &Session) -> Response<McpBody> {
    if let Some(v) = &session.id_header {
        r.headers_mut().insert(MCP_SESSION_ID, v.clone());
    }
    r
}

fn not_found() -> Response<McpBody> {
    http_error(StatusCode::NOT_FOUND, "Session not found")
}

#[allow(
    clippy::result_large_err,
    reason = "the error is the HTTP response itself, built once on a cold path"
)]
/// The session a request names: `Ok(None)` without a header, `Err` with the response for a
/// duplicated header (400) or an unknown, expired or foreign session (404).
fn lookup(
    shared: &Shared,
    parts: &http::request::Parts,
) -> Result<Option<Arc<Session>>, Response<McpBody>> {
    let id = headers::single(&parts.headers, &MCP_SESSION_ID).map_err(|()| {
        http_error(
            StatusCode::BAD_REQUEST,
            "Bad Request: invalid Mcp-Session-Id",
        )
    })?;
    lookup_id(shared, id, parts, SessionKind::StreamableHttp)
}

#[allow(
    clippy::result_large_err,
    reason = "the error is the HTTP response itself, built once on a cold path"
)]
/// The session `id` names, for the request `parts` (404 when unknown, expired or another
/// principal's).
fn lookup_id(
    shared: &Shared,
    id: Option<&str>,
    parts: &http::request::Parts,
    kind: SessionKind,
) -> Result<Option<Arc<Session>>, Response<McpBody>> {
    let Some(id) = id else { return Ok(None) };
    let store = &shared.config.session_store;
    let Some(session) = store.get(id) else {
        return Err(not_found());
    };
    if session.streams.is_legacy_sse() != (kind == SessionKind::LegacySse) {
        // One wire per session: the other wire's requests do not reach it.
        return Err(not_found());
    }
    if session.is_terminated() {
        store.remove(id);
        return Err(not_found());
    }
    if session.principal.as_ref() != parts.extensions.get::<CallerId>() {
        // A foreign principal neither ends nor refreshes the session.
        if session.expired(Timeouts::of(&shared.config)) {
            end(shared, &session);
        }
        return Err(not_found());
    }
    if !session.admit(Timeouts::of(&shared.config)) {
        end(shared, &session);
        return Err(not_found());
    }
    Ok(Some(session))
}

/// Ends a session and removes it from the store.
fn end(shared: &Shared, session: &Session) {
    shared.config.session_store.remove(&session.id);
    session.terminate();
}

/// Ends expired sessions (the sweeper calls this).
pub(crate) fn sweep(shared: &Shared) {
    let c = &shared.config;
    let t = Timeouts::of(c);
    for s in c.session_store.all() {
        if s.is_terminated() || s.expired(t) {
            tracing::debug!(session = %s.id, "session expired");
            end(shared, &s);
        }
    }
}

#[allow(
    clippy::result_large_err,
    reason = "the error is the HTTP response itself, built once on a cold path"
)]
/// Creates a session for an `initialize` POST (503 at the session cap, 429 at the cap of
/// its principal or peer).
fn create(
    shared: &Arc<Shared>,
    parts: &http::request::Parts,
    kind: SessionKind,
) -> Result<Arc<Session>, Response<McpBody>> {
    let c = &shared.config;
    if c.session_store.len() >= c.max_sessions {
        sweep(shared);
        if c.session_store.len() >= c.max_sessions {
            return Err(http_error(
                StatusCode::SERVICE_UNAVAILABLE,
                format!(
                    "Too many sessions (limit {}); try again later",
                    c.max_sessions
                ),
            ));
        }
    }
    let slot = take_slot(shared, parts)?;
    let Some(id) = new_session_id() else {
        return Err(http_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "no randomness for a session id",
        ));
    };
    let legacy_sse = kind == SessionKind::LegacySse;
    let streams = Arc::new(if legacy_sse {
        Streams::legacy_sse(id.clone(), c.stream_queue)
    } else {
        Streams::new(
            id.clone(),
            c.event_store.clone(),
            c.retry_ms,
            c.stream_queue,
        )
    });
    let (transport, back_channel) = if legacy_sse {
        (TransportKind::Other("sse"), true)
    } else {
        (TransportKind::StreamableHttp, !c.json_response)
    };
    let inbox = Arc::new(Inbox::new(c.inbound_queue));
    let dispatcher = JsonRpcDispatcher::new(
        InboxSource(inbox.clone()),
        SessionSink(streams.clone()),
        // At most `max_in_flight` requests reach the dispatcher (429 beyond), and at most
        // `inbound_queue` notifications wait in it for a slot (503 beyond).
        DispatcherConfig::default()
            .max_concurrent_requests(c.max_in_flight)
            .max_queued_requests(c.inbound_queue)
            .transport(TransportInfo::new(transport, back_channel)),
    );
    let outbound: Arc<dyn Outbound> = Arc::new(dispatcher.clone());
    // A 2024-11-05 HTTP+SSE session starts at that revision until `initialize` negotiates.
    let seed = if legacy_sse {
        ProtocolVersion::V2024_11_05
    } else {
        headers::first(&parts.headers, &MCP_PROTOCOL_VERSION)
            .and_then(ProtocolVersion::parse)
            .unwrap_or(ProtocolVersion::LATEST_HANDSHAKE)
    };
    let connection =
        Connection::for_handshake(outbound, back_channel, seed).with_session_id(id.clone());
    let principal = parts.extensions.get::<CallerId>().cloned();
    let session = Arc::new(Session::new(
        id,
        principal,
        connection.clone(),
        dispatcher.clone(),
        inbox,
        streams.clone(),
        Some(slot),
    ));
    session.touch();
    c.session_store.insert(session.clone());
    // List changes and resource updates reach the session (on its GET stream) once it is
    // initialized, as on every other transport.
    let forwarder = tokio::spawn(shared.server.forward_changes(connection.clone()));
    let runner = Arc::new(ServerRunner::handshake(shared.server.clone(), connection));
    let store = c.event_store.clone();
    let sid = session.id.clone();
    tokio::spawn(async move {
        if let Err(e) = dispatcher.run(runner.clone()).await {
            tracing::warn!(error = %e, "session dispatcher failed");
        }
        forwarder.abort();
        runner.close().await;
        streams.close_all();
        if let Some(store) = store {
            store.forget(&sid).await;
        }
    });
    Ok(session)
}

/// Which wire a session speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SessionKind {
    /// Streamable HTTP (2025-03-26 … 2025-11-25): created by an `initialize` POST.
    StreamableHttp,
    /// The 2024-11-05 HTTP+SSE transport: created by the GET that opens its stream.
    LegacySse,
}

/// Who a new session counts against: its principal (the request's [`CallerId`]) or, without
/// one, its peer ([`PeerAddr`](crate::PeerAddr): an IPv4 address, an IPv6 /64; requests
/// without one count as one peer). With the cap for that kind of client.
fn client_of(c: &crate::HttpConfig, parts: &http::request::Parts) -> (String, usize, &'static str) {
    if let Some(p) = parts.extensions.get::<CallerId>() {
        return (
            format!("principal:{}", p.0),
            c.max_sessions_per_principal,
            "principal",
        );
    }
    let peer = match parts.extensions.get::<crate::PeerAddr>() {
        None => {
            warn_unknown_peer(c.max_sessions_per_peer);
            "unknown".to_owned()
        }
        Some(p) => crate::conn_limit::peer_key(p.0.ip()).to_string(),
    };
    (format!("peer:{peer}"), c.max_sessions_per_peer, "peer")
}

/// Says once per process that sessions are being opened without a
/// [`PeerAddr`](crate::PeerAddr): the service is mounted somewhere that does not record it, so every
/// such caller shares one per-peer cap.
fn warn_unknown_peer(limit: usize) {
    static WARNED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !WARNED.swap(true, std::sync::atomic::Ordering::Relaxed) {
        tracing::warn!(
            limit,
            "a session was opened by a request without PeerAddr: every caller without one \
             shares one per-peer session cap; insert PeerAddr into each request's extensions \
             (e.g. from axum's ConnectInfo) or raise HttpConfig::max_sessions_per_peer"
        );
    }
}

#[allow(
    clippy::result_large_err,
    reason = "the error is the HTTP response itself, built once on a cold path"
)]
/// A place under the cap of the new session's principal or peer (429 when it holds its cap
/// even after expired sessions are swept).
fn take_slot(
    shared: &Shared,
    parts: &http::request::Parts,
) -> Result<SessionSlot, Response<McpBody>> {
    let (client, limit, kind) = client_of(&shared.config, parts);
    if let Some(slot) = shared.session_slots.take(client.clone(), limit) {
        return Ok(slot);
    }
    sweep(shared);
    shared.session_slots.take(client, limit).ok_or_else(|| {
        http_error(
            StatusCode::TOO_MANY_REQUESTS,
            format!(
                "Too many sessions for this {kind} (limit {limit}); end one (DELETE) or try again later"
            ),
        )
    })
}

/// A POST on the handshake-era wire.
pub(crate) async fn post(
    shared: &Arc<Shared>,
    parts: Arc<http::request::Parts>,
    decoded: Result<Message, DecodeError>,
) -> Response<McpBody> {
    let c = &shared.config;
    let h = &parts.headers;
    let [json, sse] = headers::accepts_each(h, [JSON, EVENT_STREAM]);
    if !json || (!c.json_response && !sse) {
        return http_error(
            StatusCode::NOT_ACCEPTABLE,
            "Not Acceptable: Accept must list application/json and text/event-stream",
        );
    }
    let message = match decoded {
        Ok(m) => m,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                e.id().cloned(),
                e.to_error_object(),
            );
        }
    };
    if c.stateless {
        return stateless(shared, parts, message).await;
    }
    #[cfg(feature = "redis")]
    if let Some(r) = crate::redis::intercept(shared, &parts, Some(&message)).await {
        return r;
    }
    let is_init = matches!(&message, Message::Request(r) if r.method == methods::INITIALIZE);
    let mut created = false;
    let session = match lookup(shared, &parts) {
        Err(r) => return r,
        Ok(Some(s)) => {
            if matches!(message, Message::Request(_)) {
                s.mark_used();
            }
            s
        }
        Ok(None) if is_init => match create(shared, &parts, SessionKind::StreamableHttp) {
            Ok(s) => {
                created = true;
                s
            }
            Err(r) => return r,
        },
        Ok(None) => {
            return http_error(StatusCode::BAD_REQUEST, "Bad Request: Missing session ID");
        }
    };
    if created {
        // Priming events only for clients that know them (2025-11-25 and later).
        let requested = match &message {
            Message::Request(r) => r
                .params
                .as_ref()
                .and_then(|p| p.parse::<Value>().ok())
                .and_then(|p| {
                    p.get("protocolVersion")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                }),
            _ => None,
        };
        let v = ProtocolVersion::negotiate_handshake(requested.as_deref().unwrap_or_default());
        session
            .streams
            .set_priming(v >= ProtocolVersion::V2025_11_25);
        #[cfg(feature = "redis")]
        crate::redis::register(shared, &session, v).await;
    }
    with_session(
        session_post(shared, &session, parts, message).await,
        &session,
    )
}

async fn session_post(
    shared: &Arc<Shared>,
    session: &Session,
    parts: Arc<http::request::Parts>,
    message: Message,
) -> Response<McpBody> {
    let c = &shared.config;
    let mut meta = MessageMeta::default();
    meta.http = Some(parts);
    let request = match message {
        Message::Request(r) => r,
        other => {
            if let Message::Notification(n) = &other {
                if n.method == ferromcp_dispatch::utility::CANCELLED {
                    if let Some(id) = n
                        .params
                        .as_ref()
                        .and_then(|p| p.parse::<Value>().ok())
                        .and_then(|p| p.get("requestId").cloned())
                        .and_then(|id| serde_json::from_value(id).ok())
                    {
                        session.streams.cancel(&id).await;
                    }
                } else if session.dispatcher.inbound_load().queued_notifications >= c.inbound_queue
                {
                    // Every handler slot is busy and as many notifications already wait for
                    // one: tell the client to come back rather than drop it. (Responses and
                    // cancellations are always taken: the dispatcher acts on them at once.)
                    return push_failed(PushError::Full);
                }
            }
            return match session.inbox.push(TransportMessage::new(other, meta)) {
                Ok(()) => status_only(StatusCode::ACCEPTED),
                Err(e) => push_failed(e),
            };
        }
    };
    if session.streams.in_flight() >= c.max_in_flight {
        // The same -32600 a stream connection's dispatcher refuses with, marked
        // `data.overloaded` (`ferromcp_dispatch::Overloaded`).
        let refusal = ErrorObject::invalid_request(format!(
            "Too many requests in flight in this session (limit {})",
            c.max_in_flight
        ))
        .with_data(serde_json::json!({
            ferromcp_dispatch::Overloaded::DATA_KEY: { "limit": c.max_in_flight }
        }));
        return error(StatusCode::TOO_MANY_REQUESTS, Some(request.id), refusal);
    }
    let id = request.id.clone();
    if c.json_response {
        meta.can_send_requests = Some(false);
        let rx = match session.streams.open_json(&id) {
            Ok(rx) => rx,
            Err(e) => return open_failed(e, &request.id),
        };
        if let Err(e) = session
            .inbox
            .push(TransportMessage::new(Message::Request(request), meta))
        {
            session.streams.abandon(&id);
            return push_failed(e);
        }
        return match rx.await {
            Ok(answer) => super::body::json_message(StatusCode::OK, &answer),
            Err(_) => error(
                StatusCode::INTERNAL_SERVER_ERROR,
                Some(id),
                ErrorObject::internal_error("the session ended before the request was answered"),
            ),
        };
    }
    let rx = match session.streams.open_request(&id).await {
        Ok(rx) => rx,
        Err(e) => return open_failed(e, &request.id),
    };
    if let Some(p) = meta.http.as_mut().and_then(Arc::get_mut) {
        p.extensions
            .insert(streams::SseStreamControl::new(&session.streams, id.clone()));
    }
    if let Err(e) = session
        .inbox
        .push(TransportMessage::new(Message::Request(request), meta))
    {
        session.streams.abandon(&id);
        return push_failed(e);
    }
    // Let the session's dispatcher take the request first: an answer ready within that turn
    // goes out with the headers and the priming event in one write instead of two (the
    // priming event still leaves at once when the answer takes longer).
    tokio::task::yield_now().await;
    sse_queue_response(rx, c.keep_alive, Some(shared.timers.keep_alive.clone()))
}

fn push_failed(e: PushError) -> Response<McpBody> {
    match e {
        PushError::Full => http_error(
            StatusCode::SERVICE_UNAVAILABLE,
            "This session's inbound queue is full; try again later",
        ),
        PushError::Closed => not_found(),
    }
}

fn open_failed(e: OpenError, id: &ferromcp_types::jsonrpc::RequestId) -> Response<McpBody> {
    match e {
        OpenError::Duplicate => error(
            StatusCode::BAD_REQUEST,
            Some(id.clone()),
            ErrorObject::invalid_request("this request id is already in flight"),
        ),
        OpenError::Conflict => http_error(StatusCode::CONFLICT, "Conflict"),
        OpenError::Closed => not_found(),
    }
}

/// Stateless mode: every POST on its own, on a connection born ready at the header's version;
/// no back channel, no GET stream.
async fn stateless(
    shared: &Arc<Shared>,
    parts: Arc<http::request::Parts>,
    message: Message,
) -> Response<McpBody> {
    let Message::Request(request) = message else {
        return status_only(StatusCode::ACCEPTED);
    };
    let c = &shared.config;
    let version = header_version(&parts);
    let opts = ExchangeOptions {
        json_only: c.json_response,
        sse_now: !c.json_response,
        cancel_on_disconnect: false,
        error_status: |_| StatusCode::OK,
        deferral: c.sse_deferral,
        keep_alive: c.keep_alive,
        queue: c.stream_queue,
        timers: shared.timers.clone(),
    };
    let runner = Arc::new(ServerRunner::stateless(shared.server.clone(), version));
    exchange::run(
        runner,
        parts,
        request.id,
        request.method,
        request.params,
        opts,
    )
    .await
}

/// A GET: the standalone stream, or the resumption of a stream with `Last-Event-ID`.
pub(crate) async fn get(
    shared: &Arc<Shared>,
    parts: Arc<http::request::Parts>,
) -> Response<McpBody> {
    let c = &shared.config;
    if c.stateless {
        let mut r = http_error(
            StatusCode::METHOD_NOT_ALLOWED,
            "Method Not Allowed: stateless server",
        );
        r.headers_mut()
            .insert(http::header::ALLOW, HeaderValue::from_static("POST"));
        return r;
    }
    if !headers::accepts(&parts.headers, EVENT_STREAM) {
        return http_error(
            StatusCode::NOT_ACCEPTABLE,
            "Not Acceptable: Accept must list text/event-stream",
        );
    }
    #[cfg(feature = "redis")]
    if let Some(r) = crate::redis::intercept(shared, &parts, None).await {
        return r;
    }
    let session = match lookup(shared, &parts) {
        Err(r) => return r,
        Ok(Some(s)) => s,
        Ok(None) => return http_error(StatusCode::BAD_REQUEST, "Bad Request: Missing session ID"),
    };
    session.mark_used();
    let opened = match headers::first(&parts.headers, &LAST_EVENT_ID) {
        Some(last) => {
            let Some(store) = &c.event_store else {
                return with_session(
                    http_error(
                        StatusCode::BAD_REQUEST,
                        "Bad Request: this server's streams are not resumable",
                    ),
                    &session,
                );
            };
            match store.replay_after(&session.id, last).await {
                None => {
                    return with_session(
                        http_error(
                            StatusCode::BAD_REQUEST,
                            "Bad Request: unknown Last-Event-ID",
                        ),
                        &session,
                    );
                }
                Some(replay) => session.streams.resume(&replay.stream, replay.events),
            }
        }
        None => session.streams.open_standalone().await,
    };
    let r = match opened {
        Ok(rx) => sse_queue_response(rx, c.keep_alive, Some(shared.timers.keep_alive.clone())),
        Err(OpenError::Conflict) => http_error(
            StatusCode::CONFLICT,
            "Conflict: only one standalone SSE stream is allowed per session",
        ),
        Err(_) => not_found(),
    };
    with_session(r, &session)
}

/// A DELETE: ends the session (200), after which its id gets 404.
pub(crate) async fn delete(
    shared: &Arc<Shared>,
    parts: &Arc<http::request::Parts>,
) -> Response<McpBody> {
    if shared.config.stateless {
        let mut r = http_error(
            StatusCode::METHOD_NOT_ALLOWED,
            "Method Not Allowed: stateless server",
        );
        r.headers_mut()
            .insert(http::header::ALLOW, HeaderValue::from_static("POST"));
        return r;
    }
    #[cfg(feature = "redis")]
    if let Some(r) = crate::redis::intercept(shared, parts, None).await {
        return r;
    }
    match lookup(shared, parts) {
        Err(r) => r,
        Ok(None) => http_error(StatusCode::BAD_REQUEST, "Bad Request: Missing session ID"),
        Ok(Some(s)) => {
            end(shared, &s);
            status_only(StatusCode::OK)
        }
    }
}
