//! What the elicitation and multi-round tests share: a server whose tools ask the client,
//! and an in-process client that plays the user.
#![allow(dead_code, clippy::unwrap_used, clippy::panic)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferromcp_dispatch::{CallOptions, DirectDispatcher, Dispatcher, Outbound, handler_fn};
use ferromcp_server::mcp_server::{
    Args, Ask, Elicitation, ResolveError, Resolved, Resolver, ResourceSpec,
};
use ferromcp_server::{McpServer, RequestContext};
use ferromcp_types::Era;
use ferromcp_types::jsonrpc::{ErrorObject, Payload};
use ferromcp_types::mcp::{CreateMessageRequestParams, SamplingMessage};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// Sign-up details.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct SignUp {
    /// The user name.
    #[schemars(length(min = 2, max = 20))]
    pub(crate) username: String,
    /// Where to write.
    #[schemars(email)]
    pub(crate) email: String,
}

pub(crate) async fn signup(ctx: RequestContext) -> Result<String, String> {
    match ctx.elicit_form::<SignUp>("Please sign up").await {
        Ok(Elicitation::Accept(s)) => Ok(format!("welcome {} <{}>", s.username, s.email)),
        Ok(Elicitation::Decline) => Ok("declined".into()),
        Ok(Elicitation::Cancel) => Ok("cancelled".into()),
        Err(e) => Err(format!("{}: {}", e.code.0, e.message)),
    }
}

pub(crate) async fn open_url(ctx: RequestContext) -> Result<String, String> {
    ctx.elicit_url("Log in", "https://example.com/login", "el-1")
        .await
        .map(|a| format!("{a:?}"))
        .map_err(|e| format!("{}: {}", e.code.0, e.message))
}

