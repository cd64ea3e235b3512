//! The embedded authorization server's security bounds, in process (`handle` with a peer
//! address): no token without a user (AS15, AS16), no open redirector (AS17), consents bound
//! to the browser (AS18), bounded registration (AS19), the `/authorize` rate limit (AS20),
//! and no shared rate-limit bucket when mounted without a peer address (AS21).
#![allow(clippy::unwrap_used, clippy::panic)]

use std::convert::Infallible;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use bytes::Bytes;
use ferromcp_auth_server::{
    AuthHttpServer, AuthServerConfig, AuthorizationRequest, AuthorizationServer, ClientRecord,
    Consent, ConsentHook, DEFAULT_AUTHORIZE_RATE_LIMIT, DEFAULT_MAX_CLIENTS,
    DEFAULT_MAX_CLIENTS_PER_SOURCE, DEFAULT_UNUSED_CLIENT_TTL, RateLimit, Registration,
};
use ferromcp_dispatch::BoxFuture;
use ferromcp_http_server::{HttpConfig, McpBody};
use http::{HeaderMap, Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::net::TcpListener;

const ISSUER: &str = "http://127.0.0.1:1";
const RESOURCE: &str = "http://127.0.0.1:1/mcp";
const REDIRECT: &str = "http://127.0.0.1:9/cb";
const EVIL: &str = "https://evil.example/phish";
const A: &str = "192.0.2.1:1000";
const B: &str = "198.51.100.7:2000";

async fn within<T>(f: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(60), f)
        .await
        .expect("test timed out")
}

fn server(config: AuthServerConfig) -> AuthorizationServer {
    AuthorizationServer::new(
        config
            .issuer(ISSUER)
            .resource(RESOURCE)
            .scopes_supported(["mcp"]),
    )
    .unwrap()
}

struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    body: String,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }
    fn location(&self) -> Option<url::Url> {
        let l = self.headers.get("location")?.to_str().ok()?;
        url::Url::parse(l).ok()
    }
    /// `name=value` of the Set-Cookie header.
    fn cookie(&self) -> String {
        let c = self.headers["set-cookie"].to_str().unwrap();
        c.split(';').next().unwrap().to_owned()
    }
}

/// One request through `handle`, from `peer` (none: no address recorded).
async fn call(
    auth: &AuthorizationServer,
    method: Method,
    uri: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
    peer: Option<&str>,
) -> Answer {
    let mut req = Request::builder().method(method).uri(uri);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let mut req = req.body(Full::new(Bytes::from(body))).unwrap();
    if let Some(p) = peer {
        req.extensions_mut()
            .insert(p.parse::<SocketAddr>().unwrap());
    }
    let (parts, body) = auth.handle(req).await.into_parts();
    let bytes = body.collect().await.unwrap().to_bytes();
    Answer {
        status: parts.status,
        headers: parts.headers,
        body: String::from_utf8_lossy(&bytes).into_owned(),
    }
}

fn form(pairs: &[(&str, &str)]) -> Vec<u8> {
    url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish()
        .into_bytes()
}

async fn token(
    auth: &AuthorizationServer,
    pairs: &[(&str, &str)],
    basic: Option<(&str, &str)>,
    peer: &str,
) -> Answer {
    let b = basic.map(|(i, s)| format!("Basic {}", STANDARD.encode(format!("{i}:{s}"))));
    let mut h = vec![("content-type", "application/x-www-form-urlencoded")];
    if let Some(b) = &b {
        h.push(("authorization", b));
    }
    call(auth, Method::POST, "/token", &h, form(pairs), Some(peer)).await
}

async fn register(auth: &AuthorizationServer, meta: Value, peer: &str) -> Answer {
    let h = [("content-type", "application/json")];
    let body = meta.to_string().into_bytes();
    call(auth, Method::POST, "/register", &h, body, Some(peer)).await
}

/// A public client registered through `/register` from `peer` for `redirect`: its id.
async fn dynamic_client(auth: &AuthorizationServer, redirect: &str, peer: &str) -> String {
    let a = register(
        auth,
        json!({"redirect_uris": [redirect], "token_endpoint_auth_method": "none",
               "grant_types": ["authorization_code", "refresh_token"]}),
        peer,
    )
    .await;
    assert_eq!(a.status, StatusCode::CREATED, "{}", a.body);
    a.json()["client_id"].as_str().unwrap().to_owned()
}

