//! Middleware: an ordered stack around every request's and every notification's handler call.
//!
//! Layers run outermost first. Each gets the request (context, method, params) and a [`Next`]
//! to call the rest of the stack; it can observe the request, veto it (return an error without
//! calling `next`), rewrite the method and params that the layers inside see, and inspect the
//! outcome, including result-shaping failures (they surface as -32603 errors from `next`).
//!
//! Notifications from the client pass through the same stack (and the same tracing span)
//! once they are past the init gate: [`McpRequest::is_notification`] tells them apart. A
//! layer that returns an error for a notification vetoes it (its handler does not run; the
//! error is logged, nothing is answered); a notification's result is discarded.
//!
//! # Raw until someone looks (issue 17 point 4)
//!
//! Params and results stay in the form they arrived in until a layer asks for another:
//!
//! - **Params** ([`McpParams`]) stay the JSON text received, a request's and a
//!   notification's alike: the kernel checks that text against the revision's schema and the
//!   handler deserializes its typed params from it.
//! - **Results** ([`McpResultBody`]): a typed handler result (anything but a
//!   `serde_json::Value`) is serialized once, by serde_json, to the text that goes out; at
//!   2026-07-28 the kernel's stamps (`resultType`, a cacheable method's `ttlMs` and
//!   `cacheScope`, the server info in `_meta`, whose text the server keeps) are written after
//!   the result's own members in the same write. One pass over that text
//!   (`ferromcp_types::tables::Method::result_text_fits`) answers whether it is valid at the
//!   revision with nothing that shaping would drop; if so the text is the body, and the
//!   transports write it as it is (stdio and HTTP copy it into the frame; in process the client
//!   reads its typed result from it). Otherwise (a field newer than the revision, an invalid
//!   result, a handler's own `_meta` or `resultType` next to the stamps, a shape the pass does
//!   not follow) the result is turned into a value and shaped and checked as before, with the
//!   same outcome and the same -32603. A handler of values (low-level and custom methods) keeps
//!   the path of values.
//!
//! A layer sees the body after all of this. [`McpResultBody::get`] reads one member from the
//! text; [`McpResultBody::as_object`] parses it once and keeps the object;
//! [`McpResultBody::as_object_mut`] makes the changed object what goes out. A layer may also
//! answer with a body of its own: an object, or text it received
//! ([`McpResultBody::from_raw`], as a forwarding handler does), which goes out unchanged.

use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use ferromcp_dispatch::{BoxFuture, HandlerError, TransportKind};
use ferromcp_types::jsonrpc::{Payload, RawJson};
use ferromcp_types::mcp::JsonObject;
use serde::Deserializer;
use serde::de::{DeserializeOwned, DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;
use tracing::Instrument;

use crate::context::RequestContext;
pub use crate::result_body::McpResultBody;

/// A request as middleware sees it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct McpRequest {
    /// The request context.
    pub ctx: RequestContext,
    /// The method; a layer may rewrite it for the layers inside.
    pub method: String,
    /// The params, raw as received until a layer looks at them (see [`McpParams`]); a layer
    /// may rewrite them for the layers inside.
    pub params: McpParams,
}

impl McpRequest {
    /// Whether this is a notification (no id, never answered) rather than a request.
    pub fn is_notification(&self) -> bool {
        self.ctx.request_id().is_none()
    }

    /// The params as the JSON text received, while no layer has changed them
    /// ([`McpParams::raw`]).
    pub fn raw_params(&self) -> Option<&RawJson> {
        self.params.raw()
    }

    /// The params as a JSON value, parsed on first use and kept ([`McpParams::as_ref`]).
    pub fn params_value(&self) -> Option<&Value> {
        self.params.as_ref()
    }

    /// The params deserialized into `T`, from the text received when it is unchanged (absent
    /// params read as `{}`; [`McpParams::parse`]).
    ///
    /// # Errors
    ///
    /// serde_json's error when the params do not fit `T`.
    pub fn params_as<T: DeserializeOwned>(&self) -> serde_json::Result<T> {
        self.params.parse()
    }
}

