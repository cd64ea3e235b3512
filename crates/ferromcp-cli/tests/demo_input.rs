//! The demo server's input fixtures end to end over stdio (conformance §5.2: sampling and
//! elicitation as live requests in the handshake era, SEP-1034 defaults and SEP-1330 enum
//! schemas; §5.7: the `input-required-result-*` scenarios at 2026-07-28).
#![allow(clippy::unwrap_used, clippy::panic)]

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

const TIMEOUT: Duration = Duration::from_secs(30);

struct Peer {
    _child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    next_id: i64,
}

impl Peer {
    fn spawn() -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ferromcp"))
            .arg("serve")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Self {
            _child: child,
            stdin,
            lines,
            next_id: 1,
        }
    }

    async fn send(&mut self, message: Value) {
        let line = message.to_string();
        self.stdin.write_all(line.as_bytes()).await.unwrap();
        self.stdin.write_all(b"\n").await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    async fn recv(&mut self) -> Value {
        let line = self
            .lines
            .next_line()
            .await
            .unwrap()
            .expect("stdout closed");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    }

    /// Sends a request and answers the server's requests with `answer` until the response
    /// comes; returns it and the server's requests.
    async fn call(
        &mut self,
        method: &str,
        params: Value,
        answer: impl Fn(&str, &Value) -> Value,
    ) -> (Value, Vec<Value>) {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let mut asked = Vec::new();
        loop {
            let v = self.recv().await;
            if let Some(m) = v.get("method").and_then(Value::as_str) {
                if v.get("id").is_some() {
                    let result = answer(m, &v["params"]);
                    self.send(json!({"jsonrpc": "2.0", "id": v["id"], "result": result}))
                        .await;
                    asked.push(v);
                }
                continue;
            }
            if v["id"] == json!(id) {
                return (v, asked);
            }
        }
    }
}

/// The conformance harness's answers (§5.7).
fn harness(method: &str, params: &Value) -> Value {
    match method {
        "elicitation/create" => {
            let props = params["requestedSchema"]["properties"].as_object().unwrap();
            let content: serde_json::Map<String, Value> = props
                .iter()
                .map(|(k, p)| {
                    let v = match p["type"].as_str() {
                        Some("boolean") => json!(true),
                        Some("integer" | "number") => json!(1),
                        Some("array") => json!([]),
                        _ if p.get("enum").is_some() => p["enum"][0].clone(),
                        _ if p.get("oneOf").is_some() => p["oneOf"][0]["const"].clone(),
                        _ if k == "email" => json!("a@example.com"),
                        _ => json!(format!("test-{k}")),
                    };
                    (k.clone(), v)
                })
                .collect();
            json!({"action": "accept", "content": content})
        }
        "sampling/createMessage" => json!({"role": "assistant",
            "content": {"type": "text", "text": "Paris"}, "model": "test-model",
            "stopReason": "endTurn"}),
        "roots/list" => json!({"roots": [{"uri": "file:///test/root", "name": "Test Root"}]}),
        other => panic!("unexpected {other}"),
    }
}

fn no_requests(method: &str, _: &Value) -> Value {
    panic!("a server→client request ({method}) at 2026-07-28")
}

fn text(r: &Value) -> String {
    r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

async fn handshake() -> Peer {
    let mut p = Peer::spawn();
    let caps = json!({"elicitation": {}, "sampling": {}, "roots": {}});
    let init = json!({"protocolVersion": "2025-11-25", "capabilities": caps,
                      "clientInfo": {"name": "t", "version": "1"}});
    p.call("initialize", init, no_requests).await;
    p.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    p
}

fn meta(caps: &Value) -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
           "io.modelcontextprotocol/clientCapabilities": caps})
}

fn all_caps() -> Value {
    json!({"elicitation": {}, "sampling": {}, "roots": {}})
}

fn tool(name: &str, extra: Value) -> Value {
    let mut p = json!({"name": name, "arguments": {}, "_meta": meta(&all_caps())});
    if let Value::Object(m) = extra {
        for (k, v) in m {
            p[k] = v;
        }
    }
    p
}

/// Answers every input request of an InputRequiredResult the harness's way.
fn answers(irr: &Value) -> Value {
    let mut out = json!({});
    for (k, q) in irr["result"]["inputRequests"].as_object().unwrap() {
        out[k] = harness(q["method"].as_str().unwrap(), &q["params"]);
    }
    out
}

