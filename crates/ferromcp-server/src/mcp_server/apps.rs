//! MCP Apps (`io.modelcontextprotocol/ui`, SEP-1865): interactive HTML views that a host
//! renders in a sandboxed iframe next to a tool's result.
//!
//! An [`App`] is a `ui://` resource served with the MIME type [`APP_MIME_TYPE`]
//! (`text/html;profile=mcp-app`). Its `_meta.ui` carries what the host needs to sandbox it:
//! the Content Security Policy origins ([`AppCsp`]: `connectDomains`, `resourceDomains`,
//! `frameDomains`, `baseUriDomains`), the browser permissions it asks for
//! ([`AppPermission`]), an optional dedicated `domain` and a `prefersBorder` hint. The same
//! `_meta.ui` is on the `resources/list` entry and on the `resources/read` contents.
//!
//! A tool links to an app with [`ToolSpec::app`](super::ToolSpec::app) (`_meta.ui.resourceUri`)
//! and says who may call it with [`ToolSpec::app_visibility`](super::ToolSpec::app_visibility)
//! (`_meta.ui.visibility`, default model and app). The server lists every tool; hiding an
//! app-only tool from the model, and refusing an app's call to a model-only tool, is the
//! host's job (SEP-1865 "Visibility").
//!
//! Building fails when a tool links to a URI that is not a registered app, or when an app's
//! URI does not use the `ui://` scheme. With at least one app the server declares the
//! extension (`extensions: {"io.modelcontextprotocol/ui": {}}`) in its capabilities.
//! Handlers see what the client declared with [`client_app_mime_types`].
//!
//! ```
//! use ferromcp_server::mcp_server::{App, AppCsp, AppPermission, McpServer, ToolSpec};
//!
//! let app = App::new("ui://demo/counter", "Counter", "<!DOCTYPE html><html>…</html>")
//!     .csp(AppCsp::new().connect_domain("https://api.example.com"))
//!     .permission(AppPermission::ClipboardWrite)
//!     .prefers_border(true);
//! let server = McpServer::builder("apps", "1.0.0")
//!     .app(app)
//!     .tool(ToolSpec::new("count").app("ui://demo/counter"), || async { "1" })
//!     .build()
//!     .unwrap();
//! assert_eq!(server.resource_uris(), ["ui://demo/counter"]);
//!
//! // A tool linked to an app that is not registered fails the build.
//! let err = McpServer::builder("apps", "1.0.0")
//!     .tool(ToolSpec::new("count").app("ui://demo/missing"), || async { "1" })
//!     .build()
//!     .unwrap_err();
//! assert!(err.to_string().contains("ui://demo/missing"));
//! ```

use ferromcp_types::mcp::{
    JsonObject, Meta, ReadResourceResult, ResourceContents, TextResourceContents, Tool,
};
use serde_json::{Value, json};

pub use ferromcp_types::mcp::EXTENSION_UI;

use super::ResourceSpec;
use super::resources::{self, ResourceEntry};
use crate::context::RequestContext;
use crate::server::BuildError;

/// The MIME type of an MCP App's HTML (SEP-1865 "UI Resource Format").
pub const APP_MIME_TYPE: &str = "text/html;profile=mcp-app";
/// The URI scheme every app resource uses.
pub const APP_URI_SCHEME: &str = "ui://";

/// The origins an app may reach, which the host turns into its iframe's Content Security
/// Policy. Empty lists (the default) mean no external origin at all.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[must_use]
#[non_exhaustive]
pub struct AppCsp {
    /// `connectDomains`: origins for fetch, XHR and WebSocket (`connect-src`).
    pub connect_domains: Vec<String>,
    /// `resourceDomains`: origins for scripts, styles, images, fonts and media.
    pub resource_domains: Vec<String>,
    /// `frameDomains`: origins for nested iframes (`frame-src`).
    pub frame_domains: Vec<String>,
    /// `baseUriDomains`: allowed base URIs of the document (`base-uri`).
    pub base_uri_domains: Vec<String>,
}

impl AppCsp {
    /// No external origin.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an origin for network requests.
    pub fn connect_domain(mut self, origin: impl Into<String>) -> Self {
        self.connect_domains.push(origin.into());
        self
    }

