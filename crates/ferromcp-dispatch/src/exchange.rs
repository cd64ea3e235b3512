//! [`SingleExchange`]: the dispatcher for transports that carry one request per exchange.

use std::future::Future;
use std::sync::Arc;

use ferromcp_jsonrpc::{ErrorObject, Payload, RequestId};
use tokio_util::sync::CancellationToken;

use crate::boundary;
use crate::context::{DispatchContext, TransportInfo};
use crate::dispatcher::Outbound;
use crate::handler::Handler;
use crate::utility::progress_token_of;

/// A dispatcher for one exchange: one inbound request, answered once, through the same
/// error boundary as every other dispatcher (a handler's protocol error passes through,
/// invalid params become -32602, anything else and a panic -32603 `Internal error`).
///
/// For transports whose exchanges carry one request each, such as a 2026-07-28 or a
/// stateless Streamable HTTP POST: the messages the handler relates to the request go to
/// `related` (for example the response's SSE stream), the exchange's cancellation token is
/// the handler's, and the progress token is read from the request's `params._meta`, as the
/// [`JsonRpcDispatcher`](crate::JsonRpcDispatcher) reads it.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use std::sync::Arc;
/// use ferromcp_dispatch::{
///     DirectDispatcher, HandlerError, SingleExchange, TransportInfo, TransportKind, handler_fn,
/// };
/// use ferromcp_jsonrpc::{ErrorCode, Payload};
///
/// let handler = handler_fn(|_ctx, method, _params| async move {
///     match method.as_str() {
///         "boom" => panic!("a bug"),
///         _ => Ok(Payload::empty_object()),
///     }
/// })
/// .into_arc();
/// let (related, _peer) = DirectDispatcher::pair();
/// let exchange = || SingleExchange::new(Arc::new(related.clone()), TransportInfo::new(TransportKind::Other("test"), false));
/// let ok = exchange().serve(handler.clone(), 1.into(), "ping".into(), None).await;
/// assert!(ok.is_ok());
/// let err = exchange().serve(handler, 2.into(), "boom".into(), None).await.unwrap_err();
/// assert_eq!(err.code, ErrorCode::INTERNAL_ERROR);
/// # });
/// ```
#[must_use]
pub struct SingleExchange {
    related: Arc<dyn Outbound>,
    transport: TransportInfo,
    http: Option<Arc<http::request::Parts>>,
    cancellation: Option<CancellationToken>,
}

impl SingleExchange {
    /// An exchange whose related messages go to `related`, over a transport described by
    /// `transport`.
    pub fn new(related: Arc<dyn Outbound>, transport: TransportInfo) -> Self {
        Self {
            related,
            transport,
            http: None,
            cancellation: None,
        }
    }

    /// The HTTP request the exchange came in (handlers read it through their context).
    pub fn http_parts(mut self, parts: Option<Arc<http::request::Parts>>) -> Self {
        self.http = parts;
        self
    }

    /// The handler's cancellation signal; raise it to cancel the request (for example when
    /// the client goes away). A fresh token when not set.
    pub fn cancellation(mut self, token: CancellationToken) -> Self {
        self.cancellation = Some(token);
        self
    }

    /// Serves request `id` with `handler`: its result, or the error to answer with.
    pub fn serve(
        self,
        handler: Arc<dyn Handler>,
        id: RequestId,
        method: String,
        params: Option<Payload>,
    ) -> impl Future<Output = Result<Payload, ErrorObject>> + Send + 'static {
        let mut ctx = DispatchContext::builder(self.related, self.transport)
            .request_id(id)
            .http_parts(self.http)
            .progress_token(progress_token_of(params.as_ref()));
        if let Some(token) = self.cancellation {
            ctx = ctx.cancellation(token);
        }
        boundary::call_request(handler, ctx.build(), method, params)
    }
}

impl std::fmt::Debug for SingleExchange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SingleExchange")
            .field("transport", &self.transport)
            .finish_non_exhaustive()
    }
}
