//! The authorization endpoint's rules: `state` and `iss` on the redirect, PKCE S256 required, no
//! implicit or password grant, redirect URIs, codes used once, expiring and bound to their client
//! and resource.

use std::time::Duration;

use crate::support::{
    OTHER_RESOURCE, REDIRECT, authorize, call_with, code_for, exchange, operator_client, param,
    pkce, post_form, public_client, register, start, within,
};
use ferromcp_auth_server::AuthServerConfig;
use http::StatusCode;
use serde_json::json;

/// RFC 9207 and OAuth 2.1 §4.1.2: the redirect carries `code`, the `state` sent and `iss`.
#[tokio::test]
async fn authorize_redirect_carries_state_and_iss() {
    within(async {
        let env = start(AuthServerConfig::default()).await;
        let id = public_client(&env).await;
        let (_, c) = pkce();
        let a = authorize(
            &env,
            &[
                ("response_type", "code"),
                ("client_id", &id),
                ("redirect_uri", REDIRECT),
                ("code_challenge", &c),
                ("code_challenge_method", "S256"),
                ("state", "xyz 42"),
                ("resource", &env.mcp),
            ],
        )
        .await;
        let loc = a.location().unwrap();
        assert!(loc.as_str().starts_with(REDIRECT));
        assert_eq!(param(&loc, "state").as_deref(), Some("xyz 42"));
        assert_eq!(param(&loc, "iss").as_deref(), Some(env.base.as_str()));
        assert!(param(&loc, "code").is_some());

        // Without redirect_uri (one registered): the redirect goes to it, and the token
        // request need not repeat it (OAuth 2.1 §4.1.3).
        let (v, c) = pkce();
        let a = authorize(
            &env,
            &[
                ("response_type", "code"),
                ("client_id", &id),
                ("code_challenge", &c),
                ("code_challenge_method", "S256"),
                ("resource", &env.mcp),
            ],
        )
        .await;
        let loc = a.location().unwrap();
        assert!(loc.as_str().starts_with(REDIRECT), "{loc}");
        let code = param(&loc, "code").unwrap();
        let t = post_form(
            &format!("{}/token", env.base),
            &[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("code_verifier", &v),
                ("client_id", &id),
            ],
            None,
        )
        .await;
        assert_eq!(t.status, StatusCode::OK, "{}", t.body);
    })
    .await;
}

/// PKCE required (OAuth 2.1 §4.1.1): no challenge, or `plain`, is refused with a redirect
/// carrying `invalid_request` (and `iss`; an operator-registered client: a self-registered
/// one gets an error page, AS17); a wrong or missing verifier fails at /token.
#[tokio::test]
async fn pkce_s256_is_required() {
    within(async {
        let env = start(AuthServerConfig::default()).await;
        let id = operator_client(&env).await;
        let (_, c) = pkce();
        for extra in [
            vec![],
            vec![
                ("code_challenge", c.as_str()),
                ("code_challenge_method", "plain"),
            ],
            vec![("code_challenge", c.as_str())],
            vec![
                ("code_challenge", "short"),
                ("code_challenge_method", "S256"),
            ],
        ] {
            let mut p = vec![
                ("response_type", "code"),
                ("client_id", id.as_str()),
                ("redirect_uri", REDIRECT),
                ("state", "s"),
            ];
            p.extend(extra);
            let a = authorize(&env, &p).await;
            let loc = a.location().expect("an error redirect");
            assert_eq!(
                param(&loc, "error").as_deref(),
                Some("invalid_request"),
                "{loc}"
            );
            assert!(param(&loc, "code").is_none());
            assert_eq!(param(&loc, "iss").as_deref(), Some(env.base.as_str()));
        }
        let (code, _) = code_for(&env, &id, "mcp").await;
        let (wrong, _) = pkce();
        let a = exchange(&env, &id, &code, &wrong).await;
        assert_eq!(a.json()["error"], "invalid_grant");
        let (code, _) = code_for(&env, &id, "mcp").await;
        let a = post_form(
            &format!("{}/token", env.base),
            &[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", REDIRECT),
                ("client_id", &id),
            ],
            None,
        )
        .await;
        assert_eq!(a.json()["error"], "invalid_request");
    })
    .await;
}

