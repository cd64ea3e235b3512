//! `logging/setLevel` forwarded to the backends.
//!
//! A backend is shared by every front session, so it is sent the most verbose level any live
//! front session asked for (handshake-era backends, with `logging/setLevel`, when they declare
//! `logging`); each front session's records are still filtered at its own level by the
//! front's [`RequestContext::log`](ferromcp_server::RequestContext::log). When the last
//! session that set a level ends, the backends are sent `debug` again (every record, as before
//! any level was set). 2026-07-28 backends have no `logging/setLevel`: each forwarded request
//! carries the level its front request allows in `_meta["io.modelcontextprotocol/logLevel"]`
//! ([`crate::forward`]).
//!
//! A backend log record that belongs to no request the front can name (a stdio backend's
//! records carry no relation, and several requests are in flight on it, or none) goes to every
//! live handshake-era front session as a session-level record, each at its own level
//! ([`LogLevels::broadcast`]): the backend's session is shared by all of them.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use ferromcp_dispatch::BoxFuture;
use ferromcp_server::Connection;
use ferromcp_server::middleware::{McpRequest, McpResult, Middleware, Next};
use ferromcp_types::Era;
use ferromcp_types::jsonrpc::Payload;
use ferromcp_types::mcp::{LoggingLevel, methods};
use serde_json::Value;

use crate::mount::{Mount, UnrelatedLogs};
use crate::subscribe::Mounts;

/// The levels the front sessions set, and the level the backends were sent.
pub(crate) struct LogLevels {
    next: AtomicU64,
    sessions: Mutex<HashMap<u64, LoggingLevel>>,
    /// The live handshake-era front sessions (registered at `initialize`), by key.
    live: Mutex<HashMap<u64, Connection>>,
    /// The level the handshake-era backends were last sent; the lock also keeps two changes
    /// from reaching the backends out of order.
    forwarded: tokio::sync::Mutex<Option<LoggingLevel>>,
    mounts: Mounts,
}

/// A front session's key in [`LogLevels`] (kept in its connection's state).
struct SessionKey(u64);

impl LogLevels {
    pub(crate) fn new(mounts: Mounts) -> Arc<Self> {
        Arc::new(Self {
            next: AtomicU64::new(0),
            sessions: Mutex::new(HashMap::new()),
            live: Mutex::new(HashMap::new()),
            forwarded: tokio::sync::Mutex::new(None),
            mounts,
        })
    }

    fn sessions(&self) -> std::sync::MutexGuard<'_, HashMap<u64, LoggingLevel>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn live(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Connection>> {
        self.live.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The key of the front session `connection`; on first sight it joins the live sessions
    /// until it closes.
    fn key(self: &Arc<Self>, connection: &Connection) -> u64 {
        let mut fresh = false;
        let key = connection.state_or_insert_with(|| {
            fresh = true;
            SessionKey(self.next.fetch_add(1, Ordering::Relaxed))
        });
        if fresh {
            let (this, id) = (Arc::downgrade(self), key.0);
            self.live().insert(id, connection.clone());
            connection.on_close(move || async move {
                if let Some(this) = this.upgrade() {
                    this.live().remove(&id);
                    let had_level = this.sessions().remove(&id).is_some();
                    if had_level {
                        this.apply().await;
                    }
                }
            });
        }
        key.0
    }

    /// Records that the front session `connection` set `level`, and forwards the most
    /// verbose level if it changed.
    async fn set(self: &Arc<Self>, connection: &Connection, level: LoggingLevel) {
        let key = self.key(connection);
        self.sessions().insert(key, level);
        self.apply().await;
    }