pub(crate) async fn sample_live(ctx: RequestContext) -> Result<String, String> {
    let params = CreateMessageRequestParams::new(vec![SamplingMessage::user_text("2+2?")], 10);
    let r = ctx
        .create_message(params)
        .await
        .map_err(|e| format!("{}: {}", e.code.0, e.message))?;
    Ok(serde_json::to_value(&r.content).unwrap()["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned())
}

pub(crate) async fn roots_live(ctx: RequestContext) -> Result<String, String> {
    let r = ctx
        .list_roots()
        .await
        .map_err(|e| format!("{}: {}", e.code.0, e.message))?;
    Ok(r.roots
        .iter()
        .map(|r| r.uri.as_str())
        .collect::<Vec<_>>()
        .join(","))
}

pub(crate) async fn ask_twice(ctx: RequestContext) -> Result<String, ErrorObject> {
    let Elicitation::Accept(n) = ctx.elicit_form::<NameForm>("Name?").await? else {
        return Ok("no name".into());
    };
    let params = CreateMessageRequestParams::new(
        vec![SamplingMessage::user_text(format!("Greet {}", n.name))],
        10,
    );
    let r = ctx.create_message(params).await?;
    let text = serde_json::to_value(&r.content).unwrap()["text"].clone();
    Ok(format!("{}: {}", n.name, text.as_str().unwrap_or_default()))
}

/// The form of the resolver tests.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct NameForm {
    pub(crate) name: String,
}

pub(crate) struct UserName;

impl Resolver for UserName {
    type Output = String;

    async fn resolve(ask: &Ask) -> Result<String, ResolveError> {
        match ask
            .elicit_form::<NameForm>("user_name", "What is your name?")
            .await?
        {
            Elicitation::Accept(f) => Ok(f.name),
            _ => Ok("stranger".into()),
        }
    }
}

/// A URL-mode question.
pub(crate) struct Consent;

impl Resolver for Consent {
    type Output = String;

    async fn resolve(ask: &Ask) -> Result<String, ResolveError> {
        let action = ask
            .elicit_url(
                "consent",
                "Please log in",
                "https://example.com/login",
                "el-9",
            )
            .await?;
        Ok(format!("{action:?}"))
    }
}

pub(crate) struct Capital;

impl Resolver for Capital {
    type Output = String;

    async fn resolve(ask: &Ask) -> Result<String, ResolveError> {
        let params = CreateMessageRequestParams::new(
            vec![SamplingMessage::user_text("What is the capital of France?")],
            100,
        );
        let r = ask.create_message("capital_question", params).await?;
        Ok(serde_json::to_value(&r.content).unwrap()["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned())
    }
}

pub(crate) struct Roots;

impl Resolver for Roots {
    type Output = Vec<String>;

    async fn resolve(ask: &Ask) -> Result<Vec<String>, ResolveError> {
        let r = ask.list_roots("client_roots").await?;
        Ok(r.roots.into_iter().map(|r| r.uri).collect())
    }
}

/// Depends on [`UserName`]: asked only once the name is known.
pub(crate) struct Color2;

#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct ColorForm {
    pub(crate) color: String,
}

impl Resolver for Color2 {
    type Output = String;

    async fn resolve(ask: &Ask) -> Result<String, ResolveError> {
        let name = ask.get::<UserName>().await?;
        let message = format!("{name}, what is your favorite color?");
        match ask.elicit_form::<ColorForm>("color", message).await? {
            Elicitation::Accept(f) => Ok(f.color),
            _ => Ok("none".into()),
        }
    }
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct CityArgs {
    pub(crate) city: String,
}

pub(crate) fn server() -> McpServer {
    server_with(|b| b)
}

pub(crate) fn server_with(
    f: impl FnOnce(ferromcp_server::McpServerBuilder) -> ferromcp_server::McpServerBuilder,
) -> McpServer {
    let b = McpServer::builder("elicit", "1.0.0")
        .tool("signup", signup)
        .tool("open_url", open_url)
        .tool("sample_live", sample_live)
        .tool("roots_live", roots_live)
        .tool("ask_twice", ask_twice)
        .tool("consent", |Resolved(a): Resolved<Consent>| async move { a })
        .tool("hello", |Resolved(name): Resolved<UserName>| async move {
            format!("Hello, {name}!")
        })
        .tool(
            "everything",
            |Resolved(n): Resolved<UserName>,
             Resolved(c): Resolved<Capital>,
             Resolved(r): Resolved<Roots>| async move { format!("{n}|{c}|{}", r.join(",")) },
        )
        .tool(
            "weather",
            |Args(a): Args<CityArgs>, Resolved(n): Resolved<UserName>| async move {
                format!("{n}: sunny in {}", a.city)
            },
        )
        .tool(
            "two_rounds",
            |Resolved(n): Resolved<UserName>, Resolved(c): Resolved<Color2>| async move {
                format!("{n} likes {c}")
            },
        )
        .prompt("intro", |Resolved(n): Resolved<UserName>| async move {
            format!("Introduce {n}.")
        })
        .resource(
            ResourceSpec::new("test://me", "me"),
            |Resolved(n): Resolved<UserName>| async move { format!("me: {n}") },
        );
    f(b).build().unwrap()
}

// A client that plays the user

pub(crate) type Answer = Arc<dyn Fn(&str, &Value) -> Result<Value, ErrorObject> + Send + Sync>;

pub(crate) struct Client {
    pub(crate) peer: DirectDispatcher,
    pub(crate) era: Era,
    pub(crate) caps: Value,
    pub(crate) asked: Arc<Mutex<Vec<(String, Value)>>>,
}

impl Client {
    pub(crate) async fn connect(server: &McpServer, era: Era, caps: Value, answer: Answer) -> Self {
        let peer = server.server().in_process(era);
        let asked = Arc::new(Mutex::new(Vec::new()));
        let log = asked.clone();
        let handler = handler_fn(move |_, method, params: Option<Payload>| {
            let params = params.map_or(Value::Null, |p| p.into_value().unwrap());
            log.lock().unwrap().push((method.clone(), params.clone()));
            let r = answer(&method, &params);
            async move { Ok(Payload::from_value(r?)) }
        })
        .into_arc();
        let runner = peer.clone();
        tokio::spawn(async move { runner.run(handler).await });
        let client = Self {
            peer,
            era,
            caps,
            asked,
        };
        if era == Era::Handshake {
            let init = json!({"protocolVersion": "2025-11-25", "capabilities": client.caps,
                              "clientInfo": {"name": "t", "version": "1"}});
            client.raw("initialize", init).await.unwrap();
            client.peer.notify("notifications/initialized", None).await;
        }
        client
    }

    pub(crate) async fn raw(&self, method: &str, params: Value) -> Result<Value, ErrorObject> {
        let r = self
            .peer
            .send_request(
                method,
                Some(Payload::from_value(params)),
                CallOptions::new(),
            )
            .await?;
        Ok(r.into_value().unwrap())
    }

    pub(crate) async fn request(
        &self,
        method: &str,
        mut params: Value,
    ) -> Result<Value, ErrorObject> {
        if self.era == Era::Modern {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": self.caps,
            });
        }
        self.raw(method, params).await
    }

    pub(crate) async fn call(&self, name: &str, args: Value) -> Result<Value, ErrorObject> {
        self.request("tools/call", json!({"name": name, "arguments": args}))
            .await
    }

    /// A retry: the same call with answers and the echoed state.
    pub(crate) async fn retry(
        &self,
        name: &str,
        args: Value,
        responses: Value,
        state: &Value,
    ) -> Result<Value, ErrorObject> {
        let mut p = json!({"name": name, "arguments": args, "inputResponses": responses});
        if !state.is_null() {
            p["requestState"] = state.clone();
        }
        self.request("tools/call", p).await
    }

    pub(crate) fn asked(&self) -> Vec<(String, Value)> {
        self.asked.lock().unwrap().clone()
    }
}

pub(crate) fn all_caps() -> Value {
    json!({"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}})
}

pub(crate) fn text(r: &Value) -> &str {
    r["content"][0]["text"].as_str().unwrap_or_default()
}

pub(crate) fn never() -> Answer {
    Arc::new(|m, _| Err(ErrorObject::method_not_found(m)))
}

/// The harness's answers (conformance §5.7).
pub(crate) fn user(method: &str, params: &Value) -> Result<Value, ErrorObject> {
    match method {
        "elicitation/create" if params["mode"] == "url" => Ok(json!({"action": "accept"})),
        "elicitation/create" => {
            let props = params["requestedSchema"]["properties"].as_object().unwrap();
            let content: serde_json::Map<String, Value> = props
                .keys()
                .map(|k| match k.as_str() {
                    "email" => (k.clone(), json!("alice@example.com")),
                    "name" | "username" => (k.clone(), json!("alice")),
                    _ => (k.clone(), json!("blue")),
                })
                .collect();
            Ok(json!({"action": "accept", "content": content}))
        }
        "sampling/createMessage" => Ok(json!({"role": "assistant",
            "content": {"type": "text", "text": "Paris"}, "model": "test-model",
            "stopReason": "endTurn"})),
        "roots/list" => Ok(json!({"roots": [{"uri": "file:///test/root", "name": "Test Root"}]})),
        other => Err(ErrorObject::method_not_found(other)),
    }
}

pub(crate) async fn run(test: impl std::future::Future<Output = ()>) {
    tokio::time::timeout(Duration::from_secs(20), test)
        .await
        .expect("timed out");
}

pub(crate) fn code(e: &ErrorObject) -> i64 {
    i64::from(e.code.0)
}