fn pkce() -> (String, String) {
    let mut b = [0u8; 32];
    getrandom::fill(&mut b).unwrap();
    let v = URL_SAFE_NO_PAD.encode(b);
    let c = URL_SAFE_NO_PAD.encode(Sha256::digest(v.as_bytes()));
    (v, c)
}

/// GET /authorize for `client_id` at `redirect` with a fresh PKCE challenge, `extra`
/// parameters replacing the defaults: the answer and the verifier.
async fn authorize(
    auth: &AuthorizationServer,
    client_id: &str,
    redirect: &str,
    extra: &[(&str, &str)],
    headers: &[(&str, &str)],
    peer: &str,
) -> (Answer, String) {
    let (v, c) = pkce();
    let mut p: Vec<(&str, &str)> = vec![
        ("response_type", "code"),
        ("client_id", client_id),
        ("redirect_uri", redirect),
        ("code_challenge", &c),
        ("code_challenge_method", "S256"),
        ("state", "st"),
    ];
    for (k, val) in extra {
        p.retain(|(x, _)| x != k);
        if !val.is_empty() {
            p.push((k, val));
        }
    }
    let q = String::from_utf8(form(&p)).unwrap();
    let uri = format!("/authorize?{q}");
    let a = call(auth, Method::GET, &uri, headers, Vec::new(), Some(peer)).await;
    (a, v)
}

fn param(u: &url::Url, k: &str) -> Option<String> {
    u.query_pairs()
        .find(|(n, _)| n == k)
        .map(|(_, v)| v.into_owned())
}

/// A loopback server answering every GET with a client ID metadata document: `doc` with
/// `SELF` replaced by its address. Its URL.
async fn metadata_document(doc: Value) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let body = doc.to_string().replace("SELF", &addr.to_string());
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let body = body.clone();
            let svc = hyper::service::service_fn(move |_r: Request<Incoming>| {
                let body = body.clone();
                async move { Ok::<_, Infallible>(http::Response::new(Full::new(Bytes::from(body)))) }
            });
            tokio::spawn(
                hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc),
            );
        }
    });
    format!("http://{addr}/client.json")
}

