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

/// C64: the params the raw path writes for the backend (the backend's tool name, escaped as
/// JSON, and the front's arguments' text cut from its params, not read again) are one valid
/// JSON object for every way a front client may write its params: spaced, members in another
/// order, strings holding braces and quotes, an escaped name, no `arguments`.
#[tokio::test]
async fn c64_the_backend_params_cut_from_the_front_text_are_valid_json() {
    tokio::time::timeout(DEADLINE, async {
        let seen: Arc<Mutex<Vec<String>>> = Arc::default();
        let composed = Composer::builder("hub", "1")
            .mount("b", backend(seen.clone(), ECHOED))
            .build()
            .await
            .unwrap();
        let client = front_client(composed.server(), Era::Handshake).await;
        let cases = [
            (
                r#"{ "name" : "b_echo" , "arguments" : { "s" : "}\"{,]" , "n" : [ 1 , {"k":null} ] } }"#,
                Some(json!({"s": "}\"{,]", "n": [1, {"k": null}]})),
            ),
            (
                r#"{"arguments":{"x":"\u00e9\n"},"name":"b_echo"}"#,
                Some(json!({"x": "\u{e9}\n"})),
            ),
            (r#"{"name":"b\u005fecho","arguments":{}}"#, Some(json!({}))),
            (r#"{"name":"b_echo"}"#, None),
        ];
        for (front, arguments) in cases {
            let params = RawJson::from_string(front.into()).unwrap();
            let result = client
                .request_raw("tools/call", params, RequestOptions::new())
                .await
                .unwrap();
            assert!(result.get().contains("echoed"), "{front}");
            let sent = seen.lock().unwrap().pop().unwrap();
            // The backend's dispatcher read it (a `RawJson` it checked); read it again here.
            let sent: Value = serde_json::from_str(&sent).unwrap_or_else(|e| panic!("{e}: {sent}"));
            assert_eq!(sent["name"], "echo", "{front}");
            assert_eq!(sent.get("arguments").cloned(), arguments, "{front}");
        }
        composed.shutdown().await;
    })
    .await
    .unwrap();
}

/// C65: the backend's result is cut (its `resultType` taken out for a handshake-era front) only
/// when the walk that cuts it found it valid at the front's revision: a 2026-07-28 backend's
/// result that is not valid there (a text item without `text`) is refused with -32603 naming
/// what is wrong, not relayed as the backend wrote it.
#[tokio::test]
async fn c65_an_invalid_backend_result_is_refused_not_cut_and_relayed() {
    tokio::time::timeout(DEADLINE, async {
        let bad = r#"{"resultType":"complete","content":[{"type":"text"}]}"#;
        let composed = Composer::builder("hub", "1")
            .mount("b", backend(Arc::default(), bad))
            .build()
            .await
            .unwrap();
        let client = front_client(composed.server(), Era::Handshake).await;
        let params = RawJson::from_string(r#"{"name":"b_echo","arguments":{}}"#.into()).unwrap();
        let err = client
            .request_raw("tools/call", params, RequestOptions::new())
            .await
            .unwrap_err();
        assert_eq!(err.code().map(|c| c.0), Some(-32603), "{err:?}");
        composed.shutdown().await;
    })
    .await
    .unwrap();
}
