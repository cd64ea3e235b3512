//! The read loop: inbound requests concurrently (bounded, the excess refused), notifications
//! in order, responses to their callers, cancellation, and shutdown.

use std::collections::VecDeque;
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicBool, Ordering, fence};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Waker};

use ferromcp_jsonrpc::{ErrorObject, Message, Notification, Request, RequestId};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::admission::{self, Held, Kind};
use super::{CancelMode, JsonRpcDispatcher, Shared, lock};
use crate::boundary;
use crate::context::{DispatchContext, TransportInfo};
use crate::dispatcher::Outbound;
use crate::error::Overloaded;
use crate::handler::Handler;
use crate::transport::{Inbound, MessageMeta, MessageSource};
use crate::utility::{CANCELLED, PROGRESS, parse_cancelled, parse_progress, progress_token_of};

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
    pub(crate) fn cancel(&self) {
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

/// A message waiting for a free handler slot; a request holds its count of accepted requests.
enum Queued {
    Request(Request, MessageMeta, Held),
    Notification(Notification, MessageMeta),
}

/// The messages waiting for a handler slot, in arrival order, with their counts mirrored in
/// the connection's [`Load`](super::admission::Load).
#[derive(Default)]
struct Queue {
    items: VecDeque<Queued>,
    requests: usize,
    notifications: usize,
}

impl Queue {
    fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    fn publish(&self, shared: &Shared) {
        shared.load.set_queued(self.requests, self.notifications);
    }

    fn push(&mut self, q: Queued, shared: &Shared) {
        match q {
            Queued::Request(..) => self.requests += 1,
            Queued::Notification(..) => self.notifications += 1,
        }
        self.items.push_back(q);
        self.publish(shared);
    }

    fn pop(&mut self, shared: &Shared) -> Option<Queued> {
        let q = self.items.pop_front()?;
        match q {
            Queued::Request(..) => self.requests -= 1,
            Queued::Notification(..) => self.notifications -= 1,
        }
        self.publish(shared);
        Some(q)
    }

    /// Takes the waiting requests with this id out of the queue (their counts go with them).
    fn remove_requests(&mut self, id: &RequestId, shared: &Shared) {
        let before = self.items.len();
        self.items
            .retain(|q| !matches!(q, Queued::Request(r, ..) if &r.id == id));
        let removed = before - self.items.len();
        if removed > 0 {
            tracing::debug!(%id, "cancelled a request that was still waiting for a slot");
            self.requests -= removed;
            self.publish(shared);
        }
    }

    /// The requests that never started, with their counts.
    fn into_requests(self) -> Vec<(RequestId, Option<Held>)> {
        self.items
            .into_iter()
            .filter_map(|q| match q {
                Queued::Request(req, _, held) => Some((req.id, Some(held))),
                Queued::Notification(..) => None,
            })
            .collect()
    }
}

/// Work a message leaves for the read loop to finish before it reads on (rare: the common
/// messages are handled synchronously, so no per-message future is built).
enum Deferred {
    /// Write this answer of the loop's own (to a frame that failed to decode, or a refusal).
    Answer(Message, MessageMeta),
    /// Run this request on the read loop ([`Handler::runs_inline`]).
    Inline(Request, MessageMeta),
    /// Take this request in once fewer answers wait for the transport (the peer reads slower
    /// than this side answers).
    Admit(Request, MessageMeta),
}

/// Everything the loop needs besides the source.
struct Loop {
    shared: Arc<Shared>,
    handler: Arc<dyn Handler>,
    /// The outbound that notification handlers' contexts send through.
    plain: Arc<dyn Outbound>,
    slots: Arc<Semaphore>,
    /// How many requests may wait for a slot (also the notifications that may, and the loop's
    /// own answers that may wait for the transport without holding up the loop).
    queue_cap: usize,
    /// How many requests the handlers may hold at once: the slots plus `queue_cap`.
    limit: usize,
    /// How many answers may wait for the transport before the loop waits for the peer to
    /// read.
    answer_cap: usize,
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

/// The read loop. It never waits for a handler: it reads on whatever the handlers are doing,
/// so the peer's responses, cancellations and notifications are always acted on (see
/// [`DispatcherConfig`](super::DispatcherConfig#backpressure)).
pub(super) async fn run_loop<S: MessageSource>(
    shared: Arc<Shared>,
    source: S,
    handler: Arc<dyn Handler>,
) {
    let max = shared.config.max_concurrent_requests.max(1);
    let queue_cap = shared.config.max_queued_requests;
    let answer_cap = shared.config.max_unwritten_answers.max(1);
    let lp = Loop {
        plain: Arc::new(JsonRpcDispatcher {
            shared: shared.clone(),
        }),
        shared,
        handler,
        slots: Arc::new(Semaphore::new(max)),
        queue_cap,
        limit: max.saturating_add(queue_cap),
        answer_cap,
        poll_first: tokio::runtime::Handle::try_current()
            .is_ok_and(|rt| rt.runtime_flavor() == tokio::runtime::RuntimeFlavor::CurrentThread),
    };
    let mut queue = Queue::default();
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
            (source, item) = &mut recv, if closing.is_none() => Event::Item(source, item),
        };
        match event {
            Event::Stop => break,
            Event::Slot(slot) => {
                if let Some(q) = queue.pop(&lp.shared) {
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
                    lp.finish(deferred, &mut queue).await;
                }
            }
        }
    }
    // Requests that never started are answered like the ones cancelled at shutdown.
    let never_started = queue.into_requests();
    lp.shared.load.set_queued(0, 0);
    let deadline = closing.map(|d| d.deadline());
    lp.shutdown(never_started, deadline).await;
}

