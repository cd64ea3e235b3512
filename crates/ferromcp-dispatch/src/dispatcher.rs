//! The dispatcher traits: [`Outbound`] and [`Dispatcher`].

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use ferromcp_jsonrpc::{ErrorObject, Payload};

use crate::error::RunError;
use crate::handler::Handler;
use crate::options::CallOptions;

/// A boxed, sendable future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Sends requests and notifications to the peer.
///
/// Both methods return `'static` futures that do nothing until polled.
pub trait Outbound: Send + Sync {
    /// Sends a request and waits for its result or error.
    ///
    /// Errors: the peer's error as it came; -32001 on timeout; -32000 when the connection
    /// closes first; -32600 when this context has no back channel or `options.request_id`
    /// correlates with a request already in flight.
    ///
    /// An implementation sends the params with `options.meta`'s members and the progress
    /// token in their `_meta`, as
    /// [`utility::params_with_meta`](crate::utility::params_with_meta) writes them.
    fn send_request(
        &self,
        method: &str,
        params: Option<Payload>,
        options: CallOptions,
    ) -> BoxFuture<'static, Result<Payload, ErrorObject>>;

    /// Sends a notification. Never fails: after close, or when the transport breaks, the
    /// notification is dropped with a debug log.
    fn notify(&self, method: &str, params: Option<Payload>) -> BoxFuture<'static, ()>;
}

impl<T: Outbound + ?Sized> Outbound for Arc<T> {
    fn send_request(
        &self,
        method: &str,
        params: Option<Payload>,
        options: CallOptions,
    ) -> BoxFuture<'static, Result<Payload, ErrorObject>> {
        (**self).send_request(method, params, options)
    }

    fn notify(&self, method: &str, params: Option<Payload>) -> BoxFuture<'static, ()> {
        (**self).notify(method, params)
    }
}

/// An [`Outbound`] plus the loop that serves the peer's messages.
pub trait Dispatcher: Outbound {
    /// Serves inbound messages with `handler` until the connection ends (end of stream, the
    /// peer closing, or [`Dispatcher::close`]). At the end every pending outbound request fails
    /// with -32000 and in-flight handlers are cancelled. A dispatcher runs once.
    fn run(&self, handler: Arc<dyn Handler>) -> BoxFuture<'_, Result<(), RunError>>;

    /// Closes the connection: the run loop ends and no more requests can be sent.
    fn close(&self);
}
