//! The response body ([`McpBody`]: empty, one buffer, or an SSE stream with keep-alive
//! comments), reading request bodies under a bound, and response helpers.

use std::any::Any;
use std::convert::Infallible;
use std::fmt;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker, ready};
use std::time::Duration;

use bytes::{Buf, Bytes};
use ferromcp_dispatch::BoxError;
use ferromcp_types::jsonrpc::{ErrorCode, ErrorObject, Message, RequestId};
use http::header::{CACHE_CONTROL, CONTENT_TYPE, HeaderValue};
use http::{Response, StatusCode};
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt;
use tokio::sync::mpsc;
use tokio::time::{Instant, Sleep};

use super::frames::FrameRx;
use super::headers::{EVENT_STREAM, JSON, X_ACCEL_BUFFERING};
use super::timers::TimerPool;

/// The body of every response the MCP service sends: nothing, one buffer, or a stream of
/// server-sent events (each event one frame, written in one write; a keep-alive comment when
/// the stream is idle).
pub struct McpBody {
    kind: Kind,
}

enum Kind {
    Full(Option<Bytes>),
    Sse(SseBody),
}

struct SseBody {
    /// A frame to send before those in `rx`.
    front: Option<Bytes>,
    rx: Frames,
    keep_alive: Option<KeepAlive>,
    /// Dropped with the body: a client disconnect (or the end of the stream) runs its `Drop`.
    _guard: Option<Box<dyn Any + Send>>,
}

/// Where an SSE body's frames come from.
enum Frames {
    /// A tokio channel (the 2026-07-28 exchanges and the Redis relays, which wait for room).
    Channel(mpsc::Receiver<Bytes>),
    /// A session stream's queue (handshake-era POST and GET streams).
    Queue(FrameRx),
}

impl Frames {
    fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        match self {
            Self::Channel(rx) => rx.poll_recv(cx),
            Self::Queue(rx) => rx.poll_recv(cx),
        }
    }
}

const KEEP_ALIVE_FRAME: &[u8] = b":\n\n";

/// The keep-alive of an SSE body: a comment once the stream has been idle for `period`.
///
/// A frame only records the time (no timer update per frame). The timer is armed when the
/// body first waits, and may be set earlier than the keep-alive is due (a recycled timer, or
/// one armed before the last frame): it then fires early, is re-armed for the due time, and
/// no comment goes out before the stream has really been idle for `period`.
struct KeepAlive {
    period: Duration,
    /// The last frame (or the opening of the stream).
    idle_since: Instant,
    sleep: Option<Pin<Box<Sleep>>>,
    /// The waker the timer last registered: while it is this task's and the timer has not
    /// fired, waiting again needs no timer poll.
    registered: Option<Waker>,
    /// Where the timer goes when the body ends, for the next body to reuse.
    pool: Option<Arc<TimerPool>>,
}

impl KeepAlive {
    /// Ready when a keep-alive comment is due.
    fn poll_due(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let due = self.idle_since + self.period;
        let sleep = match &mut self.sleep {
            Some(sleep) => sleep,
            None => {
                let recycled = self.pool.as_ref().and_then(|p| p.take());
                self.sleep
                    .insert(recycled.unwrap_or_else(|| Box::pin(tokio::time::sleep_until(due))))
            }
        };
        if sleep.deadline() > due {
            // Never later than due (only a recycled timer can be).
            sleep.as_mut().reset(due);
        } else if self
            .registered
            .as_ref()
            .is_some_and(|w| w.will_wake(cx.waker()))
            && !sleep.is_elapsed()
        {
            // Armed for this task and not fired: it will wake us.
            return Poll::Pending;
        }
        loop {
            if sleep.as_mut().poll(cx).is_pending() {
                if !self
                    .registered
                    .as_ref()
                    .is_some_and(|w| w.will_wake(cx.waker()))
                {
                    self.registered = Some(cx.waker().clone());
                }
                return Poll::Pending;
            }
            if sleep.deadline() >= due {
                self.idle_since = Instant::now();
                return Poll::Ready(());
            }
            // Fired early: wait for the rest.
            sleep.as_mut().reset(due);
        }
    }
}

impl Drop for KeepAlive {
    fn drop(&mut self) {
        if let (Some(pool), Some(sleep)) = (&self.pool, self.sleep.take()) {
            pool.put(sleep);
        }
    }
}

impl McpBody {
    /// An empty body.
    pub fn empty() -> Self {
        Self {
            kind: Kind::Full(None),
        }
    }

    /// A body of one buffer.
    pub fn full(bytes: impl Into<Bytes>) -> Self {
        let bytes = bytes.into();
        Self {
            kind: Kind::Full((!bytes.is_empty()).then_some(bytes)),
        }
    }

    /// An SSE body fed by `rx` (each item one complete frame); ends when every sender is
    /// dropped. `guard` is dropped with the body; the keep-alive timer comes from `pool`
    /// when it has one (and goes back to it).
    fn sse(
        rx: Frames,
        keep_alive: Duration,
        guard: Option<Box<dyn Any + Send>>,
        pool: Option<Arc<TimerPool>>,
    ) -> Self {
        let keep_alive = (!keep_alive.is_zero()).then(|| KeepAlive {
            period: keep_alive,
            idle_since: Instant::now(),
            sleep: None,
            registered: None,
            pool,
        });
        Self {
            kind: Kind::Sse(SseBody {
                front: None,
                rx,
                keep_alive,
                _guard: guard,
            }),
        }
    }
}

