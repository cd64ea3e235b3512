//! The tool registry: specs, entries, `tools/list` pages and `tools/call`.

use std::sync::Arc;

use ferromcp_dispatch::{BoxFuture, HandlerError};
use ferromcp_types::ProtocolVersion;
use ferromcp_types::jsonrpc::ErrorObject;
use ferromcp_types::mcp::{
    CallToolRequestParams, CallToolResult, Cursor, Icon, InputResponses, JsonObject,
    MaybeInputRequired, Meta, TaskMetadata, TaskSupport, Tool, ToolAnnotations, ToolExecution,
    methods,
};
use ferromcp_types::tables::{MemberWalk, unquote};
use serde_json::Value;
use serde_json::value::RawValue;

use super::Shared;
use super::apps::AppVisibility;
use super::arguments::Arguments;
use super::extract::HandlerCall;
use super::handler::ToolHandler;
use super::listed::{self, Encoded, Listed, Page};
use super::resolve::{self, ResolverRef, Round};
use super::schema::object_schema;
use crate::context::RequestContext;
use crate::handler_fn::{Output, RequestFn, erase_request};
use crate::jsonschema::{Limits, Schema, ValidationErrors};
use crate::middleware::McpParams;
use crate::server::BuildError;

/// What a tool is called and how it describes itself; everything but the name is optional.
///
/// ```
/// use ferromcp_server::mcp_server::ToolSpec;
///
/// let spec = ToolSpec::new("add").description("Adds two numbers.").title("Add");
/// # let _ = spec;
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct ToolSpec {
    name: String,
    title: Option<String>,
    description: Option<String>,
    annotations: Option<ToolAnnotations>,
    icons: Option<Vec<Icon>>,
    input_schema: Option<JsonObject>,
    output_schema: Option<JsonObject>,
    task_support: Option<TaskSupport>,
    app: Option<String>,
    app_visibility: Option<Vec<AppVisibility>>,
}

impl ToolSpec {
    /// A tool with this name.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            title: None,
            description: None,
            annotations: None,
            icons: None,
            input_schema: None,
            output_schema: None,
            task_support: None,
            app: None,
            app_visibility: None,
        }
    }

    /// Links the tool to an MCP App (`_meta.ui.resourceUri`; see [`super::App`]): hosts
    /// that render apps show the tool's input and result in it. The URI must be a `ui://`
    /// app registered with [`McpServerBuilder::app`](super::McpServerBuilder::app), or the
    /// build fails.
    pub fn app(mut self, uri: impl Into<String>) -> Self {
        self.app = Some(uri.into());
        self
    }

    /// Who may call the tool (`_meta.ui.visibility`; default model and app). A tool only the
    /// app may call stays in `tools/list`; the host keeps it from the model (SEP-1865).
    pub fn app_visibility(mut self, visibility: &[AppVisibility]) -> Self {
        self.app_visibility = Some(visibility.to_vec());
        self
    }

    /// Whether the tool runs as a task (`execution.taskSupport`; default forbidden): see
    /// [`crate::tasks`]. The handler stays the same: a plain call and a task run it alike.
    pub fn task_support(mut self, support: TaskSupport) -> Self {
        self.task_support = Some(support);
        self
    }

    /// A human-readable title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// What the tool does, for the model.
    pub fn description(mut self, text: impl Into<String>) -> Self {
        self.description = Some(text.into());
        self
    }

    /// Behaviour hints (read-only, destructive, idempotent, open-world).
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = Some(annotations);
        self
    }

    /// Icons for clients to show.
    pub fn icons(mut self, icons: Vec<Icon>) -> Self {
        self.icons = Some(icons);
        self
    }

    /// A raw input schema, kept verbatim (`$schema`, `$defs`, `additionalProperties` and
    /// all); it replaces the schema derived from the handler's `Args<T>`.
    pub fn input_schema(mut self, schema: JsonObject) -> Self {
        self.input_schema = Some(schema);
        self
    }

    /// A raw output schema, kept verbatim; it replaces the one derived from the return type.
    pub fn output_schema(mut self, schema: JsonObject) -> Self {
        self.output_schema = Some(schema);
        self
    }
}

impl From<&str> for ToolSpec {
    fn from(name: &str) -> Self {
        Self::new(name)
    }
}

impl From<String> for ToolSpec {
    fn from(name: String) -> Self {
        Self::new(name)
    }
}

