//! The high-level server's listings (`tools/list`, `prompts/list`, `resources/list`,
//! `resources/templates/list`) are assembled from entries encoded once, per protocol
//! version, when an item is registered. B70: what every version (2024-11-05..2026-07-28)
//! receives, page by page, is the JSON the server answered before those entries existed
//! (recorded in `tests/fixtures/listings.json` from the `Value`-built listings); items added,
//! replaced and removed at run time show in the next listing and are announced. B71: a
//! replaced item is listed as its new version in every protocol version (a stale entry fails).
#![allow(clippy::unwrap_used, clippy::panic)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferromcp_dispatch::{CallOptions, DirectDispatcher, Dispatcher, Outbound, handler_fn};
use ferromcp_server::McpServer;
use ferromcp_server::mcp_server::{App, Args, Json, PromptSpec, ResourceSpec, ToolSpec};
use ferromcp_types::jsonrpc::{ErrorObject, Payload};
use ferromcp_types::mcp::TaskSupport;
use ferromcp_types::{Era, ProtocolVersion};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/listings.json");
const LISTS: [(&str, &str); 4] = [
    ("tools/list", "tools"),
    ("prompts/list", "prompts"),
    ("resources/list", "resources"),
    ("resources/templates/list", "resourceTemplates"),
];

/// Two numbers.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct AddArgs {
    /// The first number.
    a: f64,
    /// The second number.
    b: f64,
}

#[derive(Serialize, JsonSchema)]
struct Sum {
    total: f64,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct ItemVars {
    id: String,
}

fn from<T: serde::de::DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v).unwrap()
}

/// A server with items using every field the listings carry (titles, icons, annotations,
/// output schemas, task support, an app link, `x-mcp-header`, prompt arguments, sizes),
/// three to a page.
fn server() -> McpServer {
    let icons: Vec<ferromcp_types::mcp::Icon> = from(json!([
        {"src": "https://example.com/i.png", "mimeType": "image/png", "sizes": ["48x48"]}
    ]));
    let headed = json!({
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "n": {"type": "integer", "minimum": 0, "maximum": 1e3}
        },
        "required": ["region"],
        "$defs": {"unused": {"type": "null"}},
        "additionalProperties": false
    });
    McpServer::builder("listings", "1.0.0")
        .page_size(3)
        .app(App::new("ui://demo/view", "View", "<html></html>"))
        .tool(
            ToolSpec::new("add")
                .title("Add")
                .description("Adds two numbers.")
                .icons(icons.clone())
                .annotations(from(json!({"title": "Adder", "readOnlyHint": true,
                                         "idempotentHint": true}))),
            |Args(a): Args<AddArgs>| async move { (a.a + a.b).to_string() },
        )
        .tool("sum", |Args(a): Args<AddArgs>| async move {
            Json(Sum { total: a.a + a.b })
        })
        .tool(
            ToolSpec::new("headed").input_schema(from(headed)),
            || async { "ok" },
        )
        .tool(
            ToolSpec::new("long").task_support(TaskSupport::Optional),
            || async { "done" },
        )
        .tool(ToolSpec::new("view").app("ui://demo/view"), || async {
            "v"
        })
        .tool("plain", || async { "p" })
        .tool("unicode ☃ \"quoted\"", || async { "u" })
        .prompt(
            PromptSpec::new("greet")
                .title("Greet")
                .description("Greets someone.")
                .icons(icons.clone())
                .arguments(from(json!([
                    {"name": "name", "description": "Who", "required": true},
                    {"name": "tone", "title": "Tone"}
                ]))),
            || async { "hi".to_string() },
        )
        .prompt("bare", || async { "bare".to_string() })
        .resource(
            ResourceSpec::new("test://static/text", "text")
                .title("Text")
                .description("Some text.")
                .mime_type("text/plain")
                .size(11)
                .icons(icons.clone())
                .annotations(from(json!({"audience": ["user"], "priority": 0.5,
                                         "lastModified": "2026-01-01T00:00:00Z"}))),
            || async { "static text".to_string() },
        )
        .resource(ResourceSpec::new("test://static/b", "b"), || async {
            "b".to_string()
        })
        .resource_template(
            ResourceSpec::new("test://template/{id}/data", "item")
                .title("Item")
                .mime_type("application/json")
                .icons(icons),
            |Args(v): Args<ItemVars>| async move { json!({"id": v.id}).to_string() },
        )
        .build()
        .unwrap()
}

