//! [`ClientBuilder`]: client identity, lifecycle mode, handlers, cache and limits.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use ferromcp_dispatch::MessageSink;
use ferromcp_dispatch::MessageSource;
use ferromcp_types::jsonrpc::ErrorObject;
use ferromcp_types::mcp::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    Implementation, ListRootsResult, LoggingLevel, LoggingMessageNotificationParams,
};

use crate::cache::{CacheConfig, ResponseCache};
use crate::client::{Client, Inner, Settings};
use crate::error::ClientError;
use crate::handlers::{
    ClientHandler, ElicitationHandler, Handlers, NotificationHandler, RootsHandler,
    SamplingHandler, ServerNotification,
};
use crate::lifecycle::{self, Lifecycle};
use crate::multiround::DEFAULT_MAX_ROUNDS;
use crate::pagination::DEFAULT_MAX_PAGES;
use crate::transport::{StreamTransport, Transport};

/// The default bound on the `server/discover` probe of [`Lifecycle::Auto`].
pub const DEFAULT_PROBE_TIMEOUT: Duration = Duration::from_secs(3);
/// The default per-request timeout (restarted by progress).
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// The default maximum total time of one request, whatever progress arrives: 10 minutes.
/// Progress restarts the per-request timeout, so without this bound a server reporting
/// progress forever would hold a call forever. Longer work belongs in a task; raise it per
/// client ([`ClientBuilder::max_total_timeout`]) or per call
/// ([`RequestOptions::max_total_timeout`](crate::RequestOptions::max_total_timeout)).
pub const DEFAULT_MAX_TOTAL_TIMEOUT: Duration = Duration::from_secs(600);

/// Builds a [`Client`].
///
/// ```no_run
/// # async fn demo() -> Result<(), ferromcp_client::ClientError> {
/// use ferromcp_client::{Client, Lifecycle, StdioTransport};
/// use ferromcp_types::mcp::{ElicitAction, ElicitResult, Implementation, ListRootsResult, Root};
///
/// let client = Client::builder()
///     .client_info(Implementation::new("my-host", "1.0.0"))
///     .lifecycle(Lifecycle::Auto)
///     .on_roots(|| async { Ok(ListRootsResult::new(vec![Root::new("file:///work")])) })
///     .on_elicitation(|_params| async { Ok(ElicitResult::new(ElicitAction::Decline)) })
///     .connect(StdioTransport::new("ferromcp").arg("serve"))
///     .await?;
/// println!("{:?}", client.session().server_info);
/// # Ok(()) }
/// ```
#[must_use]
pub struct ClientBuilder {
    client_info: Implementation,
    lifecycle: Lifecycle,
    probe_timeout: Duration,
    request_timeout: Option<Duration>,
    max_total_timeout: Option<Duration>,
    max_rounds: u32,
    max_pages: usize,
    cache: CacheConfig,
    partition: Option<String>,
    log_level: Option<LoggingLevel>,
    handlers: Handlers,
    tasks: Option<crate::tasks::TaskConfig>,
    #[cfg(feature = "otel")]
    pub(crate) otel: crate::otel::OtelOptions,
    apps: Option<Box<crate::apps::AppConfig>>,
}

impl Default for ClientBuilder {
    fn default() -> Self {
        Self {
            client_info: Implementation::new("ferromcp-client", env!("CARGO_PKG_VERSION")),
            lifecycle: Lifecycle::default(),
            probe_timeout: DEFAULT_PROBE_TIMEOUT,
            request_timeout: Some(DEFAULT_REQUEST_TIMEOUT),
            max_total_timeout: Some(DEFAULT_MAX_TOTAL_TIMEOUT),
            max_rounds: DEFAULT_MAX_ROUNDS,
            max_pages: DEFAULT_MAX_PAGES,
            cache: CacheConfig::default(),
            partition: None,
            log_level: None,
            handlers: Handlers {
                elicitation_modes: (true, true),
                ..Handlers::default()
            },
            tasks: None,
            #[cfg(feature = "otel")]
            otel: crate::otel::OtelOptions::default(),
            apps: None,
        }
    }
}

impl fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("client_info", &self.client_info)
            .field("lifecycle", &self.lifecycle)
            .field("probe_timeout", &self.probe_timeout)
            .field("request_timeout", &self.request_timeout)
            .field("max_total_timeout", &self.max_total_timeout)
            .field("max_rounds", &self.max_rounds)
            .field("cache", &self.cache)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Starts building a client.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }
}

impl ClientBuilder {
    /// Declares MCP Apps support (the `io.modelcontextprotocol/ui` extension with
    /// `config`'s MIME types, in every era) and sets the bound [`Client::tool_app`] puts on
    /// an app's size; see [`crate::apps`].
    pub fn apps(mut self, config: crate::apps::AppConfig) -> Self {
        self.apps = Some(Box::new(config));
        self
    }

    /// Sets the client's name and version (`clientInfo`).
    pub fn client_info(mut self, info: Implementation) -> Self {
        self.client_info = info;
        self
    }

