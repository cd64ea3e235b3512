//! The pooled HTTP client built from an [`HttpClientConfig`]: hyper-util's `legacy::Client`
//! over a connector of our own that dials TCP (`TCP_NODELAY`, keep-alive), goes through a
//! proxy when the config's rules say so (hyper-util's proxy `Matcher` and `CONNECT` `Tunnel`,
//! the pieces reqwest uses), runs TLS with rustls (ring provider), and bounds all of that by
//! the connect timeout; response bodies are bounded by the read timeout. The Streamable HTTP
//! transport and the OAuth client (with a guarded dialer, `oauth/guard.rs`) build theirs here.
//! A user's [`Connector`](super::connector::Connector) replaces the dialer and the proxies
//! (TLS and the connect timeout still apply); the default path never touches it.

use std::error::Error as StdError;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::header::PROXY_AUTHORIZATION;
use http::{HeaderMap, Request, Response, Uri};
use http_body_util::Full;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::connect::proxy::Tunnel;
use hyper_util::client::proxy::matcher::Matcher;
use hyper_util::rt::TokioExecutor;
use tokio::net::TcpStream;

use super::config::{HttpClientConfig, ProxyConfig, ProxyRules};
use super::conn::{Conn, Stream};
use super::connector::{CustomConnector, Target};

pub(crate) type BoxError = Box<dyn StdError + Send + Sync>;
pub(crate) type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// Opens TCP connections to destinations (not to proxies): the plain dialer, or the OAuth
/// client's guarded one.
pub(crate) trait Dial: Send + Sync + 'static {
    /// A TCP connection to `dst`'s host and port.
    fn dial(&self, dst: Uri) -> BoxFuture<Result<TcpStream, BoxError>>;
    /// Runs before a connection to `dst` that this dialer does not make: through a proxy or a
    /// user's connector (which resolve the name themselves).
    fn check_unresolved(&self, dst: &Uri) -> BoxFuture<io::Result<()>> {
        let _ = dst;
        Box::pin(async { Ok(()) })
    }
}

/// The TCP settings of every connector: `TCP_NODELAY`, the connect timeout, keep-alive.
pub(crate) fn configure_tcp<R>(http: &mut HttpConnector<R>, cfg: &HttpClientConfig) {
    // No 40 ms delayed-ACK stall on small request bodies and SSE frames.
    http.set_nodelay(true);
    http.set_connect_timeout(Some(cfg.connect_timeout));
    http.set_keepalive(Some(cfg.tcp_keepalive));
    http.enforce_http(false);
}

/// Dials with a hyper-util `HttpConnector` (any resolver).
pub(crate) async fn dial_with<R>(mut tcp: HttpConnector<R>, dst: Uri) -> Result<TcpStream, BoxError>
where
    R: tower_service::Service<
            hyper_util::client::legacy::connect::dns::Name,
            Response: Iterator<Item = std::net::SocketAddr>,
            Error: Into<BoxError>,
            Future: Send,
        > + Clone
        + Send
        + Sync
        + 'static,
{
    std::future::poll_fn(|cx| tower_service::Service::poll_ready(&mut tcp, cx)).await?;
    let io = tower_service::Service::call(&mut tcp, dst).await?;
    Ok(io.into_inner())
}

/// The plain dialer: the system resolver, no address check.
struct PlainDial(HttpConnector);

impl Dial for PlainDial {
    fn dial(&self, dst: Uri) -> BoxFuture<Result<TcpStream, BoxError>> {
        Box::pin(dial_with(self.0.clone(), dst))
    }
}

/// The proxy decision of a client and the rules it was made from.
struct Proxies {
    matcher: Matcher,
}

/// Checks a proxy URL the way the matcher reads it: `http://` (or no scheme) only.
fn check_proxy_url(url: &str) -> io::Result<()> {
    let probe = Matcher::builder().http(url).build();
    let dst = Uri::from_static("http://proxy-check.invalid/");
    match probe.intercept(&dst) {
        Some(i) if i.uri().scheme_str() == Some("http") => Ok(()),
        Some(i) => Err(io::Error::new(
            io::ErrorKind::Unsupported,
            format!(
                "unsupported proxy scheme {:?} (only http:// proxies are)",
                i.uri().scheme_str().unwrap_or_default()
            ),
        )),
        None => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "invalid proxy URL (expected http://host:port)",
        )),
    }
}

