//! Composition in-process: names, forwarding, era translation, the correlation of a
//! backend's questions, conflicts and limits.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::{DEADLINE, ERAS, backend, front_client, text};
use ferromcp_compose::{Backend, ComposeError, Composer};
use ferromcp_types::Era;
use ferromcp_types::mcp::{
    CompleteRequestParams, CompletionArgument, CompletionReference, PromptReference,
    ResourceContents, ResourceTemplateReference,
};
use serde_json::json;
use tokio::time::timeout;

async fn two_mounts(era_a: Era, era_b: Era) -> Composer {
    Composer::builder("hub", "1.0.0")
        .mount("a", Backend::in_process_era(&backend::server("a"), era_a))
        .mount("b", Backend::in_process_era(&backend::server("b"), era_b))
        .build()
        .await
        .expect("the composed server builds")
}

fn resource_text(r: &ferromcp_types::mcp::ReadResourceResult) -> (String, String) {
    match &r.contents[0] {
        ResourceContents::Text(t) => (t.uri.clone(), t.text.clone()),
        other => panic!("not text: {other:?}"),
    }
}

/// Tools and prompts appear as `{mount}_{name}`, resources and templates under
/// `{mount}+{uri}`, which maps back; completions are routed; in both front eras.
#[tokio::test]
async fn tools_prompts_resources_and_completions_are_mounted_under_their_names() {
    timeout(DEADLINE, async {
        let composed = two_mounts(Era::Modern, Era::Handshake).await;
        let mut names = composed.server().tool_names();
        names.sort();
        assert_eq!(
            names,
            [
                "a_ask", "a_die", "a_echo", "a_slow", "b_ask", "b_die", "b_echo", "b_slow"
            ]
        );
        for era in ERAS {
            let client = front_client(composed.server(), era).await;
            let r = client
                .call_tool("b_echo", json!({"text": "hi"}))
                .await
                .unwrap();
            assert_eq!(text(&r), "hi");
            let prompts = client.list_all_prompts().await.unwrap();
            let mut pn: Vec<_> = prompts.iter().map(|p| p.name.clone()).collect();
            pn.sort();
            assert_eq!(pn, ["a_greet", "b_greet"]);
            let p = client
                .get_prompt("a_greet", [("name".to_owned(), "Ada".to_owned())])
                .await
                .unwrap();
            assert_eq!(
                serde_json::to_value(&p.messages[0]).unwrap()["content"]["text"],
                "Hello, Ada!"
            );
            let resources = client.list_all_resources().await.unwrap();
            let mut uris: Vec<_> = resources.iter().map(|r| r.uri.clone()).collect();
            uris.sort();
            assert_eq!(uris, ["a+mem://readme", "b+mem://readme"]);
            let read = client.read_resource("b+mem://readme").await.unwrap();
            assert_eq!(
                resource_text(&read),
                ("b+mem://readme".into(), "read me".into())
            );
            let templates = client.list_all_resource_templates().await.unwrap();
            assert!(
                templates
                    .iter()
                    .any(|t| t.uri_template == "a+mem://items/{id}")
            );
            let item = client.read_resource("a+mem://items/7").await.unwrap();
            assert_eq!(
                resource_text(&item),
                ("a+mem://items/7".into(), "item 7".into())
            );
            let done = client
                .complete(CompleteRequestParams::new(
                    CompletionReference::Prompt(PromptReference::new("b_greet")),
                    CompletionArgument::new("name", "al"),
                ))
                .await
                .unwrap();
            assert_eq!(done.completion.values, ["alice", "albert"]);
            client.shutdown().await;
        }
        composed.shutdown().await;
    })
    .await
    .expect("within the deadline");
}

/// A backend's elicitation reaches the front client and the answer goes back, for every
/// pairing of eras: a 2026-07-28 client in front of a 2025-11-25 backend (a live request
/// becomes an `InputRequiredResult` round) and the reverse (an input request becomes a live
/// request), and like to like.
#[tokio::test]
async fn elicitation_is_translated_between_eras_in_both_directions() {
    timeout(DEADLINE, async {
        for backend_era in ERAS {
            let composed = Composer::builder("hub", "1")
                .mount(
                    "x",
                    Backend::in_process_era(&backend::server("x"), backend_era),
                )
                .build()
                .await
                .unwrap();
            for front_era in ERAS {
                let client = front_client(composed.server(), front_era).await;
                let r = client
                    .call_tool("x_ask", json!({"label": "one"}))
                    .await
                    .unwrap();
                assert_eq!(
                    text(&r),
                    "one: A(question for one)",
                    "front {front_era:?}, backend {backend_era:?}"
                );
                client.shutdown().await;
            }
            composed.shutdown().await;
        }
    })
    .await
    .expect("within the deadline");
}

