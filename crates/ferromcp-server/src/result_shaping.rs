//! Rung 6 of the request ladder: a handler's result written, shaped and checked. A typed
//! result is written once to the text that goes out, stamps included (2026-07-28), and kept as
//! text when one pass over it finds it valid with nothing to shape; else (and for a handler of
//! values) it is shaped and checked as a value. A result that does not fit its type is logged
//! and answered -32603.

use std::borrow::Cow;

use ferromcp_dispatch::HandlerError;
use ferromcp_types::ProtocolVersion;
use ferromcp_types::jsonrpc::{ErrorObject, RawJson};
use ferromcp_types::mcp::{JsonObject, META_SERVER_INFO, ResultType};
use ferromcp_types::tables;
use serde_json::Value;

use crate::handler_fn::{Output, ServerInfoMeta, Stamps, TypedResult};
use crate::middleware::{McpResult, McpResultBody};
use crate::server::{CACHEABLE_METHODS, Server};

/// The handler's `output` for `method` (`spec`: the method in the tables, `None` for a custom
/// method) as the result body at `version`.
pub(crate) fn handler_result(
    server: &Server,
    method: &str,
    spec: Option<tables::Method>,
    version: ProtocolVersion,
    output: Output,
) -> McpResult {
    let value = match output {
        Output::Value(value) => value,
        Output::Raw(raw) => match raw_result(server, method, spec, version, raw) {
            Ok(body) => return Ok(body),
            Err(raw) => serde_json::from_str(raw.get()).map_err(HandlerError::internal)?,
        },
        Output::Typed(typed) => {
            if let Some(body) = typed_result(server, method, spec, version, &*typed) {
                return Ok(body);
            }
            typed.to_value().map_err(HandlerError::internal)?
        }
    };
    value_result(server, method, spec, version, value)
}

/// A typed result as text, stamped at 2026-07-28, when it needs nothing else: valid at
/// `version`, with nothing that shaping would drop (or, for a custom method before
/// 2026-07-28, any object). `None`: shape and check it as a value.
fn typed_result(
    server: &Server,
    method: &str,
    spec: Option<tables::Method>,
    version: ProtocolVersion,
    typed: &dyn TypedResult,
) -> Option<McpResultBody> {
    let stamps = stamps(server, method, version);
    // The handler's own `resultType`, `_meta` or cache hint makes a member written twice,
    // which the walk refuses: such a result takes the path of values.
    let text = typed.to_text(stamps.as_ref()).ok()?;
    fits(spec, version, text.get()).then(|| McpResultBody::from_written(RawJson::from(text)))
}

/// A handler's JSON text as the body, stamped at 2026-07-28, when it needs nothing else (as
/// [`typed_result`]); else the text back, to take the path of values.
fn raw_result(
    server: &Server,
    method: &str,
    spec: Option<tables::Method>,
    version: ProtocolVersion,
    raw: RawJson,
) -> Result<McpResultBody, RawJson> {
    let Some(stamps) = stamps(server, method, version) else {
        // Before 2026-07-28 a relayed 2026-07-28 result loses its `resultType` on the text
        // (owned); borrowed: it fits as it is (any object, for a custom method).
        let fitted = match spec {
            Some(m) if raw.get().starts_with('{') => m.fitted_result_text(version, raw.get()),
            _ => fits(spec, version, raw.get()).then_some(Cow::Borrowed(raw.get())),
        };
        return match fitted {
            // The text less one whole top-level member and a comma next to it, cut by the
            // walk that read it: valid as `raw` is, so not checked again (issue 23).
            Some(Cow::Owned(cut)) => Ok(McpResultBody::from_written(
                RawJson::from_valid_unchecked(cut),
            )),
            Some(Cow::Borrowed(_)) => Ok(McpResultBody::from_written(raw)),
            None => Err(raw),
        };
    };
    // The stamps after the text's own members: one copy, checked as one value. (On the path
    // of values the handler's text is parsed as it was written.)
    let own = raw.get();
    let (Some(head), Ok(tail)) = (own.strip_suffix('}'), serde_json::to_string(&stamps)) else {
        return Err(raw);
    };
    let comma = match head.get(1..).unwrap_or_default().trim().is_empty() {
        true => "",
        false => ",",
    };
    let spliced = format!("{head}{comma}{}", tail.get(1..).unwrap_or_default());
    match RawJson::from_string(spliced) {
        Ok(text) if fits(spec, version, text.get()) => Ok(McpResultBody::from_written(text)),
        _ => Err(raw),
    }
}