fn proxies(cfg: &ProxyConfig) -> io::Result<Option<Proxies>> {
    let rules = match cfg {
        ProxyConfig::None => return Ok(None),
        ProxyConfig::Environment => ProxyRules::from_env(),
        ProxyConfig::Rules(r) => r.clone(),
    };
    if rules.http.is_none() && rules.https.is_none() {
        return Ok(None);
    }
    let mut builder = Matcher::builder().no(rules.no_proxy.as_str());
    if let Some(u) = &rules.http {
        check_proxy_url(u)?;
        builder = builder.http(u.as_str());
    }
    if let Some(u) = &rules.https {
        check_proxy_url(u)?;
        builder = builder.https(u.as_str());
    }
    Ok(Some(Proxies {
        matcher: builder.build(),
    }))
}

/// The connector of the pooled client.
#[derive(Clone)]
pub(crate) struct PoolConnector {
    dial: Arc<dyn Dial>,
    /// A user's connector: replaces `dial` and the proxies.
    custom: Option<CustomConnector>,
    /// Connections to the proxy itself (never address-checked: the proxy is configuration).
    proxy_tcp: HttpConnector,
    proxies: Option<Arc<Proxies>>,
    #[cfg(feature = "https")]
    tls: tokio_rustls::TlsConnector,
    connect_timeout: Duration,
}

fn timed_out(what: &str, bound: Duration) -> io::Error {
    io::Error::new(
        io::ErrorKind::TimedOut,
        format!("{what} timed out after {bound:?}"),
    )
}

impl tower_service::Service<Uri> for PoolConnector {
    type Response = Conn;
    type Error = BoxError;
    type Future = BoxFuture<Result<Conn, BoxError>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, dst: Uri) -> Self::Future {
        let this = self.clone();
        let bound = self.connect_timeout;
        Box::pin(async move {
            tokio::time::timeout(bound, this.connect(dst))
                .await
                .map_err(|_| timed_out("connecting", bound))?
        })
    }
}

impl PoolConnector {
    async fn connect(self, dst: Uri) -> Result<Conn, BoxError> {
        if let Some(custom) = &self.custom {
            return self.connect_custom(custom, dst).await;
        }
        let https = dst.scheme_str() == Some("https");
        #[cfg(not(feature = "https"))]
        if https {
            return Err(no_https().into());
        }
        let intercept = self
            .proxies
            .as_ref()
            .and_then(|p| p.matcher.intercept(&dst));
        let Some(proxy) = intercept else {
            let tcp = self.dial.dial(dst.clone()).await?;
            return self.finish(tcp, &dst, false).await;
        };
        self.dial.check_unresolved(&dst).await?;
        let proxy_uri = proxy.uri().clone();
        if https {
            let mut tunnel = Tunnel::new(proxy_uri.clone(), self.proxy_tcp.clone());
            if let Some(auth) = proxy.basic_auth() {
                tunnel = tunnel.with_auth(auth.clone());
            }
            std::future::poll_fn(|cx| tower_service::Service::poll_ready(&mut tunnel, cx))
                .await
                .map_err(|e| proxy_error(&proxy_uri, &e))?;
            let io = tower_service::Service::call(&mut tunnel, dst.clone())
                .await
                .map_err(|e| proxy_error(&proxy_uri, &e))?;
            self.finish(io.into_inner(), &dst, false).await
        } else {
            let tcp = dial_with(self.proxy_tcp.clone(), proxy_uri.clone())
                .await
                .map_err(|e| proxy_error(&proxy_uri, &*e))?;
            // Forwarded: hyper sends the request in absolute form to the proxy.
            Ok(Conn::new(Stream::Tcp(tcp), true))
        }
    }

    /// A connection through the user's connector: the dialer's check of hosts it cannot
    /// resolve (the OAuth guard's IP-literal check), the connector, then TLS for `https`
    /// unless the connector handles it.
    async fn connect_custom(&self, custom: &CustomConnector, dst: Uri) -> Result<Conn, BoxError> {
        self.dial.check_unresolved(&dst).await?;
        let https = dst.scheme_str() == Some("https");
        let io = custom.connect(Target::new(dst.clone())?).await?;
        if !https || custom.handles_tls() {
            return Ok(Conn::new(Stream::Custom(io), false));
        }
        #[cfg(feature = "https")]
        {
            let tls = self.tls_over(io, &dst).await?;
            Ok(Conn::new(Stream::Custom(Box::new(tls)), false))
        }
        #[cfg(not(feature = "https"))]
        {
            let _ = io;
            Err(no_https().into())
        }
    }

