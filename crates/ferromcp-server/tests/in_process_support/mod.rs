//! A raw in-process client for the high-level server's tests: requests as JSON, the 2026-07-28
//! envelope added in the modern era, notifications recorded.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferromcp_dispatch::{CallOptions, DirectDispatcher, Dispatcher, Outbound, handler_fn};
use ferromcp_server::McpServer;
use ferromcp_types::Era;
use ferromcp_types::jsonrpc::{ErrorObject, Payload};
use serde_json::{Value, json};

/// The envelope of a 2026-07-28 request with no client capabilities.
pub fn envelope() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

pub struct Client {
    pub peer: DirectDispatcher,
    pub era: Era,
    pub notes: Arc<Mutex<Vec<(String, Value)>>>,
}

impl Client {
    /// Connects in `era`; in the handshake era `initialize` and `notifications/initialized`
    /// are sent first.
    pub async fn connect(server: &McpServer, era: Era) -> Self {
        let peer = server.server().in_process(era);
        let notes = Arc::new(Mutex::new(Vec::new()));
        let seen = notes.clone();
        let handler =
            handler_fn(
                |_, method, _| async move { Err(ErrorObject::method_not_found(&method).into()) },
            )
            .on_notify(move |_, method, params: Option<Payload>| {
                let seen = seen.clone();
                async move {
                    let params = params
                        .map(|p| p.into_value().unwrap())
                        .unwrap_or(Value::Null);
                    seen.lock().unwrap().push((method, params));
                }
            })
            .into_arc();
        let runner = peer.clone();
        tokio::spawn(async move { runner.run(handler).await });
        let client = Self { peer, era, notes };
        if era == Era::Handshake {
            let init = json!({"protocolVersion": "2025-11-25", "capabilities": {},
                              "clientInfo": {"name": "t", "version": "1"}});
            client.raw("initialize", init).await.unwrap();
            client.peer.notify("notifications/initialized", None).await;
        }
        client
    }

    /// Sends `params` as they are.
    pub async fn raw(&self, method: &str, params: Value) -> Result<Value, ErrorObject> {
        let params = Some(Payload::from_value(params));
        let r = self
            .peer
            .send_request(method, params, CallOptions::new())
            .await?;
        Ok(r.into_value().unwrap())
    }

    /// Sends `params`, with the envelope in the modern era.
    pub async fn request(&self, method: &str, mut params: Value) -> Result<Value, ErrorObject> {
        if self.era == Era::Modern {
            params["_meta"] = envelope();
        }
        self.raw(method, params).await
    }

    /// `tools/call`.
    pub async fn call(&self, name: &str, args: Value) -> Result<Value, ErrorObject> {
        self.request("tools/call", json!({"name": name, "arguments": args}))
            .await
    }
}

/// Runs a test under a 10 s limit, so a hang fails fast.
pub async fn run(test: impl std::future::Future<Output = ()>) {
    tokio::time::timeout(Duration::from_secs(10), test)
        .await
        .expect("timed out");
}
