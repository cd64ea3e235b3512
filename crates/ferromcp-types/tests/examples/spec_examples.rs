//! The 2026-07-28 example messages (`spec/2026-07-28/examples/<Type>/*.json`): each decodes into
//! the version-neutral MCP type its directory names and encodes back to the same JSON.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use crate::support::roundtrip;
use ferromcp_types::jsonrpc::ErrorCode;
use ferromcp_types::mcp::methods;
use ferromcp_types::mcp::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

type Check = fn(&Value) -> Result<(), String>;

fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../spec/2026-07-28/examples")
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