/// A raw client at one protocol version.
struct Client {
    peer: DirectDispatcher,
    version: ProtocolVersion,
    notes: Arc<Mutex<Vec<String>>>,
}

impl Client {
    async fn connect(server: &McpServer, version: ProtocolVersion) -> Self {
        let era = if version.is_modern() {
            Era::Modern
        } else {
            Era::Handshake
        };
        let peer = server.server().in_process(era);
        let notes = Arc::new(Mutex::new(Vec::new()));
        let seen = notes.clone();
        let handler =
            handler_fn(
                |_, method, _| async move { Err(ErrorObject::method_not_found(&method).into()) },
            )
            .on_notify(move |_, method, _params: Option<Payload>| {
                let seen = seen.clone();
                async move { seen.lock().unwrap().push(method) }
            })
            .into_arc();
        let runner = peer.clone();
        tokio::spawn(async move { runner.run(handler).await });
        let client = Self {
            peer,
            version,
            notes,
        };
        if !version.is_modern() {
            let init = json!({"protocolVersion": version.as_str(), "capabilities": {},
                              "clientInfo": {"name": "t", "version": "1"}});
            client.raw("initialize", init).await.unwrap();
            client.peer.notify("notifications/initialized", None).await;
        }
        client
    }

    async fn raw(&self, method: &str, params: Value) -> Result<Value, ErrorObject> {
        let params = Some(Payload::from_value(params));
        let r = self
            .peer
            .send_request(method, params, CallOptions::new())
            .await?;
        Ok(r.into_value().unwrap())
    }

    async fn request(&self, method: &str, mut params: Value) -> Result<Value, ErrorObject> {
        if self.version.is_modern() {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": self.version.as_str(),
                "io.modelcontextprotocol/clientCapabilities": {},
            });
        }
        self.raw(method, params).await
    }

    /// Every page of a listing, following the cursors.
    async fn pages(&self, method: &str) -> Vec<Value> {
        let mut pages = Vec::new();
        let mut params = json!({});
        loop {
            let page = self.request(method, params).await.unwrap();
            let next = page.get("nextCursor").cloned();
            pages.push(page);
            match next {
                Some(cursor) => params = json!({ "cursor": cursor }),
                None => return pages,
            }
        }
    }

    /// Every item of a listing, in order.
    async fn items(&self, method: &str, field: &str) -> Vec<Value> {
        let mut items = Vec::new();
        for page in self.pages(method).await {
            items.extend(page[field].as_array().unwrap().iter().cloned());
        }
        items
    }
}

async fn run(test: impl std::future::Future<Output = ()>) {
    tokio::time::timeout(Duration::from_secs(20), test)
        .await
        .expect("timed out");
}

/// Every listing's pages in every version: `{version: {method: [page, ...]}}`.
async fn all_listings(s: &McpServer) -> Value {
    let mut out = serde_json::Map::new();
    for version in ProtocolVersion::ALL {
        let c = Client::connect(s, version).await;
        let mut per = serde_json::Map::new();
        for (method, _) in LISTS {
            per.insert(method.into(), Value::Array(c.pages(method).await));
        }
        out.insert(version.as_str().into(), Value::Object(per));
    }
    Value::Object(out)
}

#[tokio::test]
async fn b70_listings_are_the_recorded_json_in_every_version_and_page() {
    run(async {
        let got = all_listings(&server()).await;
        if std::env::var_os("FERROMCP_BLESS").is_some() {
            std::fs::write(FIXTURE, serde_json::to_string_pretty(&got).unwrap() + "\n").unwrap();
        }
        let want: Value = serde_json::from_str(&std::fs::read_to_string(FIXTURE).unwrap()).unwrap();
        for version in ProtocolVersion::ALL {
            for (method, _) in LISTS {
                let v = version.as_str();
                // Compared as text too: keys in the same order, numbers written the same.
                assert_eq!(
                    serde_json::to_string(&got[v][method]).unwrap(),
                    serde_json::to_string(&want[v][method]).unwrap(),
                    "{method} at {v}"
                );
            }
        }
        // The fixture has pages to follow (3 to a page) and versions that differ.
        assert_eq!(
            want["2025-11-25"]["tools/list"].as_array().unwrap().len(),
            3
        );
        assert_ne!(
            want["2024-11-05"]["tools/list"],
            want["2025-11-25"]["tools/list"]
        );
    })
    .await;
}

