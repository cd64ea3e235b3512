//! `subscriptions/listen` (2026-07-28, "Subscriptions"): one long-lived request over which the
//! server sends the list-changed and resource-updated notifications the client asked for.

use ferromcp_dispatch::HandlerError;
use ferromcp_types::jsonrpc::Payload;
use ferromcp_types::mcp::methods;
use ferromcp_types::mcp::{
    META_SUBSCRIPTION_ID, SubscriptionFilter, SubscriptionsListenRequestParams,
    SubscriptionsListenResult,
};
use serde_json::{Value, json};
use tokio::sync::broadcast::error::RecvError;

use crate::context::RequestContext;

/// What this server can send on a listen stream.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Offered {
    pub(crate) tools: bool,
    pub(crate) prompts: bool,
    pub(crate) resources: bool,
}

/// The part of the client's filter the server honours (the acknowledgment echoes it).
fn agree(asked: &SubscriptionFilter, offered: Offered) -> SubscriptionFilter {
    let on = |asked: Option<bool>, offered: bool| (asked == Some(true) && offered).then_some(true);
    let mut agreed = SubscriptionFilter::new();
    agreed.tools_list_changed = on(asked.tools_list_changed, offered.tools);
    agreed.prompts_list_changed = on(asked.prompts_list_changed, offered.prompts);
    agreed.resources_list_changed = on(asked.resources_list_changed, offered.resources);
    if offered.resources {
        agreed
            .resource_subscriptions
            .clone_from(&asked.resource_subscriptions);
    }
    agreed
}

/// Whether a change belongs on a stream with this filter.
fn wanted(filter: &SubscriptionFilter, method: &str, params: Option<&Value>) -> bool {
    match method {
        methods::NOTIFICATION_TOOLS_LIST_CHANGED => filter.tools_list_changed == Some(true),
        methods::NOTIFICATION_PROMPTS_LIST_CHANGED => filter.prompts_list_changed == Some(true),
        methods::NOTIFICATION_RESOURCES_LIST_CHANGED => filter.resources_list_changed == Some(true),
        methods::NOTIFICATION_RESOURCES_UPDATED => {
            let uri = params.and_then(|p| p.get("uri")).and_then(Value::as_str);
            match (uri, &filter.resource_subscriptions) {
                (Some(uri), Some(uris)) => uris.iter().any(|u| u == uri),
                _ => false,
            }
        }
        _ => false,
    }
}

/// Adds `_meta["io.modelcontextprotocol/subscriptionId"]` to notification params.
fn tagged(params: Option<Value>, id: &Value) -> Payload {
    let mut params = match params {
        Some(Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    };
    let meta = params.entry("_meta").or_insert_with(|| json!({}));
    if let Value::Object(meta) = meta {
        meta.insert(META_SUBSCRIPTION_ID.into(), id.clone());
    }
    Payload::from(params)
}

/// Serves one listen stream until the client cancels it or the connection closes; the
/// acknowledgment is the first message on it and every notification carries the
/// subscription id (the listen request's id). If the server stops the stream on its own, it
/// answers the request (graceful closure).
pub(crate) async fn listen(
    ctx: RequestContext,
    params: SubscriptionsListenRequestParams,
    offered: Offered,
    tasks: Option<std::sync::Arc<crate::tasks::Tasks>>,
) -> Result<SubscriptionsListenResult, HandlerError> {
    let id = ctx.request_id().map_or(Value::Null, |id| json!(id));
    let mut filter = agree(&params.notifications, offered);
    // The tasks extension: `notifications/tasks` for the requester's own tasks.
    let mut task_changes = match (&params.notifications.task_ids, &tasks) {
        (Some(ids), Some(tasks)) => {
            let subscription = tasks.listen(&ctx, ids).await?;
            filter.task_ids = Some(subscription.ids().to_vec());
            Some(subscription)
        }
        _ => None,
    };
    // Subscribe before acknowledging, so no change between the two is missed.
    let mut changes = ctx.server().subscribe_changes();
    let ack = json!({ "notifications": filter });
    let peer = ctx.peer();
    peer.notify(
        methods::NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED,
        Some(tagged(Some(ack), &id)),
    )
    .await;
    loop {
        tokio::select! {
            () = ctx.cancellation().cancelled() => break,
            Some(record) = crate::tasks::next_change(task_changes.as_mut()) => {
                peer
                    .notify(
                        methods::NOTIFICATION_TASKS,
                        Some(tagged(Some(crate::tasks::notification(&record)), &id)),
                    )
                    .await;
            }
            change = changes.recv() => match change {
                Ok((method, params)) => {
                    if wanted(&filter, method, params.as_ref()) {
                        peer.notify(method, Some(tagged(params, &id))).await;
                    }
                }
                Err(RecvError::Lagged(n)) => {
                    tracing::debug!(missed = n, "a slow listen stream missed change notifications");
                }
                Err(RecvError::Closed) => break,
            },
        }
    }
    let mut meta = ferromcp_types::mcp::Meta::new();
    meta.insert(META_SUBSCRIPTION_ID, id);
    Ok(SubscriptionsListenResult::new().with_meta(meta))
}
