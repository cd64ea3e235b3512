//! Middleware around every request, over stdio: `cargo run -p ferromcp --example middleware`.
//!
//! Three layers, outermost first:
//!
//! 1. logging: one `tracing` line per request (method, tool, outcome, duration), on stderr
//!    (stdout carries the protocol);
//! 2. a per-session rate limit on `tools/call`: at most [`CALLS_PER_WINDOW`] calls per
//!    [`WINDOW`] on one connection, then an error until the window passes;
//! 3. an authorization policy: the tool `delete_all` needs a caller whose token grants the
//!    scope `admin`. Over stdio there is no token, so it is always refused here; served over
//!    HTTP with the `auth` feature, the verified token's `Principal` decides.
//!
//! A layer sees the request's context, method and params, may refuse it (return an error
//! without calling `next`), rewrite it, or look at the outcome.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use ferromcp::McpServer;
use ferromcp::dispatch::BoxFuture;
use ferromcp::server::mcp_server::{Args, ToolSpec};
use ferromcp::server::middleware::{McpResult, middleware_fn};
use ferromcp::server::{McpRequest, Middleware, Next};
use ferromcp::types::jsonrpc::ErrorObject;

/// The most `tools/call` requests one session may make per [`WINDOW`].
const CALLS_PER_WINDOW: u32 = 5;
/// The rate limit's window.
const WINDOW: Duration = Duration::from_secs(10);

/// The tool name of a `tools/call`.
fn tool_name(request: &McpRequest) -> Option<&str> {
    if request.method != "tools/call" {
        return None;
    }
    request.params.as_ref()?.get("name")?.as_str()
}

/// Layer 1: logs every request with its duration and outcome.
struct Logging;

impl Middleware for Logging {
    fn handle(&self, request: McpRequest, next: Next) -> BoxFuture<'static, McpResult> {
        let method = request.method.clone();
        let tool = tool_name(&request).map(str::to_owned);
        Box::pin(async move {
            let started = Instant::now();
            let result = next.run(request).await;
            let elapsed = started.elapsed();
            // `tool` is recorded only when there is one.
            let tool = tool.as_deref();
            match &result {
                Ok(_) => tracing::info!(%method, tool, ?elapsed, "ok"),
                Err(e) => tracing::warn!(%method, tool, ?elapsed, error = %e, "failed"),
            }
            result
        })
    }
}

/// Layer 2's state, one per connection: the stdio process, or one handshake-era HTTP
/// session. (A 2026-07-28 HTTP request is an exchange of its own, with no session: over
/// HTTP, key the limit by `request.ctx.caller_id()`, the authenticated caller, instead.)
struct Window {
    started: Instant,
    calls: u32,
}

/// Counts this call against the session's window; `false` when over the limit.
fn admit(request: &McpRequest) -> bool {
    let window = request.ctx.connection().state_or_insert_with(|| {
        Mutex::new(Window {
            started: Instant::now(),
            calls: 0,
        })
    });
    let Ok(mut w) = window.lock() else {
        return false;
    };
    if w.started.elapsed() >= WINDOW {
        w.started = Instant::now();
        w.calls = 0;
    }
    w.calls += 1;
    w.calls <= CALLS_PER_WINDOW
}

/// A word to echo.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    /// The text.
    text: String,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Logs to stderr: stdout is the protocol's.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(tracing::Level::INFO)
        .init();

    let rate_limit = middleware_fn(|request: McpRequest, next: Next| async move {
        if request.method == "tools/call" && !admit(&request) {
            let message = format!("rate limited: at most {CALLS_PER_WINDOW} calls per {WINDOW:?}");
            return Err(ErrorObject::invalid_request(message).into());
        }
        next.run(request).await
    });

    let policy = middleware_fn(|request: McpRequest, next: Next| async move {
        if tool_name(&request) == Some("delete_all") {
            // The principal a token check recorded (HTTP with `auth`); `None` over stdio.
            let allowed = request
                .ctx
                .principal()
                .is_some_and(|p| p.has_scope("admin"));
            if !allowed {
                return Err(
                    ErrorObject::invalid_params("delete_all needs the scope `admin`").into(),
                );
            }
        }
        next.run(request).await
    });

    let server = McpServer::builder("middleware-example", "1.0.0")
        .tool(
            ToolSpec::new("echo").description("Echoes its text."),
            |Args(a): Args<EchoArgs>| async move { a.text },
        )
        .tool(
            ToolSpec::new("delete_all").description("Deletes everything (scope `admin`)."),
            || async { "deleted" },
        )
        .middleware(Logging)
        .middleware(rate_limit)
        .middleware(policy)
        .build()?;
    ferromcp::server::serve_stdio(server.server()).await?;
    Ok(())
}
