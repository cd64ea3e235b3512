//! A connector of one's own (`HttpClientConfig::connector`, issue #21): the Streamable HTTP
//! and HTTP+SSE transports over a Unix socket, keep-alive reuse of the connector's
//! connections, TLS over the connector's stream (or none when it says it is secure), its
//! errors and the connect timeout around it (CL-H15, CL-H16), and the OAuth client's
//! discovery (CL-H17) and `RedirectReadingHandler`'s authorization request (CL-H18) through
//! it.

#![cfg(feature = "http")]
#![allow(clippy::unwrap_used, clippy::panic)]

mod http_support;

use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ferromcp_client::transport::http::{
    Connector, HttpClientConfig, HttpConfig, ProxyConfig, ProxyRules, Target,
};
use ferromcp_client::{Client, ClientError, HttpTransport};
use http_support::{first_text, within};
use serde_json::json;
use tokio::net::TcpStream;

/// Connects with `client`'s settings (no standalone GET stream: one connection at a time).
async fn connect(url: &str, client: HttpClientConfig) -> Result<Client, ClientError> {
    let config = HttpConfig::default()
        .standalone_stream(false)
        .client(client);
    let transport = HttpTransport::new(url)?.config(config);
    Box::pin(Client::builder().connect(transport)).await
}

/// Calls `echo` on `client` and checks the answer.
async fn echo(client: &Client, text: &str) {
    let r = client
        .call_tool("echo", json!({ "text": text }))
        .await
        .unwrap();
    assert_eq!(first_text(&r), text);
}

/// Sends every connection to one TCP address, whatever the URL says; counts connections and
/// records their targets.
#[derive(Clone)]
struct ConnectTo {
    addr: SocketAddr,
    made: Arc<AtomicUsize>,
    targets: Arc<Mutex<Vec<String>>>,
    secure: bool,
}

impl ConnectTo {
    fn new(addr: SocketAddr) -> Self {
        Self {
            addr,
            made: Arc::default(),
            targets: Arc::default(),
            secure: false,
        }
    }
}

impl Connector for ConnectTo {
    type Stream = TcpStream;

    async fn connect(&self, target: &Target) -> io::Result<TcpStream> {
        self.targets.lock().unwrap().push(target.to_string());
        let tcp = TcpStream::connect(self.addr).await?;
        self.made.fetch_add(1, Ordering::SeqCst);
        Ok(tcp)
    }

    fn handles_tls(&self) -> bool {
        self.secure
    }
}

/// A proxy configuration that would break every connection if it were used (and would send
/// its credentials as `Proxy-Authorization` on `http://` requests).
fn dead_proxy() -> ProxyConfig {
    ProxyConfig::Rules(ProxyRules::default().all("http://user:secret@127.0.0.1:1"))
}

#[cfg(unix)]
mod unix {
    use std::path::PathBuf;

    use ferromcp_http_server::McpHttpService;
    use http::Request;
    use hyper::body::Incoming;
    use hyper_util::rt::TokioIo;
    use tokio::net::{UnixListener, UnixStream};

    use super::*;

    /// Connects to a Unix socket, whatever the URL's host.
    pub(super) struct UnixConnector(pub(super) PathBuf);

    impl Connector for UnixConnector {
        type Stream = UnixStream;

        async fn connect(&self, _target: &Target) -> io::Result<UnixStream> {
            UnixStream::connect(&self.0).await
        }
    }

    /// ferromcp's Streamable HTTP service (and the HTTP+SSE transport at `/sse`) on a Unix
    /// socket, for the host name `mcp.sock`; the socket's path.
    pub(super) fn serve() -> PathBuf {
        static N: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "ferromcp-connector-{}-{}.sock",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_file(&path);
        let listener = UnixListener::bind(&path).unwrap();
        let config = ferromcp_http_server::HttpConfig::default()
            .allowed_hosts(["mcp.sock"])
            .legacy_sse(true);
        let service = McpHttpService::new(
            http_support::test_server(Arc::new(http_support::Flags::default())),
            config,
        );
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let service = service.clone();
                let svc = hyper::service::service_fn(move |req: Request<Incoming>| {
                    let service = service.clone();
                    async move { Ok::<_, Infallible>(service.handle(req).await) }
                });
                tokio::spawn(async move {
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), svc)
                        .await;
                });
            }
        });
        path
    }
}