/// AS15: a `client_credentials` token (no user behind it) only for clients the operator
/// registered (configuration or `register_client`): registration asking for the grant is
/// refused with `invalid_client_metadata`, a client ID metadata document listing it is
/// refused, and a self-registered record that somehow lists it still gets no token.
#[tokio::test]
async fn client_credentials_only_for_operator_registered_clients() {
    within(async {
        let auth = server(
            AuthServerConfig::default()
                .cimd_allow_loopback(true)
                .client(
                    ClientRecord::confidential("svc", "operator-secret", vec![])
                        .grant_types(["client_credentials"]),
                ),
        );
        for method in [
            "client_secret_basic",
            "client_secret_post",
            "private_key_jwt",
        ] {
            let a = register(
                &auth,
                json!({"grant_types": ["authorization_code", "client_credentials"],
                "redirect_uris": [REDIRECT], "token_endpoint_auth_method": method,
                "jwks": {"keys": [{"kty": "EC"}]}}),
                A,
            )
            .await;
            assert_eq!(a.status, StatusCode::BAD_REQUEST, "{method}: {}", a.body);
            assert_eq!(a.json()["error"], "invalid_client_metadata");
        }
        // A client ID metadata document cannot ask for it either.
        let url = metadata_document(json!({"client_id": "http://SELF/client.json",
            "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "client_credentials"]}))
        .await;
        let (a, _) = authorize(&auth, &url, REDIRECT, &[], &[], A).await;
        assert_eq!(a.status, StatusCode::BAD_REQUEST);
        assert!(a.body.contains("operator"), "{}", a.body);
        let a = token(
            &auth,
            &[("grant_type", "client_credentials"), ("client_id", &url)],
            None,
            A,
        )
        .await;
        assert_eq!(a.json()["error"], "invalid_client", "{}", a.body);
        // A self-registered record listing the grant (an old store, a bug): still refused.
        let mut forged = ClientRecord::confidential("forged", "forged-secret", vec![])
            .grant_types(["client_credentials"]);
        forged.registration = Registration::Dynamic;
        auth.config().store.put_client(forged).await.unwrap();
        let a = token(
            &auth,
            &[("grant_type", "client_credentials")],
            Some(("forged", "forged-secret")),
            A,
        )
        .await;
        assert_eq!(a.status, StatusCode::BAD_REQUEST, "{}", a.body);
        assert_eq!(a.json()["error"], "unauthorized_client");
        // A stored record without `registration` (written before it existed) is untrusted.
        let mut old = serde_json::to_value(ClientRecord::public("old", vec![])).unwrap();
        old.as_object_mut().unwrap().remove("registration");
        let old: ClientRecord = serde_json::from_value(old).unwrap();
        assert_eq!(old.registration, Registration::Dynamic);
        // The operator's clients: configured, and registered through the Rust API.
        let a = token(
            &auth,
            &[("grant_type", "client_credentials")],
            Some(("svc", "operator-secret")),
            A,
        )
        .await;
        assert_eq!(a.status, StatusCode::OK, "{}", a.body);
        auth.register_client(
            ClientRecord::confidential("svc2", "operator-secret-2", vec![])
                .grant_types(["client_credentials"]),
        )
        .await
        .unwrap();
        let a = token(
            &auth,
            &[("grant_type", "client_credentials")],
            Some(("svc2", "operator-secret-2")),
            A,
        )
        .await;
        assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    })
    .await;
}

/// A hook showing a login page.
#[derive(Clone, Default)]
struct LoginPage(Arc<Mutex<Vec<String>>>);

impl ConsentHook for LoginPage {
    fn consent<'a>(
        &'a self,
        request: &'a AuthorizationRequest,
        _http: &'a http::request::Parts,
    ) -> BoxFuture<'a, Consent> {
        self.0.lock().unwrap().push(request.request_id.clone());
        Box::pin(async { Consent::Respond(http::Response::new(McpBody::full("login"))) })
    }
}

/// AS16: the approve-everything default (`AutoApprove`) refuses to start off loopback (an
/// `https` issuer, or a non-loopback bound address) unless the operator sets
/// `allow_auto_approve_off_loopback`; a real consent hook starts anywhere.
#[tokio::test]
async fn auto_approve_refuses_to_run_off_loopback_unless_allowed() {
    within(async {
        let e = AuthorizationServer::new(AuthServerConfig::new("https://as.example")).unwrap_err();
        assert!(
            e.to_string().contains("allow_auto_approve_off_loopback"),
            "{e}"
        );
        assert!(
            AuthorizationServer::new(
                AuthServerConfig::new("https://as.example").allow_auto_approve_off_loopback(true)
            )
            .is_ok()
        );
        assert!(
            AuthorizationServer::new(
                AuthServerConfig::new("https://as.example").consent(LoginPage::default())
            )
            .is_ok()
        );
        assert!(AuthorizationServer::new(AuthServerConfig::new("http://localhost:1")).is_ok());
        // A loopback issuer, bound on every interface: refused too.
        let mcp = ferromcp_server::McpServer::builder("t", "1")
            .tool("noop", || async { "ok".to_owned() })
            .build()
            .unwrap();
        let bind = |config: AuthServerConfig| {
            AuthHttpServer::bind(
                "0.0.0.0:0",
                mcp.server().clone(),
                HttpConfig::default(),
                config,
            )
        };
        let e = bind(AuthServerConfig::new(ISSUER)).await.unwrap_err();
        assert!(e.to_string().contains("AutoApprove"), "{e}");
        assert!(
            bind(AuthServerConfig::new(ISSUER).allow_auto_approve_off_loopback(true))
                .await
                .is_ok()
        );
        assert!(
            bind(AuthServerConfig::new(ISSUER).consent(LoginPage::default()))
                .await
                .is_ok()
        );
    })
    .await;
}

/// AS17: `/authorize` is no open redirector. Anyone may register a client whose redirect
/// URI is theirs; an error for such a client (bad response type, no PKCE, unknown scope)
/// is an error page on the server's origin, never a 302 to that URI; the same for a client
/// ID metadata document. An operator's client still gets its error redirect, and a
/// self-registered client's successful flow still redirects with its code.
#[tokio::test]
async fn errors_for_self_registered_clients_are_shown_not_redirected() {
    within(async {
        let auth = server(AuthServerConfig::default().cimd_allow_loopback(true));
        let evil = dynamic_client(&auth, EVIL, A).await;
        let cimd = metadata_document(json!({"client_id": "http://SELF/client.json",
            "redirect_uris": [EVIL], "token_endpoint_auth_method": "none"}))
        .await;
        for id in [evil.as_str(), cimd.as_str()] {
            for extra in [
                vec![("response_type", "bogus")],
                vec![("code_challenge", "")],
                vec![("scope", "root")],
                vec![("resource", "https://elsewhere.example/mcp")],
            ] {
                let (a, _) = authorize(&auth, id, EVIL, &extra, &[], A).await;
                assert_eq!(a.status, StatusCode::BAD_REQUEST, "{extra:?}: {}", a.body);
                assert!(a.headers.get("location").is_none(), "{extra:?}");
                assert_eq!(a.headers["x-frame-options"], "DENY");
            }
        }
        auth.register_client(ClientRecord::public("op", vec![REDIRECT.into()]))
            .await
            .unwrap();
        let (a, _) = authorize(&auth, "op", REDIRECT, &[("response_type", "bogus")], &[], A).await;
        let loc = a
            .location()
            .expect("an operator's client gets its error redirect");
        assert_eq!(
            param(&loc, "error").as_deref(),
            Some("unsupported_response_type")
        );
        // The legitimate flow of a self-registered client is unchanged.
        let id = dynamic_client(&auth, REDIRECT, A).await;
        let (a, v) = authorize(&auth, &id, REDIRECT, &[], &[], A).await;
        assert_eq!(a.status, StatusCode::FOUND, "{}", a.body);
        let code = param(&a.location().unwrap(), "code").unwrap();
        let t = token(
            &auth,
            &[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", REDIRECT),
                ("code_verifier", &v),
                ("client_id", &id),
            ],
            None,
            A,
        )
        .await;
        assert_eq!(t.status, StatusCode::OK, "{}", t.body);
    })
    .await;
}

/// AS18: a pending consent is bound to the browser that started it. `/authorize` sets a
/// random `HttpOnly`, `SameSite=Lax` cookie (`Secure` and `__Host-` with an `https`
/// issuer) with the login page; `approve` / `deny` / `pending_request` from another browser
/// (no cookie, another one) are refused with 403 and leave the request pending; with the
/// cookie the approval completes. A second request from the same browser keeps its cookie.
#[tokio::test]
async fn pending_consent_is_bound_to_the_browser_that_started_it() {
    within(async {
        let hook = LoginPage::default();
        let auth = server(AuthServerConfig::default().consent(hook.clone()));
        let id = dynamic_client(&auth, REDIRECT, A).await;
        let (a, v) = authorize(&auth, &id, REDIRECT, &[], &[], A).await;
        assert_eq!(a.status, StatusCode::OK);
        let set = a.headers["set-cookie"].to_str().unwrap().to_owned();
        assert!(set.starts_with("ferromcp-consent="), "{set}");
        for attr in ["HttpOnly", "SameSite=Lax", "Path=/", "Max-Age=600"] {
            assert!(set.contains(attr), "{attr}: {set}");
        }
        assert!(!set.contains("Secure"), "http loopback issuer: {set}");
        let rid = hook.0.lock().unwrap()[0].clone();
        let mut mine = HeaderMap::new();
        mine.insert("cookie", format!("a=b; {}", a.cookie()).parse().unwrap());
        let nothing = HeaderMap::new();
        let mut other = HeaderMap::new();
        let forged = format!("ferromcp-consent={}", "A".repeat(43));
        other.insert("cookie", forged.parse().unwrap());
        for h in [&nothing, &other] {
            let r = auth.approve(&rid, h, "mallory", vec!["mcp".into()]).await;
            assert_eq!(r.status(), StatusCode::FORBIDDEN);
            assert!(r.headers().get("location").is_none());
            assert_eq!(auth.deny(&rid, h).await.status(), StatusCode::FORBIDDEN);
            assert!(auth.pending_request(&rid, h).is_none());
        }
        let pending = auth.pending_request(&rid, &mine).expect("still pending");
        assert_eq!(pending.redirect_uri, REDIRECT);
        assert_eq!(pending.registration, Registration::Dynamic);
        let r = auth.approve(&rid, &mine, "alice", vec!["mcp".into()]).await;
        assert_eq!(r.status(), StatusCode::FOUND);
        let loc = url::Url::parse(r.headers()["location"].to_str().unwrap()).unwrap();
        let code = param(&loc, "code").unwrap();
        let t = token(
            &auth,
            &[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", REDIRECT),
                ("code_verifier", &v),
                ("client_id", &id),
            ],
            None,
            A,
        )
        .await;
        assert_eq!(t.status, StatusCode::OK, "{}", t.body);
        // The same browser again: the same cookie value, and its request completes.
        let cookie = a.cookie();
        let (again, _) = authorize(&auth, &id, REDIRECT, &[], &[("cookie", &cookie)], A).await;
        assert_eq!(again.cookie(), cookie);
        let rid2 = hook.0.lock().unwrap()[1].clone();
        assert_eq!(
            auth.deny(&rid2, &mine).await.status(),
            StatusCode::FOUND,
            "denied, redirected"
        );
        // An https issuer: Secure, with the __Host- prefix.
        let secure = AuthorizationServer::new(
            AuthServerConfig::new("https://as.example")
                .resource("https://as.example/mcp")
                .consent(hook.clone()),
        )
        .unwrap();
        secure
            .register_client(ClientRecord::public("c", vec![REDIRECT.into()]))
            .await
            .unwrap();
        let (a, _) = authorize(&secure, "c", REDIRECT, &[], &[], A).await;
        let set = a.headers["set-cookie"].to_str().unwrap();
        assert!(set.starts_with("__Host-ferromcp-consent="), "{set}");
        assert!(set.contains("; Secure"), "{set}");
    })
    .await;
}

/// AS19: self-registered clients are bounded: at most `max_clients_per_source`
/// registrations per source address (an IPv6 /64 is one source) within
/// `unused_client_ttl`, at most `max_clients` alive in all (429 past either); a client
/// never issued a token expires after `unused_client_ttl`, making room; a used one lives on.
#[tokio::test]
async fn registered_clients_are_bounded_per_source_and_in_total_and_expire_unused() {
    within(async {
        assert_eq!(DEFAULT_MAX_CLIENTS, 10_000);
        assert_eq!(DEFAULT_MAX_CLIENTS_PER_SOURCE, 10);
        assert_eq!(DEFAULT_UNUSED_CLIENT_TTL, Duration::from_secs(3600));
        let auth = server(
            AuthServerConfig::default()
                .max_clients(4)
                .max_clients_per_source(2)
                .unused_client_ttl(Duration::from_secs(2)),
        );
        check_client_bounds(&auth).await;
    })
    .await;
}

/// The AS19 scenario (also run against Redis, AS22): per source 2, total 4, unused 2 s (whole seconds: a client lives 1 to 2 s).
pub async fn check_client_bounds(auth: &AuthorizationServer) {
    let used = dynamic_client(auth, REDIRECT, A).await;
    let unused = dynamic_client(auth, REDIRECT, A).await;
    let a = register(auth, json!({"redirect_uris": [REDIRECT]}), A).await;
    assert_eq!(a.status, StatusCode::TOO_MANY_REQUESTS, "{}", a.body);
    assert!(a.headers.get("retry-after").is_some());
    // Another source; an IPv6 /64 counts once.
    dynamic_client(auth, REDIRECT, B).await;
    dynamic_client(auth, REDIRECT, "[2001:db8:0:1::1]:5").await;
    let a = register(
        auth,
        json!({"redirect_uris": [REDIRECT]}),
        "[2001:db8:0:1::2]:5",
    )
    .await;
    assert_eq!(a.status, StatusCode::TOO_MANY_REQUESTS, "total: {}", a.body);
    // `used` gets a token; `unused` does not.
    let (a, v) = authorize(auth, &used, REDIRECT, &[], &[], A).await;
    let code = param(&a.location().unwrap(), "code").unwrap();
    let t = token(
        auth,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", REDIRECT),
            ("code_verifier", &v),
            ("client_id", &used),
        ],
        None,
        A,
    )
    .await;
    assert_eq!(t.status, StatusCode::OK, "{}", t.body);
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let store = &auth.config().store;
    assert!(store.client(&unused).await.unwrap().is_none(), "expired");
    assert!(
        store.client(&used).await.unwrap().is_some(),
        "used: lives on"
    );
    let (a, _) = authorize(auth, &unused, REDIRECT, &[], &[], A).await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST);
    // Room again, from the same source.
    dynamic_client(auth, REDIRECT, A).await;
    let rt = t.json()["refresh_token"].as_str().unwrap().to_owned();
    let r = token(
        auth,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", &rt),
            ("client_id", &used),
        ],
        None,
        A,
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
}