/// The params of a request or notification as middleware sees them (issue 17 point 4).
///
/// Params that came off the wire stay the JSON text received ([`RawJson`]) until something
/// needs them otherwise: the kernel validates that text against the protocol's schema and the
/// handler deserializes its typed params from it, so a request that no layer inspects is never
/// turned into a [`Value`]. A layer that looks ([`as_ref`](Self::as_ref), or
/// [`McpRequest::params_value`]) has them parsed once, and every later look shares that value;
/// a layer that changes them ([`as_mut`](Self::as_mut), [`set`](Self::set), or assigning a new
/// `McpParams`) makes the changed value what the layers inside and the handler see.
///
/// ```
/// use ferromcp_server::middleware::McpParams;
/// use ferromcp_types::jsonrpc::{Payload, RawJson};
/// use serde_json::json;
///
/// let raw = RawJson::from_string(r#"{"name":"add"}"#.to_owned()).unwrap();
/// let mut params = McpParams::from_payload(Some(Payload::Raw(raw)));
/// assert!(params.raw().is_some() && !params.is_parsed());
/// // Looking parses once; the text is still what the handler reads.
/// assert_eq!(params.as_ref().unwrap()["name"], "add");
/// assert!(params.raw().is_some() && params.is_parsed());
/// // Changing them drops the text: the changed value is what goes on.
/// params.as_mut().unwrap()["name"] = json!("sub");
/// assert!(params.raw().is_none());
/// assert_eq!(params.into_value(), Some(json!({"name": "sub"})));
/// ```
#[derive(Clone, Default)]
pub struct McpParams(Repr);

#[derive(Clone, Default)]
enum Repr {
    /// No params.
    #[default]
    Absent,
    /// The text received, and its value once someone asked for it (`None` inside: the text
    /// nests deeper than serde_json parses).
    Raw(RawJson, OnceLock<Option<Value>>),
    /// A value: handed over in process, or set by a layer.
    Value(Value),
}

impl McpParams {
    /// Params from a dispatcher's payload: raw text stays raw.
    pub fn from_payload(payload: Option<Payload>) -> Self {
        Self(match payload {
            None => Repr::Absent,
            Some(Payload::Raw(raw)) => Repr::Raw(raw, OnceLock::new()),
            Some(Payload::Value(value)) => Repr::Value(value),
        })
    }

    /// Whether there are params.
    pub fn is_some(&self) -> bool {
        !matches!(self.0, Repr::Absent)
    }

    /// Whether there are none.
    pub fn is_none(&self) -> bool {
        !self.is_some()
    }

    /// The JSON text received, while nothing has changed the params (`None` for absent params,
    /// params handed over as a value in process, and params a layer changed).
    pub fn raw(&self) -> Option<&RawJson> {
        match &self.0 {
            Repr::Raw(raw, _) => Some(raw),
            Repr::Absent | Repr::Value(_) => None,
        }
    }

    /// Whether a [`Value`] of the params exists: they were handed over or set as one, or
    /// someone looked at raw params.
    pub fn is_parsed(&self) -> bool {
        match &self.0 {
            Repr::Absent => false,
            Repr::Raw(_, value) => value.get().is_some_and(Option::is_some),
            Repr::Value(_) => true,
        }
    }

    /// The params as a JSON value, parsed from the text on first use and kept (`None` when
    /// absent, or in the one case the text does not parse: nesting deeper than serde_json
    /// reads, which only a decoder set above its default depth lets through).
    pub fn as_ref(&self) -> Option<&Value> {
        match &self.0 {
            Repr::Absent => None,
            Repr::Raw(raw, value) => value
                .get_or_init(|| serde_json::from_str(raw.get()).ok())
                .as_ref(),
            Repr::Value(value) => Some(value),
        }
    }

    /// The params as a JSON value to change in place; what the layers inside and the handler
    /// see from then on (the text received is dropped).
    pub fn as_mut(&mut self) -> Option<&mut Value> {
        if let Repr::Raw(raw, value) = &mut self.0 {
            let parsed = match value.take() {
                Some(parsed) => parsed,
                None => serde_json::from_str(raw.get()).ok(),
            };
            self.0 = parsed.map_or(Repr::Absent, Repr::Value);
        }
        match &mut self.0 {
            Repr::Value(value) => Some(value),
            Repr::Absent | Repr::Raw(..) => None,
        }
    }

    /// Replaces the params (`None`: absent).
    pub fn set(&mut self, params: Option<Value>) {
        self.0 = params.map_or(Repr::Absent, Repr::Value);
    }

