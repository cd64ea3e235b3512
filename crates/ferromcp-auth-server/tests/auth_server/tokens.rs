//! Tokens: the format any JWT library verifies, the audience, revocation, key rotation, and refresh
//! tokens (rotation, binding to their client).

use crate::support::{
    OTHER_RESOURCE, REDIRECT, authorize, call_with, get, param, pkce, post_form, public_client,
    start, tokens, within,
};
use ferromcp_auth_server::AuthServerConfig;
use ferromcp_http_server::auth::{JwtVerifier, TokenVerifier};
use http::StatusCode;
use serde_json::Value;

/// RFC 9068 / RFC 8707: the access token is a JWT any library verifies against `/jwks`,
/// with `aud` = the resource asked for; `JwtVerifier` (the resource-server side) accepts it.
#[tokio::test]
async fn access_tokens_verify_with_jwks_jsonwebtoken_and_jwt_verifier() {
    within(async {
        let env = start(AuthServerConfig::default()).await;
        let (id, t) = tokens(&env, "mcp files").await;
        let at = t["access_token"].as_str().unwrap();
        let jwks: Value = get(&format!("{}/jwks", env.base)).await.json();
        let jwk: jsonwebtoken::jwk::Jwk = serde_json::from_value(jwks["keys"][0].clone()).unwrap();
        let key = jsonwebtoken::DecodingKey::from_jwk(&jwk).unwrap();
        let mut v = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
        v.set_audience(&[&env.mcp]);
        v.set_issuer(&[&env.base]);
        let c = jsonwebtoken::decode::<Value>(at, &key, &v).unwrap().claims;
        assert_eq!(c["aud"], env.mcp);
        assert_eq!(c["client_id"], id);
        assert_eq!(c["scope"], "mcp files");
        assert_eq!(c["sub"], "local-user");
        assert!(c["exp"].as_u64().unwrap() > c["iat"].as_u64().unwrap());
        let header = jsonwebtoken::decode_header(at).unwrap();
        assert_eq!(header.typ.as_deref(), Some("at+jwt"));

        let verifier = JwtVerifier::builder(&env.base, format!("{}/jwks", env.base), &env.mcp)
            .build()
            .unwrap();
        let p = verifier.verify(at).await.unwrap();
        assert_eq!(p.subject, "local-user");
        assert!(p.has_scope("files"));
        // For another audience the same verifier refuses it.
        let other = JwtVerifier::builder(&env.base, format!("{}/jwks", env.base), OTHER_RESOURCE)
            .build()
            .unwrap();
        assert!(other.verify(at).await.is_err());
    })
    .await;
}

/// RFC 8707 / MCP §Token Audience Binding: a token issued for another resource is refused
/// by the MCP endpoint with 401 `invalid_token`.
#[tokio::test]
async fn token_for_another_resource_is_rejected_by_the_resource_server() {
    within(async {
        let env = start(AuthServerConfig::default()).await;
        let id = public_client(&env).await;
        let (v, c) = pkce();
        let a = authorize(
            &env,
            &[
                ("response_type", "code"),
                ("client_id", &id),
                ("redirect_uri", REDIRECT),
                ("code_challenge", &c),
                ("code_challenge_method", "S256"),
                ("scope", "mcp"),
                ("resource", OTHER_RESOURCE),
            ],
        )
        .await;
        let code = param(&a.location().unwrap(), "code").unwrap();
        let t = post_form(
            &format!("{}/token", env.base),
            &[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", REDIRECT),
                ("code_verifier", &v),
                ("client_id", &id),
            ],
            None,
        )
        .await
        .json();
        let at = t["access_token"].as_str().unwrap();
        let (status, _) = call_with(&env, at, "whoami").await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        // The same flow for this resource works.
        let (_, good) = tokens(&env, "mcp").await;
        let (status, body) =
            call_with(&env, good["access_token"].as_str().unwrap(), "whoami").await;
        assert_eq!(status, StatusCode::OK, "{body}");
    })
    .await;
}

