//! Client authentication (`client_secret_basic`, `client_secret_post`, `private_key_jwt`) and the
//! client-credentials grant, directly and through ferromcp's client.

use crate::support::{
    REDIRECT, call_with, oauth_client, post_form, register, start, text_of, within,
};
use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use ferromcp_auth_server::{AuthServerConfig, ClientRecord};
use ferromcp_client::oauth::{ClientCredentials, OAuthConfig};
use http::StatusCode;
use serde_json::{Value, json};

/// `client_secret_basic` and `client_secret_post` (RFC 6749 §2.3.1) with the
/// client-credentials grant, for clients the operator registered (AS15: registration asking
/// for `client_credentials` is refused); a wrong secret is 401 `invalid_client` with a
/// Basic challenge; a client uses only its registered method; a public client gets no
/// client-credentials token.
#[tokio::test]
async fn client_secret_basic_and_post_with_client_credentials() {
    within(async {
        let env = start(AuthServerConfig::default()).await;
        let token_url = format!("{}/token", env.base);
        for method in ["client_secret_basic", "client_secret_post", "none"] {
            let reg = register(
                &env,
                json!({"grant_types": ["client_credentials"],
                "token_endpoint_auth_method": method, "scope": "mcp files"}),
            )
            .await;
            assert_eq!(reg.status, StatusCode::BAD_REQUEST, "{}", reg.body);
            assert_eq!(reg.json()["error"], "invalid_client_metadata");
        }
        for method in ["client_secret_basic", "client_secret_post"] {
            let (id, secret) = (format!("svc-{method}"), "a-long-operator-secret");
            env.auth
                .register_client(
                    ClientRecord::confidential(&id, secret, vec![])
                        .auth_method(method)
                        .grant_types(["client_credentials"])
                        .scope(["mcp", "files"]),
                )
                .await
                .unwrap();
            let id = id.as_str();
            let ok = if method == "client_secret_basic" {
                post_form(
                    &token_url,
                    &[
                        ("grant_type", "client_credentials"),
                        ("scope", "mcp"),
                        ("resource", &env.mcp),
                    ],
                    Some((id, secret)),
                )
                .await
            } else {
                post_form(
                    &token_url,
                    &[
                        ("grant_type", "client_credentials"),
                        ("scope", "mcp"),
                        ("resource", &env.mcp),
                        ("client_id", id),
                        ("client_secret", secret),
                    ],
                    None,
                )
                .await
            };
            assert_eq!(ok.status, StatusCode::OK, "{method}: {}", ok.body);
            assert!(ok.json().get("refresh_token").is_none());
            let at = ok.json()["access_token"].as_str().unwrap().to_owned();
            assert_eq!(call_with(&env, &at, "whoami").await.0, StatusCode::OK);
            // The other method, or a wrong secret, is refused.
            let wrong = if method == "client_secret_basic" {
                post_form(
                    &token_url,
                    &[
                        ("grant_type", "client_credentials"),
                        ("client_id", id),
                        ("client_secret", secret),
                    ],
                    None,
                )
                .await
            } else {
                post_form(
                    &token_url,
                    &[("grant_type", "client_credentials")],
                    Some((id, secret)),
                )
                .await
            };
            assert_eq!(wrong.status, StatusCode::UNAUTHORIZED, "{method}");
            let bad = post_form(
                &token_url,
                &[("grant_type", "client_credentials")],
                Some((id, "nope")),
            )
            .await;
            assert_eq!(bad.status, StatusCode::UNAUTHORIZED);
            assert_eq!(bad.json()["error"], "invalid_client");
            assert!(
                bad.headers
                    .get("www-authenticate")
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .starts_with("Basic")
            );
            // Scope beyond the registered ones.
            let a = post_form(
                &token_url,
                &[("grant_type", "client_credentials"), ("scope", "admin")],
                Some((id, secret)),
            )
            .await;
            if method == "client_secret_basic" {
                assert_eq!(a.json()["error"], "invalid_scope");
            }
        }
        // An operator's public client gets no client-credentials token either.
        env.auth
            .register_client(
                ClientRecord::public("svc-public", vec![]).grant_types(["client_credentials"]),
            )
            .await
            .unwrap();
        let a = post_form(
            &token_url,
            &[
                ("grant_type", "client_credentials"),
                ("client_id", "svc-public"),
            ],
            None,
        )
        .await;
        assert_eq!(a.json()["error"], "unauthorized_client");
        // Two methods at once are refused.
        let (id, secret) = ("svc-client_secret_post", "a-long-operator-secret");
        let a = post_form(
            &token_url,
            &[
                ("grant_type", "client_credentials"),
                ("client_id", id),
                ("client_secret", secret),
            ],
            Some((id, secret)),
        )
        .await;
        assert_eq!(a.json()["error"], "invalid_request");
    })
    .await;
}

