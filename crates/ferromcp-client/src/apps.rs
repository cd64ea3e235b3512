//! MCP Apps (`io.modelcontextprotocol/ui`, SEP-1865), host side: declaring support, finding
//! the app a tool links to, and fetching it safely.
//!
//! [`ClientBuilder::apps`](crate::ClientBuilder::apps) declares the extension with the MIME
//! types the host renders (`{"mimeTypes": ["text/html;profile=mcp-app"]}`), in the
//! `initialize` capabilities and in the 2026-07-28 per-request capabilities alike.
//!
//! [`tool_app_uri`] reads a tool's `_meta.ui.resourceUri` (and the deprecated flat
//! `_meta["ui/resourceUri"]`); [`tool_visibility`] its `_meta.ui.visibility`, so a host
//! keeps app-only tools from the model. [`Client::tool_app`] fetches the app with
//! `resources/read` and returns it as an [`AppResource`] (HTML, CSP origins, permissions,
//! domain) only if the link is a `ui://` URI, the contents are
//! [`APP_MIME_TYPE`] and the HTML is at most [`AppConfig::max_bytes`]
//! ([`DEFAULT_MAX_APP_BYTES`]) bytes; anything else is an [`AppError`] and nothing is
//! returned. Rendering the HTML in a sandboxed iframe with that CSP is the host's part.
//!
//! ```
//! use ferromcp_client::apps::{APP_MIME_TYPE, tool_app_uri};
//! use ferromcp_types::mcp::{Meta, Tool};
//! use serde_json::json;
//!
//! let mut tool = Tool::new("count", serde_json::Map::new());
//! tool.meta = serde_json::from_value(json!({"ui": {"resourceUri": "ui://demo/counter"}})).ok();
//! assert_eq!(tool_app_uri(&tool), Some("ui://demo/counter"));
//! assert_eq!(APP_MIME_TYPE, "text/html;profile=mcp-app");
//! ```

use ferromcp_types::mcp::{JsonObject, ResourceContents, Tool};
use serde_json::{Value, json};

pub use ferromcp_types::mcp::EXTENSION_UI;

use crate::{Client, ClientError};

/// The MIME type of an MCP App's HTML.
pub const APP_MIME_TYPE: &str = "text/html;profile=mcp-app";
/// The URI scheme of app resources.
pub const APP_URI_SCHEME: &str = "ui://";
/// The default bound on the size of one app's HTML (after base64 decoding): 4 MiB.
pub const DEFAULT_MAX_APP_BYTES: usize = 4 * 1024 * 1024;

/// The host's MCP Apps settings: the MIME types it renders and the bound on an app's size.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
#[non_exhaustive]
pub struct AppConfig {
    /// The MIME types declared in `mimeTypes` (default: [`APP_MIME_TYPE`]).
    pub mime_types: Vec<String>,
    /// The largest app HTML [`Client::tool_app`] accepts, in bytes (default
    /// [`DEFAULT_MAX_APP_BYTES`]).
    pub max_bytes: usize,
}

impl Default for AppConfig {
    fn default() -> Self {
        Self {
            mime_types: vec![APP_MIME_TYPE.to_owned()],
            max_bytes: DEFAULT_MAX_APP_BYTES,
        }
    }
}

impl AppConfig {
    /// The defaults: `text/html;profile=mcp-app`, 4 MiB.
    pub fn new() -> Self {
        Self::default()
    }

    /// Replaces the declared MIME types.
    pub fn mime_types(mut self, types: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.mime_types = types.into_iter().map(Into::into).collect();
        self
    }

    /// Bounds the size of one app's HTML.
    pub fn max_bytes(mut self, bytes: usize) -> Self {
        self.max_bytes = bytes;
        self
    }

    /// The extension's settings: `{"mimeTypes": [...]}`.
    pub(crate) fn settings(&self) -> JsonObject {
        let mut s = JsonObject::new();
        s.insert("mimeTypes".into(), json!(self.mime_types));
        s
    }
}

