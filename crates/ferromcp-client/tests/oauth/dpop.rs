//! DPoP (RFC 9449): bound tokens and proofs, nonces at both servers, bounded nonce retries, proofs
//! only when the server advertises them and the client wants them.

use std::sync::Arc;

use crate::support::{Hit, Mock, RsNonce, claims, config, dpop_key, hits, start, within};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ferromcp_client::oauth::{self, OAuthProvider};
use ferromcp_client::transport::http::{AuthProvider, MAX_AUTH_RETRIES};
use ferromcp_client::{Client, HttpTransport, Lifecycle};
use http::{Method, StatusCode};
use sha2::{Digest, Sha256};

/// RFC 9449 §5, §7.1, §8, §9 end to end through the HTTP transport: a proof on the token
/// request (`htm` POST, `htu` the token endpoint) retried with the authorization server's
/// nonce; then every MCP request carries `Authorization: DPoP` and a fresh proof (`htu`,
/// `ath` of the token, same key, distinct `jti`), and the resource server's
/// `use_dpop_nonce` is retried with its nonce.
#[tokio::test]
async fn dpop_bound_tokens_with_nonces_at_both_servers() {
    within(async {
        let (addr, seen) = start(Mock {
            dpop: true,
            as_nonce: true,
            rs_nonce: RsNonce::Once,
            ..Mock::default()
        })
        .await;
        let url = format!("http://{addr}/mcp");
        let provider = Arc::new(OAuthProvider::new(&url, config()).unwrap());
        let transport = HttpTransport::new(&url).unwrap().auth(provider.clone());
        let client = Client::builder()
            .lifecycle(Lifecycle::Handshake)
            .connect(transport)
            .await
            .unwrap();
        client.list_tools(None).await.unwrap();
        client.shutdown().await;
        assert!(provider.tokens().unwrap().is_dpop());

        let token_reqs = hits(&seen, &Method::POST, "/token");
        assert_eq!(token_reqs.len(), 2, "one use_dpop_nonce retry");
        let first = token_reqs[0].header("dpop").unwrap();
        let second = token_reqs[1].header("dpop").unwrap();
        let key = dpop_key(first);
        assert_eq!(claims(first, 1)["htm"], "POST");
        assert_eq!(claims(first, 1)["htu"], format!("http://{addr}/token"));
        assert!(claims(first, 1).get("nonce").is_none());
        assert_eq!(claims(second, 1)["nonce"], "as-n");
        assert!(claims(second, 1).get("ath").is_none());

        let mcp: Vec<Hit> = hits(&seen, &Method::POST, "/mcp")
            .into_iter()
            .filter(|h| h.headers.contains_key("authorization"))
            .collect();
        assert!(
            mcp.len() >= 3,
            "initialize (twice: nonce), initialized, tools/list"
        );
        let ath = URL_SAFE_NO_PAD.encode(Sha256::digest(b"tok"));
        let mut jtis = Vec::new();
        for h in &mcp {
            assert_eq!(h.header("authorization"), Some("DPoP tok"));
            let proof = h.header("dpop").unwrap();
            assert_eq!(dpop_key(proof), key, "one key per provider");
            let c = claims(proof, 1);
            assert_eq!(c["htm"], "POST");
            assert_eq!(c["htu"], url);
            assert_eq!(c["ath"], ath.as_str());
            jtis.push(c["jti"].as_str().unwrap().to_owned());
        }
        assert!(
            claims(mcp[0].header("dpop").unwrap(), 1)
                .get("nonce")
                .is_none()
        );
        for h in &mcp[1..] {
            assert_eq!(claims(h.header("dpop").unwrap(), 1)["nonce"], "rs-n");
        }
        let n = jtis.len();
        jtis.sort();
        jtis.dedup();
        assert_eq!(jtis.len(), n, "a fresh jti per request");
    })
    .await;
}

