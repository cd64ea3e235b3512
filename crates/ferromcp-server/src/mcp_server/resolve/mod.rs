//! Resolvers ([`Resolver`], [`Resolved`], [`Ask`]): questions to the client answered before
//! a handler runs, live before 2026-07-28 and through `InputRequiredResult` rounds at
//! 2026-07-28.

mod round;

use std::any::{Any, TypeId, type_name};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use ferromcp_dispatch::BoxFuture;
use ferromcp_types::jsonrpc::ErrorObject;
use ferromcp_types::mcp::{
    ClientCapabilities, CreateMessageRequestParams, CreateMessageResult, ElicitAction,
    ElicitRequestFormParams, ElicitRequestParams, ElicitRequestUrlParams, ElicitResult,
    ElicitationSchema, InputRequest, InputResponse, ListRootsResult,
};
use serde_json::Value;
use tokio::sync::OnceCell;

use super::elicit::{ElicitForm, Elicitation, check_capability, decode_answer};
use super::extract::{FromHandlerCall, HandlerCall, StateMap};
use super::output::ToolError;
use crate::context::RequestContext;

pub(crate) use round::{LazyAsk, Round, Rounds, serve};

/// The default bound on the rounds of one multi-round request.
pub const DEFAULT_MAX_INPUT_ROUNDS: u32 = 8;

/// A value computed by asking the client, before the handler runs.
///
/// A [`Resolver`] computes a value by asking through an [`Ask`]; a handler takes the value
/// with the [`Resolved<R>`] extractor. Before extraction, the server runs every resolver the
/// handler names, concurrently.
///
/// - **Handshake era** (≤ 2025-11-25): each question is a live server→client request related
///   to the current request (over HTTP it rides that request's SSE stream), and the answer is
///   returned at once.
/// - **2026-07-28**: servers cannot send requests, so a question without an answer yet makes
///   the call return an `InputRequiredResult`: `inputRequests` (every question of the round,
///   by key) and a sealed, bound, expiring `requestState` carrying the answers so far. The
///   client retries with `inputResponses`; the resolvers run again, now find their answers,
///   and the handler runs. A resolver that needs another's output
///   ([`Ask::get`]) asks its own question only once that output is known, i.e. in a later
///   round. An answer that does not fit its question (wrong kind, content outside the form) is
///   asked again; answers under unknown keys are ignored. A missing, tampered, foreign or
///   expired `requestState` on a retry is -32602; a question whose capability the client did
///   not declare is -32021 (`data.requiredCapabilities`); more rounds than the server allows
///   ([`McpServerBuilder::max_input_rounds`](super::McpServerBuilder::max_input_rounds),
///   default [`DEFAULT_MAX_INPUT_ROUNDS`]) is -32602.
///
/// Resolvers run again in every round, so they should be cheap and free of side effects until
/// they have all their answers. Keys must be unique within one request (the handler's direct
/// questions through [`RequestContext`] methods use `elicitation-N`, `sampling-N`, `roots-N`).
///
/// ```
/// use ferromcp_server::mcp_server::{Ask, Elicitation, McpServer, ResolveError, Resolved, Resolver};
///
/// /// The form the user fills in.
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Name {
///     /// Your name.
///     name: String,
/// }
///
/// struct UserName;
///
/// impl Resolver for UserName {
///     type Output = Option<String>;
///
///     async fn resolve(ask: &Ask) -> Result<Self::Output, ResolveError> {
///         let answer = ask.elicit_form::<Name>("user_name", "What is your name?").await?;
///         Ok(answer.accepted().map(|n| n.name))
///     }
/// }
///
/// async fn greet(Resolved(name): Resolved<UserName>) -> String {
///     format!("Hello, {}!", name.as_deref().unwrap_or("stranger"))
/// }
///
/// let server = McpServer::builder("s", "1").tool("greet", greet).build().unwrap();
/// # let _ = server;
/// ```
pub trait Resolver: Send + Sync + 'static {
    /// What the resolver produces (cloned into each [`Resolved`] extractor that asks for it).
    type Output: Clone + Send + Sync + 'static;

    /// Computes the value. Propagate the [`Ask`] methods' errors with `?`: a
    /// [`ResolveError::Pending`] means "waiting for the client" and is not a failure.
    fn resolve(ask: &Ask) -> impl Future<Output = Result<Self::Output, ResolveError>> + Send;
}

