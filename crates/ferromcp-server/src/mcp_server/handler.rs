//! Tool handlers: async functions whose arguments are extractors.

use std::future::Future;

use ferromcp_dispatch::BoxFuture;
use ferromcp_types::jsonrpc::ErrorObject;
use ferromcp_types::mcp::{CallToolResult, JsonObject};

use super::extract::{FromToolCall, ToolCall};
use super::output::IntoToolResult;

/// An async function that can serve a tool: every argument is an extractor
/// ([`FromToolCall`]) and the output implements [`IntoToolResult`]. `M` only tells the
/// implementations for different arities apart; it is inferred.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a valid MCP tool handler",
    label = "not a tool handler",
    note = "a tool handler is an async fn (or closure returning a future) taking up to 8 \
            extractor arguments (Args<T>, RequestContext, State<T>, Progress, \
            CancellationToken, HttpParts) and returning something that implements \
            IntoToolResult (String, Json<T>, CallToolResult, Result<T, E>, ...); it must be \
            Clone + Send + Sync + 'static and its future Send"
)]
pub trait ToolHandler<M>: Clone + Send + Sync + 'static {
    /// The input schema the handler's extractors define (`{"type":"object"}` when none).
    fn input_schema(&self) -> Option<JsonObject>;
    /// The output schema the handler's return type defines.
    fn output_schema(&self) -> Option<JsonObject>;
    /// Serves one call.
    fn call(&self, call: ToolCall) -> BoxFuture<'static, Result<CallToolResult, ErrorObject>>;
}

macro_rules! impl_tool_handler {
    ($($arg:ident),*) => {
        #[allow(non_snake_case, unused_variables)]
        impl<F, Fut, O, $($arg,)*> ToolHandler<($($arg,)*)> for F
        where
            F: Fn($($arg),*) -> Fut + Clone + Send + Sync + 'static,
            Fut: Future<Output = O> + Send + 'static,
            O: IntoToolResult,
            $($arg: FromToolCall + Send + 'static,)*
        {
            fn input_schema(&self) -> Option<JsonObject> {
                None$(.or_else($arg::input_schema))*
            }

            fn output_schema(&self) -> Option<JsonObject> {
                O::output_schema()
            }

            fn call(
                &self,
                call: ToolCall,
            ) -> BoxFuture<'static, Result<CallToolResult, ErrorObject>> {
                $(
                    let $arg = match $arg::from_tool_call(&call) {
                        Ok(v) => v,
                        Err(e) => {
                            use super::output::IntoToolError;
                            return Box::pin(std::future::ready(e.into_tool_error()));
                        }
                    };
                )*
                let fut = (self)($($arg),*);
                Box::pin(async move { fut.await.into_tool_result() })
            }
        }
    };
}

impl_tool_handler!();
impl_tool_handler!(A1);
impl_tool_handler!(A1, A2);
impl_tool_handler!(A1, A2, A3);
impl_tool_handler!(A1, A2, A3, A4);
impl_tool_handler!(A1, A2, A3, A4, A5);
impl_tool_handler!(A1, A2, A3, A4, A5, A6);
impl_tool_handler!(A1, A2, A3, A4, A5, A6, A7);
impl_tool_handler!(A1, A2, A3, A4, A5, A6, A7, A8);
