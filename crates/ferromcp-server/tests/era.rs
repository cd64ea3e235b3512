//! Era detection and locking on stream transports (`serve_stream` over `memory_pair()`, the
//! client side driven with raw frames), and the 2026-07-28 behaviour of the kernel: envelope
//! classification, result shaping, no back channel, listen-only change notifications and
//! log gating.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::atomic::{AtomicU64, Ordering};

use common::{Raw, assert_code, envelope, init_params, modern, modern_with, serve_raw, within};
use ferromcp_dispatch::memory_pair;
use ferromcp_server::{CacheHint, RequestContext, Server, StreamConfig, era_of_opening_request};
use ferromcp_types::jsonrpc::{DecodeError, ErrorCode, ErrorObject, Message, Payload};
use ferromcp_types::mcp::{
    CacheScope, Implementation, LoggingLevel, PaginatedRequestParams, SetLevelRequestParams,
};
use ferromcp_types::{Era, ProtocolVersion};
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// The server the era tests run against; `acme/note` notifications are reported to `notes`.
fn era_server(notes: mpsc::UnboundedSender<Value>) -> Server {
    let mut info = Implementation::new("era-test", "2.0.0");
    info.title = Some("Era Test".into());
    Server::builder("ignored", "0")
        .info(info)
        .instructions("era instructions")
        .cache_hint("tools/list", CacheHint::new(5000, CacheScope::Public))
        .on_request("tools/list", |_ctx: RequestContext, _p: PaginatedRequestParams| async {
            Ok(json!({"tools": []}))
        })
        .on_request("resources/list", |_ctx: RequestContext, _p: Value| async {
            Ok(json!({"resources": [], "ttlMs": 7}))
        })
        .on_request("prompts/list", |_ctx: RequestContext, _p: Value| async {
            Ok(json!({"prompts": []}))
        })
        .on_request("resources/templates/list", |_ctx: RequestContext, _p: Value| async {
            Ok(json!({"resourceTemplates": "wrong"}))
        })
        .on_request("logging/setLevel", |ctx: RequestContext, p: SetLevelRequestParams| async move {
            ctx.connection().set_log_level(p.level);
            Ok(json!({}))
        })
        .on_request("acme/echo", |_ctx: RequestContext, p: Value| async move {
            Ok(json!({ "params": p }))
        })
        .on_request("acme/stamped", |_ctx: RequestContext, _p: Value| async {
            Ok(json!({"_meta": {"io.modelcontextprotocol/serverInfo": {"name": "mine", "version": "9"}}}))
        })
        .on_request("resources/read", |_ctx: RequestContext, p: Value| async move {
            if p["uri"] == "file:///more" {
                return Ok(json!({"resultType": "input_required", "requestState": "s1"}));
            }
            Ok(json!({"contents": [{"uri": p["uri"], "text": "hi"}]}))
        })
        .on_request("acme/meta", |_ctx: RequestContext, _p: Value| async {
            Ok(json!({"_meta": {"x": 1, "io.modelcontextprotocol/serverInfo": null}}))
        })
        .on_request("acme/whoami", |ctx: RequestContext, _p: Value| async move {
            Ok(json!({
                "version": ctx.protocol_version().as_str(),
                "client": ctx.connection().client_info().map(|i| i.name),
                "caps": ctx.connection().client_capabilities().is_some(),
                "initialized": ctx.connection().is_initialized(),
                "canSend": ctx.connection().can_send_requests(),
            }))
        })
        .on_request("acme/count", |ctx: RequestContext, _p: Value| async move {
            let n = ctx
                .connection()
                .state_or_insert_with(|| AtomicU64::new(0))
                .fetch_add(1, Ordering::SeqCst)
                + 1;
            Ok(json!({ "n": n }))
        })
        .on_request("acme/ask", |ctx: RequestContext, _p: Value| async move {
            let code = |r: Result<Payload, ErrorObject>| match r {
                Ok(_) => json!("ok"),
                Err(e) => json!(e.code.0),
            };
            let peer = ctx
                .peer()
                .send_request("roots/list", None, Default::default())
                .await;
            let connection = ctx
                .connection()
                .send_request("roots/list", None, Default::default())
                .await;
            Ok(json!({"peer": code(peer), "connection": code(connection)}))
        })
        .on_request("acme/changes", |ctx: RequestContext, _p: Value| async move {
            let conn = ctx.connection();
            conn.notify_tools_list_changed().await;
            conn.notify_prompts_list_changed().await;
            conn.notify_resources_list_changed().await;
            conn.notify_resource_updated("file:///a").await;
            conn.notify("acme/other", None).await;
            Ok(json!({}))
        })
        .on_request("acme/log", |ctx: RequestContext, _p: Value| async move {
            for level in [LoggingLevel::Debug, LoggingLevel::Warning, LoggingLevel::Error] {
                ctx.log(level, Some("era"), json!(format!("{level:?}"))).await;
            }
            Ok(json!({}))
        })
        .on_notification_method("acme/note", move |_ctx: RequestContext, p: Value| {
            let notes = notes.clone();
            async move {
                let _ = notes.send(p);
                Ok(())
            }
        })
        .build()
        .unwrap()
}

