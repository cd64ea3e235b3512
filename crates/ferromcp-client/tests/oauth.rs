//! The OAuth client against a loopback mock: one hyper server playing the MCP resource (a
//! minimal JSON-answering MCP endpoint behind a 401 with `resource_metadata`), its
//! protected-resource metadata, the authorization server (metadata, registration, an
//! authorization endpoint that redirects at once, token) and an enterprise IdP's token
//! endpoint. Each test names the spec section it covers.
#![cfg(feature = "oauth")]
#![allow(clippy::unwrap_used, clippy::panic)]

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use bytes::Bytes;
use ferromcp_client::oauth::{
    self, AuthorizationHandler as _, ClientCredentials, ClientKey, EnterpriseGrant, Grant,
    MemoryTokenStore, OAuthConfig, OAuthError, OAuthProvider, RedirectReadingHandler,
    SigningAlgorithm, TokenStore, Tokens,
};
use ferromcp_client::transport::http::{AuthProvider, MAX_AUTH_RETRIES};
use ferromcp_client::{Client, HttpTransport, Lifecycle};
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode, Uri};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use p256::ecdsa::signature::Verifier as _;
use p256::ecdsa::{Signature, VerifyingKey};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::net::TcpListener;

const LIMIT: Duration = Duration::from_secs(30);

/// Runs `f`, failing the test if it hangs.
async fn within<F: Future>(f: F) -> F::Output {
    match tokio::time::timeout(LIMIT, f).await {
        Ok(v) => v,
        Err(_) => panic!("timed out after {LIMIT:?}"),
    }
}

/// How the mock resource treats DPoP nonces.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum RsNonce {
    /// Never asks for one.
    #[default]
    No,
    /// Asks once for `rs-n`, then accepts proofs carrying it.
    Once,
    /// Asks for a new nonce on every request.
    Always,
}

#[derive(Debug, Clone)]
struct Mock {
    /// Advertise PKCE S256.
    s256: bool,
    /// Override the protected resource's `resource`.
    resource: Option<String>,
    /// Override the challenge's `resource_metadata`.
    resource_metadata: Option<String>,
    /// Advertise `client_id_metadata_document_supported`.
    cimd: bool,
    /// Advertise ES256 DPoP proofs, and issue DPoP-bound tokens for proofs.
    dpop: bool,
    /// The token endpoint asks for the DPoP nonce `as-n` first.
    as_nonce: bool,
    /// The token endpoint asks for a new DPoP nonce every time.
    as_nonce_always: bool,
    /// The resource's DPoP nonce behaviour.
    rs_nonce: RsNonce,
    /// `token_endpoint_auth_methods_supported`.
    auth_methods: Vec<&'static str>,
    /// `expires_in` of issued tokens.
    expires_in: u64,
    /// The token endpoint refuses with this error.
    token_error: Option<&'static str>,
    /// The first notification POST with `Bearer tok` gets a 401 `invalid_token`.
    notification_401: bool,
    /// The redirect's `iss`: the issuer (`Some(true)`), another one (`Some(false)`), none.
    iss: Option<bool>,
    /// Advertise `authorization_response_iss_parameter_supported`.
    iss_advertised: bool,
}

impl Default for Mock {
    fn default() -> Self {
        Self {
            s256: true,
            resource: None,
            resource_metadata: None,
            cimd: false,
            dpop: false,
            as_nonce: false,
            as_nonce_always: false,
            rs_nonce: RsNonce::No,
            auth_methods: vec!["none"],
            expires_in: 3600,
            token_error: None,
            notification_401: false,
            iss: Some(true),
            iss_advertised: false,
        }
    }
}

/// One request the mock saw.
#[derive(Debug, Clone)]
struct Hit {
    method: Method,
    path: String,
    query: Vec<(String, String)>,
    headers: HeaderMap,
    form: Vec<(String, String)>,
}

impl Hit {
    fn q(&self, key: &str) -> Option<&str> {
        value(&self.query, key)
    }
    fn f(&self, key: &str) -> Option<&str> {
        value(&self.form, key)
    }
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

type Seen = Arc<Mutex<Vec<Hit>>>;

fn hits(seen: &Seen, method: &Method, path: &str) -> Vec<Hit> {
    seen.lock()
        .unwrap()
        .iter()
        .filter(|h| h.method == method && h.path == path)
        .cloned()
        .collect()
}

fn value<'a>(pairs: &'a [(String, String)], key: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

fn json_response(status: StatusCode, v: &Value) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(v.to_string())))
        .unwrap()
}

async fn start(mock: Mock) -> (SocketAddr, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen: Seen = Arc::default();
    let state = seen.clone();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let (mock, seen) = (mock.clone(), state.clone());
            let svc = hyper::service::service_fn(move |req: Request<Incoming>| {
                let (mock, seen) = (mock.clone(), seen.clone());
                async move { Ok::<_, Infallible>(handle(req, addr, &mock, &seen).await) }
            });
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    (addr, seen)
}

/// The claims of a compact JWT (no verification).
fn claims(jwt: &str, part: usize) -> Value {
    let seg = jwt.split('.').nth(part).unwrap();
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(seg).unwrap()).unwrap()
}

/// Verifies an ES256 JWT with `key`.
fn verify_es256(jwt: &str, key: &VerifyingKey) {
    let (input, sig) = jwt.rsplit_once('.').unwrap();
    let sig = Signature::from_slice(&URL_SAFE_NO_PAD.decode(sig).unwrap()).unwrap();
    key.verify(input.as_bytes(), &sig).unwrap();
}

/// The public key of a DPoP proof's `jwk` header; the proof must verify with it.
fn dpop_key(proof: &str) -> VerifyingKey {
    let h = claims(proof, 0);
    assert_eq!(h["typ"], "dpop+jwt");
    assert!(h["jwk"].get("d").is_none(), "no private key in the jwk");
    let mut sec1 = vec![4u8];
    sec1.extend(
        URL_SAFE_NO_PAD
            .decode(h["jwk"]["x"].as_str().unwrap())
            .unwrap(),
    );
    sec1.extend(
        URL_SAFE_NO_PAD
            .decode(h["jwk"]["y"].as_str().unwrap())
            .unwrap(),
    );
    let key = VerifyingKey::from_sec1_bytes(&sec1).unwrap();
    verify_es256(proof, &key);
    key
}

fn mcp_answer(body: &[u8]) -> Response<Full<Bytes>> {
    let msg: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let Some(id) = msg.get("id").cloned() else {
        return Response::builder()
            .status(StatusCode::ACCEPTED)
            .body(Full::new(Bytes::new()))
            .unwrap();
    };
    let result = match msg.get("method").and_then(Value::as_str) {
        Some("initialize") => json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "serverInfo": {"name": "oauth-mock", "version": "1"},
        }),
        _ => json!({"tools": []}),
    };
    let mut resp = json_response(
        StatusCode::OK,
        &json!({"jsonrpc": "2.0", "id": id, "result": result}),
    );
    resp.headers_mut()
        .insert("mcp-session-id", HeaderValue::from_static("session-1"));
    resp
}

