//! MCP-agnostic dispatchers.
