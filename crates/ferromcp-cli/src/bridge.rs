//! `ferromcp bridge`: one transport in front of another.
//!
//! # `--stdio-to-http ADDR -- COMMAND…`: a stdio server over Streamable HTTP
//!
//! The HTTP side is ferromcp's own Streamable HTTP server (both eras, sessions, SSE, the
//! security checks and limits of `serve --http`). Behind it is not an MCP-typed server but a
//! raw relay, one middleware layer that answers every request without calling the kernel's
//! ladder: it forwards the request's method and params (the `_meta` envelope and progress
//! token included) unchanged to the child over a JSON-RPC dispatcher on the child's stdio, and
//! returns the child's result or error unchanged. So `initialize` and `server/discover` are the
//! child's own, the results are the child's (no reshaping), and methods ferromcp does not know
//! pass through. The child's messages go back to the HTTP client: progress to the request
//! that carries its token, other notifications and server→client requests (sampling,
//! elicitation, roots) to the request in flight (the most recent one) or, with none, to the
//! session's standalone GET stream. Cancelling a request over HTTP cancels it in the child.
//!
//! Eras: a stdio server locks its era on the first request, and refuses a second
//! `initialize`, so the bridge runs **one child per handshake-era HTTP session** (started by
//! the session's `initialize`, stopped when the session ends) and **one shared child for all
//! 2026-07-28 traffic** (stateless; started on first use, restarted if it exits).
//!
//! # `--http-to-stdio URL`: an HTTP server on this process's stdio
//!
//! Also a raw relay, with no kernel at all: a JSON-RPC dispatcher on this process's
//! stdin/stdout and the dispatcher of ferromcp-client's `HttpTransport` forward every
//! request, result, error and notification to each other unchanged, in both directions
//! (server→client requests and progress included). Requests keep their ids. The HTTP
//! transport reads what it needs from the messages themselves: the session id and version
//! from `initialize`, the 2026-07-28 headers from each request's envelope. Neither side's
//! `notifications/cancelled` is forwarded as such: a cancelled request's relay is dropped,
//! which cancels it on the other side in that side's own way (a cancel notification on
//! stdio and in handshake-era HTTP, an aborted POST at 2026-07-28). When stdin closes, the
//! HTTP session is ended (DELETE).

use std::process::{ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use ferromcp_client::Transport;
use ferromcp_dispatch::{
    BoxFuture, CallOptions, DispatchContext, Dispatcher, DispatcherConfig, Handler, HandlerError,
    JsonRpcDispatcher, LineTransportConfig, Outbound, TransportInfo, TransportKind, line_transport,
};
use ferromcp_http_server::{HttpConfig, HttpServer};
use ferromcp_server::middleware::McpResult;
use ferromcp_server::{Connection, McpRequest, Middleware, Next, RequestContext, Server};
use ferromcp_types::jsonrpc::{ErrorObject, Payload};
use serde_json::Value;

use crate::split::split;
use crate::target::Header;

/// After the options of `ferromcp bridge --help`.
pub(crate) const AFTER: &str = "\
--stdio-to-http ADDR [OPTIONS] -- COMMAND [ARGS…]
    Serves the stdio server COMMAND over Streamable HTTP at http://ADDR/mcp (both protocol
    eras). Every request and notification is relayed as raw JSON-RPC, unchanged: one child
    per handshake-era session (started by its initialize, stopped when the session ends),
    one shared child for 2026-07-28 requests. Progress, logs and server→client requests
    travel back on the request's stream (or the session's GET stream).
    COMMAND may also be one quoted, shell-style string.
    Without --allowed-host only loopback Host names on the bound port are answered.

--http-to-stdio URL [--header NAME:VALUE]... [--proxy URL | --no-proxy] [--cacert FILE]...
        [--cert FILE --key FILE] [--connect-timeout SECONDS] [--read-timeout SECONDS]
    Serves the Streamable HTTP server at URL on this process's stdin/stdout.

Examples:
    ferromcp bridge --stdio-to-http 127.0.0.1:8000 -- python my_server.py
    ferromcp bridge --stdio-to-http 127.0.0.1:8000 -- \"python my_server.py --name 'a b'\"
    ferromcp bridge --http-to-stdio https://example.com/mcp --header \"Authorization: Bearer $T\"";

