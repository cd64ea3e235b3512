//! `ferromcp gateway CONFIG.toml [--http ADDR [--redis URL]]`: the servers a TOML file names, composed
//! into one (the library's `ferromcp-compose`) and served on stdio or over Streamable HTTP,
//! with an audit line per tool call on stderr.
//!
//! ```toml
//! [servers.files]
//! command = "my-files-server"
//! args = ["--root", "/srv"]
//! env = { LOG = "warn" }
//! cwd = "/srv"
//! tools.deny = ["delete_*"]
//! timeout = 30          # seconds per forwarded request
//! max_concurrency = 8   # requests forwarded at a time
//! max_queued_reports = 64 # progress/log reports one call may queue for its client
//!
//! [servers.search]
//! url = "https://search.example.com/mcp"
//! headers = { Authorization = "Bearer ..." }
//! tools.allow = ["search", "fetch_*"]
//!
//! [rate_limit]          # tool calls per minute
//! per_principal = 600
//! total = 6000
//!
//! [health]              # seconds (see health.rs)
//! ping_interval = 2
//! backoff_min = 1
//! backoff_max = 60
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use ferromcp_client::{HttpTransport, Lifecycle, StdioTransport};
use ferromcp_compose::{Backend, Composer};
use ferromcp_http_server::{HttpConfig, HttpServer};
use serde::Deserialize;
use tokio::sync::watch;

/// Writes a status line to stderr, queued (a stderr nobody reads never blocks the gateway,
/// F40); a closed stderr drops it (`eprintln!` would panic the task that reports, F35).
macro_rules! status {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!($crate::stderr_log::line(), $($arg)*);
    }};
}

mod audit;
mod health;

use audit::{Audit, Limiter};
use health::{Health, HealthConfig, supervise, try_mount};

/// After the options of `ferromcp gateway --help`.
pub(crate) const AFTER: &str = "\
CONFIG.toml names the servers to mount, each under [servers.NAME] (NAME: letters, digits and
'-'): `command` (+ `args`, `env`, `cwd`) starts a stdio server, `url` (+ `headers`) reaches a
Streamable HTTP server. Per server: `tools.allow` / `tools.deny` (patterns with * and ?; deny
wins; no allow list allows every tool), `timeout` (seconds per forwarded request, default 60)
`max_concurrency` (requests forwarded at a time, default 64), `max_queued_reports` (the
progress and log reports one forwarded call may queue for its client, default 64; a server
sending faster has the rest dropped) and `lifecycle` (the era spoken
to it: `auto`, the default, uses 2026-07-28 when the server can; `handshake` keeps to
2025-11-25, whose tools' task support shows on the gateway's tools; `modern`). A `[rate_limit]` table
bounds tool calls per minute: `per_principal` (default 600) and `total` (default 6000).

A server that fails to start or stops answering (pinged every 2 s) is reported on stderr, its
tools leave the gateway (clients are told the list changed), and it is tried again with
backoff (1 s, doubling up to 60 s); the others keep serving. A `[health]` table sets these, in
seconds: `ping_interval` (default 2), `ping_timeout` (default 10), `backoff_min` (default 1)
and `backoff_max` (default 60). Editing CONFIG.toml while the
gateway runs applies the change (servers added, removed or changed) without dropping
sessions; a file that does not parse is reported and the running config kept.

Their tools are served as NAME_TOOL, prompts as NAME_PROMPT, resources as NAME+URI, on stdio
or, with --http ADDR, over Streamable HTTP at http://ADDR/mcp with the same defaults as
`ferromcp serve --http` (loopback Host and Origin values only; --auth puts it behind the
same embedded OAuth 2.1 authorization server). Every tool call is logged on stderr:
`ferromcp gateway: audit who=... backend=... tool=... outcome=... duration_ms=...`, who
being the authenticated principal (subject/client) with --auth, else the client's IP address;
a call the client cancels or abandons is logged with outcome=cancelled.

With --redis URL (a ferromcp built with the `redis` feature) several gateway nodes behind one
load balancer share the front's handshake-era sessions and resumable streams through that
Redis, as `ferromcp serve --http --redis`: each node runs its own backends from the same
config; a session lives on the node that opened it (requests reaching another node are
forwarded there), so its calls, streams and tasks are served by that node's backends. When
that node dies its sessions end with it (404 on the others, the client initializes again).

