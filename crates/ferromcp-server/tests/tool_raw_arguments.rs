//! Issue 17 point 4 for the high-level server: a typed tool call never turns its arguments
//! into a `Value`. The arguments stay the text received: the input schema checks that text,
//! `Args<T>` reads `T` from it (numbers as written), and only what asks for a value (a
//! `RawArgs` tool, a state bound to the arguments) gets one. Params a middleware layer turned
//! into a value take the value path, which must answer the same. Everything here goes over
//! bytes, framed as stdio frames them, in both eras.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use common::within;
use ferromcp_dispatch::{LineTransportConfig, line_transport};
use ferromcp_server::mcp_server::{Args, Elicitation, RawArgs, ToolSpec};
use ferromcp_server::middleware::{McpRequest, Next, middleware_fn};
use ferromcp_server::{McpServer, McpServerBuilder, RequestContext, StreamConfig, serve_stream};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf};
use tokio::io::{WriteHalf, split};

/// Numbers as the client wrote them.
#[derive(Deserialize, JsonSchema)]
struct Exact {
    #[schemars(with = "f64")]
    price: Box<RawValue>,
    #[schemars(with = "f64")]
    big: Box<RawValue>,
}

#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    a: f64,
    b: f64,
}

/// A constraint the schema does not say: any `n` passes the schema, only a u8 deserializes.
#[derive(Deserialize, JsonSchema)]
struct Count {
    #[schemars(with = "Value")]
    n: u8,
}

#[derive(Deserialize, JsonSchema)]
struct NameForm {
    name: String,
}

/// An array of up to 200k items passes the depth bound but not the step budget.
fn steps_schema() -> serde_json::Map<String, Value> {
    let items = json!({"anyOf": [{"type": "string"}, {"type": "boolean"}, {"type": "null"},
        {"type": "integer"}]});
    json!({"type": "object", "properties": {"xs": {"type": "array", "items": items}}})
        .as_object()
        .unwrap()
        .clone()
}

fn deep_schema() -> serde_json::Map<String, Value> {
    json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/n"}},
        "$defs": {"n": {"type": ["array", "integer"], "items": {"$ref": "#/$defs/n"}}}})
    .as_object()
    .unwrap()
    .clone()
}

/// The tools; `value_path`: a layer turns every `tools/call`'s params into a value first.
fn server(
    value_path: bool,
    layers: impl FnOnce(McpServerBuilder) -> McpServerBuilder,
) -> McpServer {
    let mut b = McpServer::builder("raw-args", "1")
        .tool("exact", |Args(e): Args<Exact>| async move {
            format!("{} {}", e.price.get(), e.big.get())
        })
        .tool("add", |Args(a): Args<AddArgs>| async move {
            (a.a + a.b).to_string()
        })
        .tool(
            "count",
            |Args(c): Args<Count>| async move { c.n.to_string() },
        )
        .tool("raw", |RawArgs(map): RawArgs| async move {
            Value::Object(map).to_string()
        })
        .tool(
            ToolSpec::new("steps").input_schema(steps_schema()),
            |RawArgs(_): RawArgs| async move { "ran" },
        )
        .tool(
            ToolSpec::new("deep").input_schema(deep_schema()),
            |RawArgs(_): RawArgs| async move { "ran" },
        )
        .tool(
            "asks",
            |ctx: RequestContext, Args(a): Args<AddArgs>| async move {
                match ctx.elicit_form::<NameForm>("Name?").await {
                    Ok(Elicitation::Accept(n)) => format!("{} {}", n.name, a.a + a.b),
                    _ => "no name".to_owned(),
                }
            },
        );
    if value_path {
        b = b.middleware(middleware_fn(
            |mut req: McpRequest, next: Next| async move {
                if req.method == "tools/call" {
                    // Touching the params mutably makes them a value (the text is dropped).
                    assert!(req.params.as_mut().is_some());
                    assert!(req.params.raw().is_none());
                }
                next.run(req).await
            },
        ));
    }
    layers(b).build().unwrap()
}

const ENVELOPE: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}"#;

/// A session over bytes: newline-framed JSON-RPC on a pipe, served by `serve_stream`.
struct Wire {
    write: WriteHalf<DuplexStream>,
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    modern: bool,
    next_id: u64,
}