/// A P-256 key pair for `private_key_jwt`: (JWK with kid, encoding key).
fn client_key(kid: &str) -> (Value, jsonwebtoken::EncodingKey) {
    use p256::pkcs8::EncodePrivateKey;
    let sk = loop {
        let mut b = [0u8; 32];
        getrandom::fill(&mut b).unwrap();
        if let Ok(k) = p256::ecdsa::SigningKey::from_bytes(&b.into()) {
            break k;
        }
    };
    let pt = sk.verifying_key().to_encoded_point(false);
    let jwk = json!({"kty": "EC", "crv": "P-256", "kid": kid, "alg": "ES256", "use": "sig",
        "x": URL_SAFE_NO_PAD.encode(pt.x().unwrap()), "y": URL_SAFE_NO_PAD.encode(pt.y().unwrap())});
    let der = sk.to_pkcs8_der().unwrap();
    (jwk, jsonwebtoken::EncodingKey::from_ec_der(der.as_bytes()))
}

fn assertion(
    key: &jsonwebtoken::EncodingKey,
    kid: &str,
    id: &str,
    aud: &str,
    jti: &str,
    life: u64,
) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let mut h = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256);
    h.kid = Some(kid.to_owned());
    ferromcp_jwt::install();
    jsonwebtoken::encode(
        &h,
        &json!({"iss": id, "sub": id, "aud": aud, "jti": jti,
        "iat": now, "exp": now + life}),
        key,
    )
    .unwrap()
}

/// `private_key_jwt` (RFC 7523 §2.2): a client registered with `jwks` authenticates with a
/// signed assertion; a replayed assertion, one for another audience, one signed by another
/// key, or one living too long is refused.
#[tokio::test]
async fn private_key_jwt_client_authentication() {
    within(async {
        let env = start(AuthServerConfig::default()).await;
        let (jwk, key) = client_key("k1");
        // Registration of a private_key_jwt client: no secret issued.
        let reg = register(
            &env,
            json!({"redirect_uris": [REDIRECT],
            "token_endpoint_auth_method": "private_key_jwt", "jwks": {"keys": [jwk.clone()]}}),
        )
        .await;
        assert_eq!(reg.status, StatusCode::CREATED, "{}", reg.body);
        assert!(reg.json().get("client_secret").is_none());
        // The client-credentials grant needs an operator-registered client (AS15).
        let id = "svc-jwt".to_owned();
        env.auth
            .register_client(
                ClientRecord::public(&id, vec![])
                    .auth_method("private_key_jwt")
                    .jwks(json!({"keys": [jwk]}))
                    .grant_types(["client_credentials"]),
            )
            .await
            .unwrap();
        let token_url = env.auth.token_endpoint();
        let post = |a: String| {
            let token_url = token_url.clone();
            let resource = env.mcp.clone();
            async move {
                post_form(
                    &token_url,
                    &[
                        ("grant_type", "client_credentials"),
                        (
                            "client_assertion_type",
                            "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
                        ),
                        ("client_assertion", &a),
                        ("resource", &resource),
                    ],
                    None,
                )
                .await
            }
        };
        let a1 = assertion(&key, "k1", &id, &token_url, "j1", 60);
        let ok = post(a1.clone()).await;
        assert_eq!(ok.status, StatusCode::OK, "{}", ok.body);
        let at = ok.json()["access_token"].as_str().unwrap().to_owned();
        assert_eq!(call_with(&env, &at, "whoami").await.0, StatusCode::OK);
        assert_eq!(post(a1).await.json()["error"], "invalid_client", "replay");
        let issuer_aud = assertion(&key, "k1", &id, &env.base, "j2", 60);
        assert_eq!(
            post(issuer_aud).await.status,
            StatusCode::OK,
            "the issuer is an audience too"
        );
        let wrong_aud = assertion(&key, "k1", &id, "https://elsewhere.example/token", "j3", 60);
        assert_eq!(post(wrong_aud).await.json()["error"], "invalid_client");
        let (_, other_key) = client_key("k1");
        let forged = assertion(&other_key, "k1", &id, &token_url, "j4", 60);
        assert_eq!(post(forged).await.json()["error"], "invalid_client");
        let long = assertion(&key, "k1", &id, &token_url, "j5", 3600);
        assert_eq!(post(long).await.json()["error"], "invalid_client");
        let a = register(
            &env,
            json!({"redirect_uris": [REDIRECT],
            "token_endpoint_auth_method": "private_key_jwt"}),
        )
        .await;
        assert_eq!(
            a.json()["error"],
            "invalid_client_metadata",
            "jwks required"
        );
    })
    .await;
}

