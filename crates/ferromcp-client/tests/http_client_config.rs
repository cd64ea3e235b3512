//! The HTTP client's connection settings (`HttpClientConfig`), through the public API: a
//! private root CA, mutual TLS, proxies (explicit, from the environment, `NO_PROXY`), the
//! connect and read timeouts, default headers, and the OAuth client's own requests on the
//! same settings. The PKI under tests/tls/ comes from tests/tls/gen.sh.

#![cfg(feature = "https")]
#![allow(clippy::unwrap_used, clippy::panic, clippy::print_stdout)]

mod http_support;

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ferromcp_client::transport::http::{
    HttpClientConfig, HttpConfig, ProxyConfig, ProxyRules, TlsConfig,
};
use ferromcp_client::{Client, ClientError, HttpTransport};
use http::HeaderValue;
use http_support::{start_tls, within};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const CA: &[u8] = include_bytes!("tls/ca.pem");
const SERVER_CERT: &[u8] = include_bytes!("tls/server.pem");
const SERVER_KEY: &[u8] = include_bytes!("tls/server.key");
const CLIENT_CERT: &[u8] = include_bytes!("tls/client.pem");
const CLIENT_KEY: &[u8] = include_bytes!("tls/client.key");

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The server's TLS configuration; `client_ca` asks for (and requires) a client certificate.
fn server_tls(require_client_cert: bool) -> Arc<rustls::ServerConfig> {
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(SERVER_CERT)
        .collect::<Result<_, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_slice(SERVER_KEY).unwrap();
    let builder = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .unwrap();
    let builder = if require_client_cert {
        let mut roots = rustls::RootCertStore::empty();
        for c in CertificateDer::pem_slice_iter(CA) {
            roots.add(c.unwrap()).unwrap();
        }
        let verifier =
            rustls::server::WebPkiClientVerifier::builder_with_provider(roots.into(), provider())
                .build()
                .unwrap();
        builder.with_client_cert_verifier(verifier)
    } else {
        builder.with_no_client_auth()
    };
    Arc::new(builder.with_single_cert(chain, key).unwrap())
}

async fn connect(url: &str, client: HttpClientConfig) -> Result<Client, ClientError> {
    let transport = HttpTransport::new(url)?.config(HttpConfig::default().client(client));
    Client::builder().connect(transport).await
}

/// Connects, calls `echo`, shuts down.
async fn call_echo(url: &str, client: HttpClientConfig) -> Result<(), String> {
    let client = Box::pin(connect(url, client))
        .await
        .map_err(|e| e.to_string())?;
    let r = client
        .call_tool("echo", serde_json::json!({"text": "hi"}))
        .await
        .map_err(|e| e.to_string())?;
    assert_eq!(http_support::first_text(&r), "hi");
    client.shutdown().await;
    Ok(())
}

fn with_ca() -> TlsConfig {
    TlsConfig::default().root_certificates_pem(CA).unwrap()
}

fn no_proxy() -> HttpClientConfig {
    HttpClientConfig::default().proxy(ProxyConfig::None)
}

/// CL-H10: a private root CA (`TlsConfig::root_certificates_pem`).
#[tokio::test]
async fn clh10_a_private_root_ca_is_trusted_and_without_it_tls_fails_clearly() {
    within(async {
        let (addr, handshakes) = start_tls(server_tls(false)).await;
        let url = format!("https://localhost:{}/mcp", addr.port());
        // Trusted: the call works.
        call_echo(&url, no_proxy().tls(with_ca())).await.unwrap();
        assert!(handshakes.load(Ordering::SeqCst) >= 1);
        // The webpki roots alone do not know the CA: a clear TLS error.
        let err = call_echo(&url, no_proxy()).await.unwrap_err();
        assert!(err.contains("TLS handshake with localhost failed"), "{err}");
        assert!(err.contains("UnknownIssuer"), "{err}");
        // Neither webpki roots nor any root: refused when building the client.
        let none = no_proxy().tls(TlsConfig::default().webpki_roots(false));
        let err = call_echo(&url, none).await.unwrap_err();
        assert!(err.contains("no trusted root certificate"), "{err}");
    })
    .await;
}