/// `ferromcp bridge (--stdio-to-http ADDR [OPTIONS] -- COMMAND… | --http-to-stdio URL
/// [--header NAME:VALUE]...)`.
#[derive(Debug, Default, clap::Args)]
#[command(
    override_usage = "ferromcp bridge --stdio-to-http ADDR [OPTIONS] -- COMMAND [ARGS…]\n       \
                      ferromcp bridge --http-to-stdio URL [--header NAME:VALUE]... [HTTP CLIENT OPTIONS]",
    after_help = AFTER
)]
pub(crate) struct BridgeArgs {
    /// Serve the stdio server COMMAND (after `--`) over Streamable HTTP at http://ADDR/mcp.
    #[arg(long, value_name = "ADDR", conflicts_with = "http_to_stdio")]
    stdio_to_http: Option<String>,
    /// Serve the Streamable HTTP server at URL on this process's stdin/stdout.
    #[arg(long, value_name = "URL")]
    http_to_stdio: Option<String>,
    /// Answer requests with JSON, never SSE (--stdio-to-http).
    #[arg(long, requires = "stdio_to_http", conflicts_with = "http_to_stdio")]
    json_response: bool,
    /// Allow this Host header (repeatable; --stdio-to-http).
    #[arg(
        long,
        value_name = "H",
        requires = "stdio_to_http",
        conflicts_with = "http_to_stdio"
    )]
    allowed_host: Vec<String>,
    /// Allow this Origin header (repeatable; --stdio-to-http).
    #[arg(
        long,
        value_name = "O",
        requires = "stdio_to_http",
        conflicts_with = "http_to_stdio"
    )]
    allowed_origin: Vec<String>,
    /// Accept any Host and Origin (only behind a proxy that checks them; --stdio-to-http).
    #[arg(long, requires = "stdio_to_http", conflicts_with = "http_to_stdio")]
    disable_host_checks: bool,
    /// An HTTP header for every request (repeatable; --http-to-stdio).
    #[arg(
        long,
        value_name = "NAME:VALUE",
        requires = "http_to_stdio",
        conflicts_with = "stdio_to_http"
    )]
    header: Vec<String>,
    // How the HTTP client connects (--http-to-stdio only; checked in `run`).
    #[command(flatten)]
    http: crate::http_client::HttpClientArgs,
    /// The stdio server to run (--stdio-to-http), after `--`.
    #[arg(last = true, value_name = "COMMAND", conflicts_with = "http_to_stdio")]
    command: Vec<String>,
}

/// Runs `ferromcp bridge …`.
pub(crate) fn run(args: &BridgeArgs) -> ExitCode {
    if let Some(addr) = &args.stdio_to_http {
        if args.http.is_set() {
            return crate::fail(
                "--proxy, --no-proxy, --cacert, --cert, --key, --connect-timeout and \
                 --read-timeout apply to --http-to-stdio only; see `ferromcp bridge --help`",
            );
        }
        return match args.stdio_to_http_config() {
            Ok((config, argv)) => stdio_to_http(addr, config, argv),
            Err(e) => crate::fail(&format!("{e}; see `ferromcp bridge --help`")),
        };
    }
    if let Some(url) = &args.http_to_stdio {
        let settings = args
            .header
            .iter()
            .map(|h| Header::parse(h))
            .collect::<Result<Vec<Header>, String>>()
            .and_then(|headers| Ok((headers, args.http.config()?)));
        return match settings {
            Ok((headers, client)) => http_to_stdio(url, &headers, &client),
            Err(e) => crate::fail(&format!("{e}; see `ferromcp bridge --help`")),
        };
    }
    // Neither mode: the help (as before clap).
    crate::print_out(&crate::cli::long_help(Some("bridge")));
    ExitCode::SUCCESS
}

