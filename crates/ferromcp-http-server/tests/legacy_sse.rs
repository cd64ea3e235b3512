//! The 2024-11-05 HTTP+SSE transport (`HttpConfig::legacy_sse`): the GET stream's first
//! event names the messages endpoint (SV-H21), messages are accepted with 202 and answered
//! on the stream (SV-H21), it is off by default (SV-H22), and it has the same defences as
//! Streamable HTTP: session ownership and id checks (S63), session caps (S64), Host/Origin
//! (S65), body size and time (S66), a bounded stream queue (S67), keep-alive comments and
//! session end with the stream or the init timeout (S68, S69).
#![allow(clippy::unwrap_used, clippy::panic)]

mod http_support;

use std::net::SocketAddr;
use std::time::Duration;

use ferromcp_http_server::{DEFAULT_LEGACY_MESSAGES_PATH, DEFAULT_LEGACY_SSE_PATH, HttpConfig};
use http::Method;
use http_support::*;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn within<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(60), f)
        .await
        .unwrap()
}

fn sse_config() -> HttpConfig {
    HttpConfig::default().legacy_sse(true)
}

/// GETs `/sse`: the response.
async fn open(addr: SocketAddr, headers: &[(&str, &str)]) -> http::Response<hyper::body::Incoming> {
    let mut all = vec![("accept", "text/event-stream"), ("content-type", "")];
    all.extend_from_slice(headers);
    send_path(addr, Method::GET, "/sse", &all, "").await
}

/// GETs `/sse` and reads the `endpoint` event: the stream and the messages URL.
async fn connect(addr: SocketAddr) -> (Sse, String) {
    let resp = open(addr, &[]).await;
    assert_eq!(resp.status(), 200);
    let mut sse = Sse::new(resp);
    let e = sse.next_event().await.unwrap();
    assert_eq!(e.event.as_deref(), Some("endpoint"));
    (sse, e.data)
}

/// POSTs one message to the messages URL.
async fn send_message(
    addr: SocketAddr,
    url: &str,
    headers: &[(&str, &str)],
    body: &Value,
) -> http::Response<hyper::body::Incoming> {
    send_path(addr, Method::POST, url, headers, body.to_string()).await
}

/// The next `message` event, as JSON.
async fn next_message(sse: &mut Sse) -> Value {
    let e = sse.next_event().await.unwrap();
    assert_eq!(e.event.as_deref(), Some("message"));
    serde_json::from_str(&e.data).unwrap()
}

/// Opens a stream and initializes its session at 2024-11-05: the stream and the URL.
async fn session(addr: SocketAddr) -> (Sse, String) {
    let (mut sse, url) = connect(addr).await;
    let resp = send_message(addr, &url, &[], &initialize(1, "2024-11-05")).await;
    assert_eq!(resp.status(), 202);
    let init = next_message(&mut sse).await;
    assert_eq!(init["result"]["protocolVersion"], "2024-11-05");
    let note = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
    assert_eq!(send_message(addr, &url, &[], &note).await.status(), 202);
    (sse, url)
}

/// SV-H21: the stream's first event is `endpoint`, naming the messages path with an
/// unguessable session id; each POST is accepted with 202 and its answer comes on the stream
/// as a `message` event (the handshake negotiates 2024-11-05); a server→client request goes
/// on the stream too and the client's POSTed answer reaches the handler.
#[tokio::test]
async fn sv_h21_endpoint_event_then_answers_on_the_stream() {
    within(async {
        let (addr, _) = start(sse_config()).await;
        let (mut sse, url) = connect(addr).await;
        let id = url
            .strip_prefix(&format!("{DEFAULT_LEGACY_MESSAGES_PATH}?sessionId="))
            .unwrap();
        assert_eq!(id.len(), 32);
        assert!(id.bytes().all(|b| b.is_ascii_hexdigit()));
        let resp = send_message(addr, &url, &[], &initialize(1, "2024-11-05")).await;
        assert_eq!(resp.status(), 202);
        let init = next_message(&mut sse).await;
        assert_eq!(init["id"], 1);
        assert_eq!(init["result"]["protocolVersion"], "2024-11-05");
        let note = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
        assert_eq!(send_message(addr, &url, &[], &note).await.status(), 202);
        let resp = send_message(addr, &url, &[], &call(2, "echo", json!({"text":"hi"}))).await;
        assert_eq!(resp.status(), 202);
        let answer = next_message(&mut sse).await;
        assert_eq!(answer["id"], 2);
        assert_eq!(answer["result"]["content"][0]["text"], "hi");
        // A server→client request, answered by a POST.
        send_message(addr, &url, &[], &call(3, "ask", json!({}))).await;
        let ask = next_message(&mut sse).await;
        assert_eq!(ask["method"], "roots/list");
        let reply = json!({"jsonrpc":"2.0","id":ask["id"],"result":{"roots":[]}});
        assert_eq!(send_message(addr, &url, &[], &reply).await.status(), 202);
        let answer = next_message(&mut sse).await;
        assert_eq!(answer["id"], 3);
        assert!(answer.get("result").is_some(), "{answer}");
        // A second stream is a second session.
        let (_, other) = connect(addr).await;
        assert_ne!(other, url);
    })
    .await;
}

