//! SSRF and hostile-URL protections of the OAuth client (feature `oauth`), through its public
//! API (`oauth::authorize`) against a raw mock MCP server + authorization server that serves
//! hostile metadata: authorization servers at private or cloud-metadata addresses over plain
//! http, redirects to internal addresses, and authorization endpoints with dangerous schemes.
//!
//! The address guard (CL-U01): when the MCP server is on a public address, the flow's own
//! fetches refuse loopback, private and link-local addresses at connect time. The mock MCP
//! server here is on loopback, so these tests stand a public server in with
//! `AddressPolicy::PublicOnly` and trust its host (`with_trusted_host`); the decision from
//! the server's own address is unit-tested in `src/oauth/guard.rs`.
//!
//! Spec: 2025-11-25 security best practices §SSRF (CL-U01), §OAuth Authorization URL
//! Validation (CL-U02); the redirect rule of the advisories (CL-U05, V18).
#![cfg(feature = "oauth")]
#![allow(clippy::unwrap_used, clippy::panic)]

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferromcp_client::oauth::{
    self, AddressPolicy, AuthorizationHandler, AuthorizationResponse, OAuthConfig, OAuthError,
};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

async fn within<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(30), f)
        .await
        .unwrap()
}

/// Reads one request; returns its request line (`METHOD path`).
async fn read_request(s: &mut TcpStream) -> Option<String> {
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        if s.read(&mut byte).await.ok()? == 0 {
            return None;
        }
        buf.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&buf).into_owned();
    let len = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse::<usize>().ok())?
        })
        .unwrap_or(0);
    let mut body = vec![0u8; len];
    s.read_exact(&mut body).await.ok()?;
    let line = head.lines().next()?.to_owned();
    let mut parts = line.split(' ');
    Some(format!("{} {}", parts.next()?, parts.next()?))
}

fn json(status: &str, extra: &str, v: &Value) -> String {
    let body = v.to_string();
    format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n{extra}\r\n{body}",
        body.len()
    )
}

/// What the mock serves as protected-resource metadata.
#[derive(Clone)]
enum Prm {
    /// `authorization_servers: [url]`.
    Server(String),
    /// A 302 to this URL instead of the document.
    Redirect(String),
}

#[derive(Clone)]
struct Mock {
    prm: Prm,
    /// The authorization server metadata's `authorization_endpoint`.
    authorization_endpoint: Option<String>,
}

/// Starts a listener that records every request line it gets.
async fn recorder() -> (SocketAddr, Arc<Mutex<Vec<String>>>) {
    recorder_on("127.0.0.1").await
}

/// [`recorder`] on another address.
async fn recorder_on(ip: &str) -> (SocketAddr, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind((ip, 0)).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s2 = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let seen = s2.clone();
            tokio::spawn(async move {
                while let Some(line) = read_request(&mut s).await {
                    seen.lock().unwrap().push(line);
                    let _ = s.write_all(json("200 OK", "", &json!({})).as_bytes()).await;
                }
            });
        }
    });
    (addr, seen)
}

async fn mock(m: Mock) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let m = m.clone();
            tokio::spawn(async move {
                while let Some(line) = read_request(&mut s).await {
                    let base = format!("http://{addr}");
                    let out = match line.as_str() {
                        "POST /mcp" | "GET /mcp" => {
                            let www = format!(
                                "www-authenticate: Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\"\r\n"
                            );
                            json("401 Unauthorized", &www, &json!({}))
                        }
                        "GET /.well-known/oauth-protected-resource/mcp"
                        | "GET /.well-known/oauth-protected-resource" => match &m.prm {
                            Prm::Server(url) => json(
                                "200 OK",
                                "",
                                &json!({"resource": format!("{base}/mcp"),
                                        "authorization_servers": [url]}),
                            ),
                            Prm::Redirect(to) => {
                                format!(
                                    "HTTP/1.1 302 Found\r\nlocation: {to}\r\ncontent-length: 0\r\n\r\n"
                                )
                            }
                        },
                        l if l.starts_with("GET /.well-known/oauth-authorization-server")
                            || l.starts_with("GET /.well-known/openid-configuration") =>
                        {
                            let endpoint = m
                                .authorization_endpoint
                                .clone()
                                .unwrap_or_else(|| format!("{base}/authorize"));
                            json(
                                "200 OK",
                                "",
                                &json!({"issuer": base, "authorization_endpoint": endpoint,
                                        "token_endpoint": format!("{base}/token"),
                                        "registration_endpoint": format!("{base}/register"),
                                        "response_types_supported": ["code"],
                                        "code_challenge_methods_supported": ["S256"]}),
                            )
                        }
                        "POST /register" => json(
                            "201 Created",
                            "",
                            &json!({"client_id": "c", "redirect_uris": ["http://127.0.0.1:1/cb"]}),
                        ),
                        _ => json("404 Not Found", "", &json!({})),
                    };
                    let _ = s.write_all(out.as_bytes()).await;
                }
            });
        }
    });
    addr
}

