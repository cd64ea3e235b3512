//! The single boundary where handler outcomes (errors and panics included) become wire
//! outcomes.

use std::any::Any;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use ferromcp_jsonrpc::{ErrorObject, Payload, RequestId};

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

/// A copy of a method name for the error log, kept inline when short (method names almost
/// always are), so that keeping it costs no allocation per request.
enum MethodName {
    Short { len: u8, bytes: [u8; Self::INLINE] },
    Long(String),
}

impl MethodName {
    const INLINE: usize = 32;

    fn new(name: &str) -> Self {
        match u8::try_from(name.len()) {
            Ok(len) if name.len() <= Self::INLINE => {
                let mut bytes = [0; Self::INLINE];
                bytes[..name.len()].copy_from_slice(name.as_bytes());
                Self::Short { len, bytes }
            }
            _ => Self::Long(name.to_owned()),
        }
    }

    fn as_str(&self) -> &str {
        match self {
            // A whole `str` was copied, so this is valid UTF-8.
            Self::Short { len, bytes } => {
                std::str::from_utf8(&bytes[..usize::from(*len)]).unwrap_or_default()
            }
            Self::Long(name) => name,
        }
    }
}

/// Runs a request handler; protocol errors pass through, invalid params become -32602 and
/// anything else, a panic included, -32603. When the handler returns, its context is marked
/// answered: from then on it sends nothing related to the request.
pub(crate) async fn call_request(
    handler: Arc<dyn Handler>,
    ctx: DispatchContext,
    method: String,
    params: Option<Payload>,
) -> Result<Payload, ErrorObject> {
    let name = MethodName::new(&method);
    // A second handle on the context (a reference count, no allocation), to mark the request
    // answered once the handler has returned.
    let answered = ctx.clone();
    let started = catch_unwind(AssertUnwindSafe(|| handler.on_request(ctx, method, params)));
    let outcome = match started {
        Ok(fut) => CatchUnwind(fut).await,
        Err(panic) => Err(panic),
    };
    answered.mark_answered();
    match outcome {
        Ok(Ok(result)) => Ok(result),
        Ok(Err(e)) => Err(e.into_error_object(name.as_str())),
        Err(panic) => {
            tracing::error!(
                method = name.as_str(),
                panic = panic_text(&*panic),
                "request handler panicked"
            );
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
pub(crate) fn intercept(
    handler: &dyn Handler,
    method: &str,
    params: Option<&Payload>,
    related: Option<&RequestId>,
) -> bool {
    match catch_unwind(AssertUnwindSafe(|| {
        handler.intercept_related_notification(method, params, related)
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

#[cfg(test)]
mod tests {
    use super::MethodName;

    /// The logged method name is the request's, short or long, ASCII or not.
    #[test]
    fn method_names_are_kept_whole() {
        let long = "x".repeat(MethodName::INLINE + 1);
        for name in ["", "tools/call", "méthode/ünïcode", &long, &long[1..]] {
            assert_eq!(MethodName::new(name).as_str(), name);
        }
    }
}
