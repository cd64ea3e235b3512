//! Compose servers into one: two in-process servers (and, optionally, child processes over
//! stdio) mounted under names and served as one server over stdio:
//! `cargo run -p ferromcp --example compose --features compose`
//! (mount stdio servers too with `-- NAME=COMMAND…`, e.g.
//! `-- tools=target/debug/examples/minimal_tools`).
//!
//! The front lists `math_add` and `greeter_greet` (`{mount}_{tool}`), and the resource
//! `greeter+greeter://motd` (`{mount}+{uri}`). Tools, prompts, resources, completions,
//! progress, cancellation and list changes are forwarded; a backend's questions to the user
//! (here `greet`'s elicitation) reach the client that called, in whichever era the client and
//! each backend speak.

use ferromcp::McpServer;
use ferromcp::compose::{Backend, Composer};
use ferromcp::server::RequestContext;
use ferromcp::server::mcp_server::{Args, Elicitation, ResourceSpec};

/// Two numbers.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct AddArgs {
    /// The first number.
    a: f64,
    /// The second number.
    b: f64,
}

/// The form `greet` shows.
#[derive(Clone, serde::Deserialize, schemars::JsonSchema)]
struct Name {
    /// Your name.
    name: String,
}

async fn add(Args(args): Args<AddArgs>) -> String {
    (args.a + args.b).to_string()
}

/// Asks the user's name: through the front, the question reaches the front's client.
async fn greet(ctx: RequestContext) -> String {
    match ctx.elicit_form::<Name>("What is your name?").await {
        Ok(Elicitation::Accept(n)) => format!("Hello, {}!", n.name),
        _ => "Hello, stranger!".to_string(),
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let math = McpServer::builder("math", "1.0.0")
        .tool("add", add)
        .build()?;
    let greeter = McpServer::builder("greeter", "1.0.0")
        .tool("greet", greet)
        .resource(ResourceSpec::new("greeter://motd", "motd"), || async {
            "Be kind.".to_string()
        })
        .build()?;

    // In-process backends are served at 2026-07-28 (their questions then belong to the call
    // that asked, exactly, however many calls run at once).
    let mut builder = Composer::builder("hub", "1.0.0")
        .mount("math", Backend::in_process(&math))
        .mount("greeter", Backend::in_process(&greeter));
    // NAME=COMMAND [ARG…] mounts a child process over stdio (its era is negotiated).
    for spec in std::env::args().skip(1) {
        let Some((name, command)) = spec.split_once('=') else {
            return Err(format!("expected NAME=COMMAND, got {spec:?}").into());
        };
        let mut words = command.split_whitespace();
        let program = words.next().ok_or("an empty command")?;
        builder = builder.mount(name, Backend::command(program, words));
    }
    // Connects every backend, lists them, and fails on a name conflict.
    let composed = builder.build().await?;
    ferromcp::server::serve_stdio(composed.server().server()).await?;
    composed.shutdown().await;
    Ok(())
}
