//! Resources and resource templates: `resources/list`, `resources/templates/list`,
//! `resources/read`.

use std::future::Future;
use std::sync::Arc;

use ferromcp_dispatch::{BoxFuture, HandlerError};
use ferromcp_types::ProtocolVersion;
use ferromcp_types::jsonrpc::{ErrorCode, ErrorObject};
use ferromcp_types::mcp::{
    Annotations, Cursor, Icon, InputResponses, MaybeInputRequired, ReadResourceRequestParams,
    ReadResourceResult, Resource, ResourceTemplate, methods,
};
use serde_json::Value;

use super::completions::{CompletionRequest, Target};
use super::extract::HandlerCall;
use super::handler::ResourceHandler;
use super::listed::{self, Encoded, Listed, Page};
use super::registry::{Named, Registry};
use super::resolve::{self, ResolverRef, Round};
use super::{McpServer, Shared};
use crate::context::RequestContext;
use crate::server::BuildError;
use crate::uri_template::UriTemplate;

/// A resource's or template's description: URI (or URI template), name and the rest.
#[derive(Debug, Clone)]
#[must_use]
pub struct ResourceSpec {
    uri: String,
    name: String,
    title: Option<String>,
    description: Option<String>,
    mime_type: Option<String>,
    annotations: Option<Annotations>,
    icons: Option<Vec<Icon>>,
    size: Option<u64>,
}

impl ResourceSpec {
    /// A resource (or, with [`McpServerBuilder::resource_template`](super::McpServerBuilder::resource_template),
    /// a template) at `uri`, called `name`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            annotations: None,
            icons: None,
            size: None,
        }
    }

    /// A human-readable title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// What the resource holds.
    pub fn description(mut self, text: impl Into<String>) -> Self {
        self.description = Some(text.into());
        self
    }

    /// The MIME type of the contents.
    pub fn mime_type(mut self, mime: impl Into<String>) -> Self {
        self.mime_type = Some(mime.into());
        self
    }

    /// Audience, priority and last-modified hints.
    pub fn annotations(mut self, annotations: Annotations) -> Self {
        self.annotations = Some(annotations);
        self
    }

    /// Icons for clients to show.
    pub fn icons(mut self, icons: Vec<Icon>) -> Self {
        self.icons = Some(icons);
        self
    }

    /// The size in bytes, if known (static resources only).
    pub fn size(mut self, bytes: u64) -> Self {
        self.size = Some(bytes);
        self
    }
}

type ReadFn = dyn Fn(HandlerCall, String) -> BoxFuture<'static, Result<ReadResourceResult, ErrorObject>>
    + Send
    + Sync;

/// A static resource.
pub(crate) struct ResourceEntry {
    pub(crate) resource: Resource,
    read: Arc<ReadFn>,
    resolvers: Vec<ResolverRef>,
    /// `resource` as `resources/list` lists it, per version, encoded on its first listing.
    listed: Encoded,
}

impl ResourceEntry {
    /// The entry with `meta` as its resource's `_meta` (its listing encoded anew).
    pub(crate) fn with_meta(mut self, meta: ferromcp_types::mcp::Meta) -> Self {
        self.resource.meta = Some(meta);
        self.listed = Encoded::new(methods::RESOURCES_LIST, "resources");
        self
    }
}

impl Listed for ResourceEntry {
    type Item = Resource;
    fn listed(&self) -> (&Resource, &Encoded) {
        (&self.resource, &self.listed)
    }
}

impl Listed for TemplateEntry {
    type Item = ResourceTemplate;
    fn listed(&self) -> (&ResourceTemplate, &Encoded) {
        (&self.template, &self.listed)
    }
}

impl Named for ResourceEntry {
    fn key(&self) -> &str {
        &self.resource.uri
    }
}

/// A resource template.
pub(crate) struct TemplateEntry {
    pub(crate) template: ResourceTemplate,
    pub(crate) matcher: UriTemplate,
    read: Arc<ReadFn>,
    resolvers: Vec<ResolverRef>,
    /// `template` as `resources/templates/list` lists it, per version, encoded on its first
    /// listing.
    listed: Encoded,
}

impl Named for TemplateEntry {
    fn key(&self) -> &str {
        &self.template.uri_template
    }
}

fn reader<M, H: ResourceHandler<M>>(handler: H, mime: Option<String>) -> Arc<ReadFn> {
    Arc::new(move |call, uri| handler.call(call, uri, mime.clone()))
}

