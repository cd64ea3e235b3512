//! The 2026-07-28 entry (MCP 2026-07-28 "Streamable HTTP"): one POST is one exchange, no
//! sessions, routing headers checked against the body, a client disconnect cancels.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use ferromcp_types::ProtocolVersion;
use ferromcp_types::jsonrpc::{
    DecodeError, ErrorCode, ErrorObject, Message, Payload, RequestId, echo,
};
use ferromcp_types::mcp::{META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION, methods};
use http::{Response, StatusCode};
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, de};
use serde_json::json;
use serde_json::value::RawValue;

use super::body::{McpBody, error, status_of, status_only};
use super::exchange::{self, ExchangeOptions};
use super::headers::{self, EVENT_STREAM, JSON, MCP_METHOD, MCP_NAME, MCP_PROTOCOL_VERSION};
use super::param_headers::check_param_headers;
use super::service::Shared;
use ferromcp_server::Server;

fn header_mismatch(text: impl Into<String>) -> ErrorObject {
    let text: String = text.into();
    ErrorObject::new(
        ErrorCode::HEADER_MISMATCH,
        format!("Header mismatch: {text}"),
    )
}

/// -32020: header `name` says `header`, the body says `body` (each echoed within
/// `MAX_ECHO_LEN`).
fn value_mismatch(name: &str, header: &str, body: &str) -> ErrorObject {
    header_mismatch(format!(
        "{name} header value '{}' does not match body value '{}'",
        echo(header),
        echo(body)
    ))
}

fn supported() -> Vec<&'static str> {
    ProtocolVersion::strings(&[ProtocolVersion::LATEST_MODERN])
}

/// Serves one POST on the 2026-07-28 entry. The body is already within bounds; security,
/// method and content-type checks have run.
pub(crate) async fn post(
    shared: &Arc<Shared>,
    parts: Arc<http::request::Parts>,
    decoded: Result<Message, DecodeError>,
) -> Response<McpBody> {
    let config = &shared.config;
    let h = &parts.headers;
    let [wants_json, wants_sse] = headers::accepts_each(h, [JSON, EVENT_STREAM]);
    if !wants_json || (!config.json_response && !wants_sse) {
        return super::body::http_error(
            StatusCode::NOT_ACCEPTABLE,
            "Not Acceptable: Accept must list application/json and text/event-stream",
        );
    }
    let message = match decoded {
        Ok(m) => m,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                e.id().cloned(),
                e.to_error_object(),
            );
        }
    };
    let request = match message {
        Message::Request(r) => r,
        Message::Notification(_) => {
            // Accepted and dropped: this revision defines no client notification over HTTP
            // (and honouring notifications/cancelled would let one caller cancel another's
            // work).
            return match headers::first(h, &MCP_PROTOCOL_VERSION).and_then(ProtocolVersion::parse) {
                Some(v) if v.is_modern() => status_only(StatusCode::ACCEPTED),
                _ => {
                    let requested = headers::first(h, &MCP_PROTOCOL_VERSION);
                    error(
                        StatusCode::BAD_REQUEST,
                        None,
                        ErrorObject::unsupported_protocol_version(&supported(), requested),
                    )
                }
            };
        }
        Message::Response(_) | Message::Error(_) => {
            return error(
                StatusCode::BAD_REQUEST,
                None,
                ErrorObject::invalid_request(
                    "Body must be a single JSON-RPC request or notification object",
                ),
            );
        }
    };
    let id = request.id;
    let method = request.method;
    let reject = |e: ErrorObject, id: RequestId| error(status_of(e.code), Some(id), e);
    // The params stay the text received, for the kernel (issue 17 point 4); the members the
    // routing headers are checked against are read from that text.
    let params = request.params;
    let built: String;
    let text = match &params {
        Some(Payload::Raw(raw)) => Some(raw.get()),
        // Params built in memory (no decoder in front made them): read from their text too.
        Some(Payload::Value(v)) => {
            built = v.to_string();
            Some(built.as_str())
        }
        None => None,
    };
    let routing = match Routing::read(text) {
        Ok(r) => r,
        Err(e) => return reject(ErrorObject::parse_error(e.to_string()), id),
    };
    let listen = method == methods::SUBSCRIPTIONS_LISTEN;
    if listen && !wants_sse {
        return super::body::http_error(
            StatusCode::NOT_ACCEPTABLE,
            "Not Acceptable: subscriptions/listen answers with text/event-stream",
        );
    }
    if let Err(e) = ladder(h, &method, &routing) {
        return reject(e, id);
    }
    if method == methods::TOOLS_CALL
        && config.check_param_headers
        && let Err(e) = check_tool_params(&shared.server, h, &routing)
    {
        return reject(e, id);
    }
    let opts = ExchangeOptions {
        json_only: config.json_response && !listen,
        sse_now: listen,
        cancel_on_disconnect: true,
        error_status: status_of,
        deferral: config.sse_deferral,
        keep_alive: config.keep_alive,
        queue: config.stream_queue,
        timers: shared.timers.clone(),
    };
    // The version rung, the connection and `initialize` (which does not exist at this
    // revision) are the runner's, as on every modern stream.
    exchange::run(
        shared.modern_runner.clone(),
        parts,
        id,
        method,
        params,
        opts,
    )
    .await
}

