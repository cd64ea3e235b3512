//! [`DispatchContext`]: an [`Outbound`] bound to the inbound message being handled.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use ferromcp_jsonrpc::{ErrorObject, Payload, RequestId};
use tokio_util::sync::CancellationToken;

use crate::dispatcher::{BoxFuture, Outbound};
use crate::error::SendRefused;
use crate::options::{CallOptions, Progress, ProgressCallback};
use crate::utility::{PROGRESS, progress_params};

/// The kind of transport a message came over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TransportKind {
    /// Standard input and output.
    Stdio,
    /// Streamable HTTP.
    StreamableHttp,
    /// An in-memory message stream.
    InMemory,
    /// The in-process [`DirectDispatcher`](crate::DirectDispatcher).
    Direct,
    /// Something else, by name.
    Other(&'static str),
}

/// What the handler may know about the transport.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TransportInfo {
    /// The kind of transport.
    pub kind: TransportKind,
    /// Whether requests can be sent to the peer while handling this message.
    pub can_send_requests: bool,
}

impl TransportInfo {
    /// A description of a transport.
    pub fn new(kind: TransportKind, can_send_requests: bool) -> Self {
        Self {
            kind,
            can_send_requests,
        }
    }
}

/// Where `DispatchContext::progress` goes.
#[derive(Clone)]
enum ProgressRoute {
    None,
    /// A `notifications/progress` with this token.
    Notify(RequestId),
    /// Straight to the caller's callback (in-process).
    Callback(ProgressCallback),
}

/// Where a context's sends go.
enum Via {
    /// An outbound that relates its messages to the request itself.
    Outbound(Arc<dyn Outbound>),
    /// A JSON-RPC connection; every message is related to the context's request id. Saves
    /// the JSON-RPC dispatcher an allocation (and an id clone) per inbound request.
    Connection(Arc<crate::jsonrpc::Shared>),
    /// The other end of an in-process pair (held by value: no allocation per request).
    Direct(crate::direct::DirectDispatcher),
}

/// Where `DispatchContext::cancellation` comes from.
enum Cancellation {
    Token(CancellationToken),
    /// An inbound JSON-RPC request's, made on first use.
    Request(Arc<crate::jsonrpc::RequestState>),
}

struct Inner {
    via: Via,
    transport: TransportInfo,
    request_id: Option<RequestId>,
    http: Option<Arc<http::request::Parts>>,
    cancellation: Cancellation,
    progress: ProgressRoute,
    /// Raised once the request's handler has returned: its answer is decided and on its way,
    /// so nothing more may be sent related to it (see [`DispatchContext::is_answered`]).
    answered: AtomicBool,
}

/// The context a handler runs in: an [`Outbound`] whose messages relate to the inbound
/// request, plus the request id, the transport's description, the HTTP request parts, a
/// cancellation signal and progress reporting. Cheap to clone.
///
/// Once the request has been answered (its handler returned; every dispatcher marks it),
/// nothing more is sent related to it, as the Python SDK's `can_send_request` rule says:
/// [`send_request`](Outbound::send_request) fails with [`SendRefused::RequestAnswered`]
/// (-32600); progress is dropped (its token belonged to the request); and a notification is
/// no longer related to the finished request: over a JSON-RPC connection it goes out on the
/// connection's standalone channel, and through a single exchange's outbound it goes only
/// where that outbound can still deliver (an HTTP response stream closes with the answer).
///
/// Dispatchers build these; other code (the HTTP server's single-exchange path, tests) can
/// build one with [`DispatchContext::builder`].
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use std::sync::Arc;
/// use ferromcp_dispatch::{DispatchContext, DirectDispatcher, Outbound, TransportInfo, TransportKind, CallOptions};
/// use ferromcp_jsonrpc::ErrorCode;
///
/// let (a, _b) = DirectDispatcher::pair();
/// let ctx = DispatchContext::builder(Arc::new(a), TransportInfo::new(TransportKind::Other("test"), false))
///     .request_id(1.into())
///     .build();
/// ctx.progress(0.5, None, None).await; // no token: a no-op
/// let err = ctx.send_request("ping", None, CallOptions::new()).await.unwrap_err();
/// assert_eq!(err.code, ErrorCode::INVALID_REQUEST);
/// assert!(ferromcp_dispatch::SendRefused::NoBackChannel.is(&err));
/// # });
/// ```
#[derive(Clone)]
pub struct DispatchContext {
    inner: Arc<Inner>,
}

/// Builds a [`DispatchContext`].
#[must_use]
pub struct DispatchContextBuilder {
    via: Via,
    transport: TransportInfo,
    request_id: Option<RequestId>,
    http: Option<Arc<http::request::Parts>>,
    /// `None` until set: a fresh token is made at `build` only when none was given (a token
    /// is an allocation).
    cancellation: Option<CancellationToken>,
    progress: ProgressRoute,
}

