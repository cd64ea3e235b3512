//! Backpressure never deadlocks (`DispatcherConfig` "Backpressure"): the read loop reads on
//! whatever the handlers are doing, so responses to this side's requests and the peer's
//! cancellations are always acted on; requests beyond `max_concurrent_requests +
//! max_queued_requests` are refused at once with the `Overloaded` error; what the dispatcher
//! holds stays bounded under a flood; and at end of input every accepted request is answered
//! before the dispatcher lets go of the transport. The test drives one end of a transport by
//! hand, as a client pipelining over stdio would.

#![allow(clippy::unwrap_used, clippy::panic, reason = "test assertions")]

mod common;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{Counter, ms};
use ferromcp_dispatch::*;
use ferromcp_jsonrpc::{ErrorCode, Message, Notification, Payload, Request, RequestId};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// Fails a hung case in 15 s.
async fn bounded(f: impl Future<Output = ()>) {
    tokio::time::timeout(Duration::from_secs(15), f)
        .await
        .expect("the case hung: the dispatcher stopped reading");
}

/// A dispatcher serving `handler` on one end of an in-memory pair; the other end is the
/// test's.
fn serve(
    handler: Arc<dyn Handler>,
    config: DispatcherConfig,
) -> (JsonRpcDispatcher, MemoryTransport) {
    let (raw, end) = memory_pair(64);
    let d = JsonRpcDispatcher::new(end.source, end.sink, config);
    let run = d.clone();
    tokio::spawn(async move { run.run(handler).await });
    (d, raw)
}

fn call(id: i64, method: &str) -> TransportMessage {
    Message::Request(Request::new(id, method, Some(json!({}).into()))).into()
}

fn cancel(id: i64) -> TransportMessage {
    let params = json!({"requestId": id, "reason": "user"});
    Message::Notification(Notification::new(utility::CANCELLED, Some(params.into()))).into()
}

/// Sends `messages` from a task of its own, as a pipelining client's writer would.
fn pipeline(sink: &MemorySink, messages: Vec<TransportMessage>) -> tokio::task::JoinHandle<()> {
    let sink = sink.clone();
    tokio::spawn(async move {
        for m in messages {
            sink.send(m).await.unwrap();
        }
    })
}

fn number(id: &RequestId) -> i64 {
    match id {
        RequestId::Number(n) => *n,
        RequestId::String(s) => panic!("unexpected id {s}"),
    }
}

/// A handler that parks every `slow` request until it is cancelled and answers anything
/// else at once.
fn slow_or_fast(started: Counter) -> Arc<dyn Handler> {
    handler_fn(move |_, method, _| {
        let started = started.clone();
        async move {
            if method == "slow" {
                started.add();
                std::future::pending::<()>().await;
            }
            Ok(Payload::from(json!({"method": method})))
        }
    })
    .into_arc()
}

/// S42: 200 pipelined requests whose handlers each ask the peer something (as a tool that
/// elicits does) and wait for the answer. The peer answers every question as it reads it;
/// the answers must reach the handlers though 136 requests wait behind them, and all 200
/// complete. Before, the read loop stopped reading once 64 ran and 64 waited, so the answers
/// sat unread behind the queued requests and nothing ever completed.
#[tokio::test]
async fn s42_pipelined_requests_that_ask_the_peer_all_complete() {
    let handler = handler_fn(|ctx, _, _| async move {
        let answer = ctx
            .send_request("elicitation/create", None, CallOptions::new())
            .await?;
        Ok(answer)
    })
    .into_arc();
    let (_d, mut raw) = serve(handler, DispatcherConfig::default());
    bounded(async {
        let writer = pipeline(&raw.sink, (0..200).map(|i| call(i, "tools/call")).collect());
        let mut done = HashMap::new();
        while done.len() < 200 {
            let m = raw.source.recv().await.unwrap().unwrap().message;
            match m {
                Message::Request(r) => {
                    let answer = Message::response(r.id, json!({"action": "accept"}));
                    raw.sink.send(answer.into()).await.unwrap();
                }
                Message::Response(r) => {
                    assert_eq!(r.result, Payload::from(json!({"action": "accept"})));
                    assert!(done.insert(number(&r.id), ()).is_none());
                }
                other => panic!("unexpected {other:?}"),
            }
        }
        writer.await.unwrap();
    })
    .await;
}

