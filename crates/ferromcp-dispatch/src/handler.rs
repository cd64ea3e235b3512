//! The handler a dispatcher serves inbound messages with.

use std::fmt;
use std::future::Future;
use std::ops::ControlFlow;
use std::sync::Arc;

use ferromcp_jsonrpc::{Payload, RequestId};

use crate::BoxFuture;
use crate::context::DispatchContext;
use crate::error::HandlerError;

/// Serves the peer's requests and notifications.
///
/// Each request runs concurrently with the read loop, in its own task (unless
/// [`Handler::runs_inline`] says otherwise; on a current-thread runtime the
/// [`JsonRpcDispatcher`](crate::JsonRpcDispatcher) first polls it on the read loop, and only a
/// request that does not finish on that poll gets a task); each
/// notification is first offered, synchronously and in arrival order, to
/// [`Handler::intercept_notification`], and then, unless consumed, handed to
/// [`Handler::on_notify`] in its own task.
pub trait Handler: Send + Sync + 'static {
    /// Answers a request: a result payload, or an error that becomes the wire error.
    fn on_request(
        self: Arc<Self>,
        ctx: DispatchContext,
        method: String,
        params: Option<Payload>,
    ) -> BoxFuture<'static, Result<Payload, HandlerError>>;

    /// Handles a notification the intercept did not consume.
    fn on_notify(
        self: Arc<Self>,
        ctx: DispatchContext,
        method: String,
        params: Option<Payload>,
    ) -> BoxFuture<'static, ()>;

    /// Sees every notification first, synchronously and in arrival order, on the read loop.
    /// Return `ControlFlow::Break(())` to consume it (it then does not reach `on_notify`).
    /// Must be quick and must not block.
    fn intercept_notification(&self, method: &str, params: Option<&Payload>) -> ControlFlow<()> {
        let _ = (method, params);
        ControlFlow::Continue(())
    }

    /// [`Handler::intercept_notification`], told which of this side's requests the
    /// notification relates to when the transport knows: the in-process peer sent it while
    /// handling that request, or it came on that request's HTTP response stream (see
    /// [`MessageMeta::related_request_id`](crate::MessageMeta::related_request_id)); `None`
    /// when the transport cannot tell (stdio) or it relates to none. The dispatchers call
    /// this one; by default it is `intercept_notification`.
    fn intercept_related_notification(
        &self,
        method: &str,
        params: Option<&Payload>,
        related: Option<&RequestId>,
    ) -> ControlFlow<()> {
        let _ = related;
        self.intercept_notification(method, params)
    }

    /// Whether requests for `method` run on the read loop, finishing before the next message
    /// is read (MCP's kernel uses this for `initialize`). Such a handler must not wait for the
    /// peer: the read loop is not reading.
    fn runs_inline(&self, method: &str) -> bool {
        let _ = method;
        false
    }
}

type RequestFn = dyn Fn(
        DispatchContext,
        String,
        Option<Payload>,
    ) -> BoxFuture<'static, Result<Payload, HandlerError>>
    + Send
    + Sync;
type NotifyFn =
    dyn Fn(DispatchContext, String, Option<Payload>) -> BoxFuture<'static, ()> + Send + Sync;
type InterceptFn = dyn Fn(&str, Option<&Payload>) -> ControlFlow<()> + Send + Sync;

/// A [`Handler`] built from closures, for tests and simple uses; see [`handler_fn`].
pub struct FnHandler {
    request: Box<RequestFn>,
    notify: Option<Box<NotifyFn>>,
    intercept: Option<Box<InterceptFn>>,
    inline: Vec<String>,
}

/// Builds a [`Handler`] from a request closure; notifications are ignored unless
/// [`FnHandler::on_notify`] or [`FnHandler::intercept`] is set.
///
/// ```
/// use ferromcp_dispatch::{handler_fn, HandlerError};
/// use ferromcp_jsonrpc::{ErrorObject, Payload};
///
/// let handler = handler_fn(|_ctx, method, params| async move {
///     match method.as_str() {
///         "echo" => Ok(params.unwrap_or_else(Payload::empty_object)),
///         _ => Err(HandlerError::from(ErrorObject::method_not_found(&method))),
///     }
/// })
/// .into_arc();
/// # let _ = handler;
/// ```
pub fn handler_fn<F, Fut>(f: F) -> FnHandler
where
    F: Fn(DispatchContext, String, Option<Payload>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Payload, HandlerError>> + Send + 'static,
{
    FnHandler {
        request: Box::new(move |ctx, method, params| Box::pin(f(ctx, method, params))),
        notify: None,
        intercept: None,
        inline: Vec::new(),
    }
}

impl FnHandler {
    /// Handles notifications with `f`.
    #[must_use]
    pub fn on_notify<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(DispatchContext, String, Option<Payload>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.notify = Some(Box::new(move |ctx, m, p| Box::pin(f(ctx, m, p))));
        self
    }

    /// Intercepts notifications with `f` (see [`Handler::intercept_notification`]).
    #[must_use]
    pub fn intercept(
        mut self,
        f: impl Fn(&str, Option<&Payload>) -> ControlFlow<()> + Send + Sync + 'static,
    ) -> Self {
        self.intercept = Some(Box::new(f));
        self
    }

    /// Runs requests for `method` inline (see [`Handler::runs_inline`]).
    #[must_use]
    pub fn inline(mut self, method: impl Into<String>) -> Self {
        self.inline.push(method.into());
        self
    }

    /// The handler as the `Arc<dyn Handler>` a dispatcher runs with.
    pub fn into_arc(self) -> Arc<dyn Handler> {
        Arc::new(self)
    }
}

impl Handler for FnHandler {
    fn on_request(
        self: Arc<Self>,
        ctx: DispatchContext,
        method: String,
        params: Option<Payload>,
    ) -> BoxFuture<'static, Result<Payload, HandlerError>> {
        (self.request)(ctx, method, params)
    }

    fn on_notify(
        self: Arc<Self>,
        ctx: DispatchContext,
        method: String,
        params: Option<Payload>,
    ) -> BoxFuture<'static, ()> {
        match &self.notify {
            Some(f) => f(ctx, method, params),
            None => Box::pin(std::future::ready(())),
        }
    }

    fn intercept_notification(&self, method: &str, params: Option<&Payload>) -> ControlFlow<()> {
        match &self.intercept {
            Some(f) => f(method, params),
            None => ControlFlow::Continue(()),
        }
    }

    fn runs_inline(&self, method: &str) -> bool {
        self.inline.iter().any(|m| m == method)
    }
}

impl fmt::Debug for FnHandler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnHandler")
            .field("inline", &self.inline)
            .finish_non_exhaustive()
    }
}
