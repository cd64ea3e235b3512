//! An MCP server protected by an external authorization server (feature `auth`): it verifies
//! the issuer's JWT access tokens against its JWKS and requires scopes per tool.
//!
//! ```text
//! cargo run -p ferromcp --example auth_resource_server --features auth -- \
//!     127.0.0.1:8080 https://auth.example.com https://auth.example.com/.well-known/jwks.json
//! ```
//!
//! Arguments (or environment variables): the address (`MCP_ADDR`, default `127.0.0.1:8080`),
//! the issuer (`MCP_ISSUER`), the JWKS URL (`MCP_JWKS_URL`, default
//! `<issuer>/.well-known/jwks.json`) and the audience tokens must name (`MCP_AUDIENCE`,
//! default the resource, `MCP_RESOURCE`, itself by default `http://<address>/mcp`: the RFC
//! 8707 resource the client asked its token for). The JWKS must be `https` (or `http` to a
//! loopback host).
//!
//! The first line on stdout is the MCP endpoint's URL. Every request needs a bearer token
//! (401 with a `WWW-Authenticate` challenge naming the RFC 9728 metadata at
//! `/.well-known/oauth-protected-resource/mcp`, which names the issuer, otherwise); tokens
//! need the scope `notes:read`, and the tool `add_note` needs `notes:write` as well (403
//! `insufficient_scope` otherwise).
#![allow(clippy::print_stdout)]

use std::io::Write;
use std::sync::{Arc, Mutex};

use ferromcp::McpServer;
use ferromcp::server::Principal;
use ferromcp::server::http::auth::{AuthConfig, JwtVerifier};
use ferromcp::server::http::{HttpConfig, HttpServer};
use ferromcp::server::mcp_server::{Args, State, ToolSpec};

/// The notes, shared by every caller.
#[derive(Default)]
struct Notes(Mutex<Vec<String>>);

/// A note to add.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct NoteArgs {
    /// The note's text.
    text: String,
}

async fn list_notes(State(notes): State<Arc<Notes>>) -> String {
    notes.0.lock().map(|n| n.join("\n")).unwrap_or_default()
}

async fn add_note(
    principal: Principal,
    State(notes): State<Arc<Notes>>,
    Args(args): Args<NoteArgs>,
) -> String {
    let line = format!("{}: {}", principal.subject, args.text);
    if let Ok(mut n) = notes.0.lock() {
        n.push(line);
    }
    "added".to_owned()
}

/// The `n`th argument, else the environment variable `var`.
fn setting(n: usize, var: &str) -> Option<String> {
    std::env::args().nth(n).or_else(|| std::env::var(var).ok())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = setting(1, "MCP_ADDR").unwrap_or_else(|| "127.0.0.1:8080".to_owned());
    let issuer = setting(2, "MCP_ISSUER").ok_or("the issuer is required (2nd argument)")?;
    let jwks = setting(3, "MCP_JWKS_URL")
        .unwrap_or_else(|| format!("{}/.well-known/jwks.json", issuer.trim_end_matches('/')));

    let server = McpServer::builder("notes", "1.0.0")
        .state(Arc::new(Notes::default()))
        .tool(
            ToolSpec::new("list_notes").description("Every note."),
            list_notes,
        )
        .tool(
            ToolSpec::new("add_note").description("Adds a note (scope `notes:write`)."),
            add_note,
        )
        .build()?;

    // The endpoint's canonical URL (the RFC 8707 resource): what clients ask their tokens
    // for, and what the metadata names. Behind a proxy or TLS terminator it is the public
    // URL, not the bound address: set `MCP_RESOURCE`.
    let resource = std::env::var("MCP_RESOURCE").unwrap_or_else(|_| format!("http://{addr}/mcp"));
    let audience = setting(4, "MCP_AUDIENCE").unwrap_or_else(|| resource.clone());

    // The verifier checks signature (keys from the JWKS, cached and refreshed), `exp`/`nbf`,
    // `iss` and `aud`; the JWKS is fetched on the first token, not at start-up.
    let verifier = JwtVerifier::builder(issuer.as_str(), jwks, audience).build()?;
    let auth = AuthConfig::new(resource.as_str(), verifier)
        .authorization_server(issuer)
        .required_scopes(["notes:read"])
        .tool_scopes("add_note", ["notes:write"]);
    let config = HttpConfig::default().auth(auth);
    let http = HttpServer::bind(addr.as_str(), server.server().clone(), config).await?;
    println!("http://{}/mcp", http.local_addr());
    std::io::stdout().flush()?;
    http.run().await?;
    Ok(())
}
