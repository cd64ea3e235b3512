//! JSON-RPC error codes and error objects.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The most bytes of peer-supplied text (a method, tool or prompt name, a URI) an error
/// message or its data echoes; longer text is cut (see [`echo`]), so a 1 MB name never comes
/// back as a 2 MB error.
pub const MAX_ECHO_LEN: usize = 256;

/// `text` as an error may echo it: unchanged up to [`MAX_ECHO_LEN`] bytes, otherwise cut at a
/// character boundary and marked with `…`.
///
/// ```
/// use ferromcp_jsonrpc::{MAX_ECHO_LEN, echo};
///
/// assert_eq!(echo("tools/call"), "tools/call");
/// let long = "é".repeat(1000);
/// assert!(echo(&long).len() <= MAX_ECHO_LEN + '…'.len_utf8());
/// assert!(echo(&long).ends_with('…'));
/// ```
pub fn echo(text: &str) -> Cow<'_, str> {
    if text.len() <= MAX_ECHO_LEN {
        return Cow::Borrowed(text);
    }
    let mut end = MAX_ECHO_LEN;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!("{}…", &text[..end]))
}

/// A JSON-RPC error code. The set is open: any `i32` is a valid code, and the constants name
/// the ones JSON-RPC and MCP define.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ErrorCode(pub i32);

impl ErrorCode {
    /// -32700: the message is not valid JSON.
    pub const PARSE_ERROR: ErrorCode = ErrorCode(-32700);
    /// -32600: the JSON is not a valid request object.
    pub const INVALID_REQUEST: ErrorCode = ErrorCode(-32600);
    /// -32601: the method does not exist or is not available.
    pub const METHOD_NOT_FOUND: ErrorCode = ErrorCode(-32601);
    /// -32602: invalid method parameters.
    pub const INVALID_PARAMS: ErrorCode = ErrorCode(-32602);
    /// -32603: internal error.
    pub const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);
    /// -32000: the connection closed before the request was answered.
    pub const CONNECTION_CLOSED: ErrorCode = ErrorCode(-32000);
    /// -32001: the request timed out.
    pub const REQUEST_TIMEOUT: ErrorCode = ErrorCode(-32001);
    /// -32002: resource not found (handshake era; the modern era uses -32602).
    pub const RESOURCE_NOT_FOUND: ErrorCode = ErrorCode(-32002);
    /// -32020: an HTTP header disagrees with the request body.
    pub const HEADER_MISMATCH: ErrorCode = ErrorCode(-32020);
    /// -32021: the request needs a client capability the client did not declare.
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: ErrorCode = ErrorCode(-32021);
    /// -32022: the protocol version is not supported.
    pub const UNSUPPORTED_PROTOCOL_VERSION: ErrorCode = ErrorCode(-32022);
    /// -32042: a URL elicitation must complete before the request can proceed.
    pub const URL_ELICITATION_REQUIRED: ErrorCode = ErrorCode(-32042);
    /// -32800: the request was cancelled.
    pub const REQUEST_CANCELLED: ErrorCode = ErrorCode(-32800);

    /// The name of a well-known code, for logs.
    pub fn name(self) -> Option<&'static str> {
        Some(match self {
            Self::PARSE_ERROR => "parse error",
            Self::INVALID_REQUEST => "invalid request",
            Self::METHOD_NOT_FOUND => "method not found",
            Self::INVALID_PARAMS => "invalid params",
            Self::INTERNAL_ERROR => "internal error",
            Self::CONNECTION_CLOSED => "connection closed",
            Self::REQUEST_TIMEOUT => "request timeout",
            Self::RESOURCE_NOT_FOUND => "resource not found",
            Self::HEADER_MISMATCH => "header mismatch",
            Self::MISSING_REQUIRED_CLIENT_CAPABILITY => "missing required client capability",
            Self::UNSUPPORTED_PROTOCOL_VERSION => "unsupported protocol version",
            Self::URL_ELICITATION_REQUIRED => "URL elicitation required",
            Self::REQUEST_CANCELLED => "request cancelled",
            _ => return None,
        })
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => write!(f, "{} ({name})", self.0),
            None => write!(f, "{}", self.0),
        }
    }
}

