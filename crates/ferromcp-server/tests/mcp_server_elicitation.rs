//! Elicitation, sampling and roots from the high-level server in the handshake era (MCP
//! 2025-11-25 "Client Features › Elicitation / Sampling / Roots"): forms from Rust types and
//! live server→client requests. The 2026-07-28 rounds are in `mcp_server_multiround.rs`.
#![allow(clippy::unwrap_used, clippy::panic)]

mod elicitation_support;

use std::sync::Arc;

use elicitation_support::*;
use ferromcp_server::mcp_server::{ElicitForm, check_form};
use ferromcp_types::Era;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

// ---------------------------------------------------------------------------------------------
// Forms

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Color {
    Red,
    Green,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
enum Size {
    #[schemars(title = "Small")]
    S,
    #[schemars(title = "Large")]
    L,
}

fn default_name() -> String {
    "John Doe".into()
}
fn thirty() -> u32 {
    30
}
fn score() -> f64 {
    95.5
}
fn yes() -> bool {
    true
}

/// Preferences.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Prefs {
    /// Your name.
    #[serde(default = "default_name")]
    name: String,
    #[serde(default = "thirty")]
    age: u32,
    #[serde(default = "score")]
    score: f64,
    #[serde(default = "yes")]
    verified: bool,
    color: Color,
    size: Size,
    colors: Vec<Color>,
    sizes: Vec<Size>,
    #[schemars(url)]
    homepage: Option<String>,
}

#[allow(dead_code)]
#[derive(Deserialize, JsonSchema)]
struct Inner {
    a: String,
}

#[allow(dead_code)]
#[derive(Deserialize, JsonSchema)]
struct Nested {
    inner: Inner,
}

#[allow(dead_code)]
#[derive(Deserialize, JsonSchema)]
struct ListOfObjects {
    items: Vec<Inner>,
}

/// Elicitation › Requested schema: a flat object of primitives, built from the Rust type.
#[test]
fn forms_from_rust_types() {
    let form = serde_json::to_value(SignUp::form().unwrap()).unwrap();
    assert_eq!(
        form,
        json!({"type": "object", "properties": {
            "username": {"type": "string", "description": "The user name.",
                         "minLength": 2, "maxLength": 20},
            "email": {"type": "string", "description": "Where to write.", "format": "email"},
        }, "required": ["username", "email"]})
    );

    let form = serde_json::to_value(Prefs::form().unwrap()).unwrap();
    let p = &form["properties"];
    assert_eq!(
        p["name"],
        json!({"type": "string", "description": "Your name.", "default": "John Doe"})
    );
    assert_eq!(p["age"]["type"], "integer");
    assert_eq!(p["age"]["default"], 30);
    assert_eq!(p["score"], json!({"type": "number", "default": 95.5}));
    assert_eq!(p["verified"], json!({"type": "boolean", "default": true}));
    assert_eq!(
        p["color"],
        json!({"type": "string", "enum": ["red", "green"]})
    );
    assert_eq!(
        p["size"],
        json!({"type": "string", "oneOf": [{"const": "S", "title": "Small"},
                                           {"const": "L", "title": "Large"}]})
    );
    assert_eq!(
        p["colors"],
        json!({"type": "array", "items": {"type": "string", "enum": ["red", "green"]}})
    );
    assert_eq!(
        p["sizes"],
        json!({"type": "array", "items": {"anyOf": [{"const": "S", "title": "Small"},
                                                    {"const": "L", "title": "Large"}]}})
    );
    assert_eq!(p["homepage"], json!({"type": "string", "format": "uri"}));
    assert_eq!(
        form["required"],
        json!(["color", "size", "colors", "sizes"])
    );

    let e = check_form::<Nested>().unwrap_err();
    assert_eq!(e.field, "inner");
    assert!(e.reason.contains("nested objects"), "{e}");
    let e = check_form::<ListOfObjects>().unwrap_err();
    assert_eq!(e.field, "items");
}

// ---------------------------------------------------------------------------------------------
// Handshake era: live requests

