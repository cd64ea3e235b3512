//! The provider on the transport: step-up per new scope, refresh on 401 and ahead of expiry, the
//! token store, credentials kept on the server's origin, the token on every request path.

use std::sync::Arc;
use std::time::Duration;

use crate::support::{Mock, config, hits, start, within};
use ferromcp_client::oauth::{MemoryTokenStore, OAuthProvider, TokenStore, Tokens};
use ferromcp_client::transport::http::AuthProvider;
use ferromcp_client::{Client, HttpTransport, Lifecycle};
use http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};

/// 2025-11-25 "Scope Challenge Handling": step-up with the union of scopes, once per new
/// scope (a repeated challenge for granted scopes is not re-authorized).
#[tokio::test]
async fn provider_steps_up_once_per_new_scope() {
    within(async {
        let (addr, seen) = start(Mock::default()).await;
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
        assert!(
            !provider
                .on_challenge(StatusCode::FORBIDDEN, Some(&step_up))
                .await
        );
        let scopes: Vec<String> = hits(&seen, &Method::GET, "/authorize")
            .iter()
            .map(|h| h.q("scope").unwrap_or_default().to_owned())
            .collect();
        assert_eq!(scopes, ["mcp:read", "mcp:read mcp:write"]);
    })
    .await;
}

/// OAuth 2.1 §4.3 on a 401: the refresh grant (with `resource`) once, then the whole flow.
#[tokio::test]
async fn provider_refreshes_once_on_401_then_authorizes_again() {
    within(async {
        let (addr, seen) = start(Mock::default()).await;
        let provider = OAuthProvider::new(&format!("http://{addr}/mcp"), config()).unwrap();
        assert!(provider.on_challenge(StatusCode::UNAUTHORIZED, None).await);
        assert_eq!(provider.authorization().unwrap(), "Bearer tok");
        assert!(provider.on_challenge(StatusCode::UNAUTHORIZED, None).await);
        assert_eq!(provider.authorization().unwrap(), "Bearer tok2");
        let last = hits(&seen, &Method::POST, "/token").pop().unwrap();
        assert_eq!(last.f("grant_type"), Some("refresh_token"));
        assert!(last.f("resource").is_some());
        assert_eq!(hits(&seen, &Method::GET, "/authorize").len(), 1);
        assert!(provider.on_challenge(StatusCode::UNAUTHORIZED, None).await);
        assert_eq!(provider.authorization().unwrap(), "Bearer tok");
        assert_eq!(hits(&seen, &Method::GET, "/authorize").len(), 2);
    })
    .await;
}

/// A token store shared between providers (it outlives them).
#[derive(Clone, Default)]
struct SharedStore(Arc<MemoryTokenStore>);

impl TokenStore for SharedStore {
    fn load(&self, server: &str) -> Option<Tokens> {
        self.0.load(server)
    }
    fn save(&self, server: &str, tokens: &Tokens) {
        self.0.save(server, tokens);
    }
}

