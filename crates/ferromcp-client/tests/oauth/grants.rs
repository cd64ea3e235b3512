//! Grants without a browser: client credentials (a secret, `private_key_jwt` with ES256 and RS256
//! keys, none at all), the JWT bearer grant, and the enterprise-managed token exchange.

use std::sync::Arc;

use crate::support::{Mock, claims, es256_key, hits, start, verify_es256, within};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use ferromcp_client::oauth::{
    self, ClientCredentials, ClientKey, EnterpriseGrant, Grant, OAuthConfig, OAuthError,
    OAuthProvider, SigningAlgorithm,
};
use ferromcp_client::transport::http::AuthProvider;
use ferromcp_client::{Client, HttpTransport, Lifecycle};
use http::{Method, StatusCode};
use serde_json::Value;

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
