//! The stdio transport: a child process speaking newline-delimited JSON-RPC on its stdin and
//! stdout (MCP "Transports › stdio").
//!
//! Shutdown follows the spec's sequence (lifecycle "Shutdown › stdio"): close the child's
//! stdin, wait for it to exit, then send SIGTERM, wait again, then SIGKILL. The child's stderr
//! is its log: it is passed through (inherited) by default and is never treated as an error.
//!
//! On Windows there is no SIGTERM a console-less child can catch, so the middle step ends the
//! child's whole process tree with `%SystemRoot%\System32\taskkill.exe /T /F /PID <pid>` (run
//! by full path, so `PATH` cannot substitute it; no window): servers started through a wrapper
//! (`cmd /c`, `npx`, `uvx`) do not outlive it. `taskkill` rather than a job object keeps this
//! crate free of `unsafe` FFI; the cost is one short-lived process at shutdown, and only
//! when the server ignored end of input. The last step is `TerminateProcess` on the child.
//!
//! The pipes carry bytes: UTF-8 JSON lines, whatever the console code page, and lines from the
//! server may end in `\n` or `\r\n`.

use std::ffi::OsStr;
use std::fmt;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use ferromcp_dispatch::{
    BoxFuture, DispatcherConfig, JsonRpcDispatcher, LineSink, LineTransportConfig, TransportInfo,
    TransportKind, line_transport,
};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::Mutex;

use super::{Connected, Transport, TransportShutdown};
use crate::error::ClientError;

/// The default time the child gets to exit after stdin closes, and again after SIGTERM.
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// What happens to the child's stderr.
#[derive(Clone, Default)]
#[non_exhaustive]
pub enum StderrMode {
    /// The child writes to this process's stderr (the default).
    #[default]
    Inherit,
    /// Discarded.
    Null,
    /// Each line goes to this callback (for example into `tracing`). Never an error.
    Lines(Arc<dyn Fn(&str) + Send + Sync>),
}

impl fmt::Debug for StderrMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Inherit => f.write_str("Inherit"),
            Self::Null => f.write_str("Null"),
            Self::Lines(_) => f.write_str("Lines(..)"),
        }
    }
}

/// A server run as a child process, spoken to over its stdin and stdout.
///
/// ```no_run
/// # async fn demo() -> Result<(), ferromcp_client::ClientError> {
/// use std::time::Duration;
/// use ferromcp_client::{Client, StdioTransport};
///
/// let transport = StdioTransport::new("ferromcp")
///     .arg("serve")
///     .shutdown_grace(Duration::from_secs(1));
/// let client = Client::builder().connect(transport).await?;
/// let tools = client.list_tools(None).await?;
/// client.shutdown().await;
/// # let _ = tools; Ok(()) }
/// ```
pub struct StdioTransport {
    command: Command,
    stderr: StderrMode,
    grace: Duration,
    line: LineTransportConfig,
}

impl StdioTransport {
    /// Runs `program` (looked up in `PATH` as `std::process::Command` does).
    pub fn new(program: impl AsRef<OsStr>) -> Self {
        Self::from_command(Command::new(program))
    }

    /// Runs a prepared command; its stdin, stdout and stderr settings are replaced.
    pub fn from_command(command: Command) -> Self {
        Self {
            command,
            stderr: StderrMode::default(),
            grace: DEFAULT_SHUTDOWN_GRACE,
            line: LineTransportConfig::default(),
        }
    }

    /// Adds an argument.
    #[must_use]
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.command.arg(arg);
        self
    }

    /// Adds arguments.
    #[must_use]
    pub fn args<I, A>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = A>,
        A: AsRef<OsStr>,
    {
        self.command.args(args);
        self
    }

    /// Sets an environment variable for the child.
    #[must_use]
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.command.env(key, value);
        self
    }

    /// Sets the child's working directory.
    #[must_use]
    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.command.current_dir(dir);
        self
    }

    /// Sets what happens to the child's stderr (inherited by default).
    #[must_use]
    pub fn stderr(mut self, mode: StderrMode) -> Self {
        self.stderr = mode;
        self
    }

    /// Sets how long the child gets to exit after its stdin closes, and again after SIGTERM
    /// (on Windows: after `taskkill /T /F`) (default [`DEFAULT_SHUTDOWN_GRACE`]).
    #[must_use]
    pub fn shutdown_grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }

    /// Sets the line framing limits (line length, nesting depth).
    #[must_use]
    pub fn line_config(mut self, config: LineTransportConfig) -> Self {
        self.line = config;
        self
    }
}

impl fmt::Debug for StdioTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StdioTransport")
            .field("command", &self.command.as_std().get_program())
            .field("stderr", &self.stderr)
            .field("grace", &self.grace)
            .finish_non_exhaustive()
    }
}

