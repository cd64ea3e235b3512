//! Invalid params of many shapes (issue 17 point 5; B86): nested structs, enums (tagged and
//! not), sequences, numbers out of range, through a typed low-level handler, a typed
//! high-level tool and the protocol's own schema check, with params read from their text (a
//! byte stream) and as a value (in-process). The answer names what is wrong (the field, or
//! the schema validator's path and reason) and never carries serde's own text: no "invalid
//! type:", no "expected struct", no "at line 1 column", no Rust type names.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use common::{Raw, handshake_raw, init_params, within};
use ferromcp_dispatch::HandlerError;
use ferromcp_server::mcp_server::Args;
use ferromcp_server::{McpServer, RequestContext, Server};
use ferromcp_types::jsonrpc::{ErrorObject, Message, Payload, RawJson, Request};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code, reason = "only deserialized")]
struct OrderRequest {
    customer: CustomerRecord,
    items: Vec<LineItem>,
    shipping: ShippingChoice,
    discount: Option<PercentOff>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code, reason = "only deserialized")]
struct CustomerRecord {
    name: String,
    age: u8,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code, reason = "only deserialized")]
struct LineItem {
    sku: String,
    quantity: u32,
}

#[derive(Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase")]
#[allow(dead_code, reason = "only deserialized")]
enum ShippingChoice {
    Standard,
    Express { days: u8 },
}

#[derive(Deserialize, JsonSchema)]
#[serde(untagged)]
#[allow(dead_code, reason = "only deserialized")]
enum PercentOff {
    Whole(u8),
    Code { code: String },
}

/// What serde says, and the Rust types it names; none of it may reach the wire.
const SERDE_TEXT: &[&str] = &[
    "invalid type:",
    "invalid value:",
    "invalid length",
    "expected struct",
    "expected a ",
    "expected u8",
    "expected u32",
    "at line ",
    " column ",
    "did not match any variant",
    "unknown variant",
    "internally tagged",
    "OrderRequest",
    "CustomerRecord",
    "LineItem",
    "ShippingChoice",
    "PercentOff",
    "u8",
    "u32",
];

fn good() -> Value {
    json!({
        "customer": {"name": "Ada", "age": 36},
        "items": [{"sku": "a-1", "quantity": 2}],
        "shipping": {"kind": "express", "days": 2},
        "discount": {"code": "WELCOME"},
    })
}

/// `good()` with the member at `path` replaced (or removed, for `None`).
fn with(path: &[&str], value: Option<Value>) -> Value {
    let mut v = good();
    let (last, parents) = path.split_last().unwrap();
    let mut at = &mut v;
    for p in parents {
        at = match p.parse::<usize>() {
            Ok(i) => &mut at[i],
            Err(_) => &mut at[*p],
        };
    }
    let map = at.as_object_mut().unwrap();
    match value {
        Some(value) => map.insert((*last).to_owned(), value),
        None => map.remove(*last),
    };
    v
}

/// The bad shapes: (what is wrong, the params, a word the answer must contain).
fn cases() -> Vec<(&'static str, Value, &'static str)> {
    vec![
        (
            "nested missing field",
            with(&["customer", "name"], None),
            "name",
        ),
        (
            "nested out of range",
            with(&["customer", "age"], Some(json!(300))),
            "age",
        ),
        (
            "nested negative",
            with(&["customer", "age"], Some(json!(-1))),
            "age",
        ),
        (
            "nested wrong type",
            with(&["customer", "age"], Some(json!("old"))),
            "age",
        ),
        (
            "nested unknown field",
            with(&["customer", "email"], Some(json!("a@b"))),
            "email",
        ),
        (
            "struct given a string",
            with(&["customer"], Some(json!("Ada"))),
            "customer",
        ),
        (
            "struct given null",
            with(&["customer"], Some(json!(null))),
            "customer",
        ),
        (
            "sequence given an object",
            with(&["items"], Some(json!({"sku": "a"}))),
            "items",
        ),
        (
            "sequence entry wrong type",
            with(&["items"], Some(json!([1, 2]))),
            "items",
        ),
        (
            "sequence entry missing field",
            with(&["items"], Some(json!([{"sku": "a"}]))),
            "quantity",
        ),
        (
            "tagged enum, unknown tag",
            with(&["shipping", "kind"], Some(json!("teleport"))),
            "shipping",
        ),
        (
            "tagged enum, no tag",
            with(&["shipping", "kind"], None),
            "shipping",
        ),
        (
            "tagged enum, variant missing field",
            with(&["shipping", "days"], None),
            "shipping",
        ),
        (
            "untagged enum, no variant fits",
            with(&["discount"], Some(json!([true]))),
            "discount",
        ),
        ("root missing field", with(&["items"], None), "items"),
        (
            "root unknown field",
            with(&["coupon"], Some(json!(1))),
            "coupon",
        ),
    ]
}