    /// Deserializes the params into `T`: from the text received while it is unchanged, else
    /// from the value. Absent params read as `{}`, as handlers see them.
    ///
    /// # Errors
    ///
    /// serde_json's error when the params do not fit `T`.
    pub fn parse<T: DeserializeOwned>(&self) -> serde_json::Result<T> {
        match &self.0 {
            Repr::Absent => T::deserialize(&Value::Object(JsonObject::new())),
            Repr::Raw(raw, _) => serde_json::from_str(raw.get()),
            Repr::Value(value) => T::deserialize(value),
        }
    }

    /// The JSON text received, moved out while nothing changed the params (else the params
    /// back).
    pub(crate) fn into_raw(self) -> Result<RawJson, Self> {
        match self.0 {
            Repr::Raw(raw, _) => Ok(raw),
            other => Err(Self(other)),
        }
    }

    /// [`parse`](Self::parse), moving a value into `T` instead of borrowing it.
    pub(crate) fn into_typed<T: DeserializeOwned>(self) -> serde_json::Result<T> {
        match self.0 {
            Repr::Absent => T::deserialize(Value::Object(JsonObject::new())),
            Repr::Raw(raw, _) => serde_json::from_str(raw.get()),
            Repr::Value(value) => T::deserialize(value),
        }
    }

    /// [`into_typed`](Self::into_typed), a failure naming the path to the part that did not
    /// fit (see [`crate::deserialize_reason::Traced`]).
    pub(crate) fn into_typed_traced<T: DeserializeOwned>(
        self,
    ) -> Result<T, crate::deserialize_reason::Traced> {
        use crate::deserialize_reason::{traced_from_str, traced_from_value};
        match self.0 {
            Repr::Absent => traced_from_value(Value::Object(JsonObject::new())),
            Repr::Raw(raw, _) => traced_from_str(raw.get()),
            Repr::Value(value) => traced_from_value(value),
        }
    }

    /// The params as a JSON value (`None` when absent or when the text does not parse; see
    /// [`as_ref`](Self::as_ref)).
    pub fn into_value(self) -> Option<Value> {
        match self.0 {
            Repr::Absent => None,
            Repr::Raw(raw, mut value) => match value.take() {
                Some(value) => value,
                None => serde_json::from_str(raw.get()).ok(),
            },
            Repr::Value(value) => Some(value),
        }
    }

    /// The params as a dispatcher's payload: the text received when unchanged (no parse, no
    /// encoding), else the value.
    pub fn into_payload(self) -> Option<Payload> {
        match self.0 {
            Repr::Absent => None,
            Repr::Raw(raw, _) => Some(Payload::Raw(raw)),
            Repr::Value(value) => Some(Payload::Value(value)),
        }
    }

    /// `_meta` of object params, if it is an object (read from the text without parsing the
    /// rest when the params are raw).
    pub(crate) fn meta_object(&self) -> Option<JsonObject> {
        match &self.0 {
            Repr::Absent => None,
            Repr::Raw(raw, value) => {
                if let Some(value) = value.get() {
                    return meta_of(value.as_ref());
                }
                let text = raw.get();
                // `_meta` can only be there if the text spells it, or escapes something.
                if !text.starts_with('{') || !(text.contains("_meta") || text.contains('\\')) {
                    return None;
                }
                #[derive(serde::Deserialize)]
                struct OnlyMeta {
                    #[serde(rename = "_meta", default)]
                    meta: Option<Value>,
                }
                match serde_json::from_str::<OnlyMeta>(text) {
                    Ok(OnlyMeta {
                        meta: Some(Value::Object(map)),
                    }) => Some(map),
                    _ => None,
                }
            }
            Repr::Value(value) => meta_of(Some(value)),
        }
    }
}

impl McpParams {
    /// The top-level member `key` of object params when it is a string (the tool, prompt or
    /// resource a span or metric names), read from the text without parsing the rest when the
    /// params are raw and nobody has parsed them.
    pub(crate) fn str_field(&self, key: &str) -> Option<Cow<'_, str>> {
        let value = match &self.0 {
            Repr::Absent => return None,
            Repr::Raw(raw, value) => match value.get() {
                Some(value) => value.as_ref(),
                None => {
                    let mut de = serde_json::Deserializer::from_str(raw.get());
                    return StrField(key)
                        .deserialize(&mut de)
                        .ok()
                        .flatten()
                        .map(Cow::Owned);
                }
            },
            Repr::Value(value) => Some(value),
        };
        value?.get(key)?.as_str().map(Cow::Borrowed)
    }
}

