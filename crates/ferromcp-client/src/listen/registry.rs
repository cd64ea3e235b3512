//! The open subscriptions of one client, and the routing of the server's notifications to
//! them (by subscription id at 2026-07-28, by filter for the 2025-11-25 fallback).

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use ferromcp_types::jsonrpc::{Payload, RequestId};
use ferromcp_types::mcp::{META_SUBSCRIPTION_ID, methods};
use serde_json::Value;

use super::listener::Listener;
use super::{ListenEnd, ListenEvent, SubscriptionFilter, lock};
use crate::cache::ResponseCache;

/// The event a change notification stands for.
fn event_of(method: &str, params: Option<&Value>) -> Option<ListenEvent> {
    Some(match method {
        methods::NOTIFICATION_TOOLS_LIST_CHANGED => ListenEvent::ToolListChanged,
        methods::NOTIFICATION_PROMPTS_LIST_CHANGED => ListenEvent::PromptListChanged,
        methods::NOTIFICATION_RESOURCES_LIST_CHANGED => ListenEvent::ResourceListChanged,
        methods::NOTIFICATION_RESOURCES_UPDATED => {
            let uri = params?.get("uri")?.as_str()?;
            ListenEvent::ResourceUpdated(uri.to_owned())
        }
        _ => return None,
    })
}

/// Whether a filter covers an event (handshake-era routing). An update may name a
/// sub-resource of the subscribed one (schema: `ResourceUpdatedNotificationParams.uri`), so a
/// URI under a subscribed one counts.
pub(super) fn covers(filter: &SubscriptionFilter, event: &ListenEvent) -> bool {
    match event {
        ListenEvent::ToolListChanged => filter.tools_list_changed == Some(true),
        ListenEvent::PromptListChanged => filter.prompts_list_changed == Some(true),
        ListenEvent::ResourceListChanged => filter.resources_list_changed == Some(true),
        ListenEvent::ResourceUpdated(uri) => filter
            .resource_subscriptions
            .iter()
            .flatten()
            .any(|u| uri.starts_with(u.as_str())),
        _ => false,
    }
}

/// The open subscriptions of one client, shared with its dispatcher handler.
#[derive(Default)]
pub(crate) struct Registry {
    pub(super) state: Mutex<RegistryState>,
    /// The other notification routes: the requests in flight whose related log records go to
    /// a callback of their own ([`RequestOptions::on_log`](crate::RequestOptions::on_log)), by
    /// JSON-RPC id (see `crate::handlers::LogRoute`).
    pub(crate) request_logs: Mutex<HashMap<RequestId, crate::options::LogCallback>>,
    next_id: AtomicU64,
}

#[derive(Default)]
pub(super) struct RegistryState {
    /// 2026-07-28 streams, by subscription id (the listen request's id).
    pub(super) modern: HashMap<RequestId, Arc<Listener>>,
    /// 2025-11-25 emulations, with their acknowledged filter.
    pub(super) handshake: Vec<(u64, Arc<Listener>)>,
    /// `resources/subscribe` references held by handshake-era subscriptions.
    pub(super) uris: HashMap<String, usize>,
    /// The connection ended: no new subscriptions, no reconnections.
    ended: bool,
}

impl Registry {
    pub(super) fn mint(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed) + 1
    }

    pub(super) fn is_ended(&self) -> bool {
        lock(&self.state).ended
    }

    /// The client's connection ended: every subscription ends.
    pub(crate) fn connection_ended(&self) {
        let listeners: Vec<Arc<Listener>> = {
            let mut guard = lock(&self.state);
            let s = &mut *guard;
            s.ended = true;
            let modern = s.modern.drain().map(|(_, l)| l);
            let handshake = s.handshake.drain(..).map(|(_, l)| l);
            modern.chain(handshake).collect()
        };
        for l in listeners {
            l.end(ListenEnd::ConnectionClosed);
        }
    }

    /// Removes a listener everywhere; returns the URIs no handshake-era subscription needs
    /// any more.
    pub(super) fn remove(&self, listener: &Arc<Listener>) -> Vec<String> {
        let mut s = lock(&self.state);
        s.modern.retain(|_, l| !Arc::ptr_eq(l, listener));
        let mut released = Vec::new();
        let mut gone = Vec::new();
        s.handshake.retain(|(_, l)| {
            let keep = !Arc::ptr_eq(l, listener);
            if !keep {
                gone.push(l.clone());
            }
            keep
        });
        for l in gone {
            let filter = lock(&l.state).acknowledged.clone();
            for uri in filter.resource_subscriptions.into_iter().flatten() {
                if let Some(n) = s.uris.get_mut(&uri) {
                    *n = n.saturating_sub(1);
                    if *n == 0 {
                        s.uris.remove(&uri);
                        released.push(uri);
                    }
                }
            }
        }
        released
    }

    /// Offers a notification to the subscriptions (on the dispatcher's read loop, in
    /// arrival order). Consumes acknowledgments of known subscriptions.
    pub(crate) fn route(
        &self,
        method: &str,
        params: Option<&Payload>,
        cache: &ResponseCache,
    ) -> ControlFlow<()> {
        // Progress is the dispatcher's; everything else may belong to a stream.
        if method == methods::NOTIFICATION_PROGRESS {
            return ControlFlow::Continue(());
        }
        {
            let s = lock(&self.state);
            if s.modern.is_empty() && s.handshake.is_empty() {
                return ControlFlow::Continue(());
            }
        }
        let params: Option<Value> = params.and_then(|p| p.parse().ok());
        let params = params.as_ref();
        if method == methods::NOTIFICATION_CANCELLED {
            // The server tears a subscription down (2026-07-28 "Cancellation", stdio).
            let target = params
                .and_then(|p| p.get("requestId"))
                .and_then(|v| serde_json::from_value::<RequestId>(v.clone()).ok());
            let listener = target.and_then(|id| lock(&self.state).modern.remove(&id));
            if let Some(l) = listener {
                l.server_cancel.notify_one();
            }
            return ControlFlow::Continue(());
        }
        let sub_id = params
            .and_then(|p| p.get("_meta"))
            .and_then(|m| m.get(META_SUBSCRIPTION_ID))
            .and_then(|v| serde_json::from_value::<RequestId>(v.clone()).ok());
        if let Some(id) = sub_id {
            let Some(listener) = lock(&self.state).modern.get(&id).cloned() else {
                return ControlFlow::Continue(());
            };
            if method == methods::NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED {
                let filter = params
                    .and_then(|p| p.get("notifications"))
                    .and_then(|f| serde_json::from_value::<SubscriptionFilter>(f.clone()).ok())
                    .unwrap_or_default();
                listener.acknowledge(filter, cache);
                return ControlFlow::Break(());
            }
            let event = event_of(method, params).unwrap_or_else(|| ListenEvent::Other {
                method: method.to_owned(),
                params: params.cloned(),
            });
            listener.push(event);
            return ControlFlow::Continue(());
        }
        // No subscription id: the handshake era's session notifications.
        let Some(event) = event_of(method, params) else {
            return ControlFlow::Continue(());
        };
        let targets: Vec<Arc<Listener>> = lock(&self.state)
            .handshake
            .iter()
            .map(|(_, l)| l.clone())
            .collect();
        for l in targets {
            let wanted = covers(&lock(&l.state).acknowledged, &event);
            if wanted {
                l.push(event.clone());
            }
        }
        ControlFlow::Continue(())
    }
}