/// No implicit or password grants: `response_type=token` is refused, `grant_type=password`
/// is unsupported, and registering either grant fails.
#[tokio::test]
async fn no_implicit_or_password_grants() {
    within(async {
        let env = start(AuthServerConfig::default()).await;
        let id = operator_client(&env).await;
        let (_, c) = pkce();
        let a = authorize(
            &env,
            &[
                ("response_type", "token"),
                ("client_id", &id),
                ("redirect_uri", REDIRECT),
                ("code_challenge", &c),
                ("code_challenge_method", "S256"),
            ],
        )
        .await;
        let loc = a.location().unwrap();
        assert_eq!(
            param(&loc, "error").as_deref(),
            Some("unsupported_response_type")
        );
        assert!(loc.fragment().is_none_or(|f| !f.contains("access_token")));
        let a = post_form(
            &format!("{}/token", env.base),
            &[
                ("grant_type", "password"),
                ("username", "u"),
                ("password", "p"),
                ("client_id", &id),
            ],
            None,
        )
        .await;
        assert_eq!(a.status, StatusCode::BAD_REQUEST);
        assert_eq!(a.json()["error"], "unsupported_grant_type");
        for g in ["implicit", "password"] {
            let a = register(
                &env,
                json!({"redirect_uris": [REDIRECT], "grant_types": [g],
                "token_endpoint_auth_method": "none"}),
            )
            .await;
            assert_eq!(a.status, StatusCode::BAD_REQUEST, "{g}");
            assert_eq!(a.json()["error"], "invalid_client_metadata");
        }
        let a = register(
            &env,
            json!({"redirect_uris": [REDIRECT], "response_types": ["token"],
            "token_endpoint_auth_method": "none"}),
        )
        .await;
        assert_eq!(a.json()["error"], "invalid_client_metadata");
    })
    .await;
}

/// Redirect URIs (MCP §Communication Security, OAuth 2.1 §2.3): only https or loopback http
/// may be registered; an authorization request with an unregistered (or merely similar)
/// redirect URI, or from an unknown client, gets a 400 page and no redirect.
#[tokio::test]
async fn redirect_uris_loopback_or_https_and_exact_match() {
    within(async {
        let env = start(AuthServerConfig::default()).await;
        for bad in [
            "http://evil.example/cb",
            "https://app.example/cb#f",
            "javascript:alert(1)",
            "not a url",
        ] {
            let a = register(
                &env,
                json!({"redirect_uris": [bad], "token_endpoint_auth_method": "none"}),
            )
            .await;
            assert_eq!(a.status, StatusCode::BAD_REQUEST, "{bad}");
            assert_eq!(a.json()["error"], "invalid_redirect_uri", "{bad}");
        }
        let ok = register(
            &env,
            json!({"redirect_uris": ["https://app.example/cb"],
            "token_endpoint_auth_method": "none"}),
        )
        .await;
        assert_eq!(ok.status, StatusCode::CREATED);
        let id = public_client(&env).await;
        let (_, c) = pkce();
        for r in [
            "http://127.0.0.1:9/callback/",
            "http://127.0.0.1:9/callback?x=1",
            "http://127.0.0.1:10/callback",
            "https://evil.example/cb",
        ] {
            let a = authorize(
                &env,
                &[
                    ("response_type", "code"),
                    ("client_id", &id),
                    ("redirect_uri", r),
                    ("code_challenge", &c),
                    ("code_challenge_method", "S256"),
                ],
            )
            .await;
            assert_eq!(a.status, StatusCode::BAD_REQUEST, "{r}");
            assert!(a.headers.get("location").is_none(), "{r}");
        }
        let a = authorize(
            &env,
            &[
                ("response_type", "code"),
                ("client_id", "nobody"),
                ("redirect_uri", REDIRECT),
                ("code_challenge", &c),
                ("code_challenge_method", "S256"),
            ],
        )
        .await;
        assert_eq!(a.status, StatusCode::BAD_REQUEST);
        assert!(a.headers.get("location").is_none());
        // The redirect_uri at /token must be the authorization request's.
        let (code, v) = code_for(&env, &id, "mcp").await;
        let a = post_form(
            &format!("{}/token", env.base),
            &[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", "http://127.0.0.1:9/other"),
                ("code_verifier", &v),
                ("client_id", &id),
            ],
            None,
        )
        .await;
        assert_eq!(a.json()["error"], "invalid_grant");
    })
    .await;
}

