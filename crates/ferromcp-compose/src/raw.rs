//! The raw path of a mounted backend's `tools/call`: the front's params text, with the tool
//! name un-prefixed, goes to the backend, and the backend's result text comes back, with
//! neither built as typed params or a typed result on the way (issue 23 point 5), for
//! handshake-era front clients. Calls the path does not fit (a task, a 2026-07-28 front,
//! whose backend questions become the front request's rounds) take the typed path: the
//! front's tool registry and [`Route::forward`].

use std::borrow::Cow;
use std::sync::Arc;

use ferromcp_dispatch::{BoxFuture, HandlerError};
use ferromcp_server::mcp_server::ToolCallRoute;
use ferromcp_server::{McpParams, McpResultBody, RequestContext};
use ferromcp_types::Era;
use ferromcp_types::jsonrpc::{ErrorObject, RawJson};
use ferromcp_types::mcp::methods::{self, CallTool};
use ferromcp_types::mcp::{CallToolRequestParams, CallToolResult, MaybeInputRequired, TaskSupport};
use ferromcp_types::tables::{ObjectMembers, unquote};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::forward::Route;
use crate::mount::{Kind, Mount, RawTool, lock};
use crate::subscribe::Mounts;

/// The front's route for its mounts' tools.
pub(crate) struct RawTools {
    pub(crate) mounts: Mounts,
}

/// What the raw path reads of the front's params: the tool's name, its arguments' text as
/// written, and whether anything asks for the typed path.
#[derive(Default)]
struct FrontCall<'a> {
    name: Option<Cow<'a, str>>,
    arguments: Option<&'a str>,
    /// `task`, `inputResponses` or `requestState`: the typed path serves those.
    typed: bool,
}

/// [`FrontCall`] read by one walk over the top level of the front's params text (checked
/// JSON: the front's decoder read it), each member's value skipped to its end as the tables'
/// text checks do; a later member of the same name wins, as with serde. `None` (the typed path
/// decides) when the text is not an object or the name is not a string. An `arguments` of
/// `null` is none.
fn front_call(text: &str) -> Option<FrontCall<'_>> {
    let mut call = FrontCall::default();
    let mut members = ObjectMembers::new(text);
    for (key, value) in members.by_ref() {
        match &*key {
            "name" => call.name = Some(unquote(value)?),
            "arguments" => call.arguments = (value != "null").then_some(value),
            "task" | "inputResponses" | "requestState" => call.typed = true,
            _ => {}
        }
    }
    (!members.is_broken()).then_some(call)
}

impl RawTools {
    /// The mount that registered the front tool `name`, and the tool.
    fn find(&self, name: &str) -> Option<(Arc<Mount>, RawTool)> {
        // Mount names contain no '_': the mount is the name's prefix.
        let (prefix, _) = name.split_once('_')?;
        let mount = self
            .mounts
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .find(|m| &**m.name() == prefix)?
            .clone();
        if mount.is_gone() {
            return None;
        }
        // Registered now (not filtered out, not removed by a list change, not another
        // mount's after a conflict).
        if !lock(&mount.mine)
            .get(&Kind::Tool)
            .is_some_and(|names| names.contains(name))
        {
            return None;
        }
        let tool = lock(&mount.raw_tools).get(name).cloned()?;
        Some((mount, tool))
    }
}

impl ToolCallRoute for RawTools {
    fn route(
        &self,
        ctx: &RequestContext,
        params: &McpParams,
    ) -> Option<BoxFuture<'static, Result<McpResultBody, HandlerError>>> {
        // At 2026-07-28 in front, a backend's question becomes an `InputRequiredResult` of
        // the front request, which only the registry's rounds build: the typed path.
        if ctx.protocol_version().is_modern() {
            return None;
        }
        let (mount, tool, arguments) = match params.raw() {
            Some(raw) => {
                let call = front_call(raw.get())?;
                if call.typed {
                    return None;
                }
                let (mount, tool) = self.find(call.name.as_deref()?)?;
                (mount, tool, Arguments::Borrowed(call.arguments))
            }
            // Params handed over in process, or changed by a layer: a tree already.
            None => {
                let call = params.as_ref()?.as_object()?;
                if ["task", "inputResponses", "requestState"]
                    .iter()
                    .any(|k| call.contains_key(*k))
                {
                    return None;
                }
                let (mount, tool) = self.find(call.get("name")?.as_str()?)?;
                let arguments = match call.get("arguments") {
                    Some(a) => Some(serde_json::value::to_raw_value(a).ok()?),
                    None => None,
                };
                (mount, tool, Arguments::Owned(arguments))
            }
        };
        if !plain_at_front(tool.support, ctx) {
            return None;
        }
        // A 2026-07-28 backend may make a task of a task-capable tool's plain call: the typed
        // path follows it (its status, cancellation and `max_tasks` place, C59), which
        // `request_raw` does not.
        if tool.support != TaskSupport::Forbidden && mount.route.client.session().era == Era::Modern
        {
            return None;
        }
        let arguments = match &arguments {
            Arguments::Borrowed(a) => *a,
            Arguments::Owned(a) => a.as_deref().map(RawValue::get),
        };
        let params = backend_params(&tool.backend_name, arguments);
        let ctx = ctx.clone();
        Some(Box::pin(async move {
            mount
                .route
                .forward_raw_tool(&ctx, params)
                .await
                .map_err(HandlerError::Protocol)
        }))
    }
}

