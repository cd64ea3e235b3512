//! `ferromcp serve --http ADDR [OPTIONS]`: the demo server over Streamable HTTP at `/mcp`,
//! both eras (with `--auth`, behind the embedded OAuth 2.1 authorization server). The options
//! are [`ServeArgs`].

use std::process::ExitCode;

use ferromcp_http_server::{HttpConfig, HttpServer};
use ferromcp_server::tasks::TaskSettings;

/// After the options of `ferromcp serve --help` (the demo server's contents follow).
pub(crate) const AFTER: &str = "\
Without --http the demo server speaks on stdin/stdout (both protocol eras). With --http ADDR
it is served over Streamable HTTP at http://ADDR/mcp (both eras: 2026-07-28 single exchanges
and handshake-era sessions); the other options apply to --http only.

By default only loopback Host and Origin values on the bound port are answered
(DNS-rebinding protection), whatever ADDR is: a public deployment names its hosts and
origins with --allowed-host/--allowed-origin (a wider bind without them logs a warning).

Examples:
    ferromcp serve
    ferromcp serve --http 127.0.0.1:8000
    ferromcp serve --http 127.0.0.1:8000 --auth   # then: ferromcp inspect http://127.0.0.1:8000/mcp --oauth

The demo server exposes:";

/// `ferromcp serve [--http ADDR [OPTIONS]]`. A new option of `serve` is a new field here
/// (`requires = "http"` when it only makes sense over HTTP), read in [`run`] or
/// [`ServeArgs::http_config`].
#[derive(Debug, Default, clap::Args)]
pub(crate) struct ServeArgs {
    /// Serve over Streamable HTTP at http://ADDR/mcp (e.g. 127.0.0.1:8000) instead of stdio.
    #[arg(long, value_name = "ADDR")]
    pub(crate) http: Option<String>,
    /// No sessions (handshake era): every POST on its own.
    #[arg(long, requires = "http")]
    pub(crate) stateless: bool,
    /// Answer requests with JSON, never SSE.
    #[arg(long, requires = "http")]
    pub(crate) json_response: bool,
    /// Allow this Host header (repeatable; `host:*` = any port).
    #[arg(long, value_name = "H", requires = "http")]
    pub(crate) allowed_host: Vec<String>,
    /// Allow this Origin header (repeatable).
    #[arg(long, value_name = "O", requires = "http")]
    pub(crate) allowed_origin: Vec<String>,
    /// Accept any Host and Origin (only behind a proxy that checks them; logs a warning).
    #[arg(long, requires = "http")]
    pub(crate) disable_host_checks: bool,
    /// Live handshake-era sessions one client address may hold.
    ///
    /// Default 64; a load generator or a reverse proxy needs more.
    #[arg(long, value_name = "N", requires = "http")]
    pub(crate) max_sessions_per_peer: Option<String>,
    /// `--redis URL`, shared with `ferromcp gateway --http`.
    #[command(flatten)]
    pub(crate) scale: RedisArgs,
    /// `--trusted-proxy CIDR`, shared with `ferromcp gateway --http`.
    #[command(flatten)]
    pub(crate) proxy: ProxyArgs,
    /// The front's authentication (`--auth`), shared with `ferromcp gateway --http`.
    #[command(flatten)]
    pub(crate) front: FrontAuthArgs,
    /// Also serve the 2024-11-05 HTTP+SSE transport.
    ///
    /// The stream at http://ADDR/sse, messages POSTed to /messages?sessionId=...
    #[arg(long, requires = "http", verbatim_doc_comment)]
    pub(crate) legacy_sse: bool,
}

/// The authentication options of an HTTP front (`serve --http`, `gateway --http`): one
/// definition, flattened into both commands (each has an `--http` option they require).
#[derive(Debug, Default, Clone, clap::Args)]
pub(crate) struct FrontAuthArgs {
    /// Protect /mcp with the embedded OAuth 2.1 authorization server at http://ADDR.
    ///
    /// Metadata, /authorize, /token, /register, /revoke, /jwks; scope `mcp`.
    /// It approves every authorization request at once (no login page): for local
    /// development only, so loopback addresses only (the issuer is http://ADDR).
    /// Try it with `ferromcp inspect http://ADDR/mcp --oauth`.
    #[arg(long, requires = "http", verbatim_doc_comment)]
    pub(crate) auth: bool,
    /// Accept bearer tokens (JWTs) from this external OAuth authorization server.
    ///
    /// ISSUER is its issuer URL, compared exactly with the tokens' `iss`. Needs
    /// --auth-jwks and --auth-resource; named in this server's RFC 9728 metadata.
    #[arg(
        long,
        value_name = "ISSUER",
        requires_all = ["http", "auth_jwks", "auth_resource"],
        conflicts_with = "auth",
        verbatim_doc_comment
    )]
    pub(crate) auth_issuer: Option<String>,
    /// The issuer's JWKS URL: the keys tokens are signed with (https, or http on loopback).
    #[arg(long, value_name = "URL", requires = "auth_issuer")]
    pub(crate) auth_jwks: Option<String>,
    /// This endpoint's canonical URL (e.g. https://mcp.example.com/mcp).
    ///
    /// The audience tokens must name (RFC 8707), and the resource of the metadata.
    #[arg(
        long,
        value_name = "URL",
        requires = "auth_issuer",
        verbatim_doc_comment
    )]
    pub(crate) auth_resource: Option<String>,
    /// A scope every request's token needs (repeatable; default: none beyond a valid token).
    #[arg(long, value_name = "SCOPE", requires = "auth_issuer")]
    pub(crate) auth_scope: Vec<String>,
}

