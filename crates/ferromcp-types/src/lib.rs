//! Wire types for the Model Context Protocol.
//!
//! - [`jsonrpc`]: JSON-RPC 2.0 envelopes, request ids, error codes, strict one-pass decoding.
//! - [`version`]: [`ProtocolVersion`], an ordered enum of every MCP revision, and its [`Era`].
//! - [`mcp`]: every MCP type of every revision, version-neutral.
//! - [`net`]: which IP addresses are public, for the SSRF guards of the client and the
//!   authorization server, and which URL hosts are loopback.
//! - [`tables`]: which methods exist at which version, params validation and result shaping,
//!   generated from the vendored schema files.
//!
//! This crate has no async runtime in its dependency tree.
#![cfg_attr(docsrs, feature(doc_cfg))]

/// JSON-RPC 2.0 (the crate `ferromcp-jsonrpc`): messages, ids, errors, decoding.
pub use ferromcp_jsonrpc as jsonrpc;
pub mod mcp;
pub mod net;
#[cfg(feature = "otel")]
pub mod otel;
pub mod tables;
pub mod version;

pub use version::{Era, ProtocolVersion, UnknownVersion};