impl BridgeArgs {
    /// `--stdio-to-http`: the HTTP settings and the child's argv.
    fn stdio_to_http_config(&self) -> Result<(HttpConfig, Vec<String>), String> {
        let mut config = HttpConfig::default();
        if self.json_response {
            config = config.json_response(true);
        }
        if self.disable_host_checks {
            config = config.disable_host_checks();
        }
        let argv = match self.command.as_slice() {
            [] => return Err("missing `-- COMMAND…` (the stdio server to run)".to_owned()),
            [one] => split(one).map_err(|e| format!("cannot read the command {one:?}: {e}"))?,
            many => many.to_vec(),
        };
        if !self.allowed_host.is_empty() {
            config = config.allowed_hosts(self.allowed_host.clone());
        }
        if !self.allowed_origin.is_empty() {
            config = config.allowed_origins(self.allowed_origin.clone());
        }
        Ok((config, argv))
    }
}

fn http_to_stdio(
    url: &str,
    headers: &[Header],
    client: &ferromcp_client::transport::http::HttpClientConfig,
) -> ExitCode {
    crate::init_logging();
    let transport = match crate::target::http_transport(url, headers, client) {
        Ok(t) => t,
        Err(e) => return crate::fail(&e),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return crate::fail(&format!("cannot start the async runtime: {e}")),
    };
    let outcome = runtime.block_on(async {
        let connected = transport
            .open()
            .await
            .map_err(|e| format!("connecting to {url}: {e}"))?;
        let remote = connected.dispatcher().clone();
        // Claims fd 0/1 (a stray write to stdout cannot corrupt the wire), no thread hop.
        let (source, sink) =
            ferromcp_server::stdio::stdio_transport(LineTransportConfig::default())
                .map_err(|e| format!("cannot serve on stdio: {e}"))?;
        let local = JsonRpcDispatcher::new(
            source,
            sink,
            DispatcherConfig::default().transport(TransportInfo::new(TransportKind::Stdio, true)),
        );
        let to_local: Arc<dyn Handler> = Arc::new(Forward {
            peer: Arc::new(local.clone()),
        });
        let to_remote: Arc<dyn Handler> = Arc::new(Forward {
            peer: remote.clone(),
        });
        let remote_run = remote.clone();
        let remote_task = tokio::spawn(async move { remote_run.run(to_local).await });
        // Until stdin closes (or the remote side ends: then close stdio too).
        let local_run = local.clone();
        tokio::select! {
            r = local_run.run(to_remote) => {
                if let Err(e) = r {
                    tracing::warn!(error = %e, "the stdio side failed");
                }
            }
            _ = remote_task => {
                crate::stderr_log::status!("ferromcp: the HTTP connection to {url} ended");
                local.close();
            }
        }
        connected.close().await;
        Ok::<(), String>(())
    });
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => crate::fail(&e),
    }
}

/// Relays one side's messages to the other side's dispatcher, unchanged.
struct Forward {
    peer: Arc<dyn Dispatcher>,
}

impl Handler for Forward {
    fn on_request(
        self: Arc<Self>,
        ctx: DispatchContext,
        method: String,
        params: Option<Payload>,
    ) -> BoxFuture<'static, Result<Payload, HandlerError>> {
        let mut options = CallOptions::new();
        if let Some(id) = ctx.request_id() {
            options = options.request_id(id.clone());
        }
        let call = self.peer.send_request(&method, params, options);
        Box::pin(async move { call.await.map_err(HandlerError::from) })
    }

    fn on_notify(
        self: Arc<Self>,
        _ctx: DispatchContext,
        method: String,
        params: Option<Payload>,
    ) -> BoxFuture<'static, ()> {
        if method == ferromcp_dispatch::utility::CANCELLED {
            // The dispatcher cancelled the relay; dropping it cancels the other side.
            return Box::pin(std::future::ready(()));
        }
        let send = self.peer.notify(&method, params);
        Box::pin(send)
    }
}

fn stdio_to_http(addr: &str, config: HttpConfig, argv: Vec<String>) -> ExitCode {
    crate::init_logging();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return crate::fail(&format!("cannot start the async runtime: {e}")),
    };
    let relay = Relay {
        argv: Arc::new(argv),
        modern: Arc::default(),
    };
    let server = match relay_server(&relay) {
        Ok(s) => s,
        Err(e) => return crate::fail(&format!("cannot build the relay: {e}")),
    };
    let shown = relay.argv.join(" ");
    let served = runtime.block_on(async {
        let server = HttpServer::bind(addr, server, config).await?;
        crate::stderr_log::status!(
            "ferromcp: bridging `{shown}` at http://{}/mcp",
            server.local_addr()
        );
        server.run().await
    });
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => crate::fail(&format!("serving {addr}: {e}")),
    }
}

