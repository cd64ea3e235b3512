//! [`AuthConfig`]: what the resource server requires, and its RFC 9728 metadata.

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::sync::Arc;

use serde::Serialize;

use super::{Principal, TokenVerifier};

/// Decides whether a granted scope implies a required one (scope hierarchies: a broader
/// scope implies narrower ones). Called as `implies(granted, required)`; equal scopes always
/// match without it.
pub type ScopeImplies = Arc<dyn Fn(&str, &str) -> bool + Send + Sync>;

/// The authorization settings of the Streamable HTTP server: set them with
/// [`HttpConfig::auth`](crate::HttpConfig::auth).
///
/// ```
/// use ferromcp_http_server::auth::{AuthConfig, Principal, StaticVerifier};
///
/// let verifier = StaticVerifier::new()
///     .token("dev-token", Principal::new("alice").scopes(["mcp:read"]));
/// let auth = AuthConfig::new("https://mcp.example.com/mcp", verifier)
///     .authorization_server("https://auth.example.com")
///     .required_scopes(["mcp:read"])
///     .tool_scopes("delete_file", ["files:write"]);
/// assert_eq!(
///     auth.resource_metadata_url(),
///     "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
/// );
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct AuthConfig {
    /// The canonical URL of the MCP endpoint (RFC 8707 resource indicator): the `resource`
    /// of the metadata, and the audience tokens must name (checked by the verifier).
    pub resource: String,
    /// The authorization servers' issuer URLs (RFC 9728 `authorization_servers`).
    pub authorization_servers: Vec<String>,
    /// The scopes advertised in the metadata (`scopes_supported`); defaults to every scope
    /// named in this config.
    pub scopes_supported: Option<Vec<String>>,
    /// Scopes every request needs.
    pub required_scopes: Vec<String>,
    /// Scopes needed by a JSON-RPC method, on top of [`required_scopes`](Self::required_scopes).
    pub method_scopes: HashMap<String, Vec<String>>,
    /// Scopes needed by a tool (the `name` of a `tools/call`), on top of the method's.
    pub tool_scopes: HashMap<String, Vec<String>>,
    /// The metadata document's URL, given in challenges; defaults to the path-suffixed
    /// well-known URL of [`resource`](Self::resource).
    pub resource_metadata_url: Option<String>,
    /// The resource's human-readable name (`resource_name` in the metadata).
    pub resource_name: Option<String>,
    /// Scope hierarchy (see [`ScopeImplies`]); `None`: exact matches only.
    pub scope_implies: Option<ScopeImplies>,
    /// The verifier every bearer token goes through.
    pub verifier: Arc<dyn TokenVerifier>,
}

impl AuthConfig {
    /// Protects the MCP endpoint whose canonical URL is `resource` (e.g.
    /// `https://mcp.example.com/mcp`, no fragment, no trailing slash) with `verifier`.
    pub fn new(resource: impl Into<String>, verifier: impl TokenVerifier) -> Self {
        Self::with_verifier(resource, Arc::new(verifier))
    }

    /// [`new`](Self::new) with a shared verifier.
    pub fn with_verifier(resource: impl Into<String>, verifier: Arc<dyn TokenVerifier>) -> Self {
        Self {
            resource: resource.into(),
            authorization_servers: Vec::new(),
            scopes_supported: None,
            required_scopes: Vec::new(),
            method_scopes: HashMap::new(),
            tool_scopes: HashMap::new(),
            resource_metadata_url: None,
            resource_name: None,
            scope_implies: None,
            verifier,
        }
    }

    /// Adds an authorization server (its issuer URL).
    #[must_use]
    pub fn authorization_server(mut self, issuer: impl Into<String>) -> Self {
        self.authorization_servers.push(issuer.into());
        self
    }

    /// Sets the advertised `scopes_supported`.
    #[must_use]
    pub fn scopes_supported<I: IntoIterator<Item = S>, S: Into<String>>(mut self, s: I) -> Self {
        self.scopes_supported = Some(s.into_iter().map(Into::into).collect());
        self
    }

