//! The 2026-07-28 example messages (`spec/2026-07-28/examples/<Type>/*.json`) decode into the
//! version-neutral MCP types and encode back to the same JSON; plus hand-written round trips
//! for shapes of earlier revisions (2024-11-05 … 2025-11-25) that have no example files.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use ferromcp_types::jsonrpc::ErrorCode;
use ferromcp_types::mcp::methods::{self, Request as _};
use ferromcp_types::mcp::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

type Check = fn(&Value) -> Result<(), String>;

fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../spec/2026-07-28/examples")
}

/// Decodes `v` as `T`, encodes it again and compares the JSON values.
fn roundtrip<T: Serialize + DeserializeOwned>(v: &Value) -> Result<T, String> {
    let t: T = serde_json::from_value(v.clone()).map_err(|e| format!("decode: {e}"))?;
    let back = serde_json::to_value(&t).map_err(|e| format!("encode: {e}"))?;
    if &back != v {
        return Err(format!("round trip differs:\n  in:  {v}\n  out: {back}"));
    }
    // Decoding from text must agree with decoding from a `Value`.
    let text = serde_json::to_string(v).map_err(|e| e.to_string())?;
    let t2: T = serde_json::from_str(&text).map_err(|e| format!("decode text: {e}"))?;
    if serde_json::to_value(&t2).map_err(|e| e.to_string())? != back {
        return Err("decoding from text differs from decoding a Value".into());
    }
    Ok(t)
}

fn value<T: Serialize + DeserializeOwned>(v: &Value) -> Result<(), String> {
    roundtrip::<T>(v).map(|_| ())
}

fn field<'v>(v: &'v Value, key: &str) -> Result<&'v Value, String> {
    v.get(key).ok_or_else(|| format!("missing `{key}`"))
}

/// A JSON-RPC request (or an input request `{method, params}`): the method matches and the
/// params round-trip.
fn request<M: methods::Request>(v: &Value) -> Result<(), String>
where
    M::Params: Serialize + DeserializeOwned,
{
    let method = field(v, "method")?;
    if method != M::METHOD {
        return Err(format!("method {method} is not {}", M::METHOD));
    }
    match v.get("params") {
        Some(p) => value::<M::Params>(p),
        None => Ok(()),
    }
}

/// A JSON-RPC notification: the method matches and the params round-trip.
fn notification<M: methods::Notification>(v: &Value) -> Result<(), String> {
    let method = field(v, "method")?;
    if method != M::METHOD {
        return Err(format!("method {method} is not {}", M::METHOD));
    }
    match v.get("params") {
        Some(p) => value::<M::Params>(p),
        None => Ok(()),
    }
}

/// A JSON-RPC result response: the result round-trips as `T`.
fn response<T: Serialize + DeserializeOwned>(v: &Value) -> Result<(), String> {
    value::<T>(field(v, "result")?)
}

/// A complete result of a request that may need input.
fn complete_response<T: Serialize + DeserializeOwned>(v: &Value) -> Result<(), String> {
    match roundtrip::<MaybeInputRequired<T>>(field(v, "result")?)? {
        MaybeInputRequired::Complete(_) => Ok(()),
        MaybeInputRequired::InputRequired(_) => Err("decoded as input-required".into()),
    }
}

/// A JSON-RPC error object `{code, message, data?}`: the code matches, `data` round-trips as `D`.
fn error_object<D: Serialize + DeserializeOwned>(code: ErrorCode, v: &Value) -> Result<(), String> {
    let got = field(v, "code")?;
    if got != &json!(code.0) {
        return Err(format!("code {got} is not {}", code.0));
    }
    field(v, "message")?;
    match v.get("data") {
        Some(d) => value::<D>(d),
        None => Ok(()),
    }
}

/// A JSON-RPC error response: the error object checks as [`error_object`].
fn error_response<D: Serialize + DeserializeOwned>(
    code: ErrorCode,
    v: &Value,
) -> Result<(), String> {
    error_object::<D>(code, field(v, "error")?)
}

macro_rules! variant {
    ($ty:ty, $pat:pat) => {
        |v: &Value| match roundtrip::<$ty>(v)? {
            $pat => Ok(()),
            other => Err(format!("wrong variant: {other:?}")),
        }
    };
}

