//! Change subscriptions: `subscriptions/listen` (2026-07-28 "Subscriptions"), with a
//! handshake-era fallback on `resources/subscribe` and the session's notifications.
//!
//! [`Client::listen`] opens a subscription for a [`SubscriptionFilter`] (tools, prompts and
//! resources list changes, updates of given resource URIs) and returns a [`Subscription`]
//! once the server acknowledged it; [`Subscription::next`] yields typed [`ListenEvent`]s.
//!
//! - **2026-07-28**: one long-lived `subscriptions/listen` request, sent under its own id
//!   (the subscription id). The server's `notifications/subscriptions/acknowledged` (the
//!   filter it agreed to, [`Subscription::acknowledged`]) opens it; every notification that
//!   carries the id in `_meta["io.modelcontextprotocol/subscriptionId"]` is an event of this
//!   subscription and no other (the spec's correlation rule; several subscriptions may be
//!   open at once); tagged notifications other than the four change kinds (an extension's)
//!   arrive as [`ListenEvent::Other`]. Over Streamable HTTP the request's response is an SSE
//!   stream that stays open (it does not count against `HttpConfig::max_concurrent_requests`);
//!   the request has no timeout.
//! - **Ending**: dropping the [`Subscription`] (or [`Subscription::close`]) abandons the
//!   request: over Streamable HTTP its POST is aborted, which closes the response stream (the
//!   2026-07-28 cancellation signal); on stdio, message streams and in process the server is
//!   sent `notifications/cancelled`. The server ends it with a result (graceful closure,
//!   [`ListenEnd::ServerClosed`]) or, on stdio, with `notifications/cancelled` for the
//!   subscription id ([`ListenEnd::ServerCancelled`]); neither is reconnected: the server
//!   chose to stop. The last event is always [`ListenEvent::Ended`], then `next` gives `None`.
//! - **Reconnection**: a stream that drops without the server's answer (-32000: the
//!   connection or response stream broke; -32001; an HTTP 5xx or 429 without a JSON-RPC
//!   answer) is re-established with a new `subscriptions/listen` (2026-07-28 has no
//!   `Last-Event-ID` resumption), after
//!   [`ListenOptions::reconnect_delay`], doubling per failed attempt up to
//!   [`ListenOptions::max_reconnect_delay`], at most [`ListenOptions::max_reconnects`]
//!   attempts in a row (the count restarts once a new stream is acknowledged). A reconnected
//!   stream yields [`ListenEvent::Reconnected`]: changes in the gap may have been missed, so
//!   re-read what matters. When the client's connection itself ends (shutdown, a stdio child
//!   that exited) there is nothing to reconnect: [`ListenEnd::ConnectionClosed`]. Any other
//!   error ends the subscription with [`ListenEnd::Failed`]. Opening ([`Client::listen`])
//!   does not retry: its error is returned.
//! - **Response cache**: every list-changed and resource-updated notification evicts the
//!   matching cache entries as it arrives, before the event is queued (see
//!   [`cache`](crate::cache)); a reconnection also evicts everything the subscription
//!   covers, since changes in the gap were not seen. The client's
//!   [`NotificationHandler`](crate::NotificationHandler)s see the notifications too; the
//!   acknowledgment is consumed here.
//! - **Backpressure**: at most [`ListenOptions::buffer`] events wait unread; beyond that they
//!   are counted, not queued, and reported in order as one [`ListenEvent::Lagged`] (the
//!   cache is evicted regardless).
//! - **2025-11-25 fallback** (on by default, [`ListenOptions::handshake_fallback`]): the same
//!   API over the session. List changes come from the session's `list_changed`
//!   notifications, acknowledged as far as the server's capabilities declare `listChanged`;
//!   resource updates need the `resources.subscribe` capability: each URI is subscribed with
//!   `resources/subscribe` (shared between subscriptions of this client, reference-counted;
//!   an update of a URI under a subscribed one counts, as the schema allows sub-resources)
//!   and unsubscribed when the last subscription listening to it closes; a refused
//!   `resources/subscribe` fails the opening with the server's error. A capability the
//!   server lacks is left out of [`Subscription::acknowledged`], as a 2026-07-28 server
//!   leaves out what it does not support. Over Streamable HTTP the session's notifications
//!   arrive on the standalone GET stream, so the fallback needs it
//!   (`HttpConfig::standalone_stream`, on by default);
//!   a session that expired and was re-initialized lost its server-side subscriptions. The
//!   session has no stream to drop or reconnect: such a subscription ends only with the
//!   connection. With the fallback off, listening at 2025-11-25 fails with
//!   [`ClientError::NotAvailable`].
//!
//! A subscription keeps its client's connection open (it holds a [`Client`] clone) until it
//! is dropped.
//!
//! ```no_run
//! # async fn demo(client: ferromcp_client::Client) -> Result<(), ferromcp_client::ClientError> {
//! use ferromcp_client::listen::{ListenEvent, SubscriptionFilter};
//!
//! let filter = SubscriptionFilter::new()
//!     .with_tools_list_changed(true)
//!     .with_resource_subscriptions(vec!["file:///project/config.json".into()]);
//! let mut sub = client.listen(filter).await?;
//! while let Some(event) = sub.next().await {
//!     match event {
//!         ListenEvent::ToolListChanged => { /* re-read tools/list (the cache was evicted) */ }
//!         ListenEvent::ResourceUpdated(uri) => { /* re-read `uri` */ let _ = uri; }
//!         ListenEvent::Ended(why) => eprintln!("subscription ended: {why:?}"),
//!         _ => {}
//!     }
//! }
//! # Ok(()) }
//! ```

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use ferromcp_dispatch::CallOptions;
use ferromcp_types::Era;
use ferromcp_types::jsonrpc::{ErrorCode, ErrorObject, Payload, RequestId};
use ferromcp_types::mcp::{JsonObject, META_SUBSCRIPTION_ID, methods};
use serde_json::Value;
use tokio::sync::{Notify, oneshot};
use tokio::task::AbortHandle;

