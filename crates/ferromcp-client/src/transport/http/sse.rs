//! The 2024-11-05 HTTP+SSE transport, on the [`Engine`]'s hyper client (so its TLS, proxy
//! and timeout settings apply): a GET opens the stream, whose first event (`endpoint`) names
//! the URL the client POSTs its messages to; every server message, answers included, comes
//! on the stream as a `message` event.
//!
//! Chosen explicitly ([`HttpTransport::legacy_sse`](method@super::HttpTransport::legacy_sse)) or by
//! the fallback of MCP 2025-03-26 "Backwards Compatibility": an `initialize` POST refused
//! with 400, 404 or 405 makes the engine GET the same URL and, when an `endpoint` event
//! comes first, speak the old transport from then on.
//!
//! The endpoint must be on the stream's origin (scheme, host, port): a server naming another
//! origin could send the client's messages, and its credentials, anywhere; it is refused.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use super::client::Body as Incoming;
use bytes::Bytes;
use ferromcp_dispatch::codec::{SseError, SseParser};
use ferromcp_dispatch::{Inbound, MessageMeta, TransportMessage};
use ferromcp_types::jsonrpc::{ErrorCode, ErrorObject, Message, RequestId};
use ferromcp_types::mcp::methods;
use http::header::{ACCEPT, CONTENT_TYPE};
use http::{HeaderValue, Method, Uri};
use http_body_util::BodyExt;
use tokio::sync::{mpsc, oneshot};
use tokio::task::AbortHandle;

use super::engine::{ACCEPT_SSE, Engine, content_type, lock, transport_error};
use super::stream::drain;

/// An open 2024-11-05 HTTP+SSE connection: where to POST, and what waits for answers.
pub(crate) struct SseLink {
    endpoint: Uri,
    /// Requests posted and not answered yet: they fail when the stream ends.
    pending: Mutex<HashSet<RequestId>>,
    /// The fallback's `initialize`: its answer goes back to the refused POST's task.
    waiting: Mutex<Option<(RequestId, oneshot::Sender<Message>)>>,
    reader: Mutex<Option<AbortHandle>>,
    closed: AtomicBool,
}

impl SseLink {
    /// Stops reading the stream (the client shuts down).
    pub(super) fn close(&self) {
        self.closed.store(true, Ordering::Release);
        if let Some(r) = lock(&self.reader).take() {
            r.abort();
        }
    }
}

/// Whether `a` and `b` have the same origin: scheme, host and port (the scheme's default
/// when absent), compared without regard to case.
fn same_origin(a: &Uri, b: &Uri) -> bool {
    fn port(u: &Uri) -> Option<u16> {
        u.port_u16().or(match u.scheme_str() {
            Some(s) if s.eq_ignore_ascii_case("https") => Some(443),
            Some(s) if s.eq_ignore_ascii_case("http") => Some(80),
            _ => None,
        })
    }
    let eq = |x: Option<&str>, y: Option<&str>| match (x, y) {
        (Some(x), Some(y)) => x.eq_ignore_ascii_case(y),
        _ => false,
    };
    eq(a.scheme_str(), b.scheme_str()) && eq(a.host(), b.host()) && port(a) == port(b)
}

/// The URL an `endpoint` event names, resolved against the stream's URL `base`; an error
/// when it is not a URL or is on another origin.
pub(crate) fn resolve_endpoint(base: &Uri, data: &str) -> Result<Uri, String> {
    let data = data.trim();
    let (Some(scheme), Some(authority)) = (base.scheme_str(), base.authority()) else {
        return Err("the stream URL has no origin".into());
    };
    let full = if data.contains("://") {
        data.to_owned()
    } else if let Some(rest) = data.strip_prefix("//") {
        format!("{scheme}://{rest}")
    } else if data.starts_with('/') {
        format!("{scheme}://{authority}{data}")
    } else if data.starts_with('?') {
        format!("{scheme}://{authority}{}{data}", base.path())
    } else {
        let path = base.path();
        let dir = &path[..path.rfind('/').map_or(0, |i| i + 1)];
        let dir = if dir.is_empty() { "/" } else { dir };
        format!("{scheme}://{authority}{dir}{data}")
    };
    let uri: Uri = full
        .parse()
        .map_err(|e| format!("the server's endpoint {data:?} is not a URL: {e}"))?;
    if !same_origin(base, &uri) {
        return Err(format!(
            "the server's endpoint {data:?} is on another origin than {base}: refused"
        ));
    }
    Ok(uri)
}

/// Reads events until the first one: its data when it is an `endpoint` event.
async fn endpoint_event(body: &mut Incoming, parser: &mut SseParser) -> Result<String, String> {
    loop {
        if let Some(event) = parser.next_event() {
            return match event {
                Ok(e) if e.event_type() == "endpoint" => Ok(e.data),
                Ok(e) => Err(format!(
                    "the stream's first event is {:?}, not \"endpoint\"",
                    e.event_type()
                )),
                Err(SseError::TooLarge { .. }) => Err("the endpoint event is too large".into()),
                Err(e) => Err(format!("bad SSE event: {e}")),
            };
        }
        match body.frame().await {
            None => return Err("the stream ended before its endpoint event".into()),
            Some(Err(e)) => return Err(format!("the stream failed: {e}")),
            Some(Ok(frame)) => {
                if let Ok(data) = frame.into_data() {
                    parser.feed(&data);
                }
            }
        }
    }
}

