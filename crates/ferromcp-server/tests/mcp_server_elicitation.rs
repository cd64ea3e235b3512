//! Elicitation, sampling and roots from the high-level server, in both eras (MCP 2025-11-25
//! "Client Features › Elicitation / Sampling / Roots"; 2026-07-28 "Base Protocol › Patterns ›
//! Multi-round requests"): forms from Rust types, live server→client requests in the
//! handshake era, `InputRequiredResult` rounds with sealed `requestState` at 2026-07-28.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferromcp_dispatch::{CallOptions, DirectDispatcher, Dispatcher, Outbound, handler_fn};
use ferromcp_server::mcp_server::{
    Args, Ask, ElicitForm, Elicitation, ResolveError, Resolved, Resolver, ResourceSpec, check_form,
};
use ferromcp_server::request_state::{KeyRing, SealerConfig, StateKey};
use ferromcp_server::{McpServer, RequestContext};
use ferromcp_types::Era;
use ferromcp_types::jsonrpc::{ErrorObject, Payload};
use ferromcp_types::mcp::{CreateMessageRequestParams, SamplingMessage};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------------
// Forms

/// Sign-up details.
#[derive(Debug, Deserialize, JsonSchema)]
struct SignUp {
    /// The user name.
    #[schemars(length(min = 2, max = 20))]
    username: String,
    /// Where to write.
    #[schemars(email)]
    email: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Color {
    Red,
    Green,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
enum Size {
    #[schemars(title = "Small")]
    S,
    #[schemars(title = "Large")]
    L,
}

fn default_name() -> String {
    "John Doe".into()
}
fn thirty() -> u32 {
    30
}
fn score() -> f64 {
    95.5
}
fn yes() -> bool {
    true
}

/// Preferences.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Prefs {
    /// Your name.
    #[serde(default = "default_name")]
    name: String,
    #[serde(default = "thirty")]
    age: u32,
    #[serde(default = "score")]
    score: f64,
    #[serde(default = "yes")]
    verified: bool,
    color: Color,
    size: Size,
    colors: Vec<Color>,
    sizes: Vec<Size>,
    #[schemars(url)]
    homepage: Option<String>,
}

#[allow(dead_code)]
#[derive(Deserialize, JsonSchema)]
struct Inner {
    a: String,
}

#[allow(dead_code)]
#[derive(Deserialize, JsonSchema)]
struct Nested {
    inner: Inner,
}

#[allow(dead_code)]
#[derive(Deserialize, JsonSchema)]
struct ListOfObjects {
    items: Vec<Inner>,
}

/// Elicitation › Requested schema: a flat object of primitives, built from the Rust type.
#[test]
fn forms_from_rust_types() {
    let form = serde_json::to_value(SignUp::form().unwrap()).unwrap();
    assert_eq!(
        form,
        json!({"type": "object", "properties": {
            "username": {"type": "string", "description": "The user name.",
                         "minLength": 2, "maxLength": 20},
            "email": {"type": "string", "description": "Where to write.", "format": "email"},
        }, "required": ["username", "email"]})
    );

    let form = serde_json::to_value(Prefs::form().unwrap()).unwrap();
    let p = &form["properties"];
    assert_eq!(
        p["name"],
        json!({"type": "string", "description": "Your name.", "default": "John Doe"})
    );
    assert_eq!(p["age"]["type"], "integer");
    assert_eq!(p["age"]["default"], 30);
    assert_eq!(p["score"], json!({"type": "number", "default": 95.5}));
    assert_eq!(p["verified"], json!({"type": "boolean", "default": true}));
    assert_eq!(
        p["color"],
        json!({"type": "string", "enum": ["red", "green"]})
    );
    assert_eq!(
        p["size"],
        json!({"type": "string", "oneOf": [{"const": "S", "title": "Small"},
                                           {"const": "L", "title": "Large"}]})
    );
    assert_eq!(
        p["colors"],
        json!({"type": "array", "items": {"type": "string", "enum": ["red", "green"]}})
    );
    assert_eq!(
        p["sizes"],
        json!({"type": "array", "items": {"anyOf": [{"const": "S", "title": "Small"},
                                                    {"const": "L", "title": "Large"}]}})
    );
    assert_eq!(p["homepage"], json!({"type": "string", "format": "uri"}));
    assert_eq!(
        form["required"],
        json!(["color", "size", "colors", "sizes"])
    );

    let e = check_form::<Nested>().unwrap_err();
    assert_eq!(e.field, "inner");
    assert!(e.reason.contains("nested objects"), "{e}");
    let e = check_form::<ListOfObjects>().unwrap_err();
    assert_eq!(e.field, "items");
}

// ---------------------------------------------------------------------------------------------
// Handlers

async fn signup(ctx: RequestContext) -> Result<String, String> {
    match ctx.elicit_form::<SignUp>("Please sign up").await {
        Ok(Elicitation::Accept(s)) => Ok(format!("welcome {} <{}>", s.username, s.email)),
        Ok(Elicitation::Decline) => Ok("declined".into()),
        Ok(Elicitation::Cancel) => Ok("cancelled".into()),
        Err(e) => Err(format!("{}: {}", e.code.0, e.message)),
    }
}

async fn open_url(ctx: RequestContext) -> Result<String, String> {
    ctx.elicit_url("Log in", "https://example.com/login", "el-1")
        .await
        .map(|a| format!("{a:?}"))
        .map_err(|e| format!("{}: {}", e.code.0, e.message))
}

async fn sample_live(ctx: RequestContext) -> Result<String, String> {
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

async fn roots_live(ctx: RequestContext) -> Result<String, String> {
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

async fn ask_twice(ctx: RequestContext) -> Result<String, ErrorObject> {
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
struct NameForm {
    name: String,
}

struct UserName;

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
struct Consent;

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

struct Capital;

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

struct Roots;

impl Resolver for Roots {
    type Output = Vec<String>;

    async fn resolve(ask: &Ask) -> Result<Vec<String>, ResolveError> {
        let r = ask.list_roots("client_roots").await?;
        Ok(r.roots.into_iter().map(|r| r.uri).collect())
    }
}

/// Depends on [`UserName`]: asked only once the name is known.
struct Color2;

#[derive(Debug, Deserialize, JsonSchema)]
struct ColorForm {
    color: String,
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
struct CityArgs {
    city: String,
}

fn server() -> McpServer {
    server_with(|b| b)
}

fn server_with(
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

// ---------------------------------------------------------------------------------------------
// A client that plays the user

type Answer = Arc<dyn Fn(&str, &Value) -> Result<Value, ErrorObject> + Send + Sync>;

struct Client {
    peer: DirectDispatcher,
    era: Era,
    caps: Value,
    asked: Arc<Mutex<Vec<(String, Value)>>>,
}

impl Client {
    async fn connect(server: &McpServer, era: Era, caps: Value, answer: Answer) -> Self {
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

    async fn raw(&self, method: &str, params: Value) -> Result<Value, ErrorObject> {
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

    async fn request(&self, method: &str, mut params: Value) -> Result<Value, ErrorObject> {
        if self.era == Era::Modern {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": self.caps,
            });
        }
        self.raw(method, params).await
    }

    async fn call(&self, name: &str, args: Value) -> Result<Value, ErrorObject> {
        self.request("tools/call", json!({"name": name, "arguments": args}))
            .await
    }

    /// A retry: the same call with answers and the echoed state.
    async fn retry(
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

    fn asked(&self) -> Vec<(String, Value)> {
        self.asked.lock().unwrap().clone()
    }
}

fn all_caps() -> Value {
    json!({"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}})
}

fn text(r: &Value) -> &str {
    r["content"][0]["text"].as_str().unwrap_or_default()
}

fn never() -> Answer {
    Arc::new(|m, _| Err(ErrorObject::method_not_found(m)))
}

/// The harness's answers (conformance §5.7).
fn user(method: &str, params: &Value) -> Result<Value, ErrorObject> {
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

async fn run(test: impl std::future::Future<Output = ()>) {
    tokio::time::timeout(Duration::from_secs(20), test)
        .await
        .expect("timed out");
}

fn code(e: &ErrorObject) -> i64 {
    i64::from(e.code.0)
}

// ---------------------------------------------------------------------------------------------
// Handshake era: live requests

/// Elicitation (form mode): accept, decline, cancel, and an answer that does not fit.
#[tokio::test]
async fn handshake_form_elicitation_accept_decline_cancel() {
    run(async {
        let c = Client::connect(&server(), Era::Handshake, all_caps(), Arc::new(user)).await;
        let r = c.call("signup", json!({})).await.unwrap();
        assert_eq!(text(&r), "welcome alice <alice@example.com>");
        let asked = c.asked();
        assert_eq!(asked.len(), 1);
        assert_eq!(asked[0].0, "elicitation/create");
        assert_eq!(asked[0].1["message"], "Please sign up");
        assert_eq!(
            asked[0].1["requestedSchema"]["required"],
            json!(["username", "email"])
        );

        for (answer, expect) in [
            (json!({"action": "decline"}), "declined"),
            (json!({"action": "cancel"}), "cancelled"),
        ] {
            let a = answer.clone();
            let c = Client::connect(
                &server(),
                Era::Handshake,
                all_caps(),
                Arc::new(move |_, _| Ok(a.clone())),
            )
            .await;
            let r = c.call("signup", json!({})).await.unwrap();
            assert_eq!(text(&r), expect);
        }

        // Content that does not fit the form: an error for the handler, not a panic.
        let bad = json!({"action": "accept", "content": {"username": 7, "email": "a@b.c"}});
        let c = Client::connect(
            &server(),
            Era::Handshake,
            all_caps(),
            Arc::new(move |_, _| Ok(bad.clone())),
        )
        .await;
        let r = c.call("signup", json!({})).await.unwrap();
        assert_eq!(r["isError"], true);
        assert!(text(&r).contains("username"), "{r}");
    })
    .await;
}

/// Elicitation › Capabilities: no `elicitation` (or no `elicitation.url` for URL mode) →
/// -32021 with `requiredCapabilities`, and nothing is sent.
#[tokio::test]
async fn handshake_missing_capability_is_32021_without_sending() {
    run(async {
        let c = Client::connect(&server(), Era::Handshake, json!({}), Arc::new(user)).await;
        let r = c.call("signup", json!({})).await.unwrap();
        assert!(text(&r).starts_with("-32021"), "{r}");
        let r = c.call("sample_live", json!({})).await.unwrap();
        assert!(text(&r).starts_with("-32021"), "{r}");
        let r = c.call("roots_live", json!({})).await.unwrap();
        assert!(text(&r).starts_with("-32021"), "{r}");
        // A resolver's missing capability is a protocol error with the data.
        let e = c.call("hello", json!({})).await.unwrap_err();
        assert_eq!(code(&e), -32021);
        assert_eq!(
            e.data.unwrap(),
            json!({"requiredCapabilities": {"elicitation": {}}})
        );
        assert!(c.asked().is_empty());

        let form_only = json!({"elicitation": {}});
        let c = Client::connect(&server(), Era::Handshake, form_only, Arc::new(user)).await;
        let r = c.call("open_url", json!({})).await.unwrap();
        assert!(text(&r).starts_with("-32021"), "{r}");
        assert!(c.asked().is_empty());
    })
    .await;
}

/// Elicitation › URL mode (2025-11-25): `mode: url`, the url and the elicitation id.
#[tokio::test]
async fn handshake_url_elicitation() {
    run(async {
        let c = Client::connect(&server(), Era::Handshake, all_caps(), Arc::new(user)).await;
        let r = c.call("open_url", json!({})).await.unwrap();
        assert_eq!(text(&r), "Accept");
        let asked = c.asked();
        assert_eq!(
            asked[0].1,
            json!({"mode": "url", "message": "Log in", "url": "https://example.com/login",
                   "elicitationId": "el-1"})
        );
    })
    .await;
}

/// Sampling and Roots: live requests with the client's answers.
#[tokio::test]
async fn handshake_sampling_and_roots() {
    run(async {
        let c = Client::connect(&server(), Era::Handshake, all_caps(), Arc::new(user)).await;
        let r = c.call("sample_live", json!({})).await.unwrap();
        assert_eq!(text(&r), "Paris");
        let r = c.call("roots_live", json!({})).await.unwrap();
        assert_eq!(text(&r), "file:///test/root");
        let methods: Vec<_> = c.asked().into_iter().map(|(m, _)| m).collect();
        assert_eq!(methods, ["sampling/createMessage", "roots/list"]);
    })
    .await;
}

/// Resolvers in the handshake era: live requests, concurrently; dependencies in order.
#[tokio::test]
async fn handshake_resolvers_ask_live() {
    run(async {
        let c = Client::connect(&server(), Era::Handshake, all_caps(), Arc::new(user)).await;
        let r = c.call("everything", json!({})).await.unwrap();
        assert_eq!(text(&r), "alice|Paris|file:///test/root");
        assert_eq!(c.asked().len(), 3);
        let r = c.call("two_rounds", json!({})).await.unwrap();
        assert_eq!(text(&r), "alice likes blue");
        let r = c
            .request("prompts/get", json!({"name": "intro"}))
            .await
            .unwrap();
        assert_eq!(r["messages"][0]["content"]["text"], "Introduce alice.");
        let r = c
            .request("resources/read", json!({"uri": "test://me"}))
            .await
            .unwrap();
        assert_eq!(r["contents"][0]["text"], "me: alice");
    })
    .await;
}

// ---------------------------------------------------------------------------------------------
// 2026-07-28: multi-round requests

/// Multi-round requests › basic workflow: InputRequiredResult, then the retry completes.
#[tokio::test]
async fn modern_elicitation_round_trip() {
    run(async {
        let c = Client::connect(&server(), Era::Modern, all_caps(), never()).await;
        let r = c.call("hello", json!({})).await.unwrap();
        assert_eq!(r["resultType"], "input_required");
        let req = &r["inputRequests"]["user_name"];
        assert_eq!(req["method"], "elicitation/create");
        assert_eq!(req["params"]["message"], "What is your name?");
        assert_eq!(
            req["params"]["requestedSchema"],
            json!({"type": "object", "properties": {"name": {"type": "string"}},
                   "required": ["name"]})
        );
        let state = r["requestState"].clone();
        assert!(state.as_str().unwrap().starts_with("v1."));

        // Extra keys are ignored.
        let answers = json!({"user_name": {"action": "accept", "content": {"name": "Bob"}},
                             "other": {"action": "decline"}});
        let r = c.retry("hello", json!({}), answers, &state).await.unwrap();
        assert_eq!(r["resultType"], "complete");
        assert_eq!(text(&r), "Hello, Bob!");
        assert!(
            c.asked().is_empty(),
            "no server→client requests at 2026-07-28"
        );
    })
    .await;
}

/// Sampling, roots and elicitation asked together in one round.
#[tokio::test]
async fn modern_multiple_inputs_one_round() {
    run(async {
        let c = Client::connect(&server(), Era::Modern, all_caps(), never()).await;
        let r = c.call("everything", json!({})).await.unwrap();
        let reqs = r["inputRequests"].as_object().unwrap();
        let mut keys: Vec<_> = reqs.keys().cloned().collect();
        keys.sort();
        assert_eq!(keys, ["capital_question", "client_roots", "user_name"]);
        assert_eq!(reqs["capital_question"]["method"], "sampling/createMessage");
        assert_eq!(reqs["capital_question"]["params"]["maxTokens"], 100);
        assert_eq!(reqs["client_roots"], json!({"method": "roots/list"}));
        let mut answers = json!({});
        for (k, q) in reqs {
            answers[k] = user(q["method"].as_str().unwrap(), &q["params"]).unwrap();
        }
        let r = c
            .retry("everything", json!({}), answers, &r["requestState"])
            .await
            .unwrap();
        assert_eq!(text(&r), "alice|Paris|file:///test/root");
    })
    .await;
}

/// A question that depends on another's answer comes in a later round, with a new state.
#[tokio::test]
async fn modern_dependent_questions_take_two_rounds() {
    run(async {
        let c = Client::connect(&server(), Era::Modern, all_caps(), never()).await;
        let r1 = c.call("two_rounds", json!({})).await.unwrap();
        let keys: Vec<_> = r1["inputRequests"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(keys, ["user_name"]);
        let a1 = json!({"user_name": {"action": "accept", "content": {"name": "Ann"}}});
        let r2 = c
            .retry("two_rounds", json!({}), a1, &r1["requestState"])
            .await
            .unwrap();
        assert_eq!(r2["resultType"], "input_required");
        let q = &r2["inputRequests"]["color"];
        assert_eq!(q["params"]["message"], "Ann, what is your favorite color?");
        assert_ne!(r2["requestState"], r1["requestState"]);
        // Only the new key is answered: the first answer rides the state.
        let a2 = json!({"color": {"action": "accept", "content": {"color": "green"}}});
        let r3 = c
            .retry("two_rounds", json!({}), a2, &r2["requestState"])
            .await
            .unwrap();
        assert_eq!(text(&r3), "Ann likes green");
    })
    .await;
}

/// Missing or ill-fitting answers are asked again (a new InputRequiredResult), not errors.
#[tokio::test]
async fn modern_wrong_or_missing_answers_are_asked_again() {
    run(async {
        let c = Client::connect(&server(), Era::Modern, all_caps(), never()).await;
        let r = c.call("hello", json!({})).await.unwrap();
        let state = r["requestState"].clone();
        for wrong in [
            json!({"wrong_key": {"action": "accept", "content": {"name": "x"}}}),
            json!({"user_name": {"action": "accept", "content": {"name": 5}}}),
            json!({"user_name": {"action": "accept", "content": {}}}),
            json!({"user_name": {"roots": []}}),
        ] {
            let r = c
                .retry("hello", json!({}), wrong.clone(), &state)
                .await
                .unwrap();
            assert_eq!(r["resultType"], "input_required", "{wrong}");
            assert!(r["inputRequests"]["user_name"].is_object());
        }
        // A retry without inputResponses asks again too.
        let r = c
            .request(
                "tools/call",
                json!({"name": "hello", "arguments": {}, "requestState": state}),
            )
            .await
            .unwrap();
        assert_eq!(r["resultType"], "input_required");
    })
    .await;
}

/// Request state integrity: tampered, foreign (other arguments or tool), expired, or missing
/// when answers are sent → -32602 "Invalid or expired requestState".
#[tokio::test]
async fn modern_bad_request_state_is_32602() {
    run(async {
        let c = Client::connect(&server(), Era::Modern, all_caps(), never()).await;
        let args = json!({"city": "Lisbon"});
        let r = c.call("weather", args.clone()).await.unwrap();
        let state = r["requestState"].as_str().unwrap().to_owned();
        let answers = json!({"user_name": {"action": "accept", "content": {"name": "Bo"}}});
        let check = |e: ErrorObject| {
            assert_eq!(code(&e), -32602);
            assert_eq!(e.message, "Invalid or expired requestState");
        };
        let tampered = json!(format!("{state}-TAMPERED"));
        check(
            c.retry("weather", args.clone(), answers.clone(), &tampered)
                .await
                .unwrap_err(),
        );
        let other_args = json!({"city": "Porto"});
        check(
            c.retry("weather", other_args, answers.clone(), &json!(state))
                .await
                .unwrap_err(),
        );
        check(
            c.retry("hello", json!({}), answers.clone(), &json!(state))
                .await
                .unwrap_err(),
        );
        check(
            c.retry("weather", args.clone(), answers.clone(), &Value::Null)
                .await
                .unwrap_err(),
        );
        // Another server's state (another key).
        let other = Client::connect(&server(), Era::Modern, all_caps(), never()).await;
        check(
            other
                .retry("weather", args.clone(), answers.clone(), &json!(state))
                .await
                .unwrap_err(),
        );
        // The genuine retry works.
        let r = c
            .retry("weather", args, answers, &json!(state))
            .await
            .unwrap();
        assert_eq!(text(&r), "Bo: sunny in Lisbon");

        // Expired.
        let short = server_with(|b| {
            b.request_state_config(SealerConfig::default().with_ttl(Duration::from_millis(1)))
        });
        let c = Client::connect(&short, Era::Modern, all_caps(), never()).await;
        let r = c.call("hello", json!({})).await.unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
        let answers = json!({"user_name": {"action": "accept", "content": {"name": "Bo"}}});
        check(
            c.retry("hello", json!({}), answers, &r["requestState"])
                .await
                .unwrap_err(),
        );
    })
    .await;
}

/// Multi-round › capabilities: a question the request's clientCapabilities do not allow is
/// -32021 with `requiredCapabilities`.
#[tokio::test]
async fn modern_missing_capability_is_32021() {
    run(async {
        let c = Client::connect(&server(), Era::Modern, json!({"sampling": {}}), never()).await;
        let e = c.call("hello", json!({})).await.unwrap_err();
        assert_eq!(code(&e), -32021);
        assert_eq!(
            e.data.unwrap(),
            json!({"requiredCapabilities": {"elicitation": {}}})
        );
        let c = Client::connect(&server(), Era::Modern, json!({"elicitation": {}}), never()).await;
        let e = c.call("everything", json!({})).await.unwrap_err();
        assert_eq!(code(&e), -32021);
    })
    .await;
}

/// The server bounds the rounds: past `max_input_rounds` → -32602.
#[tokio::test]
async fn modern_rounds_are_bounded() {
    run(async {
        let s = server_with(|b| b.max_input_rounds(2));
        let c = Client::connect(&s, Era::Modern, all_caps(), never()).await;
        let wrong = json!({"user_name": {"action": "accept", "content": {}}});
        let r = c.call("hello", json!({})).await.unwrap();
        let r = c
            .retry("hello", json!({}), wrong.clone(), &r["requestState"])
            .await
            .unwrap();
        assert_eq!(r["resultType"], "input_required");
        let e = c
            .retry("hello", json!({}), wrong, &r["requestState"])
            .await
            .unwrap_err();
        assert_eq!(code(&e), -32602);
        assert!(e.message.contains("rounds"), "{}", e.message);
    })
    .await;
}

/// Multi-round › supported requests: prompts/get and resources/read too.
#[tokio::test]
async fn modern_prompts_and_resources_resolve() {
    run(async {
        let c = Client::connect(&server(), Era::Modern, all_caps(), never()).await;
        let answers = json!({"user_name": {"action": "accept", "content": {"name": "Cy"}}});
        let r = c
            .request("prompts/get", json!({"name": "intro"}))
            .await
            .unwrap();
        assert_eq!(r["resultType"], "input_required");
        let r = c
            .request(
                "prompts/get",
                json!({"name": "intro", "inputResponses": answers,
                       "requestState": r["requestState"]}),
            )
            .await
            .unwrap();
        assert_eq!(r["resultType"], "complete");
        assert_eq!(r["messages"][0]["content"]["text"], "Introduce Cy.");

        let r = c
            .request("resources/read", json!({"uri": "test://me"}))
            .await
            .unwrap();
        assert_eq!(r["resultType"], "input_required");
        assert!(r.get("ttlMs").is_none());
        let r = c
            .request(
                "resources/read",
                json!({"uri": "test://me", "inputResponses": answers,
                       "requestState": r["requestState"]}),
            )
            .await
            .unwrap();
        assert_eq!(r["contents"][0]["text"], "me: Cy");
    })
    .await;
}

/// At 2026-07-28 the direct context methods of a high-level handler join the round too,
/// keyed by call order; the handler runs again on the retry.
#[tokio::test]
async fn modern_context_methods_ask_by_call_order() {
    run(async {
        let c = Client::connect(&server(), Era::Modern, all_caps(), never()).await;
        for (tool, key, expect) in [
            (
                "signup",
                "elicitation-1",
                "welcome alice <alice@example.com>",
            ),
            ("sample_live", "sampling-1", "Paris"),
            ("roots_live", "roots-1", "file:///test/root"),
        ] {
            let r = c.call(tool, json!({})).await.unwrap();
            assert_eq!(r["resultType"], "input_required", "{r}");
            let q = &r["inputRequests"][key];
            let a = user(q["method"].as_str().unwrap(), &q["params"]).unwrap();
            let r = c
                .retry(tool, json!({}), json!({ key: a }), &r["requestState"])
                .await
                .unwrap();
            assert_eq!(text(&r), expect, "{tool}");
        }
        // Two questions in a row: two rounds.
        let r1 = c.call("ask_twice", json!({})).await.unwrap();
        let a1 = json!({"elicitation-1": {"action": "accept", "content": {"name": "Di"}}});
        let r2 = c
            .retry("ask_twice", json!({}), a1, &r1["requestState"])
            .await
            .unwrap();
        let q = &r2["inputRequests"]["sampling-2"];
        assert_eq!(q["params"]["messages"][0]["content"]["text"], "Greet Di");
        let a2 = json!({"sampling-2": user("sampling/createMessage", &Value::Null).unwrap()});
        let r3 = c
            .retry("ask_twice", json!({}), a2, &r2["requestState"])
            .await
            .unwrap();
        assert_eq!(text(&r3), "Di: Paris");
        assert!(c.asked().is_empty());
    })
    .await;
}

/// The same handler, asking twice, in the handshake era: two live requests.
#[tokio::test]
async fn handshake_context_methods_in_sequence() {
    run(async {
        let c = Client::connect(&server(), Era::Handshake, all_caps(), Arc::new(user)).await;
        let r = c.call("ask_twice", json!({})).await.unwrap();
        assert_eq!(text(&r), "alice: Paris");
        assert_eq!(c.asked().len(), 2);
    })
    .await;
}

/// URL-mode elicitation at 2026-07-28: no `elicitationId`; needs `elicitation.url`.
#[tokio::test]
async fn modern_url_elicitation() {
    run(async {
        let c = Client::connect(&server(), Era::Modern, all_caps(), never()).await;
        let r = c.call("consent", json!({})).await.unwrap();
        assert_eq!(
            r["inputRequests"]["consent"],
            json!({"method": "elicitation/create", "params": {"mode": "url",
                   "message": "Please log in", "url": "https://example.com/login"}})
        );
        let a = json!({"consent": {"action": "accept"}});
        let r = c
            .retry("consent", json!({}), a, &r["requestState"])
            .await
            .unwrap();
        assert_eq!(text(&r), "Accept");

        let c = Client::connect(&server(), Era::Modern, json!({"elicitation": {}}), never()).await;
        let e = c.call("consent", json!({})).await.unwrap_err();
        assert_eq!(
            e.data.unwrap(),
            json!({"requiredCapabilities": {"elicitation": {"url": {}}}})
        );
    })
    .await;
}

/// Several nodes with one key ring serve each other's retries; after a rotation the old
/// states still open where the old key is retained, and new states only where the new key
/// is known.
#[tokio::test]
async fn modern_shared_key_ring_and_rotation() {
    run(async {
        let ring = || KeyRing::new(StateKey::new(1, &[7; 32]));
        let a = server_with(|b| b.request_state_keys(ring()));
        let b = server_with(|b| b.request_state_keys(ring()));
        let ca = Client::connect(&a, Era::Modern, all_caps(), never()).await;
        let cb = Client::connect(&b, Era::Modern, all_caps(), never()).await;
        let answers = json!({"user_name": {"action": "accept", "content": {"name": "Ed"}}});

        let r = ca.call("hello", json!({})).await.unwrap();
        let old_state = r["requestState"].clone();
        let r = cb
            .retry("hello", json!({}), answers.clone(), &old_state)
            .await
            .unwrap();
        assert_eq!(text(&r), "Hello, Ed!");

        a.rotate_request_state_key(StateKey::new(2, &[8; 32]));
        let r = ca
            .retry("hello", json!({}), answers.clone(), &old_state)
            .await
            .unwrap();
        assert_eq!(text(&r), "Hello, Ed!", "the previous key is retained");
        let r = ca.call("hello", json!({})).await.unwrap();
        let e = cb
            .retry("hello", json!({}), answers, &r["requestState"])
            .await
            .unwrap_err();
        assert_eq!(code(&e), -32602, "node b does not know key 2 yet");
    })
    .await;
}
