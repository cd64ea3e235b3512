//! The token endpoint's rate limit, request size and count limits, secrets kept out of the logs,
//! and the consent hook's login page.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::support::{
    REDIRECT, authorize, call_with, code_for, exchange, get, operator_client, param, pkce,
    post_form, public_client, register, start, tokens, within,
};
use ferromcp_auth_server::{AuthServerConfig, DEFAULT_TOKEN_RATE_LIMIT, RateLimit};
use ferromcp_dispatch::BoxFuture;
use http::StatusCode;
use serde_json::json;

/// The token endpoint's rate limit (default 60 per minute per peer; 3 here): past the
/// burst, 429 with `Retry-After`; the registration endpoint likewise.
#[tokio::test]
async fn token_endpoint_is_rate_limited() {
    within(async {
        assert_eq!(
            DEFAULT_TOKEN_RATE_LIMIT,
            RateLimit::new(60, Duration::from_secs(60))
        );
        let limit = RateLimit::new(3, Duration::from_secs(60));
        let env = start(AuthServerConfig::default().token_rate_limit(limit)).await;
        let url = format!("{}/token", env.base);
        for _ in 0..3 {
            let a = post_form(&url, &[("grant_type", "client_credentials")], None).await;
            assert_ne!(a.status, StatusCode::TOO_MANY_REQUESTS);
        }
        let a = post_form(&url, &[("grant_type", "client_credentials")], None).await;
        assert_eq!(a.status, StatusCode::TOO_MANY_REQUESTS);
        let wait: u64 = a.headers["retry-after"].to_str().unwrap().parse().unwrap();
        assert!((1..=20).contains(&wait), "{wait}");
        // Registration has its own bucket of the same size.
        for _ in 0..3 {
            let a = register(&env, json!({"redirect_uris": [REDIRECT]})).await;
            assert_eq!(a.status, StatusCode::CREATED);
        }
        let a = register(&env, json!({"redirect_uris": [REDIRECT]})).await;
        assert_eq!(a.status, StatusCode::TOO_MANY_REQUESTS);
        // Metadata and authorization are not behind the token bucket.
        let m = get(&format!(
            "{}/.well-known/oauth-authorization-server",
            env.base
        ))
        .await;
        assert_eq!(m.status, StatusCode::OK);
    })
    .await;
}

/// Captures every log event's fields.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<String>>);

struct Visit<'a>(&'a mut String);

impl tracing::field::Visit for Visit<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!("{}={value:?} ", field.name()));
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Capture {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        let mut s = self.0.lock().unwrap();
        event.record(&mut Visit(&mut s));
        s.push('\n');
    }
}

/// Tokens are never logged (MCP §Token Theft): through a flow, a code replay, a refresh
/// reuse, a revocation and a failed client authentication at TRACE level, no token, code
/// or secret appears in any log event.
#[tokio::test]
async fn tokens_codes_and_secrets_are_never_logged() {
    use tracing_subscriber::layer::SubscriberExt as _;
    let capture = Capture::default();
    let subscriber = tracing_subscriber::registry().with(capture.clone());
    let _guard = tracing::subscriber::set_default(subscriber);
    within(async {
        let env = start(AuthServerConfig::default()).await;
        let id = public_client(&env).await;
        let (code, v) = code_for(&env, &id, "mcp").await;
        let t = exchange(&env, &id, &code, &v).await.json();
        exchange(&env, &id, &code, &v).await;
        let (_, t2) = tokens(&env, "mcp").await;
        let rt = t2["refresh_token"].as_str().unwrap();
        let url = format!("{}/token", env.base);
        let id2 = public_client(&env).await;
        post_form(
            &url,
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", rt),
                ("client_id", &id2),
            ],
            None,
        )
        .await;
        call_with(&env, t["access_token"].as_str().unwrap(), "whoami").await;
        call_with(&env, "garbage.token.value", "whoami").await;
        post_form(
            &url,
            &[("grant_type", "client_credentials")],
            Some(("x", "hunter2-secret")),
        )
        .await;
        let logs = capture.0.lock().unwrap().clone();
        for secret in [
            t["access_token"].as_str().unwrap(),
            t["refresh_token"].as_str().unwrap(),
            &code,
            &v,
            rt,
            "hunter2-secret",
            "garbage.token.value",
        ] {
            assert!(!logs.contains(secret), "logged: {secret}\n{logs}");
        }
        assert!(
            logs.contains("replayed"),
            "the replay is logged (without the code): {logs}"
        );
    })
    .await;
}