/// CL-H15: the Streamable HTTP transport and the 2024-11-05 HTTP+SSE transport reach a
/// server bound to a Unix socket through the connector; the URL's host is never resolved,
/// and proxy settings (which would fail every connection) are ignored.
#[cfg(unix)]
#[tokio::test]
async fn clh15_a_connector_reaches_a_server_on_a_unix_socket() {
    within(async {
        let path = unix::serve();
        let cfg = HttpClientConfig::default()
            .proxy(dead_proxy())
            .connector(unix::UnixConnector(path.clone()));
        assert!(cfg.has_connector());
        let client = connect("http://mcp.sock/mcp", cfg.clone()).await.unwrap();
        echo(&client, "over a unix socket").await;
        client.shutdown().await;
        // The old HTTP+SSE transport, over the same connector.
        let t = HttpTransport::legacy_sse("http://mcp.sock/sse")
            .unwrap()
            .config(HttpConfig::default().client(cfg));
        let client = Box::pin(Client::builder().connect(t)).await.unwrap();
        assert_eq!(client.session().era, ferromcp_types::Era::Handshake);
        echo(&client, "old transport").await;
        client.shutdown().await;
        let _ = std::fs::remove_file(path);
    })
    .await;
}

/// CL-H15: the connector runs once per pooled connection, not per request: twenty calls
/// in a row go over one connection (keep-alive), which the server sees as one too. The proxy
/// settings are ignored: no `Proxy-Authorization` reaches the server.
#[tokio::test]
async fn clh15_keep_alive_reuses_the_connectors_connection() {
    within(async {
        let server = http_support::start(ferromcp_http_server::HttpConfig::default()).await;
        let connector = ConnectTo::new(server.addr);
        let made = connector.made.clone();
        // `localhost` on port 1: only the connector knows where the server is.
        let cfg = HttpClientConfig::default()
            .proxy(dead_proxy())
            .connector(connector.clone());
        let client = connect("http://localhost:1/mcp", cfg).await.unwrap();
        for i in 0..20 {
            echo(&client, &format!("call {i}")).await;
        }
        client.shutdown().await;
        assert_eq!(made.load(Ordering::SeqCst), 1);
        assert_eq!(server.connections.load(Ordering::SeqCst), 1);
        let targets = connector.targets.lock().unwrap().clone();
        assert_eq!(targets, ["http://localhost:1"]);
        let seen = server.seen();
        assert!(seen.len() >= 21, "{}", seen.len());
        assert!(
            seen.iter()
                .all(|s| s.header("proxy-authorization").is_none())
        );
    })
    .await;
}

/// A connector that always fails, or never finishes.
struct Broken {
    hang: bool,
}

impl Connector for Broken {
    type Stream = TcpStream;

    async fn connect(&self, _target: &Target) -> io::Result<TcpStream> {
        if self.hang {
            std::future::pending::<()>().await;
        }
        Err(io::Error::new(
            io::ErrorKind::ConnectionRefused,
            "tunnel bastion-7 is down",
        ))
    }
}

/// CL-H16: a connector's error fails the connect as an HTTP transport error whose message
/// names the connector, the target and the connector's own error.
#[tokio::test]
async fn clh16_a_connector_error_is_a_clear_transport_error() {
    within(async {
        let cfg = HttpClientConfig::default().connector(Broken { hang: false });
        let err = connect("http://mcp.internal:8080/mcp", cfg)
            .await
            .err()
            .unwrap();
        // A failed connection is the transport's -32000, as for TCP.
        let text = err.to_string();
        assert!(text.contains("HTTP transport"), "{text}");
        assert!(
            text.contains(
                "the connector failed to connect to http://mcp.internal:8080: tunnel bastion-7 \
                 is down"
            ),
            "{text}"
        );
    })
    .await;
}

/// CL-H16: the connect timeout bounds a connector that never returns.
#[tokio::test]
async fn clh16_the_connect_timeout_bounds_a_connector_that_never_returns() {
    within(async {
        let cfg = HttpClientConfig::default()
            .connect_timeout(Duration::from_millis(300))
            .connector(Broken { hang: true });
        let started = Instant::now();
        let err = connect("http://mcp.internal/mcp", cfg).await.err().unwrap();
        let text = err.to_string();
        assert!(text.contains("connecting timed out after 300ms"), "{text}");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
    })
    .await;
}

#[cfg(feature = "https")]
mod tls {

    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};

    use super::*;

    pub(super) const CA: &[u8] = include_bytes!("tls/ca.pem");
    const SERVER_CERT: &[u8] = include_bytes!("tls/server.pem");
    const SERVER_KEY: &[u8] = include_bytes!("tls/server.key");

    /// ferromcp's MCP endpoint over TLS (the certificate of tests/tls/, for `localhost`) on
    /// 127.0.0.1:0; counts completed handshakes.
    pub(super) async fn start() -> (SocketAddr, Arc<AtomicUsize>) {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(SERVER_CERT)
            .collect::<Result<_, _>>()
            .unwrap();
        let key = PrivateKeyDer::from_pem_slice(SERVER_KEY).unwrap();
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .unwrap();
        http_support::start_tls(Arc::new(config)).await
    }
}

