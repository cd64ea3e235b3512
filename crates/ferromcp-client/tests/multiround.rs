//! The multi-round driver against ferromcp's server in the modern era.
//!
//! Spec: 2026-07-28 basic/patterns/mrtr (SEP-2322): `InputRequiredResult`, `inputRequests`,
//! `inputResponses`, `requestState` echoed verbatim, each retry a new request; only
//! `tools/call`, `prompts/get` and `resources/read` may answer `input_required`.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::*;
use ferromcp_client::{Client, ClientError, Lifecycle, RequestOptions};
use ferromcp_server::Server;
use ferromcp_types::jsonrpc::{ErrorCode, ErrorObject};
use ferromcp_types::mcp::methods::{CallTool, GetPrompt, ReadResource};
use ferromcp_types::mcp::{
    CallToolRequestParams, CallToolResult, ContentBlock, CreateMessageRequestParams,
    CreateMessageResult, ElicitRequestParams, ElicitResult, ElicitValue, GetPromptRequestParams,
    GetPromptResult, InputRequest, InputRequiredResult, ListRootsResult, MaybeInputRequired,
    PromptMessage, ReadResourceRequestParams, ReadResourceResult, ResourceContents, Role, Root,
    SamplingContent, SamplingMessage, TextResourceContents,
};
use serde_json::{Value, json};

fn questions() -> InputRequiredResult {
    let elicit: ElicitRequestParams = serde_json::from_value(json!({
        "mode": "form",
        "message": "Confirm?",
        "requestedSchema": {"type": "object", "properties": {
            "ok": {"type": "boolean"},
            "level": {"type": "number", "default": 3}
        }}
    }))
    .unwrap();
    InputRequiredResult::new()
        .with_input_request(
            "s",
            InputRequest::CreateMessage(CreateMessageRequestParams::new(
                vec![SamplingMessage::user_text("hi")],
                5,
            )),
        )
        .with_input_request("e", InputRequest::Elicit(elicit))
        .with_input_request("r", InputRequest::ListRoots(None))
        .with_request_state("state-1")
}

fn to_value<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap()
}

async fn call(p: CallToolRequestParams, calls: Counter) -> Value {
    let n = calls.bump();
    match p.name.as_str() {
        "confirm" => match (&p.input_responses, p.request_state.as_deref()) {
            (None, None) => to_value(&questions()),
            (Some(r), Some("state-1")) => {
                let summary = json!({
                    "s": r.get("s").map(to_value),
                    "e": r.get("e").map(to_value),
                    "r": r.get("r").map(to_value),
                });
                to_value(&CallToolResult::text("confirmed").with_structured_content(summary))
            }
            other => to_value(&CallToolResult::error(format!("unexpected {other:?}"))),
        },
        "poll" => match p.request_state.as_deref() {
            None => to_value(&InputRequiredResult::new().with_request_state("1")),
            Some("1") => to_value(&InputRequiredResult::new().with_request_state("2")),
            Some("2") => to_value(&CallToolResult::text(format!("done after {n}"))),
            Some(other) => to_value(&CallToolResult::error(format!("bad state {other}"))),
        },
        "forever" => to_value(&InputRequiredResult::new().with_request_state(format!("s{n}"))),
        "elicit_only" => match p.input_responses {
            None => to_value(&questions()),
            Some(_) => to_value(&CallToolResult::text("unreachable")),
        },
        _ => to_value(&CallToolResult::error("unknown")),
    }
}

fn server(calls: Counter) -> Server {
    base("mrtr")
        .on::<CallTool, _, _, _>(move |_ctx, p| {
            let calls = calls.clone();
            async move { Ok(call(p, calls).await) }
        })
        .on::<GetPrompt, _, _, _>(|_ctx, p: GetPromptRequestParams| async move {
            Ok(match p.input_responses {
                None => to_value(
                    &InputRequiredResult::new()
                        .with_input_request("r", InputRequest::ListRoots(None)),
                ),
                Some(_) => to_value(&GetPromptResult::new(vec![PromptMessage::new(
                    Role::User,
                    ContentBlock::text("with roots"),
                )])),
            })
        })
        .on::<ReadResource, _, _, _>(|_ctx, p: ReadResourceRequestParams| async move {
            Ok(match p.request_state {
                None => to_value(&InputRequiredResult::new().with_request_state("r1")),
                Some(_) => to_value(&ReadResourceResult::new(vec![ResourceContents::Text(
                    TextResourceContents::new(p.uri, "after state"),
                )])),
            })
        })
        .build()
        .unwrap()
}

fn full_client() -> ferromcp_client::ClientBuilder {
    Client::builder()
        .lifecycle(Lifecycle::Modern)
        .on_sampling(|_p| async {
            Ok(CreateMessageResult::new(
                Role::Assistant,
                SamplingContent::text("yes"),
                "m",
            ))
        })
        .on_elicitation(|_p| async {
            let mut c = BTreeMap::new();
            c.insert("ok".to_owned(), ElicitValue::Boolean(true));
            Ok(ElicitResult::accept(c))
        })
        .on_roots(|| async { Ok(ListRootsResult::new(vec![Root::new("file:///r")])) })
}

