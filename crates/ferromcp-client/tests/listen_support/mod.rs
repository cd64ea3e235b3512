//! Shared fixture of the `subscriptions/listen` tests: ferromcp's own McpServer (tools,
//! prompts, resources, cache hints) with a probe middleware that counts requests per method
//! and the listen handlers running on the server, and the ways of connecting a client to it
//! (in process, over a message stream).

#![allow(
    dead_code,
    reason = "each test binary uses a different part of the fixture"
)]
#![allow(clippy::unwrap_used, clippy::panic, unreachable_pub)]

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferromcp_client::{Client, Connected, Lifecycle, ServerNotification};
use ferromcp_dispatch::memory_pair;
use ferromcp_server::mcp_server::{PromptSpec, ResourceSpec};
use ferromcp_server::middleware::middleware_fn;
use ferromcp_server::{CacheHint, McpServer, Server, StreamConfig, serve_stream};
use ferromcp_types::Era;
use ferromcp_types::mcp::{CacheScope, methods};

/// How long any test may take before it counts as hung.
pub const LIMIT: Duration = Duration::from_secs(30);

/// Runs `f`, failing the test if it does not finish within [`LIMIT`].
pub async fn within<F: Future>(f: F) -> F::Output {
    match tokio::time::timeout(LIMIT, f).await {
        Ok(v) => v,
        Err(_) => panic!("timed out after {LIMIT:?}"),
    }
}

/// Waits (polling) until `cond` holds.
pub async fn until(mut cond: impl FnMut() -> bool) {
    while !cond() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// What the server saw: requests per method, and listen handlers started / still running.
#[derive(Clone, Default)]
pub struct Probe {
    calls: Arc<Mutex<HashMap<String, usize>>>,
    /// Listen handlers running now.
    pub active: Arc<AtomicUsize>,
    /// Listen handlers started so far.
    pub started: Arc<AtomicUsize>,
}

/// Decrements the active count when the listen handler's future ends or is dropped.
struct Active(Arc<AtomicUsize>);

impl Drop for Active {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Probe {
    /// Requests of `method` seen.
    pub fn calls(&self, method: &str) -> usize {
        self.calls.lock().unwrap().get(method).copied().unwrap_or(0)
    }

    /// Listen handlers running now.
    pub fn active(&self) -> usize {
        self.active.load(Ordering::SeqCst)
    }

    /// Listen handlers started so far.
    pub fn started(&self) -> usize {
        self.started.load(Ordering::SeqCst)
    }
}

/// An McpServer with tool `t`, prompt `p`, resources `r://a` and `r://b`; `tools/list` and
/// `resources/read` carry a one-minute public cache hint; the probe sees every request.
pub fn server(probe: &Probe) -> McpServer {
    let p = probe.clone();
    let layer = middleware_fn(move |req, next| {
        let p = p.clone();
        async move {
            *p.calls
                .lock()
                .unwrap()
                .entry(req.method.clone())
                .or_insert(0) += 1;
            if req.method == methods::SUBSCRIPTIONS_LISTEN {
                p.started.fetch_add(1, Ordering::SeqCst);
                p.active.fetch_add(1, Ordering::SeqCst);
                let _running = Active(p.active.clone());
                return next.run(req).await;
            }
            next.run(req).await
        }
    });
    McpServer::builder("listen-test", "1.0.0")
        .tool("t", || async { "t" })
        .prompt(PromptSpec::new("p").description("p"), || async {
            "p".to_string()
        })
        .resource(ResourceSpec::new("r://a", "a"), || async {
            "A".to_string()
        })
        .resource(ResourceSpec::new("r://b", "b"), || async {
            "B".to_string()
        })
        .cache_hint(
            methods::TOOLS_LIST,
            CacheHint::new(60_000, CacheScope::Public),
        )
        .cache_hint(
            methods::RESOURCES_READ,
            CacheHint::new(60_000, CacheScope::Public),
        )
        .middleware(layer)
        .build()
        .unwrap()
}

/// The notifications a client's handler saw.
#[derive(Clone, Default)]
pub struct Seen(pub Arc<Mutex<Vec<ServerNotification>>>);

impl Seen {
    /// A copy of what was seen.
    pub fn all(&self) -> Vec<ServerNotification> {
        self.0.lock().unwrap().clone()
    }
}

/// How the client reaches the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// `Server::in_process` (the direct dispatcher).
    InProcess,
    /// `serve_stream` over an in-memory message stream.
    Stream,
}

/// Connects a client in `era` to `server` via `via`, with a handler recording notifications.
pub async fn connect(server: &Server, era: Era, via: Via) -> (Client, Seen) {
    let seen = Seen::default();
    let log = seen.clone();
    let lifecycle = match era {
        Era::Modern => Lifecycle::Modern,
        _ => Lifecycle::Handshake,
    };
    let builder =
        Client::builder()
            .lifecycle(lifecycle)
            .on_notification(move |n: ServerNotification| {
                let log = log.clone();
                async move { log.0.lock().unwrap().push(n) }
            });
    let client = match via {
        Via::InProcess => {
            let dispatcher = server.in_process(era);
            builder
                .connect(Connected::new(Arc::new(dispatcher)))
                .await
                .unwrap()
        }
        Via::Stream => {
            let (client_end, server_end) = memory_pair(64);
            let server = server.clone();
            tokio::spawn(async move {
                let _ = serve_stream(
                    &server,
                    server_end.source,
                    server_end.sink,
                    StreamConfig::default(),
                )
                .await;
            });
            builder
                .connect_stream(client_end.source, client_end.sink)
                .await
                .unwrap()
        }
    };
    (client, seen)
}