/// RFC 7009: revoking the refresh token revokes the grant: the refresh token no longer
/// works and neither does the access token issued with it. Unknown tokens get 200.
#[tokio::test]
async fn revocation_revokes_refresh_and_access_tokens_of_the_grant() {
    within(async {
        let env = start(AuthServerConfig::default()).await;
        let (id, t) = tokens(&env, "mcp").await;
        let at = t["access_token"].as_str().unwrap();
        let rt = t["refresh_token"].as_str().unwrap();
        assert_eq!(call_with(&env, at, "whoami").await.0, StatusCode::OK);
        let revoke = format!("{}/revoke", env.base);
        let a = post_form(&revoke, &[("token", rt), ("client_id", &id)], None).await;
        assert_eq!(a.status, StatusCode::OK);
        assert_eq!(
            call_with(&env, at, "whoami").await.0,
            StatusCode::UNAUTHORIZED
        );
        let a = post_form(
            &format!("{}/token", env.base),
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", rt),
                ("client_id", &id),
            ],
            None,
        )
        .await;
        assert_eq!(a.json()["error"], "invalid_grant");
        let a = post_form(
            &revoke,
            &[("token", "no-such-token"), ("client_id", &id)],
            None,
        )
        .await;
        assert_eq!(a.status, StatusCode::OK);

        // Revoking an access token (by its owner) revokes its grant too; another client's
        // revocation does nothing.
        let (id2, t2) = tokens(&env, "mcp").await;
        let at2 = t2["access_token"].as_str().unwrap();
        post_form(&revoke, &[("token", at2), ("client_id", &id)], None).await;
        assert_eq!(call_with(&env, at2, "whoami").await.0, StatusCode::OK);
        post_form(&revoke, &[("token", at2), ("client_id", &id2)], None).await;
        assert_eq!(
            call_with(&env, at2, "whoami").await.0,
            StatusCode::UNAUTHORIZED
        );
    })
    .await;
}

/// Key rotation: after a rotation the JWKS holds the new and the previous key, tokens
/// signed before still verify, new ones are signed with the new key.
#[tokio::test]
async fn key_rotation_publishes_current_and_previous_keys() {
    within(async {
        let env = start(AuthServerConfig::default()).await;
        let (_, old) = tokens(&env, "mcp").await;
        env.auth.rotate_keys().unwrap();
        let jwks = get(&format!("{}/jwks", env.base)).await.json();
        assert_eq!(jwks["keys"].as_array().unwrap().len(), 2);
        let (_, new) = tokens(&env, "mcp").await;
        let kid = |t: &Value| {
            jsonwebtoken::decode_header(t["access_token"].as_str().unwrap())
                .unwrap()
                .kid
        };
        assert_ne!(kid(&old), kid(&new));
        assert_eq!(kid(&new).as_deref(), jwks["keys"][0]["kid"].as_str());
        for t in [&old, &new] {
            let (s, _) = call_with(&env, t["access_token"].as_str().unwrap(), "whoami").await;
            assert_eq!(s, StatusCode::OK);
        }
    })
    .await;
}

/// Refresh rotation (OAuth 2.1 §4.3.1) and client binding: each refresh token works once
/// (reuse revokes the grant); another client cannot use — nor burn — it; scope may narrow.
#[tokio::test]
async fn refresh_tokens_rotate_and_are_bound_to_their_client() {
    within(async {
        let env = start(AuthServerConfig::default()).await;
        let (id, t) = tokens(&env, "mcp files").await;
        let token_url = format!("{}/token", env.base);
        let rt1 = t["refresh_token"].as_str().unwrap();
        let thief = public_client(&env).await;
        let a = post_form(
            &token_url,
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", rt1),
                ("client_id", &thief),
            ],
            None,
        )
        .await;
        assert_eq!(a.json()["error"], "invalid_grant");
        let a = post_form(
            &token_url,
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", rt1),
                ("client_id", &id),
                ("scope", "mcp"),
            ],
            None,
        )
        .await;
        assert_eq!(
            a.status,
            StatusCode::OK,
            "the owner's token was not burned: {}",
            a.body
        );
        let t2 = a.json();
        assert_eq!(t2["scope"], "mcp");
        let rt2 = t2["refresh_token"].as_str().unwrap();
        assert_ne!(rt1, rt2);
        let a = post_form(
            &token_url,
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", rt2),
                ("client_id", &id),
                ("scope", "mcp admin"),
            ],
            None,
        )
        .await;
        assert_eq!(a.json()["error"], "invalid_scope", "no widening");
        // Reusing the rotated-out token revokes the grant: the newest refresh token and
        // access token stop working.
        let a = post_form(
            &token_url,
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", rt1),
                ("client_id", &id),
            ],
            None,
        )
        .await;
        assert_eq!(a.json()["error"], "invalid_grant");
        let a = post_form(
            &token_url,
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", rt2),
                ("client_id", &id),
            ],
            None,
        )
        .await;
        assert_eq!(a.json()["error"], "invalid_grant");
        let (s, _) = call_with(&env, t2["access_token"].as_str().unwrap(), "whoami").await;
        assert_eq!(s, StatusCode::UNAUTHORIZED);
    })
    .await;
}
