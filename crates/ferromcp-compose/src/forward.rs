//! One request forwarded to a backend: the limits, progress, cancellation, the rounds of a
//! 2026-07-28 backend, and a clear error when the backend fails.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use ferromcp_client::{Client, ClientError, RequestOptions};
use ferromcp_server::RequestContext;
use ferromcp_types::Era;
use ferromcp_types::jsonrpc::{ErrorCode, ErrorObject};
use ferromcp_types::mcp::methods::{CallTool, GetPrompt, ReadResource, Request};
use ferromcp_types::mcp::{
    CallToolRequestParams, CallToolResult, GetPromptRequestParams, InputResponses, LoggingLevel,
    MaybeInputRequired, Meta, ReadResourceRequestParams,
};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};

use crate::bridge::{Inflight, ask_front};
use crate::report::{NO_PROGRESS, Report, report, reporting};

/// A request that may answer `input_required` at 2026-07-28, and how its retry carries the
/// answers.
pub(crate) trait Resumable:
    Request<Params: Clone + Send + Sync, Result: Send> + Sized
{
    /// Puts this round's answers and the backend's state into the retry's params.
    fn resume(params: &mut Self::Params, responses: InputResponses, state: Option<String>);

    /// Sends one round to the backend for the front request `ctx`.
    fn once(
        route: &Route,
        ctx: &RequestContext,
        params: Self::Params,
        opts: RequestOptions,
        reports: &mpsc::Sender<Report>,
    ) -> impl Future<Output = Result<MaybeInputRequired<Self::Result>, ErrorObject>> + Send {
        let _ = (ctx, reports);
        async move {
            route
                .client
                .request_once::<Self>(params, opts)
                .await
                .map_err(|e| route.client_error(Self::METHOD, e))
        }
    }
}

impl Resumable for CallTool {
    fn resume(
        params: &mut CallToolRequestParams,
        responses: InputResponses,
        state: Option<String>,
    ) {
        params.input_responses = Some(responses);
        params.request_state = state;
    }

    /// A task a 2026-07-28 backend makes of the call is followed (crate::task).
    async fn once(
        route: &Route,
        ctx: &RequestContext,
        params: CallToolRequestParams,
        opts: RequestOptions,
        reports: &mpsc::Sender<Report>,
    ) -> Result<MaybeInputRequired<CallToolResult>, ErrorObject> {
        route.call_once(ctx, params, opts, reports).await
    }
}

impl Resumable for GetPrompt {
    fn resume(
        params: &mut GetPromptRequestParams,
        responses: InputResponses,
        state: Option<String>,
    ) {
        params.input_responses = Some(responses);
        params.request_state = state;
    }
}

impl Resumable for ReadResource {
    fn resume(
        params: &mut ReadResourceRequestParams,
        responses: InputResponses,
        state: Option<String>,
    ) {
        params.input_responses = Some(responses);
        params.request_state = state;
    }
}

/// What forwarding to one backend needs.
pub(crate) struct Route {
    pub(crate) mount: Arc<str>,
    pub(crate) client: Client,
    pub(crate) inflight: Arc<Inflight>,
    /// This backend's bound on forwarded requests.
    pub(crate) permits: Arc<Semaphore>,
    /// The bound shared by every backend of the composed server.
    pub(crate) total: Arc<Semaphore>,
    pub(crate) timeout: Duration,
    pub(crate) max_rounds: u32,
    /// This backend's bound on the front tasks following backend tasks.
    pub(crate) tasks: Arc<Semaphore>,
    /// The reports one forwarded request may queue (`Backend::max_queued_reports`).
    pub(crate) max_queued_reports: usize,
    /// How many reports this backend's forwarded requests dropped, their queue full.
    pub(crate) dropped_reports: Arc<AtomicU64>,
}

/// How long a backend that answered `input_required` with no question waits before the retry.
const STATE_ONLY_WAIT: Duration = Duration::from_millis(50);

impl Route {
    pub(crate) fn admit(
        &self,
    ) -> Result<(OwnedSemaphorePermit, OwnedSemaphorePermit), ErrorObject> {
        let mount = &self.mount;
        let own = self.permits.clone().try_acquire_owned().map_err(|_| {
            ErrorObject::internal_error(format!(
                "composed server: backend {mount:?} already has its maximum of requests in \
                 flight (Backend::max_in_flight)"
            ))
        })?;
        let total = self.total.clone().try_acquire_owned().map_err(|_| {
            ErrorObject::internal_error(
                "composed server: the maximum of requests forwarded at a time is reached \
                 (ComposerBuilder::max_in_flight)",
            )
        })?;
        Ok((own, total))
    }

    /// Forwards `params` as `R` on behalf of the front request `ctx`: the backend's progress
    /// is reported on `ctx`, the front's cancellation cancels the backend request, and the
    /// backend's questions are asked of the front client.
    pub(crate) async fn forward<R: Resumable>(
        &self,
        ctx: &RequestContext,
        params: R::Params,
    ) -> Result<R::Result, ErrorObject> {
        self.relay(ctx, |opts, reports| async move {
            self.rounds::<R>(ctx, params, opts, &reports, None).await
        })
        .await
    }

