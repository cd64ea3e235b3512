//! Structured tool output: the result's `structuredContent` and the tool's `outputSchema` come
//! from a Rust type. `cargo run -p ferromcp --example structured_output`.

use ferromcp::McpServer;
use ferromcp::server::mcp_server::{Args, Json, ToolSpec};

/// A city to look up.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Query {
    /// The city's name.
    city: String,
}

/// The weather in a city.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct Weather {
    /// Degrees Celsius.
    temperature: f64,
    /// A short description.
    conditions: String,
}

async fn weather(Args(q): Args<Query>) -> Result<Json<Weather>, String> {
    if q.city.is_empty() {
        // A tool error (`isError: true`) the model can read and correct.
        return Err("the city must not be empty".into());
    }
    Ok(Json(Weather {
        temperature: 21.5,
        conditions: format!("sunny in {}", q.city),
    }))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = McpServer::builder("weather", "1.0.0")
        .tool(
            ToolSpec::new("weather").description("Current weather in a city."),
            weather,
        )
        .build()?;
    ferromcp::server::serve_stdio(server.server()).await?;
    Ok(())
}