/// The consent hook: a login page (`Consent::Respond`) holds the request; the application
/// completes it with `approve` (code redirect with state and iss) or `deny`
/// (`access_denied`); a request id works once.
#[tokio::test]
async fn consent_hook_login_page_then_approve_or_deny() {
    use ferromcp_auth_server::{AuthorizationRequest, Consent, ConsentHook};
    use ferromcp_http_server::McpBody;

    #[derive(Clone, Default)]
    struct LoginPage(Arc<Mutex<Vec<String>>>);
    impl ConsentHook for LoginPage {
        fn consent<'a>(
            &'a self,
            request: &'a AuthorizationRequest,
            _http: &'a http::request::Parts,
        ) -> BoxFuture<'a, Consent> {
            self.0.lock().unwrap().push(request.request_id.clone());
            Box::pin(async move {
                let page = format!("<form>login for {}</form>", request.client_id);
                Consent::Respond(http::Response::new(McpBody::full(page)))
            })
        }
    }
    within(async {
        let hook = LoginPage::default();
        let env = start(AuthServerConfig::default().consent(hook.clone())).await;
        let id = public_client(&env).await;
        let (v, c) = pkce();
        let params = [
            ("response_type", "code"),
            ("client_id", id.as_str()),
            ("redirect_uri", REDIRECT),
            ("code_challenge", c.as_str()),
            ("code_challenge_method", "S256"),
            ("state", "s1"),
            ("scope", "mcp files"),
            ("resource", env.mcp.as_str()),
        ];
        let a = authorize(&env, &params).await;
        assert_eq!(a.status, StatusCode::OK);
        assert!(a.body.contains("login for"));
        // The browser that started it: its binding cookie.
        let cookie = a.headers["set-cookie"].to_str().unwrap();
        let mut browser = http::HeaderMap::new();
        browser.insert("cookie", cookie.split(';').next().unwrap().parse().unwrap());
        assert_eq!(
            a.headers["x-frame-options"], "DENY",
            "clickjacking protection"
        );
        assert_eq!(
            a.headers["content-security-policy"],
            "frame-ancestors 'none'"
        );
        let rid = hook.0.lock().unwrap()[0].clone();
        let r = env
            .auth
            .approve(&rid, &browser, "alice", vec!["mcp".into(), "admin".into()])
            .await;
        let loc = url::Url::parse(r.headers()["location"].to_str().unwrap()).unwrap();
        assert_eq!(param(&loc, "state").as_deref(), Some("s1"));
        assert_eq!(param(&loc, "iss").as_deref(), Some(env.base.as_str()));
        let code = param(&loc, "code").unwrap();
        let t = exchange(&env, &id, &code, &v).await.json();
        assert_eq!(t["scope"], "mcp", "cut to requested ∩ approved");
        let (s, body) = call_with(&env, t["access_token"].as_str().unwrap(), "whoami").await;
        assert_eq!(s, StatusCode::OK);
        assert!(body.contains("alice"), "{body}");
        let again = env
            .auth
            .approve(&rid, &browser, "alice", vec!["mcp".into()])
            .await;
        assert_eq!(again.status(), StatusCode::BAD_REQUEST);
        let a = authorize(&env, &params).await;
        let cookie = a.headers["set-cookie"].to_str().unwrap();
        let mut browser = http::HeaderMap::new();
        browser.insert("cookie", cookie.split(';').next().unwrap().parse().unwrap());
        let rid2 = hook.0.lock().unwrap()[1].clone();
        let r = env.auth.deny(&rid2, &browser).await;
        let loc = url::Url::parse(r.headers()["location"].to_str().unwrap()).unwrap();
        assert_eq!(param(&loc, "error").as_deref(), Some("access_denied"));
    })
    .await;
}

/// Limits: a token / registration body over `max_form_size` (default 64 KiB; 512 bytes
/// here) is 413; more than 16 redirect URIs are refused; pending login-page requests are
/// bounded by `max_pending` (1 here) and expire after `pending_ttl`.
#[tokio::test]
async fn form_size_redirect_count_and_pending_limits() {
    use ferromcp_auth_server::{
        AuthorizationRequest, Consent, ConsentHook, DEFAULT_MAX_FORM_SIZE, DEFAULT_MAX_PENDING,
        DEFAULT_PENDING_TTL,
    };
    use ferromcp_http_server::McpBody;
    struct Page;
    impl ConsentHook for Page {
        fn consent<'a>(
            &'a self,
            _r: &'a AuthorizationRequest,
            _h: &'a http::request::Parts,
        ) -> BoxFuture<'a, Consent> {
            Box::pin(async { Consent::Respond(http::Response::new(McpBody::full("login"))) })
        }
    }
    within(async {
        assert_eq!(DEFAULT_MAX_FORM_SIZE, 64 * 1024);
        assert_eq!(DEFAULT_MAX_PENDING, 1000);
        assert_eq!(DEFAULT_PENDING_TTL, Duration::from_secs(600));
        let env = start(
            AuthServerConfig::default()
                .max_form_size(512)
                .max_pending(1)
                .pending_ttl(Duration::from_millis(300))
                .consent(Page),
        )
        .await;
        let big = "x".repeat(600);
        let a = post_form(
            &format!("{}/token", env.base),
            &[("grant_type", "client_credentials"), ("pad", &big)],
            None,
        )
        .await;
        assert_eq!(a.status, StatusCode::PAYLOAD_TOO_LARGE);
        let a = register(
            &env,
            json!({"redirect_uris": [REDIRECT], "client_name": big}),
        )
        .await;
        assert_eq!(a.status, StatusCode::PAYLOAD_TOO_LARGE);
        // 17 short URIs: over the count limit, under the size limit.
        let uris: Vec<String> = (0..17).map(|i| format!("https://a.io/{i}")).collect();
        let a = register(
            &env,
            json!({"redirect_uris": uris, "token_endpoint_auth_method": "none"}),
        )
        .await;
        assert_eq!(a.json()["error"], "invalid_redirect_uri");

        let id = operator_client(&env).await;
        let (_, c) = pkce();
        let params = [
            ("response_type", "code"),
            ("client_id", id.as_str()),
            ("redirect_uri", REDIRECT),
            ("code_challenge", c.as_str()),
            ("code_challenge_method", "S256"),
            ("resource", env.mcp.as_str()),
        ];
        assert_eq!(authorize(&env, &params).await.status, StatusCode::OK);
        let a = authorize(&env, &params).await;
        let loc = a.location().expect("a redirect with an error");
        assert_eq!(
            param(&loc, "error").as_deref(),
            Some("temporarily_unavailable")
        );
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert_eq!(
            authorize(&env, &params).await.status,
            StatusCode::OK,
            "expired ones make room"
        );
    })
    .await;
}