/// How params reach the server: parsed (`Payload::Value`, as in-process callers send them) or
/// as the text received (`Payload::Raw`, as every byte transport hands them over).
#[derive(Debug, Clone, Copy)]
enum Via {
    Value,
    Text,
}

/// A raw client of `server` (a handshake `ServerRunner` on a `JsonRpcDispatcher`), initialized.
async fn client(server: &Server) -> (Raw, i64) {
    let (mut raw, _runner, _task) = handshake_raw(server);
    raw.ok(1, "initialize", Some(init_params("2025-11-25")))
        .await;
    raw.notify("notifications/initialized", None).await;
    (raw, 1)
}

/// Sends `params` as `via` says; the answer.
async fn ask(
    raw: &mut Raw,
    id: &mut i64,
    via: Via,
    method: &str,
    params: &Value,
) -> Result<Value, ErrorObject> {
    *id += 1;
    let params = match via {
        Via::Value => Payload::from_value(params.clone()),
        Via::Text => Payload::Raw(RawJson::from_string(params.to_string()).unwrap()),
    };
    raw.send(Message::Request(Request::new(*id, method, Some(params))))
        .await;
    raw.answer(*id).await
}

fn assert_clean(what: &str, via: Via, text: &str) {
    for serde in SERDE_TEXT {
        assert!(
            !text.contains(serde),
            "{what} ({via:?}): serde's text {serde:?} on the wire: {text}"
        );
    }
}

async fn order(_: RequestContext, _: OrderRequest) -> Result<Value, HandlerError> {
    Ok(json!({}))
}

async fn order_tool(Args(_): Args<OrderRequest>) -> String {
    "ordered".to_owned()
}

/// B86, a typed low-level handler: -32602 "Invalid params: ..." naming the field (as far as
/// serde names it), never serde's text, with params as text and as a value.
#[tokio::test]
async fn b86_typed_handler_params_of_every_shape_leak_no_serde_text() {
    within(async {
        let server = Server::builder("shapes", "1")
            .on_request("acme/order", order)
            .build()
            .unwrap();
        for via in [Via::Value, Via::Text] {
            let (mut c, mut id) = client(&server).await;
            ask(&mut c, &mut id, via, "acme/order", &good())
                .await
                .unwrap();
            let not_objects = [json!([1, 2]), json!("text"), json!(7)];
            let all = cases()
                .into_iter()
                .map(|(what, params, _)| (what, params))
                .chain(not_objects.map(|p| ("params not an object", p)));
            for (what, params) in all {
                let e = ask(&mut c, &mut id, via, "acme/order", &params)
                    .await
                    .unwrap_err();
                assert_eq!(e.code.0, -32602, "{what} ({via:?}): {e:?}");
                let text = serde_json::to_string(&e).unwrap();
                assert!(e.message.starts_with("Invalid params"), "{what}: {text}");
                assert_clean(what, via, &text);
            }
        }
    })
    .await;
}

/// B86, a typed high-level tool: arguments that do not fit are a tool error (`isError`) whose
/// text is the schema validator's path (`arguments/...`) and reason, never serde's text.
#[tokio::test]
async fn b86_typed_tool_arguments_of_every_shape_get_the_validators_path() {
    within(async {
        let server = McpServer::builder("shapes", "1")
            .tool("order", order_tool)
            .build()
            .unwrap();
        for via in [Via::Value, Via::Text] {
            let (mut c, mut id) = client(server.server()).await;
            let call = json!({"name": "order", "arguments": good()});
            let ok = ask(&mut c, &mut id, via, "tools/call", &call)
                .await
                .unwrap();
            assert_eq!(ok["content"][0]["text"], "ordered", "{ok}");
            for (what, args, names) in cases() {
                let call = json!({"name": "order", "arguments": args});
                let r = ask(&mut c, &mut id, via, "tools/call", &call)
                    .await
                    .unwrap();
                assert_eq!(r["isError"], json!(true), "{what} ({via:?}): {r}");
                let text = r["content"][0]["text"].as_str().unwrap_or_default();
                assert!(
                    text.starts_with("invalid arguments: arguments"),
                    "{what} ({via:?}): {text}"
                );
                assert!(text.contains(names), "{what} ({via:?}): {text}");
                assert_clean(what, via, text);
            }
        }
    })
    .await;
}

