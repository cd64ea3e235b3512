//! The HTTP client's connection settings: a proxy, a private root CA, a client certificate
//! (mutual TLS), connect and read timeouts, and headers on every request. It connects to a
//! server's MCP endpoint with them and lists the tools.
//!
//! `cargo run -p ferromcp --example http_client_config -- https://mcp.internal/mcp --cacert ca.pem`
//!
//! ```text
//! http_client_config [--proxy URL | --no-proxy] [--no-proxy-for HOSTS] [--cacert PEM]
//!     [--cert PEM --key PEM] [--header NAME:VALUE]... [--connect-timeout SECS]
//!     [--read-timeout SECS] URL
//! ```
//!
//! Without `--proxy` or `--no-proxy`, the proxies of the environment are used, as curl does:
//! `HTTPS_PROXY` for https:// URLs, `HTTP_PROXY` for http:// ones, `NO_PROXY` to bypass them.
//! `--proxy http://user:password@proxy:3128` sends both schemes through that proxy (https://
//! through a `CONNECT` tunnel, TLS end to end). The same `HttpClientConfig` goes to
//! `OAuthConfig::with_http_client` when the server needs OAuth (see the `oauth_client`
//! example).

// A command-line program: printing is its output.
#![allow(clippy::print_stdout)]

use std::time::Duration;

use ferromcp::Client;
use ferromcp::client::HttpTransport;
use ferromcp::client::transport::http::{
    HttpClientConfig, HttpConfig, ProxyConfig, ProxyRules, TlsConfig,
};
use http::{HeaderName, HeaderValue};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (url, config) = parse(std::env::args().skip(1).collect())?;
    println!("connecting to {url}");
    let transport = HttpTransport::new(&url)?.config(HttpConfig::default().client(config));
    let client = Box::pin(Client::builder().connect(transport)).await?;
    let session = client.session();
    let name = session
        .server_info
        .as_ref()
        .map_or("?", |i| i.name.as_str());
    println!(
        "connected to {name} (protocol {})",
        session.protocol_version
    );
    let tools = client.list_tools(None).await?;
    let names: Vec<&str> = tools.tools.iter().map(|t| t.name.as_str()).collect();
    println!("tools: {}", names.join(", "));
    client.shutdown().await;
    Ok(())
}

/// The URL and the client settings of the command line.
fn parse(args: Vec<String>) -> Result<(String, HttpClientConfig), String> {
    let mut config = HttpClientConfig::default();
    let mut tls = TlsConfig::default();
    let (mut cert, mut key, mut url) = (None, None, None);
    let mut no_proxy_for = String::new();
    let mut args = args.into_iter();
    let read = |path: &str| std::fs::read(path).map_err(|e| format!("{path}: {e}"));
    let secs = |v: &str| {
        v.parse::<f64>()
            .ok()
            .and_then(|s| Duration::try_from_secs_f64(s).ok())
            .ok_or_else(|| format!("not a number of seconds: {v}"))
    };
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--proxy" => config.proxy = ProxyConfig::Rules(ProxyRules::default().all(value()?)),
            "--no-proxy" => config.proxy = ProxyConfig::None,
            "--no-proxy-for" => no_proxy_for = value()?,
            "--cacert" => {
                tls = tls
                    .root_certificates_pem(&read(&value()?)?)
                    .map_err(|e| e.to_string())?;
            }
            "--cert" => cert = Some(read(&value()?)?),
            "--key" => key = Some(read(&value()?)?),
            "--header" => {
                let v = value()?;
                let (name, val) = v.split_once(':').ok_or("--header needs NAME:VALUE")?;
                let name = HeaderName::try_from(name.trim()).map_err(|e| e.to_string())?;
                let val = HeaderValue::try_from(val.trim()).map_err(|e| e.to_string())?;
                config = config.default_header(name, val);
            }
            "--connect-timeout" => config.connect_timeout = secs(&value()?)?,
            "--read-timeout" => config.read_timeout = Some(secs(&value()?)?),
            _ if arg.starts_with("--") => return Err(format!("unknown option {arg}")),
            _ => url = Some(arg),
        }
    }
    match (cert, key) {
        (Some(c), Some(k)) => tls = tls.client_identity_pem(&c, &k).map_err(|e| e.to_string())?,
        (None, None) => {}
        _ => return Err("--cert and --key go together".into()),
    }
    if !no_proxy_for.is_empty() {
        let rules = match config.proxy {
            ProxyConfig::Rules(r) => r,
            _ => ProxyRules::from_env(),
        };
        config.proxy = ProxyConfig::Rules(rules.no_proxy(no_proxy_for));
    }
    let url = url.unwrap_or_else(|| "http://127.0.0.1:8080/mcp".to_owned());
    Ok((url, config.tls(tls)))
}