impl FrontAuthArgs {
    /// `config` with resource-server auth against the external issuer (`--auth-issuer`), or
    /// unchanged when none is named. Fails on a JWKS URL the verifier refuses.
    pub(crate) fn resource_server(&self, config: HttpConfig) -> Result<HttpConfig, String> {
        use ferromcp_http_server::auth::{AuthConfig, JwtVerifier};
        let (Some(issuer), Some(jwks), Some(resource)) =
            (&self.auth_issuer, &self.auth_jwks, &self.auth_resource)
        else {
            return Ok(config);
        };
        let verifier = JwtVerifier::builder(issuer.as_str(), jwks.as_str(), resource.as_str())
            .build()
            .map_err(|e| format!("--auth-jwks: {e}"))?;
        let auth = AuthConfig::new(resource.as_str(), verifier)
            .authorization_server(issuer.as_str())
            .required_scopes(self.auth_scope.iter().cloned());
        Ok(config.auth(auth))
    }

    /// The line printed at start-up for a front behind `--auth-issuer`, if it is.
    pub(crate) fn describe(&self) -> Option<String> {
        let issuer = self.auth_issuer.as_deref()?;
        Some(format!(
            "OAuth 2.1 protected resource {}; tokens from {issuer}",
            self.auth_resource.as_deref().unwrap_or_default()
        ))
    }
}

/// `--redis URL` of an HTTP front (`serve --http`, `gateway --http`): one definition,
/// flattened into both commands (each has an `--http` option it requires), read by
/// [`RedisArgs::check`] and [`with_redis`].
#[derive(Debug, Default, Clone, clap::Args)]
pub(crate) struct RedisArgs {
    /// Share sessions and resumable streams with other nodes through this Redis.
    ///
    /// Handshake-era sessions; needs a ferromcp built with the `redis` feature.
    #[arg(long, value_name = "URL", requires = "http", verbatim_doc_comment)]
    pub(crate) redis: Option<String>,
}

impl RedisArgs {
    /// Whether this ferromcp can do what `--redis` asks (it needs the `redis` feature).
    pub(crate) fn check(&self) -> Result<(), String> {
        if self.redis.is_some() && !cfg!(feature = "redis") {
            return Err("--redis: this ferromcp was built without the `redis` feature".to_owned());
        }
        Ok(())
    }
}

/// `--trusted-proxy CIDR` of an HTTP front (`serve --http`, `gateway --http`): one
/// definition, flattened into both commands, read by [`ProxyArgs::apply`].
#[derive(Debug, Default, Clone, clap::Args)]
pub(crate) struct ProxyArgs {
    /// Believe X-Forwarded-For from this reverse proxy (an address or CIDR; repeatable).
    ///
    /// The per-peer session cap then counts the clients it names, not the proxy.
    #[arg(long, value_name = "CIDR", requires = "http", verbatim_doc_comment)]
    pub(crate) trusted_proxy: Vec<String>,
}

impl ProxyArgs {
    /// `config` believing `X-Forwarded-For` from the proxies named (unchanged for none).
    pub(crate) fn apply(&self, config: HttpConfig) -> Result<HttpConfig, String> {
        if self.trusted_proxy.is_empty() {
            return Ok(config);
        }
        let proxies = self
            .trusted_proxy
            .iter()
            .map(|p| p.parse().map_err(|e| format!("--trusted-proxy {e}")))
            .collect::<Result<Vec<ferromcp_http_server::IpRange>, String>>()?;
        Ok(config.trusted_proxies(proxies))
    }
}

