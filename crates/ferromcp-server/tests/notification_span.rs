//! Notifications take the same entrance as requests (issue 17 point 5; B87): the kernel's
//! `mcp.request` span, naming the notification's method, is current in every middleware
//! layer and in the notification's handler, as it is for a request.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferromcp_dispatch::{CallOptions, DirectDispatcher, Dispatcher, Outbound, handler_fn};
use ferromcp_server::middleware::{McpRequest, Next, middleware_fn};
use ferromcp_server::{Connection, RequestContext, Server, ServerRunner};
use ferromcp_types::ProtocolVersion;
use ferromcp_types::jsonrpc::Payload;
use serde_json::{Value, json};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing_subscriber::layer::{Context, SubscriberExt};

async fn within<F: Future>(f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(10), f)
        .await
        .unwrap()
}

/// The fields of every `mcp.request` span, by span id.
type Spans = Arc<Mutex<HashMap<u64, HashMap<String, String>>>>;

#[derive(Clone, Default)]
struct Capture {
    spans: Spans,
}

struct Fields<'a>(&'a mut HashMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl<S> tracing_subscriber::Layer<S> for Capture
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, _ctx: Context<'_, S>) {
        if attrs.metadata().name() == "mcp.request" {
            let mut fields = HashMap::new();
            attrs.record(&mut Fields(&mut fields));
            self.spans.lock().unwrap().insert(id.into_u64(), fields);
        }
    }
}

/// The `method` field of the current `mcp.request` span, if one is current.
fn current_request_span(spans: &Spans) -> Option<String> {
    let current = tracing::Span::current();
    let id = current.id()?;
    let spans = spans.lock().unwrap();
    spans.get(&id.into_u64())?.get("method").cloned()
}

/// Where each step saw itself: (step, the current span's method).
type Seen = Arc<Mutex<Vec<(&'static str, Option<String>)>>>;

fn server(spans: Spans, seen: Seen) -> Server {
    let in_layer = (spans.clone(), seen.clone());
    Server::builder("notification-span", "1")
        .middleware(middleware_fn(move |req: McpRequest, next: Next| {
            let (spans, seen) = in_layer.clone();
            async move {
                if req.method == "acme/note" {
                    let step = if req.is_notification() { "layer" } else { "?" };
                    seen.lock()
                        .unwrap()
                        .push((step, current_request_span(&spans)));
                }
                next.run(req).await
            }
        }))
        .on_notification_method("acme/note", move |_ctx: RequestContext, _p: Value| {
            let (spans, seen) = (spans.clone(), seen.clone());
            async move {
                seen.lock()
                    .unwrap()
                    .push(("handler", current_request_span(&spans)));
                Ok(())
            }
        })
        .build()
        .unwrap()
}

/// B87: a notification runs inside its own `mcp.request` span (the method named), which is
/// current in the middleware layer and in the handler.
#[tokio::test]
async fn b87_a_notification_runs_in_the_request_span_through_the_middleware() {
    let capture = Capture::default();
    let _guard =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(capture.clone()));
    let seen: Seen = Arc::default();
    let server = server(capture.spans.clone(), seen.clone());
    within(async {
        let (client, srv) = DirectDispatcher::pair();
        let conn = Connection::for_handshake(
            Arc::new(srv.clone()),
            true,
            ProtocolVersion::LATEST_HANDSHAKE,
        );
        let runner = Arc::new(ServerRunner::handshake(server, conn));
        tokio::spawn(async move {
            let _ = srv.run(runner).await;
        });
        let peer = handler_fn(|_ctx, _method, _params| async { Ok(Payload::empty_object()) });
        let c = client.clone();
        tokio::spawn(async move {
            let _ = c.run(Arc::new(peer)).await;
        });
        let init = json!({"protocolVersion": "2025-11-25", "capabilities": {},
                          "clientInfo": {"name": "t", "version": "1"}});
        client
            .send_request("initialize", Some(init.into()), CallOptions::new())
            .await
            .unwrap();
        client.notify("notifications/initialized", None).await;
        client
            .notify("acme/note", Some(json!({"n": 1}).into()))
            .await;
        while seen.lock().unwrap().len() < 2 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
    .await;
    let note = Some("acme/note".to_owned());
    assert_eq!(
        *seen.lock().unwrap(),
        [("layer", note.clone()), ("handler", note)]
    );
}
