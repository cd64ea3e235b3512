//! [`RedisSessionStore`]: live sessions in this process, their records in Redis, this node's
//! heartbeat, and the reader of its inbox (messages other nodes forward to its sessions).

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Weak};
use std::time::Duration;

use ferromcp_dispatch::{MessageMeta, TransportMessage};
use ferromcp_types::jsonrpc::{ErrorObject, Message};
use http::header::HeaderValue;
use redis::AsyncCommands;
use tokio_util::sync::CancellationToken;

use super::Node;
use super::events::{ReadReply, valid_stream_name};
use crate::headers::MCP_PROTOCOL_VERSION;
use crate::legacy::session::{InMemorySessionStore, Session, SessionStore};
use ferromcp_server::CallerId;

/// What Redis knows of a session: its owner, its principal, its negotiated version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Record {
    pub(crate) node: String,
    pub(crate) principal: Option<String>,
    pub(crate) version: String,
}

/// A [`SessionStore`] for several nodes sharing one Redis.
///
/// Live sessions stay in this process (an [`InMemorySessionStore`]); Redis holds each
/// session's record (`{ns}:s:{id}`: owning node, principal, protocol version; expiring after
/// the idle timeout), this node's heartbeat (`{ns}:n:{node}`), and its inbox
/// (`{ns}:n:{node}:in`), a Redis stream of the messages other nodes forward to this node's
/// sessions. See [the module docs](super) for the model.
pub struct RedisSessionStore {
    pub(crate) node: Arc<Node>,
    local: InMemorySessionStore,
    stop: CancellationToken,
}

impl fmt::Debug for RedisSessionStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisSessionStore")
            .field("node", &self.node.id)
            .field("namespace", &self.node.ns)
            .field("local", &self.local.len())
            .finish_non_exhaustive()
    }
}

impl Drop for RedisSessionStore {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl RedisSessionStore {
    pub(crate) async fn start(node: Arc<Node>) -> redis::RedisResult<Arc<Self>> {
        let store = Arc::new(Self {
            node: node.clone(),
            local: InMemorySessionStore::default(),
            stop: CancellationToken::new(),
        });
        beat(&node).await?;
        let inbox = node.blocking_conn().await?;
        tokio::spawn(heartbeat(node.clone(), store.stop.clone()));
        tokio::spawn(read_inbox(
            Arc::downgrade(&store),
            node,
            inbox,
            store.stop.clone(),
        ));
        Ok(store)
    }

    /// This node's id, as written in the records of the sessions it owns.
    pub fn node_id(&self) -> &str {
        &self.node.id
    }

    /// Stops this node's part in the deployment: its heartbeat is withdrawn and its inbox no
    /// longer read, so other nodes take its sessions for lost (404; resumed streams end
    /// after their stored events). Sessions already live here are not ended by this.
    pub async fn shutdown(&self) {
        self.stop.cancel();
        let mut c = self.node.conn.clone();
        let keys = [
            self.node.alive_key(&self.node.id),
            self.node.inbox_key(&self.node.id),
        ];
        let _: redis::RedisResult<()> = c.del(&keys).await;
    }

    pub(crate) fn local_session(&self, id: &str) -> Option<Arc<Session>> {
        self.local.get(id)
    }

    pub(crate) async fn write_record(&self, id: &str, r: &Record) -> redis::RedisResult<()> {
        let key = self.node.record_key(id);
        let principal = r
            .principal
            .as_ref()
            .map_or(String::new(), |p| format!("={p}"));
        let mut c = self.node.conn.clone();
        self.node.refreshed_now(&key);
        redis::pipe()
            .hset_multiple(
                &key,
                &[
                    ("node", r.node.as_str()),
                    ("principal", principal.as_str()),
                    ("version", r.version.as_str()),
                ],
            )
            .ignore()
            .pexpire(&key, i64::try_from(self.node.ttl_ms()).unwrap_or(i64::MAX))
            .ignore()
            .query_async(&mut c)
            .await
    }

    pub(crate) async fn read_record(&self, id: &str) -> redis::RedisResult<Option<Record>> {
        if id.len() > 128 || !id.bytes().all(|b| b.is_ascii_graphic()) {
            return Ok(None);
        }
        let mut c = self.node.conn.clone();
        let map: HashMap<String, String> = c.hgetall(self.node.record_key(id)).await?;
        let Some(node) = map.get("node") else {
            return Ok(None);
        };
        let principal = match map.get("principal").map(String::as_str) {
            None | Some("") => None,
            Some(p) => Some(p.strip_prefix('=').unwrap_or(p).to_owned()),
        };
        Ok(Some(Record {
            node: node.clone(),
            principal,
            version: map.get("version").cloned().unwrap_or_default(),
        }))
    }