use crate::cache::ResponseCache;
use crate::client::Client;
use crate::error::ClientError;
use crate::options::RequestOptions;

pub use ferromcp_types::mcp::SubscriptionFilter;

/// The default bound on unread events of one subscription: 256.
pub const DEFAULT_LISTEN_BUFFER: usize = 256;
/// The default bound on reconnection attempts in a row: 5.
pub const DEFAULT_MAX_RECONNECTS: u32 = 5;
/// The default delay before the first reconnection attempt: 500 ms.
pub const DEFAULT_RECONNECT_DELAY: Duration = Duration::from_millis(500);
/// The default cap on the reconnection delay: 30 s.
pub const DEFAULT_MAX_RECONNECT_DELAY: Duration = Duration::from_secs(30);
/// The default wait for the server's acknowledgment: 30 s.
pub const DEFAULT_ACK_TIMEOUT: Duration = Duration::from_secs(30);

/// Settings of one subscription.
///
/// ```
/// use std::time::Duration;
/// use ferromcp_client::listen::ListenOptions;
///
/// let opts = ListenOptions::new()
///     .buffer(64)
///     .max_reconnects(10)
///     .reconnect_delay(Duration::from_millis(200));
/// assert_eq!(opts.buffer, 64);
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ListenOptions {
    /// How many events may wait unread (default [`DEFAULT_LISTEN_BUFFER`]); more are
    /// reported as [`ListenEvent::Lagged`].
    pub buffer: usize,
    /// How long opening (or re-opening) waits for the acknowledgment (default
    /// [`DEFAULT_ACK_TIMEOUT`]).
    pub ack_timeout: Duration,
    /// Reconnection attempts in a row before the subscription ends (default
    /// [`DEFAULT_MAX_RECONNECTS`]; 0 turns reconnection off).
    pub max_reconnects: u32,
    /// The delay before the first reconnection attempt, doubled per failed attempt (default
    /// [`DEFAULT_RECONNECT_DELAY`]).
    pub reconnect_delay: Duration,
    /// The cap on the reconnection delay (default [`DEFAULT_MAX_RECONNECT_DELAY`]).
    pub max_reconnect_delay: Duration,
    /// At 2025-11-25, emulate the subscription with `resources/subscribe` and the session's
    /// notifications (default `true`); when off, listening there fails.
    pub handshake_fallback: bool,
}

impl Default for ListenOptions {
    fn default() -> Self {
        Self {
            buffer: DEFAULT_LISTEN_BUFFER,
            ack_timeout: DEFAULT_ACK_TIMEOUT,
            max_reconnects: DEFAULT_MAX_RECONNECTS,
            reconnect_delay: DEFAULT_RECONNECT_DELAY,
            max_reconnect_delay: DEFAULT_MAX_RECONNECT_DELAY,
            handshake_fallback: true,
        }
    }
}

impl ListenOptions {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the bound on unread events (at least 1).
    #[must_use]
    pub fn buffer(mut self, n: usize) -> Self {
        self.buffer = n.max(1);
        self
    }

    /// Sets how long (re-)opening waits for the acknowledgment.
    #[must_use]
    pub fn ack_timeout(mut self, d: Duration) -> Self {
        self.ack_timeout = d;
        self
    }

    /// Sets the bound on reconnection attempts in a row (0: never reconnect).
    #[must_use]
    pub fn max_reconnects(mut self, n: u32) -> Self {
        self.max_reconnects = n;
        self
    }

