//! Bad input against the Streamable HTTP server (the B-list of
//! `shared/reference/security-and-reliability.md` §(c) C1). Every case checks three things:
//!
//! 1. the bad POST gets a clear answer: the HTTP status and the JSON-RPC error code named per
//!    case (MCP 2025-11-25 "Transports › Streamable HTTP › Sending Messages" (T25), 2026-07-28
//!    "Streamable HTTP" (H26), JSON-RPC 2.0 §5.1);
//! 2. the session keeps serving: a good request on it afterwards is answered;
//! 3. nothing accepted before is lost: a slow `wait` call started before still completes.
#![allow(clippy::unwrap_used, clippy::panic)]

mod http_support;

use std::net::SocketAddr;
use std::time::Duration;

use ferromcp_http_server::{DEFAULT_MAX_BODY_SIZE, HttpConfig};
use http::Method;
use http_support::*;
use hyper::Response;
use hyper::body::Incoming;
use serde_json::{Value, json};

const VERSION: &str = "2025-11-25";

async fn within<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(30), f)
        .await
        .unwrap()
}

/// The JSON-RPC message of a response: a JSON body, or the first event of an SSE body.
async fn message(resp: Response<Incoming>) -> Value {
    let sse = header(&resp, "content-type").is_some_and(|t| t.starts_with("text/event-stream"));
    if sse {
        Sse::new(resp).next_json().await.unwrap()
    } else {
        json_body(resp).await
    }
}

/// A handshake-era session with a slow call in flight.
struct Session {
    addr: SocketAddr,
    sid: String,
    slow: tokio::task::JoinHandle<Value>,
}

impl Session {
    async fn open() -> Self {
        let (addr, _) = start(HttpConfig::default()).await;
        let sid = open_session(addr, VERSION).await;
        let headers = [
            ("mcp-session-id", sid.clone()),
            ("mcp-protocol-version", VERSION.to_owned()),
        ];
        let slow = tokio::spawn(async move {
            let resp = post(
                addr,
                &hdrs(&headers),
                &call(900, "wait", json!({"ms": 1200})),
            )
            .await;
            assert_eq!(resp.status(), 200);
            message(resp).await
        });
        // Let the slow call be accepted before the bad input.
        tokio::time::sleep(Duration::from_millis(100)).await;
        Self { addr, sid, slow }
    }

    fn headers(&self) -> Vec<(&'static str, String)> {
        vec![
            ("mcp-session-id", self.sid.clone()),
            ("mcp-protocol-version", VERSION.to_owned()),
        ]
    }

    /// POSTs raw bytes on the session.
    async fn raw(&self, body: impl Into<bytes::Bytes>) -> Response<Incoming> {
        let h = self.headers();
        send(self.addr, Method::POST, &hdrs(&h), body).await
    }

    /// Expects `status` and the JSON-RPC `code` (with `id`) for each body.
    async fn expect(&self, bodies: &[&[u8]], status: u16, code: i64, id: Value) {
        for body in bodies {
            let resp = self.raw(body.to_vec()).await;
            let got = resp.status().as_u16();
            let m = message(resp).await;
            let shown = String::from_utf8_lossy(&body[..body.len().min(120)]).into_owned();
            assert_eq!(got, status, "{shown}: {m}");
            assert_eq!(
                (m["error"]["code"].as_i64(), &m["id"]),
                (Some(code), &id),
                "{shown}: {m}"
            );
        }
    }

    /// The session still serves, and the slow call completes.
    async fn still_serving(self) {
        let h = self.headers();
        let resp = post(
            self.addr,
            &hdrs(&h),
            &call(901, "echo", json!({"text": "ok"})),
        )
        .await;
        assert_eq!(resp.status(), 200);
        let m = message(resp).await;
        assert_eq!(m["result"]["content"][0]["text"], "ok", "{m}");
        let slow = self.slow.await.unwrap();
        assert_eq!(slow["id"], 900);
        assert_eq!(slow["result"]["content"][0]["text"], "waited", "{slow}");
    }
}

