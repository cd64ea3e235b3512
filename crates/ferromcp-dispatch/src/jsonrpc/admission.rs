//! Admission of the peer's requests: what the read loop holds, the guards that count it, and
//! the waits for the transport (while too many answers are unread, and at shutdown).

use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
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
    /// answer waiting for the transport.
    pub accepted: usize,
    /// Of those, the requests running or waiting for a handler slot. At most
    /// `max_concurrent_requests + max_queued_requests`.
    pub held_by_handlers: usize,
    /// Of those, the requests waiting for a handler slot. At most `max_queued_requests`.
    pub queued: usize,
    /// Notifications waiting for a handler slot. At most `max_queued_requests`.
    pub queued_notifications: usize,
    /// Answers waiting for the transport: accepted requests' (their handler has finished) and
    /// the read loop's own (overload refusals, decode errors). At most
    /// `max_unwritten_answers`, plus one the read loop may be writing itself.
    pub unwritten_answers: usize,
}

/// The counters behind [`InboundLoad`]; only the read loop raises them.
#[derive(Default)]
pub(crate) struct Load {
    accepted: AtomicUsize,
    /// Accepted requests whose answer waits for the transport.
    writing: AtomicUsize,
    /// The loop's own answers waiting for the transport.
    refusals: AtomicUsize,
    queued: AtomicUsize,
    queued_notifications: AtomicUsize,
    /// Woken (once the connection is closed) whenever an answer got through.
    drained: Notify,
    /// Raised while the read loop waits for an answer to get through.
    waiting: AtomicBool,
    /// Woken, while `waiting` is raised, whenever an answer got through.
    room: Notify,
}

impl Load {
    pub(crate) fn snapshot(&self) -> InboundLoad {
        InboundLoad {
            accepted: self.accepted(),
            held_by_handlers: self.held_by_handlers(),
            queued: self.queued.load(Ordering::Acquire),
            queued_notifications: self.queued_notifications.load(Ordering::Acquire),
            unwritten_answers: self.unwritten(),
        }
    }

    fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }

    /// The accepted requests the handlers hold: running or waiting for a slot.
    pub(crate) fn held_by_handlers(&self) -> usize {
        // `writing` first: a count given back between the two loads can then only make this
        // smaller, never larger.
        let writing = self.writing.load(Ordering::SeqCst);
        self.accepted().saturating_sub(writing)
    }

    /// The answers waiting for the transport.
    pub(crate) fn unwritten(&self) -> usize {
        self.writing.load(Ordering::SeqCst) + self.refusals.load(Ordering::SeqCst)
    }

    /// Records the length of the wait queue.
    pub(crate) fn set_queued(&self, requests: usize, notifications: usize) {
        self.queued.store(requests, Ordering::Release);
        self.queued_notifications
            .store(notifications, Ordering::Release);
    }

    /// What is still on its way at shutdown: accepted requests and the loop's own answers.
    fn outstanding(&self) -> usize {
        self.accepted() + self.refusals.load(Ordering::SeqCst)
    }

    /// Waits until fewer than `cap` answers wait for the transport, or until `stop` is ready.
    pub(crate) async fn wait_for_room(&self, cap: usize, stop: impl Future<Output = ()>) {
        let mut stop = pin!(stop);
        self.waiting.store(true, Ordering::SeqCst);
        loop {
            let mut room = pin!(self.room.notified());
            room.as_mut().enable();
            if self.unwritten() < cap {
                break;
            }
            tokio::select! {
                () = &mut room => {}
                () = &mut stop => break,
            }
        }
        self.waiting.store(false, Ordering::SeqCst);
    }

    fn counter(&self, kind: Kind) -> &AtomicUsize {
        match kind {
            Kind::Request => &self.accepted,
            Kind::Refusal => &self.refusals,
        }
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

/// One count of [`Load`], given back when dropped: when the answer has been handed to the
/// transport, when the request is cancelled, or when its handler's future is dropped.
pub(crate) struct Held {
    shared: Arc<Shared>,
    kind: Kind,
    /// The request's answer waits for the transport (counted in `Load::writing`).
    writing: bool,
}

impl Held {
    pub(crate) fn new(shared: &Arc<Shared>, kind: Kind) -> Self {
        shared.load.counter(kind).fetch_add(1, Ordering::SeqCst);
        Self {
            shared: shared.clone(),
            kind,
            writing: false,
        }
    }

    /// Marks the request's handler finished: only its answer's write is left.
    pub(crate) fn writing(&mut self) {
        if !self.writing {
            self.writing = true;
            self.shared.load.writing.fetch_add(1, Ordering::SeqCst);
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let load = &self.shared.load;
        if self.writing {
            load.writing.fetch_sub(1, Ordering::SeqCst);
        }
        load.counter(self.kind).fetch_sub(1, Ordering::SeqCst);
        // Only the read loop (while `waiting`) and the shutdown (once `closed`) wait for
        // these; each raises its flag and arms its wait before it looks at the counts, so no
        // wake-up is lost.
        if load.waiting.load(Ordering::SeqCst) {
            load.room.notify_waiters();
        }
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
        if tokio::time::timeout(DRAIN_STALL_BOUND, drained)
            .await
            .is_err()
        {
            tracing::warn!(
                left,
                "answers still unwritten at shutdown: the peer stopped reading"
            );
            return;
        }
    }
}
