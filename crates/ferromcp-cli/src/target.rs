//! TARGET: what the client subcommands talk to. An `http://` or `https://` URL is a
//! Streamable HTTP server; anything else is a command line that starts a stdio server, split
//! shell-style (see [`crate::split`]).
//!
//! Transports plug in here and only here: [`connect`] turns a [`Target`] into a connected
//! [`Client`] over ferromcp-client's `StdioTransport` or `HttpTransport` (both eras).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ferromcp_client::transport::http::{HttpClientConfig, HttpConfig};
use ferromcp_client::{Client, ClientBuilder, HttpTransport, StdioTransport};

use crate::split::split;

/// Where the server is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    /// A Streamable HTTP endpoint (the full URL, path included).
    Http(String),
    /// A stdio server: the program and its arguments.
    Command(Vec<String>),
}

/// An HTTP header to send with every request (`--header NAME:VALUE`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Header {
    pub(crate) name: String,
    pub(crate) value: String,
}

impl Header {
    /// Parses `NAME:VALUE` (blanks around the value are trimmed).
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        match text.split_once(':') {
            Some((name, value))
                if !name.trim().is_empty() && !name.contains(char::is_whitespace) =>
            {
                Ok(Self {
                    name: name.to_owned(),
                    value: value.trim().to_owned(),
                })
            }
            _ => Err(format!("--header wants NAME:VALUE, got {text:?}")),
        }
    }
}

impl Target {
    /// Reads a TARGET argument.
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let lower = text.trim_start().to_ascii_lowercase();
        if lower.starts_with("http://") || lower.starts_with("https://") {
            return Ok(Self::Http(text.trim().to_owned()));
        }
        split(text)
            .map(Self::Command)
            .map_err(|e| format!("cannot read the command {text:?}: {e}"))
    }

    /// A short description for messages.
    pub(crate) fn describe(&self) -> String {
        match self {
            Self::Http(url) => url.clone(),
            Self::Command(argv) => format!("`{}`", argv.join(" ")),
        }
    }
}

/// The program to run for a stdio command: as given, except that a bare `ferromcp` that is
/// not on `PATH` is this very binary (so `ferromcp inspect "ferromcp serve"` works when the
/// binary is run by its full path).
pub(crate) fn program(name: &str) -> PathBuf {
    if name == "ferromcp"
        && find_on_path(name).is_none()
        && let Ok(me) = std::env::current_exe()
    {
        return me;
    }
    PathBuf::from(name)
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    let path: OsString = std::env::var_os("PATH")?;
    // `ferromcp.exe` on Windows (the suffix is empty elsewhere).
    let file = format!("{name}{}", std::env::consts::EXE_SUFFIX);
    std::env::split_paths(&path)
        .map(|dir| dir.join(&file))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(p: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        p.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        p.is_file()
    }
}

/// The stdio transport for a command line (the child's stderr goes to ours).
pub(crate) fn stdio_transport(argv: &[String]) -> Result<StdioTransport, String> {
    let Some((first, rest)) = argv.split_first() else {
        return Err("the command is empty".to_owned());
    };
    Ok(StdioTransport::new(program(first))
        .args(rest)
        .shutdown_grace(Duration::from_secs(1)))
}

/// Connects `builder` to `target`.
pub(crate) async fn connect(
    target: &Target,
    builder: ClientBuilder,
    headers: &[Header],
    client: Option<&HttpClientConfig>,
    oauth: bool,
) -> Result<Client, String> {
    match target {
        Target::Command(argv) => {
            if !headers.is_empty() {
                return Err("--header applies to http:// and https:// targets only".to_owned());
            }
            if oauth {
                return Err("--oauth applies to http:// and https:// targets only".to_owned());
            }
            if client.is_some() {
                return Err(
                    "--proxy, --no-proxy, --cacert, --cert, --key, --connect-timeout \
                     and --read-timeout apply to http:// and https:// targets only"
                        .to_owned(),
                );
            }
            let transport = stdio_transport(argv)?;
            builder
                .connect(transport)
                .await
                .map_err(|e| format!("connecting to {}: {e}", target.describe()))
        }
        Target::Http(url) => {
            let client = client.cloned().unwrap_or_default();
            connect_http(url, builder, headers, &client, oauth).await
        }
    }
}

/// The Streamable HTTP transport for `url`, connecting as `client` says, with `headers` on
/// every request.
pub(crate) fn http_transport(
    url: &str,
    headers: &[Header],
    client: &HttpClientConfig,
) -> Result<HttpTransport, String> {
    let mut transport = HttpTransport::new(url)
        .map_err(|e| e.to_string())?
        .config(HttpConfig::default().client(client.clone()));
    for h in headers {
        let name = http::HeaderName::from_bytes(h.name.as_bytes())
            .map_err(|_| format!("--header: {:?} is not a valid header name", h.name))?;
        let value = http::HeaderValue::from_str(&h.value).map_err(|_| {
            format!(
                "--header: the value of {} is not a valid header value",
                h.name
            )
        })?;
        transport = transport.header(name, value);
    }
    Ok(transport)
}

async fn connect_http(
    url: &str,
    builder: ClientBuilder,
    headers: &[Header],
    client: &HttpClientConfig,
    oauth: bool,
) -> Result<Client, String> {
    let mut transport = http_transport(url, headers, client)?;
    if oauth {
        // Headless: dynamic registration with a loopback redirect URI that is never
        // listened on; the handler reads the code from the authorization server's redirect.
        use ferromcp_client::oauth::{OAuthConfig, OAuthProvider, RedirectReadingHandler};
        let cfg = OAuthConfig::new("http://127.0.0.1/callback", RedirectReadingHandler)
            .with_client_name("ferromcp-cli")
            // The flow's own requests connect as the transport's do (proxy, roots, timeouts).
            .with_http_client(client.clone());
        let provider = OAuthProvider::new(url, cfg).map_err(|e| format!("--oauth: {e}"))?;
        transport = transport.auth(std::sync::Arc::new(provider));
    }
    builder
        .connect(transport)
        .await
        .map_err(|e| format!("connecting to {url}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::{Header, Target};

    #[test]
    fn targets() {
        assert_eq!(
            Target::parse("http://127.0.0.1:8000/mcp"),
            Ok(Target::Http("http://127.0.0.1:8000/mcp".to_owned()))
        );
        assert!(matches!(
            Target::parse("HTTPS://x/mcp"),
            Ok(Target::Http(_))
        ));
        assert_eq!(
            Target::parse("ferromcp serve"),
            Ok(Target::Command(vec!["ferromcp".into(), "serve".into()]))
        );
        assert_eq!(
            Target::parse("'my server' --flag \"a b\""),
            Ok(Target::Command(vec![
                "my server".into(),
                "--flag".into(),
                "a b".into()
            ]))
        );
        assert!(Target::parse("").is_err());
        assert!(Target::parse("a 'b").is_err());
    }

    #[test]
    fn headers() {
        assert_eq!(
            Header::parse("Authorization: Bearer x:y"),
            Ok(Header {
                name: "Authorization".into(),
                value: "Bearer x:y".into()
            })
        );
        assert!(Header::parse("novalue").is_err());
        assert!(Header::parse(":v").is_err());
        assert!(Header::parse("a b: v").is_err());
    }
}
