//! The demo server's MCP App over stdio, through ferromcp's own client in both eras (SV-A13):
//! the counter app is a self-contained page that speaks the app side of the postMessage
//! dialect, `counter` links to it, and `increment_counter` is for the app only.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::time::Duration;

use ferromcp_client::apps::{APP_MIME_TYPE, AppConfig, tool_app_uri, visible_to_model};
use ferromcp_client::{Client, Lifecycle, StdioTransport};
use serde_json::json;

/// SV-A13: `ferromcp serve` lists `counter` linked to `ui://ferromcp-demo/counter`; the app
/// reads back as `text/html;profile=mcp-app` with no external script or origin, and its
/// script does `ui/initialize`, shows the tool input/result notifications and calls
/// `increment_counter`, which the model does not see and which counts up.
#[tokio::test]
async fn sv_a13_demo_server_serves_a_counter_app() {
    let test = async {
        for mode in [Lifecycle::Handshake, Lifecycle::Modern] {
            let client = Client::builder()
                .lifecycle(mode)
                .apps(AppConfig::new())
                .connect(StdioTransport::new(env!("CARGO_BIN_EXE_ferromcp")).arg("serve"))
                .await
                .unwrap();
            let tools = client.list_all_tools().await.unwrap();
            let counter = tools.iter().find(|t| t.name == "counter").unwrap();
            let increment = tools
                .iter()
                .find(|t| t.name == "increment_counter")
                .unwrap();
            assert_eq!(tool_app_uri(counter), Some("ui://ferromcp-demo/counter"));
            assert!(visible_to_model(counter) && !visible_to_model(increment));

            let app = client.tool_app(counter).await.unwrap().unwrap();
            assert_eq!(app.mime_type, APP_MIME_TYPE);
            for needle in [
                "ui/initialize",
                "ui/notifications/initialized",
                "ui/notifications/tool-input",
                "ui/notifications/tool-result",
                "\"tools/call\"",
                "increment_counter",
            ] {
                assert!(app.html.contains(needle), "{needle} missing");
            }
            for banned in ["<script src", "http://", "https://"] {
                assert!(!app.html.contains(banned), "{banned} in the app");
            }

            let before = client.call_tool("counter", json!({})).await.unwrap();
            let before = before.structured_content.unwrap()["count"]
                .as_u64()
                .unwrap();
            let after = client
                .call_tool("increment_counter", json!({}))
                .await
                .unwrap();
            assert_eq!(
                after.structured_content.unwrap()["count"].as_u64(),
                Some(before + 1)
            );
            client.shutdown().await;
        }
    };
    tokio::time::timeout(Duration::from_secs(60), test)
        .await
        .expect("timed out");
}
