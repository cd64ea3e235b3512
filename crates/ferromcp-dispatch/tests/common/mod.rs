//! Shared harness for the dispatcher contract tests.
#![allow(dead_code, unreachable_pub)]

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use ferromcp_dispatch::*;
use ferromcp_jsonrpc::{Payload, RequestId};
use serde_json::{Value, json};
use tokio::sync::{Semaphore, watch};

/// Which dispatcher a case runs against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    JsonRpc,
    Direct,
}

/// Fails a hung test fast.
pub async fn timed(f: impl Future<Output = ()>) {
    tokio::time::timeout(Duration::from_secs(20), f)
        .await
        .expect("the test hung");
}

pub fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// How the server side is set up.
#[derive(Clone, Default)]
pub struct Setup {
    pub server_can_send_requests: Option<bool>,
    pub server_config: Option<DispatcherConfig>,
}

impl Setup {
    pub fn no_back_channel() -> Self {
        Self {
            server_can_send_requests: Some(false),
            ..Self::default()
        }
    }
}

/// A running client/server pair.
pub struct Conn {
    pub client: Arc<dyn Dispatcher>,
    pub server: Arc<dyn Dispatcher>,
}

impl Conn {
    pub fn new(kind: Kind, client: Arc<dyn Handler>, server: Arc<dyn Handler>) -> Self {
        Self::with(kind, client, server, Setup::default())
    }

    pub fn with(
        kind: Kind,
        client_handler: Arc<dyn Handler>,
        server_handler: Arc<dyn Handler>,
        setup: Setup,
    ) -> Self {
        let (client, server): (Arc<dyn Dispatcher>, Arc<dyn Dispatcher>) = match kind {
            Kind::JsonRpc => {
                let (a, b) = memory_pair(64);
                let mut server_config = setup.server_config.unwrap_or_default();
                if let Some(can) = setup.server_can_send_requests {
                    server_config =
                        server_config.transport(TransportInfo::new(TransportKind::InMemory, can));
                }
                (
                    Arc::new(JsonRpcDispatcher::new(
                        a.source,
                        a.sink,
                        DispatcherConfig::default(),
                    )),
                    Arc::new(JsonRpcDispatcher::new(b.source, b.sink, server_config)),
                )
            }
            Kind::Direct => {
                let info = TransportInfo::new(
                    TransportKind::Direct,
                    setup.server_can_send_requests.unwrap_or(true),
                );
                let (a, b) = DirectDispatcher::pair_with(info);
                (Arc::new(a), Arc::new(b))
            }
        };
        for (d, h) in [
            (client.clone(), client_handler),
            (server.clone(), server_handler),
        ] {
            tokio::spawn(async move { d.run(h).await });
        }
        Self { client, server }
    }
}

/// A handler answering `{"id", "method", "params"}`.
pub fn echo_handler() -> Arc<dyn Handler> {
    handler_fn(|ctx, method, params| async move {
        let id = ctx.request_id().map(id_json).unwrap_or(Value::Null);
        let params = match params {
            Some(p) => p.into_value().map_err(HandlerError::invalid_params)?,
            None => Value::Null,
        };
        Ok(json!({"id": id, "method": method, "params": params}).into())
    })
    .into_arc()
}

pub fn id_json(id: &RequestId) -> Value {
    serde_json::to_value(id).expect("ids serialize")
}

/// A field of an object payload.
pub fn field(p: &Payload, key: &str) -> Value {
    p.parse::<Value>().expect("a JSON payload")[key].clone()
}

pub fn field_payload(p: &Payload, key: &str) -> Payload {
    Payload::from(field(p, key))
}

/// Counts events; `wait(n)` waits for `n` more than the waits so far consumed.
#[derive(Clone)]
pub struct Counter {
    permits: Arc<Semaphore>,
    total: Arc<AtomicUsize>,
}

impl Counter {
    pub fn new() -> Self {
        Self {
            permits: Arc::new(Semaphore::new(0)),
            total: Arc::new(AtomicUsize::new(0)),
        }
    }

    pub fn add(&self) {
        self.total.fetch_add(1, Ordering::SeqCst);
        self.permits.add_permits(1);
    }

    pub async fn wait(&self, n: u32) {
        self.permits
            .acquire_many(n)
            .await
            .expect("the counter lives")
            .forget();
    }

    pub fn count(&self) -> usize {
        self.total.load(Ordering::SeqCst)
    }
}

/// A server that holds every request until the gate opens, then echoes.
pub struct Gate {
    open: watch::Sender<bool>,
    started: Counter,
}

impl Gate {
    pub fn new() -> (Self, Counter) {
        let started = Counter::new();
        (
            Self {
                open: watch::channel(false).0,
                started: started.clone(),
            },
            started,
        )
    }

    pub fn open(&self) {
        self.open.send_replace(true);
    }

    pub fn handler(&self) -> Arc<dyn Handler> {
        let open = self.open.clone();
        let started = self.started.clone();
        let echo = echo_handler();
        handler_fn(move |ctx, method, params| {
            let mut open = open.subscribe();
            let started = started.clone();
            let echo = echo.clone();
            async move {
                started.add();
                let _ = open.wait_for(|o| *o).await;
                echo.on_request(ctx, method, params).await
            }
        })
        .into_arc()
    }
}

/// A handler that never answers and counts when its future is dropped.
pub struct DropWatch {
    pub started: Counter,
    dropped: Counter,
}

struct OnDrop(Counter);

impl Drop for OnDrop {
    fn drop(&mut self) {
        self.0.add();
    }
}

impl DropWatch {
    pub fn new() -> (Self, Counter) {
        let dropped = Counter::new();
        (
            Self {
                started: Counter::new(),
                dropped: dropped.clone(),
            },
            dropped,
        )
    }

    pub fn handler(&self) -> Arc<dyn Handler> {
        let started = self.started.clone();
        let dropped = self.dropped.clone();
        handler_fn(move |_, _, _| {
            let started = started.clone();
            let guard = OnDrop(dropped.clone());
            async move {
                let _guard = guard;
                started.add();
                std::future::pending::<Result<Payload, HandlerError>>().await
            }
        })
        .into_arc()
    }
}

// The contract harness (`contract.rs`, `contract_ids.rs`): each case on both dispatchers.
/// Instantiates a contract case for both dispatchers, each under a hang-guarding timeout.
#[allow(unused_macros)]
macro_rules! contract {
    ($($case:ident),* $(,)?) => {$(
        mod $case {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn jsonrpc() {
                super::timed(super::$case(super::Kind::JsonRpc)).await
            }
            /// On a current-thread runtime the dispatcher first polls a request's handler
            /// on its read loop; the contract holds there too.
            #[tokio::test]
            async fn jsonrpc_current_thread() {
                super::timed(super::$case(super::Kind::JsonRpc)).await
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn direct() {
                super::timed(super::$case(super::Kind::Direct)).await
            }
        }
    )*};
}

/// Like `contract!`, for the cases that measure time: they run on a single-threaded runtime
/// whose clock is paused and advances only when every task waits, so a loaded machine cannot
/// make a 25 ms step look like a 120 ms silence.
#[allow(unused_macros)]
macro_rules! contract_paused {
    ($($case:ident),* $(,)?) => {$(
        mod $case {
            #[tokio::test(start_paused = true)]
            async fn jsonrpc() {
                super::timed(super::$case(super::Kind::JsonRpc)).await
            }
            #[tokio::test(start_paused = true)]
            async fn direct() {
                super::timed(super::$case(super::Kind::Direct)).await
            }
        }
    )*};
}
