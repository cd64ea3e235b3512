//! Typed handlers erased into the handler table's functions: params read from their text
//! (or value) into the handler's type with the protocol's error for what does not read, the
//! result serialized; and the warning for a handler of a method 2026-07-28 deprecates.

use std::any::Any;
use std::future::Future;
use std::sync::Arc;

use ferromcp_dispatch::{BoxFuture, HandlerError};
use ferromcp_types::ProtocolVersion;
use ferromcp_types::jsonrpc::{ErrorObject, RawJson};
use ferromcp_types::mcp::CacheScope;
use ferromcp_types::tables::{self, Kind};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::context::RequestContext;
use crate::deserialize_reason::traced_params_reason;
use crate::middleware::McpParams;

/// A request handler with its params and result erased: what the handler table holds.
pub(crate) type RequestFn = dyn Fn(RequestContext, McpParams) -> BoxFuture<'static, Result<Output, HandlerError>>
    + Send
    + Sync;

/// What a request handler returned.
pub(crate) enum Output {
    /// A JSON value (a handler of `Value`s: low-level and custom methods), shaped and checked
    /// as a value.
    Value(Value),
    /// JSON text a handler of `Box<RawValue>` returned, kept as written.
    Raw(RawJson),
    /// Any other result, still typed: the kernel writes it to the text that goes out.
    Typed(Box<dyn TypedResult>),
}

/// A handler's typed result, written on demand.
pub(crate) trait TypedResult: Send {
    /// The result as JSON text, with the members `stamps` adds after its own (when it
    /// serializes as an object; else serde_json's error).
    fn to_text(&self, stamps: Option<&Stamps<'_>>) -> serde_json::Result<Box<RawValue>>;

    /// The result as a value (what handlers gave the kernel before results stayed text).
    fn to_value(&self) -> serde_json::Result<Value>;
}

/// What the kernel adds to a result at 2026-07-28: `resultType`, the cache hint of a
/// cacheable method, and the server info in `_meta`.
#[derive(Serialize)]
pub(crate) struct Stamps<'a> {
    #[serde(rename = "ttlMs", skip_serializing_if = "Option::is_none")]
    pub(crate) ttl_ms: Option<u64>,
    #[serde(rename = "cacheScope", skip_serializing_if = "Option::is_none")]
    pub(crate) cache_scope: Option<CacheScope>,
    #[serde(rename = "resultType")]
    pub(crate) result_type: &'static str,
    #[serde(rename = "_meta")]
    pub(crate) meta: ServerInfoMeta<'a>,
}

/// `_meta` with the server info stamp, whose text the server keeps.
#[derive(Serialize)]
pub(crate) struct ServerInfoMeta<'a> {
    #[serde(rename = "io.modelcontextprotocol/serverInfo")]
    pub(crate) server_info: &'a RawValue,
}

/// A result followed by the stamps, as one object.
#[derive(Serialize)]
struct Stamped<'a, O> {
    #[serde(flatten)]
    result: &'a O,
    #[serde(flatten)]
    stamps: &'a Stamps<'a>,
}

impl<O: Serialize + Send> TypedResult for O {
    fn to_text(&self, stamps: Option<&Stamps<'_>>) -> serde_json::Result<Box<RawValue>> {
        match stamps {
            None => serde_json::value::to_raw_value(self),
            Some(stamps) => serde_json::value::to_raw_value(&Stamped {
                result: self,
                stamps,
            }),
        }
    }

    fn to_value(&self) -> serde_json::Result<Value> {
        serde_json::to_value(self)
    }
}
/// A notification handler with its params erased.
pub(crate) type NotifyFn =
    dyn Fn(RequestContext, McpParams) -> BoxFuture<'static, Result<(), HandlerError>> + Send + Sync;

pub(crate) fn erase_request<P, O, F, Fut>(f: F) -> Arc<RequestFn>
where
    P: DeserializeOwned + Send + 'static,
    O: Serialize + Send + 'static,
    F: Fn(RequestContext, P) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, HandlerError>> + Send + 'static,
{
    Arc::new(move |ctx, params| {
        // Raw params are read from their text straight into the typed struct (no `Value`);
        // a value moves into it instead of being cloned.
        // Params that do not fit are answered naming the full path (`items[2].name`).
        let typed = match params.into_typed_traced::<P>() {
            Ok(p) => p,
            // Valid text that serde_json will not read: nesting deeper than it parses (a
            // decoder set above its default depth let it through), a parse error as before.
            Err(e) if e.error.classify() == serde_json::error::Category::Syntax => {
                let err = ErrorObject::parse_error(e.error.to_string());
                return Box::pin(std::future::ready(Err(err.into())));
            }
            Err(e) => {
                tracing::debug!(error = %e.error, "request params did not deserialize");
                let err = ErrorObject::invalid_params(traced_params_reason(&e));
                return Box::pin(std::future::ready(Err(err.into())));
            }
        };
        let fut = f(ctx, typed);
        Box::pin(async move {
            let out = fut.await?;
            // A handler of values keeps the value; any other result stays typed until the
            // kernel writes it out.
            let mut out = Some(out);
            if let Some(value) = (&mut out as &mut dyn Any).downcast_mut::<Option<Value>>() {
                return Ok(Output::Value(value.take().unwrap_or(Value::Null)));
            }
            if let Some(raw) = (&mut out as &mut dyn Any).downcast_mut::<Option<Box<RawValue>>>()
                && let Some(raw) = raw.take()
            {
                return Ok(Output::Raw(RawJson::from(raw)));
            }
            match out {
                Some(out) => Ok(Output::Typed(Box::new(out))),
                None => Ok(Output::Value(Value::Null)),
            }
        })
    })
}

/// Warns (once per registration) when `method` is a spec message of `kind` that MCP
/// 2026-07-28 deprecates: the handshake era defines it and 2026-07-28 does not (logging,
/// roots, the handshake lifecycle, client-side progress and cancellation, subscriptions by
/// method, ...). Its handler still serves handshake-era clients.
pub(crate) fn warn_if_deprecated(method: &str, kind: Kind) {
    let Some(m) = tables::method(method) else {
        return;
    };
    let modern = ProtocolVersion::LATEST_MODERN;
    let handshake = ProtocolVersion::ALL
        .iter()
        .any(|v| !v.is_modern() && m.exists_as(kind, *v));
    if handshake && !m.exists_as(kind, modern) {
        tracing::warn!(
            method,
            "`{method}` is deprecated at MCP {modern} (its schema no longer defines it); the \
             handler registered for it serves handshake-era clients only"
        );
    }
}

pub(crate) fn erase_notification<P, F, Fut>(f: F) -> Arc<NotifyFn>
where
    P: DeserializeOwned + Send + 'static,
    F: Fn(RequestContext, P) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), HandlerError>> + Send + 'static,
{
    // As for requests: raw params are read from their text straight into `P` (issue 17
    // point 4); absent params read as `{}`.
    Arc::new(
        move |ctx, params: McpParams| match params.into_typed::<P>() {
            Ok(p) => Box::pin(f(ctx, p)),
            Err(e) => Box::pin(std::future::ready(Err(HandlerError::invalid_params(e)))),
        },
    )
}
