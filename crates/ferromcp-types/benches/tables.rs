//! The schema tables on the per-request path of a `tools/call` at 2025-11-25, as the server
//! kernel calls them: `is_spec_method` and `exists_as` on the request, `validate_params`, then
//! `shape_result` and `validate_result` on the result; and the same through a method handle
//! (`tables::method`), whose `shape_and_validate_result` does both in one walk.
//!
//! Run with `cargo bench -p ferromcp-types --bench tables`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use ferromcp_types::ProtocolVersion;
use ferromcp_types::tables::{self, Kind};
use serde_json::{Map, Value, json};

const V: ProtocolVersion = ProtocolVersion::V2025_11_25;

fn tools_call(c: &mut Criterion) {
    let method = "tools/call";
    let params = json!({"name": "echo", "arguments": {"text": "hello"}});
    let result = json!({"content": [{"type": "text", "text": "hello"}], "isError": false});
    let result_map: Map<String, Value> = result.as_object().cloned().unwrap_or_default();

    let mut g = c.benchmark_group("tables/tools_call");
    g.bench_function("is_spec_method", |b| {
        b.iter(|| tables::is_spec_method(black_box(method)))
    });
    g.bench_function("exists_as", |b| {
        b.iter(|| tables::exists_as(black_box(method), Kind::ClientRequest, V))
    });
    g.bench_function("validate_params", |b| {
        b.iter(|| tables::validate_params(black_box(method), V, Some(black_box(&params))))
    });
    // Shaping this result removes nothing, so the same map is shaped over and over.
    let mut shaped = result_map;
    g.bench_function("shape_result", |b| {
        b.iter(|| tables::shape_result(black_box(method), V, black_box(&mut shaped)))
    });
    g.bench_function("validate_result", |b| {
        b.iter(|| tables::validate_result(black_box(method), V, black_box(&result)))
    });
    // The handle is found once per request, then asked the rest.
    let call = tables::method(method);
    g.bench_function("method", |b| b.iter(|| tables::method(black_box(method))));
    let mut walked = shaped.clone();
    if let Some(call) = call {
        g.bench_function("method_validate_params", |b| {
            b.iter(|| black_box(call).validate_params(V, Some(black_box(&params))))
        });
        g.bench_function("shape_and_validate_result", |b| {
            b.iter(|| black_box(call).shape_and_validate_result(V, black_box(&mut walked)))
        });
    }
    g.finish();
    assert_eq!(
        Value::Object(shaped),
        result,
        "shaping keeps a valid result"
    );
    assert!(call.is_some(), "tools/call is a spec method");
    assert_eq!(Value::Object(walked), result, "so does the one walk");
}

criterion_group!(benches, tools_call);
criterion_main!(benches);