    /// Sets the first reconnection delay.
    #[must_use]
    pub fn reconnect_delay(mut self, d: Duration) -> Self {
        self.reconnect_delay = d;
        self
    }

    /// Sets the cap on the reconnection delay.
    #[must_use]
    pub fn max_reconnect_delay(mut self, d: Duration) -> Self {
        self.max_reconnect_delay = d;
        self
    }

    /// Turns the 2025-11-25 fallback on or off.
    #[must_use]
    pub fn handshake_fallback(mut self, on: bool) -> Self {
        self.handshake_fallback = on;
        self
    }

    /// The delay before reconnection attempt `attempt` (1-based).
    fn backoff(&self, attempt: u32) -> Duration {
        let factor = 1u32 << attempt.saturating_sub(1).min(16);
        self.reconnect_delay
            .saturating_mul(factor)
            .min(self.max_reconnect_delay.max(self.reconnect_delay))
    }
}

/// What a subscription delivers.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ListenEvent {
    /// `notifications/tools/list_changed`.
    ToolListChanged,
    /// `notifications/prompts/list_changed`.
    PromptListChanged,
    /// `notifications/resources/list_changed`.
    ResourceListChanged,
    /// `notifications/resources/updated`, with the resource's URI.
    ResourceUpdated(String),
    /// Any other notification the server delivered on this stream (tagged with its
    /// subscription id), such as an extension's (the tasks extension's `notifications/tasks`).
    Other {
        /// The method.
        method: String,
        /// The params, as sent.
        params: Option<Value>,
    },
    /// This many events did not fit the buffer ([`ListenOptions::buffer`]) and were dropped
    /// here, in their place in the order; re-read what matters.
    Lagged(u64),
    /// The stream dropped and a new one was acknowledged, with this filter; changes in the
    /// gap may have been missed (the cache entries the subscription covers were evicted).
    Reconnected {
        /// The filter the server agreed to on the new stream.
        acknowledged: SubscriptionFilter,
    },
    /// The subscription ended; this is the last event.
    Ended(ListenEnd),
}

/// Why a subscription ended.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ListenEnd {
    /// The server answered the listen request: it ended the subscription gracefully.
    ServerClosed,
    /// The server sent `notifications/cancelled` for the subscription (stdio teardown).
    ServerCancelled,
    /// The client's connection ended (shutdown, closed transport, exited child).
    ConnectionClosed,
    /// The stream failed and could not be re-established (or the server refused the new
    /// stream): the last error.
    Failed(ErrorObject),
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The state one subscription shares between its handle, its driver and the router.
pub(crate) struct Listener {
    state: Mutex<ListenerState>,
    /// Wakes the reader.
    wake: Notify,
    /// Raised when the server cancels the subscription.
    server_cancel: Notify,
    cap: usize,
}

struct ListenerState {
    queue: VecDeque<ListenEvent>,
    ended: bool,
    /// The filter in force (what the server acknowledged).
    acknowledged: SubscriptionFilter,
    /// Hands the next acknowledgment to the driver.
    ack: Option<oneshot::Sender<SubscriptionFilter>>,
    /// Acknowledgments seen (the first opens the subscription; later ones are reconnects).
    acks: u32,
}

impl Listener {
    fn new(cap: usize, acknowledged: SubscriptionFilter) -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(ListenerState {
                queue: VecDeque::new(),
                ended: false,
                acknowledged,
                ack: None,
                acks: 0,
            }),
            wake: Notify::new(),
            server_cancel: Notify::new(),
            cap: cap.max(1),
        })
    }

    /// Queues an event, or counts it as lagged when the buffer is full.
    fn push(&self, event: ListenEvent) {
        {
            let mut s = lock(&self.state);
            if s.ended {
                return;
            }
            if s.queue.len() < self.cap {
                s.queue.push_back(event);
            } else if let Some(ListenEvent::Lagged(n)) = s.queue.back_mut() {
                *n += 1;
            } else {
                s.queue.push_back(ListenEvent::Lagged(1));
            }
        }
        self.wake.notify_one();
    }

    /// Queues the end (once; it always fits).
    fn end(&self, why: ListenEnd) {
        {
            let mut s = lock(&self.state);
            if s.ended {
                return;
            }
            s.ended = true;
            s.queue.push_back(ListenEvent::Ended(why));
        }
        self.wake.notify_one();
    }

    fn is_ended(&self) -> bool {
        lock(&self.state).ended
    }

    /// The server acknowledged a stream of this subscription: the first time the opener is
    /// told; later (a reconnection), a [`ListenEvent::Reconnected`] is queued in order and
    /// the cache entries the filter covers are evicted.
    fn acknowledge(&self, filter: SubscriptionFilter, cache: &ResponseCache) {
        let reconnected = {
            let mut s = lock(&self.state);
            s.acks += 1;
            s.acknowledged = filter.clone();
            if let Some(tx) = s.ack.take() {
                let _ = tx.send(filter.clone());
            }
            s.acks > 1
        };
        if reconnected {
            evict_covered(cache, &filter);
            self.push(ListenEvent::Reconnected {
                acknowledged: filter,
            });
        }
    }

    fn expect_ack(&self) -> oneshot::Receiver<SubscriptionFilter> {
        let (tx, rx) = oneshot::channel();
        lock(&self.state).ack = Some(tx);
        rx
    }
}