/// The kernel value the HTTP server runs: the relay as its only middleware, plus forwarders
/// for the client notifications the kernel delivers to handlers.
fn relay_server(relay: &Relay) -> Result<Server, String> {
    let mut builder = Server::builder("ferromcp-bridge", env!("CARGO_PKG_VERSION"))
        .tracing(false)
        .middleware(relay.clone());
    for method in [
        "notifications/initialized",
        "notifications/roots/list_changed",
    ] {
        let relay = relay.clone();
        builder =
            builder.on_notification_method(method, move |ctx: RequestContext, params: Value| {
                let link = relay.link_for(ctx.connection());
                async move {
                    let link = link?;
                    link.dispatcher
                        .notify(ctx.method(), Some(Payload::from(params)))
                        .await;
                    Ok::<(), HandlerError>(())
                }
            });
    }
    builder.build().map_err(|e| e.to_string())
}

/// Finds (or starts) the child behind a connection and forwards requests to it.
#[derive(Clone)]
struct Relay {
    argv: Arc<Vec<String>>,
    /// The child shared by 2026-07-28 requests.
    modern: Arc<Mutex<Option<Arc<ChildLink>>>>,
}

impl Relay {
    /// The child for `connection`: its session's own (handshake era), else the shared one.
    fn link_for(&self, connection: &Connection) -> Result<Arc<ChildLink>, ErrorObject> {
        if connection.session_id().is_some() {
            if let Some(link) = connection.state::<Arc<ChildLink>>() {
                return Ok(Arc::clone(&*link));
            }
            let link = ChildLink::start(&self.argv, Some(connection.clone()))?;
            connection.insert_state(link.clone());
            let closing = link.clone();
            connection.on_close(move || async move { closing.stop() });
            return Ok(link);
        }
        let mut shared = self.modern.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(link) = shared
            .as_ref()
            .filter(|l| !l.closed.load(Ordering::Acquire))
        {
            return Ok(link.clone());
        }
        let link = ChildLink::start(&self.argv, None)?;
        *shared = Some(link.clone());
        Ok(link)
    }
}

impl Middleware for Relay {
    fn handle(&self, request: McpRequest, _next: Next) -> BoxFuture<'static, McpResult> {
        let link = self.link_for(request.ctx.connection());
        Box::pin(async move {
            let link = link?;
            let McpRequest {
                ctx,
                method,
                params,
                ..
            } = request;
            let token = params
                .as_ref()
                .and_then(|p| p.get("_meta"))
                .and_then(|m| m.get("progressToken"))
                .cloned();
            let flight = link.routes.enter(token, ctx);
            let answer = link
                .dispatcher
                .send_request(&method, params.into_payload(), CallOptions::new())
                .await;
            drop(flight);
            let value = answer?
                .into_value()
                .map_err(|e| ErrorObject::internal_error(format!("the server's result: {e}")))?;
            match value {
                Value::Object(map) => Ok(map.into()),
                other => Err(ErrorObject::internal_error(format!(
                    "the server answered {method} with a non-object result: {other}"
                ))
                .into()),
            }
        })
    }
}

/// A running child and the dispatcher that speaks JSON-RPC with it.
struct ChildLink {
    dispatcher: JsonRpcDispatcher,
    routes: Arc<Routes>,
    closed: Arc<AtomicBool>,
    process: Mutex<Option<tokio::process::Child>>,
}

