//! OTLP export from the binary (src/telemetry.rs): with `OTEL_EXPORTER_OTLP_ENDPOINT` set,
//! `ferromcp call` against `ferromcp serve` sends both processes' spans to the collector, in
//! `http/protobuf` (the default) and `http/json`, under `OTEL_SERVICE_NAME`; the client's and
//! the server's spans of one call share a trace. Without the variable nothing is sent
//! (CL-U08).

#![allow(clippy::unwrap_used, clippy::panic)]

use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper_util::rt::TokioIo;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_ferromcp");
const LIMIT: Duration = Duration::from_secs(30);

/// What the collector received: (path, content type, body).
type Received = Arc<Mutex<Vec<(String, String, Vec<u8>)>>>;

/// A tiny OTLP/HTTP collector on a thread of its own: answers every POST with 200 and keeps it.
fn collector() -> (SocketAddr, Received) {
    let received = Received::default();
    let keep = received.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(listener.local_addr().unwrap()).unwrap();
            loop {
                let (stream, _) = listener.accept().await.unwrap();
                let keep = keep.clone();
                tokio::spawn(async move {
                    let svc = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
                        let keep = keep.clone();
                        async move {
                            let path = req.uri().path().to_owned();
                            let ct = req
                                .headers()
                                .get("content-type")
                                .and_then(|v| v.to_str().ok())
                                .unwrap_or_default()
                                .to_owned();
                            let body = req.into_body().collect().await.unwrap().to_bytes();
                            keep.lock().unwrap().push((path, ct, body.to_vec()));
                            Ok::<_, std::convert::Infallible>(hyper::Response::new(Full::new(
                                Bytes::new(),
                            )))
                        }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), svc)
                        .await;
                });
            }
        });
    });
    (rx.recv_timeout(LIMIT).unwrap(), received)
}

/// Runs `ferromcp call "<ferromcp serve>" tools/call {add}` with `env`, killed after [`LIMIT`].
fn call_add(env: &[(&str, String)]) -> String {
    let mut cmd = Command::new(BIN);
    cmd.args([
        "call",
        &format!("{BIN} serve"),
        "tools/call",
        r#"{"name":"add","arguments":{"a":1,"b":2}}"#,
    ])
    .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
    .env_remove("OTEL_EXPORTER_OTLP_PROTOCOL")
    .env_remove("OTEL_SERVICE_NAME")
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let child = cmd.spawn().unwrap();
    let start = Instant::now();
    let out = thread::spawn(move || child.wait_with_output().unwrap());
    while !out.is_finished() {
        assert!(start.elapsed() < LIMIT, "ferromcp call did not finish");
        thread::sleep(Duration::from_millis(10));
    }
    let out = out.join().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains('3'));
    stderr
}

fn env(addr: SocketAddr, protocol: Option<&str>) -> Vec<(&'static str, String)> {
    let mut env = vec![
        ("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://{addr}")),
        ("OTEL_SERVICE_NAME", "otlp-test".to_owned()),
    ];
    if let Some(p) = protocol {
        env.push(("OTEL_EXPORTER_OTLP_PROTOCOL", p.to_owned()));
    }
    env
}

/// Waits until the collector holds trace exports from both processes (client and server).
fn traces(received: &Received, want: usize) -> Vec<(String, Vec<u8>)> {
    let start = Instant::now();
    loop {
        let got: Vec<_> = received
            .lock()
            .unwrap()
            .iter()
            .filter(|(path, ..)| path == "/v1/traces")
            .map(|(_, ct, body)| (ct.clone(), body.clone()))
            .collect();
        if got.len() >= want || start.elapsed() > Duration::from_secs(5) {
            return got;
        }
        thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn otlp_http_protobuf_is_the_default() {
    let (addr, received) = collector();
    call_add(&env(addr, None));
    let got = traces(&received, 2);
    assert!(
        got.len() >= 2,
        "client and server should both export: {got:?}"
    );
    for (ct, body) in &got {
        assert_eq!(ct, "application/x-protobuf");
        assert!(!body.is_empty());
        // The span name and the service name travel as protobuf strings.
        let text = String::from_utf8_lossy(body);
        assert!(text.contains("tools/call add"), "{text}");
        assert!(text.contains("otlp-test"), "{text}");
    }
}

/// The spans of every `/v1/traces` JSON body: (service, name, kind, traceId, spanId, parent).
fn json_spans(got: &[(String, Vec<u8>)]) -> Vec<(String, String, i64, String, String, String)> {
    let mut out = Vec::new();
    for (ct, body) in got {
        assert_eq!(ct, "application/json");
        let v: Value = serde_json::from_slice(body).unwrap();
        for rs in v["resourceSpans"].as_array().unwrap() {
            let service = rs["resource"]["attributes"]
                .as_array()
                .unwrap()
                .iter()
                .find(|a| a["key"] == "service.name")
                .map(|a| a["value"]["stringValue"].as_str().unwrap().to_owned())
                .unwrap_or_default();
            for ss in rs["scopeSpans"].as_array().unwrap() {
                for s in ss["spans"].as_array().unwrap() {
                    out.push((
                        service.clone(),
                        s["name"].as_str().unwrap().to_owned(),
                        s["kind"].as_i64().unwrap_or_default(),
                        s["traceId"].as_str().unwrap_or_default().to_owned(),
                        s["spanId"].as_str().unwrap_or_default().to_owned(),
                        s["parentSpanId"].as_str().unwrap_or_default().to_owned(),
                    ));
                }
            }
        }
    }
    out
}

#[test]
fn otlp_http_json_carries_one_trace_across_client_and_server() {
    let (addr, received) = collector();
    call_add(&env(addr, Some("http/json")));
    let spans = json_spans(&traces(&received, 2));
    let client = spans
        .iter()
        .find(|s| s.1 == "tools/call add" && s.2 == 3)
        .unwrap_or_else(|| panic!("no CLIENT span: {spans:?}"));
    let server = spans
        .iter()
        .find(|s| s.1 == "tools/call add" && s.2 == 2)
        .unwrap_or_else(|| panic!("no SERVER span: {spans:?}"));
    assert_eq!(client.0, "otlp-test");
    assert_eq!(server.3, client.3, "one trace");
    assert_eq!(
        server.5, client.4,
        "the server span is the client span's child"
    );
}

#[test]
fn without_the_endpoint_nothing_is_exported() {
    let (addr, received) = collector();
    // The collector is up, but only named by a variable ferromcp does not read.
    call_add(&[("FERROMCP_UNUSED_ENDPOINT", format!("http://{addr}"))]);
    thread::sleep(Duration::from_millis(200));
    assert!(received.lock().unwrap().is_empty());
}