/// A tool defined ahead of time: its spec and its handler, ready to register with
/// `McpServerBuilder::tool_def`. The `#[tool]` macro of `ferromcp-macros` makes these.
///
/// ```
/// use ferromcp_server::McpServer;
/// use ferromcp_server::mcp_server::ToolDef;
///
/// let def = ToolDef::new("ping", || async { "pong" });
/// let server = McpServer::builder("s", "1").tool_def(def).build().unwrap();
/// assert_eq!(server.tool_names(), ["ping"]);
/// ```
pub struct ToolDef(pub(crate) Result<ToolEntry, BuildError>);

impl ToolDef {
    /// A tool definition from a spec (or a name) and a handler.
    pub fn new<M, H: ToolHandler<M>>(spec: impl Into<ToolSpec>, handler: H) -> Self {
        Self(entry(spec.into(), handler))
    }
}

impl std::fmt::Debug for ToolDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Ok(e) => f.debug_tuple("ToolDef").field(&e.tool.name).finish(),
            Err(e) => f.debug_tuple("ToolDef").field(e).finish(),
        }
    }
}

type CallFn =
    dyn Fn(HandlerCall) -> BoxFuture<'static, Result<CallToolResult, ErrorObject>> + Send + Sync;

/// A registered tool: its description and its handler.
pub(crate) struct ToolEntry {
    pub(crate) tool: Tool,
    /// The input schema, compiled once: arguments are checked against it before the handler
    /// runs (bounded: no remote `$ref`, capped depth, size and steps).
    validator: Schema,
    call: Arc<CallFn>,
    /// The resolvers the handler needs, run before it.
    resolvers: Vec<ResolverRef>,
    /// The input schema's `x-mcp-header` annotations, read once here.
    pub(crate) param_headers: Arc<[crate::tool_headers::ParamHeader]>,
    /// `tool` as `tools/list` lists it, per version, encoded on its first listing.
    listed: Encoded,
}

/// Builds an entry from a spec and a handler.
pub(crate) fn entry<M, H: ToolHandler<M>>(
    spec: ToolSpec,
    handler: H,
) -> Result<ToolEntry, BuildError> {
    if spec.name.is_empty() {
        return Err(BuildError::Invalid {
            name: spec.name,
            reason: "empty name".into(),
        });
    }
    let input = spec
        .input_schema
        .or_else(|| handler.input_schema())
        .unwrap_or_else(object_schema);
    if input.get("type").and_then(Value::as_str) != Some("object") {
        return Err(BuildError::Invalid {
            name: spec.name,
            reason: "the input schema must have \"type\": \"object\"".into(),
        });
    }
    let validator =
        Schema::compile(&Value::Object(input.clone()), &Limits::default()).map_err(|e| {
            BuildError::Invalid {
                name: spec.name.clone(),
                reason: format!("input schema: {e}"),
            }
        })?;
    let param_headers = crate::tool_headers::param_headers(&input).into();
    let mut tool = Tool::new(spec.name, input);
    tool.title = spec.title;
    tool.description = spec.description;
    tool.annotations = spec.annotations;
    tool.icons = spec.icons;
    tool.output_schema = spec.output_schema.or_else(|| handler.output_schema());
    if let Some(uri) = &spec.app {
        super::apps::check_uri(&tool.name, uri)?;
    }
    if spec.app.is_some() || spec.app_visibility.is_some() {
        let ui = super::apps::tool_meta(spec.app.as_deref(), spec.app_visibility.as_deref());
        let mut meta = ferromcp_types::mcp::Meta::new();
        meta.as_map_mut().insert("ui".into(), Value::Object(ui));
        tool.meta = Some(meta);
    }
    if let Some(support) = spec.task_support {
        tool.execution = Some(ToolExecution::new().with_task_support(support));
    }
    let listed = Encoded::new(methods::TOOLS_LIST, FIELD);
    Ok(ToolEntry {
        tool,
        listed,
        validator,
        resolvers: handler.resolvers(),
        call: Arc::new(move |call| handler.call(call)),
        param_headers,
    })
}

impl ToolEntry {
    /// The tool's `execution.taskSupport` (forbidden when absent).
    pub(crate) fn task_support(&self) -> TaskSupport {
        self.tool
            .execution
            .as_ref()
            .and_then(|e| e.task_support)
            .unwrap_or(TaskSupport::Forbidden)
    }
}

impl super::registry::Named for ToolEntry {
    fn key(&self) -> &str {
        &self.tool.name
    }
}

impl Listed for ToolEntry {
    type Item = Tool;
    fn listed(&self) -> (&Tool, &Encoded) {
        (&self.tool, &self.listed)
    }
}

/// Where `tools/list` puts its items.
const FIELD: &str = "tools";

