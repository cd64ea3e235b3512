//! Interop: ferromcp's client against MCP servers written with other SDKs (the Python SDK, the
//! TypeScript SDK, rmcp), over stdio. Run by `.ci/interop.sh`; skipped unless
//! `FERROMCP_INTEROP=1`.
//!
//! Environment:
//! - `FERROMCP_INTEROP_PEER`: the peer server's command line as a JSON array of strings
//!   (`["node", "interop/typescript/server.mjs"]`); the child inherits this environment.
//! - `FERROMCP_INTEROP_LIFECYCLE`: `handshake`, `modern` or `auto` (default `auto`).
//! - `FERROMCP_INTEROP_ERA`: the era the connection must end up in, `handshake` or `modern`
//!   (default: the lifecycle's own; required with `auto`).
//!
//! Every peer server exposes the same contents (see `interop/README.md`): tools `add`, `echo`,
//! `fail` (an error result); resource `interop://hello` (text starting "hello from");
//! prompt `greet` (argument `name`). Each check prints `ok   <id>` or `FAIL <id>: <why>` on
//! stdout (run with `--nocapture`); `.ci/interop.sh` compares the failed ids with
//! `interop/expected-failures.txt`. The test fails if any check failed.
//!
//! Spec: 2025-11-25 basic/lifecycle, server/tools, server/resources, server/prompts;
//! 2026-07-28 server/discover and the per-request `_meta` envelope.

#![allow(clippy::unwrap_used, clippy::panic, clippy::print_stdout)]

use std::future::Future;
use std::time::Duration;

use ferromcp_client::{Client, Lifecycle, StderrMode, StdioTransport};
use ferromcp_types::Era;
use ferromcp_types::mcp::ResourceContents;
use serde_json::json;

/// The whole pairing, connect to shutdown.
const LIMIT: Duration = Duration::from_secs(60);
/// One check.
const STEP: Duration = Duration::from_secs(15);

struct Checks {
    failed: Vec<&'static str>,
}

impl Checks {
    async fn run<F>(&mut self, id: &'static str, check: F)
    where
        F: Future<Output = Result<(), String>>,
    {
        let outcome = match tokio::time::timeout(STEP, check).await {
            Ok(outcome) => outcome,
            Err(_) => Err(format!("no answer within {STEP:?}")),
        };
        match outcome {
            Ok(()) => println!("ok   {id}"),
            Err(why) => {
                println!("FAIL {id}: {why}");
                self.failed.push(id);
            }
        }
    }
}

fn ensure(cond: bool, why: impl FnOnce() -> String) -> Result<(), String> {
    if cond { Ok(()) } else { Err(why()) }
}

fn era_named(name: &str) -> Era {
    match name {
        "handshake" => Era::Handshake,
        "modern" => Era::Modern,
        other => panic!("unknown era {other:?} (handshake, modern)"),
    }
}

async fn pairing(command: Vec<String>, lifecycle: Lifecycle, era: Era) -> Vec<&'static str> {
    // On its own line: libtest has printed `test peer_servers ... ` without a newline.
    println!("\npeer {command:?}, lifecycle {lifecycle:?}, expecting the {era:?} era");
    let mut checks = Checks { failed: Vec::new() };
    let (program, args) = command.split_first().unwrap();
    let transport = StdioTransport::new(program)
        .args(args)
        .stderr(StderrMode::Null);
    let connected = tokio::time::timeout(
        STEP,
        Client::builder().lifecycle(lifecycle).connect(transport),
    )
    .await;
    let client = match connected {
        Ok(Ok(client)) => client,
        Ok(Err(e)) => {
            println!("FAIL connect: {e}");
            return vec!["connect"];
        }
        Err(_) => {
            println!("FAIL connect: no session within {STEP:?}");
            return vec!["connect"];
        }
    };
    let session = client.session().clone();
    checks
        .run("connect", async {
            ensure(session.era == era, || {
                format!(
                    "era {:?} ({}), expected {era:?}",
                    session.era, session.protocol_version
                )
            })?;
            ensure(session.server_info.is_some(), || "no serverInfo".to_owned())
        })
        .await;
    println!("     protocol {}", session.protocol_version);

    let mut tools = Vec::new();
    checks
        .run("tools-list", async {
            tools = client.list_all_tools().await.map_err(|e| e.to_string())?;
            for name in ["add", "echo", "fail"] {
                ensure(tools.iter().any(|t| t.name == name), || {
                    let names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
                    format!("missing {name}; got {names:?}")
                })?;
            }
            Ok(())
        })
        .await;

    checks
        .run("tools-call", async {
            let r = client
                .call_tool("add", json!({"a": 2, "b": 3}))
                .await
                .map_err(|e| e.to_string())?;
            let text = r.content.first().and_then(|c| c.as_text());
            ensure(r.is_error != Some(true) && text == Some("5"), || {
                format!("add: {r:?}")
            })?;
            let r = client
                .call_tool("echo", json!({"text": "héllo"}))
                .await
                .map_err(|e| e.to_string())?;
            let text = r.content.first().and_then(|c| c.as_text());
            ensure(text == Some("héllo"), || format!("echo: {r:?}"))
        })
        .await;