impl ChildLink {
    fn start(argv: &[String], session: Option<Connection>) -> Result<Arc<Self>, ErrorObject> {
        let unavailable = |detail: String| {
            tracing::error!("{detail}");
            ErrorObject::internal_error(detail)
        };
        let Some((program, args)) = argv.split_first() else {
            return Err(unavailable("the bridged command is empty".to_owned()));
        };
        let mut child = tokio::process::Command::new(crate::target::program(program))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| unavailable(format!("cannot start `{}`: {e}", argv.join(" "))))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(unavailable("the child's stdio is not piped".to_owned()));
        };
        let (source, sink) = line_transport(stdout, stdin, LineTransportConfig::default());
        let dispatcher = JsonRpcDispatcher::new(
            source,
            sink,
            DispatcherConfig::default().transport(TransportInfo::new(TransportKind::Stdio, true)),
        );
        let routes = Arc::new(Routes {
            next: AtomicU64::new(0),
            in_flight: Mutex::default(),
            session: Mutex::new(session),
        });
        let closed = Arc::new(AtomicBool::new(false));
        let run = dispatcher.clone();
        let handler = Arc::new(ChildHandler {
            routes: routes.clone(),
        });
        let done = closed.clone();
        tokio::spawn(async move {
            if let Err(e) = run.run(handler).await {
                tracing::warn!(error = %e, "the bridged child's dispatcher failed");
            }
            done.store(true, Ordering::Release);
        });
        tracing::debug!(command = %argv.join(" "), "bridged child started");
        Ok(Arc::new(Self {
            dispatcher,
            routes,
            closed,
            process: Mutex::new(Some(child)),
        }))
    }

    /// Closes the child's stdin (it should exit); the child is killed when dropped.
    fn stop(&self) {
        self.dispatcher.close();
        self.closed.store(true, Ordering::Release);
        // Forget the session's connection: it holds this link in its state.
        self.routes.forget();
        let child = self
            .process
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(mut child) = child {
            tokio::spawn(async move {
                let wait = tokio::time::timeout(std::time::Duration::from_secs(2), child.wait());
                if wait.await.is_err() {
                    let _ = child.start_kill();
                }
            });
        }
    }
}

/// Where the child's messages go: the requests relayed to it that are in flight, and the
/// session whose standalone stream takes the rest.
struct Routes {
    next: AtomicU64,
    in_flight: Mutex<Vec<Flight>>,
    session: Mutex<Option<Connection>>,
}

struct Flight {
    seq: u64,
    token: Option<Value>,
    ctx: RequestContext,
}

/// Removes its flight when dropped (the relayed request finished or was cancelled).
struct FlightGuard {
    routes: Arc<Routes>,
    seq: u64,
}

impl Drop for FlightGuard {
    fn drop(&mut self) {
        let mut flights = self.routes.flights();
        flights.retain(|f| f.seq != self.seq);
    }
}

impl Routes {
    fn flights(&self) -> std::sync::MutexGuard<'_, Vec<Flight>> {
        self.in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn enter(self: &Arc<Self>, token: Option<Value>, ctx: RequestContext) -> FlightGuard {
        let seq = self.next.fetch_add(1, Ordering::Relaxed);
        self.flights().push(Flight { seq, token, ctx });
        FlightGuard {
            routes: self.clone(),
            seq,
        }
    }

    /// The request a message of the child belongs to: the one with this progress token, else
    /// the most recent one in flight.
    fn pick(&self, token: Option<&Value>) -> Option<RequestContext> {
        let flights = self.flights();
        token
            .and_then(|t| flights.iter().find(|f| f.token.as_ref() == Some(t)))
            .or_else(|| flights.last())
            .map(|f| f.ctx.clone())
    }

    /// The session's connection, for messages no request in flight takes.
    fn session(&self) -> Option<Connection> {
        self.session
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Drops every reference to HTTP-side state (the child is stopping).
    fn forget(&self) {
        self.flights().clear();
        self.session
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
    }
}

/// Serves the child's messages by sending them on to the HTTP client.
struct ChildHandler {
    routes: Arc<Routes>,
}

impl Handler for ChildHandler {
    fn on_request(
        self: Arc<Self>,
        _ctx: DispatchContext,
        method: String,
        params: Option<Payload>,
    ) -> BoxFuture<'static, Result<Payload, HandlerError>> {
        let target = self.routes.pick(None);
        let session = self.routes.session();
        Box::pin(async move {
            let answer = match (target, session) {
                (Some(ctx), _) => {
                    ctx.peer()
                        .send_request(&method, params, CallOptions::new())
                        .await
                }
                (None, Some(connection)) => {
                    connection
                        .send_request(&method, params, CallOptions::new())
                        .await
                }
                (None, None) => Err(ErrorObject::invalid_request(format!(
                    "no HTTP client to forward {method} to"
                ))),
            };
            answer.map_err(HandlerError::from)
        })
    }

