//! Lifecycle modes: the `initialize` handshake, the modern `server/discover`, and the
//! automatic probe that picks between them.
//!
//! # The auto probe (2026-07-28 "stdio › Backward Compatibility")
//!
//! 1. Send `server/discover` with the 2026-07-28 envelope, bounded by the probe timeout,
//!    with `cancel_on_abandon` off (lifecycle requests are never cancelled).
//! 2. A `DiscoverResult` listing 2026-07-28: the server is modern; use it. One listing only
//!    handshake versions we speak: run `initialize` (a dual-era server on a transport that
//!    routes per request); otherwise fail with [`ClientError::UnsupportedVersion`].
//! 3. -32022 (unsupported protocol version): the server is modern. If its `supported` list
//!    names the modern version we speak, send `server/discover` once more (also in
//!    [`Lifecycle::Modern`]); else, if it names a handshake version we speak, run
//!    `initialize`; otherwise fail. We do not fall back blindly here, as the spec says.
//! 4. Any other JSON-RPC error, or no answer within the probe timeout: the server is legacy;
//!    run `initialize`. The fallback is not keyed to one code (legacy servers answer unknown
//!    pre-initialize requests with -32601, -32602, -32600 or not at all). A closed connection
//!    (-32000) is not a legacy answer: it fails the connect.
//! 5. Stream transports lock their era on the first request. A slow modern server that
//!    locked to modern because of our (timed-out) probe answers `initialize` with -32022
//!    naming a modern version; then we stay modern: probe `server/discover` once more
//!    (same bound) and adopt its result.

use ferromcp_dispatch::{CallOptions, Outbound};
use ferromcp_types::jsonrpc::{ErrorCode, ErrorObject};
use ferromcp_types::mcp::methods;
use ferromcp_types::mcp::{
    DiscoverResult, InitializeRequestParams, InitializeResult, JsonObject, NotificationParams,
};
use ferromcp_types::{Era, ProtocolVersion};
use serde_json::Value;

use crate::cache::slot_of;
use crate::client::{Inner, SessionInfo};
use crate::error::ClientError;
use crate::options::RequestOptions;

/// How the client starts a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Lifecycle {
    /// The handshake era: `initialize`, then `notifications/initialized`.
    Handshake,
    /// The modern era (2026-07-28): `server/discover`, then every request carries the
    /// envelope in `params._meta`.
    Modern,
    /// Probe with `server/discover`; fall back to `initialize` when the server is legacy
    /// (the default). See the module documentation for the rules.
    #[default]
    Auto,
}

/// Runs the lifecycle; on success the session is recorded on `inner`.
pub(crate) async fn start(inner: &Inner, mode: Lifecycle) -> Result<SessionInfo, ClientError> {
    match mode {
        Lifecycle::Handshake => handshake(inner).await,
        Lifecycle::Modern => {
            let timeout = inner.settings.request_timeout;
            let result = match discover(inner, timeout).await {
                Err(ClientError::Protocol(e)) if refused_but_modern(&e) => {
                    tracing::debug!(
                        "server/discover refused (-32022) naming our version: retrying"
                    );
                    discover(inner, timeout).await?
                }
                other => other?,
            };
            adopt_discover(inner, result)
        }
        Lifecycle::Auto => auto(inner).await,
    }
}

async fn auto(inner: &Inner) -> Result<SessionInfo, ClientError> {
    let probe = discover(inner, Some(inner.settings.probe_timeout)).await;
    match probe {
        Ok(result) => {
            if speaks_modern(&result.supported_versions) {
                adopt_discover(inner, result)
            } else if speaks_handshake(&result.supported_versions) {
                handshake(inner).await
            } else {
                Err(unsupported(&result.supported_versions))
            }
        }
        Err(ClientError::Protocol(e)) if refused_but_modern(&e) => {
            tracing::debug!("server/discover refused (-32022) naming our version: retrying");
            let result = discover(inner, Some(inner.settings.probe_timeout)).await?;
            adopt_discover(inner, result)
        }
        Err(ClientError::Protocol(e)) if e.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION => {
            let supported = supported_list(&e);
            if speaks_handshake(&supported) {
                handshake(inner).await
            } else {
                Err(unsupported(&supported))
            }
        }
        // Our own "connection closed" fails the connect; the same code in a server's HTTP
        // error answer (it carries the status) is a legacy server refusing the probe.
        Err(ClientError::Protocol(e))
            if e.code == ErrorCode::CONNECTION_CLOSED && !from_http_answer(&e) =>
        {
            Err(ClientError::Protocol(e))
        }
        Err(ClientError::Protocol(e)) => {
            tracing::debug!(code = %e.code, "server/discover probe failed: falling back to initialize");
            match handshake(inner).await {
                Err(ClientError::Protocol(e))
                    if e.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
                        && speaks_modern(&supported_list(&e)) =>
                {
                    tracing::debug!("initialize refused by a modern server: probing again");
                    let result = discover(inner, Some(inner.settings.probe_timeout)).await?;
                    adopt_discover(inner, result)
                }
                other => other,
            }
        }
        Err(other) => Err(other),
    }
}

