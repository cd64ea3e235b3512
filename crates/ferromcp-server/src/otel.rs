//! OpenTelemetry trace context in `_meta` (the `otel` feature).
//!
//! MCP reserves the `_meta` keys `traceparent` and `tracestate` (and `baggage`) for
//! OpenTelemetry trace context, in [W3C Trace Context](https://www.w3.org/TR/trace-context/)
//! format (2026-07-28, "Basic", `_meta`, "OpenTelemetry trace context"). With this feature:
//!
//! - the `mcp.request` span that [`TracingMiddleware`](crate::middleware::TracingMiddleware)
//!   opens joins the caller's trace: its OpenTelemetry parent is the span context read from the
//!   request's `params._meta.traceparent` (and `tracestate`);
//! - the notifications and server→client requests a handler sends through
//!   [`RequestPeer`](crate::RequestPeer) carry the current span's `traceparent` (and
//!   `tracestate`) in their `params._meta`, so the client can link them to the request. A value
//!   the caller already set is never overwritten.
//!
//! ferromcp exports nothing itself: the application installs a
//! [`tracing_opentelemetry`] layer with the tracer (and exporter) of its choice. Without that
//! layer, or when the `mcp.request` span is disabled by the subscriber's filter, nothing is read
//! or written. The format on the wire is fixed by the specification, so the W3C propagator is
//! used here whatever global propagator the application configured for other carriers.
//!
//! ```
//! use ferromcp_server::otel::{TraceContextPropagator, extract_context};
//! use opentelemetry::trace::TraceContextExt;
//! use serde_json::json;
//!
//! let meta = json!({"traceparent": "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"});
//! let cx = extract_context(meta.as_object().unwrap()).unwrap();
//! assert_eq!(
//!     cx.span().span_context().trace_id().to_string(),
//!     "0af7651916cd43dd8448eb211c80319c"
//! );
//! # let _ = TraceContextPropagator;
//! ```

use std::str::FromStr;
use std::sync::OnceLock;

use ferromcp_types::jsonrpc::Payload;
use ferromcp_types::mcp::JsonObject;
use opentelemetry::Context;
use opentelemetry::propagation::text_map_propagator::FieldIter;
use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator};
use opentelemetry::trace::{SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState};
use serde_json::Value;
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// The `_meta` key of the W3C `traceparent`.
pub const META_TRACEPARENT: &str = "traceparent";
/// The `_meta` key of the W3C `tracestate`.
pub const META_TRACESTATE: &str = "tracestate";

/// Reads trace context from a `_meta` object: string values only; other values count as absent.
#[derive(Debug, Clone, Copy)]
pub struct MetaExtractor<'a>(pub &'a JsonObject);

impl Extractor for MetaExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(Value::as_str)
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(String::as_str).collect()
    }
}

/// Writes trace context into a `_meta` object. It never overwrites a key that is already
/// present, and skips empty values (an empty `tracestate`).
#[derive(Debug)]
pub struct MetaInjector<'a>(pub &'a mut JsonObject);

impl Injector for MetaInjector<'_> {
    fn set(&mut self, key: &str, value: String) {
        if value.is_empty() {
            return;
        }
        self.0.entry(key.to_owned()).or_insert(Value::String(value));
    }
}

/// The W3C Trace Context propagator (`traceparent` and `tracestate`), as MCP specifies for
/// `_meta`.
///
/// It parses strictly: version `ff`, upper-case hex, wrong field lengths, an all-zero trace or
/// span id, or extra fields after a version-00 header are rejected (no parent). A malformed
/// `tracestate` is dropped without rejecting the `traceparent`.
#[derive(Debug, Clone, Copy, Default)]
pub struct TraceContextPropagator;

fn lower_hex(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

impl TraceContextPropagator {
    /// Parses the remote span context in `extractor`, if there is a valid one.
    pub fn span_context(&self, extractor: &dyn Extractor) -> Option<SpanContext> {
        let header = extractor.get(META_TRACEPARENT)?.trim();
        let mut parts = header.split('-');
        let (version, trace_id, span_id, flags) =
            (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
        if !lower_hex(version, 2) || version == "ff" {
            return None;
        }
        // Version 00 has exactly four fields; a later version may append more.
        if version == "00" && parts.next().is_some() {
            return None;
        }
        if !lower_hex(trace_id, 32) || !lower_hex(span_id, 16) || !lower_hex(flags, 2) {
            return None;
        }
        let trace_id = TraceId::from_hex(trace_id).ok()?;
        let span_id = SpanId::from_hex(span_id).ok()?;
        let flags = u8::from_str_radix(flags, 16).ok()?;
        let state = extractor
            .get(META_TRACESTATE)
            .and_then(|s| TraceState::from_str(s).ok())
            .unwrap_or_default();
        let cx = SpanContext::new(
            trace_id,
            span_id,
            TraceFlags::new(flags) & TraceFlags::SAMPLED,
            true,
            state,
        );
        cx.is_valid().then_some(cx)
    }
}

impl TextMapPropagator for TraceContextPropagator {
    fn inject_context(&self, cx: &Context, injector: &mut dyn Injector) {
        let span = cx.span();
        let sc = span.span_context();
        if !sc.is_valid() {
            return;
        }
        let flags = sc.trace_flags() & TraceFlags::SAMPLED;
        injector.set(
            META_TRACEPARENT,
            format!(
                "00-{}-{}-{:02x}",
                sc.trace_id(),
                sc.span_id(),
                flags.to_u8()
            ),
        );
        injector.set(META_TRACESTATE, sc.trace_state().header());
    }

    fn extract_with_context(&self, cx: &Context, extractor: &dyn Extractor) -> Context {
        match self.span_context(extractor) {
            Some(sc) => cx.with_remote_span_context(sc),
            None => cx.clone(),
        }
    }

    fn fields(&self) -> FieldIter<'_> {
        FieldIter::new(fields())
    }
}

fn fields() -> &'static [String] {
    static CELL: OnceLock<[String; 2]> = OnceLock::new();
    CELL.get_or_init(|| [META_TRACEPARENT.to_owned(), META_TRACESTATE.to_owned()])
}

