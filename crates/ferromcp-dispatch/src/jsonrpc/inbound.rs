//! The read loop: inbound requests concurrently (bounded), notifications in order,
//! responses to their callers, cancellation, and shutdown.

use std::collections::VecDeque;
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicBool, Ordering, fence};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Waker};
use std::time::Duration;

use ferromcp_jsonrpc::{ErrorObject, Message, Notification, Request, RequestId};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::{CancelMode, JsonRpcDispatcher, Shared, lock};
use crate::boundary;
use crate::context::{DispatchContext, TransportInfo};
use crate::dispatcher::Outbound;
use crate::handler::Handler;
use crate::transport::{Inbound, MessageMeta, MessageSource};
use crate::utility::{CANCELLED, PROGRESS, parse_cancelled, parse_progress, progress_token_of};

/// How long the -32000 answers to unanswered requests may take to write at shutdown.
const SHUTDOWN_ANSWER_BOUND: Duration = Duration::from_secs(1);

/// A running inbound request, as the in-flight table holds it.
pub(crate) type InFlight = Arc<RequestState>;

pub(crate) struct RequestState {
    /// Raised when the peer cancels the request or the connection shuts down.
    cancelled: AtomicBool,
    /// The handler's cancellation signal, made only when the handler asks for it (see
    /// [`RequestState::cancellation`]): most handlers never do, and a token is an allocation
    /// plus locking on every clone and drop.
    token: OnceLock<CancellationToken>,
    /// Claimed by whoever answers (or decides never to answer) the request.
    answered: AtomicBool,
    /// The handler's task, once spawned (never set for an inline request). Set by the read
    /// loop right after the spawn; only the read loop aborts (cancellation, shutdown), so it
    /// never sees a spawned request without it.
    task: OnceLock<JoinHandle<()>>,
}

impl RequestState {
    pub(crate) fn new() -> Self {
        Self {
            cancelled: AtomicBool::new(false),
            token: OnceLock::new(),
            answered: AtomicBool::new(false),
            task: OnceLock::new(),
        }
    }

    /// The handler's cancellation signal, raised if the request is already cancelled.
    pub(crate) fn cancellation(&self) -> &CancellationToken {
        let token = self.token.get_or_init(CancellationToken::new);
        // Pairs with the fence in `cancel`: either `cancel` sees this token, or this sees
        // the flag it raised (a store then a load on each side, so both need the fence).
        fence(Ordering::SeqCst);
        if self.cancelled.load(Ordering::Relaxed) {
            token.cancel();
        }
        token
    }

    /// Whether the cancellation signal is raised.
    pub(crate) fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Acquire)
    }

    /// Raises the cancellation signal.
    fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        if let Some(token) = self.token.get() {
            token.cancel();
        }
    }

    /// Claims the right to answer; `false` when someone already has.
    fn claim(&self) -> bool {
        !self.answered.swap(true, Ordering::AcqRel)
    }

    /// Drops the handler's future (at its task's next poll).
    fn abort(&self) {
        if let Some(task) = self.task.get() {
            task.abort();
        }
    }
}

/// A message waiting for a free handler slot.
enum Queued {
    Request(Request, MessageMeta),
    Notification(Notification, MessageMeta),
}

/// Work a message leaves for the read loop to finish before it reads on (rare: the common
/// messages are handled synchronously, so no per-message future is built).
enum Deferred {
    /// Write this answer (to a frame that failed to decode).
    Answer(Message),
    /// Run this request on the read loop ([`Handler::runs_inline`]).
    Inline(Request, MessageMeta),
}

/// Everything the loop needs besides the source.
struct Loop {
    shared: Arc<Shared>,
    handler: Arc<dyn Handler>,
    /// The outbound that notification handlers' contexts send through.
    plain: Arc<dyn Outbound>,
    slots: Arc<Semaphore>,
    /// Whether a request's handler is first polled right here (see `start_request`).
    poll_first: bool,
}

/// Reads one item, owning the source meanwhile (so the pending read can live across loop
/// iterations). The source is boxed once per connection so that handing it back and forth
/// moves a pointer, not the source.
async fn recv_owned<S: MessageSource>(mut source: Box<S>) -> (Box<S>, Option<Inbound>) {
    let item = source.recv().await;
    (source, item)
}

