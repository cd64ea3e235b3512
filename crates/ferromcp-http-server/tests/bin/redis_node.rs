//! A ferromcp node for tests/http_redis.rs: `ferromcp-redis-node ADDR REDIS_URL NAMESPACE`
//! serves the test server (tests/redis_node/server.rs) over Streamable HTTP with the Redis
//! stores (heartbeat 100 ms), and prints its bound address on the first line of stdout.
#![allow(clippy::unwrap_used, clippy::print_stdout)]

#[path = "../redis_node/server.rs"]
mod server;

use std::io::Write;
use std::time::Duration;

use ferromcp_http_server::redis::{RedisConfig, RedisStores};
use ferromcp_http_server::{HttpConfig, HttpServer};

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [addr, url, ns] = args.as_slice() else {
        eprintln!("usage: ferromcp-redis-node ADDR REDIS_URL NAMESPACE");
        std::process::exit(2);
    };
    let config = RedisConfig::new(url.as_str())
        .namespace(ns.as_str())
        .heartbeat(Duration::from_millis(100));
    let stores = RedisStores::connect(config).await.unwrap();
    let srv = HttpServer::bind(
        addr.as_str(),
        server::server(),
        stores.apply(HttpConfig::default()),
    )
    .await
    .unwrap();
    println!("{}", srv.local_addr());
    std::io::stdout().flush().unwrap();
    srv.run().await.unwrap();
}
