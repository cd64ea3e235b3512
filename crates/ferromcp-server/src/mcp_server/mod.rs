//! The high-level server: tools as plain async functions whose arguments are extractors.
//!
//! ```
//! use ferromcp_server::mcp_server::{Args, McpServer};
//!
//! /// Numbers to add.
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct AddArgs {
//!     /// The first number.
//!     a: f64,
//!     /// The second number.
//!     b: f64,
//! }
//!
//! async fn add(Args(args): Args<AddArgs>) -> String {
//!     (args.a + args.b).to_string()
//! }
//!
//! let server = McpServer::builder("calculator", "1.0.0").tool("add", add).build().unwrap();
//! assert_eq!(server.tool_names(), vec!["add".to_string()]);
//! ```

mod extract;
mod handler;
mod output;
mod schema;
mod tools;

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use ferromcp_dispatch::BoxError;
use ferromcp_types::mcp::methods::{CallTool, ListTools};
use ferromcp_types::mcp::{Implementation, JsonObject, PaginatedRequestParams};

pub use extract::{Args, FromToolCall, HttpParts, Progress, State, ToolCall};
pub use handler::ToolHandler;
pub use output::{IntoToolError, IntoToolResult, Json, ToolError};
pub use schema::{object_schema, schema_object_for};
pub use tools::{ToolDef, ToolSpec};

use crate::middleware::Middleware;
use crate::server::{BuildError, CacheHint, Server, ServerBuilder};
use extract::StateMap;
use tools::ToolTable;

/// The default number of items in one page of a list result.
pub const DEFAULT_PAGE_SIZE: usize = 100;

/// A high-level MCP server: tools (and, as they land, resources and prompts) registered as
/// plain async functions. Cheap to clone; clones share the registries, so tools added or
/// removed on one are seen by all connections.
#[derive(Clone)]
pub struct McpServer {
    shared: Arc<Shared>,
    server: Server,
}

pub(crate) struct Shared {
    pub(crate) tools: ToolTable,
    pub(crate) state: Arc<StateMap>,
    pub(crate) page_size: usize,
}

impl McpServer {
    /// Starts building a server with the given name and version.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> McpServerBuilder {
        McpServerBuilder {
            low: Server::builder(name, version),
            tools: Vec::new(),
            state: StateMap::default(),
            page_size: DEFAULT_PAGE_SIZE,
            errors: Vec::new(),
        }
    }

    /// The low-level server that serves this one on any transport.
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// The names of the registered tools, in registration order.
    pub fn tool_names(&self) -> Vec<String> {
        self.shared.tools.names()
    }

    /// Adds (or replaces) a tool at run time and tells connected clients the list changed.
    pub async fn add_tool<M, H: ToolHandler<M>>(
        &self,
        spec: impl Into<ToolSpec>,
        handler: H,
    ) -> Result<(), BuildError> {
        let entry = tools::entry(spec.into(), handler)?;
        self.shared.tools.insert(entry);
        self.server
            .notify_list_changed(ferromcp_types::mcp::methods::NOTIFICATION_TOOLS_LIST_CHANGED);
        Ok(())
    }

    /// Removes a tool at run time; tells connected clients the list changed if it existed.
    pub async fn remove_tool(&self, name: &str) -> bool {
        let removed = self.shared.tools.remove(name);
        if removed {
            self.server
                .notify_list_changed(ferromcp_types::mcp::methods::NOTIFICATION_TOOLS_LIST_CHANGED);
        }
        removed
    }
}

impl fmt::Debug for McpServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServer")
            .field("info", self.server.info())
            .field("tools", &self.shared.tools.names())
            .finish_non_exhaustive()
    }
}

/// Builds an [`McpServer`]; see [`McpServer::builder`].
#[must_use]
pub struct McpServerBuilder {
    low: ServerBuilder,
    tools: Vec<tools::ToolEntry>,
    state: StateMap,
    page_size: usize,
    errors: Vec<BuildError>,
}

impl McpServerBuilder {
    /// Registers a tool: a name (or a [`ToolSpec`] with description, title, annotations, a
    /// raw schema…) and an async function whose arguments are extractors.
    pub fn tool<M, H: ToolHandler<M>>(mut self, spec: impl Into<ToolSpec>, handler: H) -> Self {
        match tools::entry(spec.into(), handler) {
            Ok(entry) => self.tools.push(entry),
            Err(e) => self.errors.push(e),
        }
        self
    }

    /// Registers a tool defined ahead of time (for example by the `#[tool]` macro of
    /// `ferromcp-macros`).
    pub fn tool_def(mut self, def: ToolDef) -> Self {
        match def.0 {
            Ok(entry) => self.tools.push(entry),
            Err(e) => self.errors.push(e),
        }
        self
    }

    /// Registers shared state that handlers take with the [`State`] extractor.
    pub fn state<T: Clone + Send + Sync + 'static>(mut self, value: T) -> Self {
        self.state.insert(value);
        self
    }

    /// Sets how many items one page of a list result holds (at least 1).
    pub fn page_size(mut self, n: usize) -> Self {
        self.page_size = n.max(1);
        self
    }

    /// Sets the full server info (name, version, title, description, website, icons).
    pub fn info(mut self, info: Implementation) -> Self {
        self.low = self.low.info(info);
        self
    }

    /// Sets the instructions sent with `initialize` and `server/discover`.
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.low = self.low.instructions(text);
        self
    }

    /// Adds a middleware layer (see [`crate::middleware`]).
    pub fn middleware(mut self, layer: impl Middleware) -> Self {
        self.low = self.low.middleware(layer);
        self
    }

    /// Sets the cache hint for a cacheable method's results.
    pub fn cache_hint(mut self, method: &str, hint: CacheHint) -> Self {
        self.low = self.low.cache_hint(method, hint);
        self
    }

    /// Advertises an extension (2026-07-28 `extensions`).
    pub fn extension(mut self, id: impl Into<String>, settings: JsonObject) -> Self {
        self.low = self.low.extension(id, settings);
        self
    }

    /// Sets a lifespan (see [`ServerBuilder::lifespan`]).
    pub fn lifespan<T, S, SFut, D, DFut>(mut self, setup: S, teardown: D) -> Self
    where
        T: Send + Sync + 'static,
        S: Fn() -> SFut + Send + Sync + 'static,
        SFut: Future<Output = Result<T, BoxError>> + Send + 'static,
        D: Fn(Arc<T>) -> DFut + Send + Sync + 'static,
        DFut: Future<Output = ()> + Send + 'static,
    {
        self.low = self.low.lifespan(setup, teardown);
        self
    }

    /// Builds the server.
    pub fn build(self) -> Result<McpServer, BuildError> {
        if let Some(e) = self.errors.into_iter().next() {
            return Err(e);
        }
        let shared = Arc::new(Shared {
            tools: ToolTable::new(self.tools),
            state: Arc::new(self.state),
            page_size: self.page_size,
        });
        let (list, call) = (shared.clone(), shared.clone());
        let server = self
            .low
            .tools_list_changed(true)
            .on::<ListTools, _, _, _>(move |_ctx, p: PaginatedRequestParams| {
                let shared = list.clone();
                async move { tools::list(&shared, p.cursor.as_ref()) }
            })
            .on::<CallTool, _, _, _>(move |ctx, p| {
                let shared = call.clone();
                async move { tools::call(&shared, ctx, p).await }
            })
            .build()?;
        Ok(McpServer { shared, server })
    }
}