/// A P-256 key as PKCS#8 PEM (for ferromcp's `ClientKey::from_pem`) and its JWK.
fn client_key_pem(kid: &str) -> (Value, String) {
    use p256::pkcs8::EncodePrivateKey;
    let sk = loop {
        let mut b = [0u8; 32];
        getrandom::fill(&mut b).unwrap();
        if let Ok(k) = p256::ecdsa::SigningKey::from_bytes(&b.into()) {
            break k;
        }
    };
    let pt = sk.verifying_key().to_encoded_point(false);
    let jwk = json!({"kty": "EC", "crv": "P-256", "kid": kid, "alg": "ES256", "use": "sig",
        "x": URL_SAFE_NO_PAD.encode(pt.x().unwrap()), "y": URL_SAFE_NO_PAD.encode(pt.y().unwrap())});
    let der = sk.to_pkcs8_der().unwrap();
    let b64 = STANDARD.encode(der.as_bytes());
    let lines: Vec<&str> = b64
        .as_bytes()
        .chunks(64)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect();
    let pem = format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
        lines.join("\n")
    );
    (jwk, pem)
}

/// The client-credentials grant (OAuth 2.1 §4.2) through ferromcp's client, for clients
/// the operator registered (in the configuration) with a secret and with `private_key_jwt`
/// (RFC 7523): the tools are reached as the client itself.
#[tokio::test]
async fn ferromcp_client_credentials_with_secret_and_private_key_jwt() {
    use ferromcp_client::oauth::{ClientKey, Grant, SigningAlgorithm};
    within(Box::pin(async {
        let (jwk, pem) = client_key_pem("ck1");
        let env = start(
            AuthServerConfig::default()
                .client(
                    ClientRecord::confidential("svc-secret", "operator-secret-1", vec![])
                        .grant_types(["client_credentials"])
                        .scope(["mcp"]),
                )
                .client(
                    ClientRecord::public("svc-key", vec![])
                        .auth_method("private_key_jwt")
                        .jwks(json!({"keys": [jwk]}))
                        .grant_types(["client_credentials"]),
                ),
        )
        .await;
        let id = "svc-secret";
        let cfg = OAuthConfig::with_grant(Grant::ClientCredentials)
            .with_credentials(ClientCredentials::new(id).with_secret("operator-secret-1"));
        let client = oauth_client(&env, cfg).await;
        let who = text_of(&client.call_tool("whoami", json!({})).await.unwrap());
        assert!(who.starts_with(&format!("{id} via {id}")), "{who}");
        client.shutdown().await;

        let id = "svc-key";
        let key = ClientKey::from_pem(&pem, SigningAlgorithm::Es256)
            .unwrap()
            .with_key_id("ck1");
        let cfg = OAuthConfig::with_grant(Grant::ClientCredentials)
            .with_credentials(ClientCredentials::new(id).with_private_key(key));
        let client = oauth_client(&env, cfg).await;
        let who = text_of(&client.call_tool("whoami", json!({})).await.unwrap());
        assert!(who.starts_with(&format!("{id} via {id}")), "{who}");
        client.shutdown().await;
    }))
    .await;
}
