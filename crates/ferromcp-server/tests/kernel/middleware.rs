//! Middleware: order, vetoes, rewrites, notifications through the stack, result-shaping failures
//! inside it, and the server's timeout on requests to the client.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::common::{Transport, assert_code, connect, handshake_raw, init_params, within};
use crate::support::{Log, record};
use ferromcp_dispatch::{CallOptions, HandlerError};
use ferromcp_server::middleware::{McpRequest, Next, middleware_fn};
use ferromcp_server::{RequestContext, Server};
use ferromcp_types::ProtocolVersion;
use ferromcp_types::jsonrpc::{ErrorCode, ErrorObject};
use ferromcp_types::mcp::methods::{CallTool, ListTools};
use ferromcp_types::mcp::{
    CallToolRequestParams, CallToolResult, ListToolsResult, PaginatedRequestParams,
};
use serde_json::{Value, json};
use tokio::sync::mpsc;

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