/// CL-H11: mutual TLS (`TlsConfig::client_identity_pem`, `TlsConfig::rustls_config`).
#[tokio::test]
async fn clh11_mutual_tls_works_with_the_client_certificate_and_is_refused_without() {
    within(async {
        let (addr, handshakes) = start_tls(server_tls(true)).await;
        let url = format!("https://127.0.0.1:{}/mcp", addr.port());
        let err = call_echo(&url, no_proxy().tls(with_ca()))
            .await
            .unwrap_err();
        // TLS 1.3: the server's refusal arrives as an alert after the client's side of the
        // handshake.
        assert!(err.contains("CertificateRequired"), "{err}");
        assert_eq!(handshakes.load(Ordering::SeqCst), 0);
        let tls = with_ca()
            .client_identity_pem(CLIENT_CERT, CLIENT_KEY)
            .unwrap();
        call_echo(&url, no_proxy().tls(tls)).await.unwrap();
        assert!(handshakes.load(Ordering::SeqCst) >= 1);
        // A rustls configuration of one's own is used as it is.
        let own = rustls::ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates({
                let mut roots = rustls::RootCertStore::empty();
                for c in CertificateDer::pem_slice_iter(CA) {
                    roots.add(c.unwrap()).unwrap();
                }
                roots
            })
            .with_client_auth_cert(
                CertificateDer::pem_slice_iter(CLIENT_CERT)
                    .collect::<Result<_, _>>()
                    .unwrap(),
                PrivateKeyDer::from_pem_slice(CLIENT_KEY).unwrap(),
            )
            .unwrap();
        let tls = TlsConfig::default().rustls_config(Arc::new(own));
        call_echo(&url, no_proxy().tls(tls)).await.unwrap();
        // Bad PEM input is refused with a clear error.
        let err = TlsConfig::default()
            .client_identity_pem(CLIENT_CERT, b"not a key")
            .unwrap_err();
        assert!(err.to_string().contains("client key PEM"), "{err}");
    })
    .await;
}

/// A tiny HTTP proxy on loopback: `CONNECT` tunnels and absolute-form forwarding, recording
/// each connection's first request line and `Proxy-Authorization`.
#[derive(Clone)]
struct TestProxy {
    addr: SocketAddr,
    lines: Arc<Mutex<Vec<String>>>,
    auth: Arc<Mutex<Vec<String>>>,
}

impl TestProxy {
    async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let proxy = Self {
            addr: listener.local_addr().unwrap(),
            lines: Arc::default(),
            auth: Arc::default(),
        };
        let p = proxy.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                tokio::spawn(p.clone().relay(client));
            }
        });
        proxy
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn lines(&self) -> Vec<String> {
        self.lines.lock().unwrap().clone()
    }

    async fn relay(self, mut client: TcpStream) {
        let mut buf = Vec::new();
        let end = loop {
            let mut chunk = [0u8; 4096];
            let Ok(n) = client.read(&mut chunk).await else {
                return;
            };
            if n == 0 {
                return;
            }
            buf.extend_from_slice(&chunk[..n]);
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
        };
        let head = String::from_utf8_lossy(&buf[..end]).into_owned();
        let line = head.lines().next().unwrap_or_default().to_owned();
        let auth = head.lines().find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("proxy-authorization")
                .then(|| value.trim().to_owned())
        });
        if let Some(a) = auth {
            self.auth.lock().unwrap().push(a);
        }
        self.lines.lock().unwrap().push(line.clone());
        let mut parts = line.split(' ');
        let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        let authority = if method == "CONNECT" {
            target.to_owned()
        } else {
            let rest = target.strip_prefix("http://").unwrap_or(target);
            rest.split('/').next().unwrap_or_default().to_owned()
        };
        let Ok(mut upstream) = TcpStream::connect(authority.as_str()).await else {
            return;
        };
        if method == "CONNECT" {
            let ok = b"HTTP/1.1 200 Connection established\r\n\r\n";
            if client.write_all(ok).await.is_err() {
                return;
            }
            let _ = upstream.write_all(&buf[end..]).await;
        } else if upstream.write_all(&buf).await.is_err() {
            return;
        }
        let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
    }
}

