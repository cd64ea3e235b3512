//! `ferromcp inspect --web` from outside the page: the MCP Apps host wired in (its script on
//! the page origin, the real sandbox page on the sandbox origin, only for the inspector's own
//! origins), the bound on the page's requests in flight, and `--allow-host`.

#![allow(clippy::panic)]

use serde_json::{Value, json};
use tokio::process::Command;

#[path = "support/inspect_web.rs"]
mod support;
use support::{DEADLINE, Inspector, encode, get_head, send, start};

/// S92: the page origin serves the MCP Apps host script (token-checked); the sandbox origin
/// serves the real sandbox proxy page at /sandbox.html only for `?host=` one of the
/// inspector's own origins, with its CSP framed only by that origin; another `?host=`, none,
/// or another path gets no page.
#[tokio::test]
async fn s92_the_apps_host_is_served_and_the_sandbox_page_only_for_the_inspector() {
    tokio::time::timeout(DEADLINE, async {
        let i = start(&[]).await;
        let (s, js) = i.get("/assets/apps-host.js").await;
        assert_eq!(s, 200);
        assert!(js.contains("window.FerromcpApps"), "{js:.200}");
        let (s, _) = send(&i.addr, "GET", "/assets/apps-host.js", &[], "").await;
        assert_eq!(s, 401);
        let sandbox = i.sandbox().await;
        let port = i.addr.rsplit_once(':').map(|(_, p)| p).expect("a port");
        for origin in [i.origin(), format!("http://localhost:{port}")] {
            let path = format!("/sandbox.html?host={}", encode(&origin));
            let (s, head, body) = get_head(&sandbox, &path, &sandbox).await;
            assert_eq!(s, 200, "{head}");
            assert!(body.contains("sandbox-resource-ready"), "{body:.300}");
            assert!(
                head.contains(&format!("frame-ancestors {origin}")),
                "{head}"
            );
            assert!(head.contains("object-src 'none'"), "{head}");
            assert!(head.contains("x-content-type-options: nosniff"), "{head}");
        }
        for path in [
            "/sandbox.html".to_owned(),
            "/sandbox.html?host=http%3A%2F%2Fevil.example".to_owned(),
            format!("/sandbox.html?host={}", encode("http://127.0.0.1:1")),
        ] {
            let (s, _, body) = get_head(&sandbox, &path, &sandbox).await;
            assert_eq!(s, 403, "{path}");
            assert!(!body.contains("sandbox-resource-ready"), "{path}");
        }
        let path = format!("/?host={}", encode(&i.origin()));
        let (s, _, _) = get_head(&sandbox, &path, &sandbox).await;
        assert_eq!(s, 404);
    })
    .await
    .expect("within the deadline");
}

/// The arguments of a `tools/call test_elicitation` (it waits for the user's answer).
fn waiting_call(server: u64, call: &str) -> Value {
    json!({ "server": server, "method": "tools/call", "callId": call,
            "params": { "name": "test_elicitation", "arguments": { "message": call } } })
}

async fn connect(i: &Inspector) -> u64 {
    let (s, v) = i.connect_demo("2025-11-25").await;
    assert_eq!(s, 200, "{v}");
    v["server"]["id"].as_u64().expect("an id")
}

/// S90: the page's requests in flight are bounded per server (`--max-requests-per-server`)
/// and in total (`--max-requests`): one more is 429 with the flag's name, and a finished
/// request gives its place back.
#[tokio::test]
async fn s90_requests_in_flight_are_bounded_per_server_and_in_total() {
    tokio::time::timeout(DEADLINE, async {
        let i = start(&[
            "--max-requests",
            "2",
            "--max-requests-per-server",
            "1",
            "--max-servers",
            "3",
        ])
        .await;
        let (a, b, c) = (connect(&i).await, connect(&i).await, connect(&i).await);
        let first = i.post("/api/request", waiting_call(a, "a1"));
        let rest = async {
            let ask_a = i.pending("elicitation", 0).await;
            let per_server = i.post("/api/request", waiting_call(a, "a2")).await;
            let second = i.post("/api/request", waiting_call(b, "b1"));
            let more = async {
                let ask_b = i.pending("elicitation", 1).await;
                let total = i.post("/api/request", waiting_call(c, "c1")).await;
                for id in [ask_a, ask_b] {
                    let (s, _) = i
                        .post(
                            "/api/answer",
                            json!({ "id": id, "result": { "action": "decline" } }),
                        )
                        .await;
                    assert_eq!(s, 200);
                }
                total
            };
            let ((s2, r2), total) = tokio::join!(second, more);
            assert_eq!(s2, 200, "{r2}");
            (per_server, total)
        };
        let ((s1, r1), ((s_per, r_per), (s_total, r_total))) = tokio::join!(first, rest);
        assert_eq!(s1, 200, "{r1}");
        assert_eq!(s_per, 429, "{r_per}");
        assert!(
            r_per.to_string().contains("--max-requests-per-server"),
            "{r_per}"
        );
        assert_eq!(s_total, 429, "{r_total}");
        assert!(r_total.to_string().contains("--max-requests"), "{r_total}");
        // The places are given back: a request to the third server now goes through.
        let list = json!({ "server": c, "method": "tools/list" });
        let (s, r) = i.post("/api/request", list).await;
        assert_eq!(s, 200, "{r}");
        assert!(r["result"]["tools"].is_array(), "{r}");
        let (s, _) = i.get("/api/config").await;
        assert_eq!(s, 200);
        // Zero is refused.
        let out = Command::new(env!("CARGO_BIN_EXE_ferromcp"))
            .args(["inspect", "--web", "--no-open", "--max-requests", "0"])
            .kill_on_drop(true)
            .output()
            .await
            .expect("runs");
        assert_eq!(out.status.code(), Some(1));
    })
    .await
    .expect("within the deadline");
}