/// Concurrent calls through the front each get their own answers: a 2026-07-28 backend's
/// questions belong to the call that got them, whatever the front's era.
#[tokio::test]
async fn s86_concurrent_calls_get_their_own_answers() {
    timeout(DEADLINE, async {
        let composed = Composer::builder("hub", "1")
            .mount("x", Backend::in_process(&backend::server("x")))
            .build()
            .await
            .unwrap();
        for era in ERAS {
            let client = front_client(composed.server(), era).await;
            let calls = (0..8).map(|i| {
                let client = client.clone();
                async move {
                    let label = format!("caller{i}");
                    let r = client
                        .call_tool("x_ask", json!({"label": label}))
                        .await
                        .unwrap();
                    (label, text(&r))
                }
            });
            for (label, answer) in futures_join_all(calls).await {
                assert_eq!(answer, format!("{label}: A(question for {label})"));
            }
            client.shutdown().await;
        }
        composed.shutdown().await;
    })
    .await
    .expect("within the deadline");
}

/// A handshake-era backend's live request names no request: with one call in flight it goes
/// to that call; with several it is refused with a clear error, never given to a guess.
#[tokio::test]
async fn s86_a_handshake_backend_question_is_never_routed_by_guess() {
    timeout(DEADLINE, async {
        let composed = Composer::builder("hub", "1")
            .mount(
                "x",
                Backend::in_process_era(&backend::server("x"), Era::Handshake),
            )
            .build()
            .await
            .unwrap();
        let client = front_client(composed.server(), Era::Handshake).await;
        // A slow call in flight, then a question from another call: ambiguous.
        let slow = {
            let client = client.clone();
            tokio::spawn(async move { client.call_tool("x_slow", json!({"ms": 400})).await })
        };
        tokio::time::sleep(Duration::from_millis(100)).await;
        let r = client
            .call_tool("x_ask", json!({"label": "two"}))
            .await
            .unwrap();
        assert_eq!(r.is_error, Some(true), "{r:?}");
        assert!(
            text(&r).contains("cannot be told which caller to ask"),
            "{}",
            text(&r)
        );
        assert_eq!(text(&slow.await.unwrap().unwrap()), "done");
        // Alone, the same call gets its answer.
        let r = client
            .call_tool("x_ask", json!({"label": "two"}))
            .await
            .unwrap();
        assert_eq!(text(&r), "two: A(question for two)");
        client.shutdown().await;
        composed.shutdown().await;
    })
    .await
    .expect("within the deadline");
}

/// Names never clash silently: a backend that lists a tool twice fails the build (naming
/// it), two mounts of one name fail it, and so does a mount name that could make two mounts'
/// front names coincide (`_` or `+` in it).
#[tokio::test]
async fn s85_conflicting_names_are_a_build_error() {
    timeout(DEADLINE, async {
        let dup = ferromcp_server::Server::builder("dup", "1")
            .on::<ferromcp_types::mcp::methods::ListTools, _, _, _>(|_ctx, _p| async {
                let tool: ferromcp_types::mcp::Tool = serde_json::from_value(
                    json!({"name": "same", "inputSchema": {"type": "object"}}),
                )
                .unwrap();
                Ok(ferromcp_types::mcp::ListToolsResult::new(vec![
                    tool.clone(),
                    tool,
                ]))
            })
            .build()
            .unwrap();
        let open = move || ferromcp_client::Connected::new(Arc::new(dup.in_process(Era::Modern)));
        let backend = Backend::transport(open).lifecycle(ferromcp_client::Lifecycle::Modern);
        let err = Composer::builder("hub", "1")
            .mount("d", backend)
            .build()
            .await
            .unwrap_err();
        assert!(
            matches!(&err, ComposeError::Conflict { kind: "tool", name, .. } if name == "d_same"),
            "{err}"
        );
        let one = backend::server("one");
        let err = Composer::builder("hub", "1")
            .mount("m", Backend::in_process(&one))
            .mount("m", Backend::in_process(&one))
            .build()
            .await
            .unwrap_err();
        assert!(
            matches!(err, ComposeError::DuplicateMount(ref n) if n == "m"),
            "{err}"
        );
        for bad in ["a_b", "a+b", "", "9a"] {
            let err = Composer::builder("hub", "1")
                .mount(bad, Backend::in_process(&one))
                .build()
                .await
                .unwrap_err();
            assert!(
                matches!(err, ComposeError::InvalidName(_)),
                "{bad:?}: {err}"
            );
        }
    })
    .await
    .expect("within the deadline");
}

