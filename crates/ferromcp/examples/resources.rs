//! Static resources and a resource template (RFC 6570), with completions for the template's
//! variable. `cargo run -p ferromcp --example resources`.

use ferromcp::McpServer;
use ferromcp::server::mcp_server::{Args, Blob, CompletionRequest, ResourceSpec};

/// The template's variables.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Book {
    id: String,
}

const BOOKS: [&str; 3] = ["dune", "emma", "ulysses"];

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = McpServer::builder("library", "1.0.0")
        .resource(
            ResourceSpec::new("library://readme", "readme").mime_type("text/markdown"),
            || async { "# The library\\nAsk for `library://books/{id}`.".to_string() },
        )
        .resource(ResourceSpec::new("library://logo", "logo"), || async {
            Blob::new(&[0x89, b'P', b'N', b'G'], "image/png")
        })
        .resource_template(
            ResourceSpec::new("library://books/{id}", "book").mime_type("application/json"),
            |Args(b): Args<Book>| async move {
                if BOOKS.contains(&b.id.as_str()) {
                    Ok(serde_json::json!({ "id": b.id }).to_string())
                } else {
                    Err(format!("no book {}", b.id))
                }
            },
        )
        .template_completion(
            "library://books/{id}",
            "id",
            |r: CompletionRequest| async move {
                BOOKS
                    .iter()
                    .filter(|b| b.starts_with(&r.value))
                    .map(|b| (*b).to_string())
                    .collect()
            },
        )
        .build()?;
    ferromcp::server::serve_stdio(server.server()).await?;
    Ok(())
}
