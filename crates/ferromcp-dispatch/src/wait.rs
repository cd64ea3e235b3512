//! Waiting for an answer under a per-request timeout (restarted by progress) and a maximum
//! total timeout.

use std::time::Duration;

use std::future::Future;

use tokio::sync::Notify;
use tokio::time::Instant;

/// How a wait ended.
pub(crate) enum Outcome<T> {
    /// The answer arrived.
    Answer(T),
    /// A timeout fired, after this long.
    TimedOut(Duration),
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}

async fn notified(n: Option<&Notify>) {
    match n {
        Some(n) => n.notified().await,
        None => std::future::pending().await,
    }
}

/// Waits for `answer`; `progressed` restarts the per-request timeout.
pub(crate) async fn wait_for_answer<T>(
    answer: impl Future<Output = T>,
    timeout: Option<Duration>,
    max_total: Option<Duration>,
    progressed: Option<&Notify>,
) -> Outcome<T> {
    if timeout.is_none() && max_total.is_none() {
        return Outcome::Answer(answer.await);
    }
    let mut answer = std::pin::pin!(answer);
    let start = Instant::now();
    // A bound past the end of time (e.g. `Duration::MAX`) is no bound, never an overflow.
    let hard = max_total.and_then(|d| start.checked_add(d));
    let mut soft = timeout.and_then(|d| start.checked_add(d));
    loop {
        let deadline = match (soft, hard) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        tokio::select! {
            biased;
            v = &mut answer => return Outcome::Answer(v),
            () = sleep_until(deadline) => return Outcome::TimedOut(start.elapsed()),
            () = notified(progressed) => {
                soft = timeout.and_then(|d| Instant::now().checked_add(d));
            }
        }
    }
}
