//! A session's SSE streams and the routing of outbound messages (MCP 2025-11-25 "Streamable
//! HTTP › Multiple Connections", "Resumability and Redelivery"):
//!
//! - a response, and whatever relates to its request (`MessageMeta::related_request_id`),
//!   goes on that request's stream; the response ends the stream;
//! - everything else goes on the standalone GET stream;
//! - with an event store, every event is stored first (with an id unique across the
//!   session's streams), so a client can resume a stream with `Last-Event-ID`; a request
//!   stream's priming event may go out first and be stored with the stream's next event, in
//!   one write, when the store can give its id before storing it
//!   ([`EventStore::priming_id`]).
//!
//! Each message goes on exactly one stream. A stream whose client reads too slowly (its
//! queue is full) is closed; a stream whose client went away is detached. Neither stops the
//! request: its events stay in the store.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use bytes::Bytes;
use ferromcp_dispatch::TransportMessage;
use ferromcp_dispatch::codec::{SseEvent, encode_message_event};
use ferromcp_types::jsonrpc::{ErrorObject, Message, RequestId};
use tokio::sync::oneshot;

use crate::event_store::{EventStore, StoredEvent};
use crate::frames::{self, FrameRx, FrameTx, TrySendError};

/// The standalone (GET) stream's id.
pub(crate) const STANDALONE: &str = "g";

enum ReqStream {
    Sse {
        stream: String,
        tx: Option<FrameTx>,
        /// Set while the stream's priming event waits to be stored with its next event.
        priming: Option<PendingPriming>,
    },
    Json(Option<oneshot::Sender<Message>>),
}

/// A request stream's priming event sent but not stored yet (`true` until it is): whoever
/// stores the stream's next event stores it first, holding the lock so that no later event
/// of the stream is stored before it.
type PendingPriming = Arc<tokio::sync::Mutex<bool>>;

#[derive(Default)]
struct State {
    requests: HashMap<RequestId, ReqStream>,
    standalone: Option<FrameTx>,
    closed: bool,
}

/// A session's streams.
pub(crate) struct Streams {
    session: String,
    store: Option<Arc<dyn EventStore>>,
    /// Priming events are sent to clients at 2025-11-25 and later.
    priming: std::sync::atomic::AtomicBool,
    /// The end of every priming event: `retry: {retry_ms}`, then the empty data line.
    priming_tail: Box<[u8]>,
    queue: usize,
    next_stream: AtomicU64,
    state: Mutex<State>,
    /// The 2024-11-05 HTTP+SSE transport: every outbound message goes on the one GET
    /// stream as a `message` event (no request streams, no event store).
    legacy_sse: bool,
}

/// Why a stream could not be opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OpenError {
    /// A request with this id is in flight.
    Duplicate,
    /// The standalone stream is already open.
    Conflict,
    /// The session has ended.
    Closed,
}

impl Streams {
    pub(crate) fn new(
        session: String,
        store: Option<Arc<dyn EventStore>>,
        retry_ms: u64,
        queue: usize,
    ) -> Self {
        Self {
            session,
            store,
            priming: std::sync::atomic::AtomicBool::new(true),
            priming_tail: format!("retry: {retry_ms}\ndata: \n\n")
                .into_bytes()
                .into_boxed_slice(),
            queue: queue.max(1),
            next_stream: AtomicU64::new(0),
            state: Mutex::new(State::default()),
            legacy_sse: false,
        }
    }

    /// The streams of a 2024-11-05 HTTP+SSE session: one GET stream carrying every outbound
    /// message, at most `queue` frames behind its reader.
    pub(crate) fn legacy_sse(session: String, queue: usize) -> Self {
        let mut s = Self::new(session, None, 0, queue);
        s.legacy_sse = true;
        s
    }

    /// Whether this is a 2024-11-05 HTTP+SSE session.
    pub(crate) fn is_legacy_sse(&self) -> bool {
        self.legacy_sse
    }

    /// Whether the GET stream is gone (never opened, closed, or its reader left).
    pub(crate) fn standalone_gone(&self) -> bool {
        self.lock()
            .standalone
            .as_ref()
            .is_none_or(FrameTx::is_closed)
    }

