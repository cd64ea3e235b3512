//! The 2026-07-28 envelope read from the params' text (issue 19): on the wire, a request whose
//! params arrive as text is answered exactly as the same request handed over as a value (the
//! `Value` reading of `_meta`): the same result, or the same error code, message and data.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use common::{Raw, init_params, serve_raw, within};
use ferromcp_server::{McpServer, RequestContext, Server};
use ferromcp_types::jsonrpc::{ErrorCode, Message, Payload, RawJson, Request};
use serde_json::{Value, json};

/// The request's whole `_meta`, as the handler's context gives it.
async fn meta_of(ctx: RequestContext) -> String {
    let meta = ctx.meta().map(|m| Value::Object(m.0.clone()));
    serde_json::to_string(&meta).unwrap()
}

fn server() -> Server {
    McpServer::builder("wire", "1")
        .tool("meta", meta_of)
        .build()
        .unwrap()
        .server()
        .clone()
}

/// The answer to `params` sent as text, and to the same params sent as a value.
async fn both(raw: &mut Raw, id: i64, method: &str, params: &str) -> (Value, Value) {
    let text = RawJson::from_string(params.to_owned()).unwrap();
    raw.send(Message::Request(Request::new(
        id,
        method,
        Some(Payload::Raw(text)),
    )))
    .await;
    let as_text = raw.answer(id).await;
    let value: Value = serde_json::from_str(params).unwrap();
    let as_value = raw.call(id + 1, method, Some(value)).await;
    let show = |r: Result<Value, ferromcp_types::jsonrpc::ErrorObject>| match r {
        Ok(v) => json!({ "result": v }),
        Err(e) => json!({ "error": e }),
    };
    (show(as_text), show(as_value))
}

const PV: &str = "\"io.modelcontextprotocol/protocolVersion\"";
const CC: &str = "\"io.modelcontextprotocol/clientCapabilities\"";

/// B66: envelopes valid and malformed (missing or invalid protocol version, unsupported
/// version, `_meta` missing or not an object, escapes in keys and values, duplicated keys,
/// paired surrogate escapes) get the same answers from the text as from a value: -32602 and
/// -32022 with the same messages and data, and the same `_meta` in the handler's context.
#[tokio::test]
async fn b66_envelope_errors_on_the_wire_are_unchanged() {
    within(async {
        let (mut raw, _task) = serve_raw(&server());
        let ok = format!("{PV}:\"2026-07-28\",{CC}:{{}}");
        let call = |meta: &str| format!("{{\"name\":\"meta\",\"arguments\":{{}},\"_meta\":{meta}}}");
        let cases = [
            call(&format!("{{{ok}}}")),
            call(&format!("{{{ok},\"progressToken\":\"p\",\"x\":{{\"y\":[1]}}}}")),
            call(&format!("{{{ok},\"io.modelcontextprotocol/clientInfo\":{{\"name\":\"\\uD83D\\uDE00\",\"version\":\"1\"}}}}")),
            call(&format!("{{\"io.modelcontextprotocol/protocol\\u0056ersion\":\"2026-07-28\",{CC}:{{}}}}")),
            call(&format!("{{{PV}:\"2026-07-\\u0032\\u0038\",{CC}:{{}}}}")),
            call(&format!("{{{PV}:\"2026-07-28\"}}")),
            call(&format!("{{{CC}:{{}}}}")),
            call(&format!("{{{PV}:2026,{CC}:{{}}}}")),
            call(&format!("{{{PV}:\"2025-11-25\",{CC}:{{}}}}")),
            call(&format!("{{{PV}:\"2099-01-01\",{CC}:\"x\"}}")),
            call("5"),
            call("null"),
            call("[]"),
            "{\"name\":\"meta\",\"arguments\":{}}".to_owned(),
            "{}".to_owned(),
        ];
        // The opening request sets the era: 2026-07-28.
        let first = call(&format!("{{{ok}}}"));
        let (t, _) = both(&mut raw, 1, "tools/call", &first).await;
        assert_eq!(t["result"]["resultType"], "complete", "{t}");
        let mut codes = Vec::new();
        for (i, params) in cases.iter().enumerate() {
            let id = 10 + 2 * i as i64;
            let (as_text, as_value) = both(&mut raw, id, "tools/call", params).await;
            assert_eq!(as_text, as_value, "{params}");
            codes.push(as_text["error"]["code"].as_i64());
        }
        let p = Some(i64::from(ErrorCode::INVALID_PARAMS.0));
        let v = Some(i64::from(ErrorCode::UNSUPPORTED_PROTOCOL_VERSION.0));
        assert_eq!(
            codes,
            [None, None, None, None, None, p, p, p, v, v, p, p, p, p, p]
        );
    })
    .await;
}

/// B66: on a handshake-era connection, a request carrying the 2026-07-28 envelope (its key
/// spelled with an escape or not) is -32600 from the text as from a value.
#[tokio::test]
async fn b66_a_modern_envelope_on_a_handshake_connection_is_unchanged() {
    within(async {
        let (mut raw, _task) = serve_raw(&server());
        raw.ok(1, "initialize", Some(init_params("2025-11-25")))
            .await;
        raw.notify("notifications/initialized", None).await;
        for (i, key) in [PV, "\"io.modelcontextprotocol/protocol\\u0056ersion\""]
            .iter()
            .enumerate()
        {
            let params = format!("{{\"_meta\":{{{key}:\"2026-07-28\"}}}}");
            let (as_text, as_value) =
                both(&mut raw, 10 + 2 * i as i64, "tools/list", &params).await;
            assert_eq!(as_text, as_value, "{params}");
            assert_eq!(
                as_text["error"]["code"].as_i64(),
                Some(i64::from(ErrorCode::INVALID_REQUEST.0))
            );
        }
        let (as_text, as_value) = both(
            &mut raw,
            20,
            "tools/list",
            "{\"_meta\":{\"progressToken\":1}}",
        )
        .await;
        assert_eq!(as_text, as_value);
        assert!(as_text["result"]["tools"].is_array(), "{as_text}");
    })
    .await;
}
