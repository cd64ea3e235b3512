//! Handlers for what the server asks of the client: sampling, elicitation and roots requests
//! (server→client requests in the handshake era, input requests of the multi-round driver at
//! 2026-07-28), and the server's notifications.
//!
//! Each handler is a trait with a blanket implementation for async closures, so the builder
//! takes either a closure or a trait object.

use std::collections::BTreeMap;
use std::future::Future;
use std::ops::ControlFlow;
use std::sync::{Arc, Mutex};

use ferromcp_dispatch::{BoxFuture, DispatchContext, Handler, HandlerError, IdCallback};
use ferromcp_types::jsonrpc::{ErrorObject, Payload, RequestId};
use ferromcp_types::mcp::methods;
use ferromcp_types::mcp::{
    ClientCapabilities, CreateMessageRequestParams, CreateMessageResult, ElicitAction,
    ElicitRequestParams, ElicitResult, ElicitValue, ElicitationCapability,
    ElicitationCompleteNotificationParams, EmptyResult, InputRequest, InputResponse, JsonObject,
    ListRootsResult, LoggingMessageNotificationParams, RequestParams, ResourceUriParams,
    RootsCapability, SamplingCapability,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::cache::ResponseCache;
use crate::client::lock;
use crate::options::LogCallback;

/// Answers `sampling/createMessage`.
pub trait SamplingHandler: Send + Sync + 'static {
    /// Samples a message from the host's model.
    fn create_message(
        &self,
        params: CreateMessageRequestParams,
    ) -> BoxFuture<'static, Result<CreateMessageResult, ErrorObject>>;
}

impl<F, Fut> SamplingHandler for F
where
    F: Fn(CreateMessageRequestParams) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<CreateMessageResult, ErrorObject>> + Send + 'static,
{
    fn create_message(
        &self,
        params: CreateMessageRequestParams,
    ) -> BoxFuture<'static, Result<CreateMessageResult, ErrorObject>> {
        Box::pin(self(params))
    }
}

/// Answers `elicitation/create` (form and URL mode).
///
/// In form mode, the schema's `default`s fill in the fields an accepted response left out.
pub trait ElicitationHandler: Send + Sync + 'static {
    /// Asks the user.
    fn elicit(
        &self,
        params: ElicitRequestParams,
    ) -> BoxFuture<'static, Result<ElicitResult, ErrorObject>>;
}

impl<F, Fut> ElicitationHandler for F
where
    F: Fn(ElicitRequestParams) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ElicitResult, ErrorObject>> + Send + 'static,
{
    fn elicit(
        &self,
        params: ElicitRequestParams,
    ) -> BoxFuture<'static, Result<ElicitResult, ErrorObject>> {
        Box::pin(self(params))
    }
}

/// Answers `roots/list`.
pub trait RootsHandler: Send + Sync + 'static {
    /// The client's roots.
    fn list_roots(&self) -> BoxFuture<'static, Result<ListRootsResult, ErrorObject>>;
}

impl<F, Fut> RootsHandler for F
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ListRootsResult, ErrorObject>> + Send + 'static,
{
    fn list_roots(&self) -> BoxFuture<'static, Result<ListRootsResult, ErrorObject>> {
        Box::pin(self())
    }
}

/// A notification from the server, typed.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ServerNotification {
    /// `notifications/message`.
    Logging(LoggingMessageNotificationParams),
    /// `notifications/tools/list_changed`.
    ToolListChanged,
    /// `notifications/prompts/list_changed`.
    PromptListChanged,
    /// `notifications/resources/list_changed`.
    ResourceListChanged,
    /// `notifications/resources/updated`, with the resource's URI.
    ResourceUpdated(String),
    /// `notifications/elicitation/complete`, with the elicitation id.
    ElicitationComplete(String),
    /// Any other notification (progress and cancellation are handled by the dispatcher).
    Other {
        /// The method.
        method: String,
        /// The params.
        params: Option<Value>,
    },
}

/// Receives the server's notifications. Progress is not among them: it goes to the callback
/// of the call it belongs to.
pub trait NotificationHandler: Send + Sync + 'static {
    /// Handles one notification.
    fn on_notification(&self, notification: ServerNotification) -> BoxFuture<'static, ()>;
}

