//! The session's message-stream transport: POSTs feed an [`Inbox`] that the dispatcher
//! reads; the dispatcher's outbound messages go to [`Streams`] for routing.
//!
//! The inbox is a plain queue behind a mutex (no channel is allocated while the session is
//! idle), bounded by the inbound-queue setting. It holds room for one message while the
//! session is idle (a message is about 240 bytes, and a queue grown for four would keep
//! 960 bytes per idle session): it grows for a burst and gives the room back once drained.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use ferromcp_dispatch::{
    BoxFuture, Inbound, MessageSink, MessageSource, TransportClosed, TransportMessage,
};
use tokio::sync::Notify;

use super::streams::Streams;

/// Inbound messages waiting for the session's dispatcher.
pub(crate) struct Inbox {
    queue: Mutex<VecDeque<Inbound>>,
    notify: Notify,
    closed: AtomicBool,
    cap: usize,
}

/// Why a message could not be queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PushError {
    /// The queue is full.
    Full,
    /// The session has ended.
    Closed,
}

impl Inbox {
    pub(crate) fn new(cap: usize) -> Self {
        Self {
            queue: Mutex::new(VecDeque::new()),
            notify: Notify::new(),
            closed: AtomicBool::new(false),
            cap: cap.max(1),
        }
    }

    pub(crate) fn push(&self, item: TransportMessage) -> Result<(), PushError> {
        if self.closed.load(Ordering::Acquire) {
            return Err(PushError::Closed);
        }
        {
            let mut q = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
            if q.len() >= self.cap {
                return Err(PushError::Full);
            }
            if q.capacity() == 0 {
                // One message at a time is the common case: room for exactly one, not the
                // four a first push would reserve.
                q.reserve_exact(1);
            }
            q.push_back(Ok(item));
        }
        self.notify.notify_one();
        Ok(())
    }

    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::Release);
        self.notify.notify_one();
    }

    fn pop(&self) -> Option<Inbound> {
        let mut q = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        let item = q.pop_front();
        if q.is_empty() && q.capacity() > 1 {
            // A burst is over: keep room for one message only.
            q.shrink_to(1);
        }
        item
    }

    /// How many messages the queue has room for without growing (what an idle session
    /// keeps allocated).
    #[cfg(test)]
    fn room(&self) -> usize {
        self.queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .capacity()
    }
}

/// The dispatcher's source: the session's inbox.
pub(crate) struct InboxSource(pub(crate) Arc<Inbox>);

impl MessageSource for InboxSource {
    async fn recv(&mut self) -> Option<Inbound> {
        loop {
            let notified = self.0.notify.notified();
            if let Some(item) = self.0.pop() {
                return Some(item);
            }
            if self.0.closed.load(Ordering::Acquire) {
                return None;
            }
            notified.await;
        }
    }
}

/// The dispatcher's sink: routes each message to its stream.
pub(crate) struct SessionSink(pub(crate) Arc<Streams>);

impl MessageSink for SessionSink {
    fn send(&self, msg: TransportMessage) -> BoxFuture<'_, Result<(), TransportClosed>> {
        Box::pin(async move {
            self.0.route(msg).await;
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferromcp_types::jsonrpc::{Message, Notification};

    fn message() -> TransportMessage {
        Message::Notification(Notification::new("notifications/initialized", None)).into()
    }

    /// S98: an idle session's inbox keeps room for one message (it kept room for four
    /// before), a burst grows it and it shrinks back once drained; the inbound-queue cap
    /// still refuses the message past it, before and after the shrink.
    #[test]
    fn s98_an_idle_inbox_keeps_room_for_one_message_and_the_cap_still_holds() {
        let inbox = Inbox::new(3);
        assert_eq!(
            inbox.room(),
            0,
            "nothing is allocated before the first message"
        );
        inbox.push(message()).unwrap();
        assert!(inbox.pop().is_some());
        assert_eq!(inbox.room(), 1);
        for _ in 0..2 {
            for _ in 0..3 {
                inbox.push(message()).unwrap();
            }
            assert_eq!(inbox.push(message()), Err(PushError::Full));
            for _ in 0..3 {
                assert!(inbox.pop().is_some());
            }
            assert!(inbox.pop().is_none());
            assert_eq!(inbox.room(), 1, "drained after a burst");
        }
        inbox.close();
        assert_eq!(inbox.push(message()), Err(PushError::Closed));
    }
}