    /// Sets the scopes every request needs.
    #[must_use]
    pub fn required_scopes<I: IntoIterator<Item = S>, S: Into<String>>(mut self, s: I) -> Self {
        self.required_scopes = s.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the scopes a JSON-RPC method needs (e.g. `"resources/read"`).
    #[must_use]
    pub fn method_scopes<I: IntoIterator<Item = S>, S: Into<String>>(
        mut self,
        method: impl Into<String>,
        scopes: I,
    ) -> Self {
        let scopes = scopes.into_iter().map(Into::into).collect();
        self.method_scopes.insert(method.into(), scopes);
        self
    }

    /// Sets the scopes a tool needs (checked on `tools/call` of that name).
    #[must_use]
    pub fn tool_scopes<I: IntoIterator<Item = S>, S: Into<String>>(
        mut self,
        tool: impl Into<String>,
        scopes: I,
    ) -> Self {
        let scopes = scopes.into_iter().map(Into::into).collect();
        self.tool_scopes.insert(tool.into(), scopes);
        self
    }

    /// Sets the metadata URL given in challenges (when it is not the path-suffixed default).
    #[must_use]
    pub fn metadata_url(mut self, url: impl Into<String>) -> Self {
        self.resource_metadata_url = Some(url.into());
        self
    }

    /// Sets the resource's human-readable name.
    #[must_use]
    pub fn resource_name(mut self, name: impl Into<String>) -> Self {
        self.resource_name = Some(name.into());
        self
    }

    /// Sets the scope hierarchy.
    #[must_use]
    pub fn scope_implies(
        mut self,
        implies: impl Fn(&str, &str) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.scope_implies = Some(Arc::new(implies));
        self
    }

    /// The URL of the metadata document given in challenges: the configured one, or the
    /// path-suffixed well-known URL of the resource
    /// (`https://host/.well-known/oauth-protected-resource/mcp`).
    pub fn resource_metadata_url(&self) -> String {
        if let Some(u) = &self.resource_metadata_url {
            return u.clone();
        }
        let (origin, path) = split_origin(&self.resource);
        let path = path.trim_end_matches('/');
        format!("{origin}{WELL_KNOWN}{path}")
    }

    /// The well-known paths the metadata is served at: the root one and, when the resource
    /// has a path, the path-suffixed one.
    pub fn metadata_paths(&self) -> Vec<String> {
        let (_, path) = split_origin(&self.resource);
        let path = path.trim_end_matches('/');
        let mut out = vec![WELL_KNOWN.to_owned()];
        if !path.is_empty() {
            out.push(format!("{WELL_KNOWN}{path}"));
        }
        out
    }

    /// The RFC 9728 protected-resource metadata document.
    pub fn metadata(&self) -> ProtectedResourceMetadata {
        let scopes = match &self.scopes_supported {
            Some(s) => s.clone(),
            None => {
                let all: BTreeSet<&String> = self
                    .required_scopes
                    .iter()
                    .chain(self.method_scopes.values().flatten())
                    .chain(self.tool_scopes.values().flatten())
                    .collect();
                all.into_iter().cloned().collect()
            }
        };
        ProtectedResourceMetadata {
            resource: self.resource.clone(),
            authorization_servers: self.authorization_servers.clone(),
            scopes_supported: scopes,
            bearer_methods_supported: vec!["header".to_owned()],
            resource_name: self.resource_name.clone(),
        }
    }

    /// The scopes an operation needs: the global ones, the method's, and the tool's (for a
    /// `tools/call` naming `tool`), without repeats, in that order.
    pub fn scopes_for(&self, method: Option<&str>, tool: Option<&str>) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let extra = method
            .and_then(|m| self.method_scopes.get(m))
            .into_iter()
            .chain(tool.and_then(|t| self.tool_scopes.get(t)))
            .flatten();
        for s in self.required_scopes.iter().chain(extra) {
            if !out.contains(s) {
                out.push(s.clone());
            }
        }
        out
    }

    /// Whether `principal` holds every scope in `required` (directly or, with
    /// [`scope_implies`](Self::scope_implies), through a broader one).
    pub fn satisfies(&self, principal: &Principal, required: &[String]) -> bool {
        required.iter().all(|r| {
            principal.has_scope(r)
                || self
                    .scope_implies
                    .as_ref()
                    .is_some_and(|f| principal.scopes.iter().any(|g| f(g, r)))
        })
    }
}

/// The RFC 9728 well-known path prefix.
pub(crate) const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// Splits `scheme://authority/path?query` into (`scheme://authority`, `/path`).
fn split_origin(url: &str) -> (&str, &str) {
    let url = url.split(['?', '#']).next().unwrap_or(url);
    let after = url.find("://").map_or(0, |i| i + 3);
    match url[after..].find('/') {
        Some(i) => url.split_at(after + i),
        None => (url, ""),
    }
}

impl fmt::Debug for AuthConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthConfig")
            .field("resource", &self.resource)
            .field("authorization_servers", &self.authorization_servers)
            .field("required_scopes", &self.required_scopes)
            .field("method_scopes", &self.method_scopes)
            .field("tool_scopes", &self.tool_scopes)
            .finish_non_exhaustive()
    }
}

/// The RFC 9728 protected-resource metadata document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ProtectedResourceMetadata {
    /// The resource's canonical URL.
    pub resource: String,
    /// The authorization servers' issuer URLs.
    pub authorization_servers: Vec<String>,
    /// The scopes the resource uses.
    pub scopes_supported: Vec<String>,
    /// How tokens may be sent: only `"header"`.
    pub bearer_methods_supported: Vec<String>,
    /// The resource's human-readable name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_name: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::StaticVerifier;

    #[test]
    fn metadata_urls() {
        let c = AuthConfig::new("https://h.example:8443/api/mcp", StaticVerifier::new());
        assert_eq!(
            c.resource_metadata_url(),
            "https://h.example:8443/.well-known/oauth-protected-resource/api/mcp"
        );
        assert_eq!(
            c.metadata_paths(),
            [WELL_KNOWN, "/.well-known/oauth-protected-resource/api/mcp"]
        );
        let root = AuthConfig::new("https://h.example", StaticVerifier::new());
        assert_eq!(root.metadata_paths(), [WELL_KNOWN]);
    }

    #[test]
    fn scopes_for_merges_without_repeats() {
        let c = AuthConfig::new("https://h/mcp", StaticVerifier::new())
            .required_scopes(["a"])
            .method_scopes("tools/call", ["b", "a"])
            .tool_scopes("rm", ["c"]);
        assert_eq!(
            c.scopes_for(Some("tools/call"), Some("rm")),
            ["a", "b", "c"]
        );
        assert_eq!(c.scopes_for(Some("tools/list"), None), ["a"]);
        let p = Principal::new("u").scopes(["a", "b"]);
        assert!(!c.satisfies(&p, &c.scopes_for(Some("tools/call"), Some("rm"))));
        let c = c.scope_implies(|g, r| g == "admin" || g == r);
        assert!(c.satisfies(&Principal::new("u").scopes(["admin"]), &["c".into()]));
    }
}