impl<F, Fut> NotificationHandler for F
where
    F: Fn(ServerNotification) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    fn on_notification(&self, notification: ServerNotification) -> BoxFuture<'static, ()> {
        Box::pin(self(notification))
    }
}

/// The handlers a client was built with.
#[derive(Default)]
pub(crate) struct Handlers {
    pub(crate) sampling: Option<Arc<dyn SamplingHandler>>,
    pub(crate) elicitation: Option<Arc<dyn ElicitationHandler>>,
    pub(crate) elicitation_modes: (bool, bool),
    pub(crate) roots: Option<Arc<dyn RootsHandler>>,
    pub(crate) notifications: Vec<Arc<dyn NotificationHandler>>,
    /// Tasks: the tools' declared task support, the waiters status notifications wake.
    pub(crate) tasks: Arc<crate::tasks::TaskRuntime>,
    /// The open change subscriptions (`crate::listen`), routed from the notifications.
    pub(crate) listeners: Arc<crate::listen::Registry>,
}

/// Routes the log records related to one outbound request to its
/// [`RequestOptions::on_log`](crate::RequestOptions::on_log) callback, from the moment the
/// request has its id until this is dropped (the call ended).
pub(crate) struct LogRoute {
    handlers: Arc<Handlers>,
    callback: LogCallback,
    id: Arc<Mutex<Option<RequestId>>>,
}

impl LogRoute {
    pub(crate) fn new(handlers: &Arc<Handlers>, callback: LogCallback) -> Self {
        Self {
            handlers: handlers.clone(),
            callback,
            id: Arc::default(),
        }
    }

    /// The dispatcher's id callback that registers the route (then calls `then`, if any).
    pub(crate) fn on_id(&self, then: Option<IdCallback>) -> IdCallback {
        let (handlers, callback, slot) = (
            self.handlers.clone(),
            self.callback.clone(),
            self.id.clone(),
        );
        Arc::new(move |id: &RequestId| {
            lock(&handlers.listeners.request_logs).insert(id.clone(), callback.clone());
            *lock(&slot) = Some(id.clone());
            if let Some(then) = &then {
                then(id);
            }
        })
    }
}

impl Drop for LogRoute {
    fn drop(&mut self) {
        if let Some(id) = lock(&self.id).take() {
            lock(&self.handlers.listeners.request_logs).remove(&id);
        }
    }
}

impl Handlers {
    /// The client capabilities the set handlers stand for.
    pub(crate) fn capabilities(&self) -> ClientCapabilities {
        let mut caps = ClientCapabilities::new();
        if self.sampling.is_some() {
            caps.sampling = Some(SamplingCapability::new());
        }
        if self.elicitation.is_some() {
            let (form, url) = self.elicitation_modes;
            let mut e = ElicitationCapability::new();
            e.form = form.then(JsonObject::new);
            e.url = url.then(JsonObject::new);
            caps.elicitation = Some(e);
        }
        if self.roots.is_some() {
            caps.roots = Some(RootsCapability::new().with_list_changed(true));
        }
        caps
    }

    /// Answers one input request (2026-07-28 multi-round) with the same handlers as the
    /// handshake-era server→client requests.
    pub(crate) async fn answer(&self, request: InputRequest) -> Result<InputResponse, ErrorObject> {
        match request {
            InputRequest::CreateMessage(p) => self.sample(p).await.map(InputResponse::from),
            InputRequest::Elicit(p) => self.elicit(p).await.map(InputResponse::from),
            InputRequest::ListRoots(_) => self.list_roots().await.map(InputResponse::from),
            other => Err(ErrorObject::method_not_found(other.method())),
        }
    }

