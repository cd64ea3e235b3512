//! One mounted backend: its client, what it offers under front names, and keeping that in
//! step with the backend's list-changed notifications.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};

use ferromcp_client::{Client, ListenEvent, ServerNotification, Subscription};
use ferromcp_dispatch::BoxFuture;
use ferromcp_server::mcp_server::{PromptSpec, RawArgs, ResourceSpec, ToolSpec};
use ferromcp_server::{McpServer, McpServerBuilder, RequestContext};
use ferromcp_types::Era;
use ferromcp_types::jsonrpc::ErrorObject;
use ferromcp_types::mcp::methods::{self, CallTool, GetPrompt, ReadResource};
use ferromcp_types::mcp::{
    CallToolRequestParams, CallToolResult, CompletionReference, GetPromptRequestParams,
    GetPromptResult, JsonObject, LoggingLevel, Prompt, PromptReference, ReadResourceRequestParams,
    ReadResourceResult, Resource, ResourceContents, ResourceTemplate, SubscriptionFilter,
    TaskSupport, Tool,
};
use serde_json::Value;
use tokio::sync::Semaphore;

use crate::backend::{Backend, ToolFilter};
use crate::bridge::{self, Inflight};
use crate::error::ComposeError;
use crate::forward::Route;
use crate::naming::{backend_uri, front_name, front_uri};

/// What a backend offered when it was listed.
#[derive(Default)]
pub(crate) struct Catalog {
    pub(crate) tools: Vec<Tool>,
    pub(crate) prompts: Vec<Prompt>,
    pub(crate) resources: Vec<Resource>,
    pub(crate) templates: Vec<ResourceTemplate>,
}

/// The kinds of front names, each a namespace of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Kind {
    Tool,
    Prompt,
    Resource,
    Template,
}

impl Kind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Tool => "tool",
            Self::Prompt => "prompt",
            Self::Resource => "resource",
            Self::Template => "resource template",
        }
    }
}

/// Which mount owns each front name.
#[derive(Default)]
pub(crate) struct Owners(Mutex<HashMap<(Kind, String), Arc<str>>>);

impl Owners {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(Kind, String), Arc<str>>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Claims `name` for `mount`; the current owner when another mount has it.
    pub(crate) fn claim(&self, kind: Kind, name: &str, mount: &Arc<str>) -> Result<(), Arc<str>> {
        let mut map = self.lock();
        match map.get(&(kind, name.to_owned())) {
            Some(owner) if owner != mount => Err(owner.clone()),
            _ => {
                map.insert((kind, name.to_owned()), mount.clone());
                Ok(())
            }
        }
    }

    pub(crate) fn release(&self, kind: Kind, name: &str) {
        self.lock().remove(&(kind, name.to_owned()));
    }
}

/// A mounted tool as the raw path (`crate::raw`) needs it: the backend's name and the front's task support.
#[derive(Debug, Clone)]
pub(crate) struct RawTool {
    pub(crate) backend_name: Arc<str>,
    pub(crate) support: TaskSupport,
}

/// Where a mount sends a backend log record that names no request: the front's sessions,
/// each at its own level (the composer's logging layer, `crate::logging`, set with the front).
pub(crate) trait UnrelatedLogs: Send + Sync {
    /// Sends the record to every live front session whose level lets it through.
    fn send_unrelated<'a>(
        &'a self,
        level: LoggingLevel,
        logger: &'a str,
        data: &'a Value,
    ) -> std::pin::Pin<Box<dyn Future<Output = ()> + Send + 'a>>;
}