/// The front's arguments' text: borrowed from its params' text, or written from a tree.
enum Arguments<'a> {
    Borrowed(Option<&'a str>),
    Owned(Option<Box<RawValue>>),
}

/// Whether the front serves a call of a tool with `support` as a plain call (no task
/// param, checked by the caller): the front's own decision (a task-required tool's calls are
/// tasks; at 2026-07-28 a task-optional tool's may be).
fn plain_at_front(support: TaskSupport, ctx: &RequestContext) -> bool {
    match support {
        TaskSupport::Forbidden => true,
        TaskSupport::Optional => !ctx.protocol_version().is_modern(),
        _ => false,
    }
}

/// `{"name":NAME,"arguments":ARGUMENTS}` for the backend, written in one pass: the name
/// escaped as serde_json escapes it, the arguments' text copied as it is. `arguments` is one
/// JSON value's text, cut from the front's checked params or written by serde_json, so the
/// whole is valid by construction and not read again (issue 23 point 5).
fn backend_params(name: &str, arguments: Option<&str>) -> RawJson {
    let args_len = arguments.map_or(0, |a| a.len() + 13);
    let mut out = String::with_capacity(name.len() + args_len + 12);
    out.push_str("{\"name\":");
    match name.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\') {
        false => {
            out.push('"');
            out.push_str(name);
            out.push('"');
        }
        true => out.push_str(&serde_json::to_string(name).unwrap_or_else(|_| "\"\"".into())),
    }
    if let Some(arguments) = arguments {
        out.push_str(",\"arguments\":");
        out.push_str(arguments);
    }
    out.push('}');
    RawJson::from_valid_unchecked(out)
}

impl Route {
    /// Forwards a backend tool's call with `params` (raw) for the front request
    /// `ctx`, with the limits, progress and cancellation of [`Route::forward`]; the backend's
    /// result as the kernel takes it. A backend that asks for input (2026-07-28) continues
    /// on the typed path's rounds.
    pub(crate) async fn forward_raw_tool(
        &self,
        ctx: &RequestContext,
        params: RawJson,
    ) -> Result<McpResultBody, ErrorObject> {
        self.relay(ctx, |opts, reports| async move {
            let raw = self
                .client
                .request_raw(methods::TOOLS_CALL, params.clone(), opts)
                .await
                .map_err(|e| self.client_error(methods::TOOLS_CALL, e))?;
            // Only a result that spells `input_required` may be one: read those typed.
            if raw.get().contains("\"input_required\"") {
                let answer: MaybeInputRequired<CallToolResult> =
                    serde_json::from_str(raw.get()).map_err(|e| self.bad_answer(&e))?;
                if let MaybeInputRequired::InputRequired(_) = &answer {
                    let typed: CallToolRequestParams =
                        serde_json::from_str(params.get()).map_err(|e| self.bad_answer(&e))?;
                    // The options again, as `relay` made them (not cloned for every call).
                    let opts = self.reporting_options(ctx, &reports);
                    let result = self
                        .rounds::<CallTool>(ctx, typed, opts, &reports, Some(answer))
                        .await?;
                    return match serde_json::to_value(result) {
                        Ok(Value::Object(object)) => Ok(McpResultBody::from_object(object)),
                        Ok(_) => Err(self.not_an_object()),
                        Err(e) => Err(self.bad_answer(&e)),
                    };
                }
            }
            // The backend's text goes to the kernel as it is: it is written out unchanged
            // when it is valid at the front's revision with nothing to shape.
            McpResultBody::from_raw_json(raw).ok_or_else(|| self.not_an_object())
        })
        .await
    }

    fn not_an_object(&self) -> ErrorObject {
        ErrorObject::internal_error(format!(
            "composed server: backend {:?} answered tools/call with a result that is not an \
             object",
            self.mount
        ))
    }

    fn bad_answer(&self, e: &serde_json::Error) -> ErrorObject {
        ErrorObject::internal_error(format!(
            "composed server: backend {:?} answered tools/call with a result that does not \
             read: {e}",
            self.mount
        ))
    }
}
