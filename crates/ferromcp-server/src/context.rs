//! What a handler gets: the request context and the request's peer (the client as this
//! request sees it).

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use ferromcp_dispatch::{CallOptions, DispatchContext, Outbound};
use ferromcp_types::ProtocolVersion;
use ferromcp_types::jsonrpc::{ErrorObject, Payload, RequestId};
use ferromcp_types::mcp::methods;
use ferromcp_types::mcp::{LoggingLevel, Meta};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::caller::CallerId;
use crate::connection::{Connection, no_back_channel};
use crate::envelope::RequestMeta;
use crate::principal::Principal;
use crate::server::Server;

/// The client as one request sees it: a per-request view of the connection for sending to
/// the client. (Not the HTTP `Mcp-Session-Id` session, which spans requests.)
///
/// Messages sent through the peer are *related* to the request being handled, so that over
/// Streamable HTTP they travel on that request's own SSE stream; messages sent through
/// [`Connection`] ([`RequestPeer::connection`]) go to the connection's standalone channel.
#[derive(Clone)]
pub struct RequestPeer {
    dispatch: DispatchContext,
    connection: Connection,
    /// At 2026-07-28: the level this request opted into with `io.modelcontextprotocol/logLevel`.
    log_opt_in: Option<LoggingLevel>,
    /// A task's peer: progress is dropped once any of these is raised (the task ended).
    progress_ends: Vec<CancellationToken>,
    /// The timeout of a request to the client that sets none (the server's
    /// `client_request_timeout`).
    request_timeout: Option<std::time::Duration>,
}

impl RequestPeer {
    pub(crate) fn new(
        dispatch: DispatchContext,
        connection: Connection,
        log_opt_in: Option<LoggingLevel>,
        request_timeout: Option<std::time::Duration>,
    ) -> Self {
        Self {
            dispatch,
            connection,
            log_opt_in,
            progress_ends: Vec::new(),
            request_timeout,
        }
    }

    /// The connection this request arrived on.
    pub fn connection(&self) -> &Connection {
        &self.connection
    }

    /// The dispatcher's context for this request.
    pub fn dispatch_context(&self) -> &DispatchContext {
        &self.dispatch
    }

    /// Sends a notification related to this request; never fails. Once the request has been
    /// answered the notification is dropped (see [`DispatchContext`]); send through
    /// [`RequestPeer::connection`] to reach the client after that.
    pub async fn notify(&self, method: &str, params: Option<Payload>) {
        // otel: carry the current span's trace context in `params._meta` (src/otel.rs).
        #[cfg(feature = "otel")]
        let params = crate::otel::inject_current(params);
        self.dispatch.notify(method, params).await;
    }

    /// Whether [`send_request`](Self::send_request) may reach the client: the connection and
    /// the transport have a back channel and this request has not been answered yet.
    pub fn can_send_request(&self) -> bool {
        self.connection.can_send_requests() && self.dispatch.can_send_request()
    }

    /// Sends a request to the client, related to this request. Fails with -32600 where the
    /// transport or era has no back channel ([`SendRefused::NoBackChannel`]), or once this
    /// request has been answered ([`SendRefused::RequestAnswered`]); match either with
    /// [`SendRefused::of`]. Without a timeout in `options`, the server's
    /// [`client_request_timeout`](crate::ServerBuilder::client_request_timeout) applies
    /// (-32001 when it passes), so a client that never answers cannot hold the handler
    /// forever.
    ///
    /// [`SendRefused::NoBackChannel`]: ferromcp_dispatch::SendRefused::NoBackChannel
    /// [`SendRefused::RequestAnswered`]: ferromcp_dispatch::SendRefused::RequestAnswered
    /// [`SendRefused::of`]: ferromcp_dispatch::SendRefused::of
    pub async fn send_request(
        &self,
        method: &str,
        params: Option<Payload>,
        options: CallOptions,
    ) -> Result<Payload, ErrorObject> {
        if !self.connection.can_send_requests() || !self.dispatch.transport().can_send_requests {
            return Err(no_back_channel());
        }
        // otel: carry the current span's trace context in `params._meta` (src/otel.rs).
        #[cfg(feature = "otel")]
        let params = crate::otel::inject_current(params);
        let options = match (options.timeout, self.request_timeout) {
            (None, Some(default)) => options.timeout(default),
            _ => options,
        };
        self.dispatch.send_request(method, params, options).await
    }

