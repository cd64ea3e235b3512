//! One POST, one exchange: serves a request with a single-exchange runner through the
//! dispatcher's [`SingleExchange`] (the one error boundary every transport shares) and
//! answers with plain JSON, or with an SSE stream once the handler emits a related
//! notification (or runs past the deferral). The 2026-07-28 entry and the stateless
//! handshake-era mode use it.

use std::sync::{Arc, Mutex, PoisonError};
use std::task::Poll;
use std::time::Duration;

use bytes::Bytes;
use ferromcp_dispatch::codec::encode_message_event;
use ferromcp_dispatch::{
    BoxFuture, CallOptions, Outbound, SingleExchange, TransportInfo, TransportKind,
};
use ferromcp_types::jsonrpc::{ErrorObject, Message, Notification, Payload, RequestId};
use http::{Response, StatusCode};
use tokio::sync::mpsc;
use tokio::task::AbortHandle;
use tokio_util::sync::CancellationToken;

use super::body::{McpBody, json_message, sse_response};
use super::timers::Timers;
use ferromcp_server::ServerRunner;
use ferromcp_server::no_back_channel;

/// The sending half of one response's SSE stream; taken out (closing the stream) once the
/// final response is written.
#[derive(Clone)]
pub(crate) struct StreamSlot(Arc<Mutex<Option<mpsc::Sender<Bytes>>>>);

impl StreamSlot {
    fn new(tx: mpsc::Sender<Bytes>) -> Self {
        Self(Arc::new(Mutex::new(Some(tx))))
    }

    fn sender(&self) -> Option<mpsc::Sender<Bytes>> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn close(&self) -> Option<mpsc::Sender<Bytes>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }
}

/// The outbound of a single exchange: notifications become SSE events of this response;
/// requests are refused (-32600: no back channel).
struct ResponseOutbound {
    slot: StreamSlot,
}

impl Outbound for ResponseOutbound {
    fn send_request(
        &self,
        _method: &str,
        _params: Option<Payload>,
        _options: CallOptions,
    ) -> BoxFuture<'static, Result<Payload, ErrorObject>> {
        Box::pin(std::future::ready(Err(no_back_channel())))
    }

    fn notify(&self, method: &str, params: Option<Payload>) -> BoxFuture<'static, ()> {
        let message = Message::Notification(Notification::new(method, params));
        let tx = self.slot.sender();
        Box::pin(async move {
            let Some(tx) = tx else { return };
            let mut frame = Vec::new();
            if encode_message_event(&mut frame, None, &message).is_ok() {
                // A full queue waits (backpressure on the handler); a gone client drops it.
                let _ = tx.send(Bytes::from(frame)).await;
            }
        })
    }
}

/// Cancels the handler when dropped: with the response body on a client disconnect
/// (2026-07-28: closing the response stream cancels the request), or with the response
/// future. The cancellation signal is raised at once; the task is aborted after
/// [`ABORT_GRACE`] if it has not finished.
pub(crate) struct CancelOnDrop {
    token: Option<CancellationToken>,
    abort: Option<AbortHandle>,
}

/// How long a cancelled handler may take to notice its cancellation signal before its task
/// is aborted.
const ABORT_GRACE: Duration = Duration::from_secs(1);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(t) = &self.token {
            t.cancel();
        }
        if let Some(a) = self.abort.take() {
            if a.is_finished() {
                return;
            }
            match tokio::runtime::Handle::try_current() {
                Ok(rt) => {
                    rt.spawn(async move {
                        tokio::time::sleep(ABORT_GRACE).await;
                        a.abort();
                    });
                }
                Err(_) => a.abort(),
            }
        }
    }
}

/// How one exchange behaves.
pub(crate) struct ExchangeOptions {
    /// Never answer with SSE.
    pub(crate) json_only: bool,
    /// Answer with SSE at once (a `subscriptions/listen` stream).
    pub(crate) sse_now: bool,
    /// A client disconnect cancels the handler (2026-07-28); otherwise it runs on detached.
    pub(crate) cancel_on_disconnect: bool,
    /// Error responses carry an error-dependent HTTP status (2026-07-28); otherwise 200.
    pub(crate) error_status: fn(ferromcp_types::jsonrpc::ErrorCode) -> StatusCode,
    pub(crate) deferral: Duration,
    pub(crate) keep_alive: Duration,
    pub(crate) queue: usize,
    /// The service's reusable timers (deferral, keep-alive).
    pub(crate) timers: Timers,
}

type Outcome = Result<Result<Payload, ErrorObject>, tokio::task::JoinError>;

fn answer(id: RequestId, outcome: Outcome, method: &str) -> Message {
    match outcome {
        Ok(Ok(result)) => Message::response(id, result),
        Ok(Err(e)) => Message::error(Some(id), e),
        // Panics are answered inside the boundary; the task itself only ends early when it
        // is aborted (the client went away), and then nobody reads this.
        Err(_) => {
            tracing::debug!(method, "request task ended before answering");
            Message::error(Some(id), ErrorObject::internal_error("Internal error"))
        }
    }
}

