//! Per-connection state.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use ferromcp_dispatch::{BoxFuture, CallOptions, Outbound, SendRefused};
use ferromcp_types::ProtocolVersion;
use ferromcp_types::jsonrpc::{ErrorObject, Payload};
use ferromcp_types::mcp::methods;
use ferromcp_types::mcp::{ClientCapabilities, Implementation, LoggingLevel};

/// How long the cleanup hooks of a closing connection may run, all together.
pub const CLEANUP_TIMEOUT: Duration = Duration::from_secs(5);

type CleanupHook = Box<dyn FnOnce() -> BoxFuture<'static, ()> + Send>;

/// The state of one connection: the negotiated version, what the client said about itself,
/// typed state that handlers share, cleanup hooks, and the standalone outbound channel.
///
/// A connection is built either by the handshake ([`Connection::for_handshake`], not ready
/// until `initialize` is answered) or born ready from a modern-era request envelope
/// ([`Connection::from_envelope`]). It is cheap to clone: clones share the state.
#[derive(Clone)]
pub struct Connection {
    inner: Arc<Inner>,
}

struct Inner {
    outbound: Arc<dyn Outbound>,
    can_send_requests: bool,
    session_id: Option<String>,
    /// A number unique in this process for a long-lived (handshake-built) connection: what
    /// state is bound to where there is no principal and no session id (stdio, in-memory).
    /// `None` for a connection born from one request's envelope.
    lasting: Option<u64>,
    negotiated: Mutex<Negotiated>,
    initialized: AtomicBool,
    /// An `initialize` is staged (see `stage_initialize`): the one request in a connection's
    /// life that needs the lock after the stack, so every other one skips it.
    staged: AtomicBool,
    state: Mutex<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>,
    cleanup: Mutex<Vec<CleanupHook>>,
}

struct Negotiated {
    version: ProtocolVersion,
    client_info: Option<Implementation>,
    client_capabilities: Option<ClientCapabilities>,
    /// Set by `initialize`; `initialize` on a connection that has it is rejected.
    handshake_done: bool,
    log_level: Option<LoggingLevel>,
    /// The params of an `initialize` the kernel answered, until the middleware stack around
    /// it has succeeded and the handshake is committed.
    staged_initialize: Option<serde_json::Value>,
}

