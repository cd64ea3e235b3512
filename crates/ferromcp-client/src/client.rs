//! [`Client`]: the connection handle, the negotiated [`SessionInfo`], and the one path every
//! request takes (envelope, cache, multi-round driver, result checks).

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use ferromcp_dispatch::{CallOptions, Dispatcher};
use ferromcp_types::jsonrpc::{ErrorObject, Payload};
use ferromcp_types::mcp::methods;
use ferromcp_types::mcp::{
    ClientCapabilities, DiscoverResult, Implementation, InitializeResult, JsonObject, LoggingLevel,
    META_LOG_LEVEL, ServerCapabilities,
};
use ferromcp_types::{Era, ProtocolVersion};
use serde_json::Value;
use tokio::task::JoinHandle;

use crate::cache::{CacheMode, ResponseCache, slot_of};
use crate::error::ClientError;
use crate::handlers::Handlers;
use crate::options::RequestOptions;
use crate::transport::TransportShutdown;

/// Methods that may answer `input_required` (2026-07-28).
pub(crate) const INPUT_REQUIRED_METHODS: [&str; 3] = [
    methods::TOOLS_CALL,
    methods::PROMPTS_GET,
    methods::RESOURCES_READ,
];

/// What the lifecycle established about the server.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SessionInfo {
    /// The era the connection runs in.
    pub era: Era,
    /// The protocol version in use.
    pub protocol_version: ProtocolVersion,
    /// The server's implementation, when it said.
    pub server_info: Option<Implementation>,
    /// The server's capabilities.
    pub capabilities: ServerCapabilities,
    /// The server's instructions for the model.
    pub instructions: Option<String>,
    /// The versions the server supports (from `server/discover`; the negotiated version in
    /// the handshake era).
    pub supported_versions: Vec<String>,
}

impl SessionInfo {
    pub(crate) fn from_initialize(version: ProtocolVersion, r: InitializeResult) -> Self {
        Self {
            era: Era::Handshake,
            protocol_version: version,
            server_info: Some(r.server_info),
            capabilities: r.capabilities,
            instructions: r.instructions,
            supported_versions: vec![r.protocol_version],
        }
    }

    pub(crate) fn from_discover(version: ProtocolVersion, r: DiscoverResult) -> Self {
        let server_info = r.meta.as_ref().and_then(|m| m.server_info()?.ok());
        Self {
            era: Era::Modern,
            protocol_version: version,
            server_info,
            capabilities: r.capabilities,
            instructions: r.instructions,
            supported_versions: r.supported_versions,
        }
    }
}

/// Settings fixed at build time.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub(crate) client_info: Implementation,
    pub(crate) capabilities: ClientCapabilities,
    pub(crate) request_timeout: Option<Duration>,
    /// The default maximum total time of a request.
    pub(crate) max_total_timeout: Option<Duration>,
    pub(crate) probe_timeout: Duration,
    pub(crate) max_rounds: u32,
    pub(crate) max_pages: usize,
    /// The capabilities sent in the 2026-07-28 envelope (the tasks extension instead of the
    /// 2025-11-25 `tasks` capability).
    pub(crate) modern_capabilities: ClientCapabilities,
    /// Task settings, when tasks are enabled.
    pub(crate) tasks: Option<crate::tasks::TaskConfig>,
    /// MCP Apps settings, when the host declared app support.
    pub(crate) apps: Option<Box<crate::apps::AppConfig>>,
}

pub(crate) struct Inner {
    pub(crate) dispatcher: Arc<dyn Dispatcher>,
    pub(crate) shutdown: tokio::sync::Mutex<Option<Box<dyn TransportShutdown>>>,
    pub(crate) run_task: Mutex<Option<JoinHandle<()>>>,
    pub(crate) settings: Settings,
    pub(crate) handlers: Arc<Handlers>,
    pub(crate) cache: Arc<ResponseCache>,
    pub(crate) session: OnceLock<SessionInfo>,
    pub(crate) log_level: Mutex<Option<LoggingLevel>>,
    /// Output schemas of the tools seen in `tools/list` results, by name.
    pub(crate) output_schemas: Mutex<HashMap<String, Option<JsonObject>>>,
    /// The 2026-07-28 envelope, encoded once (src/raw.rs).
    pub(crate) envelope: crate::raw::Envelope,
    /// The OpenTelemetry settings, histograms and session clock (src/otel.rs).
    #[cfg(feature = "otel")]
    pub(crate) otel: crate::otel::ClientOtel,
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Drop for Inner {
    fn drop(&mut self) {
        // otel: `mcp.client.session.duration` (src/otel.rs).
        #[cfg(feature = "otel")]
        self.otel.session_ended(self.session.get());
        // The run loop holds only the dispatcher: closing it ends the loop.
        self.dispatcher.close();
        // A client dropped without `shutdown` still ends its transport gracefully when a
        // runtime is at hand (a stdio child is otherwise killed by `kill_on_drop`).
        if let Some(hook) = self.shutdown.get_mut().take()
            && let Ok(rt) = tokio::runtime::Handle::try_current()
        {
            rt.spawn(async move { hook.shutdown().await });
        }
    }
}

/// A connected MCP client. Cheap to clone; every clone talks over the same connection.
///
/// Build one with [`Client::builder`]. Calls are typed ([`Client::list_tools`],
/// [`Client::call_tool`], ...) or generic ([`Client::request`], [`Client::send_request`]);
/// dropping a call's future cancels it (the server gets `notifications/cancelled`).
#[derive(Clone)]
pub struct Client {
    pub(crate) inner: Arc<Inner>,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("session", &self.inner.session.get())
            .finish_non_exhaustive()
    }
}