/// Serves one request with `runner` (a single-exchange runner) and builds its response.
pub(crate) async fn run(
    runner: Arc<ServerRunner>,
    parts: Arc<http::request::Parts>,
    id: RequestId,
    method: String,
    params: Option<Payload>,
    opts: ExchangeOptions,
) -> Response<McpBody> {
    let (tx, mut rx) = mpsc::channel::<Bytes>(opts.queue.max(1));
    let slot = StreamSlot::new(tx);
    if opts.json_only {
        // Nothing will read the stream: related notifications are dropped, never queued
        // (a queue nobody drains would stall the handler once full).
        slot.close();
    }
    let outbound: Arc<dyn Outbound> = Arc::new(ResponseOutbound { slot: slot.clone() });
    let token = CancellationToken::new();
    let served = SingleExchange::new(
        outbound,
        TransportInfo::new(TransportKind::StreamableHttp, false),
    )
    .http_parts(Some(parts))
    .cancellation(token.clone())
    .serve(runner, id.clone(), method.clone(), params);
    // A handler that finishes in its first poll is answered inline: no task, one write.
    // The error boundary is inside `served` (a panic is already a -32603 answer).
    let mut served = Box::pin(served);
    let now = std::future::poll_fn(|cx| Poll::Ready(served.as_mut().poll(cx))).await;
    if let Poll::Ready(result) = now {
        return answer_inline(id, result, &method, rx, &slot, &opts);
    }
    // The runner closes the per-request connection (its cleanup hooks run) when the request
    // is done, or from its guard's drop if the task is aborted.
    let mut task = tokio::spawn(served);
    let guard = CancelOnDrop {
        token: opts.cancel_on_disconnect.then_some(token),
        abort: opts.cancel_on_disconnect.then(|| task.abort_handle()),
    };
    let mut first: Option<Bytes> = None;
    if opts.sse_now {
        // Give the handler one turn first: a quick answer goes out with the headers in one
        // write, and needs no finisher task.
        tokio::task::yield_now().await;
        if task.is_finished() {
            let outcome = (&mut task).await;
            drop(guard);
            let message = answer(id, outcome, &method);
            return finish_now(None, rx, &message, &slot, &opts);
        }
    } else {
        let deferral = async {
            if opts.json_only {
                std::future::pending::<()>().await;
            }
            let deadline = tokio::time::Instant::now() + opts.deferral;
            opts.timers.deferral.sleep_until(deadline).await;
        };
        tokio::select! {
            outcome = &mut task => {
                // Frames that raced the finish still make it an SSE response.
                match rx.try_recv() {
                    Ok(frame) if !opts.json_only => first = Some(frame),
                    _ => {
                        let message = answer(id, outcome, &method);
                        let status = match &message {
                            Message::Error(e) => (opts.error_status)(e.error.code),
                            _ => StatusCode::OK,
                        };
                        drop(guard);
                        return json_message(status, &message);
                    }
                }
                let message = answer(id, outcome, &method);
                return finish_now(first, rx, &message, &slot, &opts);
            }
            frame = rx.recv(), if !opts.json_only => first = frame,
            () = deferral => {}
        }
    }
    // SSE from here: a finisher writes the final response and closes the stream.
    let finisher_slot = slot.clone();
    tokio::spawn(async move {
        let outcome = task.await;
        if outcome
            .as_ref()
            .is_err_and(tokio::task::JoinError::is_cancelled)
        {
            return; // the client went away and the request was cancelled
        }
        let message = answer(id, outcome, &method);
        if let Some(tx) = finisher_slot.close() {
            let mut frame = Vec::new();
            if encode_message_event(&mut frame, None, &message).is_ok() {
                let _ = tx.send(Bytes::from(frame)).await;
            }
        }
    });
    let guard: Option<Box<dyn std::any::Any + Send>> = Some(Box::new(guard));
    sse_with_first(first, rx, guard, &opts)
}

/// The handler finished in its first poll: plain JSON, or SSE when it queued frames (or the
/// exchange answers with SSE at once).
fn answer_inline(
    id: RequestId,
    result: Result<Payload, ErrorObject>,
    method: &str,
    mut rx: mpsc::Receiver<Bytes>,
    slot: &StreamSlot,
    opts: &ExchangeOptions,
) -> Response<McpBody> {
    let message = answer(id, Ok(result), method);
    if opts.sse_now {
        return finish_now(None, rx, &message, slot, opts);
    }
    match rx.try_recv() {
        Ok(frame) if !opts.json_only => finish_now(Some(frame), rx, &message, slot, opts),
        _ => {
            let status = match &message {
                Message::Error(e) => (opts.error_status)(e.error.code),
                _ => StatusCode::OK,
            };
            json_message(status, &message)
        }
    }
}

/// The handler finished and frames were queued: answer with SSE holding them and the final
/// response.
fn finish_now(
    first: Option<Bytes>,
    rx: mpsc::Receiver<Bytes>,
    message: &Message,
    slot: &StreamSlot,
    opts: &ExchangeOptions,
) -> Response<McpBody> {
    if let Some(tx) = slot.close() {
        let mut frame = Vec::new();
        if encode_message_event(&mut frame, None, message).is_ok() {
            // The queue may be full; then the rest goes out as the body drains.
            if let Err(mpsc::error::TrySendError::Full(frame)) = tx.try_send(Bytes::from(frame)) {
                tokio::spawn(async move {
                    let _ = tx.send(frame).await;
                });
            }
        }
    }
    sse_with_first(first, rx, None, opts)
}

fn sse_with_first(
    first: Option<Bytes>,
    rx: mpsc::Receiver<Bytes>,
    guard: Option<Box<dyn std::any::Any + Send>>,
    opts: &ExchangeOptions,
) -> Response<McpBody> {
    let mut r = sse_response(
        rx,
        opts.keep_alive,
        guard,
        Some(opts.timers.keep_alive.clone()),
    );
    if let Some(first) = first {
        r.body_mut().push_front(first);
    }
    r
}
