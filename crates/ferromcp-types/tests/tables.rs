//! The (method, version) tables against the vendored schemas (`spec/<version>/schema.json`).
//!
//! Each test names the part of the specification it covers. Where an expectation of the issue
//! differs from the schema files, the schema wins and the test says so.

use ferromcp_types::ProtocolVersion::{self, *};
use ferromcp_types::tables::{
    self, Kind, ParamsErrorKind, Target, shape_result, validate_notification_params,
    validate_params, validate_result,
};
use serde_json::{Map, Value, json};

const ALL: [ProtocolVersion; 5] = ProtocolVersion::ALL;

/// The revisions at which `method` exists, as wire strings.
fn versions(method: &str) -> Vec<&'static str> {
    tables::versions_of(method).map(|v| v.as_str()).collect()
}

fn obj(value: Value) -> Map<String, Value> {
    serde_json::from_value(value).expect("an object")
}

/// The 2026-07-28 per-request envelope (`RequestMetaObject`), required in every request's params.
fn envelope() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

// ---------------------------------------------------------------------------------------------
// Which methods exist where.
// ---------------------------------------------------------------------------------------------

/// Basic utilities, "Ping": `ping` up to 2025-11-25, both directions; gone at 2026-07-28.
#[test]
fn ping_exists_until_2025_11_25() {
    assert_eq!(
        versions("ping"),
        ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
    );
    for v in [V2024_11_05, V2025_03_26, V2025_06_18, V2025_11_25] {
        let kind = tables::method_kind("ping", v).expect("ping exists");
        assert!(kind.contains(Kind::ClientRequest) && kind.contains(Kind::ServerRequest));
        assert!(kind.is_request() && !kind.is_notification());
    }
    assert_eq!(tables::method_kind("ping", V2026_07_28), None);
}

/// Lifecycle (2026-07-28), "Discovery": `server/discover` is a client request of 2026 only.
#[test]
fn server_discover_only_2026() {
    assert_eq!(versions("server/discover"), ["2026-07-28"]);
    assert!(tables::exists_as(
        "server/discover",
        Kind::ClientRequest,
        V2026_07_28
    ));
}

/// Server features, "Resources" / "Subscriptions": `resources/subscribe` and
/// `resources/unsubscribe` exist in the handshake era and are gone at 2026-07-28 (replaced by
/// `subscriptions/listen`).
#[test]
fn resources_subscribe_absent_2026() {
    for m in ["resources/subscribe", "resources/unsubscribe"] {
        assert_eq!(
            versions(m),
            ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"],
            "{m}"
        );
    }
    assert!(!tables::exists("resources/subscribe", V2026_07_28));
}

/// Basic utilities, "Tasks" (2025-11-25): the four task methods exist only at 2025-11-25, in both
/// directions, with `notifications/tasks/status`.
#[test]
fn tasks_methods_only_2025_11_25() {
    for m in ["tasks/get", "tasks/result", "tasks/list", "tasks/cancel"] {
        assert_eq!(versions(m), ["2025-11-25"], "{m}");
        let kind = tables::method_kind(m, V2025_11_25).expect(m);
        assert!(
            kind.contains(Kind::ClientRequest) && kind.contains(Kind::ServerRequest),
            "{m}"
        );
    }
    assert_eq!(versions("notifications/tasks/status"), ["2025-11-25"]);
}

/// Server utilities, "Logging": `logging/setLevel` exists until 2025-11-25; at 2026-07-28 the
/// level travels in `_meta` (`io.modelcontextprotocol/logLevel`), while `notifications/message`
/// remains.
#[test]
fn logging_set_level_absent_2026() {
    assert_eq!(
        versions("logging/setLevel"),
        ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
    );
    assert!(tables::exists_as(
        "notifications/message",
        Kind::ServerNotification,
        V2026_07_28
    ));
}

/// Client features, "Elicitation": `elicitation/create` is a server request from 2025-06-18.
///
/// Schema note: the 2026-07-28 schema has no `ServerRequest` union at all: elicitation,
/// sampling and roots are `InputRequest`s carried inside an `InputRequiredResult`, not JSON-RPC
/// requests. So the tables list `elicitation/create` at 2025-06-18 and 2025-11-25 only.
#[test]
fn elicitation_create_from_2025_06_18() {
    assert_eq!(versions("elicitation/create"), ["2025-06-18", "2025-11-25"]);
    assert!(tables::exists_as(
        "elicitation/create",
        Kind::ServerRequest,
        V2025_06_18
    ));
    assert!(tables::server_requests(V2026_07_28).is_empty());
    assert_eq!(versions("sampling/createMessage").len(), 4);
    assert_eq!(versions("roots/list").len(), 4);
}

