//! B68: the in-process `DirectDispatcher`'s lean request path keeps the dispatcher contract. A
//! handler that answers on its first poll costs no cancellation token and no waiters; one that
//! does not is watched for cancellation and close; a token the handler asks for (early or late)
//! is raised when the caller abandons the call or sends `notifications/cancelled`; answers,
//! panics (-32603) and progress are the same on both paths, for many calls at once.

#![allow(clippy::unwrap_used, clippy::panic, reason = "test assertions")]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferromcp_dispatch::*;
use ferromcp_jsonrpc::{ErrorCode, Payload};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// A connected pair whose server end runs `handler`; the client end answers nothing.
fn pair(handler: std::sync::Arc<dyn Handler>) -> DirectDispatcher {
    let (client, server) = DirectDispatcher::pair();
    let s = server.clone();
    tokio::spawn(async move { s.run(handler).await });
    let c = client.clone();
    let none = handler_fn(|_, _, _| async { Ok(Payload::empty_object()) }).into_arc();
    tokio::spawn(async move { c.run(none).await });
    client
}

async fn within<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(5), f)
        .await
        .unwrap_or_else(|_| panic!("timed out: {what}"))
}

/// A handler that hands out its cancellation token (asked for before its first poll ends, or
/// only after a later poll) and then never answers.
fn holding_handler(tokens: Arc<Mutex<Vec<CancellationToken>>>) -> Arc<dyn Handler> {
    handler_fn(move |ctx, method, _| {
        let tokens = tokens.clone();
        async move {
            if method == "late" {
                tokio::task::yield_now().await;
                tokio::task::yield_now().await;
            }
            tokens.lock().unwrap().push(ctx.cancellation().clone());
            std::future::pending::<()>().await;
            Ok(Payload::empty_object())
        }
    })
    .into_arc()
}

async fn token_handed_out(tokens: &Mutex<Vec<CancellationToken>>) -> CancellationToken {
    within("the handler's token", async {
        loop {
            if let Some(t) = tokens.lock().unwrap().pop() {
                return t;
            }
            tokio::task::yield_now().await;
        }
    })
    .await
}

/// B68: abandoning a call raises the token its handler holds, whether the handler asked for it
/// on its first poll or only later (when the dispatcher had already made it to watch).
#[tokio::test]
async fn b68_abandoning_a_direct_call_raises_the_handlers_token() {
    let tokens = Arc::new(Mutex::new(Vec::new()));
    let client = pair(holding_handler(tokens.clone()));
    for method in ["early", "late"] {
        let call = tokio::spawn(client.send_request(method, None, CallOptions::new()));
        let token = token_handed_out(&tokens).await;
        assert!(!token.is_cancelled(), "{method}");
        call.abort();
        within(method, token.cancelled()).await;
    }
}

/// B68: `notifications/cancelled` raises the handler's token and the caller gets -32800, for
/// a handler that asked for its token early, late, or never.
#[tokio::test]
async fn b68_cancel_notification_reaches_direct_handlers_and_callers() {
    let tokens = Arc::new(Mutex::new(Vec::new()));
    let client = pair(holding_handler(tokens.clone()));
    for method in ["early", "late"] {
        let options = CallOptions::new().request_id(method);
        let call = tokio::spawn(client.send_request(method, None, options));
        let token = token_handed_out(&tokens).await;
        let cancel = json!({"requestId": method, "reason": "test"});
        client
            .notify(utility::CANCELLED, Some(Payload::from(cancel)))
            .await;
        within(method, token.cancelled()).await;
        let e = within(method, call).await.unwrap().unwrap_err();
        assert_eq!(e.code, ErrorCode::REQUEST_CANCELLED, "{method}");
    }
    // A handler that never asks for its token and never answers.
    let never = handler_fn(|_, _, _| std::future::pending()).into_arc();
    let client = pair(never);
    let call = tokio::spawn(client.send_request("x", None, CallOptions::new().request_id(7)));
    tokio::task::yield_now().await;
    let cancel = json!({"requestId": 7});
    client
        .notify(utility::CANCELLED, Some(Payload::from(cancel)))
        .await;
    let e = within("never", call).await.unwrap().unwrap_err();
    assert_eq!(e.code, ErrorCode::REQUEST_CANCELLED);
}

/// B68: many concurrent calls, half answered on the first poll and half after yielding, each
/// get their own answer; panics on either path are -32603; progress reaches each caller (with
/// and without a timeout) on either path; the pair serves on afterwards.
#[tokio::test]
async fn b68_concurrent_direct_calls_answer_alike_on_both_paths() {
    let handler = handler_fn(|ctx, method, params| async move {
        let n = params.unwrap().into_value().unwrap()["n"].as_u64().unwrap();
        if n % 2 == 1 {
            for _ in 0..(n % 5) + 1 {
                tokio::task::yield_now().await;
            }
        }
        ctx.progress(n as f64, None, None).await;
        if method == "boom" {
            panic!("boom {n}");
        }
        Ok(Payload::from(
            json!({"n": n, "id": ctx.request_id().unwrap().to_string()}),
        ))
    })
    .into_arc();
    let client = pair(handler);
    let mut calls = Vec::new();
    for n in 0..400_u64 {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        let mut options =
            CallOptions::new().on_progress(move |p| s.lock().unwrap().push(p.progress));
        if n % 4 < 2 {
            options = options.timeout(Duration::from_secs(30));
        }
        let method = if n % 7 == 3 { "boom" } else { "ok" };
        let params = Some(Payload::from(json!({"n": n})));
        calls.push((
            n,
            method,
            seen,
            client.send_request(method, params, options),
        ));
    }
    let answers = within("the calls", async {
        let mut out = Vec::new();
        for (n, method, seen, call) in calls {
            out.push((n, method, seen, call.await));
        }
        out
    })
    .await;
    let mut ids = std::collections::HashSet::new();
    for (n, method, seen, answer) in answers {
        assert_eq!(*seen.lock().unwrap(), [n as f64], "progress of call {n}");
        if method == "boom" {
            let e = answer.unwrap_err();
            assert_eq!(e.code, ErrorCode::INTERNAL_ERROR, "call {n}");
            continue;
        }
        let v: Value = answer.unwrap().into_value().unwrap();
        assert_eq!(v["n"], json!(n), "call {n} got another call's answer");
        assert!(ids.insert(v["id"].to_string()), "ids are distinct");
    }
    let after = client.send_request("ok", Some(json!({"n": 0}).into()), CallOptions::new());
    assert_eq!(
        within("after", after).await.unwrap().into_value().unwrap()["n"],
        0
    );
}