/// S43: 1,000 pipelined slow calls, then a `notifications/cancelled` for each, then one more
/// call: the last call is answered within 5 s. The calls beyond the bound (64 running + 256
/// waiting) are refused at once with the overload error; the cancellations abort the running
/// ones and take the waiting ones out of the queue, none of which is answered. Before, the
/// loop stopped reading behind the first 128 calls, so neither the cancellations nor the last
/// call were read for as long as the calls ran.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s43_cancelled_pipelined_calls_free_the_connection() {
    let started = Counter::new();
    let (d, mut raw) = serve(slow_or_fast(started.clone()), DispatcherConfig::default());
    let limit = DEFAULT_MAX_CONCURRENT_REQUESTS + DEFAULT_MAX_QUEUED_REQUESTS;
    bounded(async {
        let mut messages: Vec<_> = (0..1000).map(|i| call(i, "slow")).collect();
        messages.extend((0..1000).map(cancel));
        messages.push(call(1000, "fast"));
        let sent = Instant::now();
        let writer = pipeline(&raw.sink, messages);
        let mut refused = 0;
        loop {
            let m = raw.source.recv().await.unwrap().unwrap().message;
            match m {
                Message::Error(e) => {
                    let id = number(e.id.as_ref().unwrap());
                    assert!(id < 1000, "{e:?}");
                    assert_eq!(Overloaded::of(&e.error), Some(Overloaded::new(limit)));
                    refused += 1;
                }
                Message::Response(r) => {
                    assert_eq!(number(&r.id), 1000, "a cancelled call was answered");
                    break;
                }
                other => panic!("unexpected {other:?}"),
            }
        }
        assert!(
            sent.elapsed() < Duration::from_secs(5),
            "{:?}",
            sent.elapsed()
        );
        assert_eq!(refused, 1000 - limit);
        assert!(started.count() >= DEFAULT_MAX_CONCURRENT_REQUESTS);
        writer.await.unwrap();
        // Nothing is left: the running calls were aborted, the waiting ones dropped.
        while d.inbound_load().accepted > 0 {
            tokio::time::sleep(ms(5)).await;
        }
        assert_eq!(d.inbound_load(), InboundLoad::default());
        let nothing = tokio::time::timeout(ms(50), raw.source.recv()).await;
        assert!(
            nothing.is_err(),
            "a cancelled call was answered: {nothing:?}"
        );
    })
    .await;
}

/// S43: with every slot busy and the queue full, a request is refused at once with the
/// overload error (-32600, `data.overloaded.limit`), and the connection keeps serving: a
/// response to this side's own request is still read, a cancelled waiting request frees its
/// place for a new one, and once the handlers finish every accepted request is answered.
#[tokio::test]
async fn s43_overflow_is_refused_at_once_and_the_connection_keeps_serving() {
    let (gate, started) = common::Gate::new();
    let config = DispatcherConfig::default()
        .max_concurrent_requests(2)
        .max_queued_requests(3);
    let (d, mut raw) = serve(gate.handler(), config);
    bounded(async {
        for i in 0..5 {
            raw.sink.send(call(i, "hold")).await.unwrap();
        }
        started.wait(2).await;
        raw.sink.send(call(5, "hold")).await.unwrap();
        let m = raw.source.recv().await.unwrap().unwrap().message;
        let Message::Error(e) = m else {
            panic!("expected the overload error, got {m:?}")
        };
        assert_eq!(e.id, Some(RequestId::from(5)));
        assert_eq!(e.error.code, ErrorCode::INVALID_REQUEST);
        assert!(e.error.message.starts_with("Server overloaded"), "{e:?}");
        assert_eq!(Overloaded::of(&e.error), Some(Overloaded::new(5)));
        let load = d.inbound_load();
        assert_eq!((load.accepted, load.queued), (5, 3));

        // This side's own request is answered while saturated.
        let asking = tokio::spawn({
            let d = d.clone();
            async move { d.send_request("ping", None, CallOptions::new()).await }
        });
        let Message::Request(ping) = raw.source.recv().await.unwrap().unwrap().message else {
            panic!("expected the ping")
        };
        raw.sink
            .send(Message::response(ping.id, json!({"pong": true})).into())
            .await
            .unwrap();
        assert_eq!(
            asking.await.unwrap().unwrap(),
            Payload::from(json!({"pong": true}))
        );

        // Cancelling a waiting request makes room for one more.
        raw.sink.send(cancel(4)).await.unwrap();
        raw.sink.send(call(6, "hold")).await.unwrap();
        raw.sink.send(call(7, "hold")).await.unwrap();
        let m = raw.source.recv().await.unwrap().unwrap().message;
        assert_eq!(m.id(), Some(&RequestId::from(7)), "{m:?}");
        assert!(matches!(m, Message::Error(_)));

        gate.open();
        let mut answered = Vec::new();
        for _ in 0..5 {
            let m = raw.source.recv().await.unwrap().unwrap().message;
            assert!(matches!(m, Message::Response(_)), "{m:?}");
            answered.push(number(m.id().unwrap()));
        }
        answered.sort_unstable();
        assert_eq!(answered, [0, 1, 2, 3, 6]);
        raw.sink.send(call(8, "after")).await.unwrap();
        let m = raw.source.recv().await.unwrap().unwrap().message;
        assert_eq!(m.id(), Some(&RequestId::from(8)));
    })
    .await;
}

