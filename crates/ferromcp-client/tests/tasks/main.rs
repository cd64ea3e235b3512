//! The client side of tasks, in both eras, against a scripted task server that shows every
//! request on the wire.
//!
//! Spec: 2025-11-25 basic/utilities/tasks (core tasks: capabilities, tool-level negotiation,
//! creating / getting / retrieving / listing / cancelling tasks, input_required, status
//! notifications); the 2026-07-28 `io.modelcontextprotocol/tasks` extension (SEP-2663:
//! server-directed creation, polymorphic results, `tasks/get` with inlined payloads,
//! `tasks/update`, acknowledgement-only `tasks/cancel`, no `tasks/list` / `tasks/result`).

#![allow(clippy::unwrap_used, clippy::panic)]

#[path = "../common/mod.rs"]
mod common;
mod core;
mod extension;
mod polling;
mod script;