/// CL-H15: for an `https` URL the client runs TLS over the connector's stream with the TLS
/// settings (the private CA; without it the handshake fails), checking the URL's host; a
/// connector that says its streams are secure gets no TLS of the client's own.
#[cfg(feature = "https")]
#[tokio::test]
async fn clh15_https_runs_tls_over_the_connectors_stream() {
    use ferromcp_client::transport::http::TlsConfig;
    within(async {
        let (addr, handshakes) = tls::start().await;
        let connector = ConnectTo::new(addr);
        let url = "https://localhost:1/mcp";
        let with_ca = TlsConfig::default().root_certificates_pem(tls::CA).unwrap();
        let cfg = HttpClientConfig::default()
            .tls(with_ca)
            .connector(connector.clone());
        let client = connect(url, cfg).await.unwrap();
        echo(&client, "tls over the connector").await;
        client.shutdown().await;
        assert_eq!(handshakes.load(Ordering::SeqCst), 1);
        assert_eq!(connector.targets.lock().unwrap()[0], "https://localhost:1");
        // The webpki roots alone do not know the private CA: the handshake over the stream
        // fails.
        let cfg = HttpClientConfig::default().connector(connector.clone());
        let err = connect(url, cfg).await.err().unwrap().to_string();
        assert!(err.contains("TLS handshake with localhost failed"), "{err}");
        assert!(err.contains("UnknownIssuer"), "{err}");
        // A connector whose streams are secure already: plain HTTP/1.1 over them for an
        // https URL (here a plain server, which a TLS ClientHello would break).
        let plain = http_support::start(ferromcp_http_server::HttpConfig::default()).await;
        let secure = ConnectTo {
            secure: true,
            ..ConnectTo::new(plain.addr)
        };
        let cfg = HttpClientConfig::default().connector(secure);
        let client = connect(url, cfg).await.unwrap();
        echo(&client, "already secure").await;
        client.shutdown().await;
    })
    .await;
}

#[cfg(feature = "oauth")]
mod oauth_mock {
    use bytes::Bytes;
    use http::{Method, Request, Response, StatusCode};
    use http_body_util::{BodyExt, Full};
    use hyper::body::Incoming;
    use hyper_util::rt::TokioIo;
    use serde_json::Value;
    use tokio::io::DuplexStream;

    use super::*;

    /// An in-memory connector: each connection is a pipe to a fresh HTTP/1.1 server playing
    /// the MCP server `mcp.test` (401 with `resource_metadata`, its protected-resource
    /// metadata) and the authorization server `auth.test` (metadata, an authorization endpoint
    /// that redirects at once, token endpoint).
    /// Records `Host path` of every request. The pipe is trusted as it is: the connector
    /// handles TLS (none), so the https URLs the OAuth client insists on work over it.
    #[derive(Clone, Default)]
    pub(super) struct Pipe {
        pub(super) made: Arc<AtomicUsize>,
        pub(super) seen: Arc<Mutex<Vec<String>>>,
    }

    impl Connector for Pipe {
        type Stream = DuplexStream;

        async fn connect(&self, _target: &Target) -> io::Result<DuplexStream> {
            self.made.fetch_add(1, Ordering::SeqCst);
            let (client, server) = tokio::io::duplex(64 * 1024);
            let seen = self.seen.clone();
            let svc = hyper::service::service_fn(move |req: Request<Incoming>| {
                let seen = seen.clone();
                async move { Ok::<_, Infallible>(answer(req, &seen).await) }
            });
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(server), svc)
                    .await;
            });
            Ok(client)
        }

        fn handles_tls(&self) -> bool {
            true
        }
    }

    fn json(status: StatusCode, v: &Value) -> Response<Full<Bytes>> {
        Response::builder()
            .status(status)
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(v.to_string())))
            .unwrap()
    }

    async fn answer(req: Request<Incoming>, seen: &Mutex<Vec<String>>) -> Response<Full<Bytes>> {
        let host = req
            .headers()
            .get("host")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let (method, path) = (req.method().clone(), req.uri().path().to_owned());
        let state = url::form_urlencoded::parse(req.uri().query().unwrap_or_default().as_bytes())
            .find(|(k, _)| k == "state")
            .map(|(_, v)| v.into_owned())
            .unwrap_or_default();
        let _ = req.into_body().collect().await;
        seen.lock().unwrap().push(format!("{method} {host}{path}"));
        match (method, host.as_str(), path.as_str()) {
            (_, "mcp.test", "/mcp") => Response::builder()
                .status(StatusCode::UNAUTHORIZED)
                .header(
                    "www-authenticate",
                    r#"Bearer resource_metadata="https://mcp.test/.well-known/oauth-protected-resource/mcp", scope="mcp:read""#,
                )
                .body(Full::new(Bytes::new()))
                .unwrap(),
            (Method::GET, "mcp.test", "/.well-known/oauth-protected-resource/mcp") => json(
                StatusCode::OK,
                &json!({
                    "resource": "https://mcp.test/mcp",
                    "authorization_servers": ["https://auth.test"],
                }),
            ),
            (Method::GET, "auth.test", "/.well-known/oauth-authorization-server") => json(
                StatusCode::OK,
                &json!({
                    "issuer": "https://auth.test",
                    "authorization_endpoint": "https://auth.test/authorize",
                    "token_endpoint": "https://auth.test/token",
                    "response_types_supported": ["code"],
                    "code_challenge_methods_supported": ["S256"],
                    "token_endpoint_auth_methods_supported": ["client_secret_post"],
                }),
            ),
            // Redirects at once, as a pre-approved client's authorization endpoint does.
            (Method::GET, "auth.test", "/authorize") => Response::builder()
                .status(StatusCode::FOUND)
                .header("location", format!("https://app.test/cb?code=c1&state={state}"))
                .body(Full::new(Bytes::new()))
                .unwrap(),
            (Method::POST, "auth.test", "/token") => json(
                StatusCode::OK,
                &json!({"access_token": "tok", "token_type": "Bearer", "expires_in": 3600}),
            ),
            _ => json(StatusCode::NOT_FOUND, &json!({})),
        }
    }
}