/// One page of `tools/list` as `version` receives it, from the tools' encoded entries.
pub(crate) fn list(
    shared: &Shared,
    version: ProtocolVersion,
    cursor: Option<&Cursor>,
) -> Result<Page, HandlerError> {
    Ok(listed::page(
        &shared.tools,
        FIELD,
        version,
        cursor,
        shared.page_size,
    )?)
}

/// What `tools/call` answers: the call's result (or an `InputRequiredResult`), or a task
/// handle when it runs as a task.
#[derive(serde::Serialize)]
#[serde(untagged)]
pub(crate) enum CallAnswer {
    Plain(MaybeInputRequired<CallToolResult>),
    Task(crate::tasks::TaskCreated),
}

/// What `tools/call` reads of its params: the arguments as the text received while the
/// params are (issue 17 point 4), else as the value a layer made of them.
pub(crate) struct CallParams {
    name: String,
    arguments: Arguments,
    task: Option<TaskMetadata>,
    input_responses: Option<InputResponses>,
    request_state: Option<String>,
}

/// `tools/call` params read from their text: every member as the typed params read it, but
/// `arguments` left as its text.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct TextParams<'a> {
    /// Read (and so checked) as the typed params read it; not used.
    #[serde(rename = "_meta")]
    #[allow(dead_code, reason = "read to fail where the typed params fail")]
    meta: Option<Meta>,
    name: String,
    #[serde(borrow)]
    arguments: Option<&'a RawValue>,
    task: Option<TaskMetadata>,
    input_responses: Option<InputResponses>,
    request_state: Option<String>,
}

/// What [`CallParams::from_text`] reads: [`TextParams`], the arguments as their text.
struct ReadParams<'a> {
    name: String,
    arguments: Option<&'a str>,
    task: Option<TaskMetadata>,
    input_responses: Option<InputResponses>,
    request_state: Option<String>,
}

/// How deep a `_meta` the walk reads on its own may nest (counting every opening bracket in
/// it): well short of the 128 levels serde_json reads, so reading it alone or inside the
/// params fails alike.
const SHALLOW_META: usize = 100;

impl<'a> ReadParams<'a> {
    /// The params of `text` as serde reads [`TextParams`] (`None` where it fails).
    fn read(text: &'a str) -> Option<Self> {
        if let Some(p) = Self::walk(text) {
            return Some(p);
        }
        let p = serde_json::from_str::<TextParams<'a>>(text).ok()?;
        Some(Self {
            name: p.name,
            arguments: p.arguments.map(RawValue::get),
            task: p.task,
            input_responses: p.input_responses,
            request_state: p.request_state,
        })
    }

    /// Params of only `name`, `arguments` and a shallow `_meta` (any call but a task's or a
    /// multi-round retry's; other members are ignored, as serde ignores them) by one walk of
    /// the members, each read as serde reads it: a repeated member, a name that is not a
    /// string, arguments that are neither an object nor `null`, a `_meta` that is neither:
    /// `None`. So is anything else, which is then left to serde.
    fn walk(text: &'a str) -> Option<Self> {
        let mut name = None;
        let mut arguments = None;
        let mut meta = false;
        let mut members = MemberWalk::new(text)?;
        while let Some(key) = members.next_key()? {
            let unquoted;
            let key = match key.plain() {
                Some(plain) => plain,
                None => {
                    unquoted = key.unquoted()?;
                    unquoted.as_ref()
                }
            };
            match key {
                "name" if name.is_none() => {
                    name = Some(unquote(members.value()?)?.into_owned());
                }
                "arguments" if arguments.is_none() => {
                    arguments = Some(object_or_null(members.value()?)?);
                }
                "_meta" if !meta => {
                    meta = true;
                    // Read as serde reads it, where it stands (serde_json says where it
                    // ends: no walk of it first).
                    let mut read = serde_json::Deserializer::from_str(members.rest())
                        .into_iter::<Option<Meta>>();
                    read.next()?.ok()?;
                    let len = read.byte_offset();
                    if too_deep(members.rest().get(..len)?) {
                        return None;
                    }
                    members.skip(len);
                }
                "name" | "arguments" | "_meta" | "task" | "inputResponses" | "requestState" => {
                    return None;
                }
                _ => {
                    members.value()?;
                }
            }
        }
        Some(Self::of(name?, arguments))
    }

    fn of(name: String, arguments: Option<Option<&'a str>>) -> Self {
        Self {
            name,
            arguments: arguments.flatten(),
            task: None,
            input_responses: None,
            request_state: None,
        }
    }
}

