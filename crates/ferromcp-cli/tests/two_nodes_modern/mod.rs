//! Issue 23 point 4 at 2026-07-28: two `ferromcp serve --http --redis URL` nodes (and two
//! gateway nodes) share the tasks of the `io.modelcontextprotocol/tasks` extension through
//! Redis. There is no session at 2026-07-28, so each request may reach either node: a task
//! created through node A is polled, answered (`tasks/update`), cancelled and read through
//! node B; another principal never reaches it; and a task whose node dies ends `failed`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ferromcp_auth_server::{AuthServerConfig, AuthorizationServer, ClientRecord};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::TcpListener;
use tokio::process::{Child, Command};

use super::{answer, exchange_until, redis_url, start_gateway};

const LIMIT: Duration = Duration::from_secs(90);

/// A 2026-07-28 request (id 1) to `addr` declaring the tasks extension and elicitation, with
/// `token` as its bearer if any: the JSON-RPC answer.
async fn modern(addr: &str, token: Option<&str>, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {},
            "extensions": {"io.modelcontextprotocol/tasks": {}},
        },
    });
    let name = params
        .get("name")
        .or_else(|| params.get("taskId"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let bearer = token.map(|t| format!("Bearer {t}"));
    let mut headers = vec![
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", method),
        ("mcp-name", name.as_str()),
    ];
    if let Some(b) = &bearer {
        headers.push(("authorization", b.as_str()));
    }
    // An error answer comes with a 4xx/5xx status at 2026-07-28: the body is what counts.
    answer(
        &exchange_until(addr, "POST", &headers, &body, |_| false).await,
        1,
    )
}

/// `tool` called with `args` as a task through `addr`: the task's id.
async fn create(addr: &str, token: Option<&str>, tool: &str, args: Value) -> String {
    let v = modern(
        addr,
        token,
        "tools/call",
        json!({"name": tool, "arguments": args}),
    )
    .await;
    assert_eq!(v["result"]["resultType"], "task", "{v}");
    v["result"]["taskId"].as_str().unwrap().to_owned()
}

/// `tasks/get` of `id` through `addr`.
async fn get(addr: &str, token: Option<&str>, id: &str) -> Value {
    modern(addr, token, "tasks/get", json!({"taskId": id})).await
}

/// Polls `id` through `addr` until its status is `status` (any other status than `working`
/// on the way fails): the last `tasks/get` result.
async fn until(addr: &str, token: Option<&str>, id: &str, status: &str) -> Value {
    loop {
        let v = get(addr, token, id).await;
        let now = v["result"]["status"]
            .as_str()
            .unwrap_or_else(|| panic!("{v}"));
        if now == status {
            return v["result"].clone();
        }
        assert_eq!(now, "working", "waiting for {status}: {v}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// S110: a 2026-07-28 task created through node A (no principal: the task id is the only
/// secret) is polled to its inlined result, has its input request answered, and is
/// cancelled, each through node B.
#[tokio::test]
async fn s110_modern_task_created_on_a_is_served_by_b() {
    let Some(url) = redis_url("s110_modern_task_created_on_a_is_served_by_b") else {
        return;
    };
    tokio::time::timeout(LIMIT, async {
        let ((_a, a), (_b, b)) = (node(0, &url, &[]).await, node(0, &url, &[]).await);
        // Polled to its result on B.
        let args = json!({"seconds": 0.5, "label": "two-nodes"});
        let id = create(&a, None, "slow_compute", args).await;
        let done = until(&b, None, &id, "completed").await;
        assert_eq!(
            done["result"]["content"][0]["text"],
            "Computed two-nodes in 0.5s"
        );

        // Its input request answered on B.
        let id = create(&a, None, "confirm_delete", json!({"filename": "a.txt"})).await;
        let asked = until(&b, None, &id, "input_required").await;
        let requests = asked["inputRequests"].as_object().unwrap();
        assert_eq!(requests.len(), 1, "{asked}");
        let key = requests.keys().next().unwrap().clone();
        let answers = json!({key: {"action": "accept", "content": {"confirm": true}}});
        let ack = modern(
            &b,
            None,
            "tasks/update",
            json!({"taskId": id, "inputResponses": answers}),
        )
        .await;
        assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
        let done = until(&b, None, &id, "completed").await;
        assert_eq!(done["result"]["content"][0]["text"], "Deleted a.txt");

        // Cancelled on B: A shows it cancelled.
        let args = json!({"seconds": 60, "label": "long"});
        let id = create(&a, None, "slow_compute", args).await;
        let ack = modern(&b, None, "tasks/cancel", json!({"taskId": id})).await;
        assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
        assert_eq!(get(&a, None, &id).await["result"]["status"], "cancelled");
    })
    .await
    .unwrap();
}

/// S112: node A dies while its 2026-07-28 task runs: once A's heartbeat lapses (three missed,
/// 1 s each), node B answers the task `failed` with an error, instead of `working` forever.
#[tokio::test]
async fn s112_modern_task_of_a_dead_node_fails_on_b() {
    let Some(url) = redis_url("s112_modern_task_of_a_dead_node_fails_on_b") else {
        return;
    };
    tokio::time::timeout(LIMIT, async {
        let (a, b) = (node(0, &url, &[]).await, node(0, &url, &[]).await);
        orphaned_task_fails(a, &b.1, "slow_compute").await;
    })
    .await
    .unwrap();
}

/// S112 for the gateway: gateway A dies while its front task (following its backend's task)
/// runs; gateway B answers the task `failed` once A's heartbeat lapses.
#[tokio::test]
async fn s112_gateway_modern_task_of_a_dead_node_fails_on_b() {
    let Some(url) = redis_url("s112_gateway_modern_task_of_a_dead_node_fails_on_b") else {
        return;
    };
    tokio::time::timeout(LIMIT, async {
        let config = super::gateway_config("s112");
        let a = start_gateway(&config, &url).await;
        let (_b, b) = start_gateway(&config, &url).await;
        orphaned_task_fails(a, &b, "demo_slow_compute").await;
    })
    .await
    .unwrap();
}

/// Creates a long `tool` task through node `a`, kills `a`, and polls the task through `b`
/// until it is no longer `working`: it must end `failed` (-32603) within 20 s.
async fn orphaned_task_fails((mut a_child, a): (Child, String), b: &str, tool: &str) {
    let args = json!({"seconds": 60, "label": "orphan"});
    let id = create(&a, None, tool, args).await;
    assert_eq!(get(b, None, &id).await["result"]["status"], "working");
    a_child.kill().await.unwrap();
    let started = Instant::now();
    let failed = loop {
        let v = get(b, None, &id).await;
        if v["result"]["status"] != "working" {
            break v["result"].clone();
        }
        assert!(started.elapsed() < Duration::from_secs(20), "still {v}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(failed["error"]["code"], -32603, "{failed}");
}

/// An authorization server on its own address for `resource`, with two operator clients
/// (`alice`, `bob`) allowed the `client_credentials` grant: its issuer URL.
async fn issuer(resource: &str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let mut config = AuthServerConfig::default()
        .issuer(format!("http://{addr}"))
        .scopes_supported(["mcp"])
        .default_scopes(["mcp"])
        .resource(resource);
    for who in ["alice", "bob"] {
        config = config.client(
            ClientRecord::confidential(who, &format!("{who}-secret"), vec![])
                .grant_types(["client_credentials"])
                .scope(["mcp"]),
        );
    }
    let server = Arc::new(AuthorizationServer::new(config).unwrap());
    let issuer = server.issuer().to_owned();
    tokio::spawn(async move {
        loop {
            let Ok((stream, peer)) = listener.accept().await else {
                return;
            };
            let server = server.clone();
            tokio::spawn(async move {
                let svc = service_fn(move |mut req: hyper::Request<hyper::body::Incoming>| {
                    let server = server.clone();
                    req.extensions_mut().insert::<std::net::SocketAddr>(peer);
                    async move { Ok::<_, std::convert::Infallible>(server.handle(req).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    issuer
}

/// A `client_credentials` token of `issuer` for `resource`, for the client whose
/// `client_secret_basic` credentials are `basic`.
async fn token(issuer: &str, basic: &str, resource: &str) -> String {
    let addr = issuer.strip_prefix("http://").unwrap();
    let body = format!(
        "grant_type=client_credentials&scope=mcp&resource={}",
        resource.replace(':', "%3A").replace('/', "%2F")
    );
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let req = format!(
        "POST /token HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\nauthorization: Basic \
         {basic}\r\ncontent-type: application/x-www-form-urlencoded\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    tokio::io::AsyncWriteExt::write_all(&mut s, req.as_bytes())
        .await
        .unwrap();
    let mut out = String::new();
    tokio::io::AsyncReadExt::read_to_string(&mut s, &mut out)
        .await
        .unwrap();
    let json = out.split("\r\n\r\n").nth(1).unwrap_or_default();
    let v: Value = serde_json::from_str(json).unwrap_or_else(|_| panic!("{out}"));
    v["access_token"]
        .as_str()
        .unwrap_or_else(|| panic!("{out}"))
        .to_owned()
}

/// `ferromcp serve --http 127.0.0.1:PORT --redis URL EXTRA…` (port 0: any) as a child, once
/// it serves, and the address it serves; its stderr is drained (a node whose stderr is
/// closed cannot log).
async fn node(port: u16, url: &str, extra: &[&str]) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ferromcp"))
        .args([
            "serve",
            "--http",
            &format!("127.0.0.1:{port}"),
            "--redis",
            url,
        ])
        .args(extra)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let addr = loop {
        let line = lines
            .next_line()
            .await
            .unwrap()
            .expect("the address on stderr");
        if let Some(rest) = line.split("at http://").nth(1) {
            break rest.split("/mcp").next().unwrap().to_owned();
        }
    };
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, addr)
}

/// [`node`] as a resource server of `issuer` for `resource`.
async fn protected_node(port: u16, url: &str, issuer: &str, resource: &str) -> Child {
    let jwks = format!("{issuer}/jwks");
    let auth = [
        "--auth-issuer",
        issuer,
        "--auth-jwks",
        &jwks,
        "--auth-resource",
        resource,
        "--auth-scope",
        "mcp",
    ];
    node(port, url, &auth).await.0
}

async fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    l.local_addr().unwrap().port()
}

/// S111 (SEP-2663 task isolation across nodes): alice's 2026-07-28 task created through node
/// A is alice's on node B (polled, cancelled there), and bob gets the unknown-task error
/// (-32602) for it on both nodes, for tasks/get, tasks/update and tasks/cancel.
#[tokio::test]
async fn s111_another_principal_never_reaches_a_task_on_any_node() {
    let Some(url) = redis_url("s111_another_principal_never_reaches_a_task_on_any_node") else {
        return;
    };
    tokio::time::timeout(LIMIT, async {
        let (port_a, port_b) = (free_port().await, free_port().await);
        // The address clients know (a load balancer's); both nodes serve that resource.
        let resource = format!("http://127.0.0.1:{port_a}/mcp");
        let iss = issuer(&resource).await;
        let _a = protected_node(port_a, &url, &iss, &resource).await;
        let _b = protected_node(port_b, &url, &iss, &resource).await;
        let (a, b) = (format!("127.0.0.1:{port_a}"), format!("127.0.0.1:{port_b}"));
        let alice = token(&iss, "YWxpY2U6YWxpY2Utc2VjcmV0", &resource).await;
        let bob = token(&iss, "Ym9iOmJvYi1zZWNyZXQ=", &resource).await;

        let args = json!({"seconds": 60, "label": "alice's"});
        let id = create(&a, Some(&alice), "slow_compute", args).await;
        assert_eq!(
            get(&b, Some(&alice), &id).await["result"]["status"],
            "working"
        );
        for node in [&a, &b] {
            for (method, params) in [
                ("tasks/get", json!({"taskId": id})),
                ("tasks/update", json!({"taskId": id, "inputResponses": {}})),
                ("tasks/cancel", json!({"taskId": id})),
            ] {
                let v = modern(node, Some(&bob), method, params).await;
                assert_eq!(v["error"]["code"], -32602, "bob's {method} on {node}: {v}");
            }
        }
        // No token: no task either (401 before any task is looked up).
        let out = exchange_until(&b, "POST", &[], "{}", |_| false).await;
        assert!(out.starts_with("HTTP/1.1 401"), "{out}");
        assert_eq!(
            get(&a, Some(&alice), &id).await["result"]["status"],
            "working"
        );
        let ack = modern(&b, Some(&alice), "tasks/cancel", json!({"taskId": id})).await;
        assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
        assert_eq!(
            get(&a, Some(&alice), &id).await["result"]["status"],
            "cancelled"
        );
    })
    .await
    .unwrap();
}

/// S113: the gateway's front serves 2026-07-28 tasks too: a front task created through
/// gateway A (following its backend's task on A) is polled to its result through gateway B.
#[tokio::test]
async fn s113_gateway_modern_task_created_on_a_completes_on_b() {
    let Some(url) = redis_url("s113_gateway_modern_task_created_on_a_completes_on_b") else {
        return;
    };
    tokio::time::timeout(LIMIT, async {
        let config = super::gateway_config("s113");
        let (_a, a) = start_gateway(&config, &url).await;
        let (_b, b) = start_gateway(&config, &url).await;
        let args = json!({"seconds": 0.5, "label": "front"});
        let id = create(&a, None, "demo_slow_compute", args).await;
        let done = until(&b, None, &id, "completed").await;
        assert_eq!(
            done["result"]["content"][0]["text"],
            "Computed front in 0.5s"
        );
    })
    .await
    .unwrap();
}

/// A `subscriptions/listen` stream opened through `addr` with `token`, watching the tasks
/// `ids` (2026-07-28, tasks extension): everything it has received so far, growing as it
/// comes (the stream is read in the background until the test ends).
async fn listen(addr: &str, token: &str, ids: &[&str]) -> Arc<std::sync::Mutex<String>> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen", "params": {
        "notifications": {"taskIds": ids},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {
                "extensions": {"io.modelcontextprotocol/tasks": {}},
            },
        },
    }})
    .to_string();
    let req = format!(
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\ncontent-type: \
         application/json\r\naccept: application/json, text/event-stream\r\n\
         mcp-protocol-version: 2026-07-28\r\nmcp-method: subscriptions/listen\r\n\
         authorization: Bearer {token}\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(req.as_bytes()).await.unwrap();
    let seen = Arc::new(std::sync::Mutex::new(String::new()));
    let sink = seen.clone();
    tokio::spawn(async move {
        let mut buf = [0u8; 4096];
        while let Ok(n) = s.read(&mut buf).await {
            if n == 0 {
                break;
            }
            sink.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    seen
}

/// The JSON-RPC messages of an event stream's text received so far.
fn events(seen: &std::sync::Mutex<String>) -> Vec<Value> {
    let text = seen.lock().unwrap().clone();
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str(d.trim()).ok())
        .collect()
}

/// Waits (at most 10 s) until the stream has a message with `method` whose params satisfy
/// `ok`: those params.
async fn until_event(
    seen: &std::sync::Mutex<String>,
    method: &str,
    ok: impl Fn(&Value) -> bool,
) -> Value {
    let started = Instant::now();
    loop {
        let found = events(seen)
            .into_iter()
            .find(|m| m["method"] == method && ok(&m["params"]));
        if let Some(m) = found {
            return m["params"].clone();
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "no {method} within 10 s: {}",
            seen.lock().unwrap()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The `notifications/tasks` a stream received about `id`.
fn about(seen: &std::sync::Mutex<String>, id: &str) -> Vec<Value> {
    events(seen)
        .into_iter()
        .filter(|m| m["method"] == "notifications/tasks" && m["params"]["taskId"] == id)
        .map(|m| m["params"].clone())
        .collect()
}

/// Answers the question of `id` (a `confirm_delete` task in `input_required`) through `addr`.
async fn confirm(addr: &str, token: &str, id: &str) {
    let asked = until(addr, Some(token), id, "input_required").await;
    let key = asked["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    let answers = json!({key: {"action": "accept", "content": {"confirm": true}}});
    let ack = modern(
        addr,
        Some(token),
        "tasks/update",
        json!({"taskId": id, "inputResponses": answers}),
    )
    .await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
}

/// Drops every pub/sub connection of the Redis at `url` (`CLIENT KILL TYPE pubsub`).
async fn kill_subscriptions(url: &str) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = url.trim_start_matches("redis://").trim_end_matches('/');
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(b"CLIENT KILL TYPE pubsub\r\n").await.unwrap();
    let mut buf = [0u8; 64];
    let n = s.read(&mut buf).await.unwrap();
    assert!(
        buf[..n].starts_with(b":"),
        "{:?}",
        String::from_utf8_lossy(&buf[..n])
    );
}

/// S120 (SEP-2663 "Task Status Notifications" across nodes): alice's 2026-07-28 task created
/// through node A, watched on a listen stream on node B, changes on A (answered with
/// `tasks/update` through A, then completed there): B's stream gets `notifications/tasks`
/// with the task as `tasks/get` shows it; bob's stream on B, asking for the same task, gets
/// nothing about it (only his own task's changes). F36: node B's subscription to the other
/// nodes' task changes (Redis pub/sub) that Redis drops is made again: a change on A after
/// that still reaches B's stream.
#[tokio::test]
async fn s120_task_notifications_reach_listen_streams_on_other_nodes() {
    let Some(url) = redis_url("s120_task_notifications_reach_listen_streams_on_other_nodes") else {
        return;
    };
    tokio::time::timeout(LIMIT, async {
        let (port_a, port_b) = (free_port().await, free_port().await);
        let resource = format!("http://127.0.0.1:{port_a}/mcp");
        let iss = issuer(&resource).await;
        let _a = protected_node(port_a, &url, &iss, &resource).await;
        let _b = protected_node(port_b, &url, &iss, &resource).await;
        let (a, b) = (format!("127.0.0.1:{port_a}"), format!("127.0.0.1:{port_b}"));
        let alice = token(&iss, "YWxpY2U6YWxpY2Utc2VjcmV0", &resource).await;
        let bob = token(&iss, "Ym9iOmJvYi1zZWNyZXQ=", &resource).await;

        let args = json!({"filename": "a.txt"});
        let hers = create(&a, Some(&alice), "confirm_delete", args.clone()).await;
        let his = create(&a, Some(&bob), "confirm_delete", args).await;
        until(&a, Some(&alice), &hers, "input_required").await;
        let alices = listen(&b, &alice, &[&hers]).await;
        let bobs = listen(&b, &bob, &[&hers, &his]).await;
        let ack = "notifications/subscriptions/acknowledged";
        let agreed = until_event(&alices, ack, |_| true).await;
        assert_eq!(agreed["notifications"]["taskIds"], json!([hers]));
        let agreed = until_event(&bobs, ack, |_| true).await;
        assert_eq!(agreed["notifications"]["taskIds"], json!([his]));

        confirm(&a, &alice, &hers).await;
        let done = until_event(&alices, "notifications/tasks", |p| {
            p["taskId"] == hers && p["status"] == "completed"
        })
        .await;
        assert_eq!(done["result"]["content"][0]["text"], "Deleted a.txt");
        assert!(done["_meta"]["io.modelcontextprotocol/subscriptionId"].is_number());
        confirm(&a, &bob, &his).await;
        until_event(&bobs, "notifications/tasks", |p| {
            p["taskId"] == his && p["status"] == "completed"
        })
        .await;
        assert_eq!(about(&bobs, &hers), Vec::<Value>::new(), "not bob's");

        // F36: the subscriptions dropped by Redis; changes on A reach B again once B's is
        // back (each `tasks/update` through A is a change: A announces it).
        let waiting = create(
            &a,
            Some(&alice),
            "confirm_delete",
            json!({"filename": "b.txt"}),
        )
        .await;
        until(&a, Some(&alice), &waiting, "input_required").await;
        let watching = listen(&b, &alice, &[&waiting]).await;
        until_event(&watching, ack, |_| true).await;
        kill_subscriptions(&url).await;
        let started = Instant::now();
        while about(&watching, &waiting).is_empty() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "B never subscribed again"
            );
            let poke = json!({"taskId": waiting, "inputResponses": {}});
            modern(&a, Some(&alice), "tasks/update", poke).await;
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        assert_eq!(about(&watching, &waiting)[0]["status"], "input_required");
    })
    .await
    .unwrap();
}
