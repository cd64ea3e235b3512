//! Reading SSE response streams: the answer to a request, the standalone GET stream, and
//! resumption with `Last-Event-ID` (2025-11-25 "Resumability and Redelivery").

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use ferromcp_dispatch::ResumptionHooks;
use ferromcp_dispatch::codec::{SseError, SseParser};
use ferromcp_types::jsonrpc::{Message, RequestId};
use http::header::ACCEPT;
use http::{HeaderMap, HeaderValue, Method};
use http_body_util::BodyExt;

use super::client::Body as Incoming;
use super::engine::{
    ACCEPT_SSE, DRAIN_BOUND, Engine, answers, content_type, lock, transport_error, with_id,
};
use super::headers::{LAST_EVENT_ID, MCP_PROTOCOL_VERSION, MCP_SESSION_ID};

/// The shortest delay before reconnecting a stream, whatever the server's `retry` says: a
/// server that keeps closing its streams with `retry: 0` would otherwise cause a reconnect
/// storm.
pub(super) const MIN_RECONNECT_DELAY: Duration = Duration::from_millis(100);

/// Why reading a response stream stopped without the answer.
pub(super) enum StreamEnd {
    Eof,
    Failed(String),
}

impl Engine {
    /// Reads SSE events, forwarding every message except the answer to `target`, which it
    /// returns. Ends with the reason and whether any event arrived.
    pub(super) async fn pump(
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
                        // Whatever else comes on a request's stream relates to it.
                        _ => self.deliver_related(msg, target).await,
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
    /// doubling after, within [`MIN_RECONNECT_DELAY`, `max_retry`]: a server's `retry: 0` or
    /// `retry: 999999999` is clamped like any other value.
    pub(super) fn backoff(&self, retry_ms: Option<u64>, attempt: u32) -> Duration {
        let base = retry_ms.map_or(self.cfg.default_retry, Duration::from_millis);
        base.saturating_mul(1u32 << attempt.min(16))
            .min(self.cfg.max_retry)
            .max(MIN_RECONNECT_DELAY)
    }

    /// Resumes request `id`'s stream with GET + `Last-Event-ID` (2025-11-25 "Resumability and
    /// Redelivery"), after the server's `retry` delay, a bounded number of times.
    pub(super) async fn resume(
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
                    // Progress (a new event id) earns fresh attempts; a server that replays
                    // the same event and closes again does not.
                    if let Some(l) = parser.last_event_id().filter(|l| *l != last) {
                        if got_event {
                            attempt = 0;
                        }
                        last = l.to_owned();
                    }
                    retry = parser.retry().or(retry);
                    end = Some(e);
                }
            }
        }
    }

    /// The headers of a GET: `Accept: text/event-stream`, static and session headers.
    pub(super) fn get_headers(&self) -> HeaderMap {
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
    pub(super) fn start_get_stream(self: &Arc<Self>) {
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
    pub(super) async fn get_stream(&self, generation: u64) {
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
}

impl StreamEnd {
    pub(super) fn describe(&self) -> String {
        match self {
            Self::Eof => "ended before the answer".into(),
            Self::Failed(e) => format!("failed before the answer ({e})"),
        }
    }
}

/// Reads what is left of a response stream for a moment, so that a connection whose stream
/// ends right after the answer goes back to the pool; then drops it.
pub(super) fn drain(mut body: Incoming) {
    tokio::spawn(async move {
        let _ = tokio::time::timeout(DRAIN_BOUND, async {
            while let Some(Ok(_)) = body.frame().await {}
        })
        .await;
    });
}
