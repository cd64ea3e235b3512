//! The prompt registry: `prompts/list` and `prompts/get`.

use std::sync::Arc;

use ferromcp_dispatch::{BoxFuture, HandlerError};
use ferromcp_types::ProtocolVersion;
use ferromcp_types::jsonrpc::ErrorObject;
use ferromcp_types::mcp::{
    Cursor, GetPromptRequestParams, GetPromptResult, Icon, JsonObject, MaybeInputRequired, Prompt,
    PromptArgument, methods,
};
use serde_json::Value;

use super::Shared;
use super::extract::HandlerCall;
use super::handler::PromptHandler;
use super::listed::{self, Encoded, Listed, Page};
use super::registry::Registry;
use super::resolve::{self, ResolverRef, Round};
use crate::context::RequestContext;

/// What a prompt is called and how it describes itself.
///
/// Its arguments come from the handler's `Args<T>` (each property of `T` is an argument,
/// required if `T` requires it, described by its doc comment) unless set here.
#[derive(Debug, Clone)]
#[must_use]
pub struct PromptSpec {
    name: String,
    title: Option<String>,
    description: Option<String>,
    icons: Option<Vec<Icon>>,
    arguments: Option<Vec<PromptArgument>>,
}

impl PromptSpec {
    /// A prompt with this name.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            title: None,
            description: None,
            icons: None,
            arguments: None,
        }
    }

    /// A human-readable title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// What the prompt is for.
    pub fn description(mut self, text: impl Into<String>) -> Self {
        self.description = Some(text.into());
        self
    }

    /// Icons for clients to show.
    pub fn icons(mut self, icons: Vec<Icon>) -> Self {
        self.icons = Some(icons);
        self
    }

    /// The declared arguments, replacing those derived from the handler's `Args<T>`.
    pub fn arguments(mut self, arguments: Vec<PromptArgument>) -> Self {
        self.arguments = Some(arguments);
        self
    }
}

impl From<&str> for PromptSpec {
    fn from(name: &str) -> Self {
        Self::new(name)
    }
}

impl From<String> for PromptSpec {
    fn from(name: String) -> Self {
        Self::new(name)
    }
}

type GetFn =
    dyn Fn(HandlerCall) -> BoxFuture<'static, Result<GetPromptResult, ErrorObject>> + Send + Sync;

/// A registered prompt.
pub(crate) struct PromptEntry {
    pub(crate) prompt: Prompt,
    get: Arc<GetFn>,
    resolvers: Vec<ResolverRef>,
    /// `prompt` as `prompts/list` lists it, per version, encoded on its first listing.
    listed: Encoded,
}

impl super::registry::Named for PromptEntry {
    fn key(&self) -> &str {
        &self.prompt.name
    }
}

impl Listed for PromptEntry {
    type Item = Prompt;
    fn listed(&self) -> (&Prompt, &Encoded) {
        (&self.prompt, &self.listed)
    }
}

/// The prompt arguments a JSON Schema object describes.
fn arguments_from_schema(schema: &JsonObject) -> Vec<PromptArgument> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    props
        .iter()
        .map(|(name, prop)| {
            let mut arg = PromptArgument::new(name.clone());
            arg.description = prop
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_owned);
            arg.required = Some(required.contains(&name.as_str()));
            arg
        })
        .collect()
}

pub(crate) fn entry<M, H: PromptHandler<M>>(spec: PromptSpec, handler: H) -> PromptEntry {
    let mut prompt = Prompt::new(spec.name);
    prompt.title = spec.title;
    prompt.description = spec.description;
    prompt.icons = spec.icons;
    let arguments = spec
        .arguments
        .or_else(|| {
            handler
                .arguments_schema()
                .map(|s| arguments_from_schema(&s))
        })
        .filter(|a| !a.is_empty());
    prompt.arguments = arguments;
    PromptEntry {
        listed: Encoded::new(methods::PROMPTS_LIST, "prompts"),
        prompt,
        resolvers: handler.resolvers(),
        get: Arc::new(move |call| handler.call(call)),
    }
}

/// One page of `prompts/list` as `version` receives it, from the prompts' encoded entries.
pub(crate) fn list(
    registry: &Registry<PromptEntry>,
    version: ProtocolVersion,
    cursor: Option<&Cursor>,
    page_size: usize,
) -> Result<Page, HandlerError> {
    Ok(listed::page(
        registry, "prompts", version, cursor, page_size,
    )?)
}

/// `prompts/get`: an unknown prompt or a missing required argument is -32602. The handler's
/// resolvers run first (see `tools::call`).
pub(crate) async fn get(
    shared: &Shared,
    ctx: RequestContext,
    params: GetPromptRequestParams,
) -> Result<MaybeInputRequired<GetPromptResult>, HandlerError> {
    let Some(entry) = shared.prompts.get(&params.name) else {
        return Err(ErrorObject::invalid_params(format!(
            "Unknown prompt: {}",
            ferromcp_types::jsonrpc::echo(&params.name)
        ))
        .into());
    };
    let given = params.arguments.unwrap_or_default();
    for arg in entry.prompt.arguments.iter().flatten() {
        if arg.required == Some(true) && !given.contains_key(&arg.name) {
            let message = format!("missing required argument {:?}", arg.name);
            return Err(ErrorObject::invalid_params(message).into());
        }
    }
    let arguments = Value::Object(
        given
            .into_iter()
            .map(|(k, v)| (k, Value::String(v)))
            .collect(),
    );
    let call = HandlerCall {
        ctx,
        name: params.name,
        arguments: Arc::new(super::arguments::Arguments::from_value(arguments)),
        state: shared.state.clone(),
        resolved: Default::default(),
    };
    let round = Round {
        method: methods::PROMPTS_GET,
        bind_arguments: true,
        input_responses: params.input_responses,
        request_state: params.request_state,
    };
    let run = entry.get.clone();
    Ok(
        resolve::serve(&shared.rounds, call, &entry.resolvers, round, move |c| {
            run(c)
        })
        .await?,
    )
}

/// Prompt-argument completions at run time (the builder's
/// [`prompt_completion`](super::McpServerBuilder::prompt_completion), after the build).
impl super::McpServer {
    /// Adds (or replaces) completions for one argument of a prompt at run time (see
    /// [`super::McpServerBuilder::prompt_completion`]); served when the server was built with
    /// completions (any registered, or [`super::McpServerBuilder::enable_completions`]).
    /// [`McpServer::remove_prompt`](super::McpServer::remove_prompt) removes them with the
    /// prompt.
    pub fn add_prompt_completion<F, Fut>(&self, prompt: &str, argument: &str, complete: F)
    where
        F: Fn(super::CompletionRequest) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Vec<String>> + Send + 'static,
    {
        self.shared.completions.insert(
            super::completions::Target::Prompt(prompt.into()),
            argument.into(),
            complete,
        );
    }
}