impl DispatchContext {
    /// Starts a context whose sends go through `outbound` (which should already relate its
    /// messages to the request being handled).
    pub fn builder(
        outbound: Arc<dyn Outbound>,
        transport: TransportInfo,
    ) -> DispatchContextBuilder {
        Self::builder_via(Via::Outbound(outbound), transport)
    }

    /// Starts a context whose sends go to the other end of an in-process pair.
    pub(crate) fn builder_direct(
        peer: crate::direct::DirectDispatcher,
        transport: TransportInfo,
    ) -> DispatchContextBuilder {
        Self::builder_via(Via::Direct(peer), transport)
    }

    fn builder_via(via: Via, transport: TransportInfo) -> DispatchContextBuilder {
        DispatchContextBuilder {
            via,
            transport,
            request_id: None,
            http: None,
            cancellation: None,
            progress: ProgressRoute::None,
        }
    }

    /// The context of an inbound JSON-RPC request: sends go through `shared`, related to
    /// `id`. One allocation (the context itself); the caller's values are moved in.
    pub(crate) fn for_connection_request(
        shared: Arc<crate::jsonrpc::Shared>,
        transport: TransportInfo,
        id: RequestId,
        http: Option<Arc<http::request::Parts>>,
        state: Arc<crate::jsonrpc::RequestState>,
        progress_token: Option<RequestId>,
    ) -> Self {
        let progress = match progress_token {
            Some(token) => ProgressRoute::Notify(token),
            None => ProgressRoute::None,
        };
        Self {
            inner: Arc::new(Inner {
                via: Via::Connection(shared),
                transport,
                request_id: Some(id),
                http,
                cancellation: Cancellation::Request(state),
                progress,
                answered: AtomicBool::new(false),
            }),
        }
    }

    /// The context of a request arriving through an in-process pair: sends go to `peer`
    /// (the caller's end), the cancellation signal is `state`'s (a token is made only when
    /// asked for) and progress goes straight to the caller's callback. One allocation.
    pub(crate) fn for_direct_request(
        peer: crate::direct::DirectDispatcher,
        transport: TransportInfo,
        id: RequestId,
        state: Arc<crate::jsonrpc::RequestState>,
        progress: Option<ProgressCallback>,
    ) -> Self {
        let progress = match progress {
            Some(cb) => ProgressRoute::Callback(cb),
            None => ProgressRoute::None,
        };
        Self {
            inner: Arc::new(Inner {
                via: Via::Direct(peer),
                transport,
                request_id: Some(id),
                http: None,
                cancellation: Cancellation::Request(state),
                progress,
                answered: AtomicBool::new(false),
            }),
        }
    }

    /// The id of the request being handled; `None` for a notification.
    pub fn request_id(&self) -> Option<&RequestId> {
        self.inner.request_id.as_ref()
    }

    /// The transport's description.
    pub fn transport(&self) -> &TransportInfo {
        &self.inner.transport
    }

    /// The parts of the HTTP request the message came in, if any.
    pub fn http_parts(&self) -> Option<&Arc<http::request::Parts>> {
        self.inner.http.as_ref()
    }

    /// Raised when the peer cancels the request or the connection shuts down.
    pub fn cancellation(&self) -> &CancellationToken {
        match &self.inner.cancellation {
            Cancellation::Token(token) => token,
            Cancellation::Request(state) => state.cancellation(),
        }
    }

    /// Whether the cancellation signal is raised (without making a lazy one).
    fn is_cancelled(&self) -> bool {
        match &self.inner.cancellation {
            Cancellation::Token(token) => token.is_cancelled(),
            Cancellation::Request(state) => state.is_cancelled(),
        }
    }

    /// The progress token the peer sent, if any.
    pub fn progress_token(&self) -> Option<&RequestId> {
        match &self.inner.progress {
            ProgressRoute::Notify(token) => Some(token),
            _ => self
                .inner
                .request_id
                .as_ref()
                .filter(|_| self.has_progress()),
        }
    }

    /// The request a connection or in-process context's messages relate to (always set by
    /// [`for_connection_request`](Self::for_connection_request) and
    /// [`for_direct_request`](Self::for_direct_request)).
    fn related(&self) -> Option<RequestId> {
        self.inner.request_id.clone()
    }

    /// Whether the request has been answered (its handler returned); from then on the
    /// context sends nothing related to it.
    pub fn is_answered(&self) -> bool {
        self.inner.answered.load(Ordering::Acquire)
    }

    /// Whether [`send_request`](Outbound::send_request) may reach the peer: the transport
    /// has a back channel and the request has not been answered yet.
    pub fn can_send_request(&self) -> bool {
        self.inner.transport.can_send_requests && !self.is_answered()
    }

