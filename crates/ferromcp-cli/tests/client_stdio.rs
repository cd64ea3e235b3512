//! ferromcp's client against the real `ferromcp serve` stdio child, in every lifecycle mode.
//!
//! Spec: 2025-11-25 basic/lifecycle (initialize; "Shutdown › stdio": close stdin, wait),
//! basic/transports "stdio"; 2026-07-28 server/discover and stdio "Backward Compatibility"
//! (the auto probe), basic/utilities/progress.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ferromcp_client::{Client, Lifecycle, RequestOptions, StderrMode, StdioTransport};
use ferromcp_types::{Era, ProtocolVersion};
use serde_json::json;

const LIMIT: Duration = Duration::from_secs(30);

fn transport() -> StdioTransport {
    StdioTransport::new(env!("CARGO_BIN_EXE_ferromcp"))
        .arg("serve")
        .stderr(StderrMode::Null)
}

async fn exercise(mode: Lifecycle, era: Era) {
    let client = Client::builder()
        .lifecycle(mode)
        .connect(transport())
        .await
        .unwrap();
    assert_eq!(client.session().era, era, "{mode:?}");
    if era == Era::Modern {
        assert_eq!(
            client.session().protocol_version,
            ProtocolVersion::LATEST_MODERN
        );
    }
    assert_eq!(
        client.session().server_info.as_ref().unwrap().name,
        "ferromcp-demo"
    );
    client.ping().await.unwrap();
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "add"), "{tools:?}");
    let sum = client
        .call_tool("add", json!({"a": 1, "b": 2}))
        .await
        .unwrap();
    assert_eq!(sum.content[0].as_text(), Some("3"));
    let readme = client.read_resource("demo://readme").await.unwrap();
    assert_eq!(readme.contents.len(), 1);
    let prompt = client
        .get_prompt("greet", [("name".to_owned(), "Ada".to_owned())])
        .await
        .unwrap();
    assert!(!prompt.messages.is_empty());
    let seen: Arc<Mutex<Vec<f64>>> = Arc::default();
    let s = seen.clone();
    let opts = RequestOptions::new().on_progress(move |p| s.lock().unwrap().push(p.progress));
    let r = client
        .call_tool_with("countdown", json!({"seconds": 1}), opts)
        .await
        .unwrap();
    assert_eq!(r.content[0].as_text(), Some("liftoff"));
    assert!(!seen.lock().unwrap().is_empty(), "no progress reported");
    // The demo server exits when its stdin closes: shutdown ends at the first step.
    let started = Instant::now();
    client.shutdown().await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn auto_mode_picks_modern_on_ferromcp_serve() {
    tokio::time::timeout(LIMIT, exercise(Lifecycle::Auto, Era::Modern))
        .await
        .unwrap();
}

#[tokio::test]
async fn modern_mode_on_ferromcp_serve() {
    tokio::time::timeout(LIMIT, exercise(Lifecycle::Modern, Era::Modern))
        .await
        .unwrap();
}

#[tokio::test]
async fn handshake_mode_on_ferromcp_serve() {
    tokio::time::timeout(LIMIT, exercise(Lifecycle::Handshake, Era::Handshake))
        .await
        .unwrap();
}

/// The demo's `protocol_info` tool reports, as structured output with a declared
/// `outputSchema`, the revision the server served the call at — what peer clients in
/// `.ci/interop.sh` check to see the server's side of the negotiation.
async fn protocol_info(mode: Lifecycle, version: &str, era: &str) {
    let client = Client::builder()
        .lifecycle(mode)
        .connect(transport())
        .await
        .unwrap();
    let tools = client.list_all_tools().await.unwrap();
    let tool = tools.iter().find(|t| t.name == "protocol_info").unwrap();
    let schema = tool.output_schema.as_ref().unwrap();
    assert_eq!(schema.get("type"), Some(&json!("object")), "{schema:?}");
    let r = client.call_tool("protocol_info", json!({})).await.unwrap();
    let want = json!({"protocolVersion": version, "era": era});
    assert_eq!(r.structured_content, Some(want.clone()), "{r:?}");
    assert_ne!(r.is_error, Some(true), "{r:?}");
    client.shutdown().await;
}

#[tokio::test]
async fn protocol_info_reports_the_served_revision_in_each_era() {
    tokio::time::timeout(LIMIT, async {
        protocol_info(Lifecycle::Handshake, "2025-11-25", "handshake").await;
        protocol_info(Lifecycle::Modern, "2026-07-28", "modern").await;
    })
    .await
    .unwrap();
}