impl Wire {
    async fn open(server: &McpServer, modern: bool) -> Self {
        let (client, server_end) = tokio::io::duplex(1 << 16);
        let (read, write) = split(server_end);
        let (source, sink) = line_transport(read, write, LineTransportConfig::default());
        let served = server.server().clone();
        tokio::spawn(async move {
            let _ = serve_stream(&served, source, sink, StreamConfig::default()).await;
        });
        let (read, write) = split(client);
        let mut wire = Self {
            write,
            lines: BufReader::new(read).lines(),
            modern,
            next_id: 1,
        };
        if !modern {
            let init = json!({"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
                "clientInfo": {"name": "t", "version": "0"}});
            wire.send(&format!(
                r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{init}}}"#
            ))
            .await;
            wire.read().await;
            wire.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
                .await;
        }
        wire
    }

    async fn send(&mut self, line: &str) {
        self.write.write_all(line.as_bytes()).await.unwrap();
        self.write.write_all(b"\n").await.unwrap();
    }

    async fn read(&mut self) -> Value {
        let line = within(self.lines.next_line()).await.unwrap().unwrap();
        serde_json::from_str(&line).unwrap()
    }

    /// `tools/call` of `name` with `rest` (the params' other members, as text: `"arguments":
    /// …`), the envelope added at 2026-07-28; the whole answer (result or error).
    async fn call(&mut self, name: &str, rest: &str) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let meta = if self.modern {
            format!(r#""_meta":{ENVELOPE},"#)
        } else {
            String::new()
        };
        let sep = if rest.is_empty() { "" } else { "," };
        self.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{{meta}"name":"{name}"{sep}{rest}}}}}"#
        ))
        .await;
        let answer = self.read().await;
        assert_eq!(answer["id"], id, "{answer}");
        answer
    }
}

fn text(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {answer}"))
}