/// AS20: `/authorize` is rate limited per caller address (default 30 per minute; 2 here):
/// past it a 429 page with `Retry-After` (no redirect); another address is not affected.
#[tokio::test]
async fn authorize_is_rate_limited_per_peer() {
    within(async {
        assert_eq!(
            DEFAULT_AUTHORIZE_RATE_LIMIT,
            RateLimit::new(30, Duration::from_secs(60))
        );
        let auth = server(
            AuthServerConfig::default()
                .authorize_rate_limit(RateLimit::new(2, Duration::from_secs(60))),
        );
        let id = dynamic_client(&auth, REDIRECT, A).await;
        for _ in 0..2 {
            let (a, _) = authorize(&auth, &id, REDIRECT, &[], &[], A).await;
            assert_eq!(a.status, StatusCode::FOUND);
        }
        let (a, _) = authorize(&auth, &id, REDIRECT, &[], &[], A).await;
        assert_eq!(a.status, StatusCode::TOO_MANY_REQUESTS);
        assert!(a.headers.get("location").is_none());
        let wait: u64 = a.headers["retry-after"].to_str().unwrap().parse().unwrap();
        assert!((1..=60).contains(&wait), "{wait}");
        let (a, _) = authorize(&auth, &id, REDIRECT, &[], &[], B).await;
        assert_eq!(a.status, StatusCode::FOUND);
    })
    .await;
}

