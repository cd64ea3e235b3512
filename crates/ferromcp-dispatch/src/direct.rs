//! [`DirectDispatcher`]: an in-process dispatcher pair, with no serialization.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::fmt;
use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::task::Poll;

use ferromcp_jsonrpc::{ErrorObject, Payload, RequestId};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::boundary;
use crate::context::{DispatchContext, TransportInfo, TransportKind};
use crate::dispatcher::{BoxFuture, Dispatcher, Outbound};
use crate::error::RunError;
use crate::handler::Handler;
use crate::jsonrpc::RequestState;
use crate::options::{CallOptions, ProgressCallback};
use crate::utility::{CANCELLED, parse_cancelled, with_meta};
use crate::wait::{Outcome, wait_for_answer};

/// One end of the pair.
struct Side {
    handler: OnceLock<Arc<dyn Handler>>,
    /// Raised when this side's `run` starts.
    started: CancellationToken,
    next_id: AtomicI64,
    /// Requests this side has sent and not yet seen answered, with their handlers'
    /// cancellation state (a token is made only when someone waits on it).
    outgoing: Mutex<HashMap<RequestId, Arc<RequestState>>>,
}

/// Both ends, in one allocation: a handle is this plus which end it is, so cloning one (once
/// per request, and once more for the handler's context) is a single reference count.
struct Pair {
    a: Side,
    b: Side,
    /// Raised when either side closes; the pair closes together.
    closed: CancellationToken,
    transport: TransportInfo,
}

/// One end of an in-process dispatcher pair: requests call the other end's handler directly,
/// with no serialization and no tasks.
///
/// Ids, errors and timeouts behave as in [`JsonRpcDispatcher`](crate::JsonRpcDispatcher);
/// progress reaches the caller's callback directly; dropping the caller's future (or a
/// timeout, or `notifications/cancelled` for the request) raises the handler's cancellation
/// signal and drops the handler's future.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use ferromcp_dispatch::*;
/// use ferromcp_jsonrpc::Payload;
///
/// let (client, server) = DirectDispatcher::pair();
/// let s = server.clone();
/// tokio::spawn(async move {
///     s.run(handler_fn(|_, _, _| async { Ok(Payload::from(serde_json::json!({"ok": true}))) }).into_arc()).await
/// });
/// let result = client.send_request("anything", None, CallOptions::new()).await.unwrap();
/// assert_eq!(result, Payload::from(serde_json::json!({"ok": true})));
/// # });
/// ```
#[derive(Clone)]
pub struct DirectDispatcher {
    pair: Arc<Pair>,
    /// This end is side `b` (else `a`); the peer is the other one.
    is_b: bool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Side {
    fn new() -> Self {
        Self {
            handler: OnceLock::new(),
            started: CancellationToken::new(),
            next_id: AtomicI64::new(0),
            outgoing: Mutex::new(HashMap::new()),
        }
    }

    /// Records an outgoing request (under the caller's id, or a fresh one) with its state.
    fn register(
        &self,
        id: Option<RequestId>,
        state: &Arc<RequestState>,
    ) -> Result<RequestId, ErrorObject> {
        let mut outgoing = lock(&self.outgoing);
        let vacant = match id {
            Some(id) => match outgoing.entry(id) {
                Entry::Occupied(e) => {
                    return Err(ErrorObject::invalid_request(format!(
                        "request id {} is already in flight",
                        e.key()
                    )));
                }
                Entry::Vacant(v) => v,
            },
            None => loop {
                let id = RequestId::Number(self.next_id.fetch_add(1, Ordering::Relaxed) + 1);
                if let Entry::Vacant(v) = outgoing.entry(id) {
                    break v;
                }
            },
        };
        let id = vacant.key().clone();
        vacant.insert(state.clone());
        Ok(id)
    }
}

/// Unregisters an outgoing request and cancels its handler when the caller's future ends.
struct Finish<'a> {
    side: &'a Side,
    id: RequestId,
    state: Arc<RequestState>,
}

