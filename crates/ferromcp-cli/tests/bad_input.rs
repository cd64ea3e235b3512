//! Bad input against the real `ferromcp serve` over stdio (the B-list of
//! `shared/reference/security-and-reliability.md` §(c) C1). Every case checks three things:
//!
//! 1. the bad line gets a clear protocol error (the code and the id named per case);
//! 2. the connection keeps serving: a good request sent after it is answered;
//! 3. nothing accepted before is lost: a slow `countdown` started before the bad line still
//!    completes with its result.
//!
//! Spec references: JSON-RPC 2.0 §4–§6 ("JSON-RPC"), MCP 2025-11-25 "Basic › Messages"
//! (B25), "Lifecycle" (L25), "Transports › stdio" (T25), "Server › Tools › Error Handling"
//! (TL25).
#![allow(clippy::unwrap_used, clippy::panic)]

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

const TIMEOUT: Duration = Duration::from_secs(30);
/// The id of the slow request started before the bad input.
const SLOW: i64 = 900;
/// The id of the good request sent after the bad input.
const GOOD: i64 = 901;

struct Peer {
    _child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    /// Messages read while waiting for something else.
    pending: Vec<Value>,
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
            pending: Vec::new(),
        }
    }

    async fn send_bytes(&mut self, line: &[u8]) {
        self.stdin.write_all(line).await.unwrap();
        self.stdin.write_all(b"\n").await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    async fn send(&mut self, message: Value) {
        self.send_bytes(message.to_string().as_bytes()).await;
    }

    /// The next message on stdout; every line must be a JSON-RPC message.
    async fn recv(&mut self) -> Value {
        let line = self
            .lines
            .next_line()
            .await
            .unwrap()
            .expect("stdout closed");
        let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert_eq!(v["jsonrpc"], "2.0", "{line}");
        v
    }

    /// The first message (already read or next) that `pick` selects.
    async fn take(&mut self, pick: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.pending.iter().position(&pick) {
            return self.pending.remove(i);
        }
        loop {
            let v = self.recv().await;
            if pick(&v) {
                return v;
            }
            self.pending.push(v);
        }
    }

    /// The response to request `id`.
    async fn response(&mut self, id: &Value) -> Value {
        let id = id.clone();
        self.take(move |v| v.get("id") == Some(&id) && v.get("method").is_none())
            .await
    }

    /// The next error response whose id is not that of the slow request.
    async fn error(&mut self) -> Value {
        self.take(|v| v.get("error").is_some() && v["id"] != json!(SLOW))
            .await
    }

    async fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        self.response(&json!(id)).await
    }

    async fn handshake(&mut self, version: &str) {
        let init = self
            .request(
                1,
                "initialize",
                json!({"protocolVersion": version, "capabilities": {},
                       "clientInfo": {"name": "bad-input", "version": "1"}}),
            )
            .await;
        assert_eq!(init["result"]["protocolVersion"], version, "{init}");
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
    }

    /// Starts the slow request (a 1 s countdown).
    async fn start_slow(&mut self) {
        self.send(json!({"jsonrpc": "2.0", "id": SLOW, "method": "tools/call",
                         "params": {"name": "countdown", "arguments": {"seconds": 1}}}))
            .await;
    }

    /// The connection still serves, and the slow request completes.
    async fn still_serving(&mut self) {
        let r = self
            .request(
                GOOD,
                "tools/call",
                json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
            )
            .await;
        assert_eq!(r["result"]["content"][0]["text"], "5", "{r}");
        let slow = self.response(&json!(SLOW)).await;
        assert_eq!(slow["result"]["content"][0]["text"], "liftoff", "{slow}");
    }
}

fn code(v: &Value) -> i64 {
    v["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error: {v}"))
}

async fn run(test: impl std::future::Future<Output = ()>) {
    tokio::time::timeout(TIMEOUT, test)
        .await
        .expect("test timed out");
}

/// Serves a fresh 2025-11-25 connection with a slow request in flight, sends each bad line,
/// and expects for each an error with `code` and `id`, then checks the connection.
async fn expect_errors(lines: &[&[u8]], expected_code: i64, expected_id: Value) {
    run(async {
        let mut p = Peer::spawn();
        p.handshake("2025-11-25").await;
        p.start_slow().await;
        for line in lines {
            p.send_bytes(line).await;
            let e = p.error().await;
            assert_eq!(
                (code(&e), &e["id"]),
                (expected_code, &expected_id),
                "for {:?}: {e}",
                String::from_utf8_lossy(line)
            );
        }
        p.still_serving().await;
    })
    .await;
}