/// Evicts every cache entry a filter covers.
fn evict_covered(cache: &ResponseCache, filter: &SubscriptionFilter) {
    if filter.tools_list_changed == Some(true) {
        cache.evict_list(methods::TOOLS_LIST);
    }
    if filter.prompts_list_changed == Some(true) {
        cache.evict_list(methods::PROMPTS_LIST);
    }
    if filter.resources_list_changed == Some(true) {
        cache.evict_list(methods::RESOURCES_LIST);
        cache.evict_list(methods::RESOURCES_TEMPLATES_LIST);
    }
    for uri in filter.resource_subscriptions.iter().flatten() {
        cache.evict(methods::RESOURCES_READ, uri);
    }
}

/// The event a change notification stands for.
fn event_of(method: &str, params: Option<&Value>) -> Option<ListenEvent> {
    Some(match method {
        methods::NOTIFICATION_TOOLS_LIST_CHANGED => ListenEvent::ToolListChanged,
        methods::NOTIFICATION_PROMPTS_LIST_CHANGED => ListenEvent::PromptListChanged,
        methods::NOTIFICATION_RESOURCES_LIST_CHANGED => ListenEvent::ResourceListChanged,
        methods::NOTIFICATION_RESOURCES_UPDATED => {
            let uri = params?.get("uri")?.as_str()?;
            ListenEvent::ResourceUpdated(uri.to_owned())
        }
        _ => return None,
    })
}

/// Whether a filter covers an event (handshake-era routing). An update may name a
/// sub-resource of the subscribed one (schema: `ResourceUpdatedNotificationParams.uri`), so a
/// URI under a subscribed one counts.
fn covers(filter: &SubscriptionFilter, event: &ListenEvent) -> bool {
    match event {
        ListenEvent::ToolListChanged => filter.tools_list_changed == Some(true),
        ListenEvent::PromptListChanged => filter.prompts_list_changed == Some(true),
        ListenEvent::ResourceListChanged => filter.resources_list_changed == Some(true),
        ListenEvent::ResourceUpdated(uri) => filter
            .resource_subscriptions
            .iter()
            .flatten()
            .any(|u| uri.starts_with(u.as_str())),
        _ => false,
    }
}

/// The open subscriptions of one client, shared with its dispatcher handler.
#[derive(Default)]
pub(crate) struct Registry {
    state: Mutex<RegistryState>,
    next_id: AtomicU64,
}

#[derive(Default)]
struct RegistryState {
    /// 2026-07-28 streams, by subscription id (the listen request's id).
    modern: HashMap<RequestId, Arc<Listener>>,
    /// 2025-11-25 emulations, with their acknowledged filter.
    handshake: Vec<(u64, Arc<Listener>)>,
    /// `resources/subscribe` references held by handshake-era subscriptions.
    uris: HashMap<String, usize>,
    /// The connection ended: no new subscriptions, no reconnections.
    ended: bool,
}