/// A mounted backend.
pub(crate) struct Mount {
    pub(crate) route: Route,
    pub(crate) front: OnceLock<McpServer>,
    pub(crate) owners: Arc<Owners>,
    /// Front names this mount registered, by kind.
    pub(crate) mine: Mutex<BTreeMap<Kind, BTreeSet<String>>>,
    /// The backend URIs subscribed to on behalf of the front's clients.
    subscribed: tokio::sync::Mutex<BTreeSet<String>>,
    max_subscriptions: usize,
    pub(crate) tool_filter: Option<Arc<ToolFilter>>,
    /// The front's log levels and sessions, which unrelated log records go to (set with the
    /// front).
    pub(crate) log_levels: OnceLock<Weak<dyn UnrelatedLogs>>,
    /// The tools registered on the front, by front name, as the raw path needs them (those
    /// still registered are in `mine`).
    pub(crate) raw_tools: Mutex<HashMap<String, RawTool>>,
    /// Set once unmounted: list changes no longer touch the front.
    gone: std::sync::atomic::AtomicBool,
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Connects to `backend` and lists what it offers.
pub(crate) async fn connect(
    name: &str,
    backend: &Backend,
    total: Arc<Semaphore>,
    max_rounds: u32,
    owners: Arc<Owners>,
) -> Result<(Arc<Mount>, Catalog), ComposeError> {
    let mount: Arc<str> = name.into();
    let inflight = Arc::new(Inflight::default());
    let cell: Arc<OnceLock<Weak<Mount>>> = Arc::new(OnceLock::new());
    let notify_cell = cell.clone();
    let builder = Client::builder()
        .lifecycle(backend.lifecycle)
        .request_timeout(Some(backend.timeout))
        // Task-capable backend tools are called as tasks (crate::task).
        .tasks(ferromcp_client::TaskConfig::new())
        .on_notification(move |n: ServerNotification| {
            let mount = notify_cell.get().and_then(Weak::upgrade);
            async move {
                if let Some(mount) = mount {
                    mount.on_notification(n).await;
                }
            }
        });
    let builder = bridge::install(builder, &mount, &inflight);
    let connect = async {
        let connected = (backend.open)().await?;
        let client = builder.connect(connected).await?;
        let catalog = list(&client).await;
        Ok::<_, ferromcp_client::ClientError>((client, catalog))
    };
    let (client, mut catalog) = match tokio::time::timeout(backend.connect_timeout, connect).await {
        Ok(Ok((client, Ok(catalog)))) => (client, catalog),
        Ok(Ok((client, Err(source)))) => {
            client.shutdown().await;
            return Err(ComposeError::Connect {
                mount: name.to_owned(),
                source,
            });
        }
        Ok(Err(source)) => {
            return Err(ComposeError::Connect {
                mount: name.to_owned(),
                source,
            });
        }
        Err(_) => return Err(ComposeError::ConnectTimeout(name.to_owned())),
    };
    if let Some(keep) = &backend.tool_filter {
        catalog.tools.retain(|t| keep(&t.name));
    }
    let route = Route {
        mount,
        client,
        inflight,
        permits: Arc::new(Semaphore::new(backend.max_in_flight)),
        total,
        timeout: backend.timeout,
        max_rounds,
        tasks: Arc::new(Semaphore::new(backend.max_tasks)),
        max_queued_reports: backend.max_queued_reports.max(1),
        dropped_reports: Arc::default(),
    };
    let mount = Arc::new(Mount {
        route,
        front: OnceLock::new(),
        owners,
        mine: Mutex::new(BTreeMap::new()),
        subscribed: tokio::sync::Mutex::new(BTreeSet::new()),
        max_subscriptions: backend.max_subscriptions,
        tool_filter: backend.tool_filter.clone(),
        log_levels: OnceLock::new(),
        raw_tools: Mutex::new(HashMap::new()),
        gone: std::sync::atomic::AtomicBool::new(false),
    });
    let _ = cell.set(Arc::downgrade(&mount));
    if mount.client().session().era == Era::Modern {
        // At 2026-07-28 list changes come only on a `subscriptions/listen` stream.
        listen(&mount).await;
    }
    Ok((mount, catalog))
}

/// Subscribes to a 2026-07-28 backend's list changes and resource updates, handled as the
/// handshake era's notifications are, for as long as the mount lives.
async fn listen(mount: &Arc<Mount>) {
    let mut filter = SubscriptionFilter::new();
    filter.tools_list_changed = Some(true);
    filter.prompts_list_changed = Some(true);
    filter.resources_list_changed = Some(true);
    match mount.client().listen(filter).await {
        Ok(subscription) => follow(mount, subscription),
        Err(e) => {
            tracing::warn!(mount = %mount.name(), error = %e, "the backend's changes cannot be followed");
        }
    }
}

/// Handles a subscription's events as the handshake era's notifications, for as long as the
/// mount lives.
fn follow(mount: &Arc<Mount>, mut subscription: Subscription) {
    let weak = Arc::downgrade(mount);
    tokio::spawn(async move {
        while let Some(event) = subscription.next().await {
            let n = match event {
                ListenEvent::ToolListChanged | ListenEvent::Reconnected { .. } => {
                    ServerNotification::ToolListChanged
                }
                ListenEvent::PromptListChanged => ServerNotification::PromptListChanged,
                ListenEvent::ResourceListChanged => ServerNotification::ResourceListChanged,
                ListenEvent::ResourceUpdated(uri) => ServerNotification::ResourceUpdated(uri),
                ListenEvent::Ended(_) => break,
                _ => continue,
            };
            let Some(mount) = weak.upgrade() else { break };
            mount.on_notification(n).await;
        }
    });
}

/// Lists everything the backend declares it serves.
async fn list(client: &Client) -> Result<Catalog, ferromcp_client::ClientError> {
    let caps = client.session().capabilities.clone();
    let mut catalog = Catalog::default();
    if caps.tools.is_some() {
        catalog.tools = client.list_all_tools().await?;
    }
    if caps.prompts.is_some() {
        catalog.prompts = client.list_all_prompts().await?;
    }
    if caps.resources.is_some() {
        catalog.resources = client.list_all_resources().await?;
        catalog.templates = client.list_all_resource_templates().await?;
    }
    Ok(catalog)
}

impl Mount {
    pub(crate) fn name(&self) -> &Arc<str> {
        &self.route.mount
    }