/// A JSON-RPC error object: the protocol error that crosses the wire.
///
/// ```
/// use ferromcp_jsonrpc::{ErrorCode, ErrorObject};
///
/// let e = ErrorObject::method_not_found("tools/frobnicate");
/// assert_eq!(e.code, ErrorCode::METHOD_NOT_FOUND);
/// assert_eq!(e.data, Some("tools/frobnicate".into()));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error code.
    pub code: ErrorCode,
    /// A short description of the error.
    pub message: Cow<'static, str>,
    /// Additional information about the error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// An error with the given code and message and no data.
    pub fn new(code: ErrorCode, message: impl Into<Cow<'static, str>>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Adds data to the error.
    #[must_use]
    pub fn with_data(mut self, data: impl Into<Value>) -> Self {
        self.data = Some(data.into());
        self
    }

    /// -32700 Parse error.
    pub fn parse_error(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorCode::PARSE_ERROR, message)
    }

    /// -32600 Invalid Request.
    pub fn invalid_request(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorCode::INVALID_REQUEST, message)
    }

    /// -32601 Method not found, with the method name as data (cut to [`MAX_ECHO_LEN`]).
    pub fn method_not_found(method: &str) -> Self {
        Self::new(ErrorCode::METHOD_NOT_FOUND, "Method not found").with_data(echo(method))
    }

    /// -32602 Invalid params.
    pub fn invalid_params(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorCode::INVALID_PARAMS, message)
    }

    /// -32603 Internal error.
    pub fn internal_error(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorCode::INTERNAL_ERROR, message)
    }

    /// -32000 Connection closed.
    pub fn connection_closed() -> Self {
        Self::new(ErrorCode::CONNECTION_CLOSED, "Connection closed")
    }

    /// -32001 Request timed out.
    pub fn request_timeout() -> Self {
        Self::new(ErrorCode::REQUEST_TIMEOUT, "Request timed out")
    }

    /// -32800 Request cancelled.
    pub fn request_cancelled() -> Self {
        Self::new(ErrorCode::REQUEST_CANCELLED, "Request cancelled")
    }

    /// -32022 Unsupported protocol version, with the supported versions and the requested one
    /// in `data`.
    pub fn unsupported_protocol_version(supported: &[&str], requested: Option<&str>) -> Self {
        let mut data = serde_json::Map::new();
        data.insert(
            "supported".into(),
            supported.iter().map(|s| Value::from(*s)).collect(),
        );
        if let Some(requested) = requested {
            data.insert("requested".into(), requested.into());
        }
        Self::new(
            ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
        )
        .with_data(data)
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ErrorObject {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mcp_code_has_its_number() {
        let codes = [
            (ErrorCode::PARSE_ERROR, -32700),
            (ErrorCode::INVALID_REQUEST, -32600),
            (ErrorCode::METHOD_NOT_FOUND, -32601),
            (ErrorCode::INVALID_PARAMS, -32602),
            (ErrorCode::INTERNAL_ERROR, -32603),
            (ErrorCode::CONNECTION_CLOSED, -32000),
            (ErrorCode::REQUEST_TIMEOUT, -32001),
            (ErrorCode::RESOURCE_NOT_FOUND, -32002),
            (ErrorCode::HEADER_MISMATCH, -32020),
            (ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY, -32021),
            (ErrorCode::UNSUPPORTED_PROTOCOL_VERSION, -32022),
            (ErrorCode::URL_ELICITATION_REQUIRED, -32042),
            (ErrorCode::REQUEST_CANCELLED, -32800),
        ];
        for (code, n) in codes {
            assert_eq!(code.0, n);
            assert!(code.name().is_some());
        }
        assert_eq!(ErrorCode(-1).name(), None, "the set is open");
    }

    #[test]
    fn error_object_round_trips() {
        let e = ErrorObject::unsupported_protocol_version(&["2025-11-25"], Some("1999-01-01"));
        let text = serde_json::to_string(&e).unwrap();
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&text).unwrap(),
            serde_json::json!({"code": -32022, "message": "Unsupported protocol version",
                "data": {"supported": ["2025-11-25"], "requested": "1999-01-01"}})
        );
        assert_eq!(serde_json::from_str::<ErrorObject>(&text).unwrap(), e);
    }

    #[test]
    fn duplicate_fields_in_an_error_object_are_rejected() {
        let text = r#"{"code":1,"code":2,"message":"x"}"#;
        assert!(serde_json::from_str::<ErrorObject>(text).is_err());
    }
}
