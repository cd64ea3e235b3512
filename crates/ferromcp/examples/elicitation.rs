//! Asking the user: a resolver elicits a form built from a Rust type. The same handler works
//! in both eras: before 2026-07-28 the question is a live `elicitation/create` request; at
//! 2026-07-28 the server answers `InputRequiredResult` and resumes when the client retries with
//! the answer. `cargo run -p ferromcp --example elicitation`.

use ferromcp::McpServer;
use ferromcp::server::mcp_server::{Ask, Elicitation, ResolveError, Resolved, Resolver};

/// How the user wants to be greeted.
#[derive(Clone, serde::Deserialize, schemars::JsonSchema)]
struct Preferences {
    /// Your name.
    name: String,
    /// Shout the greeting?
    #[serde(default)]
    loud: bool,
}

/// Resolves the user's preferences by asking them.
struct AskPreferences;

impl Resolver for AskPreferences {
    type Output = Option<Preferences>;

    async fn resolve(ask: &Ask) -> Result<Self::Output, ResolveError> {
        match ask
            .elicit_form::<Preferences>("prefs", "How should I greet you?")
            .await?
        {
            Elicitation::Accept(p) => Ok(Some(p)),
            _ => Ok(None),
        }
    }
}

async fn greet(Resolved(prefs): Resolved<AskPreferences>) -> String {
    match prefs {
        Some(p) if p.loud => format!("HELLO, {}!", p.name.to_uppercase()),
        Some(p) => format!("Hello, {}.", p.name),
        None => "Hello, stranger.".to_string(),
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = McpServer::builder("greeter", "1.0.0")
        .tool("greet", greet)
        .build()?;
    ferromcp::server::serve_stdio(server.server()).await?;
    Ok(())
}
