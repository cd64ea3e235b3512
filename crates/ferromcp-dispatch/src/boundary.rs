//! The single boundary where handler outcomes (errors and panics included) become wire
//! outcomes.

use std::any::Any;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use ferromcp_types::jsonrpc::{ErrorObject, Payload};

use crate::context::DispatchContext;
use crate::handler::Handler;

/// Polls a future, turning a panic into an `Err`.
struct CatchUnwind<F>(F);

impl<F: Future + Unpin> Future for CatchUnwind<F> {
    type Output = Result<F::Output, Box<dyn Any + Send>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = &mut self.0;
        match catch_unwind(AssertUnwindSafe(|| Pin::new(inner).poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(v)) => Poll::Ready(Ok(v)),
            Err(panic) => Poll::Ready(Err(panic)),
        }
    }
}

fn panic_text(panic: &(dyn Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(non-string panic)")
}

/// Runs a request handler; protocol errors pass through, invalid params become -32602 and
/// anything else, a panic included, -32603.
pub(crate) async fn call_request(
    handler: Arc<dyn Handler>,
    ctx: DispatchContext,
    method: String,
    params: Option<Payload>,
) -> Result<Payload, ErrorObject> {
    let name = method.clone();
    let started = catch_unwind(AssertUnwindSafe(|| handler.on_request(ctx, method, params)));
    let outcome = match started {
        Ok(fut) => CatchUnwind(fut).await,
        Err(panic) => Err(panic),
    };
    match outcome {
        Ok(Ok(result)) => Ok(result),
        Ok(Err(e)) => Err(e.into_error_object(&name)),
        Err(panic) => {
            tracing::error!(method = %name, panic = panic_text(&*panic), "request handler panicked");
            Err(ErrorObject::internal_error("Internal error"))
        }
    }
}

/// Runs a notification handler, containing a panic.
pub(crate) async fn call_notify(
    handler: Arc<dyn Handler>,
    ctx: DispatchContext,
    method: String,
    params: Option<Payload>,
) {
    let name = method.clone();
    let started = catch_unwind(AssertUnwindSafe(|| handler.on_notify(ctx, method, params)));
    let outcome = match started {
        Ok(fut) => CatchUnwind(fut).await,
        Err(panic) => Err(panic),
    };
    if let Err(panic) = outcome {
        tracing::error!(method = %name, panic = panic_text(&*panic), "notification handler panicked");
    }
}

/// Offers a notification to the intercept, containing a panic; `true` when it was consumed.
pub(crate) fn intercept(handler: &dyn Handler, method: &str, params: Option<&Payload>) -> bool {
    match catch_unwind(AssertUnwindSafe(|| {
        handler.intercept_notification(method, params)
    })) {
        Ok(flow) => flow.is_break(),
        Err(panic) => {
            tracing::error!(
                method,
                panic = panic_text(&*panic),
                "notification intercept panicked"
            );
            false
        }
    }
}