/// The `resultType` of a result value, if any.
pub(crate) fn result_type(value: &Value) -> Option<&str> {
    value.get("resultType").and_then(Value::as_str)
}

impl Inner {
    pub(crate) fn era(&self) -> Era {
        self.session.get().map_or(Era::Handshake, |s| s.era)
    }

    /// Adds the 2026-07-28 envelope to `params._meta` (its members encoded once per client).
    pub(crate) fn stamp_envelope(&self, params: &mut JsonObject) {
        let slot = params
            .entry("_meta")
            .or_insert_with(|| Value::Object(JsonObject::new()));
        if !slot.is_object() {
            *slot = Value::Object(JsonObject::new());
        }
        let Value::Object(meta) = slot else { return };
        self.envelope.fill(&self.settings, meta);
        if let Some(level) = *lock(&self.log_level)
            && let Ok(level) = serde_json::to_value(level)
        {
            meta.entry(META_LOG_LEVEL).or_insert(level);
        }
    }

    /// Sends `payload` as `method`; with `opts.on_log`, the log records related to this
    /// request go to that callback while it runs: the route lives in the request's boxed
    /// future (the common path's does not grow). Shared by the typed and the raw paths.
    pub(crate) fn send_routed(
        &self,
        method: &str,
        payload: Payload,
        mut call: CallOptions,
        opts: &RequestOptions,
    ) -> ferromcp_dispatch::BoxFuture<'static, Result<Payload, ErrorObject>> {
        let Some(cb) = &opts.on_log else {
            return self.dispatcher.send_request(method, Some(payload), call);
        };
        let route = crate::handlers::LogRoute::new(&self.handlers, cb.clone());
        call.on_id = Some(route.on_id(call.on_id.take()));
        let send = self.dispatcher.send_request(method, Some(payload), call);
        Box::pin(async move {
            let _route = route;
            send.await
        })
    }

    /// The dispatcher options for one request. Lifecycle requests (`initialize`,
    /// `server/discover`) are never cancelled on abandon.
    pub(crate) fn call_options(&self, method: &str, opts: &RequestOptions) -> CallOptions {
        let lifecycle = method == methods::INITIALIZE || method == methods::SERVER_DISCOVER;
        let mut co = CallOptions::new().cancel_on_abandon(!lifecycle);
        co.timeout = opts.timeout.or(self.settings.request_timeout);
        co.max_total_timeout = opts.max_total_timeout.or(self.settings.max_total_timeout);
        co.on_progress = opts.on_progress.clone();
        co
    }

    /// Sends one request and checks its `resultType`: absent or `complete` passes,
    /// `input_required` passes for the methods that may return it, anything else fails.
    pub(crate) async fn send_once(
        &self,
        method: &str,
        mut params: JsonObject,
        opts: &RequestOptions,
        call: CallOptions,
        modern: bool,
    ) -> Result<Value, ClientError> {
        if let Some(extra) = &opts.meta {
            let slot = params
                .entry("_meta")
                .or_insert_with(|| Value::Object(JsonObject::new()));
            if let Value::Object(meta) = slot {
                for (k, v) in extra.as_map() {
                    meta.insert(k.clone(), v.clone());
                }
            }
        }
        if modern {
            self.stamp_envelope(&mut params);
        }
        // otel: a CLIENT span whose trace context travels in `params._meta` (src/otel.rs).
        #[cfg(feature = "otel")]
        let mut traced = crate::otel::OutgoingCall::start(self, method, &mut params);
        // The JSON-RPC id is assigned by the dispatcher: it records it on the span.
        #[cfg(feature = "otel")]
        let call = {
            let mut call = call;
            if let Some(on_id) = traced.on_id() {
                call.on_id = Some(on_id);
            }
            call
        };
        let payload = Payload::from(params);
        let send = self.send_routed(method, payload, call, opts);
        // (Boxed again: the instrumented future and the call stay out of every caller's future.)
        #[cfg(feature = "otel")]
        let send: ferromcp_dispatch::BoxFuture<'static, _> =
            Box::pin(tracing::Instrument::instrument(send, traced.span().clone()));
        let result = send.await.map_err(ClientError::from).and_then(|payload| {
            payload
                .into_value()
                .map_err(|e| ClientError::decode(method, e))
        });
        #[cfg(feature = "otel")]
        traced.finish(&result);
        let mut value = result?;
        // Be lenient where servers are known to be sloppy: a tool result without `content`
        // is an empty one (rmcp rejected these until 3.11, #1434).
        if method == methods::TOOLS_CALL
            && !matches!(result_type(&value), Some("input_required" | "task"))
            && let Value::Object(map) = &mut value
        {
            map.entry("content")
                .or_insert_with(|| Value::Array(Vec::new()));
        }
        match result_type(&value) {
            None | Some("complete") => Ok(value),
            Some("input_required") if INPUT_REQUIRED_METHODS.contains(&method) => Ok(value),
            // A task handle (2026-07-28 tasks extension), only when this client declared it.
            Some("task") if method == methods::TOOLS_CALL && self.settings.tasks.is_some() => {
                Ok(value)
            }
            Some(other) => Err(ClientError::UnexpectedResultType {
                method: method.to_owned(),
                result_type: other.to_owned(),
            }),
        }
    }

    /// The path of every call after the lifecycle: cache, send (driving `input_required`
    /// rounds unless `drive` is false), store.
    pub(crate) async fn execute(
        &self,
        method: &str,
        params: JsonObject,
        opts: &RequestOptions,
        drive: bool,
    ) -> Result<Value, ClientError> {
        let modern = self.era() == Era::Modern;
        let mode = if self.cache.enabled() {
            opts.effective_cache()
        } else {
            CacheMode::Bypass
        };
        let slot = match mode {
            CacheMode::Bypass => None,
            _ => slot_of(method, &params),
        };
        if let (Some(slot), CacheMode::Use) = (&slot, mode)
            && let Some(hit) = self.cache.get(slot)
        {
            tracing::trace!(method, "answered from the response cache");
            self.observe(method, &hit);
            return Ok(hit);
        }
        let ticket = slot.map(|s| self.cache.ticket(s));
        let value = if drive && modern && INPUT_REQUIRED_METHODS.contains(&method) {
            crate::multiround::drive(self, method, params, opts).await?
        } else {
            let call = self.call_options(method, opts);
            self.send_once(method, params, opts, call, modern).await?
        };
        if let Some(ticket) = ticket
            && result_type(&value) != Some("input_required")
        {
            self.cache.put(ticket, &value, modern);
        }
        self.observe(method, &value);
        Ok(value)
    }

    /// Learns from results: the output schemas of listed tools.
    fn observe(&self, method: &str, value: &Value) {
        if method != methods::TOOLS_LIST {
            return;
        }
        let Some(tools) = value.get("tools").and_then(Value::as_array) else {
            return;
        };
        self.handlers.tasks.observe_tools(tools);
        let mut schemas = lock(&self.output_schemas);
        for tool in tools {
            if let Some(name) = tool.get("name").and_then(Value::as_str) {
                let schema = tool.get("outputSchema").and_then(Value::as_object).cloned();
                schemas.insert(name.to_owned(), schema);
            }
        }
    }

    /// Closes the connection and ends the transport (bounded).
    pub(crate) async fn shutdown(&self) {
        self.dispatcher.close();
        self.handlers.listeners.connection_ended();
        let hook = self.shutdown.lock().await.take();
        if let Some(hook) = hook {
            hook.shutdown().await;
        }
        let task = lock(&self.run_task).take();
        if let Some(task) = task
            && tokio::time::timeout(Duration::from_secs(1), task)
                .await
                .is_err()
        {
            tracing::debug!("the client's run loop did not end after close");
        }
    }
}

