//! `ferromcp inspect --web [TARGET]`: the web inspector. A page served on loopback that
//! connects to MCP servers (stdio commands, Streamable HTTP URLs; both protocol eras) and
//! shows and drives everything they offer, with a live log of every message.
//!
//! - [`security`]: the token, Host and Origin checks and the limits;
//! - [`server`]: the HTTP server (page, assets, API, event stream, sandbox origin);
//! - [`api`]: the JSON API; [`session`]: the connected servers and what waits for the user;
//! - [`events`]: the event log; [`tap`]: the transport wrapper that logs every message;
//! - [`oauth`]: OAuth in the browser (the sign-in URL shown in the page, the callback);
//! - [`assets`]: the page's files, embedded in the binary.

mod api;
mod assets;
mod events;
mod oauth;
mod security;
mod server;
mod session;
mod tap;

use std::io::Write;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

use self::security::{DEFAULT_LISTEN, Guard, Limits};
use self::server::Site;
use self::session::{ConnectRequest, State};

/// The web inspector's options (on `ferromcp inspect`).
#[derive(Debug, Default, Clone, clap::Args)]
pub(crate) struct WebArgs {
    /// Serve the web inspector instead of printing (its URL, token included, first on stdout).
    #[arg(long)]
    pub(crate) web: bool,
    /// Where the web inspector listens (loopback only unless --allow-non-loopback).
    #[arg(long, value_name = "ADDR", requires = "web", default_value = DEFAULT_LISTEN)]
    listen: String,
    /// Do not open a browser.
    #[arg(long, requires = "web")]
    no_open: bool,
    /// Allow --listen on a non-loopback address: anyone who can reach it and has the
    /// token can start processes here. Think twice.
    #[arg(long, requires = "web", verbatim_doc_comment)]
    allow_non_loopback: bool,
    /// Also accept NAME (on the listener's port) or NAME:PORT in the Host and Origin headers,
    /// e.g. the machine's name when --listen is 0.0.0.0 with --allow-non-loopback.
    /// Repeatable.
    #[arg(
        long,
        value_name = "NAME[:PORT]",
        requires = "web",
        verbatim_doc_comment
    )]
    allow_host: Vec<String>,
    /// Where the MCP Apps sandbox origin listens (default: a free port on --listen's address).
    #[arg(long, value_name = "ADDR", requires = "web")]
    sandbox_listen: Option<String>,
    /// At most N servers connected at once (default 8).
    #[arg(long, value_name = "N", requires = "web")]
    max_servers: Option<usize>,
    /// At most N server requests (elicitation, sampling) waiting for you at once (default 16).
    #[arg(long, value_name = "N", requires = "web")]
    max_pending: Option<usize>,
    /// Keep the last N events for a page that (re)loads (default 2000).
    #[arg(long, value_name = "N", requires = "web")]
    event_buffer: Option<usize>,
    /// At most N requests from the page to servers in flight at once (default 64).
    #[arg(long, value_name = "N", requires = "web")]
    max_requests: Option<usize>,
    /// At most N requests from the page in flight to one server (default 16).
    #[arg(long, value_name = "N", requires = "web")]
    max_requests_per_server: Option<usize>,
    /// At most BYTES in one API request body (default 4194304).
    #[arg(long, value_name = "BYTES", requires = "web")]
    max_body: Option<usize>,
}

impl WebArgs {
    fn limits(&self) -> Result<Limits, String> {
        let mut l = Limits::default();
        let positive = |flag: &str, v: usize| {
            if v == 0 {
                Err(format!("{flag} wants a positive number"))
            } else {
                Ok(v)
            }
        };
        if let Some(v) = self.max_servers {
            l.max_servers = positive("--max-servers", v)?;
        }
        if let Some(v) = self.max_pending {
            l.max_pending = positive("--max-pending", v)?;
            l.max_pending_per_server = l.max_pending_per_server.min(l.max_pending);
        }
        if let Some(v) = self.max_requests {
            l.max_requests = positive("--max-requests", v)?;
            l.max_requests_per_server = l.max_requests_per_server.min(l.max_requests);
        }
        if let Some(v) = self.max_requests_per_server {
            l.max_requests_per_server = positive("--max-requests-per-server", v)?;
        }
        if let Some(v) = self.event_buffer {
            l.event_buffer = v;
        }
        if let Some(v) = self.max_body {
            l.max_body = positive("--max-body", v)?;
        }
        Ok(l)
    }