Examples:
    ferromcp gateway servers.toml
    ferromcp gateway servers.toml --http 127.0.0.1:8000
    ferromcp gateway servers.toml --http 127.0.0.1:8000 --auth
    ferromcp gateway servers.toml --http 127.0.0.1:8001 --redis redis://127.0.0.1:6379";

/// `ferromcp gateway CONFIG.toml [--http ADDR [--auth] [--redis URL]]`.
#[derive(Debug, clap::Args)]
pub(crate) struct GatewayArgs {
    /// The TOML file naming the servers to mount.
    #[arg(value_name = "CONFIG.toml")]
    pub(crate) config: PathBuf,
    /// Serve over Streamable HTTP at http://ADDR/mcp instead of stdio.
    #[arg(long, value_name = "ADDR")]
    pub(crate) http: Option<String>,
    /// The front's authentication: the same options as `ferromcp serve --http`.
    #[command(flatten)]
    pub(crate) front: crate::serve_http::FrontAuthArgs,
    /// `--redis URL`: the front's sessions and streams shared with other gateway nodes, as
    /// `ferromcp serve --http --redis`.
    #[command(flatten)]
    pub(crate) scale: crate::serve_http::RedisArgs,
    /// `--trusted-proxy CIDR`: the reverse proxies whose `X-Forwarded-For` is believed, as
    /// `ferromcp serve --http --trusted-proxy`.
    #[command(flatten)]
    pub(crate) proxy: crate::serve_http::ProxyArgs,
}

/// The configuration file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    #[serde(default)]
    servers: BTreeMap<String, ServerConfig>,
    /// `[rate_limit]`: tool calls per minute, per principal and in total.
    #[serde(default)]
    rate_limit: RateLimit,
    /// `[health]`: the backends' pings and the backoff of their retries.
    #[serde(default)]
    health: HealthConfig,
}

/// The default `rate_limit.per_principal`: tool calls one principal (the authenticated
/// subject and client, else the client's IP address, else the stdio peer) may make through
/// the gateway per minute.
pub(crate) const DEFAULT_CALLS_PER_PRINCIPAL_PER_MINUTE: u32 = 600;
/// The default `rate_limit.total`: tool calls all principals together may make through the
/// gateway per minute (it also bounds how many principals are tracked at once).
pub(crate) const DEFAULT_CALLS_PER_MINUTE: u32 = 6000;
/// The rate limit's window.
const RATE_WINDOW: Duration = Duration::from_secs(60);

/// The `[rate_limit]` table.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct RateLimit {
    per_principal: u32,
    total: u32,
}

impl Default for RateLimit {
    fn default() -> Self {
        Self {
            per_principal: DEFAULT_CALLS_PER_PRINCIPAL_PER_MINUTE,
            total: DEFAULT_CALLS_PER_MINUTE,
        }
    }
}

/// One `[servers.NAME]` table.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct ServerConfig {
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    cwd: Option<PathBuf>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    tools: ToolsConfig,
    /// Seconds.
    timeout: Option<f64>,
    max_concurrency: Option<usize>,
    /// `Backend::max_queued_reports`.
    max_queued_reports: Option<usize>,
    /// The era the gateway speaks to it: `auto` (the default: 2026-07-28 when it can),
    /// `handshake` (2025-11-25) or `modern` (2026-07-28).
    lifecycle: Option<String>,
}

/// `tools.allow` / `tools.deny`.
#[derive(Debug, Default, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolsConfig {
    #[serde(default)]
    allow: Vec<String>,
    #[serde(default)]
    deny: Vec<String>,
}

impl ToolsConfig {
    fn keeps(&self, tool: &str) -> bool {
        (self.allow.is_empty() || self.allow.iter().any(|p| glob(p, tool)))
            && !self.deny.iter().any(|p| glob(p, tool))
    }
}