    /// Sets the lifecycle mode (default [`Lifecycle::Auto`]).
    pub fn lifecycle(mut self, mode: Lifecycle) -> Self {
        self.lifecycle = mode;
        self
    }

    /// Sets the bound on the auto mode's `server/discover` probe (default 3 s).
    pub fn probe_timeout(mut self, d: Duration) -> Self {
        self.probe_timeout = d;
        self
    }

    /// Sets the default per-request timeout (default 60 s, restarted by progress); `None`
    /// waits forever.
    pub fn request_timeout(mut self, d: Option<Duration>) -> Self {
        self.request_timeout = d;
        self
    }

    /// Sets the default maximum total time of one request, whatever progress arrives
    /// (default [`DEFAULT_MAX_TOTAL_TIMEOUT`], 10 minutes); `None` lifts it (a server that
    /// keeps reporting progress then holds the call until it answers or is cancelled).
    pub fn max_total_timeout(mut self, d: Option<Duration>) -> Self {
        self.max_total_timeout = d;
        self
    }

    /// Sets the bound on input-required retries of one call (default 10).
    pub fn max_rounds(mut self, n: u32) -> Self {
        self.max_rounds = n;
        self
    }

    /// Sets the bound on pages one `list_all_*` call follows (default 1000).
    pub fn max_pages(mut self, n: usize) -> Self {
        self.max_pages = n;
        self
    }

    /// Sets the response cache (on by default).
    pub fn cache(mut self, config: CacheConfig) -> Self {
        self.cache = config;
        self
    }

    /// Sets the partition key of `private` cache entries (for example derived from the
    /// credential).
    pub fn cache_partition(mut self, partition: impl Into<String>) -> Self {
        self.partition = Some(partition.into());
        self
    }

    /// Sets the log level: sent with `logging/setLevel` after the handshake (when the server
    /// declares `logging`; a failure is logged, not fatal), or carried by every request at
    /// 2026-07-28.
    pub fn log_level(mut self, level: LoggingLevel) -> Self {
        self.log_level = Some(level);
        self
    }

    /// Enables tasks (see [`tasks`](crate::tasks)): declares task support (the 2025-11-25
    /// `tasks` capability; the `io.modelcontextprotocol/tasks` extension at 2026-07-28),
    /// accepts task handles for `tools/call` and waits for them with these polling settings.
    pub fn tasks(mut self, config: crate::tasks::TaskConfig) -> Self {
        self.tasks = Some(config);
        self
    }