/// S91: `--allow-host NAME[:PORT]` (repeatable): the Host and Origin checks accept NAME on
/// the listener's port and NAME:PORT as given, on the page and the sandbox origin (whose
/// page is served for such a host origin too); other names and ports are still 421, and a
/// value that is not NAME[:PORT] is refused at start.
#[tokio::test]
async fn s91_allow_host_names_more_hosts() {
    tokio::time::timeout(DEADLINE, async {
        let i = start(&[
            "--allow-host",
            "inspector.test",
            "--allow-host",
            "proxy.test:8443",
        ])
        .await;
        let port = i.addr.rsplit_once(':').map(|(_, p)| p).expect("a port");
        let named = format!("inspector.test:{port}");
        let path = format!("/api/config?token={}", i.token);
        for host in [named.as_str(), "proxy.test:8443", "INSPECTOR.test"] {
            let host = if host == "INSPECTOR.test" {
                format!("INSPECTOR.test:{port}")
            } else {
                host.to_owned()
            };
            let origin = format!("http://{host}");
            let (s, body) = send(
                &i.addr,
                "GET",
                &path,
                &[("Host", &host), ("Origin", &origin)],
                "",
            )
            .await;
            assert_eq!(s, 200, "{host}: {body}");
        }
        for host in [
            "inspector.test:1",
            "inspector.test",
            "evil.test:8443",
            "proxy.test",
        ] {
            let (s, _) = send(&i.addr, "GET", &path, &[("Host", host)], "").await;
            assert_eq!(s, 421, "{host}");
        }
        let (s, _) = send(
            &i.addr,
            "GET",
            &path,
            &[("Origin", "http://evil.test:8443")],
            "",
        )
        .await;
        assert_eq!(s, 403);
        // The sandbox origin: its own port under the name, and the page for that origin.
        let sandbox = i.sandbox().await;
        let sport = sandbox.rsplit_once(':').map(|(_, p)| p).expect("a port");
        let page = format!("/sandbox.html?host={}", encode(&format!("http://{named}")));
        let (s, head, _) = get_head(&sandbox, &page, &format!("inspector.test:{sport}")).await;
        assert_eq!(s, 200, "{head}");
        assert!(
            head.contains(&format!("frame-ancestors http://{named}")),
            "{head}"
        );
        let (s, _, _) = get_head(&sandbox, &page, "evil.test").await;
        assert_eq!(s, 421);
        // Issue #22: on 0.0.0.0 only the literal bound address was accepted, so a browser on
        // another machine (Host: the machine's name) got 421. With --allow-host it is served,
        // and the page may frame the sandbox under that name.
        let wide = start(&[
            "--listen",
            "0.0.0.0:0",
            "--allow-non-loopback",
            "--allow-host",
            "inspector.test",
        ])
        .await;
        let wport = wide.addr.rsplit_once(':').map(|(_, p)| p).expect("a port");
        let named = format!("inspector.test:{wport}");
        let page = format!("/?token={}", wide.token);
        let (s, head, _) = get_head(&wide.addr, &page, &named).await;
        assert_eq!(s, 200, "{head}");
        let wsandbox = wide.sandbox().await;
        assert!(wsandbox.starts_with("0.0.0.0:"), "{wsandbox}");
        let wsport = wsandbox.rsplit_once(':').map(|(_, p)| p).expect("a port");
        assert!(
            head.contains(&format!("http://inspector.test:{wsport}")),
            "frame-src: {head}"
        );
        let (s, _, _) = get_head(&wide.addr, &page, &format!("127.0.0.1:{wport}")).await;
        assert_eq!(s, 421);
        let path = format!("/sandbox.html?host={}", encode(&format!("http://{named}")));
        let (s, _, _) = get_head(&wsandbox, &path, &format!("inspector.test:{wsport}")).await;
        assert_eq!(s, 200);
        for bad in ["http://x.test/", "*.test", "a b", ""] {
            let out = Command::new(env!("CARGO_BIN_EXE_ferromcp"))
                .args(["inspect", "--web", "--no-open", "--allow-host", bad])
                .kill_on_drop(true)
                .output()
                .await
                .expect("runs");
            assert_eq!(out.status.code(), Some(1), "{bad:?}");
            assert!(out.stdout.is_empty(), "{bad:?}");
        }
    })
    .await
    .expect("within the deadline");
}
