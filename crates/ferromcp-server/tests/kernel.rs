//! Behaviour of the server kernel (issue "Server kernel and low-level server"): the request
//! ladder, notifications, middleware, the low-level `Server`, `Connection` and
//! `RequestPeer`. The ladder cases run on every transport of `common::Transport`: the direct
//! dispatcher, the JSON-RPC dispatcher on an in-memory stream, and `serve_stream`.
//!
//! The era-specific behaviour of stream transports is in `era.rs`.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{Transport, assert_code, connect, handshake_raw, init_params, serve_raw, within};
use ferromcp_dispatch::{
    CallOptions, DirectDispatcher, Dispatcher, DispatcherConfig, HandlerError, JsonRpcDispatcher,
    memory_pair,
};
use ferromcp_server::middleware::{McpRequest, Next, middleware_fn};
use ferromcp_server::{
    BuildError, CLEANUP_TIMEOUT, CacheHint, Connection, RequestContext, Server, ServerRunner,
};
use ferromcp_types::ProtocolVersion;
use ferromcp_types::jsonrpc::{ErrorCode, ErrorObject, Payload};
use ferromcp_types::mcp::methods::{CallTool, Initialize, ListTools};
use ferromcp_types::mcp::{
    CacheScope, CallToolRequestParams, CallToolResult, InitializeRequestParams, ListToolsResult,
    NotificationParams, PaginatedRequestParams, ResourceUriParams, SetLevelRequestParams,
};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// `acme/required` params: one required field, camelCase on the wire.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Required {
    user_name: String,
}

/// `acme/optional` params: nothing required.
#[derive(Debug, Deserialize)]
struct Optional {
    #[serde(default)]
    verbose: Option<bool>,
}

/// The server most ladder tests run against.
fn ladder_server() -> Server {
    Server::builder("kernel-test", "1.2.3")
        .instructions("use the tools")
        .cache_hint("tools/list", CacheHint::new(5000, CacheScope::Public))
        .on::<ListTools, _, _, _>(|_ctx: RequestContext, _p: PaginatedRequestParams| async {
            Ok(ListToolsResult::new(vec![]))
        })
        .on::<CallTool, _, _, _>(|_ctx: RequestContext, p: CallToolRequestParams| async move {
            if p.name == "panic" {
                panic!("the tool panicked");
            }
            let seen = json!({
                "name": p.name,
                "requestState": p.request_state,
                "arguments": p.arguments,
            });
            Ok(CallToolResult::text(seen.to_string()))
        })
        .on_request(
            "resources/list",
            |_ctx: RequestContext, _p: PaginatedRequestParams| async {
                // A handler that sets the 2026-07-28 fields itself.
                Ok(json!({
                    "resources": [],
                    "ttlMs": 7,
                    "cacheScope": "public",
                    "resultType": "complete",
                }))
            },
        )
        .on_request(
            "completion/complete",
            |_ctx: RequestContext, _p: Value| async { Ok(json!({"completion": {"values": []}})) },
        )
        .on_request(
            "prompts/list",
            |_ctx: RequestContext, _p: PaginatedRequestParams| async {
                // Does not fit ListPromptsResult.
                Ok(json!({"prompts": "not a list, secret detail"}))
            },
        )
        .on_request("acme/echo", |_ctx: RequestContext, p: Value| async move {
            Ok(json!({ "params": p }))
        })
        .on_request("acme/string", |_ctx: RequestContext, _p: Value| async {
            Ok(json!("not an object"))
        })
        .on_request("acme/required", |_ctx: RequestContext, p: Required| async move {
            Ok(json!({ "userName": p.user_name }))
        })
        .on_request("acme/optional", |_ctx: RequestContext, p: Optional| async move {
            Ok(json!({ "verbose": p.verbose }))
        })
        .on_request("acme/count", |ctx: RequestContext, _p: Value| async move {
            let n = ctx
                .connection()
                .state_or_insert_with(|| AtomicU64::new(0))
                .fetch_add(1, Ordering::SeqCst)
                + 1;
            Ok(json!({ "n": n }))
        })
        .build()
        .unwrap()
}

/// The text of the first content block of a `tools/call` result, parsed as JSON.
fn tool_text(result: &Value) -> Value {
    let text = result["content"][0]["text"].as_str().unwrap();
    serde_json::from_str(text).unwrap()
}

// ---------------------------------------------------------------------------------------------
// Rung 1: surface validation of spec methods.
// ---------------------------------------------------------------------------------------------

/// Rung 1: `server/discover` does not exist on a handshake connection: -32601, data = method.
#[tokio::test]
async fn rung1_spec_method_absent_at_version_is_method_not_found() {
    within(async {
        for t in Transport::ALL {
            let c = connect(t, &ladder_server()).await;
            // Before the handshake the seed version (2025-11-25) applies.
            let e = c.fail("server/discover", None).await;
            assert_code(&e, ErrorCode::METHOD_NOT_FOUND);
            assert_eq!(e.data, Some(json!("server/discover")), "{t:?}");
            c.initialize().await;
            let e = c.fail("server/discover", None).await;
            assert_code(&e, ErrorCode::METHOD_NOT_FOUND);
            assert_eq!(e.data, Some(json!("server/discover")), "{t:?}");
            c.shutdown().await;
        }
    })
    .await;
}

/// Rung 1 uses the negotiated version: `tasks/list` (2025-11-25) is -32601 on a 2025-06-18
/// connection although a handler is registered.
#[tokio::test]
async fn rung1_uses_the_negotiated_version() {
    within(async {
        let server = Server::builder("tasks", "0")
            .on_request("tasks/list", |_ctx: RequestContext, _p: Value| async {
                Ok(json!({"tasks": []}))
            })
            .build()
            .unwrap();
        for t in Transport::ALL {
            let c = connect(t, &server).await;
            c.initialize_at("2025-06-18").await;
            let e = c.fail("tasks/list", None).await;
            assert_code(&e, ErrorCode::METHOD_NOT_FOUND);
            assert_eq!(e.data, Some(json!("tasks/list")));
            c.shutdown().await;

            let c = connect(t, &server).await;
            c.initialize_at("2025-11-25").await;
            assert_eq!(c.ok("tasks/list", None).await, json!({"tasks": []}));
            c.shutdown().await;
        }
    })
    .await;
}

/// Rung 1: bad params for a spec method are -32602 even with no handler registered, and even
/// before the handshake.
#[tokio::test]
async fn rung1_bad_params_for_spec_method_without_handler_is_invalid_params() {
    within(async {
        let bare = Server::builder("bare", "0").build().unwrap();
        for t in Transport::ALL {
            let c = connect(t, &bare).await;
            let e = c.fail("tools/call", Some(json!({"arguments": {}}))).await;
            assert_code(&e, ErrorCode::INVALID_PARAMS);
            c.initialize().await;
            let e = c.fail("tools/call", Some(json!({}))).await;
            assert_code(&e, ErrorCode::INVALID_PARAMS);
            let e = c.fail("resources/read", Some(json!({"uri": 5}))).await;
            assert_code(&e, ErrorCode::INVALID_PARAMS);
            // Well-formed params for the same unregistered method: -32601.
            let e = c.fail("tools/call", Some(json!({"name": "x"}))).await;
            assert_code(&e, ErrorCode::METHOD_NOT_FOUND);
            c.shutdown().await;
        }
    })
    .await;
}

/// Rung 1: `initialize` without params fails surface validation (-32602) and does not
/// initialize the connection.
#[tokio::test]
async fn rung1_initialize_without_params_is_invalid_params() {
    within(async {
        let (mut raw, runner, _task) = handshake_raw(&ladder_server());
        let e = raw.fail(1, "initialize", None).await;
        assert_code(&e, ErrorCode::INVALID_PARAMS);
        assert!(!runner.connection().unwrap().is_initialized());
        raw.ok(2, "initialize", Some(init_params("2025-06-18")))
            .await;
    })
    .await;
}

// ---------------------------------------------------------------------------------------------
// Rung 2: `initialize` belongs to the kernel.
// ---------------------------------------------------------------------------------------------