/// Reads one string member of an object, skipping the others.
struct StrField<'k>(&'k str);

impl<'de> DeserializeSeed<'de> for StrField<'_> {
    type Value = Option<String>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for StrField<'_> {
    type Value = Option<String>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut found = None;
        while let Some(is_key) = map.next_key_seed(KeyIs(self.0))? {
            if is_key && found.is_none() {
                found = map.next_value::<Value>()?.as_str().map(str::to_owned);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(found)
    }
}

/// Whether an object key is the one wanted.
pub(crate) struct KeyIs<'k>(pub(crate) &'k str);

impl<'de> DeserializeSeed<'de> for KeyIs<'_> {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeyIs<'_> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }

    fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<bool, E> {
        Ok(key == self.0)
    }
}

fn meta_of(params: Option<&Value>) -> Option<JsonObject> {
    match params?.get("_meta")? {
        Value::Object(map) => Some(map.clone()),
        _ => None,
    }
}

/// Params set by a layer (`None`: absent).
impl From<Option<Value>> for McpParams {
    fn from(params: Option<Value>) -> Self {
        Self(params.map_or(Repr::Absent, Repr::Value))
    }
}

/// Params set by a layer.
impl From<Value> for McpParams {
    fn from(params: Value) -> Self {
        Self(Repr::Value(params))
    }
}

impl fmt::Debug for McpParams {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Absent => f.write_str("None"),
            Repr::Raw(raw, _) => write!(f, "Raw({raw})"),
            Repr::Value(value) => write!(f, "Value({value})"),
        }
    }
}

/// What the stack produces: the result (raw JSON text or an object; see [`McpResultBody`]),
/// or an error.
pub type McpResult = Result<McpResultBody, HandlerError>;

/// One layer of the stack.
pub trait Middleware: Send + Sync + 'static {
    /// Handles `request`, usually by calling `next.run(request)` somewhere inside.
    fn handle(&self, request: McpRequest, next: Next) -> BoxFuture<'static, McpResult>;
}

/// The innermost step, below every layer: the kernel's request ladder. A plain function, so a
/// request costs no allocation for it.
pub(crate) type Inner = fn(McpRequest) -> BoxFuture<'static, McpResult>;

/// The rest of the stack, below the layer that holds it.
pub struct Next {
    layers: Arc<[Arc<dyn Middleware>]>,
    index: usize,
    inner: Inner,
}

impl Next {
    pub(crate) fn new(layers: Arc<[Arc<dyn Middleware>]>, inner: Inner) -> Self {
        Self {
            layers,
            index: 0,
            inner,
        }
    }

    /// Runs the rest of the stack with `request`.
    pub fn run(self, request: McpRequest) -> BoxFuture<'static, McpResult> {
        match self.layers.get(self.index).cloned() {
            Some(layer) => {
                let next = Next {
                    layers: self.layers,
                    index: self.index + 1,
                    inner: self.inner,
                };
                layer.handle(request, next)
            }
            None => (self.inner)(request),
        }
    }
}

impl fmt::Debug for Next {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Next")
            .field("remaining", &(self.layers.len() - self.index))
            .finish()
    }
}

/// A middleware layer made from a closure; see [`middleware_fn`].
pub struct FnMiddleware<F>(F);

/// Makes a middleware layer from an async closure.
///
/// ```
/// use ferromcp_server::middleware::{middleware_fn, McpRequest, Next};
/// use ferromcp_types::jsonrpc::ErrorObject;
///
/// // Vetoes every call of the tool "forbidden".
/// let layer = middleware_fn(|req: McpRequest, next: Next| async move {
///     let name = req.params.as_ref().and_then(|p| p.get("name")).and_then(|n| n.as_str());
///     if req.method == "tools/call" && name == Some("forbidden") {
///         return Err(ErrorObject::invalid_params("tool not allowed").into());
///     }
///     next.run(req).await
/// });
/// # let _ = layer;
/// ```
pub fn middleware_fn<F, Fut>(f: F) -> FnMiddleware<F>
where
    F: Fn(McpRequest, Next) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = McpResult> + Send + 'static,
{
    FnMiddleware(f)
}