/// Single-use codes (OAuth 2.1 §4.1.3): a second redemption fails and revokes every token
/// issued from the code (access and refresh).
#[tokio::test]
async fn replayed_code_fails_and_revokes_its_tokens() {
    within(async {
        let env = start(AuthServerConfig::default()).await;
        let id = public_client(&env).await;
        let (code, v) = code_for(&env, &id, "mcp").await;
        let first = exchange(&env, &id, &code, &v).await.json();
        let at = first["access_token"].as_str().unwrap();
        assert_eq!(call_with(&env, at, "whoami").await.0, StatusCode::OK);
        let again = exchange(&env, &id, &code, &v).await;
        assert_eq!(again.status, StatusCode::BAD_REQUEST);
        assert_eq!(again.json()["error"], "invalid_grant");
        assert_eq!(
            call_with(&env, at, "whoami").await.0,
            StatusCode::UNAUTHORIZED
        );
        let a = post_form(
            &format!("{}/token", env.base),
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", first["refresh_token"].as_str().unwrap()),
                ("client_id", &id),
            ],
            None,
        )
        .await;
        assert_eq!(a.json()["error"], "invalid_grant");
    })
    .await;
}

/// Short-lived codes: a code redeemed after its lifetime (the setting, 1 s here; default
/// 60 s) is refused.
#[tokio::test]
async fn expired_code_is_refused() {
    within(async {
        assert_eq!(
            ferromcp_auth_server::DEFAULT_CODE_TTL,
            Duration::from_secs(60)
        );
        let env = start(AuthServerConfig::default().code_ttl(Duration::from_secs(1))).await;
        let id = public_client(&env).await;
        let (code, v) = code_for(&env, &id, "mcp").await;
        tokio::time::sleep(Duration::from_millis(2100)).await;
        let a = exchange(&env, &id, &code, &v).await;
        assert_eq!(a.json()["error"], "invalid_grant");
    })
    .await;
}

/// The code is bound to its client and resource (RFC 8707 §2.2): another client cannot
/// redeem it, nor can it be redeemed for another resource.
#[tokio::test]
async fn code_is_bound_to_client_and_resource() {
    within(async {
        let env = start(AuthServerConfig::default()).await;
        let id = operator_client(&env).await;
        let other = public_client(&env).await;
        let (code, v) = code_for(&env, &id, "mcp").await;
        let a = exchange(&env, &other, &code, &v).await;
        assert_eq!(a.json()["error"], "invalid_grant");
        let (code, v) = code_for(&env, &id, "mcp").await;
        let a = post_form(
            &format!("{}/token", env.base),
            &[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", REDIRECT),
                ("code_verifier", &v),
                ("client_id", &id),
                ("resource", OTHER_RESOURCE),
            ],
            None,
        )
        .await;
        assert_eq!(a.json()["error"], "invalid_target");
        let (_, c) = pkce();
        let a = authorize(
            &env,
            &[
                ("response_type", "code"),
                ("client_id", &id),
                ("redirect_uri", REDIRECT),
                ("code_challenge", &c),
                ("code_challenge_method", "S256"),
                ("resource", "https://unknown.example/mcp"),
            ],
        )
        .await;
        assert_eq!(
            param(&a.location().unwrap(), "error").as_deref(),
            Some("invalid_target")
        );
        let a = authorize(
            &env,
            &[
                ("response_type", "code"),
                ("client_id", &id),
                ("redirect_uri", REDIRECT),
                ("code_challenge", &c),
                ("code_challenge_method", "S256"),
                ("scope", "mcp root"),
            ],
        )
        .await;
        assert_eq!(
            param(&a.location().unwrap(), "error").as_deref(),
            Some("invalid_scope")
        );
    })
    .await;
}
