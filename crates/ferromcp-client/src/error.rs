//! [`ClientError`]: everything a client call can fail with.

use ferromcp_types::jsonrpc::{ErrorCode, ErrorObject};

/// Why a client operation failed.
///
/// Errors the server (or the dispatcher) answered with are [`ClientError::Protocol`], carrying
/// the JSON-RPC error object unchanged: a timeout is -32001, a closed connection -32000, a
/// cancelled call -32800. [`ClientError::code`] gives the code of any variant that has one.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// A JSON-RPC error: the server's answer, or the dispatcher's (timeout, closed).
    #[error("{0}")]
    Protocol(ErrorObject),
    /// A result did not decode into the method's result type.
    #[error("`{method}` returned a result that does not fit its type: {source}")]
    Decode {
        /// The method called.
        method: String,
        /// The decoding error.
        #[source]
        source: serde_json::Error,
    },
    /// Params did not encode to a JSON object.
    #[error("`{method}` params do not encode to a JSON object: {detail}")]
    Encode {
        /// The method called.
        method: String,
        /// What went wrong.
        detail: String,
    },
    /// A result carried a `resultType` the client does not understand, or `input_required` on
    /// a method that may not return it.
    #[error("`{method}` returned resultType {result_type:?}, which this client cannot handle")]
    UnexpectedResultType {
        /// The method called.
        method: String,
        /// The `resultType` received.
        result_type: String,
    },
    /// The server speaks no protocol version this client supports.
    #[error("the server supports no protocol version this client speaks ({detail})")]
    UnsupportedVersion {
        /// What the server offered.
        detail: String,
    },
    /// The multi-round driver gave up after this many `input_required` rounds.
    #[error("`{method}` still required input after {rounds} rounds (max_rounds)")]
    RoundsExceeded {
        /// The method called.
        method: String,
        /// The rounds run.
        rounds: u32,
    },
    /// A tool's result did not match its declared output schema or the caller's type.
    #[error("tool `{tool}`: {detail}")]
    OutputSchema {
        /// The tool.
        tool: String,
        /// What did not match.
        detail: String,
    },
    /// Pagination did not terminate: a repeated cursor or too many pages.
    #[error("`{method}` pagination stopped: {detail}")]
    Pagination {
        /// The list method.
        method: String,
        /// Why.
        detail: String,
    },
    /// The method does not exist in the negotiated protocol era.
    #[error("`{method}` is not available: {detail}")]
    NotAvailable {
        /// The method.
        method: String,
        /// Why.
        detail: String,
    },
    /// A tool call cannot run the way it was asked to: a task for a tool whose
    /// `execution.taskSupport` forbids it, or a plain call of a tool that requires a task
    /// when this client cannot run one (2025-11-25). Nothing was sent.
    #[error("tool `{tool}` cannot be called that way: {detail}")]
    TaskRefused {
        /// The tool.
        tool: String,
        /// Why.
        detail: String,
    },
    /// A task ended without a result to give: cancelled, or failed without a JSON-RPC error.
    #[error("task {task_id} ended without a result ({status:?}): {detail}")]
    TaskEnded {
        /// The task's id.
        task_id: String,
        /// Its last status, when known.
        status: Option<ferromcp_types::mcp::TaskStatus>,
        /// The server's status message, or why.
        detail: String,
    },
    /// Starting or talking to the transport failed.
    #[error("transport: {0}")]
    Transport(#[from] std::io::Error),
}

impl ClientError {
    /// The JSON-RPC error code, for [`ClientError::Protocol`].
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            Self::Protocol(e) => Some(e.code),
            _ => None,
        }
    }

    /// The JSON-RPC error object, for [`ClientError::Protocol`].
    pub fn as_protocol(&self) -> Option<&ErrorObject> {
        match self {
            Self::Protocol(e) => Some(e),
            _ => None,
        }
    }

    pub(crate) fn decode(method: &str, source: serde_json::Error) -> Self {
        Self::Decode {
            method: method.to_owned(),
            source,
        }
    }

    pub(crate) fn not_available(method: &str, detail: impl Into<String>) -> Self {
        Self::NotAvailable {
            method: method.to_owned(),
            detail: detail.into(),
        }
    }
}

impl From<ErrorObject> for ClientError {
    fn from(e: ErrorObject) -> Self {
        Self::Protocol(e)
    }
}
