//! The wire's private descriptors as an async reader and writer, chosen by what they are.
//!
//! See the module documentation of [`super`] for the choice and why.

use std::fs::File;
use std::io::{self, Read};
#[cfg(unix)]
use std::os::fd::{AsFd, OwnedFd};
#[cfg(unix)]
use std::os::unix::fs::FileTypeExt;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
#[cfg(unix)]
use tokio::net::unix::pipe;
use tokio::sync::mpsc;

use super::StdioClaim;

/// How many bytes the fallback reader thread reads per call.
const CHUNK: usize = 64 * 1024;

/// How many chunks may wait between the fallback reader thread and the transport.
const CHUNK_QUEUE: usize = 4;

type BoxRead = Box<dyn AsyncRead + Unpin + Send>;
type BoxWrite = Box<dyn AsyncWrite + Unpin + Send>;

/// One half of the wire, keeping the stdio claim alive for as long as it lives.
///
/// Shutting it down only flushes: the open file behind the wire is still fd 1's once the claim
/// is dropped, so the write side of a socket must not be shut down (that would break the
/// restored stdout as well), and the peer sees end of file when the process lets go of fd 1.
pub(super) struct Claimed<T> {
    inner: T,
    _claim: Arc<StdioClaim>,
}

/// The read half of the wire.
pub(super) fn reader(file: File, claim: Arc<StdioClaim>) -> io::Result<Claimed<BoxRead>> {
    Ok(Claimed {
        inner: read_half(file)?,
        _claim: claim,
    })
}

/// The write half of the wire.
pub(super) fn writer(file: File, claim: Arc<StdioClaim>) -> io::Result<Claimed<BoxWrite>> {
    Ok(Claimed {
        inner: write_half(file)?,
        _claim: claim,
    })
}

#[cfg(unix)]
fn read_half(file: File) -> io::Result<BoxRead> {
    let kind = file.metadata()?.file_type();
    let pollable = !shares_open_file_with_stderr(&file);
    Ok(if pollable && kind.is_fifo() {
        tracing::debug!("stdio: reading a non-blocking pipe");
        Box::new(pipe::Receiver::from_file(file)?)
    } else if pollable && kind.is_socket() {
        tracing::debug!("stdio: reading a non-blocking socket");
        Box::new(socket(file)?)
    } else {
        tracing::debug!("stdio: reading on a dedicated thread");
        Box::new(spawn_reader_thread(file)?)
    })
}

#[cfg(unix)]
fn write_half(file: File) -> io::Result<BoxWrite> {
    let kind = file.metadata()?.file_type();
    let pollable = !shares_open_file_with_stderr(&file);
    Ok(if pollable && kind.is_fifo() {
        tracing::debug!("stdio: writing a non-blocking pipe");
        Box::new(pipe::Sender::from_file(file)?)
    } else if pollable && kind.is_socket() {
        tracing::debug!("stdio: writing a non-blocking socket");
        Box::new(socket(file)?)
    } else {
        tracing::debug!("stdio: writing through the blocking pool, one burst per write");
        Box::new(tokio::fs::File::from_std(file))
    })
}

/// Windows: the anonymous pipes a parent hands its child have no overlapped I/O, so nothing can
/// poll them: every handle is read on a dedicated thread (`ReadFile`, raw bytes, never the
/// console API).
#[cfg(windows)]
fn read_half(file: File) -> io::Result<BoxRead> {
    tracing::debug!("stdio: reading on a dedicated thread");
    Ok(Box::new(spawn_reader_thread(file)?))
}

/// Windows: written through the blocking pool, one burst per write (`WriteFile`, raw bytes,
/// whatever the console code page; no text-mode newline translation).
#[cfg(windows)]
fn write_half(file: File) -> io::Result<BoxWrite> {
    tracing::debug!("stdio: writing through the blocking pool, one burst per write");
    Ok(Box::new(tokio::fs::File::from_std(file)))
}

/// Whether `file` is (or may be) the open file behind stderr, so that making it non-blocking
/// would make stderr non-blocking too.
#[cfg(unix)]
fn shares_open_file_with_stderr(file: &File) -> bool {
    let (Ok(wire), Ok(stderr)) = (
        rustix::fs::fstat(file),
        rustix::fs::fstat(io::stderr().as_fd()),
    ) else {
        return true;
    };
    wire.st_dev == stderr.st_dev && wire.st_ino == stderr.st_ino
}

/// A socket driven by the reactor. Reads and writes on a stream socket are the same calls
/// whatever its address family, so a Unix stream wraps any of them.
#[cfg(unix)]
fn socket(file: File) -> io::Result<tokio::net::UnixStream> {
    let stream = std::os::unix::net::UnixStream::from(OwnedFd::from(file));
    stream.set_nonblocking(true)?;
    tokio::net::UnixStream::from_std(stream)
}

/// Starts a thread that reads `file` in large chunks and hands them over through a small
/// channel. The thread ends at end of file, on a read error (passed on), or once the reader
/// is gone and a read completes.
fn spawn_reader_thread(mut file: File) -> io::Result<ChunkReader> {
    let (tx, rx) = mpsc::channel(CHUNK_QUEUE);
    std::thread::Builder::new()
        .name("ferromcp-stdin".into())
        .spawn(move || {
            let mut buf = vec![0; CHUNK];
            loop {
                let chunk = match file.read(&mut buf) {
                    Ok(0) => return,
                    Ok(n) => Ok(buf[..n].to_vec()),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => Err(e),
                };
                let failed = chunk.is_err();
                if tx.blocking_send(chunk).is_err() || failed {
                    return;
                }
            }
        })?;
    Ok(ChunkReader {
        rx,
        chunk: Vec::new(),
        pos: 0,
    })
}

/// An [`AsyncRead`] over chunks of bytes arriving on a channel; it ends when the channel
/// closes.
struct ChunkReader {
    rx: mpsc::Receiver<io::Result<Vec<u8>>>,
    chunk: Vec<u8>,
    pos: usize,
}

impl AsyncRead for ChunkReader {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        while this.pos == this.chunk.len() {
            match this.rx.poll_recv(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(None) => return Poll::Ready(Ok(())),
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Err(e)),
                Poll::Ready(Some(Ok(chunk))) => {
                    this.chunk = chunk;
                    this.pos = 0;
                }
            }
        }
        let n = buf.remaining().min(this.chunk.len() - this.pos);
        buf.put_slice(&this.chunk[this.pos..this.pos + n]);
        this.pos += n;
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Claimed<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Claimed<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}