/// SV-H22: off by default: `/sse` and `/messages` are not served; on, they are served next to
/// Streamable HTTP at `/mcp`, and each path refuses the other methods (405).
#[tokio::test]
async fn sv_h22_off_by_default_and_next_to_streamable_http() {
    within(async {
        let (addr, _) = start(HttpConfig::default()).await;
        assert_eq!(open(addr, &[]).await.status(), 404);
        let resp = send_message(addr, "/messages?sessionId=x", &[], &json!({})).await;
        assert_eq!(resp.status(), 404);
        assert_eq!(DEFAULT_LEGACY_SSE_PATH, "/sse");
        assert!(!HttpConfig::default().legacy_sse);

        let (addr, _) = start(sse_config()).await;
        let sid = open_session(addr, "2025-11-25").await;
        assert_eq!(sid.len(), 32);
        let resp = send_path(addr, Method::POST, "/sse", &[], json!({}).to_string()).await;
        assert_eq!(resp.status(), 405);
        let resp = send_path(addr, Method::GET, "/messages", &[], "").await;
        assert_eq!(resp.status(), 405);
        // Other paths can be chosen.
        let (addr, _) = start(sse_config().legacy_sse_paths("/old/sse", "/old/post")).await;
        let resp = send_path(addr, Method::GET, "/old/sse", &[], "").await;
        let mut sse = Sse::new(resp);
        let e = sse.next_event().await.unwrap();
        assert!(e.data.starts_with("/old/post?sessionId="), "{}", e.data);
    })
    .await;
}

/// S63: a POST without a session id is 400, with a repeated one 400, with an unknown one
/// 404; a session of one wire is not reachable from the other (an SSE session id as
/// `Mcp-Session-Id` on `/mcp`, a Streamable HTTP session id on `/messages`: 404).
#[tokio::test]
async fn s63_sse_session_ids_are_checked() {
    within(async {
        let (addr, _) = start(sse_config()).await;
        let (_sse, url) = session(addr).await;
        let id = url.split_once("sessionId=").unwrap().1.to_owned();
        let ping = json!({"jsonrpc":"2.0","id":9,"method":"ping"});
        let r = send_message(addr, "/messages", &[], &ping).await;
        assert_eq!(r.status(), 400);
        let r = send_message(addr, &format!("{url}&sessionId={id}"), &[], &ping).await;
        assert_eq!(r.status(), 400);
        let guess = format!("/messages?sessionId={}", "0".repeat(32));
        assert_eq!(send_message(addr, &guess, &[], &ping).await.status(), 404);
        let r = post(
            addr,
            &[
                ("mcp-session-id", &id),
                ("mcp-protocol-version", "2025-11-25"),
            ],
            &ping,
        )
        .await;
        assert_eq!(r.status(), 404);
        let sid = open_session(addr, "2025-11-25").await;
        let r = send_message(addr, &format!("/messages?sessionId={sid}"), &[], &ping).await;
        assert_eq!(r.status(), 404);
        // Bad input on a good session: 400 with a JSON-RPC error, and the session goes on.
        let r = send_path(addr, Method::POST, &url, &[], "{not json").await;
        assert_eq!(r.status(), 400);
        let r = send_path(
            addr,
            Method::POST,
            &url,
            &[("content-type", "text/plain")],
            "{}",
        )
        .await;
        assert_eq!(r.status(), 415);
        assert_eq!(send_message(addr, &url, &[], &ping).await.status(), 202);
    })
    .await;
}