/// CL-H12: explicit proxies (`ProxyConfig::Rules`).
#[tokio::test]
async fn clh12_explicit_proxies_tunnel_https_and_forward_http_with_basic_auth() {
    within(async {
        let proxy = TestProxy::start().await;
        let (tls_addr, _) = start_tls(server_tls(false)).await;
        let plain = http_support::start(ferromcp_http_server::HttpConfig::default()).await;
        let with_auth = proxy.url().replace("http://", "http://user:p%40ss@");
        let rules = ProxyRules::default().all(with_auth);
        let cfg = HttpClientConfig::default()
            .proxy(ProxyConfig::Rules(rules.clone()))
            .tls(with_ca());
        // https: a CONNECT tunnel, TLS end to end.
        let url = format!("https://localhost:{}/mcp", tls_addr.port());
        call_echo(&url, cfg.clone()).await.unwrap();
        let lines = proxy.lines();
        assert_eq!(
            lines[0],
            format!("CONNECT localhost:{} HTTP/1.1", tls_addr.port())
        );
        // http: forwarded in absolute form, with Proxy-Authorization on the request.
        call_echo(&plain.url(), cfg.clone()).await.unwrap();
        let lines = proxy.lines();
        let forwarded = lines
            .iter()
            .find(|l| l.starts_with("POST http://"))
            .unwrap();
        assert!(forwarded.contains(&plain.url()), "{forwarded}");
        // user:p@ss, percent-decoded.
        let auth = proxy.auth.lock().unwrap().clone();
        assert!(auth.len() >= 2, "{auth:?}");
        assert!(auth.iter().all(|a| a == "Basic dXNlcjpwQHNz"), "{auth:?}");
        // NO_PROXY: the server's host bypasses the proxy.
        let before = proxy.lines().len();
        let bypass = ProxyConfig::Rules(rules.no_proxy("example.com, 127.0.0.1"));
        call_echo(&plain.url(), HttpClientConfig::default().proxy(bypass))
            .await
            .unwrap();
        assert_eq!(proxy.lines().len(), before);
        // Unsupported proxy URLs are refused, not ignored.
        let socks = ProxyConfig::Rules(ProxyRules::default().all("socks5://127.0.0.1:1"));
        let err = call_echo(&plain.url(), HttpClientConfig::default().proxy(socks))
            .await
            .unwrap_err();
        assert!(err.contains("unsupported proxy scheme"), "{err}");
    })
    .await;
}

