//! Issue 23 point 5: a plain `tools/call` of a mounted tool is forwarded as text (the raw
//! path): the front's params, with the tool name un-prefixed, go to the backend member for
//! member, and the backend's result comes back (a 2025-11-25 front); calls the raw path does
//! not serve (a 2026-07-28 front) take the typed path and still work.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::{Arc, Mutex};

use common::{DEADLINE, ERAS, front_client};
use ferromcp_client::{Connected, RequestOptions};
use ferromcp_compose::{Backend, Composer};
use ferromcp_dispatch::{DirectDispatcher, Dispatcher, handler_fn};
use ferromcp_types::Era;
use ferromcp_types::jsonrpc::{ErrorObject, Payload, RawJson};
use serde_json::{Value, json};

/// The backend's usual answer.
const ECHOED: &str = r#"{"resultType":"complete","content":[{"type":"text","text":"echoed"}],"structuredContent":{"z":1,"a":[true]}}"#;

/// A 2026-07-28 backend written against the dispatcher: one tool `echo`; it keeps the params
/// text of each `tools/call` and answers with the result text `answer`.
fn backend(seen: Arc<Mutex<Vec<String>>>, answer: &'static str) -> Backend {
    Backend::transport(move || {
        let seen = seen.clone();
        let handler = handler_fn(move |_ctx, method, params: Option<Payload>| {
            let seen = seen.clone();
            async move {
                match method.as_str() {
                    "server/discover" => Ok(Payload::from(json!({
                        "resultType": "complete",
                        "supportedVersions": ["2026-07-28"],
                        "capabilities": {"tools": {}},
                    }))),
                    "tools/list" => Ok(Payload::from(json!({
                        "tools": [{"name": "echo", "inputSchema": {"type": "object"}}],
                    }))),
                    "tools/call" => {
                        let text = params.map(|p| p.to_json_string()).unwrap_or_default();
                        seen.lock().unwrap().push(text);
                        Ok(Payload::Raw(
                            RawJson::from_string(answer.to_owned()).unwrap(),
                        ))
                    }
                    _ => Err(ErrorObject::method_not_found(&method).into()),
                }
            }
        })
        .into_arc();
        let (client_end, server_end) = DirectDispatcher::pair();
        tokio::spawn(async move { server_end.run(handler).await });
        Connected::new(Arc::new(client_end))
    })
}

/// The front client's arguments text reaches the backend as written (its member order,
/// which reading them into a tree would sort), under the backend's own tool name, and the
/// backend's result reaches the front client, in both eras in front.
#[tokio::test]
async fn plain_tool_calls_are_forwarded_as_text() {
    tokio::time::timeout(DEADLINE, async {
        for era in ERAS {
            let seen: Arc<Mutex<Vec<String>>> = Arc::default();
            let composed = Composer::builder("hub", "1")
                .mount("b", backend(seen.clone(), ECHOED))
                .build()
                .await
                .unwrap();
            let client = front_client(composed.server(), era).await;
            let params = RawJson::from_string(
                r#"{"name":"b_echo","arguments":{"zeta":"z","alpha":[1,{"y":2,"x":1}]}}"#.into(),
            )
            .unwrap();
            let result = client
                .request_raw("tools/call", params, RequestOptions::new())
                .await
                .unwrap();
            let result: Value = serde_json::from_str(result.get()).unwrap();
            assert_eq!(result["content"][0]["text"], "echoed", "{era:?}");
            assert_eq!(result["structuredContent"], json!({"z": 1, "a": [true]}));
            let sent = seen.lock().unwrap().pop().unwrap();
            let arguments = match era {
                // The raw path: as the front client wrote them.
                Era::Handshake => r#""arguments":{"zeta":"z","alpha":[1,{"y":2,"x":1}]}"#,
                // A 2026-07-28 front takes the typed path (a backend's questions become the
                // front request's rounds): the arguments went through a tree.
                _ => r#""arguments":{"alpha":[1,{"x":1,"y":2}],"zeta":"z"}"#,
            };
            assert!(sent.contains(arguments), "{era:?}: {sent}");
            assert!(sent.contains(r#""name":"echo""#), "{era:?}: {sent}");
            // Typed, the same call takes the same way (its arguments are a tree by then).
            let typed = client.call_tool("b_echo", json!({"k": 1})).await.unwrap();
            assert_eq!(common::text(&typed), "echoed");
            let sent = seen.lock().unwrap().pop().unwrap();
            assert!(sent.contains(r#""arguments":{"k":1}"#), "{sent}");
            composed.shutdown().await;
        }
    })
    .await
    .unwrap();
}

/// B90: a 2026-07-28 backend's result reaches a handshake-era front client as the backend
/// wrote it (member order, number forms), minus the `resultType` the front's revision does
/// not define, wherever it is written: the kernel takes it out of the text instead of
/// reading the result into a tree, shaping it and writing it again.
#[tokio::test]
async fn b90_a_modern_backends_result_reaches_an_older_front_as_written() {
    tokio::time::timeout(DEADLINE, async {
        let body =
            r#""content":[{"type":"text","text":"echoed"}],"structuredContent":{"z":1,"n":1.50}"#;
        let meta = r#""_meta":{"io.modelcontextprotocol/serverInfo":{"name":"b","version":"1"}}"#;
        let first = format!(r#"{{"resultType":"complete",{body},{meta}}}"#);
        let middle = format!(r#"{{{body},"resultType":"complete",{meta}}}"#);
        let last = format!(r#"{{{body},{meta},"resultType":"complete"}}"#);
        for answer in [first, middle, last] {
            let answer: &'static str = Box::leak(answer.into_boxed_str());
            let composed = Composer::builder("hub", "1")
                .mount("b", backend(Arc::default(), answer))
                .build()
                .await
                .unwrap();
            let client = front_client(composed.server(), Era::Handshake).await;
            let params =
                RawJson::from_string(r#"{"name":"b_echo","arguments":{}}"#.into()).unwrap();
            let result = client
                .request_raw("tools/call", params, RequestOptions::new())
                .await
                .unwrap();
            assert_eq!(result.get(), format!("{{{body},{meta}}}"), "{answer}");
            composed.shutdown().await;
        }
    })
    .await
    .unwrap();
}
