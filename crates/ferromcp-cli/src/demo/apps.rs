//! The demo server's MCP App (the `io.modelcontextprotocol/ui` extension, SEP-1865): a
//! counter view (`counter.html`, self-contained, no external scripts) that does the app side
//! of the postMessage dialect by hand (`ui/initialize`, then `ui/notifications/initialized`;
//! it shows `ui/notifications/tool-input` and `ui/notifications/tool-result`, and its button
//! asks the host for `tools/call increment_counter`). `counter` is linked to it and visible
//! to the model and the app; `increment_counter` is for the app only.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use ferromcp_server::mcp_server::{App, AppVisibility, Json, McpServerBuilder, ToolSpec};
use schemars::JsonSchema;
use serde::Serialize;

/// The app's URI.
pub(crate) const COUNTER_APP_URI: &str = "ui://ferromcp-demo/counter";
/// The app's HTML.
const COUNTER_HTML: &str = include_str!("counter.html");

/// The counter's value, as both tools return it (structured).
#[derive(Serialize, JsonSchema)]
struct Count {
    /// The current count.
    count: u64,
}

/// Registers the counter app and its two tools on `builder`.
pub(super) fn register(builder: McpServerBuilder) -> McpServerBuilder {
    let count = Arc::new(AtomicU64::new(0));
    let shown = count.clone();
    builder
        .app(
            App::new(COUNTER_APP_URI, "Counter", COUNTER_HTML)
                .description("An MCP App: shows the counter and increments it.")
                .prefers_border(true),
        )
        .tool(
            ToolSpec::new("counter")
                .description("Shows the counter (an MCP App in hosts that render apps).")
                .app(COUNTER_APP_URI),
            move || {
                let count = shown.load(Ordering::Relaxed);
                async move { Json(Count { count }) }
            },
        )
        .tool(
            ToolSpec::new("increment_counter")
                .description("Increments the counter (called by the counter app).")
                .app(COUNTER_APP_URI)
                .app_visibility(&[AppVisibility::App]),
            move || {
                let count = count.fetch_add(1, Ordering::Relaxed).saturating_add(1);
                async move { Json(Count { count }) }
            },
        )
}