    pub(crate) fn client(&self) -> &Client {
        &self.route.client
    }

    /// Claims every front name of `catalog`; the first conflict is the build's error.
    pub(crate) fn claim_all(&self, catalog: &Catalog) -> Result<(), ComposeError> {
        let m = self.name();
        let names = catalog
            .tools
            .iter()
            .map(|t| (Kind::Tool, front_name(m, &t.name)))
            .chain(
                catalog
                    .prompts
                    .iter()
                    .map(|p| (Kind::Prompt, front_name(m, &p.name))),
            )
            .chain(
                catalog
                    .resources
                    .iter()
                    .map(|r| (Kind::Resource, front_uri(m, &r.uri))),
            )
            .chain(
                catalog
                    .templates
                    .iter()
                    .map(|t| (Kind::Template, front_uri(m, &t.uri_template))),
            );
        for (kind, name) in names {
            if let Err(owner) = self.owners.claim(kind, &name, m) {
                return Err(conflict(kind, name, &owner, m));
            }
            // A second claim by this mount: its backend listed the name twice.
            if !lock(&self.mine)
                .entry(kind)
                .or_default()
                .insert(name.clone())
            {
                return Err(conflict(kind, name, m, m));
            }
        }
        Ok(())
    }

    /// Registers the catalog on the front server's builder.
    pub(crate) fn register(
        self: &Arc<Self>,
        mut front: McpServerBuilder,
        catalog: &Catalog,
    ) -> McpServerBuilder {
        for tool in &catalog.tools {
            let (spec, handler) = self.tool(tool);
            front = front.tool(spec, handler);
        }
        for prompt in &catalog.prompts {
            let (spec, handler) = self.prompt(prompt);
            let name = spec_name(prompt, self.name());
            front = front.prompt(spec, handler);
            for arg in prompt.arguments.iter().flatten() {
                let reference = CompletionReference::Prompt(PromptReference::new(&prompt.name));
                front = front.prompt_completion(&name, &arg.name, self.completer(reference));
            }
        }
        for resource in &catalog.resources {
            let (spec, handler) = self.resource(resource);
            front = front.resource(spec, handler);
        }
        for template in &catalog.templates {
            let (spec, handler) = self.template(template);
            front = front.resource_template(spec, handler);
            let front_template = front_uri(self.name(), &template.uri_template);
            for (var, complete) in self.template_completers(template) {
                front = front.template_completion(&front_template, &var, complete);
            }
        }
        front
    }

    /// Subscribes to the backend resource `uri` for the front's clients (once per URI): its
    /// updates then come, and are forwarded under the front URI. At most
    /// [`Backend::max_subscriptions`] URIs; more are refused (-32603).
    pub(crate) async fn subscribe(self: &Arc<Self>, uri: &str) -> Result<(), ErrorObject> {
        let mut subscribed = self.subscribed.lock().await;
        if subscribed.contains(uri) {
            return Ok(());
        }
        if subscribed.len() >= self.max_subscriptions {
            return Err(ErrorObject::internal_error(format!(
                "composed server: backend {:?} already has its maximum of resource \
                 subscriptions (Backend::max_subscriptions)",
                self.name()
            )));
        }
        let client = self.client();
        if client.session().era == Era::Modern {
            let mut filter = SubscriptionFilter::new();
            filter.resource_subscriptions = Some(vec![uri.to_owned()]);
            let subscription = client
                .listen(filter)
                .await
                .map_err(|e| self.route.client_error(methods::SUBSCRIPTIONS_LISTEN, e))?;
            follow(self, subscription);
        } else {
            client
                .subscribe(uri)
                .await
                .map_err(|e| self.route.client_error(methods::RESOURCES_SUBSCRIBE, e))?;
        }
        subscribed.insert(uri.to_owned());
        Ok(())
    }