/// `arguments` as serde reads them into `Option<&RawValue>` that the typed params accept: an
/// object's text, or `null` (none); anything else `None`.
fn object_or_null(value: &str) -> Option<Option<&str>> {
    match value.as_bytes().first() {
        Some(b'{') => Some(Some(value)),
        Some(b'n') if value == "null" => Some(None),
        _ => None,
    }
}

/// Whether a `_meta`'s text may nest about as deep as serde_json reads (128 levels, the
/// params' own level included), where reading it alone and inside the params could differ:
/// then the walk leaves the params to serde. Counts every opening bracket; under 200 bytes
/// nothing nests 100 deep.
fn too_deep(meta: &str) -> bool {
    meta.len() >= 2 * SHALLOW_META
        && meta.bytes().filter(|c| matches!(c, b'{' | b'[')).count() >= SHALLOW_META
}

impl CallParams {
    fn from_typed(params: CallToolRequestParams) -> Self {
        let CallToolRequestParams {
            name,
            arguments,
            task,
            input_responses,
            request_state,
            ..
        } = params;
        Self {
            name,
            arguments: Arguments::from_value(Value::Object(arguments.unwrap_or_default())),
            task,
            input_responses,
            request_state,
        }
    }

    /// The params read from the text received, the arguments kept as text; the params back
    /// when they are a value, or when the text is not what the typed params accept (they
    /// then answer with the error they always did).
    fn from_text(params: McpParams) -> Result<Self, McpParams> {
        let Some(raw) = params.raw() else {
            return Err(params);
        };
        let text = raw.get();
        let Some(p) = ReadParams::read(text) else {
            return Err(params);
        };
        let range = match p.arguments {
            None => None,
            Some(args) if args.starts_with('{') => {
                let start = (args.as_ptr() as usize).wrapping_sub(text.as_ptr() as usize);
                let range = start..start.wrapping_add(args.len());
                // The same place, not only the same bytes (no comparison of a long text).
                if !text
                    .get(range.clone())
                    .is_some_and(|at| std::ptr::eq(at, args))
                {
                    return Err(params);
                }
                Some(range)
            }
            // Not an object: the typed params' error.
            Some(_) => return Err(params),
        };
        let (name, task, input_responses, request_state) =
            (p.name, p.task, p.input_responses, p.request_state);
        let raw = params.into_raw()?;
        Ok(Self {
            name,
            arguments: Arguments::from_text(raw, range),
            task,
            input_responses,
            request_state,
        })
    }
}

/// The `tools/call` handler: params read from their text when they are still text (no
/// `Value` of the arguments is built: the input schema checks their text, `Args<T>` reads
/// `T` from it), else from the value a layer made, as any typed handler's.
pub(crate) fn handler(shared: &Arc<Shared>) -> Arc<RequestFn> {
    let sh = shared.clone();
    let typed = erase_request(move |ctx, p: CallToolRequestParams| {
        call(&sh, ctx, CallParams::from_typed(p))
    });
    let shared = shared.clone();
    Arc::new(
        move |ctx, params: McpParams| match CallParams::from_text(params) {
            Ok(p) => {
                let answer = call(&shared, ctx, p);
                Box::pin(async move { Ok(Output::Typed(Box::new(answer.await?))) })
            }
            Err(params) => typed(ctx, params),
        },
    )
}

