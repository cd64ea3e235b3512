//! The high-level server: tools as plain async functions whose arguments are extractors.
//!
//! ```
//! use ferromcp_server::mcp_server::{Args, McpServer};
//!
//! /// Numbers to add.
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct AddArgs {
//!     /// The first number.
//!     a: f64,
//!     /// The second number.
//!     b: f64,
//! }
//!
//! async fn add(Args(args): Args<AddArgs>) -> String {
//!     (args.a + args.b).to_string()
//! }
//!
//! let server = McpServer::builder("calculator", "1.0.0").tool("add", add).build().unwrap();
//! assert_eq!(server.tool_names(), vec!["add".to_string()]);
//! ```

mod apps;
mod arguments;
mod completions;
mod elicit;
mod extract;
mod handler;
mod listed;
mod listen;
mod local;
mod output;
mod own_resources;
mod prompt_resource_output;
mod prompts;
mod registry;
mod resolve;
mod resources;
mod route;
mod schema;
mod skills;
mod tools;

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use ferromcp_dispatch::BoxError;
use ferromcp_types::mcp::methods::{
    self, Complete, GetPrompt, ListPrompts, ListResourceTemplates, ListResources, ListTools,
    ReadResource, Request, Subscribe, SubscriptionsListen, Unsubscribe,
};
use ferromcp_types::mcp::{EmptyResult, Implementation, JsonObject, PaginatedRequestParams};

/// The authenticated caller, as a tool extractor.
pub use crate::principal::Principal;
pub use apps::{
    APP_MIME_TYPE, APP_URI_SCHEME, App, AppCsp, AppPermission, AppVisibility, EXTENSION_UI,
    client_app_mime_types, client_supports_apps,
};
pub use completions::{CompletionRequest, MAX_COMPLETION_VALUES};
pub(crate) use elicit::check_capability as elicit_check_capability;
pub use elicit::{ElicitForm, Elicitation, FormSchemaError, check_form, decode_answer};
/// The schema → form builder and the answer check, for the `elicit_schema` fuzz body
/// (`crate::fuzzing`).
#[cfg(any(test, fuzzing))]
pub(crate) use elicit::{form_from_schema, validate::check_content as elicit_check_content};
pub use extract::{
    Args, FromHandlerCall, HandlerCall, HttpParts, ProgressReporter, RawArgs, State,
};
pub use handler::{PromptHandler, ResourceHandler, ToolHandler};
pub use local::LocalExecutor;
pub use output::{IntoToolError, IntoToolResult, Json, ToolError};
pub use own_resources::OwnResources;
pub use prompt_resource_output::{Blob, IntoPromptResult, IntoResourceResult};
pub use prompts::PromptSpec;
pub use resolve::{Ask, DEFAULT_MAX_INPUT_ROUNDS, ResolveError, Resolved, Resolver, ResolverRef};
pub use resources::{ResourceSpec, resource_not_found};
pub use route::ToolCallRoute;
pub use schema::{object_schema, schema_object_for};
pub use skills::{
    DEFAULT_MAX_SKILL_BYTES, DEFAULT_MAX_SKILL_FILES, DIRECTORY_MIME_TYPE, EXTENSION_SKILLS,
    METHOD_RESOURCES_DIRECTORY_READ, METHOD_SKILLS_GET, METHOD_SKILLS_LIST, Skill, SkillLimits,
};
pub use tools::{ToolDef, ToolSpec};

use crate::middleware::Middleware;
use crate::request_state::{KeyRing, SealerConfig, StateKey, StateSealer};
use crate::server::{BuildError, CacheHint, Server, ServerBuilder};
use completions::{Completions, Target};
use extract::StateMap;
use prompts::PromptEntry;
use registry::Registry;
use resolve::Rounds;
use resources::{ResourceEntry, TemplateEntry};
use tools::ToolEntry;

/// The default number of items in one page of a list result.
pub const DEFAULT_PAGE_SIZE: usize = 100;

/// A high-level MCP server: tools (and, as they land, resources and prompts) registered as
/// plain async functions. Cheap to clone; clones share the registries, so tools added or
/// removed on one are seen by all connections.
#[derive(Clone)]
pub struct McpServer {
    shared: Arc<Shared>,
    server: Server,
}

pub(crate) struct Shared {
    pub(crate) tools: Registry<ToolEntry>,
    pub(crate) prompts: Registry<PromptEntry>,
    pub(crate) resources: Registry<ResourceEntry>,
    pub(crate) templates: Registry<TemplateEntry>,
    pub(crate) completions: Completions,
    pub(crate) state: Arc<StateMap>,
    pub(crate) page_size: usize,
    /// Multi-round requests: the `requestState` sealer and the round bound.
    pub(crate) rounds: Rounds,
    /// The task engine, when the server serves tasks.
    pub(crate) tasks: Option<Arc<crate::tasks::Tasks>>,
    /// The skills extension (SEP-2640), fixed at build time.
    pub(crate) skills: skills::Skills,
}

impl McpServer {
    /// Starts building a server with the given name and version.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> McpServerBuilder {
        let name = name.into();
        McpServerBuilder {
            state_audience: name.clone(),
            state_keys: None,
            state_config: None,
            max_input_rounds: DEFAULT_MAX_INPUT_ROUNDS,
            low: Server::builder(name, version),
            tools: Vec::new(),
            prompts: Vec::new(),
            resources: Vec::new(),
            templates: Vec::new(),
            completions: Completions::default(),
            enable: Enabled::default(),
            state: StateMap::default(),
            page_size: DEFAULT_PAGE_SIZE,
            errors: Vec::new(),
            tasks: None,
            skills: Vec::new(),
            skill_limits: SkillLimits::default(),
            apps: Vec::new(),
            tool_route: None,
        }
    }

    /// The low-level server that serves this one on any transport.
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// The names of the registered tools, in registration order.
    pub fn tool_names(&self) -> Vec<String> {
        self.shared.tools.names()
    }

    /// Adds (or replaces) a tool at run time and tells connected clients the list changed.
    pub fn add_tool<M, H: ToolHandler<M>>(
        &self,
        spec: impl Into<ToolSpec>,
        handler: H,
    ) -> Result<(), BuildError> {
        let entry = tools::entry(spec.into(), handler)?;
        if let Some(uri) = apps::linked_uri(&entry.tool) {
            let resource = self.shared.resources.get(uri);
            let is_app = resource.is_some_and(|r| {
                r.resource.mime_type.as_deref() == Some(APP_MIME_TYPE)
                    && r.resource.uri.starts_with(APP_URI_SCHEME)
            });
            let apps: Vec<String> = is_app.then(|| uri.to_owned()).into_iter().collect();
            apps::check_links([&entry.tool], &apps)?;
        }
        self.shared.tools.insert(entry);
        self.server
            .notify_list_changed(methods::NOTIFICATION_TOOLS_LIST_CHANGED);
        Ok(())
    }

    /// Adds (or replaces) a prompt at run time and tells connected clients the list changed.
    pub fn add_prompt<M, H: PromptHandler<M>>(&self, spec: impl Into<PromptSpec>, handler: H) {
        self.shared
            .prompts
            .insert(prompts::entry(spec.into(), handler));
        self.server
            .notify_list_changed(methods::NOTIFICATION_PROMPTS_LIST_CHANGED);
    }

    /// Removes a prompt, and its completions, at run time; tells connected clients the list
    /// changed if it existed.
    pub fn remove_prompt(&self, name: &str) -> bool {
        self.shared
            .completions
            .remove_target(&completions::Target::Prompt(name.into()));
        let removed = self.shared.prompts.remove(name);
        if removed {
            self.server
                .notify_list_changed(methods::NOTIFICATION_PROMPTS_LIST_CHANGED);
        }
        removed
    }

    /// Adds (or replaces) a static resource at run time and tells connected clients the list
    /// changed.
    pub fn add_resource<M, H: ResourceHandler<M>>(&self, spec: ResourceSpec, handler: H) {
        self.shared
            .resources
            .insert(resources::resource_entry(spec, handler));
        self.server
            .notify_list_changed(methods::NOTIFICATION_RESOURCES_LIST_CHANGED);
    }

    /// Removes a static resource at run time; tells connected clients the list changed if it
    /// existed.
    pub fn remove_resource(&self, uri: &str) -> bool {
        let removed = self.shared.resources.remove(uri);
        if removed {
            self.server
                .notify_list_changed(methods::NOTIFICATION_RESOURCES_LIST_CHANGED);
        }
        removed
    }

    /// Tells clients subscribed to `uri` that the resource changed
    /// (`notifications/resources/updated`).
    pub fn notify_resource_updated(&self, uri: &str) {
        self.server.notify_resource_updated(uri);
    }

    /// The `SKILL.md` URIs of the registered skills (SEP-2640), in registration order.
    pub fn skill_uris(&self) -> Vec<String> {
        self.shared
            .skills
            .entries()
            .iter()
            .map(|s| s.uri.clone())
            .collect()
    }

    /// The names of the registered prompts, in registration order.
    pub fn prompt_names(&self) -> Vec<String> {
        self.shared.prompts.names()
    }

    /// The URIs of the registered static resources, in registration order.
    pub fn resource_uris(&self) -> Vec<String> {
        self.shared.resources.names()
    }

    /// Rotates the key that seals `requestState` (multi-round requests): new states are
    /// sealed with `key`; states sealed with the previous keys the ring retains still open.
    pub fn rotate_request_state_key(&self, key: StateKey) {
        self.shared.rounds.rotate(key);
    }

    /// Removes a tool at run time; tells connected clients the list changed if it existed.
    pub fn remove_tool(&self, name: &str) -> bool {
        let removed = self.shared.tools.remove(name);
        if removed {
            self.server
                .notify_list_changed(methods::NOTIFICATION_TOOLS_LIST_CHANGED);
        }
        removed
    }
}