/// B01 — malformed JSON (truncated, trailing garbage, a BOM prefix): 400 with -32700 and a
/// null id (T25 §Sending Messages; JSON-RPC §5.1).
#[tokio::test]
async fn http_malformed_json_is_400_parse_error() {
    within(async {
        let s = Session::open().await;
        s.expect(
            &[
                br#"{"jsonrpc":"2.0","id":2,"method":"tools/list""#,
                br#"{"jsonrpc":"2.0","id":3,"method":"ping"} trailing"#,
                b"\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}",
                b"",
            ],
            400,
            -32700,
            Value::Null,
        )
        .await;
        s.still_serving().await;
    })
    .await;
}

/// B02 — a body over the limit (`HttpConfig::max_body_size`, default 4 MiB): 413, and the
/// session is unaffected.
#[tokio::test]
async fn http_oversized_body_is_413() {
    within(async {
        let s = Session::open().await;
        let resp = s.raw(vec![b' '; DEFAULT_MAX_BODY_SIZE + 1]).await;
        assert_eq!(resp.status(), 413);
        s.still_serving().await;
    })
    .await;
}

/// B03, B04 — nesting deeper than 128 levels and invalid UTF-8: 400 with -32700, no stack
/// overflow and no lossy decoding.
#[tokio::test]
async fn http_deep_nesting_and_invalid_utf8_are_400_parse_error() {
    within(async {
        let s = Session::open().await;
        let mut deep = br#"{"jsonrpc":"2.0","id":6,"method":"ping","params":{"x":"#.to_vec();
        deep.extend(std::iter::repeat_n(b'[', 100_000));
        deep.extend(std::iter::repeat_n(b']', 100_000));
        deep.extend_from_slice(b"}}");
        s.expect(
            &[
                &deep,
                b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\",\"params\":{\"x\":\"\x80\"}}",
                b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\",\"params\":{\"x\":\"\xed\xa0\x80\"}}",
            ],
            400,
            -32700,
            Value::Null,
        )
        .await;
        s.still_serving().await;
    })
    .await;
}

/// B07, B09 — valid JSON that is not a JSON-RPC message, and ids that are not an integer or
/// a string: 400 with -32600 Invalid Request and a null id.
#[tokio::test]
async fn http_wrong_shapes_are_400_invalid_request() {
    within(async {
        let s = Session::open().await;
        s.expect(
            &[
                b"null",
                b"42",
                br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
                br#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#,
                br#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
            ],
            400,
            -32600,
            Value::Null,
        )
        .await;
        s.expect(
            &[
                br#"{"jsonrpc":"1.0","id":8,"method":"ping"}"#,
                br#"{"jsonrpc":"2.0","id":8,"method":5}"#,
                br#"{"jsonrpc":"2.0","id":8,"method":"ping","params":"x"}"#,
            ],
            400,
            -32600,
            json!(8),
        )
        .await;
        s.still_serving().await;
    })
    .await;
}

/// B08 — a batch (removed after 2025-03-26, T25 §Sending Messages 3: "a single JSON-RPC
/// message"): 400 with -32600; no entry is run.
#[tokio::test]
async fn http_batches_are_400_invalid_request() {
    within(async {
        let s = Session::open().await;
        s.expect(
            &[
                br#"[{"jsonrpc":"2.0","id":9,"method":"ping"},{"jsonrpc":"2.0","id":10,"method":"ping"}]"#,
                b"[]",
            ],
            400,
            -32600,
            Value::Null,
        )
        .await;
        s.still_serving().await;
    })
    .await;
}