impl ServeArgs {
    /// The HTTP server's settings these options ask for (checks the values clap does not).
    pub(crate) fn http_config(&self) -> Result<HttpConfig, String> {
        let mut config = HttpConfig::default();
        if self.legacy_sse {
            config = with_legacy_sse(config);
        }
        if self.stateless {
            config = config.stateless(true);
        }
        if self.json_response {
            config = config.json_response(true);
        }
        if self.disable_host_checks {
            config = config.disable_host_checks();
        }
        if let Some(n) = &self.max_sessions_per_peer {
            let n = n
                .parse::<usize>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or("--max-sessions-per-peer needs a positive number")?;
            config = config.max_sessions_per_peer(n);
        }
        config = self.proxy.apply(config)?;
        self.scale.check()?;
        if !self.allowed_host.is_empty() {
            config = config.allowed_hosts(self.allowed_host.clone());
        }
        if !self.allowed_origin.is_empty() {
            config = config.allowed_origins(self.allowed_origin.clone());
        }
        self.front.resource_server(config)
    }
}

/// `--legacy-sse`: `config` also serving the 2024-11-05 HTTP+SSE transport at `/sse` (its
/// clients POST to `/messages`), next to Streamable HTTP at `/mcp`.
pub(crate) fn with_legacy_sse(config: HttpConfig) -> HttpConfig {
    config.legacy_sse(true)
}

/// Runs `ferromcp serve --http …` until the listener fails.
pub(crate) fn run(args: &ServeArgs) -> ExitCode {
    let Some(addr) = args.http.clone() else {
        return super::fail("serve --http needs an address, e.g. 127.0.0.1:8000");
    };
    let config = match args.http_config() {
        Ok(c) => c,
        Err(e) => return super::fail(&e),
    };
    let (redis, auth) = (args.scale.redis.clone(), args.front.auth);
    super::init_logging();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return super::fail(&format!("cannot start the async runtime: {e}")),
    };
    let served = runtime.block_on(async {
        let tasks = redis_tasks(redis.as_deref()).await?;
        // The demo server's value stays alive while serving (it owns the handlers' state).
        let demo = super::demo::server_with_tasks(tasks);
        let config = with_redis(config, redis).await?;
        if auth {
            return serve_with_auth(&addr, demo.server().clone(), config).await;
        }
        let legacy_sse = config.legacy_sse;
        let server = HttpServer::bind(addr.as_str(), demo.server().clone(), config).await?;
        crate::stderr_log::status!(
            "ferromcp: serving the demo server at http://{}/mcp{}",
            server.local_addr(),
            args.front
                .describe()
                .map(|d| format!(" ({d})"))
                .unwrap_or_default()
        );
        if legacy_sse {
            crate::stderr_log::status!(
                "ferromcp: and over the 2024-11-05 HTTP+SSE transport at http://{}/sse",
                server.local_addr()
            );
        }
        server.run().await
    });
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => super::fail(&format!("serving {addr}: {e}")),
    }
}

/// `--auth`: the demo behind the embedded authorization server on the same address.
async fn serve_with_auth(
    addr: &str,
    server: ferromcp_server::Server,
    config: HttpConfig,
) -> std::io::Result<()> {
    let server = bind_with_auth(addr, server, config).await?;
    crate::stderr_log::status!(
        "ferromcp: serving the demo server at {} (OAuth 2.1 protected; authorization server \
         {}, approving every request: development only)",
        server.resource(),
        server.authorization_server().issuer()
    );
    server.run().await
}

/// `--auth` (of `serve --http` and `gateway --http`): `server` at `addr`, its `/mcp` behind
/// the embedded OAuth 2.1 authorization server on the same address (scope `mcp`, approving
/// every request; loopback only). Requests reach handlers with their
/// [`Principal`](ferromcp_server::principal::Principal).
pub(crate) async fn bind_with_auth(
    addr: &str,
    server: ferromcp_server::Server,
    config: HttpConfig,
) -> std::io::Result<ferromcp_auth_server::AuthHttpServer> {
    use ferromcp_auth_server::{AuthHttpServer, AuthServerConfig};
    let as_config = AuthServerConfig::default()
        .scopes_supported(["mcp"])
        .default_scopes(["mcp"]);
    AuthHttpServer::bind_with(addr, server, config, as_config, |rs| {
        rs.required_scopes(["mcp"])
    })
    .await
}

/// `config` with the Redis stores of `url` (feature `redis`): sessions and their event
/// streams shared with the other nodes (`serve --http`, `gateway --http`).
#[cfg(feature = "redis")]
pub(crate) async fn with_redis(
    config: HttpConfig,
    url: Option<String>,
) -> std::io::Result<HttpConfig> {
    use ferromcp_http_server::redis::{RedisConfig, RedisStores};
    let Some(url) = url else { return Ok(config) };
    let stores = RedisStores::connect(RedisConfig::new(url).idle_timeout(config.idle_timeout))
        .await
        .map_err(std::io::Error::other)?;
    Ok(stores.apply(config))
}

