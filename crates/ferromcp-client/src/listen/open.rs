//! Opening a subscription: [`Client::listen`] in each era (the 2026-07-28 driver, or the
//! 2025-11-25 fallback over the session).

use ferromcp_types::Era;
use ferromcp_types::jsonrpc::ErrorObject;
use ferromcp_types::mcp::methods;
use tokio::sync::oneshot;

use super::driver::drive;
use super::listener::Listener;
use super::subscription::{AbortOnDrop, Subscription};
use super::{ListenOptions, SubscriptionFilter, lock};
use crate::client::Client;
use crate::error::ClientError;

impl Client {
    /// Opens a change subscription with default [`ListenOptions`]: `subscriptions/listen` at
    /// 2026-07-28, the session fallback at 2025-11-25 (see the [`listen`](crate::listen)
    /// module). Returns once the server acknowledged it.
    pub async fn listen(&self, filter: SubscriptionFilter) -> Result<Subscription, ClientError> {
        self.listen_with(filter, ListenOptions::default()).await
    }

    /// Opens a change subscription with options.
    pub async fn listen_with(
        &self,
        filter: SubscriptionFilter,
        opts: ListenOptions,
    ) -> Result<Subscription, ClientError> {
        let registry = self.inner.handlers.listeners.clone();
        if registry.is_ended() {
            return Err(ErrorObject::connection_closed().into());
        }
        match self.inner.era() {
            Era::Modern => self.listen_modern(filter, opts).await,
            _ if opts.handshake_fallback => self.listen_handshake(filter, opts).await,
            _ => Err(ClientError::not_available(
                methods::SUBSCRIPTIONS_LISTEN,
                "the connection runs MCP 2025-11-25, which has no such method \
                 (enable ListenOptions::handshake_fallback for resources/subscribe)",
            )),
        }
    }

    async fn listen_modern(
        &self,
        filter: SubscriptionFilter,
        opts: ListenOptions,
    ) -> Result<Subscription, ClientError> {
        let listener = Listener::new(opts.buffer, SubscriptionFilter::new());
        let (tx, rx) = oneshot::channel();
        let task = tokio::spawn(drive(
            self.clone(),
            listener.clone(),
            filter.clone(),
            opts,
            tx,
        ));
        let driver = AbortOnDrop(task.abort_handle());
        let mut sub = Subscription {
            client: self.clone(),
            listener,
            requested: filter,
            era: Era::Modern,
            driver: Some(driver),
            released: false,
        };
        match rx.await {
            Ok(Ok(_granted)) => Ok(sub),
            Ok(Err(e)) => {
                sub.release();
                Err(e)
            }
            Err(_) => {
                sub.release();
                Err(ErrorObject::connection_closed().into())
            }
        }
    }

    async fn listen_handshake(
        &self,
        filter: SubscriptionFilter,
        opts: ListenOptions,
    ) -> Result<Subscription, ClientError> {
        let caps = &self.session().capabilities;
        let listed = |asked: Option<bool>, flag: Option<bool>| {
            (asked == Some(true) && flag == Some(true)).then_some(true)
        };
        let mut granted = SubscriptionFilter::new();
        granted.tools_list_changed = listed(
            filter.tools_list_changed,
            caps.tools.as_ref().and_then(|c| c.list_changed),
        );
        granted.prompts_list_changed = listed(
            filter.prompts_list_changed,
            caps.prompts.as_ref().and_then(|c| c.list_changed),
        );
        let resources = caps.resources.as_ref();
        granted.resources_list_changed = listed(
            filter.resources_list_changed,
            resources.and_then(|c| c.list_changed),
        );
        let can_subscribe = resources.and_then(|c| c.subscribe) == Some(true);
        let mut uris: Vec<String> = Vec::new();
        if can_subscribe && filter.resource_subscriptions.is_some() {
            for uri in filter.resource_subscriptions.iter().flatten() {
                if !uris.contains(uri) {
                    uris.push(uri.clone());
                }
            }
            granted.resource_subscriptions = Some(uris.clone());
        }
        // Register first, so that no update between a subscribe and the registration is
        // lost; then take the URI references, subscribing the new ones.
        let listener = Listener::new(opts.buffer, granted);
        let registry = self.inner.handlers.listeners.clone();
        let mut fresh = Vec::new();
        {
            let mut s = lock(&registry.state);
            s.handshake.push((registry.mint(), listener.clone()));
            for uri in &uris {
                let n = s.uris.entry(uri.clone()).or_insert(0);
                *n += 1;
                if *n == 1 {
                    fresh.push(uri.clone());
                }
            }
        }
        let sub = Subscription {
            client: self.clone(),
            listener,
            requested: filter,
            era: Era::Handshake,
            driver: None,
            released: false,
        };
        for uri in fresh {
            if let Err(e) = self.subscribe(&uri).await {
                // Dropping `sub` releases every reference and unsubscribes the rest.
                drop(sub);
                return Err(e);
            }
        }
        Ok(sub)
    }
}