/// Whether `text` matches `pattern` (`*`: any run of characters, `?`: any one).
fn glob(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ti));
                pi += 1;
            }
            Some(&c) if c == '?' || c == t[ti] => {
                pi += 1;
                ti += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    pi = sp + 1;
                    ti = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// Reads and checks the configuration file.
fn read_config(path: &Path) -> Result<Config, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let config: Config = toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    if config.rate_limit.per_principal == 0 || config.rate_limit.total == 0 {
        return Err(format!(
            "{}: [rate_limit] `per_principal` and `total` must be at least 1",
            path.display()
        ));
    }
    config
        .health
        .check()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if config.servers.is_empty() {
        return Err(format!("{}: no [servers.NAME] table", path.display()));
    }
    for (name, server) in &config.servers {
        if !ferromcp_compose::is_valid_mount_name(name) {
            return Err(format!(
                "{}: invalid mount name {name:?}: use letters, digits and '-', starting with a \
                 letter",
                path.display()
            ));
        }
        backend(name, server.clone())?;
    }
    Ok(config)
}

/// The backend one `[servers.NAME]` table describes.
fn backend(name: &str, server: ServerConfig) -> Result<Backend, String> {
    let mut backend = match (server.command, server.url) {
        (Some(command), None) => {
            if !server.headers.is_empty() {
                return Err(format!("[servers.{name}]: `headers` go with `url`"));
            }
            let (args, env, cwd) = (server.args, server.env, server.cwd);
            Backend::stdio(move || {
                let mut t = StdioTransport::new(&command).args(&args);
                for (k, v) in &env {
                    t = t.env(k, v);
                }
                if let Some(dir) = &cwd {
                    t = t.current_dir(dir);
                }
                t
            })
        }
        (None, Some(url)) => {
            if !server.args.is_empty() || !server.env.is_empty() || server.cwd.is_some() {
                return Err(format!(
                    "[servers.{name}]: `args`, `env` and `cwd` go with `command`"
                ));
            }
            let mut t = HttpTransport::new(&url).map_err(|e| format!("[servers.{name}]: {e}"))?;
            for (k, v) in &server.headers {
                let k = http::HeaderName::try_from(k.as_str())
                    .map_err(|e| format!("[servers.{name}] header {k:?}: {e}"))?;
                let v = http::HeaderValue::try_from(v.as_str())
                    .map_err(|e| format!("[servers.{name}] header {k}: {e}"))?;
                t = t.header(k, v);
            }
            Backend::transport(move || t.clone())
        }
        _ => {
            return Err(format!(
                "[servers.{name}]: give exactly one of `command` and `url`"
            ));
        }
    };
    if let Some(secs) = server.timeout {
        let d = Duration::try_from_secs_f64(secs)
            .ok()
            .filter(|d| !d.is_zero())
            .ok_or_else(|| {
                format!("[servers.{name}]: `timeout` must be a positive number of seconds")
            })?;
        backend = backend.timeout(d);
    }
    if let Some(era) = &server.lifecycle {
        backend = backend.lifecycle(match era.as_str() {
            "auto" => Lifecycle::Auto,
            "handshake" => Lifecycle::Handshake,
            "modern" => Lifecycle::Modern,
            _ => {
                return Err(format!(
                    "[servers.{name}]: `lifecycle` is one of \"auto\", \"handshake\" and \"modern\""
                ));
            }
        });
    }
    if let Some(n) = server.max_concurrency {
        if n == 0 {
            return Err(format!(
                "[servers.{name}]: `max_concurrency` must be at least 1"
            ));
        }
        backend = backend.max_in_flight(n);
    }
    match server.max_queued_reports {
        Some(0) => {
            return Err(format!(
                "[servers.{name}]: `max_queued_reports` must be at least 1"
            ));
        }
        Some(n) => backend = backend.max_queued_reports(n),
        None => {}
    }
    let tools = server.tools;
    if !tools.allow.is_empty() || !tools.deny.is_empty() {
        backend = backend.tool_filter(move |tool| tools.keeps(tool));
    }
    Ok(backend)
}

/// How often the config file is checked for changes.
const RELOAD_POLL: Duration = Duration::from_secs(1);

