//! The 2026-07-28 request path (issue 19): a first round whose handler has no resolvers sets
//! up no multi-round machinery unless the handler asks, with the same answers on the wire
//! ("Base Protocol › Patterns › Multi-round requests").
#![allow(clippy::unwrap_used, clippy::panic)]

mod elicitation_support;

use elicitation_support::*;
use ferromcp_server::RequestContext;
use ferromcp_server::mcp_server::Ask;
use ferromcp_types::Era;
use ferromcp_types::jsonrpc::ErrorCode;
use serde_json::{Value, json};

/// Says whether the round's asker was set up before the handler ran.
async fn plain(ctx: RequestContext) -> String {
    match ctx.extensions().get::<Ask>() {
        Some(_) => "asker set up".into(),
        None => "no asker".into(),
    }
}

async fn boom(ctx: RequestContext) -> String {
    if ctx.method() == "tools/call" {
        panic!("boom");
    }
    String::new()
}

fn fast_server() -> ferromcp_server::McpServer {
    server_with(|b| b.tool("plain", plain).tool("boom", boom))
}

/// The result without its text (what the two paths share).
fn without_text(mut r: Value) -> Value {
    r["content"][0]["text"] = Value::Null;
    r
}

/// B67: a 2026-07-28 tool that never asks runs without the multi-round machinery (no asker
/// is made before it runs), and answers as the full path does: a call whose
/// `inputResponses` holds an answer nobody asked for takes the full path and gets the same
/// result. Before 2026-07-28 nothing changes.
#[tokio::test]
async fn b67_a_tool_that_never_asks_takes_the_fast_path() {
    run(async {
        let c = Client::connect(&fast_server(), Era::Modern, all_caps(), never()).await;
        let fast = c.call("plain", json!({})).await.unwrap();
        assert_eq!(text(&fast), "no asker", "{fast}");
        assert_eq!(fast["resultType"], "complete");
        let unasked = json!({"unasked": {"action": "decline"}});
        let full = c
            .retry("plain", json!({}), unasked, &Value::Null)
            .await
            .unwrap();
        assert_eq!(text(&full), "asker set up", "{full}");
        assert_eq!(without_text(fast), without_text(full));

        let old = Client::connect(&fast_server(), Era::Handshake, all_caps(), never()).await;
        let r = old.call("plain", json!({})).await.unwrap();
        assert_eq!(text(&r), "no asker");
    })
    .await;
}

/// B67: a tool that asks through its context (no resolvers) still works round by round from
/// the fast path: its first question makes the round's asker, the state it seals opens on the
/// retry (bound to the arguments like any other), and the second question comes next.
#[tokio::test]
async fn b67_a_tool_that_asks_still_works_round_by_round() {
    run(async {
        let c = Client::connect(&fast_server(), Era::Modern, all_caps(), never()).await;
        let r1 = c.call("ask_twice", json!({})).await.unwrap();
        assert_eq!(r1["resultType"], "input_required", "{r1}");
        assert_eq!(
            r1["inputRequests"]["elicitation-1"]["method"],
            "elicitation/create"
        );
        let a1 = json!({"elicitation-1": {"action": "accept", "content": {"name": "Di"}}});
        // The state is bound to the arguments: other arguments do not open it.
        let e = c
            .retry(
                "ask_twice",
                json!({"x": 1}),
                a1.clone(),
                &r1["requestState"],
            )
            .await
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
        assert_eq!(e.message, "Invalid or expired requestState");
        let r2 = c
            .retry("ask_twice", json!({}), a1, &r1["requestState"])
            .await
            .unwrap();
        let q = &r2["inputRequests"]["sampling-2"];
        assert_eq!(q["params"]["messages"][0]["content"]["text"], "Greet Di");
        let a2 = json!({"sampling-2": user("sampling/createMessage", &Value::Null).unwrap()});
        let r3 = c
            .retry("ask_twice", json!({}), a2, &r2["requestState"])
            .await
            .unwrap();
        assert_eq!(text(&r3), "Di: Paris");
        assert!(c.asked().is_empty());
    })
    .await;
}

/// B67: a handler that panics on the fast path is -32603, and the server goes on serving.
#[tokio::test]
async fn b67_a_panic_on_the_fast_path_is_32603() {
    run(async {
        let c = Client::connect(&fast_server(), Era::Modern, all_caps(), never()).await;
        let e = c.call("boom", json!({})).await.unwrap_err();
        assert_eq!(e.code, ErrorCode::INTERNAL_ERROR, "{e:?}");
        let r = c.call("plain", json!({})).await.unwrap();
        assert_eq!(text(&r), "no asker");
    })
    .await;
}