/// Rung 2: a supported handshake version is kept; anything else is answered with 2025-11-25.
#[tokio::test]
async fn rung2_initialize_negotiates_the_version() {
    within(async {
        let cases = [
            ("2024-11-05", "2024-11-05"),
            ("2025-03-26", "2025-03-26"),
            ("2025-06-18", "2025-06-18"),
            ("2025-11-25", "2025-11-25"),
            ("1999-01-01", "2025-11-25"),
            ("2026-07-28", "2025-11-25"),
        ];
        for t in Transport::ALL {
            for (asked, answered) in cases {
                let c = connect(t, &ladder_server()).await;
                let r = c.initialize_at(asked).await;
                assert_eq!(r["protocolVersion"], json!(answered), "{t:?} asked {asked}");
                let runner = c.runner.clone();
                if let Some(runner) = runner {
                    let conn = runner.connection().unwrap();
                    assert_eq!(conn.protocol_version().as_str(), answered);
                    assert!(conn.is_initialized() && conn.handshake_done());
                    assert_eq!(conn.client_info().unwrap().name, "kernel-tests");
                    assert!(conn.client_capabilities().is_some());
                }
                c.shutdown().await;
            }
        }
    })
    .await;
}

/// Rung 2: server info, instructions and capabilities are in the `initialize` result.
#[tokio::test]
async fn rung2_initialize_result_carries_server_info_instructions_and_capabilities() {
    within(async {
        for t in Transport::ALL {
            let c = connect(t, &ladder_server()).await;
            let r = c.initialize().await;
            assert_eq!(r["serverInfo"]["name"], "kernel-test");
            assert_eq!(r["serverInfo"]["version"], "1.2.3");
            assert_eq!(r["instructions"], "use the tools");
            assert!(r["capabilities"]["tools"].is_object());
            assert!(r["capabilities"]["resources"].is_object());
            assert!(r["capabilities"]["completions"].is_object());
            assert!(r.get("resultType").is_none());
            c.shutdown().await;
        }
    })
    .await;
}

/// Rung 2: the `initialize` result is shaped for the negotiated version, like every other
/// result: fields the version does not define (a later revision's capabilities, server-info
/// fields) are dropped.
#[tokio::test]
async fn rung2_initialize_result_is_shaped_for_the_negotiated_version() {
    within(async {
        let mut info = ferromcp_types::mcp::Implementation::new("shaped", "1.0.0");
        info.title = Some("Shaped".into());
        info.website_url = Some("https://example.com".into());
        let server = Server::builder("x", "0")
            .info(info)
            .instructions("hi")
            .on_request(
                "completion/complete",
                |_c: RequestContext, _p: Value| async { Ok(json!({"completion": {"values": []}})) },
            )
            .build()
            .unwrap();
        for t in Transport::ALL {
            let c = connect(t, &server).await;
            let r = c.initialize_at("2024-11-05").await;
            assert_eq!(
                r["serverInfo"],
                json!({"name": "shaped", "version": "1.0.0"}),
                "{t:?}"
            );
            assert!(r["capabilities"].get("completions").is_none(), "{t:?}: {r}");
            assert_eq!(r["instructions"], "hi");
            c.shutdown().await;

            let c = connect(t, &server).await;
            let r = c.initialize_at("2025-06-18").await;
            assert_eq!(r["serverInfo"]["title"], "Shaped", "{t:?}");
            assert!(r["capabilities"]["completions"].is_object(), "{t:?}: {r}");
            c.shutdown().await;
        }
    })
    .await;
}

/// Rung 2: a second `initialize` on an initialized connection is -32600.
#[tokio::test]
async fn rung2_second_initialize_is_invalid_request() {
    within(async {
        for t in Transport::ALL {
            let c = connect(t, &ladder_server()).await;
            c.initialize_at("2025-06-18").await;
            let e = c.fail("initialize", Some(init_params("2025-03-26"))).await;
            assert_code(&e, ErrorCode::INVALID_REQUEST);
            if let Some(runner) = &c.runner {
                let v = runner.connection().unwrap().protocol_version();
                assert_eq!(
                    v,
                    ProtocolVersion::V2025_06_18,
                    "the first handshake stands"
                );
            }
            c.shutdown().await;
        }
    })
    .await;
}

/// Rung 2: registering an `initialize` handler is refused by `build()`.
#[test]
fn rung2_initialize_handler_is_refused() {
    let typed = Server::builder("x", "0")
        .on::<Initialize, _, _, _>(|_ctx: RequestContext, _p: InitializeRequestParams| async {
            Ok(json!({}))
        })
        .build();
    assert!(matches!(typed, Err(BuildError::InitializeHandler)));
    let untyped = Server::builder("x", "0")
        .on_request("initialize", |_ctx: RequestContext, _p: Value| async {
            Ok(json!({}))
        })
        .build();
    assert!(matches!(untyped, Err(BuildError::InitializeHandler)));
}

/// Rung 2: `initialize` runs inline, so a request pipelined right behind it (sent before the
/// answer arrived) already sees the initialized connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rung2_initialize_runs_inline_for_pipelined_requests() {
    within(async {
        for round in 0..20 {
            let server = ladder_server();
            let (mut raw, _runner, _task) = handshake_raw(&server);
            raw.request(1, "initialize", Some(init_params("2025-11-25")))
                .await;
            raw.request(2, "tools/list", None).await;
            raw.answer(1).await.unwrap();
            let r = raw.answer(2).await;
            assert!(r.is_ok(), "round {round}, handshake runner: {r:?}");

            let (mut raw, _task) = serve_raw(&server);
            raw.request(1, "initialize", Some(init_params("2025-11-25")))
                .await;
            raw.request(2, "tools/list", None).await;
            raw.answer(1).await.unwrap();
            let r = raw.answer(2).await;
            assert!(r.is_ok(), "round {round}, serve_stream: {r:?}");
        }
    })
    .await;
}

// ---------------------------------------------------------------------------------------------
// Rung 3: handler lookup, before the init gate.
// ---------------------------------------------------------------------------------------------

/// Rung 3: an unknown method is -32601 (data = method), before initialize as well: the
/// lookup runs before the init gate.
#[tokio::test]
async fn rung3_unknown_method_is_method_not_found_even_before_initialize() {
    within(async {
        for t in Transport::ALL {
            let c = connect(t, &ladder_server()).await;
            let e = c.fail("acme/nothing", None).await;
            assert_code(&e, ErrorCode::METHOD_NOT_FOUND);
            assert_eq!(e.data, Some(json!("acme/nothing")));
            // A spec method with no handler, too.
            let e = c.fail("resources/templates/list", None).await;
            assert_code(&e, ErrorCode::METHOD_NOT_FOUND);
            c.initialize().await;
            let e = c.fail("acme/nothing", None).await;
            assert_code(&e, ErrorCode::METHOD_NOT_FOUND);
            c.shutdown().await;
        }
    })
    .await;
}

// ---------------------------------------------------------------------------------------------
// Rung 4: the init gate.
// ---------------------------------------------------------------------------------------------

/// Rung 4: before initialize a registered method is -32602; `ping` is exempt.
#[tokio::test]
async fn rung4_init_gate_refuses_all_but_ping() {
    within(async {
        for t in Transport::ALL {
            let c = connect(t, &ladder_server()).await;
            let e = c.fail("tools/list", None).await;
            assert_code(&e, ErrorCode::INVALID_PARAMS);
            let e = c.fail("acme/echo", Some(json!({}))).await;
            assert_code(&e, ErrorCode::INVALID_PARAMS);
            let pong = c.ok("ping", None).await;
            assert_eq!(pong, json!({}), "{t:?}");
            c.initialize().await;
            c.ok("tools/list", None).await;
            c.shutdown().await;
        }
    })
    .await;
}

// ---------------------------------------------------------------------------------------------
// Rung 5: typed params.
// ---------------------------------------------------------------------------------------------

