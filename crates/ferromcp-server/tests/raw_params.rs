//! Issue 17 point 4, "middleware sees the raw message": params that came off the wire stay the
//! text received through the middleware stack, the schema check and into the handler's typed
//! deserialization, unless a layer looks at them (parsed once) or changes them (the change is
//! what the handler sees). Handlers here take `Box<RawValue>` and the requests are sent as
//! text with whitespace in it: a handler that gets that text, whitespace and all, shows that
//! nothing turned the params into a `Value` on the way (one written back from a value would be
//! compact).
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::{Arc, Mutex};

use common::{Transport, assert_code, connect, handshake_raw, init_params, serve_raw, within};
use ferromcp_dispatch::HandlerError;
use ferromcp_server::middleware::{McpRequest, Next, middleware_fn};
use ferromcp_server::{RequestContext, Server, ServerBuilder};
use ferromcp_types::ProtocolVersion;
use ferromcp_types::jsonrpc::{ErrorCode, Message, Notification, Payload, RawJson, Request};
use ferromcp_types::mcp::CallToolResult;
use ferromcp_types::tables;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

/// A raw client of `server` (0: a handshake `ServerRunner` on a `JsonRpcDispatcher`; 1:
/// `serve_stream`), initialized.
async fn raw_client(server: &Server, which: usize) -> common::Raw {
    let mut raw = if which == 0 {
        handshake_raw(server).0
    } else {
        serve_raw(server).0
    };
    let init = init_params("2025-11-25").to_string();
    call_text(&mut raw, 1, "initialize", &init).await.unwrap();
    raw.notify("notifications/initialized", None).await;
    raw
}

/// `tools/call` params read straight from the text: the arguments as written.
#[derive(Deserialize)]
struct RawCall {
    name: String,
    arguments: Box<RawValue>,
}

/// `acme/greet` params: typed, strict.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Greeting {
    name: String,
    count: u32,
}

type Log = Arc<Mutex<Vec<String>>>;

/// What the innermost layer sees of a request's params, recorded as text.
fn observer(log: Log) -> impl ferromcp_server::middleware::Middleware {
    middleware_fn(move |req: McpRequest, next: Next| {
        let log = log.clone();
        async move {
            if !req.is_notification() && req.method != "initialize" {
                let state = format!(
                    "{} raw={} parsed={}",
                    req.method,
                    req.raw_params().is_some(),
                    req.params.is_parsed()
                );
                log.lock().unwrap().push(state);
            }
            next.run(req).await
        }
    })
}

/// A server whose handlers take their params as text (`acme/value`: as a value), with the
/// layers `layers` adds.
fn server(layers: impl FnOnce(ServerBuilder) -> ServerBuilder) -> Server {
    layers(Server::builder("raw", "0"))
        .on_request(
            "acme/raw",
            |_ctx: RequestContext, p: Box<RawValue>| async move { Ok(json!({ "text": p.get() })) },
        )
        .on_request(
            "acme/greet",
            |_ctx: RequestContext, p: Greeting| async move {
                Ok(json!({ "text": p.name, "count": p.count }))
            },
        )
        .on_request("acme/value", |_ctx: RequestContext, p: Value| async move {
            Ok(json!({ "params": p }))
        })
        .on_request(
            "tools/call",
            |_ctx: RequestContext, p: RawCall| async move {
                Ok(CallToolResult::text(format!(
                    "{} {}",
                    p.name,
                    p.arguments.get()
                )))
            },
        )
        .build()
        .unwrap()
}

