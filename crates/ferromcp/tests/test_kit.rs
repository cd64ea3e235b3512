//! The test kit (feature `test-util`): every capability of an `McpServer` through an
//! in-process client, at 2025-11-25 and at 2026-07-28.
#![cfg(feature = "test-util")]
#![allow(clippy::unwrap_used, clippy::panic)]

use std::time::Duration;

use ferromcp::server::mcp_server::{Args, Json, PromptSpec, ResourceSpec};
use ferromcp::testing::connect;
use ferromcp::{Era, McpServer};
use serde_json::json;

/// Two numbers.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct AddArgs {
    a: f64,
    b: f64,
}

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, PartialEq, Debug)]
struct Sum {
    total: f64,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Who {
    name: String,
}

fn server() -> McpServer {
    McpServer::builder("kit", "1.0.0")
        .tool("sum", |Args(a): Args<AddArgs>| async move {
            Json(Sum { total: a.a + a.b })
        })
        .resource(ResourceSpec::new("kit://greeting", "greeting"), || async {
            "hello".to_string()
        })
        .prompt(
            PromptSpec::new("hi").description("Says hi."),
            |Args(w): Args<Who>| async move { format!("Say hi to {}.", w.name) },
        )
        .build()
        .unwrap()
}

#[tokio::test]
async fn tools_resources_and_prompts_in_both_eras() {
    tokio::time::timeout(Duration::from_secs(10), async {
        for era in [Era::Handshake, Era::Modern] {
            let client = connect(&server(), era).await.unwrap();
            let tools = client.list_tools(None).await.unwrap();
            assert_eq!(tools.tools[0].name, "sum");
            let sum: Sum = client
                .call_tool_typed("sum", &json!({"a": 1, "b": 2}))
                .await
                .unwrap();
            assert_eq!(sum, Sum { total: 3.0 });
            let read = client.read_resource("kit://greeting").await.unwrap();
            assert_eq!(
                serde_json::to_value(&read.contents[0]).unwrap()["text"],
                "hello"
            );
            let prompt = client
                .get_prompt("hi", [("name".to_string(), "Ada".to_string())])
                .await
                .unwrap();
            assert_eq!(
                serde_json::to_value(&prompt.messages[0]).unwrap()["content"]["text"],
                "Say hi to Ada."
            );
            client.shutdown().await;
        }
    })
    .await
    .expect("timed out");
}
