//! What the client does in each scenario of the conformance harness (0.1.16 and 0.2, both
//! revisions). The harness's mock server records the checks; the client only has to carry
//! out the scenario's steps and fail loudly when one fails.

use std::collections::BTreeMap;

use ferromcp_client::{Client, ClientError, HttpTransport, Lifecycle, oauth};
use ferromcp_types::ProtocolVersion;
use ferromcp_types::jsonrpc::ErrorObject;
use ferromcp_types::mcp::{
    CallToolResult, ElicitAction, ElicitRequestParams, ElicitResult, ElicitValue, Implementation,
    Tool,
};
use serde_json::{Map, Value, json};

use crate::Invocation;

/// The tool every basic scenario calls, with `{a, b}`.
const ADD_NUMBERS: &str = "add_numbers";

/// Runs the scenario `inv.scenario`.
pub(crate) async fn run(inv: &Invocation) -> Result<(), String> {
    let lifecycle = lifecycle_for(inv.protocol_version.as_deref());
    match inv.scenario.as_str() {
        "elicitation-sep1034-client-defaults" => {
            call_one(inv, lifecycle, "test_client_elicitation_defaults").await
        }
        "sse-retry" => call_one(inv, lifecycle, "test_reconnection").await,
        "sep-2322-client-request-state" => request_state(inv, lifecycle).await,
        "http-custom-headers" => custom_headers(inv, lifecycle).await,
        "http-invalid-tool-headers" => invalid_tool_headers(inv, lifecycle).await,
        "json-schema-2020-12-preservation" => schema_preservation(inv, lifecycle).await,
        // The mock of this scenario speaks only the handshake lifecycle, whatever
        // MCP_CONFORMANCE_PROTOCOL_VERSION says (it answers a 2026-07-28 request with 400);
        // the auto lifecycle's probe sees a legacy server and falls back to `initialize`.
        "json-schema-ref-no-deref" => list_only(inv, Lifecycle::Auto).await,
        // A host lists skills on connection and loads one only when it is needed; the
        // no-prefetch mock checks that listing alone reads no skill file.
        "sep-2640-client-no-prefetch" => skills_host(inv, lifecycle, false).await,
        skills if skills.starts_with("sep-2640-client-") => skills_host(inv, lifecycle, true).await,
        auth if auth.starts_with("auth/") => {
            let provider = oauth_provider(inv)?;
            let inv = Invocation {
                url: inv.url.clone(),
                scenario: inv.scenario.clone(),
                protocol_version: inv.protocol_version.clone(),
                context: inv.context.clone(),
                oauth: Some(std::sync::Arc::new(provider)),
            };
            basic(&inv, lifecycle).await
        }
        // initialize, tools_call, request-metadata, http-standard-headers and anything new:
        // connect, list the tools, call add_numbers.
        _ => basic(inv, lifecycle).await,
    }
}

