//! The stdio transport (MCP "Transports › stdio").
//!
//! The client starts the server as a child process and speaks newline-delimited JSON-RPC over
//! its stdin and stdout; messages contain no embedded newlines, and the server must not write
//! anything to stdout that is not a valid MCP message. [`stdio_transport`] guarantees the last
//! part by claiming the standard streams: the wire moves to private close-on-exec descriptors,
//! fd 1 is pointed at stderr and fd 0 at `/dev/null`, so a stray `println!` (or a child
//! process's output) lands on stderr. Both are put back when the transport is gone.
//!
//! On Windows the same guarantee comes from the standard handles: the wire moves to private
//! non-inheritable duplicates, `STD_OUTPUT_HANDLE` is pointed at the standard error handle and
//! `STD_INPUT_HANDLE` at `NUL` (`SetStdHandle`), and the original handles are not inherited by
//! child processes while claimed. A C runtime's own `stdout` (C `printf`), bound at start-up,
//! is not redirected there.
//!
//! The wire carries bytes: UTF-8 JSON written with `write`/`WriteFile`, never through a
//! console API or a text mode, so neither the console code page nor newline translation
//! touches it. Lines may end in `\n` or `\r\n`.
//!
//! # No thread hop per message
//!
//! How the wire is read and written depends on what the descriptors are (Unix):
//!
//! - **Pipes and FIFOs** (the usual case) are made non-blocking and driven by tokio's reactor
//!   ([`tokio::net::unix::pipe`]): reads and writes happen on the runtime with no thread
//!   hop at all.
//! - **Sockets** (Node.js and libuv-based clients spawn children over socket pairs) are made
//!   non-blocking and driven by the reactor as a [`tokio::net::UnixStream`].
//! - **Anything else** (a terminal, a regular file, a character device) cannot be polled, so
//!   one dedicated thread reads it in 64 KiB chunks into a small channel: one hop per chunk,
//!   which holds many messages. Output goes through [`tokio::fs::File`], which hands one whole
//!   burst to the blocking pool per write. A terminal read cannot be interrupted, so that
//!   thread stays blocked in `read` until input arrives or the process exits; it never holds
//!   up runtime shutdown.
//! - When stdout shares its open file with stderr (`2>&1` into one pipe), output also takes
//!   the blocking path: making it non-blocking would make stderr non-blocking too.
//!
//! On Windows the anonymous pipes a parent hands its child cannot be polled (no overlapped
//! I/O), so every handle takes the thread and blocking-pool path above.
//!
//! On every path a burst of outbound messages is written and flushed once
//! ([`ferromcp_dispatch::line_transport`]).

#[cfg(unix)]
mod fd;
#[cfg(windows)]
mod handle;
mod wire;

use std::fs::File;
use std::io;
use std::sync::Arc;

use ferromcp_dispatch::{LineSink, LineSource, LineTransportConfig, line_transport};

#[cfg(unix)]
use self::fd::StdioClaim;
#[cfg(windows)]
use self::handle::StdioClaim;

/// Claims the process's stdin and stdout and serves newline-delimited JSON-RPC over them.
///
/// Until both halves are gone (the source dropped, and the sink closed or every clone of it
/// dropped, which ends its writer task after a final flush), fd 0 reads `/dev/null` and fd 1
/// writes to stderr (on Windows: the standard input handle is `NUL` and the standard output
/// handle is stderr's); then both are restored, with their original blocking mode. Closing the
/// sink does not close the process's stdout: the peer sees end of file when the process
/// exits or closes fd 1 itself.
///
/// Must be called inside a tokio runtime with I/O enabled (`#[tokio::main]`, or a runtime
/// built with `enable_io`/`enable_all`).
///
/// # Errors
///
/// When called outside a tokio runtime, when the process's stdio is already claimed (by a
/// transport that is still alive), or when the descriptors cannot be duplicated or set up.
///
/// ```no_run
/// # async fn run() -> std::io::Result<()> {
/// use ferromcp_dispatch::{LineTransportConfig, MessageSink, MessageSource};
/// use ferromcp_server::stdio::stdio_transport;
///
/// let (mut source, sink) = stdio_transport(LineTransportConfig::default())?;
/// while let Some(item) = source.recv().await {
///     // Serve `item` and answer through `sink`.
/// #   let _ = (&item, &sink);
/// }
/// # Ok(())
/// # }
/// ```
pub fn stdio_transport(config: LineTransportConfig) -> io::Result<(LineSource, LineSink)> {
    let runtime = tokio::runtime::Handle::try_current().map_err(io::Error::other)?;
    let _entered = runtime.enter();
    let mut claim = StdioClaim::claim()?;
    let (Some(input), Some(output)) = (claim.input.take(), claim.output.take()) else {
        return Err(io::Error::other(
            "the stdio claim holds no wire descriptors",
        ));
    };
    let claim = Arc::new(claim);
    let reader = wire::reader(File::from(input), claim.clone())?;
    let writer = wire::writer(File::from(output), claim)?;
    Ok(line_transport(reader, writer, config))
}
