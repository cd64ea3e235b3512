//! [`JsonRpcDispatcher`]: JSON-RPC 2.0 over the message-stream contract.

mod admission;
mod inbound;
mod pending;

use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use ferromcp_jsonrpc::{ErrorObject, Message, Notification, Payload, RequestId};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::context::{TransportInfo, TransportKind};
use crate::dispatcher::{BoxFuture, Dispatcher, Outbound};
use crate::error::RunError;
use crate::handler::Handler;
use crate::options::{CallOptions, ProgressCallback};
use crate::transport::{MessageMeta, MessageSink, MessageSource, TransportMessage};
use crate::utility::{CANCELLED, parse_cancelled};

pub use admission::InboundLoad;
use admission::Load;
use inbound::InFlight;
pub(crate) use inbound::RequestState;
use pending::PendingEntry;

/// What happens to a handler when the peer cancels its request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum CancelMode {
    /// Raise the cancellation signal and drop the handler's future.
    #[default]
    Abort,
    /// Only raise the cancellation signal; the handler finishes on its own (its answer is
    /// discarded).
    Signal,
}

/// The default of [`DispatcherConfig::max_concurrent_requests`]: 64 handlers at once.
pub const DEFAULT_MAX_CONCURRENT_REQUESTS: usize = 64;

/// The default of [`DispatcherConfig::max_queued_requests`]: 256 requests waiting for a
/// handler slot.
pub const DEFAULT_MAX_QUEUED_REQUESTS: usize = 256;

/// The default of [`DispatcherConfig::max_unwritten_answers`]: 1024 answers waiting for the
/// peer to read.
pub const DEFAULT_MAX_UNWRITTEN_ANSWERS: usize = 1024;

/// Settings for a [`JsonRpcDispatcher`].
///
/// # Backpressure
///
/// The read loop never waits for a handler: responses to this side's requests, cancellations,
/// progress and every other notification are read and acted on whatever the handlers are
/// doing, so a handler that waits for the peer (an elicitation, say) always gets its answer.
///
/// - A request counts from when it is read until its answer has been handed to the
///   transport (or it is cancelled). While the handlers hold `max_concurrent_requests +
///   max_queued_requests` requests (running, or waiting for a slot), one more is refused at
///   once with the [`Overloaded`](crate::Overloaded) error (-32600, `data.overloaded`), and
///   the connection goes on serving.
/// - A `notifications/cancelled` for a request still waiting for a slot takes it out of the
///   queue, unanswered.
/// - Notifications wait for a slot in the same queue (so handlers start in arrival order), at
///   most `max_queued_requests` of them; one more is dropped with a warning, after the
///   dispatcher has acted on it itself (cancellation, progress,
///   [`Handler::intercept_notification`](crate::Handler::intercept_notification)).
///
/// The only thing the read loop ever waits for is the peer reading what this side writes:
/// answers (handlers' results, and the loop's own refusals and decode-error answers) wait for
/// the transport in tasks of their own, at most `max_unwritten_answers` of them; while that
/// many wait, the loop takes no new request in until one gets through. A peer that reads what
/// it is sent therefore always has its requests read, however far it pipelines; one that
/// stops reading holds at most that many answers here (and the transport's own buffer). Two
/// dispatchers flooding each other can stall each other only when each has more than
/// `max_unwritten_answers` answers unread by the other. Handlers wait for the transport after
/// giving their slot back, so they never hold up the read loop.
///
/// At the end of the connection (end of input, or [`Dispatcher::close`]) every accepted
/// request is answered (by its handler within `shutdown_grace`, else with -32000) and `run`
/// returns only once those answers have reached the transport, or once none has got through
/// for 2 s (the peer stopped reading).
///
/// ```
/// use std::time::Duration;
/// use ferromcp_dispatch::{CancelMode, DispatcherConfig, TransportInfo, TransportKind};
///
/// let config = DispatcherConfig::default()
///     .max_concurrent_requests(16)
///     .max_queued_requests(32)
///     .max_unwritten_answers(128)
///     .cancel_mode(CancelMode::Signal)
///     .shutdown_grace(Duration::from_millis(100))
///     .transport(TransportInfo::new(TransportKind::Stdio, true));
/// assert_eq!(config.max_concurrent_requests, 16);
/// assert_eq!(config.max_queued_requests, 32);
/// assert_eq!(DispatcherConfig::default().max_queued_requests, 256);
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct DispatcherConfig {
    /// How many inbound requests and notification handlers run at once (default
    /// [`DEFAULT_MAX_CONCURRENT_REQUESTS`] = 64, at least 1).
    pub max_concurrent_requests: usize,
    /// How many more requests may be accepted while every handler slot is busy (default
    /// [`DEFAULT_MAX_QUEUED_REQUESTS`] = 256). They wait for a slot in arrival order; a
    /// request beyond this is refused at once with the [`Overloaded`](crate::Overloaded)
    /// error. Also bounds the notifications waiting for a slot (see
    /// [Backpressure](DispatcherConfig#backpressure)).
    pub max_queued_requests: usize,
    /// How many answers may wait for the peer to read them before the read loop waits too
    /// (default [`DEFAULT_MAX_UNWRITTEN_ANSWERS`] = 1024, at least 1).
    pub max_unwritten_answers: usize,
    /// What a peer's cancellation does to its handler.
    pub cancel_mode: CancelMode,
    /// How long in-flight handlers may run on at shutdown before they are cancelled (default 0).
    pub shutdown_grace: Duration,
    /// The transport's description, as handlers see it (default: in-memory, with a back
    /// channel). An inbound message's metadata can override `can_send_requests`.
    pub transport: TransportInfo,
}

