//! JSON-RPC 2.0.