/// RFC 9449 §9 retry bound: a resource server that demands a new nonce on every request
/// gets at most [`MAX_AUTH_RETRIES`] challenges answered per request, then the 401 surfaces.
#[tokio::test]
async fn dpop_nonce_retries_are_bounded() {
    within(async {
        let (addr, seen) = start(Mock {
            dpop: true,
            rs_nonce: RsNonce::Always,
            ..Mock::default()
        })
        .await;
        let url = format!("http://{addr}/mcp");
        let provider = Arc::new(OAuthProvider::new(&url, config()).unwrap());
        let transport = HttpTransport::new(&url).unwrap().auth(provider);
        let err = Client::builder()
            .lifecycle(Lifecycle::Handshake)
            .connect(transport)
            .await
            .unwrap_err();
        assert!(err.to_string().contains("401"), "{err}");
        let posts = hits(&seen, &Method::POST, "/mcp").len();
        assert_eq!(posts, 1 + MAX_AUTH_RETRIES as usize);
    })
    .await;
}

/// RFC 9449 §8 retry bound at the authorization server: one retry with its nonce; a server
/// that wants yet another nonce gets an error, not a loop.
#[tokio::test]
async fn dpop_token_request_nonce_retry_is_bounded() {
    within(async {
        let (addr, seen) = start(Mock {
            dpop: true,
            as_nonce_always: true,
            ..Mock::default()
        })
        .await;
        let provider = OAuthProvider::new(&format!("http://{addr}/mcp"), config()).unwrap();
        assert!(!provider.on_challenge(StatusCode::UNAUTHORIZED, None).await);
        let token_reqs = hits(&seen, &Method::POST, "/token");
        assert_eq!(token_reqs.len(), 2);
        assert_eq!(
            claims(token_reqs[1].header("dpop").unwrap(), 1)["nonce"],
            "as-0"
        );
        assert!(provider.tokens().is_none());
    })
    .await;
}

/// RFC 9449 §5.1: DPoP is used only when the authorization server advertises ES256 proofs,
/// not when configured off, and never by `authorize` (which cannot hand out the key).
#[tokio::test]
async fn dpop_only_when_advertised_and_wanted() {
    within(async {
        let (addr, seen) = start(Mock::default()).await;
        let provider = OAuthProvider::new(&format!("http://{addr}/mcp"), config()).unwrap();
        assert!(provider.on_challenge(StatusCode::UNAUTHORIZED, None).await);
        assert!(
            hits(&seen, &Method::POST, "/token")[0]
                .header("dpop")
                .is_none()
        );
        assert_eq!(provider.authorization().unwrap(), "Bearer tok");

        let dpop = Mock {
            dpop: true,
            ..Mock::default()
        };
        let (addr, seen) = start(dpop.clone()).await;
        let url = format!("http://{addr}/mcp");
        let provider = OAuthProvider::new(&url, config().with_dpop(false)).unwrap();
        assert!(provider.on_challenge(StatusCode::UNAUTHORIZED, None).await);
        assert!(
            hits(&seen, &Method::POST, "/token")[0]
                .header("dpop")
                .is_none()
        );
        assert!(!provider.tokens().unwrap().is_dpop());

        let tokens = oauth::authorize(&url, &config()).await.unwrap().unwrap();
        assert!(
            hits(&seen, &Method::POST, "/token")[1]
                .header("dpop")
                .is_none()
        );
        assert!(!tokens.is_dpop());

        // The same server with DPoP wanted: a proof, a DPoP-bound token.
        let provider = OAuthProvider::new(&url, config()).unwrap();
        assert!(provider.on_challenge(StatusCode::UNAUTHORIZED, None).await);
        assert!(
            hits(&seen, &Method::POST, "/token")[2]
                .header("dpop")
                .is_some()
        );
        assert!(provider.tokens().unwrap().is_dpop());
        assert_eq!(provider.authorization().unwrap(), "DPoP tok");
    })
    .await;
}