    /// TLS for `https` destinations, then the connection.
    async fn finish(&self, tcp: TcpStream, dst: &Uri, proxied: bool) -> Result<Conn, BoxError> {
        if dst.scheme_str() != Some("https") {
            return Ok(Conn::new(Stream::Tcp(tcp), proxied));
        }
        #[cfg(feature = "https")]
        {
            let tls = self.tls_over(tcp, dst).await?;
            Ok(Conn::new(Stream::Tls(Box::new(tls)), proxied))
        }
        #[cfg(not(feature = "https"))]
        {
            let _ = tcp;
            Err(no_https().into())
        }
    }

    /// The TLS handshake over `io` with `dst`'s host.
    #[cfg(feature = "https")]
    async fn tls_over<S>(&self, io: S, dst: &Uri) -> io::Result<tokio_rustls::client::TlsStream<S>>
    where
        S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
    {
        let host = dst
            .host()
            .unwrap_or_default()
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        let name = rustls::pki_types::ServerName::try_from(host.clone()).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("invalid TLS server name {host:?}: {e}"),
            )
        })?;
        self.tls.connect(name, io).await.map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("TLS handshake with {host} failed: {}", describe(&e)),
            )
        })
    }
}

#[cfg(not(feature = "https"))]
fn no_https() -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        "https URLs need ferromcp-client's `https` feature",
    )
}

fn proxy_error(proxy: &Uri, e: &(dyn StdError + 'static)) -> io::Error {
    let host = proxy.authority().map(|a| a.as_str()).unwrap_or_default();
    // Never print credentials of the proxy URL.
    let host = host.rsplit('@').next().unwrap_or_default();
    io::Error::other(format!("proxy {host}: {}", describe(e)))
}

/// An error and its sources, which alone say little ("client error").
pub(crate) fn describe(e: &(dyn StdError + 'static)) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(inner) = src {
        let next = inner.to_string();
        if !s.ends_with(&next) {
            s.push_str(": ");
            s.push_str(&next);
        }
        src = inner.source();
    }
    s
}

/// The rustls configuration of `cfg`: the one given, or one built from the roots and the
/// client identity.
#[cfg(feature = "https")]
pub(crate) fn rustls_config(
    cfg: &super::config::TlsConfig,
) -> io::Result<Arc<rustls::ClientConfig>> {
    if let Some(c) = &cfg.rustls_config {
        return Ok(c.clone());
    }
    let bad = |what: &str, e: &dyn std::fmt::Display| {
        io::Error::new(io::ErrorKind::InvalidInput, format!("TLS {what}: {e}"))
    };
    let mut roots = rustls::RootCertStore::empty();
    if cfg.webpki_roots {
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    }
    if cfg.native_roots {
        native_roots(&mut roots)?;
    }
    for cert in &cfg.root_certificates {
        roots
            .add(cert.clone())
            .map_err(|e| bad("root certificate", &e))?;
    }
    if roots.is_empty() {
        return Err(bad("configuration", &"no trusted root certificate"));
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| bad("configuration", &e))?
        .with_root_certificates(roots);
    let mut config = match &cfg.client_identity {
        Some(id) => builder
            .with_client_auth_cert(id.chain.clone(), id.key.clone_key())
            .map_err(|e| bad("client certificate", &e))?,
        None => builder.with_no_client_auth(),
    };
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

#[cfg(all(feature = "https", feature = "native-roots"))]
fn native_roots(roots: &mut rustls::RootCertStore) -> io::Result<()> {
    let found = rustls_native_certs::load_native_certs();
    if found.certs.is_empty() {
        let why = found
            .errors
            .first()
            .map_or_else(|| "none found".to_owned(), ToString::to_string);
        return Err(io::Error::other(format!(
            "the platform's root certificates: {why}"
        )));
    }
    roots.add_parsable_certificates(found.certs);
    Ok(())
}

#[cfg(all(feature = "https", not(feature = "native-roots")))]
fn native_roots(_roots: &mut rustls::RootCertStore) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "TlsConfig::native_roots needs ferromcp-client's `native-roots` feature",
    ))
}

/// The pooled HTTP client: default headers, the forward proxy's credentials, the read
/// timeout. Cheap to clone (clones share the pool).
#[derive(Clone)]
pub(crate) struct HttpClient {
    inner: Client<PoolConnector, Full<Bytes>>,
    proxies: Option<Arc<Proxies>>,
    default_headers: Arc<HeaderMap>,
    connect_timeout: Duration,
    read_timeout: Option<Duration>,
}

