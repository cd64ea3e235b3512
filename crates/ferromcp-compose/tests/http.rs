//! Remote backends over HTTP (feature `http`): a ferromcp server over Streamable HTTP and
//! over the 2024-11-05 HTTP+SSE transport, mounted side by side.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{DEADLINE, ERAS, backend, front_client, text};
use ferromcp_compose::{Backend, Composer};
use ferromcp_http_server::{HttpConfig, HttpServer};
use serde_json::json;
use tokio::time::timeout;

/// Streamable HTTP and HTTP+SSE backends serve through the front in both eras, questions
/// included (the Streamable HTTP backend negotiates 2026-07-28, the HTTP+SSE one speaks the
/// handshake era and asks with live requests on its stream).
#[tokio::test]
async fn streamable_http_and_http_sse_backends_are_mounted() {
    timeout(DEADLINE, async {
        let server = backend::server("remote");
        let config = HttpConfig::default().legacy_sse(true);
        let http = HttpServer::bind("127.0.0.1:0", server.server().clone(), config)
            .await
            .unwrap();
        let addr = http.local_addr();
        tokio::spawn(http.run());
        let composed = Composer::builder("hub", "1")
            .mount("h", Backend::http(&format!("http://{addr}/mcp")).unwrap())
            .mount(
                "old",
                Backend::legacy_sse(&format!("http://{addr}/sse")).unwrap(),
            )
            .build()
            .await
            .expect("both HTTP backends mount");
        for era in ERAS {
            let client = front_client(composed.server(), era).await;
            for mount in ["h", "old"] {
                let r = client
                    .call_tool(&format!("{mount}_echo"), json!({"text": mount}))
                    .await
                    .unwrap();
                assert_eq!(text(&r), mount);
                let r = client
                    .call_tool(&format!("{mount}_ask"), json!({"label": mount}))
                    .await
                    .unwrap();
                assert_eq!(
                    text(&r),
                    format!("{mount}: A(question for {mount})"),
                    "{era:?}"
                );
            }
            let read = client.read_resource("old+mem://items/3").await.unwrap();
            assert_eq!(read.contents.len(), 1);
            client.shutdown().await;
        }
        composed.shutdown().await;
    })
    .await
    .expect("within the deadline");
}
