//! The inspector's state: the servers the page connected (each a ferromcp [`Client`] whose
//! messages are tapped into the event log), the server→client requests waiting for the
//! user's answer, the calls in flight (so the page can cancel them) and the roots the user
//! set.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use ferromcp_client::apps::AppConfig;
use ferromcp_client::{Client, ClientBuilder, Lifecycle, RequestOptions, TaskConfig};
use ferromcp_types::jsonrpc::{ErrorCode, ErrorObject};
use ferromcp_types::mcp::{Implementation, ListRootsResult, Root};
use serde_json::{Value, json};
use tokio::sync::oneshot;

use ferromcp_client::oauth::{OAuthConfig, OAuthProvider};

use super::events::EventLog;
use super::oauth::{BrowserAuth, CALLBACK_PATH, Waits};
use super::security::Limits;
use super::tap::{Tap, TappedTransport};
use crate::target::{self, Header, Target};

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A connected server.
struct Server {
    client: Client,
    info: Value,
}

/// A server→client request waiting for the user.
struct Pending {
    server: u64,
    answer: oneshot::Sender<Result<Value, ErrorObject>>,
}

/// Everything the API works on.
pub(crate) struct State {
    pub(crate) log: Arc<EventLog>,
    pub(crate) limits: Limits,
    /// The sandbox listener's origin, for MCP Apps (told to the page).
    pub(crate) sandbox_origin: Option<String>,
    /// The inspector's own origin (the OAuth redirect URI is under it).
    origin: String,
    /// Sign-ins waiting for their callback.
    pub(crate) oauth: Arc<Waits>,
    servers: Mutex<HashMap<u64, Server>>,
    /// Connections being made (they count towards `max_servers`).
    connecting: Mutex<usize>,
    next_id: AtomicU64,
    pending: Mutex<HashMap<u64, Pending>>,
    calls: Mutex<HashMap<String, tokio::task::AbortHandle>>,
    /// The page's requests in flight: in total and per server.
    in_flight: Arc<Mutex<InFlight>>,
    roots: Mutex<Vec<Root>>,
}

/// The page's requests in flight.
#[derive(Default)]
struct InFlight {
    total: usize,
    per_server: HashMap<u64, usize>,
}

/// One request's place among those in flight, given back on drop.
struct Slot {
    counts: Arc<Mutex<InFlight>>,
    server: u64,
}

impl Slot {
    /// A place for a request to `server`, or 429 past `max_requests_per_server` or
    /// `max_requests`.
    fn take(counts: &Arc<Mutex<InFlight>>, server: u64, limits: &Limits) -> Result<Self, Failure> {
        let mut c = lock(counts);
        let mine = c.per_server.get(&server).copied().unwrap_or(0);
        if mine >= limits.max_requests_per_server {
            return Err((
                429,
                format!(
                    "at most {} requests in flight to one server (--max-requests-per-server)",
                    limits.max_requests_per_server
                ),
            ));
        }
        if c.total >= limits.max_requests {
            return Err((
                429,
                format!(
                    "at most {} requests in flight in total (--max-requests)",
                    limits.max_requests
                ),
            ));
        }
        c.total += 1;
        c.per_server.insert(server, mine + 1);
        Ok(Self {
            counts: counts.clone(),
            server,
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut c = lock(&self.counts);
        c.total = c.total.saturating_sub(1);
        if let Some(n) = c.per_server.get_mut(&self.server) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                c.per_server.remove(&self.server);
            }
        }
    }
}

/// What the page asks to connect to.
#[derive(Debug, serde::Deserialize)]
pub(crate) struct ConnectRequest {
    /// A URL or a stdio command line.
    pub(crate) target: String,
    /// `NAME: VALUE` headers (HTTP targets).
    #[serde(default)]
    pub(crate) headers: Vec<String>,
    /// `auto` (default), a handshake-era version or `2026-07-28`.
    #[serde(default)]
    pub(crate) protocol: Option<String>,
    /// Authorize with OAuth 2.1 in the browser when the server asks (HTTP targets).
    #[serde(default)]
    pub(crate) oauth: bool,
}

/// An API failure: the HTTP status and the message.
pub(crate) type Failure = (u16, String);

impl State {
    /// The state, with an empty log.
    pub(crate) fn new(limits: Limits, origin: String, sandbox_origin: Option<String>) -> Arc<Self> {
        Arc::new(Self {
            log: EventLog::new(limits.event_buffer, limits.max_event_bytes),
            oauth: Waits::new(limits.max_pending),
            origin,
            limits,
            sandbox_origin,
            servers: Mutex::default(),
            connecting: Mutex::new(0),
            next_id: AtomicU64::new(1),
            pending: Mutex::default(),
            calls: Mutex::default(),
            in_flight: Arc::default(),
            roots: Mutex::default(),
        })
    }

    /// The connected servers' descriptions.
    pub(crate) fn servers(&self) -> Vec<Value> {
        let mut list: Vec<(u64, Value)> = lock(&self.servers)
            .iter()
            .map(|(id, s)| (*id, s.info.clone()))
            .collect();
        list.sort_by_key(|(id, _)| *id);
        list.into_iter().map(|(_, v)| v).collect()
    }