/// The next [`Connection::lasting_key`].
static NEXT_LASTING: AtomicU64 = AtomicU64::new(1);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Connection {
    /// A handshake-era connection, not ready until `initialize` is answered. Until then its
    /// version is `seed` (the latest handshake version, or an HTTP header's hint).
    pub fn for_handshake(
        outbound: Arc<dyn Outbound>,
        can_send_requests: bool,
        seed: ProtocolVersion,
    ) -> Self {
        let mut c = Self::build(outbound, can_send_requests, seed, None, None, false);
        if let Some(inner) = Arc::get_mut(&mut c.inner) {
            inner.lasting = Some(NEXT_LASTING.fetch_add(1, Ordering::Relaxed));
        }
        c
    }

    /// A modern-era connection, born ready from one request's envelope. It can never send
    /// server→client requests.
    pub fn from_envelope(
        outbound: Arc<dyn Outbound>,
        version: ProtocolVersion,
        client_info: Option<Implementation>,
        client_capabilities: Option<ClientCapabilities>,
    ) -> Self {
        Self::build(
            outbound,
            false,
            version,
            client_info,
            client_capabilities,
            true,
        )
    }

    fn build(
        outbound: Arc<dyn Outbound>,
        can_send_requests: bool,
        version: ProtocolVersion,
        client_info: Option<Implementation>,
        client_capabilities: Option<ClientCapabilities>,
        ready: bool,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                outbound,
                can_send_requests,
                session_id: None,
                lasting: None,
                negotiated: Mutex::new(Negotiated {
                    version,
                    client_info,
                    client_capabilities,
                    handshake_done: false,
                    log_level: None,
                    staged_initialize: None,
                }),
                initialized: AtomicBool::new(ready),
                staged: AtomicBool::new(false),
                state: Mutex::new(HashMap::new()),
                cleanup: Mutex::new(Vec::new()),
            }),
        }
    }

    /// Sets the transport session id (HTTP `Mcp-Session-Id`); only while the connection is
    /// being built.
    #[must_use]
    pub fn with_session_id(mut self, id: impl Into<String>) -> Self {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.session_id = Some(id.into());
        }
        self
    }

    /// The transport session id, if the transport has sessions.
    pub fn session_id(&self) -> Option<&str> {
        self.inner.session_id.as_deref()
    }

    /// For a long-lived connection (built by [`for_handshake`](Self::for_handshake)), a
    /// number no other connection of this process has; `None` for one born from a request's
    /// envelope (it lives for that request only).
    pub(crate) fn lasting_key(&self) -> Option<u64> {
        self.inner.lasting
    }

    /// The protocol version in force: negotiated, from the envelope, or the seed.
    pub fn protocol_version(&self) -> ProtocolVersion {
        lock(&self.inner.negotiated).version
    }

    /// Reads the protocol version later without keeping the connection alive (for the session
    /// duration metric, recorded by a close hook the connection itself holds).
    #[cfg(feature = "otel")]
    pub(crate) fn version_probe(&self) -> impl Fn() -> Option<ProtocolVersion> + Send + 'static {
        let weak = Arc::downgrade(&self.inner);
        move || weak.upgrade().map(|inner| lock(&inner.negotiated).version)
    }

    /// What the client said about itself, if it did.
    pub fn client_info(&self) -> Option<Implementation> {
        lock(&self.inner.negotiated).client_info.clone()
    }

    /// The client's capabilities, if known.
    pub fn client_capabilities(&self) -> Option<ClientCapabilities> {
        lock(&self.inner.negotiated).client_capabilities.clone()
    }

    /// Whether the connection is ready: `initialize` answered or `notifications/initialized`
    /// received, or born ready from an envelope.
    pub fn is_initialized(&self) -> bool {
        self.inner.initialized.load(Ordering::Acquire)
    }

    /// Whether `initialize` has been answered on this connection.
    pub fn handshake_done(&self) -> bool {
        lock(&self.inner.negotiated).handshake_done
    }

    /// Records the outcome of `initialize` and marks the connection ready.
    pub(crate) fn commit_handshake(
        &self,
        version: ProtocolVersion,
        client_info: Implementation,
        client_capabilities: ClientCapabilities,
    ) {
        let mut n = lock(&self.inner.negotiated);
        n.version = version;
        n.client_info = Some(client_info);
        n.client_capabilities = Some(client_capabilities);
        n.handshake_done = true;
        drop(n);
        self.inner.initialized.store(true, Ordering::Release);
    }

    /// Keeps the params of the `initialize` being answered until the stack around it is done.
    pub(crate) fn stage_initialize(&self, params: serde_json::Value) {
        lock(&self.inner.negotiated).staged_initialize = Some(params);
        self.inner.staged.store(true, Ordering::Release);
    }

    /// The staged `initialize` params, if the kernel answered one since the last call.
    pub(crate) fn take_staged_initialize(&self) -> Option<serde_json::Value> {
        // A plain load first: no read-modify-write on the common path.
        if !self.inner.staged.load(Ordering::Acquire)
            || !self.inner.staged.swap(false, Ordering::AcqRel)
        {
            return None;
        }
        lock(&self.inner.negotiated).staged_initialize.take()
    }

    pub(crate) fn mark_initialized(&self) {
        self.inner.initialized.store(true, Ordering::Release);
    }

    /// The minimum level of log notifications the client asked for with `logging/setLevel`
    /// (handshake era); `None` sends every level.
    pub fn log_level(&self) -> Option<LoggingLevel> {
        lock(&self.inner.negotiated).log_level
    }

    /// Sets the minimum log level (what a `logging/setLevel` handler does).
    pub fn set_log_level(&self, level: LoggingLevel) {
        lock(&self.inner.negotiated).log_level = Some(level);
    }

    /// Whether server→client requests can reach the client on this connection.
    pub fn can_send_requests(&self) -> bool {
        self.inner.can_send_requests
    }

    /// Stores a value of type `T` in the connection's state, replacing any earlier one.
    pub fn insert_state<T: Send + Sync + 'static>(&self, value: T) {
        lock(&self.inner.state).insert(TypeId::of::<T>(), Arc::new(value));
    }

    /// The connection's value of type `T`, if one was stored.
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        let v = lock(&self.inner.state).get(&TypeId::of::<T>())?.clone();
        v.downcast().ok()
    }

    /// The connection's value of type `T`, stored first by `init` when there is none.
    pub fn state_or_insert_with<T: Send + Sync + 'static>(
        &self,
        init: impl FnOnce() -> T,
    ) -> Arc<T> {
        let mut map = lock(&self.inner.state);
        if let Some(existing) = map.get(&TypeId::of::<T>()).cloned() {
            // The map is keyed by type id, so the value always has type T.
            if let Ok(v) = existing.downcast::<T>() {
                return v;
            }
        }
        let fresh = Arc::new(init());
        map.insert(TypeId::of::<T>(), fresh.clone());
        fresh
    }

    /// Registers a hook that runs when the connection closes. Hooks run in reverse order of
    /// registration, all together bounded by [`CLEANUP_TIMEOUT`].
    pub fn on_close<F, Fut>(&self, hook: F)
    where
        F: FnOnce() -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        lock(&self.inner.cleanup).push(Box::new(move || Box::pin(hook())));
    }

    /// Runs the cleanup hooks (once; later calls find none), bounded by [`CLEANUP_TIMEOUT`].
    pub async fn close(&self) {
        let hooks = std::mem::take(&mut *lock(&self.inner.cleanup));
        if hooks.is_empty() {
            return;
        }
        let run = async move {
            for hook in hooks.into_iter().rev() {
                hook().await;
            }
        };
        if tokio::time::timeout(CLEANUP_TIMEOUT, run).await.is_err() {
            tracing::warn!("connection cleanup did not finish within {CLEANUP_TIMEOUT:?}");
        }
    }

    /// The standalone outbound channel (not tied to any request).
    pub fn outbound(&self) -> &Arc<dyn Outbound> {
        &self.inner.outbound
    }

    /// Sends a notification on the standalone channel; never fails.
    pub async fn notify(&self, method: &str, params: Option<Payload>) {
        self.inner.outbound.notify(method, params).await;
    }

    /// Sends a request to the client on the standalone channel; fails with -32600 where
    /// there is no back channel.
    pub async fn send_request(
        &self,
        method: &str,
        params: Option<Payload>,
        options: CallOptions,
    ) -> Result<Payload, ErrorObject> {
        if !self.inner.can_send_requests {
            return Err(no_back_channel());
        }
        self.inner
            .outbound
            .send_request(method, params, options)
            .await
    }

    /// Records that the client subscribed to updates of the resource at `uri`
    /// (`resources/subscribe`, handshake era).
    ///
    /// Bounded by `limits`: a URI longer than [`SubscriptionLimits::max_uri_len`], or a new
    /// subscription past [`SubscriptionLimits::max_per_connection`], is refused with -32602
    /// and nothing is recorded (subscribing again to a URI already held always succeeds).
    pub fn subscribe_resource(
        &self,
        uri: &str,
        limits: SubscriptionLimits,
    ) -> Result<(), ErrorObject> {
        limits.check_uri(uri)?;
        let subs = self.state_or_insert_with(ResourceSubscriptions::default);
        let mut held = lock(&subs.0);
        if !held.contains(uri) && held.len() >= limits.max_per_connection {
            return Err(ErrorObject::invalid_params(format!(
                "this connection holds {} resource subscriptions, the most it may; \
                 unsubscribe from one first",
                held.len()
            )));
        }
        held.insert(uri.to_owned());
        Ok(())
    }

    /// Forgets a subscription (`resources/unsubscribe`); whether there was one.
    pub fn unsubscribe_resource(&self, uri: &str) -> bool {
        self.state::<ResourceSubscriptions>()
            .is_some_and(|subs| lock(&subs.0).remove(uri))
    }

    /// Whether the client subscribed to updates of the resource at `uri`.
    pub fn is_subscribed(&self, uri: &str) -> bool {
        self.state::<ResourceSubscriptions>()
            .is_some_and(|subs| lock(&subs.0).contains(uri))
    }

    /// Tells the client the tool list changed.
    pub async fn notify_tools_list_changed(&self) {
        self.notify(methods::NOTIFICATION_TOOLS_LIST_CHANGED, None)
            .await;
    }

    /// Tells the client the prompt list changed.
    pub async fn notify_prompts_list_changed(&self) {
        self.notify(methods::NOTIFICATION_PROMPTS_LIST_CHANGED, None)
            .await;
    }

    /// Tells the client the resource list changed.
    pub async fn notify_resources_list_changed(&self) {
        self.notify(methods::NOTIFICATION_RESOURCES_LIST_CHANGED, None)
            .await;
    }

    /// Tells the client that the resource at `uri` changed.
    pub async fn notify_resource_updated(&self, uri: &str) {
        let params = serde_json::json!({ "uri": uri });
        self.notify(methods::NOTIFICATION_RESOURCES_UPDATED, Some(params.into()))
            .await;
    }
}