/// AS21: mounted without a peer address (no `SocketAddr` extension, no `peer_address`),
/// the rate-limited endpoints refuse with 500 rather than put every caller in one bucket;
/// metadata and JWKS still answer. With `peer_address` (a trusted proxy's header here) each
/// caller has its own bucket.
#[tokio::test]
async fn without_a_peer_address_requests_are_refused_not_pooled() {
    within(async {
        let auth = server(AuthServerConfig::default());
        let ct = [("content-type", "application/x-www-form-urlencoded")];
        for (method, uri) in [
            (Method::POST, "/token"),
            (Method::POST, "/register"),
            (Method::POST, "/revoke"),
            (Method::GET, "/authorize?client_id=x"),
        ] {
            let a = call(&auth, method, uri, &ct, Vec::new(), None).await;
            assert_eq!(a.status, StatusCode::INTERNAL_SERVER_ERROR, "{uri}");
            assert!(a.body.contains("peer address"), "{uri}: {}", a.body);
        }
        for uri in ["/jwks", "/.well-known/oauth-authorization-server"] {
            let a = call(&auth, Method::GET, uri, &[], Vec::new(), None).await;
            assert_eq!(a.status, StatusCode::OK, "{uri}");
        }
        let auth = server(
            AuthServerConfig::default()
                .token_rate_limit(RateLimit::new(1, Duration::from_secs(60)))
                .peer_address(|parts| {
                    parts
                        .headers
                        .get("x-client-ip")
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.parse::<IpAddr>().ok())
                }),
        );
        let post = |ip: &'static str| {
            let auth = auth.clone();
            async move {
                let h = [ct[0], ("x-client-ip", ip)];
                let body = form(&[("grant_type", "client_credentials")]);
                call(&auth, Method::POST, "/token", &h, body, None)
                    .await
                    .status
            }
        };
        assert_ne!(post("192.0.2.1").await, StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(post("192.0.2.1").await, StatusCode::TOO_MANY_REQUESTS);
        assert_ne!(post("192.0.2.2").await, StatusCode::TOO_MANY_REQUESTS);
    })
    .await;
}