/// Rung 5: absent params validate as `{}`: optional-only params pass, required fields fail
/// with -32602 (direct dispatcher, and raw frames without `params` on the JSON-RPC path).
#[tokio::test]
async fn rung5_absent_params_are_an_empty_object() {
    within(async {
        let c = connect(Transport::Direct, &ladder_server()).await;
        c.initialize().await;
        assert_eq!(c.ok("acme/optional", None).await, json!({"verbose": null}));
        assert_eq!(c.ok("acme/echo", None).await, json!({"params": {}}));
        c.ok("tools/list", None).await;
        let e = c.fail("acme/required", None).await;
        assert_code(&e, ErrorCode::INVALID_PARAMS);
        c.shutdown().await;

        let (mut raw, _runner, _task) = handshake_raw(&ladder_server());
        raw.ok(1, "initialize", Some(init_params("2025-11-25")))
            .await;
        assert_eq!(
            raw.ok(2, "acme/optional", None).await,
            json!({"verbose": null})
        );
        assert_eq!(raw.ok(3, "acme/echo", None).await, json!({"params": {}}));
        raw.ok(4, "tools/list", None).await;
        let e = raw.fail(5, "acme/required", None).await;
        assert_code(&e, ErrorCode::INVALID_PARAMS);
    })
    .await;
}

/// Rung 5: params are read by their camelCase wire names only; a snake_case key is not read.
#[tokio::test]
async fn rung5_params_use_camel_case_wire_names_only() {
    within(async {
        for t in Transport::ALL {
            let c = connect(t, &ladder_server()).await;
            c.initialize().await;
            let camel = c
                .ok(
                    "tools/call",
                    Some(json!({"name": "echo", "requestState": "s1"})),
                )
                .await;
            assert_eq!(tool_text(&camel)["requestState"], "s1", "{t:?}");
            let snake = c
                .ok(
                    "tools/call",
                    Some(json!({"name": "echo", "request_state": "s1"})),
                )
                .await;
            assert_eq!(tool_text(&snake)["requestState"], Value::Null, "{t:?}");

            let ok = c
                .ok("acme/required", Some(json!({"userName": "ann"})))
                .await;
            assert_eq!(ok, json!({"userName": "ann"}));
            let e = c
                .fail("acme/required", Some(json!({"user_name": "ann"})))
                .await;
            assert_code(&e, ErrorCode::INVALID_PARAMS);
            c.shutdown().await;
        }
    })
    .await;
}

// ---------------------------------------------------------------------------------------------
// Rung 6: result shaping (handshake era; the 2026-07-28 cases are in era.rs).
// ---------------------------------------------------------------------------------------------

/// Rung 6, before 2026-07-28: no cache hints (neither the server's defaults nor the
/// handler's), no `resultType`, no serverInfo stamp, custom methods included.
#[tokio::test]
async fn rung6_handshake_results_carry_no_2026_fields() {
    within(async {
        for t in Transport::ALL {
            let c = connect(t, &ladder_server()).await;
            c.initialize().await;
            let tools = c.ok("tools/list", None).await;
            assert_eq!(tools, json!({"tools": []}), "{t:?}");
            let resources = c.ok("resources/list", None).await;
            assert_eq!(resources, json!({"resources": []}), "{t:?}");
            let custom = c.ok("acme/echo", Some(json!({"a": 1}))).await;
            assert!(custom.get("resultType").is_none(), "{t:?}: {custom}");
            assert!(custom.get("_meta").is_none(), "{t:?}: {custom}");
            let pong = c.ok("ping", None).await;
            assert_eq!(pong, json!({}));
            c.shutdown().await;
        }
    })
    .await;
}

/// Rung 6 at 2026-07-28 on the single-exchange path (the HTTP modern entry's: a
/// `ServerRunner::modern_exchange` served through the dispatcher's `SingleExchange`): cache
/// hints from the server's defaults, `resultType` on custom methods, the serverInfo stamp.
#[tokio::test]
async fn rung6_modern_results_on_the_single_exchange_path() {
    within(async {
        let runner = Arc::new(ServerRunner::modern_exchange(ladder_server()));
        let (out, _peer) = DirectDispatcher::pair();
        let out: Arc<dyn ferromcp_dispatch::Outbound> = Arc::new(out);
        let exchange = |method: &'static str, params: Option<Value>| {
            ferromcp_dispatch::SingleExchange::new(
                out.clone(),
                ferromcp_dispatch::TransportInfo::new(
                    ferromcp_dispatch::TransportKind::Direct,
                    false,
                ),
            )
            .serve(
                runner.clone(),
                1.into(),
                method.into(),
                params.map(Payload::from_value),
            )
        };
        let ok = |r: Result<Payload, ErrorObject>| r.unwrap().into_value().unwrap();
        let stamp = json!({"name": "kernel-test", "version": "1.2.3"});
        let tools = ok(exchange("tools/list", Some(common::modern(json!({})))).await);
        assert_eq!(
            tools,
            json!({
                "tools": [],
                "ttlMs": 5000,
                "cacheScope": "public",
                "resultType": "complete",
                "_meta": {"io.modelcontextprotocol/serverInfo": stamp},
            })
        );
        let custom = ok(exchange("acme/echo", Some(common::modern(json!({"a": 1})))).await);
        assert_eq!(custom["resultType"], "complete");
        assert_eq!(custom["_meta"]["io.modelcontextprotocol/serverInfo"], stamp);
        // Handshake-only methods do not exist here.
        let e = exchange("ping", Some(common::modern(json!({}))))
            .await
            .unwrap_err();
        assert_code(&e, ErrorCode::METHOD_NOT_FOUND);
        let e = exchange(
            "initialize",
            Some(common::modern(init_params("2025-11-25"))),
        )
        .await
        .unwrap_err();
        assert_code(&e, ErrorCode::METHOD_NOT_FOUND);
        // No envelope: -32602, as on every modern stream.
        let e = exchange("tools/list", Some(json!({}))).await.unwrap_err();
        assert_code(&e, ErrorCode::INVALID_PARAMS);
    })
    .await;
}

/// One error boundary (DESIGN "One entrance"): a handler that panics is answered -32603
/// `Internal error` on the stream path and on the single-exchange path alike, and the
/// single-exchange runner keeps serving.
#[tokio::test]
async fn a_panicking_handler_is_answered_alike_on_every_entrance() {
    within(async {
        let server = || {
            Server::builder("panics", "1")
                .on_request::<Value, Value, _, _>("acme/panic", |_ctx, _p| async move {
                    panic!("a bug in a handler")
                })
                .build()
                .unwrap()
        };
        let runner = Arc::new(ServerRunner::modern_exchange(server()));
        let (out, _peer) = DirectDispatcher::pair();
        let exchange = ferromcp_dispatch::SingleExchange::new(
            Arc::new(out),
            ferromcp_dispatch::TransportInfo::new(ferromcp_dispatch::TransportKind::Direct, false),
        );
        let params = Some(Payload::from_value(common::modern(json!({}))));
        let single = exchange
            .serve(runner.clone(), 1.into(), "acme/panic".into(), params)
            .await
            .unwrap_err();
        let c = connect(Transport::ALL[0], &server()).await;
        c.initialize().await;
        let stream = c.fail("acme/panic", None).await;
        assert_code(&single, ErrorCode::INTERNAL_ERROR);
        assert_eq!(single, stream);
        assert_eq!(single.message, "Internal error");
    })
    .await;
}

/// Rung 6: a result that does not fit the method's result type is -32603 with no details on
/// the wire; so is a custom method's result that is not an object.
#[tokio::test]
async fn rung6_invalid_result_is_internal_error_without_details() {
    within(async {
        for t in Transport::ALL {
            let c = connect(t, &ladder_server()).await;
            c.initialize().await;
            let e = c.fail("prompts/list", None).await;
            assert_code(&e, ErrorCode::INTERNAL_ERROR);
            assert!(e.data.is_none(), "{t:?}: {e:?}");
            assert!(!e.message.contains("secret"), "{t:?}: {e:?}");
            assert!(!e.message.contains("prompts"), "{t:?}: {e:?}");
            let e = c.fail("acme/string", None).await;
            assert_code(&e, ErrorCode::INTERNAL_ERROR);
            assert!(e.data.is_none());
            // The connection goes on.
            c.ok("tools/list", None).await;
            c.shutdown().await;
        }
    })
    .await;
}