/// A -32022 whose `supported` list names a modern version we speak (the only one is the
/// version we sent): 2026-07-28 "Version Negotiation" has the client retry with a version
/// from that list, so `server/discover` is sent once more rather than failing the connect
/// or falling back to `initialize`.
fn refused_but_modern(e: &ErrorObject) -> bool {
    e.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION && speaks_modern(&supported_list(e))
}

fn speaks_modern(versions: &[String]) -> bool {
    versions
        .iter()
        .filter_map(|v| ProtocolVersion::parse(v))
        .any(ProtocolVersion::is_modern)
}

fn speaks_handshake(versions: &[String]) -> bool {
    versions
        .iter()
        .filter_map(|v| ProtocolVersion::parse(v))
        .any(ProtocolVersion::is_handshake)
}

fn supported_list(e: &ErrorObject) -> Vec<String> {
    e.data
        .as_ref()
        .and_then(|d| d.get("supported"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

fn unsupported(versions: &[String]) -> ClientError {
    ClientError::UnsupportedVersion {
        detail: format!("the server supports {versions:?}"),
    }
}

/// `server/discover` with the envelope, not cancelled on abandon.
async fn discover(
    inner: &Inner,
    timeout: Option<std::time::Duration>,
) -> Result<DiscoverResult, ClientError> {
    let mut call = CallOptions::new().cancel_on_abandon(false);
    call.timeout = timeout;
    call.max_total_timeout = inner.settings.max_total_timeout;
    let params = JsonObject::new();
    let value = inner
        .send_once(
            methods::SERVER_DISCOVER,
            params.clone(),
            &RequestOptions::new(),
            call,
            true,
        )
        .await?;
    let result: DiscoverResult = serde_json::from_value(value.clone())
        .map_err(|e| ClientError::decode(methods::SERVER_DISCOVER, e))?;
    if let Some(slot) = slot_of(methods::SERVER_DISCOVER, &params) {
        let ticket = inner.cache.ticket(slot);
        inner.cache.put(ticket, &value, true);
    }
    Ok(result)
}

fn adopt_discover(inner: &Inner, result: DiscoverResult) -> Result<SessionInfo, ClientError> {
    if !speaks_modern(&result.supported_versions) {
        return Err(unsupported(&result.supported_versions));
    }
    let session = SessionInfo::from_discover(ProtocolVersion::LATEST_MODERN, result);
    let _ = inner.session.set(session.clone());
    Ok(session)
}

/// `initialize`, the version check, then `notifications/initialized`.
async fn handshake(inner: &Inner) -> Result<SessionInfo, ClientError> {
    let s = &inner.settings;
    let params = InitializeRequestParams::new(
        ProtocolVersion::LATEST_HANDSHAKE.as_str(),
        s.capabilities.clone(),
        s.client_info.clone(),
    );
    let params = match serde_json::to_value(&params) {
        Ok(Value::Object(map)) => map,
        _ => JsonObject::new(),
    };
    let mut call = CallOptions::new().cancel_on_abandon(false);
    call.timeout = s.request_timeout;
    call.max_total_timeout = s.max_total_timeout;
    let value = inner
        .send_once(
            methods::INITIALIZE,
            params,
            &RequestOptions::new(),
            call,
            false,
        )
        .await?;
    let result: InitializeResult =
        serde_json::from_value(value).map_err(|e| ClientError::decode(methods::INITIALIZE, e))?;
    let version = match ProtocolVersion::parse(&result.protocol_version) {
        Some(v) if v.era() == Era::Handshake => v,
        _ => {
            return Err(ClientError::UnsupportedVersion {
                detail: format!(
                    "initialize answered with protocol version {:?}",
                    result.protocol_version
                ),
            });
        }
    };
    let note = serde_json::to_value(NotificationParams::new()).ok();
    inner
        .dispatcher
        .notify(
            methods::NOTIFICATION_INITIALIZED,
            note.map(ferromcp_types::jsonrpc::Payload::from),
        )
        .await;
    let session = SessionInfo::from_initialize(version, result);
    let _ = inner.session.set(session.clone());
    Ok(session)
}

/// Whether an error came in a server's HTTP error response (the HTTP transport records the
/// status in `data.httpStatus`).
fn from_http_answer(e: &ferromcp_types::jsonrpc::ErrorObject) -> bool {
    e.data.as_ref().and_then(|d| d.get("httpStatus")).is_some()
}
