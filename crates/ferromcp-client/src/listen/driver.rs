//! The 2026-07-28 driver: one `subscriptions/listen` request at a time, reconnected per the
//! policy of [`ListenOptions`].

use std::sync::Arc;

use ferromcp_dispatch::CallOptions;
use ferromcp_types::jsonrpc::{ErrorCode, ErrorObject, RequestId};
use ferromcp_types::mcp::{JsonObject, methods};
use serde_json::Value;
use tokio::sync::oneshot;

use super::listener::Listener;
use super::{ListenEnd, ListenOptions, SubscriptionFilter, lock};
use crate::client::Client;
use crate::error::ClientError;
use crate::options::RequestOptions;

/// How one listen stream ended.
enum Step {
    Answer(Result<Value, ClientError>),
    ServerCancelled,
    AckTimeout,
}

/// Whether a failure of an acknowledged stream is worth a new stream.
pub(super) fn retryable(e: &ClientError) -> bool {
    let Some(e) = e.as_protocol() else {
        return false;
    };
    // An HTTP answer decides by its status (some servers send -32000 with a 400, which is
    // no dropped stream); otherwise only a broken connection or stream, or a timeout.
    let status = e
        .data
        .as_ref()
        .and_then(|d| d.get("httpStatus"))
        .and_then(Value::as_u64);
    match status {
        Some(status) => status == 429 || (500..=599).contains(&status),
        None => e.code == ErrorCode::CONNECTION_CLOSED || e.code == ErrorCode::REQUEST_TIMEOUT,
    }
}

fn failure(e: ClientError) -> ErrorObject {
    match e {
        ClientError::Protocol(e) => e,
        other => ErrorObject::internal_error(other.to_string()),
    }
}

/// Runs a 2026-07-28 subscription: one listen request at a time, reconnected per the policy.
pub(super) async fn drive(
    client: Client,
    listener: Arc<Listener>,
    filter: SubscriptionFilter,
    opts: ListenOptions,
    opened: oneshot::Sender<Result<SubscriptionFilter, ClientError>>,
) {
    let registry = client.inner.handlers.listeners.clone();
    let mut opened = Some(opened);
    let mut failures = 0u32;
    loop {
        if registry.is_ended() {
            listener.end(ListenEnd::ConnectionClosed);
            if let Some(tx) = opened.take() {
                let _ = tx.send(Err(ErrorObject::connection_closed().into()));
            }
            return;
        }
        let id = RequestId::String(format!("ferromcp-listen-{}", registry.mint()).into());
        let ack = listener.expect_ack();
        lock(&registry.state)
            .modern
            .insert(id.clone(), listener.clone());
        let mut params = JsonObject::new();
        if let Ok(f) = serde_json::to_value(&filter) {
            params.insert("notifications".into(), f);
        }
        let call = CallOptions::new().request_id(id.clone());
        let inner = client.inner.clone();
        let mut request = Box::pin(async move {
            inner
                .send_once(
                    methods::SUBSCRIPTIONS_LISTEN,
                    params,
                    &RequestOptions::new(),
                    call,
                    true,
                )
                .await
        });
        let deadline = tokio::time::sleep(opts.ack_timeout);
        tokio::pin!(deadline);
        let mut ack = Some(ack);
        let step = loop {
            // Biased, the acknowledgment first: it precedes any answer on the wire, and both
            // may be ready at once (a server that acknowledges and ends in one breath).
            tokio::select! {
                biased;
                a = async {
                    match ack.as_mut() {
                        Some(rx) => rx.await,
                        None => std::future::pending().await,
                    }
                }, if ack.is_some() => {
                    ack = None;
                    if let Ok(granted) = a {
                        failures = 0;
                        if let Some(tx) = opened.take() {
                            let _ = tx.send(Ok(granted));
                        }
                    }
                }
                r = &mut request => break Step::Answer(r),
                () = listener.server_cancel.notified() => break Step::ServerCancelled,
                () = &mut deadline, if ack.is_some() => break Step::AckTimeout,
            }
        };
        // Abandoning the request (if still pending) cancels it on the wire.
        drop(request);
        lock(&registry.state).modern.remove(&id);
        let error = match step {
            Step::Answer(Ok(_)) => {
                if let Some(tx) = opened.take() {
                    let e = ErrorObject::internal_error(
                        "the server answered subscriptions/listen without acknowledging it",
                    );
                    let _ = tx.send(Err(e.into()));
                }
                listener.end(ListenEnd::ServerClosed);
                return;
            }
            Step::ServerCancelled => {
                if let Some(tx) = opened.take() {
                    let e = ErrorObject::request_cancelled();
                    let _ = tx.send(Err(e.into()));
                }
                listener.end(ListenEnd::ServerCancelled);
                return;
            }
            Step::AckTimeout => ClientError::Protocol(ErrorObject::new(
                ErrorCode::REQUEST_TIMEOUT,
                "the server did not acknowledge subscriptions/listen in time",
            )),
            Step::Answer(Err(e)) => e,
        };
        if let Some(tx) = opened.take() {
            // Opening does not retry: the caller gets the error.
            let _ = tx.send(Err(error));
            listener.end(ListenEnd::ConnectionClosed);
            return;
        }
        if registry.is_ended() {
            listener.end(ListenEnd::ConnectionClosed);
            return;
        }
        if !retryable(&error) || failures >= opts.max_reconnects {
            tracing::debug!(error = %error, failures, "the listen stream is not re-established");
            listener.end(ListenEnd::Failed(failure(error)));
            return;
        }
        failures += 1;
        let delay = opts.backoff(failures);
        tracing::debug!(
            error = %error,
            attempt = failures,
            ?delay,
            "the listen stream dropped: reconnecting"
        );
        tokio::time::sleep(delay).await;
    }
}