/// What the entry reads of a request's params before the kernel sees them: the members the
/// routing headers are checked against, each as its text (`None` when absent or `null`, or
/// when the params are not an object). No `Value` of the params is built, except to check
/// params with a `\u` escape and, for its `Mcp-Param-*` headers, an annotated tool's
/// `arguments`.
#[derive(Default, Deserialize)]
struct Routing<'a> {
    #[serde(rename = "_meta", borrow, default)]
    meta: Option<&'a RawValue>,
    #[serde(borrow, default)]
    name: Option<&'a RawValue>,
    #[serde(borrow, default)]
    uri: Option<&'a RawValue>,
    #[serde(rename = "taskId", borrow, default)]
    task_id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
}

impl<'a> Routing<'a> {
    /// Reads `params`. Text that serde_json will not read (a lone surrogate escape, nesting
    /// deeper than it parses) is an error, as when the params were parsed here.
    fn read(params: Option<&'a str>) -> serde_json::Result<Self> {
        let Some(text) = params else {
            return Ok(Self::default());
        };
        // A `\u` escape may be a lone surrogate, which the decoder keeps but serde_json does
        // not read: such params are a parse error here, as they always were (the common
        // params, with no escape, are not parsed for this).
        if text.contains("\\u") {
            serde_json::from_str::<serde_json::Value>(text)?;
        }
        if !text.trim_start().starts_with('{') {
            return Ok(Self::default());
        }
        serde_json::from_str(text)
    }

    /// The envelope keys `_meta` holds, and its protocol version's text; `None` when `_meta`
    /// is absent or not an object.
    fn envelope(&self) -> Option<EnvelopeKeys<'a>> {
        self.meta
            .and_then(|m| serde_json::from_str::<EnvelopeKeys<'a>>(m.get()).ok())
    }
}

/// A JSON string's value; `None` for any other value.
fn string(raw: Option<&RawValue>) -> Option<Cow<'_, str>> {
    let text = raw?.get();
    match serde_json::from_str::<&str>(text) {
        Ok(s) => Some(Cow::Borrowed(s)),
        Err(_) => serde_json::from_str::<String>(text).ok().map(Cow::Owned),
    }
}

/// The envelope keys present in `_meta` (a key with any value, `null` included, is present).
#[derive(Default)]
struct EnvelopeKeys<'a> {
    version: Option<&'a RawValue>,
    capabilities: bool,
}

impl<'de> Deserialize<'de> for EnvelopeKeys<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(KeysVisitor)
    }
}

struct KeysVisitor;

impl<'de> Visitor<'de> for KeysVisitor {
    type Value = EnvelopeKeys<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut keys = EnvelopeKeys::default();
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Version => keys.version = Some(map.next_value()?),
                Key::Capabilities => {
                    map.next_value::<IgnoredAny>()?;
                    keys.capabilities = true;
                }
                Key::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(keys)
    }
}