/// `join_all` without the futures crate: spawn each, await in order.
async fn futures_join_all<F, T>(futures: impl Iterator<Item = F>) -> Vec<T>
where
    F: std::future::Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    let handles: Vec<_> = futures.map(tokio::spawn).collect();
    let mut out = Vec::new();
    for h in handles {
        out.push(h.await.unwrap());
    }
    out
}

/// A backend's progress reaches the front client's call.
#[tokio::test]
async fn progress_is_forwarded() {
    timeout(DEADLINE, async {
        for backend_era in ERAS {
            let composed = Composer::builder("hub", "1")
                .mount(
                    "x",
                    Backend::in_process_era(&backend::server("x"), backend_era),
                )
                .build()
                .await
                .unwrap();
            for era in ERAS {
                let client = front_client(composed.server(), era).await;
                let seen = Arc::new(AtomicUsize::new(0));
                let s = seen.clone();
                let opts = ferromcp_client::RequestOptions::new().on_progress(move |p| {
                    assert_eq!(p.message.as_deref(), Some("halfway"));
                    s.fetch_add(1, Ordering::SeqCst);
                });
                let mut params = ferromcp_types::mcp::CallToolRequestParams::new("x_slow");
                params.arguments = json!({"ms": 50}).as_object().cloned();
                let r = client
                    .request::<ferromcp_types::mcp::methods::CallTool>(params, opts)
                    .await
                    .unwrap();
                assert_eq!(text(&r), "done");
                assert_eq!(
                    seen.load(Ordering::SeqCst),
                    1,
                    "front {era:?}, backend {backend_era:?}"
                );
                client.shutdown().await;
            }
            composed.shutdown().await;
        }
    })
    .await
    .expect("within the deadline");
}

