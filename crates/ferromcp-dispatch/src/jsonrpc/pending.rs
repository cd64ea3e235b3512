//! Outbound requests: id allocation, the pending table, timeouts and courtesy cancellation.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use ferromcp_jsonrpc::{ErrorObject, Message, Payload, Request, RequestId};
use tokio::sync::{Notify, oneshot};

use super::{Shared, lock};
use crate::options::{CallOptions, KeepProgress, Progress, ProgressCallback};
use crate::transport::MessageMeta;
use crate::utility::{CANCELLED, cancelled_params, with_meta};
use crate::wait::{Outcome, wait_for_answer};

/// How long a courtesy `notifications/cancelled` may take to write.
const COURTESY_CANCEL_BOUND: Duration = Duration::from_secs(5);

pub(crate) type Answer = Result<Payload, ErrorObject>;

/// A request waiting for its answer.
pub(crate) struct PendingEntry {
    pub(crate) tx: oneshot::Sender<Answer>,
    on_progress: Option<ProgressCallback>,
    /// Woken by progress, to restart the per-request timeout.
    progressed: Option<Arc<Notify>>,
    /// Keeps `on_progress` routed after a successful answer.
    keep: Option<KeepProgress>,
}

impl Shared {
    /// Registers a pending request under the caller's id or a freshly minted one.
    fn register(
        &self,
        id: Option<RequestId>,
        entry: PendingEntry,
    ) -> Result<RequestId, ErrorObject> {
        let mut pending = lock(&self.pending);
        if self.is_closed() {
            return Err(ErrorObject::connection_closed());
        }
        let id = match id {
            Some(id) if pending.contains_key(&id) => {
                return Err(ErrorObject::invalid_request(format!(
                    "request id {id} is already in flight"
                )));
            }
            Some(id) => id,
            None => loop {
                let id = RequestId::Number(self.next_id.fetch_add(1, Ordering::Relaxed) + 1);
                if !pending.contains_key(&id) {
                    break id;
                }
            },
        };
        pending.insert(id.clone(), entry);
        Ok(id)
    }

    /// Hands an answer to the request's caller; late and unknown answers are dropped.
    pub(crate) fn resolve(&self, id: &RequestId, answer: Answer) {
        let entry = lock(&self.pending).remove(id);
        match entry {
            Some(entry) => {
                if answer.is_ok() {
                    self.keep_route(id, &entry);
                }
                let _ = entry.tx.send(answer);
            }
            None => tracing::debug!(%id, "dropped a response to an unknown or finished request"),
        }
    }

    /// Moves an answered request's progress callback to the kept routes, when its caller
    /// asked for that; the caller's [`KeepProgress`] ends the route.
    fn keep_route(&self, id: &RequestId, entry: &PendingEntry) {
        let (Some(keep), Some(cb)) = (&entry.keep, &entry.on_progress) else {
            return;
        };
        let generation = self.next_keep.fetch_add(1, Ordering::Relaxed);
        lock(&self.kept).insert(id.clone(), (generation, cb.clone()));
        let kept = Arc::downgrade(&self.kept);
        let token = id.clone();
        let release = Box::new(move || {
            if let Some(kept) = kept.upgrade() {
                let mut kept = lock(&kept);
                if kept.get(&token).is_some_and(|(g, _)| *g == generation) {
                    kept.remove(&token);
                }
            }
        });
        if !keep.arm(release) {
            let mut kept = lock(&self.kept);
            if kept.get(id).is_some_and(|(g, _)| *g == generation) {
                kept.remove(id);
            }
        }
    }

    /// Hands a progress report to the request's progress callback, if it has one: the
    /// pending request's, else a kept route's.
    pub(crate) fn deliver_progress(&self, token: &RequestId, progress: Progress) {
        let pending = lock(&self.pending)
            .get(token)
            .map(|e| (e.on_progress.clone(), e.progressed.clone()));
        let target = pending.or_else(|| {
            lock(&self.kept)
                .get(token)
                .map(|(_, cb)| (Some(cb.clone()), None))
        });
        match target {
            Some((cb, progressed)) => {
                if let Some(n) = progressed {
                    n.notify_one();
                }
                if let Some(cb) = cb {
                    cb(progress);
                }
            }
            None => tracing::debug!(%token, "dropped progress for an unknown request"),
        }
    }

    async fn courtesy_cancel(&self, id: &RequestId, reason: &str, related: Option<RequestId>) {
        if self.is_closed() {
            return;
        }
        let meta = related.map(MessageMeta::related_to).unwrap_or_default();
        let message = Message::Notification(ferromcp_jsonrpc::Notification::new(
            CANCELLED,
            Some(cancelled_params(id, reason)),
        ));
        let _ = tokio::time::timeout(COURTESY_CANCEL_BOUND, self.write(message, meta)).await;
    }
}

/// Removes the pending entry when the caller's future ends early, and tells the peer.
struct Abandon {
    shared: Arc<Shared>,
    id: RequestId,
    related: Option<RequestId>,
    cancel: bool,
    written: bool,
    armed: bool,
}

impl Drop for Abandon {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let removed = lock(&self.shared.pending).remove(&self.id).is_some();
        if !(removed && self.cancel && self.written) {
            return;
        }
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            let shared = self.shared.clone();
            let id = self.id.clone();
            let related = self.related.take();
            rt.spawn(async move {
                shared
                    .courtesy_cancel(&id, "caller cancelled", related)
                    .await;
            });
        }
    }
}

/// Sends a request and waits for its answer.
pub(super) async fn request(
    shared: Arc<Shared>,
    method: String,
    params: Option<Payload>,
    options: CallOptions,
    related: Option<RequestId>,
) -> Answer {
    let cancel = options.cancels_on_abandon();
    let (tx, rx) = oneshot::channel();
    let progressed = (options.on_progress.is_some() && options.timeout.is_some())
        .then(|| Arc::new(Notify::new()));
    let with_progress = options.on_progress.is_some();
    let entry = PendingEntry {
        tx,
        on_progress: options.on_progress,
        progressed: progressed.clone(),
        keep: options.keep_progress,
    };
    let id = shared.register(options.request_id, entry)?;
    if let Some(on_id) = &options.on_id {
        on_id(&id);
    }
    let mut guard = Abandon {
        shared: shared.clone(),
        id: id.clone(),
        related: related.clone(),
        cancel,
        written: false,
        armed: true,
    };
    let params = with_meta(params, with_progress.then_some(&id), options.meta.as_ref());
    let meta = MessageMeta {
        related_request_id: related.clone(),
        headers: options.headers,
        resumption: options.resumption,
        ..MessageMeta::default()
    };
    let message = Message::Request(Request {
        id: id.clone(),
        method,
        params: Some(params),
    });
    guard.written = true;
    if !shared.write(message, meta).await {
        guard.cancel = false;
        return Err(ErrorObject::connection_closed());
    }
    let outcome = wait_for_answer(
        async {
            rx.await
                .unwrap_or_else(|_| Err(ErrorObject::connection_closed()))
        },
        options.timeout,
        options.max_total_timeout,
        progressed.as_deref(),
    )
    .await;
    match outcome {
        Outcome::Answer(answer) => {
            guard.armed = false;
            answer
        }
        Outcome::TimedOut(after) => {
            guard.armed = false;
            let removed = lock(&shared.pending).remove(&id).is_some();
            if removed && cancel {
                let reason = format!("timed out after {after:?}");
                shared.courtesy_cancel(&id, &reason, related).await;
            }
            Err(ErrorObject::request_timeout())
        }
    }
}