/// Server features (2026-07-28), "Subscriptions": `subscriptions/listen` and its
/// acknowledgement notification exist only at 2026-07-28.
#[test]
fn subscriptions_listen_only_2026() {
    assert_eq!(versions("subscriptions/listen"), ["2026-07-28"]);
    assert_eq!(
        versions("notifications/subscriptions/acknowledged"),
        ["2026-07-28"]
    );
}

/// Lifecycle: `initialize` and `notifications/initialized` belong to the handshake era; the
/// 2026-07-28 client sends only `notifications/cancelled`.
#[test]
fn handshake_methods_and_directions() {
    assert_eq!(versions("initialize").len(), 4);
    assert_eq!(versions("notifications/initialized").len(), 4);
    assert_eq!(
        tables::client_notifications(V2026_07_28),
        ["notifications/cancelled"]
    );
    let progress = tables::method_kind("notifications/progress", V2025_06_18).unwrap();
    assert!(progress.sent_by_client() && progress.sent_by_server() && progress.is_notification());
    let list = tables::method_kind("tools/list", V2024_11_05).unwrap();
    assert_eq!(list.kinds().collect::<Vec<_>>(), [Kind::ClientRequest]);
    let sampling = tables::method_kind("sampling/createMessage", V2025_03_26).unwrap();
    assert!(sampling.sent_by_server() && !sampling.sent_by_client());
    assert_eq!(
        versions("notifications/elicitation/complete"),
        ["2025-11-25"],
        "URL elicitation completion"
    );
}

/// The lists are sorted, agree with `exists`/`method_kind`, and `is_spec_method` is their union.
#[test]
fn lists_are_sorted_and_consistent() {
    for v in ALL {
        for kind in Kind::ALL {
            let list = tables::methods(kind, v);
            assert!(list.windows(2).all(|w| w[0] < w[1]), "{v} {kind:?} sorted");
            for m in list {
                assert!(tables::exists(m, v) && tables::exists_as(m, kind, v));
                assert!(tables::method_kind(m, v).unwrap().contains(kind));
                assert!(tables::is_spec_method(m));
                assert!(tables::all_methods().contains(m));
            }
        }
    }
    assert_eq!(tables::client_requests(V2024_11_05).len(), 13);
    assert_eq!(tables::client_requests(V2026_07_28).len(), 10);
    assert!(!tables::is_spec_method("acme/custom"));
    assert!(!tables::exists("acme/custom", V2025_06_18));
    assert_eq!(tables::method_kind("acme/custom", V2025_06_18), None);
}

// ---------------------------------------------------------------------------------------------
// Params validation.
// ---------------------------------------------------------------------------------------------

/// Server features, "Tools" / "Calling Tools": `name` is required in `tools/call` params.
#[test]
fn missing_required_field_is_named() {
    for v in [V2024_11_05, V2025_03_26, V2025_06_18, V2025_11_25] {
        let err = validate_params("tools/call", v, Some(&json!({"arguments": {}}))).unwrap_err();
        assert_eq!(err.pointer(), "/name", "{v}");
        assert_eq!(
            err.kind(),
            &ParamsErrorKind::MissingField {
                field: "name".into()
            }
        );
        assert_eq!(
            (err.method(), err.version(), err.target()),
            ("tools/call", v, Target::Params)
        );
        assert_eq!(
            err.to_string(),
            format!(
                "invalid params of \"tools/call\" at MCP {v}: at \"/name\": \
                 missing required field \"name\""
            )
        );
    }
    let err = validate_params(
        "tools/call",
        V2026_07_28,
        Some(&json!({"_meta": envelope()})),
    )
    .unwrap_err();
    assert_eq!(err.pointer(), "/name");
}

