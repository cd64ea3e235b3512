//! The high-level server's resources, resource templates, prompts and completions, end to
//! end through the direct dispatcher in both eras (MCP "Server Features › Resources",
//! "› Prompts", "Utilities › Completion").
#![allow(clippy::unwrap_used, clippy::panic)]

mod in_process_support;
use in_process_support::{Client, run};

use std::time::Duration;

use ferromcp_server::mcp_server::{Args, Blob, CompletionRequest, PromptSpec, ResourceSpec};
use ferromcp_server::{
    DEFAULT_MAX_SUBSCRIPTION_URI_LEN, DEFAULT_MAX_SUBSCRIPTIONS, McpServer, SubscriptionLimits,
};
use ferromcp_types::Era;
use ferromcp_types::jsonrpc::ErrorCode;
use ferromcp_types::mcp::{ContentBlock, PromptMessage, Role};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
struct ItemVars {
    id: String,
}

/// Whom to greet.
#[derive(Deserialize, JsonSchema)]
struct GreetArgs {
    /// The person's name.
    name: String,
    /// An optional mood.
    mood: Option<String>,
}

async fn greet(Args(a): Args<GreetArgs>) -> Vec<PromptMessage> {
    let mood = a.mood.unwrap_or_else(|| "kind".into());
    vec![
        PromptMessage::user_text(format!("Greet {} in a {mood} way.", a.name)),
        PromptMessage::new(Role::Assistant, ContentBlock::image("aGk=", "image/png")),
    ]
}

fn server() -> McpServer {
    McpServer::builder("res", "1.0.0")
        .resource(
            ResourceSpec::new("test://static/text", "text").mime_type("text/plain"),
            || async { "static text".to_string() },
        )
        .resource(ResourceSpec::new("test://static/blob", "blob"), || async {
            Blob::new(&[0u8, 1, 2, 255], "application/octet-stream")
        })
        .resource_template(
            ResourceSpec::new("test://template/{id}/data", "item").mime_type("application/json"),
            |Args(v): Args<ItemVars>| async move { json!({"id": v.id}).to_string() },
        )
        .prompt(
            PromptSpec::new("greet").description("Greets someone."),
            greet,
        )
        .prompt_completion("greet", "name", |r: CompletionRequest| async move {
            ["Ada", "Alan", "Grace"]
                .iter()
                .filter(|n| n.starts_with(&r.value))
                .map(|n| (*n).to_string())
                .collect()
        })
        .template_completion("test://template/{id}/data", "id", |_r| async {
            (0..150).map(|i| i.to_string()).collect()
        })
        .build()
        .unwrap()
}