    /// Adds an origin for static resources (`https://*.example.com` wildcards allowed).
    pub fn resource_domain(mut self, origin: impl Into<String>) -> Self {
        self.resource_domains.push(origin.into());
        self
    }

    /// Adds an origin for nested iframes.
    pub fn frame_domain(mut self, origin: impl Into<String>) -> Self {
        self.frame_domains.push(origin.into());
        self
    }

    /// Adds an allowed base URI.
    pub fn base_uri_domain(mut self, origin: impl Into<String>) -> Self {
        self.base_uri_domains.push(origin.into());
        self
    }

    fn to_json(&self) -> JsonObject {
        let mut csp = JsonObject::new();
        for (key, list) in [
            ("connectDomains", &self.connect_domains),
            ("resourceDomains", &self.resource_domains),
            ("frameDomains", &self.frame_domains),
            ("baseUriDomains", &self.base_uri_domains),
        ] {
            if !list.is_empty() {
                csp.insert(key.into(), json!(list));
            }
        }
        csp
    }
}

/// A browser capability an app asks the host for (the iframe's Permission Policy).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum AppPermission {
    /// `camera`.
    Camera,
    /// `microphone`.
    Microphone,
    /// `geolocation`.
    Geolocation,
    /// `clipboardWrite` (`clipboard-write`).
    ClipboardWrite,
}

impl AppPermission {
    /// The key in `_meta.ui.permissions`.
    pub fn key(self) -> &'static str {
        match self {
            Self::Camera => "camera",
            Self::Microphone => "microphone",
            Self::Geolocation => "geolocation",
            Self::ClipboardWrite => "clipboardWrite",
        }
    }
}

/// Who may call a tool linked to an app (`_meta.ui.visibility`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum AppVisibility {
    /// `"model"`: the agent sees and calls the tool.
    Model,
    /// `"app"`: the app calls the tool (through the host, same server only).
    App,
}

impl AppVisibility {
    /// The string in `_meta.ui.visibility`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Model => "model",
            Self::App => "app",
        }
    }
}

/// An MCP App: a `ui://` resource holding one self-contained HTML5 document, and how the
/// host should sandbox it. Register it with
/// [`McpServerBuilder::app`](super::McpServerBuilder::app).
#[derive(Debug, Clone)]
#[must_use]
pub struct App {
    uri: String,
    name: String,
    html: String,
    description: Option<String>,
    csp: Option<AppCsp>,
    permissions: Vec<AppPermission>,
    domain: Option<String>,
    prefers_border: Option<bool>,
}

impl App {
    /// An app at `uri` (which must start with `ui://`), called `name`, serving `html`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>, html: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            name: name.into(),
            html: html.into(),
            description: None,
            csp: None,
            permissions: Vec::new(),
            domain: None,
            prefers_border: None,
        }
    }

    /// What the app shows, for the resource listing.
    pub fn description(mut self, text: impl Into<String>) -> Self {
        self.description = Some(text.into());
        self
    }

    /// The origins the app may reach (`_meta.ui.csp`); without it the host applies its
    /// restrictive default.
    pub fn csp(mut self, csp: AppCsp) -> Self {
        self.csp = Some(csp);
        self
    }

    /// Asks for a browser capability (`_meta.ui.permissions`).
    pub fn permission(mut self, permission: AppPermission) -> Self {
        if !self.permissions.contains(&permission) {
            self.permissions.push(permission);
        }
        self
    }

    /// A dedicated sandbox origin (`_meta.ui.domain`; the format is the host's).
    pub fn domain(mut self, domain: impl Into<String>) -> Self {
        self.domain = Some(domain.into());
        self
    }

    /// Whether the host should draw a border and background (`_meta.ui.prefersBorder`).
    pub fn prefers_border(mut self, yes: bool) -> Self {
        self.prefers_border = Some(yes);
        self
    }

    /// The app's URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// The `_meta` of the app's resource: `{"ui": {csp, permissions, domain, prefersBorder}}`.
    pub fn meta(&self) -> Meta {
        let mut ui = JsonObject::new();
        if let Some(csp) = &self.csp {
            ui.insert("csp".into(), Value::Object(csp.to_json()));
        }
        if !self.permissions.is_empty() {
            let permissions: JsonObject = self
                .permissions
                .iter()
                .map(|p| (p.key().to_owned(), json!({})))
                .collect();
            ui.insert("permissions".into(), Value::Object(permissions));
        }
        if let Some(domain) = &self.domain {
            ui.insert("domain".into(), json!(domain));
        }
        if let Some(border) = self.prefers_border {
            ui.insert("prefersBorder".into(), json!(border));
        }
        let mut meta = Meta::new();
        meta.as_map_mut().insert("ui".into(), Value::Object(ui));
        meta
    }
}