/// A panicking handler is answered with -32603 and the next request is served.
#[tokio::test]
async fn panicking_handler_is_internal_error_and_serving_goes_on() {
    within(async {
        for t in Transport::ALL {
            let c = connect(t, &ladder_server()).await;
            c.initialize().await;
            let e = c.fail("tools/call", Some(json!({"name": "panic"}))).await;
            assert_code(&e, ErrorCode::INTERNAL_ERROR);
            assert!(!e.message.contains("panicked"), "{e:?}");
            let r = c.ok("tools/call", Some(json!({"name": "echo"}))).await;
            assert_eq!(tool_text(&r)["name"], "echo");
            c.shutdown().await;
        }
    })
    .await;
}

// ---------------------------------------------------------------------------------------------
// Notifications.
// ---------------------------------------------------------------------------------------------

/// A server whose `acme/note` and `notifications/roots/list_changed` handlers report to `tx`,
/// and whose `acme/fail` handler fails.
fn notes_server(tx: mpsc::UnboundedSender<Value>) -> Server {
    let tx2 = tx.clone();
    Server::builder("notes", "0")
        .on_notification_method("acme/note", move |_ctx: RequestContext, p: Value| {
            let tx = tx.clone();
            async move {
                let _ = tx.send(p);
                Ok(())
            }
        })
        .on_notification_method("acme/fail", |_ctx: RequestContext, _p: Value| async {
            Err(HandlerError::internal("the notification handler failed"))
        })
        .on_notification::<ferromcp_types::mcp::methods::RootsListChanged, _, _>(
            move |ctx: RequestContext, _p: NotificationParams| {
                let tx = tx2.clone();
                async move {
                    assert!(ctx.request_id().is_none());
                    let _ = tx.send(json!("roots changed"));
                    Ok(())
                }
            },
        )
        .build()
        .unwrap()
}

/// Notifications are never answered: not when the handler fails, not when none is
/// registered, not when the params are invalid.
#[tokio::test]
async fn notifications_are_never_answered() {
    within(async {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let (mut raw, _runner, _task) = handshake_raw(&notes_server(tx));
        raw.ok(1, "initialize", Some(init_params("2025-11-25")))
            .await;
        raw.notify("notifications/initialized", None).await;
        raw.notify("acme/fail", Some(json!({}))).await;
        raw.notify("acme/unknown", Some(json!({"x": 1}))).await;
        raw.notify("notifications/progress", Some(json!({"progress": "bad"})))
            .await;
        raw.notify(
            "notifications/roots/list_changed",
            Some(json!("not an object")),
        )
        .await;
        raw.notify("acme/note", Some(json!({"n": 1}))).await;
        assert_eq!(within(rx.recv()).await.unwrap(), json!({"n": 1}));
        // The first frame back is the answer to the ping: nothing answered the notifications.
        assert_eq!(raw.ok(2, "ping", None).await, json!({}));
        assert!(raw.seen.is_empty(), "unexpected frames: {:?}", raw.seen);
    })
    .await;
}

/// `notifications/initialized` marks the connection ready (without `initialize`), and a
/// registered spec notification handler runs once the connection is ready.
#[tokio::test]
async fn initialized_notification_marks_the_connection_ready() {
    within(async {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let server = notes_server(tx);
        let c = connect(Transport::Direct, &server).await;
        let conn = c.runner.as_ref().unwrap().connection().unwrap().clone();
        assert!(!conn.is_initialized());
        c.notify("notifications/initialized", None).await;
        assert!(conn.is_initialized());
        assert!(!conn.handshake_done());
        c.notify("notifications/roots/list_changed", None).await;
        assert_eq!(within(rx.recv()).await.unwrap(), json!("roots changed"));
        c.shutdown().await;

        // Over JSON-RPC, a request right behind the notification sees the ready connection.
        let (mut raw, _runner, _task) = handshake_raw(&ladder_server());
        raw.notify("notifications/initialized", None).await;
        raw.ok(1, "tools/list", None).await;
    })
    .await;
}

/// Before initialization, notifications other than `notifications/initialized` are dropped:
/// their handlers never see them, even when `initialize` follows right behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notifications_before_initialization_are_dropped() {
    within(async {
        for round in 0..20 {
            let (tx, mut rx) = mpsc::unbounded_channel();
            let (mut raw, _runner, _task) = handshake_raw(&notes_server(tx));
            raw.notify("acme/note", Some(json!({"n": "early"}))).await;
            raw.request(1, "initialize", Some(init_params("2025-11-25")))
                .await;
            raw.notify("acme/note", Some(json!({"n": "late"}))).await;
            raw.answer(1).await.unwrap();
            assert_eq!(
                within(rx.recv()).await.unwrap(),
                json!({"n": "late"}),
                "round {round}"
            );
            raw.ok(2, "ping", None).await;
            tokio::task::yield_now().await;
            assert!(
                rx.try_recv().is_err(),
                "round {round}: the early note was seen"
            );
        }
        // Direct dispatcher: the same, without a race to lose.
        let (tx, mut rx) = mpsc::unbounded_channel();
        let c = connect(Transport::Direct, &notes_server(tx)).await;
        c.notify("acme/note", Some(json!({"n": "early"}))).await;
        c.initialize().await;
        c.notify("acme/note", Some(json!({"n": "late"}))).await;
        assert_eq!(within(rx.recv()).await.unwrap(), json!({"n": "late"}));
        assert!(rx.try_recv().is_err());
        c.shutdown().await;
    })
    .await;
}

/// A failing notification handler is only logged: the connection goes on.
#[tokio::test]
async fn failing_notification_handler_is_only_logged() {
    within(async {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let server = notes_server(tx);
        for t in Transport::ALL {
            let c = connect(t, &server).await;
            c.initialize().await;
            c.notify("acme/fail", Some(json!({}))).await;
            c.notify("acme/note", Some(json!({"n": 2}))).await;
            assert_eq!(within(rx.recv()).await.unwrap(), json!({"n": 2}));
            c.ok("ping", None).await;
            c.shutdown().await;
        }
    })
    .await;
}

// ---------------------------------------------------------------------------------------------
// Middleware.
// ---------------------------------------------------------------------------------------------

type Log = Arc<Mutex<Vec<String>>>;

fn record(log: &Log, entry: impl Into<String>) {
    log.lock().unwrap().push(entry.into());
}

/// Records requests (notifications pass too, in tasks of their own: not recorded).
fn recording_layer(log: Log, name: &'static str) -> impl ferromcp_server::middleware::Middleware {
    middleware_fn(move |req: McpRequest, next: Next| {
        let log = log.clone();
        async move {
            if req.is_notification() {
                return next.run(req).await;
            }
            record(&log, format!("{name}>"));
            let r = next.run(req).await;
            record(&log, format!("<{name}"));
            r
        }
    })
}

/// Middleware runs outermost first (in the order added) and unwinds in reverse.
#[tokio::test]
async fn middleware_runs_outermost_first() {
    within(async {
        for t in Transport::ALL {
            let log: Log = Arc::default();
            let inner = log.clone();
            let server = Server::builder("mw", "0")
                .middleware(recording_layer(log.clone(), "a"))
                .middleware(recording_layer(log.clone(), "b"))
                .middleware(recording_layer(log.clone(), "c"))
                .on_request("acme/work", move |_ctx: RequestContext, _p: Value| {
                    let log = inner.clone();
                    async move {
                        record(&log, "handler");
                        Ok(json!({}))
                    }
                })
                .build()
                .unwrap();
            let c = connect(t, &server).await;
            c.initialize().await;
            log.lock().unwrap().clear();
            c.ok("acme/work", None).await;
            assert_eq!(
                *log.lock().unwrap(),
                ["a>", "b>", "c>", "handler", "<c", "<b", "<a"],
                "{t:?}"
            );
            c.shutdown().await;
        }
    })
    .await;
}

