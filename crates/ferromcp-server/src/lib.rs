//! MCP server: the per-connection kernel, the low-level server, and the stdio transport.

#[cfg(unix)]
#[allow(dead_code)] // Wired into the stdio transport as it lands.
mod stdio;
