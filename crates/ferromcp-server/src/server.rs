//! The low-level `Server`: a handler table, server info, capabilities derived from what is
//! registered, middleware, cache hints and a lifespan.

use std::any::Any;
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use ferromcp_dispatch::{BoxError, BoxFuture, HandlerError};
use ferromcp_types::ProtocolVersion;
use ferromcp_types::mcp::methods::{self, Notification, Request};
use ferromcp_types::mcp::{
    CacheScope, CapabilityMap, DiscoverResult, EmptyResult, Implementation, JsonObject,
    ListChangedCapability, RequestParams, ResourcesCapability, ServerCapabilities,
};
use ferromcp_types::tables::Kind;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::connection::SubscriptionLimits;
use crate::context::RequestContext;
use crate::handler_fn::{
    NotifyFn, RequestFn, erase_notification, erase_request, warn_if_deprecated,
};
use crate::middleware::Middleware;
use crate::tool_headers::{ParamHeader, ToolHeaders};

type SetupFn =
    dyn Fn() -> BoxFuture<'static, Result<Arc<dyn Any + Send + Sync>, BoxError>> + Send + Sync;
type TeardownFn = dyn Fn(Arc<dyn Any + Send + Sync>) -> BoxFuture<'static, ()> + Send + Sync;

/// An extension's share of the advertised capabilities: given the revision, it adds or
/// merges its members (see [`ServerBuilder::contribute_capabilities`]).
type ContributeFn = dyn Fn(ProtocolVersion, &mut ServerCapabilities) + Send + Sync;

/// A cache hint for the results of one method (2026-07-28, "Caching"): how long a client may
/// reuse the result, and whether caches may share it across authorization contexts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheHint {
    /// Time to live in milliseconds; 0 means immediately stale.
    pub ttl_ms: u64,
    /// Who may share the cached result.
    pub scope: CacheScope,
}

impl CacheHint {
    /// A hint with the given time to live and scope.
    pub fn new(ttl_ms: u64, scope: CacheScope) -> Self {
        Self { ttl_ms, scope }
    }
}

impl Default for CacheHint {
    /// Immediately stale, private: what a server says when it says nothing.
    fn default() -> Self {
        Self {
            ttl_ms: 0,
            scope: CacheScope::Private,
        }
    }
}

/// The default timeout of a request a handler sends the client without one of its own
/// (elicitation waits on a person, so it is generous): 5 minutes.
pub const DEFAULT_CLIENT_REQUEST_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// The methods whose results carry cache hints at 2026-07-28.
pub const CACHEABLE_METHODS: [&str; 6] = [
    methods::PROMPTS_LIST,
    methods::RESOURCES_LIST,
    methods::RESOURCES_READ,
    methods::RESOURCES_TEMPLATES_LIST,
    methods::SERVER_DISCOVER,
    methods::TOOLS_LIST,
];

/// Why a server could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// `initialize` is answered by the kernel; it cannot have a user handler.
    #[error("`initialize` is handled by the kernel and cannot be registered")]
    InitializeHandler,
    /// A cache hint names a method whose results are not cacheable.
    #[error("{0:?} is not a cacheable method")]
    NotCacheable(String),
    /// A tool, prompt or resource definition is not valid.
    #[error("{name:?}: {reason}")]
    Invalid {
        /// The name (or URI) of what is invalid.
        name: String,
        /// What is wrong.
        reason: String,
    },
}