/// The supervised backends, by name, with the config each runs.
type Running = BTreeMap<String, (ServerConfig, tokio::task::JoinHandle<()>)>;

/// Brings the running backends in line with `config`: removed and changed ones stop (and
/// leave the front), new and changed ones start. The front and its sessions stay.
async fn apply(
    composed: &Arc<Composer>,
    running: &mut Running,
    config: Config,
    health: &watch::Sender<Health>,
) {
    if let Ok(h) = config.health.check() {
        health.send_replace(h);
    }
    let stale: Vec<String> = running
        .iter()
        .filter(|(name, (old, _))| config.servers.get(*name) != Some(old))
        .map(|(name, _)| name.clone())
        .collect();
    for name in stale {
        if let Some((_, task)) = running.remove(&name) {
            task.abort();
            let _ = task.await;
        }
        composed.unmount(&name).await;
        status!("ferromcp gateway: {name}: stopped");
    }
    for (name, server) in config.servers {
        if running.contains_key(&name) {
            continue;
        }
        match backend(&name, server.clone()) {
            Ok(b) => {
                let up = try_mount(composed, &name, &b).await;
                let task = tokio::spawn(supervise(
                    composed.clone(),
                    name.clone(),
                    b,
                    up,
                    health.subscribe(),
                ));
                running.insert(name, (server, task));
            }
            Err(e) => status!("ferromcp gateway: {e}"),
        }
    }
}

/// The config file's modification time, if it can be read.
fn modified(path: &Path) -> Option<std::time::SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// Applies the config file whenever it changes (a file that does not parse is reported and
/// the running config kept).
async fn follow_config(
    composed: Arc<Composer>,
    limiter: Arc<Limiter>,
    path: PathBuf,
    mut running: Running,
    health: watch::Sender<Health>,
) {
    let mut seen = modified(&path);
    loop {
        tokio::time::sleep(RELOAD_POLL).await;
        let now = modified(&path);
        if now == seen {
            continue;
        }
        seen = now;
        match read_config(&path) {
            Ok(config) => {
                status!("ferromcp gateway: {} changed: applying it", path.display());
                limiter.set(config.rate_limit);
                apply(&composed, &mut running, config, &health).await;
            }
            Err(e) => status!("ferromcp gateway: {e} (the running config is kept)"),
        }
    }
}

