//! Behaviour of the server kernel (issue "Server kernel and low-level server"): the request
//! ladder, notifications, middleware, the low-level `Server`, `Connection` and
//! `RequestPeer`. The ladder cases run on every transport of `common::Transport`: the direct
//! dispatcher, the JSON-RPC dispatcher on an in-memory stream, and `serve_stream`.
//!
//! The era-specific behaviour of stream transports is in `era.rs`.

#![allow(clippy::unwrap_used, clippy::panic)]

#[path = "../common/mod.rs"]
mod common;
mod connection;
mod ladder;
mod middleware;
mod notifications;
mod server;
mod support;