/// The context to parent a span on, from a request's `_meta`: `None` when `_meta` has no valid
/// `traceparent`.
pub fn extract_context(meta: &JsonObject) -> Option<Context> {
    let sc = TraceContextPropagator.span_context(&MetaExtractor(meta))?;
    Some(Context::current().with_remote_span_context(sc))
}

/// Writes the span context of `cx` into `params._meta` (creating `params` and `_meta` when
/// absent) and returns the params.
///
/// Nothing changes when `cx` has no valid span context, when params are not a JSON object,
/// when `_meta` is present but not an object, or when `_meta` already has a `traceparent` (the
/// caller set the trace context itself; a `tracestate` is then not added either).
pub fn inject_context(cx: &Context, params: Option<Payload>) -> Option<Payload> {
    if !cx.span().span_context().is_valid() {
        return params;
    }
    let mut map = match params {
        None => JsonObject::new(),
        Some(Payload::Value(Value::Object(map))) => map,
        Some(Payload::Raw(raw)) if raw.get().trim_start().starts_with('{') => {
            match serde_json::from_str::<JsonObject>(raw.get()) {
                Ok(map) => map,
                Err(_) => return Some(Payload::Raw(raw)),
            }
        }
        other => return other,
    };
    let meta = map
        .entry("_meta")
        .or_insert_with(|| Value::Object(JsonObject::new()));
    if let Value::Object(meta) = meta {
        if !meta.contains_key(META_TRACEPARENT) {
            TraceContextPropagator.inject_context(cx, &mut MetaInjector(meta));
        }
    }
    Some(Payload::Value(Value::Object(map)))
}

/// [`inject_context`] with the OpenTelemetry context of the current `tracing` span.
pub fn inject_current(params: Option<Payload>) -> Option<Payload> {
    inject_context(&tracing::Span::current().context(), params)
}

/// Hook for [`TracingMiddleware`](crate::middleware::TracingMiddleware): parents `span` on the
/// trace context in the request's `_meta`, if any. Fails silently when the span is disabled,
/// or when no OpenTelemetry layer is installed.
pub(crate) fn set_parent_from_meta(span: &tracing::Span, meta: Option<&JsonObject>) {
    if let Some(cx) = meta.and_then(extract_context) {
        if let Err(e) = span.set_parent(cx) {
            tracing::trace!(error = %e, "mcp.request: trace context from _meta not applied");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(tp: &str) -> Option<SpanContext> {
        let meta = json!({ "traceparent": tp, "tracestate": "k=v" });
        TraceContextPropagator.span_context(&MetaExtractor(meta.as_object().unwrap()))
    }

    #[test]
    fn parses_valid_traceparents() {
        let sc = parse("00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01").unwrap();
        assert_eq!(
            sc.trace_id().to_string(),
            "0af7651916cd43dd8448eb211c80319c"
        );
        assert_eq!(sc.span_id().to_string(), "00f067aa0ba902b7");
        assert!(sc.is_sampled() && sc.is_remote());
        assert_eq!(sc.trace_state().get("k"), Some("v"));
        // A later version may carry more fields.
        assert!(parse("01-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-00-xyz").is_some());
    }

    #[test]
    fn rejects_malformed_traceparents() {
        for tp in [
            "",
            "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7",
            "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01-extra",
            "ff-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01",
            "00-0AF7651916CD43DD8448EB211C80319C-00f067aa0ba902b7-01",
            "00-abc-00f067aa0ba902b7-01",
            "00-0af7651916cd43dd8448eb211c80319c-00f0-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
            "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-1",
        ] {
            assert!(parse(tp).is_none(), "{tp:?} should be rejected");
        }
    }

    #[test]
    fn injects_without_overwriting() {
        let sc = parse("00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01").unwrap();
        let cx = Context::new().with_remote_span_context(sc);

        let out = inject_context(&cx, None).unwrap().into_value().unwrap();
        assert_eq!(
            out,
            json!({"_meta": {
                "traceparent": "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01",
                "tracestate": "k=v",
            }})
        );

        let mine = json!({"x": 1, "_meta": {"traceparent": "mine"}});
        let out = inject_context(&cx, Some(mine.clone().into())).unwrap();
        assert_eq!(out.into_value().unwrap(), mine);

        let raw = serde_json::value::RawValue::from_string(r#"{"x":1}"#.into()).unwrap();
        let out = inject_context(&cx, Some(Payload::Raw(raw.into()))).unwrap();
        assert_eq!(out.into_value().unwrap()["_meta"]["tracestate"], "k=v");

        // Not an object: left alone.
        let out = inject_context(&cx, Some(json!([1]).into())).unwrap();
        assert_eq!(out.into_value().unwrap(), json!([1]));
        // No valid span context: left alone.
        assert!(inject_context(&Context::new(), None).is_none());
    }
}