#[tokio::test]
async fn b70_items_changed_at_run_time_show_in_the_next_listing_and_are_announced() {
    run(async {
        let s = server();
        let clients = [
            Client::connect(&s, ProtocolVersion::V2024_11_05).await,
            Client::connect(&s, ProtocolVersion::V2025_11_25).await,
        ];
        s.add_tool(ToolSpec::new("late").description("Late."), || async { "l" })
            .unwrap();
        s.add_prompt(PromptSpec::new("late").description("Late."), || async {
            "l".to_string()
        });
        s.add_resource(ResourceSpec::new("test://late", "late"), || async {
            "l".to_string()
        });
        s.add_resource_template(ResourceSpec::new("test://late/{id}", "late"), || async {
            "l".to_string()
        })
        .unwrap();
        for c in &clients {
            for (method, field) in LISTS {
                let items = c.items(method, field).await;
                let last = items.last().unwrap();
                assert_eq!(last["name"], "late", "{method} at {}", c.version);
            }
        }
        assert!(s.remove_tool("add"));
        assert!(s.remove_prompt("greet"));
        assert!(s.remove_resource("test://static/text"));
        assert!(s.remove_resource_template("test://template/{id}/data"));
        for c in &clients {
            for (method, field) in LISTS {
                let items = c.items(method, field).await;
                let names: Vec<&str> = items.iter().map(|i| i["name"].as_str().unwrap()).collect();
                assert!(!names.contains(&"add"), "{method}: {names:?}");
                assert!(!names.contains(&"greet"), "{method}: {names:?}");
                assert!(!names.contains(&"text"), "{method}: {names:?}");
                assert!(!names.contains(&"item"), "{method}: {names:?}");
                assert_eq!(names.last(), Some(&"late"), "{method}");
            }
        }
        // Every change was announced to handshake-era clients.
        for c in &clients {
            for _ in 0..200 {
                if c.notes.lock().unwrap().len() >= 8 {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            let notes = c.notes.lock().unwrap();
            let count = |m: &str| notes.iter().filter(|n| *n == m).count();
            assert_eq!(count("notifications/tools/list_changed"), 2, "{notes:?}");
            assert_eq!(count("notifications/prompts/list_changed"), 2, "{notes:?}");
            assert_eq!(
                count("notifications/resources/list_changed"),
                4,
                "{notes:?}"
            );
        }
    })
    .await;
}

#[tokio::test]
async fn b71_a_replaced_item_is_listed_as_its_new_version_in_every_version() {
    run(async {
        let s = server();
        let before = all_listings(&s).await;
        // Same names, new descriptions and schemas.
        s.add_tool(
            ToolSpec::new("add")
                .description("Adds, again.")
                .title("Add 2"),
            || async { "2" },
        )
        .unwrap();
        s.add_prompt(
            PromptSpec::new("greet").description("Greets, again."),
            || async { "2".to_string() },
        );
        s.add_resource(
            ResourceSpec::new("test://static/text", "text").description("Text, again."),
            || async { "2".to_string() },
        );
        s.add_resource_template(
            ResourceSpec::new("test://template/{id}/data", "item").description("Item, again."),
            || async { "2".to_string() },
        )
        .unwrap();
        let after = all_listings(&s).await;
        for version in ProtocolVersion::ALL {
            let v = version.as_str();
            let c = Client::connect(&s, version).await;
            for (method, field) in LISTS {
                assert_ne!(before[v][method], after[v][method], "{method} at {v}");
                let items = c.items(method, field).await;
                // Replaced in place: still first.
                let first = &items[0];
                assert!(
                    first["description"].as_str().unwrap().ends_with(", again."),
                    "{method} at {v}: {first}"
                );
            }
            let tools = c.items("tools/list", "tools").await;
            assert_eq!(tools[0]["inputSchema"], json!({"type": "object"}), "{v}");
            assert_eq!(tools.len(), 7, "{v}");
            assert_eq!(
                tools[0].get("title").is_some(),
                version >= ProtocolVersion::V2025_06_18,
                "{v}"
            );
        }
    })
    .await;
}
