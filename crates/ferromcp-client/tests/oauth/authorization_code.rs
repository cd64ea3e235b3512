//! The authorization-code flow and discovery: PKCE S256, `resource` and scope, `iss` (RFC 9207),
//! redirect URIs, the exchange's limits, the protected-resource metadata's `resource` and origin,
//! and the order of client registration methods.

use std::time::Duration;

use crate::support::{LIMIT, Mock, config, hits, start, within};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ferromcp_client::oauth::{
    self, ClientCredentials, OAuthConfig, OAuthError, RedirectReadingHandler,
};
use http::Method;
use sha2::{Digest, Sha256};
use tokio::net::TcpListener;

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
