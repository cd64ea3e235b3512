//! The 2026-07-28 example messages (`spec/2026-07-28/examples/<Type>/*.json`) decode into the
//! version-neutral MCP types and encode back to the same JSON; plus hand-written round trips
//! for shapes of earlier revisions (2024-11-05 … 2025-11-25) that have no example files.

mod method_markers;
mod shapes;
mod spec_examples;
mod support;