impl Client {
    /// The negotiated session: era, version, server info and capabilities.
    pub fn session(&self) -> &SessionInfo {
        // Set before the client is handed out; the fallback is never observed.
        static EMPTY: OnceLock<SessionInfo> = OnceLock::new();
        self.inner.session.get().unwrap_or_else(|| {
            EMPTY.get_or_init(|| SessionInfo {
                era: Era::Handshake,
                protocol_version: ProtocolVersion::LATEST_HANDSHAKE,
                server_info: None,
                capabilities: ServerCapabilities::new(),
                instructions: None,
                supported_versions: Vec::new(),
            })
        })
    }

    /// The capabilities this client declares in the session's era (derived from the handlers
    /// and settings it was built with).
    pub fn capabilities(&self) -> &ClientCapabilities {
        match self.inner.era() {
            Era::Modern => &self.inner.settings.modern_capabilities,
            _ => &self.inner.settings.capabilities,
        }
    }

    /// The dispatcher the client runs on (for sending custom messages).
    pub fn dispatcher(&self) -> &Arc<dyn Dispatcher> {
        &self.inner.dispatcher
    }

    /// Sets the partition key of `private` cache entries (derive it from the credential the
    /// client uses, so that another user's private results are never served).
    pub fn set_cache_partition(&self, partition: impl Into<String>) {
        self.inner.cache.set_partition(partition.into());
    }

    /// Empties the response cache.
    pub fn clear_cache(&self) {
        self.inner.cache.clear();
    }

    /// Closes the connection and ends the transport: for a stdio child, closes its stdin,
    /// waits, then SIGTERM, waits, then SIGKILL. Pending calls fail with -32000.
    pub async fn shutdown(&self) {
        self.inner.shutdown().await;
    }
}
