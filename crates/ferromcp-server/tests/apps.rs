//! MCP Apps (`io.modelcontextprotocol/ui`, SEP-1865) in the high-level server, both eras:
//! the app resource listed and read with the app MIME type and `_meta.ui`, tools linked
//! with `_meta.ui.resourceUri` / `visibility`, the extension declared only with an app,
//! the client's declared support visible to handlers, and the build-time link checks.
#![allow(clippy::unwrap_used, clippy::panic)]

mod in_process_support;
use in_process_support::{Client, run};

use ferromcp_dispatch::{CallOptions, Dispatcher, Outbound, handler_fn};
use ferromcp_server::mcp_server::{
    APP_MIME_TYPE, App, AppCsp, AppPermission, AppVisibility, EXTENSION_UI, ToolSpec,
    client_app_mime_types, client_supports_apps,
};
use ferromcp_server::{BuildError, McpServer, RequestContext};
use ferromcp_types::Era;
use ferromcp_types::jsonrpc::{ErrorObject, Payload};
use serde_json::{Value, json};

const URI: &str = "ui://demo/counter";
const HTML: &str = "<!DOCTYPE html><html><body>counter</body></html>";

fn app() -> App {
    App::new(URI, "Counter", HTML)
        .description("A counter view")
        .csp(
            AppCsp::new()
                .connect_domain("https://api.example.com")
                .resource_domain("https://cdn.example.com"),
        )
        .permission(AppPermission::ClipboardWrite)
        .permission(AppPermission::Camera)
        .domain("abc.example-sandbox.com")
        .prefers_border(true)
}

async fn mime_types(ctx: RequestContext) -> String {
    json!({"mimeTypes": client_app_mime_types(&ctx), "supports": client_supports_apps(&ctx)})
        .to_string()
}

fn server() -> McpServer {
    McpServer::builder("apps", "1.0.0")
        .app(app())
        .tool(ToolSpec::new("count").app(URI), || async { "1" })
        .tool(
            ToolSpec::new("bump")
                .app(URI)
                .app_visibility(&[AppVisibility::App]),
            || async { "2" },
        )
        .tool("mime_types", mime_types)
        .build()
        .unwrap()
}

fn expected_ui() -> Value {
    json!({
        "csp": {"connectDomains": ["https://api.example.com"],
                "resourceDomains": ["https://cdn.example.com"]},
        "permissions": {"clipboardWrite": {}, "camera": {}},
        "domain": "abc.example-sandbox.com",
        "prefersBorder": true,
    })
}

/// SV-A13: the app is a `ui://` resource listed and read (both eras) with
/// `text/html;profile=mcp-app` and its CSP, permissions, domain and border in `_meta.ui`.
#[tokio::test]
async fn sv_a13_app_resource_listed_and_read_with_mime_and_meta() {
    run(async {
        for era in [Era::Handshake, Era::Modern] {
            let c = Client::connect(&server(), era).await;
            let list = c.request("resources/list", json!({})).await.unwrap();
            let entry = &list["resources"][0];
            assert_eq!(entry["uri"], URI, "{era:?}");
            assert_eq!(entry["mimeType"], APP_MIME_TYPE);
            assert_eq!(entry["_meta"]["ui"], expected_ui());
            let read = c
                .request("resources/read", json!({"uri": URI}))
                .await
                .unwrap();
            let contents = &read["contents"][0];
            assert_eq!(contents["mimeType"], "text/html;profile=mcp-app", "{era:?}");
            assert_eq!(contents["text"], HTML);
            assert_eq!(contents["_meta"]["ui"], expected_ui());
        }
    })
    .await;
}

/// SV-A13: linked tools carry `_meta.ui.resourceUri`; an app-only tool carries
/// `visibility: ["app"]` and stays in `tools/list` (hiding it from the model is the host's
/// job); an unlinked tool has no `_meta.ui`.
#[tokio::test]
async fn sv_a13_linked_tools_carry_resource_uri_and_visibility() {
    run(async {
        for era in [Era::Handshake, Era::Modern] {
            let c = Client::connect(&server(), era).await;
            let list = c.request("tools/list", json!({})).await.unwrap();
            let tools = list["tools"].as_array().unwrap();
            let by_name = |n: &str| tools.iter().find(|t| t["name"] == n).unwrap().clone();
            assert_eq!(by_name("count")["_meta"]["ui"], json!({"resourceUri": URI}));
            assert_eq!(
                by_name("bump")["_meta"]["ui"],
                json!({"resourceUri": URI, "visibility": ["app"]}),
                "{era:?}"
            );
            assert!(by_name("mime_types").get("_meta").is_none());
            let r = c.call("bump", json!({})).await.unwrap();
            assert_eq!(r["content"][0]["text"], "2");
        }
    })
    .await;
}