/// A low-level MCP server: a table of method handlers and what the server says about itself.
///
/// ```
/// use ferromcp_server::{Server, RequestContext};
/// use ferromcp_types::mcp::methods::ListTools;
/// use ferromcp_types::mcp::{ListToolsResult, PaginatedRequestParams};
///
/// let server = Server::builder("demo", "1.0.0")
///     .on::<ListTools, _, _, _>(|_ctx: RequestContext, _params: PaginatedRequestParams| async {
///         Ok(ListToolsResult::new(vec![]))
///     })
///     .build()
///     .unwrap();
/// assert!(server.capabilities(ferromcp_types::ProtocolVersion::LATEST).tools.is_some());
/// ```
#[derive(Clone)]
pub struct Server {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) info: Implementation,
    /// `info` as JSON text, written once: the server info stamp of 2026-07-28 results.
    pub(crate) info_text: Box<serde_json::value::RawValue>,
    pub(crate) instructions: Option<String>,
    pub(crate) requests: HashMap<String, Arc<RequestFn>>,
    pub(crate) notifications: HashMap<String, Arc<NotifyFn>>,
    pub(crate) middleware: Arc<[Arc<dyn Middleware>]>,
    /// The default tracing layer is on: one `mcp.request` span per request, outermost.
    pub(crate) tracing: bool,
    #[cfg(feature = "otel")]
    pub(crate) otel: crate::otel::ServerOtel,
    pub(crate) cache_hints: HashMap<String, CacheHint>,
    pub(crate) list_changed: ListChanged,
    pub(crate) experimental: Option<CapabilityMap>,
    pub(crate) extensions: Option<CapabilityMap>,
    /// Extensions' shares of the capabilities, run in registration order after the rest.
    contributors: Vec<Arc<ContributeFn>>,
    /// Methods an extension serves at revisions whose schema does not define them.
    pub(crate) extension_methods: Vec<String>,
    /// `resultType`s an extension answers with in place of a method's own result.
    pub(crate) extension_result_types: Vec<String>,
    /// Where the tools' `x-mcp-header` annotations are found.
    tool_headers: Option<Arc<dyn ToolHeaders>>,
    pub(crate) subscription_limits: SubscriptionLimits,
    client_request_timeout: Option<Duration>,
    setup: Option<Arc<SetupFn>>,
    teardown: Option<Arc<TeardownFn>>,
    lifespan: Lifespan,
    /// List-changed and resource-updated notifications for every live connection.
    changes: tokio::sync::broadcast::Sender<Change>,
}

/// A change every live connection is told about: a notification method and its params.
pub(crate) type Change = (&'static str, Option<serde_json::Value>);

/// How many changes may queue for a slow connection; one that falls further behind misses
/// the oldest (harmless for list-changed notifications, which say only "fetch again").
const CHANGE_QUEUE: usize = 64;

#[derive(Default)]
struct Lifespan {
    /// How many users (connections, serving loops) are inside the lifespan. Held across the
    /// set-up and the tear-down, so that a user entering meanwhile waits for them.
    users: tokio::sync::Mutex<usize>,
    value: Mutex<Option<Arc<dyn Any + Send + Sync>>>,
}

/// Which list-changed notifications a handshake-era server announces.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ListChanged {
    pub(crate) tools: bool,
    pub(crate) prompts: bool,
    pub(crate) resources: bool,
}