/// Reads the stream's `message` events into the dispatcher until it ends; then every
/// request still waiting fails (-32000).
async fn read_stream(
    link: Arc<SseLink>,
    inbound: mpsc::Sender<Inbound>,
    mut body: Incoming,
    mut parser: SseParser,
) {
    let deliver = |msg: Message| {
        let inbound = inbound.clone();
        async move {
            let _ = inbound
                .send(Ok(TransportMessage::new(msg, MessageMeta::default())))
                .await;
        }
    };
    'read: loop {
        while let Some(event) = parser.next_event() {
            let Ok(event) = event else {
                tracing::warn!("a bad or oversized SSE event was dropped");
                continue;
            };
            if event.event_type() != "message" || event.data.is_empty() {
                continue;
            }
            let msg = match Message::from_slice(event.data.as_bytes()) {
                Ok(m) => m,
                Err(e) => {
                    tracing::debug!(error = %e, "undecodable SSE message dropped");
                    continue;
                }
            };
            let answered = match &msg {
                Message::Response(r) => Some(r.id.clone()),
                Message::Error(e) => e.id.clone(),
                _ => None,
            };
            if let Some(id) = answered {
                lock(&link.pending).remove(&id);
                let waiter = {
                    let mut w = lock(&link.waiting);
                    if w.as_ref().is_some_and(|(wid, _)| *wid == id) {
                        w.take()
                    } else {
                        None
                    }
                };
                if let Some((_, tx)) = waiter {
                    let _ = tx.send(msg);
                    continue;
                }
            }
            deliver(msg).await;
        }
        match body.frame().await {
            Some(Ok(frame)) => {
                if let Ok(data) = frame.into_data() {
                    parser.feed(&data);
                }
            }
            Some(Err(e)) => {
                tracing::debug!(error = %e, "the HTTP+SSE stream failed");
                break 'read;
            }
            None => break 'read,
        }
    }
    link.closed.store(true, Ordering::Release);
    let waiter = lock(&link.waiting).take();
    if let Some((id, tx)) = waiter {
        let _ = tx.send(transport_error(&id, "the HTTP+SSE stream ended"));
    }
    let pending: Vec<RequestId> = lock(&link.pending).drain().collect();
    for id in pending {
        deliver(transport_error(
            &id,
            "the HTTP+SSE stream ended before the answer",
        ))
        .await;
    }
}

impl Engine {
    /// Opens the 2024-11-05 HTTP+SSE stream at the endpoint URL and switches this engine to
    /// it: GET, then the `endpoint` event within the endpoint timeout, resolved on the
    /// stream's origin.
    pub(super) async fn open_legacy_sse(&self) -> Result<Arc<SseLink>, String> {
        let mut headers = self.cfg.headers.clone();
        headers.insert(ACCEPT, ACCEPT_SSE);
        let resp = tokio::time::timeout(
            self.cfg.legacy_endpoint_timeout,
            self.send_http(Method::GET, headers, Bytes::new()),
        )
        .await
        .map_err(|_| "the HTTP+SSE stream did not open in time".to_owned())??;
        if !resp.status().is_success() {
            return Err(format!("the HTTP+SSE GET was answered {}", resp.status()));
        }
        if content_type(resp.headers()) != "text/event-stream" {
            return Err("the HTTP+SSE GET did not answer an event stream".into());
        }
        let mut body = resp.into_body();
        let mut parser = SseParser::with_max_event_size(self.cfg.max_event_size);
        let data = tokio::time::timeout(
            self.cfg.legacy_endpoint_timeout,
            endpoint_event(&mut body, &mut parser),
        )
        .await
        .map_err(|_| "no endpoint event arrived in time".to_owned())??;
        let endpoint = resolve_endpoint(&self.uri, &data)?;
        tracing::debug!(%endpoint, "speaking the 2024-11-05 HTTP+SSE transport");
        let link = Arc::new(SseLink {
            endpoint,
            pending: Mutex::default(),
            waiting: Mutex::default(),
            reader: Mutex::default(),
            closed: AtomicBool::new(false),
        });
        let task = tokio::spawn(read_stream(
            link.clone(),
            self.inbound.clone(),
            body,
            parser,
        ));
        *lock(&link.reader) = Some(task.abort_handle());
        if self.legacy.set(link.clone()).is_err() {
            link.close();
            return Err("the transport already speaks HTTP+SSE".into());
        }
        Ok(link)
    }

