//! S146: a task belongs to the principal in the request's extensions (the kernel's slot,
//! S137), whoever put it there: here a middleware layer, in process, no HTTP. On ONE
//! connection (which would own every task without a principal) the principal a layer
//! supplies decides: another principal can neither `tasks/get`, `tasks/result` nor
//! `tasks/cancel` the task (-32602, as for an unknown task) and `tasks/list` shows each only
//! its own; the same principal reaches its task from another connection. Both eras tasks
//! exist in: the 2025-11-25 `tasks` capability and the 2026-07-28 tasks extension (where
//! `tasks/list` and `tasks/result` do not exist).
#![allow(clippy::unwrap_used, clippy::panic)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferromcp_dispatch::{CallOptions, DirectDispatcher, Dispatcher, Outbound, handler_fn};
use ferromcp_server::mcp_server::{Args, ToolSpec};
use ferromcp_server::middleware::{McpRequest, Next, middleware_fn};
use ferromcp_server::tasks::TaskSettings;
use ferromcp_server::{McpServer, Principal};
use ferromcp_types::Era;
use ferromcp_types::jsonrpc::{ErrorObject, Payload};
use ferromcp_types::mcp::TaskSupport;
use serde_json::{Value, json};

const LIMIT: Duration = Duration::from_secs(30);

async fn within<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(LIMIT, f).await.expect("timed out")
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Secs {
    /// Seconds to work.
    seconds: u64,
}

/// Who the layer says the next request comes from (`None`: no principal).
type Who = Arc<Mutex<Option<String>>>;

/// A server with a task-capable tool whose middleware supplies the principal `who` names
/// on every request.
fn server(who: Who) -> McpServer {
    McpServer::builder("tasks", "1")
        .tool(
            ToolSpec::new("work").task_support(TaskSupport::Optional),
            |Args(a): Args<Secs>| async move {
                tokio::time::sleep(Duration::from_secs(a.seconds)).await;
                format!("worked {}s", a.seconds)
            },
        )
        .tasks(TaskSettings::new())
        .middleware(middleware_fn(move |mut req: McpRequest, next: Next| {
            let current = who.lock().unwrap().clone();
            async move {
                if let Some(subject) = current {
                    req.ctx
                        .extensions_mut()
                        .insert(Principal::new(subject).issuer("https://issuer.example"));
                }
                next.run(req).await
            }
        }))
        .build()
        .unwrap()
}

struct Client {
    peer: DirectDispatcher,
    era: Era,
}

impl Client {
    async fn connect(server: &McpServer, era: Era) -> Self {
        let peer = server.server().in_process(era);
        let handler = handler_fn(|_, method: String, _| async move {
            Err(ErrorObject::method_not_found(&method).into())
        })
        .into_arc();
        let runner = peer.clone();
        tokio::spawn(async move { runner.run(handler).await });
        let c = Self { peer, era };
        if era == Era::Handshake {
            let init = json!({"protocolVersion": "2025-11-25",
                "capabilities": {"tasks": {}},
                "clientInfo": {"name": "t", "version": "1"}});
            c.request("initialize", init).await.unwrap();
            c.peer.notify("notifications/initialized", None).await;
        }
        c
    }

    async fn request(&self, method: &str, mut params: Value) -> Result<Value, ErrorObject> {
        if self.era == Era::Modern {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities":
                    {"extensions": {"io.modelcontextprotocol/tasks": {}}},
            });
        }
        let r = self
            .peer
            .send_request(
                method,
                Some(Payload::from_value(params)),
                CallOptions::new(),
            )
            .await?;
        Ok(r.into_value().unwrap())
    }

    /// Starts a long task; its id.
    async fn start(&self) -> String {
        let mut params = json!({"name": "work", "arguments": {"seconds": 1000}});
        if self.era == Era::Handshake {
            params["task"] = json!({});
        }
        let created = self.request("tools/call", params).await.unwrap();
        let task = if self.era == Era::Handshake {
            &created["task"]
        } else {
            &created
        };
        task["taskId"].as_str().unwrap().to_owned()
    }

    async fn listed(&self) -> Vec<String> {
        let listed = self.request("tasks/list", json!({})).await.unwrap();
        listed["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["taskId"].as_str().unwrap().to_owned())
            .collect()
    }
}

fn act_as(who: &Who, subject: &str) {
    *who.lock().unwrap() = Some(subject.to_owned());
}

#[tokio::test(start_paused = true)]
async fn s146_a_layers_principal_owns_its_tasks_in_process() {
    within(async {
        for era in [Era::Handshake, Era::Modern] {
            let who: Who = Arc::default();
            let s = server(who.clone());
            let c = Client::connect(&s, era).await;
            act_as(&who, "alice");
            let alices = c.start().await;
            act_as(&who, "bob");
            let bobs = c.start().await;

            // Bob, on the connection that created Alice's task, cannot reach it.
            let mut methods = vec!["tasks/get", "tasks/cancel"];
            if era == Era::Handshake {
                methods.push("tasks/result");
                assert_eq!(c.listed().await, std::slice::from_ref(&bobs), "{era:?}");
            }
            for method in methods {
                let e = c
                    .request(method, json!({"taskId": alices}))
                    .await
                    .unwrap_err();
                assert_eq!(e.code.0, -32602, "{era:?} {method}: {e:?}");
                assert!(e.message.starts_with("Unknown task"), "{era:?} {method}");
            }

            // Alice reaches hers, from this connection and from another one, and only hers.
            act_as(&who, "alice");
            let other = Client::connect(&s, era).await;
            for client in [&c, &other] {
                let got = client
                    .request("tasks/get", json!({"taskId": alices}))
                    .await
                    .unwrap();
                assert_eq!(got["status"], "working", "{era:?}: {got}");
                let e = client
                    .request("tasks/get", json!({"taskId": bobs}))
                    .await
                    .unwrap_err();
                assert_eq!(e.code.0, -32602, "{era:?}");
                if era == Era::Handshake {
                    assert_eq!(client.listed().await, std::slice::from_ref(&alices));
                }
            }
            let cancelled = other
                .request("tasks/cancel", json!({"taskId": alices}))
                .await;
            assert!(cancelled.is_ok(), "{era:?}: {cancelled:?}");
        }
    })
    .await;
}