    /// Reports progress on this request; a no-op when the client sent no progress token, and
    /// in a task once the task has ended.
    pub async fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        if self
            .progress_ends
            .iter()
            .any(CancellationToken::is_cancelled)
        {
            tracing::debug!("progress dropped: the task has ended");
            return;
        }
        self.dispatch.progress(progress, total, message).await;
    }

    /// Whether a log message at `level` may be sent: before 2026-07-28, when it is at or above
    /// the level set with `logging/setLevel` (every level if none was set); at 2026-07-28 only
    /// when this request opted in with `io.modelcontextprotocol/logLevel` at or below `level`.
    pub fn log_enabled(&self, level: LoggingLevel) -> bool {
        if self.connection.protocol_version().is_modern() {
            self.log_opt_in.is_some_and(|min| level >= min)
        } else {
            self.connection.log_level().is_none_or(|min| level >= min)
        }
    }

    /// Sends a `notifications/message` log record related to this request, when
    /// [`RequestPeer::log_enabled`] allows it.
    pub async fn log(&self, level: LoggingLevel, logger: Option<&str>, data: Value) {
        if !self.log_enabled(level) {
            return;
        }
        let mut params = serde_json::Map::new();
        params.insert(
            "level".into(),
            serde_json::to_value(level).unwrap_or(Value::Null),
        );
        if let Some(logger) = logger {
            params.insert("logger".into(), logger.into());
        }
        params.insert("data".into(), data);
        self.notify(methods::NOTIFICATION_MESSAGE, Some(params.into()))
            .await;
    }
}

impl fmt::Debug for RequestPeer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestPeer")
            .field("request_id", &self.dispatch.request_id())
            .field("connection", &self.connection)
            .finish_non_exhaustive()
    }
}

/// A request's method name: the tables' own string for a spec method (no allocation per
/// request), shared text for any other.
#[derive(Clone)]
enum MethodName {
    Spec(&'static str),
    Custom(Arc<str>),
}

impl MethodName {
    fn new(method: &str) -> Self {
        match ferromcp_types::tables::method(method) {
            Some(m) => Self::Spec(m.name()),
            None => Self::Custom(method.into()),
        }
    }

    fn as_str(&self) -> &str {
        match self {
            Self::Spec(name) => name,
            Self::Custom(name) => name,
        }
    }
}

/// The context a request or notification handler runs with.
#[derive(Clone)]
pub struct RequestContext {
    peer: RequestPeer,
    server: Server,
    method: MethodName,
    /// Parsed when first asked for, when it came as text (see `crate::envelope`).
    meta: RequestMeta,
    /// What the layers above the kernel carry with this request (the high-level server's
    /// asker for multi-round input, the task a handler runs as, ...). Empty costs nothing.
    extensions: http::Extensions,
}

impl RequestContext {
    pub(crate) fn new(
        server: Server,
        connection: Connection,
        dispatch: DispatchContext,
        method: &str,
        meta: RequestMeta,
    ) -> Self {
        let timeout = server.client_request_timeout();
        // The transport's authenticated caller (the HTTP server's token check records it on
        // the HTTP request) travels in the extensions, where a layer may also put one: the one
        // place `RequestContext::principal` reads.
        let mut extensions = http::Extensions::new();
        if let Some(principal) = dispatch
            .http_parts()
            .and_then(|p| p.extensions.get::<Principal>())
        {
            extensions.insert(principal.clone());
        }
        let peer = RequestPeer::new(dispatch, connection, meta.log_level(), timeout);
        Self {
            peer,
            server,
            method: MethodName::new(method),
            meta,
            extensions,
        }
    }