    /// Answers `sampling/createMessage` (declares the `sampling` capability).
    pub fn on_sampling<F, Fut>(self, f: F) -> Self
    where
        F: Fn(CreateMessageRequestParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CreateMessageResult, ErrorObject>> + Send + 'static,
    {
        self.sampling_handler(Arc::new(f))
    }

    /// Answers `sampling/createMessage` with a trait object.
    pub fn sampling_handler(mut self, h: Arc<dyn SamplingHandler>) -> Self {
        self.handlers.sampling = Some(h);
        self
    }

    /// Answers `elicitation/create` (declares `elicitation` with form and URL modes).
    pub fn on_elicitation<F, Fut>(self, f: F) -> Self
    where
        F: Fn(ElicitRequestParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ElicitResult, ErrorObject>> + Send + 'static,
    {
        self.elicitation_handler(Arc::new(f))
    }

    /// Answers `elicitation/create` with a trait object.
    pub fn elicitation_handler(mut self, h: Arc<dyn ElicitationHandler>) -> Self {
        self.handlers.elicitation = Some(h);
        self
    }

    /// Which elicitation modes are declared when an elicitation handler is set (default
    /// both).
    pub fn elicitation_modes(mut self, form: bool, url: bool) -> Self {
        self.handlers.elicitation_modes = (form, url);
        self
    }

    /// Answers `roots/list` (declares `roots` with `listChanged`).
    pub fn on_roots<F, Fut>(self, f: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ListRootsResult, ErrorObject>> + Send + 'static,
    {
        self.roots_handler(Arc::new(f))
    }

    /// Answers `roots/list` with a trait object.
    pub fn roots_handler(mut self, h: Arc<dyn RootsHandler>) -> Self {
        self.handlers.roots = Some(h);
        self
    }

    /// Receives every server notification (logging, list changes, resource updates,
    /// elicitation completions, others). May be called several times.
    pub fn on_notification<F, Fut>(self, f: F) -> Self
    where
        F: Fn(ServerNotification) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.notification_handler(Arc::new(f))
    }

    /// Receives server notifications with a trait object.
    pub fn notification_handler(mut self, h: Arc<dyn NotificationHandler>) -> Self {
        self.handlers.notifications.push(h);
        self
    }

    /// Receives `notifications/message` (server logs).
    pub fn on_logging<F, Fut>(self, f: F) -> Self
    where
        F: Fn(LoggingMessageNotificationParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let f = Arc::new(f);
        self.on_notification(move |n| {
            let f = f.clone();
            async move {
                if let ServerNotification::Logging(p) = n {
                    f(p).await;
                }
            }
        })
    }

    /// Connects over a message-stream pair (see [`StreamTransport`]).
    pub async fn connect_stream<S, K>(self, source: S, sink: K) -> Result<Client, ClientError>
    where
        S: MessageSource,
        K: MessageSink,
    {
        self.connect(StreamTransport::new(source, sink)).await
    }

    /// Opens `transport`, starts serving the server's messages, and runs the lifecycle. On a
    /// lifecycle failure the transport is shut down.
    pub async fn connect(self, transport: impl Transport) -> Result<Client, ClientError> {
        let connected = transport.open().await?;
        let handlers = Arc::new(self.handlers);
        if let Some(config) = self.tasks.as_ref().and_then(|t| t.hosted.as_deref()) {
            let hosted = crate::hosted_tasks::HostedTasks::new(
                config.clone(),
                Arc::downgrade(&connected.dispatcher),
            );
            let _ = handlers.tasks.hosted.set(Arc::new(hosted));
        }
        let cache = Arc::new(ResponseCache::new(self.cache));
        if let Some(p) = self.partition {
            cache.set_partition(p);
        }
        let settings = Settings {
            client_info: self.client_info,
            capabilities: declare_apps(
                handshake_capabilities(&handlers, self.tasks.as_ref()),
                self.apps.as_deref(),
            ),
            modern_capabilities: declare_apps(
                crate::tasks::declare(handlers.capabilities(), self.tasks.is_some(), true),
                self.apps.as_deref(),
            ),
            request_timeout: self.request_timeout,
            max_total_timeout: self.max_total_timeout,
            probe_timeout: self.probe_timeout,
            max_rounds: self.max_rounds,
            max_pages: self.max_pages,
            tasks: self.tasks,
            apps: self.apps,
        };
        let dispatcher = connected.dispatcher.clone();
        let handler = Arc::new(ClientHandler {
            handlers: handlers.clone(),
            cache: cache.clone(),
        });
        let run = dispatcher.clone();
        let listeners = handlers.listeners.clone();
        let hosted_tasks = handlers.tasks.hosted.get().cloned();
        let task = tokio::spawn(async move {
            if let Err(e) = run.run(handler).await {
                tracing::warn!(error = %e, "the client's dispatcher could not run");
            }
            // The connection is gone: change subscriptions end (src/listen.rs).
            listeners.connection_ended();
            // And so do the tasks hosted for the server (src/hosted_tasks.rs).
            if let Some(hosted) = hosted_tasks {
                hosted.connection_ended();
            }
        });
        let inner = Inner {
            #[cfg(feature = "otel")]
            otel: crate::otel::ClientOtel::new(
                self.otel,
                connected.network.clone(),
                connected.session_id.clone(),
            ),
            dispatcher,
            shutdown: tokio::sync::Mutex::new(connected.shutdown),
            run_task: Mutex::new(Some(task)),
            settings,
            handlers,
            cache,
            session: OnceLock::new(),
            log_level: Mutex::new(None),
            output_schemas: Mutex::new(HashMap::new()),
            envelope: Default::default(),
        };
        // The handshake and the log level are awaited once per connection: boxed, so their
        // futures (some 3 KB each) do not sit in `connect`'s, nor in every caller's.
        if let Err(e) = Box::pin(lifecycle::start(&inner, self.lifecycle)).await {
            inner.shutdown().await;
            return Err(e);
        }
        let client = Client {
            inner: Arc::new(inner),
        };
        if let Some(level) = self.log_level {
            let handshake = client.session().era == ferromcp_types::Era::Handshake;
            if handshake && client.session().capabilities.logging.is_none() {
                tracing::debug!("the server declares no logging capability: level not set");
            } else if let Err(e) = Box::pin(client.set_logging_level(level)).await {
                tracing::warn!(error = %e, "setting the log level failed");
            }
        }
        Ok(client)
    }
}

/// The capabilities declared in the handshake era: the handlers', with tasks the `tasks`
/// capability, and with hosting its client-hosted part (2025-11-25 only: the 2026-07-28
/// tasks extension has no client-hosted tasks).
fn handshake_capabilities(
    handlers: &Handlers,
    tasks: Option<&crate::tasks::TaskConfig>,
) -> ferromcp_types::mcp::ClientCapabilities {
    let caps = crate::tasks::declare(handlers.capabilities(), tasks.is_some(), false);
    if tasks.is_some_and(|t| t.hosted.is_some()) {
        crate::hosted_tasks::declare(caps)
    } else {
        caps
    }
}

/// Adds the MCP Apps extension with its MIME types, when the host declared app support.
fn declare_apps(
    mut caps: ferromcp_types::mcp::ClientCapabilities,
    apps: Option<&crate::apps::AppConfig>,
) -> ferromcp_types::mcp::ClientCapabilities {
    if let Some(config) = apps {
        caps.extensions
            .get_or_insert_with(Default::default)
            .insert(crate::apps::EXTENSION_UI.to_owned(), config.settings());
    }
    caps
}