/// L20: under a flood of 10,000 pipelined requests that never finish, what the dispatcher
/// holds stays within its bounds (accepted ≤ running + waiting, waiting ≤ the queue), every
/// request beyond them is refused, and a peer that then stops reading the refusals gets
/// backpressure instead of a growing backlog: at most `max_unwritten_answers` answers wait
/// for the transport (plus the one the read loop waits on), then the peer's sends block.
#[tokio::test]
async fn l20_what_the_dispatcher_holds_stays_bounded_under_a_flood() {
    let started = Counter::new();
    let config = DispatcherConfig::default()
        .max_concurrent_requests(4)
        .max_queued_requests(8)
        .max_unwritten_answers(16);
    let (d, raw) = serve(slow_or_fast(started), config);
    let MemoryTransport {
        mut source, sink, ..
    } = raw;
    bounded(async {
        let n = 10_000;
        let (peak_tx, mut peak_rx) = mpsc::unbounded_channel();
        let watcher = {
            let d = d.clone();
            tokio::spawn(async move {
                let mut peak = InboundLoad::default();
                loop {
                    let load = d.inbound_load();
                    peak.accepted = peak.accepted.max(load.accepted);
                    peak.queued = peak.queued.max(load.queued);
                    peak.unwritten_answers = peak.unwritten_answers.max(load.unwritten_answers);
                    if peak_tx.send(peak).is_err() {
                        return;
                    }
                    tokio::task::yield_now().await;
                }
            })
        };
        let writer = pipeline(&sink, (0..n).map(|i| call(i, "slow")).collect());
        let mut refused = 0;
        while refused < n - 12 {
            let m = source.recv().await.unwrap().unwrap().message;
            assert!(matches!(&m, Message::Error(e) if Overloaded::of(&e.error).is_some()));
            refused += 1;
        }
        writer.await.unwrap();
        let load = d.inbound_load();
        assert_eq!((load.accepted, load.queued), (12, 8));

        // The peer stops reading: the refusals fill the transport, then wait in tasks (at
        // most 16), then the loop waits for the peer to read, and the peer's sends block.
        let stuck = tokio::time::timeout(ms(500), async {
            for i in n..2 * n {
                sink.send(call(i, "slow")).await.unwrap();
            }
        })
        .await;
        assert!(
            stuck.is_err(),
            "a peer that never reads was never held back"
        );
        let load = d.inbound_load();
        assert_eq!((load.accepted, load.queued), (12, 8), "{load:?}");
        assert!(load.unwritten_answers <= 17, "{load:?}");
        watcher.abort();
        let mut peak = InboundLoad::default();
        while let Ok(p) = peak_rx.try_recv() {
            peak = p;
        }
        assert!(peak.accepted <= 12 && peak.queued <= 8, "{peak:?}");
        assert!(peak.unwritten_answers <= 17, "{peak:?}");
    })
    .await;
}

/// S44: nothing already accepted is lost at end of input. A client pipelines 20,000 requests
/// over a newline-delimited byte stream and closes its end while reading the answers as they
/// come; the server runs until end of input and then closes its transport, as a stdio server
/// does. Every request gets its result. Before, the dispatcher returned while answers were
/// still waiting for room in the transport, and closing the transport lost them (about 500
/// of 20,000).
#[tokio::test]
async fn s44_end_of_input_answers_every_accepted_request() {
    let (client, server) = tokio::io::duplex(64 * 1024);
    let (client_read, mut client_write) = tokio::io::split(client);
    let n = 20_000;
    let writer = tokio::spawn(async move {
        let mut lines = String::new();
        for i in 0..n {
            lines.push_str(&format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"echo\"}}\n"
            ));
        }
        client_write.write_all(lines.as_bytes()).await.unwrap();
        client_write.shutdown().await.unwrap();
    });
    let reader = tokio::spawn(async move {
        let mut lines = BufReader::new(client_read).lines();
        let mut answered = vec![false; n];
        let (mut results, mut refused) = (0, 0);
        while let Some(line) = lines.next_line().await.unwrap() {
            let v: serde_json::Value = serde_json::from_str(&line).unwrap();
            let id = usize::try_from(v["id"].as_u64().unwrap()).unwrap();
            assert!(!std::mem::replace(&mut answered[id], true), "{id} twice");
            if v.get("result").is_some() {
                results += 1;
            } else {
                assert_eq!(v["error"]["data"]["overloaded"]["limit"], json!(320), "{v}");
                refused += 1;
            }
        }
        let missing = answered.iter().filter(|a| !**a).count();
        (missing, results, refused)
    });
    // The server runs on the test's own task, as `serve_stdio` runs on `block_on`: it returns
    // at end of input and then closes its transport.
    bounded(async {
        let (server_read, server_write) = tokio::io::split(server);
        let (source, sink) =
            line_transport(server_read, server_write, LineTransportConfig::default());
        let d = JsonRpcDispatcher::new(source, sink.clone(), DispatcherConfig::default());
        d.run(common::echo_handler()).await.unwrap();
        sink.close().await.unwrap();
        writer.await.unwrap();
        let (missing, results, refused) = reader.await.unwrap();
        assert_eq!(missing, 0, "{results} results, {refused} refused");
        // The handlers are quick and only the reader is slow: the dispatcher waited for the
        // reader instead of refusing anything.
        assert_eq!(refused, 0);
    })
    .await;
}