/// The app a tool links to, fetched and checked.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AppResource {
    /// The `ui://` URI.
    pub uri: String,
    /// The MIME type ([`APP_MIME_TYPE`]).
    pub mime_type: String,
    /// The HTML document.
    pub html: String,
    /// `_meta.ui.csp.connectDomains`.
    pub connect_domains: Vec<String>,
    /// `_meta.ui.csp.resourceDomains`.
    pub resource_domains: Vec<String>,
    /// `_meta.ui.csp.frameDomains`.
    pub frame_domains: Vec<String>,
    /// `_meta.ui.csp.baseUriDomains`.
    pub base_uri_domains: Vec<String>,
    /// The keys of `_meta.ui.permissions` (`camera`, `microphone`, `geolocation`,
    /// `clipboardWrite`).
    pub permissions: Vec<String>,
    /// `_meta.ui.domain`.
    pub domain: Option<String>,
    /// `_meta.ui.prefersBorder`.
    pub prefers_border: Option<bool>,
    /// The whole `_meta.ui` object, as sent.
    pub ui_meta: JsonObject,
}

/// Why [`Client::tool_app`] refused an app.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AppError {
    /// The tool's link is not a `ui://` URI; nothing was fetched.
    #[error("the app URI {uri:?} does not use the ui:// scheme; refused without fetching it")]
    NotUiScheme {
        /// The link.
        uri: String,
    },
    /// `resources/read` failed.
    #[error(transparent)]
    Read(#[from] ClientError),
    /// The result has no text or blob contents for the URI.
    #[error("resources/read of {uri:?} returned no contents for it")]
    NoContents {
        /// The app URI.
        uri: String,
    },
    /// The contents are not an MCP App.
    #[error("{uri:?} has the MIME type {mime_type:?}, not {APP_MIME_TYPE:?}; refused")]
    WrongMimeType {
        /// The app URI.
        uri: String,
        /// The MIME type the server sent.
        mime_type: Option<String>,
    },
    /// The HTML is over the bound.
    #[error("the app {uri:?} is {size} bytes, over the limit of {limit}; refused")]
    TooLarge {
        /// The app URI.
        uri: String,
        /// Its size (for a blob, at least this).
        size: usize,
        /// [`AppConfig::max_bytes`].
        limit: usize,
    },
    /// A blob that is not base64 of UTF-8 text.
    #[error("the app {uri:?} is not base64-encoded UTF-8 HTML")]
    BadEncoding {
        /// The app URI.
        uri: String,
    },
}

/// The app a tool links to: `_meta.ui.resourceUri`, else the deprecated flat
/// `_meta["ui/resourceUri"]`.
pub fn tool_app_uri(tool: &Tool) -> Option<&str> {
    let meta = tool.meta.as_ref()?.as_map();
    meta.get("ui")
        .and_then(|ui| ui.get("resourceUri"))
        .or_else(|| meta.get("ui/resourceUri"))
        .and_then(Value::as_str)
}

/// Who may call the tool (`_meta.ui.visibility`): `["model", "app"]` when absent.
pub fn tool_visibility(tool: &Tool) -> Vec<String> {
    let listed = tool
        .meta
        .as_ref()
        .and_then(|m| m.as_map().get("ui"))
        .and_then(|ui| ui.get("visibility"))
        .and_then(Value::as_array);
    match listed {
        Some(list) => list
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        None => vec!["model".to_owned(), "app".to_owned()],
    }
}

/// Whether the host may show the tool to the model (its visibility includes `"model"`).
pub fn visible_to_model(tool: &Tool) -> bool {
    tool_visibility(tool).iter().any(|v| v == "model")
}

impl Client {
    /// The server's settings for MCP Apps, if it declared the extension.
    pub fn apps_extension(&self) -> Option<&JsonObject> {
        self.session()
            .capabilities
            .extensions
            .as_ref()?
            .get(EXTENSION_UI)
    }

    /// Fetches the app `tool` links to: `Ok(None)` when it links to none; the checked
    /// [`AppResource`] otherwise. Refused (an [`AppError`]): a link that is not `ui://`
    /// (before any request), contents that are not [`APP_MIME_TYPE`], HTML over
    /// [`AppConfig::max_bytes`] (the builder's [`apps`](crate::ClientBuilder::apps)
    /// setting, else [`DEFAULT_MAX_APP_BYTES`]), blobs that are not base64 UTF-8.
    pub async fn tool_app(&self, tool: &Tool) -> Result<Option<AppResource>, AppError> {
        let Some(uri) = tool_app_uri(tool) else {
            return Ok(None);
        };
        self.read_app(uri).await.map(Some)
    }

