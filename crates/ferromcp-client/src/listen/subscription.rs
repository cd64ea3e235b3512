//! The [`Subscription`] handle: reading its events, and ending it on close or drop.

use std::fmt;
use std::sync::Arc;

use ferromcp_types::Era;
use tokio::task::AbortHandle;

use super::listener::Listener;
use super::{ListenEnd, ListenEvent, SubscriptionFilter, lock};
use crate::client::Client;

/// Aborts a task when dropped.
pub(super) struct AbortOnDrop(pub(super) AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// An open change subscription (see the [module docs](crate::listen)). Dropping it ends it.
pub struct Subscription {
    pub(super) client: Client,
    pub(super) listener: Arc<Listener>,
    pub(super) requested: SubscriptionFilter,
    pub(super) era: Era,
    /// The 2026-07-28 driver task.
    pub(super) driver: Option<AbortOnDrop>,
    /// Set once the handle released its registrations.
    pub(super) released: bool,
}

impl fmt::Debug for Subscription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Subscription")
            .field("era", &self.era)
            .field("requested", &self.requested)
            .field("acknowledged", &self.acknowledged())
            .finish_non_exhaustive()
    }
}

impl Subscription {
    /// The next event; `None` after [`ListenEvent::Ended`] was returned.
    pub async fn next(&mut self) -> Option<ListenEvent> {
        loop {
            {
                let mut s = lock(&self.listener.state);
                if let Some(event) = s.queue.pop_front() {
                    return Some(event);
                }
                if s.ended {
                    return None;
                }
            }
            self.listener.wake.notified().await;
        }
    }

    /// The next event if one is waiting.
    pub fn try_next(&mut self) -> Option<ListenEvent> {
        lock(&self.listener.state).queue.pop_front()
    }

    /// The filter the server agreed to (the latest acknowledgment); compare it with
    /// [`Subscription::requested`] to see what the server does not support.
    pub fn acknowledged(&self) -> SubscriptionFilter {
        lock(&self.listener.state).acknowledged.clone()
    }

    /// The filter asked for.
    pub fn requested(&self) -> &SubscriptionFilter {
        &self.requested
    }

    /// The era the subscription runs in: `Modern` is `subscriptions/listen`, `Handshake` the
    /// 2025-11-25 fallback.
    pub fn era(&self) -> Era {
        self.era
    }

    /// Whether the subscription ended (its [`ListenEvent::Ended`] may still be unread).
    pub fn is_ended(&self) -> bool {
        self.listener.is_ended()
    }

    /// Ends the subscription and waits for its cleanup: at 2025-11-25, the
    /// `resources/unsubscribe` of URIs no other subscription listens to. (Dropping the
    /// subscription does the same without waiting.)
    pub async fn close(mut self) {
        let released = self.release();
        for uri in released {
            if let Err(e) = self.client.unsubscribe(&uri).await {
                tracing::debug!(uri, error = %e, "resources/unsubscribe failed");
            }
        }
    }

    /// Stops the driver and unregisters; returns the URIs to unsubscribe.
    pub(super) fn release(&mut self) -> Vec<String> {
        if self.released {
            return Vec::new();
        }
        self.released = true;
        self.driver = None;
        let released = self.client.inner.handlers.listeners.remove(&self.listener);
        self.listener.end(ListenEnd::ConnectionClosed);
        released
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let released = self.release();
        if released.is_empty() {
            return;
        }
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let client = self.client.clone();
        rt.spawn(async move {
            for uri in released {
                if let Err(e) = client.unsubscribe(&uri).await {
                    tracing::debug!(uri, error = %e, "resources/unsubscribe failed");
                }
            }
        });
    }
}