/// CL-H17: the OAuth client's own requests (the probe of the MCP server, protected-resource
/// and authorization-server metadata, the token request) go through the connector set with
/// `OAuthConfig::with_http_client`, to hosts that resolve nowhere; the address guard still
/// refuses an IP-literal host before the connector is asked.
#[cfg(feature = "oauth")]
#[tokio::test]
async fn clh17_oauth_discovery_goes_through_the_connector() {
    use ferromcp_client::oauth::{AddressPolicy, ClientCredentials, Grant, OAuthConfig, authorize};
    within(async {
        let pipe = oauth_mock::Pipe::default();
        let cfg = OAuthConfig::with_grant(Grant::ClientCredentials)
            .with_credentials(ClientCredentials::new("svc").with_secret("s3cret"))
            .with_http_client(HttpClientConfig::default().connector(pipe.clone()));
        let tokens = authorize("https://mcp.test/mcp", &cfg)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(tokens.access_token, "tok");
        let seen = pipe.seen.lock().unwrap().clone();
        for step in [
            "POST mcp.test/mcp",
            "GET mcp.test/.well-known/oauth-protected-resource/mcp",
            "GET auth.test/.well-known/oauth-authorization-server",
            "POST auth.test/token",
        ] {
            assert!(seen.iter().any(|s| s == step), "{step} not in {seen:?}");
        }
        // Public addresses only: a private IP literal is refused before the connector runs.
        let before = pipe.made.load(Ordering::SeqCst);
        let strict = OAuthConfig::with_grant(Grant::ClientCredentials)
            .with_credentials(ClientCredentials::new("svc").with_secret("s3cret"))
            .with_address_policy(AddressPolicy::PublicOnly)
            .with_http_client(HttpClientConfig::default().connector(pipe.clone()));
        let err = authorize("https://10.0.0.1/mcp", &strict)
            .await
            .unwrap_err();
        assert!(err.to_string().contains("non-public address"), "{err}");
        assert_eq!(pipe.made.load(Ordering::SeqCst), before);
    })
    .await;
}

/// CL-H18: in the authorization-code flow, `RedirectReadingHandler` GETs the authorization
/// URL through the flow's own HTTP client (the connector set with
/// `OAuthConfig::with_http_client`), not through a client of the default settings, which
/// cannot reach `auth.test` (it resolves nowhere).
#[cfg(feature = "oauth")]
#[tokio::test]
async fn clh18_the_redirect_reading_handler_goes_through_the_connector() {
    use ferromcp_client::oauth::{
        ClientCredentials, OAuthConfig, RedirectReadingHandler, authorize,
    };
    within(async {
        let pipe = oauth_mock::Pipe::default();
        let cfg = OAuthConfig::new("https://app.test/cb", RedirectReadingHandler)
            .with_credentials(ClientCredentials::new("app").with_secret("s3cret"))
            .with_http_client(HttpClientConfig::default().connector(pipe.clone()));
        let tokens = authorize("https://mcp.test/mcp", &cfg)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(tokens.access_token, "tok");
        let seen = pipe.seen.lock().unwrap().clone();
        for step in ["GET auth.test/authorize", "POST auth.test/token"] {
            assert!(seen.iter().any(|s| s == step), "{step} not in {seen:?}");
        }
    })
    .await;
}
