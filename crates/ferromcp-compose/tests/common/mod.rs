//! What the composition tests share: the sample backend, and a client of the front.
#![allow(dead_code, unreachable_pub, clippy::expect_used, clippy::unwrap_used)]

pub mod backend;

use std::sync::Arc;
use std::time::Duration;

use ferromcp_client::{Client, Connected, Lifecycle};
use ferromcp_server::McpServer;
use ferromcp_types::Era;
use ferromcp_types::mcp::{ElicitRequestParams, ElicitResult, ElicitValue};

/// Every test's bound.
pub const DEADLINE: Duration = Duration::from_secs(20);

/// Both eras.
pub const ERAS: [Era; 2] = [Era::Handshake, Era::Modern];

/// A client of `front` in `era`, whose user answers a form with `A(<the question>)`.
pub async fn front_client(front: &McpServer, era: Era) -> Client {
    let lifecycle = match era {
        Era::Handshake => Lifecycle::Handshake,
        Era::Modern => Lifecycle::Modern,
    };
    Client::builder()
        .lifecycle(lifecycle)
        .on_elicitation(|p: ElicitRequestParams| async move {
            let message = match &p {
                ElicitRequestParams::Form(f) => f.message.clone(),
                ElicitRequestParams::Url(u) => u.message.clone(),
                _ => String::new(),
            };
            let mut content = std::collections::BTreeMap::new();
            content.insert(
                "answer".to_owned(),
                ElicitValue::from(format!("A({message})")),
            );
            Ok(ElicitResult::accept(content))
        })
        .connect(Connected::new(Arc::new(front.server().in_process(era))))
        .await
        .expect("the front client connects")
}

/// The first text block of a tool result.
pub fn text(result: &ferromcp_types::mcp::CallToolResult) -> String {
    result.content[0].as_text().unwrap_or_default().to_owned()
}