/// mrtr: every input request is answered, then the call is retried with the responses and
/// the echoed state.
#[tokio::test]
async fn input_required_is_driven_to_completion() {
    within(async {
        let calls = Counter::default();
        let client = connect(full_client(), server(calls.clone())).await;
        let r = client.call_tool("confirm", Value::Null).await.unwrap();
        assert_eq!(r.content[0].as_text(), Some("confirmed"), "{r:?}");
        let out = r.structured_content.unwrap();
        assert_eq!(out["s"]["model"], json!("m"));
        // The form default filled in the field the handler left out.
        assert_eq!(out["e"]["content"], json!({"ok": true, "level": 3}));
        assert_eq!(out["r"]["roots"][0]["uri"], json!("file:///r"));
        assert_eq!(calls.get(), 2);
        // prompts/get and resources/read are driven too.
        let p = client.get_prompt("p", []).await.unwrap();
        assert_eq!(p.messages.len(), 1);
        let read = client.read_resource("demo://x").await.unwrap();
        assert_eq!(read.contents.len(), 1);
    })
    .await;
}

/// mrtr: a state-only answer is retried after a short backoff (50 ms, then 100 ms).
#[tokio::test]
async fn state_only_rounds_back_off() {
    within(async {
        let calls = Counter::default();
        let client = connect(full_client(), server(calls.clone())).await;
        let started = Instant::now();
        let r = client.call_tool("poll", Value::Null).await.unwrap();
        assert_eq!(r.content[0].as_text(), Some("done after 3"));
        assert!(
            started.elapsed() >= Duration::from_millis(150),
            "{:?}",
            started.elapsed()
        );
    })
    .await;
}

/// mrtr: the rounds are bounded.
#[tokio::test]
async fn rounds_are_bounded() {
    within(async {
        let calls = Counter::default();
        let client = connect(full_client().max_rounds(3), server(calls.clone())).await;
        let err = client.call_tool("forever", Value::Null).await.unwrap_err();
        assert!(
            matches!(err, ClientError::RoundsExceeded { rounds: 3, .. }),
            "{err:?}"
        );
        assert_eq!(calls.get(), 4);
    })
    .await;
}

/// The raw InputRequiredResult can be returned instead, for callers that drive the rounds.
#[tokio::test]
async fn request_once_returns_the_raw_result() {
    within(async {
        let client = connect(full_client(), server(Counter::default())).await;
        let r = client
            .request_once::<CallTool>(CallToolRequestParams::new("confirm"), RequestOptions::new())
            .await
            .unwrap();
        match r {
            MaybeInputRequired::InputRequired(ir) => {
                assert_eq!(ir.request_state.as_deref(), Some("state-1"));
                assert_eq!(ir.input_requests.unwrap().len(), 3);
            }
            other => panic!("expected input_required, got {other:?}"),
        }
    })
    .await;
}

/// mrtr: the first failing handler fails the call and cancels its siblings.
#[tokio::test]
async fn first_handler_error_cancels_the_siblings() {
    within(async {
        let sibling_dropped: Arc<Mutex<bool>> = Arc::default();
        let flag = sibling_dropped.clone();
        let builder = Client::builder()
            .lifecycle(Lifecycle::Modern)
            .on_sampling(move |_p| {
                let flag = flag.clone();
                async move {
                    struct Guard(Arc<Mutex<bool>>);
                    impl Drop for Guard {
                        fn drop(&mut self) {
                            *self.0.lock().unwrap() = true;
                        }
                    }
                    let _guard = Guard(flag);
                    tokio::time::sleep(Duration::from_secs(30)).await;
                    Ok(CreateMessageResult::new(
                        Role::Assistant,
                        SamplingContent::text("late"),
                        "m",
                    ))
                }
            })
            .on_elicitation(|_p| async {
                Err(ErrorObject::new(
                    ErrorCode(-32099),
                    "user closed the dialog",
                ))
            })
            .on_roots(|| async { Ok(ListRootsResult::new(vec![])) });
        let client = connect(builder, server(Counter::default())).await;
        let started = Instant::now();
        let err = client
            .call_tool("elicit_only", Value::Null)
            .await
            .unwrap_err();
        assert_eq!(err.code(), Some(ErrorCode(-32099)), "{err:?}");
        assert!(started.elapsed() < Duration::from_secs(5));
        for _ in 0..100 {
            if *sibling_dropped.lock().unwrap() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(
            *sibling_dropped.lock().unwrap(),
            "the sampling handler was not cancelled"
        );
    })
    .await;
}

/// A missing handler for an input request fails the call with -32601.
#[tokio::test]
async fn input_request_without_handler_fails() {
    within(async {
        let client = connect_mode(Lifecycle::Modern, server(Counter::default())).await;
        let err = client.call_tool("confirm", Value::Null).await.unwrap_err();
        assert_eq!(err.code(), Some(ErrorCode::METHOD_NOT_FOUND), "{err:?}");
    })
    .await;
}