/// The resources a connection's client subscribed to.
#[derive(Default)]
struct ResourceSubscriptions(Mutex<std::collections::HashSet<String>>);

/// The default bound on one connection's resource subscriptions.
pub const DEFAULT_MAX_SUBSCRIPTIONS: usize = 1_000;
/// The default bound on a subscribed resource URI's length, in bytes (as for URI templates).
pub const DEFAULT_MAX_SUBSCRIPTION_URI_LEN: usize = 4096;

/// Bounds on one connection's resource subscriptions (`resources/subscribe`, handshake era):
/// how many distinct URIs, and how long each may be. With the HTTP server's session cap they
/// bound what subscriptions can hold in total. Set with
/// [`ServerBuilder::subscription_limits`](crate::ServerBuilder::subscription_limits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SubscriptionLimits {
    /// Distinct URIs one connection may subscribe to (default [`DEFAULT_MAX_SUBSCRIPTIONS`]).
    pub max_per_connection: usize,
    /// The longest URI, in bytes (default [`DEFAULT_MAX_SUBSCRIPTION_URI_LEN`]).
    pub max_uri_len: usize,
}

impl SubscriptionLimits {
    /// Limits of `max_per_connection` URIs of at most `max_uri_len` bytes each.
    pub fn new(max_per_connection: usize, max_uri_len: usize) -> Self {
        Self {
            max_per_connection,
            max_uri_len,
        }
    }

