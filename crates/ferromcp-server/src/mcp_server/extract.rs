//! Extractors: what a tool handler's arguments can be.

use std::any::{Any, TypeId, type_name};
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use ferromcp_types::mcp::JsonObject;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::output::ToolError;
use super::resolve::{ResolvedValues, ResolverRef};
use super::schema::schema_object_for;
use crate::context::RequestContext;

/// Shared state registered with `McpServerBuilder::state`, keyed by type.
#[derive(Clone, Default)]
pub(crate) struct StateMap(HashMap<TypeId, Arc<dyn Any + Send + Sync>>);

impl StateMap {
    pub(crate) fn insert<T: Clone + Send + Sync + 'static>(&mut self, value: T) {
        self.0.insert(TypeId::of::<T>(), Arc::new(value));
    }

    pub(crate) fn get<T: Clone + Send + Sync + 'static>(&self) -> Option<T> {
        self.0.get(&TypeId::of::<T>())?.downcast_ref::<T>().cloned()
    }
}

/// One tool call, as the extractors see it.
pub struct ToolCall {
    pub(crate) ctx: RequestContext,
    pub(crate) name: String,
    pub(crate) arguments: Arc<Value>,
    pub(crate) state: Arc<StateMap>,
    /// The outputs of the handler's resolvers, computed before extraction.
    pub(crate) resolved: ResolvedValues,
}

impl ToolCall {
    /// The request context.
    pub fn context(&self) -> &RequestContext {
        &self.ctx
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The raw arguments (an object; `{}` when the client sent none).
    pub fn arguments(&self) -> &Value {
        &self.arguments
    }
}

impl fmt::Debug for ToolCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolCall")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// Something a tool handler can take as an argument, read from the call.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an argument of an MCP tool handler",
    note = "tool handler arguments are extractors: Args<T> (the typed arguments; T: \
            Deserialize + JsonSchema), RequestContext, State<T>, ProgressReporter, \
            CancellationToken, HttpParts, Resolved<R>"
)]
pub trait FromToolCall: Sized {
    /// The tool's input schema, when this extractor defines it (only [`Args`] does).
    fn input_schema() -> Option<JsonObject> {
        None
    }

    /// Adds the resolvers this extractor needs (run before extraction; only
    /// [`Resolved`](super::Resolved) has any).
    fn collect_resolvers(out: &mut Vec<ResolverRef>) {
        let _ = out;
    }

    /// Reads the value from the call; an error becomes the call's outcome.
    fn from_tool_call(call: &ToolCall) -> Result<Self, ToolError>;
}

/// The tool's typed arguments. `T`'s JSON Schema (2020-12, doc comments as descriptions) is
/// the tool's input schema.
///
/// ```
/// use ferromcp_server::mcp_server::Args;
///
/// /// Two numbers to add.
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct AddArgs {
///     /// The first number.
///     a: f64,
///     /// The second number.
///     b: f64,
/// }
///
/// async fn add(Args(args): Args<AddArgs>) -> String {
///     (args.a + args.b).to_string()
/// }
/// # let _ = add;
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Args<T>(pub T);

impl<T: DeserializeOwned + JsonSchema> FromToolCall for Args<T> {
    fn input_schema() -> Option<JsonObject> {
        Some(schema_object_for::<T>())
    }

    fn from_tool_call(call: &ToolCall) -> Result<Self, ToolError> {
        T::deserialize(&*call.arguments)
            .map(Args)
            .map_err(|e| ToolError::message(format!("invalid arguments: {e}")))
    }
}

/// The raw arguments, as the client sent them (an object; `{}` when absent). Takes no part in
/// the input schema: pair it with `ToolSpec::input_schema`.
#[derive(Debug, Clone, PartialEq)]
pub struct RawArgs(pub JsonObject);

impl FromToolCall for RawArgs {
    fn from_tool_call(call: &ToolCall) -> Result<Self, ToolError> {
        Ok(RawArgs(
            call.arguments.as_object().cloned().unwrap_or_default(),
        ))
    }
}

impl FromToolCall for RequestContext {
    fn from_tool_call(call: &ToolCall) -> Result<Self, ToolError> {
        Ok(call.ctx.clone())
    }
}

/// Shared state of type `T`, registered with `McpServerBuilder::state`.
#[derive(Debug, Clone, Copy, Default)]
pub struct State<T>(pub T);

impl<T: Clone + Send + Sync + 'static> FromToolCall for State<T> {
    fn from_tool_call(call: &ToolCall) -> Result<Self, ToolError> {
        match call.state.get::<T>() {
            Some(v) => Ok(State(v)),
            None => {
                tracing::error!("no state of type {} was registered", type_name::<T>());
                Err(ToolError::protocol(
                    ferromcp_types::jsonrpc::ErrorObject::internal_error("Internal error"),
                ))
            }
        }
    }
}

/// Reports progress on the current call; a no-op when the client asked for none.
#[derive(Debug, Clone)]
pub struct ProgressReporter(RequestContext);

impl ProgressReporter {
    /// Reports `progress` (of `total`, if known), with an optional message.
    pub async fn report(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        self.0.progress(progress, total, message).await;
    }
}

impl FromToolCall for ProgressReporter {
    fn from_tool_call(call: &ToolCall) -> Result<Self, ToolError> {
        Ok(ProgressReporter(call.ctx.clone()))
    }
}

impl FromToolCall for CancellationToken {
    fn from_tool_call(call: &ToolCall) -> Result<Self, ToolError> {
        Ok(call.ctx.cancellation().clone())
    }
}

/// The HTTP request the call came in, when served over HTTP (`None` otherwise).
#[derive(Debug, Clone)]
pub struct HttpParts(pub Option<Arc<http::request::Parts>>);

impl FromToolCall for HttpParts {
    fn from_tool_call(call: &ToolCall) -> Result<Self, ToolError> {
        Ok(HttpParts(call.ctx.http_parts().cloned()))
    }
}

/// The authenticated caller (feature `auth`): a tool taking a [`Principal`] fails with
/// "authentication required" when the request carries none; take `Option<Principal>` to
/// serve anonymous calls too.
///
/// [`Principal`]: crate::principal::Principal
impl RequestContext {
    /// The authenticated caller: the principal an authentication layer (the HTTP server's
    /// token check) recorded for this request; `None` without auth or outside HTTP.
    pub fn principal(&self) -> Option<&crate::principal::Principal> {
        self.http_parts().and_then(|p| p.extensions.get())
    }
}

impl FromToolCall for crate::principal::Principal {
    fn from_tool_call(call: &ToolCall) -> Result<Self, ToolError> {
        call.ctx
            .principal()
            .cloned()
            .ok_or_else(|| ToolError::message("authentication required"))
    }
}

impl FromToolCall for Option<crate::principal::Principal> {
    fn from_tool_call(call: &ToolCall) -> Result<Self, ToolError> {
        Ok(call.ctx.principal().cloned())
    }
}
