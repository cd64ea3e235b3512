//! MCP Apps (`io.modelcontextprotocol/ui`, SEP-1865), host side, against ferromcp's server
//! in both eras: the opt-in declaration reaches the server's handlers, a tool's app is found
//! and fetched with its CSP and permissions, and hostile links (not `ui://`, not the app
//! MIME type, over the size bound, bad base64) are refused with a clear error.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use common::*;
use ferromcp_client::apps::{
    APP_MIME_TYPE, AppConfig, AppError, DEFAULT_MAX_APP_BYTES, tool_app_uri, visible_to_model,
};
use ferromcp_client::{Client, Lifecycle};
use ferromcp_server::mcp_server::{
    App, AppCsp, AppPermission, AppVisibility, ResourceSpec, ToolSpec, client_supports_apps,
};
use ferromcp_server::{McpServer, RequestContext};
use ferromcp_types::mcp::{
    BlobResourceContents, ReadResourceResult, ResourceContents, TextResourceContents, Tool,
};
use serde_json::json;

const URI: &str = "ui://demo/counter";
const HTML: &str = "<!DOCTYPE html><html><body>counter</body></html>";

fn server(html: String) -> McpServer {
    McpServer::builder("apps", "1.0.0")
        .app(
            App::new(URI, "Counter", html)
                .csp(AppCsp::new().connect_domain("https://api.example.com"))
                .permission(AppPermission::Microphone)
                .prefers_border(false),
        )
        .tool(ToolSpec::new("count").app(URI), || async { "1" })
        .tool(
            ToolSpec::new("bump")
                .app(URI)
                .app_visibility(&[AppVisibility::App]),
            || async { "2" },
        )
        .tool("supports", |ctx: RequestContext| async move {
            client_supports_apps(&ctx).to_string()
        })
        // Hostile: a `ui://` resource that is plain text, and an app blob that is not base64.
        .resource(
            ResourceSpec::new("ui://evil/notes", "notes").mime_type("text/plain"),
            || async { "not html".to_owned() },
        )
        .resource(
            ResourceSpec::new("ui://evil/blob", "blob").mime_type(APP_MIME_TYPE),
            || async {
                let mut b = BlobResourceContents::new("ui://evil/blob", "!!!not base64!!!");
                b.mime_type = Some(APP_MIME_TYPE.to_owned());
                ReadResourceResult::new(vec![ResourceContents::Blob(b)])
            },
        )
        .resource(
            ResourceSpec::new("ui://demo/b64", "b64").mime_type(APP_MIME_TYPE),
            || async {
                // "<p>hi</p>" in base64.
                let mut b = BlobResourceContents::new("ui://demo/b64", "PHA+aGk8L3A+");
                b.mime_type = Some(APP_MIME_TYPE.to_owned());
                ReadResourceResult::new(vec![ResourceContents::Blob(b)])
            },
        )
        .resource(
            ResourceSpec::new("ui://evil/other-uri", "o").mime_type(APP_MIME_TYPE),
            || async {
                let mut t = TextResourceContents::new("ui://somewhere/else", HTML);
                t.mime_type = Some(APP_MIME_TYPE.to_owned());
                ReadResourceResult::new(vec![ResourceContents::Text(t)])
            },
        )
        .build()
        .unwrap()
}

async fn client(mode: Lifecycle, apps: Option<AppConfig>, html: &str) -> Client {
    let mut b = Client::builder().lifecycle(mode);
    if let Some(config) = apps {
        b = b.apps(config);
    }
    connect(b, server(html.to_owned()).server().clone()).await
}

fn linked(uri: &str) -> Tool {
    let mut tool = Tool::new("t", object_schema());
    tool.meta = serde_json::from_value(json!({"ui": {"resourceUri": uri}})).unwrap();
    tool
}

