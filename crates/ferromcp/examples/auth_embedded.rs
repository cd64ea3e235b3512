//! A protected MCP server with its own OAuth 2.1 authorization server on the same listener
//! (feature `auth-server`):
//! `cargo run -p ferromcp --example auth_embedded --features auth-server -- 127.0.0.1:8080`.
//!
//! The address is the first argument (default `127.0.0.1:8080`; port 0 picks a free port).
//! The first line on stdout is the MCP endpoint's URL (the OAuth resource); the issuer is
//! `http://<address>`, serving `/.well-known/oauth-authorization-server`, `/authorize`,
//! `/token`, `/register`, `/revoke` and `/jwks`, and the MCP endpoint's RFC 9728 metadata is
//! at `/.well-known/oauth-protected-resource/mcp`. A request without a token is answered 401
//! with a `WWW-Authenticate` challenge naming that metadata, which is how a client finds the
//! authorization server. Try it with `ferromcp inspect http://127.0.0.1:8080/mcp --oauth`.
//!
//! The authorization server approves every authorization request at once (no login page,
//! `AutoApprove`): for development only, so it binds loopback addresses only. A real
//! deployment sets a `ConsentHook` that logs the user in.
//!
//! With `FERROMCP_EXAMPLE_CLIENT_SECRET` set, an operator client `example-job` (scope `mcp`)
//! may get tokens with the `client_credentials` grant, no browser involved:
//!
//! ```text
//! curl -d grant_type=client_credentials -d client_id=example-job \
//!      -d client_secret=$FERROMCP_EXAMPLE_CLIENT_SECRET -d scope=mcp \
//!      -d resource=http://127.0.0.1:8080/mcp http://127.0.0.1:8080/token
//! ```
#![allow(clippy::print_stdout)]

use std::io::Write;

use ferromcp::McpServer;
use ferromcp::server::Principal;
use ferromcp::server::auth_server::{AuthHttpServer, AuthServerConfig, ClientRecord};
use ferromcp::server::http::HttpConfig;
use ferromcp::server::mcp_server::ToolSpec;

/// Who the verified token says the caller is: the `Principal` extractor reads what the
/// token check recorded (a call without one fails with "authentication required").
async fn whoami(principal: Principal) -> String {
    let scopes: Vec<&str> = principal.scopes.iter().map(String::as_str).collect();
    format!("{} ({})", principal.subject, scopes.join(" "))
}

async fn reset() -> &'static str {
    "reset done"
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:8080".to_owned());
    let server = McpServer::builder("auth-example", "1.0.0")
        .tool(
            ToolSpec::new("whoami").description("The caller's subject and scopes."),
            whoami,
        )
        .tool(
            ToolSpec::new("reset").description("An admin operation (scope `admin`)."),
            reset,
        )
        .build()?;

    // The scopes the authorization server issues; a client that asks for none gets `mcp`.
    let mut auth = AuthServerConfig::default()
        .scopes_supported(["mcp", "admin"])
        .default_scopes(["mcp"]);
    if let Ok(secret) = std::env::var("FERROMCP_EXAMPLE_CLIENT_SECRET") {
        auth = auth.client(
            ClientRecord::confidential("example-job", &secret, vec![])
                .auth_method("client_secret_post")
                .grant_types(["client_credentials"])
                .scope(["mcp"]),
        );
    }
    // The issuer and the resource follow from the bound address; `customize` sets what the
    // MCP endpoint requires of a token: scope `mcp` for everything, and `admin` on top for
    // the tool `reset` (a token without it is answered 403 `insufficient_scope`).
    let http = AuthHttpServer::bind_with(
        addr.as_str(),
        server.server().clone(),
        HttpConfig::default(),
        auth,
        |rs| rs.required_scopes(["mcp"]).tool_scopes("reset", ["admin"]),
    )
    .await?;
    println!("{}", http.resource());
    std::io::stdout().flush()?;
    eprintln!(
        "authorization server: {} (approves every request: development only)",
        http.authorization_server().issuer()
    );
    http.run().await?;
    Ok(())
}