#[allow(
    clippy::large_enum_variant,
    reason = "a short-lived local; boxing the read item would allocate per message"
)]
enum Event<S> {
    Stop,
    Slot(OwnedSemaphorePermit),
    Item(Box<S>, Option<Inbound>),
}

pub(super) async fn run_loop<S: MessageSource>(
    shared: Arc<Shared>,
    source: S,
    handler: Arc<dyn Handler>,
) {
    let max = shared.config.max_concurrent_requests.max(1);
    let lp = Loop {
        plain: Arc::new(JsonRpcDispatcher {
            shared: shared.clone(),
        }),
        shared,
        handler,
        slots: Arc::new(Semaphore::new(max)),
        poll_first: tokio::runtime::Handle::try_current()
            .is_ok_and(|rt| rt.runtime_flavor() == tokio::runtime::RuntimeFlavor::CurrentThread),
    };
    let mut queue: VecDeque<Queued> = VecDeque::new();
    // The pending read lives across iterations, so sources need not be cancel-safe.
    let mut recv = pin!(recv_owned(Box::new(source)));
    // Once the source has ended with requests still queued (a client that pipelines and then
    // closes its end): they still start as slots free up, until the shutdown grace runs out.
    let mut closing: Option<Pin<Box<tokio::time::Sleep>>> = None;
    loop {
        let event = tokio::select! {
            biased;
            () = std::future::poll_fn(|cx| lp.shared.halt.poll_raised(cx)) => Event::Stop,
            () = async {
                match closing.as_mut() {
                    Some(deadline) => deadline.await,
                    None => std::future::pending().await,
                }
            }, if closing.is_some() => Event::Stop,
            // An async block, so the semaphore is only cloned when a slot is awaited.
            slot = async { lp.slots.clone().acquire_owned().await }, if !queue.is_empty() => {
                match slot {
                    Ok(slot) => Event::Slot(slot),
                    Err(_) => Event::Stop,
                }
            }
            (source, item) = &mut recv, if closing.is_none() && queue.len() < max => {
                Event::Item(source, item)
            }
        };
        match event {
            Event::Stop => break,
            Event::Slot(slot) => {
                if let Some(q) = queue.pop_front() {
                    lp.start(q, slot);
                }
                if closing.is_some() && queue.is_empty() {
                    break;
                }
            }
            Event::Item(_, None) => {
                let grace = lp.shared.config.shutdown_grace;
                if queue.is_empty() || grace.is_zero() {
                    break;
                }
                closing = Some(Box::pin(tokio::time::sleep(grace)));
            }
            Event::Item(source, Some(item)) => {
                recv.set(recv_owned(source));
                if let Some(deferred) = lp.dispatch(item, &mut queue) {
                    lp.finish(deferred).await;
                }
            }
        }
    }
    // Requests that never started are answered like the ones cancelled at shutdown.
    let never_started = queue
        .into_iter()
        .filter_map(|q| match q {
            Queued::Request(req, _) => Some(req.id),
            Queued::Notification(..) => None,
        })
        .collect();
    let deadline = closing.map(|d| d.deadline());
    lp.shutdown(never_started, deadline).await;
}

impl Loop {
    /// Routes one inbound item; what cannot be done without waiting is returned.
    fn dispatch(&self, item: Inbound, queue: &mut VecDeque<Queued>) -> Option<Deferred> {
        let msg = match item {
            Ok(msg) => msg,
            Err(e) => {
                tracing::debug!(error = %e, "inbound frame failed to decode");
                return Some(Deferred::Answer(Message::Error(e.to_response())));
            }
        };
        let meta = msg.meta;
        match msg.message {
            Message::Response(r) => self.shared.resolve(&r.id, Ok(r.result)),
            Message::Error(e) => match e.id {
                Some(id) => self.shared.resolve(&id, Err(e.error)),
                None => {
                    tracing::debug!(error = %e.error, "dropped an error response with a null id")
                }
            },
            Message::Request(req) => {
                if self.handler.runs_inline(&req.method) {
                    return Some(Deferred::Inline(req, meta));
                } else if !queue.is_empty() {
                    queue.push_back(Queued::Request(req, meta));
                } else {
                    match self.slots.clone().try_acquire_owned() {
                        Ok(slot) => self.start_request(req, meta, slot),
                        Err(_) => queue.push_back(Queued::Request(req, meta)),
                    }
                }
            }
            Message::Notification(n) => {
                if n.method == CANCELLED {
                    if let Some(id) = parse_cancelled(n.params.as_ref()) {
                        self.cancel_inbound(&id);
                    }
                } else if n.method == PROGRESS {
                    if let Some((token, progress)) = parse_progress(n.params.as_ref()) {
                        self.shared.deliver_progress(&token, progress);
                    }
                }
                if boundary::intercept(&*self.handler, &n.method, n.params.as_ref()) {
                    return None;
                }
                match self.slots.clone().try_acquire_owned() {
                    Ok(slot) if queue.is_empty() => self.start(Queued::Notification(n, meta), slot),
                    _ => queue.push_back(Queued::Notification(n, meta)),
                }
            }
        }
        None
    }