/// The client ID metadata document URL the `auth/basic-cimd` mock expects as `client_id`.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// The OAuth client for the scenario's mock, configured from the scenario name and
/// `MCP_CONFORMANCE_CONTEXT`:
///
/// - `auth/client-credentials-*`: the client-credentials grant with `client_id` and
///   `client_secret`, or `private_key_pem` + `signing_algorithm` (`private_key_jwt`);
/// - `auth/wif-jwt-bearer`: the JWT bearer grant with `valid_jwt` (workload identity);
/// - `auth/enterprise-managed-authorization`, `auth/cross-app-access-complete-flow`: the
///   SEP-990 token exchange at `idp_token_endpoint` (`idp_id_token`, `idp_client_id`), then
///   the JWT bearer grant with `client_id` / `client_secret`;
/// - anything else: the authorization-code flow, pre-registered (`client_id`,
///   `client_secret`) when given, else by client ID metadata document URL when the server
///   supports it, else dynamic registration. The mock's authorization endpoint redirects at
///   once, so the hook reads the redirect's `Location`.
///
/// DPoP is on: tokens are DPoP-bound when the authorization server advertises ES256.
fn oauth_provider(inv: &Invocation) -> Result<oauth::OAuthProvider, String> {
    let ctx = inv.context.as_ref();
    let text = |key: &str| {
        ctx.and_then(|c| c.get(key))
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned)
    };
    let need = |key: &str| text(key).ok_or_else(|| format!("MCP_CONFORMANCE_CONTEXT has no {key}"));
    let credentials = match text("client_id") {
        None => None,
        Some(id) => {
            let mut c = oauth::ClientCredentials::new(id);
            if let Some(secret) = text("client_secret") {
                c = c.with_secret(secret);
            }
            if let Some(pem) = text("private_key_pem") {
                let alg = text("signing_algorithm").unwrap_or_else(|| "ES256".to_owned());
                let alg = oauth::SigningAlgorithm::from_name(&alg)
                    .ok_or_else(|| format!("unsupported signing_algorithm {alg}"))?;
                let key =
                    oauth::ClientKey::from_pem(&pem, alg).map_err(|e| format!("OAuth: {e}"))?;
                c = c.with_private_key(key);
            }
            Some(c)
        }
    };
    let scenario = inv.scenario.as_str();
    let mut cfg = match scenario {
        "auth/client-credentials-basic" | "auth/client-credentials-jwt" => {
            oauth::OAuthConfig::with_grant(oauth::Grant::ClientCredentials)
        }
        "auth/wif-jwt-bearer" => oauth::OAuthConfig::with_grant(oauth::Grant::JwtBearer {
            assertion: need("valid_jwt")?,
        }),
        "auth/enterprise-managed-authorization" | "auth/cross-app-access-complete-flow" => {
            oauth::OAuthConfig::with_grant(oauth::Grant::EnterpriseManaged(
                oauth::EnterpriseGrant::new(
                    need("idp_token_endpoint")?,
                    need("idp_id_token")?,
                    need("idp_client_id")?,
                ),
            ))
        }
        _ => oauth::OAuthConfig::new(
            "http://localhost:3000/callback",
            oauth::RedirectReadingHandler,
        )
        .with_client_metadata_url(CLIENT_METADATA_URL),
    }
    .with_client_name("ferromcp-conformance-client");
    if let Some(c) = credentials {
        cfg = cfg.with_credentials(c);
    }
    oauth::OAuthProvider::new(&inv.url, cfg).map_err(|e| format!("OAuth: {e}"))
}

/// 2026-07-28 (and later) → the stateless lifecycle; otherwise the handshake.
fn lifecycle_for(version: Option<&str>) -> Lifecycle {
    match version.and_then(ProtocolVersion::parse) {
        Some(v) if v.is_modern() => Lifecycle::Modern,
        _ => Lifecycle::Handshake,
    }
}

fn fail(what: &str, e: &ClientError) -> String {
    format!("{what}: {e}")
}

/// Connects to the mock with an elicitation handler (accepts forms; see [`answer_form`]).
async fn connect(inv: &Invocation, lifecycle: Lifecycle) -> Result<Client, String> {
    let mut transport = HttpTransport::new(&inv.url).map_err(|e| fail("bad server URL", &e))?;
    if let Some(provider) = &inv.oauth {
        transport = transport.auth(provider.clone());
    }
    let client = Client::builder()
        .client_info(Implementation::new(
            "ferromcp-conformance-client",
            env!("CARGO_PKG_VERSION"),
        ))
        .lifecycle(lifecycle)
        .on_elicitation(|params| async move { Ok::<_, ErrorObject>(answer_form(&params)) })
        .connect(transport)
        .await
        .map_err(|e| fail("connecting", &e))?;
    let session = client.session();
    tracing::info!(
        version = %session.protocol_version,
        server = ?session.server_info,
        "connected"
    );
    Ok(client)
}

/// Accepts a form elicitation. Fields with a schema `default` are left out: the client's
/// elicitation layer fills them in from the schema (SEP-1034). Other fields get a plain
/// value of their type (the first enum value for enums). URL-mode requests are declined.
fn answer_form(params: &ElicitRequestParams) -> ElicitResult {
    let ElicitRequestParams::Form(form) = params else {
        return ElicitResult::new(ElicitAction::Decline);
    };
    tracing::info!(message = %form.message, "elicitation: accepting the form");
    let mut content = BTreeMap::new();
    for (name, definition) in &form.requested_schema.properties {
        let def = serde_json::to_value(definition).unwrap_or(Value::Null);
        if def.get("default").is_some() {
            continue;
        }
        let first_enum = def
            .get("enum")
            .and_then(Value::as_array)
            .and_then(|a| a.first())
            .and_then(Value::as_str);
        let value = match (def.get("type").and_then(Value::as_str), first_enum) {
            (_, Some(choice)) => ElicitValue::String(choice.to_owned()),
            (Some("boolean"), _) => ElicitValue::Boolean(true),
            (Some("number" | "integer"), _) => ElicitValue::Number(1.0),
            (Some("array"), _) => ElicitValue::StringArray(Vec::new()),
            _ => ElicitValue::String("conformance".to_owned()),
        };
        content.insert(name.clone(), value);
    }
    ElicitResult::accept(content)
}