    fn on_notify(
        self: Arc<Self>,
        _ctx: DispatchContext,
        method: String,
        params: Option<Payload>,
    ) -> BoxFuture<'static, ()> {
        let token = if method == ferromcp_dispatch::utility::PROGRESS {
            params
                .as_ref()
                .and_then(|p| p.parse::<Value>().ok())
                .and_then(|p| p.get("progressToken").cloned())
        } else {
            None
        };
        let target = self.routes.pick(token.as_ref());
        let session = self.routes.session();
        Box::pin(async move {
            match (target, session) {
                (Some(ctx), _) => ctx.peer().notify(&method, params).await,
                (None, Some(connection)) => connection.notify(&method, params).await,
                (None, None) => tracing::debug!(method, "a notification of the child dropped"),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::BridgeArgs;
    use crate::cli::{Command, parse};

    fn bridge(args: &[&str]) -> Result<BridgeArgs, String> {
        let argv = ["ferromcp", "bridge"].iter().chain(args);
        match parse(argv).map_err(|e| e.to_string())?.command {
            Some(Command::Bridge(a)) => Ok(a),
            other => Err(format!("{other:?}")),
        }
    }

    fn stdio_to_http(args: &[&str]) -> Result<(String, Vec<String>), String> {
        let a = bridge(args)?;
        let (_, argv) = a.stdio_to_http_config()?;
        Ok((a.stdio_to_http.unwrap_or_default(), argv))
    }

    #[test]
    fn parses() {
        let a = bridge(&[
            "--stdio-to-http",
            "127.0.0.1:0",
            "--json-response",
            "--allowed-host",
            "a:*",
            "--",
            "ferromcp",
            "serve",
        ])
        .unwrap_or_else(|e| unreachable!("{e}"));
        let (c, argv) = a
            .stdio_to_http_config()
            .unwrap_or_else(|e| unreachable!("{e}"));
        assert_eq!(a.stdio_to_http.as_deref(), Some("127.0.0.1:0"));
        assert!(c.json_response);
        assert_eq!(c.allowed_hosts, Some(vec!["a:*".to_owned()]));
        assert_eq!(argv, ["ferromcp", "serve"]);
        let (_, argv) = stdio_to_http(&["--stdio-to-http", "x", "--", "my 'server x'"])
            .unwrap_or_else(|e| unreachable!("{e}"));
        assert_eq!(argv, ["my", "server x"]);
        assert!(stdio_to_http(&["--stdio-to-http"]).is_err());
        assert!(stdio_to_http(&["--stdio-to-http", "x"]).is_err());
        assert!(stdio_to_http(&["--stdio-to-http", "x", "--"]).is_err());
        assert!(stdio_to_http(&["--stdio-to-http", "x", "--bogus", "--", "a"]).is_err());
        let a = bridge(&[
            "--http-to-stdio",
            "http://h/mcp",
            "--header",
            "A: b",
            "--header=C:d",
        ])
        .unwrap_or_else(|e| unreachable!("{e}"));
        assert_eq!(a.http_to_stdio.as_deref(), Some("http://h/mcp"));
        assert_eq!(a.header.len(), 2);
        assert!(bridge(&["--http-to-stdio"]).is_err());
        assert!(bridge(&["--http-to-stdio", "u", "--header"]).is_err());
        assert!(bridge(&["--http-to-stdio", "u", "--x"]).is_err());
        // One mode at a time; each mode's options need it.
        assert!(bridge(&["--http-to-stdio", "u", "--stdio-to-http", "a", "--", "x"]).is_err());
        assert!(bridge(&["--http-to-stdio", "u", "--json-response"]).is_err());
        assert!(bridge(&["--stdio-to-http", "a", "--header", "A: b", "--", "x"]).is_err());
        assert!(bridge(&[]).is_ok());
    }
}