pub(crate) fn resource_entry<M, H: ResourceHandler<M>>(
    spec: ResourceSpec,
    handler: H,
) -> ResourceEntry {
    let mut resource = Resource::new(spec.uri, spec.name);
    resource.title = spec.title;
    resource.description = spec.description;
    resource.mime_type.clone_from(&spec.mime_type);
    resource.annotations = spec.annotations;
    resource.icons = spec.icons;
    resource.size = spec.size;
    ResourceEntry {
        listed: Encoded::new(methods::RESOURCES_LIST, "resources"),
        resource,
        resolvers: handler.resolvers(),
        read: reader(handler, spec.mime_type),
    }
}

pub(crate) fn template_entry<M, H: ResourceHandler<M>>(
    spec: ResourceSpec,
    handler: H,
) -> Result<TemplateEntry, BuildError> {
    let matcher = UriTemplate::parse(&spec.uri).map_err(|e| BuildError::Invalid {
        name: spec.uri.clone(),
        reason: format!("invalid URI template: {e}"),
    })?;
    let mut template = ResourceTemplate::new(spec.uri, spec.name);
    template.title = spec.title;
    template.description = spec.description;
    template.mime_type.clone_from(&spec.mime_type);
    template.annotations = spec.annotations;
    template.icons = spec.icons;
    Ok(TemplateEntry {
        listed: Encoded::new(methods::RESOURCES_TEMPLATES_LIST, "resourceTemplates"),
        template,
        matcher,
        resolvers: handler.resolvers(),
        read: reader(handler, spec.mime_type),
    })
}

/// One page of `resources/list` as `version` receives it, from the resources' encoded
/// entries.
pub(crate) fn list(
    registry: &Registry<ResourceEntry>,
    version: ProtocolVersion,
    cursor: Option<&Cursor>,
    page_size: usize,
) -> Result<Page, HandlerError> {
    Ok(listed::page(
        registry,
        "resources",
        version,
        cursor,
        page_size,
    )?)
}

/// One page of `resources/templates/list` as `version` receives it, from the templates'
/// encoded entries.
pub(crate) fn list_templates(
    registry: &Registry<TemplateEntry>,
    version: ProtocolVersion,
    cursor: Option<&Cursor>,
    page_size: usize,
) -> Result<Page, HandlerError> {
    let field = "resourceTemplates";
    Ok(listed::page(registry, field, version, cursor, page_size)?)
}

/// "Resource not found" for `uri` (-32002, with the URI as `data.uri`): what a resource
/// handler returns, as `Err(resource_not_found(uri))`, for a URI it does not have. The
/// server answers it as the connection's revision says: -32002 in the handshake era, -32602
/// at 2026-07-28 (SEP-2164).
///
/// ```
/// use ferromcp_server::mcp_server::resource_not_found;
/// use ferromcp_types::jsonrpc::ErrorCode;
///
/// let e = resource_not_found("file:///missing");
/// assert_eq!(e.code, ErrorCode::RESOURCE_NOT_FOUND);
/// assert_eq!(e.data.unwrap()["uri"], "file:///missing");
/// ```
pub fn resource_not_found(uri: &str) -> ErrorObject {
    ErrorObject::new(ErrorCode::RESOURCE_NOT_FOUND, "Resource not found")
        .with_data(serde_json::json!({ "uri": ferromcp_types::jsonrpc::echo(uri) }))
}

/// Resource not found: -32002 in the handshake era, -32602 at 2026-07-28 (SEP-2164).
pub(crate) fn not_found(ctx: &RequestContext, uri: &str) -> ErrorObject {
    era_not_found(ctx.protocol_version().is_modern(), resource_not_found(uri))
}

/// A -32002 as the connection's revision spells it: -32602 at 2026-07-28 (SEP-2164).
fn era_not_found(modern: bool, e: ErrorObject) -> ErrorObject {
    if e.code == ErrorCode::RESOURCE_NOT_FOUND && modern {
        ErrorObject {
            code: ErrorCode::INVALID_PARAMS,
            ..e
        }
    } else {
        e
    }
}