/// S63 (feature `auth`): without a token the stream and the messages path answer 401; a
/// session belongs to the principal that opened it: another principal's POST to its id is
/// 404, and does not end it.
#[cfg(feature = "auth")]
#[tokio::test]
async fn s63_sse_sessions_belong_to_their_principal() {
    use ferromcp_http_server::auth::{AuthConfig, Principal, StaticVerifier};
    within(async {
        let verifier = StaticVerifier::new()
            .token("alice-token", Principal::new("alice").scopes(["mcp"]))
            .token("bob-token", Principal::new("bob").scopes(["mcp"]));
        let auth = AuthConfig::new("https://mcp.example/mcp", verifier);
        let (addr, _) = start(sse_config().auth(auth)).await;
        assert_eq!(open(addr, &[]).await.status(), 401);
        let alice = [("authorization", "Bearer alice-token")];
        let bob = [("authorization", "Bearer bob-token")];
        let resp = open(addr, &alice).await;
        assert_eq!(resp.status(), 200);
        let mut sse = Sse::new(resp);
        let url = sse.next_event().await.unwrap().data;
        let init = initialize(1, "2024-11-05");
        assert_eq!(send_message(addr, &url, &[], &init).await.status(), 401);
        assert_eq!(send_message(addr, &url, &bob, &init).await.status(), 404);
        assert_eq!(send_message(addr, &url, &alice, &init).await.status(), 202);
        let answer = next_message(&mut sse).await;
        assert_eq!(answer["result"]["protocolVersion"], "2024-11-05");
    })
    .await;
}

