//! One subscription's shared state: its event queue (bounded, with the `Lagged` count), its
//! end, and the acknowledgments of its streams.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use ferromcp_types::mcp::methods;
use tokio::sync::{Notify, oneshot};

use super::{ListenEnd, ListenEvent, SubscriptionFilter, lock};
use crate::cache::ResponseCache;

/// The state one subscription shares between its handle, its driver and the router.
pub(super) struct Listener {
    pub(super) state: Mutex<ListenerState>,
    /// Wakes the reader.
    pub(super) wake: Notify,
    /// Raised when the server cancels the subscription.
    pub(super) server_cancel: Notify,
    cap: usize,
}

pub(super) struct ListenerState {
    pub(super) queue: VecDeque<ListenEvent>,
    pub(super) ended: bool,
    /// The filter in force (what the server acknowledged).
    pub(super) acknowledged: SubscriptionFilter,
    /// Hands the next acknowledgment to the driver.
    ack: Option<oneshot::Sender<SubscriptionFilter>>,
    /// Acknowledgments seen (the first opens the subscription; later ones are reconnects).
    acks: u32,
}

impl Listener {
    pub(super) fn new(cap: usize, acknowledged: SubscriptionFilter) -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(ListenerState {
                queue: VecDeque::new(),
                ended: false,
                acknowledged,
                ack: None,
                acks: 0,
            }),
            wake: Notify::new(),
            server_cancel: Notify::new(),
            cap: cap.max(1),
        })
    }

    /// Queues an event, or counts it as lagged when the buffer is full.
    pub(super) fn push(&self, event: ListenEvent) {
        {
            let mut s = lock(&self.state);
            if s.ended {
                return;
            }
            if s.queue.len() < self.cap {
                s.queue.push_back(event);
            } else if let Some(ListenEvent::Lagged(n)) = s.queue.back_mut() {
                *n += 1;
            } else {
                s.queue.push_back(ListenEvent::Lagged(1));
            }
        }
        self.wake.notify_one();
    }

    /// Queues the end (once; it always fits).
    pub(super) fn end(&self, why: ListenEnd) {
        {
            let mut s = lock(&self.state);
            if s.ended {
                return;
            }
            s.ended = true;
            s.queue.push_back(ListenEvent::Ended(why));
        }
        self.wake.notify_one();
    }

    pub(super) fn is_ended(&self) -> bool {
        lock(&self.state).ended
    }

    /// The server acknowledged a stream of this subscription: the first time the opener is
    /// told; later (a reconnection), a [`ListenEvent::Reconnected`] is queued in order and
    /// the cache entries the filter covers are evicted.
    pub(super) fn acknowledge(&self, filter: SubscriptionFilter, cache: &ResponseCache) {
        let reconnected = {
            let mut s = lock(&self.state);
            s.acks += 1;
            s.acknowledged = filter.clone();
            if let Some(tx) = s.ack.take() {
                let _ = tx.send(filter.clone());
            }
            s.acks > 1
        };
        if reconnected {
            evict_covered(cache, &filter);
            self.push(ListenEvent::Reconnected {
                acknowledged: filter,
            });
        }
    }

    pub(super) fn expect_ack(&self) -> oneshot::Receiver<SubscriptionFilter> {
        let (tx, rx) = oneshot::channel();
        lock(&self.state).ack = Some(tx);
        rx
    }
}

/// Evicts every cache entry a filter covers.
fn evict_covered(cache: &ResponseCache, filter: &SubscriptionFilter) {
    if filter.tools_list_changed == Some(true) {
        cache.evict_list(methods::TOOLS_LIST);
    }
    if filter.prompts_list_changed == Some(true) {
        cache.evict_list(methods::PROMPTS_LIST);
    }
    if filter.resources_list_changed == Some(true) {
        cache.evict_list(methods::RESOURCES_LIST);
        cache.evict_list(methods::RESOURCES_TEMPLATES_LIST);
    }
    for uri in filter.resource_subscriptions.iter().flatten() {
        cache.evict(methods::RESOURCES_READ, uri);
    }
}