/// Server features, "Tools": a wrong JSON type is an error with the field's pointer.
#[test]
fn wrong_type_is_an_error() {
    let err = validate_params("tools/call", V2025_06_18, Some(&json!({"name": 42}))).unwrap_err();
    assert_eq!(err.pointer(), "/name");
    assert_eq!(
        err.kind(),
        &ParamsErrorKind::WrongType {
            expected: "string".into(),
            found: "integer"
        }
    );
    let err = validate_params("tools/call", V2025_06_18, Some(&json!([]))).unwrap_err();
    assert_eq!(err.pointer(), "");
    assert!(
        err.to_string()
            .contains("at the top level: expected object, found array"),
        "{err}"
    );
    let err = validate_params(
        "tools/call",
        V2025_06_18,
        Some(&json!({"name": "x", "arguments": "not an object"})),
    )
    .unwrap_err();
    assert_eq!(err.pointer(), "/arguments");
}

/// Server features, "Pagination": `tools/list` params are optional in the handshake era, while
/// `tools/call` needs them.
///
/// Schema note: at 2026-07-28 every request's params are required and carry the `_meta`
/// envelope (`PaginatedRequestParams.required = ["_meta"]`), so absent params fail there.
#[test]
fn absent_params() {
    for v in [V2024_11_05, V2025_03_26, V2025_06_18, V2025_11_25] {
        assert!(validate_params("tools/list", v, None).is_ok(), "{v}");
        assert!(validate_params("ping", v, None).is_ok(), "{v}");
        let err = validate_params("tools/call", v, None).unwrap_err();
        assert_eq!(err.pointer(), "/name", "{v}");
    }
    let err = validate_params("tools/list", V2026_07_28, None).unwrap_err();
    assert_eq!(err.pointer(), "/_meta");
    assert!(
        validate_params(
            "tools/list",
            V2026_07_28,
            Some(&json!({"_meta": envelope()}))
        )
        .is_ok()
    );
    let err = validate_params(
        "tools/list",
        V2026_07_28,
        Some(&json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}})),
    )
    .unwrap_err();
    assert_eq!(
        err.pointer(),
        "/_meta/io.modelcontextprotocol~1clientCapabilities"
    );
}

/// JSON-RPC, custom methods: a method the tables do not know passes, whatever its params; so
/// does a spec method at a revision that lacks it (existence is `exists`'s question).
#[test]
fn unknown_methods_pass() {
    for v in ALL {
        assert!(validate_params("acme/custom", v, Some(&json!([1, 2]))).is_ok());
        assert!(validate_result("acme/custom", v, &json!("anything")).is_ok());
    }
    assert!(validate_params("ping", V2026_07_28, Some(&json!(7))).is_ok());
}

/// Open objects: fields the schema does not list are accepted unless it forbids them.
#[test]
fn extra_fields_are_accepted() {
    let params =
        json!({"name": "x", "arguments": {"a": 1}, "futureField": true, "_meta": {"k": 1}});
    assert!(validate_params("tools/call", V2025_06_18, Some(&params)).is_ok());
}