    /// Fetches the app at `uri` with the checks of [`tool_app`](Self::tool_app).
    pub async fn read_app(&self, uri: &str) -> Result<AppResource, AppError> {
        let limit = self
            .inner
            .settings
            .apps
            .as_ref()
            .map_or(DEFAULT_MAX_APP_BYTES, |c| c.max_bytes);
        if !uri.starts_with(APP_URI_SCHEME) || uri.len() == APP_URI_SCHEME.len() {
            return Err(AppError::NotUiScheme {
                uri: uri.to_owned(),
            });
        }
        let result = self.read_resource(uri).await?;
        let no_contents = || AppError::NoContents {
            uri: uri.to_owned(),
        };
        let contents = result
            .contents
            .into_iter()
            .find(|c| c.uri() == uri)
            .ok_or_else(no_contents)?;
        let (mime_type, meta, html) = match contents {
            ResourceContents::Text(t) => {
                check_mime(uri, t.mime_type.as_deref())?;
                check_size(uri, t.text.len(), limit)?;
                (t.mime_type, t.meta, t.text)
            }
            ResourceContents::Blob(b) => {
                check_mime(uri, b.mime_type.as_deref())?;
                // A base64 blob decodes to about 3/4 of its length: refuse before decoding.
                check_size(uri, b.blob.len() / 4 * 3, limit)?;
                let bad = || AppError::BadEncoding {
                    uri: uri.to_owned(),
                };
                let bytes = decode_base64(&b.blob).ok_or_else(bad)?;
                check_size(uri, bytes.len(), limit)?;
                (
                    b.mime_type,
                    b.meta,
                    String::from_utf8(bytes).map_err(|_| bad())?,
                )
            }
            _ => return Err(no_contents()),
        };
        let ui_meta = meta
            .and_then(|m| m.into_inner().remove("ui"))
            .and_then(|v| match v {
                Value::Object(o) => Some(o),
                _ => None,
            })
            .unwrap_or_default();
        let strings = |v: Option<&Value>| -> Vec<String> {
            v.and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default()
        };
        let csp = ui_meta.get("csp");
        let csp_list = |key: &str| strings(csp.and_then(|c| c.get(key)));
        Ok(AppResource {
            uri: uri.to_owned(),
            mime_type: mime_type.unwrap_or_default(),
            html,
            connect_domains: csp_list("connectDomains"),
            resource_domains: csp_list("resourceDomains"),
            frame_domains: csp_list("frameDomains"),
            base_uri_domains: csp_list("baseUriDomains"),
            permissions: ui_meta
                .get("permissions")
                .and_then(Value::as_object)
                .map(|p| p.keys().cloned().collect())
                .unwrap_or_default(),
            domain: ui_meta
                .get("domain")
                .and_then(Value::as_str)
                .map(str::to_owned),
            prefers_border: ui_meta.get("prefersBorder").and_then(Value::as_bool),
            ui_meta,
        })
    }
}

fn check_mime(uri: &str, mime_type: Option<&str>) -> Result<(), AppError> {
    if mime_type == Some(APP_MIME_TYPE) {
        Ok(())
    } else {
        Err(AppError::WrongMimeType {
            uri: uri.to_owned(),
            mime_type: mime_type.map(str::to_owned),
        })
    }
}

fn check_size(uri: &str, size: usize, limit: usize) -> Result<(), AppError> {
    if size > limit {
        Err(AppError::TooLarge {
            uri: uri.to_owned(),
            size,
            limit,
        })
    } else {
        Ok(())
    }
}

/// Standard base64 (padding optional); `None` on any other byte.
fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let digit = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let body = text.trim_end_matches('=').as_bytes();
    if text.len() - body.len() > 2 || body.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(body.len() / 4 * 3 + 2);
    for chunk in body.chunks(4) {
        let mut acc = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            acc |= digit(c)? << (18 - 6 * i);
        }
        let bytes = acc.to_be_bytes();
        out.extend_from_slice(&bytes[1..chunk.len()]);
    }
    Some(out)
}
