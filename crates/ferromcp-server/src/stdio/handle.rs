//! Claiming the process's standard handles for the wire (Windows).
//!
//! The Windows counterpart of the Unix descriptor juggling: the wire moves to private,
//! non-inheritable duplicates of the standard input and output handles; the process's
//! `STD_OUTPUT_HANDLE` is pointed at its standard error handle and `STD_INPUT_HANDLE` at `NUL`
//! (`SetStdHandle`). Rust's standard library looks the standard handles up on every write, so a
//! stray `println!` lands on stderr, and so does the output of a child process that inherits
//! stdio. The original handles are made non-inheritable while claimed (`SetHandleInformation`),
//! so a child process never holds the wire open either. Dropping the claim puts both standard
//! handles and their inherit flags back.
//!
//! Not covered: a C runtime's own descriptors (`printf` through a statically initialised CRT
//! `stdout`) were bound to the original handle at process start-up and keep writing to it.
//!
//! The `SetStdHandle`, `GetHandleInformation` and `SetHandleInformation` calls are the only
//! `unsafe` code here (plain Win32 calls through `windows-sys`; no maintained crate wraps them
//! safely), each in its own block with the reason it is sound.
#![allow(unsafe_code)]

use std::fs::File;
use std::io;
use std::os::windows::io::{AsHandle, AsRawHandle, OwnedHandle, RawHandle};
use std::sync::atomic::{AtomicBool, Ordering};

use windows_sys::Win32::Foundation::{
    GetHandleInformation, HANDLE_FLAG_INHERIT, SetHandleInformation,
};
use windows_sys::Win32::System::Console::{
    STD_HANDLE, STD_INPUT_HANDLE, STD_OUTPUT_HANDLE, SetStdHandle,
};

/// Only one claim may exist at a time in a process.
static CLAIMED: AtomicBool = AtomicBool::new(false);

/// The wire's private handles, and what the standard handles were before the claim.
#[derive(Debug)]
pub(crate) struct StdioClaim {
    /// The read end of the wire (a duplicate of the former standard input).
    pub(crate) input: Option<OwnedHandle>,
    /// The write end of the wire (a duplicate of the former standard output).
    pub(crate) output: Option<OwnedHandle>,
    /// The original standard input and output handles (owned by the process's standard handle
    /// table, not by this claim), as addresses so the claim stays `Send` and `Sync`.
    saved_stdin: usize,
    saved_stdout: usize,
    /// Whether the originals were inheritable at claim time (`None`: unknown, left alone).
    stdin_inherit: Option<bool>,
    stdout_inherit: Option<bool>,
    /// `NUL`, the standard input while claimed.
    _nul: File,
}

impl StdioClaim {
    /// Moves the wire to private handles and points the standard output at stderr and the
    /// standard input at `NUL`. Fails when another claim is active.
    pub(crate) fn claim() -> io::Result<Self> {
        if CLAIMED.swap(true, Ordering::AcqRel) {
            return Err(io::Error::other(
                "the process's stdio is already serving a connection",
            ));
        }
        Self::claim_inner().inspect_err(|_| CLAIMED.store(false, Ordering::Release))
    }

    fn claim_inner() -> io::Result<Self> {
        // `try_clone_to_owned` duplicates with `bInheritHandle = FALSE`: the wire is never
        // inherited by a child process (the close-on-exec of the Unix path).
        let input = io::stdin().as_handle().try_clone_to_owned()?;
        let output = io::stdout().as_handle().try_clone_to_owned()?;
        let saved_stdin = io::stdin().as_raw_handle();
        let saved_stdout = io::stdout().as_raw_handle();
        let stderr = io::stderr().as_raw_handle();
        let nul = File::open("NUL")?;
        set_std_handle(STD_INPUT_HANDLE, nul.as_raw_handle())?;
        if let Err(e) = set_std_handle(STD_OUTPUT_HANDLE, stderr) {
            // Put stdin back before failing; `Self` is not built yet, so `Drop` will not.
            let _ = set_std_handle(STD_INPUT_HANDLE, saved_stdin);
            return Err(e);
        }
        let stdin_inherit = take_inherit(saved_stdin);
        let stdout_inherit = take_inherit(saved_stdout);
        Ok(Self {
            input: Some(input),
            output: Some(output),
            saved_stdin: saved_stdin.addr(),
            saved_stdout: saved_stdout.addr(),
            stdin_inherit,
            stdout_inherit,
            _nul: nul,
        })
    }
}

impl Drop for StdioClaim {
    fn drop(&mut self) {
        let saved_stdin = handle_at(self.saved_stdin);
        let saved_stdout = handle_at(self.saved_stdout);
        restore_inherit(saved_stdin, self.stdin_inherit, "stdin");
        restore_inherit(saved_stdout, self.stdout_inherit, "stdout");
        if let Err(e) = set_std_handle(STD_INPUT_HANDLE, saved_stdin) {
            tracing::warn!("could not restore stdin: {e}");
        }
        if let Err(e) = set_std_handle(STD_OUTPUT_HANDLE, saved_stdout) {
            tracing::warn!("could not restore stdout: {e}");
        }
        CLAIMED.store(false, Ordering::Release);
    }
}

/// A handle value back from the address it was kept as (handles are opaque values, not
/// pointers to memory this process reads).
fn handle_at(addr: usize) -> RawHandle {
    std::ptr::without_provenance_mut(addr)
}

/// Points one of the process's standard handles at `handle`.
fn set_std_handle(which: STD_HANDLE, handle: RawHandle) -> io::Result<()> {
    // SAFETY: `SetStdHandle` only stores the value in the process's standard handle table; it
    // neither dereferences nor takes ownership of `handle`, and every value passed here is the
    // current value of a standard handle or a handle the claim keeps open until it has put
    // the original back.
    let ok = unsafe { SetStdHandle(which, handle) };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Clears the inherit flag of `handle`; whether it was set (`None` when it cannot be read or
/// changed, for example on a console pseudo-handle, which is then left as it is).
fn take_inherit(handle: RawHandle) -> Option<bool> {
    let mut flags = 0u32;
    // SAFETY: `GetHandleInformation` writes one `u32` through the pointer, which points at a
    // live local; an invalid or null handle makes it fail, which is handled.
    let ok = unsafe { GetHandleInformation(handle, &raw mut flags) };
    if ok == 0 {
        return None;
    }
    let inherit = flags & HANDLE_FLAG_INHERIT != 0;
    if inherit && !set_inherit(handle, false) {
        return None;
    }
    Some(inherit)
}

/// Puts back the inherit flag `handle` had at claim time.
fn restore_inherit(handle: RawHandle, inherit: Option<bool>, name: &str) {
    if inherit == Some(true) && !set_inherit(handle, true) {
        tracing::warn!(
            "could not restore the inherit flag of {name}: {}",
            io::Error::last_os_error()
        );
    }
}

/// Sets or clears `HANDLE_FLAG_INHERIT`; whether that succeeded.
fn set_inherit(handle: RawHandle, inherit: bool) -> bool {
    let flags = if inherit { HANDLE_FLAG_INHERIT } else { 0 };
    // SAFETY: `SetHandleInformation` changes a flag of the handle's table entry; it touches
    // no memory of this process, and an invalid handle makes it fail, which is reported.
    unsafe { SetHandleInformation(handle, HANDLE_FLAG_INHERIT, flags) != 0 }
}
