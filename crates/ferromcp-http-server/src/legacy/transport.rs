//! The session's message-stream transport: POSTs feed an [`Inbox`] that the dispatcher
//! reads; the dispatcher's outbound messages go to [`Streams`] for routing.
//!
//! The inbox is a plain queue behind a mutex (no channel is allocated while the session is
//! idle), bounded by the inbound-queue setting.

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
        self.queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop_front()
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