/// Refresh ahead of expiry (OAuth 2.1 §4.3; the MCP "Token Handling" guidance): a token
/// within the refresh margin is refreshed before the next request, not after a 401; the
/// store keeps the expiry, and a new provider starts from the stored token.
#[tokio::test]
async fn refreshes_ahead_of_expiry_and_persists_expiry() {
    within(async {
        let (addr, seen) = start(Mock {
            expires_in: 30,
            ..Mock::default()
        })
        .await;
        let url = format!("http://{addr}/mcp");
        let store = SharedStore::default();
        let cfg = || {
            config()
                .with_store(store.clone())
                .with_refresh_margin(Duration::from_secs(60))
        };
        let provider = OAuthProvider::new(&url, cfg()).unwrap();
        assert!(provider.on_challenge(StatusCode::UNAUTHORIZED, None).await);
        let stored = store.load(&url).unwrap();
        assert_eq!(stored.access_token, "tok");
        assert!(stored.expires_at.is_some(), "the expiry is persisted");
        // Within the margin: refreshed before the request.
        provider.prepare().await;
        assert_eq!(provider.authorization().unwrap(), "Bearer tok2");
        assert_eq!(
            hits(&seen, &Method::POST, "/token")
                .pop()
                .unwrap()
                .f("grant_type"),
            Some("refresh_token")
        );
        assert_eq!(store.load(&url).unwrap().access_token, "tok2");

        // Outside the margin: nothing happens.
        let before = hits(&seen, &Method::POST, "/token").len();
        let relaxed = OAuthProvider::new(&url, cfg().with_refresh_margin(Duration::ZERO)).unwrap();
        assert_eq!(
            relaxed.authorization().unwrap(),
            "Bearer tok2",
            "a new provider starts from the stored, unexpired token"
        );
        relaxed.prepare().await;
        assert_eq!(hits(&seen, &Method::POST, "/token").len(), before);
    })
    .await;
}

/// Credentials never cross origins: the provider puts nothing on a request to another
/// origin than the MCP server's.
#[tokio::test]
async fn credentials_stay_on_the_server_origin() {
    within(async {
        let (addr, _) = start(Mock::default()).await;
        let url = format!("http://{addr}/mcp");
        let provider = OAuthProvider::new(&url, config()).unwrap();
        assert!(provider.on_challenge(StatusCode::UNAUTHORIZED, None).await);
        let mut same = HeaderMap::new();
        provider.apply(&Method::POST, &url.parse::<Uri>().unwrap(), &mut same);
        assert_eq!(same.get("authorization").unwrap(), "Bearer tok");
        let mut other = HeaderMap::new();
        other.insert("authorization", HeaderValue::from_static("stale"));
        let elsewhere: Uri = "http://127.0.0.1:1/mcp".parse().unwrap();
        provider.apply(&Method::POST, &elsewhere, &mut other);
        assert!(other.get("authorization").is_none());
    })
    .await;
}

/// Every request path of the transport carries the token (2025-11-25 "Access Token
/// Usage": every HTTP request): the `initialize` request, the `notifications/initialized`
/// POST, the standalone GET stream, later requests and the session DELETE; and a 401 on a
/// notification POST reaches the provider (which refreshes) and the notification is
/// retried.
#[tokio::test]
async fn every_request_path_carries_the_token() {
    within(async {
        let (addr, seen) = start(Mock {
            notification_401: true,
            ..Mock::default()
        })
        .await;
        let url = format!("http://{addr}/mcp");
        let provider = Arc::new(OAuthProvider::new(&url, config()).unwrap());
        let transport = HttpTransport::new(&url).unwrap().auth(provider);
        let client = Client::builder()
            .lifecycle(Lifecycle::Handshake)
            .connect(transport)
            .await
            .unwrap();
        client.list_tools(None).await.unwrap();
        while hits(&seen, &Method::GET, "/mcp").is_empty() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        client.shutdown().await;
        let posts = hits(&seen, &Method::POST, "/mcp");
        assert_eq!(
            posts[0].header("authorization"),
            None,
            "the first, unauthorized"
        );
        let auth: Vec<&str> = posts[1..]
            .iter()
            .map(|h| h.header("authorization").unwrap())
            .collect();
        // initialize (tok), initialized (tok: refused), initialized again (tok2),
        // tools/list (tok2).
        assert_eq!(
            auth,
            ["Bearer tok", "Bearer tok", "Bearer tok2", "Bearer tok2"]
        );
        let get = &hits(&seen, &Method::GET, "/mcp")[0];
        assert!(
            get.header("authorization")
                .is_some_and(|v| v.starts_with("Bearer tok"))
        );
        let delete = &hits(&seen, &Method::DELETE, "/mcp")[0];
        assert_eq!(delete.header("authorization"), Some("Bearer tok2"));
    })
    .await;
}