impl Server {
    /// Starts building a server with the given name and version.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder::new(Implementation::new(name, version))
    }

    /// What the server says about itself.
    pub fn info(&self) -> &Implementation {
        &self.inner.info
    }

    /// The instructions sent with `initialize` and `server/discover`.
    pub fn instructions(&self) -> Option<&str> {
        self.inner.instructions.as_deref()
    }

    /// Whether a request handler is registered for `method`.
    pub fn handles(&self, method: &str) -> bool {
        self.inner.requests.contains_key(method)
    }

    /// The capabilities the server has at `version`, derived from what is registered.
    ///
    /// Before 2026-07-28 the `listChanged` flags come from the builder and `subscribe` from a
    /// `resources/subscribe` handler; at 2026-07-28 both mean "`subscriptions/listen` is
    /// served".
    pub fn capabilities(&self, version: ProtocolVersion) -> ServerCapabilities {
        let inner = &self.inner;
        let listen = self.handles(methods::SUBSCRIPTIONS_LISTEN);
        let flag = |on: bool| on.then_some(true);
        let (tools, prompts, resources, subscribe) = if version.is_modern() {
            (listen, listen, listen, listen)
        } else {
            let lc = inner.list_changed;
            (
                lc.tools,
                lc.prompts,
                lc.resources,
                self.handles(methods::RESOURCES_SUBSCRIBE),
            )
        };
        let mut caps = ServerCapabilities::new();
        if self.handles(methods::TOOLS_LIST) {
            let mut c = ListChangedCapability::new();
            c.list_changed = flag(tools);
            caps.tools = Some(c);
        }
        if self.handles(methods::PROMPTS_LIST) {
            let mut c = ListChangedCapability::new();
            c.list_changed = flag(prompts);
            caps.prompts = Some(c);
        }
        if self.handles(methods::RESOURCES_LIST) || self.handles(methods::RESOURCES_READ) {
            let mut c = ResourcesCapability::new();
            c.list_changed = flag(resources);
            c.subscribe = flag(subscribe);
            caps.resources = Some(c);
        }
        if self.handles(methods::LOGGING_SET_LEVEL) {
            caps.logging = Some(JsonObject::new());
        }
        if self.handles(methods::COMPLETION_COMPLETE) {
            caps.completions = Some(JsonObject::new());
        }
        caps.experimental.clone_from(&inner.experimental);
        caps.extensions.clone_from(&inner.extensions);
        for contribute in &inner.contributors {
            contribute(version, &mut caps);
        }
        caps
    }

    /// The cache hint for `method`'s results.
    pub fn cache_hint(&self, method: &str) -> CacheHint {
        self.inner
            .cache_hints
            .get(method)
            .copied()
            .unwrap_or_default()
    }

    /// Runs the lifespan's set-up if this is the first user; the value reaches handlers
    /// through [`RequestContext::lifespan`]. Pair every successful call with
    /// [`Server::exit_lifespan`].
    ///
    /// A user that enters while the set-up (or the last user's tear-down) is running waits
    /// for it to finish, so no handler runs without the value.
    pub async fn enter_lifespan(&self) -> Result<(), BoxError> {
        let mut users = self.inner.lifespan.users.lock().await;
        if *users == 0
            && let Some(setup) = &self.inner.setup
        {
            let value = setup().await?;
            *self.lock_lifespan_value() = Some(value);
        }
        *users += 1;
        Ok(())
    }

    /// Runs the lifespan's tear-down when the last user leaves.
    pub async fn exit_lifespan(&self) {
        let mut users = self.inner.lifespan.users.lock().await;
        if *users == 0 {
            return;
        }
        *users -= 1;
        if *users > 0 {
            return;
        }
        let value = self.lock_lifespan_value().take();
        if let (Some(value), Some(teardown)) = (value, &self.inner.teardown) {
            teardown(value).await;
        }
    }

    /// The `x-mcp-header` annotations of tool `name`, from the server's
    /// [`ToolHeaders`]; `None` when the server has no such tool or no source for them.
    pub fn tool_param_headers(&self, name: &str) -> Option<Arc<[ParamHeader]>> {
        self.inner.tool_headers.as_ref()?.param_headers(name)
    }

    /// The timeout of a request to the client that sets none (see
    /// [`ServerBuilder::client_request_timeout`]).
    pub fn client_request_timeout(&self) -> Option<Duration> {
        self.inner.client_request_timeout
    }

    /// The bounds on each connection's resource subscriptions (see
    /// [`Connection::subscribe_resource`](crate::Connection::subscribe_resource)).
    pub fn subscription_limits(&self) -> SubscriptionLimits {
        self.inner.subscription_limits
    }

    /// Whether `method` is an extension's method (see [`ServerBuilder::extension_method`]).
    pub(crate) fn is_extension_method(&self, method: &str) -> bool {
        self.inner.extension_methods.iter().any(|m| m == method)
    }

    /// Whether `result` is an extension's own result (see
    /// [`ServerBuilder::extension_result_type`]).
    pub(crate) fn is_extension_result(&self, result: &JsonObject) -> bool {
        !self.inner.extension_result_types.is_empty()
            && result
                .get("resultType")
                .and_then(serde_json::Value::as_str)
                .is_some_and(|t| self.inner.extension_result_types.iter().any(|x| x == t))
    }

    pub(crate) fn lifespan_value(&self) -> Option<Arc<dyn Any + Send + Sync>> {
        self.lock_lifespan_value().clone()
    }

    fn lock_lifespan_value(&self) -> std::sync::MutexGuard<'_, Option<Arc<dyn Any + Send + Sync>>> {
        self.inner
            .lifespan
            .value
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Tells every live connection that a list changed (or a resource was updated):
    /// `method` is the notification, such as `notifications/tools/list_changed`.
    pub fn notify_list_changed(&self, method: &'static str) {
        // No receiver means no connection is listening; nothing to do.
        let _ = self.inner.changes.send((method, None));
    }

    /// Tells every live connection that the resource at `uri` changed.
    pub fn notify_resource_updated(&self, uri: &str) {
        let params = serde_json::json!({ "uri": uri });
        let _ = self
            .inner
            .changes
            .send((methods::NOTIFICATION_RESOURCES_UPDATED, Some(params)));
    }

    /// Tells the handshake-era `connection` about list changes (once it is initialized) and
    /// about updates of the resources it subscribed to, until the returned future is dropped
    /// or the server is gone. A transport that runs its own handshake-era connections (the
    /// Streamable HTTP server's sessions) spawns it beside each connection, as
    /// [`serve_stream`](crate::serve_stream) does.
    pub fn forward_changes(
        &self,
        connection: crate::Connection,
    ) -> impl std::future::Future<Output = ()> + Send + 'static {
        crate::stream::forward_changes(self.subscribe_changes(), connection)
    }

    /// A receiver of the changes connections are told about.
    pub(crate) fn subscribe_changes(&self) -> tokio::sync::broadcast::Receiver<Change> {
        self.inner.changes.subscribe()
    }

    /// The `server/discover` result at `version`.
    pub(crate) fn discover(&self, version: ProtocolVersion) -> DiscoverResult {
        let supported = ProtocolVersion::of_era(ferromcp_types::Era::Modern)
            .map(|v| v.as_str().to_owned())
            .collect();
        let mut result = DiscoverResult::new(supported, self.capabilities(version));
        result.instructions.clone_from(&self.inner.instructions);
        result
    }
}