impl Drop for Finish<'_> {
    fn drop(&mut self) {
        lock(&self.side.outgoing).remove(&self.id);
        self.state.cancel();
    }
}

impl DirectDispatcher {
    /// A connected pair, with a back channel in both directions.
    pub fn pair() -> (Self, Self) {
        Self::pair_with(TransportInfo::new(TransportKind::Direct, true))
    }

    /// A connected pair whose handlers see `transport` (for example, without a back channel).
    pub fn pair_with(transport: TransportInfo) -> (Self, Self) {
        let pair = Arc::new(Pair {
            a: Side::new(),
            b: Side::new(),
            closed: CancellationToken::new(),
            transport,
        });
        (
            Self {
                pair: pair.clone(),
                is_b: false,
            },
            Self { pair, is_b: true },
        )
    }

    /// Whether the pair is closed.
    pub fn is_closed(&self) -> bool {
        self.pair.closed.is_cancelled()
    }

    /// This end's side.
    fn this(&self) -> &Side {
        if self.is_b {
            &self.pair.b
        } else {
            &self.pair.a
        }
    }

    /// The other end's side.
    fn peer(&self) -> &Side {
        if self.is_b {
            &self.pair.a
        } else {
            &self.pair.b
        }
    }

    /// The other end, as its handler's contexts send through it.
    fn reversed(&self) -> Self {
        Self {
            pair: self.pair.clone(),
            is_b: !self.is_b,
        }
    }

