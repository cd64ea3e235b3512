//! `#[tool]` end to end: tools defined with the macro are listed with their name, doc-comment
//! description, title, annotations and derived schemas, and are callable, through the
//! in-process transport (2026-07-28).
#![allow(clippy::unwrap_used, clippy::panic)]

use std::time::Duration;

use ferromcp_dispatch::{CallOptions, DirectDispatcher, Dispatcher, Outbound, handler_fn};
use ferromcp_macros::tool;
use ferromcp_server::McpServer;
use ferromcp_server::mcp_server::{Args, Json, State, ToolError};
use ferromcp_types::Era;
use ferromcp_types::jsonrpc::{ErrorObject, Payload};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Two numbers.
#[derive(Deserialize, JsonSchema)]
pub struct AddArgs {
    /// The first number.
    a: f64,
    /// The second number.
    b: f64,
}

/// Adds two numbers.
///
/// Returns the sum as text.
#[tool]
async fn add(Args(args): Args<AddArgs>) -> String {
    (args.a + args.b).to_string()
}

/// A quotient.
#[derive(Serialize, JsonSchema)]
pub struct Quotient {
    value: f64,
}

/// Ignored: the `description` key wins over the doc comment.
#[tool(
    name = "divide",
    title = "Divide",
    description = "Divides a by b.",
    read_only,
    idempotent,
    destructive = false
)]
pub async fn div(Args(args): Args<AddArgs>) -> Result<Json<Quotient>, ToolError> {
    if args.b == 0.0 {
        return Err(ToolError::message("division by zero"));
    }
    Ok(Json(Quotient {
        value: args.a / args.b,
    }))
}

#[derive(Clone)]
struct Greeting(&'static str);

#[tool(open_world)]
async fn r#type(State(g): State<Greeting>) -> &'static str {
    g.0
}

/// Reports the server's own crate path through a re-export (`crate = "…"`).
#[tool(crate = "self::sdk")]
async fn via_reexport() -> &'static str {
    "ok"
}

/// A doc comment with a computed line.
#[doc = concat!("Built ", "by a macro.")]
#[tool]
async fn computed_doc() {}

/// Named like the macro's annotation helper, which must not shadow it.
/// Shows the counter app.
#[tool(app = "ui://macros/counter")]
async fn with_app() -> &'static str {
    "app"
}

#[tool(destructive)]
async fn annotations() -> &'static str {
    "not shadowed"
}

/// Compiled out, and its companion with it.
#[tool]
#[cfg(any())]
async fn compiled_out() {}

mod sdk {
    pub(crate) use ferromcp_server::mcp_server;
}

// The facade's layout, `::ferromcp::server::mcp_server`, played by this test crate itself.
extern crate self as ferromcp;
mod server {
    pub(crate) use ferromcp_server::mcp_server;
}

/// Through the facade.
#[ferromcp_macros::ferromcp_tool]
async fn via_facade() -> &'static str {
    "facade"
}

fn server() -> McpServer {
    McpServer::builder("macros", "1.0.0")
        .state(Greeting("hello"))
        .tool_def(add_tool())
        .tool_def(div_tool())
        .tool_def(type_tool())
        .tool_def(via_reexport_tool())
        .tool_def(computed_doc_tool())
        .tool_def(annotations_tool())
        .tool_def(via_facade_tool())
        .app(ferromcp_server::mcp_server::App::new(
            "ui://macros/counter",
            "Counter",
            "<!DOCTYPE html><html></html>",
        ))
        .tool_def(with_app_tool())
        .build()
        .unwrap()
}

async fn connect(server: &McpServer) -> DirectDispatcher {
    let peer = server.server().in_process(Era::Modern);
    let handler =
        handler_fn(
            |_, method, _| async move { Err(ErrorObject::method_not_found(&method).into()) },
        )
        .into_arc();
    let runner = peer.clone();
    tokio::spawn(async move { runner.run(handler).await });
    peer
}