/// Why a resolver has no value (yet).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ResolveError {
    /// A question is waiting for the client's answer (2026-07-28): the request answers with
    /// an `InputRequiredResult` and the resolver runs again on the retry.
    Pending,
    /// The request fails with this protocol error.
    Error(ErrorObject),
}

impl From<ErrorObject> for ResolveError {
    fn from(e: ErrorObject) -> Self {
        Self::Error(e)
    }
}

impl fmt::Display for ResolveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Pending => f.write_str("waiting for the client's input"),
            Self::Error(e) => write!(f, "{} ({})", e.message, e.code.0),
        }
    }
}

impl std::error::Error for ResolveError {}

/// The output of the resolver `R`, as a handler argument.
#[derive(Debug, Clone)]
pub struct Resolved<R: Resolver>(pub R::Output);

impl<R: Resolver> FromHandlerCall for Resolved<R> {
    fn collect_resolvers(out: &mut Vec<ResolverRef>) {
        out.push(ResolverRef::of::<R>());
    }

    fn from_handler_call(call: &HandlerCall) -> Result<Self, ToolError> {
        match call.resolved.get::<R>() {
            Some(v) => Ok(Resolved(v)),
            None => {
                tracing::error!(resolver = type_name::<R>(), "a resolver's value is missing");
                Err(ToolError::protocol(ErrorObject::internal_error(
                    "Internal error",
                )))
            }
        }
    }
}

type Erased = Arc<dyn Any + Send + Sync>;
type Memo = Arc<OnceCell<Result<Erased, ResolveError>>>;

/// A resolver a handler needs (made by [`Resolved`]'s [`FromHandlerCall::collect_resolvers`]).
#[derive(Clone, Copy)]
pub struct ResolverRef {
    id: TypeId,
    name: &'static str,
    run: for<'a> fn(&'a Ask) -> BoxFuture<'a, Result<Erased, ResolveError>>,
}

impl ResolverRef {
    /// The resolver `R`.
    pub fn of<R: Resolver>() -> Self {
        Self {
            id: TypeId::of::<R>(),
            name: type_name::<R>(),
            run: run_erased::<R>,
        }
    }

    pub(crate) fn dedup(list: &mut Vec<ResolverRef>) {
        let mut seen = Vec::with_capacity(list.len());
        list.retain(|r| {
            let fresh = !seen.contains(&r.id);
            seen.push(r.id);
            fresh
        });
    }
}

impl fmt::Debug for ResolverRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ResolverRef").field(&self.name).finish()
    }
}

fn run_erased<R: Resolver>(ask: &Ask) -> BoxFuture<'_, Result<Erased, ResolveError>> {
    Box::pin(async move { ask.memoized::<R>().await })
}

/// The resolvers' outputs for one call, by resolver type.
#[derive(Clone, Default)]
pub(crate) struct ResolvedValues(HashMap<TypeId, Erased>);

impl ResolvedValues {
    fn get<R: Resolver>(&self) -> Option<R::Output> {
        self.0
            .get(&TypeId::of::<R>())?
            .downcast_ref::<R::Output>()
            .cloned()
    }
}

/// What a resolver asks through: the call it resolves for, and the questions to the client.
/// Every question has a key, unique within the request, under which the answer comes back.
#[derive(Clone)]
pub struct Ask {
    inner: Arc<AskInner>,
    /// The resolvers being resolved on this path (to report cycles).
    chain: Vec<TypeId>,
}

pub(crate) struct AskInner {
    ctx: RequestContext,
    target: String,
    arguments: Arc<crate::mcp_server::arguments::Arguments>,
    state: Arc<StateMap>,
    round: u32,
    /// Handshake era: questions are live requests.
    live: bool,
    /// Answers carried in the sealed state (already checked when they came).
    answers: Mutex<BTreeMap<String, InputResponse>>,
    /// This retry's `inputResponses` for keys the previous round asked.
    offered: BTreeMap<String, InputResponse>,
    /// Questions without an answer, this round.
    questions: Mutex<BTreeMap<String, InputRequest>>,
    memo: Mutex<HashMap<TypeId, Memo>>,
    /// How many direct (context method) questions the handler asked so far.
    inline_calls: AtomicU32,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Ask {
    /// The request context.
    pub fn context(&self) -> &RequestContext {
        &self.inner.ctx
    }

    /// The tool or prompt name, or the resource URI.
    pub fn target(&self) -> &str {
        &self.inner.target
    }

    /// The call's arguments (an object; a template's variables for a resource).
    pub fn arguments(&self) -> &Value {
        self.inner.arguments.value()
    }

    /// Shared state registered with `McpServerBuilder::state`.
    pub fn state<T: Clone + Send + Sync + 'static>(&self) -> Option<T> {
        self.inner.state.get::<T>()
    }

