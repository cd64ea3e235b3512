//! Round trips written out by hand for shapes no example file covers: earlier revisions (2024-11-05
//! … 2025-11-25), the 2026-07-28 result envelope, logging levels, forward compatibility, and the
//! builders' wire shapes.

use crate::support::roundtrip;
use ferromcp_types::mcp::methods::{self, Request as _};
use ferromcp_types::mcp::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// Decodes `json` as `T` and checks it encodes back unchanged (a test helper: panics on failure).
#[track_caller]
#[allow(clippy::panic, clippy::needless_pass_by_value)]
fn rt<T: Serialize + DeserializeOwned>(json: Value) -> T {
    match roundtrip::<T>(&json) {
        Ok(t) => t,
        Err(e) => panic!("{e}"),
    }
}

// Lifecycle, 2025-11-25 basic/lifecycle: InitializeRequest params and InitializeResult.
#[test]
fn initialize_2025_11_25() {
    let p: InitializeRequestParams = rt(json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {
            "roots": {"listChanged": true},
            "sampling": {"context": {}, "tools": {}},
            "elicitation": {"form": {}, "url": {}},
            "tasks": {
                "list": {}, "cancel": {},
                "requests": {"sampling": {"createMessage": {}}, "elicitation": {"create": {}}}
            },
            "experimental": {"x-thing": {"on": true}}
        },
        "clientInfo": {
            "name": "ExampleClient", "title": "Example Client Display Name", "version": "1.0.0",
            "description": "An example MCP client", "websiteUrl": "https://example.com",
            "icons": [{"src": "https://example.com/icon.png", "mimeType": "image/png",
                       "sizes": ["48x48"], "theme": "light"}]
        }
    }));
    assert_eq!(
        p.client_info.website_url.as_deref(),
        Some("https://example.com")
    );
    let caps = p.capabilities.elicitation.unwrap();
    assert!(caps.supports_form() && caps.supports_url());

    let r: InitializeResult = rt(json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {
            "logging": {}, "completions": {},
            "prompts": {"listChanged": true},
            "resources": {"subscribe": true, "listChanged": true},
            "tools": {"listChanged": true},
            "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
        },
        "serverInfo": {"name": "ExampleServer", "version": "1.0.0"},
        "instructions": "Optional instructions for the client",
        "_meta": {"x": 1}
    }));
    assert!(
        r.capabilities
            .tasks
            .unwrap()
            .requests
            .unwrap()
            .tools
            .unwrap()
            .call
            .is_some()
    );
}

// 2025-11-25 basic/utilities/tasks: task-augmented tools/call, CreateTaskResult, tasks/get,
// tasks/list, tasks/result, notifications/tasks/status.
#[test]
fn tasks_2025_11_25() {
    let p: CallToolRequestParams = rt(json!({
        "name": "get_weather", "arguments": {"city": "New York"}, "task": {"ttl": 60000}
    }));
    assert_eq!(p.task.unwrap().ttl, Some(60000));

    let created: CreateTaskResult = rt(json!({
        "task": {
            "taskId": "786512e2-9e0d-44bd-8f29-789f320fe840", "status": "working",
            "statusMessage": "The operation is now in progress.",
            "createdAt": "2025-11-25T10:30:00Z", "lastUpdatedAt": "2025-11-25T10:40:00Z",
            "ttl": 60000, "pollInterval": 5000
        }
    }));
    assert_eq!(created.task.status, TaskStatus::Working);
    assert!(!created.task.status.is_terminal());

    // `ttl: null` (unlimited) is required on the wire and kept.
    let got: GetTaskResult = rt(json!({
        "taskId": "t1", "status": "input_required", "createdAt": "2025-11-25T10:30:00Z",
        "lastUpdatedAt": "2025-11-25T10:30:00Z", "ttl": null, "_meta": {"k": "v"}
    }));
    assert_eq!(got.ttl, None);
    assert_eq!(serde_json::to_value(&got).unwrap()["ttl"], Value::Null);

    let list: ListTasksResult = rt(json!({
        "tasks": [{"taskId": "t1", "status": "completed", "createdAt": "a",
                   "lastUpdatedAt": "b", "ttl": 30000}],
        "nextCursor": "next"
    }));
    assert!(list.tasks[0].status.is_terminal());

    let _: TaskIdParams = rt(json!({"taskId": "t1"}));
    let payload: GetTaskPayloadResult = rt(json!({
        "content": [{"type": "text", "text": "done"}], "isError": false,
        "_meta": {META_RELATED_TASK: {"taskId": "t1"}}
    }));
    let call: CallToolResult = payload.decode().unwrap();
    assert_eq!(call.content[0].as_text(), Some("done"));
    let meta = Meta::new().with_related_task(&RelatedTaskMetadata::new("t1"));
    assert_eq!(meta.related_task().unwrap().unwrap().task_id, "t1");

    let _: TaskStatusNotificationParams = rt(json!({
        "taskId": "t1", "status": "failed", "statusMessage": "boom",
        "createdAt": "a", "lastUpdatedAt": "b", "ttl": 1
    }));

    let tool: Tool = rt(json!({
        "name": "slow", "inputSchema": {"type": "object"},
        "execution": {"taskSupport": "optional"}
    }));
    assert_eq!(
        tool.execution.unwrap().task_support,
        Some(TaskSupport::Optional)
    );
}

