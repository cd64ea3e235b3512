//! `SingleExchange`, the one-request dispatcher (a Streamable HTTP POST): what its handler's
//! context may send, and when.

#![allow(clippy::unwrap_used, clippy::panic, reason = "test assertions")]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferromcp_dispatch::*;
use ferromcp_jsonrpc::{ErrorCode, ErrorObject, Payload};

/// The exchange's related channel (the response's SSE stream): records what is sent on it.
#[derive(Default)]
struct Recorder {
    sent: Mutex<Vec<String>>,
}

impl Outbound for Recorder {
    fn send_request(
        &self,
        method: &str,
        _params: Option<Payload>,
        _options: CallOptions,
    ) -> BoxFuture<'static, Result<Payload, ErrorObject>> {
        self.sent.lock().unwrap().push(method.to_owned());
        Box::pin(std::future::ready(Ok(Payload::empty_object())))
    }

    fn notify(&self, method: &str, _params: Option<Payload>) -> BoxFuture<'static, ()> {
        self.sent.lock().unwrap().push(method.to_owned());
        Box::pin(std::future::ready(()))
    }
}

/// MCP Base Protocol › Requests, as Streamable HTTP carries them (the related stream ends
/// with the response; the Python SDK v2's `can_send_request` rule): while the handler runs
/// its context sends on the exchange's stream; once the exchange is answered the same
/// context refuses `send_request` (`SendRefused::RequestAnswered`) and drops progress, and
/// a notification goes only where the exchange's outbound can still deliver it (this
/// recorder always can; an HTTP response stream has closed by then).
#[tokio::test]
async fn sends_after_the_exchange_is_answered_are_refused() {
    tokio::time::timeout(Duration::from_secs(10), async {
        let related = Arc::new(Recorder::default());
        let saved: Arc<Mutex<Option<DispatchContext>>> = Arc::default();
        let keep = saved.clone();
        let handler = handler_fn(move |ctx: DispatchContext, _method, _params| {
            let keep = keep.clone();
            async move {
                ctx.send_request("sampling/createMessage", None, CallOptions::new())
                    .await?;
                ctx.notify("notifications/during", None).await;
                *keep.lock().unwrap() = Some(ctx);
                Ok(Payload::empty_object())
            }
        })
        .into_arc();
        let params: Payload = serde_json::json!({"_meta": {"progressToken": 9}}).into();
        let transport = TransportInfo::new(TransportKind::StreamableHttp, true);
        SingleExchange::new(related.clone(), transport)
            .serve(handler, 1.into(), "tools/call".into(), Some(params))
            .await
            .unwrap();
        let ctx = saved.lock().unwrap().clone().unwrap();
        assert!(ctx.is_answered());
        assert!(!ctx.can_send_request());
        let e = ctx
            .send_request("elicitation/create", None, CallOptions::new())
            .await
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::INVALID_REQUEST);
        assert!(SendRefused::RequestAnswered.is(&e), "{e:?}");
        ctx.notify("notifications/after", None).await;
        ctx.progress(1.0, None, None).await;
        assert_eq!(
            *related.sent.lock().unwrap(),
            [
                "sampling/createMessage",
                "notifications/during",
                "notifications/after"
            ]
        );
    })
    .await
    .unwrap();
}