impl Registry {
    fn mint(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed) + 1
    }

    fn is_ended(&self) -> bool {
        lock(&self.state).ended
    }

    /// The client's connection ended: every subscription ends.
    pub(crate) fn connection_ended(&self) {
        let listeners: Vec<Arc<Listener>> = {
            let mut guard = lock(&self.state);
            let s = &mut *guard;
            s.ended = true;
            let modern = s.modern.drain().map(|(_, l)| l);
            let handshake = s.handshake.drain(..).map(|(_, l)| l);
            modern.chain(handshake).collect()
        };
        for l in listeners {
            l.end(ListenEnd::ConnectionClosed);
        }
    }

    /// Removes a listener everywhere; returns the URIs no handshake-era subscription needs
    /// any more.
    fn remove(&self, listener: &Arc<Listener>) -> Vec<String> {
        let mut s = lock(&self.state);
        s.modern.retain(|_, l| !Arc::ptr_eq(l, listener));
        let mut released = Vec::new();
        let mut gone = Vec::new();
        s.handshake.retain(|(_, l)| {
            let keep = !Arc::ptr_eq(l, listener);
            if !keep {
                gone.push(l.clone());
            }
            keep
        });
        for l in gone {
            let filter = lock(&l.state).acknowledged.clone();
            for uri in filter.resource_subscriptions.into_iter().flatten() {
                if let Some(n) = s.uris.get_mut(&uri) {
                    *n = n.saturating_sub(1);
                    if *n == 0 {
                        s.uris.remove(&uri);
                        released.push(uri);
                    }
                }
            }
        }
        released
    }

    /// Offers a notification to the subscriptions (on the dispatcher's read loop, in
    /// arrival order). Consumes acknowledgments of known subscriptions.
    pub(crate) fn route(
        &self,
        method: &str,
        params: Option<&Payload>,
        cache: &ResponseCache,
    ) -> ControlFlow<()> {
        // Progress is the dispatcher's; everything else may belong to a stream.
        if method == methods::NOTIFICATION_PROGRESS {
            return ControlFlow::Continue(());
        }
        {
            let s = lock(&self.state);
            if s.modern.is_empty() && s.handshake.is_empty() {
                return ControlFlow::Continue(());
            }
        }
        let params: Option<Value> = params.and_then(|p| p.parse().ok());
        let params = params.as_ref();
        if method == methods::NOTIFICATION_CANCELLED {
            // The server tears a subscription down (2026-07-28 "Cancellation", stdio).
            let target = params
                .and_then(|p| p.get("requestId"))
                .and_then(|v| serde_json::from_value::<RequestId>(v.clone()).ok());
            let listener = target.and_then(|id| lock(&self.state).modern.remove(&id));
            if let Some(l) = listener {
                l.server_cancel.notify_one();
            }
            return ControlFlow::Continue(());
        }
        let sub_id = params
            .and_then(|p| p.get("_meta"))
            .and_then(|m| m.get(META_SUBSCRIPTION_ID))
            .and_then(|v| serde_json::from_value::<RequestId>(v.clone()).ok());
        if let Some(id) = sub_id {
            let Some(listener) = lock(&self.state).modern.get(&id).cloned() else {
                return ControlFlow::Continue(());
            };
            if method == methods::NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED {
                let filter = params
                    .and_then(|p| p.get("notifications"))
                    .and_then(|f| serde_json::from_value::<SubscriptionFilter>(f.clone()).ok())
                    .unwrap_or_default();
                listener.acknowledge(filter, cache);
                return ControlFlow::Break(());
            }
            let event = event_of(method, params).unwrap_or_else(|| ListenEvent::Other {
                method: method.to_owned(),
                params: params.cloned(),
            });
            listener.push(event);
            return ControlFlow::Continue(());
        }
        // No subscription id: the handshake era's session notifications.
        let Some(event) = event_of(method, params) else {
            return ControlFlow::Continue(());
        };
        let targets: Vec<Arc<Listener>> = lock(&self.state)
            .handshake
            .iter()
            .map(|(_, l)| l.clone())
            .collect();
        for l in targets {
            let wanted = covers(&lock(&l.state).acknowledged, &event);
            if wanted {
                l.push(event.clone());
            }
        }
        ControlFlow::Continue(())
    }
}

/// Aborts a task when dropped.
struct AbortOnDrop(AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// An open change subscription (see the [module docs](self)). Dropping it ends it.
pub struct Subscription {
    client: Client,
    listener: Arc<Listener>,
    requested: SubscriptionFilter,
    era: Era,
    /// The 2026-07-28 driver task.
    driver: Option<AbortOnDrop>,
    /// Set once the handle released its registrations.
    released: bool,
}

impl fmt::Debug for Subscription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Subscription")
            .field("era", &self.era)
            .field("requested", &self.requested)
            .field("acknowledged", &self.acknowledged())
            .finish_non_exhaustive()
    }
}

impl Subscription {
    /// The next event; `None` after [`ListenEvent::Ended`] was returned.
    pub async fn next(&mut self) -> Option<ListenEvent> {
        loop {
            {
                let mut s = lock(&self.listener.state);
                if let Some(event) = s.queue.pop_front() {
                    return Some(event);
                }
                if s.ended {
                    return None;
                }
            }
            self.listener.wake.notified().await;
        }
    }

    /// The next event if one is waiting.
    pub fn try_next(&mut self) -> Option<ListenEvent> {
        lock(&self.listener.state).queue.pop_front()
    }

    /// The filter the server agreed to (the latest acknowledgment); compare it with
    /// [`Subscription::requested`] to see what the server does not support.
    pub fn acknowledged(&self) -> SubscriptionFilter {
        lock(&self.listener.state).acknowledged.clone()
    }

    /// The filter asked for.
    pub fn requested(&self) -> &SubscriptionFilter {
        &self.requested
    }

