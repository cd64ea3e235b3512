//! The pooled hyper client: hyper-util's `legacy::Client` over an `HttpConnector` with
//! `TCP_NODELAY`, keep-alive and a connect timeout; with the `https` feature, wrapped in
//! rustls (ring provider, webpki roots).

use std::io;

use bytes::Bytes;
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

use super::HttpConfig;

#[cfg(feature = "https")]
pub(crate) type Connector = hyper_rustls::HttpsConnector<HttpConnector>;
#[cfg(not(feature = "https"))]
pub(crate) type Connector = HttpConnector;

pub(crate) type HttpClient = Client<Connector, Full<Bytes>>;

fn tcp(cfg: &HttpConfig) -> HttpConnector {
    let mut http = HttpConnector::new();
    configure_tcp(&mut http, cfg);
    http
}

/// The TCP settings of every connector: `TCP_NODELAY`, the connect timeout, keep-alive.
pub(crate) fn configure_tcp<R>(http: &mut HttpConnector<R>, cfg: &HttpConfig) {
    // No 40 ms delayed-ACK stall on small request bodies and SSE frames.
    http.set_nodelay(true);
    http.set_connect_timeout(Some(cfg.connect_timeout));
    http.set_keepalive(Some(cfg.tcp_keepalive));
    http.enforce_http(false);
}

/// Wraps a TCP connector in rustls (ring provider, webpki roots), for `http` and `https`.
#[cfg(all(feature = "https", feature = "oauth"))]
pub(crate) fn tls_wrap<T>(inner: T, _scheme: &str) -> io::Result<hyper_rustls::HttpsConnector<T>> {
    let provider = rustls::crypto::ring::default_provider();
    let builder = hyper_rustls::HttpsConnectorBuilder::new()
        .with_provider_and_webpki_roots(provider)
        .map_err(|e| io::Error::other(format!("TLS configuration: {e}")))?;
    Ok(builder.https_or_http().enable_http1().wrap_connector(inner))
}

/// Without TLS: `inner` itself, refusing an `https` server.
#[cfg(all(not(feature = "https"), feature = "oauth"))]
pub(crate) fn tls_wrap<T>(inner: T, scheme: &str) -> io::Result<T> {
    if scheme == "https" {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "https URLs need ferromcp-client's `https` feature",
        ));
    }
    Ok(inner)
}

/// Builds the client for `scheme` (`http` or `https`).
pub(crate) fn build(cfg: &HttpConfig, scheme: &str) -> io::Result<HttpClient> {
    let connector = connector(cfg, scheme)?;
    Ok(Client::builder(TokioExecutor::new())
        .pool_idle_timeout(cfg.pool_idle_timeout)
        .pool_max_idle_per_host(cfg.max_concurrent_requests.max(1))
        .build(connector))
}

#[cfg(feature = "https")]
fn connector(cfg: &HttpConfig, _scheme: &str) -> io::Result<Connector> {
    let provider = rustls::crypto::ring::default_provider();
    let builder = hyper_rustls::HttpsConnectorBuilder::new()
        .with_provider_and_webpki_roots(provider)
        .map_err(|e| io::Error::other(format!("TLS configuration: {e}")))?;
    Ok(builder
        .https_or_http()
        .enable_http1()
        .wrap_connector(tcp(cfg)))
}

#[cfg(not(feature = "https"))]
fn connector(cfg: &HttpConfig, scheme: &str) -> io::Result<Connector> {
    if scheme == "https" {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "https URLs need ferromcp-client's `https` feature",
        ));
    }
    Ok(tcp(cfg))
}