impl<F, Fut> Middleware for FnMiddleware<F>
where
    F: Fn(McpRequest, Next) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = McpResult> + Send + 'static,
{
    fn handle(&self, request: McpRequest, next: Next) -> BoxFuture<'static, McpResult> {
        Box::pin((self.0)(request, next))
    }
}

/// The default outermost layer: one `tracing` span per request, named and attributed as the
/// OpenTelemetry semantic conventions for MCP say (a SERVER span named
/// `{mcp.method.name} {target}`, with `mcp.method.name`, `gen_ai.tool.name`, `jsonrpc.request.id`,
/// `mcp.session.id`, `network.transport`, `error.type`, ...; see `docs/OBSERVABILITY.md`), plus
/// the short fields `method`, `name`, `request_id`, `outcome` and `duration_us` for plain logs.
/// Tool arguments and results are never recorded, unless the application opts in (with the
/// `otel` feature, `OtelOptions::record_sensitive`).
///
/// Every server built with tracing on (the default; see `ServerBuilder::tracing`) runs this
/// layer itself, outermost, at no cost when no subscriber wants the span. Add it with
/// `ServerBuilder::middleware` only to have the span at another position in the stack.
#[derive(Debug, Clone, Copy, Default)]
pub struct TracingMiddleware;

/// A span name as the conventions give it: the method, then the target if there is one.
struct SpanName<'a>(&'a str, Option<&'a str>);

impl fmt::Display for SpanName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.1 {
            Some(target) => write!(f, "{} {target}", self.0),
            None => f.write_str(self.0),
        }
    }
}

/// `network.transport`, `network.protocol.name` and `network.protocol.version` of a request,
/// from what the transport told the kernel (nothing for in-process transports).
pub(crate) fn network_of(
    ctx: &RequestContext,
) -> (
    Option<&'static str>,
    Option<&'static str>,
    Option<&'static str>,
) {
    match ctx.peer().dispatch_context().transport().kind {
        TransportKind::Stdio => (Some("pipe"), None, None),
        TransportKind::StreamableHttp => {
            let version = ctx.http_parts().and_then(|p| match p.version {
                http::Version::HTTP_10 => Some("1.0"),
                http::Version::HTTP_11 => Some("1.1"),
                http::Version::HTTP_2 => Some("2"),
                http::Version::HTTP_3 => Some("3"),
                _ => None,
            });
            let transport = if ctx.http_parts().map(|p| p.version) == Some(http::Version::HTTP_3) {
                "quic"
            } else {
                "tcp"
            };
            (Some(transport), Some("http"), version)
        }
        _ => (None, None, None),
    }
}

/// The conventions' `error.type` and `rpc.response.status_code` of an outcome: the JSON-RPC
/// error code (both), or `tool_error` for a tool result with `isError: true` (`error.type`
/// only); with the error message for the span status.
pub(crate) fn error_of(result: &McpResult) -> Option<(String, Option<String>, Option<&str>)> {
    match result {
        Ok(body) => (body.get("isError").and_then(|v| v.as_bool()) == Some(true))
            .then(|| ("tool_error".to_owned(), None, None)),
        Err(HandlerError::Protocol(e)) => {
            let code = e.code.0.to_string();
            Some((code.clone(), Some(code), Some(&*e.message)))
        }
        Err(HandlerError::InvalidParams(_)) => Some((
            "-32602".into(),
            Some("-32602".into()),
            Some("Invalid params"),
        )),
        // Internal errors, and any kind added later: -32603 on the wire.
        Err(_) => Some((
            "-32603".into(),
            Some("-32603".into()),
            Some("Internal error"),
        )),
    }
}