/// Security issue, item 11: a request a handler sends the client without a timeout of its own
/// gets the server's `client_request_timeout` (default `DEFAULT_CLIENT_REQUEST_TIMEOUT`): a
/// client that never answers gives the handler -32001 instead of holding it forever.
#[tokio::test]
async fn requests_to_the_client_time_out_by_default() {
    within(async {
        let default = Server::builder("d", "0").build().unwrap();
        assert_eq!(
            default.client_request_timeout(),
            Some(ferromcp_server::DEFAULT_CLIENT_REQUEST_TIMEOUT)
        );
        let server = Server::builder("asks", "0")
            .client_request_timeout(Some(Duration::from_millis(100)))
            .on_request("acme/ask", |ctx: RequestContext, _p: Value| async move {
                let e = ctx
                    .peer()
                    .send_request("roots/list", None, CallOptions::new())
                    .await
                    .unwrap_err();
                Ok(json!({ "code": e.code.0 }))
            })
            .build()
            .unwrap();
        let (mut raw, _runner, _task) = handshake_raw(&server);
        raw.ok(1, "initialize", Some(init_params("2025-11-25")))
            .await;
        raw.notify("notifications/initialized", None).await;
        // The client reads the roots/list request and never answers it.
        assert_eq!(raw.ok(2, "acme/ask", None).await, json!({ "code": -32001 }));
        assert!(
            raw.seen.iter().any(|f| matches!(
                &f.message,
                ferromcp_types::jsonrpc::Message::Request(r) if r.method == "roots/list"
            )),
            "{:?}",
            raw.seen
        );
    })
    .await;
}

/// Notifications pass through the middleware stack too (one entrance: the same stack and
/// span as requests). A layer sees `notifications/initialized` and a custom notification,
/// knows them for notifications, and vetoes one by failing: its handler does not run, and
/// nothing is answered.
#[tokio::test]
async fn middleware_sees_and_can_veto_notifications() {
    within(async {
        let log: Log = Arc::default();
        let seen = log.clone();
        let (tx, mut rx) = mpsc::unbounded_channel::<Value>();
        let blocked_tx = tx.clone();
        let server = Server::builder("mw", "0")
            .middleware(middleware_fn(move |req: McpRequest, next: Next| {
                let log = seen.clone();
                async move {
                    if req.is_notification() {
                        record(&log, format!("notification {}", req.method));
                        if req.method == "acme/blocked" {
                            return Err(ErrorObject::invalid_request("blocked").into());
                        }
                    } else {
                        record(&log, format!("request {}", req.method));
                    }
                    next.run(req).await
                }
            }))
            .on_notification_method("acme/blocked", move |_ctx: RequestContext, _p: Value| {
                let tx = blocked_tx.clone();
                async move {
                    let _ = tx.send(json!("the vetoed handler ran"));
                    Ok(())
                }
            })
            .on_notification_method("acme/note", move |_ctx: RequestContext, p: Value| {
                let tx = tx.clone();
                async move {
                    let _ = tx.send(p);
                    Ok(())
                }
            })
            .build()
            .unwrap();
        let (mut raw, _runner, _task) = handshake_raw(&server);
        raw.ok(1, "initialize", Some(init_params("2025-11-25")))
            .await;
        raw.notify("notifications/initialized", None).await;
        raw.notify("acme/blocked", Some(json!({}))).await;
        raw.notify("acme/note", Some(json!({"n": 1}))).await;
        assert_eq!(within(rx.recv()).await.unwrap(), json!({"n": 1}));
        // Each notification runs in its own task: wait until the layer saw all three.
        while log.lock().unwrap().len() < 4 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let mut entries = log.lock().unwrap().clone();
        entries.sort();
        assert_eq!(
            entries,
            [
                "notification acme/blocked",
                "notification acme/note",
                "notification notifications/initialized",
                "request initialize",
            ]
        );
        assert_eq!(raw.ok(2, "ping", None).await, json!({}));
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(
            rx.try_recv().is_err(),
            "the vetoed notification's handler ran"
        );
        assert!(raw.seen.is_empty(), "unexpected frames: {:?}", raw.seen);
    })
    .await;
}

/// A layer that returns an error vetoes the request: the error is the response and the
/// handler never runs. A vetoed `initialize` leaves the connection uninitialized.
#[tokio::test]
async fn middleware_veto_answers_and_skips_the_handler() {
    within(async {
        for t in Transport::ALL {
            let ran = Arc::new(AtomicBool::new(false));
            let flag = ran.clone();
            let veto_init = Arc::new(AtomicBool::new(true));
            let veto = veto_init.clone();
            let server = Server::builder("mw", "0")
                .middleware(middleware_fn(move |req: McpRequest, next: Next| {
                    let veto = veto.clone();
                    async move {
                        let name = req.params.as_ref().and_then(|p| p.get("name")).cloned();
                        if req.method == "tools/call" && name == Some(json!("forbidden")) {
                            return Err(ErrorObject::new(ErrorCode(-32050), "vetoed").into());
                        }
                        if req.method == "initialize" && veto.swap(false, Ordering::SeqCst) {
                            return Err(ErrorObject::new(ErrorCode(-32051), "not yet").into());
                        }
                        next.run(req).await
                    }
                }))
                .on::<CallTool, _, _, _>(move |_ctx: RequestContext, _p: CallToolRequestParams| {
                    let flag = flag.clone();
                    async move {
                        flag.store(true, Ordering::SeqCst);
                        Ok(CallToolResult::text("ran"))
                    }
                })
                .on::<ListTools, _, _, _>(
                    |_ctx: RequestContext, _p: PaginatedRequestParams| async {
                        Ok(ListToolsResult::new(vec![]))
                    },
                )
                .build()
                .unwrap();
            let c = connect(t, &server).await;
            let e = c.fail("initialize", Some(init_params("2025-11-25"))).await;
            assert_eq!(e.code, ErrorCode(-32051));
            let e = c.fail("tools/list", None).await;
            assert_code(&e, ErrorCode::INVALID_PARAMS);
            c.initialize().await;
            let e = c
                .fail("tools/call", Some(json!({"name": "forbidden"})))
                .await;
            assert_eq!(e.code, ErrorCode(-32050), "{t:?}");
            assert_eq!(e.message, "vetoed");
            assert!(!ran.load(Ordering::SeqCst), "{t:?}: the handler ran");
            c.ok("tools/call", Some(json!({"name": "allowed"}))).await;
            assert!(ran.load(Ordering::SeqCst));
            c.shutdown().await;
        }
    })
    .await;
}

/// A layer can rewrite the method and params; the inner layers and the handler see the
/// rewritten ones.
#[tokio::test]
async fn middleware_rewrites_method_and_params() {
    within(async {
        for t in Transport::ALL {
            let log: Log = Arc::default();
            let seen = log.clone();
            let server = Server::builder("mw", "0")
                .middleware(middleware_fn(
                    |mut req: McpRequest, next: Next| async move {
                        if req.method == "acme/old" {
                            req.method = "acme/new".into();
                            req.params = json!({"x": 2}).into();
                        }
                        next.run(req).await
                    },
                ))
                .middleware(middleware_fn(move |req: McpRequest, next: Next| {
                    let log = seen.clone();
                    async move {
                        if !req.is_notification() {
                            record(&log, req.method.clone());
                        }
                        next.run(req).await
                    }
                }))
                .on_request("acme/new", |ctx: RequestContext, p: Value| async move {
                    Ok(json!({ "params": p, "ctxMethod": ctx.method() }))
                })
                .build()
                .unwrap();
            let c = connect(t, &server).await;
            c.initialize().await;
            log.lock().unwrap().clear();
            let r = c.ok("acme/old", Some(json!({"x": 1}))).await;
            assert_eq!(r["params"], json!({"x": 2}), "{t:?}");
            assert_eq!(*log.lock().unwrap(), ["acme/new"]);
            c.shutdown().await;
        }
    })
    .await;
}