impl fmt::Debug for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut methods: Vec<_> = self.inner.requests.keys().collect();
        methods.sort();
        f.debug_struct("Server")
            .field("info", &self.inner.info)
            .field("methods", &methods)
            .finish_non_exhaustive()
    }
}

/// Builds a [`Server`]; see [`Server::builder`].
#[must_use]
pub struct ServerBuilder {
    info: Implementation,
    instructions: Option<String>,
    requests: HashMap<String, Arc<RequestFn>>,
    notifications: HashMap<String, Arc<NotifyFn>>,
    middleware: Vec<Arc<dyn Middleware>>,
    tracing: bool,
    #[cfg(feature = "otel")]
    pub(crate) otel: crate::otel::OtelOptions,
    cache_hints: HashMap<String, CacheHint>,
    list_changed: ListChanged,
    experimental: Option<CapabilityMap>,
    extensions: Option<CapabilityMap>,
    contributors: Vec<Arc<ContributeFn>>,
    extension_methods: Vec<String>,
    extension_result_types: Vec<String>,
    tool_headers: Option<Arc<dyn ToolHeaders>>,
    subscription_limits: SubscriptionLimits,
    client_request_timeout: Option<Duration>,
    setup: Option<Arc<SetupFn>>,
    teardown: Option<Arc<TeardownFn>>,
    errors: Vec<BuildError>,
}

impl ServerBuilder {
    fn new(info: Implementation) -> Self {
        let mut b = Self {
            info,
            instructions: None,
            requests: HashMap::new(),
            notifications: HashMap::new(),
            middleware: Vec::new(),
            tracing: true,
            #[cfg(feature = "otel")]
            otel: crate::otel::OtelOptions::default(),
            cache_hints: HashMap::new(),
            list_changed: ListChanged::default(),
            experimental: None,
            extensions: None,
            contributors: Vec::new(),
            extension_methods: Vec::new(),
            extension_result_types: Vec::new(),
            tool_headers: None,
            subscription_limits: SubscriptionLimits::default(),
            client_request_timeout: Some(DEFAULT_CLIENT_REQUEST_TIMEOUT),
            setup: None,
            teardown: None,
            errors: Vec::new(),
        };
        b.requests.insert(
            methods::PING.into(),
            erase_request(|_: RequestContext, _: RequestParams| async { Ok(EmptyResult::new()) }),
        );
        b.requests.insert(
            methods::SERVER_DISCOVER.into(),
            erase_request(|ctx: RequestContext, _: RequestParams| async move {
                Ok(ctx.server().discover(ctx.protocol_version()))
            }),
        );
        b
    }