impl TracingMiddleware {
    /// The request's (or notification's) `mcp.request` span; disabled when no subscriber
    /// wants it.
    pub(crate) fn span(request: &McpRequest) -> tracing::Span {
        let method = request.method.as_str();
        // Read from the params' text when they are raw: a span parses nothing.
        let name_param = || request.params.str_field("name");
        let (tool, prompt) = match method {
            "tools/call" => (name_param(), None),
            "prompts/get" => (None, name_param()),
            _ => (None, None),
        };
        let (tool, prompt) = (tool.as_deref(), prompt.as_deref());
        let uri = match method {
            "resources/read"
            | "resources/subscribe"
            | "resources/unsubscribe"
            | "notifications/resources/updated" => request.params.str_field("uri"),
            _ => None,
        };
        let uri = uri.as_deref();
        let ctx = &request.ctx;
        let id = ctx.request_id().map(tracing::field::display);
        let (transport, protocol, protocol_version) = network_of(ctx);
        let peer = ctx
            .http_parts()
            .and_then(|p| p.extensions.get::<crate::caller::PeerAddr>());
        let span = tracing::debug_span!(
            "mcp.request",
            method = %method,
            name = tool.or(prompt),
            request_id = id,
            outcome = tracing::field::Empty,
            duration_us = tracing::field::Empty,
            "otel.name" = %SpanName(method, tool.or(prompt)),
            "otel.kind" = "server",
            "otel.status_code" = tracing::field::Empty,
            "otel.status_description" = tracing::field::Empty,
            "mcp.method.name" = %method,
            "gen_ai.tool.name" = tool,
            "gen_ai.prompt.name" = prompt,
            "gen_ai.operation.name" = tool.map(|_| "execute_tool"),
            "mcp.resource.uri" = uri,
            "jsonrpc.request.id" = id,
            "mcp.session.id" = ctx.connection().session_id(),
            "mcp.protocol.version" = ctx.protocol_version().as_str(),
            "network.transport" = transport,
            "network.protocol.name" = protocol,
            "network.protocol.version" = protocol_version,
            "client.address" = peer.map(|p| tracing::field::display(p.0.ip())),
            "client.port" = peer.map(|p| p.0.port()),
            "error.type" = tracing::field::Empty,
            "rpc.response.status_code" = tracing::field::Empty,
            "gen_ai.tool.call.arguments" = tracing::field::Empty,
            "gen_ai.tool.call.result" = tracing::field::Empty,
        );
        // otel: parent the span on the trace context in `_meta` (src/otel.rs), and record
        // what the application opted into.
        #[cfg(feature = "otel")]
        if !span.is_disabled() {
            crate::otel::on_server_span(&span, request);
        }
        span
    }

    /// Whether the span of `request` records the tool result (the application opted in).
    pub(crate) fn records_result(request: &McpRequest) -> bool {
        #[cfg(feature = "otel")]
        return crate::otel::records_results(request);
        #[cfg(not(feature = "otel"))]
        {
            let _ = request;
            false
        }
    }

    /// Runs `inner` in `span` (an enabled one), recording its outcome and duration (and the
    /// tool result when `record_result`).
    pub(crate) async fn traced(
        span: tracing::Span,
        record_result: bool,
        inner: impl Future<Output = McpResult>,
    ) -> McpResult {
        let started = Instant::now();
        async move {
            let result = inner.await;
            let span = tracing::Span::current();
            span.record("duration_us", started.elapsed().as_micros() as u64);
            match &result {
                Ok(_) => span.record("outcome", "ok"),
                Err(HandlerError::Protocol(e)) => span.record("outcome", e.code.0),
                Err(_) => span.record("outcome", "internal error"),
            };
            Self::record_outcome(&span, record_result, &result);
            tracing::debug!("request handled");
            result
        }
        .instrument(span)
        .await
    }

    /// The conventions' error attributes and span status of an outcome.
    fn record_outcome(span: &tracing::Span, record_result: bool, result: &McpResult) {
        #[cfg(feature = "otel")]
        crate::otel::on_result(span, record_result, result);
        #[cfg(not(feature = "otel"))]
        let _ = record_result;
        if let Some((error_type, status_code, message)) = error_of(result) {
            span.record("error.type", error_type.as_str());
            if let Some(code) = status_code {
                span.record("rpc.response.status_code", code.as_str());
            }
            span.record("otel.status_code", "error");
            if let Some(message) = message {
                span.record("otel.status_description", message);
            }
        }
    }
}

impl Middleware for TracingMiddleware {
    fn handle(&self, request: McpRequest, next: Next) -> BoxFuture<'static, McpResult> {
        let span = Self::span(&request);
        // No subscriber wants the span: nothing to record, so no clock read, no wrapper.
        if span.is_disabled() {
            return next.run(request);
        }
        let record_result = Self::records_result(&request);
        Box::pin(Self::traced(span, record_result, next.run(request)))
    }
}