/// A layer that rewrites the `initialize` params: the connection records the version the
/// result announces (the rewritten one), not the one on the wire.
#[tokio::test]
async fn middleware_rewritten_initialize_is_what_the_connection_records() {
    within(async {
        for t in [Transport::Direct, Transport::JsonRpc] {
            let server = Server::builder("mw", "0")
                .middleware(middleware_fn(
                    |mut req: McpRequest, next: Next| async move {
                        if req.method == "initialize"
                            && let Some(p) = req.params.as_mut()
                        {
                            p["protocolVersion"] = json!("2024-11-05");
                        }
                        next.run(req).await
                    },
                ))
                .build()
                .unwrap();
            let c = connect(t, &server).await;
            let r = c.initialize_at("2025-06-18").await;
            assert_eq!(r["protocolVersion"], "2024-11-05", "{t:?}");
            let conn = c.runner.as_ref().unwrap().connection().unwrap().clone();
            assert_eq!(
                conn.protocol_version(),
                ProtocolVersion::V2024_11_05,
                "{t:?}"
            );
            c.shutdown().await;
        }
    })
    .await;
}

/// Result-shaping failures happen inside the stack: a layer observes the -32603.
#[tokio::test]
async fn middleware_sees_result_shaping_failures() {
    within(async {
        for t in Transport::ALL {
            let log: Log = Arc::default();
            let seen = log.clone();
            let server = Server::builder("mw", "0")
                .middleware(middleware_fn(move |req: McpRequest, next: Next| {
                    let log = seen.clone();
                    async move {
                        if req.is_notification() {
                            return next.run(req).await;
                        }
                        let method = req.method.clone();
                        let r = next.run(req).await;
                        let outcome = match &r {
                            Ok(_) => "ok".to_owned(),
                            Err(HandlerError::Protocol(e)) => e.code.0.to_string(),
                            Err(e) => format!("other: {e}"),
                        };
                        record(&log, format!("{method} {outcome}"));
                        r
                    }
                }))
                .on_request("tools/list", |_ctx: RequestContext, _p: Value| async {
                    Ok(json!({"tools": [{"name": 5}]}))
                })
                .build()
                .unwrap();
            let c = connect(t, &server).await;
            c.initialize().await;
            let e = c.fail("tools/list", None).await;
            assert_code(&e, ErrorCode::INTERNAL_ERROR);
            let log = log.lock().unwrap().clone();
            assert_eq!(log, ["initialize ok", "tools/list -32603"], "{t:?}");
            c.shutdown().await;
        }
    })
    .await;
}

// ---------------------------------------------------------------------------------------------
// The low-level Server.
// ---------------------------------------------------------------------------------------------

fn caps(server: &Server, v: ProtocolVersion) -> Value {
    serde_json::to_value(server.capabilities(v)).unwrap()
}

fn full_server(listen: bool) -> Server {
    let b = Server::builder("full", "0")
        .tools_list_changed(true)
        .resources_list_changed(true)
        .on_request("tools/list", |_c: RequestContext, _p: Value| async {
            Ok(json!({"tools": []}))
        })
        .on_request("prompts/list", |_c: RequestContext, _p: Value| async {
            Ok(json!({"prompts": []}))
        })
        .on_request("resources/list", |_c: RequestContext, _p: Value| async {
            Ok(json!({"resources": []}))
        })
        .on_request(
            "resources/subscribe",
            |_c: RequestContext, _p: ResourceUriParams| async { Ok(json!({})) },
        )
        .on_request(
            "logging/setLevel",
            |_c: RequestContext, _p: SetLevelRequestParams| async { Ok(json!({})) },
        )
        .on_request(
            "completion/complete",
            |_c: RequestContext, _p: Value| async { Ok(json!({"completion": {"values": []}})) },
        );
    let b = if listen {
        b.on_request(
            "subscriptions/listen",
            |_c: RequestContext, _p: Value| async { Ok(json!({})) },
        )
    } else {
        b
    };
    b.build().unwrap()
}

/// Capabilities are derived from what is registered: each of tools, prompts, resources,
/// logging and completions is present if and only if its handler is.
#[test]
fn server_capabilities_follow_registered_handlers() {
    let bare = Server::builder("bare", "0").build().unwrap();
    for v in ProtocolVersion::ALL {
        let c = caps(&bare, v);
        for key in ["tools", "prompts", "resources", "logging", "completions"] {
            assert!(c.get(key).is_none(), "{v}: {key} in {c}");
        }
        let c = caps(&full_server(false), v);
        for key in ["tools", "prompts", "resources", "logging", "completions"] {
            assert!(c.get(key).is_some(), "{v}: {key} missing in {c}");
        }
    }
    let only_tools = Server::builder("t", "0")
        .on::<ListTools, _, _, _>(|_c: RequestContext, _p: PaginatedRequestParams| async {
            Ok(ListToolsResult::new(vec![]))
        })
        .build()
        .unwrap();
    let c = caps(&only_tools, ProtocolVersion::V2025_11_25);
    assert!(c["tools"].is_object());
    for key in ["prompts", "resources", "logging", "completions"] {
        assert!(c.get(key).is_none(), "{key} in {c}");
    }
}

/// `listChanged` and `subscribe`: before 2026-07-28 from the builder's flags and the
/// `resources/subscribe` handler; at 2026-07-28 "is `subscriptions/listen` served".
#[test]
fn server_list_changed_and_subscribe_flags_per_era() {
    let old = ProtocolVersion::V2025_11_25;
    let new = ProtocolVersion::V2026_07_28;

    let c = caps(&full_server(false), old);
    assert_eq!(c["tools"]["listChanged"], json!(true));
    assert!(c["prompts"].get("listChanged").is_none(), "{c}");
    assert_eq!(c["resources"]["listChanged"], json!(true));
    assert_eq!(c["resources"]["subscribe"], json!(true));

    let c = caps(&full_server(false), new);
    for key in ["tools", "prompts", "resources"] {
        assert!(c[key].get("listChanged").is_none(), "{key}: {c}");
    }
    assert!(c["resources"].get("subscribe").is_none(), "{c}");

    let c = caps(&full_server(true), new);
    for key in ["tools", "prompts", "resources"] {
        assert_eq!(c[key]["listChanged"], json!(true), "{key}: {c}");
    }
    assert_eq!(c["resources"]["subscribe"], json!(true));

    // Before 2026 `subscriptions/listen` changes nothing, and without a subscribe handler
    // there is no `subscribe`.
    let no_subscribe = Server::builder("r", "0")
        .on_request("resources/list", |_c: RequestContext, _p: Value| async {
            Ok(json!({"resources": []}))
        })
        .on_request(
            "subscriptions/listen",
            |_c: RequestContext, _p: Value| async { Ok(json!({})) },
        )
        .build()
        .unwrap();
    let c = caps(&no_subscribe, old);
    assert!(c["resources"].get("subscribe").is_none(), "{c}");
    assert!(c["resources"].get("listChanged").is_none(), "{c}");
}

/// `ping` and `server/discover` are built in.
#[test]
fn server_ping_and_discover_are_built_in() {
    let bare = Server::builder("bare", "0").build().unwrap();
    assert!(bare.handles("ping"));
    assert!(bare.handles("server/discover"));
    assert!(!bare.handles("tools/list"));
    assert!(!bare.handles("initialize"));
}

/// A cache hint for a method whose results are not cacheable is refused by `build()`.
#[test]
fn server_cache_hint_for_uncacheable_method_is_refused() {
    let r = Server::builder("x", "0")
        .cache_hint("tools/call", CacheHint::default())
        .build();
    assert!(matches!(r, Err(BuildError::NotCacheable(m)) if m == "tools/call"));
    let ok = Server::builder("x", "0")
        .cache_hint("tools/list", CacheHint::new(10, CacheScope::Public))
        .build()
        .unwrap();
    assert_eq!(
        ok.cache_hint("tools/list"),
        CacheHint::new(10, CacheScope::Public)
    );
    assert_eq!(ok.cache_hint("prompts/list"), CacheHint::default());
}