    fn address(&self, flag: &str, text: &str) -> Result<SocketAddr, String> {
        let addr: SocketAddr = text
            .parse()
            .map_err(|_| format!("{flag} wants an IP address and port, got {text:?}"))?;
        if !security::is_loopback(&addr) && !self.allow_non_loopback {
            return Err(format!(
                "{flag} {addr} is not a loopback address: the inspector can start processes \
                 on this machine; add --allow-non-loopback if you really mean it"
            ));
        }
        Ok(addr)
    }
}

/// Runs the web inspector; `target`/`headers`/`protocol`: a server to connect at start.
pub(crate) fn run(
    args: &WebArgs,
    target: Option<&str>,
    headers: &[String],
    protocol: Option<&str>,
) -> ExitCode {
    let prepared = (|| {
        let limits = args.limits()?;
        if let Some(bad) = args
            .allow_host
            .iter()
            .find(|h| !security::valid_allow_host(h))
        {
            return Err(format!(
                "--allow-host wants NAME or NAME:PORT (a host name or an IP address), got {bad:?}"
            ));
        }
        let listen = args.address("--listen", &args.listen)?;
        let sandbox = match &args.sandbox_listen {
            Some(s) => args.address("--sandbox-listen", s)?,
            None => SocketAddr::new(listen.ip(), 0),
        };
        if let Some(t) = target {
            crate::target::Target::parse(t)?;
        }
        Ok::<_, String>((limits, listen, sandbox))
    })();
    let (limits, listen, sandbox) = match prepared {
        Ok(p) => p,
        Err(e) => return crate::fail(&e),
    };
    crate::init_logging();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return crate::fail(&format!("cannot start the async runtime: {e}")),
    };
    let outcome = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .map_err(|e| format!("--listen {listen}: {e}"))?;
        let bound = listener.local_addr().map_err(|e| e.to_string())?;
        let sandbox_listener = tokio::net::TcpListener::bind(sandbox)
            .await
            .map_err(|e| format!("--sandbox-listen {sandbox}: {e}"))?;
        let sandbox_bound = sandbox_listener.local_addr().map_err(|e| e.to_string())?;
        let token = security::new_token()?;
        let guard = Guard::new(bound, token.clone(), &args.allow_host);
        let sandbox_guard = Guard::new(sandbox_bound, token.clone(), &args.allow_host);
        let state = State::new(
            limits,
            guard.origin().to_owned(),
            Some(sandbox_guard.origin().to_owned()),
        );
        let url = format!("{}/?token={token}", guard.origin());
        let mut out = std::io::stdout();
        let _ = writeln!(out, "{url}");
        let _ = out.flush();
        crate::stderr_log::status!(
            "ferromcp: web inspector on {} (MCP Apps sandbox on {}); Ctrl-C ends it",
            guard.origin(),
            sandbox_guard.origin()
        );
        let sandbox_origins = sandbox_guard.origins().to_vec();
        tokio::spawn(server::serve_sandbox(
            sandbox_listener,
            sandbox_guard,
            guard.origins().to_vec(),
        ));
        let site = Arc::new(Site {
            guard,
            state: state.clone(),
            streams: AtomicUsize::new(0),
            sandbox_origins,
        });
        tokio::spawn(server::serve(listener, site));
        if !args.no_open {
            open_browser(&url);
        }
        if let Some(t) = target {
            let req = ConnectRequest {
                target: t.to_owned(),
                headers: headers.to_vec(),
                protocol: protocol.map(str::to_owned),
                oauth: false,
            };
            if let Err((_, e)) = state.connect(req).await {
                crate::stderr_log::status!("ferromcp: {e}");
            }
        }
        std::future::pending::<()>().await;
        Ok::<_, String>(())
    });
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => crate::fail(&e),
    }
}

/// Opens `url` in the desktop's browser, when there is a desktop.
fn open_browser(url: &str) {
    let (program, args): (&str, Vec<&str>) = if cfg!(target_os = "macos") {
        ("open", vec![url])
    } else if cfg!(windows) {
        ("cmd", vec!["/C", "start", "", url])
    } else {
        let display = ["DISPLAY", "WAYLAND_DISPLAY"]
            .iter()
            .any(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty()));
        if !display {
            return;
        }
        ("xdg-open", vec![url])
    };
    let _ = std::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
}
