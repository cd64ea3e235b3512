//! One round of a (possibly multi-round) request: open the sealed state, run the resolvers
//! concurrently, and either hand their outputs to the handler or answer with an
//! `InputRequiredResult`.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::AtomicU32;
use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock};
use std::task::Poll;
use std::time::SystemTime;

use ferromcp_dispatch::BoxFuture;
use ferromcp_types::jsonrpc::ErrorObject;
use ferromcp_types::mcp::{InputRequiredResult, InputResponse, InputResponses, MaybeInputRequired};
use serde::{Deserialize, Serialize};

use super::{Ask, AskInner, Erased, ResolveError, ResolvedValues, ResolverRef, lock};
use crate::context::RequestContext;
use crate::mcp_server::arguments::Arguments;
use crate::mcp_server::extract::{HandlerCall, StateMap};
use crate::request_state::{Binding, StateKey, StateSealer};

/// The state sealed into `requestState` between rounds.
#[derive(Serialize, Deserialize)]
struct Sealed {
    /// Format version.
    v: u8,
    /// Rounds issued so far.
    r: u32,
    /// Answers accepted so far, by key.
    a: BTreeMap<String, InputResponse>,
    /// Keys asked in the last round.
    p: Vec<String>,
}

const STATE_VERSION: u8 = 1;

/// The server's multi-round settings: the sealer and the round bound.
pub(crate) struct Rounds {
    sealer: RwLock<StateSealer>,
    max_rounds: u32,
}

impl Rounds {
    pub(crate) fn new(sealer: StateSealer, max_rounds: u32) -> Self {
        Self {
            sealer: RwLock::new(sealer),
            max_rounds: max_rounds.max(1),
        }
    }

    pub(crate) fn rotate(&self, key: StateKey) {
        self.sealer
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .rotate(key);
    }

    fn seal(&self, binding: &Binding, state: &Sealed) -> Result<String, ErrorObject> {
        let bytes =
            serde_json::to_vec(state).map_err(|_| ErrorObject::internal_error("Internal error"))?;
        self.sealer
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .seal(binding, &bytes, SystemTime::now())
            .map_err(|e| e.to_error_object())
    }

    fn open(&self, binding: &Binding, token: &str) -> Result<Sealed, ErrorObject> {
        let sealer = self.sealer.read().unwrap_or_else(PoisonError::into_inner);
        let bytes = sealer
            .open(token, binding, SystemTime::now())
            .map_err(|e| e.to_error_object())?;
        match serde_json::from_slice::<Sealed>(&bytes) {
            Ok(s) if s.v == STATE_VERSION => Ok(s),
            _ => Err(invalid_state()),
        }
    }
}

fn invalid_state() -> ErrorObject {
    ErrorObject::invalid_params(crate::request_state::INVALID_REQUEST_STATE_MESSAGE).with_data(
        serde_json::json!({ "reason": crate::request_state::INVALID_REQUEST_STATE_REASON }),
    )
}

/// What the client sent for this round.
pub(crate) struct Round {
    /// `tools/call`, `prompts/get` or `resources/read`.
    pub(crate) method: &'static str,
    /// Whether the state is bound to the arguments too (not for a resource: its URI, the
    /// target, holds its variables).
    pub(crate) bind_arguments: bool,
    pub(crate) input_responses: Option<InputResponses>,
    pub(crate) request_state: Option<String>,
}

/// Runs `handler` on `call` after the handler's resolvers, in both eras. Before 2026-07-28
/// without resolvers it is just `handler(call)`. At 2026-07-28 the handler's direct
/// questions ([`RequestContext::elicit_form`](crate::RequestContext::elicit_form) and the
/// like) are answered from the round's responses too, keyed by call order; if any question
/// is open when the handler returns, its result is dropped and the request answers with an
/// `InputRequiredResult`.
pub(crate) async fn serve<T>(
    rounds: &Rounds,
    mut call: HandlerCall,
    resolvers: &[ResolverRef],
    round: Round,
    handler: impl FnOnce(HandlerCall) -> BoxFuture<'static, Result<T, ErrorObject>>,
) -> Result<MaybeInputRequired<T>, ErrorObject> {
    let modern = call.ctx.protocol_version().is_modern();
    if !modern && resolvers.is_empty() {
        return handler(call).await.map(MaybeInputRequired::Complete);
    }
    // A first round without resolvers (no answers, no state): nothing is set up unless the
    // handler asks (most never do); its first question makes the round's asker (B67).
    if modern
        && resolvers.is_empty()
        && round.request_state.is_none()
        && round.input_responses.as_ref().is_none_or(|r| r.is_empty())
    {
        return serve_lazily(rounds, call, &round, handler).await;
    }
    let exchange = Exchange::open(rounds, &call, round)?;
    if !resolvers.is_empty() {
        match exchange.resolve(resolvers).await? {
            Some(values) => call.resolved = values,
            None => {
                return match exchange.finish(rounds)? {
                    Some(more) => Ok(MaybeInputRequired::InputRequired(more)),
                    None => {
                        tracing::error!(
                            target = %call.name,
                            "a resolver is pending without a question to the client"
                        );
                        Err(ErrorObject::internal_error("Internal error"))
                    }
                };
            }
        }
    }
    if !modern {
        return handler(call).await.map(MaybeInputRequired::Complete);
    }
    call.ctx = call.ctx.with_extension(exchange.ask.clone());
    let result = handler(call).await;
    match exchange.finish(rounds)? {
        Some(more) => Ok(MaybeInputRequired::InputRequired(more)),
        None => result.map(MaybeInputRequired::Complete),
    }
}

