//! Timers reused across requests: the SSE keep-alive of each response body and the SSE
//! deferral of each 2026-07-28 exchange.
//!
//! Each request used to register a fresh tokio timer. Besides the registration itself, a
//! fresh timer due before every other one the runtime has makes tokio wake its driver (an
//! `eventfd` write and an extra event on the next `epoll_wait`): with the default 15 s
//! keep-alive that was every response. A recycled timer, still registered and due earlier
//! than the new deadline, is moved later instead, which never wakes the driver.
//!
//! A pool is per service and per use (timers of one pool share a period, so a recycled
//! timer is due no later than a fresh one would be). Timers belong to the runtime that made
//! them: one taken on another runtime is dropped, not reused.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use tokio::runtime::{Handle, Id};
use tokio::time::{Instant, Sleep};

/// The most timers a [`TimerPool`] keeps.
const POOL_SIZE: usize = 64;

/// Timers of ended uses, for the next ones.
#[derive(Default)]
pub(crate) struct TimerPool {
    timers: Mutex<Vec<(Id, Pin<Box<Sleep>>)>>,
}

impl TimerPool {
    /// A recycled timer of the current runtime (its deadline is whatever it was).
    pub(crate) fn take(&self) -> Option<Pin<Box<Sleep>>> {
        let runtime = Handle::try_current().ok()?.id();
        let mut timers = self.timers.lock().unwrap_or_else(PoisonError::into_inner);
        while let Some((id, sleep)) = timers.pop() {
            if id == runtime {
                return Some(sleep);
            }
            // Another runtime's timer cannot serve this one: dropped.
            drop(sleep);
        }
        None
    }

    /// Keeps `sleep` for reuse (dropped when the pool is full or no runtime is current).
    pub(crate) fn put(&self, sleep: Pin<Box<Sleep>>) {
        let Ok(handle) = Handle::try_current() else {
            return;
        };
        let mut timers = self.timers.lock().unwrap_or_else(PoisonError::into_inner);
        if timers.len() < POOL_SIZE {
            timers.push((handle.id(), sleep));
        }
    }

    /// A timer due at `deadline`, recycled when one is pooled; it goes back to the pool
    /// when dropped.
    pub(crate) fn sleep_until(self: &Arc<Self>, deadline: Instant) -> PooledSleep {
        let sleep = match self.take() {
            Some(mut sleep) => {
                sleep.as_mut().reset(deadline);
                sleep
            }
            None => Box::pin(tokio::time::sleep_until(deadline)),
        };
        PooledSleep {
            sleep: Some(sleep),
            pool: self.clone(),
        }
    }

    /// How many timers are kept.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.timers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

/// A timer from a [`TimerPool`], returned to it on drop.
pub(crate) struct PooledSleep {
    sleep: Option<Pin<Box<Sleep>>>,
    pool: Arc<TimerPool>,
}

impl Future for PooledSleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        match &mut self.sleep {
            Some(sleep) => sleep.as_mut().poll(cx),
            None => Poll::Ready(()),
        }
    }
}

impl Drop for PooledSleep {
    fn drop(&mut self) {
        if let Some(sleep) = self.sleep.take() {
            self.pool.put(sleep);
        }
    }
}

/// The timer pools of one service.
#[derive(Default, Clone)]
pub(crate) struct Timers {
    /// SSE keep-alive timers.
    pub(crate) keep_alive: Arc<TimerPool>,
    /// 2026-07-28 exchange deferral timers.
    pub(crate) deferral: Arc<TimerPool>,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::time::Duration;

    use super::*;

    /// A pooled timer fires at its new deadline (not its old one) and returns to the pool;
    /// a timer of another runtime is not reused.
    #[test]
    fn recycled_timers_keep_their_new_deadline_and_runtime() {
        let pool = Arc::new(TimerPool::default());
        let rt = || {
            tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .start_paused(true)
                .build()
                .unwrap()
        };
        let first = rt();
        first.block_on(async {
            tokio::time::timeout(Duration::from_secs(60), async {
                let start = Instant::now();
                pool.sleep_until(start + Duration::from_secs(1)).await;
                assert_eq!(pool.len(), 1);
                // The recycled timer (due at 1 s) is moved to 3 s.
                pool.sleep_until(start + Duration::from_secs(3)).await;
                assert_eq!(start.elapsed(), Duration::from_secs(3));
                assert_eq!(pool.len(), 1);
            })
            .await
            .unwrap();
        });
        drop(first);
        rt().block_on(async {
            assert!(
                pool.take().is_none(),
                "the other runtime's timer is dropped"
            );
            assert_eq!(pool.len(), 0);
            let start = Instant::now();
            tokio::time::timeout(
                Duration::from_secs(60),
                pool.sleep_until(start + Duration::from_secs(2)),
            )
            .await
            .unwrap();
            assert_eq!(start.elapsed(), Duration::from_secs(2));
        });
    }
}
