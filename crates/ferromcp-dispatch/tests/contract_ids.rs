//! The dispatcher contract's request-id cases (split from `contract.rs`), run against both
//! dispatchers: MCP "Base Protocol" › request ids and JSON-RPC 2.0 §4 (the `id` member).

#![allow(clippy::unwrap_used, clippy::panic, reason = "test assertions")]

#[macro_use]
mod common;

use std::sync::{Arc, Mutex};

use common::*;
use ferromcp_dispatch::*;
use ferromcp_jsonrpc::{ErrorCode, RequestId};
use serde_json::json;

contract!(
    ids_are_kept_verbatim,
    on_id_sees_the_id_that_is_sent,
    colliding_ids_are_refused,
    minted_ids_skip_supplied_ones,
    string_and_number_ids_correlate,
);

/// Base Protocol › request ids: a caller-chosen id reaches the handler exactly as given
/// (a string stays a string).
async fn ids_are_kept_verbatim(kind: Kind) {
    let conn = Conn::new(kind, echo_handler(), echo_handler());
    for id in [json!("abc"), json!(42), json!("7"), json!(-3)] {
        let rid: RequestId = serde_json::from_value(id.clone()).unwrap();
        let r = conn
            .client
            .send_request("whoami", None, CallOptions::new().request_id(rid))
            .await
            .unwrap();
        assert_eq!(field(&r, "id"), id, "{kind:?}");
    }
}

/// `CallOptions::on_id` receives the id the request goes out under, minted or supplied,
/// before the answer.
async fn on_id_sees_the_id_that_is_sent(kind: Kind) {
    let conn = Conn::new(kind, echo_handler(), echo_handler());
    for supplied in [None, Some(RequestId::from("call-1"))] {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        let mut opts = CallOptions::new().on_id(move |id| s.lock().unwrap().push(id.clone()));
        if let Some(id) = supplied.clone() {
            opts = opts.request_id(id);
        }
        let r = conn
            .client
            .send_request("whoami", None, opts)
            .await
            .unwrap();
        let seen = seen.lock().unwrap().clone();
        assert_eq!(seen.len(), 1, "{kind:?}");
        assert_eq!(field(&r, "id"), serde_json::to_value(&seen[0]).unwrap());
        if let Some(id) = supplied {
            assert_eq!(seen[0], id);
        }
    }
}

/// Base Protocol › request ids: an id that correlates with one in flight is refused (-32600),
/// by correlated value ("7" vs 7).
async fn colliding_ids_are_refused(kind: Kind) {
    let (gate, started) = Gate::new();
    let conn = Conn::new(kind, echo_handler(), gate.handler());
    let first = conn
        .client
        .send_request("hold", None, CallOptions::new().request_id(7));
    let first = tokio::spawn(first);
    started.wait(1).await;
    for dup in [RequestId::from(7), RequestId::from("7")] {
        let e = conn
            .client
            .send_request("x", None, CallOptions::new().request_id(dup))
            .await
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::INVALID_REQUEST, "{kind:?}");
    }
    gate.open();
    assert!(first.await.unwrap().is_ok());
    // Once answered, the id is free again.
    gate.open();
    conn.client
        .send_request("hold", None, CallOptions::new().request_id(7))
        .await
        .unwrap();
}

/// Base Protocol › request ids: minted ids count 1, 2, 3… and skip ids in flight.
async fn minted_ids_skip_supplied_ones(kind: Kind) {
    let (gate, started) = Gate::new();
    let conn = Conn::new(kind, echo_handler(), gate.handler());
    let a = tokio::spawn(
        conn.client
            .send_request("hold", None, CallOptions::new().request_id(1)),
    );
    let b = tokio::spawn(conn.client.send_request(
        "hold",
        None,
        CallOptions::new().request_id("2"),
    ));
    started.wait(2).await;
    let c = tokio::spawn(conn.client.send_request("whoami", None, CallOptions::new()));
    started.wait(1).await;
    gate.open();
    let mut ids = Vec::new();
    for h in [a, b, c] {
        ids.push(field(&h.await.unwrap().unwrap(), "id"));
    }
    assert_eq!(ids, vec![json!(1), json!("2"), json!(3)], "{kind:?}");
}

/// Base Protocol › request ids: "7" and 7 are one id for correlation.
async fn string_and_number_ids_correlate(kind: Kind) {
    let (gate, started) = Gate::new();
    let conn = Conn::new(kind, echo_handler(), gate.handler());
    let held = tokio::spawn(conn.client.send_request(
        "hold",
        None,
        CallOptions::new().request_id("7"),
    ));
    started.wait(1).await;
    let e = conn
        .client
        .send_request("x", None, CallOptions::new().request_id(7))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::INVALID_REQUEST);
    gate.open();
    held.await.unwrap().unwrap();
}