/// Folder name → how its examples are checked. Every folder must be listed.
fn table() -> BTreeMap<&'static str, Check> {
    let entries: Vec<(&'static str, Check)> = vec![
        // basic/content
        (
            "AudioContent",
            variant!(ContentBlock, ContentBlock::Audio(_)),
        ),
        (
            "ImageContent",
            variant!(ContentBlock, ContentBlock::Image(_)),
        ),
        ("TextContent", variant!(ContentBlock, ContentBlock::Text(_))),
        (
            "ResourceLink",
            variant!(ContentBlock, ContentBlock::ResourceLink(_)),
        ),
        (
            "EmbeddedResource",
            variant!(ContentBlock, ContentBlock::Resource(_)),
        ),
        (
            "ToolUseContent",
            variant!(SamplingContent, SamplingContent::ToolUse(_)),
        ),
        (
            "ToolResultContent",
            variant!(SamplingContent, SamplingContent::ToolResult(_)),
        ),
        (
            "BlobResourceContents",
            variant!(ResourceContents, ResourceContents::Blob(_)),
        ),
        (
            "TextResourceContents",
            variant!(ResourceContents, ResourceContents::Text(_)),
        ),
        ("Resource", value::<Resource>),
        ("Root", value::<Root>),
        ("Tool", value::<Tool>),
        ("ModelPreferences", value::<ModelPreferences>),
        ("SamplingMessage", value::<SamplingMessage>),
        ("ClientCapabilities", value::<ClientCapabilities>),
        ("ServerCapabilities", value::<ServerCapabilities>),
        // elicitation schemas
        (
            "StringSchema",
            variant!(
                PrimitiveSchemaDefinition,
                PrimitiveSchemaDefinition::String(_)
            ),
        ),
        (
            "NumberSchema",
            variant!(
                PrimitiveSchemaDefinition,
                PrimitiveSchemaDefinition::Number(_)
            ),
        ),
        (
            "BooleanSchema",
            variant!(
                PrimitiveSchemaDefinition,
                PrimitiveSchemaDefinition::Boolean(_)
            ),
        ),
        (
            "UntitledSingleSelectEnumSchema",
            variant!(
                PrimitiveSchemaDefinition,
                PrimitiveSchemaDefinition::UntitledSingleSelect(_)
            ),
        ),
        (
            "TitledSingleSelectEnumSchema",
            variant!(
                PrimitiveSchemaDefinition,
                PrimitiveSchemaDefinition::TitledSingleSelect(_)
            ),
        ),
        (
            "UntitledMultiSelectEnumSchema",
            variant!(
                PrimitiveSchemaDefinition,
                PrimitiveSchemaDefinition::UntitledMultiSelect(_)
            ),
        ),
        (
            "TitledMultiSelectEnumSchema",
            variant!(
                PrimitiveSchemaDefinition,
                PrimitiveSchemaDefinition::TitledMultiSelect(_)
            ),
        ),
        // params
        ("CallToolRequestParams", value::<CallToolRequestParams>),
        (
            "CancelledNotificationParams",
            value::<CancelledNotificationParams>,
        ),
        ("CompleteRequestParams", value::<CompleteRequestParams>),
        (
            "CreateMessageRequestParams",
            value::<CreateMessageRequestParams>,
        ),
        (
            "ElicitRequestFormParams",
            variant!(ElicitRequestParams, ElicitRequestParams::Form(_)),
        ),
        (
            "ElicitRequestURLParams",
            variant!(ElicitRequestParams, ElicitRequestParams::Url(_)),
        ),
        ("GetPromptRequestParams", value::<GetPromptRequestParams>),
        (
            "LoggingMessageNotificationParams",
            value::<LoggingMessageNotificationParams>,
        ),
        ("PaginatedRequestParams", value::<PaginatedRequestParams>),
        (
            "ProgressNotificationParams",
            value::<ProgressNotificationParams>,
        ),
        (
            "ResourceUpdatedNotificationParams",
            value::<ResourceUpdatedNotificationParams>,
        ),
        // results
        ("CallToolResult", value::<CallToolResult>),
        ("CompleteResult", value::<CompleteResult>),
        ("CreateMessageResult", value::<CreateMessageResult>),
        ("DiscoverResult", value::<DiscoverResult>),
        ("ElicitResult", value::<ElicitResult>),
        ("GetPromptResult", value::<GetPromptResult>),
        ("ListPromptsResult", value::<ListPromptsResult>),
        (
            "ListResourceTemplatesResult",
            value::<ListResourceTemplatesResult>,
        ),
        ("ListResourcesResult", value::<ListResourcesResult>),
        ("ListRootsResult", value::<ListRootsResult>),
        ("ListToolsResult", value::<ListToolsResult>),
        ("ReadResourceResult", value::<ReadResourceResult>),
        (
            "SubscriptionsListenResult",
            value::<SubscriptionsListenResult>,
        ),
        // multi-round (2026-07-28)
        ("InputRequests", value::<InputRequests>),
        ("InputResponses", value::<InputResponses>),
        (
            "InputRequiredResult",
            variant!(
                MaybeInputRequired<CallToolResult>,
                MaybeInputRequired::InputRequired(_)
            ),
        ),
        // requests (JSON-RPC envelopes or input requests)
        ("CallToolRequest", request::<methods::CallTool>),
        ("CompleteRequest", request::<methods::Complete>),
        ("DiscoverRequest", request::<methods::Discover>),
        ("GetPromptRequest", request::<methods::GetPrompt>),
        ("ListPromptsRequest", request::<methods::ListPrompts>),
        (
            "ListResourceTemplatesRequest",
            request::<methods::ListResourceTemplates>,
        ),
        ("ListResourcesRequest", request::<methods::ListResources>),
        ("ListToolsRequest", request::<methods::ListTools>),
        ("ReadResourceRequest", request::<methods::ReadResource>),
        (
            "SubscriptionsListenRequest",
            request::<methods::SubscriptionsListen>,
        ),
        ("ListRootsRequest", request::<methods::ListRoots>),
        (
            "CreateMessageRequest",
            variant!(InputRequest, InputRequest::CreateMessage(_)),
        ),
        (
            "ElicitRequest",
            variant!(InputRequest, InputRequest::Elicit(_)),
        ),
        // notifications
        ("CancelledNotification", notification::<methods::Cancelled>),
        (
            "LoggingMessageNotification",
            notification::<methods::LoggingMessage>,
        ),
        ("ProgressNotification", notification::<methods::Progress>),
        (
            "PromptListChangedNotification",
            notification::<methods::PromptListChanged>,
        ),
        (
            "ResourceListChangedNotification",
            notification::<methods::ResourceListChanged>,
        ),
        (
            "ResourceUpdatedNotification",
            notification::<methods::ResourceUpdated>,
        ),
        (
            "ToolListChangedNotification",
            notification::<methods::ToolListChanged>,
        ),
        (
            "SubscriptionsAcknowledgedNotification",
            notification::<methods::SubscriptionsAcknowledged>,
        ),
        // result responses
        (
            "CallToolResultResponse",
            complete_response::<CallToolResult>,
        ),
        ("CompleteResultResponse", response::<CompleteResult>),
        ("DiscoverResultResponse", response::<DiscoverResult>),
        (
            "GetPromptResultResponse",
            complete_response::<GetPromptResult>,
        ),
        ("ListPromptsResultResponse", response::<ListPromptsResult>),
        (
            "ListResourceTemplatesResultResponse",
            response::<ListResourceTemplatesResult>,
        ),
        (
            "ListResourcesResultResponse",
            response::<ListResourcesResult>,
        ),
        ("ListToolsResultResponse", response::<ListToolsResult>),
        (
            "ReadResourceResultResponse",
            complete_response::<ReadResourceResult>,
        ),
        (
            "SubscriptionsListenResultResponse",
            response::<SubscriptionsListenResult>,
        ),
        // errors: JSON-RPC error objects
        ("ParseError", |v| {
            error_object::<Value>(ErrorCode::PARSE_ERROR, v)
        }),
        ("InternalError", |v| {
            error_object::<Value>(ErrorCode::INTERNAL_ERROR, v)
        }),
        ("InvalidParamsError", |v| {
            error_object::<Value>(ErrorCode::INVALID_PARAMS, v)
        }),
        ("MethodNotFoundError", |v| {
            error_object::<Value>(ErrorCode::METHOD_NOT_FOUND, v)
        }),
        // errors: JSON-RPC error responses with MCP data (2026-07-28)
        ("HeaderMismatchError", |v| {
            error_response::<Value>(ErrorCode::HEADER_MISMATCH, v)
        }),
        ("MissingRequiredClientCapabilityError", |v| {
            error_response::<MissingRequiredClientCapabilityData>(
                ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
                v,
            )
        }),
        ("UnsupportedProtocolVersionError", |v| {
            error_response::<UnsupportedProtocolVersionData>(
                ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
                v,
            )
        }),
    ];
    let n = entries.len();
    let map: BTreeMap<_, _> = entries.into_iter().collect();
    assert_eq!(map.len(), n, "duplicate folder in the table");
    map
}

