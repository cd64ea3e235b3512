//! Handler errors, the single place where failures become wire errors, and transport errors.

use std::error::Error as StdError;

use ferromcp_jsonrpc::{ErrorCode, ErrorObject};

/// A boxed error, as carried by [`HandlerError`].
pub type BoxError = Box<dyn StdError + Send + Sync>;

/// Why a request handler failed.
///
/// The dispatcher turns this into the wire error in one place ([`HandlerError::into_error_object`]):
/// a protocol error passes through unchanged, invalid params become -32602 and anything else
/// becomes -32603. The detail of the last two goes to the log, never onto the wire.
///
/// ```
/// use ferromcp_dispatch::HandlerError;
/// use ferromcp_jsonrpc::{ErrorCode, ErrorObject};
///
/// let e = HandlerError::internal("database on fire").into_error_object("tools/call");
/// assert_eq!(e.code, ErrorCode::INTERNAL_ERROR);
/// assert!(!e.message.contains("fire"));
///
/// let e = HandlerError::from(ErrorObject::method_not_found("x")).into_error_object("x");
/// assert_eq!(e.code, ErrorCode::METHOD_NOT_FOUND);
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HandlerError {
    /// A protocol error: sent to the peer exactly as it is.
    #[error(transparent)]
    Protocol(ErrorObject),
    /// The params did not fit the method: -32602 "Invalid params" (the detail is only logged).
    #[error("invalid params: {0}")]
    InvalidParams(BoxError),
    /// Any other failure: -32603 "Internal error" (the detail is only logged).
    #[error("internal error: {0}")]
    Internal(BoxError),
}

impl HandlerError {
    /// An internal error (-32603 on the wire).
    pub fn internal(e: impl Into<BoxError>) -> Self {
        Self::Internal(e.into())
    }

    /// An invalid-params error (-32602 on the wire).
    pub fn invalid_params(e: impl Into<BoxError>) -> Self {
        Self::InvalidParams(e.into())
    }

    /// The error object that answers the request, logging what does not go on the wire.
    pub fn into_error_object(self, method: &str) -> ErrorObject {
        match self {
            Self::Protocol(e) => e,
            Self::InvalidParams(e) => {
                tracing::debug!(method, error = %e, "invalid params");
                ErrorObject::new(ErrorCode::INVALID_PARAMS, "Invalid params")
            }
            Self::Internal(e) => {
                tracing::warn!(method, error = %e, "request handler failed");
                ErrorObject::internal_error("Internal error")
            }
        }
    }
}

impl From<ErrorObject> for HandlerError {
    fn from(e: ErrorObject) -> Self {
        Self::Protocol(e)
    }
}

/// The transport can carry no more messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("transport closed")]
pub struct TransportClosed;

/// Why a dispatcher's run loop could not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// `run` was called a second time; a dispatcher runs once.
    #[error("the dispatcher is already running or has run")]
    AlreadyRunning,
}