    async fn sample(
        &self,
        p: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, ErrorObject> {
        match &self.sampling {
            Some(h) => h.create_message(p).await,
            None => Err(ErrorObject::method_not_found(
                methods::SAMPLING_CREATE_MESSAGE,
            )),
        }
    }

    async fn elicit(&self, p: ElicitRequestParams) -> Result<ElicitResult, ErrorObject> {
        let Some(h) = &self.elicitation else {
            return Err(ErrorObject::method_not_found(methods::ELICITATION_CREATE));
        };
        let defaults = match &p {
            ElicitRequestParams::Form(form) => schema_defaults(&form.requested_schema),
            _ => BTreeMap::new(),
        };
        let mut result = h.elicit(p).await?;
        if result.action == ElicitAction::Accept && !defaults.is_empty() {
            let content = result.content.get_or_insert_with(BTreeMap::new);
            for (key, value) in defaults {
                content.entry(key).or_insert(value);
            }
        }
        Ok(result)
    }

    async fn list_roots(&self) -> Result<ListRootsResult, ErrorObject> {
        match &self.roots {
            Some(h) => h.list_roots().await,
            None => Err(ErrorObject::method_not_found(methods::ROOTS_LIST)),
        }
    }
}

/// The `default` of each property of a form's schema that has one.
fn schema_defaults(
    schema: &ferromcp_types::mcp::ElicitationSchema,
) -> BTreeMap<String, ElicitValue> {
    schema
        .properties
        .iter()
        .filter_map(|(name, def)| {
            let value = serde_json::to_value(def).ok()?;
            let default = value.get("default")?.clone();
            let default = serde_json::from_value::<ElicitValue>(default).ok()?;
            Some((name.clone(), default))
        })
        .collect()
}

/// The client as the dispatcher's [`Handler`]: answers the server's requests with the
/// handlers, evicts cache entries on change notifications, and hands notifications on.
pub(crate) struct ClientHandler {
    pub(crate) handlers: Arc<Handlers>,
    pub(crate) cache: Arc<ResponseCache>,
}

fn parse<P: DeserializeOwned>(params: Option<Payload>) -> Result<P, HandlerError> {
    match params {
        Some(p) => p.parse().map_err(HandlerError::invalid_params),
        None => serde_json::from_value(Value::Object(JsonObject::new()))
            .map_err(HandlerError::invalid_params),
    }
}

fn answer<T: Serialize>(r: Result<T, ErrorObject>) -> Result<Payload, HandlerError> {
    let value = r?;
    Payload::from_serialize(&value).map_err(HandlerError::internal)
}

/// A handler's answer as JSON (what a hosted task keeps for `tasks/result`).
fn to_json<T: Serialize>(r: Result<T, ErrorObject>) -> Result<Value, ErrorObject> {
    serde_json::to_value(r?).map_err(|_| ErrorObject::internal_error("Internal error"))
}

impl Handler for ClientHandler {
    fn on_request(
        self: Arc<Self>,
        ctx: DispatchContext,
        method: String,
        params: Option<Payload>,
    ) -> BoxFuture<'static, Result<Payload, HandlerError>> {
        let h = self.handlers.clone();
        Box::pin(async move {
            match method.as_str() {
                methods::PING => answer(Ok(EmptyResult::new())),
                methods::SAMPLING_CREATE_MESSAGE if h.sampling.is_some() => {
                    let p: CreateMessageRequestParams = parse(params)?;
                    // Task-augmented, and hosted: a task (crate::hosted_tasks); otherwise
                    // `params.task` is ignored (Tasks › Behavior Requirements).
                    if let (Some(hosted), Some(task)) =
                        (h.tasks.hosted.get().cloned(), p.task.clone())
                    {
                        let work = async move { to_json(h.sample(p).await) };
                        return hosted.start(&method, &task, work);
                    }
                    answer(h.sample(p).await)
                }
                methods::ELICITATION_CREATE if h.elicitation.is_some() => {
                    let p: ElicitRequestParams = parse(params)?;
                    let task = match &p {
                        ElicitRequestParams::Form(f) => f.task.clone(),
                        ElicitRequestParams::Url(u) => u.task.clone(),
                        _ => None,
                    };
                    if let (Some(hosted), Some(task)) = (h.tasks.hosted.get().cloned(), task) {
                        let work = async move { to_json(h.elicit(p).await) };
                        return hosted.start(&method, &task, work);
                    }
                    answer(h.elicit(p).await)
                }
                methods::TASKS_GET
                | methods::TASKS_RESULT
                | methods::TASKS_LIST
                | methods::TASKS_CANCEL
                    if h.tasks.hosted.get().is_some() =>
                {
                    match h.tasks.hosted.get() {
                        Some(hosted) => hosted.serve(&ctx, &method, params).await,
                        None => Err(ErrorObject::method_not_found(&method).into()),
                    }
                }
                methods::ROOTS_LIST if h.roots.is_some() => {
                    let _: RequestParams = parse(params)?;
                    answer(h.list_roots().await)
                }
                // No handler for it: the method does not exist here (not -32600).
                _ => Err(ErrorObject::method_not_found(&method).into()),
            }
        })
    }