    /// The capabilities the client declared (at 2026-07-28: this request's).
    pub fn client_capabilities(&self) -> Option<ClientCapabilities> {
        self.inner.ctx.connection().client_capabilities()
    }

    /// Which round this is: 0 for the first request, then 1, 2… for the retries (always 0
    /// in the handshake era).
    pub fn round(&self) -> u32 {
        self.inner.round
    }

    /// The output of another resolver, resolved at most once per request (its questions are
    /// asked now; this resolver's own questions after it, i.e. in a later round).
    pub async fn get<R: Resolver>(&self) -> Result<R::Output, ResolveError> {
        let value = self.memoized::<R>().await?;
        value
            .downcast_ref::<R::Output>()
            .cloned()
            .ok_or_else(|| ResolveError::Error(ErrorObject::internal_error("Internal error")))
    }

    async fn memoized<R: Resolver>(&self) -> Result<Erased, ResolveError> {
        let id = TypeId::of::<R>();
        if self.chain.contains(&id) {
            tracing::error!(
                resolver = type_name::<R>(),
                "resolvers depend on each other in a cycle"
            );
            return Err(ErrorObject::internal_error("Internal error").into());
        }
        let cell = lock(&self.inner.memo).entry(id).or_default().clone();
        let mut child = self.clone();
        child.chain.push(id);
        let init = async move {
            let run: BoxFuture<'_, _> =
                Box::pin(async move { R::resolve(&child).await.map(|v| Arc::new(v) as Erased) });
            run.await
        };
        cell.get_or_init(|| init).await.clone()
    }

    /// Asks `request` under `key`; `read` takes the answer apart (`None`: it does not fit).
    async fn ask<O>(
        &self,
        key: &str,
        request: InputRequest,
        read: impl Fn(&InputResponse) -> Option<O>,
    ) -> Result<O, ResolveError> {
        let ctx = &self.inner.ctx;
        check_capability(ctx.connection().client_capabilities().as_ref(), &request)?;
        if self.inner.live {
            let response = live(ctx, &request).await?;
            return read(&response).ok_or_else(|| {
                ErrorObject::invalid_params(format!(
                    "the client's answer to {key:?} does not fit the question"
                ))
                .into()
            });
        }
        let mut answers = lock(&self.inner.answers);
        if let Some(found) = answers.get(key).and_then(&read) {
            return Ok(found);
        }
        if let Some(offered) = self.inner.offered.get(key)
            && let Some(found) = read(offered)
        {
            answers.insert(key.to_owned(), offered.clone());
            return Ok(found);
        }
        answers.remove(key);
        drop(answers);
        lock(&self.inner.questions).insert(key.to_owned(), request);
        Err(ResolveError::Pending)
    }

    /// A direct question of the handler (a [`RequestContext`] method at 2026-07-28), keyed
    /// by call order: `elicitation-1`, `sampling-2`, `roots-3`…
    pub(crate) async fn inline(&self, request: InputRequest) -> Result<InputResponse, ErrorObject> {
        let n = self.inner.inline_calls.fetch_add(1, Ordering::Relaxed) + 1;
        let (kind, read): (&str, fn(&InputResponse) -> Option<InputResponse>) = match &request {
            InputRequest::Elicit(_) => ("elicitation", |r| {
                matches!(r, InputResponse::Elicit(_)).then(|| r.clone())
            }),
            InputRequest::CreateMessage(_) => ("sampling", |r| {
                matches!(r, InputResponse::CreateMessage(_)).then(|| r.clone())
            }),
            _ => ("roots", |r| {
                matches!(r, InputResponse::ListRoots(_)).then(|| r.clone())
            }),
        };
        let key = format!("{kind}-{n}");
        match self.ask(&key, request, read).await {
            Ok(r) => Ok(r),
            Err(ResolveError::Error(e)) => Err(e),
            Err(ResolveError::Pending) => Err(ErrorObject::invalid_request(format!(
                "input required: {key:?} is asked of the client; the request answers with an \
                 InputRequiredResult"
            ))),
        }
    }