async fn handle(
    req: Request<Incoming>,
    addr: SocketAddr,
    mock: &Mock,
    seen: &Seen,
) -> Response<Full<Bytes>> {
    let base = format!("http://{addr}");
    let path = req.uri().path().to_owned();
    let query: Vec<(String, String)> =
        url::form_urlencoded::parse(req.uri().query().unwrap_or_default().as_bytes())
            .into_owned()
            .collect();
    let method = req.method().clone();
    let headers = req.headers().clone();
    let body = req.into_body().collect().await.unwrap().to_bytes();
    let form: Vec<(String, String)> = url::form_urlencoded::parse(&body).into_owned().collect();
    let hit = Hit {
        method: method.clone(),
        path: path.clone(),
        query: query.clone(),
        headers: headers.clone(),
        form: form.clone(),
    };
    let earlier = {
        let mut s = seen.lock().unwrap();
        let earlier = s
            .iter()
            .filter(|h| h.method == method && h.path == path)
            .count();
        s.push(hit);
        earlier
    };
    let prm = mock
        .resource_metadata
        .clone()
        .unwrap_or(format!("{base}/.well-known/oauth-protected-resource/mcp"));
    let scheme = if mock.dpop { "DPoP" } else { "Bearer" };
    let proof_nonce = || {
        headers
            .get("dpop")
            .and_then(|v| v.to_str().ok())
            .and_then(|p| {
                claims(p, 1)
                    .get("nonce")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            })
    };
    match (method, path.as_str()) {
        (_, "/mcp") if !headers.contains_key("authorization") => Response::builder()
            .status(StatusCode::UNAUTHORIZED)
            .header(
                "www-authenticate",
                format!(r#"{scheme} resource_metadata="{prm}", scope="mcp:read""#),
            )
            .body(Full::new(Bytes::new()))
            .unwrap(),
        (_, "/mcp")
            if mock.rs_nonce == RsNonce::Always
                || (mock.rs_nonce == RsNonce::Once && proof_nonce().as_deref() != Some("rs-n")) =>
        {
            let nonce = match mock.rs_nonce {
                RsNonce::Always => format!("rs-{earlier}"),
                _ => "rs-n".to_owned(),
            };
            Response::builder()
                .status(StatusCode::UNAUTHORIZED)
                .header(
                    "www-authenticate",
                    format!(r#"DPoP error="use_dpop_nonce", resource_metadata="{prm}""#),
                )
                .header("dpop-nonce", nonce)
                .body(Full::new(Bytes::new()))
                .unwrap()
        }
        (Method::POST, "/mcp")
            if mock.notification_401
                && !body.windows(5).any(|w| w == b"\"id\":")
                && headers
                    .get("authorization")
                    .is_some_and(|v| v == "Bearer tok")
                && !seen.lock().unwrap().iter().any(|h| h.path == "/refused") =>
        {
            seen.lock().unwrap().push(Hit {
                method: Method::POST,
                path: "/refused".to_owned(),
                query: Vec::new(),
                headers: HeaderMap::new(),
                form: Vec::new(),
            });
            Response::builder()
                .status(StatusCode::UNAUTHORIZED)
                .header("www-authenticate", r#"Bearer error="invalid_token""#)
                .body(Full::new(Bytes::new()))
                .unwrap()
        }
        (Method::POST, "/mcp") => mcp_answer(&body),
        (Method::DELETE, "/mcp") => Response::builder()
            .status(StatusCode::OK)
            .body(Full::new(Bytes::new()))
            .unwrap(),
        (_, "/mcp") => Response::builder()
            .status(StatusCode::METHOD_NOT_ALLOWED)
            .body(Full::new(Bytes::new()))
            .unwrap(),
        (Method::GET, "/.well-known/oauth-protected-resource/mcp") => json_response(
            StatusCode::OK,
            &json!({
                "resource": mock.resource.clone().unwrap_or(format!("{base}/mcp")),
                "authorization_servers": [base],
            }),
        ),
        (Method::GET, "/.well-known/oauth-authorization-server") => {
            let mut meta = json!({
                "issuer": base,
                "authorization_endpoint": format!("{base}/authorize"),
                "token_endpoint": format!("{base}/token"),
                "registration_endpoint": format!("{base}/register"),
                "response_types_supported": ["code"],
                "token_endpoint_auth_methods_supported": mock.auth_methods,
            });
            if mock.s256 {
                meta["code_challenge_methods_supported"] = json!(["S256"]);
            }
            if mock.iss_advertised {
                meta["authorization_response_iss_parameter_supported"] = json!(true);
            }
            if mock.cimd {
                meta["client_id_metadata_document_supported"] = json!(true);
            }
            if mock.dpop {
                meta["dpop_signing_alg_values_supported"] = json!(["ES256"]);
            }
            json_response(StatusCode::OK, &meta)
        }
        (Method::POST, "/register") => json_response(
            StatusCode::CREATED,
            &json!({"client_id": "registered-client"}),
        ),
        (Method::GET, "/authorize") => {
            let iss = match mock.iss {
                Some(true) => base.clone(),
                Some(false) => "http://evil.example".to_owned(),
                None => String::new(),
            };
            let mut location = format!(
                "{}?code=the-code&state={}",
                value(&query, "redirect_uri").unwrap_or_default(),
                value(&query, "state").unwrap_or_default(),
            );
            if !iss.is_empty() {
                location.push_str("&iss=");
                location.push_str(
                    &url::form_urlencoded::byte_serialize(iss.as_bytes()).collect::<String>(),
                );
            }
            Response::builder()
                .status(StatusCode::FOUND)
                .header("location", location)
                .body(Full::new(Bytes::new()))
                .unwrap()
        }
        (Method::POST, "/token") => {
            if let Some(e) = mock.token_error {
                return json_response(StatusCode::BAD_REQUEST, &json!({"error": e}));
            }
            let proof = headers.get("dpop").is_some();
            if mock.dpop
                && (mock.as_nonce_always
                    || (mock.as_nonce && proof_nonce().as_deref() != Some("as-n")))
            {
                let nonce = if mock.as_nonce_always {
                    format!("as-{earlier}")
                } else {
                    "as-n".to_owned()
                };
                return Response::builder()
                    .status(StatusCode::BAD_REQUEST)
                    .header("content-type", "application/json")
                    .header("dpop-nonce", nonce)
                    .body(Full::new(Bytes::from(r#"{"error":"use_dpop_nonce"}"#)))
                    .unwrap();
            }
            let refresh = value(&form, "grant_type") == Some("refresh_token")
                && value(&form, "refresh_token") == Some("rt");
            let token = if refresh { "tok2" } else { "tok" };
            let token_type = if mock.dpop && proof { "DPoP" } else { "Bearer" };
            json_response(
                StatusCode::OK,
                &json!({"access_token": token, "token_type": token_type,
                        "expires_in": mock.expires_in, "refresh_token": "rt"}),
            )
        }
        (Method::POST, "/idp/token") => json_response(
            StatusCode::OK,
            &json!({"access_token": "the-id-jag", "token_type": "N_A",
                    "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag"}),
        ),
        _ => json_response(StatusCode::NOT_FOUND, &json!({})),
    }
}

fn config() -> OAuthConfig {
    OAuthConfig::new("http://127.0.0.1:1/callback", RedirectReadingHandler)
        .with_client_name("oauth-test")
}

/// A fixed P-256 test key, as PKCS#8 PEM, and its public key.
fn es256_key() -> (String, VerifyingKey) {
    use p256::pkcs8::{EncodePrivateKey, LineEnding};
    let secret = p256::SecretKey::from_slice(&[7u8; 32]).unwrap();
    let pem = secret.to_pkcs8_pem(LineEnding::LF).unwrap().to_string();
    let public = VerifyingKey::from(p256::ecdsa::SigningKey::from(&secret));
    (pem, public)
}

/// 2025-11-25 "Authorization Flow": PKCE S256 (the verifier matches the challenge),
/// `resource` (RFC 8707) on both requests, the challenge's scope, dynamic registration.
#[tokio::test]
async fn full_flow_with_pkce_resource_and_scope() {
    within(async {
        let (addr, seen) = start(Mock::default()).await;
        let url = format!("http://{addr}/mcp");
        let tokens = oauth::authorize(&url, &config()).await.unwrap().unwrap();
        assert_eq!(tokens.access_token, "tok");
        let auth = &hits(&seen, &Method::GET, "/authorize")[0];
        let token = &hits(&seen, &Method::POST, "/token")[0];
        assert_eq!(auth.q("code_challenge_method"), Some("S256"));
        assert_eq!(auth.q("client_id"), Some("registered-client"));
        assert_eq!(auth.q("resource"), Some(url.as_str()));
        assert_eq!(auth.q("scope"), Some("mcp:read"));
        assert_eq!(token.f("resource"), Some(url.as_str()));
        assert_eq!(token.f("code"), Some("the-code"));
        let verifier = token.f("code_verifier").unwrap();
        let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
        assert_eq!(auth.q("code_challenge"), Some(challenge.as_str()));
    })
    .await;
}

/// 2025-11-25 "Authorization Code Protection": a server that does not advertise S256 is
/// refused before any authorization request.
#[tokio::test]
async fn refuses_a_server_without_s256() {
    within(async {
        let (addr, seen) = start(Mock {
            s256: false,
            ..Mock::default()
        })
        .await;
        let err = oauth::authorize(&format!("http://{addr}/mcp"), &config())
            .await
            .unwrap_err();
        assert!(matches!(err, OAuthError::Discovery(_)), "{err}");
        assert!(hits(&seen, &Method::GET, "/authorize").is_empty());
    })
    .await;
}

/// RFC 9207 §2.4: a redirect's `iss` must be the recorded issuer, exactly; one the server
/// advertises must be there; without advertisement a missing one is accepted. A refused
/// redirect is never exchanged for tokens.
#[tokio::test]
async fn rfc9207_iss_is_checked() {
    within(async {
        let cases = [
            (Some(false), false, false),
            (None, true, false),
            (None, false, true),
            (Some(true), true, true),
        ];
        for (iss, iss_advertised, ok) in cases {
            let (addr, seen) = start(Mock {
                iss,
                iss_advertised,
                ..Mock::default()
            })
            .await;
            let got = oauth::authorize(&format!("http://{addr}/mcp"), &config()).await;
            assert_eq!(
                got.is_ok(),
                ok,
                "iss {iss:?}, advertised {iss_advertised}: {got:?}"
            );
            if !ok {
                assert!(matches!(got, Err(OAuthError::Authorization(_))));
                assert!(hits(&seen, &Method::POST, "/token").is_empty());
            }
        }
    })
    .await;
}

/// 2025-11-25 "Communication Security" (OAuth 2.1 §7.5): the redirect URI must be `https`
/// or loopback `http`; anything else is refused before the authorization request.
#[tokio::test]
async fn refuses_a_redirect_uri_that_is_neither_https_nor_loopback() {
    within(async {
        let (addr, seen) = start(Mock::default()).await;
        let url = format!("http://{addr}/mcp");
        for bad in [
            "http://app.example/callback",
            "myapp:/callback",
            "not a url",
        ] {
            let cfg = OAuthConfig::new(bad, RedirectReadingHandler);
            let err = oauth::authorize(&url, &cfg).await.unwrap_err();
            assert!(matches!(err, OAuthError::Config(_)), "{bad}: {err}");
        }
        assert!(hits(&seen, &Method::GET, "/authorize").is_empty());
        let ok = OAuthConfig::new("https://app.example/callback", RedirectReadingHandler);
        oauth::authorize(&url, &ok).await.unwrap().unwrap();
    })
    .await;
}

/// The flow's limits: a metadata response over `max_response_size` fails the flow (before
/// any authorization request), and an endpoint that never answers fails it after
/// `exchange_timeout`.
#[tokio::test]
async fn oauth_exchange_limits() {
    within(async {
        assert_eq!(config().max_response_size, oauth::DEFAULT_MAX_RESPONSE_SIZE);
        assert_eq!(config().exchange_timeout, oauth::DEFAULT_EXCHANGE_TIMEOUT);
        let (addr, seen) = start(Mock::default()).await;
        let err = oauth::authorize(
            &format!("http://{addr}/mcp"),
            &config().with_max_response_size(64),
        )
        .await
        .unwrap_err();
        assert!(matches!(err, OAuthError::Http(_)), "{err}");
        assert!(hits(&seen, &Method::GET, "/authorize").is_empty());

        // A server that accepts and never answers.
        let silent = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let silent_addr = silent.local_addr().unwrap();
        let holder = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((stream, _)) = silent.accept().await {
                held.push(stream);
            }
        });
        let started = std::time::Instant::now();
        let err = oauth::authorize(
            &format!("http://{silent_addr}/mcp"),
            &config().with_exchange_timeout(Duration::from_millis(100)),
        )
        .await
        .unwrap_err();
        assert!(matches!(err, OAuthError::Http(_)), "{err}");
        assert!(started.elapsed() < LIMIT / 2);
        holder.abort();
    })
    .await;
}

/// RFC 8707 / RFC 9728 §3.3: metadata naming another resource stops the flow.
#[tokio::test]
async fn refuses_a_mismatched_resource() {
    within(async {
        let (addr, seen) = start(Mock {
            resource: Some("http://127.0.0.1:1/other".to_owned()),
            ..Mock::default()
        })
        .await;
        let err = oauth::authorize(&format!("http://{addr}/mcp"), &config())
            .await
            .unwrap_err();
        assert!(matches!(err, OAuthError::Discovery(_)), "{err}");
        assert!(hits(&seen, &Method::GET, "/authorize").is_empty());
    })
    .await;
}

/// RFC 9728 §5.1 and the MCP security considerations: a `resource_metadata` on another
/// origin than the MCP server's is refused, and never fetched (no SSRF through the
/// challenge).
#[tokio::test]
async fn refuses_cross_origin_resource_metadata() {
    within(async {
        let (elsewhere, elsewhere_seen) = start(Mock::default()).await;
        let (addr, seen) = start(Mock {
            resource_metadata: Some(format!(
                "http://{elsewhere}/.well-known/oauth-protected-resource/mcp"
            )),
            ..Mock::default()
        })
        .await;
        let err = oauth::authorize(&format!("http://{addr}/mcp"), &config())
            .await
            .unwrap_err();
        assert!(matches!(err, OAuthError::Url(_)), "{err}");
        assert!(elsewhere_seen.lock().unwrap().is_empty(), "nothing fetched");
        assert!(hits(&seen, &Method::GET, "/authorize").is_empty());
    })
    .await;
}

/// 2025-11-25 "Client Registration Approaches": with `client_id_metadata_document_supported`
/// the client ID metadata document URL is the `client_id` (no dynamic registration); a
/// pre-registered client comes first; without support, dynamic registration.
#[tokio::test]
async fn client_id_metadata_document_in_the_spec_order() {
    within(async {
        const CIMD: &str = "https://client.example/oauth/metadata.json";
        let (addr, seen) = start(Mock {
            cimd: true,
            ..Mock::default()
        })
        .await;
        let url = format!("http://{addr}/mcp");
        oauth::authorize(&url, &config().with_client_metadata_url(CIMD))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            hits(&seen, &Method::GET, "/authorize")[0].q("client_id"),
            Some(CIMD)
        );
        assert_eq!(
            hits(&seen, &Method::POST, "/token")[0].f("client_id"),
            Some(CIMD)
        );
        assert!(hits(&seen, &Method::POST, "/register").is_empty());

        let pre = config()
            .with_client_metadata_url(CIMD)
            .with_credentials(ClientCredentials::new("pre-registered"));
        oauth::authorize(&url, &pre).await.unwrap().unwrap();
        assert_eq!(
            hits(&seen, &Method::GET, "/authorize")[1].q("client_id"),
            Some("pre-registered")
        );

        let (plain, plain_seen) = start(Mock::default()).await;
        oauth::authorize(
            &format!("http://{plain}/mcp"),
            &config().with_client_metadata_url(CIMD),
        )
        .await
        .unwrap()
        .unwrap();
        assert_eq!(hits(&plain_seen, &Method::POST, "/register").len(), 1);
        assert_eq!(
            hits(&plain_seen, &Method::GET, "/authorize")[0].q("client_id"),
            Some("registered-client")
        );
    })
    .await;
}

/// OAuth 2.1 §4.2 (SEP-1046) with `client_secret_basic` (RFC 6749 §2.3.1) and
/// `client_secret_post`: no authorization request, the challenge's scope, `resource`.
#[tokio::test]
async fn client_credentials_with_a_secret() {
    within(async {
        let (addr, seen) = start(Mock {
            auth_methods: vec!["client_secret_basic"],
            ..Mock::default()
        })
        .await;
        let url = format!("http://{addr}/mcp");
        let cfg = OAuthConfig::with_grant(Grant::ClientCredentials)
            .with_credentials(ClientCredentials::new("svc").with_secret("s3cret"));
        let tokens = oauth::authorize(&url, &cfg).await.unwrap().unwrap();
        assert_eq!(tokens.access_token, "tok");
        let t = &hits(&seen, &Method::POST, "/token")[0];
        assert_eq!(t.f("grant_type"), Some("client_credentials"));
        assert_eq!(t.f("scope"), Some("mcp:read"));
        assert_eq!(t.f("resource"), Some(url.as_str()));
        assert_eq!(t.f("client_secret"), None);
        let basic = t
            .header("authorization")
            .unwrap()
            .strip_prefix("Basic ")
            .unwrap();
        assert_eq!(STANDARD.decode(basic).unwrap(), b"svc:s3cret");
        assert!(hits(&seen, &Method::GET, "/authorize").is_empty());

        let (addr, seen) = start(Mock {
            auth_methods: vec!["client_secret_post"],
            ..Mock::default()
        })
        .await;
        oauth::authorize(&format!("http://{addr}/mcp"), &cfg)
            .await
            .unwrap()
            .unwrap();
        let t = &hits(&seen, &Method::POST, "/token")[0];
        assert_eq!(t.f("client_id"), Some("svc"));
        assert_eq!(t.f("client_secret"), Some("s3cret"));
        assert!(t.header("authorization").is_none());
    })
    .await;
}

/// RFC 7523 §2.2 / §3 (`private_key_jwt`): the client assertion is an ES256 JWT with
/// `iss` = `sub` = the client id, `aud` the issuer, `jti`, `exp` after `iat`, verifying
/// with the client's public key.
#[tokio::test]
async fn client_credentials_with_private_key_jwt() {
    within(async {
        let (addr, seen) = start(Mock {
            auth_methods: vec!["private_key_jwt"],
            ..Mock::default()
        })
        .await;
        let (pem, public) = es256_key();
        let key = ClientKey::from_pem(&pem, SigningAlgorithm::Es256).unwrap();
        let cfg = OAuthConfig::with_grant(Grant::ClientCredentials)
            .with_credentials(ClientCredentials::new("svc").with_private_key(key));
        oauth::authorize(&format!("http://{addr}/mcp"), &cfg)
            .await
            .unwrap()
            .unwrap();
        let t = &hits(&seen, &Method::POST, "/token")[0];
        assert_eq!(t.f("grant_type"), Some("client_credentials"));
        assert_eq!(
            t.f("client_assertion_type"),
            Some("urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
        );
        let jwt = t.f("client_assertion").unwrap();
        verify_es256(jwt, &public);
        let (h, c) = (claims(jwt, 0), claims(jwt, 1));
        assert_eq!(h["alg"], "ES256");
        assert_eq!(c["iss"], "svc");
        assert_eq!(c["sub"], "svc");
        assert_eq!(c["aud"], format!("http://{addr}"));
        assert!(c["jti"].is_string());
        assert!(c["exp"].as_u64().unwrap() > c["iat"].as_u64().unwrap());
        assert!(t.header("authorization").is_none());
    })
    .await;
}

/// A 2048-bit RSA test key (made with `openssl genpkey -algorithm RSA`, only for these
/// tests), as PKCS#8 and as PKCS#1 PEM, and its modulus (base64url).
const RSA_PKCS8: &str = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQDPahGoMercAo+a\n4GJy7VIq4GHWnqzvilivxBvp3ipcFQlat/vDQZb2mEG7d8r0UbXh+tETNlWggmsq\nXY/4sljQ8idx+DzOuS9/QgFWRQdFc2giDgGzrG9FmPG387xmUrTS55QwAKxgxHin\n7JpVhn+IMhMbJzEifE/eJtgQ4aymF64s2my2DTOHrAbWrimyzru+STt4k4WW0wJV\nadGYpazy93BvORaP9OWJ9N71tXqhW/yQOpcWEkq+J2obaSXtHVWvchmo4n4kS0it\nJV9fhOBIOSWz2kr84m1SABXg4vE22gMh3cn7d4pKX1OPLuuB7EmkyagN057b+f41\nSyxFHeFpAgMBAAECggEAP+9AsRlt/VJ2xLVc83MvDFNtJTR1N0NscgWf2xel9Atx\n/jpPS1FJAQtO28Qh1ezoBVgEoYjynQ8GjKEZk34aPZIfUZTE3a4cs3v7oIWXp7Na\nyoCJysIg7JGoFN13Wg0tewNyXNegSxXU4WJf8nQKlMdmt0x961TpY5+So6WEzA9a\nzLJj+xVnnsRMQtcVe/3/fwXXzxZldIotMEJfqvJkpZ/kRFnyD/3qPCtjWRhTLrz+\nsIHzAh4nxDtWrU6Yz7iFxmoAGNbQb1ZMMbJzqdO6kfZ547hp8OBhvfuRzYLyezZB\nItQivX7MaEO3cgr5A1cFLGE9TZQHFlZ78/PZMPi2HwKBgQD/Ur+I7mNBDOn+nVG3\n5fRfWjcQdDPtVjEjui73Yeing2qq6uKVtwUdU74OWVMYm7Vqnn2Hm5OU7kS7VS02\nOcS/LN3pXL9XXZKQaR5kB8DGp1+s7kSor8Vmd9uHXRXsy7eFPlkQxvcUs5433qbT\nUow/ydOBWR4X7ZaJIxbArkXJbwKBgQDP9s/REDBkQx1i9mcKczjJ9KBQzo0rk04N\nSSNFJsoarkCHpccI33nRoFFlFh5q7g8Sxwfw59lGQk11/OFLx65PV9TktyGBxjlx\n49lLIw6NI/aQHjrcLatUQ0MbJrtr/MZYy7kD0w0V2uESSi2jgcoJN3U7uaqGgIZd\nqodVXt8mpwKBgQD+9/15msXXYjQSJbxDbwoYZpjyf3iTnC06RmU8ebPCBMRypllb\ntQcQgF4dKiqHOodyT49/6mb4pPBSOv8JVasaVo3MyufxMOp59993eR6TwvUSVmaO\nJel1KGA7z0Nj0xQTpW2ACZEYRT7NADWMdrTDxqLGWt5oesSHclj4VZAvVQKBgFZn\naE6nWEO/8sy0LXmVB8o43gbU2qh5KluwwHuxsxTEw0DYqspP91AWONs0Bm1M/WxC\nz1TTL13WnFJiP8T5cL28c1KXl89QaXudPCHQrfIMOBwGw1PJkb6Pt6jnPcWPH2Wz\nNuqU3IHxD8RGl5Gwkh2kMgwfhu8dJTZzbIkWwsZPAoGAaHY7cXWD1w1jiJtvwDpj\n8MiRxItZaKX4DUTLrLMQlTo356ybcthldb5ITDaVyruZUsSRt5tQ/gx/G3j1Y1tb\n6QgViO7YJ6iMQHmZ362+7oqJ6DdgmMQmmRprBm7s/o83tv3aTSB5aTguyRaAEWB7\nvsVQgt52yhK+7DVpLU8ljnk=\n-----END PRIVATE KEY-----";
const RSA_PKCS1: &str = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAz2oRqDHq3AKPmuBicu1SKuBh1p6s74pYr8Qb6d4qXBUJWrf7\nw0GW9phBu3fK9FG14frREzZVoIJrKl2P+LJY0PIncfg8zrkvf0IBVkUHRXNoIg4B\ns6xvRZjxt/O8ZlK00ueUMACsYMR4p+yaVYZ/iDITGycxInxP3ibYEOGspheuLNps\ntg0zh6wG1q4pss67vkk7eJOFltMCVWnRmKWs8vdwbzkWj/TlifTe9bV6oVv8kDqX\nFhJKvidqG2kl7R1Vr3IZqOJ+JEtIrSVfX4TgSDkls9pK/OJtUgAV4OLxNtoDId3J\n+3eKSl9Tjy7rgexJpMmoDdOe2/n+NUssRR3haQIDAQABAoIBAD/vQLEZbf1SdsS1\nXPNzLwxTbSU0dTdDbHIFn9sXpfQLcf46T0tRSQELTtvEIdXs6AVYBKGI8p0PBoyh\nGZN+Gj2SH1GUxN2uHLN7+6CFl6ezWsqAicrCIOyRqBTdd1oNLXsDclzXoEsV1OFi\nX/J0CpTHZrdMfetU6WOfkqOlhMwPWsyyY/sVZ57ETELXFXv9/38F188WZXSKLTBC\nX6ryZKWf5ERZ8g/96jwrY1kYUy68/rCB8wIeJ8Q7Vq1OmM+4hcZqABjW0G9WTDGy\nc6nTupH2eeO4afDgYb37kc2C8ns2QSLUIr1+zGhDt3IK+QNXBSxhPU2UBxZWe/Pz\n2TD4th8CgYEA/1K/iO5jQQzp/p1Rt+X0X1o3EHQz7VYxI7ou92Hop4NqqurilbcF\nHVO+DllTGJu1ap59h5uTlO5Eu1UtNjnEvyzd6Vy/V12SkGkeZAfAxqdfrO5EqK/F\nZnfbh10V7Mu3hT5ZEMb3FLOeN96m01KMP8nTgVkeF+2WiSMWwK5FyW8CgYEAz/bP\n0RAwZEMdYvZnCnM4yfSgUM6NK5NODUkjRSbKGq5Ah6XHCN950aBRZRYeau4PEscH\n8OfZRkJNdfzhS8euT1fU5LchgcY5cePZSyMOjSP2kB463C2rVENDGya7a/zGWMu5\nA9MNFdrhEkoto4HKCTd1O7mqhoCGXaqHVV7fJqcCgYEA/vf9eZrF12I0EiW8Q28K\nGGaY8n94k5wtOkZlPHmzwgTEcqZZW7UHEIBeHSoqhzqHck+Pf+pm+KTwUjr/CVWr\nGlaNzMrn8TDqefffd3kek8L1ElZmjiXpdShgO89DY9MUE6VtgAmRGEU+zQA1jHa0\nw8aixlreaHrEh3JY+FWQL1UCgYBWZ2hOp1hDv/LMtC15lQfKON4G1NqoeSpbsMB7\nsbMUxMNA2KrKT/dQFjjbNAZtTP1sQs9U0y9d1pxSYj/E+XC9vHNSl5fPUGl7nTwh\n0K3yDDgcBsNTyZG+j7eo5z3Fjx9lszbqlNyB8Q/ERpeRsJIdpDIMH4bvHSU2c2yJ\nFsLGTwKBgGh2O3F1g9cNY4ibb8A6Y/DIkcSLWWil+A1Ey6yzEJU6N+esm3LYZXW+\nSEw2lcq7mVLEkbebUP4Mfxt49WNbW+kIFYju2CeojEB5md+tvu6Kieg3YJjEJpka\nawZu7P6PN7b92k0geWk4LskWgBFge77FUILedsoSvuw1aS1PJY55\n-----END RSA PRIVATE KEY-----";
const RSA_N: &str = "z2oRqDHq3AKPmuBicu1SKuBh1p6s74pYr8Qb6d4qXBUJWrf7w0GW9phBu3fK9FG14frREzZVoIJrKl2P-LJY0PIncfg8zrkvf0IBVkUHRXNoIg4Bs6xvRZjxt_O8ZlK00ueUMACsYMR4p-yaVYZ_iDITGycxInxP3ibYEOGspheuLNpstg0zh6wG1q4pss67vkk7eJOFltMCVWnRmKWs8vdwbzkWj_TlifTe9bV6oVv8kDqXFhJKvidqG2kl7R1Vr3IZqOJ-JEtIrSVfX4TgSDkls9pK_OJtUgAV4OLxNtoDId3J-3eKSl9Tjy7rgexJpMmoDdOe2_n-NUssRR3haQ";

/// RFC 7523 §2.2 with RS256 (RFC 7518 §3.3): a PKCS#8 or PKCS#1 RSA key signs an assertion
/// that verifies with the public key; an RSA key is refused for ES256.
#[tokio::test]
async fn client_credentials_with_an_rs256_key() {
    within(async {
        for pem in [RSA_PKCS8, RSA_PKCS1] {
            let (addr, seen) = start(Mock {
                auth_methods: vec!["private_key_jwt"],
                ..Mock::default()
            })
            .await;
            let key = ClientKey::from_pem(pem, SigningAlgorithm::Rs256)
                .unwrap()
                .with_key_id("k1");
            let cfg = OAuthConfig::with_grant(Grant::ClientCredentials)
                .with_credentials(ClientCredentials::new("svc").with_private_key(key));
            oauth::authorize(&format!("http://{addr}/mcp"), &cfg)
                .await
                .unwrap()
                .unwrap();
            let t = &hits(&seen, &Method::POST, "/token")[0];
            let jwt = t.f("client_assertion").unwrap();
            ferromcp_jwt::install();
            let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::RS256);
            validation.set_audience(&[format!("http://{addr}")]);
            validation.set_issuer(&["svc"]);
            let decoding = jsonwebtoken::DecodingKey::from_rsa_components(RSA_N, "AQAB").unwrap();
            let data = jsonwebtoken::decode::<Value>(jwt, &decoding, &validation).unwrap();
            assert_eq!(data.header.kid.as_deref(), Some("k1"));
            assert_eq!(data.claims["sub"], "svc");
        }
        assert!(matches!(
            ClientKey::from_pem(RSA_PKCS8, SigningAlgorithm::Es256),
            Err(OAuthError::Config(_))
        ));
    })
    .await;
}

/// A client-credentials configuration without a secret or key is a configuration error,
/// not a token request.
#[tokio::test]
async fn client_credentials_need_a_credential() {
    within(async {
        let (addr, seen) = start(Mock::default()).await;
        let cfg = OAuthConfig::with_grant(Grant::ClientCredentials)
            .with_credentials(ClientCredentials::new("svc"));
        let err = oauth::authorize(&format!("http://{addr}/mcp"), &cfg)
            .await
            .unwrap_err();
        assert!(matches!(err, OAuthError::Config(_)), "{err}");
        assert!(hits(&seen, &Method::POST, "/token").is_empty());
    })
    .await;
}

/// RFC 7523 §2.1 (workload identity federation, SEP-1933): `grant_type` jwt-bearer with the
/// workload JWT as `assertion`; a refused assertion is surfaced after one request, with no
/// retry and no other grant.
#[tokio::test]
async fn jwt_bearer_grant_and_its_errors() {
    within(Box::pin(async {
        let (addr, seen) = start(Mock::default()).await;
        let cfg = OAuthConfig::with_grant(Grant::JwtBearer {
            assertion: "workload.jwt.value".to_owned(),
        })
        .with_credentials(ClientCredentials::new("workload"));
        oauth::authorize(&format!("http://{addr}/mcp"), &cfg)
            .await
            .unwrap()
            .unwrap();
        let t = &hits(&seen, &Method::POST, "/token")[0];
        assert_eq!(
            t.f("grant_type"),
            Some("urn:ietf:params:oauth:grant-type:jwt-bearer")
        );
        assert_eq!(t.f("assertion"), Some("workload.jwt.value"));
        assert_eq!(t.f("client_id"), Some("workload"));

        let (addr, seen) = start(Mock {
            token_error: Some("invalid_grant"),
            ..Mock::default()
        })
        .await;
        let cfg2 = OAuthConfig::with_grant(Grant::JwtBearer {
            assertion: "workload.jwt.value".to_owned(),
        });
        let provider = Arc::new(OAuthProvider::new(&format!("http://{addr}/mcp"), cfg).unwrap());
        let transport = HttpTransport::new(format!("http://{addr}/mcp"))
            .unwrap()
            .auth(provider.clone());
        let err = Client::builder()
            .lifecycle(Lifecycle::Handshake)
            .connect(transport)
            .await
            .unwrap_err();
        assert!(err.to_string().contains("401"), "{err}");
        assert_eq!(hits(&seen, &Method::POST, "/token").len(), 1, "no retry");
        assert!(
            hits(&seen, &Method::GET, "/authorize").is_empty(),
            "no fallback"
        );
        // A later 401 does not try the refused assertion again either.
        assert!(!provider.on_challenge(StatusCode::UNAUTHORIZED, None).await);
        assert_eq!(hits(&seen, &Method::POST, "/token").len(), 1, "no retry");
        let err = oauth::authorize(&format!("http://{addr}/mcp"), &cfg2)
            .await
            .unwrap_err();
        assert!(matches!(err, OAuthError::Refused(_)), "{err}");
    }))
    .await;
}

/// SEP-990: RFC 8693 exchange of the ID token at the IdP (`requested_token_type` id-jag,
/// `audience` the authorization server's issuer, `resource` the MCP server), then the
/// RFC 7523 JWT bearer grant with the ID-JAG, authenticated with `client_secret_basic`.
#[tokio::test]
async fn enterprise_managed_token_exchange_then_jwt_bearer() {
    within(async {
        let (addr, seen) = start(Mock {
            auth_methods: vec!["client_secret_basic"],
            ..Mock::default()
        })
        .await;
        let url = format!("http://{addr}/mcp");
        let cfg = OAuthConfig::with_grant(Grant::EnterpriseManaged(EnterpriseGrant::new(
            format!("http://{addr}/idp/token"),
            "the-id-token",
            "idp-client",
        )))
        .with_credentials(ClientCredentials::new("mcp-client").with_secret("mcp-secret"));
        let tokens = oauth::authorize(&url, &cfg).await.unwrap().unwrap();
        assert_eq!(tokens.access_token, "tok");
        let x = &hits(&seen, &Method::POST, "/idp/token")[0];
        assert_eq!(
            x.f("grant_type"),
            Some("urn:ietf:params:oauth:grant-type:token-exchange")
        );
        assert_eq!(
            x.f("requested_token_type"),
            Some("urn:ietf:params:oauth:token-type:id-jag")
        );
        assert_eq!(x.f("subject_token"), Some("the-id-token"));
        assert_eq!(
            x.f("subject_token_type"),
            Some("urn:ietf:params:oauth:token-type:id_token")
        );
        assert_eq!(x.f("audience"), Some(format!("http://{addr}").as_str()));
        assert_eq!(x.f("resource"), Some(url.as_str()));
        assert_eq!(x.f("client_id"), Some("idp-client"));
        let t = &hits(&seen, &Method::POST, "/token")[0];
        assert_eq!(
            t.f("grant_type"),
            Some("urn:ietf:params:oauth:grant-type:jwt-bearer")
        );
        assert_eq!(t.f("assertion"), Some("the-id-jag"));
        let basic = t
            .header("authorization")
            .unwrap()
            .strip_prefix("Basic ")
            .unwrap();
        assert_eq!(STANDARD.decode(basic).unwrap(), b"mcp-client:mcp-secret");
    })
    .await;
}

/// RFC 9449 §5, §7.1, §8, §9 end to end through the HTTP transport: a proof on the token
/// request (`htm` POST, `htu` the token endpoint) retried with the authorization server's
/// nonce; then every MCP request carries `Authorization: DPoP` and a fresh proof (`htu`,
/// `ath` of the token, same key, distinct `jti`), and the resource server's
/// `use_dpop_nonce` is retried with its nonce.
#[tokio::test]
async fn dpop_bound_tokens_with_nonces_at_both_servers() {
    within(async {
        let (addr, seen) = start(Mock {
            dpop: true,
            as_nonce: true,
            rs_nonce: RsNonce::Once,
            ..Mock::default()
        })
        .await;
        let url = format!("http://{addr}/mcp");
        let provider = Arc::new(OAuthProvider::new(&url, config()).unwrap());
        let transport = HttpTransport::new(&url).unwrap().auth(provider.clone());
        let client = Client::builder()
            .lifecycle(Lifecycle::Handshake)
            .connect(transport)
            .await
            .unwrap();
        client.list_tools(None).await.unwrap();
        client.shutdown().await;
        assert!(provider.tokens().unwrap().is_dpop());

        let token_reqs = hits(&seen, &Method::POST, "/token");
        assert_eq!(token_reqs.len(), 2, "one use_dpop_nonce retry");
        let first = token_reqs[0].header("dpop").unwrap();
        let second = token_reqs[1].header("dpop").unwrap();
        let key = dpop_key(first);
        assert_eq!(claims(first, 1)["htm"], "POST");
        assert_eq!(claims(first, 1)["htu"], format!("http://{addr}/token"));
        assert!(claims(first, 1).get("nonce").is_none());
        assert_eq!(claims(second, 1)["nonce"], "as-n");
        assert!(claims(second, 1).get("ath").is_none());

        let mcp: Vec<Hit> = hits(&seen, &Method::POST, "/mcp")
            .into_iter()
            .filter(|h| h.headers.contains_key("authorization"))
            .collect();
        assert!(
            mcp.len() >= 3,
            "initialize (twice: nonce), initialized, tools/list"
        );
        let ath = URL_SAFE_NO_PAD.encode(Sha256::digest(b"tok"));
        let mut jtis = Vec::new();
        for h in &mcp {
            assert_eq!(h.header("authorization"), Some("DPoP tok"));
            let proof = h.header("dpop").unwrap();
            assert_eq!(dpop_key(proof), key, "one key per provider");
            let c = claims(proof, 1);
            assert_eq!(c["htm"], "POST");
            assert_eq!(c["htu"], url);
            assert_eq!(c["ath"], ath.as_str());
            jtis.push(c["jti"].as_str().unwrap().to_owned());
        }
        assert!(
            claims(mcp[0].header("dpop").unwrap(), 1)
                .get("nonce")
                .is_none()
        );
        for h in &mcp[1..] {
            assert_eq!(claims(h.header("dpop").unwrap(), 1)["nonce"], "rs-n");
        }
        let n = jtis.len();
        jtis.sort();
        jtis.dedup();
        assert_eq!(jtis.len(), n, "a fresh jti per request");
    })
    .await;
}

/// RFC 9449 §9 retry bound: a resource server that demands a new nonce on every request
/// gets at most [`MAX_AUTH_RETRIES`] challenges answered per request, then the 401 surfaces.
#[tokio::test]
async fn dpop_nonce_retries_are_bounded() {
    within(async {
        let (addr, seen) = start(Mock {
            dpop: true,
            rs_nonce: RsNonce::Always,
            ..Mock::default()
        })
        .await;
        let url = format!("http://{addr}/mcp");
        let provider = Arc::new(OAuthProvider::new(&url, config()).unwrap());
        let transport = HttpTransport::new(&url).unwrap().auth(provider);
        let err = Client::builder()
            .lifecycle(Lifecycle::Handshake)
            .connect(transport)
            .await
            .unwrap_err();
        assert!(err.to_string().contains("401"), "{err}");
        let posts = hits(&seen, &Method::POST, "/mcp").len();
        assert_eq!(posts, 1 + MAX_AUTH_RETRIES as usize);
    })
    .await;
}

/// RFC 9449 §8 retry bound at the authorization server: one retry with its nonce; a server
/// that wants yet another nonce gets an error, not a loop.
#[tokio::test]
async fn dpop_token_request_nonce_retry_is_bounded() {
    within(async {
        let (addr, seen) = start(Mock {
            dpop: true,
            as_nonce_always: true,
            ..Mock::default()
        })
        .await;
        let provider = OAuthProvider::new(&format!("http://{addr}/mcp"), config()).unwrap();
        assert!(!provider.on_challenge(StatusCode::UNAUTHORIZED, None).await);
        let token_reqs = hits(&seen, &Method::POST, "/token");
        assert_eq!(token_reqs.len(), 2);
        assert_eq!(
            claims(token_reqs[1].header("dpop").unwrap(), 1)["nonce"],
            "as-0"
        );
        assert!(provider.tokens().is_none());
    })
    .await;
}

/// RFC 9449 §5.1: DPoP is used only when the authorization server advertises ES256 proofs,
/// not when configured off, and never by `authorize` (which cannot hand out the key).
#[tokio::test]
async fn dpop_only_when_advertised_and_wanted() {
    within(async {
        let (addr, seen) = start(Mock::default()).await;
        let provider = OAuthProvider::new(&format!("http://{addr}/mcp"), config()).unwrap();
        assert!(provider.on_challenge(StatusCode::UNAUTHORIZED, None).await);
        assert!(
            hits(&seen, &Method::POST, "/token")[0]
                .header("dpop")
                .is_none()
        );
        assert_eq!(provider.authorization().unwrap(), "Bearer tok");

        let dpop = Mock {
            dpop: true,
            ..Mock::default()
        };
        let (addr, seen) = start(dpop.clone()).await;
        let url = format!("http://{addr}/mcp");
        let provider = OAuthProvider::new(&url, config().with_dpop(false)).unwrap();
        assert!(provider.on_challenge(StatusCode::UNAUTHORIZED, None).await);
        assert!(
            hits(&seen, &Method::POST, "/token")[0]
                .header("dpop")
                .is_none()
        );
        assert!(!provider.tokens().unwrap().is_dpop());

        let tokens = oauth::authorize(&url, &config()).await.unwrap().unwrap();
        assert!(
            hits(&seen, &Method::POST, "/token")[1]
                .header("dpop")
                .is_none()
        );
        assert!(!tokens.is_dpop());

        // The same server with DPoP wanted: a proof, a DPoP-bound token.
        let provider = OAuthProvider::new(&url, config()).unwrap();
        assert!(provider.on_challenge(StatusCode::UNAUTHORIZED, None).await);
        assert!(
            hits(&seen, &Method::POST, "/token")[2]
                .header("dpop")
                .is_some()
        );
        assert!(provider.tokens().unwrap().is_dpop());
        assert_eq!(provider.authorization().unwrap(), "DPoP tok");
    })
    .await;
}

/// 2025-11-25 "Scope Challenge Handling": step-up with the union of scopes, once per new
/// scope (a repeated challenge for granted scopes is not re-authorized).
#[tokio::test]
async fn provider_steps_up_once_per_new_scope() {
    within(async {
        let (addr, seen) = start(Mock::default()).await;
        let base = format!("http://{addr}");
        let provider = OAuthProvider::new(&format!("{base}/mcp"), config()).unwrap();
        assert!(provider.authorization().is_none());
        let www = format!(
            r#"Bearer resource_metadata="{base}/.well-known/oauth-protected-resource/mcp", scope="mcp:read""#
        );
        assert!(
            provider
                .on_challenge(StatusCode::UNAUTHORIZED, Some(&www))
                .await
        );
        assert_eq!(provider.authorization().unwrap(), "Bearer tok");
        let step_up = format!(
            r#"Bearer error="insufficient_scope", scope="mcp:write", resource_metadata="{base}/.well-known/oauth-protected-resource/mcp""#
        );
        assert!(
            provider
                .on_challenge(StatusCode::FORBIDDEN, Some(&step_up))
                .await
        );
        assert!(
            !provider
                .on_challenge(StatusCode::FORBIDDEN, Some(&step_up))
                .await
        );
        let scopes: Vec<String> = hits(&seen, &Method::GET, "/authorize")
            .iter()
            .map(|h| h.q("scope").unwrap_or_default().to_owned())
            .collect();
        assert_eq!(scopes, ["mcp:read", "mcp:read mcp:write"]);
    })
    .await;
}

/// OAuth 2.1 §4.3 on a 401: the refresh grant (with `resource`) once, then the whole flow.
#[tokio::test]
async fn provider_refreshes_once_on_401_then_authorizes_again() {
    within(async {
        let (addr, seen) = start(Mock::default()).await;
        let provider = OAuthProvider::new(&format!("http://{addr}/mcp"), config()).unwrap();
        assert!(provider.on_challenge(StatusCode::UNAUTHORIZED, None).await);
        assert_eq!(provider.authorization().unwrap(), "Bearer tok");
        assert!(provider.on_challenge(StatusCode::UNAUTHORIZED, None).await);
        assert_eq!(provider.authorization().unwrap(), "Bearer tok2");
        let last = hits(&seen, &Method::POST, "/token").pop().unwrap();
        assert_eq!(last.f("grant_type"), Some("refresh_token"));
        assert!(last.f("resource").is_some());
        assert_eq!(hits(&seen, &Method::GET, "/authorize").len(), 1);
        assert!(provider.on_challenge(StatusCode::UNAUTHORIZED, None).await);
        assert_eq!(provider.authorization().unwrap(), "Bearer tok");
        assert_eq!(hits(&seen, &Method::GET, "/authorize").len(), 2);
    })
    .await;
}

/// A token store shared between providers (it outlives them).
#[derive(Clone, Default)]
struct SharedStore(Arc<MemoryTokenStore>);

impl TokenStore for SharedStore {
    fn load(&self, server: &str) -> Option<Tokens> {
        self.0.load(server)
    }
    fn save(&self, server: &str, tokens: &Tokens) {
        self.0.save(server, tokens);
    }
}

/// Refresh ahead of expiry (OAuth 2.1 §4.3; the MCP "Token Handling" guidance): a token
/// within the refresh margin is refreshed before the next request, not after a 401; the
/// store keeps the expiry, and a new provider starts from the stored token.
#[tokio::test]
async fn refreshes_ahead_of_expiry_and_persists_expiry() {
    within(async {
        let (addr, seen) = start(Mock {
            expires_in: 30,
            ..Mock::default()
        })
        .await;
        let url = format!("http://{addr}/mcp");
        let store = SharedStore::default();
        let cfg = || {
            config()
                .with_store(store.clone())
                .with_refresh_margin(Duration::from_secs(60))
        };
        let provider = OAuthProvider::new(&url, cfg()).unwrap();
        assert!(provider.on_challenge(StatusCode::UNAUTHORIZED, None).await);
        let stored = store.load(&url).unwrap();
        assert_eq!(stored.access_token, "tok");
        assert!(stored.expires_at.is_some(), "the expiry is persisted");
        // Within the margin: refreshed before the request.
        provider.prepare().await;
        assert_eq!(provider.authorization().unwrap(), "Bearer tok2");
        assert_eq!(
            hits(&seen, &Method::POST, "/token")
                .pop()
                .unwrap()
                .f("grant_type"),
            Some("refresh_token")
        );
        assert_eq!(store.load(&url).unwrap().access_token, "tok2");

        // Outside the margin: nothing happens.
        let before = hits(&seen, &Method::POST, "/token").len();
        let relaxed = OAuthProvider::new(&url, cfg().with_refresh_margin(Duration::ZERO)).unwrap();
        assert_eq!(
            relaxed.authorization().unwrap(),
            "Bearer tok2",
            "a new provider starts from the stored, unexpired token"
        );
        relaxed.prepare().await;
        assert_eq!(hits(&seen, &Method::POST, "/token").len(), before);
    })
    .await;
}

/// Credentials never cross origins: the provider puts nothing on a request to another
/// origin than the MCP server's.
#[tokio::test]
async fn credentials_stay_on_the_server_origin() {
    within(async {
        let (addr, _) = start(Mock::default()).await;
        let url = format!("http://{addr}/mcp");
        let provider = OAuthProvider::new(&url, config()).unwrap();
        assert!(provider.on_challenge(StatusCode::UNAUTHORIZED, None).await);
        let mut same = HeaderMap::new();
        provider.apply(&Method::POST, &url.parse::<Uri>().unwrap(), &mut same);
        assert_eq!(same.get("authorization").unwrap(), "Bearer tok");
        let mut other = HeaderMap::new();
        other.insert("authorization", HeaderValue::from_static("stale"));
        let elsewhere: Uri = "http://127.0.0.1:1/mcp".parse().unwrap();
        provider.apply(&Method::POST, &elsewhere, &mut other);
        assert!(other.get("authorization").is_none());
    })
    .await;
}

/// Every request path of the transport carries the token (2025-11-25 "Access Token
/// Usage": every HTTP request): the `initialize` request, the `notifications/initialized`
/// POST, the standalone GET stream, later requests and the session DELETE; and a 401 on a
/// notification POST reaches the provider (which refreshes) and the notification is
/// retried.
#[tokio::test]
async fn every_request_path_carries_the_token() {
    within(async {
        let (addr, seen) = start(Mock {
            notification_401: true,
            ..Mock::default()
        })
        .await;
        let url = format!("http://{addr}/mcp");
        let provider = Arc::new(OAuthProvider::new(&url, config()).unwrap());
        let transport = HttpTransport::new(&url).unwrap().auth(provider);
        let client = Client::builder()
            .lifecycle(Lifecycle::Handshake)
            .connect(transport)
            .await
            .unwrap();
        client.list_tools(None).await.unwrap();
        while hits(&seen, &Method::GET, "/mcp").is_empty() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        client.shutdown().await;
        let posts = hits(&seen, &Method::POST, "/mcp");
        assert_eq!(
            posts[0].header("authorization"),
            None,
            "the first, unauthorized"
        );
        let auth: Vec<&str> = posts[1..]
            .iter()
            .map(|h| h.header("authorization").unwrap())
            .collect();
        // initialize (tok), initialized (tok: refused), initialized again (tok2),
        // tools/list (tok2).
        assert_eq!(
            auth,
            ["Bearer tok", "Bearer tok", "Bearer tok2", "Bearer tok2"]
        );
        let get = &hits(&seen, &Method::GET, "/mcp")[0];
        assert!(
            get.header("authorization")
                .is_some_and(|v| v.starts_with("Bearer tok"))
        );
        let delete = &hits(&seen, &Method::DELETE, "/mcp")[0];
        assert_eq!(delete.header("authorization"), Some("Bearer tok2"));
    })
    .await;
}

/// A raw HTTP/1.1 GET of `target` at `addr` (a browser, for the loopback tests): the whole
/// response text.
async fn raw_get(addr: &str, target: &str, extra: &str) -> String {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let req = format!("GET {target} HTTP/1.1\r\nhost: {addr}\r\n{extra}connection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).await.unwrap();
    out
}

/// RFC 8252 §7.3 (loopback redirect for native apps): the handler gives `open` the
/// authorization URL and waits for the redirect on its port; an idle connection and other
/// paths do not hold it up; the browser gets a page.
#[tokio::test]
async fn loopback_handler_takes_the_redirect() {
    within(async {
        let opened = Arc::new(Mutex::new(None::<String>));
        let seen = opened.clone();
        let handler = oauth::LoopbackHandler::bind(move |url: &str| {
            *seen.lock().unwrap() = Some(url.to_owned());
        })
        .await
        .unwrap();
        let redirect = handler.redirect_uri();
        let addr = redirect
            .strip_prefix("http://")
            .unwrap()
            .strip_suffix("/callback")
            .unwrap()
            .to_owned();
        assert!(addr.starts_with("127.0.0.1:"));
        let browser = tokio::spawn(async move {
            let _idle = tokio::net::TcpStream::connect(&addr).await.unwrap();
            let favicon = raw_get(&addr, "/favicon.ico", "").await;
            assert!(favicon.starts_with("HTTP/1.1 404"), "{favicon}");
            let page = raw_get(&addr, "/callback?code=c1&state=s1&iss=https%3A%2F%2Fas", "").await;
            assert!(page.starts_with("HTTP/1.1 200"), "{page}");
            assert!(page.contains("Authorization complete"));
        });
        let answer = handler
            .authorize("https://as.example/authorize?client_id=x")
            .await
            .unwrap();
        browser.await.unwrap();
        assert_eq!(answer.code, "c1");
        assert_eq!(answer.state.as_deref(), Some("s1"));
        assert_eq!(answer.iss.as_deref(), Some("https://as"));
        assert_eq!(
            opened.lock().unwrap().as_deref(),
            Some("https://as.example/authorize?client_id=x")
        );
    })
    .await;
}

/// The loopback handler's limits: no redirect within the timeout is an error; a request head
/// over the bound gets a 431 and the wait goes on; a non-loopback address is refused.
#[tokio::test]
async fn loopback_handler_limits() {
    within(async {
        let handler = oauth::LoopbackHandler::bind(|_: &str| {})
            .await
            .unwrap()
            .with_timeout(Duration::from_millis(50));
        let err = handler.authorize("https://as.example/a").await.unwrap_err();
        assert!(matches!(err, OAuthError::Authorization(_)), "{err}");

        let handler = oauth::LoopbackHandler::bind(|_: &str| {})
            .await
            .unwrap()
            .with_max_head(256);
        let addr = handler.redirect_uri()[7..]
            .trim_end_matches("/callback")
            .to_owned();
        let browser = tokio::spawn(async move {
            let big = format!("x-big: {}\r\n", "a".repeat(1024));
            let refused = raw_get(&addr, "/callback?code=no&state=no", &big).await;
            assert!(refused.starts_with("HTTP/1.1 431"), "{refused}");
            raw_get(&addr, "/callback?code=yes&state=s", "").await
        });
        let answer = handler.authorize("https://as.example/a").await.unwrap();
        assert_eq!(answer.code, "yes");
        assert!(browser.await.unwrap().starts_with("HTTP/1.1 200"));

        let err = oauth::LoopbackHandler::bind_to("0.0.0.0:0".parse().unwrap(), |_: &str| {})
            .await
            .unwrap_err();
        assert!(matches!(err, OAuthError::Config(_)), "{err}");
    })
    .await;
}

/// The whole authorization-code flow with the loopback handler: the "browser" follows the
/// authorization server's redirect to the handler's port.
#[tokio::test]
async fn loopback_handler_in_the_full_flow() {
    within(async {
        let (as_addr, seen) = start(Mock::default()).await;
        let handler = oauth::LoopbackHandler::bind(move |url: &str| {
            let target = url
                .strip_prefix(&format!("http://{as_addr}"))
                .unwrap()
                .to_owned();
            tokio::spawn(async move {
                let answer = raw_get(&as_addr.to_string(), &target, "").await;
                let location = answer
                    .lines()
                    .find_map(|l| l.strip_prefix("location: "))
                    .unwrap()
                    .trim()
                    .to_owned();
                let rest = location.strip_prefix("http://").unwrap();
                let (host, path) = rest.split_at(rest.find('/').unwrap());
                raw_get(host, path, "").await;
            });
        })
        .await
        .unwrap();
        let redirect = handler.redirect_uri();
        let cfg = OAuthConfig::new(redirect.clone(), handler);
        let tokens = oauth::authorize(&format!("http://{as_addr}/mcp"), &cfg)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(tokens.access_token, "tok");
        let token = &hits(&seen, &Method::POST, "/token")[0];
        assert_eq!(token.f("redirect_uri"), Some(redirect.as_str()));
    })
    .await;
}
