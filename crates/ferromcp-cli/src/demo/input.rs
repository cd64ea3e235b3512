//! The demo server's fixtures that ask the client for input (conformance §5.2 and §5.7):
//! sampling and elicitation (live requests in the handshake era) and the multi-round
//! `test_input_required_result_*` tools and prompt (`InputRequiredResult` at 2026-07-28). All
//! ask through resolvers, so each works in both eras.

use ferromcp_server::McpServer;
use ferromcp_server::mcp_server::{
    Args, Ask, Elicitation, PromptSpec, ResolveError, Resolved, Resolver, ToolSpec,
};
use ferromcp_types::mcp::{
    CreateMessageRequestParams, CreateMessageResult, ElicitResult, ElicitationSchema, EnumOption,
    LegacyTitledEnumSchema, SamplingContent, SamplingMessage, TitledMultiSelectEnumSchema,
    TitledSingleSelectEnumSchema, UntitledMultiSelectEnumSchema, UntitledSingleSelectEnumSchema,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The text of a sampled message (its text blocks, joined).
fn sampled_text(r: &CreateMessageResult) -> String {
    let texts: Vec<&str> = r
        .content
        .blocks()
        .iter()
        .filter_map(|b| match b {
            SamplingContent::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect();
    texts.join(" ")
}

fn sample(text: impl Into<String>, max_tokens: u64) -> CreateMessageRequestParams {
    CreateMessageRequestParams::new(vec![SamplingMessage::user_text(text)], max_tokens)
}

fn answer_text(r: &ElicitResult) -> String {
    serde_json::to_string(r).unwrap_or_default()
}

/// The argument a resolver reads from the call.
fn argument(ask: &Ask, name: &str) -> String {
    ask.arguments()
        .get(name)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

// ----- §5.2: sampling and elicitation -----------------------------------------------------

/// `test_sampling`: the `prompt` argument, sampled (100 tokens).
struct PromptSample;

impl Resolver for PromptSample {
    type Output = String;

    async fn resolve(ask: &Ask) -> Result<String, ResolveError> {
        let params = sample(argument(ask, "prompt"), 100);
        let r = ask.create_message("sampling", params).await?;
        Ok(sampled_text(&r))
    }
}

/// The sign-up form of `test_elicitation`.
#[derive(Serialize, Deserialize, JsonSchema)]
struct SignUp {
    /// The user's name.
    username: String,
    /// The user's email address.
    #[schemars(email)]
    email: String,
}

/// `test_elicitation`: the `message` argument, with the sign-up form.
struct SignUpAnswer;

impl Resolver for SignUpAnswer {
    type Output = String;

    async fn resolve(ask: &Ask) -> Result<String, ResolveError> {
        let answer = ask
            .elicit_form::<SignUp>("elicitation", argument(ask, "message"))
            .await?;
        Ok(match answer {
            Elicitation::Accept(s) => format!(
                "User response: action=accept, content={}",
                serde_json::to_string(&s).unwrap_or_default()
            ),
            other => format!("User response: action={other}"),
        })
    }
}

/// A status with a default (SEP-1034).
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Status {
    Active,
    Inactive,
    Pending,
}

fn default_name() -> String {
    "John Doe".into()
}
fn default_age() -> i64 {
    30
}
fn default_score() -> f64 {
    95.5
}
fn default_status() -> Status {
    Status::Active
}
fn default_verified() -> bool {
    true
}

/// SEP-1034: every primitive type with a default.
#[derive(Serialize, Deserialize, JsonSchema)]
struct Defaults {
    /// User name.
    #[serde(default = "default_name")]
    name: String,
    /// User age.
    #[serde(default = "default_age")]
    age: i64,
    /// User score.
    #[serde(default = "default_score")]
    score: f64,
    /// User status.
    #[serde(default = "default_status")]
    status: Status,
    /// Whether the user is verified.
    #[serde(default = "default_verified")]
    verified: bool,
}

struct DefaultsAnswer;

impl Resolver for DefaultsAnswer {
    type Output = String;

    async fn resolve(ask: &Ask) -> Result<String, ResolveError> {
        let message = "Please review and update the form fields with defaults";
        let answer = ask.elicit_form::<Defaults>("defaults", message).await?;
        Ok(match answer {
            Elicitation::Accept(d) => format!(
                "Elicitation completed: action=accept, content={}",
                serde_json::to_string(&d).unwrap_or_default()
            ),
            other => format!("Elicitation completed: action={other}"),
        })
    }
}

fn option(value: &str, title: &str) -> EnumOption {
    EnumOption::new(value, title)
}

fn strings(values: &[&str]) -> Vec<String> {
    values.iter().map(|v| (*v).to_owned()).collect()
}

/// SEP-1330: the five enum shapes (the legacy `enumNames` one needs a raw schema).
fn enums_form() -> ElicitationSchema {
    let options = ["option1", "option2", "option3"];
    let titled = vec![
        option("value1", "First Option"),
        option("value2", "Second Option"),
        option("value3", "Third Option"),
    ];
    ElicitationSchema::new()
        .with_property(
            "untitledSingle",
            UntitledSingleSelectEnumSchema::new(strings(&options))
                .with_description("Choose one option"),
        )
        .with_property(
            "titledSingle",
            TitledSingleSelectEnumSchema::new(titled.clone())
                .with_description("Choose one titled option"),
        )
        .with_property(
            "legacyEnum",
            LegacyTitledEnumSchema::new(
                strings(&["opt1", "opt2", "opt3"]),
                strings(&["Option One", "Option Two", "Option Three"]),
            )
            .with_description("Choose one option (legacy titles)"),
        )
        .with_property(
            "untitledMulti",
            UntitledMultiSelectEnumSchema::new(strings(&options))
                .with_description("Choose several options"),
        )
        .with_property(
            "titledMulti",
            TitledMultiSelectEnumSchema::new(titled)
                .with_description("Choose several titled options"),
        )
}

struct EnumsAnswer;

impl Resolver for EnumsAnswer {
    type Output = String;

    async fn resolve(ask: &Ask) -> Result<String, ResolveError> {
        let message = "Please choose from the options";
        let r = ask.elicit_form_raw("enums", message, enums_form()).await?;
        Ok(format!("Elicitation completed: {}", answer_text(&r)))
    }
}

// ----- §5.7: multi-round requests -----------------------------------------------------------

/// `{name: string}`.
#[derive(Deserialize, JsonSchema)]
struct NameForm {
    name: String,
}

/// `user_name`: "What is your name?".
struct UserName;

impl Resolver for UserName {
    type Output = Option<String>;

    async fn resolve(ask: &Ask) -> Result<Self::Output, ResolveError> {
        let answer = ask
            .elicit_form::<NameForm>("user_name", "What is your name?")
            .await?;
        Ok(answer.accepted().map(|f| f.name))
    }
}

/// `capital_question`: "What is the capital of France?" (100 tokens).
struct Capital;

impl Resolver for Capital {
    type Output = String;

    async fn resolve(ask: &Ask) -> Result<String, ResolveError> {
        let params = sample("What is the capital of France?", 100);
        let r = ask.create_message("capital_question", params).await?;
        Ok(sampled_text(&r))
    }
}

/// `client_roots`: the client's root URIs.
struct ClientRoots;

impl Resolver for ClientRoots {
    type Output = Vec<String>;

    async fn resolve(ask: &Ask) -> Result<Vec<String>, ResolveError> {
        let r = ask.list_roots("client_roots").await?;
        Ok(r.roots.into_iter().map(|r| r.uri).collect())
    }
}

/// `greeting`: a sampled greeting (50 tokens).
struct Greeting;

impl Resolver for Greeting {
    type Output = String;

    async fn resolve(ask: &Ask) -> Result<String, ResolveError> {
        let params = sample("Write a one-line greeting.", 50);
        let r = ask.create_message("greeting", params).await?;
        Ok(sampled_text(&r))
    }
}

/// `{ok: boolean}`.
#[derive(Deserialize, JsonSchema)]
struct Confirm {
    ok: bool,
}

/// `confirm`: "Please confirm" with `{ok: boolean}`.
struct Confirmed;

impl Resolver for Confirmed {
    type Output = bool;

    async fn resolve(ask: &Ask) -> Result<bool, ResolveError> {
        let answer = ask
            .elicit_form::<Confirm>("confirm", "Please confirm to continue")
            .await?;
        Ok(answer.accepted().is_some_and(|c| c.ok))
    }
}

/// `step1`: the first round of `test_input_required_result_multi_round`.
struct Step1;

impl Resolver for Step1 {
    type Output = Option<String>;

    async fn resolve(ask: &Ask) -> Result<Self::Output, ResolveError> {
        let answer = ask
            .elicit_form::<NameForm>("step1", "Step 1: What is your name?")
            .await?;
        Ok(answer.accepted().map(|f| f.name))
    }
}

/// `{color: string}`.
#[derive(Deserialize, JsonSchema)]
struct ColorForm {
    color: String,
}

/// `step2`: asked once step 1 is answered, so in the second round.
struct Step2;

impl Resolver for Step2 {
    type Output = Option<String>;

    async fn resolve(ask: &Ask) -> Result<Self::Output, ResolveError> {
        ask.get::<Step1>().await?;
        let answer = ask
            .elicit_form::<ColorForm>("step2", "Step 2: What is your favorite color?")
            .await?;
        Ok(answer.accepted().map(|f| f.color))
    }
}

/// Asks only what the request's client declared: elicitation, else sampling, else roots.
struct WhatTheClientCan;

impl Resolver for WhatTheClientCan {
    type Output = String;

    async fn resolve(ask: &Ask) -> Result<String, ResolveError> {
        let caps = ask.client_capabilities().unwrap_or_default();
        if caps.elicitation.is_some() {
            let name = ask.get::<UserName>().await?;
            return Ok(format!("elicited: {}", name.unwrap_or_default()));
        }
        if caps.sampling.is_some() {
            return Ok(format!("sampled: {}", ask.get::<Capital>().await?));
        }
        let roots = ask.get::<ClientRoots>().await?;
        Ok(format!("roots: {}", roots.join(", ")))
    }
}

/// `{context: string}`.
#[derive(Deserialize, JsonSchema)]
struct ContextForm {
    context: String,
}

/// `user_context`: the prompt's context.
struct UserContext;

impl Resolver for UserContext {
    type Output = Option<String>;

    async fn resolve(ask: &Ask) -> Result<Self::Output, ResolveError> {
        let answer = ask
            .elicit_form::<ContextForm>("user_context", "What context should the prompt use?")
            .await?;
        Ok(answer.accepted().map(|f| f.context))
    }
}

fn name_or_stranger(name: Option<String>) -> String {
    name.unwrap_or_else(|| "stranger".into())
}

/// Registers the fixtures on `server`.
pub(crate) fn add(server: &McpServer) {
    let tools = [
        (
            ToolSpec::new("test_input_required_result_elicitation")
                .description("Asks the user's name (multi-round at 2026-07-28)."),
            0,
        ),
        (
            ToolSpec::new("test_input_required_result_sampling")
                .description("Asks the client's model a question (multi-round)."),
            1,
        ),
        (
            ToolSpec::new("test_input_required_result_list_roots")
                .description("Asks the client for its roots (multi-round)."),
            2,
        ),
        (
            ToolSpec::new("test_input_required_result_request_state")
                .description("Asks for a confirmation, carrying request state (multi-round)."),
            3,
        ),
        (
            ToolSpec::new("test_input_required_result_multiple_inputs")
                .description("Asks three questions in one round (multi-round)."),
            4,
        ),
        (
            ToolSpec::new("test_input_required_result_multi_round")
                .description("Asks two questions in two rounds (multi-round)."),
            5,
        ),
        (
            ToolSpec::new("test_input_required_result_tampered_state")
                .description("Asks the user's name; its request state is integrity-protected."),
            6,
        ),
        (
            ToolSpec::new("test_input_required_result_capabilities")
                .description("Asks only what the client declared it can answer (multi-round)."),
            7,
        ),
    ];
    let mut result = server
        .add_tool(
            ToolSpec::new("test_sampling")
                .description("Samples the client's model with the prompt argument."),
            |Args(_): Args<PromptArg>, Resolved(text): Resolved<PromptSample>| async move {
                format!("LLM response: {text}")
            },
        )
        .and_then(|()| {
            server.add_tool(
                ToolSpec::new("test_elicitation")
                    .description("Asks the user for a user name and an email address."),
                |Args(_): Args<MessageArg>,
                 Resolved(text): Resolved<SignUpAnswer>| async move { text },
            )
        })
        .and_then(|()| {
            server.add_tool(
                ToolSpec::new("test_elicitation_sep1034_defaults")
                    .description("Asks with a form whose fields have defaults (SEP-1034)."),
                |Resolved(text): Resolved<DefaultsAnswer>| async move { text },
            )
        })
        .and_then(|()| {
            server.add_tool(
                ToolSpec::new("test_elicitation_sep1330_enums")
                    .description("Asks with the five enum shapes (SEP-1330)."),
                |Resolved(text): Resolved<EnumsAnswer>| async move { text },
            )
        });
    for (spec, which) in tools {
        result = result.and_then(|()| match which {
            0 => server.add_tool(spec, |Resolved(n): Resolved<UserName>| async move {
                format!("Hello, {}!", name_or_stranger(n))
            }),
            1 => server.add_tool(spec, |Resolved(a): Resolved<Capital>| async move {
                format!("The model answered: {a}")
            }),
            2 => server.add_tool(spec, |Resolved(r): Resolved<ClientRoots>| async move {
                format!("Client roots: {}", r.join(", "))
            }),
            3 => server.add_tool(spec, |Resolved(ok): Resolved<Confirmed>| async move {
                format!("state-ok: confirmed={ok}")
            }),
            4 => server.add_tool(
                spec,
                |Resolved(n): Resolved<UserName>,
                 Resolved(g): Resolved<Greeting>,
                 Resolved(r): Resolved<ClientRoots>| async move {
                    format!("{g} {} (roots: {})", name_or_stranger(n), r.join(", "))
                },
            ),
            5 => server.add_tool(
                spec,
                |Resolved(n): Resolved<Step1>, Resolved(c): Resolved<Step2>| async move {
                    format!(
                        "{} likes {}",
                        name_or_stranger(n),
                        c.unwrap_or_else(|| "no color".into())
                    )
                },
            ),
            6 => server.add_tool(spec, |Resolved(n): Resolved<UserName>| async move {
                format!(
                    "Hello, {}! (the request state was intact)",
                    name_or_stranger(n)
                )
            }),
            _ => server.add_tool(
                spec,
                |Resolved(s): Resolved<WhatTheClientCan>| async move { s },
            ),
        });
    }
    if let Err(e) = result {
        unreachable!("the demo server's input fixtures are valid: {e}");
    }
    server.add_prompt(
        PromptSpec::new("test_input_required_result_prompt")
            .description("A prompt that first asks the user for context (multi-round)."),
        |Resolved(c): Resolved<UserContext>| async move {
            format!(
                "Use this context: {}",
                c.unwrap_or_else(|| "none given".into())
            )
        },
    );
}

/// `test_sampling`'s argument.
#[derive(Deserialize, JsonSchema)]
struct PromptArg {
    /// The prompt to sample.
    #[allow(dead_code)]
    prompt: String,
}

/// `test_elicitation`'s argument.
#[derive(Deserialize, JsonSchema)]
struct MessageArg {
    /// The message to show the user.
    #[allow(dead_code)]
    message: String,
}