    // A peer whose `add` declares an output schema (the Python SDK derives one from the
    // return annotation) must send structured content with it.
    let structured = tools
        .iter()
        .find(|t| t.name == "add")
        .is_some_and(|t| t.output_schema.is_some());
    if structured {
        checks
            .run("tools-call-structured", async {
                let r = client
                    .call_tool("add", json!({"a": 2, "b": 3}))
                    .await
                    .map_err(|e| e.to_string())?;
                ensure(r.structured_content.is_some(), || {
                    format!("no structuredContent: {r:?}")
                })
            })
            .await;
    } else {
        println!("skip tools-call-structured: the peer's add declares no outputSchema");
    }

    // A peer that lists `protocol_info` (the TS SDK v2 peer) reports, as structured output, the
    // era and revision it served the call at: the server's side of the negotiation.
    if tools.iter().any(|t| t.name == "protocol_info") {
        checks
            .run("tools-call-protocol-info", async {
                let r = client
                    .call_tool("protocol_info", json!({}))
                    .await
                    .map_err(|e| e.to_string())?;
                let want = match era {
                    Era::Modern => json!({"era": "modern", "protocolVersion": "2026-07-28"}),
                    Era::Handshake => json!({"era": "handshake", "protocolVersion": "2025-11-25"}),
                };
                ensure(r.structured_content.as_ref() == Some(&want), || {
                    format!("expected {want}, got {r:?}")
                })
            })
            .await;
    }

    checks
        .run("tools-call-error-result", async {
            let r = client
                .call_tool("fail", json!({}))
                .await
                .map_err(|e| e.to_string())?;
            ensure(r.is_error == Some(true), || format!("fail: {r:?}"))
        })
        .await;

    checks
        .run("resources-list", async {
            let list = client
                .list_all_resources()
                .await
                .map_err(|e| e.to_string())?;
            ensure(list.iter().any(|r| r.uri == "interop://hello"), || {
                format!("{list:?}")
            })
        })
        .await;

    checks
        .run("resources-read", async {
            let r = client
                .read_resource("interop://hello")
                .await
                .map_err(|e| e.to_string())?;
            let text = match r.contents.first() {
                Some(ResourceContents::Text(t)) => t.text.as_str(),
                _ => "",
            };
            ensure(text.starts_with("hello from"), || format!("{r:?}"))
        })
        .await;

    checks
        .run("prompts-list", async {
            let list = client.list_all_prompts().await.map_err(|e| e.to_string())?;
            ensure(list.iter().any(|p| p.name == "greet"), || {
                format!("{list:?}")
            })
        })
        .await;

    checks
        .run("prompts-get", async {
            let r = client
                .get_prompt("greet", [("name".to_owned(), "Ada".to_owned())])
                .await
                .map_err(|e| e.to_string())?;
            let mentions = r
                .messages
                .iter()
                .any(|m| m.content.as_text().is_some_and(|t| t.contains("Ada")));
            ensure(mentions, || format!("{r:?}"))
        })
        .await;

    checks
        .run("ping", async {
            if session.era == Era::Modern {
                // 2026-07-28 has no ping; a request that still works stands in for it.
                return client
                    .list_all_tools()
                    .await
                    .map(drop)
                    .map_err(|e| e.to_string());
            }
            client.ping().await.map_err(|e| e.to_string())
        })
        .await;

    client.shutdown().await;
    checks.failed
}

#[tokio::test]
async fn peer_servers() {
    if std::env::var("FERROMCP_INTEROP").as_deref() != Ok("1") {
        println!("skip: set FERROMCP_INTEROP=1 and FERROMCP_INTEROP_PEER (see .ci/interop.sh)");
        return;
    }
    let command: Vec<String> = serde_json::from_str(
        &std::env::var("FERROMCP_INTEROP_PEER")
            .expect("FERROMCP_INTEROP_PEER: the peer's command line as a JSON array"),
    )
    .expect("FERROMCP_INTEROP_PEER must be a JSON array of strings");
    assert!(!command.is_empty(), "FERROMCP_INTEROP_PEER is empty");
    let lifecycle_name =
        std::env::var("FERROMCP_INTEROP_LIFECYCLE").unwrap_or_else(|_| "auto".into());
    let (lifecycle, default_era) = match lifecycle_name.as_str() {
        "handshake" => (Lifecycle::Handshake, Some(Era::Handshake)),
        "modern" => (Lifecycle::Modern, Some(Era::Modern)),
        "auto" => (Lifecycle::Auto, None),
        other => panic!("FERROMCP_INTEROP_LIFECYCLE: unknown {other:?} (handshake, modern, auto)"),
    };
    let era = match std::env::var("FERROMCP_INTEROP_ERA") {
        Ok(name) => era_named(&name),
        Err(_) => default_era.expect("FERROMCP_INTEROP_ERA is required with the auto lifecycle"),
    };
    let failed = tokio::time::timeout(LIMIT, pairing(command, lifecycle, era))
        .await
        .unwrap_or_else(|_| {
            println!("FAIL run: the pairing took longer than {LIMIT:?}");
            vec!["run"]
        });
    assert!(failed.is_empty(), "failed checks: {failed:?}");
}
