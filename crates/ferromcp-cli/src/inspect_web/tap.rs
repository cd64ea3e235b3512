//! Sees every message between the inspector's client and a server: a [`Transport`] wrapper
//! whose dispatcher logs each outbound request and notification, each inbound one, and each
//! answer with how long it took, to the [`EventLog`].

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use ferromcp_client::transport::{Transport, TransportShutdown};
use ferromcp_client::{ClientError, Connected};
use ferromcp_dispatch::{
    BoxFuture, CallOptions, DispatchContext, Dispatcher, Handler, HandlerError, Outbound, RunError,
};
use ferromcp_types::jsonrpc::{ErrorObject, Payload};
use serde_json::{Value, json};

use super::events::EventLog;

/// Where one server's messages are logged.
#[derive(Clone)]
pub(crate) struct Tap {
    pub(crate) log: Arc<EventLog>,
    pub(crate) server: u64,
    next: Arc<AtomicU64>,
}

impl Tap {
    /// A tap for server `server`.
    pub(crate) fn new(log: Arc<EventLog>, server: u64) -> Self {
        Self {
            log,
            server,
            next: Arc::new(AtomicU64::new(1)),
        }
    }

    fn body(&self, p: Option<&Payload>) -> Value {
        match p {
            Some(p) => self.log.text(p.to_json_string()),
            None => Value::Null,
        }
    }

    fn message(&self, dir: &str, kind: &str, method: &str, corr: u64, body: Value) -> Instant {
        let mut fields = json!({ "server": self.server, "dir": dir, "type": kind,
                                 "method": method, "corr": corr });
        fields["body"] = body;
        self.log.push("message", fields);
        Instant::now()
    }

    fn answer(&self, dir: &str, method: &str, corr: u64, start: Instant, r: Result<Value, Value>) {
        let ms = start.elapsed().as_secs_f64() * 1000.0;
        let (kind, body) = match r {
            Ok(b) => ("response", b),
            Err(e) => ("error", e),
        };
        let mut fields = json!({ "server": self.server, "dir": dir, "type": kind,
                                 "method": method, "corr": corr, "durationMs": ms });
        fields["body"] = body;
        self.log.push("message", fields);
    }

    fn corr(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }
}

/// Logs the `notifications/cancelled` the dispatcher sends for a request dropped unanswered.
struct Abandoned {
    tap: Option<Tap>,
    method: String,
}

impl Drop for Abandoned {
    fn drop(&mut self) {
        if let Some(tap) = self.tap.take() {
            let body = json!({ "reason": format!("{} abandoned by the caller", self.method) });
            tap.message("out", "notification", "notifications/cancelled", 0, body);
        }
    }
}

/// A transport whose messages are logged.
pub(crate) struct TappedTransport<T> {
    pub(crate) inner: T,
    pub(crate) tap: Tap,
}

impl<T: Transport> Transport for TappedTransport<T> {
    fn open(self) -> BoxFuture<'static, Result<Connected, ClientError>> {
        Box::pin(async move {
            let connected = self.inner.open().await?;
            let dispatcher = Arc::new(TapDispatcher {
                inner: connected.dispatcher().clone(),
                tap: self.tap,
            });
            Ok(Connected::new(dispatcher).with_shutdown(Close(Mutex::new(Some(connected)))))
        })
    }
}

/// Ends the wrapped transport.
struct Close(Mutex<Option<Connected>>);

impl TransportShutdown for Close {
    fn shutdown(&self) -> BoxFuture<'_, ()> {
        let taken = self.0.lock().unwrap_or_else(PoisonError::into_inner).take();
        Box::pin(async move {
            if let Some(c) = taken {
                c.close().await;
            }
        })
    }
}

struct TapDispatcher {
    inner: Arc<dyn Dispatcher>,
    tap: Tap,
}

fn error_value(e: &ErrorObject) -> Value {
    serde_json::to_value(e).unwrap_or(Value::Null)
}

impl Outbound for TapDispatcher {
    fn send_request(
        &self,
        method: &str,
        params: Option<Payload>,
        options: CallOptions,
    ) -> BoxFuture<'static, Result<Payload, ErrorObject>> {
        let tap = self.tap.clone();
        let corr = tap.corr();
        let method = method.to_owned();
        let start = tap.message("out", "request", &method, corr, tap.body(params.as_ref()));
        let cancels = options.cancel_on_abandon;
        let fut = self.inner.send_request(&method, params, options);
        Box::pin(async move {
            // Dropped unanswered (the page cancelled the call): the dispatcher sends
            // `notifications/cancelled` itself; the log shows it.
            let mut abandoned = Abandoned {
                tap: cancels.then(|| tap.clone()),
                method: method.clone(),
            };
            let r = fut.await;
            abandoned.tap = None;
            let logged = match &r {
                Ok(p) => Ok(tap.body(Some(p))),
                Err(e) => Err(error_value(e)),
            };
            tap.answer("in", &method, corr, start, logged);
            r
        })
    }

    fn notify(&self, method: &str, params: Option<Payload>) -> BoxFuture<'static, ()> {
        self.tap.message(
            "out",
            "notification",
            method,
            0,
            self.tap.body(params.as_ref()),
        );
        self.inner.notify(method, params)
    }
}

impl Dispatcher for TapDispatcher {
    fn run(&self, handler: Arc<dyn Handler>) -> BoxFuture<'_, Result<(), RunError>> {
        let tapped = Arc::new(TapHandler {
            inner: handler,
            tap: self.tap.clone(),
        });
        self.inner.run(tapped)
    }

    fn close(&self) {
        self.inner.close();
    }
}

struct TapHandler {
    inner: Arc<dyn Handler>,
    tap: Tap,
}

impl Handler for TapHandler {
    fn on_request(
        self: Arc<Self>,
        ctx: DispatchContext,
        method: String,
        params: Option<Payload>,
    ) -> BoxFuture<'static, Result<Payload, HandlerError>> {
        let tap = self.tap.clone();
        let corr = tap.corr();
        let start = tap.message("in", "request", &method, corr, tap.body(params.as_ref()));
        let fut = self.inner.clone().on_request(ctx, method.clone(), params);
        Box::pin(async move {
            let r = fut.await;
            let logged = match &r {
                Ok(p) => Ok(tap.body(Some(p))),
                Err(HandlerError::Protocol(e)) => Err(error_value(e)),
                Err(e) => Err(json!({ "message": e.to_string() })),
            };
            tap.answer("out", &method, corr, start, logged);
            r
        })
    }

    fn on_notify(
        self: Arc<Self>,
        ctx: DispatchContext,
        method: String,
        params: Option<Payload>,
    ) -> BoxFuture<'static, ()> {
        self.inner.clone().on_notify(ctx, method, params)
    }

    fn intercept_notification(&self, method: &str, params: Option<&Payload>) -> ControlFlow<()> {
        self.tap
            .message("in", "notification", method, 0, self.tap.body(params));
        self.inner.intercept_notification(method, params)
    }

    fn runs_inline(&self, method: &str) -> bool {
        self.inner.runs_inline(method)
    }
}