/// [`serve`]'s fast path at 2026-07-28: the handler runs with a [`LazyAsk`]; the answer is
/// the handler's result unless it asked a question, then the same `InputRequiredResult` the
/// full path would have made (round 0, the same binding).
async fn serve_lazily<T>(
    rounds: &Rounds,
    mut call: HandlerCall,
    round: &Round,
    handler: impl FnOnce(HandlerCall) -> BoxFuture<'static, Result<T, ErrorObject>>,
) -> Result<MaybeInputRequired<T>, ErrorObject> {
    let lazy = LazyAsk(Arc::new(LazySeed {
        target: call.name.clone(),
        arguments: call.arguments.clone(),
        state: call.state.clone(),
        ask: OnceLock::new(),
    }));
    call.ctx = call.ctx.with_extension(lazy.clone());
    let result = handler(call).await;
    let Some(ask) = lazy.0.ask.get() else {
        return result.map(MaybeInputRequired::Complete);
    };
    let exchange = Exchange {
        binding: BindingSource {
            method: round.method,
            target: lazy.0.target.clone(),
            arguments: round.bind_arguments.then(|| lazy.0.arguments.clone()),
            principal: ask.inner.ctx.caller_id().map(|caller| caller.0.clone()),
            built: OnceLock::new(),
        },
        ask: ask.clone(),
        done: 0,
    };
    match exchange.finish(rounds)? {
        Some(more) => Ok(MaybeInputRequired::InputRequired(more)),
        None => result.map(MaybeInputRequired::Complete),
    }
}

/// The asker of a 2026-07-28 first round whose handler has no resolvers, made only when the
/// handler asks its first question (through a [`RequestContext`] method), as
/// [`Exchange::open`] makes it for a round without answers or state.
#[derive(Clone)]
pub(crate) struct LazyAsk(Arc<LazySeed>);

struct LazySeed {
    target: String,
    arguments: Arc<Arguments>,
    state: Arc<StateMap>,
    ask: OnceLock<Ask>,
}

impl LazyAsk {
    /// The round's asker; `ctx` is the handler's context (the one carrying this).
    pub(crate) fn get(&self, ctx: &RequestContext) -> &Ask {
        self.0.ask.get_or_init(|| {
            let mut ctx = ctx.clone();
            // The asker's context is the request's without this (as the full path's): holding
            // itself, the asker would never be freed.
            ctx.extensions_mut().remove::<LazyAsk>();
            Ask {
                inner: Arc::new(AskInner {
                    ctx,
                    target: self.0.target.clone(),
                    arguments: self.0.arguments.clone(),
                    state: self.0.state.clone(),
                    round: 0,
                    live: false,
                    answers: Mutex::new(BTreeMap::new()),
                    offered: BTreeMap::new(),
                    questions: Mutex::new(BTreeMap::new()),
                    memo: Mutex::new(HashMap::new()),
                    inline_calls: AtomicU32::new(0),
                }),
                chain: Vec::new(),
            }
        })
    }
}

/// The authenticated caller, when an authentication layer in front of the HTTP service
/// recorded one: a state issued to one principal does not open for another.
fn principal(call: &HandlerCall) -> Option<String> {
    call.ctx.caller_id().map(|caller| caller.0.clone())
}

/// One request's questions and answers.
struct Exchange {
    ask: Ask,
    /// What the state is bound to (computed when a state is opened or sealed).
    binding: BindingSource,
    done: u32,
}

/// The binding of a round's state, computed at most once and only when needed (the
/// arguments digest costs a pass over the arguments).
struct BindingSource {
    method: &'static str,
    target: String,
    arguments: Option<Arc<Arguments>>,
    principal: Option<String>,
    built: std::sync::OnceLock<Binding>,
}