/// S140: a typed tool whose argument type holds `Box<RawValue>` gets the numbers exactly as
/// sent (`1.50`, and an integer no `u64`/`f64` holds), in both eras: nothing made a `Value` of
/// the arguments on the way (one would have given `1.5` and a float).
#[tokio::test]
async fn s140_typed_arguments_are_read_from_the_text_received() {
    within(async {
        for modern in [false, true] {
            let mut w = Wire::open(&server(false, |b| b), modern).await;
            let args = r#""arguments": { "price" : 1.50, "big": 123456789012345678901234567890 }"#;
            let r = w.call("exact", args).await;
            assert_eq!(
                text(&r),
                "1.50 123456789012345678901234567890",
                "{modern}: {r}"
            );
            assert_ne!(r["result"]["isError"], true, "{r}");
            // Absent arguments read as `{}`, as before.
            let r = w.call("raw", "").await;
            assert_eq!(text(&r), "{}", "{r}");
            // What asks for a value gets the value of the text.
            let r = w
                .call("raw", r#""arguments":{"b":[1.50],"a":"\u0041"}"#)
                .await;
            assert_eq!(text(&r), r#"{"a":"A","b":[1.5]}"#, "{r}");
        }
    })
    .await;
}

/// S141: arguments that fail the input schema get the same `isError` result text, and ones
/// that pass it but not the type the same invalid-arguments text, on the text path and the
/// value path (a layer made the params a value), in both eras; protocol errors (unknown tool,
/// arguments that are not an object) are the same -32602 errors.
#[tokio::test]
async fn s141_invalid_arguments_answer_alike_on_text_and_value() {
    within(async {
        let cases = [
            ("add", r#""arguments":{"a":"x","b":3}"#),
            ("add", r#""arguments":{"b":3}"#),
            ("add", r#""arguments":{ "a" : 2 , "b" : 3 }"#),
            ("count", r#""arguments":{"n":"x"}"#),
            ("count", r#""arguments":{"n":300}"#),
            ("count", r#""arguments":{"n":7}"#),
            ("nope", r#""arguments":{}"#),
            ("add", r#""arguments":[1]"#),
            ("add", r#""arguments":5"#),
        ];
        for modern in [false, true] {
            let mut answers = Vec::new();
            for value_path in [false, true] {
                let mut w = Wire::open(&server(value_path, |b| b), modern).await;
                let mut got = Vec::new();
                for (name, rest) in cases {
                    let mut r = w.call(name, rest).await;
                    r.as_object_mut().unwrap().remove("id");
                    got.push(r);
                }
                answers.push(got);
            }
            assert_eq!(answers[0], answers[1], "{modern}");
            let got = &answers[0];
            assert_eq!(
                text(&got[0]),
                "invalid arguments: arguments/a: expected number, got string"
            );
            assert_eq!(got[0]["result"]["isError"], true);
            assert_eq!(
                text(&got[1]),
                r#"invalid arguments: arguments: missing required property "a""#
            );
            assert_eq!(text(&got[2]), "5");
            assert_eq!(
                text(&got[3]),
                "invalid arguments: a value has the wrong type or is out of range"
            );
            assert_eq!(got[3]["result"]["isError"], true);
            assert_eq!(text(&got[4]), text(&got[3]));
            assert_eq!(text(&got[5]), "7");
            for r in &got[6..] {
                assert_eq!(r["error"]["code"], -32602, "{r}");
            }
        }
    })
    .await;
}

/// S142: a layer that changes a call's arguments is what the tool gets (the value path), and
/// a layer that only reads the params leaves the text path with the same answer.
#[tokio::test]
async fn s142_a_layer_that_changes_arguments_reaches_the_tool() {
    within(async {
        let changer = |b: McpServerBuilder| {
            b.middleware(middleware_fn(
                |mut req: McpRequest, next: Next| async move {
                    if req.method == "tools/call"
                        && let Some(p) = req.params.as_mut()
                    {
                        p["arguments"]["a"] = json!(40);
                    }
                    next.run(req).await
                },
            ))
        };
        let reader = |b: McpServerBuilder| {
            b.middleware(middleware_fn(|req: McpRequest, next: Next| async move {
                if req.method == "tools/call" {
                    assert_eq!(req.params_value().unwrap()["name"], "exact");
                }
                next.run(req).await
            }))
        };
        for modern in [false, true] {
            let mut w = Wire::open(&server(false, changer), modern).await;
            let r = w.call("add", r#""arguments":{"a":1,"b":2}"#).await;
            assert_eq!(text(&r), "42", "{modern}: {r}");
            let mut w = Wire::open(&server(false, reader), modern).await;
            let r = w
                .call("exact", r#""arguments":{"price":1.50,"big":1e2}"#)
                .await;
            assert_eq!(text(&r), "1.50 1e2", "{modern}: {r}");
        }
    })
    .await;
}

/// S143: arguments nested past the depth bound, or too many for the step budget, hit the same
/// limit with the same error on the text path as on the value path.
#[tokio::test]
async fn s143_bounds_hold_on_the_text_as_on_the_value() {
    within(async {
        let deep = format!(
            r#""arguments":{{"a":{}1{}}}"#,
            "[".repeat(100),
            "]".repeat(100)
        );
        let items = vec!["1"; 200_000].join(",");
        let steps = format!(r#""arguments":{{"xs":[{items}]}}"#);
        let fine = format!(
            r#""arguments":{{"a":{}1{}}}"#,
            "[".repeat(60),
            "]".repeat(60)
        );
        for modern in [false, true] {
            let mut answers = Vec::new();
            for value_path in [false, true] {
                let mut w = Wire::open(&server(value_path, |b| b), modern).await;
                let mut got = Vec::new();
                for (name, rest) in [("deep", &deep), ("steps", &steps), ("deep", &fine)] {
                    got.push(text(&w.call(name, rest).await).to_owned());
                }
                answers.push(got);
            }
            assert_eq!(answers[0], answers[1], "{modern}");
            let got = &answers[0];
            assert!(
                got[0].starts_with("invalid arguments: arguments/a/0/0/"),
                "{}",
                got[0]
            );
            assert!(
                got[0].ends_with(": value nested deeper than 64 levels"),
                "{}",
                got[0]
            );
            assert_eq!(
                got[1],
                "invalid arguments: arguments/xs/199999: validation needs more than 1000000 steps"
            );
            assert_eq!(got[2], "ran");
        }
    })
    .await;
}

/// S144: at 2026-07-28 a tool's round state is bound to its arguments, computed from the
/// arguments' value when the arguments came as text: the retry with the same arguments
/// (written otherwise: members in another order, `1.5` for `1.50`) opens it, other
/// arguments do not.
#[tokio::test]
async fn s144_a_state_bound_to_text_arguments_opens_for_the_same_value() {
    within(async {
        let mut w = Wire::open(&server(false, |b| b), true).await;
        let r = w.call("asks", r#""arguments":{"a":1.50,"b":2}"#).await;
        assert_eq!(r["result"]["resultType"], "input_required", "{r}");
        let key = r["result"]["inputRequests"]
            .as_object()
            .unwrap()
            .keys()
            .next()
            .unwrap()
            .clone();
        let state = r["result"]["requestState"].clone();
        let answer = json!({key: {"action": "accept", "content": {"name": "Di"}}});
        let retry = |args: &str| {
            format!(r#""arguments":{args},"inputResponses":{answer},"requestState":{state}"#)
        };
        let r = w.call("asks", &retry(r#"{ "b": 2, "a": 1.5 }"#)).await;
        assert_eq!(text(&r), "Di 3.5", "{r}");
        let r = w.call("asks", &retry(r#"{"a":1.50,"b":3}"#)).await;
        assert_eq!(r["error"]["code"], -32602, "{r}");
    })
    .await;
}

impl Wire {
    /// `tools/call` with the params' members `members` as written (the envelope first at
    /// 2026-07-28); the whole answer, without its id.
    async fn call_with(&mut self, members: &str) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let meta = if self.modern {
            format!(r#""_meta":{ENVELOPE},"#)
        } else {
            String::new()
        };
        self.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{{meta}{members}}}}}"#
        ))
        .await;
        let mut answer = self.read().await;
        assert_eq!(answer["id"], id, "{answer}");
        answer.as_object_mut().unwrap().remove("id");
        answer
    }
}

/// S148: `tools/call` params read from their text (one walk of their members) answer as the
/// typed params read from a value do: members in any order, escaped keys, unknown members
/// ignored; a name that is not a string, no name, a member of the wrong type (`arguments:
/// null`, `_meta: null`, `task`, `requestState`) are the same -32602 (a repeated member, the
/// decoder's -32600); in both eras (`_meta` cases in the handshake era, where the envelope
/// does not read it).
#[tokio::test]
async fn s148_params_read_from_text_answer_as_typed_params() {
    within(async {
        const ADD: &str = r#""arguments":{"a":2,"b":3}"#;
        let both = [
            (r#""name":"add","#.to_owned() + ADD, Ok("5")),
            (r#""n\u0061me":"add","#.to_owned() + ADD, Ok("5")),
            (ADD.to_owned() + r#","name":"a\u0064d""#, Ok("5")),
            (
                r#""name":"add","x":[1,{"}":"{"}],"#.to_owned() + ADD + r#","y":0"#,
                Ok("5"),
            ),
            (r#""name":"raw","arguments":null"#.to_owned(), Err(-32602)),
            (
                r#""name":"add","name":"add","#.to_owned() + ADD,
                Err(-32600),
            ),
            (
                r#""name":"add","arguments":{},"#.to_owned() + ADD,
                Err(-32600),
            ),
            (r#""name":5,"#.to_owned() + ADD, Err(-32602)),
            (ADD.to_owned(), Err(-32602)),
            (
                r#""name":"add","requestState":5,"#.to_owned() + ADD,
                Err(-32602),
            ),
            (
                r#""name":"add","task":{"ttl":"x"},"#.to_owned() + ADD,
                Err(-32602),
            ),
        ];
        let long_meta = format!(r#""_meta":{{"k":"{}"}},"#, "x".repeat(300));
        let handshake = [
            (r#""_meta":{"k":1},"name":"add","#.to_owned() + ADD, Ok("5")),
            (
                r#""_meta":null,"name":"add","#.to_owned() + ADD,
                Err(-32602),
            ),
            (long_meta + r#""name":"add","# + ADD, Ok("5")),
            (r#""_meta":5,"name":"add","#.to_owned() + ADD, Err(-32602)),
            (r#""_meta":[],"name":"add","#.to_owned() + ADD, Err(-32602)),
        ];
        for modern in [false, true] {
            let cases: Vec<&(String, Result<&str, i64>)> = if modern {
                both.iter().collect()
            } else {
                both.iter().chain(&handshake).collect()
            };
            let mut answers = Vec::new();
            for value_path in [false, true] {
                let mut w = Wire::open(&server(value_path, |b| b), modern).await;
                let mut got = Vec::new();
                for (members, _) in &cases {
                    got.push(w.call_with(members).await);
                }
                answers.push(got);
            }
            assert_eq!(answers[0], answers[1], "{modern}");
            for (r, (members, want)) in answers[0].iter().zip(&cases) {
                match want {
                    Ok(t) => assert_eq!(text(r), *t, "{members}: {r}"),
                    Err(code) => assert_eq!(r["error"]["code"], *code, "{members}: {r}"),
                }
            }
        }
        // A `_meta` no value holds (a number out of range) fails on the text as the typed
        // params fail: -32700, serde_json's syntax error (the value path cannot make a value of
        // it at all).
        let mut w = Wire::open(&server(false, |b| b), false).await;
        let r = w
            .call_with(&(r#""_meta":{"k":1e400},"name":"add","#.to_owned() + ADD))
            .await;
        assert_eq!(r["error"]["code"], -32700, "{r}");
    })
    .await;
}
