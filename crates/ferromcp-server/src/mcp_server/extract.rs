//! Extractors: what a high-level handler's arguments can be (tools, prompts, resources).

use std::any::{Any, TypeId, type_name};
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use ferromcp_types::mcp::JsonObject;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::arguments::Arguments;
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

/// One call of a high-level handler, as the extractors see it: a `tools/call`, a `prompts/get`
/// (the prompt's arguments as strings) or a `resources/read` (a template's variables as
/// strings).
pub struct HandlerCall {
    pub(crate) ctx: RequestContext,
    pub(crate) name: String,
    /// A tool's arguments stay the text received (a value is parsed only if something asks
    /// for one); a prompt's and a resource's are values.
    pub(crate) arguments: Arc<Arguments>,
    pub(crate) state: Arc<StateMap>,
    /// The outputs of the handler's resolvers, computed before extraction.
    pub(crate) resolved: ResolvedValues,
}

impl HandlerCall {
    /// The request context.
    pub fn context(&self) -> &RequestContext {
        &self.ctx
    }

    /// The tool's or prompt's name, or the resource's URI.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The raw arguments (an object; `{}` when the client sent none): a tool's arguments, a
    /// prompt's, or a resource template's variables. A tool's arguments are kept as the JSON
    /// text received: the first call parses that text into the value it returns ([`Args`]
    /// reads its type from the text and never needs it).
    pub fn arguments(&self) -> &Value {
        self.arguments.value()
    }
}

impl fmt::Debug for HandlerCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HandlerCall")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// Something a handler (tool, prompt or resource) can take as an argument, read from the
/// call.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an argument of an MCP tool handler",
    note = "tool handler arguments are extractors: Args<T> (the typed arguments; T: \
            Deserialize + JsonSchema), RequestContext, State<T>, ProgressReporter, \
            CancellationToken, HttpParts, Resolved<R>"
)]
pub trait FromHandlerCall: Sized {
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
    fn from_handler_call(call: &HandlerCall) -> Result<Self, ToolError>;
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

impl<T: DeserializeOwned + JsonSchema> FromHandlerCall for Args<T> {
    fn input_schema() -> Option<JsonObject> {
        Some(schema_object_for::<T>())
    }

    fn from_handler_call(call: &HandlerCall) -> Result<Self, ToolError> {
        // From the text received when the arguments are text (numbers as written: a
        // `Box<RawValue>` field gets `1.50`, a u128 all its digits), else from the value.
        call.arguments.deserialize::<T>().map(Args).map_err(|e| {
            // The arguments passed the input schema but not the type (a constraint the
            // schema does not say): a reason, never serde's text with Rust type names.
            tracing::debug!(error = %e, "arguments do not deserialize");
            ToolError::message(format!(
                "invalid arguments: {}",
                crate::deserialize_reason::serde_reason(&e)
            ))
        })
    }
}

/// The raw arguments, as the client sent them (an object; `{}` when absent). Takes no part in
/// the input schema: pair it with `ToolSpec::input_schema`.
#[derive(Debug, Clone, PartialEq)]
pub struct RawArgs(pub JsonObject);

impl FromHandlerCall for RawArgs {
    fn from_handler_call(call: &HandlerCall) -> Result<Self, ToolError> {
        Ok(RawArgs(
            call.arguments().as_object().cloned().unwrap_or_default(),
        ))
    }
}

impl FromHandlerCall for RequestContext {
    fn from_handler_call(call: &HandlerCall) -> Result<Self, ToolError> {
        Ok(call.ctx.clone())
    }
}

/// Shared state of type `T`, registered with `McpServerBuilder::state`.
#[derive(Debug, Clone, Copy, Default)]
pub struct State<T>(pub T);

impl<T: Clone + Send + Sync + 'static> FromHandlerCall for State<T> {
    fn from_handler_call(call: &HandlerCall) -> Result<Self, ToolError> {
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

impl FromHandlerCall for ProgressReporter {
    fn from_handler_call(call: &HandlerCall) -> Result<Self, ToolError> {
        Ok(ProgressReporter(call.ctx.clone()))
    }
}

impl FromHandlerCall for CancellationToken {
    fn from_handler_call(call: &HandlerCall) -> Result<Self, ToolError> {
        Ok(call.ctx.cancellation().clone())
    }
}

/// The HTTP request the call came in, when served over HTTP (`None` otherwise).
#[derive(Debug, Clone)]
pub struct HttpParts(pub Option<Arc<http::request::Parts>>);

impl FromHandlerCall for HttpParts {
    fn from_handler_call(call: &HandlerCall) -> Result<Self, ToolError> {
        Ok(HttpParts(call.ctx.http_parts().cloned()))
    }
}

/// The authenticated caller ([`RequestContext::principal`]: put in the request's extensions by
/// the transport or a middleware layer): a tool taking a [`Principal`] fails with
/// "authentication required" when the request carries none; take `Option<Principal>` to
/// serve anonymous calls too.
///
/// [`Principal`]: crate::principal::Principal
impl FromHandlerCall for crate::principal::Principal {
    fn from_handler_call(call: &HandlerCall) -> Result<Self, ToolError> {
        call.ctx
            .principal()
            .cloned()
            .ok_or_else(|| ToolError::message("authentication required"))
    }
}

impl FromHandlerCall for Option<crate::principal::Principal> {
    fn from_handler_call(call: &HandlerCall) -> Result<Self, ToolError> {
        Ok(call.ctx.principal().cloned())
    }
}
