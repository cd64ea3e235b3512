//! A backend's questions (elicitation, sampling, roots) asked of the front client, in
//! whichever era each side speaks.
//!
//! - A 2026-07-28 backend answers `input_required`: the forwarding call itself asks each
//!   input request of the front (see [`ask_front`]) and retries, so the answers go to the
//!   call that asked, by construction.
//! - A handshake-era backend sends live server→client requests, which carry nothing naming
//!   the request they belong to. They go to the one call in flight on that backend
//!   ([`Inflight::sole`]); with several in flight the question is refused (-32603), never
//!   guessed.
//!
//! On the front, [`RequestContext`]'s questions are live requests before 2026-07-28 and join
//! the round's `InputRequiredResult` at 2026-07-28 (the forwarding call then runs again on the
//! client's retry, and this time finds the answers).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use ferromcp_client::ClientBuilder;
use ferromcp_server::RequestContext;
use ferromcp_types::jsonrpc::ErrorObject;
use ferromcp_types::mcp::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    InputRequest, InputResponse, ListRootsResult,
};

/// The front requests being forwarded to one backend, by a local number.
#[derive(Default)]
pub(crate) struct Inflight {
    next: AtomicU64,
    calls: Mutex<HashMap<u64, RequestContext>>,
}

/// Removes its call from [`Inflight`] when dropped.
pub(crate) struct InflightGuard {
    inflight: Arc<Inflight>,
    id: u64,
}

impl Drop for InflightGuard {
    fn drop(&mut self) {
        self.inflight.lock().remove(&self.id);
    }
}

impl Inflight {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, RequestContext>> {
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records a front request forwarded to the backend until the guard drops.
    pub(crate) fn enter(self: &Arc<Self>, ctx: RequestContext) -> InflightGuard {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.lock().insert(id, ctx);
        InflightGuard {
            inflight: self.clone(),
            id,
        }
    }

    /// The front request a handshake-era backend's request belongs to: the only one in
    /// flight. Several make it ambiguous, none makes it unrelated: both are refused.
    pub(crate) fn sole(&self, mount: &str, what: &str) -> Result<RequestContext, ErrorObject> {
        let calls = self.lock();
        let mut it = calls.values();
        match (it.next(), it.next()) {
            (Some(ctx), None) => Ok(ctx.clone()),
            (None, _) => Err(ErrorObject::internal_error(format!(
                "composed server: backend {mount:?} sent {what} outside any forwarded request"
            ))),
            (Some(_), Some(_)) => Err(ErrorObject::internal_error(format!(
                "composed server: backend {mount:?} sent {what} while {} requests are forwarded \
                 to it; a handshake-era backend's requests name no request, so it cannot be \
                 told which caller to ask (serve the backend at 2026-07-28, or limit it to one \
                 request at a time with Backend::max_in_flight(1))",
                calls.len()
            ))),
        }
    }
}

/// Asks the front client `request` on behalf of a backend, as `ctx`'s request.
pub(crate) async fn ask_front(
    ctx: &RequestContext,
    request: InputRequest,
) -> Result<InputResponse, ErrorObject> {
    match request {
        InputRequest::Elicit(ElicitRequestParams::Form(form)) => ctx
            .elicit_form_raw(form.message, form.requested_schema)
            .await
            .map(InputResponse::Elicit),
        InputRequest::Elicit(ElicitRequestParams::Url(url)) => {
            let id = url.elicitation_id.unwrap_or_else(|| {
                format!(
                    "compose-{}",
                    ctx.request_id().map_or_else(String::new, |i| i.to_string())
                )
            });
            let action = ctx.elicit_url(url.message, url.url, id).await?;
            Ok(InputResponse::Elicit(ElicitResult::new(action)))
        }
        InputRequest::CreateMessage(params) => ctx
            .create_message(params)
            .await
            .map(InputResponse::CreateMessage),
        InputRequest::ListRoots(_) => ctx.list_roots().await.map(InputResponse::ListRoots),
        other => Err(ErrorObject::invalid_request(format!(
            "composed server: the backend's input request {:?} cannot be forwarded",
            other.method()
        ))),
    }
}

fn mismatch() -> ErrorObject {
    ErrorObject::internal_error("composed server: the front client's answer has the wrong kind")
}

/// Installs the handlers that carry a handshake-era backend's live requests to the front.
pub(crate) fn install(
    builder: ClientBuilder,
    mount: &Arc<str>,
    inflight: &Arc<Inflight>,
) -> ClientBuilder {
    let (m1, i1) = (mount.clone(), inflight.clone());
    let (m2, i2) = (mount.clone(), inflight.clone());
    let (m3, i3) = (mount.clone(), inflight.clone());
    builder
        .elicitation_modes(true, true)
        .on_elicitation(move |params: ElicitRequestParams| {
            let (mount, inflight) = (m1.clone(), i1.clone());
            async move {
                let ctx = inflight.sole(&mount, "elicitation/create")?;
                match ask_front(&ctx, InputRequest::Elicit(params)).await? {
                    InputResponse::Elicit(r) => Ok::<ElicitResult, ErrorObject>(r),
                    _ => Err(mismatch()),
                }
            }
        })
        .on_sampling(move |params: CreateMessageRequestParams| {
            let (mount, inflight) = (m2.clone(), i2.clone());
            async move {
                let ctx = inflight.sole(&mount, "sampling/createMessage")?;
                match ask_front(&ctx, InputRequest::CreateMessage(params)).await? {
                    InputResponse::CreateMessage(r) => Ok::<CreateMessageResult, ErrorObject>(r),
                    _ => Err(mismatch()),
                }
            }
        })
        .on_roots(move || {
            let (mount, inflight) = (m3.clone(), i3.clone());
            async move {
                let ctx = inflight.sole(&mount, "roots/list")?;
                match ask_front(&ctx, InputRequest::ListRoots(None)).await? {
                    InputResponse::ListRoots(r) => Ok::<ListRootsResult, ErrorObject>(r),
                    _ => Err(mismatch()),
                }
            }
        })
}
