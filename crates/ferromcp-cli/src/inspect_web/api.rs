//! The JSON API the page calls: POSTs under `/api/` (connect, disconnect, request, cancel,
//! answer, roots) and GETs (config, servers, log). Each answers `(status, JSON)`.

use std::sync::Arc;

use ferromcp_types::jsonrpc::{ErrorCode, ErrorObject};
use ferromcp_types::mcp::Root;
use serde::Deserialize;
use serde_json::{Value, json};

use super::session::{ConnectRequest, Failure, State};

/// The answer of one API call.
pub(crate) type Answer = (u16, Value);

fn failure((status, message): Failure) -> Answer {
    (status, json!({ "error": { "message": message } }))
}

fn parse<T: for<'de> Deserialize<'de>>(body: Value) -> Result<T, Answer> {
    serde_json::from_value(body).map_err(|e| failure((400, format!("bad request body: {e}"))))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ServerRef {
    server: u64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RequestBody {
    server: u64,
    method: String,
    #[serde(default)]
    params: Value,
    #[serde(default)]
    call_id: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CancelBody {
    call_id: String,
}

#[derive(Deserialize)]
struct AnswerBody {
    id: u64,
    #[serde(default)]
    result: Option<Value>,
    #[serde(default)]
    error: Option<AnswerError>,
}

#[derive(Deserialize)]
struct AnswerError {
    #[serde(default)]
    code: Option<i64>,
    message: String,
}

#[derive(Deserialize)]
struct RootsBody {
    roots: Vec<Root>,
}

/// A POST to `path` with `body`.
pub(crate) async fn post(state: &Arc<State>, path: &str, body: Value) -> Answer {
    match run_post(state, path, body).await {
        Ok(a) | Err(a) => a,
    }
}

async fn run_post(state: &Arc<State>, path: &str, body: Value) -> Result<Answer, Answer> {
    Ok(match path {
        "/api/connect" => {
            let req: ConnectRequest = parse(body)?;
            let info = state.connect(req).await.map_err(failure)?;
            (200, json!({ "server": info }))
        }
        "/api/disconnect" => {
            let r: ServerRef = parse(body)?;
            state.disconnect(r.server).await.map_err(failure)?;
            (200, json!({}))
        }
        "/api/request" => {
            let r: RequestBody = parse(body)?;
            let params = if r.params.is_null() {
                json!({})
            } else {
                r.params
            };
            let out = state
                .request(r.server, r.call_id, r.method, params)
                .await
                .map_err(failure)?;
            (200, out)
        }
        "/api/cancel" => {
            let r: CancelBody = parse(body)?;
            (200, json!({ "cancelled": state.cancel(&r.call_id) }))
        }
        "/api/answer" => {
            let r: AnswerBody = parse(body)?;
            let answer = match (r.result, r.error) {
                (Some(v), None) => Ok(v),
                (None, Some(e)) => {
                    let code = e.code.and_then(|c| i32::try_from(c).ok());
                    Err(ErrorObject::new(
                        code.map_or(ErrorCode::INTERNAL_ERROR, ErrorCode),
                        e.message,
                    ))
                }
                _ => return Err(failure((400, "give result or error".into()))),
            };
            if !state.answer(r.id, answer) {
                return Err(failure((404, format!("nothing waits under id {}", r.id))));
            }
            (200, json!({}))
        }
        "/api/roots" => {
            let r: RootsBody = parse(body)?;
            state.set_roots(r.roots).await;
            (200, json!({}))
        }
        _ => failure((404, format!("no such API: POST {path}"))),
    })
}

/// A GET of `path` (other than the event stream); `None` when there is no such route.
pub(crate) fn get(state: &Arc<State>, path: &str) -> Option<(u16, String)> {
    let l = &state.limits;
    Some(match path {
        "/api/config" => (
            200,
            json!({
                "version": env!("CARGO_PKG_VERSION"),
                "sandboxOrigin": state.sandbox_origin,
                "sandboxPath": crate::apps_host::SANDBOX_PATH,
                "appLimits": {
                    "maxMessageBytes": crate::apps_host::DEFAULT_APP_MAX_MESSAGE_BYTES,
                    "maxCallsPerMinute": crate::apps_host::DEFAULT_APP_MAX_CALLS_PER_MINUTE,
                    "maxPendingCalls": crate::apps_host::DEFAULT_APP_MAX_PENDING_CALLS,
                    "teardownTimeoutMs": crate::apps_host::DEFAULT_APP_TEARDOWN_TIMEOUT_MS,
                },
                "servers": state.servers(),
                "limits": {
                    "maxBody": l.max_body, "maxServers": l.max_servers,
                    "maxPending": l.max_pending, "eventBuffer": l.event_buffer,
                    "maxRequests": l.max_requests,
                    "maxRequestsPerServer": l.max_requests_per_server,
                },
            })
            .to_string(),
        ),
        "/api/servers" => (200, json!({ "servers": state.servers() }).to_string()),
        "/api/log" => (200, state.log.snapshot()),
        _ => return None,
    })
}