/// Client features, "Sampling": enums and nested arrays are checked, with the pointer of the
/// failing element.
#[test]
fn nested_enum_violation_has_pointer() {
    let params = json!({
        "messages": [
            {"role": "user", "content": {"type": "text", "text": "hi"}},
            {"role": "robot", "content": {"type": "text", "text": "hi"}}
        ],
        "maxTokens": 10
    });
    let err = validate_params("sampling/createMessage", V2025_06_18, Some(&params)).unwrap_err();
    assert_eq!(err.pointer(), "/messages/1/role");
    assert!(
        matches!(err.kind(), ParamsErrorKind::NotAllowed { .. }),
        "{err}"
    );
    let ok = json!({"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 10});
    assert!(validate_params("sampling/createMessage", V2025_06_18, Some(&ok)).is_ok());
    // A content block whose discriminator fits reports the branch's own error.
    let bad = json!({"messages": [{"role": "user", "content": {"type": "text"}}], "maxTokens": 10});
    let err = validate_params("sampling/createMessage", V2025_06_18, Some(&bad)).unwrap_err();
    assert_eq!(err.pointer(), "/messages/0/content/text", "{err}");
}

/// Basic utilities, "Progress": notification params are validated on request.
#[test]
fn notification_params() {
    let err = validate_notification_params(
        "notifications/progress",
        V2025_03_26,
        Some(&json!({"progress": 1})),
    )
    .unwrap_err();
    assert_eq!(err.pointer(), "/progressToken");
    assert!(
        validate_notification_params(
            "notifications/progress",
            V2025_03_26,
            Some(&json!({"progressToken": "t", "progress": 0.5}))
        )
        .is_ok()
    );
    assert!(validate_notification_params("notifications/initialized", V2025_03_26, None).is_ok());
    // A request method is not a notification: not this function's business.
    assert!(validate_notification_params("tools/call", V2025_03_26, None).is_ok());
}

/// Results: `CallToolResult` needs `content`; at 2025-11-25 a task-augmented call may answer
/// `CreateTaskResult`; at 2026-07-28 list results need `ttlMs`, `cacheScope` and `resultType`.
#[test]
fn result_validation() {
    let err = validate_result("tools/call", V2025_06_18, &json!({"isError": false})).unwrap_err();
    assert_eq!((err.target(), err.pointer()), (Target::Result, "/content"));
    assert!(validate_result("tools/call", V2025_06_18, &json!({"content": []})).is_ok());
    let task = json!({"task": {"taskId": "t1", "status": "working", "createdAt": "2025-11-25T00:00:00Z",
                     "lastUpdatedAt": "2025-11-25T00:00:00Z", "ttl": null}});
    assert!(validate_result("tools/call", V2025_11_25, &task).is_ok());
    assert!(validate_result("tools/call", V2025_06_18, &task).is_err());
    let err = validate_result(
        "tools/list",
        V2026_07_28,
        &json!({"tools": [], "resultType": "complete"}),
    )
    .unwrap_err();
    assert!(
        matches!(err.kind(), ParamsErrorKind::MissingField { .. }),
        "{err}"
    );
    assert!(validate_result("tools/list", V2025_11_25, &json!({"tools": []})).is_ok());
    let err = validate_result(
        "tools/list",
        V2026_07_28,
        &json!({"tools": [], "resultType": "complete", "ttlMs": -1, "cacheScope": "public"}),
    )
    .unwrap_err();
    assert_eq!(err.pointer(), "/ttlMs");
    assert!(matches!(err.kind(), ParamsErrorKind::OutOfRange { .. }));
}

/// The example messages of `spec/2026-07-28/examples` validate, and shaping leaves the example
/// results unchanged (nothing they carry is undefined at 2026-07-28).
#[test]
fn spec_examples_2026_validate_and_survive_shaping() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../spec/2026-07-28/examples");
    let results = [
        ("CallToolResult", "tools/call"),
        ("InputRequiredResult", "tools/call"),
        ("CompleteResult", "completion/complete"),
        ("DiscoverResult", "server/discover"),
        ("GetPromptResult", "prompts/get"),
        ("ListPromptsResult", "prompts/list"),
        ("ListResourceTemplatesResult", "resources/templates/list"),
        ("ListResourcesResult", "resources/list"),
        ("ListToolsResult", "tools/list"),
        ("ReadResourceResult", "resources/read"),
        ("SubscriptionsListenResult", "subscriptions/listen"),
    ];
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).expect("examples folder") {
        let folder = entry.unwrap().path();
        let name = folder.file_name().unwrap().to_string_lossy().into_owned();
        for file in std::fs::read_dir(&folder).unwrap() {
            let path = file.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            let value: Value = serde_json::from_str(&text).unwrap();
            let method = value.get("method").and_then(Value::as_str);
            if let (Some(method), true) = (
                method,
                name.ends_with("Request") || name.ends_with("Notification"),
            ) {
                validate_params(method, V2026_07_28, value.get("params"))
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                checked += 1;
            }
            if let Some((_, method)) = results.iter().find(|(n, _)| *n == name) {
                validate_result(method, V2026_07_28, &value)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                let mut shaped = obj(value.clone());
                shape_result(method, V2026_07_28, &mut shaped);
                assert_eq!(Value::Object(shaped), value, "{}", path.display());
                checked += 1;
            }
        }
    }
    assert!(checked >= 30, "only {checked} examples checked");
}

// ---------------------------------------------------------------------------------------------
// Result shaping.
// ---------------------------------------------------------------------------------------------

/// Server features (2026-07-28), "Caching": `ttlMs` and `cacheScope` exist only at 2026-07-28.
#[test]
fn cache_hints_dropped_before_2026() {
    let result =
        json!({"tools": [], "ttlMs": 5000, "cacheScope": "private", "resultType": "complete"});
    let mut old = obj(result.clone());
    shape_result("tools/list", V2025_11_25, &mut old);
    assert_eq!(Value::Object(old), json!({"tools": []}));
    let mut new = obj(result.clone());
    shape_result("tools/list", V2026_07_28, &mut new);
    assert_eq!(Value::Object(new), result);
    let mut read = obj(json!({"contents": [], "ttlMs": 0, "cacheScope": "public"}));
    shape_result("resources/read", V2025_06_18, &mut read);
    assert_eq!(Value::Object(read), json!({"contents": []}));
}