/// S64: every stream is a session under the caps: per peer (429 above
/// `max_sessions_per_peer`) and in total (503 above `max_sessions`); closing a stream gives
/// its place back at once.
#[tokio::test]
async fn s64_sse_sessions_are_capped_per_peer_and_in_total() {
    within(async {
        let (addr, _) = start(sse_config().max_sessions_per_peer(2)).await;
        let a = connect(addr).await;
        let _b = connect(addr).await;
        let r = open(addr, &[]).await;
        assert_eq!(r.status(), 429);
        drop(a);
        let mut reopened = false;
        for _ in 0..100 {
            let r = open(addr, &[]).await;
            if r.status() == 200 {
                reopened = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(reopened, "a closed stream's place was not given back");

        let (addr, _) = start(sse_config().max_sessions(1)).await;
        let _a = connect(addr).await;
        assert_eq!(open(addr, &[]).await.status(), 503);
    })
    .await;
}

/// S65: DNS-rebinding protection on both paths: a foreign `Host` is 421, a foreign `Origin`
/// 403.
#[tokio::test]
async fn s65_sse_paths_check_host_and_origin() {
    within(async {
        let (addr, _) = start(sse_config()).await;
        assert_eq!(open(addr, &[("host", "evil.example")]).await.status(), 421);
        let r = open(addr, &[("origin", "http://evil.example")]).await;
        assert_eq!(r.status(), 403);
        let (_sse, url) = connect(addr).await;
        let ping = json!({"jsonrpc":"2.0","id":1,"method":"ping"});
        let r = send_message(addr, &url, &[("host", "evil.example")], &ping).await;
        assert_eq!(r.status(), 421);
        let r = send_message(addr, &url, &[("origin", "http://evil.example")], &ping).await;
        assert_eq!(r.status(), 403);
    })
    .await;
}

/// S66: the body limits of the messages path: above `max_body_size` 413; a body that does
/// not arrive within `body_timeout` 408.
#[tokio::test]
async fn s66_messages_bodies_are_bounded_in_size_and_time() {
    within(async {
        let config = sse_config()
            .max_body_size(1024)
            .body_timeout(Duration::from_millis(300));
        let (addr, _) = start(config).await;
        let (_sse, url) = connect(addr).await;
        let big = json!({"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"y".repeat(2048)}});
        assert_eq!(send_message(addr, &url, &[], &big).await.status(), 413);
        let mut s = TcpStream::connect(addr).await.unwrap();
        let head = format!(
            "POST {url} HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{{"
        );
        s.write_all(head.as_bytes()).await.unwrap();
        let mut got = vec![0u8; 256];
        let n = tokio::time::timeout(WAIT, s.read(&mut got))
            .await
            .unwrap()
            .unwrap();
        let head = String::from_utf8_lossy(&got[..n]);
        assert!(head.starts_with("HTTP/1.1 408"), "{head}");
    })
    .await;
}

/// S67: a client that does not read its stream is cut off once `stream_queue` frames wait:
/// the stream closes and the session ends (its id then gets 404).
#[tokio::test]
async fn s67_a_stream_that_is_not_read_is_closed() {
    within(async {
        let (addr, _) = start(sse_config().stream_queue(2)).await;
        // A raw GET whose socket is read up to the endpoint event, then never again.
        let mut s = TcpStream::connect(addr).await.unwrap();
        let head =
            format!("GET /sse HTTP/1.1\r\nhost: {addr}\r\naccept: text/event-stream\r\n\r\n");
        s.write_all(head.as_bytes()).await.unwrap();
        let mut got = Vec::new();
        let mut buf = [0u8; 1024];
        // (The body is chunked: the event ends in a blank line before the chunk's CRLF.)
        while !String::from_utf8_lossy(&got)
            .split_once("sessionId=")
            .is_some_and(|(_, rest)| rest.contains("\n\n"))
        {
            let n = s.read(&mut buf).await.unwrap();
            assert!(n > 0);
            got.extend_from_slice(&buf[..n]);
        }
        let text = String::from_utf8_lossy(&got).into_owned();
        let at = text.find("data: ").unwrap() + 6;
        let url = text[at..].lines().next().unwrap().trim().to_owned();
        assert_eq!(
            send_message(addr, &url, &[], &initialize(1, "2024-11-05"))
                .await
                .status(),
            202
        );
        let note = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
        send_message(addr, &url, &[], &note).await;
        let text = "z".repeat(512 * 1024);
        let mut ended = false;
        for i in 0..200 {
            let r = send_message(
                addr,
                &url,
                &[],
                &call(10 + i, "echo", json!({"text": text})),
            )
            .await;
            if r.status() == 404 {
                ended = true;
                break;
            }
            assert_eq!(r.status(), 202);
        }
        assert!(ended, "the unread stream was never cut off");
        drop(s);
    })
    .await;
}

/// S68: an idle stream carries keep-alive comments every `keep_alive`.
#[tokio::test]
async fn s68_idle_streams_carry_keep_alive_comments() {
    within(async {
        let (addr, _) = start(sse_config().keep_alive(Duration::from_millis(100))).await;
        let (mut sse, _url) = connect(addr).await;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        let read = tokio::time::timeout_at(deadline, async {
            while !sse.raw.windows(3).any(|w| w == b":\n\n") {
                // Comments are not events: this waits on the raw bytes only.
                let _ = tokio::time::timeout(Duration::from_millis(150), sse.next_event()).await;
            }
        })
        .await;
        assert!(read.is_ok(), "no keep-alive comment");
    })
    .await;
}

/// S69: a session ends with its stream (the client closed it: its id gets 404 at once, no
/// idle timeout), and a stream that never initializes ends after `init_timeout`.
#[tokio::test]
async fn s69_sessions_end_with_their_stream_or_the_init_timeout() {
    within(async {
        let (addr, _) = start(sse_config().init_timeout(Duration::from_millis(300))).await;
        let (sse, url) = session(addr).await;
        drop(sse);
        let ping = json!({"jsonrpc":"2.0","id":5,"method":"ping"});
        let mut gone = false;
        for _ in 0..100 {
            if send_message(addr, &url, &[], &ping).await.status() == 404 {
                gone = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(gone, "the session outlived its stream");
        // Never initialized: the stream ends after the init timeout.
        let (mut sse, url) = connect(addr).await;
        assert!(sse.next_event().await.is_none(), "the stream did not end");
        assert_eq!(send_message(addr, &url, &[], &ping).await.status(), 404);
    })
    .await;
}