    /// Opens the one stream of a 2024-11-05 HTTP+SSE session, its first event the
    /// `endpoint` event naming `endpoint` (where the client POSTs its messages).
    pub(crate) fn open_legacy_sse(&self, endpoint: &str) -> Result<FrameRx, OpenError> {
        let (tx, rx) = frames::channel(self.queue);
        let mut frame = Vec::with_capacity(endpoint.len() + 24);
        frame.extend_from_slice(b"event: endpoint\ndata: ");
        frame.extend_from_slice(endpoint.as_bytes());
        frame.extend_from_slice(b"\n\n");
        let _ = tx.try_send(Bytes::from(frame));
        let mut s = self.lock();
        if s.closed {
            return Err(OpenError::Closed);
        }
        if s.standalone.is_some() {
            return Err(OpenError::Conflict);
        }
        s.standalone = Some(tx);
        Ok(rx)
    }

    /// Sends `message` on the GET stream as a `message` event; a reader too slow to keep
    /// its queue below the bound, or gone, loses the stream (and so the session).
    fn route_legacy_sse(&self, message: &Message) {
        let json = message.to_vec();
        let mut frame = Vec::with_capacity(json.len() + 24);
        frame.extend_from_slice(b"event: message\ndata: ");
        let start = frame.len();
        frame.extend_from_slice(&json);
        if has_line_break(&json) {
            for b in &mut frame[start..] {
                if matches!(*b, b'\n' | b'\r') {
                    *b = b' ';
                }
            }
        }
        frame.extend_from_slice(b"\n\n");
        let mut s = self.lock();
        let Some(tx) = &s.standalone else { return };
        match tx.try_send(Bytes::from(frame)) {
            Ok(()) => {}
            Err(e) => {
                if e == TrySendError::Full {
                    tracing::warn!(session = %self.session, "SSE client too slow; stream closed");
                }
                s.standalone = None;
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether priming events are sent (the client's version is 2025-11-25 or later).
    pub(crate) fn set_priming(&self, on: bool) {
        self.priming.store(on, Ordering::Relaxed);
    }

    /// Requests in flight.
    pub(crate) fn in_flight(&self) -> usize {
        self.lock().requests.len()
    }

    /// Nothing in flight and no live GET stream.
    pub(crate) fn is_quiet(&self) -> bool {
        let s = self.lock();
        s.requests.is_empty() && s.standalone.as_ref().is_none_or(|tx| tx.is_closed())
    }

    /// Opens the SSE stream of request `id`; returns its receiver, primed.
    pub(crate) async fn open_request(&self, id: &RequestId) -> Result<FrameRx, OpenError> {
        let mut stream = String::with_capacity(8);
        stream.push('r');
        push_decimal(
            &mut stream,
            self.next_stream.fetch_add(1, Ordering::Relaxed),
        );
        let (tx, rx) = frames::channel(self.queue);
        // Whether the stream is primed (a store, a client at 2025-11-25 or later).
        let primed = self.store.is_some() && self.priming.load(Ordering::Relaxed);
        let gate = primed.then(|| Arc::new(tokio::sync::Mutex::new(true)));
        {
            let mut s = self.lock();
            if s.closed {
                return Err(OpenError::Closed);
            }
            if s.requests.contains_key(id) {
                return Err(OpenError::Duplicate);
            }
            s.requests.insert(
                id.clone(),
                ReqStream::Sse {
                    stream: stream.clone(),
                    tx: Some(tx.clone()),
                    priming: gate,
                },
            );
        }
        if primed && !self.prime_later(&stream, &tx) {
            // The store gives ids only as it stores: the priming event is stored now.
            if let Some(ReqStream::Sse { priming, .. }) = self.lock().requests.get_mut(id) {
                *priming = None;
            }
            self.prime(&stream, &tx).await;
        }
        Ok(rx)
    }

    /// Registers request `id` as answered in one JSON body.
    pub(crate) fn open_json(
        &self,
        id: &RequestId,
    ) -> Result<oneshot::Receiver<Message>, OpenError> {
        let (tx, rx) = oneshot::channel();
        let mut s = self.lock();
        if s.closed {
            return Err(OpenError::Closed);
        }
        if s.requests.contains_key(id) {
            return Err(OpenError::Duplicate);
        }
        s.requests.insert(id.clone(), ReqStream::Json(Some(tx)));
        Ok(rx)
    }

    /// Registers request `id` on `stream` with no client attached here: its events are only
    /// stored (another node tails them from a shared event store).
    #[cfg(feature = "redis")]
    pub(crate) fn open_detached(&self, id: &RequestId, stream: &str) -> Result<(), OpenError> {
        let mut s = self.lock();
        if s.closed {
            return Err(OpenError::Closed);
        }
        if s.requests.contains_key(id) {
            return Err(OpenError::Duplicate);
        }
        s.requests.insert(
            id.clone(),
            ReqStream::Sse {
                stream: stream.to_owned(),
                tx: None,
                priming: None,
            },
        );
        Ok(())
    }

    /// Forgets request `id` (its message could not be queued).
    pub(crate) fn abandon(&self, id: &RequestId) {
        self.lock().requests.remove(id);
    }

    /// Opens the standalone GET stream (409 when one is live).
    pub(crate) async fn open_standalone(&self) -> Result<FrameRx, OpenError> {
        let (tx, rx) = frames::channel(self.queue);
        {
            let mut s = self.lock();
            if s.closed {
                return Err(OpenError::Closed);
            }
            if s.standalone.as_ref().is_some_and(|t| !t.is_closed()) {
                return Err(OpenError::Conflict);
            }
            s.standalone = Some(tx.clone());
        }
        self.prime(STANDALONE, &tx).await;
        Ok(rx)
    }

    /// Resumes `stream` after a `Last-Event-ID`: the stored events, then live ones while the
    /// stream is still open.
    pub(crate) fn resume(
        &self,
        stream: &str,
        events: Vec<StoredEvent>,
    ) -> Result<FrameRx, OpenError> {
        let (tx, rx) = frames::channel(self.queue.max(events.len() + 1));
        for e in events {
            let text = String::from_utf8_lossy(&e.data).into_owned();
            if let Ok(frame) = SseEvent::new(text).with_id(e.id).to_bytes() {
                let _ = tx.try_send(Bytes::from(frame));
            }
        }
        let mut s = self.lock();
        if s.closed {
            return Ok(rx); // the replay only
        }
        if stream == STANDALONE {
            if s.standalone.as_ref().is_some_and(|t| !t.is_closed()) {
                return Err(OpenError::Conflict);
            }
            s.standalone = Some(tx);
        } else {
            for r in s.requests.values_mut() {
                if let ReqStream::Sse {
                    stream: st,
                    tx: slot,
                    ..
                } = r
                    && st == stream
                {
                    *slot = Some(tx);
                    break;
                }
            }
        }
        Ok(rx)
    }

    /// Sends the priming event of a new request stream when the store gives its id before
    /// storing it ([`EventStore::priming_id`]); `true` then: the event is stored with the
    /// stream's next one. (No request has been dispatched yet: nothing else is on `tx`.)
    fn prime_later(&self, stream: &str, tx: &FrameTx) -> bool {
        let Some(store) = &self.store else {
            return false;
        };
        let Some(id) = store.priming_id(&self.session, stream) else {
            return false;
        };
        self.send_priming(&id, tx);
        true
    }

    /// Stores, then sends, the priming event: an id and empty data, with `retry`.
    async fn prime(&self, stream: &str, tx: &FrameTx) {
        let Some(store) = &self.store else { return };
        if !self.priming.load(Ordering::Relaxed) {
            return;
        }
        let id = store.store(&self.session, stream, Bytes::new()).await;
        self.send_priming(&id, tx);
    }

    /// Sends the priming event `id` (the frame
    /// `SseEvent::new("").with_id(id).with_retry(retry_ms)` encodes, written directly).
    fn send_priming(&self, id: &str, tx: &FrameTx) {
        if !valid_event_id(id) {
            return;
        }
        let mut frame = Vec::with_capacity(5 + id.len() + self.priming_tail.len());
        frame.extend_from_slice(b"id: ");
        frame.extend_from_slice(id.as_bytes());
        frame.push(b'\n');
        frame.extend_from_slice(&self.priming_tail);
        let _ = tx.try_send(Bytes::from(frame));
    }

    /// Routes one outbound message of the dispatcher.
    pub(crate) async fn route(&self, msg: TransportMessage) {
        let TransportMessage { message, meta } = msg;
        if self.legacy_sse {
            self.route_legacy_sse(&message);
            return;
        }
        let final_id = match &message {
            Message::Response(r) => Some(r.id.clone()),
            Message::Error(e) => e.id.clone(),
            _ => None,
        };
        if let Some(id) = final_id {
            let entry = self.lock().requests.remove(&id);
            match entry {
                Some(ReqStream::Sse {
                    stream,
                    tx,
                    priming,
                }) => {
                    self.emit(&stream, tx.as_ref(), &message, priming).await;
                }
                Some(ReqStream::Json(Some(tx))) => {
                    let _ = tx.send(message);
                }
                _ => tracing::debug!(%id, "answer to a request with no stream dropped"),
            }
            return;
        }
        let is_request = matches!(message, Message::Request(_));
        if let Some(related) = &meta.related_request_id {
            let target = match self.lock().requests.get(related) {
                Some(ReqStream::Sse {
                    stream,
                    tx,
                    priming,
                }) => Some((stream.clone(), tx.clone(), priming.clone())),
                Some(ReqStream::Json(_)) => None,
                None => None,
            };
            match target {
                Some((stream, tx, priming)) => {
                    if !self.emit(&stream, tx.as_ref(), &message, priming).await {
                        self.detach(related, tx.as_ref());
                    } else if meta.close_sse_stream {
                        // The sender asked to close the stream after this message.
                        self.close_request_stream(related);
                    }
                    return;
                }
                // A notification for a request answered in JSON, or already answered,
                // has nowhere to go; a request falls back to the GET stream.
                None if !is_request => return,
                None => {}
            }
        }
        let tx = self.lock().standalone.clone();
        let sent = self.emit(STANDALONE, tx.as_ref(), &message, None).await;
        if sent && meta.close_sse_stream {
            self.close_standalone_early();
        }
        if !sent {
            let mut s = self.lock();
            if let (Some(cur), Some(tx)) = (&s.standalone, &tx)
                && cur.same_channel(tx)
            {
                s.standalone = None;
            }
        }
    }

    /// Stores (when resumable) and sends one event; `false` when the client is gone or too
    /// slow (the stream is then detached). With `priming`, the stream's priming event is
    /// stored first if it is not yet (in the same write where the store can).
    async fn emit(
        &self,
        stream: &str,
        tx: Option<&FrameTx>,
        message: &Message,
        priming: Option<PendingPriming>,
    ) -> bool {
        // With a store, the message is encoded once: the stored data and the frame's data
        // line are the same bytes. The event is stored even when no client is attached.
        let frame = match &self.store {
            Some(store) => {
                let json = Bytes::from(message.to_vec());
                let id = match priming {
                    Some(pending) => {
                        let mut pending = pending.lock().await;
                        if std::mem::take(&mut *pending) {
                            store
                                .store_primed(&self.session, stream, json.clone())
                                .await
                        } else {
                            store.store(&self.session, stream, json.clone()).await
                        }
                    }
                    None => store.store(&self.session, stream, json.clone()).await,
                };
                if tx.is_none() {
                    return false;
                }
                message_frame(&id, &json)
            }
            None if tx.is_none() => return false,
            None => {
                let mut frame = Vec::new();
                encode_message_event(&mut frame, None, message)
                    .is_ok()
                    .then_some(frame)
            }
        };
        let (Some(tx), Some(frame)) = (tx, frame) else {
            // No client (`false`), or an id that cannot be framed: nothing to send.
            return tx.is_some();
        };
        match tx.try_send(Bytes::from(frame)) {
            Ok(()) => true,
            Err(TrySendError::Full) => {
                tracing::warn!(stream, "SSE client too slow; stream closed (resumable)");
                false
            }
            Err(TrySendError::Closed) => false,
        }
    }

    fn detach(&self, id: &RequestId, tx: Option<&FrameTx>) {
        let mut s = self.lock();
        if let Some(ReqStream::Sse { tx: slot, .. }) = s.requests.get_mut(id)
            && let (Some(cur), Some(tx)) = (slot.as_ref(), tx)
            && cur.same_channel(tx)
        {
            *slot = None;
        }
    }

    /// The client cancelled request `id`: answer it -32800 on its stream so the stream can
    /// end (this wire can end a POST stream only with a response).
    pub(crate) async fn cancel(&self, id: &RequestId) {
        let entry = self.lock().requests.remove(id);
        let message = Message::error(Some(id.clone()), ErrorObject::request_cancelled());
        match entry {
            Some(ReqStream::Sse {
                stream,
                tx,
                priming,
            }) => {
                self.emit(&stream, tx.as_ref(), &message, priming).await;
            }
            Some(ReqStream::Json(Some(tx))) => {
                let _ = tx.send(message);
            }
            _ => {}
        }
    }

    /// Whether a closed stream can be resumed: events are stored and the client was primed.
    fn resumable(&self) -> bool {
        self.store.is_some() && self.priming.load(Ordering::Relaxed)
    }

    /// Closes request `id`'s stream early (the request goes on); `false` when the stream
    /// is not resumable or not open.
    fn close_request_stream(&self, id: &RequestId) -> bool {
        if !self.resumable() {
            return false;
        }
        match self.lock().requests.get_mut(id) {
            Some(ReqStream::Sse { tx, .. }) => tx.take().is_some(),
            _ => false,
        }
    }

    /// Closes the GET stream early; `false` when it is not resumable or not open.
    fn close_standalone_early(&self) -> bool {
        self.resumable() && self.lock().standalone.take().is_some()
    }

    /// Closes the GET stream.
    pub(crate) fn close_standalone(&self) {
        self.lock().standalone = None;
    }

    /// Closes every stream (the session ended).
    pub(crate) fn close_all(&self) {
        let mut s = self.lock();
        s.closed = true;
        s.standalone = None;
        s.requests.clear();
    }
}

/// Whether `id` can be an SSE event id: no line break (it would split the frame) and no NUL
/// (a parser ignores such an id), as `SseEvent::encode` requires.
fn valid_event_id(id: &str) -> bool {
    !id.bytes().any(|b| matches!(b, b'\n' | b'\r' | 0))
}

/// The event frame `encode_message_event` writes for a message whose compact JSON is `json`,
/// built from those bytes (line breaks, which JSON can only hold as whitespace, become
/// spaces); `None` for an id that would split the frame.
fn message_frame(id: &str, json: &[u8]) -> Option<Vec<u8>> {
    if !valid_event_id(id) {
        return None;
    }
    let mut frame = Vec::with_capacity(id.len() + json.len() + 13);
    frame.extend_from_slice(b"id: ");
    frame.extend_from_slice(id.as_bytes());
    frame.extend_from_slice(b"\ndata: ");
    let start = frame.len();
    frame.extend_from_slice(json);
    if has_line_break(json) {
        for b in &mut frame[start..] {
            if matches!(*b, b'\n' | b'\r') {
                *b = b' ';
            }
        }
    }
    frame.extend_from_slice(b"\n\n");
    Some(frame)
}

/// Whether `bytes` holds a line break (rare in compact JSON: only a raw payload's whitespace).
fn has_line_break(bytes: &[u8]) -> bool {
    // Branch-free over each chunk, so that the compiler can vectorize the scan.
    bytes.chunks(32).any(|c| {
        c.iter()
            .fold(false, |acc, &b| acc | (b == b'\n') | (b == b'\r'))
    })
}

/// Appends `n` in decimal to `out` (without the formatting machinery: this runs per request).
pub(crate) fn push_decimal(out: &mut String, n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut n = n;
    loop {
        i -= 1;
        // `n % 10` is below 10: the cast cannot truncate.
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.reserve(digits.len() - i);
    for &d in &digits[i..] {
        out.push(char::from(d));
    }
}

/// Lets the handler of a handshake-era request close SSE streams before it answers
/// (SEP-1699 polling, MCP 2025-11-25 "Streamable HTTP › Sending Messages 6"): the client,
/// told the `retry` interval by the priming event, reconnects with GET and `Last-Event-ID`
/// and receives what was sent meanwhile, the response included.
///
/// It travels in the extensions of the request's HTTP parts:
/// `ctx.http_parts().and_then(|p| p.extensions.get::<SseStreamControl>())` (present on
/// stateful SSE requests only).
#[derive(Clone)]
pub struct SseStreamControl {
    streams: Weak<Streams>,
    id: RequestId,
}

impl SseStreamControl {
    pub(crate) fn new(streams: &Arc<Streams>, id: RequestId) -> Self {
        Self {
            streams: Arc::downgrade(streams),
            id,
        }
    }

    /// Closes this request's SSE stream; the request goes on and its later messages are
    /// stored for the client's resumption. `false` when the stream cannot be resumed (no
    /// event store, or a client older than 2025-11-25) or is not open.
    pub fn close(&self) -> bool {
        self.streams
            .upgrade()
            .is_some_and(|s| s.close_request_stream(&self.id))
    }

    /// Closes the session's standalone GET stream (the client reconnects to it); `false`
    /// when it cannot be resumed or is not open.
    pub fn close_standalone(&self) -> bool {
        self.streams
            .upgrade()
            .is_some_and(|s| s.close_standalone_early())
    }
}

impl fmt::Debug for SseStreamControl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SseStreamControl")
            .field("request", &self.id)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
#[path = "streams_tests.rs"]
mod tests;
