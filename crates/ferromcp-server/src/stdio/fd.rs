//! Claiming the process's standard streams for the wire.
//!
//! While a stdio server runs, stdout must carry protocol messages only. The wire therefore moves
//! to private descriptors (duplicated, close-on-exec, so child processes never inherit it), and
//! fd 1 is pointed at stderr and fd 0 at `/dev/null`: a stray `println!` from the process, or
//! output of a child process it starts, lands on stderr instead of corrupting the wire. Dropping
//! the claim puts fds 0 and 1 back, with the file status flags (`O_NONBLOCK`) they had.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::fs::OFlags;

/// Only one claim may exist at a time in a process.
static CLAIMED: AtomicBool = AtomicBool::new(false);

/// The private wire descriptors, and what fds 0 and 1 pointed at before the claim.
#[derive(Debug)]
pub(crate) struct StdioClaim {
    /// The read end of the wire (the former stdin).
    pub(crate) input: Option<OwnedFd>,
    /// The write end of the wire (the former stdout).
    pub(crate) output: Option<OwnedFd>,
    saved_stdin: OwnedFd,
    saved_stdout: OwnedFd,
    /// The file status flags of the open files behind fds 0 and 1 at claim time. The wire's
    /// descriptors share those open files, so making them non-blocking changes fds 0 and 1
    /// too; dropping the claim puts the flags back.
    stdin_flags: Option<OFlags>,
    stdout_flags: Option<OFlags>,
}

impl StdioClaim {
    /// Moves the wire to private descriptors and points fd 1 at stderr and fd 0 at
    /// `/dev/null`. Fails when another claim is active.
    pub(crate) fn claim() -> io::Result<Self> {
        if CLAIMED.swap(true, Ordering::AcqRel) {
            return Err(io::Error::other(
                "the process's stdio is already serving a connection",
            ));
        }
        Self::claim_inner().inspect_err(|_| CLAIMED.store(false, Ordering::Release))
    }

    fn claim_inner() -> io::Result<Self> {
        let input = io::stdin().as_fd().try_clone_to_owned()?;
        let output = io::stdout().as_fd().try_clone_to_owned()?;
        let saved_stdin = io::stdin().as_fd().try_clone_to_owned()?;
        let saved_stdout = io::stdout().as_fd().try_clone_to_owned()?;
        let stdin_flags = rustix::fs::fcntl_getfl(&saved_stdin).ok();
        let stdout_flags = rustix::fs::fcntl_getfl(&saved_stdout).ok();
        let devnull = File::open("/dev/null")?;
        rustix::stdio::dup2_stdin(&devnull)?;
        if let Err(e) = rustix::stdio::dup2_stdout(io::stderr().as_fd()) {
            // Put fd 0 back before failing; `Self` is not built yet, so `Drop` will not.
            let _ = rustix::stdio::dup2_stdin(&saved_stdin);
            return Err(e.into());
        }
        Ok(Self {
            input: Some(input),
            output: Some(output),
            saved_stdin,
            saved_stdout,
            stdin_flags,
            stdout_flags,
        })
    }
}

impl Drop for StdioClaim {
    fn drop(&mut self) {
        restore_flags(&self.saved_stdin, self.stdin_flags, "stdin");
        restore_flags(&self.saved_stdout, self.stdout_flags, "stdout");
        if let Err(e) = rustix::stdio::dup2_stdin(&self.saved_stdin) {
            tracing::warn!("could not restore stdin: {e}");
        }
        if let Err(e) = rustix::stdio::dup2_stdout(&self.saved_stdout) {
            tracing::warn!("could not restore stdout: {e}");
        }
        CLAIMED.store(false, Ordering::Release);
    }
}

/// Puts back the file status flags an open file had at claim time, if they changed.
fn restore_flags(fd: &OwnedFd, flags: Option<OFlags>, name: &str) {
    let Some(flags) = flags else { return };
    match rustix::fs::fcntl_getfl(fd) {
        Ok(now) if now == flags => {}
        _ => {
            if let Err(e) = rustix::fs::fcntl_setfl(fd, flags) {
                tracing::warn!("could not restore the flags of {name}: {e}");
            }
        }
    }
}
