//! The front clients' resource subscriptions, forwarded to the backend that owns each URI
//! (`resources/subscribe` in the handshake era, `subscriptions/listen`'s
//! `resourceSubscriptions` at 2026-07-28), so its update notifications come and are forwarded
//! under the front URI.

use std::sync::Arc;

use ferromcp_dispatch::{BoxFuture, HandlerError};
use ferromcp_server::middleware::{McpRequest, McpResult, Middleware, Next};
use ferromcp_types::mcp::methods;
use serde_json::Value;

use crate::mount::Mount;
use crate::naming::backend_uri;

/// The front's layer that forwards resource subscriptions.
pub(crate) struct ForwardSubscriptions {
    pub(crate) mounts: Mounts,
}

/// The mounts of a composed server, as mounts come and go.
pub(crate) type Mounts = Arc<std::sync::RwLock<Vec<Arc<Mount>>>>;

impl ForwardSubscriptions {
    /// The front URIs a request subscribes to.
    fn uris(request: &McpRequest) -> Vec<String> {
        // Only these two methods' params are read (reading parses them).
        let params = || request.params.as_ref();
        match request.method.as_str() {
            methods::RESOURCES_SUBSCRIBE => params()
                .and_then(|p| p.get("uri"))
                .and_then(Value::as_str)
                .map(|u| vec![u.to_owned()])
                .unwrap_or_default(),
            methods::SUBSCRIPTIONS_LISTEN => params()
                .and_then(|p| p.pointer("/notifications/resourceSubscriptions"))
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default(),
            _ => Vec::new(),
        }
    }
}

impl Middleware for ForwardSubscriptions {
    fn handle(&self, request: McpRequest, next: Next) -> BoxFuture<'static, McpResult> {
        let uris = Self::uris(&request);
        if uris.is_empty() {
            return next.run(request);
        }
        let mounts: Vec<Arc<Mount>> = self
            .mounts
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        Box::pin(async move {
            for uri in &uris {
                let owner = mounts
                    .iter()
                    .find_map(|m| backend_uri(m.name(), uri).map(|b| (m, b)));
                if let Some((mount, original)) = owner {
                    mount
                        .subscribe(original)
                        .await
                        .map_err(HandlerError::Protocol)?;
                }
            }
            next.run(request).await
        })
    }
}
