//! `ferromcp serve --http ADDR [--stateless] [--json-response] [--allowed-host H]...
//! [--allowed-origin O]... [--disable-host-checks] [--max-sessions-per-peer N] [--redis URL]
//! [--auth] [--legacy-sse]`: the demo server over Streamable HTTP at
//! `/mcp`, both eras (with `--auth`, behind the embedded OAuth 2.1 authorization server).

use std::process::ExitCode;

use ferromcp_http_server::{HttpConfig, HttpServer};

pub(crate) const HELP: &str = "\
ferromcp serve --http ADDR: the demo server over Streamable HTTP at http://ADDR/mcp
(both protocol eras: 2026-07-28 single exchanges, and handshake-era sessions).

OPTIONS:
    --stateless             no sessions (handshake era): every POST on its own
    --json-response         answer requests with JSON, never SSE
    --allowed-host H        allow this Host header (repeatable; `host:*` = any port)
    --allowed-origin O      allow this Origin header (repeatable)
    --disable-host-checks   accept any Host and Origin (only behind a proxy that
                            checks them; logs a warning)
    --max-sessions-per-peer N
                            live handshake-era sessions one client address may hold
                            (default 64; a load generator or a reverse proxy needs more)
    --redis URL             share handshake-era sessions and resumable streams with the
                            other nodes using this Redis (built with the `redis` feature)
    --auth                  protect /mcp with the embedded OAuth 2.1 authorization server
                            at http://ADDR (metadata, /authorize, /token, /register,
                            /revoke, /jwks; scope `mcp`). It approves every authorization
                            request at once (no login page): for local development only,
                            so loopback addresses only (the issuer is http://ADDR).
                            Try it with `ferromcp inspect http://ADDR/mcp --oauth`.
    --legacy-sse            also serve the 2024-11-05 HTTP+SSE transport: the stream at
                            http://ADDR/sse, messages POSTed to /messages?sessionId=...

By default only loopback Host and Origin values on the bound port are answered
(DNS-rebinding protection), whatever ADDR is: a public deployment names its hosts and
origins with --allowed-host/--allowed-origin (a wider bind without them logs a warning).";

/// Parses the arguments after `--http` into the address, the settings and the Redis URL.
fn parse(args: &[&str]) -> Result<(String, HttpConfig, Option<String>, bool), String> {
    let Some((addr, mut rest)) = args.split_first() else {
        return Err("serve --http needs an address, e.g. 127.0.0.1:8000".to_owned());
    };
    let mut config = HttpConfig::default();
    let mut hosts: Vec<String> = Vec::new();
    let mut origins: Vec<String> = Vec::new();
    let mut redis = None;
    let mut auth = false;
    while let Some((flag, tail)) = rest.split_first() {
        rest = tail;
        match *flag {
            "--auth" => auth = true,
            "--stateless" => config = config.stateless(true),
            "--json-response" => config = config.json_response(true),
            "--legacy-sse" => config = with_legacy_sse(config),
            "--disable-host-checks" => config = config.disable_host_checks(),
            "--max-sessions-per-peer" => {
                let n = rest
                    .first()
                    .and_then(|v| v.parse::<usize>().ok())
                    .filter(|n| *n > 0)
                    .ok_or("--max-sessions-per-peer needs a positive number")?;
                rest = &rest[1..];
                config = config.max_sessions_per_peer(n);
            }
            "--redis" => {
                let Some((value, tail)) = rest.split_first() else {
                    return Err("--redis needs a URL, e.g. redis://127.0.0.1:6379".to_owned());
                };
                rest = tail;
                if !cfg!(feature = "redis") {
                    return Err(
                        "--redis: this ferromcp was built without the `redis` feature".to_owned(),
                    );
                }
                redis = Some((*value).to_owned());
            }
            "--allowed-host" | "--allowed-origin" => {
                let Some((value, tail)) = rest.split_first() else {
                    return Err(format!("{flag} needs a value"));
                };
                rest = tail;
                if *flag == "--allowed-host" {
                    hosts.push((*value).to_owned());
                } else {
                    origins.push((*value).to_owned());
                }
            }
            other => {
                return Err(format!(
                    "unknown option {other:?}; see `ferromcp serve --help`"
                ));
            }
        }
    }
    if !hosts.is_empty() {
        config = config.allowed_hosts(hosts);
    }
    if !origins.is_empty() {
        config = config.allowed_origins(origins);
    }
    Ok(((*addr).to_owned(), config, redis, auth))
}

/// `--legacy-sse`: `config` also serving the 2024-11-05 HTTP+SSE transport at `/sse` (its
/// clients POST to `/messages`), next to Streamable HTTP at `/mcp`.
pub(crate) fn with_legacy_sse(config: HttpConfig) -> HttpConfig {
    config.legacy_sse(true)
}

/// Runs `ferromcp serve --http …` until the listener fails.
pub(crate) fn run(args: &[&str]) -> ExitCode {
    let (addr, config, redis, auth) = match parse(args) {
        Ok(p) => p,
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
    // The demo server's value stays alive while serving (it owns the handlers' state).
    let demo = super::demo::server();
    let served = runtime.block_on(async {
        let config = with_redis(config, redis).await?;
        if auth {
            return serve_with_auth(&addr, demo.server().clone(), config).await;
        }
        let legacy_sse = config.legacy_sse;
        let server = HttpServer::bind(addr.as_str(), demo.server().clone(), config).await?;
        eprintln!(
            "ferromcp: serving the demo server at http://{}/mcp",
            server.local_addr()
        );
        if legacy_sse {
            eprintln!(
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
    use ferromcp_auth_server::{AuthHttpServer, AuthServerConfig};
    let as_config = AuthServerConfig::default()
        .scopes_supported(["mcp"])
        .default_scopes(["mcp"]);
    let server = AuthHttpServer::bind_with(addr, server, config, as_config, |rs| {
        rs.required_scopes(["mcp"])
    })
    .await?;
    eprintln!(
        "ferromcp: serving the demo server at {} (OAuth 2.1 protected; authorization server \
         {}, approving every request: development only)",
        server.resource(),
        server.authorization_server().issuer()
    );
    server.run().await
}

/// `config` with the Redis stores of `url` (feature `redis`).
#[cfg(feature = "redis")]
async fn with_redis(config: HttpConfig, url: Option<String>) -> std::io::Result<HttpConfig> {
    use ferromcp_http_server::redis::{RedisConfig, RedisStores};
    let Some(url) = url else { return Ok(config) };
    let stores = RedisStores::connect(RedisConfig::new(url).idle_timeout(config.idle_timeout))
        .await
        .map_err(std::io::Error::other)?;
    Ok(stores.apply(config))
}

#[cfg(not(feature = "redis"))]
async fn with_redis(config: HttpConfig, _url: Option<String>) -> std::io::Result<HttpConfig> {
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn parses_flags() {
        let (addr, c, redis, auth) = parse(&[
            "127.0.0.1:0",
            "--stateless",
            "--json-response",
            "--allowed-host",
            "a:*",
            "--allowed-origin",
            "http://a:*",
        ])
        .unwrap_or_else(|e| unreachable!("{e}"));
        assert_eq!(addr, "127.0.0.1:0");
        assert!(c.stateless && c.json_response);
        assert!(!auth);
        assert!(parse(&["x", "--auth"]).is_ok_and(|p| p.3));
        assert!(!c.legacy_sse);
        assert!(parse(&["x", "--legacy-sse"]).is_ok_and(|p| p.1.legacy_sse));
        assert_eq!(redis, None);
        let with = parse(&["x", "--redis", "redis://127.0.0.1:6379"]);
        if cfg!(feature = "redis") {
            let (_, _, url, _) = with.unwrap_or_else(|e| unreachable!("{e}"));
            assert_eq!(url.as_deref(), Some("redis://127.0.0.1:6379"));
        } else {
            assert!(with.is_err());
        }
        assert!(parse(&["x", "--redis"]).is_err());
        assert_eq!(c.allowed_hosts, Some(vec!["a:*".to_owned()]));
        assert_eq!(c.allowed_origins, Some(vec!["http://a:*".to_owned()]));
        assert!(parse(&[]).is_err());
        assert!(parse(&["x", "--allowed-host"]).is_err());
        assert!(parse(&["x", "--bogus"]).is_err());
        let (_, off, _, _) =
            parse(&["x", "--disable-host-checks"]).unwrap_or_else(|e| unreachable!("{e}"));
        assert!(!off.host_checks && off.allowed_hosts.is_none());
        let (_, many, _, _) = parse(&["x", "--max-sessions-per-peer", "4096"])
            .unwrap_or_else(|e| unreachable!("{e}"));
        assert_eq!(many.max_sessions_per_peer, 4096);
        for bad in [
            &["x", "--max-sessions-per-peer"][..],
            &["x", "--max-sessions-per-peer", "0"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }
}