    /// Marks the request answered (the dispatchers' error boundary does, when the handler
    /// returns).
    pub(crate) fn mark_answered(&self) {
        self.inner.answered.store(true, Ordering::Release);
    }

    fn has_progress(&self) -> bool {
        !matches!(self.inner.progress, ProgressRoute::None)
    }

    /// Reports progress to the peer; a no-op when the peer asked for none.
    /// Dropped once the request has been answered (see [`DispatchContext::is_answered`]).
    pub async fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        if self.is_answered() {
            tracing::debug!("progress dropped: the request has been answered");
            return;
        }
        match &self.inner.progress {
            ProgressRoute::None => {}
            ProgressRoute::Notify(token) => {
                let params = progress_params(token, progress, total, message);
                self.notify(PROGRESS, Some(params)).await;
            }
            ProgressRoute::Callback(cb) => {
                cb(Progress::new(progress, total, message.map(str::to_owned)));
            }
        }
    }
}

impl DispatchContextBuilder {
    /// The id of the request being handled.
    pub fn request_id(mut self, id: RequestId) -> Self {
        self.request_id = Some(id);
        self
    }

    /// The parts of the HTTP request the message came in.
    pub fn http_parts(mut self, parts: Option<Arc<http::request::Parts>>) -> Self {
        self.http = parts;
        self
    }

    /// The cancellation signal (a fresh one by default).
    pub fn cancellation(mut self, token: CancellationToken) -> Self {
        self.cancellation = Some(token);
        self
    }

    /// Progress goes to the peer as `notifications/progress` with this token.
    pub fn progress_token(mut self, token: Option<RequestId>) -> Self {
        if let Some(token) = token {
            self.progress = ProgressRoute::Notify(token);
        }
        self
    }

    /// Progress goes straight to this callback (in-process dispatch).
    pub fn progress_callback(mut self, cb: Option<ProgressCallback>) -> Self {
        if let Some(cb) = cb {
            self.progress = ProgressRoute::Callback(cb);
        }
        self
    }

    /// Progress goes where `ctx`'s goes: the same token (sent through this context's
    /// outbound) or the same in-process callback. For work that outlives a request but keeps
    /// reporting under its progress token.
    pub fn progress_of(mut self, ctx: &DispatchContext) -> Self {
        self.progress = ctx.inner.progress.clone();
        self
    }

    /// The context.
    pub fn build(self) -> DispatchContext {
        DispatchContext {
            inner: Arc::new(Inner {
                via: self.via,
                transport: self.transport,
                request_id: self.request_id,
                http: self.http,
                cancellation: Cancellation::Token(self.cancellation.unwrap_or_default()),
                progress: self.progress,
                answered: AtomicBool::new(false),
            }),
        }
    }
}

impl Outbound for DispatchContext {
    fn send_request(
        &self,
        method: &str,
        params: Option<Payload>,
        options: CallOptions,
    ) -> BoxFuture<'static, Result<Payload, ErrorObject>> {
        if !self.inner.transport.can_send_requests {
            let msg = format!(
                "Cannot send '{method}': this transport context has no back channel for requests"
            );
            let e = SendRefused::NoBackChannel.error(msg);
            return Box::pin(std::future::ready(Err(e)));
        }
        if self.is_answered() {
            let msg =
                format!("Cannot send '{method}': the request it would relate to has been answered");
            let e = SendRefused::RequestAnswered.error(msg);
            return Box::pin(std::future::ready(Err(e)));
        }
        match &self.inner.via {
            Via::Outbound(outbound) => outbound.send_request(method, params, options),
            Via::Direct(peer) => peer.send_request(method, params, options),
            Via::Connection(shared) => crate::jsonrpc::send_related_request(
                shared,
                self.related(),
                method,
                params,
                options,
            ),
        }
    }

    fn notify(&self, method: &str, params: Option<Payload>) -> BoxFuture<'static, ()> {
        match &self.inner.via {
            Via::Outbound(outbound) => outbound.notify(method, params),
            Via::Direct(peer) => {
                let related = (!self.is_answered()).then(|| self.related()).flatten();
                peer.notify_related(related, method, params)
            }
            // After the answer, no longer related to the finished request: the connection's
            // standalone channel.
            Via::Connection(shared) => {
                let related = (!self.is_answered()).then(|| self.related()).flatten();
                crate::jsonrpc::notify_related(shared, related, method, params)
            }
        }
    }
}

impl fmt::Debug for DispatchContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DispatchContext")
            .field("request_id", &self.inner.request_id)
            .field("transport", &self.inner.transport)
            .field("cancelled", &self.is_cancelled())
            .field("progress", &self.has_progress())
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for DispatchContextBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DispatchContextBuilder")
            .field("request_id", &self.request_id)
            .finish_non_exhaustive()
    }
}
