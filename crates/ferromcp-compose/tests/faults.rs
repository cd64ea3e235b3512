//! Composition under faults and limits: a stdio backend killed mid-call, the per-backend and
//! total bounds on forwarded requests, the per-backend timeout, a backend that never stops
//! asking, cancellation, and list changes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use common::{DEADLINE, ERAS, backend, front_client, text};
use ferromcp_client::ClientError;
use ferromcp_compose::{Backend, Composer};
use ferromcp_server::McpServer;
use ferromcp_types::Era;
use serde_json::json;
use tokio::time::timeout;
use tokio_util::sync::CancellationToken;

const BACKEND_BIN: &str = env!("CARGO_BIN_EXE_ferromcp-compose-backend");

fn stdio_backend() -> Backend {
    Backend::command(BACKEND_BIN, Vec::<String>::new())
}

fn protocol_message(e: ClientError) -> String {
    match e {
        ClientError::Protocol(e) => e.message.to_string(),
        other => panic!("expected a protocol error, got {other}"),
    }
}

/// A stdio backend (written with ferromcp) killed mid-call: the front answers that call, and
/// one in flight beside it, with a clear error naming the backend; the other mount keeps
/// serving, and so does the front.
#[tokio::test]
async fn f16_a_backend_killed_mid_call_fails_its_calls_and_the_others_keep_serving() {
    timeout(DEADLINE, async {
        let composed = Composer::builder("hub", "1")
            .mount("s", stdio_backend())
            .mount("i", Backend::in_process(&backend::server("i")))
            .build()
            .await
            .expect("the stdio backend mounts");
        for era in ERAS {
            let client = front_client(composed.server(), era).await;
            let r = client
                .call_tool("s_echo", json!({"text": "alive"}))
                .await
                .unwrap();
            assert_eq!(text(&r), "alive");
            client.shutdown().await;
        }
        let client = front_client(composed.server(), Era::Handshake).await;
        let slow = {
            let client = client.clone();
            tokio::spawn(async move { client.call_tool("s_slow", json!({"ms": 5000})).await })
        };
        tokio::time::sleep(Duration::from_millis(200)).await;
        let died = client.call_tool("s_die", json!({})).await.unwrap_err();
        let message = protocol_message(died);
        assert!(message.contains("backend \"s\""), "{message}");
        let slow = slow.await.unwrap().unwrap_err();
        let message = protocol_message(slow);
        assert!(message.contains("backend \"s\""), "{message}");
        // The dead backend's later calls fail at once, clearly; the other mount serves.
        let later = client
            .call_tool("s_echo", json!({"text": "x"}))
            .await
            .unwrap_err();
        assert!(protocol_message(later).contains("backend \"s\""));
        let r = client
            .call_tool("i_echo", json!({"text": "still here"}))
            .await
            .unwrap();
        assert_eq!(text(&r), "still here");
        client.shutdown().await;
        composed.shutdown().await;
    })
    .await
    .expect("within the deadline");
}

/// At most `Backend::max_in_flight` requests go to one backend at a time: one more is
/// refused at once (-32603 naming the setting); the other backends are not affected.
#[tokio::test]
async fn s87_requests_in_flight_are_bounded_per_backend() {
    timeout(DEADLINE, async {
        let composed = Composer::builder("hub", "1")
            .mount(
                "a",
                Backend::in_process(&backend::server("a")).max_in_flight(1),
            )
            .mount("b", Backend::in_process(&backend::server("b")))
            .build()
            .await
            .unwrap();
        let client = front_client(composed.server(), Era::Modern).await;
        let slow = {
            let client = client.clone();
            tokio::spawn(async move { client.call_tool("a_slow", json!({"ms": 400})).await })
        };
        tokio::time::sleep(Duration::from_millis(100)).await;
        let refused = client
            .call_tool("a_echo", json!({"text": "x"}))
            .await
            .unwrap_err();
        assert!(protocol_message(refused).contains("Backend::max_in_flight"));
        let r = client
            .call_tool("b_echo", json!({"text": "ok"}))
            .await
            .unwrap();
        assert_eq!(text(&r), "ok");
        assert_eq!(text(&slow.await.unwrap().unwrap()), "done");
        let r = client
            .call_tool("a_echo", json!({"text": "again"}))
            .await
            .unwrap();
        assert_eq!(text(&r), "again");
        client.shutdown().await;
        composed.shutdown().await;
    })
    .await
    .expect("within the deadline");
}