/// Builds the client of `cfg` with the plain dialer, keeping up to `max_idle` idle
/// connections per host.
pub(crate) fn build(cfg: &HttpClientConfig, max_idle: usize) -> io::Result<HttpClient> {
    let mut tcp = HttpConnector::new();
    configure_tcp(&mut tcp, cfg);
    build_with(cfg, Arc::new(PlainDial(tcp)), max_idle)
}

/// Builds the client of `cfg` over `dial`, keeping up to `max_idle` idle connections per host.
pub(crate) fn build_with(
    cfg: &HttpClientConfig,
    dial: Arc<dyn Dial>,
    max_idle: usize,
) -> io::Result<HttpClient> {
    // A user's connector decides where the bytes go: no proxy, no `Proxy-Authorization`.
    let proxies = match &cfg.connector {
        Some(_) => None,
        None => proxies(&cfg.proxy)?.map(Arc::new),
    };
    let mut proxy_tcp = HttpConnector::new();
    configure_tcp(&mut proxy_tcp, cfg);
    let connector = PoolConnector {
        dial,
        custom: cfg.connector.clone(),
        proxy_tcp,
        proxies: proxies.clone(),
        #[cfg(feature = "https")]
        tls: tokio_rustls::TlsConnector::from(rustls_config(&cfg.tls)?),
        connect_timeout: cfg.connect_timeout,
    };
    #[cfg(not(feature = "https"))]
    if cfg.tls.native_roots {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "TLS settings need ferromcp-client's `https` feature",
        ));
    }
    let inner = Client::builder(TokioExecutor::new())
        .pool_idle_timeout(cfg.pool_idle_timeout)
        .pool_max_idle_per_host(max_idle.max(1))
        .build(connector);
    Ok(HttpClient {
        inner,
        proxies,
        default_headers: Arc::new(cfg.default_headers.clone()),
        connect_timeout: cfg.connect_timeout,
        read_timeout: cfg.read_timeout,
    })
}

impl HttpClient {
    /// Sends `req`: the default headers it lacks are added, and a forward proxy's
    /// `Proxy-Authorization` for `http://` destinations. Errors carry their whole chain.
    pub(crate) async fn request(
        &self,
        mut req: Request<Full<Bytes>>,
    ) -> Result<Response<Body>, io::Error> {
        let headers = req.headers_mut();
        for name in self.default_headers.keys() {
            if !headers.contains_key(name) {
                for v in self.default_headers.get_all(name) {
                    headers.append(name.clone(), v.clone());
                }
            }
        }
        if req.uri().scheme_str() == Some("http") {
            let auth = self
                .proxies
                .as_ref()
                .and_then(|p| p.matcher.intercept(req.uri()))
                .and_then(|i| i.basic_auth().cloned());
            if let Some(auth) = auth {
                req.headers_mut().insert(PROXY_AUTHORIZATION, auth);
            }
        }
        let sent = self.inner.request(req);
        let resp = match self.read_timeout {
            None => sent.await,
            Some(t) => {
                let bound = self.connect_timeout.saturating_add(t);
                tokio::time::timeout(bound, sent)
                    .await
                    .map_err(|_| timed_out("waiting for the response (read timeout)", bound))?
            }
        };
        let resp = resp.map_err(|e| io::Error::other(describe(&e)))?;
        Ok(resp.map(|b| Body::new(b, self.read_timeout)))
    }
}

/// A response body whose every wait for data is bounded by the read timeout.
pub(crate) struct Body {
    inner: Incoming,
    timeout: Option<Duration>,
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl Body {
    fn new(inner: Incoming, timeout: Option<Duration>) -> Self {
        Self {
            inner,
            timeout,
            sleep: None,
        }
    }
}

impl hyper::body::Body for Body {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(r) => {
                this.sleep = None;
                Poll::Ready(r.map(|r| r.map_err(Into::into)))
            }
            Poll::Pending => {
                let Some(t) = this.timeout else {
                    return Poll::Pending;
                };
                let sleep = this
                    .sleep
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep(t)));
                if sleep.as_mut().poll(cx).is_ready() {
                    this.sleep = None;
                    return Poll::Ready(Some(Err(timed_out(
                        "reading the response (read timeout)",
                        t,
                    )
                    .into())));
                }
                Poll::Pending
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