/// An authorization step that only counts how often the flow reached it.
struct Counting(Arc<AtomicUsize>);

impl AuthorizationHandler for Counting {
    fn authorize<'a>(
        &'a self,
        _url: &'a str,
    ) -> std::pin::Pin<
        Box<
            dyn std::future::Future<Output = Result<AuthorizationResponse, OAuthError>> + Send + 'a,
        >,
    > {
        self.0.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { Err(OAuthError::Authorization("the test stops here".into())) })
    }
}

fn config(calls: &Arc<AtomicUsize>) -> OAuthConfig {
    OAuthConfig::new("http://127.0.0.1:1/cb", Counting(calls.clone()))
}

/// The control: with a well-behaved loopback authorization server the flow does reach the
/// application's authorization step, so the refusals below are the checks at work.
async fn control() {
    let auth_server = mock(Mock {
        prm: Prm::Server(String::new()),
        authorization_endpoint: None,
    })
    .await;
    let server = mock(Mock {
        prm: Prm::Server(format!("http://{auth_server}")),
        authorization_endpoint: None,
    })
    .await;
    let calls = Arc::new(AtomicUsize::new(0));
    let err = oauth::authorize(&format!("http://{server}/mcp"), &config(&calls))
        .await
        .unwrap_err();
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "the control flow stopped early: {err}"
    );
}

/// C21 (CL-U01): authorization servers at private, link-local (cloud metadata) or otherwise
/// non-loopback addresses over plain http are refused before any connection is made; an
/// IPv6 form of an internal IPv4 address is not loopback either (S131; `[::ffff:127.0.0.1]`
/// is loopback, the one rule's IPv4-mapped case).
#[tokio::test]
async fn c21_plain_http_to_internal_addresses_is_refused() {
    within(async {
        control().await;
        for target in [
            "http://169.254.169.254/",
            "http://10.0.0.1/",
            "http://192.168.1.1/",
            "http://172.16.0.1/",
            "http://[::ffff:10.0.0.1]/",
            "http://[2002:7f00:1::1]/",
            "http://[64:ff9b::7f00:1]/",
            "http://127.0.0.1.nip.io/",
            "http://localhost.example.com/",
            "http://[fe80::1]/",
            "http://metadata.google.internal/",
        ] {
            let addr = mock(Mock {
                prm: Prm::Server(target.to_owned()),
                authorization_endpoint: None,
            })
            .await;
            let calls = Arc::new(AtomicUsize::new(0));
            let err = oauth::authorize(&format!("http://{addr}/mcp"), &config(&calls))
                .await
                .unwrap_err();
            assert!(matches!(err, OAuthError::Url(_)), "{target}: {err}");
            assert_eq!(calls.load(Ordering::SeqCst), 0);
        }
    })
    .await;
}

/// C24 (CL-U01, CL-U05): a metadata endpoint that redirects (302) to an internal address is
/// not followed: the target is never contacted and the flow fails.
#[tokio::test]
async fn c24_redirects_during_discovery_are_not_followed() {
    within(async {
        let (internal, seen) = recorder().await;
        let addr = mock(Mock {
            prm: Prm::Redirect(format!("http://{internal}/internal-metadata")),
            authorization_endpoint: None,
        })
        .await;
        let calls = Arc::new(AtomicUsize::new(0));
        let r = oauth::authorize(&format!("http://{addr}/mcp"), &config(&calls)).await;
        assert!(r.is_err(), "{r:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(
            seen.lock().unwrap().is_empty(),
            "{:?}",
            seen.lock().unwrap()
        );
        assert_eq!(calls.load(Ordering::SeqCst), 0);
    })
    .await;
}