/// Checks that `uri` is an app URI (`ui://` and something after it).
pub(crate) fn check_uri(name: &str, uri: &str) -> Result<(), BuildError> {
    match uri.strip_prefix(APP_URI_SCHEME) {
        Some(rest) if !rest.is_empty() => Ok(()),
        _ => Err(BuildError::Invalid {
            name: name.to_owned(),
            reason: format!("the app URI {uri:?} does not use the {APP_URI_SCHEME} scheme"),
        }),
    }
}

/// The resource entry serving `app`.
pub(crate) fn entry(app: App) -> Result<ResourceEntry, BuildError> {
    check_uri(&app.uri, &app.uri)?;
    let meta = app.meta();
    let mut spec = ResourceSpec::new(app.uri.clone(), app.name.clone())
        .mime_type(APP_MIME_TYPE)
        .size(app.html.len() as u64);
    if let Some(d) = &app.description {
        spec = spec.description(d.clone());
    }
    let (uri, html, read_meta) = (app.uri, app.html, meta.clone());
    let read = move || {
        let mut contents = TextResourceContents::new(uri.clone(), html.clone());
        contents.mime_type = Some(APP_MIME_TYPE.to_owned());
        contents.meta = Some(read_meta.clone());
        async move { ReadResourceResult::new(vec![ResourceContents::Text(contents)]) }
    };
    Ok(resources::resource_entry(spec, read).with_meta(meta))
}

/// The `_meta.ui.resourceUri` a tool links to, if any.
pub(crate) fn linked_uri(tool: &Tool) -> Option<&str> {
    tool.meta
        .as_ref()?
        .as_map()
        .get("ui")?
        .get("resourceUri")?
        .as_str()
}

/// Fails when a tool links to a URI that is not among `apps`.
pub(crate) fn check_links<'a>(
    tools: impl IntoIterator<Item = &'a Tool>,
    apps: &[String],
) -> Result<(), BuildError> {
    for tool in tools {
        if let Some(uri) = linked_uri(tool)
            && !apps.iter().any(|a| a == uri)
        {
            return Err(BuildError::Invalid {
                name: tool.name.clone(),
                reason: format!("the tool links to the app {uri:?}, which is not registered"),
            });
        }
    }
    Ok(())
}

/// The tool's `_meta.ui` for `uri` and `visibility`.
pub(crate) fn tool_meta(uri: Option<&str>, visibility: Option<&[AppVisibility]>) -> JsonObject {
    let mut ui = JsonObject::new();
    if let Some(uri) = uri {
        ui.insert("resourceUri".into(), json!(uri));
    }
    if let Some(v) = visibility {
        let list: Vec<&str> = v.iter().map(|v| v.as_str()).collect();
        ui.insert("visibility".into(), json!(list));
    }
    ui
}

/// The MIME types the client of this request declared for MCP Apps
/// (`capabilities.extensions["io.modelcontextprotocol/ui"].mimeTypes`): `None` when it did
/// not declare the extension, so a handler can fall back to text-only output. The
/// capabilities are the `initialize` ones in the handshake era and the request's own at
/// 2026-07-28.
pub fn client_app_mime_types(ctx: &RequestContext) -> Option<Vec<String>> {
    let caps = ctx.connection().client_capabilities()?;
    let settings = caps.extensions.as_ref()?.get(EXTENSION_UI)?;
    let types = settings
        .get("mimeTypes")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    Some(types)
}

/// Whether the client of this request renders MCP Apps (it declared the extension with
/// [`APP_MIME_TYPE`] among its MIME types).
pub fn client_supports_apps(ctx: &RequestContext) -> bool {
    client_app_mime_types(ctx).is_some_and(|t| t.iter().any(|m| m == APP_MIME_TYPE))
}