impl McpBody {
    /// Puts a frame before the queued ones (SSE bodies only).
    pub(crate) fn push_front(&mut self, frame: Bytes) {
        if let Kind::Sse(sse) = &mut self.kind {
            sse.front = Some(frame);
        }
    }
}

impl fmt::Debug for McpBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Kind::Full(b) => f
                .debug_struct("McpBody")
                .field("len", &b.as_ref().map_or(0, Bytes::len))
                .finish(),
            Kind::Sse(_) => f.debug_struct("McpBody").field("sse", &true).finish(),
        }
    }
}

impl Body for McpBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match &mut self.get_mut().kind {
            Kind::Full(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            Kind::Sse(sse) if sse.front.is_some() => {
                Poll::Ready(sse.front.take().map(|f| Ok(Frame::data(f))))
            }
            Kind::Sse(sse) => match sse.rx.poll_recv(cx) {
                Poll::Ready(Some(frame)) => {
                    if let Some(k) = &mut sse.keep_alive {
                        k.idle_since = Instant::now();
                    }
                    Poll::Ready(Some(Ok(Frame::data(frame))))
                }
                Poll::Ready(None) => Poll::Ready(None),
                Poll::Pending => match &mut sse.keep_alive {
                    Some(k) => {
                        ready!(k.poll_due(cx));
                        Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(KEEP_ALIVE_FRAME)))))
                    }
                    None => Poll::Pending,
                },
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(&self.kind, Kind::Full(None))
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Full(b) => SizeHint::with_exact(b.as_ref().map_or(0, |b| b.len() as u64)),
            Kind::Sse(_) => SizeHint::default(),
        }
    }
}

/// Why a request body could not be read.
#[derive(Debug)]
pub(crate) enum BodyError {
    /// Longer than the limit (413).
    TooLarge,
    /// The body failed to arrive (400).
    Read,
    /// The body did not arrive in full within the body timeout (408).
    TimedOut,
}

/// Reads a request body, counting its frames against `limit` (a `Content-Length` over the
/// limit fails at once; a body that lies about its length is cut off as it streams), all of
/// it within `timeout` (a body that stalls is cut off).
pub(crate) async fn read_body<B>(
    body: B,
    declared: Option<u64>,
    limit: usize,
    timeout: Duration,
) -> Result<Bytes, BodyError>
where
    B: Body,
    B::Error: Into<BoxError>,
{
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(BodyError::TooLarge);
    }
    tokio::time::timeout(timeout, read_frames(body, limit))
        .await
        .unwrap_or(Err(BodyError::TimedOut))
}

async fn read_frames<B>(body: B, limit: usize) -> Result<Bytes, BodyError>
where
    B: Body,
    B::Error: Into<BoxError>,
{
    let mut body = std::pin::pin!(body);
    let mut buf: Vec<u8> = Vec::new();
    let mut first: Option<Bytes> = None;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|_| BodyError::Read)?;
        let Ok(mut data) = frame.into_data() else {
            continue;
        };
        let data = data.copy_to_bytes(data.remaining());
        let total = buf.len() + first.as_ref().map_or(0, Bytes::len) + data.len();
        if total > limit {
            return Err(BodyError::TooLarge);
        }
        // One frame (the common case) is kept without a copy.
        match first.take() {
            None if buf.is_empty() => first = Some(data),
            Some(f) => {
                buf.extend_from_slice(&f);
                buf.extend_from_slice(&data);
            }
            None => buf.extend_from_slice(&data),
        }
    }
    Ok(first.unwrap_or_else(|| Bytes::from(buf)))
}

/// A response with a JSON-RPC message as its JSON body.
pub(crate) fn json_message(status: StatusCode, message: &Message) -> Response<McpBody> {
    let mut r = Response::new(McpBody::full(message.to_vec()));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(JSON));
    r
}

/// A JSON-RPC error response as the body of an HTTP error.
pub(crate) fn error(
    status: StatusCode,
    id: Option<RequestId>,
    e: ErrorObject,
) -> Response<McpBody> {
    json_message(status, &Message::error(id, e))
}

/// An HTTP error whose body is a JSON-RPC error with no id (the spec's "MAY comprise a
/// JSON-RPC error response that has no id"), code -32600 unless given.
pub(crate) fn http_error(status: StatusCode, text: impl Into<String>) -> Response<McpBody> {
    let text: String = text.into();
    error(
        status,
        None,
        ErrorObject::new(ErrorCode::INVALID_REQUEST, text),
    )
}

/// A response with a status and no body.
pub(crate) fn status_only(status: StatusCode) -> Response<McpBody> {
    let mut r = Response::new(McpBody::empty());
    *r.status_mut() = status;
    r
}

