//! Scale-out: two Streamable HTTP nodes sharing one Redis serve the same handshake-era
//! session, behind a load balancer without sticky sessions.
//!
//! `redis-server &` then `cargo run -p ferromcp --example redis_scale_out --features redis`
//! (`REDIS_URL` names another Redis; default `redis://127.0.0.1:6379`).
//!
//! In one process, for the demonstration: nodes A and B (in production: separate processes
//! or machines, each with the same [`RedisConfig::namespace`]), a round-robin TCP balancer in
//! front of them, and a client that opens a new connection per request — so its requests land
//! on A, B, A… The session lives on the node that answered `initialize` (its owner); Redis
//! holds the session record, and requests reaching the other node are forwarded to the owner
//! through Redis, their answers (and the owner's requests to the client, such as an
//! elicitation) streamed back through Redis too. Modern-era (2026-07-28) requests need none
//! of this: they carry no session and any node answers them.

// A command-line program: printing is its output.
#![allow(clippy::print_stdout)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use ferromcp::client::transport::http::HttpConfig as ClientHttpConfig;
use ferromcp::client::{HttpTransport, Lifecycle};
use ferromcp::server::http::redis::{RedisConfig, RedisStores};
use ferromcp::server::http::{HttpConfig, HttpServer};
use ferromcp::server::mcp_server::{Args, Ask, ResolveError, Resolved, Resolver};
use ferromcp::types::mcp::{ElicitResult, ElicitValue};
use ferromcp::{Client, McpServer};
use serde_json::json;
use tokio::net::{TcpListener, TcpStream};

/// Two numbers.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct AddArgs {
    /// The first number.
    a: f64,
    /// The second number.
    b: f64,
}

/// The form of the `greet` tool.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Name {
    /// Your name.
    name: String,
}

/// Asks the user's name: a request from the owner node to the client, in the middle of a call
/// that may have reached the other node.
struct AskName;

impl Resolver for AskName {
    type Output = Option<String>;

    async fn resolve(ask: &Ask) -> Result<Self::Output, ResolveError> {
        let answer = ask.elicit_form::<Name>("name", "Your name?").await?;
        Ok(answer.accepted().map(|n| n.name))
    }
}

/// The same server on every node.
fn server(node: &'static str) -> Result<McpServer, Box<dyn std::error::Error>> {
    let server = McpServer::builder("scaled", "1.0.0")
        .tool("add", move |Args(a): Args<AddArgs>| async move {
            format!(
                "{} (computed on node {node}, the session's owner)",
                a.a + a.b
            )
        })
        .tool("greet", |Resolved(name): Resolved<AskName>| async move {
            format!("Hello, {}!", name.unwrap_or_default())
        })
        .build()?;
    Ok(server)
}

/// One node: the MCP server over HTTP with its sessions and SSE events in Redis. `host` is
/// the address clients name in `Host` (the balancer's), which the node must accept.
async fn node(
    name: &'static str,
    redis_url: &str,
    host: &str,
) -> Result<std::net::SocketAddr, Box<dyn std::error::Error>> {
    let stores =
        RedisStores::connect(RedisConfig::new(redis_url).namespace("ferromcp-example")).await?;
    let config = stores.apply(HttpConfig::default().allowed_hosts([host]));
    let http = HttpServer::bind("127.0.0.1:0", server(name)?.server().clone(), config).await?;
    let addr = http.local_addr();
    tokio::spawn(http.run());
    println!("node {name} listening on {addr}");
    Ok(addr)
}

/// A round-robin TCP balancer: each new connection goes to the next node.
async fn balancer(listener: TcpListener, nodes: Vec<(&'static str, std::net::SocketAddr)>) {
    let next = Arc::new(AtomicUsize::new(0));
    while let Ok((mut inbound, _)) = listener.accept().await {
        let (name, addr) = nodes[next.fetch_add(1, Ordering::Relaxed) % nodes.len()];
        println!("  balancer: connection to node {name}");
        tokio::spawn(async move {
            if let Ok(mut outbound) = TcpStream::connect(addr).await {
                let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
            }
        });
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let redis_url =
        std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".to_string());

    let front = TcpListener::bind("127.0.0.1:0").await?;
    let host = front.local_addr()?.to_string();
    let a = node("A", &redis_url, &host).await?;
    let b = node("B", &redis_url, &host).await?;
    tokio::spawn(balancer(front, vec![("A", a), ("B", b)]));

    // A handshake-era client (the era with sessions), a new connection per request: an idle
    // pooled connection expires at once.
    let url = format!("http://{host}/mcp");
    println!("client: connecting to {url}");
    let transport = HttpTransport::new(&url)?.config(
        ClientHttpConfig::default()
            .pool_idle_timeout(Duration::ZERO)
            // No standalone GET stream: this demo has no server notifications.
            .standalone_stream(false),
    );
    let client = Client::builder()
        .lifecycle(Lifecycle::Handshake)
        .on_elicitation(|_params| async {
            println!("client: asked for a name, answering Ada");
            let content = [("name".to_string(), ElicitValue::String("Ada".into()))];
            Ok(ElicitResult::accept(content.into()))
        })
        .connect(transport)
        .await?;

    for i in 1..=3 {
        let result = client.call_tool("add", json!({"a": i, "b": 1})).await?;
        println!(
            "client: add -> {}",
            result.content[0].as_text().unwrap_or("")
        );
    }
    let result = client.call_tool("greet", json!({})).await?;
    println!(
        "client: greet -> {}",
        result.content[0].as_text().unwrap_or("")
    );
    client.shutdown().await;
    println!("OK");
    Ok(())
}
