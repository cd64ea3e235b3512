//! OAuth in the browser: when a Streamable HTTP server asks for authorization, the client's
//! flow (discovery, registration, PKCE) hands the authorization URL to [`BrowserAuth`],
//! which shows it in the page; the user signs in in a new tab, and the authorization server
//! redirects that tab to the inspector's `/oauth/callback`, which hands the code back to the
//! waiting flow. The callback carries no inspector token (the authorization server cannot
//! know it): it is Host-checked like every route, and it is accepted only for a flow that
//! waits under the same unguessable `state`, once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use ferromcp_client::oauth::{AuthorizationHandler, AuthorizationResponse, OAuthError};
use serde_json::json;
use tokio::sync::oneshot;

use super::events::EventLog;

/// The path the authorization server redirects to.
pub(crate) const CALLBACK_PATH: &str = "/oauth/callback";

/// Flows waiting for their callback, by `state`.
#[derive(Debug)]
pub(crate) struct Waits {
    map: Mutex<HashMap<String, oneshot::Sender<String>>>,
    max: usize,
}

impl Waits {
    /// At most `max` flows wait at once.
    pub(crate) fn new(max: usize) -> Arc<Self> {
        Arc::new(Self {
            map: Mutex::default(),
            max,
        })
    }

    /// Hands the callback's query to the flow waiting under its `state`; false when none
    /// does.
    pub(crate) fn deliver(&self, query: &str) -> bool {
        let Some(state) = super::security::query_param(query, "state") else {
            return false;
        };
        let waiting = self
            .map
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(state);
        waiting.is_some_and(|tx| tx.send(query.to_owned()).is_ok())
    }
}

/// The page's sign-in step for one server.
pub(crate) struct BrowserAuth {
    pub(crate) waits: Arc<Waits>,
    pub(crate) log: Arc<EventLog>,
    pub(crate) server: u64,
    pub(crate) timeout: Duration,
    /// The redirect URI (the inspector's callback), to rebuild the redirect URL.
    pub(crate) redirect_uri: String,
}

type BoxFuture<'a, T> = std::pin::Pin<Box<dyn Future<Output = T> + Send + 'a>>;

impl AuthorizationHandler for BrowserAuth {
    fn authorize<'a>(
        &'a self,
        url: &'a str,
    ) -> BoxFuture<'a, Result<AuthorizationResponse, OAuthError>> {
        Box::pin(async move {
            let query = url.split_once('?').map_or("", |(_, q)| q);
            let state = super::security::query_param(query, "state")
                .filter(|s| !s.is_empty())
                .ok_or_else(|| OAuthError::Authorization("no state in the URL".into()))?
                .to_owned();
            let (tx, rx) = oneshot::channel();
            {
                let mut map = self
                    .waits
                    .map
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                if map.len() >= self.waits.max {
                    return Err(OAuthError::Authorization(
                        "too many sign-ins wait in the inspector".into(),
                    ));
                }
                map.insert(state.clone(), tx);
            }
            self.log
                .push("oauth", json!({ "server": self.server, "url": url }));
            let outcome = tokio::time::timeout(self.timeout, rx).await;
            self.waits
                .map
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&state);
            self.log
                .push("oauth-done", json!({ "server": self.server }));
            match outcome {
                Ok(Ok(query)) => {
                    AuthorizationResponse::from_redirect(&format!("{}?{query}", self.redirect_uri))
                }
                Ok(Err(_)) => Err(OAuthError::Authorization("the inspector is closing".into())),
                Err(_) => Err(OAuthError::Authorization(
                    "the sign-in did not finish in time".into(),
                )),
            }
        })
    }
}
