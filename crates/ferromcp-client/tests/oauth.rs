//! The OAuth client against a tiny loopback mock: one hyper server playing the MCP resource
//! (401 with `resource_metadata`), its protected-resource metadata, and the authorization
//! server (metadata, registration, an authorization endpoint that redirects at once, token).
#![cfg(feature = "oauth")]
#![allow(clippy::unwrap_used, clippy::panic)]

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bytes::Bytes;
use ferromcp_client::oauth::{
    self, MemoryTokenStore, OAuthConfig, OAuthError, OAuthProvider, RedirectReadingHandler,
};
use ferromcp_client::transport::http::AuthProvider;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::net::TcpListener;

#[derive(Debug, Clone)]
struct Mock {
    /// Advertise PKCE S256.
    s256: bool,
    /// Override the protected resource's `resource`.
    resource: Option<String>,
}

#[derive(Debug, Default)]
struct Seen {
    challenge: Option<String>,
    auth_query: Vec<(String, String)>,
    token_form: Vec<(String, String)>,
    scopes: Vec<String>,
}

fn json_response(status: StatusCode, v: &Value) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(v.to_string())))
        .unwrap()
}

async fn start(mock: Mock) -> (SocketAddr, Arc<Mutex<Seen>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Seen::default()));
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

async fn handle(
    req: Request<Incoming>,
    addr: SocketAddr,
    mock: &Mock,
    seen: &Mutex<Seen>,
) -> Response<Full<Bytes>> {
    let base = format!("http://{addr}");
    let path = req.uri().path().to_owned();
    let query = req.uri().query().unwrap_or_default().to_owned();
    let method = req.method().clone();
    let body = req.into_body().collect().await.unwrap().to_bytes();
    match (method, path.as_str()) {
        (Method::POST, "/mcp") => Response::builder()
            .status(StatusCode::UNAUTHORIZED)
            .header(
                "www-authenticate",
                format!(
                    r#"Bearer resource_metadata="{base}/.well-known/oauth-protected-resource/mcp", scope="mcp:read""#
                ),
            )
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
                "token_endpoint_auth_methods_supported": ["none"],
            });
            if mock.s256 {
                meta["code_challenge_methods_supported"] = json!(["S256"]);
            }
            json_response(StatusCode::OK, &meta)
        }
        (Method::POST, "/register") => {
            json_response(StatusCode::CREATED, &json!({"client_id": "registered-client"}))
        }
        (Method::GET, "/authorize") => {
            let pairs: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes())
                .into_owned()
                .collect();
            let get = |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| n == k)
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default()
            };
            let location = format!(
                "{}?code=the-code&state={}&iss={}",
                get("redirect_uri"),
                get("state"),
                url::form_urlencoded::byte_serialize(base.as_bytes()).collect::<String>()
            );
            let mut s = seen.lock().unwrap();
            s.challenge = Some(get("code_challenge"));
            s.scopes.push(get("scope"));
            s.auth_query = pairs;
            Response::builder()
                .status(StatusCode::FOUND)
                .header("location", location)
                .body(Full::new(Bytes::new()))
                .unwrap()
        }
        (Method::POST, "/token") => {
            let form: Vec<(String, String)> =
                url::form_urlencoded::parse(&body).into_owned().collect();
            let refresh = value(&form, "grant_type") == Some("refresh_token")
                && value(&form, "refresh_token") == Some("rt");
            seen.lock().unwrap().token_form = form;
            let token = if refresh { "tok2" } else { "tok" };
            json_response(
                StatusCode::OK,
                &json!({"access_token": token, "token_type": "Bearer", "expires_in": 3600,
                        "refresh_token": "rt"}),
            )
        }
        _ => json_response(StatusCode::NOT_FOUND, &json!({})),
    }
}

fn config() -> OAuthConfig {
    OAuthConfig {
        redirect_uri: "http://127.0.0.1:1/callback".to_owned(),
        client_name: "oauth-test".to_owned(),
        credentials: None,
        handler: Box::new(RedirectReadingHandler),
        store: Box::new(MemoryTokenStore::default()),
    }
}

