//! What a tool handler may return, and how failures become tool errors or protocol errors.

use std::any::Any;
use std::fmt::Display;

use ferromcp_dispatch::HandlerError;
use ferromcp_types::jsonrpc::ErrorObject;
use ferromcp_types::mcp::{CallToolResult, ContentBlock, JsonObject};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use super::schema::schema_object_for;

/// A value a tool handler can return: text, content blocks, a full [`CallToolResult`],
/// structured output ([`Json`]), or a `Result` whose error becomes a tool error.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from an MCP tool handler",
    note = "return a String, &'static str, ContentBlock, Vec<ContentBlock>, CallToolResult, \
            Json<T> (structured output), (), or Result<T, E> where T is one of these and E is \
            an error (it becomes a tool result with isError: true), a ToolError, or an \
            ErrorObject (answered as that protocol error)"
)]
pub trait IntoToolResult {
    /// The JSON Schema of the structured output, when the return type has one.
    fn output_schema() -> Option<JsonObject> {
        None
    }

    /// Converts into the tool's result, or a protocol error.
    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject>;
}

impl IntoToolResult for CallToolResult {
    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject> {
        Ok(self)
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject> {
        Ok(CallToolResult::text(self))
    }
}

impl IntoToolResult for &'static str {
    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject> {
        Ok(CallToolResult::text(self))
    }
}

impl IntoToolResult for () {
    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject> {
        Ok(CallToolResult::new(Vec::new()))
    }
}

impl IntoToolResult for ContentBlock {
    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject> {
        Ok(CallToolResult::new(vec![self]))
    }
}

impl IntoToolResult for Vec<ContentBlock> {
    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject> {
        Ok(CallToolResult::new(self))
    }
}

/// Structured output: the value goes into `structuredContent` (and, serialized, into a text
/// block for clients that predate structured output), and the tool's `outputSchema` is
/// derived from `T`.
///
/// ```
/// use ferromcp_server::mcp_server::{IntoToolResult, Json};
///
/// #[derive(serde::Serialize, schemars::JsonSchema)]
/// struct Sum { total: f64 }
///
/// let r = Json(Sum { total: 3.0 }).into_tool_result().unwrap();
/// assert_eq!(r.structured_content, Some(serde_json::json!({"total": 3.0})));
/// assert!(<Json<Sum> as IntoToolResult>::output_schema().is_some());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Json<T>(pub T);

impl<T: Serialize + JsonSchema> IntoToolResult for Json<T> {
    fn output_schema() -> Option<JsonObject> {
        Some(schema_object_for::<T>())
    }

    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject> {
        let value = serde_json::to_value(&self.0).map_err(|e| {
            tracing::error!(error = %e, "structured tool output did not serialize");
            ErrorObject::internal_error("Internal error")
        })?;
        let mut result = CallToolResult::text(value.to_string());
        result.structured_content = Some(value);
        Ok(result)
    }
}

/// The protocol error a handler's error stands for, if it is one: an [`ErrorObject`] itself,
/// or a [`HandlerError::Protocol`]. Tool, prompt and resource handlers that fail with one
/// answer with exactly that error (for example [`resource_not_found`](super::resource_not_found)).
pub(crate) fn protocol_error<E: 'static>(e: &E) -> Option<ErrorObject> {
    let any = e as &dyn Any;
    if let Some(e) = any.downcast_ref::<ErrorObject>() {
        return Some(e.clone());
    }
    match any.downcast_ref::<HandlerError>() {
        Some(HandlerError::Protocol(e)) => Some(e.clone()),
        _ => None,
    }
}

/// An error a tool handler returns on purpose.
///
/// Any error type that implements `Display` converts into one (so `?` works in a handler that
/// returns `Result<_, ToolError>`) and becomes a tool result with `isError: true`, which the
/// model can read and act on. [`ToolError::protocol`] sends a protocol error instead, and so
/// does an [`ErrorObject`] (or a [`HandlerError::Protocol`]) converted with `?`: a protocol
/// error stays a protocol error.
#[derive(Debug)]
pub enum ToolError {
    /// A tool error: the result has `isError: true` and this text.
    Message(String),
    /// A protocol error, sent as the response's error.
    Protocol(ErrorObject),
}

impl ToolError {
    /// A tool error with this text.
    pub fn message(text: impl Into<String>) -> Self {
        Self::Message(text.into())
    }

    /// A protocol error instead of a tool result.
    pub fn protocol(error: ErrorObject) -> Self {
        Self::Protocol(error)
    }
}

impl<E: Display + 'static> From<E> for ToolError {
    fn from(e: E) -> Self {
        match protocol_error(&e) {
            Some(e) => Self::Protocol(e),
            None => Self::Message(e.to_string()),
        }
    }
}

/// An error a tool handler can return inside `Result<T, E>`: a protocol error
/// ([`ErrorObject`], [`HandlerError::Protocol`], [`ToolError::Protocol`]) is answered as
/// such; any other error becomes a tool result with `isError: true` and its text.
pub trait IntoToolError {
    /// The tool result (with `isError: true`) or protocol error this error becomes.
    fn into_tool_error(self) -> Result<CallToolResult, ErrorObject>;
}

impl<E: Display + 'static> IntoToolError for E {
    fn into_tool_error(self) -> Result<CallToolResult, ErrorObject> {
        match protocol_error(&self) {
            Some(e) => Err(e),
            None => Ok(CallToolResult::error(self.to_string())),
        }
    }
}

impl IntoToolError for ToolError {
    fn into_tool_error(self) -> Result<CallToolResult, ErrorObject> {
        match self {
            Self::Message(text) => Ok(CallToolResult::error(text)),
            Self::Protocol(e) => Err(e),
        }
    }
}

impl<T: IntoToolResult, E: IntoToolError> IntoToolResult for Result<T, E> {
    fn output_schema() -> Option<JsonObject> {
        T::output_schema()
    }

    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject> {
        match self {
            Ok(v) => v.into_tool_result(),
            Err(e) => e.into_tool_error(),
        }
    }
}

/// A JSON value as a text result.
impl IntoToolResult for Value {
    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject> {
        Ok(CallToolResult::text(self.to_string()))
    }
}