async fn list_tools(client: &Client) -> Result<Vec<Tool>, String> {
    let list = client
        .list_tools(None)
        .await
        .map_err(|e| fail("tools/list", &e))?;
    let names: Vec<&str> = list.tools.iter().map(|t| t.name.as_str()).collect();
    tracing::info!(tools = ?names, "listed tools");
    Ok(list.tools)
}

async fn call(client: &Client, name: &str, arguments: Value) -> Result<CallToolResult, String> {
    let result = client
        .call_tool(name, arguments)
        .await
        .map_err(|e| fail(&format!("tools/call {name}"), &e))?;
    let text: Vec<&str> = result.content.iter().filter_map(|c| c.as_text()).collect();
    tracing::info!(tool = name, is_error = ?result.is_error, text = ?text, "tool answered");
    Ok(result)
}

/// Runs `steps` on a fresh connection and shuts it down whatever the outcome.
async fn with_client<F, Fut>(inv: &Invocation, lifecycle: Lifecycle, steps: F) -> Result<(), String>
where
    F: FnOnce(Client) -> Fut,
    Fut: Future<Output = (Client, Result<(), String>)>,
{
    let client = connect(inv, lifecycle).await?;
    let (client, outcome) = steps(client).await;
    client.shutdown().await;
    outcome
}

/// Connect, list the tools, call `add_numbers` (or the first tool) with `{a: 2, b: 3}`.
async fn basic(inv: &Invocation, lifecycle: Lifecycle) -> Result<(), String> {
    with_client(inv, lifecycle, |client| async move {
        let outcome = async {
            let tools = list_tools(&client).await?;
            let name = tools
                .iter()
                .find(|t| t.name == ADD_NUMBERS)
                .or_else(|| tools.first())
                .map(|t| t.name.clone());
            if let Some(name) = name {
                call(&client, &name, json!({"a": 2, "b": 3})).await?;
            }
            Ok(())
        }
        .await;
        (client, outcome)
    })
    .await
}

/// Connect and list the tools (json-schema-ref-no-deref: nothing may fetch a network
/// `$ref`; the client never resolves `$ref`s at all).
async fn list_only(inv: &Invocation, lifecycle: Lifecycle) -> Result<(), String> {
    with_client(inv, lifecycle, |client| async move {
        let outcome = list_tools(&client).await.map(drop);
        (client, outcome)
    })
    .await
}

/// The `sep-2640-client-*` scenarios (skills extension): act as a host. List the skills
/// (nothing is read yet: no prefetch) and, when `load`, load the first one with [`Client::load_skill`]
/// (`SKILL.md` read and verified against the entry's size, digest and frontmatter) and,
/// only if it loads, read its supporting files. A refused skill is what the tampering
/// scenarios expect, so it is reported on stderr and the scenario still succeeds.
async fn skills_host(inv: &Invocation, lifecycle: Lifecycle, load: bool) -> Result<(), String> {
    with_client(inv, lifecycle, |client| async move {
        let outcome = async {
            let skills = client
                .list_all_skills()
                .await
                .map_err(|e| fail("skills/list", &e))?;
            tracing::info!(count = skills.len(), "skills listed");
            let Some(entry) = skills.first().filter(|_| load) else {
                return Ok(());
            };
            let loaded = match client.load_skill(entry).await {
                Ok(loaded) => loaded,
                Err(ferromcp_client::skills::SkillFileError::Client(e)) => {
                    return Err(fail(&format!("loading {}", entry.uri), &e));
                }
                Err(e) => {
                    eprintln!("conformance-client: refused skill {}: {e}", entry.uri);
                    return Ok(());
                }
            };
            let others: Vec<String> = loaded.supporting_files().map(|f| f.uri.clone()).collect();
            for uri in others {
                if let Err(e) = loaded.read_file(&client, &uri).await {
                    eprintln!("conformance-client: refused skill file {uri}: {e}");
                }
            }
            Ok(())
        }
        .await;
        (client, outcome)
    })
    .await
}

/// Connect, list the tools, call `tool` without arguments: the elicitation (with schema
/// defaults) and SSE-resumption scenarios, where the transport and the handlers do the work.
async fn call_one(inv: &Invocation, lifecycle: Lifecycle, tool: &str) -> Result<(), String> {
    with_client(inv, lifecycle, |client| async move {
        let outcome = async {
            list_tools(&client).await?;
            call(&client, tool, json!({})).await.map(drop)
        }
        .await;
        (client, outcome)
    })
    .await
}

