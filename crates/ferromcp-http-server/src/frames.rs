//! A bounded queue of SSE frames from a session's router to one response body.
//!
//! Each handshake-era POST answered over SSE gets one, so it is made per request: two small
//! allocations (the shared state, a two-slot queue), against a tokio `mpsc` channel's block
//! of 32 slots and its semaphore. It has what [`Streams`](super::legacy::streams)
//! needs and no more: `try_send` (a full queue means a client too slow to keep), the
//! receiver's liveness, and the end of the stream when the last sender is dropped.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};

use bytes::Bytes;

/// Why a frame was not queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TrySendError {
    /// The queue is full.
    Full,
    /// The receiver is gone.
    Closed,
}

struct Shared {
    cap: usize,
    senders: AtomicUsize,
    receiver_alive: AtomicBool,
    state: Mutex<State>,
}

struct State {
    queue: VecDeque<Bytes>,
    waker: Option<Waker>,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Wakes the receiver (outside the lock).
    fn wake(&self) {
        let waker = self.lock().waker.take();
        if let Some(w) = waker {
            w.wake();
        }
    }
}

/// The sending side; cloneable. The stream ends when every sender is dropped.
pub(crate) struct FrameTx(Arc<Shared>);

/// The receiving side, read by the response body.
pub(crate) struct FrameRx(Arc<Shared>);

/// A queue holding at most `cap` frames (at least 1).
pub(crate) fn channel(cap: usize) -> (FrameTx, FrameRx) {
    let cap = cap.max(1);
    let shared = Arc::new(Shared {
        cap,
        senders: AtomicUsize::new(1),
        receiver_alive: AtomicBool::new(true),
        state: Mutex::new(State {
            // A request stream carries a priming event and the answer, most of the time.
            queue: VecDeque::with_capacity(cap.min(2)),
            waker: None,
        }),
    });
    (FrameTx(shared.clone()), FrameRx(shared))
}

impl FrameTx {
    /// Queues a frame without waiting.
    pub(crate) fn try_send(&self, frame: Bytes) -> Result<(), TrySendError> {
        if !self.0.receiver_alive.load(Ordering::Acquire) {
            return Err(TrySendError::Closed);
        }
        let waker = {
            let mut state = self.0.lock();
            if state.queue.len() >= self.0.cap {
                return Err(TrySendError::Full);
            }
            state.queue.push_back(frame);
            state.waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
        Ok(())
    }

    /// Whether the receiver is gone.
    pub(crate) fn is_closed(&self) -> bool {
        !self.0.receiver_alive.load(Ordering::Acquire)
    }

    /// Whether both senders feed the same receiver.
    pub(crate) fn same_channel(&self, other: &FrameTx) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Clone for FrameTx {
    fn clone(&self) -> Self {
        self.0.senders.fetch_add(1, Ordering::Relaxed);
        Self(self.0.clone())
    }
}

impl Drop for FrameTx {
    fn drop(&mut self) {
        if self.0.senders.fetch_sub(1, Ordering::AcqRel) == 1 {
            // The last sender: the receiver sees the end once the queue is drained.
            self.0.wake();
        }
    }
}

impl FrameRx {
    /// The next frame; `None` once the queue is empty and every sender is gone.
    pub(crate) fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        let mut state = self.0.lock();
        if let Some(frame) = state.queue.pop_front() {
            return Poll::Ready(Some(frame));
        }
        // Checked under the lock: a last sender dropping after this point wakes the waker
        // stored below.
        if self.0.senders.load(Ordering::Acquire) == 0 {
            return Poll::Ready(None);
        }
        match &mut state.waker {
            Some(w) if w.will_wake(cx.waker()) => {}
            slot => *slot = Some(cx.waker().clone()),
        }
        Poll::Pending
    }
}

#[cfg(test)]
impl FrameRx {
    /// The next frame, waiting for it; `None` at the end.
    pub(crate) async fn recv(&mut self) -> Option<Bytes> {
        std::future::poll_fn(|cx| self.poll_recv(cx)).await
    }

    /// A queued frame, without waiting.
    pub(crate) fn try_recv(&mut self) -> Option<Bytes> {
        self.0.lock().queue.pop_front()
    }
}

impl Drop for FrameRx {
    fn drop(&mut self) {
        self.0.receiver_alive.store(false, Ordering::Release);
        // Frees the queued frames now rather than with the last sender.
        let mut state = self.0.lock();
        state.queue.clear();
        state.waker = None;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]

    use std::time::Duration;

    use super::*;

    /// The queue bound (the per-stream limit of MCP's slow SSE clients): a full queue refuses
    /// the frame; frames come out in order; the stream ends after the last sender is dropped
    /// and the queue is drained; a dropped receiver closes the senders.
    #[tokio::test]
    async fn bound_order_end_and_close() {
        tokio::time::timeout(Duration::from_secs(5), async {
            let (tx, mut rx) = channel(2);
            let tx2 = tx.clone();
            assert!(tx.same_channel(&tx2));
            tx.try_send(Bytes::from_static(b"a")).unwrap();
            tx2.try_send(Bytes::from_static(b"b")).unwrap();
            assert_eq!(
                tx.try_send(Bytes::from_static(b"c")),
                Err(TrySendError::Full)
            );
            assert_eq!(rx.recv().await.as_deref(), Some(&b"a"[..]));
            // A waiting receiver is woken by a send from another task.
            let sender = tokio::spawn(async move {
                tokio::task::yield_now().await;
                tx2.try_send(Bytes::from_static(b"d")).unwrap();
            });
            assert_eq!(rx.recv().await.as_deref(), Some(&b"b"[..]));
            assert_eq!(rx.recv().await.as_deref(), Some(&b"d"[..]));
            sender.await.unwrap();
            // The last sender's drop ends the stream, also for a receiver already waiting.
            let ender = tokio::spawn(async move {
                tokio::task::yield_now().await;
                drop(tx);
            });
            assert_eq!(rx.recv().await, None);
            ender.await.unwrap();

            let (tx, rx) = channel(1);
            assert!(!tx.is_closed());
            drop(rx);
            assert!(tx.is_closed());
            assert_eq!(
                tx.try_send(Bytes::from_static(b"x")),
                Err(TrySendError::Closed)
            );
            let (other, _rx) = channel(1);
            assert!(!tx.same_channel(&other));
        })
        .await
        .unwrap();
    }
}