/// Elicitation (form mode): accept, decline, cancel, and an answer that does not fit.
#[tokio::test]
async fn handshake_form_elicitation_accept_decline_cancel() {
    run(async {
        let c = Client::connect(&server(), Era::Handshake, all_caps(), Arc::new(user)).await;
        let r = c.call("signup", json!({})).await.unwrap();
        assert_eq!(text(&r), "welcome alice <alice@example.com>");
        let asked = c.asked();
        assert_eq!(asked.len(), 1);
        assert_eq!(asked[0].0, "elicitation/create");
        assert_eq!(asked[0].1["message"], "Please sign up");
        assert_eq!(
            asked[0].1["requestedSchema"]["required"],
            json!(["username", "email"])
        );

        for (answer, expect) in [
            (json!({"action": "decline"}), "declined"),
            (json!({"action": "cancel"}), "cancelled"),
        ] {
            let a = answer.clone();
            let c = Client::connect(
                &server(),
                Era::Handshake,
                all_caps(),
                Arc::new(move |_, _| Ok(a.clone())),
            )
            .await;
            let r = c.call("signup", json!({})).await.unwrap();
            assert_eq!(text(&r), expect);
        }

        // Content that does not fit the form: an error for the handler, not a panic.
        let bad = json!({"action": "accept", "content": {"username": 7, "email": "a@b.c"}});
        let c = Client::connect(
            &server(),
            Era::Handshake,
            all_caps(),
            Arc::new(move |_, _| Ok(bad.clone())),
        )
        .await;
        let r = c.call("signup", json!({})).await.unwrap();
        assert_eq!(r["isError"], true);
        assert!(text(&r).contains("username"), "{r}");
    })
    .await;
}

/// Elicitation › Capabilities: no `elicitation` (or no `elicitation.url` for URL mode) →
/// -32021 with `requiredCapabilities`, and nothing is sent.
#[tokio::test]
async fn handshake_missing_capability_is_32021_without_sending() {
    run(async {
        let c = Client::connect(&server(), Era::Handshake, json!({}), Arc::new(user)).await;
        let r = c.call("signup", json!({})).await.unwrap();
        assert!(text(&r).starts_with("-32021"), "{r}");
        let r = c.call("sample_live", json!({})).await.unwrap();
        assert!(text(&r).starts_with("-32021"), "{r}");
        let r = c.call("roots_live", json!({})).await.unwrap();
        assert!(text(&r).starts_with("-32021"), "{r}");
        // A resolver's missing capability is a protocol error with the data.
        let e = c.call("hello", json!({})).await.unwrap_err();
        assert_eq!(code(&e), -32021);
        assert_eq!(
            e.data.unwrap(),
            json!({"requiredCapabilities": {"elicitation": {}}})
        );
        assert!(c.asked().is_empty());

        let form_only = json!({"elicitation": {}});
        let c = Client::connect(&server(), Era::Handshake, form_only, Arc::new(user)).await;
        let r = c.call("open_url", json!({})).await.unwrap();
        assert!(text(&r).starts_with("-32021"), "{r}");
        assert!(c.asked().is_empty());
    })
    .await;
}

/// Elicitation › URL mode (2025-11-25): `mode: url`, the url and the elicitation id.
#[tokio::test]
async fn handshake_url_elicitation() {
    run(async {
        let c = Client::connect(&server(), Era::Handshake, all_caps(), Arc::new(user)).await;
        let r = c.call("open_url", json!({})).await.unwrap();
        assert_eq!(text(&r), "Accept");
        let asked = c.asked();
        assert_eq!(
            asked[0].1,
            json!({"mode": "url", "message": "Log in", "url": "https://example.com/login",
                   "elicitationId": "el-1"})
        );
    })
    .await;
}

/// Sampling and Roots: live requests with the client's answers.
#[tokio::test]
async fn handshake_sampling_and_roots() {
    run(async {
        let c = Client::connect(&server(), Era::Handshake, all_caps(), Arc::new(user)).await;
        let r = c.call("sample_live", json!({})).await.unwrap();
        assert_eq!(text(&r), "Paris");
        let r = c.call("roots_live", json!({})).await.unwrap();
        assert_eq!(text(&r), "file:///test/root");
        let methods: Vec<_> = c.asked().into_iter().map(|(m, _)| m).collect();
        assert_eq!(methods, ["sampling/createMessage", "roots/list"]);
    })
    .await;
}