    /// The era the subscription runs in: `Modern` is `subscriptions/listen`, `Handshake` the
    /// 2025-11-25 fallback.
    pub fn era(&self) -> Era {
        self.era
    }

    /// Whether the subscription ended (its [`ListenEvent::Ended`] may still be unread).
    pub fn is_ended(&self) -> bool {
        self.listener.is_ended()
    }

    /// Ends the subscription and waits for its cleanup: at 2025-11-25, the
    /// `resources/unsubscribe` of URIs no other subscription listens to. (Dropping the
    /// subscription does the same without waiting.)
    pub async fn close(mut self) {
        let released = self.release();
        for uri in released {
            if let Err(e) = self.client.unsubscribe(&uri).await {
                tracing::debug!(uri, error = %e, "resources/unsubscribe failed");
            }
        }
    }

    /// Stops the driver and unregisters; returns the URIs to unsubscribe.
    fn release(&mut self) -> Vec<String> {
        if self.released {
            return Vec::new();
        }
        self.released = true;
        self.driver = None;
        let released = self.client.inner.handlers.listeners.remove(&self.listener);
        self.listener.end(ListenEnd::ConnectionClosed);
        released
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let released = self.release();
        if released.is_empty() {
            return;
        }
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let client = self.client.clone();
        rt.spawn(async move {
            for uri in released {
                if let Err(e) = client.unsubscribe(&uri).await {
                    tracing::debug!(uri, error = %e, "resources/unsubscribe failed");
                }
            }
        });
    }
}

/// How one listen stream ended.
enum Step {
    Answer(Result<Value, ClientError>),
    ServerCancelled,
    AckTimeout,
}

/// Whether a failure of an acknowledged stream is worth a new stream.
fn retryable(e: &ClientError) -> bool {
    let Some(e) = e.as_protocol() else {
        return false;
    };
    // An HTTP answer decides by its status (some servers send -32000 with a 400, which is
    // no dropped stream); otherwise only a broken connection or stream, or a timeout.
    let status = e
        .data
        .as_ref()
        .and_then(|d| d.get("httpStatus"))
        .and_then(Value::as_u64);
    match status {
        Some(status) => status == 429 || (500..=599).contains(&status),
        None => e.code == ErrorCode::CONNECTION_CLOSED || e.code == ErrorCode::REQUEST_TIMEOUT,
    }
}

fn failure(e: ClientError) -> ErrorObject {
    match e {
        ClientError::Protocol(e) => e,
        other => ErrorObject::internal_error(other.to_string()),
    }
}

/// Runs a 2026-07-28 subscription: one listen request at a time, reconnected per the policy.
async fn drive(
    client: Client,
    listener: Arc<Listener>,
    filter: SubscriptionFilter,
    opts: ListenOptions,
    opened: oneshot::Sender<Result<SubscriptionFilter, ClientError>>,
) {
    let registry = client.inner.handlers.listeners.clone();
    let mut opened = Some(opened);
    let mut failures = 0u32;
    loop {
        if registry.is_ended() {
            listener.end(ListenEnd::ConnectionClosed);
            if let Some(tx) = opened.take() {
                let _ = tx.send(Err(ErrorObject::connection_closed().into()));
            }
            return;
        }
        let id = RequestId::String(format!("ferromcp-listen-{}", registry.mint()).into());
        let ack = listener.expect_ack();
        lock(&registry.state)
            .modern
            .insert(id.clone(), listener.clone());
        let mut params = JsonObject::new();
        if let Ok(f) = serde_json::to_value(&filter) {
            params.insert("notifications".into(), f);
        }
        let call = CallOptions::new().request_id(id.clone());
        let inner = client.inner.clone();
        let mut request = Box::pin(async move {
            inner
                .send_once(
                    methods::SUBSCRIPTIONS_LISTEN,
                    params,
                    &RequestOptions::new(),
                    call,
                    true,
                )
                .await
        });
        let deadline = tokio::time::sleep(opts.ack_timeout);
        tokio::pin!(deadline);
        let mut ack = Some(ack);
        let step = loop {
            // Biased, the acknowledgment first: it precedes any answer on the wire, and both
            // may be ready at once (a server that acknowledges and ends in one breath).
            tokio::select! {
                biased;
                a = async {
                    match ack.as_mut() {
                        Some(rx) => rx.await,
                        None => std::future::pending().await,
                    }
                }, if ack.is_some() => {
                    ack = None;
                    if let Ok(granted) = a {
                        failures = 0;
                        if let Some(tx) = opened.take() {
                            let _ = tx.send(Ok(granted));
                        }
                    }
                }
                r = &mut request => break Step::Answer(r),
                () = listener.server_cancel.notified() => break Step::ServerCancelled,
                () = &mut deadline, if ack.is_some() => break Step::AckTimeout,
            }
        };
        // Abandoning the request (if still pending) cancels it on the wire.
        drop(request);
        lock(&registry.state).modern.remove(&id);
        let error = match step {
            Step::Answer(Ok(_)) => {
                if let Some(tx) = opened.take() {
                    let e = ErrorObject::internal_error(
                        "the server answered subscriptions/listen without acknowledging it",
                    );
                    let _ = tx.send(Err(e.into()));
                }
                listener.end(ListenEnd::ServerClosed);
                return;
            }
            Step::ServerCancelled => {
                if let Some(tx) = opened.take() {
                    let e = ErrorObject::request_cancelled();
                    let _ = tx.send(Err(e.into()));
                }
                listener.end(ListenEnd::ServerCancelled);
                return;
            }
            Step::AckTimeout => ClientError::Protocol(ErrorObject::new(
                ErrorCode::REQUEST_TIMEOUT,
                "the server did not acknowledge subscriptions/listen in time",
            )),
            Step::Answer(Err(e)) => e,
        };
        if let Some(tx) = opened.take() {
            // Opening does not retry: the caller gets the error.
            let _ = tx.send(Err(error));
            listener.end(ListenEnd::ConnectionClosed);
            return;
        }
        if registry.is_ended() {
            listener.end(ListenEnd::ConnectionClosed);
            return;
        }
        if !retryable(&error) || failures >= opts.max_reconnects {
            tracing::debug!(error = %error, failures, "the listen stream is not re-established");
            listener.end(ListenEnd::Failed(failure(error)));
            return;
        }
        failures += 1;
        let delay = opts.backoff(failures);
        tracing::debug!(
            error = %error,
            attempt = failures,
            ?delay,
            "the listen stream dropped: reconnecting"
        );
        tokio::time::sleep(delay).await;
    }
}