/// At most `ComposerBuilder::max_in_flight` requests are forwarded at a time, all backends
/// together.
#[tokio::test]
async fn s88_requests_in_flight_are_bounded_in_total() {
    timeout(DEADLINE, async {
        let composed = Composer::builder("hub", "1")
            .max_in_flight(1)
            .mount("a", Backend::in_process(&backend::server("a")))
            .mount("b", Backend::in_process(&backend::server("b")))
            .build()
            .await
            .unwrap();
        let client = front_client(composed.server(), Era::Handshake).await;
        let slow = {
            let client = client.clone();
            tokio::spawn(async move { client.call_tool("a_slow", json!({"ms": 400})).await })
        };
        tokio::time::sleep(Duration::from_millis(100)).await;
        let refused = client
            .call_tool("b_echo", json!({"text": "x"}))
            .await
            .unwrap_err();
        assert!(protocol_message(refused).contains("ComposerBuilder::max_in_flight"));
        assert_eq!(text(&slow.await.unwrap().unwrap()), "done");
        let r = client
            .call_tool("b_echo", json!({"text": "ok"}))
            .await
            .unwrap();
        assert_eq!(text(&r), "ok");
        client.shutdown().await;
        composed.shutdown().await;
    })
    .await
    .expect("within the deadline");
}

/// A backend that does not answer within `Backend::timeout` gets its request cancelled and
/// the front answers -32001 naming it.
#[tokio::test]
async fn s89_a_backend_that_does_not_answer_in_time_is_cut_off() {
    timeout(DEADLINE, async {
        let composed = Composer::builder("hub", "1")
            .mount(
                "a",
                Backend::in_process(&backend::server("a")).timeout(Duration::from_millis(150)),
            )
            .build()
            .await
            .unwrap();
        for era in ERAS {
            let client = front_client(composed.server(), era).await;
            let started = std::time::Instant::now();
            let err = client
                .call_tool("a_slow", json!({"ms": 5000}))
                .await
                .unwrap_err();
            assert!(started.elapsed() < Duration::from_secs(3));
            match err {
                ClientError::Protocol(e) => {
                    assert_eq!(e.code.0, -32001, "{e:?}");
                    assert!(e.message.contains("backend \"a\""), "{e:?}");
                }
                other => panic!("{other}"),
            }
            client.shutdown().await;
        }
        composed.shutdown().await;
    })
    .await
    .expect("within the deadline");
}