    pub(crate) fn is_gone(&self) -> bool {
        self.gone.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Registers the catalog on a running front (a mount added after the build), resource
    /// templates and their completions included.
    pub(crate) fn register_live(self: &Arc<Self>, front: &McpServer, catalog: &Catalog) {
        for tool in &catalog.tools {
            let (spec, handler) = self.tool(tool);
            if let Err(e) = front.add_tool(spec, handler) {
                tracing::warn!(mount = %self.name(), error = %e, "backend tool left out");
            }
        }
        for prompt in &catalog.prompts {
            self.add_prompt_live(front, prompt);
        }
        for resource in &catalog.resources {
            let (spec, handler) = self.resource(resource);
            front.add_resource(spec, handler);
        }
        for template in &catalog.templates {
            self.add_template_live(front, template);
        }
    }

    /// Adds a backend prompt, and a completion function for each of its arguments, to a
    /// running front.
    pub(crate) fn add_prompt_live(self: &Arc<Self>, front: &McpServer, prompt: &Prompt) {
        let (spec, handler) = self.prompt(prompt);
        let name = spec_name(prompt, self.name());
        // The completions first: the prompt is complete once it is listed.
        for arg in prompt.arguments.iter().flatten() {
            let reference = CompletionReference::Prompt(PromptReference::new(&prompt.name));
            front.add_prompt_completion(&name, &arg.name, self.completer(reference));
        }
        front.add_prompt(spec, handler);
    }

    /// Takes everything this mount registered off the front (its clients are told the lists
    /// changed) and releases its names; list changes no longer reach the front.
    pub(crate) fn unregister(&self, front: &McpServer) {
        self.gone.store(true, std::sync::atomic::Ordering::Release);
        let mine = std::mem::take(&mut *lock(&self.mine));
        for (kind, names) in mine {
            for name in names {
                self.owners.release(kind, &name);
                match kind {
                    Kind::Tool => {
                        front.remove_tool(&name);
                    }
                    Kind::Prompt => {
                        front.remove_prompt(&name);
                    }
                    Kind::Resource => {
                        front.remove_resource(&name);
                    }
                    Kind::Template => {
                        front.remove_resource_template(&name);
                    }
                }
            }
        }
    }

    /// Sets the front server (once built), which list changes and updates go to, and its log
    /// levels and sessions.
    pub(crate) fn attach(&self, front: &McpServer, levels: Weak<dyn UnrelatedLogs>) {
        let _ = self.front.set(front.clone());
        let _ = self.log_levels.set(levels);
    }

    pub(crate) fn tool(
        self: &Arc<Self>,
        tool: &Tool,
    ) -> (
        ToolSpec,
        impl Fn(RequestContext, RawArgs) -> BoxFuture<'static, Result<CallToolResult, ErrorObject>>
        + Clone
        + Send
        + Sync
        + 'static,
    ) {
        let mut spec = ToolSpec::new(front_name(self.name(), &tool.name))
            .input_schema(tool.input_schema.clone());
        if let Some(d) = &tool.description {
            spec = spec.description(d);
        }
        if let Some(t) = &tool.title {
            spec = spec.title(t);
        }
        if let Some(a) = &tool.annotations {
            spec = spec.annotations(a.clone());
        }
        if let Some(i) = &tool.icons {
            spec = spec.icons(i.clone());
        }
        if let Some(o) = &tool.output_schema {
            spec = spec.output_schema(o.clone());
        }
        let support = crate::task::front_support(tool, self.client());
        if support != TaskSupport::Forbidden {
            spec = spec.task_support(support);
        }
        let raw = RawTool {
            backend_name: tool.name.as_str().into(),
            support,
        };
        lock(&self.raw_tools).insert(front_name(self.name(), &tool.name), raw);
        let this = self.clone();
        let name = tool.name.clone();
        let handler = move |ctx: RequestContext, RawArgs(args): RawArgs| {
            let this = this.clone();
            let name = name.clone();
            let fut: BoxFuture<'static, Result<CallToolResult, ErrorObject>> =
                Box::pin(async move {
                    if crate::task::as_task(support, &ctx) {
                        return this.route.forward_task(&ctx, &name, args).await;
                    }
                    let params = CallToolRequestParams::new(&name).with_arguments(args);
                    this.route.forward::<CallTool>(&ctx, params).await
                });
            fut
        };
        (spec, handler)
    }

    pub(crate) fn prompt(
        self: &Arc<Self>,
        prompt: &Prompt,
    ) -> (
        PromptSpec,
        impl Fn(RequestContext, RawArgs) -> BoxFuture<'static, Result<GetPromptResult, ErrorObject>>
        + Clone
        + Send
        + Sync
        + 'static,
    ) {
        let mut spec = PromptSpec::new(spec_name(prompt, self.name()));
        if let Some(d) = &prompt.description {
            spec = spec.description(d);
        }
        if let Some(t) = &prompt.title {
            spec = spec.title(t);
        }
        if let Some(i) = &prompt.icons {
            spec = spec.icons(i.clone());
        }
        spec = spec.arguments(prompt.arguments.clone().unwrap_or_default());
        let this = self.clone();
        let name = prompt.name.clone();
        let handler = move |ctx: RequestContext, RawArgs(args): RawArgs| {
            let this = this.clone();
            let mut params = GetPromptRequestParams::new(&name);
            params.arguments = Some(string_args(args));
            let fut: BoxFuture<'static, Result<GetPromptResult, ErrorObject>> =
                Box::pin(async move { this.route.forward::<GetPrompt>(&ctx, params).await });
            fut
        };
        (spec, handler)
    }

    pub(crate) fn resource(
        self: &Arc<Self>,
        resource: &Resource,
    ) -> (
        ResourceSpec,
        impl Fn(RequestContext) -> BoxFuture<'static, Result<ReadResourceResult, ErrorObject>>
        + Clone
        + Send
        + Sync
        + 'static,
    ) {
        let uri = front_uri(self.name(), &resource.uri);
        let mut spec = ResourceSpec::new(&uri, &resource.name);
        if let Some(d) = &resource.description {
            spec = spec.description(d);
        }
        if let Some(t) = &resource.title {
            spec = spec.title(t);
        }
        if let Some(m) = &resource.mime_type {
            spec = spec.mime_type(m);
        }
        if let Some(s) = resource.size {
            spec = spec.size(s);
        }
        let this = self.clone();
        let handler = move |ctx: RequestContext| {
            let (this, uri) = (this.clone(), uri.clone());
            let fut: BoxFuture<'static, Result<ReadResourceResult, ErrorObject>> =
                Box::pin(async move { this.read(ctx, uri).await });
            fut
        };
        (spec, handler)
    }

    /// Reads the front URI `uri` from the backend; the contents' URIs are mapped to the front.
    pub(crate) async fn read(
        &self,
        ctx: RequestContext,
        uri: String,
    ) -> Result<ReadResourceResult, ErrorObject> {
        let Some(original) = backend_uri(self.name(), &uri) else {
            return Err(ErrorObject::invalid_params(format!(
                "unknown resource {uri:?}"
            )));
        };
        let params = ReadResourceRequestParams::new(original);
        let mut result = self.route.forward::<ReadResource>(&ctx, params).await?;
        for contents in &mut result.contents {
            let u = match contents {
                ResourceContents::Text(t) => &mut t.uri,
                ResourceContents::Blob(b) => &mut b.uri,
                _ => continue,
            };
            *u = front_uri(self.name(), u);
        }
        Ok(result)
    }
}

fn conflict(kind: Kind, name: String, first: &str, second: &str) -> ComposeError {
    ComposeError::Conflict {
        kind: kind.as_str(),
        name,
        first: first.to_owned(),
        second: second.to_owned(),
    }
}

fn spec_name(prompt: &Prompt, mount: &str) -> String {
    front_name(mount, &prompt.name)
}

/// A prompt's arguments as strings (as `prompts/get` carries them).
fn string_args(args: JsonObject) -> BTreeMap<String, String> {
    args.into_iter()
        .map(|(k, v)| {
            let v = match v {
                Value::String(s) => s,
                other => other.to_string(),
            };
            (k, v)
        })
        .collect()
}