impl Client {
    /// Opens a change subscription with default [`ListenOptions`]: `subscriptions/listen` at
    /// 2026-07-28, the session fallback at 2025-11-25 (see the [`listen`](crate::listen)
    /// module). Returns once the server acknowledged it.
    pub async fn listen(&self, filter: SubscriptionFilter) -> Result<Subscription, ClientError> {
        self.listen_with(filter, ListenOptions::default()).await
    }

    /// Opens a change subscription with options.
    pub async fn listen_with(
        &self,
        filter: SubscriptionFilter,
        opts: ListenOptions,
    ) -> Result<Subscription, ClientError> {
        let registry = self.inner.handlers.listeners.clone();
        if registry.is_ended() {
            return Err(ErrorObject::connection_closed().into());
        }
        match self.inner.era() {
            Era::Modern => self.listen_modern(filter, opts).await,
            _ if opts.handshake_fallback => self.listen_handshake(filter, opts).await,
            _ => Err(ClientError::not_available(
                methods::SUBSCRIPTIONS_LISTEN,
                "the connection runs MCP 2025-11-25, which has no such method \
                 (enable ListenOptions::handshake_fallback for resources/subscribe)",
            )),
        }
    }

    async fn listen_modern(
        &self,
        filter: SubscriptionFilter,
        opts: ListenOptions,
    ) -> Result<Subscription, ClientError> {
        let listener = Listener::new(opts.buffer, SubscriptionFilter::new());
        let (tx, rx) = oneshot::channel();
        let task = tokio::spawn(drive(
            self.clone(),
            listener.clone(),
            filter.clone(),
            opts,
            tx,
        ));
        let driver = AbortOnDrop(task.abort_handle());
        let mut sub = Subscription {
            client: self.clone(),
            listener,
            requested: filter,
            era: Era::Modern,
            driver: Some(driver),
            released: false,
        };
        match rx.await {
            Ok(Ok(_granted)) => Ok(sub),
            Ok(Err(e)) => {
                sub.release();
                Err(e)
            }
            Err(_) => {
                sub.release();
                Err(ErrorObject::connection_closed().into())
            }
        }
    }