/// Task settings whose store is the Redis at `url` when there is one (feature `redis`), so
/// that a task created through one node is polled, answered, cancelled and read on any other
/// (2026-07-28 requests have no session to route them to the node that runs the task);
/// otherwise the defaults (in memory).
#[cfg(feature = "redis")]
pub(crate) async fn redis_tasks(url: Option<&str>) -> std::io::Result<TaskSettings> {
    use ferromcp_server::tasks::RedisTaskStore;
    let Some(url) = url else {
        return Ok(TaskSettings::new());
    };
    let store = RedisTaskStore::connect(url)
        .await
        .map_err(std::io::Error::other)?;
    Ok(TaskSettings::new().store(store))
}

#[cfg(not(feature = "redis"))]
pub(crate) async fn redis_tasks(_url: Option<&str>) -> std::io::Result<TaskSettings> {
    Ok(TaskSettings::new())
}

#[cfg(not(feature = "redis"))]
pub(crate) async fn with_redis(
    config: HttpConfig,
    _url: Option<String>,
) -> std::io::Result<HttpConfig> {
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::ServeArgs;
    use crate::cli::{Command, parse};

    fn serve(args: &[&str]) -> Result<ServeArgs, String> {
        let argv = ["ferromcp", "serve"].iter().chain(args);
        match parse(argv).map_err(|e| e.to_string())?.command {
            Some(Command::Serve(a)) => Ok(a),
            other => Err(format!("{other:?}")),
        }
    }

    fn config(args: &[&str]) -> Result<ferromcp_http_server::HttpConfig, String> {
        serve(args)?.http_config()
    }

    #[test]
    fn parses_flags() {
        let a = serve(&[
            "--http",
            "127.0.0.1:0",
            "--stateless",
            "--json-response",
            "--allowed-host",
            "a:*",
            "--allowed-origin",
            "http://a:*",
        ])
        .unwrap_or_else(|e| unreachable!("{e}"));
        assert_eq!(a.http.as_deref(), Some("127.0.0.1:0"));
        let c = a.http_config().unwrap_or_else(|e| unreachable!("{e}"));
        assert!(c.stateless && c.json_response);
        assert!(!a.front.auth);
        assert!(serve(&["--http", "x", "--auth"]).is_ok_and(|p| p.front.auth));
        assert!(!c.legacy_sse);
        let sse = config(&["--http", "x", "--legacy-sse"]);
        assert!(sse.is_ok_and(|c| c.legacy_sse));
        assert_eq!(a.scale.redis, None);
        let with = config(&["--http", "x", "--redis", "redis://127.0.0.1:6379"]);
        assert_eq!(with.is_ok(), cfg!(feature = "redis"));
        assert!(serve(&["--http", "x", "--redis"]).is_err());
        assert_eq!(c.allowed_hosts, Some(vec!["a:*".to_owned()]));
        assert_eq!(c.allowed_origins, Some(vec!["http://a:*".to_owned()]));
        assert!(serve(&["--http"]).is_err());
        assert!(serve(&["--http", "x", "--allowed-host"]).is_err());
        assert!(serve(&["--http", "x", "--bogus"]).is_err());
        // The HTTP options need --http.
        assert!(serve(&["--stateless"]).is_err());
        assert!(serve(&[]).is_ok_and(|a| a.http.is_none()));
        let off = config(&["--http", "x", "--disable-host-checks"])
            .unwrap_or_else(|e| unreachable!("{e}"));
        assert!(!off.host_checks && off.allowed_hosts.is_none());
        let many = config(&["--http", "x", "--max-sessions-per-peer", "4096"])
            .unwrap_or_else(|e| unreachable!("{e}"));
        assert_eq!(many.max_sessions_per_peer, 4096);
        assert!(serve(&["--http", "x", "--max-sessions-per-peer"]).is_err());
        assert!(config(&["--http", "x", "--max-sessions-per-peer", "0"]).is_err());
        let behind = config(&["--http", "x", "--trusted-proxy", "10.0.0.0/8"])
            .unwrap_or_else(|e| unreachable!("{e}"));
        assert_eq!(behind.trusted_proxies.len(), 1);
        assert!(c.trusted_proxies.is_empty());
        let bad = config(&["--http", "x", "--trusted-proxy", "10.0.0.0/40"]);
        assert!(bad.is_err_and(|e| e.contains("--trusted-proxy")));
    }
}