    /// Runs `work` (given the request options and the queue of the backend's reports) as a
    /// request forwarded for `ctx`: within this backend's and the total bound on requests in
    /// flight, with the backend's progress, log records and task status reported on `ctx`, and dropped (which cancels the backend request) when the front
    /// request is cancelled.
    pub(crate) async fn relay<'a, T, F, Fut>(
        &'a self,
        ctx: &'a RequestContext,
        work: F,
    ) -> Result<T, ErrorObject>
    where
        F: FnOnce(RequestOptions, mpsc::Sender<Report>) -> Fut,
        Fut: std::future::Future<Output = Result<T, ErrorObject>> + 'a,
    {
        let _permits = self.admit()?;
        let _inflight = self.inflight.enter(ctx.clone());
        let (tx, mut rx) = mpsc::channel(self.max_queued_reports);
        let opts = self.reporting_options(ctx, &tx);
        let work = work(opts, tx);
        tokio::pin!(work);
        let mut last = NO_PROGRESS;
        loop {
            tokio::select! {
                biased;
                () = ctx.cancellation().cancelled() => {
                    // Dropping `work` sends `notifications/cancelled` to the backend.
                    return Err(ErrorObject::internal_error("composed server: the request was cancelled"));
                }
                done = &mut work => {
                    // What came before the answer goes before it.
                    while let Ok(r) = rx.try_recv() {
                        report(ctx, r, &mut last).await;
                    }
                    return done;
                }
                Some(r) = rx.recv() => report(ctx, r, &mut last).await,
            }
        }
    }

    /// [`Route::options`] with the backend request's progress and related log records queued
    /// on `reports`: what [`Route::relay`] hands its work.
    pub(crate) fn reporting_options(
        &self,
        ctx: &RequestContext,
        reports: &mpsc::Sender<Report>,
    ) -> RequestOptions {
        reporting(
            self.options(ctx),
            reports,
            &self.mount,
            &self.dropped_reports,
        )
    }

    /// The options of a request forwarded for `ctx`: the backend timeout and, to a 2026-07-28
    /// backend (which has no `logging/setLevel`), the log level the front request allows as
    /// `_meta["io.modelcontextprotocol/logLevel"]`.
    pub(crate) fn options(&self, ctx: &RequestContext) -> RequestOptions {
        let opts = RequestOptions::new().timeout(self.timeout);
        if self.client.session().era != Era::Modern {
            return opts;
        }
        match front_log_level(ctx) {
            Some(level) => opts.meta(Meta::new().with_log_level(level)),
            None => opts,
        }
    }

    /// Sends `params` and drives a 2026-07-28 backend's `input_required` rounds; `first`: the
    /// backend's answer to `params` when it came already (the raw path's).
    pub(crate) async fn rounds<R: Resumable>(
        &self,
        ctx: &RequestContext,
        mut params: R::Params,
        opts: RequestOptions,
        reports: &mpsc::Sender<Report>,
        mut first: Option<MaybeInputRequired<R::Result>>,
    ) -> Result<R::Result, ErrorObject> {
        let mut rounds = 0u32;
        loop {
            let answer = match first.take() {
                Some(answer) => answer,
                None => R::once(self, ctx, params.clone(), opts.clone(), reports).await?,
            };
            let input = match answer {
                MaybeInputRequired::Complete(result) => return Ok(result),
                MaybeInputRequired::InputRequired(input) => input,
            };
            rounds += 1;
            if rounds > self.max_rounds {
                return Err(ErrorObject::internal_error(format!(
                    "composed server: backend {:?} still required input after {} rounds",
                    self.mount, self.max_rounds
                )));
            }
            let requests = input.input_requests.unwrap_or_default();
            if requests.is_empty() {
                tokio::time::sleep(STATE_ONLY_WAIT).await;
            }
            // Every question of the round is asked, in key order, even after one fails: at
            // 2026-07-28 in front they all join the same `InputRequiredResult`, under keys in
            // the same order on every run.
            let mut responses = InputResponses::new();
            let mut first_error = None;
            for (key, request) in requests {
                match ask_front(ctx, request).await {
                    Ok(response) => {
                        responses.insert(key, response);
                    }
                    Err(e) => {
                        first_error.get_or_insert(e);
                    }
                }
            }
            if let Some(e) = first_error {
                return Err(e);
            }
            R::resume(&mut params, responses, input.request_state);
        }
    }

    /// The front's answer when the backend request failed: the backend's own protocol error
    /// as it came, anything else (the backend died, timed out, answered nonsense) -32603
    /// naming the backend.
    pub(crate) fn client_error(&self, method: &str, e: ClientError) -> ErrorObject {
        let mount = &self.mount;
        match e {
            ClientError::Protocol(e) if e.code == ErrorCode::REQUEST_TIMEOUT => ErrorObject::new(
                e.code,
                format!("composed server: backend {mount:?} did not answer {method} in time"),
            ),
            ClientError::Protocol(e) if e.code == ErrorCode::CONNECTION_CLOSED => {
                tracing::warn!(mount = %mount, method, "backend connection closed");
                ErrorObject::internal_error(format!(
                    "composed server: backend {mount:?} is unavailable (its connection closed) \
                     on {method}"
                ))
            }
            ClientError::Protocol(e) => e,
            other => {
                tracing::warn!(mount = %mount, method, error = %other, "backend request failed");
                ErrorObject::internal_error(format!(
                    "composed server: backend {mount:?} failed on {method}: {other}"
                ))
            }
        }
    }
}

/// The least severe log level the front request `ctx` lets through: at 2026-07-28 the level
/// it opted in with (none: no records); before, the level its session set with
/// `logging/setLevel` (every level when it set none).
fn front_log_level(ctx: &RequestContext) -> Option<LoggingLevel> {
    if ctx.protocol_version().is_modern() {
        return ctx.meta().and_then(Meta::log_level).and_then(Result::ok);
    }
    Some(ctx.connection().log_level().unwrap_or(LoggingLevel::Debug))
}