    /// Does what [`dispatch`](Self::dispatch) left for the loop to wait on.
    async fn finish(&self, deferred: Deferred) {
        match deferred {
            Deferred::Answer(answer) => {
                let _ = self.shared.write(answer, MessageMeta::default()).await;
            }
            Deferred::Inline(req, meta) => self.run_inline(req, meta).await,
        }
    }

    fn transport_for(&self, meta: &MessageMeta) -> TransportInfo {
        let mut info = self.shared.config.transport.clone();
        if let Some(can) = meta.can_send_requests {
            info.can_send_requests = can;
        }
        info
    }

    /// Builds a request's context and registers it as in flight; `None` for a duplicate id.
    fn admit(&self, req: &Request, meta: MessageMeta) -> Option<(DispatchContext, InFlight)> {
        let state = Arc::new(RequestState::new());
        {
            // One hash of the id: the entry both checks for a duplicate and claims the slot.
            let mut in_flight = lock(&self.shared.in_flight);
            match in_flight.entry(req.id.clone()) {
                std::collections::hash_map::Entry::Occupied(_) => return None,
                std::collections::hash_map::Entry::Vacant(slot) => {
                    slot.insert(state.clone());
                }
            }
        }
        let ctx = DispatchContext::for_connection_request(
            self.shared.clone(),
            self.transport_for(&meta),
            req.id.clone(),
            meta.http,
            state.clone(),
            progress_token_of(req.params.as_ref()),
        );
        Some((ctx, state))
    }

    fn start(&self, q: Queued, slot: OwnedSemaphorePermit) {
        match q {
            Queued::Request(req, meta) => self.start_request(req, meta, slot),
            Queued::Notification(n, meta) => {
                // A notification handler's signal is the connection's: raised at shutdown.
                let ctx = DispatchContext::builder(self.plain.clone(), self.transport_for(&meta))
                    .http_parts(meta.http)
                    .cancellation(self.shared.stop.clone())
                    .build();
                let handler = self.handler.clone();
                tokio::spawn(async move {
                    let _slot = slot;
                    boundary::call_notify(handler, ctx, n.method, n.params).await;
                });
            }
        }
    }

    /// Admits a request and runs its handler in a task of its own.
    ///
    /// On a current-thread runtime the handler is first polled here, on the read loop: the
    /// thread is the same either way, and a handler that finishes on that first poll (most
    /// do) costs no task. One that does not goes on in a task of its own, where it is polled
    /// again at once (so it registers that task's waker), just as a fresh task would be. On
    /// a multi-thread runtime the task is spawned straight away, so handlers run in parallel
    /// with the read loop.
    fn start_request(&self, req: Request, meta: MessageMeta, slot: OwnedSemaphorePermit) {
        let Some((ctx, state)) = self.admit(&req, meta) else {
            return self.reject_duplicate(req.id);
        };
        // Boxed: a pinned future can move into a task after its first poll, and the task
        // moves a pointer through its set-up layers instead of copying the future.
        let mut serving = Box::pin(serve(
            self.shared.clone(),
            self.handler.clone(),
            ctx,
            req,
            state.clone(),
            Some(slot),
        ));
        if self.poll_first {
            let mut cx = Context::from_waker(Waker::noop());
            if serving.as_mut().poll(&mut cx).is_ready() {
                return;
            }
        }
        let task = tokio::spawn(serving);
        // Only this loop aborts, and not before this returns (see `RequestState::task`).
        let _ = state.task.set(task);
    }