    /// Asks the user to fill in the form `T` (see [`ElicitForm`]). An accepted answer that
    /// does not fit the form is asked again (2026-07-28) or is -32602 (handshake era).
    pub async fn elicit_form<T: ElicitForm>(
        &self,
        key: &str,
        message: impl Into<String>,
    ) -> Result<Elicitation<T>, ResolveError> {
        let form = T::form().map_err(|e| e.to_error_object())?;
        let params = ElicitRequestFormParams::new(message, form.clone());
        let read = |r: &InputResponse| match r {
            InputResponse::Elicit(e) => decode_answer::<T>(&form, e).ok(),
            _ => None,
        };
        self.ask(key, InputRequest::Elicit(params.into()), read)
            .await
    }

    /// Asks the user to fill in a form given as a schema; an accepted answer is checked
    /// against it.
    pub async fn elicit_form_raw(
        &self,
        key: &str,
        message: impl Into<String>,
        schema: ElicitationSchema,
    ) -> Result<ElicitResult, ResolveError> {
        let read = |r: &InputResponse| match r {
            InputResponse::Elicit(e) if e.action != ElicitAction::Accept => Some(e.clone()),
            InputResponse::Elicit(e) => {
                let empty = BTreeMap::new();
                let content = e.content.as_ref().unwrap_or(&empty);
                super::elicit::validate::check_content(&schema, content)
                    .ok()
                    .map(|_| e.clone())
            }
            _ => None,
        };
        let params = ElicitRequestFormParams::new(message, schema.clone());
        self.ask(key, InputRequest::Elicit(params.into()), read)
            .await
    }

    /// Asks the user to open `url` (URL mode; needs the client's `elicitation.url`
    /// capability). `elicitation_id` is sent in the handshake era (2025-11-25 requires it)
    /// and left out at 2026-07-28.
    pub async fn elicit_url(
        &self,
        key: &str,
        message: impl Into<String>,
        url: impl Into<String>,
        elicitation_id: impl Into<String>,
    ) -> Result<ElicitAction, ResolveError> {
        let mut params = ElicitRequestUrlParams::new(message, url);
        if self.inner.live {
            params = params.with_elicitation_id(elicitation_id);
        }
        let read = |r: &InputResponse| match r {
            InputResponse::Elicit(e) => Some(e.action),
            _ => None,
        };
        let request = InputRequest::Elicit(ElicitRequestParams::Url(params));
        self.ask(key, request, read).await
    }

    /// Asks the client's model for a completion (`sampling/createMessage`; deprecated at
    /// 2026-07-28, still served).
    pub async fn create_message(
        &self,
        key: &str,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, ResolveError> {
        let read = |r: &InputResponse| match r {
            InputResponse::CreateMessage(m) => Some(m.clone()),
            _ => None,
        };
        self.ask(key, InputRequest::CreateMessage(params), read)
            .await
    }

    /// Asks the client for its roots (`roots/list`; deprecated at 2026-07-28, still served).
    pub async fn list_roots(&self, key: &str) -> Result<ListRootsResult, ResolveError> {
        let read = |r: &InputResponse| match r {
            InputResponse::ListRoots(l) => Some(l.clone()),
            _ => None,
        };
        self.ask(key, InputRequest::ListRoots(None), read).await
    }
}

/// A live request (handshake era), boxed: the context methods at 2026-07-28 come back
/// through [`Ask::inline`], so the two futures would otherwise contain each other.
fn live<'a>(
    ctx: &'a RequestContext,
    request: &'a InputRequest,
) -> BoxFuture<'a, Result<InputResponse, ErrorObject>> {
    Box::pin(async move {
        Ok(match request {
            InputRequest::Elicit(_) => InputResponse::Elicit(ctx.ask_live(request).await?),
            InputRequest::CreateMessage(_) => {
                InputResponse::CreateMessage(ctx.ask_live(request).await?)
            }
            InputRequest::ListRoots(_) => InputResponse::ListRoots(ctx.ask_live(request).await?),
            _ => return Err(ErrorObject::internal_error("Internal error")),
        })
    })
}

impl fmt::Debug for Ask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ask")
            .field("target", &self.inner.target)
            .field("round", &self.inner.round)
            .finish_non_exhaustive()
    }
}