impl Default for DispatcherConfig {
    fn default() -> Self {
        Self {
            max_concurrent_requests: DEFAULT_MAX_CONCURRENT_REQUESTS,
            max_queued_requests: DEFAULT_MAX_QUEUED_REQUESTS,
            max_unwritten_answers: DEFAULT_MAX_UNWRITTEN_ANSWERS,
            cancel_mode: CancelMode::Abort,
            shutdown_grace: Duration::ZERO,
            transport: TransportInfo::new(TransportKind::InMemory, true),
        }
    }
}

impl DispatcherConfig {
    /// Sets the bound on concurrently running handlers.
    #[must_use]
    pub fn max_concurrent_requests(mut self, n: usize) -> Self {
        self.max_concurrent_requests = n;
        self
    }

    /// Sets how many requests may wait for a handler slot before more are refused.
    #[must_use]
    pub fn max_queued_requests(mut self, n: usize) -> Self {
        self.max_queued_requests = n;
        self
    }

    /// Sets how many answers may wait for the peer to read them.
    #[must_use]
    pub fn max_unwritten_answers(mut self, n: usize) -> Self {
        self.max_unwritten_answers = n;
        self
    }

    /// Sets what a peer's cancellation does.
    #[must_use]
    pub fn cancel_mode(mut self, mode: CancelMode) -> Self {
        self.cancel_mode = mode;
        self
    }

    /// Sets the shutdown grace period.
    #[must_use]
    pub fn shutdown_grace(mut self, d: Duration) -> Self {
        self.shutdown_grace = d;
        self
    }

    /// Sets the transport's description.
    #[must_use]
    pub fn transport(mut self, info: TransportInfo) -> Self {
        self.transport = info;
        self
    }
}

/// A table keyed by request id.
///
/// It hashes with [`IdHasher`] instead of the default SipHash: ids are tiny (mostly small
/// integers) and looked up several times per request, where SipHash's set-up dominated.
/// `IdHasher` is not keyed, so a peer could choose ids that collide, but every such table is
/// bounded: the inbound one by `max_concurrent_requests` (plus one inline request), the
/// outbound ones by this side's own requests, whose ids it mints. A peer that makes all its
/// in-flight ids collide costs at most that many probes per lookup.
pub(crate) type IdMap<V> = HashMap<RequestId, V, BuildHasherDefault<IdHasher>>;

/// An FxHash-style hasher (rotate, xor, multiply per word) for [`IdMap`].
#[derive(Default, Clone, Copy)]
pub(crate) struct IdHasher(u64);

impl IdHasher {
    /// The multiplier of rustc's FxHasher.
    const K: u64 = 0xf135_7aea_2e62_a9c5;

    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(Self::K);
    }
}

impl Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    #[allow(clippy::cast_sign_loss, reason = "the bits are hashed, not the value")]
    fn write_i64(&mut self, n: i64) {
        self.add(n as u64);
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    #[allow(clippy::cast_sign_loss, reason = "the bits are hashed, not the value")]
    fn write_isize(&mut self, n: isize) {
        self.add(n as u64);
    }

    fn finish(&self) -> u64 {
        // The multiply leaves its best bits at the top; the table indexes by the low ones.
        self.0.rotate_left(26)
    }
}