    /// Connects to `req.target`; the description of the connected server.
    pub(crate) async fn connect(self: &Arc<Self>, req: ConnectRequest) -> Result<Value, Failure> {
        let target = Target::parse(&req.target).map_err(|e| (400, e))?;
        let headers = req
            .headers
            .iter()
            .filter(|h| !h.trim().is_empty())
            .map(|h| Header::parse(h))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| (400, e))?;
        let lifecycle = match req.protocol.as_deref() {
            None | Some("" | "auto") => Lifecycle::Auto,
            Some(v) => match ferromcp_types::ProtocolVersion::parse(v) {
                Some(p) if p.is_modern() => Lifecycle::Modern,
                Some(_) => Lifecycle::Handshake,
                None => return Err((400, format!("unknown protocol version {v:?}"))),
            },
        };
        {
            let mut connecting = lock(&self.connecting);
            if lock(&self.servers).len() + *connecting >= self.limits.max_servers {
                return Err((
                    429,
                    format!(
                        "at most {} servers at once (--max-servers)",
                        self.limits.max_servers
                    ),
                ));
            }
            *connecting += 1;
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let outcome = self.open(id, &target, &headers, lifecycle, req.oauth).await;
        *lock(&self.connecting) -= 1;
        let client = outcome.map_err(|e| {
            self.log
                .push("error", json!({ "server": id, "message": e.clone() }));
            (502, e)
        })?;
        let s = client.session();
        let info = json!({
            "id": id,
            "target": req.target,
            "serverInfo": s.server_info,
            "protocolVersion": s.protocol_version.as_str(),
            "era": if s.era == ferromcp_types::Era::Modern { "modern" } else { "handshake" },
            "supportedVersions": s.supported_versions,
            "capabilities": s.capabilities,
            "instructions": s.instructions,
        });
        lock(&self.servers).insert(
            id,
            Server {
                client,
                info: info.clone(),
            },
        );
        self.log.push("connected", json!({ "server": info }));
        Ok(info)
    }

    async fn open(
        self: &Arc<Self>,
        id: u64,
        target: &Target,
        headers: &[Header],
        lifecycle: Lifecycle,
        oauth: bool,
    ) -> Result<Client, String> {
        let builder = self.builder(id, lifecycle);
        let tap = Tap::new(self.log.clone(), id);
        let described = target.describe();
        let client = match target {
            Target::Command(argv) => {
                if !headers.is_empty() || oauth {
                    return Err(
                        "headers and OAuth apply to http:// and https:// targets only".into(),
                    );
                }
                let inner = target::stdio_transport(argv)?;
                builder.connect(TappedTransport { inner, tap }).await
            }
            Target::Http(url) => {
                let mut inner = target::http_transport(url, headers, &Default::default())?;
                if oauth {
                    let redirect_uri = format!("{}{CALLBACK_PATH}", self.origin);
                    let handler = BrowserAuth {
                        waits: self.oauth.clone(),
                        log: self.log.clone(),
                        server: id,
                        timeout: self.limits.answer_timeout,
                        redirect_uri: redirect_uri.clone(),
                    };
                    let cfg = OAuthConfig::new(redirect_uri, handler)
                        .with_client_name("ferromcp-inspector");
                    let provider =
                        OAuthProvider::new(url, cfg).map_err(|e| format!("OAuth: {e}"))?;
                    inner = inner.auth(Arc::new(provider));
                }
                builder.connect(TappedTransport { inner, tap }).await
            }
        };
        client.map_err(|e| format!("connecting to {described}: {e}"))
    }

    fn builder(self: &Arc<Self>, id: u64, lifecycle: Lifecycle) -> ClientBuilder {
        let (e, s, r) = (
            Arc::downgrade(self),
            Arc::downgrade(self),
            Arc::downgrade(self),
        );
        Client::builder()
            .client_info(Implementation::new(
                "ferromcp-inspector",
                env!("CARGO_PKG_VERSION"),
            ))
            .lifecycle(lifecycle)
            // The user answers elicitations and sampling: a call waits for them.
            .request_timeout(Some(self.limits.answer_timeout))
            .apps(AppConfig::default())
            .tasks(TaskConfig::default())
            .on_elicitation(move |p| {
                let state = e.clone();
                async move { ask(state, id, "elicitation", json!(p)).await }
            })
            .on_sampling(move |p| {
                let state = s.clone();
                async move { ask(state, id, "sampling", json!(p)).await }
            })
            .on_roots(move || {
                let roots = r
                    .upgrade()
                    .map(|st| lock(&st.roots).clone())
                    .unwrap_or_default();
                std::future::ready(Ok(ListRootsResult::new(roots)))
            })
    }

    /// Disconnects server `id`.
    pub(crate) async fn disconnect(&self, id: u64) -> Result<(), Failure> {
        let server = lock(&self.servers).remove(&id);
        let Some(server) = server else {
            return Err((404, format!("no server {id}")));
        };
        server.client.shutdown().await;
        self.log.push("disconnected", json!({ "server": id }));
        Ok(())
    }

