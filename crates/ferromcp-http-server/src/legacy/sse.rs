//! The 2024-11-05 HTTP+SSE transport (off by default; [`HttpConfig::legacy_sse`]): a GET on
//! the SSE path opens a session and its one stream, whose first event (`endpoint`) names the
//! messages path with the session id in the query; the client POSTs each message there (202)
//! and every server→client message, answers included, comes back on the stream as a
//! `message` event.
//!
//! The sessions are the handshake-era sessions of this module's parent (same caps, owner
//! check, timeouts, dispatcher and kernel entry); they live as long as their stream.
//!
//! [`HttpConfig::legacy_sse`]: field@crate::HttpConfig::legacy_sse

use std::sync::{Arc, Weak};

use ferromcp_dispatch::{MessageMeta, TransportMessage};
use ferromcp_types::jsonrpc::{DecodeError, Message};
use http::{Response, StatusCode};

use super::session::{Session, SessionStore};
use super::streams::OpenError;
use super::transport::PushError;
use super::{SessionKind, create, end, lookup_id, not_found, push_failed};
use crate::body::{McpBody, error, http_error, sse_queue_response_guarded, status_only};
use crate::headers::{self, EVENT_STREAM};
use crate::service::Shared;

/// The query parameter that carries the session id on the messages path.
pub(crate) const SESSION_PARAM: &str = "sessionId";

/// Ends the session when its stream's body is dropped (the client left, or the stream was
/// closed for a slow reader).
struct EndOnDrop {
    store: Arc<dyn SessionStore>,
    session: Weak<Session>,
}

impl Drop for EndOnDrop {
    fn drop(&mut self) {
        if let Some(s) = self.session.upgrade() {
            self.store.remove(&s.id);
            s.terminate();
        }
    }
}

/// A GET on the SSE path: a new session and its stream.
pub(crate) async fn get(
    shared: &Arc<Shared>,
    parts: Arc<http::request::Parts>,
) -> Response<McpBody> {
    let c = &shared.config;
    if parts.headers.contains_key(http::header::ACCEPT)
        && !headers::accepts(&parts.headers, EVENT_STREAM)
    {
        return http_error(
            StatusCode::NOT_ACCEPTABLE,
            "Not Acceptable: Accept must list text/event-stream",
        );
    }
    let session = match create(shared, &parts, SessionKind::LegacySse) {
        Ok(s) => s,
        Err(r) => return r,
    };
    session.mark_used();
    let mut endpoint = String::with_capacity(c.legacy_messages_path.len() + 48);
    endpoint.push_str(&c.legacy_messages_path);
    endpoint.push(if endpoint.contains('?') { '&' } else { '?' });
    endpoint.push_str(SESSION_PARAM);
    endpoint.push('=');
    endpoint.push_str(&session.id);
    let rx = match session.streams.open_legacy_sse(&endpoint) {
        Ok(rx) => rx,
        Err(OpenError::Conflict | OpenError::Duplicate | OpenError::Closed) => {
            end(shared, &session);
            return not_found();
        }
    };
    let guard = EndOnDrop {
        store: c.session_store.clone(),
        session: Arc::downgrade(&session),
    };
    sse_queue_response_guarded(
        rx,
        c.keep_alive,
        Box::new(guard),
        Some(shared.timers.keep_alive.clone()),
    )
}

/// The session id of a messages-path request: `Err(())` when the parameter is repeated.
fn session_param(query: Option<&str>) -> Result<Option<&str>, ()> {
    let mut found = None;
    for pair in query.unwrap_or_default().split('&') {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        if key == SESSION_PARAM {
            if found.is_some() {
                return Err(());
            }
            found = Some(value);
        }
    }
    Ok(found)
}

/// A POST on the messages path: one JSON-RPC message for the session its query names,
/// accepted (202) once queued; the answer goes out on the session's stream.
pub(crate) async fn post(
    shared: &Arc<Shared>,
    parts: Arc<http::request::Parts>,
    decoded: Result<Message, DecodeError>,
) -> Response<McpBody> {
    let c = &shared.config;
    let Ok(id) = session_param(parts.uri.query()) else {
        return http_error(StatusCode::BAD_REQUEST, "Bad Request: repeated sessionId");
    };
    let session = match lookup_id(shared, id, &parts, SessionKind::LegacySse) {
        Err(r) => return r,
        Ok(Some(s)) => s,
        Ok(None) => return http_error(StatusCode::BAD_REQUEST, "Bad Request: missing sessionId"),
    };
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
    match &message {
        Message::Request(_) => session.mark_used(),
        Message::Notification(_)
            if session.dispatcher.inbound_load().queued_notifications >= c.inbound_queue =>
        {
            return push_failed(PushError::Full);
        }
        _ => {}
    }
    let mut meta = MessageMeta::default();
    meta.http = Some(parts);
    match session.inbox.push(TransportMessage::new(message, meta)) {
        Ok(()) => status_only(StatusCode::ACCEPTED),
        Err(e) => push_failed(e),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::session_param;

    #[test]
    fn the_session_parameter_is_read_once() {
        assert_eq!(session_param(Some("sessionId=ab")), Ok(Some("ab")));
        assert_eq!(session_param(Some("x=1&sessionId=cd&y")), Ok(Some("cd")));
        assert_eq!(session_param(None), Ok(None));
        assert_eq!(session_param(Some("sessionid=ab")), Ok(None));
        assert_eq!(session_param(Some("sessionId=a&sessionId=b")), Err(()));
    }
}