/// The lifespan: set-up runs before serving, its value reaches handlers through
/// `ctx.lifespan::<T>()`, and tear-down runs after.
#[tokio::test]
async fn server_lifespan_wraps_serving() {
    within(async {
        struct Db {
            name: &'static str,
        }
        let log: Log = Arc::default();
        let (setup_log, teardown_log, handler_log) = (log.clone(), log.clone(), log.clone());
        let server = Server::builder("life", "0")
            .lifespan(
                move || {
                    let log = setup_log.clone();
                    async move {
                        record(&log, "setup");
                        Ok(Db { name: "db" })
                    }
                },
                move |db: Arc<Db>| {
                    let log = teardown_log.clone();
                    async move { record(&log, format!("teardown {}", db.name)) }
                },
            )
            .on_request("acme/db", move |ctx: RequestContext, _p: Value| {
                let log = handler_log.clone();
                async move {
                    let db = ctx.lifespan::<Db>().unwrap();
                    assert!(ctx.lifespan::<String>().is_none());
                    record(&log, format!("handler {}", db.name));
                    Ok(json!({"db": db.name}))
                }
            })
            .build()
            .unwrap();
        let c = connect(Transport::Stream, &server).await;
        c.initialize().await;
        assert_eq!(c.ok("acme/db", None).await, json!({"db": "db"}));
        c.shutdown().await;
        assert_eq!(*log.lock().unwrap(), ["setup", "handler db", "teardown db"]);

        // Entered by hand (as an embedding does for the direct dispatcher).
        log.lock().unwrap().clear();
        server.enter_lifespan().await.unwrap();
        let c = connect(Transport::Direct, &server).await;
        c.initialize().await;
        c.ok("acme/db", None).await;
        c.shutdown().await;
        server.exit_lifespan().await;
        assert_eq!(*log.lock().unwrap(), ["setup", "handler db", "teardown db"]);
    })
    .await;
}

/// Connections that start while the set-up is still running wait for it: no handler runs
/// without the lifespan value, and set-up and tear-down run once for overlapping connections.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_lifespan_setup_finishes_before_any_connection_serves() {
    within(async {
        let log: Log = Arc::default();
        let (setup_log, teardown_log) = (log.clone(), log.clone());
        let server = Server::builder("life", "0")
            .lifespan(
                move || {
                    let log = setup_log.clone();
                    async move {
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        record(&log, "setup");
                        Ok(5_u32)
                    }
                },
                move |_v: Arc<u32>| {
                    let log = teardown_log.clone();
                    async move { record(&log, "teardown") }
                },
            )
            .on_request("acme/value", |ctx: RequestContext, _p: Value| async move {
                Ok(json!({ "value": ctx.lifespan::<u32>().map(|v| *v) }))
            })
            .build()
            .unwrap();
        let (mut first, first_task) = serve_raw(&server);
        let (mut second, second_task) = serve_raw(&server);
        first
            .request(1, "initialize", Some(init_params("2025-11-25")))
            .await;
        second
            .request(1, "initialize", Some(init_params("2025-11-25")))
            .await;
        // The second connection does not wait for the first one's answers.
        second.answer(1).await.unwrap();
        assert_eq!(second.ok(2, "acme/value", None).await, json!({"value": 5}));
        first.answer(1).await.unwrap();
        assert_eq!(first.ok(2, "acme/value", None).await, json!({"value": 5}));
        drop(first);
        within(first_task).await.unwrap().unwrap();
        assert_eq!(
            *log.lock().unwrap(),
            ["setup"],
            "the second connection is still open"
        );
        drop(second);
        within(second_task).await.unwrap().unwrap();
        assert_eq!(*log.lock().unwrap(), ["setup", "teardown"]);
    })
    .await;
}

/// Custom request methods and notifications are served like spec ones.
#[tokio::test]
async fn server_custom_requests_and_notifications() {
    within(async {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let server = notes_server(tx);
        let server_with_custom = Server::builder("custom", "0")
            .on_request("acme/add", |_ctx: RequestContext, p: Value| async move {
                let sum = p["a"].as_i64().unwrap_or(0) + p["b"].as_i64().unwrap_or(0);
                Ok(json!({ "sum": sum }))
            })
            .build()
            .unwrap();
        for t in Transport::ALL {
            let c = connect(t, &server_with_custom).await;
            c.initialize().await;
            let r = c.ok("acme/add", Some(json!({"a": 2, "b": 3}))).await;
            assert_eq!(r, json!({"sum": 5}), "{t:?}");
            c.shutdown().await;

            let c = connect(t, &server).await;
            c.initialize().await;
            c.notify("acme/note", Some(json!({"custom": true}))).await;
            assert_eq!(within(rx.recv()).await.unwrap(), json!({"custom": true}));
            c.shutdown().await;
        }
    })
    .await;
}

// ---------------------------------------------------------------------------------------------
// Connection and RequestPeer.
// ---------------------------------------------------------------------------------------------

/// Typed per-connection state is shared across the requests of one connection, and not
/// across connections.
#[tokio::test]
async fn connection_state_is_shared_across_requests() {
    within(async {
        let server = ladder_server();
        for t in Transport::ALL {
            let c = connect(t, &server).await;
            c.initialize().await;
            for n in 1..=3 {
                assert_eq!(c.ok("acme/count", None).await, json!({ "n": n }), "{t:?}");
            }
            c.shutdown().await;
            let c = connect(t, &server).await;
            c.initialize().await;
            assert_eq!(c.ok("acme/count", None).await, json!({"n": 1}), "{t:?}");
            c.shutdown().await;
        }

        let (out, _peer) = DirectDispatcher::pair();
        let conn = Connection::for_handshake(Arc::new(out), true, ProtocolVersion::LATEST);
        assert!(conn.state::<u32>().is_none());
        conn.insert_state(7_u32);
        assert_eq!(*conn.state::<u32>().unwrap(), 7);
        assert!(conn.state::<u64>().is_none());
        let clone = conn.clone();
        clone.insert_state(8_u32);
        assert_eq!(*conn.state::<u32>().unwrap(), 8, "clones share state");
    })
    .await;
}

/// Cleanup hooks run when the connection closes, newest first.
#[tokio::test]
async fn connection_cleanup_hooks_run_on_close() {
    within(async {
        for t in Transport::ALL {
            let log: Log = Arc::default();
            let hooks = log.clone();
            let server = Server::builder("close", "0")
                .on_request("acme/hook", move |ctx: RequestContext, p: Value| {
                    let log = hooks.clone();
                    async move {
                        let name = p["name"].as_str().unwrap().to_owned();
                        ctx.connection().on_close(move || async move {
                            record(&log, name);
                        });
                        Ok(json!({}))
                    }
                })
                .build()
                .unwrap();
            let c = connect(t, &server).await;
            c.initialize().await;
            c.ok("acme/hook", Some(json!({"name": "first"}))).await;
            c.ok("acme/hook", Some(json!({"name": "second"}))).await;
            assert!(log.lock().unwrap().is_empty());
            c.shutdown().await;
            assert_eq!(*log.lock().unwrap(), ["second", "first"], "{t:?}");
        }
    })
    .await;
}

/// Cleanup is bounded: a hook that never finishes holds `close` for at most
/// `CLEANUP_TIMEOUT`; a second `close` finds no hooks.
#[tokio::test(start_paused = true)]
async fn connection_cleanup_is_bounded() {
    within(async {
        let (out, _peer) = DirectDispatcher::pair();
        let conn = Connection::for_handshake(Arc::new(out), true, ProtocolVersion::LATEST);
        conn.on_close(std::future::pending::<()>);
        let started = tokio::time::Instant::now();
        conn.close().await;
        let took = started.elapsed();
        assert!(took >= CLEANUP_TIMEOUT, "{took:?}");
        assert!(took < CLEANUP_TIMEOUT * 2, "{took:?}");
        let started = tokio::time::Instant::now();
        conn.close().await;
        assert!(started.elapsed() < CLEANUP_TIMEOUT);
    })
    .await;
}

