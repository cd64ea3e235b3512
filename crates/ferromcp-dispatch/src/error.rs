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

/// Why a send through a [`DispatchContext`](crate::DispatchContext) (or a session built on
/// one) was refused before anything reached the wire.
///
/// The refusal travels as an ordinary -32600 [`ErrorObject`] (that is what a handler that
/// propagates it answers with), marked in its `data` as `{"sendRefused": "<reason>"}` so that
/// callers can tell the cases apart without comparing message text: [`SendRefused::of`].
///
/// ```
/// use ferromcp_dispatch::SendRefused;
/// use ferromcp_jsonrpc::{ErrorCode, ErrorObject};
///
/// let e = SendRefused::NoBackChannel.error("no back channel");
/// assert_eq!(e.code, ErrorCode::INVALID_REQUEST);
/// assert_eq!(SendRefused::of(&e), Some(SendRefused::NoBackChannel));
/// assert!(SendRefused::NoBackChannel.is(&e));
/// assert_eq!(SendRefused::of(&ErrorObject::invalid_request("other")), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SendRefused {
    /// The transport, era or context cannot carry requests from this side to the peer
    /// (`data`: `{"sendRefused": "noBackChannel"}`).
    NoBackChannel,
    /// The request this context belongs to has been answered, so nothing can be sent
    /// related to it any more (`data`: `{"sendRefused": "requestAnswered"}`); the Python
    /// SDK's `can_send_request` rule.
    RequestAnswered,
}

impl SendRefused {
    /// The `data` key that carries the marker.
    pub const DATA_KEY: &'static str = "sendRefused";

    /// The marker's stable value.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::NoBackChannel => "noBackChannel",
            Self::RequestAnswered => "requestAnswered",
        }
    }

    /// The -32600 error that reports this refusal, with `message` and the marker as `data`.
    pub fn error(self, message: impl Into<std::borrow::Cow<'static, str>>) -> ErrorObject {
        ErrorObject::invalid_request(message)
            .with_data(serde_json::json!({ Self::DATA_KEY: self.as_str() }))
    }

    /// The refusal `e` reports, if it is one (a -32600 carrying the marker).
    pub fn of(e: &ErrorObject) -> Option<Self> {
        if e.code != ErrorCode::INVALID_REQUEST {
            return None;
        }
        let marker = e.data.as_ref()?.get(Self::DATA_KEY)?.as_str()?;
        [Self::NoBackChannel, Self::RequestAnswered]
            .into_iter()
            .find(|r| r.as_str() == marker)
    }

    /// Whether `e` reports this refusal.
    pub fn is(self, e: &ErrorObject) -> bool {
        Self::of(e) == Some(self)
    }
}

/// The refusal of a request that arrived while its connection already held as many of the
/// peer's requests as it may (running plus waiting; see
/// [`DispatcherConfig`](crate::DispatcherConfig#backpressure)).
///
/// It travels as a -32600 error, as the Streamable HTTP server's per-session "too many
/// requests in flight" refusal (HTTP 429) does, with the message "Server overloaded: ..." and
/// `data` `{"overloaded": {"limit": <requests held>}}`, so that callers can tell it from a
/// malformed request ([`Overloaded::of`]) and retry later. Nothing of the request ran.
///
/// ```
/// use ferromcp_dispatch::Overloaded;
/// use ferromcp_jsonrpc::{ErrorCode, ErrorObject};
///
/// let e = Overloaded::new(320).error();
/// assert_eq!(e.code, ErrorCode::INVALID_REQUEST);
/// assert!(e.message.starts_with("Server overloaded"));
/// assert_eq!(Overloaded::of(&e), Some(Overloaded::new(320)));
/// assert_eq!(Overloaded::of(&ErrorObject::invalid_request("other")), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Overloaded {
    /// How many requests the connection holds at most (running plus waiting).
    pub limit: usize,
}

impl Overloaded {
    /// The `data` key that carries the marker.
    pub const DATA_KEY: &'static str = "overloaded";

    /// The refusal for a connection that holds at most `limit` requests.
    pub const fn new(limit: usize) -> Self {
        Self { limit }
    }

    /// The -32600 error that reports this refusal.
    pub fn error(self) -> ErrorObject {
        let message = format!(
            "Server overloaded: {} requests already in flight or waiting on this connection; \
             try again later",
            self.limit
        );
        ErrorObject::invalid_request(message)
            .with_data(serde_json::json!({ Self::DATA_KEY: { "limit": self.limit } }))
    }

    /// The refusal `e` reports, if it is one (a -32600 carrying the marker).
    pub fn of(e: &ErrorObject) -> Option<Self> {
        if e.code != ErrorCode::INVALID_REQUEST {
            return None;
        }
        let limit = e
            .data
            .as_ref()?
            .get(Self::DATA_KEY)?
            .get("limit")?
            .as_u64()?;
        Some(Self::new(usize::try_from(limit).ok()?))
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