/// Basic protocol (2026-07-28), "Result types": `resultType` defaults to `"complete"`, a value
/// the handler set (`"input_required"`) is kept, and it is removed before 2026-07-28.
#[test]
fn result_type_at_2026_only() {
    let mut r = obj(json!({"content": []}));
    shape_result("tools/call", V2026_07_28, &mut r);
    assert_eq!(r["resultType"], "complete");
    let mut r =
        obj(json!({"resultType": "input_required", "inputRequests": {}, "requestState": "s"}));
    shape_result("tools/call", V2026_07_28, &mut r);
    assert_eq!(
        Value::Object(r),
        json!({"resultType": "input_required", "inputRequests": {}, "requestState": "s"})
    );
    let mut r = obj(json!({"content": [], "resultType": "complete"}));
    shape_result("tools/call", V2025_06_18, &mut r);
    assert_eq!(Value::Object(r), json!({"content": []}));
    // `ping` answers an open EmptyResult: nothing else is dropped, resultType still is.
    let mut r = obj(json!({"resultType": "complete", "x": 1}));
    shape_result("ping", V2025_03_26, &mut r);
    assert_eq!(Value::Object(r), json!({"x": 1}));
}

/// Custom methods: untouched, except the `resultType` default at 2026-07-28.
#[test]
fn unknown_method_shaping() {
    let mut r = obj(json!({"anything": {"deep": 1}}));
    shape_result("acme/custom", V2025_11_25, &mut r);
    assert_eq!(Value::Object(r), json!({"anything": {"deep": 1}}));
    let mut r = obj(json!({"anything": 1}));
    shape_result("acme/custom", V2026_07_28, &mut r);
    assert_eq!(
        Value::Object(r),
        json!({"anything": 1, "resultType": "complete"})
    );
}

/// Server features, "Tools" / "Listing Tools": nested objects with explicit properties lose
/// fields their revision lacks (`icons`, `execution` from 2025-11-25, `title` from 2025-06-18);
/// `execution` is not in the 2026-07-28 `Tool` either.
#[test]
fn nested_fields_dropped() {
    let tool = json!({
        "name": "t", "title": "T", "description": "d",
        "inputSchema": {"type": "object"},
        "icons": [{"src": "https://x/i.png"}],
        "execution": {"taskSupport": "optional"},
        "annotations": {"readOnlyHint": true, "futureHint": 1}
    });
    let shaped = |v| {
        let mut r = obj(json!({"tools": [tool.clone()]}));
        shape_result("tools/list", v, &mut r);
        let mut keys: Vec<String> = r["tools"][0].as_object().unwrap().keys().cloned().collect();
        keys.sort();
        (keys, r["tools"][0]["annotations"].clone())
    };
    let (keys, annotations) = shaped(V2024_11_05);
    assert_eq!(keys, ["description", "inputSchema", "name"]);
    assert_eq!(annotations, Value::Null, "annotations arrive at 2025-03-26");
    let (keys, annotations) = shaped(V2025_06_18);
    assert_eq!(
        keys,
        ["annotations", "description", "inputSchema", "name", "title"]
    );
    assert_eq!(annotations, json!({"readOnlyHint": true}));
    let (keys, _) = shaped(V2025_11_25);
    assert_eq!(
        keys,
        [
            "annotations",
            "description",
            "execution",
            "icons",
            "inputSchema",
            "name",
            "title"
        ]
    );
    let (keys, _) = shaped(V2026_07_28);
    assert_eq!(
        keys,
        [
            "annotations",
            "description",
            "icons",
            "inputSchema",
            "name",
            "title"
        ]
    );
}

