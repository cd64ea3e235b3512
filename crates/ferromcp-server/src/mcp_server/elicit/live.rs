//! Handshake-era (≤ 2025-11-25) requests to the client, related to the request being served
//! (over Streamable HTTP they travel on that request's SSE stream).

use ferromcp_dispatch::{BoxFuture, CallOptions};
use ferromcp_types::jsonrpc::{ErrorCode, ErrorObject, Payload};
use ferromcp_types::mcp::{
    ClientCapabilities, CreateMessageRequestParams, CreateMessageResult, ElicitAction,
    ElicitRequestFormParams, ElicitRequestParams, ElicitRequestUrlParams, ElicitResult,
    ElicitationCapability, ElicitationSchema, InputRequest, JsonObject, ListRootsResult,
    MissingRequiredClientCapabilityData, RootsCapability, SamplingCapability,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

use std::sync::Arc;

use super::{ElicitForm, Elicitation, decode_answer};
use crate::context::RequestContext;
use crate::mcp_server::Ask;
use crate::mcp_server::resolve::LazyAsk;
use crate::tasks::TaskScope;

/// -32021 with `data.requiredCapabilities` = `required`.
pub(crate) fn missing_capability(required: ClientCapabilities) -> ErrorObject {
    let data = MissingRequiredClientCapabilityData::new(required);
    ErrorObject::new(
        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        "Missing required client capability",
    )
    .with_data(serde_json::to_value(data).unwrap_or(Value::Null))
}

/// Whether the client declared what `request` needs; -32021 naming it if not.
pub(crate) fn check_capability(
    caps: Option<&ClientCapabilities>,
    request: &InputRequest,
) -> Result<(), ErrorObject> {
    let (ok, required) = match request {
        InputRequest::Elicit(ElicitRequestParams::Url(_)) => (
            caps.and_then(|c| c.elicitation.as_ref())
                .is_some_and(ElicitationCapability::supports_url),
            ClientCapabilities::new()
                .with_elicitation(ElicitationCapability::new().with_url(JsonObject::new())),
        ),
        InputRequest::Elicit(_) => (
            caps.and_then(|c| c.elicitation.as_ref())
                .is_some_and(ElicitationCapability::supports_form),
            ClientCapabilities::new().with_elicitation(ElicitationCapability::new()),
        ),
        InputRequest::CreateMessage(_) => (
            caps.is_some_and(|c| c.sampling.is_some()),
            ClientCapabilities::new().with_sampling(SamplingCapability::new()),
        ),
        InputRequest::ListRoots(_) => (
            caps.is_some_and(|c| c.roots.is_some()),
            ClientCapabilities::new().with_roots(RootsCapability::new()),
        ),
        // Future request kinds: let the client decide.
        _ => (true, ClientCapabilities::new()),
    };
    if ok {
        Ok(())
    } else {
        Err(missing_capability(required))
    }
}

fn modern_no_back_channel() -> ErrorObject {
    ferromcp_dispatch::SendRefused::NoBackChannel.error(
        "no back channel: at MCP 2026-07-28 a server cannot send requests to the client; ask \
         through a resolver (`Resolved<R>` / `Ask`), which answers with an InputRequiredResult",
    )
}

impl RequestContext {
    /// Sends `request` to the client as a request related to this one and decodes the
    /// answer; -32021 when the client did not declare the capability (nothing is sent). At
    /// 2026-07-28 inside a high-level handler the question joins the round's
    /// `InputRequiredResult` (see [`Ask`](crate::mcp_server::Ask)); elsewhere at 2026-07-28
    /// or without a back channel it is -32600.
    pub(crate) async fn ask_live<R: DeserializeOwned>(
        &self,
        request: &InputRequest,
    ) -> Result<R, ErrorObject> {
        // Inside a task (either era) the question parks the task until the client answers.
        let task = self.extensions().get::<Arc<TaskScope>>();
        if task.is_some() || self.protocol_version().is_modern() {
            let asked: BoxFuture<'_, _> = match (task, self.extensions().get::<Ask>()) {
                (Some(task), _) => Box::pin(task.ask(self, request)),
                (None, Some(ask)) => Box::pin(ask.inline(request.clone())),
                (None, None) => match self.extensions().get::<LazyAsk>() {
                    Some(lazy) => Box::pin(lazy.get(self).inline(request.clone())),
                    None => return Err(modern_no_back_channel()),
                },
            };
            let response = asked.await?;
            let value = serde_json::to_value(response)
                .map_err(|_| ErrorObject::internal_error("Internal error"))?;
            return serde_json::from_value(value).map_err(|e| {
                tracing::debug!(method = request.method(), error = %e, "invalid answer");
                ErrorObject::invalid_params(format!(
                    "invalid answer to {}: {}",
                    request.method(),
                    crate::deserialize_reason::serde_reason(&e)
                ))
            });
        }
        check_capability(self.connection().client_capabilities().as_ref(), request)?;
        let params = match request {
            InputRequest::CreateMessage(p) => Payload::from_serialize(p),
            InputRequest::ListRoots(p) => Payload::from_serialize(p),
            InputRequest::Elicit(p) => Payload::from_serialize(p),
            _ => return Err(ErrorObject::internal_error("Internal error")),
        }
        .map_err(|_| ErrorObject::internal_error("Internal error"))?;
        let params = match request {
            InputRequest::ListRoots(None) => None,
            _ => Some(params),
        };
        let sent = self
            .peer()
            .send_request(request.method(), params, CallOptions::new());
        let answer = tokio::select! {
            r = sent => r?,
            () = self.cancellation().cancelled() => {
                return Err(ErrorObject::new(ErrorCode::REQUEST_CANCELLED, "Request cancelled"));
            }
        };
        let value = answer.into_value().map_err(|e| {
            tracing::debug!(method = request.method(), error = %e, "unreadable answer");
            ErrorObject::invalid_params(format!(
                "the client's answer to {} is not valid JSON",
                request.method()
            ))
        })?;
        serde_json::from_value(value).map_err(|e| {
            tracing::debug!(method = request.method(), error = %e, "invalid answer");
            ErrorObject::invalid_params(format!(
                "the client's answer to {} is not valid: {}",
                request.method(),
                crate::deserialize_reason::serde_reason(&e)
            ))
        })
    }

    /// Asks the user to fill in the form `T` (`elicitation/create`, form mode) and reads the
    /// answer. An accepted answer that does not fit the form is -32602; a `T` that is not a
    /// valid form is -32603 (see [`ElicitForm`]); a client without the `elicitation`
    /// capability is -32021 (nothing is sent).
    ///
    /// # Eras
    ///
    /// Before 2026-07-28 this is a live request related to the current one. At 2026-07-28,
    /// inside a high-level tool, prompt or resource handler, the question joins the round's
    /// `InputRequiredResult` under a key by call order (`elicitation-1`, `sampling-2`…): the
    /// method returns an error, the handler's result is dropped, and on the retry the handler
    /// runs again from the start and gets the answer. So the handler must ask the same
    /// questions in the same order each time and should do nothing irreversible before its
    /// last question; resolvers ([`Ask`](crate::mcp_server::Ask)) make that explicit and are
    /// the better fit for new code. Outside those handlers at 2026-07-28 it is -32600 (no
    /// back channel).
    pub async fn elicit_form<T: ElicitForm>(
        &self,
        message: impl Into<String>,
    ) -> Result<Elicitation<T>, ErrorObject> {
        let form = T::form().map_err(|e| e.to_error_object())?;
        let result = self.elicit_form_raw(message, form.clone()).await?;
        decode_answer(&form, &result).map_err(|e| {
            ErrorObject::invalid_params(format!("the elicitation answer does not fit: {e}"))
        })
    }

    /// Asks the user to fill in a form given as a schema; the answer is returned as sent
    /// (both eras as for [`RequestContext::elicit_form`]).
    pub async fn elicit_form_raw(
        &self,
        message: impl Into<String>,
        schema: ElicitationSchema,
    ) -> Result<ElicitResult, ErrorObject> {
        let params = ElicitRequestFormParams::new(message, schema);
        self.ask_live(&InputRequest::Elicit(params.into())).await
    }

    /// Asks the user to open `url` (`elicitation/create`, URL mode, 2025-11-25; needs the
    /// client's `elicitation.url` capability) and returns whether they consented (both eras
    /// as for [`RequestContext::elicit_form`]).
    pub async fn elicit_url(
        &self,
        message: impl Into<String>,
        url: impl Into<String>,
        elicitation_id: impl Into<String>,
    ) -> Result<ElicitAction, ErrorObject> {
        let params = ElicitRequestUrlParams::new(message, url).with_elicitation_id(elicitation_id);
        let result: ElicitResult = self.ask_live(&InputRequest::Elicit(params.into())).await?;
        Ok(result.action)
    }

    /// Asks the client's model for a completion (`sampling/createMessage`; needs the
    /// client's `sampling` capability; both eras as for [`RequestContext::elicit_form`]).
    ///
    /// Sampling is deprecated at MCP 2026-07-28 (still served, as an input request).
    pub async fn create_message(
        &self,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, ErrorObject> {
        self.ask_live(&InputRequest::CreateMessage(params)).await
    }

    /// Asks the client for its roots (`roots/list`; needs the client's `roots` capability;
    /// both eras as for [`RequestContext::elicit_form`]).
    ///
    /// Roots are deprecated at MCP 2026-07-28 (still served, as an input request).
    pub async fn list_roots(&self) -> Result<ListRootsResult, ErrorObject> {
        self.ask_live(&InputRequest::ListRoots(None)).await
    }
}
