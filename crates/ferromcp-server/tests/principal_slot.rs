//! S137: the principal travels in the request context's extensions (issue 17: the kernel's
//! typed slot, where the asker and the task scope travel), so a middleware layer can supply
//! one on any transport: here in process (both eras) and over a stream (`serve_stream`, as
//! stdio), and the `Principal` tool extractor reads it. Without one, a tool taking a
//! `Principal` answers "authentication required" and `Option<Principal>` reads `None`.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;
mod in_process_support;

use ferromcp_server::middleware::{McpRequest, Next, middleware_fn};
use ferromcp_server::{McpServer, Principal};
use ferromcp_types::Era;
use serde_json::{Value, json};

/// A server whose tools report the principal; with `supply`, a layer puts `alice` in every
/// `tools/call`'s extensions.
fn server(supply: bool) -> McpServer {
    let mut b = McpServer::builder("principal", "1")
        .tool("whoami", |p: Principal| async move { p.subject })
        .tool("maybe", |p: Option<Principal>| async move {
            p.map_or_else(|| "nobody".to_owned(), |p| p.subject)
        });
    if supply {
        b = b.middleware(middleware_fn(
            |mut req: McpRequest, next: Next| async move {
                if req.method == "tools/call" {
                    let alice = Principal::new("alice").scopes(["read"]);
                    req.ctx.extensions_mut().insert(alice);
                }
                next.run(req).await
            },
        ));
    }
    b.build().unwrap()
}

fn text(result: &Value) -> (&str, bool) {
    (
        result["content"][0]["text"].as_str().unwrap_or_default(),
        result["isError"].as_bool().unwrap_or(false),
    )
}

#[tokio::test]
async fn s137_a_layer_supplies_the_principal_in_process() {
    in_process_support::run(async {
        for era in [Era::Handshake, Era::Modern] {
            let c = in_process_support::Client::connect(&server(true), era).await;
            let r = c.call("whoami", json!({})).await.unwrap();
            assert_eq!(text(&r), ("alice", false), "{era:?}");
            let r = c.call("maybe", json!({})).await.unwrap();
            assert_eq!(text(&r), ("alice", false), "{era:?}");

            let c = in_process_support::Client::connect(&server(false), era).await;
            let r = c.call("whoami", json!({})).await.unwrap();
            assert_eq!(text(&r), ("authentication required", true), "{era:?}");
            let r = c.call("maybe", json!({})).await.unwrap();
            assert_eq!(text(&r), ("nobody", false), "{era:?}");
        }
    })
    .await;
}

#[tokio::test]
async fn s137_a_layer_supplies_the_principal_over_a_stream() {
    common::within(async {
        let server = server(true);
        let (mut raw, _serving) = common::serve_raw(server.server());
        raw.ok(1, "initialize", Some(common::init_params("2025-11-25")))
            .await;
        raw.notify("notifications/initialized", None).await;
        let call = json!({"name": "whoami", "arguments": {}});
        let r = raw.ok(2, "tools/call", Some(call)).await;
        assert_eq!(text(&r), ("alice", false));
    })
    .await;
}
