//! A stdio echo server for the stdio transport's integration tests.
//!
//! It claims stdio through [`stdio_transport`], prints a stray line with `println!` (which must
//! land on stderr), and answers every request with `{"method": <its method>}`. The method
//! `child` first runs `sh -c 'echo child-out; cat'` (Windows: `cmd /c "echo child-out& more"`):
//! the child's output must land on stderr and its stdin must be empty. A frame that does not
//! decode is answered with its error response. Notifications get no answer. At end of input it
//! closes the transport and prints `restored nonblock=<bool>` (Windows: `restored`) on the
//! restored stdout, then exits 0.
#![allow(clippy::print_stdout)]

#[cfg(unix)]
fn main() -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(serve())?;
    let flags = rustix::fs::fcntl_getfl(std::io::stdout())?;
    println!(
        "restored nonblock={}",
        flags.contains(rustix::fs::OFlags::NONBLOCK)
    );
    Ok(())
}

/// Windows: the same server; the restored standard output has no blocking mode to report.
#[cfg(windows)]
fn main() -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(serve())?;
    println!("restored");
    Ok(())
}

/// The command of the `child` method: prints a line, then copies its stdin (which must be
/// empty) to its stdout.
fn child_command() -> std::process::Command {
    #[cfg(unix)]
    {
        let mut cmd = std::process::Command::new("sh");
        cmd.args(["-c", "echo child-out; cat"]);
        cmd
    }
    #[cfg(not(unix))]
    {
        let mut cmd = std::process::Command::new("cmd");
        cmd.args(["/c", "echo child-out& more"]);
        cmd
    }
}

#[cfg(any(unix, windows))]
async fn serve() -> std::io::Result<()> {
    use ferromcp_dispatch::{LineTransportConfig, MessageSink, MessageSource};
    use ferromcp_server::stdio::stdio_transport;
    use ferromcp_types::jsonrpc::Message;

    let (mut source, sink) = stdio_transport(LineTransportConfig::default())?;
    println!("stray");
    while let Some(item) = source.recv().await {
        let reply = match item {
            Ok(inbound) => match inbound.message {
                Message::Request(request) => {
                    if request.method == "child" {
                        child_command().status()?;
                    }
                    Message::response(request.id, serde_json::json!({"method": request.method}))
                }
                _ => continue,
            },
            Err(e) => Message::Error(e.to_response()),
        };
        sink.send(reply.into())
            .await
            .map_err(std::io::Error::other)?;
    }
    drop(source);
    sink.close().await.map_err(std::io::Error::other)
}

#[cfg(not(any(unix, windows)))]
fn main() {}
