//! Admission of the peer's requests: what the read loop holds, the guards that count it, and
//! the wait at shutdown until everything accepted has been answered.

use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::Notify;

use super::Shared;

/// How long the end of a connection waits for the answers still on their way to the transport
/// while none of them gets through: a peer that reads on gets every answer, one that stopped
/// reading does not hold the shutdown for longer than this.
pub(crate) const DRAIN_STALL_BOUND: Duration = Duration::from_secs(2);

/// How many of the peer's requests a [`JsonRpcDispatcher`](crate::JsonRpcDispatcher) holds
/// (see [`JsonRpcDispatcher::inbound_load`](crate::JsonRpcDispatcher::inbound_load)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct InboundLoad {
    /// Requests accepted and not yet answered: running, waiting for a slot, or with their
    /// answer waiting for the transport. At most `max_concurrent_requests +
    /// max_queued_requests`.
    pub accepted: usize,
    /// Of those, the requests waiting for a handler slot. At most `max_queued_requests`.
    pub queued: usize,
    /// Notifications waiting for a handler slot. At most `max_queued_requests`.
    pub queued_notifications: usize,
    /// Answers the read loop itself gives (overload refusals, decode errors, duplicate ids)
    /// still waiting for the transport. At most `max_queued_requests`.
    pub refusals: usize,
}

/// The counters behind [`InboundLoad`]; only the read loop raises them.
#[derive(Default)]
pub(crate) struct Load {
    accepted: AtomicUsize,
    queued: AtomicUsize,
    queued_notifications: AtomicUsize,
    refusals: AtomicUsize,
    /// Woken (once the connection is closed) whenever an answer got through.
    drained: Notify,
}

impl Load {
    pub(crate) fn snapshot(&self) -> InboundLoad {
        InboundLoad {
            accepted: self.accepted.load(Ordering::Acquire),
            queued: self.queued.load(Ordering::Acquire),
            queued_notifications: self.queued_notifications.load(Ordering::Acquire),
            refusals: self.refusals.load(Ordering::Acquire),
        }
    }

    pub(crate) fn accepted(&self) -> usize {
        self.accepted.load(Ordering::Acquire)
    }

    pub(crate) fn refusals(&self) -> usize {
        self.refusals.load(Ordering::Acquire)
    }

    /// Records the length of the wait queue.
    pub(crate) fn set_queued(&self, requests: usize, notifications: usize) {
        self.queued.store(requests, Ordering::Release);
        self.queued_notifications
            .store(notifications, Ordering::Release);
    }

    /// What is still on its way: accepted requests and the loop's own answers.
    fn outstanding(&self) -> usize {
        self.accepted() + self.refusals()
    }
}

/// Which counter a [`Held`] holds.
#[derive(Clone, Copy)]
pub(crate) enum Kind {
    /// An accepted request.
    Request,
    /// An answer of the read loop's own waiting for the transport.
    Refusal,
}

/// One count of [`Load`], given back when dropped: when the request's answer has been handed to
/// the transport, when it is cancelled, or when its handler's future is dropped.
pub(crate) struct Held {
    shared: Arc<Shared>,
    kind: Kind,
}

impl Held {
    pub(crate) fn new(shared: &Arc<Shared>, kind: Kind) -> Self {
        shared.load.counter(kind).fetch_add(1, Ordering::AcqRel);
        Self {
            shared: shared.clone(),
            kind,
        }
    }
}

impl Load {
    fn counter(&self, kind: Kind) -> &AtomicUsize {
        match kind {
            Kind::Request => &self.accepted,
            Kind::Refusal => &self.refusals,
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let load = &self.shared.load;
        load.counter(self.kind).fetch_sub(1, Ordering::SeqCst);
        // Only the shutdown waits for these (it raises `closed` first, and arms its wait
        // before it looks at the counts, so no wake-up is lost).
        if self.shared.closed.load(Ordering::SeqCst) {
            load.drained.notify_waiters();
        }
    }
}

impl std::fmt::Debug for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Held").finish_non_exhaustive()
    }
}

/// Waits, once the connection is closed, until every accepted request and every answer of the
/// loop's own has reached the transport, giving up after [`DRAIN_STALL_BOUND`] without one
/// getting through.
pub(crate) async fn drain(shared: &Shared) {
    loop {
        let mut drained = pin!(shared.load.drained.notified());
        drained.as_mut().enable();
        let left = shared.load.outstanding();
        if left == 0 {
            return;
        }
        if tokio::time::timeout(DRAIN_STALL_BOUND, drained).await.is_err() {
            tracing::warn!(
                left,
                "answers still unwritten at shutdown: the peer stopped reading"
            );
            return;
        }
    }
}