type Runner = Box<dyn FnOnce(Arc<Shared>, Arc<dyn Handler>) -> BoxFuture<'static, ()> + Send>;

/// State shared by the handle, the read loop and the handler tasks.
pub(crate) struct Shared {
    sink: Box<dyn MessageSink>,
    config: DispatcherConfig,
    next_id: AtomicI64,
    pending: Mutex<IdMap<PendingEntry>>,
    /// Progress routes kept after their request's answer (`CallOptions::keep_progress`), by
    /// token, with a generation so that a stale release cannot end a newer route.
    kept: Arc<Mutex<IdMap<(u64, ProgressCallback)>>>,
    next_keep: AtomicU64,
    in_flight: Mutex<IdMap<InFlight>>,
    /// Counts of accepted and waiting inbound messages (the backpressure bounds).
    load: Load,
    /// Set once the connection is closed: no more requests, notifications are dropped.
    closed: AtomicBool,
    /// Raised with `halt` when the connection closes: the cancellation signal of
    /// notification handlers.
    stop: CancellationToken,
    /// Asks the read loop to stop.
    halt: Halt,
    /// Woken when the last in-flight handler finishes.
    idle: Notify,
    runner: Mutex<Option<Runner>>,
}

/// A one-way flag the read loop polls at every wake-up: an atomic load and, while it is
/// down, keeping the loop's waker. Much cheaper per poll than a `CancellationToken`'s future,
/// which locks its tree twice.
#[derive(Default)]
pub(crate) struct Halt {
    raised: AtomicBool,
    waker: Mutex<Option<Waker>>,
}

impl Halt {
    fn raise(&self) {
        self.raised.store(true, Ordering::Release);
        if let Some(waker) = lock(&self.waker).take() {
            waker.wake();
        }
    }

    /// Ready once raised.
    ///
    /// No wake-up is lost: `raise` sets the flag before it takes the waker, and this
    /// stores the waker before it checks the flag again.
    pub(crate) fn poll_raised(&self, cx: &mut Context<'_>) -> Poll<()> {
        if self.raised.load(Ordering::Acquire) {
            return Poll::Ready(());
        }
        {
            let mut waker = lock(&self.waker);
            match &*waker {
                Some(w) if w.will_wake(cx.waker()) => {}
                _ => *waker = Some(cx.waker().clone()),
            }
        }
        if self.raised.load(Ordering::Acquire) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

/// Locks a mutex, recovering the data if a panic poisoned it (the tables stay consistent:
/// every critical section is a single map operation).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Shared {
    fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Writes one message; `false` when the transport is closed.
    ///
    /// The message goes to the sink right away; the future holds only the sink's (boxed)
    /// future, so that futures awaiting it stay small.
    fn write(&self, message: Message, meta: MessageMeta) -> impl Future<Output = bool> + '_ {
        let sent = self.sink.send(TransportMessage::new(message, meta));
        async move { sent.await.is_ok() }
    }

    /// Sends a notification, dropping it with a debug log after close.
    async fn notify(&self, method: String, params: Option<Payload>, related: Option<RequestId>) {
        if self.is_closed() {
            tracing::debug!(method, "notification dropped: connection closed");
            return;
        }
        if method == CANCELLED {
            // Our own cancellation of a request we sent: its caller gets -32800 now.
            if let Some(id) = parse_cancelled(params.as_ref()) {
                self.resolve(&id, Err(ErrorObject::request_cancelled()));
            }
        }
        let meta = related.map(MessageMeta::related_to).unwrap_or_default();
        let message = Message::Notification(Notification { method, params });
        if !self.write(message, meta).await {
            tracing::debug!("notification dropped: transport closed");
        }
    }

    /// Closes the connection: fails every pending caller with -32000 and stops the loop.
    fn close(&self) {
        let drained: Vec<PendingEntry> = {
            let mut pending = lock(&self.pending);
            self.closed.store(true, Ordering::Release);
            pending.drain().map(|(_, e)| e).collect()
        };
        for entry in drained {
            let _ = entry.tx.send(Err(ErrorObject::connection_closed()));
        }
        lock(&self.kept).clear();
        self.stop.cancel();
        self.halt.raise();
    }
}