impl fmt::Debug for McpServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServer")
            .field("info", self.server.info())
            .field("tools", &self.shared.tools.names())
            .finish_non_exhaustive()
    }
}

/// Features served even when nothing is registered at build time (for servers that add
/// items at run time).
#[derive(Debug, Clone, Copy, Default)]
struct Enabled {
    tools: bool,
    prompts: bool,
    resources: bool,
    completions: bool,
}

/// Builds an [`McpServer`]; see [`McpServer::builder`].
#[must_use]
pub struct McpServerBuilder {
    low: ServerBuilder,
    tools: Vec<ToolEntry>,
    prompts: Vec<PromptEntry>,
    resources: Vec<ResourceEntry>,
    templates: Vec<TemplateEntry>,
    completions: Completions,
    enable: Enabled,
    state: StateMap,
    page_size: usize,
    errors: Vec<BuildError>,
    state_audience: String,
    state_keys: Option<KeyRing>,
    state_config: Option<SealerConfig>,
    max_input_rounds: u32,
    tasks: Option<crate::tasks::TaskSettings>,
    skills: Vec<Skill>,
    skill_limits: SkillLimits,
    apps: Vec<App>,
    tool_route: Option<Arc<dyn ToolCallRoute>>,
}

impl McpServerBuilder {
    /// Registers a tool: a name (or a [`ToolSpec`] with description, title, annotations, a
    /// raw schema…) and an async function whose arguments are extractors.
    pub fn tool<M, H: ToolHandler<M>>(mut self, spec: impl Into<ToolSpec>, handler: H) -> Self {
        match tools::entry(spec.into(), handler) {
            Ok(entry) => self.tools.push(entry),
            Err(e) => self.errors.push(e),
        }
        self
    }