/// B50, B51, B52 — case-variant and NUL keys are not envelope keys, and duplicate keys (in
/// the envelope or inside `params`) are rejected: 400 with -32600 and the id
/// (GHSA-wvj2-96wp-fq3f, GHSA-q382-vc8q-7jhj).
#[tokio::test]
async fn http_case_variant_nul_and_duplicate_keys_are_400_invalid_request() {
    within(async {
        let s = Session::open().await;
        s.expect(
            &[
                br#"{"jsonrpc":"2.0","id":12,"Method":"ping"}"#,
                br#"{"jsonrpc":"2.0","id":12,"method\u0000":"ping"}"#,
                br#"{"jsonrpc":"2.0","id":12,"method":"tools/list","method":"tools/call"}"#,
                br#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"echo","name":"wait","arguments":{}}}"#,
                br#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a","text":"b"}}}"#,
            ],
            400,
            -32600,
            json!(12),
        )
        .await;
        s.still_serving().await;
    })
    .await;
}

/// B11 (2025-11-25) and B16 — an unknown method gets -32601 and wrong param types get -32602,
/// each as the JSON-RPC answer of an accepted POST (T25 §Sending Messages 5).
#[tokio::test]
async fn http_unknown_method_and_wrong_param_types() {
    within(async {
        let s = Session::open().await;
        let resp = s
            .raw(json!({"jsonrpc":"2.0","id":16,"method":"no/such"}).to_string())
            .await;
        let m = message(resp).await;
        assert_eq!(
            (m["error"]["code"].as_i64(), &m["id"]),
            (Some(-32601), &json!(16))
        );
        for params in [
            json!({"name": 5}),
            json!({"arguments": {}}),
            json!({"name": "echo", "arguments": "x"}),
        ] {
            let resp = s
                .raw(
                    json!({"jsonrpc":"2.0","id":17,"method":"tools/call","params":params})
                        .to_string(),
                )
                .await;
            let m = message(resp).await;
            assert_eq!(
                (m["error"]["code"].as_i64(), &m["id"]),
                (Some(-32602), &json!(17)),
                "{m}"
            );
        }
        s.still_serving().await;
    })
    .await;
}

/// B11 (2026-07-28) — an unknown method on the modern wire: 404 with -32601 (H26 §Protocol
/// Version Header: "the server MUST respond with 404").
#[tokio::test]
async fn http_unknown_method_modern_is_404() {
    within(async {
        let (addr, _) = start(HttpConfig::default()).await;
        let body = json!({"jsonrpc":"2.0","id":1,"method":"no/such","params":{"_meta":envelope()}});
        let resp = post(
            addr,
            &[
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "no/such"),
            ],
            &body,
        )
        .await;
        assert_eq!(resp.status(), 404);
        let m = message(resp).await;
        assert_eq!(m["error"]["code"], -32601, "{m}");
        // The server keeps serving on the modern wire.
        let h = modern_headers("echo");
        let resp = post(
            addr,
            &hdrs(&h),
            &modern_call(2, "echo", json!({"text": "ok"})),
        )
        .await;
        assert_eq!(resp.status(), 200);
        assert_eq!(message(resp).await["result"]["content"][0]["text"], "ok");
    })
    .await;
}

/// B13, B24 — a handshake-era request before `initialize` (no session): 400, and `initialize`
/// still works afterwards (T25 §Session Management 2).
#[tokio::test]
async fn http_requests_before_initialize_are_400() {
    within(async {
        let (addr, _) = start(HttpConfig::default()).await;
        let resp = post(
            addr,
            &[("mcp-protocol-version", VERSION)],
            &json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}),
        )
        .await;
        assert_eq!(resp.status(), 400);
        let sid = open_session(addr, VERSION).await;
        assert!(!sid.is_empty());
    })
    .await;
}

/// B12 — a request id already in flight on the session: -32600 with that id; the first call
/// is untouched and completes.
#[tokio::test]
async fn http_duplicate_request_id_in_flight_is_rejected() {
    within(async {
        let s = Session::open().await;
        let resp = s
            .raw(call(900, "echo", json!({"text": "dup"})).to_string())
            .await;
        let m = message(resp).await;
        assert_eq!(
            (m["error"]["code"].as_i64(), &m["id"]),
            (Some(-32600), &json!(900)),
            "{m}"
        );
        s.still_serving().await;
    })
    .await;
}
