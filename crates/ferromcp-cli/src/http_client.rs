//! The HTTP client's connection options of the client subcommands and of `bridge
//! --http-to-stdio`: `--proxy`, `--no-proxy`, `--cacert`, `--cert`/`--key`,
//! `--connect-timeout`, `--read-timeout`. They become one [`HttpClientConfig`], used by the
//! Streamable HTTP transport and by the OAuth flow (`--oauth`) alike.

use std::time::Duration;

use ferromcp_client::transport::http::{HttpClientConfig, ProxyConfig, ProxyRules, TlsConfig};

/// How the HTTP client connects (HTTP targets).
#[derive(Debug, Default, Clone, clap::Args)]
pub(crate) struct HttpClientArgs {
    /// Send every HTTP request through this http:// proxy (https:// through CONNECT).
    ///
    /// `http://user:password@host:port` authenticates with Basic. Without --proxy or
    /// --no-proxy, HTTPS_PROXY / HTTP_PROXY / ALL_PROXY / NO_PROXY of the environment apply.
    #[arg(long, value_name = "URL", verbatim_doc_comment)]
    proxy: Option<String>,
    /// Use no proxy, whatever HTTPS_PROXY / HTTP_PROXY / ALL_PROXY say.
    #[arg(long, conflicts_with = "proxy")]
    no_proxy: bool,
    /// Also trust the PEM root certificate(s) in FILE (repeatable; https:// targets).
    #[arg(long, value_name = "FILE")]
    cacert: Vec<String>,
    /// Present the PEM client certificate (chain) in FILE (mutual TLS; needs --key).
    #[arg(long, value_name = "FILE", requires = "key")]
    cert: Option<String>,
    /// The PEM private key of --cert.
    #[arg(long, value_name = "FILE", requires = "cert")]
    key: Option<String>,
    /// Bound making a connection: TCP, a proxy's CONNECT and the TLS handshake (default 10).
    #[arg(long, value_name = "SECONDS")]
    connect_timeout: Option<String>,
    /// Bound every wait for response data, SSE streams included (default none).
    #[arg(long, value_name = "SECONDS")]
    read_timeout: Option<String>,
}

/// A positive, finite number of seconds (`FLAG` names the option in the error).
pub(crate) fn seconds(flag: &str, value: &str) -> Result<Duration, String> {
    value
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s > 0.0)
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .ok_or_else(|| format!("{flag} wants a positive number of seconds, got {value:?}"))
}

fn read(flag: &str, path: &str) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("{flag} {path}: cannot read the file: {e}"))
}

impl HttpClientArgs {
    /// Whether any of these options is on the command line.
    pub(crate) fn is_set(&self) -> bool {
        self.proxy.is_some()
            || self.no_proxy
            || !self.cacert.is_empty()
            || self.cert.is_some()
            || self.key.is_some()
            || self.connect_timeout.is_some()
            || self.read_timeout.is_some()
    }

    /// The client settings these options ask for (reads the PEM files).
    pub(crate) fn config(&self) -> Result<HttpClientConfig, String> {
        let mut config = HttpClientConfig::default();
        if let Some(url) = &self.proxy {
            if !url.starts_with("http://") {
                return Err(format!("--proxy wants an http:// URL, got {url:?}"));
            }
            config = config.proxy(ProxyConfig::Rules(ProxyRules::default().all(url.clone())));
        } else if self.no_proxy {
            config = config.proxy(ProxyConfig::None);
        }
        let mut tls = TlsConfig::default();
        for path in &self.cacert {
            tls = tls
                .root_certificates_pem(&read("--cacert", path)?)
                .map_err(|e| format!("--cacert {path}: {e}"))?;
        }
        if let (Some(cert), Some(key)) = (&self.cert, &self.key) {
            let (c, k) = (read("--cert", cert)?, read("--key", key)?);
            tls = tls
                .client_identity_pem(&c, &k)
                .map_err(|e| format!("--cert {cert} / --key {key}: {e}"))?;
        }
        if let Some(v) = &self.connect_timeout {
            config = config.connect_timeout(seconds("--connect-timeout", v)?);
        }
        if let Some(v) = &self.read_timeout {
            config = config.read_timeout(Some(seconds("--read-timeout", v)?));
        }
        Ok(config.tls(tls))
    }
}