/// Open objects stay untouched: `inputSchema` (a JSON Schema document), `structuredContent`,
/// `_meta` (kept at every level), `experimental` capabilities.
#[test]
fn open_objects_untouched() {
    let input_schema = json!({
        "type": "object", "$schema": "https://json-schema.org/draft/2020-12/schema",
        "properties": {"a": {"type": "string", "x-extra": 1}},
        "additionalProperties": false, "$defs": {"d": {}}
    });
    for v in ALL {
        let mut r = obj(
            json!({"tools": [{"name": "t", "inputSchema": input_schema.clone(),
                                          "_meta": {"any": {"thing": 1}}}],
                               "_meta": {"k": [1, 2]}}),
        );
        shape_result("tools/list", v, &mut r);
        assert_eq!(r["tools"][0]["inputSchema"], input_schema, "{v}");
        assert_eq!(r["tools"][0]["_meta"], json!({"any": {"thing": 1}}), "{v}");
        assert_eq!(r["_meta"], json!({"k": [1, 2]}), "{v}");
    }
    let structured = json!({"deep": {"nested": [1, {"x": null}]}});
    let mut r = obj(json!({"content": [], "structuredContent": structured.clone()}));
    shape_result("tools/call", V2025_06_18, &mut r);
    assert_eq!(r["structuredContent"], structured);
    let init = json!({
        "protocolVersion": "2025-03-26",
        "capabilities": {"experimental": {"acme": {"x": 1}}, "logging": {"any": 1},
                         "tools": {"listChanged": true, "unknown": 1}},
        "serverInfo": {"name": "s", "version": "1", "title": "new in 2025-06-18"}
    });
    let mut r = obj(init);
    shape_result("initialize", V2025_03_26, &mut r);
    assert_eq!(r["capabilities"]["experimental"], json!({"acme": {"x": 1}}));
    assert_eq!(r["capabilities"]["logging"], json!({"any": 1}));
    assert_eq!(r["capabilities"]["tools"], json!({"listChanged": true}));
    assert_eq!(r["serverInfo"], json!({"name": "s", "version": "1"}));
}

/// Tasks (2025-11-25): `tools/call` answers `CallToolResult` or `CreateTaskResult`; a field of
/// either branch survives. Content blocks are a union too: each block keeps its own fields.
#[test]
fn union_results_keep_any_branch_field() {
    let mut r = obj(json!({"task": {"taskId": "t"}, "content": [], "bogus": 1}));
    shape_result("tools/call", V2025_11_25, &mut r);
    assert_eq!(
        Value::Object(r),
        json!({"task": {"taskId": "t"}, "content": []})
    );
    let mut r = obj(json!({"task": {"taskId": "t"}, "content": []}));
    shape_result("tools/call", V2025_06_18, &mut r);
    assert_eq!(Value::Object(r), json!({"content": []}));
    let mut r = obj(json!({"content": [
        {"type": "text", "text": "a", "data": "not a text field"},
        {"type": "image", "data": "AA==", "mimeType": "image/png", "text": "not an image field"}
    ]}));
    shape_result("tools/call", V2025_06_18, &mut r);
    assert_eq!(
        r["content"],
        json!([{"type": "text", "text": "a"}, {"type": "image", "data": "AA==", "mimeType": "image/png"}])
    );
}

/// Version-neutral handlers: a 2026-07-28 example result, shaped for an older revision, is a
/// valid result of that revision (cache hints, `resultType` and newer fields removed).
#[test]
fn modern_examples_shaped_down_validate() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../spec/2026-07-28/examples");
    let results = [
        ("CallToolResult", "tools/call"),
        ("CompleteResult", "completion/complete"),
        ("GetPromptResult", "prompts/get"),
        ("ListPromptsResult", "prompts/list"),
        ("ListResourceTemplatesResult", "resources/templates/list"),
        ("ListResourcesResult", "resources/list"),
        ("ListToolsResult", "tools/list"),
        ("ReadResourceResult", "resources/read"),
    ];
    let mut checked = 0;
    for (folder, method) in results {
        for file in std::fs::read_dir(dir.join(folder)).unwrap() {
            let path = file.unwrap().path();
            if path.ends_with("result-with-array-structured-content.json") {
                // A non-object `structuredContent` is new at 2026-07-28; shaping drops fields,
                // it does not convert values.
                continue;
            }
            let value: Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            for v in [V2024_11_05, V2025_03_26, V2025_06_18, V2025_11_25] {
                let mut shaped = obj(value.clone());
                shape_result(method, v, &mut shaped);
                assert!(!shaped.contains_key("resultType") && !shaped.contains_key("ttlMs"));
                validate_result(method, v, &Value::Object(shaped))
                    .unwrap_or_else(|e| panic!("{} at {v}: {e}", path.display()));
                checked += 1;
            }
        }
    }
    assert!(checked >= 32, "only {checked} checked");
}