#[test]
fn every_example_round_trips() {
    let table = table();
    let mut folders = Vec::new();
    let mut failures = Vec::new();
    let mut files = 0;
    for entry in fs::read_dir(examples_dir()).expect("examples folder") {
        let entry = entry.unwrap();
        if !entry.file_type().unwrap().is_dir() {
            continue;
        }
        let name = entry.file_name().into_string().unwrap();
        let Some(check) = table.get(name.as_str()) else {
            failures.push(format!(
                "{name}: folder not mapped to a Rust type in the table"
            ));
            continue;
        };
        folders.push(name.clone());
        let mut paths: Vec<_> = fs::read_dir(entry.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        paths.sort();
        assert!(!paths.is_empty(), "{name}: no example files");
        for path in paths {
            files += 1;
            let v: Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
            if let Err(e) = check(&v) {
                failures.push(format!("{}: {e}", path.display()));
            }
        }
    }
    for name in table.keys() {
        if !folders.iter().any(|f| f == name) {
            failures.push(format!("{name}: in the table but no such folder"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(files >= 129, "only {files} example files checked");
}

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

/// Every method and notification name in every vendored schema (2024-11-05 … 2026-07-28) has
/// a marker type in `mcp::methods`, and every marker names a method of some schema.
#[test]
fn every_schema_method_has_a_marker() {
    use methods::Notification as N;
    let markers: Vec<&str> = vec![
        methods::Initialize::METHOD,
        methods::Ping::METHOD,
        methods::Discover::METHOD,
        methods::ListTools::METHOD,
        methods::CallTool::METHOD,
        methods::ListResources::METHOD,
        methods::ListResourceTemplates::METHOD,
        methods::ReadResource::METHOD,
        methods::Subscribe::METHOD,
        methods::Unsubscribe::METHOD,
        methods::ListPrompts::METHOD,
        methods::GetPrompt::METHOD,
        methods::Complete::METHOD,
        methods::SetLevel::METHOD,
        methods::CreateMessage::METHOD,
        methods::Elicit::METHOD,
        methods::ListRoots::METHOD,
        methods::SubscriptionsListen::METHOD,
        methods::GetTask::METHOD,
        methods::GetTaskPayload::METHOD,
        methods::ListTasks::METHOD,
        methods::CancelTask::METHOD,
        <methods::Initialized as N>::METHOD,
        <methods::Cancelled as N>::METHOD,
        <methods::Progress as N>::METHOD,
        <methods::LoggingMessage as N>::METHOD,
        <methods::ResourceUpdated as N>::METHOD,
        <methods::ResourceListChanged as N>::METHOD,
        <methods::ToolListChanged as N>::METHOD,
        <methods::PromptListChanged as N>::METHOD,
        <methods::RootsListChanged as N>::METHOD,
        <methods::ElicitationComplete as N>::METHOD,
        <methods::TaskStatusNotification as N>::METHOD,
        <methods::SubscriptionsAcknowledged as N>::METHOD,
    ];
    let mut in_schemas = std::collections::BTreeSet::new();
    for version in [
        "2024-11-05",
        "2025-03-26",
        "2025-06-18",
        "2025-11-25",
        "2026-07-28",
    ] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../spec")
            .join(version)
            .join("schema.json");
        let schema: Value = serde_json::from_slice(&fs::read(path).unwrap()).unwrap();
        let defs = schema
            .get("$defs")
            .or_else(|| schema.get("definitions"))
            .unwrap();
        for def in defs.as_object().unwrap().values() {
            if let Some(m) = def
                .pointer("/properties/method/const")
                .and_then(Value::as_str)
            {
                in_schemas.insert(m.to_owned());
                assert!(markers.contains(&m), "{version}: no marker type for `{m}`");
            }
        }
    }
    for m in &markers {
        assert!(
            in_schemas.contains(*m),
            "marker for `{m}` names no schema method"
        );
    }
}