    /// The same request, detached from its exchange: sends go to the connection's
    /// standalone channel (the request's own stream may be gone), cancellation is
    /// `cancellation`, and progress stops once any of `progress_ends` is raised. Progress keeps
    /// the request's token before 2026-07-28 (a detached handshake-era run, such as a task,
    /// reports on it for its lifetime) and reports none at 2026-07-28. Of the extensions only
    /// the [`Principal`] is carried over: the caller adds what else the detached run needs.
    pub fn detached(
        &self,
        cancellation: CancellationToken,
        progress_ends: Vec<CancellationToken>,
    ) -> Self {
        let d = &self.peer.dispatch;
        let mut builder = DispatchContext::builder(
            self.peer.connection.outbound().clone(),
            d.transport().clone(),
        )
        .http_parts(d.http_parts().cloned())
        .cancellation(cancellation);
        if !self.protocol_version().is_modern() {
            builder = builder.progress_of(d);
        }
        let peer = RequestPeer {
            dispatch: builder.build(),
            connection: self.peer.connection.clone(),
            log_opt_in: self.peer.log_opt_in,
            progress_ends,
            request_timeout: self.peer.request_timeout,
        };
        Self {
            peer,
            server: self.server.clone(),
            method: self.method.clone(),
            meta: self.meta.clone(),
            extensions: self.principal_only(),
        }
    }

    /// Extensions holding only this request's principal, if it has one.
    fn principal_only(&self) -> http::Extensions {
        let mut extensions = http::Extensions::new();
        if let Some(principal) = self.principal() {
            extensions.insert(principal.clone());
        }
        extensions
    }

    /// The authenticated caller: the [`Principal`] in this request's extensions, put there
    /// by the transport (the HTTP server's token check) or by a middleware layer, on any
    /// transport (`req.ctx.extensions_mut().insert(principal)`); `None` when neither did.
    pub fn principal(&self) -> Option<&Principal> {
        self.extensions.get()
    }

    /// What the layers above the kernel attached to this request, by type (as
    /// [`http::Extensions`] carries request-scoped data through tower stacks).
    pub fn extensions(&self) -> &http::Extensions {
        &self.extensions
    }

    /// Mutable access to the request's extensions.
    pub fn extensions_mut(&mut self) -> &mut http::Extensions {
        &mut self.extensions
    }

    /// The context with `value` attached (see [`RequestContext::extensions`]).
    #[must_use]
    pub fn with_extension<T: Clone + Send + Sync + 'static>(mut self, value: T) -> Self {
        self.extensions.insert(value);
        self
    }

    /// The client as this request sees it, for sending to the client: messages sent through
    /// it are related to this request.
    pub fn peer(&self) -> &RequestPeer {
        &self.peer
    }

    /// The connection the request arrived on.
    pub fn connection(&self) -> &Connection {
        &self.peer.connection
    }

    /// The server serving the request.
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// The method being handled.
    pub fn method(&self) -> &str {
        self.method.as_str()
    }

    /// The request id; `None` for a notification.
    pub fn request_id(&self) -> Option<&RequestId> {
        self.peer.dispatch.request_id()
    }

    /// The protocol version of this request.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.peer.connection.protocol_version()
    }

    /// The request's `_meta`, if it had one.
    pub fn meta(&self) -> Option<&Meta> {
        self.meta.get()
    }

    /// Raised when the client cancels the request or the connection closes.
    pub fn cancellation(&self) -> &CancellationToken {
        self.peer.dispatch.cancellation()
    }

    /// The HTTP request the message came in, when served over HTTP.
    pub fn http_parts(&self) -> Option<&Arc<http::request::Parts>> {
        self.peer.dispatch.http_parts()
    }

    /// The caller's identity, when the transport or a layer in front of it recorded one
    /// (see [`CallerId`]); `None` otherwise.
    pub fn caller_id(&self) -> Option<&CallerId> {
        self.http_parts().and_then(|p| p.extensions.get())
    }

    /// The lifespan value of type `T`, if the server has a lifespan of that type.
    pub fn lifespan<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        let value: Arc<dyn Any + Send + Sync> = self.server.lifespan_value()?;
        value.downcast().ok()
    }

    /// Reports progress on this request (see [`RequestPeer::progress`]).
    pub async fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        self.peer.progress(progress, total, message).await;
    }

    /// Sends a log record related to this request (see [`RequestPeer::log`]).
    pub async fn log(&self, level: LoggingLevel, logger: Option<&str>, data: Value) {
        self.peer.log(level, logger, data).await;
    }
}

impl fmt::Debug for RequestContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestContext")
            .field("method", &self.method.as_str())
            .field("peer", &self.peer)
            .finish_non_exhaustive()
    }
}
