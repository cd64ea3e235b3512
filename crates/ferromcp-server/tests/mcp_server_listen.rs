//! `subscriptions/listen` (2026-07-28 "Subscriptions") and reading the server's own resources
//! from a handler, through the direct dispatcher.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferromcp_dispatch::{CallOptions, Dispatcher, Outbound, handler_fn};
use ferromcp_server::McpServer;
use ferromcp_server::mcp_server::{OwnResources, PromptSpec, ResourceSpec};
use ferromcp_types::Era;
use ferromcp_types::jsonrpc::{ErrorObject, Payload, RequestId};
use serde_json::{Value, json};

fn envelope() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

fn server() -> McpServer {
    McpServer::builder("listen", "1")
        .tool("t", || async { "t" })
        .prompt(PromptSpec::new("p").description("p"), || async {
            "p".to_string()
        })
        .resource(ResourceSpec::new("r://a", "a"), || async {
            "A".to_string()
        })
        .tool("read_a", |own: OwnResources| async move {
            let r = own.read("r://a").await.map_err(|e| e.message.to_string())?;
            let text = serde_json::to_value(&r.contents[0]).unwrap()["text"].clone();
            Ok::<_, String>(text.to_string())
        })
        .build()
        .unwrap()
}

#[tokio::test]
async fn listen_acknowledges_then_delivers_only_what_was_asked_tagged_with_its_id() {
    tokio::time::timeout(Duration::from_secs(10), async {
        let s = server();
        let caps = s
            .server()
            .capabilities(ferromcp_types::ProtocolVersion::V2026_07_28);
        assert_eq!(
            caps.tools.unwrap().list_changed,
            Some(true),
            "listen is served"
        );

        let peer = s.server().in_process(Era::Modern);
        let seen = Arc::new(Mutex::new(Vec::<(String, Value)>::new()));
        let notes = seen.clone();
        let handler =
            handler_fn(|_, m, _| async move { Err(ErrorObject::method_not_found(&m).into()) })
                .on_notify(move |_, method, params: Option<Payload>| {
                    let notes = notes.clone();
                    async move {
                        notes
                            .lock()
                            .unwrap()
                            .push((method, params.unwrap().into_value().unwrap()));
                    }
                })
                .into_arc();
        let runner = peer.clone();
        tokio::spawn(async move { runner.run(handler).await });

        let params = json!({"_meta": envelope(),
            "notifications": {"promptsListChanged": true, "resourceSubscriptions": ["r://a"]}});
        let listen_peer = peer.clone();
        let listen = tokio::spawn(async move {
            let options = CallOptions::new().request_id(RequestId::from("sub-1"));
            listen_peer
                .send_request(
                    "subscriptions/listen",
                    Some(Payload::from_value(params)),
                    options,
                )
                .await
        });
        // Wait for the acknowledgment, then cause changes of every kind.
        while seen.lock().unwrap().is_empty() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        s.add_tool("new_tool", || async { "x" }).unwrap();
        s.add_prompt(PromptSpec::new("new_prompt").description("x"), || async {
            "x".to_string()
        });
        s.notify_resource_updated("r://other");
        s.notify_resource_updated("r://a");
        while seen.lock().unwrap().len() < 3 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        let seen = seen.lock().unwrap().clone();
        let methods: Vec<_> = seen.iter().map(|(m, _)| m.as_str()).collect();
        assert_eq!(
            methods,
            [
                "notifications/subscriptions/acknowledged",
                "notifications/prompts/list_changed",
                "notifications/resources/updated"
            ],
            "no tools/list_changed (not asked), no update for r://other"
        );
        for (_, params) in &seen {
            assert_eq!(
                params["_meta"]["io.modelcontextprotocol/subscriptionId"],
                "sub-1"
            );
        }
        assert_eq!(
            seen[0].1["notifications"],
            json!({"promptsListChanged": true, "resourceSubscriptions": ["r://a"]})
        );
        assert_eq!(seen[2].1["uri"], "r://a");
        listen.abort();
    })
    .await
    .expect("timed out");
}

#[tokio::test]
async fn a_handler_reads_the_servers_own_resources() {
    tokio::time::timeout(Duration::from_secs(10), async {
        let client = server().server().in_process(Era::Modern);
        let params = json!({"name": "read_a", "arguments": {}, "_meta": envelope()});
        let r = client
            .send_request(
                "tools/call",
                Some(Payload::from_value(params)),
                CallOptions::new(),
            )
            .await;
        let r = r.unwrap().into_value().unwrap();
        assert_eq!(r["content"][0]["text"], "\"A\"", "{r}");
    })
    .await
    .expect("timed out");
}
