//! The server's own resources, readable from a handler.

use std::sync::{Arc, Weak};

use ferromcp_types::jsonrpc::ErrorObject;
use ferromcp_types::mcp::{MaybeInputRequired, ReadResourceRequestParams, ReadResourceResult};

use super::Shared;
use super::extract::{FromHandlerCall, HandlerCall, State};
use super::output::ToolError;
use crate::context::RequestContext;

/// A handle to the server's registries, kept in the state map (weakly: the server owns it).
#[derive(Clone)]
pub(crate) struct OwnServer(pub(crate) Weak<Shared>);

/// Reads the server's own resources (static ones and templates) from inside a handler, as a
/// client's `resources/read` would, under the current request's context.
///
/// ```
/// use ferromcp_server::McpServer;
/// use ferromcp_server::mcp_server::{OwnResources, ResourceSpec};
///
/// let server = McpServer::builder("s", "1")
///     .resource(ResourceSpec::new("memo://today", "today"), || async { "buy milk".to_string() })
///     .tool("summary", |own: OwnResources| async move {
///         match own.read("memo://today").await {
///             Ok(r) => format!("{} item(s)", r.contents.len()),
///             Err(e) => e.message.to_string(),
///         }
///     })
///     .build()
///     .unwrap();
/// # let _ = server;
/// ```
#[derive(Clone)]
pub struct OwnResources {
    shared: Arc<Shared>,
    ctx: RequestContext,
}

impl std::fmt::Debug for OwnResources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OwnResources").finish_non_exhaustive()
    }
}

impl OwnResources {
    /// Reads the resource at `uri` (not found: the error a client would get). A resource
    /// whose handler needs the client's input (a multi-round read) cannot be read this way:
    /// that is an error too.
    pub async fn read(&self, uri: &str) -> Result<ReadResourceResult, ErrorObject> {
        let params = ReadResourceRequestParams::new(uri);
        let outcome = super::resources::read(&self.shared, self.ctx.clone(), params)
            .await
            .map_err(|e| e.into_error_object("resources/read"))?;
        match outcome {
            MaybeInputRequired::Complete(result) => Ok(result),
            MaybeInputRequired::InputRequired(_) => Err(ErrorObject::invalid_params(format!(
                "resource {uri} needs the client's input and cannot be read from a handler"
            ))),
        }
    }
}

impl FromHandlerCall for OwnResources {
    fn from_handler_call(call: &HandlerCall) -> Result<Self, ToolError> {
        let State(OwnServer(weak)) = State::<OwnServer>::from_handler_call(call)?;
        let shared = weak.upgrade().ok_or_else(|| {
            ToolError::protocol(ErrorObject::internal_error("the server is shutting down"))
        })?;
        Ok(Self {
            shared,
            ctx: call.context().clone(),
        })
    }
}
