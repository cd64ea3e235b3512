//! [`DirectDispatcher`]: an in-process dispatcher pair, with no serialization.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use ferromcp_jsonrpc::{ErrorObject, Payload, RequestId};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::boundary;
use crate::context::{DispatchContext, TransportInfo, TransportKind};
use crate::dispatcher::{BoxFuture, Dispatcher, Outbound};
use crate::error::RunError;
use crate::handler::Handler;
use crate::options::{CallOptions, ProgressCallback};
use crate::utility::{CANCELLED, parse_cancelled};
use crate::wait::{Outcome, wait_for_answer};

/// One end of the pair.
struct Side {
    handler: OnceLock<Arc<dyn Handler>>,
    /// Raised when this side's `run` starts.
    started: CancellationToken,
    next_id: AtomicI64,
    /// Requests this side has sent and not yet seen answered, with their handlers'
    /// cancellation signals.
    outgoing: Mutex<HashMap<RequestId, CancellationToken>>,
}

struct PairShared {
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
    this: Arc<Side>,
    peer: Arc<Side>,
    shared: Arc<PairShared>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Side {
    fn new() -> Arc<Self> {
        Arc::new(Self {
            handler: OnceLock::new(),
            started: CancellationToken::new(),
            next_id: AtomicI64::new(0),
            outgoing: Mutex::new(HashMap::new()),
        })
    }

    fn register(
        &self,
        id: Option<RequestId>,
        token: CancellationToken,
    ) -> Result<RequestId, ErrorObject> {
        let mut outgoing = lock(&self.outgoing);
        let id = match id {
            Some(id) if outgoing.contains_key(&id) => {
                return Err(ErrorObject::invalid_request(format!(
                    "request id {id} is already in flight"
                )));
            }
            Some(id) => id,
            None => loop {
                let id = RequestId::Number(self.next_id.fetch_add(1, Ordering::Relaxed) + 1);
                if !outgoing.contains_key(&id) {
                    break id;
                }
            },
        };
        outgoing.insert(id.clone(), token);
        Ok(id)
    }
}

/// Unregisters an outgoing request and cancels its handler when the caller's future ends.
struct Finish<'a> {
    side: &'a Side,
    id: RequestId,
    token: CancellationToken,
}

impl Drop for Finish<'_> {
    fn drop(&mut self) {
        lock(&self.side.outgoing).remove(&self.id);
        self.token.cancel();
    }
}

impl DirectDispatcher {
    /// A connected pair, with a back channel in both directions.
    pub fn pair() -> (Self, Self) {
        Self::pair_with(TransportInfo::new(TransportKind::Direct, true))
    }

    /// A connected pair whose handlers see `transport` (for example, without a back channel).
    pub fn pair_with(transport: TransportInfo) -> (Self, Self) {
        let (a, b) = (Side::new(), Side::new());
        let shared = Arc::new(PairShared {
            closed: CancellationToken::new(),
            transport,
        });
        (
            Self {
                this: a.clone(),
                peer: b.clone(),
                shared: shared.clone(),
            },
            Self {
                this: b,
                peer: a,
                shared,
            },
        )
    }

    /// Whether the pair is closed.
    pub fn is_closed(&self) -> bool {
        self.shared.closed.is_cancelled()
    }

    /// The other end, as its handler's contexts send through it.
    fn reversed(&self) -> Self {
        Self {
            this: self.peer.clone(),
            peer: self.this.clone(),
            shared: self.shared.clone(),
        }
    }

    /// Waits until the peer runs; `None` when the pair closes first.
    async fn peer_handler(&self) -> Option<Arc<dyn Handler>> {
        tokio::select! {
            biased;
            () = self.shared.closed.cancelled() => None,
            () = self.peer.started.cancelled() => self.peer.handler.get().cloned(),
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
        let token = CancellationToken::new();
        let id = self.this.register(options.request_id, token.clone())?;
        if let Some(on_id) = &options.on_id {
            on_id(&id);
        }
        let _finish = Finish {
            side: &self.this,
            id: id.clone(),
            token: token.clone(),
        };
        let progressed = (options.on_progress.is_some() && options.timeout.is_some())
            .then(|| Arc::new(Notify::new()));
        let on_progress: Option<ProgressCallback> = match (options.on_progress, &progressed) {
            (Some(cb), Some(n)) => {
                let n = n.clone();
                Some(Arc::new(move |p| {
                    n.notify_one();
                    cb(p);
                }))
            }
            (cb, _) => cb,
        };
        // Progress reaches the caller until the answer, or while `keep_progress` holds after a
        // successful one (as with `JsonRpcDispatcher`).
        let open = Arc::new(AtomicBool::new(true));
        let on_progress = on_progress.map(|cb| {
            let open = open.clone();
            Arc::new(move |p| {
                if open.load(Ordering::Acquire) {
                    cb(p);
                }
            }) as ProgressCallback
        });
        let keep = options.keep_progress;
        let closed = self.shared.closed.clone();
        let answer = async {
            let Some(handler) = self.peer_handler().await else {
                return Err(ErrorObject::connection_closed());
            };
            let ctx =
                DispatchContext::builder(Arc::new(self.reversed()), self.shared.transport.clone())
                    .request_id(id.clone())
                    .cancellation(token.clone())
                    .progress_callback(on_progress)
                    .build();
            tokio::select! {
                biased;
                () = closed.cancelled() => Err(ErrorObject::connection_closed()),
                () = token.cancelled() => Err(ErrorObject::request_cancelled()),
                r = boundary::call_request(handler, ctx, method, params) => r,
            }
        };
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
        let kept = result.is_ok()
            && keep.is_some_and(|k| {
                let open = open.clone();
                k.arm(Box::new(move || open.store(false, Ordering::Release)))
            });
        if !kept {
            open.store(false, Ordering::Release);
        }
        result
    }

    async fn notification(self, method: String, params: Option<Payload>) {
        if method == CANCELLED {
            if let Some(id) = parse_cancelled(params.as_ref()) {
                if let Some(token) = lock(&self.this.outgoing).get(&id) {
                    token.cancel();
                }
            }
        }
        let Some(handler) = self.peer_handler().await else {
            tracing::debug!(method, "notification dropped: connection closed");
            return;
        };
        if boundary::intercept(&*handler, &method, params.as_ref()) {
            return;
        }
        let ctx =
            DispatchContext::builder(Arc::new(self.reversed()), self.shared.transport.clone())
                .cancellation(self.shared.closed.clone())
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
        Box::pin(self.clone().notification(method.to_owned(), params))
    }
}

impl Dispatcher for DirectDispatcher {
    fn run(&self, handler: Arc<dyn Handler>) -> BoxFuture<'_, Result<(), RunError>> {
        Box::pin(async move {
            self.this
                .handler
                .set(handler)
                .map_err(|_| RunError::AlreadyRunning)?;
            self.this.started.cancel();
            self.shared.closed.cancelled().await;
            Ok(())
        })
    }

    fn close(&self) {
        self.shared.closed.cancel();
    }
}

impl fmt::Debug for DirectDispatcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DirectDispatcher")
            .field("transport", &self.shared.transport)
            .field("closed", &self.is_closed())
            .finish_non_exhaustive()
    }
}