/// Whether result text is an object that needs no shaping and is valid at `version` (any
/// object for a custom method before 2026-07-28, which shaping leaves alone).
fn fits(spec: Option<tables::Method>, version: ProtocolVersion, text: &str) -> bool {
    text.starts_with('{')
        && match spec {
            Some(m) => m.result_text_fits(version, text),
            None => !version.is_modern(),
        }
}

/// What the kernel adds to a result at `version` (nothing before 2026-07-28).
fn stamps<'s>(server: &'s Server, method: &str, version: ProtocolVersion) -> Option<Stamps<'s>> {
    version.is_modern().then(|| {
        let hint = CACHEABLE_METHODS
            .contains(&method)
            .then(|| server.cache_hint(method));
        Stamps {
            ttl_ms: hint.map(|h| h.ttl_ms),
            cache_scope: hint.map(|h| h.scope),
            result_type: ResultType::Complete.as_str(),
            meta: ServerInfoMeta {
                server_info: &server.inner.info_text,
            },
        }
    })
}

/// A handler's result as a value: cache hints and shaping (as [`shape`] does).
fn value_result(
    server: &Server,
    method: &str,
    spec: Option<tables::Method>,
    version: ProtocolVersion,
    value: Value,
) -> McpResult {
    let Value::Object(mut result) = value else {
        if value.is_null() {
            return shape(server, method, spec, version, JsonObject::new());
        }
        tracing::error!(
            method,
            "the handler returned a result that is not a JSON object"
        );
        return Err(ErrorObject::internal_error("Handler returned an invalid result").into());
    };
    if version.is_modern()
        && CACHEABLE_METHODS.contains(&method)
        && result.get("resultType").and_then(Value::as_str)
            != Some(ResultType::InputRequired.as_str())
    {
        let hint = server.cache_hint(method);
        result.entry("ttlMs").or_insert(hint.ttl_ms.into());
        result
            .entry("cacheScope")
            .or_insert_with(|| serde_json::to_value(hint.scope).unwrap_or(Value::Null));
    }
    shape(server, method, spec, version, result)
}

/// A kernel result (such as `initialize`'s) as a JSON object; -32603 when it is not one.
pub(crate) fn to_object<T: serde::Serialize>(
    value: &T,
    method: &str,
) -> Result<JsonObject, HandlerError> {
    match serde_json::to_value(value) {
        Ok(Value::Object(map)) => Ok(map),
        _ => {
            tracing::error!(method, "a kernel result did not serialize to an object");
            Err(ErrorObject::internal_error("Internal error").into())
        }
    }
}

/// Drops what the version does not define, sets `resultType` and stamps the server info
/// (2026-07-28), and checks that the result fits its type (`spec`: the method in the tables,
/// `None` for a custom method, whose result is only given its `resultType`).
fn shape(
    server: &Server,
    method: &str,
    spec: Option<tables::Method>,
    version: ProtocolVersion,
    mut result: JsonObject,
) -> McpResult {
    let modern = version.is_modern();
    // An extension's own result (such as a task handle) is not the method's result type.
    if modern && server.is_extension_result(&result) {
        stamp_server_info(server, &mut result);
        return Ok(result.into());
    }
    let Some(m) = spec else {
        tables::shape_result(method, version, &mut result);
        if modern {
            stamp_server_info(server, &mut result);
        }
        return Ok(result.into());
    };
    // Before 2026-07-28 one walk shapes and checks (nothing is stamped between the two).
    if !modern {
        return match m.shape_and_validate_result(version, &mut result) {
            Ok(()) => Ok(result.into()),
            Err(e) => Err(invalid_result(method, version, &e)),
        };
    }
    m.shape_result(version, &mut result);
    stamp_server_info(server, &mut result);
    // Validate the result as a value without copying it (this runs on every request).
    let value = Value::Object(result);
    if let Err(e) = m.validate_result(version, &value) {
        return Err(invalid_result(method, version, &e));
    }
    match value {
        Value::Object(result) => Ok(result.into()),
        _ => Err(ErrorObject::internal_error("Internal error").into()),
    }
}

/// A handler's result that does not fit its type: logged, answered -32603.
fn invalid_result(
    method: &str,
    version: ProtocolVersion,
    e: &dyn std::fmt::Display,
) -> HandlerError {
    tracing::error!(method, %version, error = %e, "the handler returned an invalid result");
    ErrorObject::internal_error("Handler returned an invalid result").into()
}

fn stamp_server_info(server: &Server, result: &mut JsonObject) {
    let meta = result
        .entry("_meta")
        .or_insert_with(|| Value::Object(JsonObject::new()));
    if let Value::Object(meta) = meta {
        let slot = meta.entry(META_SERVER_INFO).or_insert(Value::Null);
        if slot.is_null() {
            *slot = serde_json::to_value(server.info()).unwrap_or(Value::Null);
        }
    }
}
