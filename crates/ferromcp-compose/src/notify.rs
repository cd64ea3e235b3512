//! A mount in step with its backend: list changes relisted and applied to the front, resource
//! updates forwarded under the front URI, log records with no relation to a request to the
//! one request in flight, or else to the front sessions.

use std::collections::BTreeSet;
use std::sync::{Arc, Weak};

use ferromcp_client::ServerNotification;
use ferromcp_server::McpServer;

use crate::mount::{Kind, Mount, lock};
use crate::naming::{front_name, front_uri};
use crate::report::front_logger;

impl Mount {
    pub(crate) async fn on_notification(self: Arc<Self>, n: ServerNotification) {
        let Some(front) = self.front.get() else {
            return;
        };
        if self.is_gone() {
            return;
        }
        match n {
            ServerNotification::ToolListChanged
            | ServerNotification::PromptListChanged
            | ServerNotification::ResourceListChanged => {
                // Not inline: the listing is a request on the connection this notification
                // arrived on.
                let this = self.clone();
                tokio::spawn(async move { this.refresh(&n).await });
            }
            ServerNotification::ResourceUpdated(uri) => {
                front.notify_resource_updated(&front_uri(self.name(), &uri));
            }
            ServerNotification::Logging(log) => {
                // A record related to a forwarded request went to it (crate::report); this one
                // came with no relation: to the one request in flight, else (none, or several
                // whose records cannot be told apart) to the front sessions.
                let logger = front_logger(self.name(), &log);
                match self.route.inflight.sole(self.name(), "a log record") {
                    Ok(ctx) => ctx.log(log.level, Some(&logger), log.data).await,
                    Err(_) => {
                        if let Some(levels) = self.log_levels.get().and_then(Weak::upgrade) {
                            levels.send_unrelated(log.level, &logger, &log.data).await;
                        }
                    }
                }
            }
            _ => {}
        }
    }

    /// Lists the kind that changed again and brings the front in step: names gone are
    /// removed, new ones added unless another mount has them (then left out, with a warning).
    async fn refresh(self: &Arc<Self>, change: &ServerNotification) {
        let Some(front) = self.front.get() else {
            return;
        };
        if self.is_gone() {
            return;
        }
        let client = self.client();
        let m = self.name().clone();
        match change {
            ServerNotification::ToolListChanged => match client.list_all_tools().await {
                Ok(mut tools) => {
                    if let Some(keep) = &self.tool_filter {
                        tools.retain(|t| keep(&t.name));
                    }
                    let fresh =
                        self.sync(Kind::Tool, tools.iter().map(|t| front_name(&m, &t.name)));
                    for old in fresh.removed {
                        front.remove_tool(&old);
                    }
                    for tool in tools
                        .iter()
                        .filter(|t| fresh.kept.contains(&front_name(&m, &t.name)))
                    {
                        let (spec, handler) = self.tool(tool);
                        if let Err(e) = front.add_tool(spec, handler) {
                            tracing::warn!(mount = %m, error = %e, "backend tool left out");
                        }
                    }
                }
                Err(e) => tracing::warn!(mount = %m, error = %e, "relisting tools failed"),
            },
            ServerNotification::PromptListChanged => match client.list_all_prompts().await {
                Ok(prompts) => {
                    let fresh = self.sync(
                        Kind::Prompt,
                        prompts.iter().map(|p| front_name(&m, &p.name)),
                    );
                    for old in fresh.removed {
                        front.remove_prompt(&old);
                    }
                    for p in prompts
                        .iter()
                        .filter(|p| fresh.kept.contains(&front_name(&m, &p.name)))
                    {
                        self.add_prompt_live(front, p);
                    }
                }
                Err(e) => tracing::warn!(mount = %m, error = %e, "relisting prompts failed"),
            },
            ServerNotification::ResourceListChanged => {
                // The templates too: a resource list change covers them.
                self.refresh_templates(front).await;
                self.refresh_resources(front).await;
            }
            _ => {}
        }
    }

    /// Relists the backend's resources and brings the front in step.
    async fn refresh_resources(self: &Arc<Self>, front: &McpServer) {
        let m = self.name().clone();
        match self.client().list_all_resources().await {
            Ok(resources) => {
                let fresh = self.sync(
                    Kind::Resource,
                    resources.iter().map(|r| front_uri(&m, &r.uri)),
                );
                for old in fresh.removed {
                    front.remove_resource(&old);
                }
                for r in resources
                    .iter()
                    .filter(|r| fresh.kept.contains(&front_uri(&m, &r.uri)))
                {
                    let (spec, handler) = self.resource(r);
                    front.add_resource(spec, handler);
                }
            }
            Err(e) => tracing::warn!(mount = %m, error = %e, "relisting resources failed"),
        }
    }

    /// Relists the backend's resource templates and brings the front in step (their
    /// completions with them).
    async fn refresh_templates(self: &Arc<Self>, front: &McpServer) {
        let m = self.name().clone();
        match self.client().list_all_resource_templates().await {
            Ok(templates) => {
                let fresh = self.sync(
                    Kind::Template,
                    templates.iter().map(|t| front_uri(&m, &t.uri_template)),
                );
                for old in fresh.removed {
                    front.remove_resource_template(&old);
                }
                for t in templates
                    .iter()
                    .filter(|t| fresh.kept.contains(&front_uri(&m, &t.uri_template)))
                {
                    self.add_template_live(front, t);
                }
            }
            Err(e) => tracing::warn!(mount = %m, error = %e, "relisting resource templates failed"),
        }
    }

    /// Updates this mount's names of `kind` to `names`: what it no longer has is released,
    /// what it can claim is kept.
    fn sync(&self, kind: Kind, names: impl Iterator<Item = String>) -> Synced {
        let m = self.name();
        let mut mine = lock(&self.mine);
        let current = mine.entry(kind).or_default();
        let wanted: BTreeSet<String> = names.collect();
        let removed: Vec<String> = current.difference(&wanted).cloned().collect();
        for name in &removed {
            self.owners.release(kind, name);
            current.remove(name);
        }
        let mut kept = BTreeSet::new();
        for name in wanted {
            match self.owners.claim(kind, &name, m) {
                Ok(()) => {
                    current.insert(name.clone());
                    kept.insert(name);
                }
                Err(owner) => tracing::warn!(
                    mount = %m, name, owner = %owner,
                    "a {} the backend added conflicts with another mount's; left out",
                    kind.as_str()
                ),
            }
        }
        Synced { removed, kept }
    }
}

/// What [`Mount::sync`] decided.
struct Synced {
    removed: Vec<String>,
    kept: BTreeSet<String>,
}