/// sep-2322-client-request-state: the multi-round driver answers the input requests and
/// echoes `requestState`; an unrelated call in between carries no MRTR params; a result
/// without `resultType` is complete.
async fn request_state(inv: &Invocation, lifecycle: Lifecycle) -> Result<(), String> {
    with_client(inv, lifecycle, |client| async move {
        let outcome = async {
            list_tools(&client).await?;
            for tool in [
                "test_mrtr_echo_state",
                "test_mrtr_unrelated",
                "test_mrtr_no_state",
                "test_mrtr_no_result_type",
            ] {
                call(&client, tool, json!({})).await?;
            }
            Ok(())
        }
        .await;
        (client, outcome)
    })
    .await
}

/// http-custom-headers: replay `context.toolCalls` after listing the tools (the transport
/// mirrors `x-mcp-header` arguments into `Mcp-Param-*` headers).
async fn custom_headers(inv: &Invocation, lifecycle: Lifecycle) -> Result<(), String> {
    let calls: Vec<(String, Value)> = inv
        .context
        .as_ref()
        .and_then(|c| c.get("toolCalls"))
        .and_then(Value::as_array)
        .map(|calls| {
            calls
                .iter()
                .filter_map(|c| {
                    let name = c.get("name")?.as_str()?.to_owned();
                    let args = c.get("arguments").cloned().unwrap_or(Value::Null);
                    Some((name, args))
                })
                .collect()
        })
        .unwrap_or_default();
    if calls.is_empty() {
        return Err("MCP_CONFORMANCE_CONTEXT has no toolCalls to replay".into());
    }
    with_client(inv, lifecycle, |client| async move {
        let outcome = async {
            list_tools(&client).await?;
            for (name, args) in calls {
                call(&client, &name, args).await?;
            }
            Ok(())
        }
        .await;
        (client, outcome)
    })
    .await
}

/// http-invalid-tool-headers: the transport drops tools whose `x-mcp-header` annotations
/// are invalid from `tools/list`; call every tool that is left, with arguments made up from
/// its schema.
async fn invalid_tool_headers(inv: &Invocation, lifecycle: Lifecycle) -> Result<(), String> {
    with_client(inv, lifecycle, |client| async move {
        let outcome = async {
            let tools = list_tools(&client).await?;
            for tool in &tools {
                call(&client, &tool.name, sample_arguments(&tool.input_schema)).await?;
            }
            Ok(())
        }
        .await;
        (client, outcome)
    })
    .await
}

/// Arguments for every required property of an input schema, by type.
fn sample_arguments(schema: &Map<String, Value>) -> Value {
    let mut args = Map::new();
    let properties = schema.get("properties").and_then(Value::as_object);
    let required = schema.get("required").and_then(Value::as_array);
    for name in required.into_iter().flatten().filter_map(Value::as_str) {
        let kind = properties
            .and_then(|p| p.get(name))
            .and_then(|p| p.get("type"))
            .and_then(Value::as_str);
        let value = match kind {
            Some("boolean") => json!(true),
            Some("integer" | "number") => json!(1),
            Some("object") => json!({}),
            Some("array") => json!([]),
            _ => json!("us-west1"),
        };
        args.insert(name.to_owned(), value);
    }
    Value::Object(args)
}

/// json-schema-2020-12-preservation: echo the focal tool's `inputSchema`, as received, to
/// `json_schema_echo`.
async fn schema_preservation(inv: &Invocation, lifecycle: Lifecycle) -> Result<(), String> {
    const FOCAL: &str = "json_schema_2020_12_tool";
    with_client(inv, lifecycle, |client| async move {
        let outcome = async {
            let tools = list_tools(&client).await?;
            let focal = tools
                .iter()
                .find(|t| t.name == FOCAL)
                .ok_or_else(|| format!("the server did not list {FOCAL}"))?;
            let schema = Value::Object(focal.input_schema.clone());
            call(&client, "json_schema_echo", json!({ "schema": schema }))
                .await
                .map(drop)
        }
        .await;
        (client, outcome)
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lifecycle_follows_the_revision() {
        assert_eq!(lifecycle_for(Some("2026-07-28")), Lifecycle::Modern);
        assert_eq!(lifecycle_for(Some("2025-11-25")), Lifecycle::Handshake);
        assert_eq!(lifecycle_for(None), Lifecycle::Handshake);
    }

    #[test]
    fn sample_arguments_cover_required_properties() {
        let schema = json!({
            "type": "object",
            "properties": {"region": {"type": "string"}, "n": {"type": "integer"}},
            "required": ["region", "n"]
        });
        let Value::Object(schema) = schema else {
            unreachable!()
        };
        assert_eq!(
            sample_arguments(&schema),
            json!({"region": "us-west1", "n": 1})
        );
    }
}
