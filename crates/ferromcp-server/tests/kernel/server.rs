//! The low-level `Server`: capabilities from what is registered, built-in methods, refused builds,
//! the lifespan, custom methods.

use std::sync::Arc;
use std::time::Duration;

use crate::common::{Transport, connect, init_params, serve_raw, within};
use crate::support::{Log, notes_server, record};
use ferromcp_server::{BuildError, CacheHint, RequestContext, Server};
use ferromcp_types::ProtocolVersion;
use ferromcp_types::mcp::methods::ListTools;
use ferromcp_types::mcp::{
    CacheScope, ListToolsResult, PaginatedRequestParams, ResourceUriParams, SetLevelRequestParams,
};
use serde_json::{Value, json};
use tokio::sync::mpsc;

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