    /// Sends a backend log record that belongs to no known front request to every live
    /// handshake-era front session, as a session-level record at that session's level.
    pub(crate) async fn broadcast(&self, level: LoggingLevel, logger: &str, data: &Value) {
        let live: Vec<Connection> = self.live().values().cloned().collect();
        for connection in live {
            if connection.log_level().is_some_and(|min| level < min) {
                continue;
            }
            let mut params = serde_json::Map::new();
            params.insert(
                "level".into(),
                serde_json::to_value(level).unwrap_or(Value::Null),
            );
            params.insert("logger".into(), logger.into());
            params.insert("data".into(), data.clone());
            connection
                .notify(methods::NOTIFICATION_MESSAGE, Some(Payload::from(params)))
                .await;
        }
    }

    /// Sends the backends the level the live sessions want, if it is not what they have.
    async fn apply(&self) {
        let mut forwarded = self.forwarded.lock().await;
        let wanted = match (self.sessions().values().min().copied(), *forwarded) {
            (Some(level), _) => level,
            // Nobody asks any more: every record again.
            (None, Some(_)) => LoggingLevel::Debug,
            (None, None) => return,
        };
        if *forwarded == Some(wanted) {
            return;
        }
        *forwarded = Some(wanted);
        let mounts: Vec<Arc<Mount>> = self
            .mounts
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        // All at once: a slow backend (bounded by its `Backend::timeout`) delays no other.
        let mut sends = tokio::task::JoinSet::new();
        for mount in mounts {
            sends.spawn(async move { send_level(&mount, wanted).await });
        }
        while sends.join_next().await.is_some() {}
    }

    /// Sends a newly mounted backend (already among the mounts) the level the others were
    /// sent, if any.
    pub(crate) async fn join(&self, mount: &Mount) {
        let forwarded = self.forwarded.lock().await;
        if let Some(level) = *forwarded {
            send_level(mount, level).await;
        }
    }
}

/// `logging/setLevel` to a handshake-era backend that declares `logging`.
async fn send_level(mount: &Mount, level: LoggingLevel) {
    let session = mount.client().session();
    if session.era == Era::Modern || session.capabilities.logging.is_none() {
        return;
    }
    if let Err(e) = mount.client().set_logging_level(level).await {
        tracing::warn!(mount = %mount.name(), error = %e, "forwarding logging/setLevel failed");
    }
}

/// The front's layer that forwards `logging/setLevel` (after the front recorded it), and
/// records each handshake-era front session at its `initialize`.
pub(crate) struct ForwardLogLevel {
    pub(crate) levels: Arc<LogLevels>,
}

impl Middleware for ForwardLogLevel {
    fn handle(&self, request: McpRequest, next: Next) -> BoxFuture<'static, McpResult> {
        if request.method == methods::INITIALIZE {
            let connection = request.ctx.connection().clone();
            let levels = self.levels.clone();
            return Box::pin(async move {
                let answer = next.run(request).await?;
                levels.key(&connection);
                Ok(answer)
            });
        }
        if request.method != methods::LOGGING_SET_LEVEL {
            return next.run(request);
        }
        let level = request
            .params_value()
            .and_then(|p| p.get("level"))
            .cloned()
            .and_then(|l: Value| serde_json::from_value::<LoggingLevel>(l).ok());
        let connection = request.ctx.connection().clone();
        let levels = self.levels.clone();
        Box::pin(async move {
            let answer = next.run(request).await?;
            if let Some(level) = level {
                levels.set(&connection, level).await;
            }
            Ok(answer)
        })
    }
}

impl UnrelatedLogs for LogLevels {
    fn send_unrelated<'a>(
        &'a self,
        level: LoggingLevel,
        logger: &'a str,
        data: &'a Value,
    ) -> std::pin::Pin<Box<dyn Future<Output = ()> + Send + 'a>> {
        Box::pin(self.broadcast(level, logger, data))
    }
}

/// The front's sessions as a mount sees them: where its unrelated log records go.
pub(crate) fn unrelated(levels: &Arc<LogLevels>) -> Weak<dyn UnrelatedLogs> {
    let levels: Weak<LogLevels> = Arc::downgrade(levels);
    levels
}