/// A backend that answers `input_required` forever is bounded by
/// `ComposerBuilder::max_backend_rounds`.
#[tokio::test]
async fn c54_a_backend_that_never_stops_asking_is_bounded() {
    timeout(DEADLINE, async {
        let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = calls.clone();
        let asker = ferromcp_server::Server::builder("asker", "1")
            .on::<ferromcp_types::mcp::methods::ListTools, _, _, _>(|_ctx, _p| async {
                let tool: ferromcp_types::mcp::Tool = serde_json::from_value(
                    json!({"name": "forever", "inputSchema": {"type": "object"}}),
                )
                .unwrap();
                Ok(ferromcp_types::mcp::ListToolsResult::new(vec![tool]))
            })
            .on::<ferromcp_types::mcp::methods::CallTool, _, _, _>(move |_ctx, _p| {
                counter.fetch_add(1, Ordering::SeqCst);
                async {
                    Ok(json!({
                        "resultType": "input_required",
                        "inputRequests": {"q": {"method": "roots/list"}},
                        "requestState": "s"
                    }))
                }
            })
            .build()
            .unwrap();
        let open = move || ferromcp_client::Connected::new(Arc::new(asker.in_process(Era::Modern)));
        let composed = Composer::builder("hub", "1")
            .max_backend_rounds(3)
            .mount(
                "x",
                Backend::transport(open).lifecycle(ferromcp_client::Lifecycle::Modern),
            )
            .build()
            .await
            .unwrap();
        let client = ferromcp_client::Client::builder()
            .lifecycle(ferromcp_client::Lifecycle::Handshake)
            .on_roots(|| async { Ok(ferromcp_types::mcp::ListRootsResult::new(vec![])) })
            .connect(ferromcp_client::Connected::new(Arc::new(
                composed.server().server().in_process(Era::Handshake),
            )))
            .await
            .unwrap();
        let err = client.call_tool("x_forever", json!({})).await.unwrap_err();
        assert!(protocol_message(err).contains("after 3 rounds"));
        // The first request and 3 retries, no more.
        assert_eq!(calls.load(Ordering::SeqCst), 4);
        client.shutdown().await;
        composed.shutdown().await;
    })
    .await
    .expect("within the deadline");
}

