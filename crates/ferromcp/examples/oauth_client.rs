//! An OAuth 2.1 client for a protected MCP server, with the browser flow of desktop and
//! command-line apps: the authorization URL is opened in a browser (and printed), and the
//! authorization server's redirect comes back to a port on the loopback interface.
//!
//! `cargo run -p ferromcp --example oauth_client --features oauth -- http://127.0.0.1:8080/mcp`
//!
//! A protected server to try it on: the CLI's demo behind the embedded authorization server,
//! which approves every request (`cargo run -p ferromcp-cli -- serve --http 127.0.0.1:8080
//! --auth`).
//!
//! ```text
//! oauth_client [--no-browser] [URL]
//! ```
//!
//! What happens: the first request gets a 401; the client discovers the protected-resource
//! metadata and the authorization server (RFC 9728, RFC 8414), registers itself dynamically
//! (RFC 7591) with the loopback redirect URI, sends the user to the authorization URL with
//! PKCE, receives the code on `http://127.0.0.1:PORT/callback`, exchanges it for a token, and
//! retries. Tokens are refreshed before they expire; a 403 `insufficient_scope` steps up.

// A command-line program: printing is its output.
#![allow(clippy::print_stdout)]

use std::sync::Arc;
use std::time::Duration;

use ferromcp::Client;
use ferromcp::client::HttpTransport;
use ferromcp::client::oauth::{LoopbackHandler, OAuthConfig, OAuthProvider};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let browser = !args.iter().any(|a| a == "--no-browser");
    args.retain(|a| a != "--no-browser");
    let url = args
        .pop()
        .unwrap_or_else(|| "http://127.0.0.1:8080/mcp".to_string());

    // The loopback listener (127.0.0.1, a port the system picks). `open` gets the
    // authorization URL once the flow has built it.
    let handler = LoopbackHandler::bind(move |auth_url: &str| {
        println!("Open this URL to sign in: {auth_url}");
        if browser {
            open_browser(auth_url);
        }
    })
    .await?
    // How long the user has to sign in.
    .with_timeout(Duration::from_secs(120));

    // The authorization-code flow with this redirect URI. Pre-registered credentials
    // (`with_credentials`) or a client ID metadata document URL (`with_client_metadata_url`)
    // are used before dynamic registration when given; `with_store` keeps tokens elsewhere
    // than in memory.
    let config = OAuthConfig::new(handler.redirect_uri(), handler)
        .with_client_name("ferromcp oauth_client example");
    let provider = Arc::new(OAuthProvider::new(&url, config)?);

    let transport = HttpTransport::new(&url)?.auth(provider.clone());
    let client = Client::builder().connect(transport).await?;

    if let Some(tokens) = provider.tokens() {
        println!(
            "authorized: a {} token, scope {}",
            tokens.token_type,
            tokens.scope.as_deref().unwrap_or("(none)")
        );
    }
    let tools = client.list_tools(None).await?;
    let names: Vec<&str> = tools.tools.iter().map(|t| t.name.as_str()).collect();
    println!("tools: {}", names.join(", "));
    client.shutdown().await;
    Ok(())
}

/// Best effort: the platform's "open this URL" command. The URL is printed anyway.
fn open_browser(url: &str) {
    let (program, first): (&str, &[&str]) = if cfg!(target_os = "macos") {
        ("open", &[])
    } else if cfg!(windows) {
        ("explorer", &[])
    } else {
        ("xdg-open", &[])
    };
    let spawned = std::process::Command::new(program)
        .args(first)
        .arg(url)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if spawned.is_err() {
        eprintln!("(could not start {program}: open the URL yourself)");
    }
}
