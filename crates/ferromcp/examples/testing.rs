//! Testing your own server with the test kit (feature `test-util`): a client connected to the
//! server in-process — no child process, no port — in each protocol era, so one test covers
//! both. `cargo run -p ferromcp --example testing --features test-util`
//!
//! This example is a program that runs its checks and prints `OK`; in your crate the same
//! code goes in a test (`tests/my_server.rs`), with ferromcp as a dev-dependency with the
//! `test-util` feature:
//!
//! ```text
//! #[tokio::test]
//! async fn adds_in_both_eras() {
//!     for era in [Era::Handshake, Era::Modern] {
//!         let client = ferromcp::testing::connect(&my_server(), era).await.unwrap();
//!         let sum = client.call_tool("add", json!({"a": 1, "b": 2})).await.unwrap();
//!         assert_eq!(sum.content[0].as_text(), Some("3"));
//!     }
//! }
//! ```

// A command-line program: printing is its output.
#![allow(clippy::print_stdout)]

use std::time::Duration;

use ferromcp::server::mcp_server::{
    Args, Ask, Elicitation, Json, ResolveError, Resolved, Resolver, ResourceSpec,
};
use ferromcp::testing::{connect, connect_with};
use ferromcp::types::mcp::{ElicitAction, ElicitResult, ElicitValue};
use ferromcp::{Client, Era, McpServer};
use serde_json::json;

// ---- The server under test -------------------------------------------------------------

/// Two numbers.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct AddArgs {
    /// The first number.
    a: f64,
    /// The second number.
    b: f64,
}

/// A sum, as structured output.
#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, PartialEq, Debug)]
struct Sum {
    /// a + b.
    total: f64,
}

/// The form the `greet` tool asks the user to fill in.
#[derive(Clone, serde::Deserialize, schemars::JsonSchema)]
struct Name {
    /// Your name.
    name: String,
}

/// Asks the user's name (a live request before 2026-07-28, an input round at 2026-07-28).
struct UserName;

impl Resolver for UserName {
    type Output = Option<String>;

    async fn resolve(ask: &Ask) -> Result<Self::Output, ResolveError> {
        match ask
            .elicit_form::<Name>("name", "What is your name?")
            .await?
        {
            Elicitation::Accept(n) => Ok(Some(n.name)),
            _ => Ok(None),
        }
    }
}

fn my_server() -> Result<McpServer, Box<dyn std::error::Error>> {
    let server = McpServer::builder("under-test", "1.0.0")
        .tool("add", |Args(a): Args<AddArgs>| async move {
            Json(Sum { total: a.a + a.b })
        })
        .tool("greet", |Resolved(name): Resolved<UserName>| async move {
            format!("Hello, {}!", name.as_deref().unwrap_or("stranger"))
        })
        .resource(ResourceSpec::new("app://motd", "motd"), || async {
            "Welcome.".to_string()
        })
        .build()?;
    Ok(server)
}

// ---- The checks -------------------------------------------------------------------------

/// Calls, structured output and resources, with a plain client.
async fn plain_calls(era: Era) -> Result<(), Box<dyn std::error::Error>> {
    let client = connect(&my_server()?, era).await?;
    assert_eq!(client.session().era, era);

    let tools = client.list_tools(None).await?;
    let names: Vec<&str> = tools.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["add", "greet"]);

    // Typed: the arguments serialize, the structured content deserializes.
    let sum: Sum = client
        .call_tool_typed("add", &json!({"a": 1, "b": 2}))
        .await?;
    assert_eq!(sum, Sum { total: 3.0 });

    // Bad arguments are a tool error the model can read (`isError: true`), not a failure.
    let bad = client.call_tool("add", json!({"a": "one"})).await?;
    assert_eq!(bad.is_error, Some(true));

    let motd = client.read_resource("app://motd").await?;
    assert_eq!(serde_json::to_value(&motd.contents[0])?["text"], "Welcome.");

    // Without an elicitation handler the client does not declare the capability, and the
    // server says so (-32021) instead of asking.
    assert!(client.call_tool("greet", json!({})).await.is_err());
    client.shutdown().await;
    Ok(())
}

/// A tool that asks the user: the client's handler plays the user.
async fn elicitation(era: Era, answer: Option<&str>) -> Result<(), Box<dyn std::error::Error>> {
    let reply = answer.map(str::to_string);
    let builder = Client::builder().on_elicitation(move |_params| {
        let reply = reply.clone();
        async move {
            Ok(match reply {
                Some(name) => {
                    ElicitResult::accept([("name".to_string(), ElicitValue::String(name))].into())
                }
                None => ElicitResult::new(ElicitAction::Decline),
            })
        }
    });
    let client = connect_with(&my_server()?, era, builder).await?;
    let result = client.call_tool("greet", json!({})).await?;
    let expected = format!("Hello, {}!", answer.unwrap_or("stranger"));
    assert_eq!(result.content[0].as_text(), Some(expected.as_str()));
    client.shutdown().await;
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Bound the whole run, as a test would.
    tokio::time::timeout(Duration::from_secs(30), async {
        for era in [Era::Handshake, Era::Modern] {
            plain_calls(era).await?;
            elicitation(era, Some("Ada")).await?;
            elicitation(era, None).await?;
            println!("{era:?} era: OK");
        }
        Ok::<_, Box<dyn std::error::Error>>(())
    })
    .await??;
    println!("OK");
    Ok(())
}