/// Cancelling a front request cancels the backend request it was forwarded as.
#[tokio::test]
async fn cancellation_is_forwarded() {
    timeout(DEADLINE, async {
        for backend_era in ERAS {
            let cancelled = Arc::new(AtomicBool::new(false));
            let flag = cancelled.clone();
            let server = McpServer::builder("c", "1")
                .tool("wait", move |token: CancellationToken| {
                    // The kernel drops a cancelled handler's future: the guard sees it.
                    let guard = SetOnDrop(flag.clone());
                    async move {
                        token.cancelled().await;
                        drop(guard);
                        "cancelled"
                    }
                })
                .build()
                .unwrap();
            let composed = Composer::builder("hub", "1")
                .mount("c", Backend::in_process_era(&server, backend_era))
                .build()
                .await
                .unwrap();
            for era in ERAS {
                cancelled.store(false, Ordering::SeqCst);
                let client = front_client(composed.server(), era).await;
                let opts =
                    ferromcp_client::RequestOptions::new().timeout(Duration::from_millis(150));
                let params = ferromcp_types::mcp::CallToolRequestParams::new("c_wait");
                let r = client
                    .request::<ferromcp_types::mcp::methods::CallTool>(params, opts)
                    .await;
                assert!(r.is_err());
                let seen = async {
                    while !cancelled.load(Ordering::SeqCst) {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                };
                timeout(Duration::from_secs(3), seen)
                    .await
                    .unwrap_or_else(|_| panic!("front {era:?}, backend {backend_era:?}"));
                client.shutdown().await;
            }
            composed.shutdown().await;
        }
    })
    .await
    .expect("within the deadline");
}

/// A backend's list change reaches the front: the new tool is served, the removed one is
/// gone, and the front's clients are told.
#[tokio::test]
async fn list_changes_are_forwarded() {
    timeout(DEADLINE, async {
        for backend_era in ERAS {
            let server = backend::server("x");
            let composed = Composer::builder("hub", "1")
                .mount("x", Backend::in_process_era(&server, backend_era))
                .build()
                .await
                .unwrap();
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
            let client = ferromcp_client::Client::builder()
                .lifecycle(ferromcp_client::Lifecycle::Handshake)
                .on_notification(move |n| {
                    let tx = tx.clone();
                    async move {
                        let _ = tx.send(n);
                    }
                })
                .connect(ferromcp_client::Connected::new(Arc::new(
                    composed.server().server().in_process(Era::Handshake),
                )))
                .await
                .unwrap();
            server.add_tool("fresh", || async { "new" }).unwrap();
            server.remove_tool("die");
            loop {
                let n = rx.recv().await.unwrap();
                if n == ferromcp_client::ServerNotification::ToolListChanged
                    && composed
                        .server()
                        .tool_names()
                        .contains(&"x_fresh".to_owned())
                    && !composed.server().tool_names().contains(&"x_die".to_owned())
                {
                    break;
                }
            }
            let r = client.call_tool("x_fresh", json!({})).await.unwrap();
            assert_eq!(text(&r), "new");
            client.shutdown().await;
            composed.shutdown().await;
        }
    })
    .await
    .expect("within the deadline");
}

/// Sets its flag when dropped.
struct SetOnDrop(Arc<AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// The front clients' resource subscriptions reach the backend that owns the URI (every
/// pairing of eras), so its updates come back under the front URI; at most
/// `Backend::max_subscriptions` URIs per backend, one more is refused.
#[tokio::test]
async fn s87_resource_subscriptions_are_forwarded_and_bounded_per_backend() {
    timeout(DEADLINE, async {
        for backend_era in ERAS {
            let server = backend::server("x");
            let composed = Composer::builder("hub", "1")
                .mount(
                    "x",
                    Backend::in_process_era(&server, backend_era).max_subscriptions(1),
                )
                .build()
                .await
                .unwrap();
            for era in ERAS {
                let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
                let lifecycle = match era {
                    Era::Handshake => ferromcp_client::Lifecycle::Handshake,
                    Era::Modern => ferromcp_client::Lifecycle::Modern,
                };
                let client = ferromcp_client::Client::builder()
                    .lifecycle(lifecycle)
                    .on_notification(move |n| {
                        let tx = tx.clone();
                        async move {
                            let _ = tx.send(n);
                        }
                    })
                    .connect(ferromcp_client::Connected::new(Arc::new(
                        composed.server().server().in_process(era),
                    )))
                    .await
                    .unwrap();
                let mut filter = ferromcp_types::mcp::SubscriptionFilter::new();
                filter.resource_subscriptions = Some(vec!["x+mem://readme".to_owned()]);
                let opts = ferromcp_client::ListenOptions::new().handshake_fallback(true);
                let mut subscription = client.listen_with(filter, opts).await.unwrap();
                server.notify_resource_updated("mem://readme");
                loop {
                    let event = subscription.next().await.unwrap();
                    if event
                        == ferromcp_client::ListenEvent::ResourceUpdated("x+mem://readme".into())
                    {
                        break;
                    }
                }
                // A second URI of the same backend is over its bound.
                let mut filter = ferromcp_types::mcp::SubscriptionFilter::new();
                filter.resource_subscriptions = Some(vec!["x+mem://items/1".to_owned()]);
                let opts = ferromcp_client::ListenOptions::new().handshake_fallback(true);
                let err = client.listen_with(filter, opts).await.unwrap_err();
                assert!(
                    err.to_string().contains("Backend::max_subscriptions"),
                    "front {era:?}, backend {backend_era:?}: {err}"
                );
                drop(rx.try_recv());
                subscription.close().await;
                client.shutdown().await;
            }
            composed.shutdown().await;
        }
    })
    .await
    .expect("within the deadline");
}

/// A backend that never finishes connecting (a command that never answers `initialize`) is
/// given up after `Backend::connect_timeout`: the build fails naming the mount, long before
/// the default 30 s.
#[cfg(unix)]
#[tokio::test]
async fn s89_a_backend_that_never_connects_is_cut_off_at_the_connect_timeout() {
    let started = std::time::Instant::now();
    let built = timeout(
        DEADLINE,
        Composer::builder("front", "1.0.0")
            .mount(
                "mute",
                Backend::command("sleep", ["30"]).connect_timeout(Duration::from_millis(300)),
            )
            .build(),
    )
    .await
    .expect("within the deadline");
    match built {
        Err(ferromcp_compose::ComposeError::ConnectTimeout(name)) => assert_eq!(name, "mute"),
        Err(other) => panic!("expected a connect timeout, got {other}"),
        Ok(_) => panic!("a backend that never answers was mounted"),
    }
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
}