    /// Sets the full server info (name, version, title, description, website, icons).
    pub fn info(mut self, info: Implementation) -> Self {
        self.info = info;
        self
    }

    /// Sets the instructions sent with `initialize` and `server/discover`.
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = Some(text.into());
        self
    }

    /// Registers the handler of the spec method `R` (for example `methods::CallTool`).
    ///
    /// The handler gets the request context and typed params; it returns any serializable
    /// result (usually `R::Result`), or a [`HandlerError`].
    pub fn on<R, O, F, Fut>(self, handler: F) -> Self
    where
        R: Request,
        O: Serialize + Send + 'static,
        F: Fn(RequestContext, R::Params) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O, HandlerError>> + Send + 'static,
    {
        self.on_request::<R::Params, O, F, Fut>(R::METHOD, handler)
    }

    /// Registers the handler of any request method, spec or custom.
    pub fn on_request<P, O, F, Fut>(mut self, method: &str, handler: F) -> Self
    where
        P: DeserializeOwned + Send + 'static,
        O: Serialize + Send + 'static,
        F: Fn(RequestContext, P) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O, HandlerError>> + Send + 'static,
    {
        if method == methods::INITIALIZE {
            self.errors.push(BuildError::InitializeHandler);
            return self;
        }
        if !self.extension_methods.iter().any(|m| m == method) {
            warn_if_deprecated(method, Kind::ClientRequest);
        }
        self.on_request_quiet(method, handler)
    }

    /// [`on_request`](Self::on_request) without the deprecation warning, for the handlers
    /// the crate's own layers register (the user chose nothing deprecated).
    pub(crate) fn on_request_quiet<P, O, F, Fut>(mut self, method: &str, handler: F) -> Self
    where
        P: DeserializeOwned + Send + 'static,
        O: Serialize + Send + 'static,
        F: Fn(RequestContext, P) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O, HandlerError>> + Send + 'static,
    {
        self.requests
            .insert(method.to_owned(), erase_request(handler));
        self
    }

    /// Registers an erased handler as it is (the crate's own layers).
    pub(crate) fn on_erased(mut self, method: &str, handler: Arc<RequestFn>) -> Self {
        self.requests.insert(method.to_owned(), handler);
        self
    }

    /// Serves `logging/setLevel` (handshake era) by recording the level on the connection,
    /// which gates [`RequestContext::log`]; the high-level server does this for every server,
    /// since its handlers can log. No deprecation warning: the user chose nothing deprecated.
    pub(crate) fn with_standard_logging(mut self) -> Self {
        let set_level = |ctx: RequestContext, p: ferromcp_types::mcp::SetLevelRequestParams| async move {
            ctx.connection().set_log_level(p.level);
            Ok(EmptyResult::new())
        };
        self.requests.insert(
            methods::LOGGING_SET_LEVEL.to_owned(),
            erase_request(set_level),
        );
        self
    }

    /// Registers the handler of the spec notification `N`.
    pub fn on_notification<N, F, Fut>(self, handler: F) -> Self
    where
        N: Notification,
        F: Fn(RequestContext, N::Params) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), HandlerError>> + Send + 'static,
    {
        self.on_notification_method::<N::Params, F, Fut>(N::METHOD, handler)
    }

    /// Registers the handler of any notification method, spec or custom.
    pub fn on_notification_method<P, F, Fut>(mut self, method: &str, handler: F) -> Self
    where
        P: DeserializeOwned + Send + 'static,
        F: Fn(RequestContext, P) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), HandlerError>> + Send + 'static,
    {
        warn_if_deprecated(method, Kind::ClientNotification);
        self.notifications
            .insert(method.to_owned(), erase_notification(handler));
        self
    }

    /// Adds a middleware layer; layers added first are outermost.
    pub fn middleware(mut self, layer: impl Middleware) -> Self {
        self.middleware.push(Arc::new(layer));
        self
    }

    /// Turns the default tracing layer (the outermost one) on or off.
    pub fn tracing(mut self, on: bool) -> Self {
        self.tracing = on;
        self
    }

    /// Sets the cache hint for a cacheable method's results.
    pub fn cache_hint(mut self, method: &str, hint: CacheHint) -> Self {
        if CACHEABLE_METHODS.contains(&method) {
            self.cache_hints.insert(method.to_owned(), hint);
        } else {
            self.errors
                .push(BuildError::NotCacheable(method.to_owned()));
        }
        self
    }

    /// Announces `notifications/tools/list_changed` to handshake-era clients.
    pub fn tools_list_changed(mut self, on: bool) -> Self {
        self.list_changed.tools = on;
        self
    }

    /// Announces `notifications/prompts/list_changed` to handshake-era clients.
    pub fn prompts_list_changed(mut self, on: bool) -> Self {
        self.list_changed.prompts = on;
        self
    }

    /// Announces `notifications/resources/list_changed` to handshake-era clients.
    pub fn resources_list_changed(mut self, on: bool) -> Self {
        self.list_changed.resources = on;
        self
    }

    /// Advertises an experimental capability.
    pub fn experimental(mut self, name: impl Into<String>, settings: JsonObject) -> Self {
        self.experimental
            .get_or_insert_with(Default::default)
            .insert(name.into(), settings);
        self
    }

    /// Lets an extension add its members to the advertised capabilities: `contribute` gets
    /// the revision and the capabilities derived from everything else (handlers, flags,
    /// [`ServerBuilder::experimental`], [`ServerBuilder::extension`]) and may add or merge
    /// into them, so a capability that differs by revision is written once, by its owner.
    /// Contributors run in registration order. The tasks layer announces tasks this way.
    ///
    /// ```
    /// use ferromcp_server::Server;
    /// use ferromcp_types::ProtocolVersion;
    /// use ferromcp_types::mcp::JsonObject;
    ///
    /// let server = Server::builder("demo", "1.0.0")
    ///     .contribute_capabilities(|version, caps| {
    ///         if version.is_modern() {
    ///             caps.extensions
    ///                 .get_or_insert_with(Default::default)
    ///                 .insert("com.example/fancy".into(), JsonObject::new());
    ///         }
    ///     })
    ///     .build()
    ///     .unwrap();
    /// let caps = server.capabilities(ProtocolVersion::LATEST);
    /// assert!(caps.extensions.unwrap().contains_key("com.example/fancy"));
    /// ```
    pub fn contribute_capabilities(
        mut self,
        contribute: impl Fn(ProtocolVersion, &mut ServerCapabilities) + Send + Sync + 'static,
    ) -> Self {
        self.contributors.push(Arc::new(contribute));
        self
    }

    /// Serves `method` as an extension's method: at a revision whose schema does not define
    /// it, the kernel lets it through to its handler (registered with
    /// [`ServerBuilder::on_request`]), which checks its own params. At revisions that define
    /// it, it is checked as the spec says. The tasks extension serves `tasks/get` and
    /// `tasks/cancel` at 2026-07-28 this way.
    pub fn extension_method(mut self, method: &str) -> Self {
        if !self.extension_methods.iter().any(|m| m == method) {
            self.extension_methods.push(method.to_owned());
        }
        self
    }

    /// At 2026-07-28, passes a result whose `resultType` is `result_type` through as an
    /// extension's own result in place of the method's (only the server info is stamped on
    /// it; it is not shaped or checked as the method's result). The tasks extension answers
    /// a task-augmented `tools/call` with a task handle (`resultType: "task"`) this way.
    pub fn extension_result_type(mut self, result_type: &str) -> Self {
        if !self.extension_result_types.iter().any(|t| t == result_type) {
            self.extension_result_types.push(result_type.to_owned());
        }
        self
    }

    /// Bounds each connection's resource subscriptions (default
    /// [`SubscriptionLimits::default`]); the high-level server's `resources/subscribe`
    /// enforces them through [`Server::subscription_limits`].
    pub fn subscription_limits(mut self, limits: SubscriptionLimits) -> Self {
        self.subscription_limits = limits;
        self
    }

    /// The timeout of a request a handler sends the client (elicitation, sampling, roots)
    /// without one of its own (default [`DEFAULT_CLIENT_REQUEST_TIMEOUT`]; `None`: wait as
    /// long as the client takes). Progress from the client restarts it.
    pub fn client_request_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.client_request_timeout = timeout;
        self
    }

    /// Sets where transports find the tools' `x-mcp-header` annotations (the high-level
    /// server sets its tool registry; see [`ToolHeaders`]).
    pub fn tool_headers(mut self, source: Arc<dyn ToolHeaders>) -> Self {
        self.tool_headers = Some(source);
        self
    }

    /// Advertises an extension (2026-07-28 `extensions`; key like `io.modelcontextprotocol/tasks`).
    pub fn extension(mut self, id: impl Into<String>, settings: JsonObject) -> Self {
        self.extensions
            .get_or_insert_with(Default::default)
            .insert(id.into(), settings);
        self
    }

    /// Sets a lifespan: `setup` runs before the server serves its first connection, its value
    /// reaches handlers through [`RequestContext::lifespan`], and `teardown` gets it back
    /// after the last connection closes.
    pub fn lifespan<T, S, SFut, D, DFut>(mut self, setup: S, teardown: D) -> Self
    where
        T: Send + Sync + 'static,
        S: Fn() -> SFut + Send + Sync + 'static,
        SFut: Future<Output = Result<T, BoxError>> + Send + 'static,
        D: Fn(Arc<T>) -> DFut + Send + Sync + 'static,
        DFut: Future<Output = ()> + Send + 'static,
    {
        self.setup = Some(Arc::new(move || {
            let fut = setup();
            Box::pin(async move { fut.await.map(|v| Arc::new(v) as Arc<dyn Any + Send + Sync>) })
        }));
        let teardown = Arc::new(teardown);
        self.teardown = Some(Arc::new(move |value| {
            let teardown = teardown.clone();
            Box::pin(async move {
                if let Ok(v) = value.downcast::<T>() {
                    teardown(v).await;
                }
            })
        }));
        self
    }

    /// Builds the server; fails if a registration was refused.
    pub fn build(self) -> Result<Server, BuildError> {
        if let Some(e) = self.errors.into_iter().next() {
            return Err(e);
        }
        // The default tracing layer is run by the kernel itself (`ServerRunner::serve_request`),
        // outermost, so a request whose span no subscriber wants costs no layer at all.
        let layers: Vec<Arc<dyn Middleware>> = self.middleware;
        // An `Implementation` always serializes (its maps have string keys).
        let info_text = serde_json::value::to_raw_value(&self.info)
            .unwrap_or_else(|_| serde_json::value::RawValue::NULL.to_owned());
        Ok(Server {
            inner: Arc::new(Inner {
                info: self.info,
                info_text,
                instructions: self.instructions,
                requests: self.requests,
                notifications: self.notifications,
                middleware: layers.into(),
                tracing: self.tracing,
                #[cfg(feature = "otel")]
                otel: crate::otel::ServerOtel::new(self.otel),
                cache_hints: self.cache_hints,
                list_changed: self.list_changed,
                experimental: self.experimental,
                extensions: self.extensions,
                contributors: self.contributors,
                extension_methods: self.extension_methods,
                extension_result_types: self.extension_result_types,
                tool_headers: self.tool_headers,
                subscription_limits: self.subscription_limits,
                client_request_timeout: self.client_request_timeout,
                setup: self.setup,
                teardown: self.teardown,
                lifespan: Lifespan::default(),
                changes: tokio::sync::broadcast::channel(CHANGE_QUEUE).0,
            }),
        })
    }
}