/// Runs `ferromcp gateway`.
pub(crate) fn run(args: &GatewayArgs) -> ExitCode {
    let config = match read_config(&args.config) {
        Ok(c) => c,
        Err(e) => return super::fail(&e),
    };
    super::init_logging();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return super::fail(&format!("cannot start the async runtime: {e}")),
    };
    let (http, path, auth) = (args.http.clone(), args.config.clone(), args.front.auth);
    let front = args.front.clone();
    if (auth || front.auth_issuer.is_some()) && http.is_none() {
        return super::fail("gateway: --auth and --auth-issuer need --http");
    }
    if let Err(e) = args.scale.check() {
        return super::fail(&e);
    }
    let redis = args.scale.redis.clone();
    let proxy = args.proxy.clone();
    let limiter = Arc::new(Limiter::new(config.rate_limit));
    let served: Result<(), String> = runtime.block_on(async move {
        // Front tasks in Redis with `--redis`, so any node serves their polls.
        let tasks = crate::serve_http::redis_tasks(redis.as_deref())
            .await
            .map_err(|e| format!("--redis: {e}"))?;
        let composed = Composer::builder("ferromcp-gateway", env!("CARGO_PKG_VERSION"))
            // Tasks on the front: the backends are mounted after the build, so the front
            // would not serve their task-capable tools' tasks otherwise.
            .front(|front| front.middleware(Audit(limiter.clone())).tasks(tasks))
            .build()
            .await
            .map_err(|e| e.to_string())?;
        let composed = Arc::new(composed);
        let mut running = Running::new();
        let (health, _) = watch::channel(Health::default());
        apply(&composed, &mut running, config, &health).await;
        let reload = follow_config(composed.clone(), limiter, path, running, health);
        let serve = async {
            let config = crate::serve_http::with_redis(HttpConfig::default(), redis)
                .await
                .map_err(|e| format!("--redis: {e}"))?;
            let config = proxy.apply(config)?;
            match http {
                Some(addr) if auth => {
                    let front = composed.server().server().clone();
                    let server = crate::serve_http::bind_with_auth(&addr, front, config)
                        .await
                        .map_err(|e| format!("binding {addr}: {e}"))?;
                    status!(
                        "ferromcp gateway: at {} (OAuth 2.1 protected; authorization server {}, \
                         approving every request: development only)",
                        server.resource(),
                        server.authorization_server().issuer()
                    );
                    server.run().await.map_err(|e| e.to_string())
                }
                Some(addr) => {
                    let server = HttpServer::bind(
                        addr.as_str(),
                        composed.server().server().clone(),
                        front.resource_server(config)?,
                    )
                    .await
                    .map_err(|e| format!("binding {addr}: {e}"))?;
                    status!(
                        "ferromcp gateway: at http://{}/mcp{}",
                        server.local_addr(),
                        front
                            .describe()
                            .map(|d| format!(" ({d})"))
                            .unwrap_or_default()
                    );
                    server.run().await.map_err(|e| e.to_string())
                }
                None => ferromcp_server::serve_stdio(composed.server().server())
                    .await
                    .map_err(|e| e.to_string()),
            }
        };
        let served = tokio::select! {
            served = serve => served,
            () = reload => Ok(()),
        };
        composed.shutdown().await;
        served
    });
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => super::fail(&e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_and_tool_lists() {
        assert!(glob("*", "anything"));
        assert!(glob("fetch_*", "fetch_url"));
        assert!(!glob("fetch_*", "fetcher"));
        assert!(glob("a?c", "abc"));
        assert!(glob("*_x_*", "a_x_b"));
        assert!(!glob("abc", "abcd"));
        let t = ToolsConfig {
            allow: vec!["a*".into()],
            deny: vec!["ab*".into()],
        };
        assert!(t.keeps("ax") && !t.keeps("abc") && !t.keeps("x"));
        assert!(ToolsConfig::default().keeps("anything"));
    }

    /// `--redis URL` is `serve`'s flag: it needs `--http`, and a ferromcp built with the
    /// `redis` feature.
    #[test]
    fn redis_flag_as_serve() {
        let gateway = |args: &[&str]| {
            let argv = ["ferromcp", "gateway", "c.toml"].iter().chain(args);
            match crate::cli::parse(argv).map_err(|e| e.to_string())?.command {
                Some(crate::cli::Command::Gateway(a)) => Ok(a),
                other => Err(format!("{other:?}")),
            }
        };
        assert!(gateway(&["--redis", "redis://127.0.0.1:6379"]).is_err());
        let a = gateway(&["--http", "x", "--redis", "redis://127.0.0.1:6379"])
            .unwrap_or_else(|e| unreachable!("{e}"));
        assert_eq!(a.scale.redis.as_deref(), Some("redis://127.0.0.1:6379"));
        assert_eq!(a.scale.check().is_ok(), cfg!(feature = "redis"));
        assert!(gateway(&[]).is_ok_and(|a| a.scale.redis.is_none()));
    }

    /// The README's example config (`examples/gateway.toml`) parses and builds its backends.
    #[test]
    fn the_example_config_is_valid() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/gateway.toml");
        let config = read_config(&path).unwrap_or_else(|e| unreachable!("{e}"));
        assert_eq!(
            config.servers.keys().collect::<Vec<_>>(),
            ["demo", "search"]
        );
        assert_eq!(config.rate_limit, RateLimit::default());
        assert_eq!(config.health.check(), Ok(Health::default()));
        assert!(!config.servers["demo"].tools.keeps("long_task"));
        let demo = backend("demo", config.servers["demo"].clone());
        let demo = demo.map(|b| format!("{b:?}")).unwrap_or_else(|e| e);
        assert!(demo.contains("max_queued_reports: 128"), "{demo}");
        let mut zero = config.servers["demo"].clone();
        zero.max_queued_reports = Some(0);
        let refused = backend("demo", zero).map(|_| ()).unwrap_err();
        assert!(refused.contains("`max_queued_reports` must be at least 1"));
    }
}
