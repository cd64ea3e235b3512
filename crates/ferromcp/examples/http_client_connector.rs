//! A connector of one's own for the HTTP client (`HttpClientConfig::connector`): the client
//! reaches an MCP server over a Unix socket, or over TCP to a fixed address whatever the URL's
//! host says (curl's `--connect-to`), then lists the tools.
//!
//! `cargo run -p ferromcp --features client-http --example http_client_connector -- --unix /run/mcp.sock http://mcp.local/mcp`
//!
//! ```text
//! http_client_connector (--unix PATH | --connect-to HOST:PORT) URL
//! ```
//!
//! The URL still matters: its scheme decides TLS (for `https://` the client runs TLS over the
//! connector's stream, checking the URL's host), and its host goes into the `Host` header
//! (the server must allow it). The host is never resolved; proxy settings are ignored; the
//! connect timeout bounds the connector. The same `HttpClientConfig` given to
//! `OAuthConfig::with_http_client` sends the OAuth client's requests the same way.

// A command-line program: printing is its output.
#![allow(clippy::print_stdout)]

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use ferromcp::Client;
use ferromcp::client::HttpTransport;
use ferromcp::client::transport::http::{Connector, HttpClientConfig, HttpConfig, Target};
use tokio::io::{AsyncRead, AsyncWrite};

/// Where the connections go.
enum Route {
    /// A Unix socket.
    #[cfg(unix)]
    Unix(String),
    /// A TCP address.
    ConnectTo(String),
}

/// The connector: opens a connection along the route, and counts them.
struct Routed {
    route: Route,
    made: Arc<AtomicUsize>,
}

/// A stream of either kind (a connector returns one stream type).
trait Stream: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> Stream for T {}

impl Connector for Routed {
    type Stream = Box<dyn Stream>;

    async fn connect(&self, target: &Target) -> io::Result<Box<dyn Stream>> {
        // Runs once per connection, not per request: the client keeps connections alive.
        let n = self.made.fetch_add(1, Ordering::SeqCst) + 1;
        match &self.route {
            #[cfg(unix)]
            Route::Unix(path) => {
                println!("connection {n} to {target} over unix:{path}");
                Ok(Box::new(tokio::net::UnixStream::connect(path).await?))
            }
            Route::ConnectTo(addr) => {
                println!("connection {n} to {target} via {addr}");
                let tcp = tokio::net::TcpStream::connect(addr.as_str()).await?;
                tcp.set_nodelay(true)?;
                Ok(Box::new(tcp))
            }
        }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (route, url) = parse(std::env::args().skip(1).collect())?;
    let made = Arc::new(AtomicUsize::new(0));
    let connector = Routed {
        route,
        made: made.clone(),
    };
    let client_config = HttpClientConfig::default().connector(connector);
    let transport = HttpTransport::new(&url)?.config(HttpConfig::default().client(client_config));
    let client = Box::pin(Client::builder().connect(transport)).await?;
    println!("connected (protocol {})", client.session().protocol_version);
    for _ in 0..3 {
        let tools = client.list_tools(None).await?;
        let names: Vec<&str> = tools.tools.iter().map(|t| t.name.as_str()).collect();
        println!("tools: {}", names.join(", "));
    }
    client.shutdown().await;
    println!("connections made: {}", made.load(Ordering::SeqCst));
    Ok(())
}

/// The route and the URL of the command line.
fn parse(args: Vec<String>) -> Result<(Route, String), String> {
    let (mut route, mut url) = (None, None);
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            #[cfg(unix)]
            "--unix" => route = Some(Route::Unix(value()?)),
            "--connect-to" => route = Some(Route::ConnectTo(value()?)),
            _ if arg.starts_with("--") => return Err(format!("unknown option {arg}")),
            _ => url = Some(arg),
        }
    }
    let route = route.ok_or("give --unix PATH or --connect-to HOST:PORT")?;
    Ok((
        route,
        url.unwrap_or_else(|| "http://localhost/mcp".to_owned()),
    ))
}
