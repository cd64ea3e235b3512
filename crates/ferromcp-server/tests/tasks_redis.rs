//! Tasks in Redis (feature `redis`): two server nodes sharing one `RedisTaskStore` serve the
//! same tasks (SEP-2663 at 2026-07-28): a task created on one node is polled to completion,
//! answered (`tasks/update`) and cancelled on the other, the per-principal cap holds across
//! nodes, and Redis drops a task at its TTL. Needs a Redis at `FERROMCP_TEST_REDIS_URL`
//! (default `redis://127.0.0.1:6379`; `.ci/run` starts one); without one every test prints a
//! notice and passes, or fails when `FERROMCP_REQUIRE_REDIS=1` (as `.ci/run` sets).
#![cfg(feature = "redis")]
#![allow(clippy::unwrap_used, clippy::panic)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use ferromcp_dispatch::{CallOptions, DirectDispatcher, Dispatcher, Outbound, handler_fn};
use ferromcp_server::McpServer;
use ferromcp_server::RequestContext;
use ferromcp_server::mcp_server::{Args, ToolError, ToolSpec};
use ferromcp_server::tasks::{RedisTaskStore, TaskSettings};
use ferromcp_types::Era;
use ferromcp_types::jsonrpc::{ErrorObject, Payload};
use ferromcp_types::mcp::{ElicitationSchema, TaskSupport};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn redis_url() -> String {
    std::env::var("FERROMCP_TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into())
}

/// A fresh namespace per test, so tests sharing the Redis never see each other's keys.
fn namespace(test: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("ferromcp-test-{test}-{}-{nanos}", std::process::id())
}

/// Whether a Redis is reachable; prints the skip notice when not.
async fn redis_up(test: &str) -> bool {
    let ok = async {
        let client = redis::Client::open(redis_url()).ok()?;
        let mut c = client.get_multiplexed_async_connection().await.ok()?;
        redis::cmd("PING").query_async::<String>(&mut c).await.ok()
    };
    let up = tokio::time::timeout(Duration::from_secs(3), ok)
        .await
        .ok()
        .flatten()
        .is_some();
    if !up {
        eprintln!(
            "SKIPPED {test}: no Redis at {} (set FERROMCP_TEST_REDIS_URL or start redis-server)",
            redis_url()
        );
        // `.ci/run` sets FERROMCP_REQUIRE_REDIS=1: there a missing Redis fails the suite.
        assert!(
            std::env::var("FERROMCP_REQUIRE_REDIS").as_deref() != Ok("1"),
            "{test}: no Redis at {} and FERROMCP_REQUIRE_REDIS=1",
            redis_url()
        );
    }
    up
}

async fn within<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(60), f)
        .await
        .expect("timed out")
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Millis {
    /// How long to work, in milliseconds.
    ms: u64,
}

/// One node: a server whose tasks live in the shared Redis namespace `ns`.
async fn node(ns: &str, settings: TaskSettings, cancelled: Arc<AtomicBool>) -> McpServer {
    let store = RedisTaskStore::connect_with_namespace(&redis_url(), ns)
        .await
        .unwrap();
    let settings = settings
        .store(store)
        .store_check_interval(Duration::from_millis(20));
    McpServer::builder("node", "1")
        .tool(
            ToolSpec::new("work").task_support(TaskSupport::Optional),
            move |Args(a): Args<Millis>, cancel: CancellationToken| {
                let cancelled = cancelled.clone();
                async move {
                    tokio::select! {
                        () = tokio::time::sleep(Duration::from_millis(a.ms)) => {
                            Ok(format!("worked {}ms", a.ms))
                        }
                        () = cancel.cancelled() => {
                            cancelled.store(true, Ordering::SeqCst);
                            Err(ToolError::Message("stopped".into()))
                        }
                    }
                }
            },
        )
        .tool(
            ToolSpec::new("ask").task_support(TaskSupport::Optional),
            |ctx: RequestContext| async move {
                let schema: ElicitationSchema = serde_json::from_value(
                    json!({"type": "object", "properties": {"name": {"type": "string"}}}),
                )
                .unwrap();
                let answer = ctx
                    .elicit_form_raw("Name?", schema)
                    .await
                    .map_err(ToolError::protocol)?;
                let name = answer.content.as_ref().and_then(|c| c.get("name")).cloned();
                Ok::<_, ToolError>(format!("hello {}", serde_json::to_string(&name).unwrap()))
            },
        )
        .tasks(settings)
        .build()
        .unwrap()
}

struct Client(DirectDispatcher);

impl Client {
    fn connect(server: &McpServer) -> Self {
        let peer = server.server().in_process(Era::Modern);
        let handler = handler_fn(|_, method: String, _| async move {
            Err(ErrorObject::method_not_found(&method).into())
        })
        .into_arc();
        let runner = peer.clone();
        tokio::spawn(async move { runner.run(handler).await });
        Self(peer)
    }

