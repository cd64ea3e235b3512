//! The loopback mock the OAuth tests share: one hyper server playing the MCP resource, its
//! protected-resource metadata, the authorization server and an enterprise IdP; and helpers.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bytes::Bytes;
use ferromcp_client::oauth::{OAuthConfig, RedirectReadingHandler};
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use p256::ecdsa::signature::Verifier as _;
use p256::ecdsa::{Signature, VerifyingKey};
use serde_json::{Value, json};
use tokio::net::TcpListener;

pub(crate) const LIMIT: Duration = Duration::from_secs(30);

/// Runs `f`, failing the test if it hangs.
pub(crate) async fn within<F: Future>(f: F) -> F::Output {
    match tokio::time::timeout(LIMIT, f).await {
        Ok(v) => v,
        Err(_) => panic!("timed out after {LIMIT:?}"),
    }
}

/// How the mock resource treats DPoP nonces.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum RsNonce {
    /// Never asks for one.
    #[default]
    No,
    /// Asks once for `rs-n`, then accepts proofs carrying it.
    Once,
    /// Asks for a new nonce on every request.
    Always,
}

#[derive(Debug, Clone)]
pub(crate) struct Mock {
    /// Advertise PKCE S256.
    pub(crate) s256: bool,
    /// Override the protected resource's `resource`.
    pub(crate) resource: Option<String>,
    /// Override the challenge's `resource_metadata`.
    pub(crate) resource_metadata: Option<String>,
    /// Advertise `client_id_metadata_document_supported`.
    pub(crate) cimd: bool,
    /// Advertise ES256 DPoP proofs, and issue DPoP-bound tokens for proofs.
    pub(crate) dpop: bool,
    /// The token endpoint asks for the DPoP nonce `as-n` first.
    pub(crate) as_nonce: bool,
    /// The token endpoint asks for a new DPoP nonce every time.
    pub(crate) as_nonce_always: bool,
    /// The resource's DPoP nonce behaviour.
    pub(crate) rs_nonce: RsNonce,
    /// `token_endpoint_auth_methods_supported`.
    pub(crate) auth_methods: Vec<&'static str>,
    /// `expires_in` of issued tokens.
    pub(crate) expires_in: u64,
    /// The token endpoint refuses with this error.
    pub(crate) token_error: Option<&'static str>,
    /// The first notification POST with `Bearer tok` gets a 401 `invalid_token`.
    pub(crate) notification_401: bool,
    /// The redirect's `iss`: the issuer (`Some(true)`), another one (`Some(false)`), none.
    pub(crate) iss: Option<bool>,
    /// Advertise `authorization_response_iss_parameter_supported`.
    pub(crate) iss_advertised: bool,
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
pub(crate) struct Hit {
    pub(crate) method: Method,
    pub(crate) path: String,
    pub(crate) query: Vec<(String, String)>,
    pub(crate) headers: HeaderMap,
    pub(crate) form: Vec<(String, String)>,
}

impl Hit {
    pub(crate) fn q(&self, key: &str) -> Option<&str> {
        value(&self.query, key)
    }
    pub(crate) fn f(&self, key: &str) -> Option<&str> {
        value(&self.form, key)
    }
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

pub(crate) type Seen = Arc<Mutex<Vec<Hit>>>;

pub(crate) fn hits(seen: &Seen, method: &Method, path: &str) -> Vec<Hit> {
    seen.lock()
        .unwrap()
        .iter()
        .filter(|h| h.method == method && h.path == path)
        .cloned()
        .collect()
}

pub(crate) fn value<'a>(pairs: &'a [(String, String)], key: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

pub(crate) fn json_response(status: StatusCode, v: &Value) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(v.to_string())))
        .unwrap()
}

pub(crate) async fn start(mock: Mock) -> (SocketAddr, Seen) {
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
pub(crate) fn claims(jwt: &str, part: usize) -> Value {
    let seg = jwt.split('.').nth(part).unwrap();
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(seg).unwrap()).unwrap()
}

/// Verifies an ES256 JWT with `key`.
pub(crate) fn verify_es256(jwt: &str, key: &VerifyingKey) {
    let (input, sig) = jwt.rsplit_once('.').unwrap();
    let sig = Signature::from_slice(&URL_SAFE_NO_PAD.decode(sig).unwrap()).unwrap();
    key.verify(input.as_bytes(), &sig).unwrap();
}

/// The public key of a DPoP proof's `jwk` header; the proof must verify with it.
pub(crate) fn dpop_key(proof: &str) -> VerifyingKey {
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

pub(crate) fn mcp_answer(body: &[u8]) -> Response<Full<Bytes>> {
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

pub(crate) async fn handle(
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

pub(crate) fn config() -> OAuthConfig {
    OAuthConfig::new("http://127.0.0.1:1/callback", RedirectReadingHandler)
        .with_client_name("oauth-test")
}

/// A fixed P-256 test key, as PKCS#8 PEM, and its public key.
pub(crate) fn es256_key() -> (String, VerifyingKey) {
    use p256::pkcs8::{EncodePrivateKey, LineEnding};
    let secret = p256::SecretKey::from_slice(&[7u8; 32]).unwrap();
    let pem = secret.to_pkcs8_pem(LineEnding::LF).unwrap().to_string();
    let public = VerifyingKey::from(p256::ecdsa::SigningKey::from(&secret));
    (pem, public)
}
