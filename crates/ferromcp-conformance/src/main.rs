//! `conformance-client`: the client under test of the official MCP conformance harness
//! (`@modelcontextprotocol/conformance`, client mode), built on `ferromcp-client`.
//!
//! The harness starts a mock server per scenario and runs `conformance-client <url>` with
//!
//! - `MCP_CONFORMANCE_SCENARIO`: the scenario name (required);
//! - `MCP_CONFORMANCE_PROTOCOL_VERSION` (0.2 harness): the revision under test; 2026-07-28
//!   selects the stateless lifecycle (`server/discover` and the per-request envelope),
//!   anything else or nothing the `initialize` handshake;
//! - `MCP_CONFORMANCE_CONTEXT`: scenario data as JSON (credentials for the auth scenarios,
//!   the tool calls to replay for `http-custom-headers`).
//!
//! Each scenario does what the harness's mock expects of a client (see
//! `.ci/conformance/README.md`). The process exits 0 when the scenario's steps succeeded, 1
//! with a message on stderr otherwise; logs go to stderr only (`RUST_LOG`-style level in
//! `CONFORMANCE_CLIENT_LOG`, default `info`).
//!
//! The OAuth scenarios (`auth/*`) attach ferromcp-client's OAuth client (`oauth` feature) to
//! the transport, configured with the grant the scenario exercises (client credentials, JWT
//! bearer, SEP-990 enterprise-managed, else the authorization code with PKCE through a hook
//! that reads the mock's immediate redirect; see `scenarios::oauth_provider`): on a 401 it
//! runs discovery, registration and the grant, then retries; on a 403 `insufficient_scope`
//! it steps up; tokens are DPoP-bound when the mock's authorization server supports it.

mod scenarios;

use std::process::ExitCode;
use std::time::Duration;

use serde_json::Value;

/// The bound on one scenario; the harness kills the client after 30 s by default.
const SCENARIO_TIMEOUT: Duration = Duration::from_secs(25);

/// What the harness handed the client.
#[derive(Debug)]
pub(crate) struct Invocation {
    /// The mock server's URL (the last argument).
    pub(crate) url: String,
    /// `MCP_CONFORMANCE_SCENARIO`.
    pub(crate) scenario: String,
    /// `MCP_CONFORMANCE_PROTOCOL_VERSION`, when set.
    pub(crate) protocol_version: Option<String>,
    /// `MCP_CONFORMANCE_CONTEXT`, parsed.
    pub(crate) context: Option<Value>,
    /// The OAuth client (auth scenarios), attached to the transport.
    pub(crate) oauth: Option<std::sync::Arc<ferromcp_client::oauth::OAuthProvider>>,
}

impl Invocation {
    fn from_env() -> Result<Self, String> {
        let url = std::env::args()
            .skip(1)
            .last()
            .ok_or("usage: conformance-client <server-url> (the harness appends the URL)")?;
        let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO")
            .map_err(|_| "MCP_CONFORMANCE_SCENARIO is not set".to_owned())?;
        let protocol_version = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION")
            .ok()
            .filter(|v| !v.is_empty());
        let context = match std::env::var("MCP_CONFORMANCE_CONTEXT") {
            Ok(text) if !text.trim().is_empty() => Some(
                serde_json::from_str(&text)
                    .map_err(|e| format!("MCP_CONFORMANCE_CONTEXT is not JSON: {e}"))?,
            ),
            _ => None,
        };
        Ok(Self {
            url,
            scenario,
            protocol_version,
            context,
            oauth: None,
        })
    }
}

fn init_logging() {
    let level = match std::env::var("CONFORMANCE_CLIENT_LOG").as_deref() {
        Ok("trace") => tracing::Level::TRACE,
        Ok("debug") => tracing::Level::DEBUG,
        Ok("warn") => tracing::Level::WARN,
        Ok("error") => tracing::Level::ERROR,
        _ => tracing::Level::INFO,
    };
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(level)
        .with_ansi(false)
        .init();
}

fn main() -> ExitCode {
    init_logging();
    let invocation = match Invocation::from_env() {
        Ok(i) => i,
        Err(e) => {
            eprintln!("conformance-client: {e}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("conformance-client: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    tracing::info!(
        scenario = %invocation.scenario,
        version = invocation.protocol_version.as_deref().unwrap_or("-"),
        url = %invocation.url,
        "running"
    );
    let outcome = runtime.block_on(async {
        tokio::time::timeout(SCENARIO_TIMEOUT, scenarios::run(&invocation)).await
    });
    match outcome {
        Ok(Ok(())) => {
            tracing::info!(scenario = %invocation.scenario, "done");
            ExitCode::SUCCESS
        }
        Ok(Err(e)) => {
            eprintln!("conformance-client: scenario {}: {e}", invocation.scenario);
            ExitCode::FAILURE
        }
        Err(_) => {
            eprintln!(
                "conformance-client: scenario {}: no outcome within {} s",
                invocation.scenario,
                SCENARIO_TIMEOUT.as_secs()
            );
            ExitCode::FAILURE
        }
    }
}