/// C49: the opt-in declaration reaches the server's handlers in both eras (and is absent
/// without it); `tool_app` finds the linked app and returns its HTML, CSP origins and
/// permissions; app-only tools are not for the model; a base64 blob app decodes.
#[tokio::test]
async fn c49_client_declares_apps_and_fetches_a_tools_app() {
    within(Box::pin(async {
        for mode in [Lifecycle::Handshake, Lifecycle::Modern] {
            let c = client(mode, Some(AppConfig::new()), HTML).await;
            let r = c.call_tool("supports", json!({})).await.unwrap();
            assert_eq!(r.content[0].as_text(), Some("true"), "{mode:?}");
            assert_eq!(c.apps_extension().is_some(), mode == Lifecycle::Modern);

            let tools = c.list_all_tools().await.unwrap();
            let count = tools.iter().find(|t| t.name == "count").unwrap();
            let bump = tools.iter().find(|t| t.name == "bump").unwrap();
            assert_eq!(tool_app_uri(count), Some(URI));
            assert!(visible_to_model(count) && !visible_to_model(bump));
            let app = c.tool_app(count).await.unwrap().unwrap();
            assert_eq!(app.uri, URI);
            assert_eq!(app.mime_type, APP_MIME_TYPE);
            assert_eq!(app.html, HTML);
            assert_eq!(app.connect_domains, ["https://api.example.com"]);
            assert!(app.resource_domains.is_empty());
            assert_eq!(app.permissions, ["microphone"]);
            assert_eq!(app.prefers_border, Some(false));
            let unlinked = tools.iter().find(|t| t.name == "supports").unwrap();
            assert!(c.tool_app(unlinked).await.unwrap().is_none());
            let b64 = c.tool_app(&linked("ui://demo/b64")).await.unwrap().unwrap();
            assert_eq!(b64.html, "<p>hi</p>");

            let plain = client(mode, None, HTML).await;
            let r = plain.call_tool("supports", json!({})).await.unwrap();
            assert_eq!(r.content[0].as_text(), Some("false"), "{mode:?}");
        }
    }))
    .await;
}

/// C48: a malicious server's app links are refused with a clear error, in both eras: an
/// http(s) URL (before any request), a `ui://` resource that is not the app MIME type, an
/// app over the size bound (the default and a smaller setting), a blob that is not base64,
/// contents for another URI.
#[tokio::test]
async fn c48_hostile_app_links_are_refused() {
    within(Box::pin(async {
        for mode in [Lifecycle::Handshake, Lifecycle::Modern] {
            let c = client(mode, Some(AppConfig::new().max_bytes(HTML.len() - 1)), HTML).await;
            let e = c
                .tool_app(&linked("https://evil.example/app.html"))
                .await
                .unwrap_err();
            assert!(matches!(e, AppError::NotUiScheme { .. }), "{e}");
            assert!(e.to_string().contains("ui://"), "{e}");
            let e = c.tool_app(&linked("ui://evil/notes")).await.unwrap_err();
            assert!(
                matches!(&e, AppError::WrongMimeType { mime_type: Some(m), .. } if m == "text/plain"),
                "{e}"
            );
            let e = c.tool_app(&linked(URI)).await.unwrap_err();
            assert!(
                matches!(e, AppError::TooLarge { size, limit, .. } if size == HTML.len() && limit == HTML.len() - 1),
                "{e}"
            );
            let e = c.tool_app(&linked("ui://evil/blob")).await.unwrap_err();
            assert!(matches!(e, AppError::BadEncoding { .. }), "{e}");
            let e = c.tool_app(&linked("ui://evil/other-uri")).await.unwrap_err();
            assert!(matches!(e, AppError::NoContents { .. }), "{e}");

            // The default bound, without any setting.
            let huge = "x".repeat(DEFAULT_MAX_APP_BYTES + 1);
            let c = client(mode, None, &huge).await;
            let e = c.tool_app(&linked(URI)).await.unwrap_err();
            assert!(
                matches!(e, AppError::TooLarge { limit, .. } if limit == DEFAULT_MAX_APP_BYTES),
                "{e}"
            );
        }
    }))
    .await;
}