impl BindingSource {
    fn get(&self) -> &Binding {
        self.built.get_or_init(|| {
            let arguments = self.arguments.as_deref().map(Arguments::value);
            let binding = Binding::new(self.method, self.target.clone(), arguments);
            match &self.principal {
                Some(p) => binding.with_principal(p.clone()),
                None => binding,
            }
        })
    }
}

impl Exchange {
    /// Opens the round: at 2026-07-28, checks and opens the state the client echoed.
    fn open(rounds: &Rounds, call: &HandlerCall, round: Round) -> Result<Self, ErrorObject> {
        let live = !call.ctx.protocol_version().is_modern();
        let binding = BindingSource {
            method: round.method,
            target: call.name.clone(),
            arguments: round.bind_arguments.then(|| call.arguments.clone()),
            principal: principal(call),
            built: std::sync::OnceLock::new(),
        };
        let previous = match (&round.request_state, live) {
            (_, true) => None,
            (Some(token), false) => Some(rounds.open(binding.get(), token)?),
            (None, false) => None,
        };
        let bound = previous.is_some();
        let (done, answers, pending) =
            previous.map_or((0, BTreeMap::new(), Vec::new()), |s| (s.r, s.a, s.p));
        let mut offered = round.input_responses.unwrap_or_default();
        // With a state, only answers to the keys its round asked count. Without one (a first
        // round that already carries answers: MRTR "Error Handling" SHOULDs), the answers are
        // offered to this round's questions by key; unknown keys are ignored and missing ones
        // asked. Nothing is lost by trusting them: the client is the one who answers anyway,
        // and the sealed state protects only what earlier rounds gathered.
        if bound {
            offered.retain(|key, _| pending.contains(key));
        }
        let arguments = call.arguments.clone();
        let ask = Ask {
            inner: Arc::new(AskInner {
                ctx: call.ctx.clone(),
                target: call.name.clone(),
                arguments,
                state: call.state.clone(),
                round: done,
                live,
                answers: Mutex::new(answers),
                offered,
                questions: Mutex::new(BTreeMap::new()),
                memo: Mutex::new(HashMap::new()),
                inline_calls: AtomicU32::new(0),
            }),
            chain: Vec::new(),
        };
        Ok(Self { ask, binding, done })
    }

    /// Runs the resolvers concurrently: their values, or `None` if a question is open.
    async fn resolve(
        &self,
        resolvers: &[ResolverRef],
    ) -> Result<Option<ResolvedValues>, ErrorObject> {
        let results = join_all(resolvers.iter().map(|r| (r.run)(&self.ask)).collect()).await;
        let mut values = HashMap::with_capacity(resolvers.len());
        let mut waiting = false;
        for (r, result) in resolvers.iter().zip(results) {
            match result {
                Ok(v) => {
                    values.insert(r.id, v);
                }
                Err(ResolveError::Pending) => waiting = true,
                Err(ResolveError::Error(e)) => return Err(e),
            }
        }
        Ok((!waiting).then(|| ResolvedValues(values)))
    }

    /// The `InputRequiredResult` for the open questions, if any (never before 2026-07-28).
    fn finish(self, rounds: &Rounds) -> Result<Option<InputRequiredResult>, ErrorObject> {
        let questions = std::mem::take(&mut *lock(&self.ask.inner.questions));
        if self.ask.inner.live || questions.is_empty() {
            return Ok(None);
        }
        if self.done >= rounds.max_rounds {
            return Err(ErrorObject::invalid_params(format!(
                "too many rounds of input (at most {})",
                rounds.max_rounds
            )));
        }
        let next = Sealed {
            v: STATE_VERSION,
            r: self.done + 1,
            a: std::mem::take(&mut *lock(&self.ask.inner.answers)),
            p: questions.keys().cloned().collect(),
        };
        let token = rounds.seal(self.binding.get(), &next)?;
        let result = InputRequiredResult::new()
            .with_input_requests(questions)
            .with_request_state(token);
        Ok(Some(result))
    }
}

type Run<'a> = Pin<Box<dyn Future<Output = Result<Erased, ResolveError>> + Send + 'a>>;

/// Polls every future until all are done; results in order.
async fn join_all(mut futures: Vec<Run<'_>>) -> Vec<Result<Erased, ResolveError>> {
    let mut results: Vec<Option<Result<Erased, ResolveError>>> =
        futures.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut open = false;
        for (fut, slot) in futures.iter_mut().zip(results.iter_mut()) {
            if slot.is_some() {
                continue;
            }
            match fut.as_mut().poll(cx) {
                Poll::Ready(r) => *slot = Some(r),
                Poll::Pending => open = true,
            }
        }
        if open { Poll::Pending } else { Poll::Ready(()) }
    })
    .await;
    results
        .into_iter()
        .map(|r| r.unwrap_or(Err(ResolveError::Pending)))
        .collect()
}