fn value<'a>(pairs: &'a [(String, String)], key: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

#[tokio::test]
async fn full_flow_with_pkce_resource_and_scope() {
    let (addr, seen) = start(Mock {
        s256: true,
        resource: None,
    })
    .await;
    let url = format!("http://{addr}/mcp");
    let tokens = oauth::authorize(&url, &config()).await.unwrap().unwrap();
    assert_eq!(tokens.access_token, "tok");
    let s = seen.lock().unwrap();
    assert_eq!(value(&s.auth_query, "code_challenge_method"), Some("S256"));
    assert_eq!(value(&s.auth_query, "client_id"), Some("registered-client"));
    assert_eq!(value(&s.auth_query, "resource"), Some(url.as_str()));
    assert_eq!(value(&s.auth_query, "scope"), Some("mcp:read"));
    assert_eq!(value(&s.token_form, "resource"), Some(url.as_str()));
    assert_eq!(value(&s.token_form, "code"), Some("the-code"));
    let verifier = value(&s.token_form, "code_verifier").unwrap();
    let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    assert_eq!(s.challenge.as_deref(), Some(challenge.as_str()));
}

#[tokio::test]
async fn refuses_a_server_without_s256() {
    let (addr, _) = start(Mock {
        s256: false,
        resource: None,
    })
    .await;
    let err = oauth::authorize(&format!("http://{addr}/mcp"), &config())
        .await
        .unwrap_err();
    assert!(matches!(err, OAuthError::Discovery(_)), "{err}");
}

#[tokio::test]
async fn refuses_a_mismatched_resource() {
    let (addr, seen) = start(Mock {
        s256: true,
        resource: Some("http://127.0.0.1:1/other".to_owned()),
    })
    .await;
    let err = oauth::authorize(&format!("http://{addr}/mcp"), &config())
        .await
        .unwrap_err();
    assert!(matches!(err, OAuthError::Discovery(_)), "{err}");
    assert!(
        seen.lock().unwrap().scopes.is_empty(),
        "no authorization request"
    );
}

#[tokio::test]
async fn provider_steps_up_once_per_new_scope() {
    let (addr, seen) = start(Mock {
        s256: true,
        resource: None,
    })
    .await;
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
    // The same scopes again: nothing new to ask for, so no third authorization.
    assert!(
        !provider
            .on_challenge(StatusCode::FORBIDDEN, Some(&step_up))
            .await
    );
    let s = seen.lock().unwrap();
    assert_eq!(s.scopes, ["mcp:read", "mcp:read mcp:write"]);
}

#[tokio::test]
async fn provider_refreshes_once_on_401_then_authorizes_again() {
    let (addr, seen) = start(Mock {
        s256: true,
        resource: None,
    })
    .await;
    let provider = OAuthProvider::new(&format!("http://{addr}/mcp"), config()).unwrap();
    assert!(provider.on_challenge(StatusCode::UNAUTHORIZED, None).await);
    assert_eq!(provider.authorization().unwrap(), "Bearer tok");
    // Expired: the refresh_token grant, with the resource.
    assert!(provider.on_challenge(StatusCode::UNAUTHORIZED, None).await);
    assert_eq!(provider.authorization().unwrap(), "Bearer tok2");
    {
        let s = seen.lock().unwrap();
        assert_eq!(value(&s.token_form, "grant_type"), Some("refresh_token"));
        assert!(value(&s.token_form, "resource").is_some());
        assert_eq!(s.scopes.len(), 1, "no second authorization request yet");
    }
    // A 401 right after a refresh: the whole flow again.
    assert!(provider.on_challenge(StatusCode::UNAUTHORIZED, None).await);
    assert_eq!(provider.authorization().unwrap(), "Bearer tok");
    assert_eq!(seen.lock().unwrap().scopes.len(), 2);
}