/// The capabilities a handshake-era client sees after `initialize` with `caps`, and the
/// first text of `tools/call mime_types`.
async fn handshake(server: &McpServer, caps: Value) -> (Value, Value) {
    let peer = server.server().in_process(Era::Handshake);
    let handler =
        handler_fn(
            |_, method, _| async move { Err(ErrorObject::method_not_found(&method).into()) },
        )
        .into_arc();
    let runner = peer.clone();
    tokio::spawn(async move { runner.run(handler).await });
    let send = |method: &'static str, params: Value| {
        let peer = peer.clone();
        async move {
            peer.send_request(
                method,
                Some(Payload::from_value(params)),
                CallOptions::new(),
            )
            .await
            .unwrap()
            .into_value()
            .unwrap()
        }
    };
    let init = send(
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": caps,
               "clientInfo": {"name": "t", "version": "1"}}),
    )
    .await;
    peer.notify("notifications/initialized", None).await;
    let r = send("tools/call", json!({"name": "mime_types", "arguments": {}})).await;
    let text = r["content"][0]["text"].as_str().unwrap().to_owned();
    (
        init["capabilities"].clone(),
        serde_json::from_str(&text).unwrap(),
    )
}

/// SV-A14: the server declares `io.modelcontextprotocol/ui` only when an app is registered
/// (2026-07-28 `server/discover`; the 2025-11-25 `initialize` result has no `extensions`
/// member in its schema); the client's declared MIME types reach handlers in both eras
/// (`initialize` capabilities, then the 2026-07-28 per-request envelope).
#[tokio::test]
async fn sv_a14_extension_declared_with_apps_and_client_support_visible() {
    run(async {
        let c = Client::connect(&server(), Era::Modern).await;
        let caps = c.request("server/discover", json!({})).await.unwrap()["capabilities"].clone();
        assert_eq!(caps["extensions"][EXTENSION_UI], json!({}));
        let plain = McpServer::builder("plain", "1")
            .tool("mime_types", mime_types)
            .build()
            .unwrap();
        let c = Client::connect(&plain, Era::Modern).await;
        let caps = c.request("server/discover", json!({})).await.unwrap()["capabilities"].clone();
        assert!(caps.get("extensions").is_none(), "{caps}");

        let declared = json!({"extensions": {EXTENSION_UI: {"mimeTypes": [APP_MIME_TYPE]}}});
        let (_, seen) = handshake(&server(), declared.clone()).await;
        assert_eq!(
            seen,
            json!({"mimeTypes": [APP_MIME_TYPE], "supports": true})
        );
        let (_, seen) = handshake(&plain, json!({})).await;
        assert_eq!(seen, json!({"mimeTypes": null, "supports": false}));

        let c = Client::connect(&server(), Era::Modern).await;
        let mut meta = in_process_support::envelope();
        meta["io.modelcontextprotocol/clientCapabilities"] = declared;
        let r = c
            .raw(
                "tools/call",
                json!({"name": "mime_types", "arguments": {}, "_meta": meta}),
            )
            .await
            .unwrap();
        let seen: Value = serde_json::from_str(r["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(seen["supports"], true);
        let r = c.call("mime_types", json!({})).await.unwrap();
        let seen: Value = serde_json::from_str(r["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(seen["supports"], false);
    })
    .await;
}

fn build_error(b: ferromcp_server::McpServerBuilder) -> String {
    match b.build() {
        Err(e @ BuildError::Invalid { .. }) => e.to_string(),
        Err(e) => panic!("unexpected error kind: {e}"),
        Ok(_) => panic!("the build should fail"),
    }
}

/// SV-A15: a tool linked to an app that is not registered, a link or an app that is not
/// `ui://`, fail the build; `add_tool` refuses an unregistered link at run time too.
#[tokio::test]
async fn sv_a15_unregistered_or_non_ui_links_fail_the_build() {
    let unregistered = McpServer::builder("s", "1")
        .app(app())
        .tool(ToolSpec::new("t").app("ui://demo/other"), || async { "" });
    let e = build_error(unregistered);
    assert!(
        e.contains("ui://demo/other") && e.contains("not registered"),
        "{e}"
    );
    let http_link = McpServer::builder("s", "1").tool(
        ToolSpec::new("t").app("https://evil.example/app.html"),
        || async { "" },
    );
    assert!(build_error(http_link).contains("ui://"));
    let http_app = McpServer::builder("s", "1").app(App::new("https://x.example/a", "a", HTML));
    assert!(build_error(http_app).contains("ui://"));

    let server = server();
    let e = server
        .add_tool(ToolSpec::new("late").app("ui://demo/nope"), || async { "" })
        .unwrap_err();
    assert!(e.to_string().contains("not registered"), "{e}");
    server
        .add_tool(ToolSpec::new("late").app(URI), || async { "" })
        .unwrap();
}