    pub(crate) async fn delete_record(&self, id: &str) {
        self.node.forget_refreshes(id);
        let mut c = self.node.conn.clone();
        let _: redis::RedisResult<()> = c.del(self.node.record_key(id)).await;
    }

    /// Refreshes the TTL of a session's record (in the background), at most once per
    /// refresh interval (a quarter of the idle timeout) from this node.
    pub(crate) fn touch(&self, id: &str) {
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let key = self.node.record_key(id);
        if !self.node.due(&key) {
            return;
        }
        let mut c = self.node.conn.clone();
        let ttl = i64::try_from(self.node.ttl_ms()).unwrap_or(i64::MAX);
        rt.spawn(async move {
            let _: redis::RedisResult<bool> = c.pexpire(key, ttl).await;
        });
    }

    /// Appends a message for session `sid` to `owner`'s inbox.
    pub(crate) async fn send_to_owner(
        &self,
        owner: &str,
        sid: &str,
        kind: &str,
        fields: &[(&str, &[u8])],
    ) -> redis::RedisResult<()> {
        let mut cmd = redis::cmd("XADD");
        cmd.arg(self.node.inbox_key(owner))
            .arg("MAXLEN")
            .arg("~")
            .arg(10_000)
            .arg("*")
            .arg("k")
            .arg(kind)
            .arg("s")
            .arg(sid);
        for (k, v) in fields {
            cmd.arg(*k).arg(*v);
        }
        let mut c = self.node.conn.clone();
        let _: String = cmd.query_async(&mut c).await?;
        Ok(())
    }

    /// One forwarded message, for a session of this node.
    async fn deliver(&self, fields: Vec<(String, Vec<u8>)>) {
        let mut f: HashMap<String, Vec<u8>> = fields.into_iter().collect();
        let text = |f: &mut HashMap<String, Vec<u8>>, k: &str| {
            f.remove(k)
                .and_then(|v| String::from_utf8(v).ok())
                .unwrap_or_default()
        };
        let kind = text(&mut f, "k");
        let sid = text(&mut f, "s");
        let stream = text(&mut f, "t");
        let version = text(&mut f, "v");
        let message = f.remove("m").and_then(|m| super::remote::decode(&m));
        let session = self.local.get(&sid).filter(|s| !s.is_terminated());
        let Some(session) = session else {
            // Nobody here to answer: end a forwarded request's stream.
            if let (Some(Message::Request(r)), true) = (&message, valid_stream_name(&stream)) {
                let m = Message::error(
                    Some(r.id.clone()),
                    ErrorObject::internal_error("the session ended"),
                );
                let _ = self.node.append(&sid, &stream, &m.to_vec()).await;
            }
            return;
        };
        if kind == "x" {
            self.local.remove(&sid);
            session.terminate();
            return;
        }
        let Some(message) = message else { return };
        session.touch();
        if matches!(message, Message::Request(_)) {
            session.mark_used();
        }
        let mut meta = MessageMeta::default();
        meta.http = Some(Arc::new(forwarded_parts(&session, &version)));
        match message {
            Message::Request(r) if valid_stream_name(&stream) => {
                let id = r.id.clone();
                let refused = match session.streams.open_detached(&id, &stream) {
                    Err(_) => Some(ErrorObject::invalid_request(
                        "this request id is already in flight",
                    )),
                    Ok(()) => match session
                        .inbox
                        .push(TransportMessage::new(Message::Request(r), meta))
                    {
                        Ok(()) => None,
                        Err(_) => {
                            session.streams.abandon(&id);
                            Some(ErrorObject::internal_error(
                                "this session's inbound queue is full",
                            ))
                        }
                    },
                };
                if let Some(e) = refused {
                    let m = Message::error(Some(id), e);
                    let _ = self.node.append(&sid, &stream, &m.to_vec()).await;
                }
            }
            Message::Request(_) => {}
            other => {
                if let Message::Notification(n) = &other
                    && n.method == ferromcp_dispatch::utility::CANCELLED
                    && let Some(id) = n
                        .params
                        .as_ref()
                        .and_then(|p| p.parse::<serde_json::Value>().ok())
                        .and_then(|p| p.get("requestId").cloned())
                        .and_then(|id| serde_json::from_value(id).ok())
                {
                    session.streams.cancel(&id).await;
                }
                let _ = session.inbox.push(TransportMessage::new(other, meta));
            }
        }
    }
}

/// The HTTP parts a forwarded message is delivered with: its `MCP-Protocol-Version` and the
/// session's principal.
fn forwarded_parts(session: &Session, version: &str) -> http::request::Parts {
    let (mut parts, ()) = http::Request::new(()).into_parts();
    parts.method = http::Method::POST;
    if let Ok(v) = HeaderValue::from_str(version)
        && !version.is_empty()
    {
        parts.headers.insert(MCP_PROTOCOL_VERSION, v);
    }
    if let Some(p) = &session.principal {
        parts.extensions.insert::<CallerId>(p.clone());
    }
    parts
}

async fn beat(node: &Node) -> redis::RedisResult<()> {
    let mut c = node.conn.clone();
    let ms = node.alive_ms();
    redis::pipe()
        .cmd("SET")
        .arg(node.alive_key(&node.id))
        .arg(1)
        .arg("PX")
        .arg(ms)
        .ignore()
        .cmd("PEXPIRE")
        .arg(node.inbox_key(&node.id))
        .arg(ms.saturating_mul(2))
        .ignore()
        .query_async(&mut c)
        .await
}

async fn heartbeat(node: Arc<Node>, stop: CancellationToken) {
    let mut tick = tokio::time::interval(node.heartbeat);
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            _ = tick.tick() => {}
        }
        if let Err(e) = beat(&node).await {
            tracing::warn!(error = %e, "Redis session store: heartbeat failed");
        }
    }
}