/// B01 — malformed JSON (truncated, trailing garbage, a lone brace, a BOM prefix): -32700
/// Parse error with a null id (JSON-RPC §5.1, B25 §Messages).
#[tokio::test]
async fn malformed_json_is_a_parse_error() {
    expect_errors(
        &[
            br#"{"jsonrpc":"2.0","id":2,"method":"tools/list""#,
            br#"{"jsonrpc":"2.0","id":3,"method":"ping"} trailing"#,
            b"{",
            b"\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}",
            b"not json at all",
        ],
        -32700,
        Value::Null,
    )
    .await;
}

/// B54 — `serve_stdio` serves `\r\n`-terminated lines (a Windows client's line ending): the
/// handshake, a request with its `\r` and `\n` in separate writes, and one answered while a
/// slow request started over CRLF is still in flight.
#[tokio::test]
async fn b54_crlf_terminated_lines_are_served() {
    run(async {
        let mut p = Peer::spawn();
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "crlf", "version": "1"}}});
        p.send_bytes(format!("{init}\r").as_bytes()).await;
        let r = p.response(&json!(1)).await;
        assert_eq!(r["result"]["protocolVersion"], "2025-11-25", "{r}");
        p.send_bytes(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\r")
            .await;
        let slow = json!({"jsonrpc": "2.0", "id": SLOW, "method": "tools/call",
            "params": {"name": "countdown", "arguments": {"seconds": 1}}});
        p.send_bytes(format!("{slow}\r").as_bytes()).await;
        let add = json!({"jsonrpc": "2.0", "id": GOOD, "method": "tools/call",
            "params": {"name": "add", "arguments": {"a": 2, "b": 3}}});
        p.stdin
            .write_all(format!("{add}\r").as_bytes())
            .await
            .unwrap();
        p.stdin.flush().await.unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        p.stdin.write_all(b"\n").await.unwrap();
        p.stdin.flush().await.unwrap();
        let r = p.response(&json!(GOOD)).await;
        assert_eq!(r["result"]["content"][0]["text"], "5", "{r}");
        let slow = p.response(&json!(SLOW)).await;
        assert_eq!(slow["result"]["content"][0]["text"], "liftoff", "{slow}");
    })
    .await;
}