    /// Registers a tool defined ahead of time (for example by the `#[tool]` macro of
    /// `ferromcp-macros`).
    pub fn tool_def(mut self, def: ToolDef) -> Self {
        match def.0 {
            Ok(entry) => self.tools.push(entry),
            Err(e) => self.errors.push(e),
        }
        self
    }

    /// Registers a prompt: a name (or a [`PromptSpec`]) and an async function whose
    /// arguments are extractors (`Args<T>` reads the prompt's arguments).
    pub fn prompt<M, H: PromptHandler<M>>(
        mut self,
        spec: impl Into<PromptSpec>,
        handler: H,
    ) -> Self {
        self.prompts.push(prompts::entry(spec.into(), handler));
        self
    }

    /// Registers a static resource and the async function that reads it.
    pub fn resource<M, H: ResourceHandler<M>>(mut self, spec: ResourceSpec, handler: H) -> Self {
        self.resources
            .push(resources::resource_entry(spec, handler));
        self
    }

    /// Registers a resource template (RFC 6570, levels 1–3, e.g. `test://items/{id}`) and the
    /// async function that reads a matching URI (`Args<T>` reads the template's variables).
    pub fn resource_template<M, H: ResourceHandler<M>>(
        mut self,
        spec: ResourceSpec,
        handler: H,
    ) -> Self {
        match resources::template_entry(spec, handler) {
            Ok(entry) => self.templates.push(entry),
            Err(e) => self.errors.push(e),
        }
        self
    }