/// `notify` never fails after the connection closed (direct and JSON-RPC dispatchers).
#[tokio::test]
async fn connection_notify_never_fails_after_close() {
    within(async {
        let (out, peer) = DirectDispatcher::pair();
        let conn = Connection::for_handshake(Arc::new(out.clone()), true, ProtocolVersion::LATEST);
        out.close();
        assert!(peer.is_closed());
        conn.notify("acme/after-close", None).await;
        conn.notify_tools_list_changed().await;
        conn.notify_resource_updated("file:///x").await;

        let (a, _b) = memory_pair(4);
        let d = JsonRpcDispatcher::new(a.source, a.sink, DispatcherConfig::default());
        let conn = Connection::for_handshake(Arc::new(d.clone()), true, ProtocolVersion::LATEST);
        d.close();
        conn.notify("acme/after-close", Some(Payload::from(json!({}))))
            .await;
        conn.notify_prompts_list_changed().await;

        // Even with the other end gone.
        let (a, b) = memory_pair(4);
        drop(b);
        let d = JsonRpcDispatcher::new(a.source, a.sink, DispatcherConfig::default());
        let conn = Connection::for_handshake(Arc::new(d), true, ProtocolVersion::LATEST);
        conn.notify("acme/peer-gone", None).await;
    })
    .await;
}

/// A connection that cannot send server→client requests answers them with -32600; one that
/// can reaches the client.
#[tokio::test]
async fn connection_server_requests_need_a_back_channel() {
    within(async {
        let server = Server::builder("s2c", "0")
            .on_request("acme/roots", |ctx: RequestContext, _p: Value| async move {
                let via_peer = ctx
                    .peer()
                    .send_request("roots/list", None, Default::default())
                    .await;
                let via_connection = ctx
                    .connection()
                    .send_request("roots/list", None, Default::default())
                    .await;
                let show = |r: Result<Payload, ErrorObject>| match r {
                    Ok(p) => p.into_value().unwrap(),
                    Err(e) => json!({"code": e.code.0}),
                };
                Ok(json!({
                    "peer": show(via_peer),
                    "connection": show(via_connection),
                }))
            })
            .build()
            .unwrap();
        for t in Transport::ALL {
            let c = connect(t, &server).await;
            c.initialize().await;
            let r = c.ok("acme/roots", None).await;
            assert_eq!(r["peer"], json!({"roots": []}), "{t:?}");
            assert_eq!(r["connection"], json!({"roots": []}), "{t:?}");
            c.shutdown().await;
        }

        let (out, _peer) = DirectDispatcher::pair();
        let conn = Connection::for_handshake(Arc::new(out), false, ProtocolVersion::LATEST);
        let e = conn
            .send_request("roots/list", None, Default::default())
            .await
            .unwrap_err();
        assert_code(&e, ErrorCode::INVALID_REQUEST);
        assert!(!conn.can_send_requests());
    })
    .await;
}

/// `ctx.peer().notify` relates the notification to the request being handled (the
/// outbound `MessageMeta.related_request_id` carries its id); `ctx.connection().notify` goes
/// to the standalone channel, unrelated.
#[tokio::test]
async fn peer_notifications_are_related_to_the_request() {
    within(async {
        let server = Server::builder("route", "0")
            .on_request("acme/route", |ctx: RequestContext, _p: Value| async move {
                ctx.peer().notify("acme/related", None).await;
                ctx.connection().notify("acme/standalone", None).await;
                Ok(json!({}))
            })
            .build()
            .unwrap();
        let (mut raw, _task) = serve_raw(&server);
        raw.ok(1, "initialize", Some(init_params("2025-11-25")))
            .await;
        raw.notify("notifications/initialized", None).await;
        raw.ok(7, "acme/route", None).await;
        assert_eq!(raw.seen.len(), 2, "{:?}", raw.seen);
        let related = &raw.seen[0];
        assert_eq!(related.message.method(), Some("acme/related"));
        assert_eq!(related.meta.related_request_id, Some(7.into()));
        let standalone = &raw.seen[1];
        assert_eq!(standalone.message.method(), Some("acme/standalone"));
        assert_eq!(standalone.meta.related_request_id, None);
    })
    .await;
}

/// Progress reported through the context reaches the client as `notifications/progress`
/// with the request's token, related to the request; without a token it is a no-op.
#[tokio::test]
async fn context_progress_uses_the_requests_token() {
    within(async {
        let server = Server::builder("progress", "0")
            .on_request("acme/slow", |ctx: RequestContext, _p: Value| async move {
                ctx.progress(0.5, Some(1.0), Some("half")).await;
                Ok(json!({}))
            })
            .build()
            .unwrap();
        let (mut raw, _task) = serve_raw(&server);
        raw.ok(1, "initialize", Some(init_params("2025-11-25")))
            .await;
        raw.notify("notifications/initialized", None).await;
        raw.ok(2, "acme/slow", None).await;
        assert!(raw.seen.is_empty(), "{:?}", raw.seen);
        let params = json!({"_meta": {"progressToken": "tok"}});
        raw.ok(3, "acme/slow", Some(params)).await;
        assert_eq!(raw.seen.len(), 1, "{:?}", raw.seen);
        let frame = raw.seen.remove(0);
        assert_eq!(frame.meta.related_request_id, Some(3.into()));
        let ferromcp_types::jsonrpc::Message::Notification(n) = frame.message else {
            panic!("expected a notification");
        };
        assert_eq!(n.method, "notifications/progress");
        assert_eq!(
            n.params.unwrap().into_value().unwrap(),
            json!({"progressToken": "tok", "progress": 0.5, "total": 1.0, "message": "half"})
        );
    })
    .await;
}

/// A request the client cancels is never answered, its handler sees the cancellation, and
/// the connection goes on.
#[tokio::test]
async fn cancelled_requests_are_not_answered() {
    within(async {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let server = Server::builder("cancel", "0")
            .on_request("acme/wait", move |ctx: RequestContext, _p: Value| {
                let tx = tx.clone();
                async move {
                    let _ = tx.send(());
                    ctx.cancellation().cancelled().await;
                    Ok(json!({}))
                }
            })
            .build()
            .unwrap();
        let (mut raw, _task) = serve_raw(&server);
        raw.ok(1, "initialize", Some(init_params("2025-11-25")))
            .await;
        raw.notify("notifications/initialized", None).await;
        raw.request(2, "acme/wait", None).await;
        within(rx.recv()).await.unwrap();
        raw.notify(
            "notifications/cancelled",
            Some(json!({"requestId": 2, "reason": "changed my mind"})),
        )
        .await;
        assert_eq!(raw.ok(3, "ping", None).await, json!({}));
        assert!(raw.seen.is_empty(), "{:?}", raw.seen);
    })
    .await;
}

/// What a request handler sees of itself: method, request id, protocol version, `_meta`.
#[tokio::test]
async fn request_context_describes_the_request() {
    within(async {
        let server = Server::builder("ctx", "0")
            .on_request("acme/me", |ctx: RequestContext, _p: Value| async move {
                Ok(json!({
                    "method": ctx.method(),
                    "id": ctx.request_id().map(ToString::to_string),
                    "version": ctx.protocol_version().as_str(),
                    "meta": ctx.meta().map(|m| Value::Object(m.as_map().clone())),
                    "cancelled": ctx.cancellation().is_cancelled(),
                }))
            })
            .build()
            .unwrap();
        let (mut raw, _task) = serve_raw(&server);
        raw.ok(1, "initialize", Some(init_params("2025-06-18")))
            .await;
        let r = raw
            .ok(42, "acme/me", Some(json!({"_meta": {"k": "v"}})))
            .await;
        assert_eq!(
            r,
            json!({
                "method": "acme/me",
                "id": "42",
                "version": "2025-06-18",
                "meta": {"k": "v"},
                "cancelled": false,
            })
        );
    })
    .await;
}
