//! Codecs shared by server and client transports.
//!
//! - Newline-delimited JSON for the stdio transport (MCP "Transports › stdio"):
//!   [`LineDecoder`], a sans-IO state machine (feed bytes, pull frames) with a bounded line
//!   length; [`LineReader`], its adapter over [`tokio::io::AsyncRead`] that reads many
//!   messages per syscall; [`LineWriter`], which batches a burst of messages into one write.
//! - Server-sent events for Streamable HTTP (WHATWG HTML §9.2 "Server-sent events"):
//!   [`SseParser`], a sans-IO event-stream parser with a bounded event size, and
//!   [`SseEvent::encode`], [`encode_message_event`] and [`encode_comment`], which write one
//!   frame into one buffer.
//!
//! The sans-IO halves serve stdio, child processes, HTTP bodies and the fuzz targets alike.

mod line;
mod line_io;
mod sse;
mod sse_write;

pub(crate) use line::find_either;
pub use line::{DEFAULT_MAX_LINE_LEN, LineDecoder, LineError, LineWriter, decode_line};
pub use line_io::{DEFAULT_READ_CAPACITY, LineReader};
pub use sse::{DEFAULT_MAX_EVENT_SIZE, SseError, SseEvent, SseParser};
pub use sse_write::{SseWriteError, encode_comment, encode_message_event};
