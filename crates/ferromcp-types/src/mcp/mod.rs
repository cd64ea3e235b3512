//! Every MCP type of every revision, as version-neutral Rust types.