async fn read_inbox(
    store: Weak<RedisSessionStore>,
    node: Arc<Node>,
    conn: redis::aio::MultiplexedConnection,
    stop: CancellationToken,
) {
    let key = node.inbox_key(&node.id);
    // This node's inbox is new (its id is too): read it from the start.
    let mut last = "0-0".to_owned();
    let mut conn = Some(conn);
    loop {
        let c = match conn.as_mut() {
            Some(c) => c,
            None => match node.blocking_conn().await {
                Ok(c) => conn.insert(c),
                Err(e) => {
                    tracing::warn!(error = %e, "Redis session store: inbox reconnect failed");
                    tokio::select! {
                        () = stop.cancelled() => return,
                        () = tokio::time::sleep(Duration::from_millis(500)) => continue,
                    }
                }
            },
        };
        let mut cmd = redis::cmd("XREAD");
        cmd.arg("COUNT")
            .arg(64)
            .arg("BLOCK")
            .arg(1000)
            .arg("STREAMS")
            .arg(&key)
            .arg(&last);
        let read = cmd.query_async::<ReadReply>(c);
        let read = tokio::select! {
            () = stop.cancelled() => return,
            r = read => r,
        };
        match read {
            Ok(Some(keys)) => {
                let Some(store) = store.upgrade() else { return };
                for (_, entries) in keys {
                    for (id, fields) in entries {
                        last = id;
                        store.deliver(fields).await;
                    }
                }
            }
            Ok(None) => {
                if store.strong_count() == 0 {
                    return;
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "Redis session store: inbox read failed");
                conn = None;
            }
        }
    }
}

impl SessionStore for RedisSessionStore {
    fn insert(&self, session: Arc<Session>) {
        self.local.insert(session);
    }

    fn get(&self, id: &str) -> Option<Arc<Session>> {
        self.local.get(id)
    }

    fn remove(&self, id: &str) -> Option<Arc<Session>> {
        let removed = self.local.remove(id);
        if removed.is_some()
            && let Ok(rt) = tokio::runtime::Handle::try_current()
        {
            let mut c = self.node.conn.clone();
            let key = self.node.record_key(id);
            rt.spawn(async move {
                let _: redis::RedisResult<()> = c.del(key).await;
            });
        }
        removed
    }

    fn len(&self) -> usize {
        self.local.len()
    }

    fn all(&self) -> Vec<Arc<Session>> {
        self.local.all()
    }

    fn redis(&self) -> Option<&RedisSessionStore> {
        Some(self)
    }
}
