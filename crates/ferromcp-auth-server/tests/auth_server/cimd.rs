//! Client ID metadata documents: a client completes the flow with one, fetching them is guarded
//! (loopback and private addresses, redirects, size, time), and ferromcp's client uses one.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::Duration;

use crate::support::{
    Answer, Env, REDIRECT, authorize, call_with, code_for, exchange, oauth_client, pkce, start,
    text_of, within,
};
use bytes::Bytes;
use ferromcp_auth_server::{AuthServerConfig, ClientRecord};
use ferromcp_client::oauth::{OAuthConfig, RedirectReadingHandler};
use http::{Request, StatusCode};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use serde_json::json;
use tokio::net::TcpListener;

/// A loopback server answering every GET with `status`, `location` and `body` (`SELF`
/// replaced by its address), after `delay`.
async fn doc_server(
    status: u16,
    location: Option<String>,
    body: String,
    delay: Duration,
) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    // `SELF` in the body stands for the bound address (a document naming its own URL).
    let body = body.replace("SELF", &addr.to_string());
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let (location, body) = (location.clone(), body.clone());
            let svc = hyper::service::service_fn(move |_req: Request<Incoming>| {
                let (location, body) = (location.clone(), body.clone());
                async move {
                    tokio::time::sleep(delay).await;
                    let mut r = http::Response::builder()
                        .status(status)
                        .header("content-type", "application/json");
                    if let Some(l) = location {
                        r = r.header("location", l);
                    }
                    Ok::<_, Infallible>(r.body(Full::new(Bytes::from(body))).unwrap())
                }
            });
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    addr
}

async fn cimd_authorize(env: &Env, client_id: &str) -> Answer {
    let (_, c) = pkce();
    authorize(
        env,
        &[
            ("response_type", "code"),
            ("client_id", client_id),
            ("redirect_uri", REDIRECT),
            ("code_challenge", &c),
            ("code_challenge_method", "S256"),
            ("state", "s"),
        ],
    )
    .await
}

/// Client ID metadata documents (MCP 2025-11-25 §Client ID Metadata Documents): a URL
/// client id is fetched and its redirect URIs enforced; the full flow works with it.
#[tokio::test]
async fn cimd_client_completes_the_flow() {
    within(async {
        let env = start(AuthServerConfig::default().cimd_allow_loopback(true)).await;
        // The document's URL is only known once bound: serve it from a second listener
        // whose body names its own URL.
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let url = format!("http://{addr}/client.json");
        let doc = json!({"client_id": url, "client_name": "cimd", "redirect_uris": [REDIRECT]}).to_string();
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { return };
                let doc = doc.clone();
                let svc = hyper::service::service_fn(move |_r: Request<Incoming>| {
                    let doc = doc.clone();
                    async move { Ok::<_, Infallible>(http::Response::new(Full::new(Bytes::from(doc)))) }
                });
                tokio::spawn(hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc));
            }
        });
        let (code, v) = code_for(&env, &url, "mcp").await;
        let t = exchange(&env, &url, &code, &v).await;
        assert_eq!(t.status, StatusCode::OK, "{}", t.body);
        let (s, body) = call_with(&env, t.json()["access_token"].as_str().unwrap(), "whoami").await;
        assert_eq!(s, StatusCode::OK);
        assert!(body.contains(&url), "{body}");
        // A redirect URI the document does not list is refused without a redirect.
        let (_, c) = pkce();
        let a = authorize(&env, &[("response_type", "code"), ("client_id", &url),
            ("redirect_uri", "http://127.0.0.1:9/elsewhere"), ("code_challenge", &c),
            ("code_challenge_method", "S256")]).await;
        assert_eq!(a.status, StatusCode::BAD_REQUEST);
        assert!(a.headers.get("location").is_none());
    })
    .await;
}