    /// -32602 when `uri` is longer than [`SubscriptionLimits::max_uri_len`] (the URI is not
    /// echoed).
    pub fn check_uri(&self, uri: &str) -> Result<(), ErrorObject> {
        if uri.len() > self.max_uri_len {
            return Err(ErrorObject::invalid_params(format!(
                "the resource URI is {} bytes long; at most {} are accepted",
                uri.len(),
                self.max_uri_len
            )));
        }
        Ok(())
    }
}

impl Default for SubscriptionLimits {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_SUBSCRIPTIONS, DEFAULT_MAX_SUBSCRIPTION_URI_LEN)
    }
}

/// The -32600 answer to a server→client request where no back channel exists (a transport
/// whose exchanges cannot carry server→client requests answers them with it), marked as
/// [`SendRefused::NoBackChannel`] so that callers can match it with [`SendRefused::of`]
/// instead of comparing text.
pub fn no_back_channel() -> ErrorObject {
    SendRefused::NoBackChannel
        .error("this transport cannot carry server-to-client requests (no back channel)")
}

impl fmt::Debug for Connection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connection")
            .field("protocol_version", &self.protocol_version())
            .field("initialized", &self.is_initialized())
            .field("session_id", &self.inner.session_id)
            .finish_non_exhaustive()
    }
}

/// An outbound channel for modern-era stream connections: notifications pass, except change
/// notifications (list changes and resource updates), which at 2026-07-28 travel only on
/// `subscriptions/listen` streams; requests are refused (-32600).
pub(crate) struct NotifyOnly(pub(crate) Arc<dyn Outbound>);

/// Change notifications that, at 2026-07-28, travel only on `subscriptions/listen` streams.
pub(crate) fn is_listen_stream_notification(method: &str) -> bool {
    matches!(
        method,
        methods::NOTIFICATION_TOOLS_LIST_CHANGED
            | methods::NOTIFICATION_PROMPTS_LIST_CHANGED
            | methods::NOTIFICATION_RESOURCES_LIST_CHANGED
            | methods::NOTIFICATION_RESOURCES_UPDATED
    )
}

impl Outbound for NotifyOnly {
    fn send_request(
        &self,
        _method: &str,
        _params: Option<Payload>,
        _options: CallOptions,
    ) -> BoxFuture<'static, Result<Payload, ErrorObject>> {
        Box::pin(std::future::ready(Err(no_back_channel())))
    }

    fn notify(&self, method: &str, params: Option<Payload>) -> BoxFuture<'static, ()> {
        if is_listen_stream_notification(method) {
            tracing::debug!(
                method,
                "change notification dropped outside a listen stream"
            );
            return Box::pin(std::future::ready(()));
        }
        self.0.notify(method, params)
    }
}