/// B40 — a line over the line limit (4 MiB by default, `DEFAULT_MAX_LINE_LEN`): -32700 with a
/// null id; the rest of the line is discarded and the next line is served (T25 §stdio).
#[tokio::test]
async fn oversized_line_is_discarded_and_reported() {
    let mut huge = br#"{"jsonrpc":"2.0","id":5,"method":"ping","params":{"x":""#.to_vec();
    huge.resize(huge.len() + 5 * 1024 * 1024, b'a');
    huge.extend_from_slice(br#""}}"#);
    expect_errors(&[&huge], -32700, Value::Null).await;
}

/// B03 — nesting deeper than 128 levels (129 and 100,000): -32700 with a null id, no stack
/// overflow (B25 §Messages; ferromcp's `DEFAULT_MAX_DEPTH`).
#[tokio::test]
async fn deep_nesting_is_a_parse_error() {
    let nest = |depth: usize| {
        let mut s = br#"{"jsonrpc":"2.0","id":6,"method":"ping","params":{"x":"#.to_vec();
        s.extend(std::iter::repeat_n(b'[', depth));
        s.extend(std::iter::repeat_n(b']', depth));
        s.extend_from_slice(b"}}");
        s
    };
    expect_errors(&[&nest(129), &nest(100_000)], -32700, Value::Null).await;
}

/// B04 — invalid UTF-8 (a lone continuation byte, an overlong form, an encoded surrogate):
/// -32700 with a null id, never lossily decoded (T25 §stdio: UTF-8).
#[tokio::test]
async fn invalid_utf8_is_a_parse_error() {
    expect_errors(
        &[
            b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\",\"params\":{\"x\":\"\x80\"}}",
            b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\",\"params\":{\"x\":\"\xc0\xaf\"}}",
            b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\",\"params\":{\"x\":\"\xed\xa0\x80\"}}",
        ],
        -32700,
        Value::Null,
    )
    .await;
}

/// B04 — a lone surrogate escape (`"\ud800"`) inside `params`: the envelope is valid, so the
/// error carries the request's id, with -32700 (the params are not JSON text any parser can
/// hold); never a panic or a lossy replacement.
#[tokio::test]
async fn lone_surrogate_escape_is_a_parse_error_with_the_id() {
    expect_errors(
        &[br#"{"jsonrpc":"2.0","id":7,"method":"ping","params":{"x":"\ud800"}}"#],
        -32700,
        json!(7),
    )
    .await;
}

/// B07 — valid JSON that is not a JSON-RPC message (`null`, a number, a string): -32600
/// Invalid Request with a null id (JSON-RPC §4, §5.1).
#[tokio::test]
async fn non_object_json_is_an_invalid_request() {
    expect_errors(&[b"null", b"42", br#""ping""#], -32600, Value::Null).await;
}

/// B07 — wrong JSON-RPC shapes with a readable id (`jsonrpc` not "2.0", no `method`, `method`
/// not a string, `params` not an object): -32600 with that id (JSON-RPC §4, §5.1).
#[tokio::test]
async fn wrong_shapes_are_invalid_requests_with_their_id() {
    expect_errors(
        &[
            br#"{"jsonrpc":"1.0","id":8,"method":"ping"}"#,
            br#"{"id":8,"method":"ping"}"#,
            br#"{"jsonrpc":"2.0","id":8}"#,
            br#"{"jsonrpc":"2.0","id":8,"method":5}"#,
            br#"{"jsonrpc":"2.0","id":8,"method":"ping","params":"x"}"#,
            br#"{"jsonrpc":"2.0","id":8,"method":"ping","result":{}}"#,
        ],
        -32600,
        json!(8),
    )
    .await;
}

/// B09, B05 — ids that are not an integer or a string (`null`, an object, an array, a
/// boolean, a fraction): -32600 with a null id, never a response routed to them (B25
/// §Requests: "MUST be a string or integer", "MUST NOT be null").
#[tokio::test]
async fn invalid_ids_are_invalid_requests() {
    expect_errors(
        &[
            br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            br#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#,
            br#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#,
            br#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
            br#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
        ],
        -32600,
        Value::Null,
    )
    .await;
}

/// B05 — an id beyond any number type: -32700 with a null id.
#[tokio::test]
async fn out_of_range_id_is_a_parse_error() {
    expect_errors(
        &[br#"{"jsonrpc":"2.0","id":1e400,"method":"ping"}"#],
        -32700,
        Value::Null,
    )
    .await;
}

/// B08 — a batch (removed after 2025-03-26; B25 §Messages): -32600 with a null id, and no
/// entry of it is run.
#[tokio::test]
async fn batches_are_rejected_where_the_version_forbids_them() {
    expect_errors(
        &[
            br#"[{"jsonrpc":"2.0","id":9,"method":"ping"},{"jsonrpc":"2.0","id":10,"method":"ping"}]"#,
            b"[]",
        ],
        -32600,
        Value::Null,
    )
    .await;
}

/// B50, B52 — case variants and NUL in envelope keys (`"Method"`, `"METHOD"`, `"method\u0000"`)
/// are not `method`, so the message has none: -32600 with its id (GHSA-wvj2-96wp-fq3f,
/// GHSA-q382-vc8q-7jhj).
#[tokio::test]
async fn case_variant_and_nul_keys_are_not_the_envelope_keys() {
    expect_errors(
        &[
            br#"{"jsonrpc":"2.0","id":12,"Method":"ping"}"#,
            br#"{"jsonrpc":"2.0","id":12,"METHOD":"ping"}"#,
            br#"{"jsonrpc":"2.0","id":12,"method\u0000":"ping"}"#,
            br#"{"jsonrpc":"2.0","id":12,"metho\u0064X":"ping"}"#,
        ],
        -32600,
        json!(12),
    )
    .await;
}

/// B51 — duplicate keys, in the envelope and inside `params` (at any depth): -32600 with the
/// id, and the tool is never run with either value (GHSA-wvj2-96wp-fq3f).
#[tokio::test]
async fn duplicate_keys_are_rejected() {
    expect_errors(
        &[
            br#"{"jsonrpc":"2.0","id":13,"method":"tools/list","method":"tools/call"}"#,
            br#"{"jsonrpc":"2.0","id":13,"id":14,"method":"ping"}"#,
            br#"{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"add","name":"echo","arguments":{"a":1,"b":2}}}"#,
            br#"{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"a":2,"b":2}}}"#,
            br#"{"jsonrpc":"2.0","id":13,"method":"ping","params":{"_meta":{"k":1,"\u006b":2}}}"#,
        ],
        -32600,
        json!(13),
    )
    .await;
}

/// B52 — NUL inside a `params` key (`"na\u0000me"`) is not `name`: -32602 Invalid params
/// (B25 §Requests; TL25 §Error Handling).
#[tokio::test]
async fn nul_in_param_keys_is_not_the_param() {
    expect_errors(
        &[
            br#"{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"na\u0000me":"add","arguments":{"a":1,"b":2}}}"#,
        ],
        -32602,
        json!(15),
    )
    .await;
}

/// B11 — an unknown method: -32601 Method not found with its id (JSON-RPC §5.1).
#[tokio::test]
async fn unknown_method_is_method_not_found() {
    run(async {
        let mut p = Peer::spawn();
        p.handshake("2025-11-25").await;
        p.start_slow().await;
        let r = p.request(16, "no/such/method", json!({})).await;
        assert_eq!(
            (code(&r), &r["error"]["data"]),
            (-32601, &json!("no/such/method"))
        );
        p.still_serving().await;
    })
    .await;
}

/// B16, B17 — wrong argument types get an `isError` tool result (the handler is not called);
/// an unknown tool and a missing or non-string name get -32602 (TL25 §Error Handling).
#[tokio::test]
async fn wrong_argument_types_and_unknown_tools() {
    run(async {
        let mut p = Peer::spawn();
        p.handshake("2025-11-25").await;
        p.start_slow().await;
        for args in [
            json!({"a": "one", "b": 2}),
            json!({"a": 1}),
            json!({"a": null, "b": 2}),
            json!({"a": [1], "b": {}}),
        ] {
            let r = p
                .request(17, "tools/call", json!({"name": "add", "arguments": args}))
                .await;
            assert_eq!(r["result"]["isError"], true, "{args}: {r}");
        }
        for params in [
            json!({"name": "nope", "arguments": {}}),
            json!({"name": "", "arguments": {}}),
            json!({"name": 5, "arguments": {}}),
            json!({"name": "add", "arguments": "not an object"}),
            json!({"arguments": {}}),
            json!({"name": "x".repeat(1 << 20)}),
        ] {
            let r = p.request(18, "tools/call", params).await;
            assert_eq!(code(&r), -32602, "{r:.200}");
            assert!(
                r.to_string().len() < 4096,
                "the error does not echo a 1 MB name"
            );
        }
        p.still_serving().await;
    })
    .await;
}

/// B13 — requests before `initialize` (2025-11-25): an error (-32602, "not initialized")
/// with their id; `ping` is allowed; `initialize` still works afterwards (L25
/// §Initialization).
#[tokio::test]
async fn requests_before_initialize_are_refused() {
    run(async {
        let mut p = Peer::spawn();
        for (id, method) in [(2, "tools/list"), (3, "tools/call"), (4, "resources/list")] {
            let r = p.request(id, method, json!({"name": "add"})).await;
            assert_eq!(code(&r), -32602, "{r}");
            assert!(
                r["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("not initialized")
            );
        }
        let r = p.request(5, "ping", json!({})).await;
        assert_eq!(r["result"], json!({}));
        p.handshake("2025-11-25").await;
        p.start_slow().await;
        p.still_serving().await;
    })
    .await;
}

/// B12 — a duplicate request id while the first is in flight: the second gets -32600 with
/// that id, the first is untouched and completes (B25 §Requests: ids are not reused).
#[tokio::test]
async fn duplicate_request_id_in_flight_is_rejected() {
    run(async {
        let mut p = Peer::spawn();
        p.handshake("2025-11-25").await;
        p.start_slow().await;
        p.send(json!({"jsonrpc": "2.0", "id": SLOW, "method": "ping"}))
            .await;
        let e = p
            .take(|v| v["id"] == json!(SLOW) && v.get("error").is_some())
            .await;
        assert_eq!(code(&e), -32600, "{e}");
        p.still_serving().await;
    })
    .await;
}

/// B14 — a second `initialize` on a live connection: -32600, and the negotiated state is
/// unchanged (L25 §Initialization; SV-S10).
#[tokio::test]
async fn second_initialize_is_rejected() {
    run(async {
        let mut p = Peer::spawn();
        p.handshake("2025-11-25").await;
        p.start_slow().await;
        let r = p
            .request(
                20,
                "initialize",
                json!({"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "again", "version": "1"}}),
            )
            .await;
        assert_eq!(code(&r), -32600);
        p.still_serving().await;
    })
    .await;
}