impl Transport for StdioTransport {
    fn open(mut self) -> BoxFuture<'static, Result<Connected, ClientError>> {
        Box::pin(async move {
            let stderr = match &self.stderr {
                StderrMode::Inherit => Stdio::inherit(),
                StderrMode::Null => Stdio::null(),
                StderrMode::Lines(_) => Stdio::piped(),
            };
            let mut child = self
                .command
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(stderr)
                // A client dropped without `shutdown` must not leak its server.
                .kill_on_drop(true)
                .spawn()?;
            let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
                return Err(ClientError::Transport(std::io::Error::other(
                    "the child's stdin or stdout was not captured",
                )));
            };
            if let (StderrMode::Lines(callback), Some(stderr)) = (&self.stderr, child.stderr.take())
            {
                let callback = callback.clone();
                tokio::spawn(async move {
                    let mut lines = BufReader::new(stderr).lines();
                    while let Ok(Some(line)) = lines.next_line().await {
                        callback(&line);
                    }
                });
            }
            let (source, sink) = line_transport(stdout, stdin, self.line);
            let config = DispatcherConfig::default()
                .transport(TransportInfo::new(TransportKind::Stdio, true));
            let dispatcher = JsonRpcDispatcher::new(source, sink.clone(), config);
            let hook = ChildShutdown {
                child: Mutex::new(Some(child)),
                stdin: sink,
                grace: self.grace,
            };
            Ok(Connected::new(Arc::new(dispatcher))
                .with_shutdown(hook)
                .with_network(super::NetworkPeer::pipe()))
        })
    }
}

/// Close stdin, wait; SIGTERM (Windows: `taskkill /T /F`), wait; SIGKILL (`TerminateProcess`).
struct ChildShutdown {
    child: Mutex<Option<Child>>,
    stdin: LineSink,
    grace: Duration,
}

/// Waits up to `grace` for the child to exit; whether it did.
async fn exited_within(child: &mut Child, grace: Duration) -> bool {
    match tokio::time::timeout(grace, child.wait()).await {
        Ok(Ok(status)) => {
            tracing::debug!(%status, "stdio server exited");
            true
        }
        Ok(Err(e)) => {
            tracing::debug!(error = %e, "waiting for the stdio server failed");
            true
        }
        Err(_) => false,
    }
}

#[cfg(unix)]
async fn terminate(child: &Child, _grace: Duration) {
    use rustix::process::{Pid, Signal, kill_process};
    let pid = child
        .id()
        .and_then(|id| i32::try_from(id).ok())
        .and_then(Pid::from_raw);
    if let Some(pid) = pid
        && let Err(e) = kill_process(pid, Signal::TERM)
    {
        tracing::debug!(error = %e, "SIGTERM to the stdio server failed");
    }
}

/// Ends the child's process tree with `taskkill /T /F`, waiting up to `grace` for `taskkill`.
#[cfg(windows)]
async fn terminate(child: &Child, grace: Duration) {
    /// `CREATE_NO_WINDOW`: no console window flashes up when the host is a GUI application.
    const CREATE_NO_WINDOW: u32 = 0x0800_0000;
    let Some(pid) = child.id() else { return };
    let taskkill = std::env::var_os("SystemRoot").map_or_else(
        || std::path::PathBuf::from("taskkill.exe"),
        |root| Path::new(&root).join("System32").join("taskkill.exe"),
    );
    let status = Command::new(taskkill)
        .args(["/T", "/F", "/PID", &pid.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .creation_flags(CREATE_NO_WINDOW)
        .kill_on_drop(true)
        .status();
    match tokio::time::timeout(grace, status).await {
        Ok(Ok(status)) if status.success() => {}
        Ok(Ok(status)) => tracing::debug!(%status, "taskkill of the stdio server failed"),
        Ok(Err(e)) => tracing::debug!(error = %e, "taskkill of the stdio server failed"),
        Err(_) => tracing::debug!("taskkill of the stdio server timed out"),
    }
}

#[cfg(not(any(unix, windows)))]
async fn terminate(_child: &Child, _grace: Duration) {}

impl TransportShutdown for ChildShutdown {
    fn shutdown(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let Some(mut child) = self.child.lock().await.take() else {
                return;
            };
            // 1. Close stdin (after flushing what is queued); a child that reads nothing more
            //    may block the flush, so it is bounded too.
            let _ = tokio::time::timeout(self.grace, self.stdin.close()).await;
            if exited_within(&mut child, self.grace).await {
                return;
            }
            // 2. SIGTERM (Windows: the process tree, forcefully).
            tracing::debug!("stdio server still running after stdin closed: SIGTERM");
            terminate(&child, self.grace).await;
            if exited_within(&mut child, self.grace).await {
                return;
            }
            // 3. SIGKILL.
            tracing::debug!("stdio server still running after SIGTERM: SIGKILL");
            if let Err(e) = child.start_kill() {
                tracing::debug!(error = %e, "SIGKILL to the stdio server failed");
            }
            let _ = child.wait().await;
        })
    }
}