/// An SSE response over `rx`; its keep-alive timer comes from (and returns to) `pool` when
/// given.
pub(crate) fn sse_response(
    rx: mpsc::Receiver<Bytes>,
    keep_alive: Duration,
    guard: Option<Box<dyn Any + Send>>,
    pool: Option<Arc<TimerPool>>,
) -> Response<McpBody> {
    with_sse_headers(McpBody::sse(Frames::Channel(rx), keep_alive, guard, pool))
}

/// An SSE response over a session stream's queue; its keep-alive timer comes from (and
/// returns to) `pool` when given.
pub(crate) fn sse_queue_response(
    rx: FrameRx,
    keep_alive: Duration,
    pool: Option<Arc<TimerPool>>,
) -> Response<McpBody> {
    with_sse_headers(McpBody::sse(Frames::Queue(rx), keep_alive, None, pool))
}

/// [`sse_queue_response`] holding `guard` until the body is dropped (the client left).
pub(crate) fn sse_queue_response_guarded(
    rx: FrameRx,
    keep_alive: Duration,
    guard: Box<dyn Any + Send>,
    pool: Option<Arc<TimerPool>>,
) -> Response<McpBody> {
    with_sse_headers(McpBody::sse(
        Frames::Queue(rx),
        keep_alive,
        Some(guard),
        pool,
    ))
}

fn with_sse_headers(body: McpBody) -> Response<McpBody> {
    let mut r = Response::new(body);
    let h = r.headers_mut();
    h.insert(CONTENT_TYPE, HeaderValue::from_static(EVENT_STREAM));
    h.insert(
        CACHE_CONTROL,
        HeaderValue::from_static("no-cache, no-transform"),
    );
    h.insert(X_ACCEL_BUFFERING, HeaderValue::from_static("no"));
    r
}

/// The HTTP status of a JSON-RPC error on the 2026-07-28 entry: -32601 is 404, -32603 is
/// 500, the other protocol errors (JSON-RPC's and MCP's reserved codes) are 400, and an
/// application error travels in a 200 like a result.
pub(crate) fn status_of(code: ErrorCode) -> StatusCode {
    match code {
        ErrorCode::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        ErrorCode::INTERNAL_ERROR => StatusCode::INTERNAL_SERVER_ERROR,
        ErrorCode::PARSE_ERROR
        | ErrorCode::INVALID_REQUEST
        | ErrorCode::INVALID_PARAMS
        | ErrorCode::HEADER_MISMATCH
        | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
        | ErrorCode::UNSUPPORTED_PROTOCOL_VERSION => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]

    use super::*;
    use crate::frames;

    async fn next_frame(body: &mut McpBody) -> Option<Bytes> {
        body.frame()
            .await
            .map(|f| f.unwrap().into_data().unwrap_or_default())
    }

    /// SSE keep-alive (MCP 2025-11-25 "Streamable HTTP", SSE comments keep idle streams
    /// open): a comment goes out once the stream has been idle for the period, counted from
    /// the last frame, also when the body reuses a timer an earlier body armed sooner.
    #[tokio::test(start_paused = true)]
    async fn keep_alive_after_idle_period_with_recycled_timers() {
        tokio::time::timeout(Duration::from_secs(600), async {
            let period = Duration::from_secs(10);
            let pool = Arc::new(TimerPool::default());

            // A first body waits (arming its timer for t0 + 10 s) and ends after 3 s.
            let (tx, rx) = frames::channel(4);
            let mut first = McpBody::sse(Frames::Queue(rx), period, None, Some(pool.clone()));
            let waited = tokio::time::timeout(Duration::from_secs(3), next_frame(&mut first));
            assert!(waited.await.is_err(), "nothing before the period");
            drop(tx);
            assert_eq!(next_frame(&mut first).await, None);
            drop(first);
            assert_eq!(pool.len(), 1, "timer recycled");

            // The second body takes that timer (due too early for it): its keep-alive still
            // comes a full period after it opened.
            let (tx, rx) = frames::channel(4);
            let mut second = McpBody::sse(Frames::Queue(rx), period, None, Some(pool.clone()));
            let opened = Instant::now();
            assert_eq!(
                next_frame(&mut second).await.as_deref(),
                Some(KEEP_ALIVE_FRAME)
            );
            assert_eq!(opened.elapsed(), period);

            // A data frame restarts the idle time; so does the comment itself.
            let waited = tokio::time::timeout(Duration::from_secs(4), next_frame(&mut second));
            assert!(waited.await.is_err());
            tx.try_send(Bytes::from_static(b"data: x\n\n")).unwrap();
            assert_eq!(
                next_frame(&mut second).await.as_deref(),
                Some(&b"data: x\n\n"[..])
            );
            let sent = Instant::now();
            assert_eq!(
                next_frame(&mut second).await.as_deref(),
                Some(KEEP_ALIVE_FRAME)
            );
            assert_eq!(sent.elapsed(), period);
            assert_eq!(
                next_frame(&mut second).await.as_deref(),
                Some(KEEP_ALIVE_FRAME)
            );
            assert_eq!(sent.elapsed(), period * 2);
            drop(tx);
            assert_eq!(next_frame(&mut second).await, None);
        })
        .await
        .unwrap();
    }
}