    /// Registers a skill (the skills extension, SEP-2640; see [`Skill`]). Its files are
    /// checked, and their digests computed, when the server is built.
    pub fn skill(mut self, skill: Skill) -> Self {
        self.skills.push(skill);
        self
    }

    /// Registers an MCP App (see [`App`]): a `ui://` resource with the app MIME type and
    /// its `_meta.ui`, which tools link to with [`ToolSpec::app`]. With at least one app the
    /// server declares the `io.modelcontextprotocol/ui` extension.
    pub fn app(mut self, app: App) -> Self {
        self.apps.push(app);
        self
    }

    /// Sets the per-skill limits (default [`SkillLimits::default`]: 512 files, 16 MiB).
    pub fn skill_limits(mut self, limits: SkillLimits) -> Self {
        self.skill_limits = limits;
        self
    }

    /// Registers completions for one argument of a prompt.
    pub fn prompt_completion<F, Fut>(self, prompt: &str, argument: &str, complete: F) -> Self
    where
        F: Fn(CompletionRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Vec<String>> + Send + 'static,
    {
        self.completions
            .insert(Target::Prompt(prompt.into()), argument.into(), complete);
        self
    }

    /// Registers completions for one variable of a resource template.
    pub fn template_completion<F, Fut>(
        self,
        uri_template: &str,
        variable: &str,
        complete: F,
    ) -> Self
    where
        F: Fn(CompletionRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Vec<String>> + Send + 'static,
    {
        self.completions.insert(
            Target::Template(uri_template.into()),
            variable.into(),
            complete,
        );
        self
    }

    /// Serves `completion/complete` (and announces the capability) even if no completion is
    /// registered yet, for completions added at run time
    /// ([`McpServer::add_template_completion`]).
    pub fn enable_completions(mut self) -> Self {
        self.enable.completions = true;
        self
    }

    /// Serves tools (and announces the capability) even if none is registered yet.
    pub fn enable_tools(mut self) -> Self {
        self.enable.tools = true;
        self
    }

    /// Serves prompts (and announces the capability) even if none is registered yet.
    pub fn enable_prompts(mut self) -> Self {
        self.enable.prompts = true;
        self
    }

    /// Serves resources (and announces the capability) even if none is registered yet.
    pub fn enable_resources(mut self) -> Self {
        self.enable.resources = true;
        self
    }

    /// Registers a tool whose future need not be `Send`: it runs on `executor`'s thread (see
    /// [`LocalExecutor`]). The handler takes the typed arguments (their schema is the tool's
    /// input schema) and the request context.
    pub fn tool_local<T, F, Fut, O>(
        self,
        spec: impl Into<ToolSpec>,
        executor: &LocalExecutor,
        handler: F,
    ) -> Self
    where
        T: serde::de::DeserializeOwned + schemars::JsonSchema + Send + 'static,
        F: Fn(T, crate::RequestContext) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = O> + 'static,
        O: IntoToolResult + 'static,
    {
        let executor = executor.clone();
        let send_handler = move |Args(args): Args<T>, ctx: crate::RequestContext| {
            let (executor, handler) = (executor.clone(), handler.clone());
            async move {
                let outcome = executor
                    .run(move || async move { handler(args, ctx).await.into_tool_result() })
                    .await;
                match outcome {
                    Ok(Ok(result)) => Ok(result),
                    Ok(Err(e)) | Err(e) => Err(ToolError::protocol(e)),
                }
            }
        };
        self.tool(spec, send_handler)
    }

    /// Serves tasks with these settings (see [`crate::tasks`]). Without it a server whose
    /// tools include a task-capable one ([`ToolSpec::task_support`]) serves tasks with the
    /// default [`TaskSettings`](crate::tasks::TaskSettings); call it to serve tasks for
    /// task-capable tools added at run time.
    pub fn tasks(mut self, settings: crate::tasks::TaskSettings) -> Self {
        self.tasks = Some(settings);
        self
    }

    /// Registers shared state that handlers take with the [`State`] extractor.
    pub fn state<T: Clone + Send + Sync + 'static>(mut self, value: T) -> Self {
        self.state.insert(value);
        self
    }

    /// Sets how many items one page of a list result holds (at least 1).
    pub fn page_size(mut self, n: usize) -> Self {
        self.page_size = n.max(1);
        self
    }

    /// Sets the full server info (name, version, title, description, website, icons).
    pub fn info(mut self, info: Implementation) -> Self {
        self.state_audience.clone_from(&info.name);
        self.low = self.low.info(info);
        self
    }

    /// Sets the keys that seal `requestState` in multi-round requests (2026-07-28). By
    /// default each server value makes an ephemeral random key, so a retry must reach the
    /// same process; give every node of a deployment the same ring (and rotate it with
    /// [`McpServer::rotate_request_state_key`]) to serve retries anywhere.
    pub fn request_state_keys(mut self, keys: KeyRing) -> Self {
        self.state_keys = Some(keys);
        self
    }

    /// Sets the lifetime, size bound and clock skew of sealed `requestState`s (the audience
    /// defaults to the server name).
    pub fn request_state_config(mut self, config: SealerConfig) -> Self {
        self.state_config = Some(config);
        self
    }

    /// Bounds the rounds of one multi-round request (default
    /// [`DEFAULT_MAX_INPUT_ROUNDS`]); a request that would need more fails with -32602.
    pub fn max_input_rounds(mut self, rounds: u32) -> Self {
        self.max_input_rounds = rounds.max(1);
        self
    }

    /// Sets the instructions sent with `initialize` and `server/discover`.
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.low = self.low.instructions(text);
        self
    }

