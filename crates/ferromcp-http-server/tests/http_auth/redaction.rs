//! The raw token never leaks: handlers see the verified `Principal`, never the `Authorization`
//! header; `Debug` output is redacted; tokens never reach the logs.

use std::sync::{Arc, Mutex};

use crate::key::Key;
use crate::support::{
    ISS, LIMIT, PRM, RESOURCE, bearer, challenge, claims, ctx_whoami, modern, now, rpc,
    sees_authorization, setup,
};
use ferromcp_http_server::auth::{AuthConfig, Principal, StaticVerifier};
use ferromcp_http_server::{HttpConfig, HttpServer};
use ferromcp_server::McpServer;
use serde_json::json;

#[tokio::test]
async fn static_verifier_and_redacted_debug() {
    tokio::time::timeout(LIMIT, async {
        let verifier =
            StaticVerifier::new().token("s3cret-token", Principal::new("carol").scopes(["mcp"]));
        let auth = AuthConfig::new(RESOURCE, verifier).authorization_server(ISS);
        let config = HttpConfig::default().auth(auth);
        let dbg = format!("{config:?}");
        assert!(!dbg.contains("s3cret-token"), "{dbg}");
        let server = McpServer::builder("static", "1.0.0")
            .tool("ctx_whoami", ctx_whoami)
            .build()
            .unwrap();
        let srv = HttpServer::bind("127.0.0.1:0", server.server().clone(), config)
            .await
            .unwrap();
        let addr = srv.local_addr();
        tokio::spawn(srv.run());
        let resp = modern(addr, "Bearer s3cret-token", "ctx_whoami").await;
        assert_eq!(resp.status(), 200);
        assert_eq!(rpc(resp).await["result"]["content"][0]["text"], "carol");
        let resp = modern(addr, "Bearer wrong-token", "ctx_whoami").await;
        assert_eq!(resp.status(), 401);
        // No required scopes configured: the 401 hint is the advertised set (none here).
        let resp = modern(addr, "", "ctx_whoami").await;
        assert_eq!(
            challenge(&resp),
            format!("Bearer resource_metadata=\"{PRM}\"")
        );
    })
    .await
    .unwrap();
}

/// No token passthrough (SV-A07): once the token check has verified a request, the handler
/// sees its `Principal` but not the raw bearer token: the `Authorization` header is gone from
/// the HTTP parts it reads.
#[tokio::test]
async fn handlers_never_see_the_raw_token() {
    tokio::time::timeout(LIMIT, async {
        let verifier =
            StaticVerifier::new().token("s3cret-token", Principal::new("carol").scopes(["mcp"]));
        let config = HttpConfig::default().auth(AuthConfig::new(RESOURCE, verifier));
        let server = McpServer::builder("static", "1.0.0")
            .tool("sees_authorization", sees_authorization)
            .tool("ctx_whoami", ctx_whoami)
            .build()
            .unwrap();
        let srv = HttpServer::bind("127.0.0.1:0", server.server().clone(), config)
            .await
            .unwrap();
        let addr = srv.local_addr();
        tokio::spawn(srv.run());
        let resp = modern(addr, "Bearer s3cret-token", "sees_authorization").await;
        assert_eq!(resp.status(), 200);
        let text = rpc(resp).await["result"]["content"][0]["text"].clone();
        assert_eq!(text, "no header");
        let resp = modern(addr, "Bearer s3cret-token", "ctx_whoami").await;
        assert_eq!(rpc(resp).await["result"]["content"][0]["text"], "carol");
    })
    .await
    .unwrap();
}

/// Every event and span field, as text.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<String>>);

struct Visit<'a>(&'a mut String);

impl tracing::field::Visit for Visit<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!("{}={value:?} ", field.name()));
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Capture {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        event.record(&mut Visit(&mut self.0.lock().unwrap()));
    }

    fn on_new_span(
        &self,
        attrs: &tracing::span::Attributes<'_>,
        _: &tracing::span::Id,
        _: tracing_subscriber::layer::Context<'_, S>,
    ) {
        attrs.record(&mut Visit(&mut self.0.lock().unwrap()));
    }
}

#[tokio::test]
async fn tokens_are_never_logged() {
    use tracing_subscriber::layer::SubscriberExt as _;
    let capture = Capture::default();
    let subscriber = tracing_subscriber::registry().with(capture.clone());
    let _guard = tracing::subscriber::set_default(subscriber);
    tokio::time::timeout(LIMIT, async {
        let s = setup().await;
        let good = s.key.sign(&claims("alice", "mcp", json!({})));
        let expired = s
            .key
            .sign(&claims("alice", "mcp", json!({"exp": now() - 120})));
        let stranger = Key::new("zz").sign(&claims("alice", "mcp", json!({})));
        for t in [&good, &expired, &stranger] {
            let _ = rpc(modern(s.addr, &bearer(t), "whoami").await).await;
        }
        let logs = capture.0.lock().unwrap().clone();
        assert!(!logs.is_empty(), "nothing was captured");
        for t in [&good, &expired, &stranger] {
            let sig = t.rsplit('.').next().unwrap();
            assert!(!logs.contains(sig), "a token reached the logs: {logs}");
        }
    })
    .await
    .unwrap();
}