    /// Whether the answer `resp` to a `method` POST calls for the fallback (MCP 2025-03-26
    /// "Backwards Compatibility"): an `initialize` refused with 400, 404 or 405, when
    /// enabled. (A Streamable HTTP server refusing it, e.g. -32022 from a 2026-07-28 server,
    /// has no HTTP+SSE stream at its URL: its refusal then stands.)
    pub(super) fn wants_sse_fallback(&self, method: &str, resp: &http::Response<Incoming>) -> bool {
        method == methods::INITIALIZE
            && self.cfg.legacy_sse_fallback
            && matches!(resp.status().as_u16(), 400 | 404 | 405)
    }

    /// The fallback: the `initialize` POST (`body`, request `id`) was refused; open the
    /// HTTP+SSE stream on the same URL, send it there and wait for its answer. `None` when
    /// the URL offers no such stream (the refusal then stands).
    pub(super) async fn fall_back_to_sse(&self, id: &RequestId, body: Bytes) -> Option<Message> {
        let link = match self.open_legacy_sse().await {
            Ok(l) => l,
            Err(e) => {
                tracing::debug!(error = %e, "no HTTP+SSE stream to fall back to");
                return None;
            }
        };
        let (tx, rx) = oneshot::channel();
        *lock(&link.waiting) = Some((id.clone(), tx));
        if let Err(e) = self.post_legacy(&link, body, None).await {
            lock(&link.waiting).take();
            return Some(transport_error(id, e));
        }
        Some(
            rx.await
                .unwrap_or_else(|_| transport_error(id, "the HTTP+SSE stream ended")),
        )
    }

    /// Posts one message to the endpoint (202 expected).
    async fn post_legacy(
        &self,
        link: &SseLink,
        body: Bytes,
        extra: Option<&http::HeaderMap>,
    ) -> Result<(), String> {
        let mut headers = self.cfg.headers.clone();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        if let Some(extra) = extra {
            for (k, v) in extra {
                headers.append(k, v.clone());
            }
        }
        let resp = self
            .send_http_to(&link.endpoint, Method::POST, headers, body)
            .await?;
        let status = resp.status();
        drain(resp.into_body());
        if status.is_success() {
            Ok(())
        } else {
            Err(format!("the HTTP+SSE endpoint answered {status}"))
        }
    }

    /// Sends one message over the HTTP+SSE link; `false` once the stream has ended.
    pub(super) async fn send_legacy(&self, link: &SseLink, msg: TransportMessage) -> bool {
        if link.closed.load(Ordering::Acquire) {
            return false;
        }
        let TransportMessage { message, meta } = msg;
        let id = match &message {
            Message::Request(r) if r.method == methods::SERVER_DISCOVER => {
                // The transport of the handshake era: the 2026-07-28 probe is answered here,
                // so that the client goes on with `initialize` at once (a 2024-11-05 server
                // may leave a request before `initialize` unanswered).
                let refusal = ErrorObject::new(
                    ErrorCode::METHOD_NOT_FOUND,
                    "the 2024-11-05 HTTP+SSE transport speaks the handshake era only",
                );
                self.deliver(Message::error(Some(r.id.clone()), refusal))
                    .await;
                return true;
            }
            Message::Request(r) => Some(r.id.clone()),
            _ => None,
        };
        if let Some(id) = &id {
            lock(&link.pending).insert(id.clone());
        }
        let body = Bytes::from(message.to_vec());
        if let Err(e) = self.post_legacy(link, body, meta.headers.as_ref()).await {
            tracing::debug!(error = %e, "an HTTP+SSE POST failed");
            if let Some(id) = id
                && lock(&link.pending).remove(&id)
            {
                self.deliver(transport_error(&id, e)).await;
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::resolve_endpoint;

    #[test]
    fn endpoints_resolve_on_the_stream_origin_only() {
        let base: http::Uri = "http://127.0.0.1:8000/sse".parse().unwrap();
        let ok = |d: &str| resolve_endpoint(&base, d).unwrap().to_string();
        assert_eq!(
            ok("/messages?sessionId=a"),
            "http://127.0.0.1:8000/messages?sessionId=a"
        );
        assert_eq!(
            ok("messages/?session_id=b"),
            "http://127.0.0.1:8000/messages/?session_id=b"
        );
        assert_eq!(ok("?s=1"), "http://127.0.0.1:8000/sse?s=1");
        assert_eq!(ok("http://127.0.0.1:8000/m"), "http://127.0.0.1:8000/m");
        assert_eq!(ok("HTTP://127.0.0.1:8000/m"), "http://127.0.0.1:8000/m");
        for bad in [
            "http://evil.example/messages",
            "https://127.0.0.1:8000/m",
            "http://127.0.0.1:8001/m",
            "//evil.example/m",
            "http://127.0.0.1:8000@evil.example/m",
            "/a b",
        ] {
            assert!(resolve_endpoint(&base, bad).is_err(), "{bad}");
        }
        let default_port: http::Uri = "http://h/sse".parse().unwrap();
        assert!(resolve_endpoint(&default_port, "http://h:80/m").is_ok());
    }
}
