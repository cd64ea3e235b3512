//! The 2026-07-28 entry (MCP 2026-07-28 "Streamable HTTP"): one POST is one exchange, no
//! sessions, routing headers checked against the body, a client disconnect cancels.

use std::sync::Arc;

use ferromcp_types::ProtocolVersion;
use ferromcp_types::jsonrpc::{
    DecodeError, ErrorCode, ErrorObject, Message, Payload, RequestId, echo,
};
use ferromcp_types::mcp::{META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION, methods};
use http::{Response, StatusCode};
use serde_json::{Value, json};

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
    let params = match request.params.map(Payload::into_value).transpose() {
        Ok(p) => p,
        Err(e) => return reject(ErrorObject::parse_error(e.to_string()), id),
    };
    let listen = method == methods::SUBSCRIPTIONS_LISTEN;
    if listen && !wants_sse {
        return super::body::http_error(
            StatusCode::NOT_ACCEPTABLE,
            "Not Acceptable: subscriptions/listen answers with text/event-stream",
        );
    }
    if let Err(e) = ladder(h, &method, params.as_ref()) {
        return reject(e, id);
    }
    if method == methods::TOOLS_CALL
        && config.check_param_headers
        && let Err(e) = check_tool_params(&shared.server, h, params.as_ref())
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
        params.map(Payload::from_value),
        opts,
    )
    .await
}

/// The envelope and header rungs; the first failure wins: missing envelope keys (-32602),
/// then `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` against the body (-32020).
fn ladder(h: &http::HeaderMap, method: &str, params: Option<&Value>) -> Result<(), ErrorObject> {
    let meta = params
        .and_then(|p| p.get("_meta"))
        .and_then(Value::as_object);
    let missing: Vec<&str> = [META_PROTOCOL_VERSION, META_CLIENT_CAPABILITIES]
        .into_iter()
        .filter(|k| !meta.is_some_and(|m| m.contains_key(*k)))
        .collect();
    if !missing.is_empty() {
        return Err(ErrorObject::invalid_params(format!(
            "missing request envelope key(s) in params._meta: {}",
            missing.join(", ")
        ))
        .with_data(json!({ "missing": missing })));
    }
    let envelope_version = meta
        .and_then(|m| m.get(META_PROTOCOL_VERSION))
        .and_then(Value::as_str);
    let Some(envelope_version) = envelope_version else {
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
        methods::TOOLS_CALL | methods::PROMPTS_GET => Some("name"),
        methods::RESOURCES_READ => Some("uri"),
        _ => None,
    };
    // SEP-2663: `Mcp-Name` on the tasks methods names the task; when sent it must match.
    if matches!(
        method,
        methods::TASKS_GET | methods::TASKS_UPDATE | methods::TASKS_CANCEL
    ) && let Some(header) = headers::single(h, &MCP_NAME).map_err(|()| dup("Mcp-Name"))?
    {
        let body_value = params.and_then(|p| p.get("taskId")).and_then(Value::as_str);
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
        let body_value = params.and_then(|p| p.get(field)).and_then(Value::as_str);
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
    params: Option<&Value>,
) -> Result<(), ErrorObject> {
    let Some(name) = params.and_then(|p| p.get("name")).and_then(Value::as_str) else {
        return Ok(());
    };
    let Some(annotations) = server.tool_param_headers(name) else {
        return Ok(());
    };
    check_param_headers(&annotations, h, params.and_then(|p| p.get("arguments")))
}
