//! A mount's resource templates under front URIs, and the completion functions that ask the
//! backend (for prompt arguments and template variables); registered at build time or on a
//! running front alike.

use std::sync::Arc;

use ferromcp_dispatch::BoxFuture;
use ferromcp_server::mcp_server::{
    CompletionRequest, FromHandlerCall, HandlerCall, ResourceSpec, ToolError,
};
use ferromcp_server::{McpServer, RequestContext};
use ferromcp_types::jsonrpc::ErrorObject;
use ferromcp_types::mcp::{
    CompleteRequestParams, CompletionArgument, CompletionContext, CompletionReference,
    ReadResourceResult, ResourceTemplate, ResourceTemplateReference,
};

use crate::mount::Mount;
use crate::naming::{front_uri, template_variables};

/// The requested URI of a `resources/read` served by a template (the extractor the front's
/// template handlers take).
pub(crate) struct RequestedUri(String);

impl FromHandlerCall for RequestedUri {
    fn from_handler_call(call: &HandlerCall) -> Result<Self, ToolError> {
        Ok(Self(call.name().to_owned()))
    }
}

/// A boxed completion function.
type Completer = Box<dyn Fn(CompletionRequest) -> BoxFuture<'static, Vec<String>> + Send + Sync>;

impl Mount {
    /// The front's description of a backend template (under the front URI) and the handler
    /// that reads a matching URI from the backend.
    pub(crate) fn template(
        self: &Arc<Self>,
        template: &ResourceTemplate,
    ) -> (
        ResourceSpec,
        impl Fn(
            RequestContext,
            RequestedUri,
        ) -> BoxFuture<'static, Result<ReadResourceResult, ErrorObject>>
        + Clone
        + Send
        + Sync
        + 'static,
    ) {
        let front_template = front_uri(self.name(), &template.uri_template);
        let mut spec = ResourceSpec::new(&front_template, &template.name);
        if let Some(d) = &template.description {
            spec = spec.description(d);
        }
        if let Some(t) = &template.title {
            spec = spec.title(t);
        }
        if let Some(m) = &template.mime_type {
            spec = spec.mime_type(m);
        }
        let this = self.clone();
        let handler = move |ctx: RequestContext, RequestedUri(uri): RequestedUri| {
            let this = this.clone();
            let fut: BoxFuture<'static, Result<ReadResourceResult, ErrorObject>> =
                Box::pin(async move { this.read(ctx, uri).await });
            fut
        };
        (spec, handler)
    }

    /// Adds a backend template, and a completion function for each of its variables, to a
    /// running front (the completions first: the template is complete once it is listed).
    pub(crate) fn add_template_live(
        self: &Arc<Self>,
        front: &McpServer,
        template: &ResourceTemplate,
    ) {
        let front_template = front_uri(self.name(), &template.uri_template);
        for (var, complete) in self.template_completers(template) {
            front.add_template_completion(&front_template, &var, complete);
        }
        let (spec, handler) = self.template(template);
        if let Err(e) = front.add_resource_template(spec, handler) {
            tracing::warn!(mount = %self.name(), error = %e, "backend resource template left out");
            // Takes the completions away again.
            front.remove_resource_template(&front_template);
        }
    }

    /// A completion function for each variable of a backend template, by variable name.
    pub(crate) fn template_completers(
        self: &Arc<Self>,
        template: &ResourceTemplate,
    ) -> Vec<(String, Completer)> {
        template_variables(&template.uri_template)
            .into_iter()
            .map(|var| {
                let reference = CompletionReference::Resource(ResourceTemplateReference::new(
                    &template.uri_template,
                ));
                let complete: Completer = Box::new(self.completer(reference));
                (var, complete)
            })
            .collect()
    }

    /// A completion function that asks the backend about `reference`.
    pub(crate) fn completer(
        self: &Arc<Self>,
        reference: CompletionReference,
    ) -> impl Fn(CompletionRequest) -> BoxFuture<'static, Vec<String>> + Send + Sync + 'static {
        let this = self.clone();
        move |req: CompletionRequest| {
            let this = this.clone();
            let mut params = CompleteRequestParams::new(
                reference.clone(),
                CompletionArgument::new(req.argument, req.value),
            );
            if !req.context.is_empty() {
                let mut context = CompletionContext::new();
                context.arguments = Some(req.context);
                params.context = Some(context);
            }
            Box::pin(async move {
                match this.client().complete(params).await {
                    Ok(result) => result.completion.values,
                    Err(e) => {
                        tracing::debug!(mount = %this.name(), error = %e, "backend completion failed");
                        Vec::new()
                    }
                }
            })
        }
    }
}