#[tokio::test]
async fn handshake_sampling_and_elicitation_fixtures() {
    tokio::time::timeout(TIMEOUT, async {
        let mut p = handshake().await;
        let args = json!({"name": "test_sampling", "arguments": {"prompt": "Hi there"}});
        let (r, asked) = p.call("tools/call", args, harness).await;
        assert_eq!(text(&r), "LLM response: Paris");
        let params = &asked[0]["params"];
        assert_eq!(params["maxTokens"], 100);
        assert_eq!(
            params["messages"],
            json!([{"role": "user", "content": {"type": "text", "text": "Hi there"}}])
        );

        let args = json!({"name": "test_elicitation", "arguments": {"message": "Sign up"}});
        let (r, asked) = p.call("tools/call", args, harness).await;
        assert!(text(&r).starts_with("User response: action=accept"), "{r}");
        let schema = &asked[0]["params"]["requestedSchema"];
        assert_eq!(asked[0]["params"]["message"], "Sign up");
        assert_eq!(schema["required"], json!(["username", "email"]));
        assert_eq!(schema["properties"]["username"]["type"], "string");
        assert_eq!(schema["properties"]["email"]["type"], "string");

        let args = json!({"name": "test_elicitation_sep1034_defaults", "arguments": {}});
        let (r, asked) = p.call("tools/call", args, harness).await;
        assert!(text(&r).contains("accept"), "{r}");
        let props = &asked[0]["params"]["requestedSchema"]["properties"];
        assert_eq!(props["name"]["type"], "string");
        assert_eq!(props["name"]["default"], "John Doe");
        assert_eq!(props["age"]["type"], "integer");
        assert_eq!(props["age"]["default"], 30);
        assert_eq!(props["score"]["type"], "number");
        assert_eq!(props["score"]["default"], 95.5);
        assert_eq!(props["status"]["type"], "string");
        assert_eq!(
            props["status"]["enum"],
            json!(["active", "inactive", "pending"])
        );
        assert_eq!(props["status"]["default"], "active");
        assert_eq!(props["verified"]["type"], "boolean");
        assert_eq!(props["verified"]["default"], true);

        let args = json!({"name": "test_elicitation_sep1330_enums", "arguments": {}});
        let (r, asked) = p.call("tools/call", args, harness).await;
        assert!(text(&r).contains("accept"), "{r}");
        let props = &asked[0]["params"]["requestedSchema"]["properties"];
        let us = &props["untitledSingle"];
        assert_eq!(us["type"], "string");
        assert_eq!(us["enum"], json!(["option1", "option2", "option3"]));
        assert!(us.get("oneOf").is_none() && us.get("enumNames").is_none());
        let ts = &props["titledSingle"];
        assert_eq!(ts["type"], "string");
        assert!(ts.get("enum").is_none());
        assert_eq!(
            ts["oneOf"][0],
            json!({"const": "value1", "title": "First Option"})
        );
        let legacy = &props["legacyEnum"];
        assert_eq!(legacy["enum"], json!(["opt1", "opt2", "opt3"]));
        assert_eq!(legacy["enumNames"].as_array().unwrap().len(), 3);
        let um = &props["untitledMulti"];
        assert_eq!(um["type"], "array");
        assert_eq!(um["items"]["type"], "string");
        assert_eq!(
            um["items"]["enum"],
            json!(["option1", "option2", "option3"])
        );
        let tm = &props["titledMulti"];
        assert_eq!(tm["type"], "array");
        assert_eq!(tm["items"]["anyOf"][0]["const"], "value1");

        // The multi-round fixtures ask live in the handshake era.
        let args = json!({"name": "test_input_required_result_multiple_inputs", "arguments": {}});
        let (r, asked) = p.call("tools/call", args, harness).await;
        assert_eq!(asked.len(), 3);
        assert!(text(&r).contains("test-name"), "{r}");
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn modern_input_required_result_fixtures() {
    tokio::time::timeout(TIMEOUT, async {
        let mut p = Peer::spawn();
        let cases = [
            (
                "test_input_required_result_elicitation",
                vec!["user_name"],
                "Hello, test-name!",
            ),
            (
                "test_input_required_result_sampling",
                vec!["capital_question"],
                "Paris",
            ),
            (
                "test_input_required_result_list_roots",
                vec!["client_roots"],
                "file:///test/root",
            ),
            (
                "test_input_required_result_request_state",
                vec!["confirm"],
                "state-ok",
            ),
            (
                "test_input_required_result_multiple_inputs",
                vec!["client_roots", "greeting", "user_name"],
                "test-name",
            ),
            (
                "test_input_required_result_tampered_state",
                vec!["user_name"],
                "test-name",
            ),
        ];
        for (name, keys, expect) in cases {
            let (r1, _) = p
                .call("tools/call", tool(name, json!({})), no_requests)
                .await;
            let res = &r1["result"];
            assert_eq!(res["resultType"], "input_required", "{name}: {r1}");
            let got: Vec<_> = res["inputRequests"]
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect();
            assert_eq!(got, keys, "{name}");
            assert!(res["requestState"].is_string(), "{name}");
            let retry =
                json!({"inputResponses": answers(&r1), "requestState": res["requestState"]});
            let (r2, _) = p.call("tools/call", tool(name, retry), no_requests).await;
            assert_eq!(r2["result"]["resultType"], "complete", "{name}: {r2}");
            assert!(text(&r2).contains(expect), "{name}: {r2}");
        }

        // Two rounds, two different states.
        let name = "test_input_required_result_multi_round";
        let (r1, _) = p
            .call("tools/call", tool(name, json!({})), no_requests)
            .await;
        assert!(r1["result"]["inputRequests"]["step1"].is_object());
        let retry =
            json!({"inputResponses": answers(&r1), "requestState": r1["result"]["requestState"]});
        let (r2, _) = p.call("tools/call", tool(name, retry), no_requests).await;
        let q = &r2["result"]["inputRequests"]["step2"];
        assert!(
            q["params"]["message"]
                .as_str()
                .unwrap()
                .contains("favorite color")
        );
        assert_ne!(r2["result"]["requestState"], r1["result"]["requestState"]);
        let retry =
            json!({"inputResponses": answers(&r2), "requestState": r2["result"]["requestState"]});
        let (r3, _) = p.call("tools/call", tool(name, retry), no_requests).await;
        assert_eq!(text(&r3), "test-name likes test-color");

        // Tampered state: a JSON-RPC error.
        let name = "test_input_required_result_tampered_state";
        let (r1, _) = p
            .call("tools/call", tool(name, json!({})), no_requests)
            .await;
        let state = format!(
            "{}-TAMPERED",
            r1["result"]["requestState"].as_str().unwrap()
        );
        let retry = json!({"inputResponses": answers(&r1), "requestState": state});
        let (r2, _) = p.call("tools/call", tool(name, retry), no_requests).await;
        assert_eq!(r2["error"]["code"], -32602, "{r2}");

        // Only what the client declared: sampling, no elicitation.
        let params = json!({"name": "test_input_required_result_capabilities", "arguments": {},
                            "_meta": meta(&json!({"sampling": {}}))});
        let (r, _) = p.call("tools/call", params, no_requests).await;
        assert_eq!(r["result"]["resultType"], "input_required", "{r}");
        for q in r["result"]["inputRequests"].as_object().unwrap().values() {
            assert_ne!(q["method"], "elicitation/create");
        }

        // A prompt.
        let params =
            json!({"name": "test_input_required_result_prompt", "_meta": meta(&all_caps())});
        let (r1, _) = p.call("prompts/get", params.clone(), no_requests).await;
        let q = &r1["result"]["inputRequests"]["user_context"];
        assert_eq!(
            q["params"]["message"],
            "What context should the prompt use?"
        );
        let mut retry = params;
        retry["inputResponses"] = answers(&r1);
        retry["requestState"] = r1["result"]["requestState"].clone();
        let (r2, _) = p.call("prompts/get", retry, no_requests).await;
        assert_eq!(r2["result"]["resultType"], "complete", "{r2}");
        assert!(
            r2["result"]["messages"][0]["content"]["text"]
                .as_str()
                .unwrap()
                .contains("test-context")
        );

        // List methods never answer input_required.
        let (r, _) = p
            .call(
                "tools/list",
                json!({"_meta": meta(&all_caps())}),
                no_requests,
            )
            .await;
        assert_eq!(r["result"]["resultType"], "complete");
    })
    .await
    .unwrap();
}
