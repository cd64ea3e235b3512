//! Registering a server-side handler for a message MCP 2026-07-28 deprecates (its schema no
//! longer defines it: logging, roots, resource subscriptions by method, the handshake
//! lifecycle, client-sent progress and cancellation) warns through `tracing`, once per
//! registration; spec methods 2026-07-28 keeps and custom methods do not warn.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::sync::{Arc, Mutex};

use ferromcp_server::RequestContext;
use ferromcp_server::Server;
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

async fn empty(_: RequestContext, _: Value) -> Result<Value, ferromcp_dispatch::HandlerError> {
    Ok(Value::Object(Default::default()))
}

async fn ignore(_: RequestContext, _: Value) -> Result<(), ferromcp_dispatch::HandlerError> {
    Ok(())
}

/// MCP 2026-07-28 schema (`ClientRequest` / `ClientNotification` no longer list logging,
/// roots, `resources/subscribe`, `ping`, `notifications/initialized`, ...): each deprecated
/// registration warns once, naming the method; kept and custom methods do not.
#[test]
fn registering_a_deprecated_handler_warns_once_per_registration() {
    let warnings = Warnings::default();
    let subscriber = tracing_subscriber::registry().with(warnings.clone());
    tracing::subscriber::with_default(subscriber, || {
        let _ = Server::builder("deprecations", "0.0.1")
            .on_request("logging/setLevel", empty)
            .on_request("resources/subscribe", empty)
            .on_request("resources/unsubscribe", empty)
            .on_request("tools/list", empty)
            .on_request("x/custom", empty)
            .on_notification_method("notifications/roots/list_changed", ignore)
            .on_notification_method("notifications/initialized", ignore)
            .on_notification_method("notifications/x-custom", ignore)
            .on_request("logging/setLevel", empty)
            .build();
    });
    assert_eq!(
        *warnings.0.lock().unwrap(),
        [
            "logging/setLevel",
            "resources/subscribe",
            "resources/unsubscribe",
            "notifications/roots/list_changed",
            "notifications/initialized",
            "logging/setLevel",
        ]
    );
}