    async fn request(&self, method: &str, mut params: Value) -> Result<Value, ErrorObject> {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities":
                {"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}},
        });
        let r = self
            .0
            .send_request(
                method,
                Some(Payload::from_value(params)),
                CallOptions::new(),
            )
            .await?;
        Ok(r.into_value().unwrap())
    }

    async fn create(&self, tool: &str, args: Value) -> String {
        let r = self
            .request("tools/call", json!({"name": tool, "arguments": args}))
            .await
            .unwrap();
        assert_eq!(r["resultType"], "task", "{r}");
        r["taskId"].as_str().unwrap().to_owned()
    }

    async fn get(&self, id: &str) -> Result<Value, ErrorObject> {
        self.request("tasks/get", json!({"taskId": id})).await
    }

    async fn until(&self, id: &str, status: &str) -> Value {
        loop {
            let t = self.get(id).await.unwrap();
            let s = t["status"].as_str().unwrap().to_owned();
            if s == status || ["completed", "failed", "cancelled"].contains(&s.as_str()) {
                return t;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// SEP-2663 "Crash resilience" / scale-out: a task created on node A is polled to
/// completion on node B.
#[tokio::test]
async fn task_created_on_one_node_is_polled_on_another() {
    if !redis_up("task_created_on_one_node_is_polled_on_another").await {
        return;
    }
    within(async {
        let ns = namespace("poll");
        let a = node(&ns, TaskSettings::new(), Arc::default()).await;
        let b = node(&ns, TaskSettings::new(), Arc::default()).await;
        let id = Client::connect(&a).create("work", json!({"ms": 300})).await;
        let on_b = Client::connect(&b);
        assert_eq!(on_b.get(&id).await.unwrap()["status"], "working");
        let done = on_b.until(&id, "completed").await;
        assert_eq!(done["status"], "completed");
        assert_eq!(done["result"]["content"][0]["text"], "worked 300ms");
    })
    .await;
}

/// SEP-2663 "Task Cancellation" across nodes: tasks/cancel on node B reaches the handler
/// running on node A, and the task stays cancelled.
#[tokio::test]
async fn cancel_on_another_node_reaches_the_handler() {
    if !redis_up("cancel_on_another_node_reaches_the_handler").await {
        return;
    }
    within(async {
        let ns = namespace("cancel");
        let seen = Arc::new(AtomicBool::new(false));
        let a = node(&ns, TaskSettings::new(), seen.clone()).await;
        let b = node(&ns, TaskSettings::new(), Arc::default()).await;
        let id = Client::connect(&a)
            .create("work", json!({"ms": 60_000}))
            .await;
        let on_b = Client::connect(&b);
        let ack = on_b
            .request("tasks/cancel", json!({"taskId": id}))
            .await
            .unwrap();
        assert_eq!(ack["resultType"], "complete");
        for _ in 0..200 {
            if seen.load(Ordering::SeqCst) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(
            seen.load(Ordering::SeqCst),
            "node A's handler saw the cancel"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(on_b.get(&id).await.unwrap()["status"], "cancelled");
    })
    .await;
}

/// SEP-2663 "Task Update Requests" across nodes: the input request of a task running on
/// node A is answered with tasks/update on node B.
#[tokio::test]
async fn input_answered_on_another_node() {
    if !redis_up("input_answered_on_another_node").await {
        return;
    }
    within(async {
        let ns = namespace("input");
        let a = node(&ns, TaskSettings::new(), Arc::default()).await;
        let b = node(&ns, TaskSettings::new(), Arc::default()).await;
        let id = Client::connect(&a).create("ask", json!({})).await;
        let on_b = Client::connect(&b);
        let parked = on_b.until(&id, "input_required").await;
        let key = parked["inputRequests"]
            .as_object()
            .unwrap()
            .keys()
            .next()
            .unwrap()
            .clone();
        on_b.request(
            "tasks/update",
            json!({"taskId": id, "inputResponses":
                {key: {"action": "accept", "content": {"name": "Grace"}}}}),
        )
        .await
        .unwrap();
        let done = on_b.until(&id, "completed").await;
        assert_eq!(done["result"]["content"][0]["text"], "hello \"Grace\"");
    })
    .await;
}

/// Security: the per-principal cap counts unfinished tasks on every node; Redis drops a
/// task at its TTL (-32602 after).
#[tokio::test]
async fn cap_across_nodes_and_ttl_expiry() {
    if !redis_up("cap_across_nodes_and_ttl_expiry").await {
        return;
    }
    within(async {
        let ns = namespace("cap");
        let settings = TaskSettings::new()
            .max_active_per_principal(1)
            .default_ttl(Duration::from_millis(1500));
        let a = node(&ns, settings.clone(), Arc::default()).await;
        let b = node(&ns, settings, Arc::default()).await;
        let (on_a, on_b) = (Client::connect(&a), Client::connect(&b));
        let id = on_a.create("work", json!({"ms": 200})).await;
        let e = on_b
            .request(
                "tools/call",
                json!({"name": "work", "arguments": {"ms": 1}}),
            )
            .await
            .unwrap_err();
        assert_eq!(e.code.0, -32600);
        on_b.until(&id, "completed").await;
        // The finished task frees the slot; it stays readable until its TTL, then is gone.
        let second = on_b.create("work", json!({"ms": 1})).await;
        assert_eq!(
            on_a.until(&second, "completed").await["status"],
            "completed"
        );
        assert_eq!(on_a.get(&id).await.unwrap()["status"], "completed");
        tokio::time::sleep(Duration::from_millis(1600)).await;
        assert_eq!(on_a.get(&id).await.unwrap_err().code.0, -32602);
    })
    .await;
}

/// TL08 in Redis: an owner's finished tasks count against its retention cap on every node:
/// beyond it the one that expires first (the oldest) is dropped; when the rest are all
/// unfinished, one more is refused with -32600.
#[tokio::test]
async fn tl08_redis_store_drops_the_owners_oldest_finished_task() {
    if !redis_up("tl08_redis_store_drops_the_owners_oldest_finished_task").await {
        return;
    }
    within(async {
        let ns = namespace("retained");
        let settings = TaskSettings::new()
            .max_active_per_principal(5)
            .max_retained_per_owner(2);
        let a = node(&ns, settings.clone(), Arc::default()).await;
        let b = node(&ns, settings, Arc::default()).await;
        let (on_a, on_b) = (Client::connect(&a), Client::connect(&b));
        let first = on_a.create("work", json!({"ms": 1})).await;
        on_a.until(&first, "completed").await;
        tokio::time::sleep(Duration::from_millis(5)).await;
        let second = on_b.create("work", json!({"ms": 1})).await;
        on_b.until(&second, "completed").await;
        let third = on_b.create("work", json!({"ms": 60_000})).await;
        assert_eq!(on_a.get(&first).await.unwrap_err().code.0, -32602);
        assert_eq!(on_a.get(&second).await.unwrap()["status"], "completed");
        assert_eq!(on_a.get(&third).await.unwrap()["status"], "working");
        // The second (finished) makes room for a fourth; then only unfinished tasks are
        // left: refused.
        let fourth = on_a.create("work", json!({"ms": 60_000})).await;
        assert_eq!(on_b.get(&second).await.unwrap_err().code.0, -32602);
        assert_eq!(on_b.get(&fourth).await.unwrap()["status"], "working");
        let e = on_b
            .request(
                "tools/call",
                json!({"name": "work", "arguments": {"ms": 60_000}}),
            )
            .await
            .unwrap_err();
        assert_eq!(e.code.0, -32600, "{}", e.message);
        assert!(e.message.contains("at most 2"), "{}", e.message);
    })
    .await;
}

/// S112 at the store: the node running a task stops (its store dropped: no more
/// heartbeats); once three heartbeats are missed (here 100 ms each, well under the default
/// 1 s), another node's read records the unfinished task `failed` (-32603) and frees its
/// place under the owner's cap of unfinished tasks. While the node lives its task stays
/// `working`.
#[tokio::test]
async fn s112_a_stopped_nodes_unfinished_task_fails_after_its_heartbeat_lapses() {
    use ferromcp_server::tasks::{OwnerCaps, TaskRecord, TaskStore};
    use ferromcp_types::mcp::TaskStatus;
    let test = "s112_a_stopped_nodes_unfinished_task_fails_after_its_heartbeat_lapses";
    if !redis_up(test).await {
        return;
    }
    within(async {
        let ns = namespace("s112");
        let beat = Duration::from_millis(100);
        let a = RedisTaskStore::connect_with_heartbeat(&redis_url(), &ns, beat)
            .await
            .unwrap();
        let b = RedisTaskStore::connect_with_heartbeat(&redis_url(), &ns, beat)
            .await
            .unwrap();
        let caps = OwnerCaps::new(1, 8);
        let record = TaskRecord::new("t1", "principal:p", "2026-07-28T00:00:00Z", 60_000, 100);
        a.create(record, caps).await.unwrap();
        tokio::time::sleep(beat * 5).await;
        let seen = b.get("t1").await.unwrap().unwrap();
        assert_eq!(seen.status, TaskStatus::Working, "a live node's task");
        let next = TaskRecord::new("t2", "principal:p", "2026-07-28T00:00:00Z", 60_000, 100);
        assert!(b.create(next.clone(), caps).await.is_err(), "the cap holds");
        drop(a);
        let stopped = std::time::Instant::now();
        let failed = loop {
            let r = b.get("t1").await.unwrap().unwrap();
            if r.status != TaskStatus::Working {
                break r;
            }
            let waited = stopped.elapsed();
            assert!(
                waited < Duration::from_secs(1),
                "still working after {waited:?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        assert_eq!(failed.status, TaskStatus::Failed);
        assert_eq!(failed.error.unwrap().code.0, -32603);
        b.create(next, caps).await.unwrap();
    })
    .await;
}
