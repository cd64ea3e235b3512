//! Prompts with typed arguments and content blocks (text and an image), with completions.
//! `cargo run -p ferromcp --example prompts`.

use ferromcp::McpServer;
use ferromcp::server::mcp_server::{Args, CompletionRequest, PromptSpec};
use ferromcp::types::mcp::{ContentBlock, PromptMessage, Role};

/// What to review.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Review {
    /// The programming language.
    language: String,
    /// The code.
    code: String,
}

async fn review(Args(r): Args<Review>) -> Vec<PromptMessage> {
    vec![
        PromptMessage::user_text(format!("Review this {} code:\n{}", r.language, r.code)),
        PromptMessage::new(Role::User, ContentBlock::image("iVBORw0KGgo=", "image/png")),
    ]
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = McpServer::builder("reviewer", "1.0.0")
        .prompt(
            PromptSpec::new("review").description("Asks for a code review."),
            review,
        )
        .prompt_completion("review", "language", |r: CompletionRequest| async move {
            ["rust", "python", "typescript"]
                .iter()
                .filter(|l| l.starts_with(&r.value))
                .map(|l| (*l).to_string())
                .collect()
        })
        .build()?;
    ferromcp::server::serve_stdio(server.server()).await?;
    Ok(())
}
