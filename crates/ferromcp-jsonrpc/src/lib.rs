//! JSON-RPC 2.0 for ferromcp: messages, request ids, error codes and objects, and strict
//! one-pass decoding. It knows nothing of MCP; `ferromcp-types` re-exports it as
//! `ferromcp_types::jsonrpc`.
//!
//! ```
//! use ferromcp_jsonrpc::{Message, Payload, Request};
//!
//! let m = Message::from(Request::new(1, "tools/list", None));
//! let bytes = m.to_vec();
//! assert_eq!(bytes, br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
//! assert_eq!(Message::from_slice(&bytes).unwrap(), m);
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]

mod decode;
mod error;
mod id;
mod message;
mod payload;
mod scan;

pub use decode::{DEFAULT_MAX_DEPTH, DecodeError, Decoder, Frame, MAX_SETTABLE_DEPTH};
pub use error::{ErrorCode, ErrorObject, MAX_ECHO_LEN, echo};
pub use id::RequestId;
pub use message::{ErrorResponse, Message, Notification, Request, Response};
pub use payload::{Payload, RawJson};

#[cfg(test)]
mod tests;