/// `Backend::tool_filter` keeps tools out of the front: not listed, not callable, also after
/// the backend's list changes.
#[tokio::test]
async fn the_tool_filter_keeps_tools_out() {
    timeout(DEADLINE, async {
        let server = backend::server("x");
        let composed = Composer::builder("hub", "1")
            .mount(
                "x",
                Backend::in_process_era(&server, Era::Handshake)
                    .tool_filter(|name| !name.starts_with('d') && name != "secret"),
            )
            .build()
            .await
            .unwrap();
        assert_eq!(
            composed.server().tool_names(),
            ["x_echo", "x_ask", "x_slow"]
        );
        let client = front_client(composed.server(), Era::Modern).await;
        let err = client.call_tool("x_die", json!({})).await;
        assert!(err.is_err() || err.unwrap().is_error == Some(true));
        server.add_tool("secret", || async { "s" }).unwrap();
        server.add_tool("open", || async { "o" }).unwrap();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while !composed
            .server()
            .tool_names()
            .contains(&"x_open".to_owned())
        {
            assert!(tokio::time::Instant::now() < deadline, "x_open never came");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(
            !composed
                .server()
                .tool_names()
                .contains(&"x_secret".to_owned())
        );
        client.shutdown().await;
        composed.shutdown().await;
    })
    .await
    .expect("within the deadline");
}

/// Mounts come and go while the front serves: a mount's tools appear and disappear (the
/// front's clients are told), its calls work and then fail clearly, and it can come back.
#[tokio::test]
async fn mounts_come_and_go_at_run_time() {
    timeout(DEADLINE, async {
        let composed = Composer::builder("hub", "1").build().await.unwrap();
        assert!(composed.server().tool_names().is_empty());
        let client = front_client(composed.server(), Era::Handshake).await;
        for _ in 0..2 {
            composed
                .mount("x", Backend::in_process(&backend::server("x")))
                .await
                .unwrap();
            let err = composed
                .mount("x", Backend::in_process(&backend::server("x")))
                .await
                .unwrap_err();
            assert!(matches!(err, ComposeError::DuplicateMount(_)), "{err}");
            assert!(composed.ping("x").await.unwrap().is_ok());
            let r = client
                .call_tool("x_echo", json!({"text": "up"}))
                .await
                .unwrap();
            assert_eq!(text(&r), "up");
            let names = client.list_all_tools().await.unwrap();
            assert_eq!(names.len(), 4);
            assert!(composed.unmount("x").await);
            assert!(!composed.unmount("x").await);
            assert!(composed.server().tool_names().is_empty());
            assert!(
                client
                    .call_tool("x_echo", json!({"text": "down"}))
                    .await
                    .is_err()
            );
            assert!(composed.ping("x").await.is_none());
        }
        client.shutdown().await;
        composed.shutdown().await;
    })
    .await
    .expect("within the deadline");
}

/// F24: a mount added with `Composer::mount` after the build serves its backend's resource
/// templates under the prefixed URI (listed, read, completed), and they leave the front on
/// `unmount`; for a client of either era.
#[tokio::test]
async fn f24_templates_of_a_run_time_mount_are_served_until_unmounted() {
    timeout(DEADLINE, async {
        let composed = Composer::builder("hub", "1").build().await.unwrap();
        for era in ERAS {
            let client = front_client(composed.server(), era).await;
            composed
                .mount("x", Backend::in_process(&backend::server("x")))
                .await
                .unwrap();
            let templates = client.list_all_resource_templates().await.unwrap();
            let uris: Vec<_> = templates.iter().map(|t| t.uri_template.clone()).collect();
            assert_eq!(uris, ["x+mem://items/{id}"]);
            let item = client.read_resource("x+mem://items/7").await.unwrap();
            assert_eq!(
                resource_text(&item),
                ("x+mem://items/7".into(), "item 7".into())
            );
            let complete = CompleteRequestParams::new(
                CompletionReference::Resource(ResourceTemplateReference::new("x+mem://items/{id}")),
                CompletionArgument::new("id", "7"),
            );
            let done = client.complete(complete.clone()).await.unwrap();
            assert_eq!(done.completion.values, ["7", "70"]);
            assert!(composed.unmount("x").await);
            assert!(
                client
                    .list_all_resource_templates()
                    .await
                    .unwrap()
                    .is_empty()
            );
            assert!(composed.server().resource_template_uris().is_empty());
            assert!(client.read_resource("x+mem://items/7").await.is_err());
            let done = client.complete(complete).await.unwrap();
            assert!(done.completion.values.is_empty());
            client.shutdown().await;
        }
        composed.shutdown().await;
    })
    .await
    .expect("within the deadline");
}

/// A handshake-era backend's log record during a call reaches the front client of that call,
/// under `{mount}/{logger}`.
#[tokio::test]
async fn log_records_reach_the_caller() {
    timeout(DEADLINE, async {
        let server = ferromcp_server::McpServer::builder("l", "1")
            .tool("noisy", |ctx: ferromcp_server::RequestContext| async move {
                ctx.log(
                    ferromcp_types::mcp::LoggingLevel::Warning,
                    Some("engine"),
                    json!("careful"),
                )
                .await;
                "logged"
            })
            .build()
            .unwrap();
        let composed = Composer::builder("hub", "1")
            .mount("l", Backend::in_process_era(&server, Era::Handshake))
            .build()
            .await
            .unwrap();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let client = ferromcp_client::Client::builder()
            .lifecycle(ferromcp_client::Lifecycle::Handshake)
            .on_logging(move |log| {
                let tx = tx.clone();
                async move {
                    let _ = tx.send(log);
                }
            })
            .connect(ferromcp_client::Connected::new(Arc::new(
                composed.server().server().in_process(Era::Handshake),
            )))
            .await
            .unwrap();
        let r = client.call_tool("l_noisy", json!({})).await.unwrap();
        assert_eq!(text(&r), "logged");
        let log = rx.recv().await.unwrap();
        assert_eq!(log.logger.as_deref(), Some("l/engine"));
        assert_eq!(log.data, json!("careful"));
        client.shutdown().await;
        composed.shutdown().await;
    })
    .await
    .expect("within the deadline");
}

fn greet_name(value: &str) -> CompleteRequestParams {
    greet_arg("x_greet", "name", value)
}

fn greet_arg(prompt: &str, argument: &str, value: &str) -> CompleteRequestParams {
    CompleteRequestParams::new(
        CompletionReference::Prompt(PromptReference::new(prompt)),
        CompletionArgument::new(argument, value),
    )
}

/// C57: a backend mounted while the front serves has its prompts' arguments completed (by
/// the backend) until it is unmounted; both front eras.
#[tokio::test]
async fn c57_prompt_completions_of_a_run_time_mount_are_served_until_unmounted() {
    timeout(DEADLINE, async {
        let composed = Composer::builder("hub", "1").build().await.unwrap();
        for era in ERAS {
            let client = front_client(composed.server(), era).await;
            composed
                .mount("x", Backend::in_process(&backend::server("x")))
                .await
                .unwrap();
            let done = client.complete(greet_name("al")).await.unwrap();
            assert_eq!(done.completion.values, ["alice", "albert"], "{era:?}");
            assert!(composed.unmount("x").await);
            let done = client.complete(greet_name("al")).await.unwrap();
            assert!(done.completion.values.is_empty(), "{era:?}");
            client.shutdown().await;
        }
        composed.shutdown().await;
    })
    .await
    .expect("within the deadline");
}

/// F28: a prompt and a resource template a backend adds while mounted (its lists changed)
/// are served through the front with their completions, whichever era the backend speaks;
/// the template is gone once the backend removes it.
#[tokio::test]
async fn f28_prompts_and_templates_a_backend_adds_later_are_served_and_completed() {
    use ferromcp_server::mcp_server::{PromptSpec, RawArgs, ResourceSpec};
    use ferromcp_types::mcp::PromptArgument;
    timeout(DEADLINE, async {
        for era in ERAS {
            let server = backend::server("x");
            let composed = Composer::builder("hub", "1")
                .mount("x", Backend::in_process_era(&server, era))
                .build()
                .await
                .unwrap();
            let client = front_client(composed.server(), Era::Handshake).await;
            server.add_prompt(
                PromptSpec::new("hello").arguments(vec![PromptArgument::new("who")]),
                |RawArgs(_): RawArgs| async { "hi".to_string() },
            );
            server.add_prompt_completion("hello", "who", |req| async move {
                ["world", "wide"]
                    .into_iter()
                    .filter(|w| w.starts_with(&req.value))
                    .map(String::from)
                    .collect()
            });
            let template = "mem://other/{k}";
            server
                .add_resource_template(
                    ResourceSpec::new(template, "other"),
                    |RawArgs(v): RawArgs| async move {
                        let k = v.get("k").and_then(|k| k.as_str()).unwrap_or_default();
                        format!("other {k}")
                    },
                )
                .unwrap();
            server.add_template_completion(template, "k", |req| async move {
                ["5", "55", "6"]
                    .into_iter()
                    .filter(|v| v.starts_with(&req.value))
                    .map(String::from)
                    .collect()
            });
            let front_template = "x+mem://other/{k}".to_owned();
            while !composed
                .server()
                .prompt_names()
                .contains(&"x_hello".to_owned())
                || !composed
                    .server()
                    .resource_template_uris()
                    .contains(&front_template)
            {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            let done = client
                .complete(greet_arg("x_hello", "who", "w"))
                .await
                .unwrap();
            assert_eq!(done.completion.values, ["world", "wide"], "{era:?} backend");
            let item = client.read_resource("x+mem://other/5").await.unwrap();
            assert_eq!(
                resource_text(&item),
                ("x+mem://other/5".into(), "other 5".into())
            );
            let complete = CompleteRequestParams::new(
                CompletionReference::Resource(ResourceTemplateReference::new(&front_template)),
                CompletionArgument::new("k", "5"),
            );
            let done = client.complete(complete).await.unwrap();
            assert_eq!(done.completion.values, ["5", "55"], "{era:?} backend");
            assert!(server.remove_resource_template(template));
            while composed
                .server()
                .resource_template_uris()
                .contains(&front_template)
            {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            client.shutdown().await;
            composed.shutdown().await;
        }
    })
    .await
    .expect("within the deadline");
}
