//! Tool, prompt and resource handlers: async functions whose arguments are extractors.

use std::future::Future;

use ferromcp_dispatch::BoxFuture;
use ferromcp_types::jsonrpc::ErrorObject;
use ferromcp_types::mcp::{CallToolResult, GetPromptResult, JsonObject, ReadResourceResult};

use super::extract::{FromHandlerCall, HandlerCall};
use super::output::{IntoToolError, IntoToolResult, ToolError};
use super::prompt_resource_output::{IntoPromptResult, IntoResourceResult};
use super::resolve::ResolverRef;

/// An async function that can serve a tool: every argument is an extractor
/// ([`FromHandlerCall`]) and the output implements [`IntoToolResult`]. `M` only tells the
/// implementations for different arities apart; it is inferred.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a valid MCP tool handler",
    label = "not a tool handler",
    note = "a tool handler is an async fn (or closure returning a future) taking up to 8 \
            extractor arguments (Args<T>, RequestContext, State<T>, ProgressReporter, \
            CancellationToken, HttpParts, Resolved<R>) and returning something that implements \
            IntoToolResult (String, Json<T>, CallToolResult, Result<T, E>, ...); it must be \
            Clone + Send + Sync + 'static and its future Send"
)]
pub trait ToolHandler<M>: Clone + Send + Sync + 'static {
    /// The input schema the handler's extractors define (`{"type":"object"}` when none).
    fn input_schema(&self) -> Option<JsonObject>;
    /// The output schema the handler's return type defines.
    fn output_schema(&self) -> Option<JsonObject>;
    /// The resolvers the handler's extractors need (run before the handler).
    fn resolvers(&self) -> Vec<ResolverRef> {
        Vec::new()
    }
    /// Serves one call.
    fn call(&self, call: HandlerCall) -> BoxFuture<'static, Result<CallToolResult, ErrorObject>>;
}

/// An async function that can serve a prompt: extractor arguments (`Args<T>` reads the
/// prompt's arguments; its schema's properties become the prompt's declared arguments) and an
/// output that implements [`IntoPromptResult`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a valid MCP prompt handler",
    label = "not a prompt handler",
    note = "a prompt handler is an async fn taking up to 8 extractor arguments (Args<T>, \
            RequestContext, State<T>, ...) and returning something that implements \
            IntoPromptResult (String, Vec<PromptMessage>, GetPromptResult, Result<T, E>)"
)]
pub trait PromptHandler<M>: Clone + Send + Sync + 'static {
    /// The schema of the prompt's arguments (from `Args<T>`), if any.
    fn arguments_schema(&self) -> Option<JsonObject>;
    /// The resolvers the handler's extractors need (run before the handler).
    fn resolvers(&self) -> Vec<ResolverRef> {
        Vec::new()
    }
    /// Serves one `prompts/get`.
    fn call(&self, call: HandlerCall) -> BoxFuture<'static, Result<GetPromptResult, ErrorObject>>;
}

/// An async function that can serve a resource read: extractor arguments (`Args<T>` reads a
/// template's variables) and an output that implements [`IntoResourceResult`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a valid MCP resource handler",
    label = "not a resource handler",
    note = "a resource handler is an async fn taking up to 8 extractor arguments (Args<T> for \
            template variables, RequestContext, State<T>, ...) and returning something that \
            implements IntoResourceResult (String, Blob, ResourceContents, Result<T, E>)"
)]
pub trait ResourceHandler<M>: Clone + Send + Sync + 'static {
    /// The resolvers the handler's extractors need (run before the handler).
    fn resolvers(&self) -> Vec<ResolverRef> {
        Vec::new()
    }
    /// Serves one `resources/read` of `uri` (`mime_type` is the declared default).
    fn call(
        &self,
        call: HandlerCall,
        uri: String,
        mime_type: Option<String>,
    ) -> BoxFuture<'static, Result<ReadResourceResult, ErrorObject>>;
}

/// An extractor's failure outside a tool: a message becomes -32602.
pub(crate) fn rejection(e: ToolError) -> ErrorObject {
    match e {
        ToolError::Message(text) => ErrorObject::invalid_params(text),
        ToolError::Protocol(e) => e,
    }
}