fn server() -> Server {
    era_server(mpsc::unbounded_channel().0)
}

/// The levels of the `notifications/message` frames seen so far, emptying `raw.seen`.
fn logged_levels(raw: &mut Raw) -> Vec<String> {
    raw.seen
        .drain(..)
        .filter(|f| f.message.method() == Some("notifications/message"))
        .map(|f| match f.message {
            Message::Notification(n) => {
                let p = n.params.unwrap().into_value().unwrap();
                p["level"].as_str().unwrap().to_owned()
            }
            _ => unreachable!(),
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Detection and locking.
// ---------------------------------------------------------------------------------------------

/// The era is modern iff the opening request is not `initialize` and its `params._meta` has
/// the protocol-version key (the key alone is the signal).
#[test]
fn era_of_the_opening_request() {
    let p = |v: Value| Some(Payload::from(v));
    let env = json!({"_meta": envelope()});
    assert_eq!(
        era_of_opening_request("tools/list", p(env.clone()).as_ref()),
        Era::Modern
    );
    assert_eq!(
        era_of_opening_request("acme/x", p(env.clone()).as_ref()),
        Era::Modern
    );
    assert_eq!(
        era_of_opening_request("initialize", p(env).as_ref()),
        Era::Handshake
    );
    let version_only = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": 5}});
    assert_eq!(
        era_of_opening_request("tools/list", p(version_only).as_ref()),
        Era::Modern
    );
    let caps_only = json!({"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}});
    assert_eq!(
        era_of_opening_request("tools/list", p(caps_only).as_ref()),
        Era::Handshake
    );
    assert_eq!(
        era_of_opening_request("server/discover", None),
        Era::Handshake
    );
    assert_eq!(
        era_of_opening_request("tools/list", p(json!({"_meta": 3})).as_ref()),
        Era::Handshake
    );
    assert_eq!(
        era_of_opening_request("tools/list", p(json!([1])).as_ref()),
        Era::Handshake
    );
}

/// A modern opening request locks the stream modern: it is served at 2026-07-28, and a later
/// `initialize` is -32022 with the supported versions (and the requested one) in `data`.
#[tokio::test]
async fn modern_opening_request_locks_the_stream_modern() {
    within(async {
        let (mut raw, _task) = serve_raw(&server());
        let who = raw.ok(1, "acme/whoami", Some(modern(json!({})))).await;
        assert_eq!(who["version"], "2026-07-28");
        assert_eq!(who["initialized"], true);
        assert_eq!(who["canSend"], false);
        assert_eq!(who["caps"], true);
        assert_eq!(who["client"], Value::Null, "clientInfo is optional");

        let e = raw
            .fail(2, "initialize", Some(init_params("2025-11-25")))
            .await;
        assert_code(&e, ErrorCode::UNSUPPORTED_PROTOCOL_VERSION);
        assert_eq!(
            e.data,
            Some(json!({"supported": ["2026-07-28"], "requested": "2025-11-25"}))
        );
        // `requested` only when the asked version is a string.
        let e = raw
            .fail(3, "initialize", Some(json!({"protocolVersion": 1})))
            .await;
        assert_code(&e, ErrorCode::UNSUPPORTED_PROTOCOL_VERSION);
        assert_eq!(e.data, Some(json!({"supported": ["2026-07-28"]})));
        // An enveloped initialize is no different.
        let e = raw
            .fail(4, "initialize", Some(modern(init_params("2026-07-28"))))
            .await;
        assert_code(&e, ErrorCode::UNSUPPORTED_PROTOCOL_VERSION);

        // The stream stays modern.
        let mut meta = envelope();
        meta["io.modelcontextprotocol/clientInfo"] = json!({"name": "raw", "version": "1"});
        let who = raw
            .ok(5, "acme/whoami", Some(modern_with(json!({}), meta)))
            .await;
        assert_eq!(who["client"], "raw");
    })
    .await;
}

/// `initialize` (even one carrying the envelope) opens the handshake era; enveloped requests
/// on a handshake-locked stream are -32600.
#[tokio::test]
async fn initialize_locks_the_stream_handshake() {
    within(async {
        let (mut raw, _task) = serve_raw(&server());
        let r = raw
            .ok(1, "initialize", Some(modern(init_params("2025-06-18"))))
            .await;
        assert_eq!(r["protocolVersion"], "2025-06-18");
        raw.notify("notifications/initialized", None).await;
        let e = raw.fail(2, "tools/list", Some(modern(json!({})))).await;
        assert_code(&e, ErrorCode::INVALID_REQUEST);
        let who = raw.ok(3, "acme/whoami", None).await;
        assert_eq!(who["version"], "2025-06-18");
        assert_eq!(who["client"], "kernel-tests");
        assert_eq!(who["canSend"], true);
        // Per-connection state lives across requests in the handshake era.
        raw.ok(4, "acme/count", None).await;
        assert_eq!(raw.ok(5, "acme/count", None).await, json!({"n": 2}));
    })
    .await;
}

/// A bare `server/discover` opens the handshake era, where it does not exist (-32601).
#[tokio::test]
async fn bare_discover_opens_the_handshake_era() {
    within(async {
        let (mut raw, _task) = serve_raw(&server());
        let e = raw.fail(1, "server/discover", None).await;
        assert_code(&e, ErrorCode::METHOD_NOT_FOUND);
        assert_eq!(e.data, Some(json!("server/discover")));
        raw.ok(2, "initialize", Some(init_params("2025-11-25")))
            .await;
        let e = raw
            .fail(3, "server/discover", Some(modern(json!({}))))
            .await;
        assert_code(&e, ErrorCode::INVALID_REQUEST);
    })
    .await;
}

/// Frames before the first request are replayed into the chosen loop: a
/// `notifications/initialized` readies a handshake connection, a custom notification reaches
/// its handler on a modern stream.
#[tokio::test]
async fn frames_before_the_first_request_are_replayed() {
    within(async {
        let (mut raw, _task) = serve_raw(&server());
        raw.notify("notifications/initialized", None).await;
        raw.ok(1, "tools/list", None).await;

        let (tx, mut rx) = mpsc::unbounded_channel();
        let (mut raw, _task) = serve_raw(&era_server(tx));
        raw.notify("acme/note", Some(json!({"early": true}))).await;
        raw.ok(1, "acme/echo", Some(modern(json!({})))).await;
        assert_eq!(within(rx.recv()).await.unwrap(), json!({"early": true}));
        assert!(
            raw.seen.is_empty(),
            "notifications are not answered: {:?}",
            raw.seen
        );
    })
    .await;
}

/// At most `replay_limit` frames before the first request are kept.
#[tokio::test]
async fn replay_is_bounded() {
    within(async {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let server = era_server(tx);
        let (a, b) = memory_pair(64);
        let config = StreamConfig::default().replay_limit(1);
        let _task = tokio::spawn(async move {
            ferromcp_server::serve_stream(&server, b.source, b.sink, config).await
        });
        let mut raw = Raw::new(a.sink, a.source);
        raw.notify("acme/note", Some(json!(1))).await;
        raw.notify("acme/note", Some(json!(2))).await;
        raw.ok(1, "acme/echo", Some(modern(json!({})))).await;
        raw.notify("acme/note", Some(json!(3))).await;
        let mut got = vec![
            within(rx.recv()).await.unwrap(),
            within(rx.recv()).await.unwrap(),
        ];
        got.sort_by_key(|v| v.as_i64());
        assert_eq!(got, [json!(1), json!(3)]);
        raw.ok(2, "acme/echo", Some(modern(json!({})))).await;
        assert!(rx.try_recv().is_err());
    })
    .await;
}

/// A framing error before the first request is answered at once with -32700 and a null id;
/// serving goes on.
#[tokio::test]
async fn framing_error_before_the_first_request_is_a_parse_error() {
    within(async {
        let (mut raw, _task) = serve_raw(&server());
        raw.sink
            .send_decode_error(DecodeError::Parse("not json".into()))
            .await
            .unwrap();
        let frame = raw.next().await;
        let Message::Error(e) = frame.message else {
            panic!("expected an error response, got {:?}", frame.message);
        };
        assert_eq!(e.id, None);
        assert_code(&e.error, ErrorCode::PARSE_ERROR);
        raw.ok(1, "acme/echo", Some(modern(json!({})))).await;
        // After the lock the dispatcher answers framing errors the same way.
        raw.sink
            .send_decode_error(DecodeError::Parse("still not json".into()))
            .await
            .unwrap();
        let frame = raw.next().await;
        let Message::Error(e) = frame.message else {
            panic!("expected an error response, got {:?}", frame.message);
        };
        assert_eq!(e.id, None);
        assert_code(&e.error, ErrorCode::PARSE_ERROR);
    })
    .await;
}

// ---------------------------------------------------------------------------------------------
// The envelope on a modern stream.
// ---------------------------------------------------------------------------------------------

/// Missing envelope keys are -32602; an unsupported version in the envelope is -32022.
#[tokio::test]
async fn modern_envelope_is_classified() {
    within(async {
        let (mut raw, _task) = serve_raw(&server());
        raw.ok(1, "acme/echo", Some(modern(json!({})))).await;

        let no_caps = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}});
        let e = raw.fail(2, "tools/list", Some(no_caps)).await;
        assert_code(&e, ErrorCode::INVALID_PARAMS);
        let e = raw.fail(3, "tools/list", None).await;
        assert_code(&e, ErrorCode::INVALID_PARAMS);
        let e = raw.fail(4, "tools/list", Some(json!({}))).await;
        assert_code(&e, ErrorCode::INVALID_PARAMS);
        let no_version = json!({"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}});
        let e = raw.fail(5, "tools/list", Some(no_version)).await;
        assert_code(&e, ErrorCode::INVALID_PARAMS);
        let number = json!({"_meta": {
            "io.modelcontextprotocol/protocolVersion": 2026,
            "io.modelcontextprotocol/clientCapabilities": {},
        }});
        let e = raw.fail(6, "tools/list", Some(number)).await;
        assert_code(&e, ErrorCode::INVALID_PARAMS);

        for version in ["2025-11-25", "2099-01-01"] {
            let params = json!({"_meta": {
                "io.modelcontextprotocol/protocolVersion": version,
                "io.modelcontextprotocol/clientCapabilities": {},
            }});
            let e = raw.fail(7, "tools/list", Some(params)).await;
            assert_code(&e, ErrorCode::UNSUPPORTED_PROTOCOL_VERSION);
            assert_eq!(
                e.data,
                Some(json!({"supported": ["2026-07-28"], "requested": version}))
            );
        }
        raw.ok(8, "tools/list", Some(modern(json!({})))).await;
    })
    .await;
}

/// An unsupported version in the opening request still locks modern, and is -32022.
#[tokio::test]
async fn unsupported_version_in_the_opening_request() {
    within(async {
        let (mut raw, _task) = serve_raw(&server());
        let params = json!({"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2099-01-01",
            "io.modelcontextprotocol/clientCapabilities": {},
        }});
        let e = raw.fail(1, "tools/list", Some(params)).await;
        assert_code(&e, ErrorCode::UNSUPPORTED_PROTOCOL_VERSION);
        let e = raw
            .fail(2, "initialize", Some(init_params("2025-11-25")))
            .await;
        assert_code(&e, ErrorCode::UNSUPPORTED_PROTOCOL_VERSION);
    })
    .await;
}

/// Rung 1 at 2026-07-28: `ping` does not exist (-32601, data "ping"); nor do the other
/// handshake-only methods.
#[tokio::test]
async fn modern_ping_is_method_not_found() {
    within(async {
        let (mut raw, _task) = serve_raw(&server());
        let e = raw.fail(1, "ping", Some(modern(json!({})))).await;
        assert_code(&e, ErrorCode::METHOD_NOT_FOUND);
        assert_eq!(e.data, Some(json!("ping")));
        let e = raw
            .fail(
                2,
                "logging/setLevel",
                Some(modern(json!({"level": "info"}))),
            )
            .await;
        assert_code(&e, ErrorCode::METHOD_NOT_FOUND);
        assert_eq!(e.data, Some(json!("logging/setLevel")));
    })
    .await;
}

/// Each modern request runs on a connection built from its own envelope: no per-connection
/// state carries over between requests.
#[tokio::test]
async fn modern_requests_are_stateless() {
    within(async {
        let (mut raw, _task) = serve_raw(&server());
        for id in 1..=2 {
            let r = raw.ok(id, "acme/count", Some(modern(json!({})))).await;
            assert_eq!(r["n"], 1);
        }
    })
    .await;
}

// ---------------------------------------------------------------------------------------------
// Result shaping and discover at 2026-07-28.
// ---------------------------------------------------------------------------------------------

fn stamp() -> Value {
    json!({"name": "era-test", "title": "Era Test", "version": "2.0.0"})
}

/// At 2026-07-28: cache hints from the server's defaults unless the handler set them,
/// `resultType` on every result (custom methods too), serverInfo stamped into `_meta` unless
/// the handler set it.
#[tokio::test]
async fn modern_results_are_shaped() {
    within(async {
        let (mut raw, _task) = serve_raw(&server());
        let tools = raw.ok(1, "tools/list", Some(modern(json!({})))).await;
        assert_eq!(
            tools,
            json!({
                "tools": [],
                "ttlMs": 5000,
                "cacheScope": "public",
                "resultType": "complete",
                "_meta": {"io.modelcontextprotocol/serverInfo": stamp()},
            })
        );
        let resources = raw.ok(2, "resources/list", Some(modern(json!({})))).await;
        assert_eq!(resources["ttlMs"], 7, "the handler's value wins");
        assert_eq!(
            resources["cacheScope"], "private",
            "the default fills the rest"
        );
        let prompts = raw.ok(3, "prompts/list", Some(modern(json!({})))).await;
        assert_eq!(prompts["ttlMs"], 0);
        assert_eq!(prompts["cacheScope"], "private");

        let custom = raw.ok(4, "acme/echo", Some(modern(json!({"a": 1})))).await;
        assert_eq!(custom["resultType"], "complete");
        assert_eq!(
            custom["_meta"]["io.modelcontextprotocol/serverInfo"],
            stamp()
        );
        assert!(
            custom.get("ttlMs").is_none(),
            "custom methods get no cache hints"
        );

        let mine = raw.ok(5, "acme/stamped", Some(modern(json!({})))).await;
        assert_eq!(
            mine["_meta"]["io.modelcontextprotocol/serverInfo"],
            json!({"name": "mine", "version": "9"})
        );
        assert_eq!(mine["resultType"], "complete");

        // The handler's other `_meta` keys stay; an explicit null serverInfo is overwritten.
        let meta = raw.ok(7, "acme/meta", Some(modern(json!({})))).await;
        assert_eq!(
            meta["_meta"],
            json!({"x": 1, "io.modelcontextprotocol/serverInfo": stamp()})
        );

        // A cacheable method: hints on a complete result, none on an input-required one.
        let read = raw
            .ok(
                8,
                "resources/read",
                Some(modern(json!({"uri": "file:///a"}))),
            )
            .await;
        assert_eq!(read["ttlMs"], 0);
        assert_eq!(read["resultType"], "complete");
        let more = raw
            .ok(
                9,
                "resources/read",
                Some(modern(json!({"uri": "file:///more"}))),
            )
            .await;
        assert_eq!(more["resultType"], "input_required");
        assert_eq!(more["requestState"], "s1");
        assert!(more.get("ttlMs").is_none(), "{more}");
        assert!(more.get("cacheScope").is_none(), "{more}");

        // A result that does not fit its type: -32603, no details.
        let e = raw
            .fail(6, "resources/templates/list", Some(modern(json!({}))))
            .await;
        assert_code(&e, ErrorCode::INTERNAL_ERROR);
        assert!(e.data.is_none());
    })
    .await;
}

/// `server/discover` at 2026-07-28: the supported versions, the capabilities, the
/// instructions and the cache hints.
#[tokio::test]
async fn modern_discover() {
    within(async {
        let (mut raw, _task) = serve_raw(&server());
        let d = raw.ok(1, "server/discover", Some(modern(json!({})))).await;
        assert_eq!(d["supportedVersions"], json!(["2026-07-28"]));
        assert!(d["capabilities"]["tools"].is_object(), "{d}");
        assert!(d["capabilities"]["prompts"].is_object(), "{d}");
        assert!(
            d["capabilities"]["tools"].get("listChanged").is_none(),
            "{d}"
        );
        assert_eq!(d["instructions"], "era instructions");
        assert_eq!(d["ttlMs"], 0);
        assert_eq!(d["cacheScope"], "private");
        assert_eq!(d["resultType"], "complete");
        assert_eq!(d["_meta"]["io.modelcontextprotocol/serverInfo"], stamp());
        assert_eq!(
            serde_json::to_value(server().capabilities(ProtocolVersion::V2026_07_28)).unwrap(),
            d["capabilities"]
        );

        let hinted = Server::builder("d", "0")
            .cache_hint(
                "server/discover",
                CacheHint::new(60_000, CacheScope::Public),
            )
            .build()
            .unwrap();
        let (mut raw, _task) = serve_raw(&hinted);
        let d = raw.ok(1, "server/discover", Some(modern(json!({})))).await;
        assert_eq!(d["ttlMs"], 60_000);
        assert_eq!(d["cacheScope"], "public");
    })
    .await;
}

// ---------------------------------------------------------------------------------------------
// Outbound restrictions at 2026-07-28.
// ---------------------------------------------------------------------------------------------

/// Modern requests cannot send server→client requests: -32600 from the session and from the
/// connection; no request reaches the client.
#[tokio::test]
async fn modern_requests_have_no_back_channel() {
    within(async {
        let (mut raw, _task) = serve_raw(&server());
        let r = raw.ok(1, "acme/ask", Some(modern(json!({})))).await;
        assert_eq!(r["peer"], -32600);
        assert_eq!(r["connection"], -32600);
        assert!(raw.seen.is_empty(), "{:?}", raw.seen);
    })
    .await;
}

/// List-changed and resource-updated notifications are not sent on a modern stream (they
/// belong to `subscriptions/listen`); other notifications are. On a handshake stream all are.
#[tokio::test]
async fn change_notifications_are_not_sent_on_a_modern_stream() {
    within(async {
        let (mut raw, _task) = serve_raw(&server());
        raw.ok(1, "acme/changes", Some(modern(json!({})))).await;
        assert_eq!(raw.take_seen_methods(), ["acme/other"]);

        let (mut raw, _task) = serve_raw(&server());
        raw.ok(1, "initialize", Some(init_params("2025-11-25")))
            .await;
        raw.notify("notifications/initialized", None).await;
        raw.ok(2, "acme/changes", None).await;
        assert_eq!(
            raw.take_seen_methods(),
            [
                "notifications/tools/list_changed",
                "notifications/prompts/list_changed",
                "notifications/resources/list_changed",
                "notifications/resources/updated",
                "acme/other",
            ]
        );
    })
    .await;
}

/// At 2026-07-28 log notifications are sent only when the request opted in with
/// `io.modelcontextprotocol/logLevel`, and only at or above that level.
#[tokio::test]
async fn modern_logging_needs_the_per_request_opt_in() {
    within(async {
        let (mut raw, _task) = serve_raw(&server());
        raw.ok(1, "acme/log", Some(modern(json!({})))).await;
        assert!(logged_levels(&mut raw).is_empty());

        let opt_in = |level: &str| {
            let mut meta = envelope();
            meta["io.modelcontextprotocol/logLevel"] = json!(level);
            modern_with(json!({}), meta)
        };
        raw.ok(2, "acme/log", Some(opt_in("warning"))).await;
        assert_eq!(logged_levels(&mut raw), ["warning", "error"]);
        raw.ok(3, "acme/log", Some(opt_in("debug"))).await;
        assert_eq!(logged_levels(&mut raw), ["debug", "warning", "error"]);
        // An unknown level opens nothing.
        raw.ok(4, "acme/log", Some(opt_in("chatty"))).await;
        assert!(logged_levels(&mut raw).is_empty());
        // The opt-in is per request.
        raw.ok(5, "acme/log", Some(modern(json!({})))).await;
        assert!(logged_levels(&mut raw).is_empty());
    })
    .await;
}

/// Before 2026-07-28 every level is sent until `logging/setLevel` (through
/// `ctx.connection().set_log_level`) sets a minimum; log records relate to their request.
#[tokio::test]
async fn handshake_logging_follows_set_level() {
    within(async {
        let (mut raw, _task) = serve_raw(&server());
        raw.ok(1, "initialize", Some(init_params("2025-11-25")))
            .await;
        raw.notify("notifications/initialized", None).await;
        raw.ok(2, "acme/log", None).await;
        assert!(
            raw.seen
                .iter()
                .all(|f| f.meta.related_request_id == Some(2.into()))
        );
        assert_eq!(logged_levels(&mut raw), ["debug", "warning", "error"]);
        raw.ok(3, "logging/setLevel", Some(json!({"level": "warning"})))
            .await;
        raw.ok(4, "acme/log", None).await;
        assert_eq!(logged_levels(&mut raw), ["warning", "error"]);
        // An envelope's logLevel means nothing here (and the envelope itself is refused).
        let e = raw.fail(5, "acme/log", Some(modern(json!({})))).await;
        assert_code(&e, ErrorCode::INVALID_REQUEST);
    })
    .await;
}

/// A modern request's connection lives for that request only: its cleanup hooks run when
/// the request is done, before the answer is sent.
#[tokio::test]
async fn modern_request_connection_is_closed_after_the_request() {
    within(async {
        let (tx, mut rx) = mpsc::unbounded_channel::<Value>();
        let server = Server::builder("close", "0")
            .on_request("acme/hook", move |ctx: RequestContext, _p: Value| {
                let tx = tx.clone();
                async move {
                    let id = ctx.request_id().unwrap().to_string();
                    ctx.connection().on_close(move || async move {
                        let _ = tx.send(json!(id));
                    });
                    Ok(json!({}))
                }
            })
            .build()
            .unwrap();
        let (mut raw, _task) = serve_raw(&server);
        raw.ok(1, "acme/hook", Some(modern(json!({})))).await;
        assert_eq!(rx.try_recv().unwrap(), json!("1"));
        raw.ok(2, "acme/hook", Some(modern(json!({})))).await;
        assert_eq!(rx.try_recv().unwrap(), json!("2"));
    })
    .await;
}

/// Notifications on a modern stream are never answered, and handshake-only ones are dropped.
#[tokio::test]
async fn modern_notifications_are_never_answered() {
    within(async {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let (mut raw, _task) = serve_raw(&era_server(tx));
        raw.ok(1, "acme/echo", Some(modern(json!({})))).await;
        raw.notify("notifications/initialized", None).await;
        raw.notify("acme/unknown", None).await;
        raw.notify("acme/note", Some(json!({"late": true}))).await;
        assert_eq!(within(rx.recv()).await.unwrap(), json!({"late": true}));
        raw.ok(2, "acme/echo", Some(modern(json!({})))).await;
        assert!(raw.seen.is_empty(), "{:?}", raw.seen);
    })
    .await;
}

/// `serve_stream` returns when the client goes: before any request, and on a locked stream
/// of either era.
#[tokio::test]
async fn serving_ends_when_the_client_goes() {
    within(async {
        let (raw, task) = serve_raw(&server());
        drop(raw);
        within(task).await.unwrap().unwrap();

        let (mut raw, task) = serve_raw(&server());
        raw.ok(1, "acme/echo", Some(modern(json!({})))).await;
        drop(raw);
        within(task).await.unwrap().unwrap();

        let (mut raw, task) = serve_raw(&server());
        raw.ok(1, "initialize", Some(init_params("2025-11-25")))
            .await;
        drop(raw);
        within(task).await.unwrap().unwrap();
    })
    .await;
}