    async fn run_inline(&self, req: Request, meta: MessageMeta) {
        match self.admit(&req, meta) {
            Some((ctx, state)) => {
                serve(
                    self.shared.clone(),
                    self.handler.clone(),
                    ctx,
                    req,
                    state,
                    None,
                )
                .await;
            }
            None => self.reject_duplicate(req.id),
        }
    }

    fn reject_duplicate(&self, id: RequestId) {
        tracing::debug!(%id, "rejected a request whose id is already in flight");
        let shared = self.shared.clone();
        tokio::spawn(async move {
            // The id travels in the response; the message never echoes it (it may be huge).
            let e = ErrorObject::invalid_request("this request id is already in flight");
            let _ = shared
                .write(Message::error(Some(id), e), MessageMeta::default())
                .await;
        });
    }

    /// The peer cancelled one of its requests: the handler is never answered.
    fn cancel_inbound(&self, id: &RequestId) {
        let mut in_flight = lock(&self.shared.in_flight);
        let abort = match self.shared.config.cancel_mode {
            CancelMode::Abort => in_flight.remove(id),
            CancelMode::Signal => {
                if let Some(state) = in_flight.get(id) {
                    state.answered.store(true, Ordering::Release);
                    state.cancel();
                }
                None
            }
        };
        let empty = in_flight.is_empty();
        drop(in_flight);
        if let Some(state) = abort {
            state.answered.store(true, Ordering::Release);
            state.cancel();
            state.abort();
            if empty {
                self.shared.idle.notify_waiters();
            }
        }
    }

    /// Closes the dispatcher: in-flight requests get the shutdown grace (what is left of it
    /// when `deadline`, set at the end of the source, says so) to finish, then are cancelled;
    /// they and the `never_started` ones are answered -32000.
    async fn shutdown(
        &self,
        never_started: Vec<RequestId>,
        deadline: Option<tokio::time::Instant>,
    ) {
        self.shared.close();
        let grace = match deadline {
            Some(d) => d.saturating_duration_since(tokio::time::Instant::now()),
            None => self.shared.config.shutdown_grace,
        };
        if !grace.is_zero() {
            let idle = async {
                loop {
                    let notified = self.shared.idle.notified();
                    if lock(&self.shared.in_flight).is_empty() {
                        return;
                    }
                    notified.await;
                }
            };
            let _ = tokio::time::timeout(grace, idle).await;
        }
        let drained: Vec<(RequestId, InFlight)> = lock(&self.shared.in_flight).drain().collect();
        let mut answers = never_started;
        for (id, state) in drained {
            state.cancel();
            state.abort();
            if state.claim() {
                answers.push(id);
            }
        }
        let write_all = async {
            for id in answers {
                let meta = MessageMeta::related_to(id.clone());
                let answer = Message::error(Some(id), ErrorObject::connection_closed());
                if !self.shared.write(answer, meta).await {
                    break;
                }
            }
        };
        let _ = tokio::time::timeout(SHUTDOWN_ANSWER_BOUND, write_all).await;
    }
}

/// Runs one request's handler and writes its answer, unless the peer cancelled it.
///
/// The handler slot is given back before the answer is written: a write waits for the peer
/// to read, and the peer may itself be waiting for this side to read, so holding the slot
/// across the write could stop both read loops at once.
async fn serve(
    shared: Arc<Shared>,
    handler: Arc<dyn Handler>,
    ctx: DispatchContext,
    req: Request,
    state: InFlight,
    slot: Option<OwnedSemaphorePermit>,
) {
    let Request { id, method, params } = req;
    let outcome = boundary::call_request(handler, ctx, method, params).await;
    drop(slot);
    {
        let mut in_flight = lock(&shared.in_flight);
        // Remove first (one hash); put back the rare entry that is not this request's (a later
        // request reusing the id after this one was cancelled).
        if let Some(entry) = in_flight.remove(&id) {
            if Arc::ptr_eq(&entry, &state) {
                if in_flight.is_empty() {
                    shared.idle.notify_waiters();
                }
            } else {
                in_flight.insert(id.clone(), entry);
            }
        }
    }
    if !state.claim() {
        tracing::debug!(%id, "not answering a cancelled request");
        return;
    }
    let answer = match outcome {
        Ok(result) => Message::response(id.clone(), result),
        Err(e) => Message::error(Some(id.clone()), e),
    };
    if !shared.write(answer, MessageMeta::related_to(id)).await {
        tracing::debug!("answer dropped: transport closed");
    }
}