// 2025-11-25 client/elicitation: URL mode with elicitationId, the completion notification,
// and the -32042 URL elicitation required error data.
#[test]
fn url_elicitation_2025_11_25() {
    let p: ElicitRequestParams = rt(json!({
        "mode": "url", "elicitationId": "550e8400", "url": "https://mcp.example.com/ui",
        "message": "Please provide your API key to continue."
    }));
    assert_eq!(p.mode(), ElicitationMode::Url);
    let _: ElicitationCompleteNotificationParams = rt(json!({"elicitationId": "550e8400"}));
    let _: UrlElicitationRequiredData = rt(json!({
        "elicitations": [{"mode": "url", "elicitationId": "e1", "url": "https://x", "message": "m"}]
    }));
    // 2025-06-18: form mode without `mode`, legacy enumNames.
    let f: ElicitRequestParams = rt(json!({
        "message": "Pick", "requestedSchema": {"type": "object", "properties": {
            "color": {"type": "string", "enum": ["r", "g"], "enumNames": ["Red", "Green"]},
            "n": {"type": "integer", "minimum": 1, "maximum": 9.5, "default": 3}
        }, "required": ["color"]}
    }));
    let ElicitRequestParams::Form(form) = f else {
        panic!("not a form")
    };
    assert!(form.mode.is_none());
    assert!(matches!(
        form.requested_schema.properties["color"],
        PrimitiveSchemaDefinition::LegacyTitledEnum(_)
    ));
    let _: ElicitResult = rt(json!({"action": "accept", "content": {
        "colors": ["r", "g"], "ok": true, "n": 2.5, "name": "x"
    }}));
}

// Older revisions: 2024-11-05 shapes (no audio/annotations.lastModified/title), list requests
// without params, sampling/createMessage with a single content block.
#[test]
fn older_revision_shapes() {
    let _: ListRootsResult = rt(json!({"roots": [{"uri": "file:///a"}], "_meta": {}}));
    let _: CompleteRequestParams = rt(json!({
        "ref": {"type": "ref/resource", "uri": "file:///{path}"},
        "argument": {"name": "path", "value": "sr"}
    }));
    let _: CreateMessageRequestParams = rt(json!({
        "messages": [{"role": "user", "content": {"type": "image", "data": "AA==", "mimeType": "image/png"}}],
        "includeContext": "thisServer", "temperature": 0.7, "maxTokens": 10,
        "stopSequences": ["\n"], "metadata": {"k": 1}
    }));
    let _: SetLevelRequestParams = rt(json!({"level": "warning"}));
    let p: PaginatedRequestParams = serde_json::from_value(json!({})).unwrap();
    assert!(p.cursor.is_none());
    let _: EmptyResult = rt(json!({}));
    let _: CancelledNotificationParams = rt(json!({"requestId": 7}));
    let _: ProgressNotificationParams = rt(json!({"progressToken": 3, "progress": 0.5}));
}

