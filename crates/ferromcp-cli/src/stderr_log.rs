//! The CLI's stderr writer for log lines (and the gateway's status and audit lines): a line
//! never blocks the thread that logs it (F40).
//!
//! A parent that pipes our stderr and never reads it fills the pipe (64 KiB on Linux); a
//! direct write then blocks, and with it the handler or the runtime thread that logged, so
//! the server stops answering. Here a line is queued and written by a dedicated thread. The
//! queue holds at most `FERROMCP_LOG_BUFFER` bytes ([`DEFAULT_BUFFER`] when unset); a line
//! that does not fit is dropped and counted, and once the writer gets through again it
//! writes `ferromcp: N log lines dropped` before the next line.
//!
//! A line that cannot be written at all (stderr closed by the parent, F35) is dropped
//! silently: there is nowhere to say so. At exit, [`flush`] waits for the queued lines to be
//! written, at most `FERROMCP_LOG_FLUSH_MS` milliseconds ([`DEFAULT_FLUSH_WAIT`] when unset),
//! so that a stuck stderr cannot keep the process from exiting.
//!
//! `FERROMCP_LOG_BUFFER=0` means no queue: each line is written by the thread that logs it,
//! in order with anything else written to stderr, and a stderr nobody reads then blocks that
//! thread (F40 given up, deliberately). A bound of 0 bytes would otherwise drop every line.
//!
//! Other one-off messages written while the queue may hold lines (a server's "serving at"
//! banner, a connection that ended, a fatal error at the end of a command) go through it too
//! ([`status!`], [`message`]), so they come out in order with the log lines, never block, and
//! never panic on a closed stderr as `eprintln!` does (F35).

use std::io::{self, Write};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

/// The default bound on the bytes of log lines waiting to be written (`FERROMCP_LOG_BUFFER`).
pub(crate) const DEFAULT_BUFFER: usize = 1024 * 1024;
/// The default longest wait at exit for queued lines to be written (`FERROMCP_LOG_FLUSH_MS`).
pub(crate) const DEFAULT_FLUSH_WAIT: Duration = Duration::from_secs(1);

enum Message {
    Line(Vec<u8>),
    Flush(mpsc::SyncSender<()>),
}

struct Queue {
    tx: mpsc::Sender<Message>,
    /// Bytes queued and not yet written.
    queued: AtomicUsize,
    /// Lines dropped since the writer last reported them.
    dropped: AtomicU64,
    limit: usize,
    /// `FERROMCP_LOG_BUFFER=0`: no queue, no writer thread; each line is written directly.
    direct: bool,
}

static QUEUE: OnceLock<Queue> = OnceLock::new();

/// A byte count or a millisecond count from the environment; unset, empty or not a number:
/// `default`, and the complaint to log once the writer runs.
fn setting(name: &str, default: u64) -> (u64, Option<String>) {
    match std::env::var(name) {
        Ok(v) if !v.trim().is_empty() => match v.trim().parse::<u64>() {
            Ok(n) => (n, None),
            Err(_) => (
                default,
                Some(format!(
                    "ferromcp: {name}={v:?} is not a whole number; using {default}\n"
                )),
            ),
        },
        _ => (default, None),
    }
}

fn queue() -> &'static Queue {
    QUEUE.get_or_init(|| {
        let (limit, complaint) = setting("FERROMCP_LOG_BUFFER", DEFAULT_BUFFER as u64);
        let (tx, rx) = mpsc::channel();
        let q = Queue {
            tx,
            queued: AtomicUsize::new(0),
            dropped: AtomicU64::new(0),
            limit: usize::try_from(limit).unwrap_or(usize::MAX),
            direct: limit == 0,
        };
        if q.direct {
            // Nothing to write for: the receiver goes, and `flush` has nothing to wait for.
            return q;
        }
        // Without its thread the receiver is gone: every line is then dropped, never blocks.
        let _ = std::thread::Builder::new()
            .name("ferromcp-stderr".to_owned())
            .spawn(move || write_lines(&rx));
        if let Some(c) = complaint {
            let _ = q.tx.send(Message::Line(c.into_bytes()));
        }
        q
    })
}