    async fn listen_handshake(
        &self,
        filter: SubscriptionFilter,
        opts: ListenOptions,
    ) -> Result<Subscription, ClientError> {
        let caps = &self.session().capabilities;
        let listed = |asked: Option<bool>, flag: Option<bool>| {
            (asked == Some(true) && flag == Some(true)).then_some(true)
        };
        let mut granted = SubscriptionFilter::new();
        granted.tools_list_changed = listed(
            filter.tools_list_changed,
            caps.tools.as_ref().and_then(|c| c.list_changed),
        );
        granted.prompts_list_changed = listed(
            filter.prompts_list_changed,
            caps.prompts.as_ref().and_then(|c| c.list_changed),
        );
        let resources = caps.resources.as_ref();
        granted.resources_list_changed = listed(
            filter.resources_list_changed,
            resources.and_then(|c| c.list_changed),
        );
        let can_subscribe = resources.and_then(|c| c.subscribe) == Some(true);
        let mut uris: Vec<String> = Vec::new();
        if can_subscribe && filter.resource_subscriptions.is_some() {
            for uri in filter.resource_subscriptions.iter().flatten() {
                if !uris.contains(uri) {
                    uris.push(uri.clone());
                }
            }
            granted.resource_subscriptions = Some(uris.clone());
        }
        // Register first, so that no update between a subscribe and the registration is
        // lost; then take the URI references, subscribing the new ones.
        let listener = Listener::new(opts.buffer, granted);
        let registry = self.inner.handlers.listeners.clone();
        let mut fresh = Vec::new();
        {
            let mut s = lock(&registry.state);
            s.handshake.push((registry.mint(), listener.clone()));
            for uri in &uris {
                let n = s.uris.entry(uri.clone()).or_insert(0);
                *n += 1;
                if *n == 1 {
                    fresh.push(uri.clone());
                }
            }
        }
        let sub = Subscription {
            client: self.clone(),
            listener,
            requested: filter,
            era: Era::Handshake,
            driver: None,
            released: false,
        };
        for uri in fresh {
            if let Err(e) = self.subscribe(&uri).await {
                // Dropping `sub` releases every reference and unsubscribes the rest.
                drop(sub);
                return Err(e);
            }
        }
        Ok(sub)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reconnection delay doubles per attempt from `reconnect_delay`, capped.
    #[test]
    fn backoff_doubles_and_is_capped() {
        let opts = ListenOptions::new()
            .reconnect_delay(Duration::from_millis(100))
            .max_reconnect_delay(Duration::from_millis(350));
        let delays: Vec<u128> = (1..=5).map(|a| opts.backoff(a).as_millis()).collect();
        assert_eq!(delays, [100, 200, 350, 350, 350]);
        let huge = ListenOptions::new().backoff(u32::MAX);
        assert_eq!(huge, DEFAULT_MAX_RECONNECT_DELAY);
    }

    /// Overflow keeps the order: queued events, then one `Lagged` count, then what came after
    /// the reader made room; the end always fits.
    #[test]
    fn lagged_marker_keeps_its_place() {
        let l = Listener::new(1, SubscriptionFilter::new());
        l.push(ListenEvent::ToolListChanged);
        l.push(ListenEvent::PromptListChanged);
        l.push(ListenEvent::PromptListChanged);
        l.end(ListenEnd::ServerClosed);
        l.push(ListenEvent::ResourceListChanged);
        let q: Vec<ListenEvent> = lock(&l.state).queue.drain(..).collect();
        assert_eq!(
            q,
            [
                ListenEvent::ToolListChanged,
                ListenEvent::Lagged(2),
                ListenEvent::Ended(ListenEnd::ServerClosed),
            ]
        );
    }

    /// Handshake-era routing: the asked-for kinds; updates of a subscribed URI or one under it.
    #[test]
    fn handshake_routing_covers() {
        let f = SubscriptionFilter::new()
            .with_prompts_list_changed(true)
            .with_resource_subscriptions(vec!["file:///dir/".into()]);
        let updated = |u: &str| ListenEvent::ResourceUpdated(u.into());
        assert!(covers(&f, &ListenEvent::PromptListChanged));
        assert!(!covers(&f, &ListenEvent::ToolListChanged));
        assert!(covers(&f, &updated("file:///dir/")));
        assert!(covers(&f, &updated("file:///dir/a.txt")));
        assert!(!covers(&f, &updated("file:///other")));
    }

    /// Only connection-level failures (and transient HTTP statuses) are reconnected.
    #[test]
    fn what_is_retried() {
        let e = |o: ErrorObject| ClientError::Protocol(o);
        assert!(retryable(&e(ErrorObject::connection_closed())));
        assert!(retryable(&e(ErrorObject::request_timeout())));
        let http = |status: u16| {
            e(ErrorObject::internal_error("HTTP")
                .with_data(serde_json::json!({"httpStatus": status})))
        };
        assert!(retryable(&http(503)));
        assert!(retryable(&http(429)));
        assert!(!retryable(&http(403)));
        let closed_400 =
            ErrorObject::connection_closed().with_data(serde_json::json!({"httpStatus": 400}));
        assert!(
            !retryable(&e(closed_400)),
            "-32000 in an HTTP 400 is the server's answer"
        );
        assert!(!retryable(&e(ErrorObject::method_not_found(
            "subscriptions/listen"
        ))));
        assert!(!retryable(&ClientError::not_available("x", "y")));
    }
}