// 2026-07-28 basic (Result.resultType): absent resultType is a complete result; unknown values
// are kept; the request envelope lives in `_meta`.
#[test]
fn result_type_and_meta_envelope() {
    let r: MaybeInputRequired<CallToolResult> = rt(json!({"content": []}));
    assert!(matches!(r, MaybeInputRequired::Complete(_)));
    let r: CallToolResult = rt(json!({"content": [], "resultType": "something_new"}));
    assert_eq!(
        r.result_type,
        Some(ResultType::Other("something_new".into()))
    );

    let meta = Meta::new()
        .with_protocol_version("2026-07-28")
        .with_client_capabilities(&ClientCapabilities::new())
        .with_client_info(&Implementation::new("c", "1"))
        .with_log_level(LoggingLevel::Info)
        .with_progress_token(&ProgressToken::from("tok"));
    let v = serde_json::to_value(&meta).unwrap();
    assert_eq!(
        v,
        json!({
            META_PROTOCOL_VERSION: "2026-07-28",
            META_CLIENT_CAPABILITIES: {},
            META_CLIENT_INFO: {"name": "c", "version": "1"},
            META_LOG_LEVEL: "info",
            META_PROGRESS_TOKEN: "tok"
        })
    );
    assert_eq!(meta.protocol_version(), Some("2026-07-28"));
    assert_eq!(meta.log_level().unwrap().unwrap(), LoggingLevel::Info);
    assert_eq!(meta.client_info().unwrap().unwrap().name, "c");
    assert!(meta.server_info().is_none());
    let bad = Meta::from(serde_json::Map::from_iter([(
        META_LOG_LEVEL.to_owned(),
        json!("loud"),
    )]));
    assert!(bad.log_level().unwrap().is_err());
}

// basic/utilities/logging: levels are ordered by severity (RFC 5424).
#[test]
fn logging_levels_are_ordered() {
    assert!(LoggingLevel::Debug < LoggingLevel::Info);
    assert!(LoggingLevel::Alert < LoggingLevel::Emergency);
    let mut sorted = LoggingLevel::ALL;
    sorted.sort();
    assert_eq!(sorted, LoggingLevel::ALL);
    for l in LoggingLevel::ALL {
        assert_eq!(l.as_str().parse::<LoggingLevel>().unwrap(), l);
        assert_eq!(serde_json::to_value(l).unwrap(), json!(l.as_str()));
    }
}

// Forward compatibility: a content block of an unknown type survives a round trip; unknown
// fields are ignored; snake_case names are not accepted as aliases.
#[test]
fn forward_compatibility() {
    let b: ContentBlock = rt(json!({"type": "hologram", "data": {"x": 1}}));
    assert_eq!(b.type_name(), "hologram");
    // `structuredContent` may be any JSON value in 2026-07-28, `null` included.
    let r: CallToolResult = rt(json!({"content": [], "structuredContent": null}));
    assert_eq!(r.structured_content, Some(Value::Null));
    let t: Tool = serde_json::from_value(json!({
        "name": "t", "inputSchema": {"type": "object"}, "futureField": 1
    }))
    .unwrap();
    assert_eq!(t.name, "t");
    assert!(serde_json::from_value::<Tool>(json!({"name": "t", "input_schema": {}})).is_err());
    assert!(serde_json::from_value::<ContentBlock>(json!({"text": "no type"})).is_err());
    assert!(
        serde_json::from_value::<PrimitiveSchemaDefinition>(json!({"type": "object"})).is_err()
    );
}

// Builders produce the wire shapes of the spec.
#[test]
fn builders() {
    let tool = Tool::without_arguments("now")
        .with_title("Now")
        .with_annotations(ToolAnnotations::new().with_read_only_hint(true))
        .with_execution(ToolExecution::new().with_task_support(TaskSupport::Forbidden));
    assert_eq!(
        serde_json::to_value(&tool).unwrap(),
        json!({"name": "now", "title": "Now", "inputSchema": {"type": "object"},
               "annotations": {"readOnlyHint": true}, "execution": {"taskSupport": "forbidden"}})
    );
    let r = InputRequiredResult::new()
        .with_input_request(
            "ask",
            InputRequest::Elicit(
                ElicitRequestFormParams::new(
                    "Name?",
                    ElicitationSchema::new().with_property("name", StringSchema::new()),
                )
                .into(),
            ),
        )
        .with_input_request("roots", InputRequest::ListRoots(None))
        .with_request_state("s");
    assert_eq!(
        serde_json::to_value(&r).unwrap(),
        json!({"resultType": "input_required", "requestState": "s", "inputRequests": {
            "ask": {"method": "elicitation/create", "params": {"message": "Name?",
                "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}},
            "roots": {"method": "roots/list"}
        }})
    );
    let d = DiscoverResult::new(vec!["2026-07-28".into()], ServerCapabilities::new())
        .with_result_type(ResultType::Complete)
        .with_ttl_ms(1000u64)
        .with_cache_scope(CacheScope::Public);
    assert_eq!(
        serde_json::to_value(&d).unwrap(),
        json!({"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {},
               "ttlMs": 1000, "cacheScope": "public"})
    );
    assert_eq!(methods::CallTool::METHOD, "tools/call");
}