    /// Adds a middleware layer (see [`crate::middleware`]).
    pub fn middleware(mut self, layer: impl Middleware) -> Self {
        self.low = self.low.middleware(layer);
        self
    }

    /// Sets what the OpenTelemetry instrumentation records (the `otel` feature; see
    /// [`ServerBuilder::otel`](crate::ServerBuilder::otel)).
    #[cfg(feature = "otel")]
    pub fn otel(mut self, options: crate::otel::OtelOptions) -> Self {
        self.low = self.low.otel(options);
        self
    }

    /// Bounds each connection's resource subscriptions (`resources/subscribe`: how many URIs,
    /// how long each; see [`SubscriptionLimits`](crate::SubscriptionLimits)).
    pub fn subscription_limits(mut self, limits: crate::SubscriptionLimits) -> Self {
        self.low = self.low.subscription_limits(limits);
        self
    }

    /// Sets the cache hint for a cacheable method's results.
    pub fn cache_hint(mut self, method: &str, hint: CacheHint) -> Self {
        self.low = self.low.cache_hint(method, hint);
        self
    }

    /// Advertises an extension (2026-07-28 `extensions`).
    pub fn extension(mut self, id: impl Into<String>, settings: JsonObject) -> Self {
        self.low = self.low.extension(id, settings);
        self
    }