/// CL-H12: the environment's proxies by default (`ProxyConfig::Environment`).
#[tokio::test]
async fn clh12_environment_proxy_variables_and_no_proxy() {
    within(async {
        // The variables as ProxyConfig::Environment reads them, without the process
        // environment (process-global, shared by parallel tests).
        let vars = |pairs: &'static [(&'static str, &'static str)]| {
            ProxyRules::from_vars(move |name| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| (*v).to_owned())
            })
        };
        let r = vars(&[("https_proxy", "http://a:1"), ("HTTP_PROXY", "http://b:2")]);
        assert_eq!(r.https.as_deref(), Some("http://a:1"));
        assert_eq!(r.http.as_deref(), Some("http://b:2"));
        let r = vars(&[("ALL_PROXY", "http://c:3"), ("no_proxy", "localhost")]);
        assert_eq!(
            (r.http.as_deref(), r.https.as_deref()),
            (Some("http://c:3"), Some("http://c:3"))
        );
        assert_eq!(r.no_proxy, "localhost");
        // CGI (httpoxy): the environment's proxies are ignored.
        let r = vars(&[("HTTP_PROXY", "http://evil:1"), ("REQUEST_METHOD", "GET")]);
        assert_eq!(r, ProxyRules::default());

        // The real environment, in a child process of this test binary.
        let proxy = TestProxy::start().await;
        let plain = http_support::start(ferromcp_http_server::HttpConfig::default()).await;
        let run = |extra: &[(&str, String)]| {
            let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
            cmd.args([
                "--exact",
                "env_proxy_child",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("FERROMCP_TEST_ENV_PROXY_URL", plain.url());
            for k in [
                "HTTP_PROXY",
                "http_proxy",
                "HTTPS_PROXY",
                "https_proxy",
                "ALL_PROXY",
                "all_proxy",
                "NO_PROXY",
                "no_proxy",
            ] {
                cmd.env_remove(k);
            }
            for (k, v) in extra {
                cmd.env(k, v);
            }
            cmd
        };
        let status = tokio::task::spawn_blocking({
            let mut cmd = run(&[("http_proxy", proxy.url())]);
            move || cmd.status().unwrap()
        })
        .await
        .unwrap();
        assert!(status.success());
        let through = proxy.lines().len();
        assert!(through >= 1, "the environment's proxy was not used");
        let status = tokio::task::spawn_blocking({
            let mut cmd = run(&[
                ("HTTP_PROXY", proxy.url()),
                ("NO_PROXY", "127.0.0.1".to_owned()),
            ]);
            move || cmd.status().unwrap()
        })
        .await
        .unwrap();
        assert!(status.success());
        assert_eq!(
            proxy.lines().len(),
            through,
            "NO_PROXY did not bypass the proxy"
        );
    })
    .await;
}

/// The child of `clh12_environment_proxy_variables_and_no_proxy`: connects with the default
/// settings (the environment's proxies). Does nothing when run on its own.
#[tokio::test]
async fn env_proxy_child() {
    let Ok(url) = std::env::var("FERROMCP_TEST_ENV_PROXY_URL") else {
        return;
    };
    within(async {
        call_echo(&url, HttpClientConfig::default()).await.unwrap();
    })
    .await;
}

/// CL-H13: default headers (`HttpClientConfig::default_header`).
#[tokio::test]
async fn clh13_default_headers_arrive_and_do_not_override_the_requests_own() {
    within(async {
        let plain = http_support::start(ferromcp_http_server::HttpConfig::default()).await;
        let cfg = no_proxy()
            .default_header(
                http::header::USER_AGENT,
                HeaderValue::from_static("ferromcp-test/1"),
            )
            .default_header(
                http::HeaderName::from_static("x-gateway-key"),
                HeaderValue::from_static("k1"),
            )
            // The transport's own Content-Type wins.
            .default_header(
                http::header::CONTENT_TYPE,
                HeaderValue::from_static("text/plain"),
            );
        call_echo(&plain.url(), cfg).await.unwrap();
        let seen = plain.seen();
        assert!(!seen.is_empty());
        for s in &seen {
            assert_eq!(s.header("user-agent"), Some("ferromcp-test/1"));
            assert_eq!(s.header("x-gateway-key"), Some("k1"));
            if s.method == http::Method::POST {
                assert_eq!(s.header("content-type"), Some("application/json"));
            }
        }
    })
    .await;
}

