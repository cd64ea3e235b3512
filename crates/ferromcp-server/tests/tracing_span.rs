//! The default tracing layer: one `mcp.request` span per request, outermost (around every
//! middleware layer), with the method, the tool name, the outcome and the duration; none when
//! the server is built with `.tracing(false)`. The kernel runs this layer itself, so a request
//! whose span no subscriber wants costs no layer at all; these tests pin what a subscriber
//! that does want it sees.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferromcp_dispatch::{CallOptions, DirectDispatcher, Dispatcher, Outbound, handler_fn};
use ferromcp_server::middleware::{McpRequest, Next, middleware_fn};
use ferromcp_server::{Connection, Server, ServerRunner};
use ferromcp_types::ProtocolVersion;
use ferromcp_types::jsonrpc::{ErrorObject, Payload};
use serde_json::{Value, json};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, SubscriberExt};

const LIMIT: Duration = Duration::from_secs(10);

async fn within<F: Future>(f: F) -> F::Output {
    match tokio::time::timeout(LIMIT, f).await {
        Ok(v) => v,
        Err(_) => panic!("timed out after {LIMIT:?}"),
    }
}

/// The `mcp.request` spans seen, by span id: their fields as strings.
type Spans = Arc<Mutex<HashMap<u64, HashMap<String, String>>>>;

/// Records every `mcp.request` span's fields, and which span was current when a middleware
/// layer ran (`layer_saw`).
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

    fn on_record(&self, id: &Id, values: &Record<'_>, _ctx: Context<'_, S>) {
        if let Some(fields) = self.spans.lock().unwrap().get_mut(&id.into_u64()) {
            values.record(&mut Fields(fields));
        }
    }
}

/// A server with a tool-like `tools/call` handler and one middleware layer that notes whether
/// an `mcp.request` span is current when it runs.
fn server(tracing: bool, inside_span: Arc<Mutex<Vec<bool>>>) -> Server {
    Server::builder("tracing-test", "0.0.1")
        .tracing(tracing)
        .middleware(middleware_fn(move |req: McpRequest, next: Next| {
            let inside_span = inside_span.clone();
            async move {
                // Requests only: `notifications/initialized` passes too, in its own task.
                if req.is_notification() {
                    return next.run(req).await;
                }
                let current = tracing::Span::current();
                let in_request_span = current
                    .metadata()
                    .is_some_and(|m| m.name() == "mcp.request");
                inside_span.lock().unwrap().push(in_request_span);
                next.run(req).await
            }
        }))
        .on_request("tools/call", |_ctx, params: Value| async move {
            if params.get("name") == Some(&json!("fails")) {
                return Err(ErrorObject::invalid_params("no such tool").into());
            }
            Ok(json!({"content": [{"type": "text", "text": "ok"}]}))
        })
        .build()
        .unwrap()
}

/// Handshake over the direct dispatcher, then `tools/call` of `ok` and of `fails`.
async fn exchange(server: Server) {
    let (client, srv) = DirectDispatcher::pair();
    let conn = Connection::for_handshake(
        Arc::new(srv.clone()),
        true,
        ProtocolVersion::LATEST_HANDSHAKE,
    );
    let runner = Arc::new(ServerRunner::handshake(server, conn));
    let served = tokio::spawn(async move {
        let _ = srv.run(runner).await;
    });
    let peer = handler_fn(|_ctx, _method, _params| async { Ok(Payload::empty_object()) });
    let client_task = {
        let client = client.clone();
        tokio::spawn(async move {
            let _ = client.run(Arc::new(peer)).await;
        })
    };
    let init = json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}
    });
    client
        .send_request("initialize", Some(init.into()), CallOptions::new())
        .await
        .unwrap();
    client.notify("notifications/initialized", None).await;
    let ok = client
        .send_request(
            "tools/call",
            Some(json!({"name": "ok"}).into()),
            CallOptions::new(),
        )
        .await;
    assert!(ok.is_ok(), "{ok:?}");
    let failed = client
        .send_request(
            "tools/call",
            Some(json!({"name": "fails"}).into()),
            CallOptions::new(),
        )
        .await;
    assert!(failed.is_err());
    client_task.abort();
    served.abort();
}

/// The span of each request names its method and tool, records the outcome (`ok` or the
/// error code) and a duration, and is current inside the user's middleware (outermost).
#[tokio::test]
async fn each_request_gets_an_outermost_span_with_its_outcome() {
    let capture = Capture::default();
    let _guard =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(capture.clone()));
    let inside = Arc::new(Mutex::new(Vec::new()));
    within(exchange(server(true, inside.clone()))).await;

    let spans = capture.spans.lock().unwrap();
    let calls: Vec<_> = spans
        .values()
        .filter(|f| f.get("method").map(String::as_str) == Some("tools/call"))
        .collect();
    assert_eq!(calls.len(), 2, "{spans:?}");
    let ok = calls
        .iter()
        .find(|f| f.get("name").map(String::as_str) == Some("ok"))
        .unwrap();
    assert_eq!(ok.get("outcome").map(String::as_str), Some("ok"));
    assert!(ok.contains_key("duration_us"), "{ok:?}");
    let failed = calls
        .iter()
        .find(|f| f.get("name").map(String::as_str) == Some("fails"))
        .unwrap();
    assert_eq!(failed.get("outcome").map(String::as_str), Some("-32602"));
    assert!(
        spans
            .values()
            .any(|f| f.get("method").map(String::as_str) == Some("initialize")),
        "{spans:?}"
    );
    // initialize and the two calls ran the user's layer, each inside its request span.
    assert_eq!(*inside.lock().unwrap(), vec![true, true, true]);
}

/// `.tracing(false)`: no `mcp.request` span, and the user's layer still runs.
#[tokio::test]
async fn tracing_off_makes_no_span() {
    let capture = Capture::default();
    let _guard =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(capture.clone()));
    let inside = Arc::new(Mutex::new(Vec::new()));
    within(exchange(server(false, inside.clone()))).await;
    assert!(capture.spans.lock().unwrap().is_empty());
    assert_eq!(*inside.lock().unwrap(), vec![false, false, false]);
}