/// C25 (CL-U02, V20): an `authorization_endpoint` with a dangerous scheme or off-loopback
/// plain http is refused; the application's authorization step is never asked to open it.
#[tokio::test]
async fn c25_dangerous_authorization_endpoints_are_never_opened() {
    within(async {
        control().await;
        for endpoint in [
            "javascript:alert(1)",
            "file:///etc/passwd",
            "data:text/html,<script>alert(1)</script>",
            "vbscript:msgbox(1)",
            "http://attacker.example/authorize",
            "\"https://a\" & calc",
            "%USERPROFILE%",
        ] {
            // The authorization server, with the hostile endpoint in its metadata.
            let addr = mock(Mock {
                prm: Prm::Server(String::new()),
                authorization_endpoint: Some(endpoint.to_owned()),
            })
            .await;
            let calls = Arc::new(AtomicUsize::new(0));
            // The MCP server, whose metadata names that authorization server.
            let server = mock(Mock {
                prm: Prm::Server(format!("http://{addr}")),
                authorization_endpoint: None,
            })
            .await;
            let err = oauth::authorize(&format!("http://{server}/mcp"), &config(&calls))
                .await
                .unwrap_err();
            assert_eq!(
                calls.load(Ordering::SeqCst),
                0,
                "{endpoint:?} was handed to the app"
            );
            assert!(!err.to_string().is_empty());
        }
    })
    .await;
}

/// C30 (CL-U01): the MCP server is public (stood in for by a trusted loopback host under
/// `AddressPolicy::PublicOnly`); its metadata names authorization servers on loopback by
/// name (`localhost`, through the resolver) and by IP literal (`127.0.0.2`): both are
/// refused at connect time with a clear error, and neither listener is ever contacted.
#[tokio::test]
async fn c30_a_public_servers_oauth_fetches_refuse_internal_addresses() {
    within(async {
        let (by_name, seen_by_name) = recorder().await;
        let (by_ip, seen_by_ip) = recorder_on("127.0.0.2").await;
        for target in [
            format!("http://localhost:{}", by_name.port()),
            format!("http://{by_ip}"),
        ] {
            let server = mock(Mock {
                prm: Prm::Server(target.clone()),
                authorization_endpoint: None,
            })
            .await;
            let calls = Arc::new(AtomicUsize::new(0));
            let cfg = config(&calls)
                .with_address_policy(AddressPolicy::PublicOnly)
                .with_trusted_host("127.0.0.1");
            let err = oauth::authorize(&format!("http://{server}/mcp"), &cfg)
                .await
                .unwrap_err();
            assert!(
                matches!(&err, OAuthError::Http(m) if m.contains("non-public address")),
                "{target}: {err}"
            );
            assert_eq!(calls.load(Ordering::SeqCst), 0);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(seen_by_name.lock().unwrap().is_empty());
        assert!(seen_by_ip.lock().unwrap().is_empty());
        // Not trusted, the (loopback) MCP server itself is refused: nothing is sent to it.
        let (mcp, seen) = recorder().await;
        let calls = Arc::new(AtomicUsize::new(0));
        let cfg = config(&calls).with_address_policy(AddressPolicy::PublicOnly);
        let err = oauth::authorize(&format!("http://{mcp}/mcp"), &cfg)
            .await
            .unwrap_err();
        assert!(err.to_string().contains("non-public address"), "{err}");
        assert!(seen.lock().unwrap().is_empty());
    })
    .await;
}

/// C31 (CL-U01): with the default policy, an MCP server on loopback (local development) may
/// use authorization servers on loopback: the metadata fetch reaches them.
#[tokio::test]
async fn c31_a_local_server_may_use_local_authorization_servers() {
    within(async {
        let (auth_server, seen) = recorder().await;
        let server = mock(Mock {
            prm: Prm::Server(format!("http://localhost:{}", auth_server.port())),
            authorization_endpoint: None,
        })
        .await;
        let calls = Arc::new(AtomicUsize::new(0));
        let cfg = config(&calls);
        assert_eq!(cfg.address_policy, AddressPolicy::Auto);
        // The recorder's `{}` is no valid metadata: the flow fails after fetching it.
        let r = oauth::authorize(&format!("http://{server}/mcp"), &cfg).await;
        assert!(r.is_err());
        let seen = seen.lock().unwrap().clone();
        assert!(
            seen.iter().any(|l| l.starts_with("GET /.well-known/")),
            "{seen:?}"
        );
    })
    .await;
}
