//! Issue 17 point 5 names three deprecations a registration warns about: logging, roots and
//! client progress (B89). MCP 2026-07-28's `ClientNotification` lists only
//! `notifications/cancelled`, so a server-side handler for the client's
//! `notifications/progress` serves handshake-era clients only: registering one warns, by name
//! and through the typed entry points (`on::<R>`, `on_notification::<N>`) as through the
//! method names; `notifications/cancelled` and `tools/call` do not warn.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::sync::{Arc, Mutex};

use ferromcp_dispatch::HandlerError;
use ferromcp_server::{RequestContext, Server};
use ferromcp_types::mcp::methods::{CallTool, Cancelled, Progress, RootsListChanged, SetLevel};
use ferromcp_types::mcp::{
    CallToolRequestParams, CallToolResult, CancelledNotificationParams, EmptyResult,
    NotificationParams, ProgressNotificationParams, SetLevelRequestParams,
};
use serde_json::Value;
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, SubscriberExt};

/// The `method` field of every WARN event.
#[derive(Clone, Default)]
struct Warnings(Arc<Mutex<Vec<String>>>);

struct MethodField(Option<String>);

impl Visit for MethodField {
    fn record_debug(&mut self, _: &Field, _: &dyn std::fmt::Debug) {}
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "method" {
            self.0 = Some(value.to_owned());
        }
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Warnings {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        if *event.metadata().level() == tracing::Level::WARN {
            let mut v = MethodField(None);
            event.record(&mut v);
            self.0.lock().unwrap().push(v.0.unwrap_or_default());
        }
    }
}

/// B89: client progress, logging and roots warn through every way of registering them.
#[test]
fn b89_client_progress_logging_and_roots_warn_through_the_typed_entry_points_too() {
    let warnings = Warnings::default();
    let subscriber = tracing_subscriber::registry().with(warnings.clone());
    tracing::subscriber::with_default(subscriber, || {
        let _ = Server::builder("deprecations", "1")
            .on_notification::<Progress, _, _>(
                |_: RequestContext, _: ProgressNotificationParams| async { Ok(()) },
            )
            .on_notification_method(
                "notifications/progress",
                |_: RequestContext, _: Value| async { Ok(()) },
            )
            .on::<SetLevel, _, _, _>(|_: RequestContext, _: SetLevelRequestParams| async {
                Ok::<_, HandlerError>(EmptyResult::new())
            })
            .on_notification::<RootsListChanged, _, _>(
                |_: RequestContext, _: NotificationParams| async { Ok(()) },
            )
            .on_notification::<Cancelled, _, _>(
                |_: RequestContext, _: CancelledNotificationParams| async { Ok(()) },
            )
            .on::<CallTool, _, _, _>(|_: RequestContext, _: CallToolRequestParams| async {
                Ok::<_, HandlerError>(CallToolResult::text("ok"))
            })
            .build();
    });
    assert_eq!(
        *warnings.0.lock().unwrap(),
        [
            "notifications/progress",
            "notifications/progress",
            "logging/setLevel",
            "notifications/roots/list_changed",
        ]
    );
}
