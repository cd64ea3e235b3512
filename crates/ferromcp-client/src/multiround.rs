//! The multi-round driver (2026-07-28, SEP-2322).
//!
//! When `tools/call`, `prompts/get` or `resources/read` answers `resultType:
//! "input_required"`, the driver runs the client's handlers for every input request at once
//! (the first failure cancels the others and fails the call), then retries the same method,
//! as a new request, with `inputResponses` and the echoed `requestState`. A round that only
//! carries state waits first (50 ms, doubling up to 250 ms; a round with requests resets the
//! wait). After [`ClientBuilder::max_rounds`](crate::ClientBuilder::max_rounds) retries
//! (default [`DEFAULT_MAX_ROUNDS`]) that still need input, the call fails with
//! [`ClientError::RoundsExceeded`].

use std::sync::Arc;
use std::time::Duration;

use ferromcp_types::jsonrpc::ErrorObject;
use ferromcp_types::mcp::{InputRequests, InputRequiredResult, InputResponses, JsonObject};
use serde_json::Value;
use tokio::task::JoinSet;

use crate::client::{Inner, result_type};
use crate::error::ClientError;
use crate::handlers::Handlers;
use crate::options::RequestOptions;

/// The default bound on input-required retries.
pub const DEFAULT_MAX_ROUNDS: u32 = 10;

const FIRST_BACKOFF: Duration = Duration::from_millis(50);
const MAX_BACKOFF: Duration = Duration::from_millis(250);

/// Sends `method` until its result is not input-required, at most `max_rounds` retries.
pub(crate) async fn drive(
    inner: &Inner,
    method: &str,
    mut params: JsonObject,
    opts: &RequestOptions,
) -> Result<Value, ClientError> {
    let max_rounds = inner.settings.max_rounds;
    let mut backoff = FIRST_BACKOFF;
    let mut rounds = 0u32;
    loop {
        let call = inner.call_options(method, opts);
        let value = inner
            .send_once(method, params.clone(), opts, call, true)
            .await?;
        if result_type(&value) != Some("input_required") {
            return Ok(value);
        }
        if rounds >= max_rounds {
            return Err(ClientError::RoundsExceeded {
                method: method.to_owned(),
                rounds,
            });
        }
        rounds += 1;
        let input: InputRequiredResult =
            serde_json::from_value(value).map_err(|e| ClientError::decode(method, e))?;
        match input.input_requests.filter(|r| !r.is_empty()) {
            Some(requests) => {
                backoff = FIRST_BACKOFF;
                let responses = answer_all(&inner.handlers, requests).await?;
                let responses =
                    serde_json::to_value(&responses).map_err(|e| ClientError::decode(method, e))?;
                params.insert("inputResponses".into(), responses);
            }
            None => {
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_BACKOFF);
                params.remove("inputResponses");
            }
        }
        match input.request_state {
            Some(state) => {
                params.insert("requestState".into(), Value::String(state));
            }
            None => {
                params.remove("requestState");
            }
        }
        tracing::debug!(method, round = rounds, "retrying with input responses");
    }
}

/// Runs every input request's handler concurrently; the first error aborts the rest.
pub(crate) async fn answer_all(
    handlers: &Arc<Handlers>,
    requests: InputRequests,
) -> Result<InputResponses, ClientError> {
    let mut set = JoinSet::new();
    for (key, request) in requests {
        let handlers = handlers.clone();
        set.spawn(async move { (key, handlers.answer(request).await) });
    }
    let mut responses = InputResponses::new();
    while let Some(joined) = set.join_next().await {
        match joined {
            Ok((key, Ok(response))) => {
                responses.insert(key, response);
            }
            Ok((_, Err(e))) => {
                set.abort_all();
                return Err(ClientError::Protocol(e));
            }
            Err(e) => {
                set.abort_all();
                tracing::warn!(error = %e, "an input request handler panicked");
                return Err(ClientError::Protocol(ErrorObject::internal_error(
                    "an input request handler failed",
                )));
            }
        }
    }
    Ok(responses)
}
