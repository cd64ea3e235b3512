//! A tool that asks the client for input — the user (elicitation), the client's model
//! (sampling) and the client's roots — written once and served in both protocol eras, over
//! stdio: `cargo run -p ferromcp --example multi_round`.
//!
//! The questions live in resolvers ([`Resolver`]), which the server runs before the tool:
//!
//! - **2025-11-25 and earlier**: each question is a live server→client request
//!   (`elicitation/create`, `sampling/createMessage`, `roots/list`) sent while the call is
//!   open; the answer comes back at once.
//! - **2026-07-28**: a server cannot send requests. The call answers `resultType:
//!   "input_required"` with `inputRequests` (the questions, by key) and a sealed
//!   `requestState`; the client retries the same call with `inputResponses` and the state, and
//!   the resolvers run again, now finding their answers. A question that needs another's
//!   answer ([`Ask::get`]) comes in a later round.
//!
//! Try it with `cargo run -p ferromcp --example client_stdio -- --call haiku '{}'
//! target/debug/examples/multi_round` (the client answers with canned handlers), in either era
//! (`--era handshake` or `--era modern`).

use ferromcp::McpServer;
use ferromcp::server::mcp_server::{Ask, Elicitation, ResolveError, Resolved, Resolver, ToolSpec};
use ferromcp::types::mcp::{CreateMessageRequestParams, SamplingContent, SamplingMessage};

/// The form shown to the user (a flat object of strings, numbers, booleans and enums).
#[derive(Clone, serde::Deserialize, schemars::JsonSchema)]
struct TopicForm {
    /// What should the haiku be about?
    topic: String,
}

/// Asks the user for a topic. `None` when they decline or cancel.
struct Topic;

impl Resolver for Topic {
    type Output = Option<String>;

    async fn resolve(ask: &Ask) -> Result<Self::Output, ResolveError> {
        // "topic" is the key the answer comes back under at 2026-07-28: unique per request.
        let answer = ask
            .elicit_form::<TopicForm>("topic", "What should the haiku be about?")
            .await?;
        Ok(match answer {
            Elicitation::Accept(form) => Some(form.topic),
            _ => None,
        })
    }
}

/// Asks the client's model for a haiku about the user's topic: it needs [`Topic`]'s answer
/// first, so at 2026-07-28 it is asked in the second round.
struct Poem;

impl Resolver for Poem {
    type Output = Option<String>;

    async fn resolve(ask: &Ask) -> Result<Self::Output, ResolveError> {
        let Some(topic) = ask.get::<Topic>().await? else {
            return Ok(None);
        };
        let prompt = SamplingMessage::user_text(format!("Write a haiku about {topic}."));
        let params = CreateMessageRequestParams::new(vec![prompt], 100)
            .with_system_prompt("You are a poet.".to_string());
        let sampled = ask.create_message("poem", params).await?;
        let text = sampled.content.blocks().iter().find_map(|b| match b {
            SamplingContent::Text(t) => Some(t.text.clone()),
            _ => None,
        });
        Ok(text)
    }
}

/// The client's roots (deprecated at 2026-07-28, still served as an input request).
struct Roots;

impl Resolver for Roots {
    type Output = Vec<String>;

    async fn resolve(ask: &Ask) -> Result<Self::Output, ResolveError> {
        let roots = ask.list_roots("roots").await?;
        Ok(roots.roots.into_iter().map(|r| r.uri).collect())
    }
}

/// The tool itself runs once every answer is in, in either era.
async fn haiku(Resolved(poem): Resolved<Poem>) -> String {
    match poem {
        Some(poem) => poem,
        None => "No topic, no haiku.".to_string(),
    }
}

async fn where_am_i(Resolved(roots): Resolved<Roots>) -> String {
    format!("Your roots: {}", roots.join(", "))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = McpServer::builder("haiku", "1.0.0")
        .tool(
            ToolSpec::new("haiku").description("Asks you for a topic, then writes a haiku."),
            haiku,
        )
        .tool(
            ToolSpec::new("where_am_i").description("Lists the client's roots."),
            where_am_i,
        )
        .build()?;
    ferromcp::server::serve_stdio(server.server()).await?;
    Ok(())
}