fn text_of(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

/// Issue 17 point 4: a layer that never touches the params leaves them raw; the spec check of
/// `tools/call` and the handler's typed deserialization read the text received.
#[tokio::test]
async fn untouched_params_reach_the_handler_as_the_text_received() {
    within(async {
        for which in [0, 1] {
            let log: Log = Arc::default();
            let passthrough = middleware_fn(|req: McpRequest, next: Next| next.run(req));
            let server = server(|b| b.middleware(passthrough).middleware(observer(log.clone())));
            let mut c = raw_client(&server, which).await;
            let r = call_text(&mut c, 2, "acme/raw", r#"{ "a" : [ 1, 2 ] }"#).await;
            assert_eq!(r.unwrap()["text"], r#"{ "a" : [ 1, 2 ] }"#, "{which}");
            let args = r#"{"name": "add", "arguments": { "a": 2, "b": 3 }}"#;
            let r = call_text(&mut c, 3, "tools/call", args).await.unwrap();
            assert_eq!(text_of(&r), r#"add { "a": 2, "b": 3 }"#, "{which}");
            assert_eq!(
                *log.lock().unwrap(),
                [
                    "acme/raw raw=true parsed=false",
                    "tools/call raw=true parsed=false"
                ],
                "{which}"
            );
        }
    })
    .await;
}

/// Issue 17 point 4: a layer that reads the params has them parsed once (every look shares the
/// value); the layers inside still see the text, and the handler reads it.
#[tokio::test]
async fn a_layer_that_reads_params_parses_them_once() {
    within(async {
        for which in [0, 1] {
            let log: Log = Arc::default();
            let reader = middleware_fn(|req: McpRequest, next: Next| async move {
                if req.method == "tools/call" {
                    let first = req.params_value().map(|v| v as *const Value);
                    let second = req.params.as_ref().map(|v| v as *const Value);
                    assert!(
                        first.is_some() && first == second,
                        "parsed once, then shared"
                    );
                    assert_eq!(req.params_value().unwrap()["name"], "add");
                }
                next.run(req).await
            });
            let server = server(|b| b.middleware(reader).middleware(observer(log.clone())));
            let mut c = raw_client(&server, which).await;
            let args = r#"{"name": "add", "arguments": { "a": 2 }}"#;
            let r = call_text(&mut c, 2, "tools/call", args).await.unwrap();
            assert_eq!(text_of(&r), r#"add { "a": 2 }"#, "{which}");
            assert_eq!(
                *log.lock().unwrap(),
                ["tools/call raw=true parsed=true"],
                "{which}"
            );
        }
    })
    .await;
}

/// Issue 17 point 4: a layer that changes the params, in place or by replacing them, is what
/// the layers inside, the schema check and the handler see, never the stale text; a change
/// that breaks the schema is -32602 as before.
#[tokio::test]
async fn a_layer_that_changes_params_is_what_the_handler_sees() {
    within(async {
        for t in Transport::ALL {
            let log: Log = Arc::default();
            let rewriter = middleware_fn(|mut req: McpRequest, next: Next| async move {
                let mode = req.params_as::<Value>().unwrap_or_default()["mode"].clone();
                if mode == "mutate" {
                    if let Some(p) = req.params.as_mut() {
                        p["added"] = json!(true);
                    }
                } else if mode == "replace" {
                    req.params.set(Some(json!({"replaced": 1})));
                } else if mode == "break" {
                    req.params = json!({"name": 5}).into();
                }
                next.run(req).await
            });
            let server = server(|b| b.middleware(rewriter).middleware(observer(log.clone())));
            let c = connect(t, &server).await;
            c.initialize().await;
            let mut r = c.ok("acme/value", Some(json!({"mode": "mutate"}))).await;
            // (The test client adds an empty `_meta` to what it sends.)
            r["params"].as_object_mut().unwrap().remove("_meta");
            assert_eq!(
                r["params"],
                json!({"mode": "mutate", "added": true}),
                "{t:?}"
            );
            let r = c.ok("acme/value", Some(json!({"mode": "replace"}))).await;
            assert_eq!(r["params"], json!({"replaced": 1}), "{t:?}");
            let e = c
                .fail("tools/call", Some(json!({"name": "x", "mode": "break"})))
                .await;
            assert_code(&e, ErrorCode::INVALID_PARAMS);
            assert!(e.message.contains("/name"), "{t:?}: {}", e.message);
            assert_eq!(
                log.lock().unwrap()[..],
                [
                    "acme/value raw=false parsed=true",
                    "acme/value raw=false parsed=true",
                    "tools/call raw=false parsed=true",
                ],
                "{t:?}"
            );
            c.shutdown().await;
        }
    })
    .await;
}

/// Sends `params` as the exact text given and returns the answer.
async fn call_text(
    raw: &mut common::Raw,
    id: i64,
    method: &str,
    params: &str,
) -> Result<Value, ferromcp_types::jsonrpc::ErrorObject> {
    let params = RawJson::from_string(params.to_owned()).unwrap();
    raw.send(Message::Request(Request::new(
        id,
        method,
        Some(Payload::Raw(params)),
    )))
    .await;
    raw.answer(id).await
}

/// B62: params checked on the text received answer as the check on a parsed value did: the
/// same -32602 with the validator's path and reason for invalid params (wrong types, missing
/// fields, bad content tags, out-of-range numbers), and escaped keys, whitespace and escaped
/// strings read as their values (an escaped `name` is `name`; a key with a NUL is not).
#[tokio::test]
async fn b62_params_checked_on_their_text_answer_as_a_parsed_value_did() {
    within(async {
        let server = server(|b| b);
        let mut raw = raw_client(&server, 0).await;
        let v = ProtocolVersion::V2025_11_25;
        let invalid = [
            ("tools/call", r#"{"name":5}"#),
            ("tools/call", r#"{"arguments":{}}"#),
            ("tools/call", r#"{"na\u0000me":"add"}"#),
            ("tools/call", r#"{"name":"add","arguments":[1]}"#),
            (
                "tools/call",
                r#"{"name":"add","_meta":{"progressToken":true}}"#,
            ),
            ("logging/setLevel", r#"{"level":"loud"}"#),
            (
                "completion/complete",
                r#"{"ref":{"type":"ref/bogus"},"argument":{"name":"a","value":"b"}}"#,
            ),
            (
                "completion/complete",
                r#"{"ref":{"type":"ref/prompt","name":7},"argument":{"name":"a","value":"b"}}"#,
            ),
            ("resources/read", r#"{"uri":["x"]}"#),
            ("prompts/get", r#"{ "name" : 1.5 }"#),
        ];
        for (i, (method, text)) in (10..).zip(invalid) {
            let value: Value = serde_json::from_str(text).unwrap();
            let m = tables::method(method).unwrap();
            let expected = match m.validate_params(v, Some(&value)) {
                Err(e) => e.to_string(),
                // Not a client request at this version: not checked by the tables.
                Ok(()) => continue,
            };
            let e = call_text(&mut raw, i, method, text).await.unwrap_err();
            if m.exists_as(tables::Kind::ClientRequest, v) {
                assert_code(&e, ErrorCode::INVALID_PARAMS);
                assert_eq!(e.message, expected, "{method} {text}");
            }
        }
        let valid = [
            r#"{"n\u0061me":"add","arguments":{}}"#,
            "{ \"name\" :\n \"a\\\"dd\" , \"arguments\" : { \"x\" : [ 1 , 2.5e0 ] } }",
            r#"{"name":"add","arguments":{},"_meta":{"progressToken":"t"}}"#,
        ];
        for (i, text) in (40..).zip(valid) {
            let r = call_text(&mut raw, i, "tools/call", text).await.unwrap();
            assert!(text_of(&r).starts_with("a"), "{text}: {r}");
        }
        // A typed handler's params that do not deserialize from the text: the field and a
        // generic reason, as from a value (no serde position, no Rust type names); a wrong
        // value names its path (B96).
        let cases = [
            (r#"{"count":1}"#, "Invalid params: missing field `name`"),
            (
                r#"{"name":"a","count":1,"extra":true}"#,
                "Invalid params: unknown field `extra`",
            ),
            (
                r#"{"name":"a","count":-1}"#,
                "Invalid params: `count`: a value has the wrong type or is out of range",
            ),
        ];
        for (i, (text, expected)) in (50..).zip(cases) {
            let e = call_text(&mut raw, i, "acme/greet", text)
                .await
                .unwrap_err();
            assert_code(&e, ErrorCode::INVALID_PARAMS);
            assert_eq!(e.message, expected, "{text}");
        }
        let r = call_text(&mut raw, 60, "acme/greet", r#"{"name":"a","count":2}"#).await;
        assert_eq!(r.unwrap(), json!({"text": "a", "count": 2}));
    })
    .await;
}

/// Issue 17 point 4: a layer that rewrites a result still gets it onto the wire.
#[tokio::test]
async fn a_layer_that_rewrites_the_result_reaches_the_wire() {
    within(async {
        for t in Transport::ALL {
            let rewriter = middleware_fn(|req: McpRequest, next: Next| async move {
                let mut result = next.run(req).await?;
                let object = result.as_object_mut().unwrap();
                object.insert("rewritten".into(), json!(true));
                Ok::<_, HandlerError>(result)
            });
            let server = server(|b| b.middleware(rewriter));
            let c = connect(t, &server).await;
            c.initialize().await;
            let r = c.ok("acme/raw", Some(json!({"a": 1}))).await;
            assert_eq!(r["rewritten"], true, "{t:?}");
            c.shutdown().await;
        }
    })
    .await;
}

/// Sends notification `method` with `params` as the text given.
async fn notify_text(raw: &common::Raw, method: &str, params: &str) {
    let params = RawJson::from_string(params.to_owned()).unwrap();
    raw.send(Message::Notification(Notification::new(
        method,
        Some(Payload::Raw(params)),
    )))
    .await;
}

/// What the innermost layer saw of each notification's params, and what the `acme/note`
/// handler (params as text) received.
struct NoteLog {
    layers: Log,
    notes: tokio::sync::mpsc::UnboundedReceiver<String>,
}

/// A server whose `acme/note` handler takes its params as text, with `layer` outermost and
/// a layer recording each notification's params state innermost.
fn note_server(layer: impl ferromcp_server::middleware::Middleware) -> (Server, NoteLog) {
    let log: Log = Arc::default();
    let seen = log.clone();
    let inner = middleware_fn(move |req: McpRequest, next: Next| {
        let seen = seen.clone();
        async move {
            if req.is_notification() && req.method == "acme/note" {
                let state = format!(
                    "raw={} parsed={}",
                    req.raw_params().is_some(),
                    req.params.is_parsed()
                );
                seen.lock().unwrap().push(state);
            }
            next.run(req).await
        }
    });
    let (tx, notes) = tokio::sync::mpsc::unbounded_channel();
    let server = Server::builder("notes", "0")
        .middleware(layer)
        .middleware(inner)
        .on_notification_method(
            "acme/note",
            move |_ctx: RequestContext, p: Box<RawValue>| {
                let _ = tx.send(p.get().to_owned());
                async { Ok(()) }
            },
        )
        .build()
        .unwrap();
    (server, NoteLog { layers: log, notes })
}

/// Issue 17 point 4 (B95): a notification's params stay the text received, as a request's do:
/// with no layer reading them, the handler gets that text byte for byte (key order, spacing
/// and the spelling `1.50` kept; a `Value` written back would be compact and read `1.5`).
#[tokio::test]
async fn b95_a_notification_nobody_reads_reaches_its_handler_as_the_text_received() {
    within(async {
        for which in [0, 1] {
            let passthrough = middleware_fn(|req: McpRequest, next: Next| next.run(req));
            let (server, mut log) = note_server(passthrough);
            let c = raw_client(&server, which).await;
            let text = r#"{ "z": 1.50, "a" : [ 1, 2 ], "_meta": {"k": "v"} }"#;
            notify_text(&c, "acme/note", text).await;
            assert_eq!(log.notes.recv().await.unwrap(), text, "{which}");
            assert_eq!(
                *log.layers.lock().unwrap(),
                ["raw=true parsed=false"],
                "{which}"
            );
        }
    })
    .await;
}

/// Issue 17 point 4 (B95): a layer that reads a notification's params sees them (parsed
/// once); a layer that changes them makes the change what the handler gets.
#[tokio::test]
async fn b95_a_layer_reads_or_changes_a_notifications_params() {
    within(async {
        for which in [0, 1] {
            let read: Log = Arc::default();
            let reads = read.clone();
            let reader = middleware_fn(move |req: McpRequest, next: Next| {
                let reads = reads.clone();
                async move {
                    if req.method == "acme/note" {
                        let z = req.params_value().map(|p| p["z"].to_string());
                        reads.lock().unwrap().push(z.unwrap_or_default());
                    }
                    next.run(req).await
                }
            });
            let (server, mut log) = note_server(reader);
            let c = raw_client(&server, which).await;
            let text = r#"{"z": 1.50}"#;
            notify_text(&c, "acme/note", text).await;
            // The layer saw the value; the handler still reads the text.
            assert_eq!(log.notes.recv().await.unwrap(), text, "{which}");
            assert_eq!(*read.lock().unwrap(), ["1.5"], "{which}");
            assert_eq!(
                *log.layers.lock().unwrap(),
                ["raw=true parsed=true"],
                "{which}"
            );

            let writer = middleware_fn(|mut req: McpRequest, next: Next| async move {
                if let Some(p) = req.params.as_mut() {
                    p["z"] = json!("changed");
                }
                next.run(req).await
            });
            let (server, mut log) = note_server(writer);
            let c = raw_client(&server, which).await;
            notify_text(&c, "acme/note", text).await;
            assert_eq!(
                log.notes.recv().await.unwrap(),
                r#"{"z":"changed"}"#,
                "{which}"
            );
            assert_eq!(
                *log.layers.lock().unwrap(),
                ["raw=false parsed=true"],
                "{which}"
            );
        }
    })
    .await;
}