/// The writer thread: each line in one write; a failed write drops the line.
fn write_lines(rx: &mpsc::Receiver<Message>) {
    let queue = || QUEUE.get();
    let report = |err: &mut io::StderrLock<'_>| {
        let n = queue().map_or(0, |q| q.dropped.swap(0, Ordering::AcqRel));
        if n > 0 {
            let _ = writeln!(
                err,
                "ferromcp: {n} log lines dropped (stderr was not read fast enough)"
            );
        }
    };
    for message in rx {
        let mut err = io::stderr().lock();
        match message {
            Message::Line(line) => {
                report(&mut err);
                let _ = err.write_all(&line);
                if let Some(q) = queue() {
                    q.queued.fetch_sub(line.len(), Ordering::AcqRel);
                }
            }
            Message::Flush(done) => {
                report(&mut err);
                let _ = done.send(());
            }
        }
    }
}

/// Queues `line` (one or more whole lines); drops and counts it when the queue is full.
fn submit(line: Vec<u8>) {
    let q = queue();
    if q.direct {
        // A failed write (stderr closed) drops the line, as the writer thread does.
        let _ = io::stderr().lock().write_all(&line);
        return;
    }
    let len = line.len();
    let before = q.queued.fetch_add(len, Ordering::AcqRel);
    if before.saturating_add(len) > q.limit {
        q.queued.fetch_sub(len, Ordering::AcqRel);
        q.dropped.fetch_add(1, Ordering::AcqRel);
        return;
    }
    if q.tx.send(Message::Line(line)).is_err() {
        q.queued.fetch_sub(len, Ordering::AcqRel);
    }
}

/// Waits until the lines queued so far are written (and any drop count reported), at most
/// `FERROMCP_LOG_FLUSH_MS` ([`DEFAULT_FLUSH_WAIT`]). Nothing to do when nothing was logged.
pub(crate) fn flush() {
    let Some(q) = QUEUE.get() else {
        return;
    };
    let default = u64::try_from(DEFAULT_FLUSH_WAIT.as_millis()).unwrap_or(u64::MAX);
    let (wait, complaint) = setting("FERROMCP_LOG_FLUSH_MS", default);
    if let Some(c) = complaint {
        submit(c.into_bytes());
    }
    let (done, finished) = mpsc::sync_channel(1);
    if q.tx.send(Message::Flush(done)).is_ok() {
        let _ = finished.recv_timeout(Duration::from_millis(wait));
    }
}

/// Queues `bytes` (whole lines) as one write.
pub(crate) fn write(bytes: &[u8]) {
    if !bytes.is_empty() {
        submit(bytes.to_vec());
    }
}

/// Writes `text` (whole lines) to stderr: through the queue once it exists (some line was
/// logged, so this one comes after it), else directly; either way a closed stderr drops it.
/// For a message that may come before any logging (a command's fatal error).
pub(crate) fn message(text: &str) {
    if QUEUE.get().is_some() {
        write(text.as_bytes());
    } else {
        let _ = io::stderr().lock().write_all(text.as_bytes());
    }
}

/// `writeln!` to stderr through the queue ([`line`]): for messages a command writes while it
/// logs (after `init_logging`), so they keep their order with the log lines, never block on
/// a stderr nobody reads, and are dropped, not a panic, when stderr is closed.
macro_rules! status {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!($crate::stderr_log::line(), $($arg)*);
    }};
}
pub(crate) use status;

/// One line (or a few) being written: collected, then queued as a whole when dropped.
pub(crate) struct Line(Vec<u8>);

/// A [`Line`] to `write!` into; it is queued when it goes out of scope.
pub(crate) fn line() -> Line {
    Line(Vec::new())
}

impl Write for Line {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for Line {
    fn drop(&mut self) {
        if !self.0.is_empty() {
            submit(std::mem::take(&mut self.0));
        }
    }
}

/// The `tracing` writer: each event's line through the queue.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct StderrLog;

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for StderrLog {
    type Writer = Line;

    fn make_writer(&'a self) -> Line {
        line()
    }
}