/// `tools/call`: an unknown tool is a protocol error (-32602); a handler's failure is a tool
/// result with `isError: true`. The handler's resolvers run first; at 2026-07-28 open
/// questions make the result an `InputRequiredResult`. A task-capable tool may run as a task
/// (see [`crate::tasks`]): the resolvers still run first, then the handler in the background.
fn call(
    shared: &Arc<Shared>,
    ctx: RequestContext,
    params: CallParams,
) -> BoxFuture<'static, Result<CallAnswer, HandlerError>> {
    // The checks run here, synchronously; each outcome gets the smallest future that serves it
    // (the common one holds only the handler's future), as every call moves its future into
    // a box.
    let CallParams {
        name,
        arguments,
        task,
        input_responses,
        request_state,
    } = params;
    let Some(entry) = shared.tools.get(&name) else {
        let shown = ferromcp_types::jsonrpc::echo(&name);
        let e = ErrorObject::invalid_params(format!("Unknown tool: {shown}"))
            .with_data(serde_json::json!({ "name": shown }));
        return Box::pin(std::future::ready(Err(e.into())));
    };
    let mode = match &shared.tasks {
        Some(tasks) => match tasks.decide(&ctx, entry.task_support(), task.as_ref()) {
            Ok(mode) => mode,
            Err(e) => return Box::pin(std::future::ready(Err(e.into()))),
        },
        None => crate::tasks::Mode::Plain,
    };
    // Arguments that do not fit the schema are a tool error the model can read and correct,
    // not a protocol error.
    let invalid = check(&entry.validator, &arguments).err();
    let call = HandlerCall {
        ctx,
        name,
        arguments: Arc::new(arguments),
        state: shared.state.clone(),
        resolved: Default::default(),
    };
    let modern = call.ctx.protocol_version().is_modern();
    if let Some(errors) = invalid {
        let result = CallToolResult::error(errors.to_string());
        // A task the client asked for (2025-11-25) is still a task, one that ends at once.
        if let (crate::tasks::Mode::Task { ttl_ms }, Some(tasks)) = (mode, &shared.tasks)
            && !modern
        {
            let tasks = tasks.clone();
            return Box::pin(async move {
                let created = tasks
                    .spawn(call, ttl_ms, move |_| {
                        Box::pin(std::future::ready(Ok(result)))
                    })
                    .await?;
                Ok(CallAnswer::Task(created))
            });
        }
        let answer = CallAnswer::Plain(MaybeInputRequired::Complete(result));
        return Box::pin(std::future::ready(Ok(answer)));
    }
    let run = entry.call.clone();
    // The common case: a plain call of a tool without resolvers before 2026-07-28.
    if !modern && entry.resolvers.is_empty() && matches!(mode, crate::tasks::Mode::Plain) {
        let handler = run(call);
        return Box::pin(async move {
            Ok(CallAnswer::Plain(MaybeInputRequired::Complete(
                handler.await?,
            )))
        });
    }
    let round = Round {
        method: methods::TOOLS_CALL,
        bind_arguments: true,
        input_responses,
        request_state,
    };
    let resolvers = entry.resolvers.clone();
    let shared = shared.clone();
    Box::pin(async move {
        match (mode, &shared.tasks) {
            (crate::tasks::Mode::Task { ttl_ms }, Some(tasks)) => {
                let tasks = tasks.clone();
                let spawn = move |c: HandlerCall| -> BoxFuture<'static, _> {
                    Box::pin(async move { tasks.spawn(c, ttl_ms, move |c| run(c)).await })
                };
                let answer = resolve::serve(&shared.rounds, call, &resolvers, round, spawn).await?;
                Ok(match answer {
                    MaybeInputRequired::Complete(created) => CallAnswer::Task(created),
                    MaybeInputRequired::InputRequired(more) => {
                        CallAnswer::Plain(MaybeInputRequired::InputRequired(more))
                    }
                })
            }
            _ => Ok(CallAnswer::Plain(
                resolve::serve(&shared.rounds, call, &resolvers, round, move |c| run(c)).await?,
            )),
        }
    })
}

/// The arguments against the input schema: their text as received, or their value (the same
/// verdicts and errors either way).
fn check(schema: &Schema, arguments: &Arguments) -> Result<(), ValidationErrors> {
    match arguments.text() {
        Some(text) => schema.validate_json(text),
        None => schema.validate(arguments.value()),
    }
}

/// The tool registry answers for the tools' `x-mcp-header` annotations, current as tools are
/// added, replaced and removed.
impl crate::tool_headers::ToolHeaders for super::Shared {
    fn param_headers(&self, tool: &str) -> Option<Arc<[crate::tool_headers::ParamHeader]>> {
        self.tools
            .get(tool)
            .map(|entry| entry.param_headers.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::{ReadParams, TextParams};

    /// The walk reads a `_meta` on its own, one level shallower than serde reads it inside
    /// the params: a `_meta` nested near serde_json's depth limit (`SHALLOW_META`) is left to
    /// serde, so the walk never accepts params the typed params refuse. Text a `RawJson`
    /// holds cannot nest that deep after the decoder; text kept unchecked can.
    #[test]
    fn a_meta_near_the_depth_limit_is_read_as_serde_reads_it() {
        for depth in [99, 126, 127, 128, 140] {
            let meta = format!(
                "{}{{}}{}",
                r#"{"a":"#.repeat(depth - 1),
                "}".repeat(depth - 1)
            );
            let text = format!(r#"{{"name":"t","_meta":{meta}}}"#);
            let serde = serde_json::from_str::<TextParams<'_>>(&text).is_ok();
            let walk = ReadParams::read(&text).is_some();
            assert_eq!(walk, serde, "a _meta {depth} deep");
        }
    }
}