macro_rules! impl_handlers {
    ($($arg:ident),*) => {
        #[allow(non_snake_case, unused_variables)]
        impl<F, Fut, O, $($arg,)*> ToolHandler<($($arg,)*)> for F
        where
            F: Fn($($arg),*) -> Fut + Clone + Send + Sync + 'static,
            Fut: Future<Output = O> + Send + 'static,
            O: IntoToolResult,
            $($arg: FromHandlerCall + Send + 'static,)*
        {
            fn input_schema(&self) -> Option<JsonObject> {
                None$(.or_else($arg::input_schema))*
            }

            fn output_schema(&self) -> Option<JsonObject> {
                O::output_schema()
            }

            fn resolvers(&self) -> Vec<ResolverRef> {
                let mut out = Vec::new();
                $($arg::collect_resolvers(&mut out);)*
                ResolverRef::dedup(&mut out);
                out
            }

            fn call(
                &self,
                call: HandlerCall,
            ) -> BoxFuture<'static, Result<CallToolResult, ErrorObject>> {
                $(
                    let $arg = match $arg::from_handler_call(&call) {
                        Ok(v) => v,
                        Err(e) => return Box::pin(std::future::ready(e.into_tool_error())),
                    };
                )*
                let fut = (self)($($arg),*);
                Box::pin(async move { fut.await.into_tool_result() })
            }
        }

        #[allow(non_snake_case, unused_variables)]
        impl<F, Fut, O, $($arg,)*> PromptHandler<($($arg,)*)> for F
        where
            F: Fn($($arg),*) -> Fut + Clone + Send + Sync + 'static,
            Fut: Future<Output = O> + Send + 'static,
            O: IntoPromptResult,
            $($arg: FromHandlerCall + Send + 'static,)*
        {
            fn arguments_schema(&self) -> Option<JsonObject> {
                None$(.or_else($arg::input_schema))*
            }

            fn resolvers(&self) -> Vec<ResolverRef> {
                let mut out = Vec::new();
                $($arg::collect_resolvers(&mut out);)*
                ResolverRef::dedup(&mut out);
                out
            }

            fn call(
                &self,
                call: HandlerCall,
            ) -> BoxFuture<'static, Result<GetPromptResult, ErrorObject>> {
                $(
                    let $arg = match $arg::from_handler_call(&call) {
                        Ok(v) => v,
                        Err(e) => return Box::pin(std::future::ready(Err(rejection(e)))),
                    };
                )*
                let fut = (self)($($arg),*);
                Box::pin(async move { fut.await.into_prompt_result() })
            }
        }

        #[allow(non_snake_case, unused_variables)]
        impl<F, Fut, O, $($arg,)*> ResourceHandler<($($arg,)*)> for F
        where
            F: Fn($($arg),*) -> Fut + Clone + Send + Sync + 'static,
            Fut: Future<Output = O> + Send + 'static,
            O: IntoResourceResult,
            $($arg: FromHandlerCall + Send + 'static,)*
        {
            fn resolvers(&self) -> Vec<ResolverRef> {
                let mut out = Vec::new();
                $($arg::collect_resolvers(&mut out);)*
                ResolverRef::dedup(&mut out);
                out
            }

            fn call(
                &self,
                call: HandlerCall,
                uri: String,
                mime_type: Option<String>,
            ) -> BoxFuture<'static, Result<ReadResourceResult, ErrorObject>> {
                $(
                    let $arg = match $arg::from_handler_call(&call) {
                        Ok(v) => v,
                        Err(e) => return Box::pin(std::future::ready(Err(rejection(e)))),
                    };
                )*
                let fut = (self)($($arg),*);
                Box::pin(async move { fut.await.into_resource_result(&uri, mime_type.as_deref()) })
            }
        }
    };
}

impl_handlers!();
impl_handlers!(A1);
impl_handlers!(A1, A2);
impl_handlers!(A1, A2, A3);
impl_handlers!(A1, A2, A3, A4);
impl_handlers!(A1, A2, A3, A4, A5);
impl_handlers!(A1, A2, A3, A4, A5, A6);
impl_handlers!(A1, A2, A3, A4, A5, A6, A7);
impl_handlers!(A1, A2, A3, A4, A5, A6, A7, A8);
