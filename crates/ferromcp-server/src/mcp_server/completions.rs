//! Completions for prompt arguments and resource-template variables: `completion/complete`.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::{Arc, PoisonError, RwLock};

use ferromcp_dispatch::BoxFuture;
use ferromcp_types::mcp::{CompleteRequestParams, CompleteResult, Completion, CompletionReference};

/// The most values one completion result carries (MCP "Completion": at most 100).
pub const MAX_COMPLETION_VALUES: usize = 100;

/// What a completion function is asked.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CompletionRequest {
    /// The argument or variable being completed.
    pub argument: String,
    /// What the user has typed so far.
    pub value: String,
    /// Values of the other arguments or variables already resolved.
    pub context: BTreeMap<String, String>,
}

type CompleteFn = dyn Fn(CompletionRequest) -> BoxFuture<'static, Vec<String>> + Send + Sync;

/// Which reference a completion function answers for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Target {
    Prompt(String),
    Template(String),
}

/// Completion functions by (reference, argument), changeable at run time.
#[derive(Default)]
pub(crate) struct Completions {
    by_target: RwLock<HashMap<(Target, String), Arc<CompleteFn>>>,
}

impl Completions {
    pub(crate) fn insert<F, Fut>(&self, target: Target, argument: String, f: F)
    where
        F: Fn(CompletionRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Vec<String>> + Send + 'static,
    {
        self.by_target
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert((target, argument), Arc::new(move |r| Box::pin(f(r))));
    }

    /// Removes every completion function of `target`.
    pub(crate) fn remove_target(&self, target: &Target) {
        self.by_target
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|(t, _), _| t != target);
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.by_target
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .is_empty()
    }

    /// Answers `completion/complete`; an unknown reference or argument completes to nothing.
    pub(crate) async fn complete(&self, params: CompleteRequestParams) -> CompleteResult {
        let target = match &params.reference {
            CompletionReference::Prompt(p) => Target::Prompt(p.name.clone()),
            CompletionReference::Resource(r) => Target::Template(r.uri.clone()),
            _ => return CompleteResult::new(Completion::new(Vec::new())),
        };
        let key = (target, params.argument.name.clone());
        let found = self
            .by_target
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&key)
            .cloned();
        let Some(f) = found else {
            return CompleteResult::new(Completion::new(Vec::new()));
        };
        let request = CompletionRequest {
            argument: params.argument.name,
            value: params.argument.value,
            context: params.context.and_then(|c| c.arguments).unwrap_or_default(),
        };
        let mut values = f(request).await;
        let total = values.len();
        values.truncate(MAX_COMPLETION_VALUES);
        let mut completion = Completion::new(values);
        if total > MAX_COMPLETION_VALUES {
            completion.total = Some(total as u64);
            completion.has_more = Some(true);
        }
        CompleteResult::new(completion)
    }
}