/// Client features, "Elicitation": an accepted form carries values "matching the requested
/// schema", and a requested field may be `{"type": "number"}`. `schema.ts` types an answer as
/// `string | number | boolean (| string[])`; the published `schema.json` says "integer", which
/// would refuse 95.5 (the tables follow `schema.ts`, `xtask/src/codegen/errata.rs`). Holds for
/// the handshake-era result of `elicitation/create` and for the 2026-07-28 answer that travels
/// in `tools/call`'s `inputResponses`.
#[test]
fn elicitation_answers_may_be_fractional_numbers() {
    let answer = json!({"action": "accept", "content": {"score": 95.5, "n": 3, "ok": true}});
    for v in [V2025_06_18, V2025_11_25] {
        assert!(
            validate_result("elicitation/create", v, &answer).is_ok(),
            "{v}"
        );
        let nested = json!({"action": "accept", "content": {"score": {"x": 1}}});
        assert!(
            validate_result("elicitation/create", v, &nested).is_err(),
            "{v}"
        );
    }
    let mut params = json!({
        "name": "t",
        "arguments": {},
        "inputResponses": {"ask": answer},
    });
    params["_meta"] = envelope();
    assert_eq!(
        validate_params("tools/call", V2026_07_28, Some(&params)).map_err(|e| e.to_string()),
        Ok(())
    );
    params["inputResponses"]["ask"]["content"]["score"] = json!([1.5]);
    assert!(validate_params("tools/call", V2026_07_28, Some(&params)).is_err());
}

/// 2026-07-28 "Result Type" (`basic/index`): `tools/call`, `prompts/get` and `resources/read`
/// answer their own result (`resultType: "complete"`) or an `InputRequiredResult`
/// (`resultType: "input_required"`), and `resultType` says which. The schema alone types
/// `resultType` as any string and lets an `InputRequiredResult` carry any property, so without
/// the tag `{"content": 5}` passed as an `InputRequiredResult`; it is refused as at 2025-11-25,
/// shaped (the kernel's path, `resultType` added) or not, and so is an unknown `resultType`.
#[test]
fn results_2026_are_told_apart_by_result_type() {
    let with = |value: &Value, result_type: &str| {
        let mut map = obj(value.clone());
        map.insert("resultType".into(), json!(result_type));
        Value::Object(map)
    };
    let cache = json!({"ttlMs": 0, "cacheScope": "private"});
    for (method, bad, good) in [
        ("tools/call", json!({"content": 5}), json!({"content": []})),
        (
            "prompts/get",
            json!({"messages": 5}),
            json!({"messages": []}),
        ),
        (
            "resources/read",
            json!({"contents": 5}),
            json!({"contents": []}),
        ),
    ] {
        let (bad, good) = if method == "resources/read" {
            let mut b = obj(bad);
            let mut g = obj(good);
            b.extend(obj(cache.clone()));
            g.extend(obj(cache.clone()));
            (Value::Object(b), Value::Object(g))
        } else {
            (bad, good)
        };
        assert!(
            validate_result(method, V2025_11_25, &bad).is_err(),
            "{method}"
        );
        let complete = with(&bad, "complete");
        let err = validate_result(method, V2026_07_28, &complete).unwrap_err();
        assert!(
            matches!(err.kind(), ParamsErrorKind::WrongType { .. }),
            "{method}: {err}"
        );
        let mut shaped = obj(bad.clone());
        let handle = tables::method(method).unwrap();
        assert!(
            handle
                .shape_and_validate_result(V2026_07_28, &mut shaped)
                .is_err(),
            "{method}"
        );
        assert!(validate_result(method, V2026_07_28, &with(&good, "complete")).is_ok());
        assert!(validate_result(method, V2026_07_28, &with(&good, "bogus")).is_err());
        // An InputRequiredResult: only `resultType` is required, and it names the shape.
        let input = json!({"resultType": "input_required", "requestState": "s"});
        assert!(
            validate_result(method, V2026_07_28, &input).is_ok(),
            "{method}"
        );
        let not_input = json!({"resultType": "complete", "requestState": "s"});
        assert!(validate_result(method, V2026_07_28, &not_input).is_err());
    }
}
