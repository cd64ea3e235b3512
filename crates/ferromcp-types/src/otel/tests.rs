#![allow(clippy::unwrap_used)]

use super::*;
use serde_json::json;

fn parse_with(p: TraceContextPropagator, tp: &str, ts: &str) -> Option<SpanContext> {
    let meta = json!({ "traceparent": tp, "tracestate": ts });
    p.span_context(&MetaExtractor(meta.as_object().unwrap()))
}

fn parse(tp: &str) -> Option<SpanContext> {
    parse_with(TraceContextPropagator::default(), tp, "k=v")
}

const TP: &str = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01";

#[test]
fn parses_valid_traceparents() {
    let sc = parse(TP).unwrap();
    assert_eq!(
        sc.trace_id().to_string(),
        "0af7651916cd43dd8448eb211c80319c"
    );
    assert_eq!(sc.span_id().to_string(), "00f067aa0ba902b7");
    assert!(sc.is_sampled() && sc.is_remote());
    assert_eq!(sc.trace_state().get("k"), Some("v"));
    // A later version may carry more fields.
    assert!(parse("01-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-00-xyz").is_some());
}

#[test]
fn rejects_malformed_traceparents() {
    for tp in [
        "",
        "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7",
        "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01-extra",
        "ff-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01",
        "00-0AF7651916CD43DD8448EB211C80319C-00f067aa0ba902b7-01",
        "00-abc-00f067aa0ba902b7-01",
        "00-0af7651916cd43dd8448eb211c80319c-00f0-01",
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
        "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
        "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-1",
        "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-0é",
        "\u{0}\u{0}-é",
    ] {
        assert!(parse(tp).is_none(), "{tp:?} should be rejected");
    }
    // Non-string values count as absent.
    let meta = json!({ "traceparent": 42 });
    let p = TraceContextPropagator::default();
    assert!(
        p.span_context(&MetaExtractor(meta.as_object().unwrap()))
            .is_none()
    );
}

/// S71: the peer's trace context is bounded: an over-long `traceparent` is ignored (no parent),
/// an over-long `tracestate` is dropped (the parent stays), at the defaults and at set bounds.
#[test]
fn s71_trace_context_length_is_bounded() {
    let p = TraceContextPropagator::default();
    // A later version may append fields: within the bound it is accepted, beyond it is not.
    let long_ok = format!(
        "01{}-{}",
        &TP[2..],
        "a".repeat(DEFAULT_MAX_TRACEPARENT_LEN - 56)
    );
    assert_eq!(long_ok.len(), DEFAULT_MAX_TRACEPARENT_LEN);
    assert!(parse_with(p, &long_ok, "").is_some());
    let too_long = format!("{long_ok}b");
    assert!(parse_with(p, &too_long, "").is_none());
    // A huge value costs nothing and never panics.
    assert!(parse_with(p, &"0".repeat(1 << 20), "").is_none());

    // (A list member's value is at most 256 characters: three members make 512.)
    let v = "v".repeat(250);
    let state = format!("a={v},b={v},z=vvvv");
    assert_eq!(state.len(), DEFAULT_MAX_TRACESTATE_LEN);
    let sc = parse_with(p, TP, &state).unwrap();
    assert_eq!(sc.trace_state().header().len(), DEFAULT_MAX_TRACESTATE_LEN);
    let sc = parse_with(p, TP, &format!("{state}v")).unwrap();
    assert_eq!(
        sc.trace_state().header(),
        "",
        "over-long tracestate dropped"
    );

    // The bounds are settings.
    let tight = OtelOptions::new().max_trace_context_len(54, 3).propagator();
    assert!(parse_with(tight, TP, "").is_none());
    let fits = OtelOptions::new().max_trace_context_len(55, 3).propagator();
    assert_eq!(
        parse_with(fits, TP, "k=v").unwrap().trace_state().get("k"),
        Some("v")
    );
    assert_eq!(
        parse_with(fits, TP, "k=vv").unwrap().trace_state().header(),
        ""
    );
}

#[test]
fn injects_without_overwriting() {
    let sc = parse(TP).unwrap();
    let cx = Context::new().with_remote_span_context(sc);

    let out = inject_context(&cx, None).unwrap().into_value().unwrap();
    assert_eq!(
        out,
        json!({"_meta": {
            "traceparent": TP,
            "tracestate": "k=v",
        }})
    );

    let mine = json!({"x": 1, "_meta": {"traceparent": "mine"}});
    let out = inject_context(&cx, Some(mine.clone().into())).unwrap();
    assert_eq!(out.into_value().unwrap(), mine);

    let raw = serde_json::value::RawValue::from_string(r#"{"x":1}"#.into()).unwrap();
    let out = inject_context(&cx, Some(Payload::Raw(raw.into()))).unwrap();
    assert_eq!(out.into_value().unwrap()["_meta"]["tracestate"], "k=v");

    // Not an object: left alone.
    let out = inject_context(&cx, Some(json!([1]).into())).unwrap();
    assert_eq!(out.into_value().unwrap(), json!([1]));
    // No valid span context: left alone.
    assert!(inject_context(&Context::new(), None).is_none());
}

#[test]
fn span_names_follow_the_conventions() {
    let call = json!({"name": "get-weather", "arguments": {"secret": 1}});
    assert_eq!(
        span_name("tools/call", Some(&call)),
        "tools/call get-weather"
    );
    assert_eq!(
        span_name("prompts/get", Some(&call)),
        "prompts/get get-weather"
    );
    let read = json!({"uri": "file:///x"});
    // A URI is high-cardinality: never in the name.
    assert_eq!(span_name("resources/read", Some(&read)), "resources/read");
    assert_eq!(
        resource_uri("resources/read", Some(&read)),
        Some("file:///x")
    );
    assert_eq!(span_name("initialize", None), "initialize");
}