/// `resources/read`: a static resource by exact URI first, then the templates in
/// registration order. The handler's resolvers run first (see `tools::call`).
pub(crate) async fn read(
    shared: &Shared,
    ctx: RequestContext,
    params: ReadResourceRequestParams,
) -> Result<MaybeInputRequired<ReadResourceResult>, HandlerError> {
    let uri = params.uri;
    let state = shared.state.clone();
    let answers = (params.input_responses, params.request_state);
    // Skill files (SEP-2640), including the SKILL.md listed below as a static resource.
    if let Some(result) = shared.skills.read(&uri) {
        return Ok(MaybeInputRequired::Complete(result));
    }
    if let Some(entry) = shared.resources.get(&uri) {
        let call = HandlerCall {
            ctx,
            name: uri.clone(),
            arguments: Arc::default(),
            state,
            resolved: Default::default(),
        };
        return serve(shared, call, &entry.resolvers, &entry.read, answers).await;
    }
    for entry in shared.templates.all() {
        if let Some(captures) = entry.matcher.matches(&uri) {
            let arguments = captures
                .iter()
                .map(|(k, v)| (k.to_owned(), Value::String(v.to_owned())))
                .collect();
            let call = HandlerCall {
                ctx,
                name: uri.clone(),
                arguments: Arc::new(super::arguments::Arguments::from_value(Value::Object(
                    arguments,
                ))),
                state,
                resolved: Default::default(),
            };
            return serve(shared, call, &entry.resolvers, &entry.read, answers).await;
        }
    }
    Err(not_found(&ctx, &uri).into())
}

/// `resources/subscribe` (handshake era): a URI that names no resource, template match or skill
/// file is -32002; otherwise the subscription is recorded within the server's
/// [`SubscriptionLimits`](crate::SubscriptionLimits).
pub(crate) fn subscribe(
    shared: &Shared,
    ctx: &RequestContext,
    uri: &str,
) -> Result<(), ErrorObject> {
    let limits = ctx.server().subscription_limits();
    // Checked before any matching: a URI past the bound is refused whatever it names.
    limits.check_uri(uri)?;
    let known = shared.resources.get(uri).is_some()
        || shared.skills.contains(uri)
        || shared
            .templates
            .all()
            .iter()
            .any(|t| t.matcher.matches(uri).is_some());
    if !known {
        return Err(not_found(ctx, uri));
    }
    ctx.connection().subscribe_resource(uri, limits)
}

/// Runs a read's resolvers, then its handler.
async fn serve(
    shared: &Shared,
    call: HandlerCall,
    resolvers: &[ResolverRef],
    read: &Arc<ReadFn>,
    (input_responses, request_state): (Option<InputResponses>, Option<String>),
) -> Result<MaybeInputRequired<ReadResourceResult>, HandlerError> {
    let round = Round {
        method: methods::RESOURCES_READ,
        bind_arguments: false,
        input_responses,
        request_state,
    };
    let read = read.clone();
    let run = move |c: HandlerCall| {
        let uri = c.name.clone();
        read(c, uri)
    };
    let modern = call.ctx.protocol_version().is_modern();
    resolve::serve(&shared.rounds, call, resolvers, round, run)
        .await
        .map_err(|e| era_not_found(modern, e).into())
}

/// Resource templates and their completions at run time (the builder's
/// [`resource_template`](super::McpServerBuilder::resource_template) and
/// [`template_completion`](super::McpServerBuilder::template_completion), after the build).
impl McpServer {
    /// Adds (or replaces) a resource template at run time (see
    /// [`super::McpServerBuilder::resource_template`]) and tells connected clients the resource
    /// list changed. Fails, adding nothing, on an invalid URI template.
    pub fn add_resource_template<M, H: ResourceHandler<M>>(
        &self,
        spec: ResourceSpec,
        handler: H,
    ) -> Result<(), BuildError> {
        self.shared.templates.insert(template_entry(spec, handler)?);
        self.server
            .notify_list_changed(methods::NOTIFICATION_RESOURCES_LIST_CHANGED);
        Ok(())
    }

    /// Adds (or replaces) completions for one variable of a resource template at run time
    /// (see [`super::McpServerBuilder::template_completion`]); served when the server was built
    /// with completions (any registered, or [`super::McpServerBuilder::enable_completions`]).
    pub fn add_template_completion<F, Fut>(&self, uri_template: &str, variable: &str, complete: F)
    where
        F: Fn(CompletionRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Vec<String>> + Send + 'static,
    {
        self.shared.completions.insert(
            Target::Template(uri_template.into()),
            variable.into(),
            complete,
        );
    }

    /// Removes a resource template, and its completions, at run time; tells connected
    /// clients the resource list changed if it existed.
    pub fn remove_resource_template(&self, uri_template: &str) -> bool {
        self.shared
            .completions
            .remove_target(&Target::Template(uri_template.into()));
        let removed = self.shared.templates.remove(uri_template);
        if removed {
            self.server
                .notify_list_changed(methods::NOTIFICATION_RESOURCES_LIST_CHANGED);
        }
        removed
    }

    /// The URI templates of the registered resource templates, in registration order.
    pub fn resource_template_uris(&self) -> Vec<String> {
        self.shared.templates.names()
    }
}