#[tokio::test]
async fn c40_a_connection_that_never_completes_hits_the_connect_timeout() {
    within(async {
        // The TCP connection is accepted by the kernel, but nothing ever answers the TLS
        // handshake: without the bound, connecting would wait forever.
        let silent = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!(
            "https://127.0.0.1:{}/mcp",
            silent.local_addr().unwrap().port()
        );
        let cfg = no_proxy().connect_timeout(Duration::from_millis(300));
        let started = Instant::now();
        let err = call_echo(&url, cfg).await.unwrap_err();
        assert!(err.contains("connecting timed out after 300ms"), "{err}");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        // A proxy that never answers CONNECT: the same bound.
        let proxy = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let rules = ProxyRules::default().all(format!("http://{}", proxy.local_addr().unwrap()));
        let cfg = HttpClientConfig::default()
            .proxy(ProxyConfig::Rules(rules))
            .connect_timeout(Duration::from_millis(300));
        let started = Instant::now();
        let err = call_echo("https://localhost:1/mcp", cfg).await.unwrap_err();
        assert!(err.contains("connecting timed out"), "{err}");
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(
            HttpClientConfig::default().connect_timeout,
            ferromcp_client::transport::http::DEFAULT_CONNECT_TIMEOUT
        );
    })
    .await;
}

/// A server that reads requests and answers with `answer` (then stalls), or never answers.
async fn stalling_server(answer: Option<&'static [u8]>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((mut s, _)) = listener.accept().await {
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf).await;
            if let Some(a) = answer {
                let _ = s.write_all(a).await;
            }
            held.push(s);
        }
    });
    addr
}

#[tokio::test]
async fn c41_a_server_that_stalls_hits_the_read_timeout() {
    within(async {
        // The response head is bounded by connect + read timeout.
        let cfg = no_proxy()
            .connect_timeout(Duration::from_millis(300))
            .read_timeout(Some(Duration::from_millis(300)));
        assert_eq!(
            HttpClientConfig::default().read_timeout,
            ferromcp_client::transport::http::DEFAULT_READ_TIMEOUT
        );
        // No response head at all.
        let addr = stalling_server(None).await;
        let started = Instant::now();
        let err = call_echo(&format!("http://{addr}/mcp"), cfg.clone())
            .await
            .unwrap_err();
        assert!(err.contains("read timeout"), "{err}");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        // A head, then a body that never comes.
        let head: &[u8] =
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{";
        let addr = stalling_server(Some(head)).await;
        let started = Instant::now();
        let err = call_echo(&format!("http://{addr}/mcp"), cfg)
            .await
            .unwrap_err();
        assert!(err.contains("read timeout"), "{err}");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
    })
    .await;
}

#[cfg(feature = "oauth")]
#[tokio::test]
async fn c42_oauth_requests_use_the_client_settings_and_the_guard_still_checks_ip_literals() {
    use ferromcp_client::oauth::{AddressPolicy, OAuthConfig, RedirectReadingHandler, authorize};
    within(async {
        let proxy = TestProxy::start().await;
        let plain = http_support::start(ferromcp_http_server::HttpConfig::default()).await;
        let via_proxy = HttpClientConfig::default()
            .proxy(ProxyConfig::Rules(ProxyRules::default().all(proxy.url())))
            .default_header(
                http::HeaderName::from_static("x-gateway-key"),
                HeaderValue::from_static("k2"),
            );
        let cfg = || {
            OAuthConfig::new("http://127.0.0.1:1/cb", RedirectReadingHandler)
                .with_http_client(via_proxy.clone())
        };
        // The probe of the MCP server goes through the proxy with the default headers (an
        // unprotected server: no 401, nothing to authorize).
        let got = authorize(&plain.url(), &cfg()).await.unwrap();
        assert!(got.is_none());
        let through = proxy.lines().len();
        assert!(through >= 1, "{:?}", proxy.lines());
        assert!(
            plain
                .seen()
                .iter()
                .any(|s| s.header("x-gateway-key") == Some("k2"))
        );
        // Public addresses only: the loopback IP literal is refused before the proxy is asked.
        let strict = cfg().with_address_policy(AddressPolicy::PublicOnly);
        let err = authorize(&plain.url(), &strict).await.unwrap_err();
        assert!(err.to_string().contains("non-public address"), "{err}");
        assert_eq!(proxy.lines().len(), through);
    })
    .await;
}