/// CIMD SSRF protections: without the loopback allowance a loopback document is never
/// fetched; a redirecting document, a document naming another client_id, one holding a
/// secret, one over the size limit, and one slower than the time limit are refused.
#[tokio::test]
async fn cimd_fetch_is_guarded() {
    within(async {
        let strict = start(AuthServerConfig::default()).await;
        let hit = doc_server(200, None, "{}".into(), Duration::ZERO).await;
        let a = cimd_authorize(&strict, &format!("http://{hit}/c.json")).await;
        assert_eq!(
            a.status,
            StatusCode::BAD_REQUEST,
            "http loopback refused without allowance"
        );
        let a = cimd_authorize(&strict, "https://127.0.0.1/c.json").await;
        assert_eq!(a.status, StatusCode::BAD_REQUEST);
        assert!(a.body.contains("non-public"), "{}", a.body);
        let a = cimd_authorize(&strict, "https://10.0.0.1/c.json").await;
        assert!(a.body.contains("non-public"), "{}", a.body);
        let a = cimd_authorize(&strict, "https://localhost/c.json").await;
        assert!(a.body.contains("non-public"), "{}", a.body);

        let env = start(
            AuthServerConfig::default()
                .cimd_allow_loopback(true)
                .cimd_max_size(512)
                .cimd_timeout(Duration::from_millis(500)),
        )
        .await;
        let target = doc_server(200, None, "{}".into(), Duration::ZERO).await;
        let redirecting = doc_server(
            302,
            Some(format!("http://{target}/c.json")),
            String::new(),
            Duration::ZERO,
        )
        .await;
        let a = cimd_authorize(&env, &format!("http://{redirecting}/c.json")).await;
        assert!(a.body.contains("redirect"), "{}", a.body);
        let wrong = doc_server(
            200,
            None,
            json!({"client_id": "https://someone.else/c.json",
            "redirect_uris": [REDIRECT]})
            .to_string(),
            Duration::ZERO,
        )
        .await;
        let a = cimd_authorize(&env, &format!("http://{wrong}/c.json")).await;
        assert!(a.body.contains("client_id"), "{}", a.body);
        let holder = doc_server(
            200,
            None,
            json!({"client_id": "http://SELF/c.json", "client_secret": "x",
                   "redirect_uris": [REDIRECT]})
            .to_string(),
            Duration::ZERO,
        )
        .await;
        let a = cimd_authorize(&env, &format!("http://{holder}/c.json")).await;
        assert!(a.body.contains("secret"), "{}", a.body);
        let big = doc_server(200, None, " ".repeat(2048), Duration::ZERO).await;
        let a = cimd_authorize(&env, &format!("http://{big}/c.json")).await;
        assert!(a.body.contains("larger"), "{}", a.body);
        let slow = doc_server(200, None, "{}".into(), Duration::from_secs(5)).await;
        let a = cimd_authorize(&env, &format!("http://{slow}/c.json")).await;
        assert!(a.body.contains("timed out"), "{}", a.body);
        let no_path = cimd_authorize(&env, &format!("http://{target}/")).await;
        assert_eq!(no_path.status, StatusCode::BAD_REQUEST);
    })
    .await;
}

/// Registration by client ID metadata document through ferromcp's client: the server
/// advertises `client_id_metadata_document_supported`, so the client uses its metadata URL
/// as `client_id` instead of registering. (The client only sends `https` document URLs, which
/// a test cannot serve with a trusted certificate, so the document is known to the store up
/// front; fetching documents is covered by `cimd_client_completes_the_flow`.)
#[tokio::test]
async fn ferromcp_client_with_a_client_id_metadata_document() {
    within(Box::pin(async {
        let env = start(AuthServerConfig::default()).await;
        let url = "https://agent.example/oauth/client.json";
        env.auth
            .config()
            .store
            .put_client(ClientRecord::public(url, vec![REDIRECT.into()]))
            .await
            .unwrap();
        let cfg = OAuthConfig::new(REDIRECT, RedirectReadingHandler).with_client_metadata_url(url);
        let client = oauth_client(&env, cfg).await;
        let who = text_of(&client.call_tool("whoami", json!({})).await.unwrap());
        assert!(who.contains(&format!("via {url}")), "{who}");
        client.shutdown().await;
    }))
    .await;
}