/// A JSON-RPC 2.0 dispatcher over a [`MessageSource`] and a [`MessageSink`].
///
/// The handle is cheap to clone; [`Dispatcher::run`] serves the connection (once).
///
/// ```
/// # tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap().block_on(async {
/// use std::sync::Arc;
/// use ferromcp_dispatch::*;
/// use ferromcp_jsonrpc::Payload;
///
/// let (a, b) = memory_pair(64);
/// let client = JsonRpcDispatcher::new(a.source, a.sink, DispatcherConfig::default());
/// let server = JsonRpcDispatcher::new(b.source, b.sink, DispatcherConfig::default());
/// let echo = handler_fn(|_ctx, _method, params| async move { Ok(params.unwrap_or_else(Payload::empty_object)) });
/// let s = server.clone();
/// tokio::spawn(async move { s.run(echo.into_arc()).await });
/// let c = client.clone();
/// tokio::spawn(async move { c.run(handler_fn(|_, _, _| async { Ok(Payload::empty_object()) }).into_arc()).await });
///
/// let result = client.send_request("echo", None, CallOptions::new()).await.unwrap();
/// assert!(result.is_object());
/// client.close();
/// # });
/// ```
#[derive(Clone)]
pub struct JsonRpcDispatcher {
    shared: Arc<Shared>,
}

impl JsonRpcDispatcher {
    /// A dispatcher reading from `source` and writing to `sink`.
    pub fn new<S, K>(source: S, sink: K, config: DispatcherConfig) -> Self
    where
        S: MessageSource,
        K: MessageSink,
    {
        let runner: Runner =
            Box::new(move |shared, handler| Box::pin(inbound::run_loop(shared, source, handler)));
        Self {
            shared: Arc::new(Shared {
                sink: Box::new(sink),
                config,
                next_id: AtomicI64::new(0),
                pending: Mutex::new(IdMap::default()),
                kept: Arc::new(Mutex::new(IdMap::default())),
                next_keep: AtomicU64::new(0),
                in_flight: Mutex::new(IdMap::default()),
                load: Load::default(),
                closed: AtomicBool::new(false),
                stop: CancellationToken::new(),
                halt: Halt::default(),
                idle: Notify::new(),
                runner: Mutex::new(Some(runner)),
            }),
        }
    }

    /// Whether the connection is closed.
    pub fn is_closed(&self) -> bool {
        self.shared.is_closed()
    }

    /// How many of the peer's requests this side holds right now: accepted and not yet
    /// answered, and waiting for a handler slot. Bounded by
    /// [`DispatcherConfig::max_concurrent_requests`] and
    /// [`DispatcherConfig::max_queued_requests`] whatever the peer sends.
    pub fn inbound_load(&self) -> InboundLoad {
        self.shared.load.snapshot()
    }
}

impl Outbound for JsonRpcDispatcher {
    fn send_request(
        &self,
        method: &str,
        params: Option<Payload>,
        options: CallOptions,
    ) -> BoxFuture<'static, Result<Payload, ErrorObject>> {
        send_related_request(&self.shared, None, method, params, options)
    }

    fn notify(&self, method: &str, params: Option<Payload>) -> BoxFuture<'static, ()> {
        notify_related(&self.shared, None, method, params)
    }
}

impl Dispatcher for JsonRpcDispatcher {
    fn run(&self, handler: Arc<dyn Handler>) -> BoxFuture<'_, Result<(), RunError>> {
        let runner = lock(&self.shared.runner).take();
        Box::pin(async move {
            let runner = runner.ok_or(RunError::AlreadyRunning)?;
            runner(self.shared.clone(), handler).await;
            Ok(())
        })
    }

    fn close(&self) {
        self.shared.close();
    }
}

impl fmt::Debug for JsonRpcDispatcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JsonRpcDispatcher")
            .field("config", &self.shared.config)
            .field("closed", &self.shared.is_closed())
            .finish_non_exhaustive()
    }
}

/// Sends a request related to the inbound request `related` (a handler's context's sends).
pub(crate) fn send_related_request(
    shared: &Arc<Shared>,
    related: Option<RequestId>,
    method: &str,
    params: Option<Payload>,
    options: CallOptions,
) -> BoxFuture<'static, Result<Payload, ErrorObject>> {
    Box::pin(pending::request(
        shared.clone(),
        method.to_owned(),
        params,
        options,
        related,
    ))
}

/// Sends a notification related to the inbound request `related`.
pub(crate) fn notify_related(
    shared: &Arc<Shared>,
    related: Option<RequestId>,
    method: &str,
    params: Option<Payload>,
) -> BoxFuture<'static, ()> {
    let shared = shared.clone();
    let method = method.to_owned();
    Box::pin(async move { shared.notify(method, params, related).await })
}