/// B86, the protocol's own params (the tables' check, before any handler): `tools/call` params
/// of the wrong shape are -32602, never serde's text, and the same answer whether the params
/// came as text or as a value.
#[tokio::test]
async fn b86_spec_params_of_every_shape_get_the_tables_path() {
    within(async {
        let server = McpServer::builder("shapes", "1")
            .tool("order", order_tool)
            .build()
            .unwrap();
        let cases = [
            json!({"name": 5}),
            json!({"arguments": {}}),
            json!({"name": "order", "arguments": [1]}),
            json!({"name": "order", "arguments": "text"}),
            json!({"name": "order", "_meta": 3}),
            json!({"name": "order", "_meta": {"progressToken": [1]}}),
            json!({"name": "order", "task": {"ttl": "long"}}),
        ];
        let (mut by_value, mut id_v) = client(server.server()).await;
        let (mut by_text, mut id_t) = client(server.server()).await;
        for params in &cases {
            let v = ask(&mut by_value, &mut id_v, Via::Value, "tools/call", params)
                .await
                .unwrap_err();
            let t = ask(&mut by_text, &mut id_t, Via::Text, "tools/call", params)
                .await
                .unwrap_err();
            assert_eq!(v.code.0, -32602, "{params}: {v:?}");
            assert_eq!(v, t, "{params}: text and value answer alike");
            assert_clean(
                "tools/call params",
                Via::Text,
                &serde_json::to_string(&t).unwrap(),
            );
        }
    })
    .await;
}

/// B96: a typed low-level handler's -32602 names the full path to what did not fit, through
/// nested structs and arrays (`items[1].quantity`, `customer.name`), never serde's text,
/// with params as text and as a value. Before, only the innermost field serde names.
#[tokio::test]
async fn b96_typed_handler_invalid_params_name_the_full_path() {
    within(async {
        let server = Server::builder("shapes", "1")
            .on_request("acme/order", order)
            .build()
            .unwrap();
        let two_items = |second: Value| {
            with(
                &["items"],
                Some(json!([{"sku": "a-1", "quantity": 1}, second])),
            )
        };
        let cases = [
            (
                with(&["customer", "name"], None),
                "Invalid params: missing field `customer.name`",
            ),
            (
                with(&["customer", "email"], Some(json!("a@b"))),
                "Invalid params: unknown field `customer.email`",
            ),
            (
                with(&["customer", "age"], Some(json!(300))),
                "Invalid params: `customer.age`: a value has the wrong type or is out of range",
            ),
            (
                two_items(json!({"sku": "b-2", "quantity": "two"})),
                "Invalid params: `items[1].quantity`: a value has the wrong type or is out of range",
            ),
            (
                two_items(json!({"quantity": 2})),
                "Invalid params: missing field `items[1].sku`",
            ),
            (
                two_items(json!(7)),
                "Invalid params: `items[1]`: a value has the wrong type or is out of range",
            ),
            // At the top level, as before.
            (
                with(&["items"], None),
                "Invalid params: missing field `items`",
            ),
            (
                with(&["coupon"], Some(json!(1))),
                "Invalid params: unknown field `coupon`",
            ),
        ];
        for via in [Via::Value, Via::Text] {
            let (mut c, mut id) = client(&server).await;
            for (params, expected) in &cases {
                let e = ask(&mut c, &mut id, via, "acme/order", params)
                    .await
                    .unwrap_err();
                assert_eq!(e.code.0, -32602, "{params} ({via:?}): {e:?}");
                assert_eq!(e.message, *expected, "{params} ({via:?})");
                let text = serde_json::to_string(&e).unwrap();
                assert_clean(expected, via, &text);
            }
        }
    })
    .await;
}