async fn request(peer: &DirectDispatcher, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let sent = peer.send_request(
        method,
        Some(Payload::from_value(params)),
        CallOptions::new(),
    );
    let r = tokio::time::timeout(Duration::from_secs(10), sent)
        .await
        .expect("timed out")
        .unwrap();
    r.into_value().unwrap()
}

#[tokio::test]
async fn macro_tools_are_listed_with_their_metadata_and_schemas() {
    let peer = connect(&server()).await;
    let list = request(&peer, "tools/list", json!({})).await;
    let tools = list["tools"].as_array().unwrap();
    let names: Vec<_> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "add",
            "divide",
            "type",
            "via_reexport",
            "computed_doc",
            "annotations",
            "via_facade",
            "with_app"
        ]
    );
    assert_eq!(
        tools[7]["_meta"]["ui"]["resourceUri"], "ui://macros/counter",
        "#[tool(app = ...)] links the tool to its MCP App"
    );

    let add = &tools[0];
    assert_eq!(
        add["description"],
        "Adds two numbers.\n\nReturns the sum as text."
    );
    assert!(add.get("title").is_none());
    assert!(add.get("annotations").is_none());
    let schema = &add["inputSchema"];
    assert_eq!(schema["type"], "object");
    assert_eq!(
        schema["properties"]["a"]["description"],
        "The first number."
    );
    assert_eq!(schema["required"], json!(["a", "b"]));

    let divide = &tools[1];
    assert_eq!(divide["title"], "Divide");
    assert_eq!(divide["description"], "Divides a by b.");
    assert_eq!(
        divide["annotations"],
        json!({"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true})
    );
    assert!(divide["outputSchema"]["properties"]["value"].is_object());

    let ty = &tools[2];
    assert!(ty.get("description").is_none());
    assert_eq!(ty["annotations"], json!({"openWorldHint": true}));
    assert_eq!(ty["inputSchema"], json!({"type": "object"}));

    assert_eq!(
        tools[3]["description"],
        "Reports the server's own crate path through a re-export (`crate = \"…\"`)."
    );
    assert_eq!(
        tools[4]["description"],
        "A doc comment with a computed line.\nBuilt by a macro."
    );
    assert_eq!(tools[5]["annotations"], json!({"destructiveHint": true}));
}

#[tokio::test]
async fn macro_tools_are_callable() {
    let peer = connect(&server()).await;
    let call = |name: &str, args: Value| json!({"name": name, "arguments": args});

    let r = request(&peer, "tools/call", call("add", json!({"a": 1, "b": 2}))).await;
    assert_eq!(r["content"][0]["text"], "3");

    let r = request(&peer, "tools/call", call("divide", json!({"a": 3, "b": 2}))).await;
    assert_eq!(r["structuredContent"], json!({"value": 1.5}));
    let r = request(&peer, "tools/call", call("divide", json!({"a": 1, "b": 0}))).await;
    assert_eq!(r["isError"], true);
    assert_eq!(r["content"][0]["text"], "division by zero");

    let r = request(&peer, "tools/call", call("type", json!({}))).await;
    assert_eq!(r["content"][0]["text"], "hello");

    let r = request(&peer, "tools/call", call("annotations", json!({}))).await;
    assert_eq!(r["content"][0]["text"], "not shadowed");

    let r = request(&peer, "tools/call", call("via_facade", json!({}))).await;
    assert_eq!(r["content"][0]["text"], "facade");

    let r = request(&peer, "tools/call", call("via_reexport", json!({}))).await;
    assert_eq!(r["content"][0]["text"], "ok");
}

#[tokio::test]
async fn the_function_stays_callable_directly() {
    let sum = add(Args(AddArgs { a: 2.0, b: 3.0 })).await;
    assert_eq!(sum, "5");
    let Ok(Json(q)) = div(Args(AddArgs { a: 1.0, b: 4.0 })).await else {
        panic!("div failed");
    };
    assert_eq!(q.value, 0.25);
    assert_eq!(r#type(State(Greeting("hi"))).await, "hi");
}