/// A `_meta` key, as far as the entry cares (escaped spellings decoded).
enum Key {
    Version,
    Capabilities,
    Other,
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E: de::Error>(self, key: &str) -> Result<Key, E> {
                Ok(match key {
                    META_PROTOCOL_VERSION => Key::Version,
                    META_CLIENT_CAPABILITIES => Key::Capabilities,
                    _ => Key::Other,
                })
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

/// The envelope and header rungs; the first failure wins: missing envelope keys (-32602),
/// then `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` against the body (-32020).
fn ladder(h: &http::HeaderMap, method: &str, routing: &Routing<'_>) -> Result<(), ErrorObject> {
    let keys = routing.envelope();
    let missing: Vec<&str> = [
        (
            META_PROTOCOL_VERSION,
            keys.as_ref().is_some_and(|k| k.version.is_some()),
        ),
        (
            META_CLIENT_CAPABILITIES,
            keys.as_ref().is_some_and(|k| k.capabilities),
        ),
    ]
    .into_iter()
    .filter(|(_, present)| !present)
    .map(|(k, _)| k)
    .collect();
    if !missing.is_empty() {
        return Err(ErrorObject::invalid_params(format!(
            "missing request envelope key(s) in params._meta: {}",
            missing.join(", ")
        ))
        .with_data(json!({ "missing": missing })));
    }
    let envelope_version = string(keys.and_then(|k| k.version));
    let Some(envelope_version) = envelope_version.as_deref() else {
        return Err(ErrorObject::invalid_params(format!(
            "_meta[\"{META_PROTOCOL_VERSION}\"] must be a string"
        )));
    };
    let dup = |name: &str| header_mismatch(format!("{name} appears more than once"));
    let version =
        headers::single(h, &MCP_PROTOCOL_VERSION).map_err(|()| dup("MCP-Protocol-Version"))?;
    match version {
        None => {
            return Err(header_mismatch(
                "the MCP-Protocol-Version header is missing",
            ));
        }
        Some(v) if v != envelope_version => {
            return Err(value_mismatch("MCP-Protocol-Version", v, envelope_version));
        }
        Some(_) => {}
    }
    match headers::single(h, &MCP_METHOD).map_err(|()| dup("Mcp-Method"))? {
        None => return Err(header_mismatch("the Mcp-Method header is missing")),
        Some(m) if m != method => {
            return Err(value_mismatch("Mcp-Method", m, method));
        }
        Some(_) => {}
    }
    let name_field = match method {
        methods::TOOLS_CALL | methods::PROMPTS_GET => Some(routing.name),
        methods::RESOURCES_READ => Some(routing.uri),
        _ => None,
    };
    // SEP-2663: `Mcp-Name` on the tasks methods names the task; when sent it must match.
    if matches!(
        method,
        methods::TASKS_GET | methods::TASKS_UPDATE | methods::TASKS_CANCEL
    ) && let Some(header) = headers::single(h, &MCP_NAME).map_err(|()| dup("Mcp-Name"))?
    {
        let body_value = string(routing.task_id);
        let body_value = body_value.as_deref();
        let decoded = headers::decode_header_value(header);
        if decoded.as_deref() != body_value {
            return Err(value_mismatch(
                "Mcp-Name",
                header,
                body_value.unwrap_or_default(),
            ));
        }
    }
    if let Some(field) = name_field {
        let body_value = string(field);
        let body_value = body_value.as_deref();
        let header = headers::single(h, &MCP_NAME).map_err(|()| dup("Mcp-Name"))?;
        let Some(header) = header else {
            return Err(header_mismatch("the Mcp-Name header is missing"));
        };
        let Some(decoded) = headers::decode_header_value(header) else {
            return Err(header_mismatch(
                "the Mcp-Name header holds an invalid Base64 sentinel",
            ));
        };
        if Some(decoded.as_str()) != body_value {
            return Err(value_mismatch(
                "Mcp-Name",
                &decoded,
                body_value.unwrap_or_default(),
            ));
        }
    }
    Ok(())
}

/// Checks `Mcp-Param-*` headers against the called tool's `x-mcp-header` annotations, as the
/// server's tool registry holds them (a server with no such tool, or no registry, has none
/// to check: the call then meets the tool's own "unknown tool" answer).
fn check_tool_params(
    server: &Server,
    h: &http::HeaderMap,
    routing: &Routing<'_>,
) -> Result<(), ErrorObject> {
    let Some(name) = string(routing.name) else {
        return Ok(());
    };
    let Some(annotations) = server.tool_param_headers(&name) else {
        return Ok(());
    };
    if annotations.is_empty() {
        return Ok(());
    }
    // Only an annotated tool's arguments are parsed (the params were read whole before).
    let arguments = routing
        .arguments
        .map(|a| serde_json::from_str::<serde_json::Value>(a.get()))
        .transpose()
        .map_err(|e| ErrorObject::parse_error(e.to_string()))?;
    check_param_headers(&annotations, h, arguments.as_ref())
}