#[tokio::test]
async fn resources_and_templates_list_and_read_in_both_eras() {
    run(async {
        for era in [Era::Handshake, Era::Modern] {
            let c = Client::connect(&server(), era).await;
            let list = c.request("resources/list", json!({})).await.unwrap();
            let uris: Vec<_> = list["resources"].as_array().unwrap().iter().map(|r| r["uri"].clone()).collect();
            assert_eq!(uris, [json!("test://static/text"), json!("test://static/blob")]);
            let templates = c.request("resources/templates/list", json!({})).await.unwrap();
            assert_eq!(templates["resourceTemplates"][0]["uriTemplate"], "test://template/{id}/data");

            let r = c.request("resources/read", json!({"uri": "test://static/text"})).await.unwrap();
            assert_eq!(r["contents"][0], json!({"uri": "test://static/text", "mimeType": "text/plain", "text": "static text"}));
            let r = c.request("resources/read", json!({"uri": "test://static/blob"})).await.unwrap();
            assert_eq!(r["contents"][0]["blob"], "AAEC/w==");
            let r = c.request("resources/read", json!({"uri": "test://template/42/data"})).await.unwrap();
            assert_eq!(r["contents"][0]["text"], r#"{"id":"42"}"#);
            assert_eq!(r["contents"][0]["mimeType"], "application/json");

            // Resource not found: -32002 before 2026-07-28, -32602 at it.
            let e = c.request("resources/read", json!({"uri": "test://nope"})).await.unwrap_err();
            let expected = if era == Era::Modern { -32602 } else { -32002 };
            assert_eq!(e.code.0, expected);
            assert_eq!(e.data, Some(json!({"uri": "test://nope"})));
        }
    })
    .await;
}

/// Security issue, item 3 (`resources/subscribe` is bounded): a URI that names no resource,
/// template match or skill file is -32002 and nothing is recorded; a connection holds at most
/// `SubscriptionLimits::max_per_connection` distinct URIs (a further one is -32602, while
/// subscribing again to one held still succeeds), and a URI longer than
/// `SubscriptionLimits::max_uri_len` is -32602; the connection keeps serving.
#[tokio::test]
async fn subscriptions_are_bounded_and_only_for_known_resources() {
    run(async {
        let s = McpServer::builder("bounded", "1.0.0")
            .resource(ResourceSpec::new("test://static/text", "text"), || async {
                "text".to_string()
            })
            .resource_template(
                ResourceSpec::new("test://item/{id}", "item"),
                |Args(v): Args<ItemVars>| async move { v.id },
            )
            .subscription_limits(SubscriptionLimits::new(2, 64))
            .build()
            .unwrap();
        let c = Client::connect(&s, Era::Handshake).await;
        let subscribe = |uri: String| {
            let c = &c;
            async move {
                c.request("resources/subscribe", json!({ "uri": uri }))
                    .await
            }
        };
        let e = subscribe("test://unknown".into()).await.unwrap_err();
        assert_eq!(e.code, ErrorCode::RESOURCE_NOT_FOUND);
        subscribe("test://static/text".into()).await.unwrap();
        subscribe("test://item/1".into()).await.unwrap();
        // Again for one already held: fine; a third distinct one: refused.
        subscribe("test://static/text".into()).await.unwrap();
        let e = subscribe("test://item/2".into()).await.unwrap_err();
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
        assert!(e.message.contains("subscriptions"), "{e:?}");
        // Past the length bound: refused before any matching, whatever it names.
        let long = format!("test://item/{}", "x".repeat(100));
        let e = subscribe(long).await.unwrap_err();
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
        assert!(e.message.len() < 200, "the URI is not echoed: {e:?}");
        // Unsubscribing frees a place.
        c.request("resources/unsubscribe", json!({"uri": "test://item/1"}))
            .await
            .unwrap();
        subscribe("test://item/2".into()).await.unwrap();
        assert_eq!(c.request("ping", json!({})).await.unwrap(), json!({}));
    })
    .await;
}

/// The defaults of `SubscriptionLimits` are the documented constants.
#[test]
fn subscription_limits_default_to_the_documented_bounds() {
    let limits = SubscriptionLimits::default();
    assert_eq!(limits.max_per_connection, DEFAULT_MAX_SUBSCRIPTIONS);
    assert_eq!(limits.max_uri_len, DEFAULT_MAX_SUBSCRIPTION_URI_LEN);
}

#[tokio::test]
async fn subscriptions_deliver_updates_only_for_subscribed_uris() {
    run(async {
        let s = server();
        let c = Client::connect(&s, Era::Handshake).await;
        let caps = c.raw("initialize", json!({})).await;
        assert!(caps.is_err(), "already initialized");
        c.request("resources/subscribe", json!({"uri": "test://static/text"}))
            .await
            .unwrap();
        s.notify_resource_updated("test://static/blob");
        s.notify_resource_updated("test://static/text");
        let updates = |c: &Client| {
            c.notes
                .lock()
                .unwrap()
                .iter()
                .filter(|(m, _)| m == "notifications/resources/updated")
                .count()
        };
        while updates(&c) == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        c.request(
            "resources/unsubscribe",
            json!({"uri": "test://static/text"}),
        )
        .await
        .unwrap();
        s.notify_resource_updated("test://static/text");
        tokio::time::sleep(Duration::from_millis(100)).await;
        let notes = c.notes.lock().unwrap();
        let updated: Vec<_> = notes
            .iter()
            .filter(|(m, _)| m == "notifications/resources/updated")
            .map(|(_, p)| p["uri"].clone())
            .collect();
        assert_eq!(updated, [json!("test://static/text")], "{notes:?}");
    })
    .await;
}

#[tokio::test]
async fn prompts_list_and_get_with_typed_arguments() {
    run(async {
        for era in [Era::Handshake, Era::Modern] {
            let c = Client::connect(&server(), era).await;
            let list = c.request("prompts/list", json!({})).await.unwrap();
            let p = &list["prompts"][0];
            assert_eq!(
                (&p["name"], &p["description"]),
                (&json!("greet"), &json!("Greets someone."))
            );
            let args = p["arguments"].as_array().unwrap();
            let name = args.iter().find(|a| a["name"] == "name").unwrap();
            assert_eq!(
                (&name["required"], &name["description"]),
                (&json!(true), &json!("The person's name."))
            );
            let mood = args.iter().find(|a| a["name"] == "mood").unwrap();
            assert_eq!(mood["required"], false);

            let r = c
                .request(
                    "prompts/get",
                    json!({"name": "greet", "arguments": {"name": "Ada"}}),
                )
                .await
                .unwrap();
            assert_eq!(
                r["messages"][0]["content"]["text"],
                "Greet Ada in a kind way."
            );
            assert_eq!(r["messages"][1]["content"]["type"], "image");

            let e = c
                .request("prompts/get", json!({"name": "greet", "arguments": {}}))
                .await
                .unwrap_err();
            assert_eq!(e.code.0, -32602, "a missing required argument");
            let e = c
                .request("prompts/get", json!({"name": "nope"}))
                .await
                .unwrap_err();
            assert_eq!(e.code.0, -32602, "an unknown prompt");
        }
    })
    .await;
}

#[tokio::test]
async fn completions_for_prompt_arguments_and_template_variables() {
    run(async {
        let c = Client::connect(&server(), Era::Modern).await;
        let r = c
            .request(
                "completion/complete",
                json!({"ref": {"type": "ref/prompt", "name": "greet"},
                "argument": {"name": "name", "value": "A"}}),
            )
            .await
            .unwrap();
        assert_eq!(r["completion"]["values"], json!(["Ada", "Alan"]));
        let r = c
            .request(
                "completion/complete",
                json!({"ref": {"type": "ref/resource", "uri": "test://template/{id}/data"},
                "argument": {"name": "id", "value": ""}}),
            )
            .await
            .unwrap();
        assert_eq!(
            r["completion"]["values"].as_array().unwrap().len(),
            100,
            "capped at 100"
        );
        assert_eq!(
            (&r["completion"]["total"], &r["completion"]["hasMore"]),
            (&json!(150), &json!(true))
        );
        let r = c
            .request(
                "completion/complete",
                json!({"ref": {"type": "ref/prompt", "name": "other"},
                "argument": {"name": "x", "value": ""}}),
            )
            .await
            .unwrap();
        assert_eq!(r["completion"]["values"], json!([]));
    })
    .await;
}

#[tokio::test]
async fn capabilities_follow_what_is_registered() {
    run(async {
        let only_tools = McpServer::builder("t", "1")
            .tool("x", || async { "x" })
            .build()
            .unwrap();
        let c = Client::connect(&only_tools, Era::Handshake).await;
        let _ = c;
        let caps = only_tools
            .server()
            .capabilities(ferromcp_types::ProtocolVersion::V2025_11_25);
        assert!(caps.tools.is_some() && caps.prompts.is_none() && caps.resources.is_none());
        assert!(caps.completions.is_none());
        let caps = server()
            .server()
            .capabilities(ferromcp_types::ProtocolVersion::V2025_11_25);
        assert!(caps.tools.is_none() && caps.prompts.is_some() && caps.completions.is_some());
        let res = caps.resources.unwrap();
        assert_eq!((res.subscribe, res.list_changed), (Some(true), Some(true)));
    })
    .await;
}

/// F24: a resource template added at run time is listed (clients are told the resource list
/// changed), reads a matching URI through its handler and completes its variable; removed,
/// it is neither listed, readable nor completed.
#[tokio::test]
async fn f24_a_template_added_at_run_time_is_served_until_removed() {
    run(async {
        let s = McpServer::builder("live", "1")
            .enable_resources()
            .enable_completions()
            .build()
            .unwrap();
        let c = Client::connect(&s, Era::Handshake).await;
        let template = "test://live/{id}";
        let changes = |c: &Client| {
            c.notes
                .lock()
                .unwrap()
                .iter()
                .filter(|(m, _)| m == "notifications/resources/list_changed")
                .count()
        };
        s.add_resource_template(
            ResourceSpec::new(template, "live"),
            |Args(v): Args<ItemVars>| async move { format!("live {}", v.id) },
        )
        .unwrap();
        s.add_template_completion(template, "id", |r: CompletionRequest| async move {
            ["7", "70", "8"]
                .iter()
                .filter(|v| v.starts_with(&r.value))
                .map(|v| (*v).to_string())
                .collect()
        });
        assert_eq!(s.resource_template_uris(), [template]);
        while changes(&c) == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let list = c
            .request("resources/templates/list", json!({}))
            .await
            .unwrap();
        assert_eq!(list["resourceTemplates"][0]["uriTemplate"], template);
        let read = c
            .request("resources/read", json!({"uri": "test://live/42"}))
            .await
            .unwrap();
        assert_eq!(read["contents"][0]["text"], "live 42");
        let complete = json!({"ref": {"type": "ref/resource", "uri": template},
                              "argument": {"name": "id", "value": "7"}});
        let r = c
            .request("completion/complete", complete.clone())
            .await
            .unwrap();
        assert_eq!(r["completion"]["values"], json!(["7", "70"]));

        assert!(s.remove_resource_template(template));
        assert!(!s.remove_resource_template(template));
        while changes(&c) < 2 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let list = c
            .request("resources/templates/list", json!({}))
            .await
            .unwrap();
        assert_eq!(list["resourceTemplates"], json!([]));
        assert!(
            c.request("resources/read", json!({"uri": "test://live/42"}))
                .await
                .is_err()
        );
        let r = c.request("completion/complete", complete).await.unwrap();
        assert_eq!(r["completion"]["values"], json!([]));
        assert!(
            s.add_resource_template(ResourceSpec::new("test://bad/{", "bad"), || async {
                String::new()
            })
            .is_err(),
            "an invalid URI template is refused"
        );
        assert!(s.resource_template_uris().is_empty());
    })
    .await;
}

/// C57: completions for a prompt's argument added at run time are served, and removing the
/// prompt removes them (a prompt added again without them completes to nothing).
#[tokio::test]
async fn c57_prompt_completions_added_at_run_time_are_served_until_the_prompt_is_removed() {
    run(async {
        let s = McpServer::builder("live", "1")
            .enable_prompts()
            .enable_completions()
            .build()
            .unwrap();
        let c = Client::connect(&s, Era::Handshake).await;
        s.add_prompt(PromptSpec::new("greet"), greet);
        s.add_prompt_completion("greet", "name", |r: CompletionRequest| async move {
            ["Ada", "Alan", "Grace"]
                .iter()
                .filter(|n| n.starts_with(&r.value))
                .map(|n| (*n).to_string())
                .collect()
        });
        let complete = json!({"ref": {"type": "ref/prompt", "name": "greet"},
                              "argument": {"name": "name", "value": "A"}});
        let r = c
            .request("completion/complete", complete.clone())
            .await
            .unwrap();
        assert_eq!(r["completion"]["values"], json!(["Ada", "Alan"]));
        assert!(s.remove_prompt("greet"));
        s.add_prompt(PromptSpec::new("greet"), greet);
        let r = c.request("completion/complete", complete).await.unwrap();
        assert_eq!(r["completion"]["values"], json!([]));
    })
    .await;
}