    fn on_notify(
        self: Arc<Self>,
        _ctx: DispatchContext,
        method: String,
        params: Option<Payload>,
    ) -> BoxFuture<'static, ()> {
        let h = self.handlers.clone();
        Box::pin(async move {
            if h.notifications.is_empty() {
                return;
            }
            let Some(notification) = typed_notification(method, params) else {
                return;
            };
            for handler in &h.notifications {
                handler.on_notification(notification.clone()).await;
            }
        })
    }

    /// A log record related to a request with an `on_log` callback goes to that callback.
    fn intercept_related_notification(
        &self,
        method: &str,
        params: Option<&Payload>,
        related: Option<&RequestId>,
    ) -> ControlFlow<()> {
        if let (methods::NOTIFICATION_MESSAGE, Some(id)) = (method, related) {
            let route = lock(&self.handlers.listeners.request_logs).get(id).cloned();
            let log = route.as_ref().and_then(|_| params?.parse().ok());
            if let (Some(route), Some(log)) = (route, log) {
                route(log);
                return ControlFlow::Break(());
            }
        }
        self.intercept_notification(method, params)
    }

    fn intercept_notification(&self, method: &str, params: Option<&Payload>) -> ControlFlow<()> {
        if method == methods::NOTIFICATION_TASKS_STATUS || method == methods::NOTIFICATION_TASKS {
            self.handlers.tasks.on_status_notification(params);
        }
        // Evict in arrival order, before any later response is read.
        match method {
            methods::NOTIFICATION_TOOLS_LIST_CHANGED => self.cache.evict_list(methods::TOOLS_LIST),
            methods::NOTIFICATION_PROMPTS_LIST_CHANGED => {
                self.cache.evict_list(methods::PROMPTS_LIST);
            }
            methods::NOTIFICATION_RESOURCES_LIST_CHANGED => {
                self.cache.evict_list(methods::RESOURCES_LIST);
                self.cache.evict_list(methods::RESOURCES_TEMPLATES_LIST);
            }
            methods::NOTIFICATION_RESOURCES_UPDATED => {
                if let Some(p) = params.and_then(|p| p.parse::<ResourceUriParams>().ok()) {
                    self.cache.evict(methods::RESOURCES_READ, &p.uri);
                }
            }
            _ => {}
        }
        // Then to the change subscriptions (which consume their acknowledgments).
        self.handlers.listeners.route(method, params, &self.cache)
    }
}

/// Types a notification; `None` for the ones the dispatcher consumes or that do not decode.
fn typed_notification(method: String, params: Option<Payload>) -> Option<ServerNotification> {
    let typed = match method.as_str() {
        methods::NOTIFICATION_PROGRESS | methods::NOTIFICATION_CANCELLED => return None,
        methods::NOTIFICATION_MESSAGE => ServerNotification::Logging(parse(params).ok()?),
        methods::NOTIFICATION_TOOLS_LIST_CHANGED => ServerNotification::ToolListChanged,
        methods::NOTIFICATION_PROMPTS_LIST_CHANGED => ServerNotification::PromptListChanged,
        methods::NOTIFICATION_RESOURCES_LIST_CHANGED => ServerNotification::ResourceListChanged,
        methods::NOTIFICATION_RESOURCES_UPDATED => {
            ServerNotification::ResourceUpdated(parse::<ResourceUriParams>(params).ok()?.uri)
        }
        methods::NOTIFICATION_ELICITATION_COMPLETE => ServerNotification::ElicitationComplete(
            parse::<ElicitationCompleteNotificationParams>(params)
                .ok()?
                .elicitation_id,
        ),
        _ => ServerNotification::Other {
            method,
            params: params.and_then(|p| p.into_value().ok()),
        },
    };
    Some(typed)
}