    fn client(&self, id: u64) -> Result<Client, Failure> {
        lock(&self.servers)
            .get(&id)
            .map(|s| s.client.clone())
            .ok_or_else(|| (404, format!("no server {id}")))
    }

    /// Sends `method` with `params` to server `id` under the page's `call` id (so it can be
    /// cancelled); progress goes to the log. The raw result, or the error as JSON.
    pub(crate) async fn request(
        &self,
        id: u64,
        call: String,
        method: String,
        params: Value,
    ) -> Result<Value, Failure> {
        let client = self.client(id)?;
        if call.len() > 64 {
            return Err((400, "callId is longer than 64 bytes".into()));
        }
        let slot = Slot::take(&self.in_flight, id, &self.limits)?;
        let log = self.log.clone();
        let progress_call = call.clone();
        let opts = RequestOptions::new().on_progress(move |p| {
            log.push(
                "progress",
                json!({ "server": id, "callId": progress_call, "progress": p.progress,
                        "total": p.total, "message": p.message }),
            );
        });
        let task = tokio::spawn(async move {
            // Held until the request ends, even when the page stopped waiting for it.
            let _slot = slot;
            client.send_request(&method, params, opts).await
        });
        if !call.is_empty() {
            lock(&self.calls).insert(call.clone(), task.abort_handle());
        }
        let joined = task.await;
        lock(&self.calls).remove(&call);
        Ok(match joined {
            Ok(Ok(result)) => json!({ "result": result }),
            Ok(Err(e)) => match e.as_protocol() {
                Some(obj) => json!({ "error": obj }),
                None => json!({ "error": { "message": e.to_string() } }),
            },
            Err(_) => json!({ "cancelled": true }),
        })
    }

    /// Cancels the call the page named `call` (the client sends `notifications/cancelled`).
    pub(crate) fn cancel(&self, call: &str) -> bool {
        match lock(&self.calls).remove(call) {
            Some(handle) => {
                handle.abort();
                true
            }
            None => false,
        }
    }

    /// Answers waiting request `id` with `answer` (a result, or an error object).
    pub(crate) fn answer(&self, id: u64, answer: Result<Value, ErrorObject>) -> bool {
        match lock(&self.pending).remove(&id) {
            Some(p) => p.answer.send(answer).is_ok(),
            None => false,
        }
    }

    /// Sets the roots and tells every connected server.
    pub(crate) async fn set_roots(&self, roots: Vec<Root>) {
        *lock(&self.roots) = roots.clone();
        self.log.push("roots", json!({ "roots": roots }));
        let clients: Vec<Client> = lock(&self.servers)
            .values()
            .map(|s| s.client.clone())
            .collect();
        for c in clients {
            let _ = c.notify_roots_list_changed().await;
        }
    }
}

/// Removes a waiting request when its handler ends (answered, timed out, or dropped because
/// the server cancelled it), and tells the page.
struct Waiting {
    state: Arc<State>,
    id: u64,
}

impl Drop for Waiting {
    fn drop(&mut self) {
        lock(&self.state.pending).remove(&self.id);
        self.state.log.push("settled", json!({ "id": self.id }));
    }
}

/// Puts a server→client request (`kind`: elicitation, sampling) before the user and waits
/// for the answer, within the limits.
async fn ask<T: serde::de::DeserializeOwned>(
    state: Weak<State>,
    server: u64,
    kind: &str,
    params: Value,
) -> Result<T, ErrorObject> {
    let Some(state) = state.upgrade() else {
        return Err(ErrorObject::internal_error("the inspector is closing"));
    };
    let (tx, rx) = oneshot::channel();
    let id = state.next_id.fetch_add(1, Ordering::Relaxed);
    {
        let mut pending = lock(&state.pending);
        let mine = pending.values().filter(|p| p.server == server).count();
        if pending.len() >= state.limits.max_pending || mine >= state.limits.max_pending_per_server
        {
            drop(pending);
            state.log.push(
                "refused",
                json!({ "server": server, "request": kind,
                        "message": "too many requests wait for the user (--max-pending)" }),
            );
            return Err(ErrorObject::new(
                ErrorCode::INTERNAL_ERROR,
                "the inspector has too many requests waiting for its user",
            ));
        }
        pending.insert(id, Pending { server, answer: tx });
    }
    state.log.push(
        "pending",
        json!({ "id": id, "server": server, "request": kind, "params": params }),
    );
    let guard = Waiting {
        state: state.clone(),
        id,
    };
    let outcome = tokio::time::timeout(state.limits.answer_timeout, rx).await;
    drop(guard);
    let value = match outcome {
        Ok(Ok(answer)) => answer?,
        Ok(Err(_)) => return Err(ErrorObject::internal_error("the inspector is closing")),
        Err(_) => {
            return Err(ErrorObject::new(
                ErrorCode::REQUEST_TIMEOUT,
                "the inspector's user did not answer in time",
            ));
        }
    };
    serde_json::from_value(value)
        .map_err(|e| ErrorObject::invalid_params(format!("the user's answer: {e}")))
}
