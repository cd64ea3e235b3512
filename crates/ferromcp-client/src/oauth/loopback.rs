//! [`LoopbackHandler`]: the authorization step of desktop and command-line apps (RFC 8252
//! §7.3): the redirect comes back to a port on the loopback interface.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

use super::{AuthorizationHandler, AuthorizationResponse, BoxFuture, OAuthError};

/// The default bound on waiting for the redirect: 5 minutes (a person is signing in).
pub const DEFAULT_LOOPBACK_TIMEOUT: Duration = Duration::from_secs(300);
/// The default bound on one request head read from the browser: 8 KiB.
pub const DEFAULT_LOOPBACK_MAX_HEAD: usize = 8 * 1024;
/// The path the redirect URI names.
const CALLBACK_PATH: &str = "/callback";
/// How long one browser connection may take to send its request head.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// How long, and how much, unread request data is drained before closing.
const DRAIN: (Duration, usize) = (Duration::from_secs(1), 64 * 1024);
const NOT_FOUND: &[u8] =
    b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";
const TOO_LARGE: &[u8] = b"HTTP/1.1 431 Request Header Fields Too Large\r\n\
    content-length: 0\r\nconnection: close\r\n\r\n";

/// An [`AuthorizationHandler`] that hands the authorization URL to `open` (print it, or
/// start a browser) and waits, on a loopback port, for the authorization server's redirect
/// to [`redirect_uri`](Self::redirect_uri) (RFC 8252 §7.3; the MCP spec's "native"
/// clients). Other requests to the port (a browser's `/favicon.ico`) get a 404 and the wait
/// goes on; an oversized request head gets a 431.
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use ferromcp_client::oauth::{LoopbackHandler, OAuthConfig};
/// let handler = LoopbackHandler::bind(|url: &str| eprintln!("Open {url} to sign in")).await?;
/// let cfg = OAuthConfig::new(handler.redirect_uri(), handler);
/// # let _ = cfg;
/// # Ok(()) }
/// ```
pub struct LoopbackHandler {
    listener: TcpListener,
    addr: SocketAddr,
    open: Box<dyn Fn(&str) + Send + Sync>,
    timeout: Duration,
    max_head: usize,
}

impl std::fmt::Debug for LoopbackHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoopbackHandler")
            .field("addr", &self.addr)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl LoopbackHandler {
    /// Listens on `127.0.0.1`, on a port the system picks.
    pub async fn bind(open: impl Fn(&str) + Send + Sync + 'static) -> Result<Self, OAuthError> {
        Self::bind_to(SocketAddr::from(([127, 0, 0, 1], 0)), open).await
    }

    /// Listens on `addr`, which must be a loopback address (a fixed port, for an
    /// authorization server that wants the exact redirect URI registered).
    pub async fn bind_to(
        addr: SocketAddr,
        open: impl Fn(&str) + Send + Sync + 'static,
    ) -> Result<Self, OAuthError> {
        if !addr.ip().is_loopback() {
            return Err(OAuthError::Config(format!(
                "{addr} is not a loopback address"
            )));
        }
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|e| OAuthError::Config(format!("listening on {addr}: {e}")))?;
        let addr = listener
            .local_addr()
            .map_err(|e| OAuthError::Config(format!("listening on {addr}: {e}")))?;
        Ok(Self {
            listener,
            addr,
            open: Box::new(open),
            timeout: DEFAULT_LOOPBACK_TIMEOUT,
            max_head: DEFAULT_LOOPBACK_MAX_HEAD,
        })
    }

    /// Sets how long to wait for the redirect (default [`DEFAULT_LOOPBACK_TIMEOUT`]).
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets the bound on one request head (default [`DEFAULT_LOOPBACK_MAX_HEAD`]).
    #[must_use]
    pub fn with_max_head(mut self, bytes: usize) -> Self {
        self.max_head = bytes;
        self
    }

    /// The redirect URI to register: `http://127.0.0.1:PORT/callback`.
    pub fn redirect_uri(&self) -> String {
        format!("http://{}{CALLBACK_PATH}", self.addr)
    }
}

/// Serves one browser connection: the redirect's parameters when it was the callback.
async fn serve(
    mut stream: TcpStream,
    addr: SocketAddr,
    max_head: usize,
) -> Option<Result<AuthorizationResponse, OAuthError>> {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    let read = async {
        loop {
            let n = stream.read(&mut buf).await.ok()?;
            if n == 0 {
                return None;
            }
            head.extend_from_slice(&buf[..n]);
            if head.windows(4).any(|w| w == b"\r\n\r\n") {
                return Some(true);
            }
            if head.len() > max_head {
                return Some(false);
            }
        }
    };
    let complete = tokio::time::timeout(HEAD_TIMEOUT, read)
        .await
        .ok()
        .flatten()?;
    if !complete {
        reply(stream, TOO_LARGE).await;
        return None;
    }
    let line = head.split(|b| *b == b'\n').next().unwrap_or_default();
    let line = String::from_utf8_lossy(line);
    let mut parts = line.split_whitespace();
    let target = match (parts.next(), parts.next()) {
        (Some("GET"), Some(t)) if t.split('?').next() == Some(CALLBACK_PATH) => t.to_owned(),
        _ => {
            reply(stream, NOT_FOUND).await;
            return None;
        }
    };
    let answer = AuthorizationResponse::from_redirect(&format!("http://{addr}{target}"));
    let text = match &answer {
        Ok(_) => "Authorization complete. You can close this window.",
        Err(_) => "Authorization failed. You can close this window.",
    };
    let page = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n{text}",
        text.len()
    );
    reply(stream, page.as_bytes()).await;
    Some(answer)
}

/// Writes `answer`, closes the write side, and drains what the browser still sends (so that
/// closing with unread data does not reset the connection before the answer is read).
async fn reply(mut stream: TcpStream, answer: &[u8]) {
    if stream.write_all(answer).await.is_err() || stream.shutdown().await.is_err() {
        return;
    }
    let drain = async {
        let mut buf = [0u8; 4096];
        let mut total = 0;
        while total < DRAIN.1 {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => total += n,
            }
        }
    };
    let _ = tokio::time::timeout(DRAIN.0, drain).await;
}

impl AuthorizationHandler for LoopbackHandler {
    fn authorize<'a>(
        &'a self,
        url: &'a str,
    ) -> BoxFuture<'a, Result<AuthorizationResponse, OAuthError>> {
        Box::pin(async move {
            (self.open)(url);
            // Connections are served side by side: a browser's idle preconnection must not
            // hold up the redirect.
            let wait = async {
                let mut serving = tokio::task::JoinSet::new();
                loop {
                    tokio::select! {
                        accepted = self.listener.accept() => {
                            let (stream, _) = accepted.map_err(|e| {
                                OAuthError::Http(format!("loopback redirect: {e}"))
                            })?;
                            serving.spawn(serve(stream, self.addr, self.max_head));
                        }
                        Some(done) = serving.join_next() => {
                            if let Ok(Some(answer)) = done {
                                return answer;
                            }
                        }
                    }
                }
            };
            tokio::time::timeout(self.timeout, wait)
                .await
                .map_err(|_| {
                    OAuthError::Authorization(format!(
                        "no redirect to {} within {:?}",
                        self.redirect_uri(),
                        self.timeout
                    ))
                })?
        })
    }
}
