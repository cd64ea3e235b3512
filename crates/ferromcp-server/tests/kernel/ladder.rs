//! The request ladder, rung by rung: surface validation, `initialize`, handler lookup, the init
//! gate, typed params and result shaping, and the one error boundary for panicking handlers.

use std::sync::Arc;

use crate::common::{
    Transport, assert_code, connect, handshake_raw, init_params, serve_raw, within,
};
use crate::support::{ladder_server, tool_text};
use ferromcp_dispatch::DirectDispatcher;
use ferromcp_server::{BuildError, RequestContext, Server, ServerRunner};
use ferromcp_types::ProtocolVersion;
use ferromcp_types::jsonrpc::{ErrorCode, ErrorObject, Payload};
use ferromcp_types::mcp::InitializeRequestParams;
use ferromcp_types::mcp::methods::Initialize;
use serde_json::{Value, json};

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
        let tools = ok(exchange("tools/list", Some(crate::common::modern(json!({})))).await);
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
        let custom = ok(exchange("acme/echo", Some(crate::common::modern(json!({"a": 1})))).await);
        assert_eq!(custom["resultType"], "complete");
        assert_eq!(custom["_meta"]["io.modelcontextprotocol/serverInfo"], stamp);
        // Handshake-only methods do not exist here.
        let e = exchange("ping", Some(crate::common::modern(json!({}))))
            .await
            .unwrap_err();
        assert_code(&e, ErrorCode::METHOD_NOT_FOUND);
        let e = exchange(
            "initialize",
            Some(crate::common::modern(init_params("2025-11-25"))),
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
        let params = Some(Payload::from_value(crate::common::modern(json!({}))));
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