    /// Sends a notification related to the peer's request `related` (a handler's context
    /// sending while it handles that request).
    pub(crate) fn notify_related(
        &self,
        related: Option<RequestId>,
        method: &str,
        params: Option<Payload>,
    ) -> BoxFuture<'static, ()> {
        Box::pin(
            self.clone()
                .notification(method.to_owned(), params, related),
        )
    }

    /// The peer's handler: at once when it runs, else once it does; `None` when the pair
    /// closes first.
    async fn peer_handler(&self) -> Option<Arc<dyn Handler>> {
        if let Some(handler) = self.peer().handler.get() {
            return (!self.is_closed()).then(|| handler.clone());
        }
        tokio::select! {
            biased;
            () = self.pair.closed.cancelled() => None,
            () = self.peer().started.cancelled() => self.peer().handler.get().cloned(),
        }
    }

    async fn request(
        self,
        method: String,
        params: Option<Payload>,
        options: CallOptions,
    ) -> Result<Payload, ErrorObject> {
        if self.is_closed() {
            return Err(ErrorObject::connection_closed());
        }
        // The caller's `_meta` members go in as over a connection (the progress token does
        // not: progress is routed by the request here).
        let params = match &options.meta {
            Some(extra) => Some(with_meta(params, None, Some(extra))),
            None => params,
        };
        // The handler's cancellation state: a flag, and a token only once someone waits on it
        // (most handlers never do, and a token is an allocation plus locking).
        let state = Arc::new(RequestState::new());
        let id = self.this().register(options.request_id, &state)?;
        if let Some(on_id) = &options.on_id {
            on_id(&id);
        }
        let _finish = Finish {
            side: self.this(),
            id: id.clone(),
            state: state.clone(),
        };
        let progressed = (options.on_progress.is_some() && options.timeout.is_some())
            .then(|| Arc::new(Notify::new()));
        // Progress reaches the caller until the answer, or while `keep_progress` holds after a
        // successful one (as with `JsonRpcDispatcher`).
        let open = options
            .on_progress
            .as_ref()
            .map(|_| Arc::new(AtomicBool::new(true)));
        let on_progress = match (options.on_progress, &open) {
            (Some(cb), Some(open)) => {
                let open = open.clone();
                let n = progressed.clone();
                Some(Arc::new(move |p| {
                    if open.load(Ordering::Acquire) {
                        if let Some(n) = &n {
                            n.notify_one();
                        }
                        cb(p);
                    }
                }) as ProgressCallback)
            }
            _ => None,
        };
        let keep = options.keep_progress;
        let answer = self.answer(id, state, method, params, on_progress);
        let result = match wait_for_answer(
            answer,
            options.timeout,
            options.max_total_timeout,
            progressed.as_deref(),
        )
        .await
        {
            Outcome::Answer(r) => r,
            Outcome::TimedOut(_) => Err(ErrorObject::request_timeout()),
        };
        if let Some(open) = open {
            let kept = result.is_ok()
                && keep.is_some_and(|k| {
                    let open = open.clone();
                    k.arm(Box::new(move || open.store(false, Ordering::Release)))
                });
            if !kept {
                open.store(false, Ordering::Release);
            }
        }
        result
    }

    /// Runs the peer's handler for request `id` until it answers, the request is cancelled
    /// or the pair closes.
    async fn answer(
        &self,
        id: RequestId,
        state: Arc<RequestState>,
        method: String,
        params: Option<Payload>,
        progress: Option<ProgressCallback>,
    ) -> Result<Payload, ErrorObject> {
        let Some(handler) = self.peer_handler().await else {
            return Err(ErrorObject::connection_closed());
        };
        let closed = &self.pair.closed;
        let ctx = DispatchContext::for_direct_request(
            self.reversed(),
            self.pair.transport.clone(),
            id,
            state.clone(),
            progress,
        );
        let mut call = pin!(boundary::call_request(handler, ctx, method, params));
        // Most handlers answer on their first poll: then no waiter is registered on the
        // cancellation signals (and no token is made for the request).
        if !closed.is_cancelled() && !state.is_cancelled() {
            let first = std::future::poll_fn(|cx| Poll::Ready(call.as_mut().poll(cx))).await;
            if let Poll::Ready(answer) = first {
                return answer;
            }
        }
        let token = state.cancellation();
        tokio::select! {
            biased;
            () = closed.cancelled() => Err(ErrorObject::connection_closed()),
            () = token.cancelled() => Err(ErrorObject::request_cancelled()),
            r = &mut call => r,
        }
    }

    /// Delivers a notification to the peer's handler; `related` is the peer's request it was
    /// sent while handling (see [`Handler::intercept_related_notification`]).
    async fn notification(
        self,
        method: String,
        params: Option<Payload>,
        related: Option<RequestId>,
    ) {
        if method == CANCELLED
            && let Some(id) = parse_cancelled(params.as_ref())
            && let Some(state) = lock(&self.this().outgoing).get(&id)
        {
            state.cancel();
        }
        let Some(handler) = self.peer_handler().await else {
            tracing::debug!(method, "notification dropped: connection closed");
            return;
        };
        if boundary::intercept(&*handler, &method, params.as_ref(), related.as_ref()) {
            return;
        }
        let ctx = DispatchContext::builder_direct(self.reversed(), self.pair.transport.clone())
            .cancellation(self.pair.closed.clone())
            .build();
        boundary::call_notify(handler, ctx, method, params).await;
    }
}

impl Outbound for DirectDispatcher {
    fn send_request(
        &self,
        method: &str,
        params: Option<Payload>,
        options: CallOptions,
    ) -> BoxFuture<'static, Result<Payload, ErrorObject>> {
        Box::pin(self.clone().request(method.to_owned(), params, options))
    }

    fn notify(&self, method: &str, params: Option<Payload>) -> BoxFuture<'static, ()> {
        Box::pin(self.clone().notification(method.to_owned(), params, None))
    }
}

impl Dispatcher for DirectDispatcher {
    fn run(&self, handler: Arc<dyn Handler>) -> BoxFuture<'_, Result<(), RunError>> {
        Box::pin(async move {
            self.this()
                .handler
                .set(handler)
                .map_err(|_| RunError::AlreadyRunning)?;
            self.this().started.cancel();
            self.pair.closed.cancelled().await;
            Ok(())
        })
    }

    fn close(&self) {
        self.pair.closed.cancel();
    }
}

impl fmt::Debug for DirectDispatcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DirectDispatcher")
            .field("transport", &self.pair.transport)
            .field("closed", &self.is_closed())
            .finish_non_exhaustive()
    }
}
