//! The schema tables on the per-request path of a `tools/call` at 2025-11-25, as the server
//! kernel calls them: `is_spec_method` and `exists_as` on the request, `validate_params`, then
//! `shape_result` and `validate_result` on the result.
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
    g.finish();
    assert_eq!(
        Value::Object(shaped),
        result,
        "shaping keeps a valid result"
    );
}

criterion_group!(benches, tools_call);
criterion_main!(benches);