impl Loop {
    /// Routes one inbound item; what cannot be done without waiting is returned.
    fn dispatch(&self, item: Inbound, queue: &mut Queue) -> Option<Deferred> {
        let msg = match item {
            Ok(msg) => msg,
            Err(e) => {
                tracing::debug!(error = %e, "inbound frame failed to decode");
                let answer = Message::Error(e.to_response());
                return Some(Deferred::Answer(answer, MessageMeta::default()));
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
                }
                let load = &self.shared.load;
                if load.held_by_handlers() >= self.limit {
                    return Some(self.refuse(req.id));
                }
                if load.unwritten() >= self.answer_cap {
                    return Some(Deferred::Admit(req, meta));
                }
                return self.accept(req, meta, queue);
            }
            Message::Notification(n) => {
                if n.method == CANCELLED {
                    if let Some(id) = parse_cancelled(n.params.as_ref()) {
                        self.cancel_inbound(&id);
                        queue.remove_requests(&id, &self.shared);
                    }
                } else if n.method == PROGRESS
                    && let Some((token, progress)) = parse_progress(n.params.as_ref())
                {
                    self.shared.deliver_progress(&token, progress);
                }
                let related = meta.related_request_id.as_ref();
                if boundary::intercept(&*self.handler, &n.method, n.params.as_ref(), related) {
                    return None;
                }
                match self.slots.clone().try_acquire_owned() {
                    Ok(slot) if queue.is_empty() => self.start(Queued::Notification(n, meta), slot),
                    _ if queue.notifications >= self.queue_cap => {
                        tracing::warn!(
                            method = n.method,
                            "notification handler dropped: every handler slot is busy and \
                             the notification queue is full"
                        );
                    }
                    _ => queue.push(Queued::Notification(n, meta), &self.shared),
                }
            }
        }
        None
    }

    /// Accepts a request (below the bound): starts it, or queues it while every slot is busy;
    /// refuses it when the queue is full.
    fn accept(&self, req: Request, meta: MessageMeta, queue: &mut Queue) -> Option<Deferred> {
        if queue.is_empty()
            && let Ok(slot) = self.slots.clone().try_acquire_owned()
        {
            let held = Held::new(&self.shared, Kind::Request);
            self.start_request(req, meta, Some(held), slot);
            return None;
        }
        if queue.requests >= self.queue_cap {
            return Some(self.refuse(req.id));
        }
        let held = Held::new(&self.shared, Kind::Request);
        queue.push(Queued::Request(req, meta, held), &self.shared);
        None
    }

    /// The overload refusal of a request beyond the bound.
    fn refuse(&self, id: RequestId) -> Deferred {
        tracing::debug!(%id, limit = self.limit, "request refused: overloaded");
        let meta = MessageMeta::related_to(id.clone());
        let answer = Message::error(Some(id), Overloaded::new(self.limit).error());
        Deferred::Answer(answer, meta)
    }

    /// Does what [`dispatch`](Self::dispatch) left for the loop to wait on.
    async fn finish(&self, deferred: Deferred, queue: &mut Queue) {
        match deferred {
            Deferred::Answer(answer, meta) => self.answer(answer, meta).await,
            Deferred::Inline(req, meta) => self.run_inline(req, meta).await,
            Deferred::Admit(req, meta) => {
                self.wait_for_room().await;
                let refused = if self.shared.load.held_by_handlers() >= self.limit {
                    Some(self.refuse(req.id))
                } else {
                    self.accept(req, meta, queue)
                };
                if let Some(Deferred::Answer(answer, meta)) = refused {
                    self.answer(answer, meta).await;
                }
            }
        }
    }

    /// Waits until fewer than `answer_cap` answers wait for the transport (or the connection
    /// closes): the one wait of the read loop, which only a peer that does not read what it
    /// is sent can make long.
    async fn wait_for_room(&self) {
        let halt = std::future::poll_fn(|cx| self.shared.halt.poll_raised(cx));
        self.shared.load.wait_for_room(self.answer_cap, halt).await;
    }

    /// Writes an answer of the loop's own. When the transport has no room for it right away
    /// it is written by a task of its own, so that the loop reads on; while `answer_cap`
    /// answers already wait for the transport, the loop first waits for one to get through.
    async fn answer(&self, answer: Message, meta: MessageMeta) {
        if self.shared.load.unwritten() >= self.answer_cap {
            self.wait_for_room().await;
        }
        let held = Held::new(&self.shared, Kind::Refusal);
        let shared = self.shared.clone();
        let mut write = Box::pin(async move {
            let _held = held;
            if !shared.write(answer, meta).await {
                tracing::debug!("answer dropped: transport closed");
            }
        });
        if write
            .as_mut()
            .poll(&mut Context::from_waker(Waker::noop()))
            .is_pending()
        {
            tokio::spawn(write);
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
            Queued::Request(req, meta, held) => self.start_request(req, meta, Some(held), slot),
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
    fn start_request(
        &self,
        req: Request,
        meta: MessageMeta,
        held: Option<Held>,
        slot: OwnedSemaphorePermit,
    ) {
        let Some((ctx, state)) = self.admit(&req, meta) else {
            return self.reject_duplicate(req.id, held);
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
            held,
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
                    None,
                )
                .await;
            }
            None => self.reject_duplicate(req.id, None),
        }
    }

    /// Answers a request whose id is already in flight with -32600, in a task of its own; the
    /// request stays counted (`held`) until the answer is written.
    fn reject_duplicate(&self, id: RequestId, held: Option<Held>) {
        tracing::debug!(%id, "rejected a request whose id is already in flight");
        let shared = self.shared.clone();
        tokio::spawn(async move {
            let _held = held;
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
    /// they and the `never_started` ones are answered -32000. Then it waits until every
    /// accepted request's answer has reached the transport (see [`admission::drain`]).
    async fn shutdown(
        &self,
        never_started: Vec<(RequestId, Option<Held>)>,
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
                answers.push((id, None));
            }
        }
        for (id, held) in answers {
            let meta = MessageMeta::related_to(id.clone());
            let answer = Message::error(Some(id), ErrorObject::connection_closed());
            let written = tokio::time::timeout(
                admission::DRAIN_STALL_BOUND,
                self.shared.write(answer, meta),
            )
            .await;
            drop(held);
            if !matches!(written, Ok(true)) {
                break;
            }
        }
        admission::drain(&self.shared).await;
    }
}

/// Runs one request's handler and writes its answer, unless the peer cancelled it.
///
/// The handler slot is given back before the answer is written: a write waits for the peer
/// to read, and the peer may itself be waiting for this side to read, so holding the slot
/// across the write could stop both read loops at once. The request stays accepted (`held`)
/// until its answer is written, which bounds the answers waiting for the transport.
async fn serve(
    shared: Arc<Shared>,
    handler: Arc<dyn Handler>,
    ctx: DispatchContext,
    req: Request,
    state: InFlight,
    slot: Option<OwnedSemaphorePermit>,
    mut held: Option<Held>,
) {
    let Request { id, method, params } = req;
    let outcome = boundary::call_request(handler, ctx, method, params).await;
    drop(slot);
    if let Some(held) = held.as_mut() {
        held.writing();
    }
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
    drop(held);
}
