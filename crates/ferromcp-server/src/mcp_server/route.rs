//! A route `tools/call` may take before the tool registry ([`ToolCallRoute`]): a composed
//! server forwards its backends' calls on it, as JSON text, without the registry's typed
//! params, argument check and typed result.

use std::sync::Arc;

use ferromcp_dispatch::{BoxFuture, HandlerError};
use ferromcp_types::mcp::methods;

use super::{McpServerBuilder, Shared, tools};
use crate::context::RequestContext;
use crate::handler_fn::RequestFn;
use crate::middleware::{McpParams, McpResultBody};
use crate::server::ServerBuilder;

/// A route for `tools/call` requests, tried before the tool registry (see
/// [`McpServerBuilder::tool_call_route`]).
///
/// A request reaches the route after everything the kernel does before a handler (the
/// middleware stack, the params' check against the protocol's schema, the init gate), and
/// the route's result is shaped and checked like any handler's. What the route takes, it
/// serves alone: the registry's argument check against the tool's input schema, its tasks
/// and its multi-round input do not apply (leave such calls to the registry by answering
/// `None`).
pub trait ToolCallRoute: Send + Sync + 'static {
    /// The answer to a `tools/call` with `params` (raw as received while nothing changed
    /// them): the result (text received from elsewhere, [`McpResultBody::from_raw_json`],
    /// goes out as written when it is valid with nothing to shape), or an error; `None` to
    /// leave the call to the tool registry.
    fn route(
        &self,
        ctx: &RequestContext,
        params: &McpParams,
    ) -> Option<BoxFuture<'static, Result<McpResultBody, HandlerError>>>;
}

impl McpServerBuilder {
    /// Sets the route `tools/call` requests try before the tool registry (one per server;
    /// a second replaces the first). The registry still lists the tools and serves every
    /// call the route leaves to it.
    ///
    /// ```
    /// use ferromcp_dispatch::{BoxFuture, HandlerError};
    /// use ferromcp_server::mcp_server::ToolCallRoute;
    /// use ferromcp_server::{McpParams, McpResultBody, McpServer, RequestContext};
    /// use serde_json::{Map, Value, json};
    ///
    /// /// Answers `fixed` itself; every other call goes to the registry.
    /// struct Fixed;
    /// impl ToolCallRoute for Fixed {
    ///     fn route(&self, _: &RequestContext, p: &McpParams)
    ///         -> Option<BoxFuture<'static, Result<McpResultBody, HandlerError>>> {
    ///         let name = p.as_ref()?.get("name")?.as_str()?;
    ///         (name == "fixed").then(|| -> BoxFuture<'static, _> {
    ///             Box::pin(async {
    ///                 let text = json!([{"type": "text", "text": "42"}]);
    ///                 Ok(Map::from_iter([("content".to_owned(), text)]).into())
    ///             })
    ///         })
    ///     }
    /// }
    /// let server = McpServer::builder("s", "1")
    ///     .tool("fixed", || async { "never called" })
    ///     .tool_call_route(Fixed)
    ///     .build()
    ///     .unwrap();
    /// # let _ = server;
    /// ```
    pub fn tool_call_route(mut self, route: impl ToolCallRoute) -> Self {
        self.tool_route = Some(Arc::new(route));
        self
    }
}

/// Registers `tools/call`: the route first when there is one, then the tool registry.
pub(super) fn register(
    low: ServerBuilder,
    shared: &Arc<Shared>,
    route: Option<Arc<dyn ToolCallRoute>>,
) -> ServerBuilder {
    let registry = tools::handler(shared);
    let Some(route) = route else {
        return low.on_erased(methods::TOOLS_CALL, registry);
    };
    let both: Arc<RequestFn> = Arc::new(move |ctx: RequestContext, params: McpParams| match route
        .route(&ctx, &params)
    {
        Some(answer) => Box::pin(async move { answer.await.map(McpResultBody::into_output) }),
        None => registry(ctx, params),
    });
    low.on_erased(methods::TOOLS_CALL, both)
}