    /// Sets a lifespan (see [`ServerBuilder::lifespan`]).
    pub fn lifespan<T, S, SFut, D, DFut>(mut self, setup: S, teardown: D) -> Self
    where
        T: Send + Sync + 'static,
        S: Fn() -> SFut + Send + Sync + 'static,
        SFut: Future<Output = Result<T, BoxError>> + Send + 'static,
        D: Fn(Arc<T>) -> DFut + Send + Sync + 'static,
        DFut: Future<Output = ()> + Send + 'static,
    {
        self.low = self.low.lifespan(setup, teardown);
        self
    }

    /// Builds the server.
    pub fn build(self) -> Result<McpServer, BuildError> {
        if let Some(e) = self.errors.into_iter().next() {
            return Err(e);
        }
        let keys = match self.state_keys {
            Some(keys) => keys,
            None => KeyRing::ephemeral().map_err(|e| BuildError::Invalid {
                name: "requestState".into(),
                reason: e.to_string(),
            })?,
        };
        let mut config = self.state_config.unwrap_or_default();
        if config.audience.is_none() {
            config = config.with_audience(self.state_audience);
        }
        let rounds = Rounds::new(
            StateSealer::with_config(keys, config),
            self.max_input_rounds,
        );
        let skills = skills::Skills::build(self.skills, self.skill_limits)?;
        let mut resources = self.resources;
        for skill in skills.entries() {
            let text = skill.skill_md();
            let spec = ResourceSpec::new(skill.uri.clone(), skill.name.clone())
                .description(skill.description.clone())
                .mime_type("text/markdown")
                .size(skill.skill_md_size());
            let read = move || {
                let text = text.clone();
                async move { text }
            };
            resources.push(resources::resource_entry(spec, read));
        }
        let app_uris: Vec<String> = self.apps.iter().map(|a| a.uri().to_owned()).collect();
        apps::check_links(self.tools.iter().map(|t| &t.tool), &app_uris)?;
        let has_apps = !self.apps.is_empty();
        for app in self.apps {
            resources.push(apps::entry(app)?);
        }
        let has_skills = !skills.is_empty();
        let has_completions = self.enable.completions || !self.completions.is_empty();
        let has_tools = self.enable.tools || !self.tools.is_empty();
        let has_prompts = self.enable.prompts || !self.prompts.is_empty();
        let has_resources =
            self.enable.resources || !resources.is_empty() || !self.templates.is_empty();
        let task_tools = self
            .tools
            .iter()
            .any(|t| t.task_support() != ferromcp_types::mcp::TaskSupport::Forbidden);
        let tasks = match self.tasks {
            Some(settings) => Some(settings),
            None => task_tools.then(crate::tasks::TaskSettings::new),
        }
        .map(|settings| Arc::new(crate::tasks::Tasks::new(settings)));
        let mut state = self.state;
        let shared = Arc::new_cyclic(|own| {
            state.insert(own_resources::OwnServer(own.clone()));
            Shared {
                tools: Registry::new(self.tools),
                prompts: Registry::new(self.prompts),
                resources: Registry::new(resources),
                templates: Registry::new(self.templates),
                completions: self.completions,
                state: Arc::new(state),
                page_size: self.page_size,
                rounds,
                tasks: tasks.clone(),
                skills,
            }
        });
        let s = &shared;
        let mut low = self.low;
        if has_apps {
            low = low.extension(EXTENSION_UI, JsonObject::new());
        }
        let mut low = low
            .tool_headers(shared.clone())
            .tools_list_changed(has_tools)
            .prompts_list_changed(has_prompts)
            .resources_list_changed(has_resources)
            .with_standard_logging();
        if has_tools {
            let sh = s.clone();
            low = low.on::<ListTools, _, _, _>(move |ctx, p: PaginatedRequestParams| {
                let sh = sh.clone();
                async move { tools::list(&sh, ctx.protocol_version(), p.cursor.as_ref()) }
            });
            low = route::register(low, s, self.tool_route);
        }
        if has_prompts {
            let sh = s.clone();
            low = low.on::<ListPrompts, _, _, _>(move |ctx, p: PaginatedRequestParams| {
                let sh = sh.clone();
                async move {
                    let version = ctx.protocol_version();
                    prompts::list(&sh.prompts, version, p.cursor.as_ref(), sh.page_size)
                }
            });
            let sh = s.clone();
            low = low.on::<GetPrompt, _, _, _>(move |ctx, p| {
                let sh = sh.clone();
                async move { prompts::get(&sh, ctx, p).await }
            });
        }
        if has_resources {
            let sh = s.clone();
            low = low.on::<ListResources, _, _, _>(move |ctx, p: PaginatedRequestParams| {
                let sh = sh.clone();
                async move {
                    let version = ctx.protocol_version();
                    resources::list(&sh.resources, version, p.cursor.as_ref(), sh.page_size)
                }
            });
            let sh = s.clone();
            low =
                low.on::<ListResourceTemplates, _, _, _>(move |ctx, p: PaginatedRequestParams| {
                    let sh = sh.clone();
                    async move {
                        let (version, cursor) = (ctx.protocol_version(), p.cursor.as_ref());
                        resources::list_templates(&sh.templates, version, cursor, sh.page_size)
                    }
                });
            let sh = s.clone();
            low = low.on::<ReadResource, _, _, _>(move |ctx, p| {
                let sh = sh.clone();
                async move { resources::read(&sh, ctx, p).await }
            });
            // Handshake-era subscriptions (2026-07-28 has `subscriptions/listen` instead):
            // the SDK's own registration, so no deprecation warning.
            let sh = s.clone();
            low = low.on_request_quiet(
                <Subscribe as Request>::METHOD,
                move |ctx: crate::RequestContext, p: <Subscribe as Request>::Params| {
                    let known = resources::subscribe(&sh, &ctx, &p.uri);
                    async move {
                        known?;
                        Ok(EmptyResult::new())
                    }
                },
            );
            low = low.on_request_quiet(
                <Unsubscribe as Request>::METHOD,
                |ctx: crate::RequestContext, p: <Unsubscribe as Request>::Params| async move {
                    ctx.connection().unsubscribe_resource(&p.uri);
                    Ok(EmptyResult::new())
                },
            );
        }
        if has_skills {
            low = register_skills(low, s);
        }
        // 2026-07-28: change notifications travel only on listen streams; serving it also
        // makes the 2026 capabilities announce listChanged / subscribe.
        let offered = listen::Offered {
            tools: has_tools,
            prompts: has_prompts,
            resources: has_resources,
        };
        let listen_tasks = tasks.clone();
        low = low.on::<SubscriptionsListen, _, _, _>(move |ctx, p| {
            listen::listen(ctx, p, offered, listen_tasks.clone())
        });
        if let Some(tasks) = &tasks {
            low = crate::tasks::register(low, tasks);
        }
        if has_completions {
            let sh = s.clone();
            low = low.on::<Complete, _, _, _>(move |_ctx, p| {
                let sh = sh.clone();
                async move { Ok(sh.completions.complete(p).await) }
            });
        }
        let server = low.build()?;
        Ok(McpServer { shared, server })
    }
}

/// Serves the skills extension (SEP-2640): `skills/list`, `skills/get` and
/// `resources/directory/read`, and declares it with `directoryRead` (the capabilities carry
/// `extensions` from 2026-07-28 on).
fn register_skills(low: ServerBuilder, s: &Arc<Shared>) -> ServerBuilder {
    let mut directory_read = JsonObject::new();
    directory_read.insert("directoryRead".into(), true.into());
    let low = low.extension(EXTENSION_SKILLS, directory_read);
    let sh = s.clone();
    let low = low.on_request(METHOD_SKILLS_LIST, move |ctx, p| {
        let sh = sh.clone();
        async move { skills::list(&sh.skills, &ctx, &p, sh.page_size) }
    });
    let sh = s.clone();
    let low = low.on_request(METHOD_SKILLS_GET, move |ctx, p| {
        let sh = sh.clone();
        async move { skills::get(&sh.skills, &ctx, &p) }
    });
    let sh = s.clone();
    low.on_request(METHOD_RESOURCES_DIRECTORY_READ, move |ctx, p| {
        let sh = sh.clone();
        async move { skills::read_directory(&sh.skills, &ctx, &p, sh.page_size) }
    })
}