/// Resolvers in the handshake era: live requests, concurrently; dependencies in order.
#[tokio::test]
async fn handshake_resolvers_ask_live() {
    run(async {
        let c = Client::connect(&server(), Era::Handshake, all_caps(), Arc::new(user)).await;
        let r = c.call("everything", json!({})).await.unwrap();
        assert_eq!(text(&r), "alice|Paris|file:///test/root");
        assert_eq!(c.asked().len(), 3);
        let r = c.call("two_rounds", json!({})).await.unwrap();
        assert_eq!(text(&r), "alice likes blue");
        let r = c
            .request("prompts/get", json!({"name": "intro"}))
            .await
            .unwrap();
        assert_eq!(r["messages"][0]["content"]["text"], "Introduce alice.");
        let r = c
            .request("resources/read", json!({"uri": "test://me"}))
            .await
            .unwrap();
        assert_eq!(r["contents"][0]["text"], "me: alice");
    })
    .await;
}

/// The same handler, asking twice, in the handshake era: two live requests.
#[tokio::test]
async fn handshake_context_methods_in_sequence() {
    run(async {
        let c = Client::connect(&server(), Era::Handshake, all_caps(), Arc::new(user)).await;
        let r = c.call("ask_twice", json!({})).await.unwrap();
        assert_eq!(text(&r), "alice: Paris");
        assert_eq!(c.asked().len(), 2);
    })
    .await;
}

/// S42 (backpressure never deadlocks), as a client pipelining over a stream would: 200
/// `tools/call`s of a tool that elicits, sent back to back on one 2025-11-25 stream while the
/// client answers every elicitation as it reads it. All 200 complete: the answers reach their
/// handlers though the calls beyond the 64 running ones wait behind them. Before, the
/// dispatcher stopped reading behind 64 waiting calls, the answers sat unread and all 200
/// hung.
#[tokio::test]
async fn s42_two_hundred_pipelined_eliciting_calls_on_a_stream_all_complete() {
    use ferromcp_dispatch::{MessageSink, MessageSource, memory_pair};
    use ferromcp_types::jsonrpc::{Message, Notification, Payload, Request};

    run(async {
        let server = server();
        let (client, end) = memory_pair(64);
        let serving = tokio::spawn(async move {
            let config = ferromcp_server::StreamConfig::default();
            ferromcp_server::serve_stream(server.server(), end.source, end.sink, config).await
        });
        let (sink, mut source) = (client.sink, client.source);
        let init = json!({"protocolVersion": "2025-11-25", "capabilities": all_caps(),
                          "clientInfo": {"name": "pipeliner", "version": "1"}});
        let init = Request::new(0, "initialize", Some(Payload::from(init)));
        sink.send(Message::Request(init).into()).await.unwrap();
        let first = source.recv().await.unwrap().unwrap().message;
        assert!(matches!(first, Message::Response(_)), "{first:?}");
        let initialized = Notification::new("notifications/initialized", None);
        sink.send(Message::Notification(initialized).into())
            .await
            .unwrap();

        let writer = {
            let sink = sink.clone();
            tokio::spawn(async move {
                for i in 1..=200 {
                    let params = json!({"name": "signup", "arguments": {}});
                    let call = Request::new(i, "tools/call", Some(Payload::from(params)));
                    sink.send(Message::Request(call).into()).await.unwrap();
                }
            })
        };
        let mut done = std::collections::HashSet::new();
        while done.len() < 200 {
            match source.recv().await.unwrap().unwrap().message {
                Message::Request(r) => {
                    let params: serde_json::Value = r.params.unwrap().parse().unwrap();
                    let answer = match user(&r.method, &params) {
                        Ok(v) => Message::response(r.id, v),
                        Err(e) => Message::error(Some(r.id), e),
                    };
                    sink.send(answer.into()).await.unwrap();
                }
                Message::Response(r) => {
                    let v: serde_json::Value = r.result.parse().unwrap();
                    assert_eq!(text(&v), "welcome alice <alice@example.com>", "{v}");
                    assert!(done.insert(r.id));
                }
                other => panic!("unexpected {other:?}"),
            }
        }
        writer.await.unwrap();
        drop(sink);
        drop(source);
        let _ = serving.await;
    })
    .await;
}
