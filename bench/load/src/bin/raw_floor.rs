//! `ferromcp-raw-floor`: the wire's floor for the load benchmark. A minimal, hand-written
//! newline-delimited JSON-RPC loop over stdio with no SDK and no async runtime: it answers
//! `initialize`, `ping` and `tools/call` of `add`, `echo` and `size` (the same answers as the servers
//! under test), ignores notifications, and answers anything else with -32601. Output is
//! flushed whenever no more input is buffered, so pipelined requests share writes.
//!
//! `ferromcp-raw-floor http ADDR` answers the same messages over HTTP/1.1 instead: a blocking
//! thread per connection, keep-alive, each POST answered with one `application/json` write
//! (`202` for a notification), a fixed `Mcp-Session-Id`. It is the floor of the HTTP rows: a
//! round trip over loopback with no HTTP library and no async runtime.
//!
//! Not a server anyone should use: it checks nothing beyond what it needs to answer. It shows
//! how close an SDK gets to the cost of reading, parsing and writing the messages themselves.

use std::borrow::Cow;
use std::io::{self, BufRead, BufWriter, Read, Write};
use std::net::{TcpListener, TcpStream};

use serde::Deserialize;
use serde_json::value::RawValue;

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Call<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow, default)]
    arguments: Option<Args<'a>>,
}

#[derive(Deserialize, Default)]
struct Args<'a> {
    #[serde(default)]
    a: Option<f64>,
    #[serde(default)]
    b: Option<f64>,
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Init<'a> {
    #[serde(borrow, rename = "protocolVersion")]
    protocol_version: Cow<'a, str>,
}

fn main() -> io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => stdio(),
        [mode, addr] if mode == "http" => http(addr),
        _ => Err(io::Error::other("usage: ferromcp-raw-floor [http ADDR]")),
    }
}

fn stdio() -> io::Result<()> {
    let mut input = io::BufReader::with_capacity(64 * 1024, io::stdin().lock());
    let mut out = BufWriter::with_capacity(64 * 1024, io::stdout().lock());
    let mut line = Vec::with_capacity(4096);
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        answer(&line, &mut out)?;
        if input.buffer().is_empty() {
            out.flush()?;
        }
    }
    out.flush()
}

fn answer(line: &[u8], out: &mut impl Write) -> io::Result<()> {
    let Ok(msg) = serde_json::from_slice::<Message<'_>>(line) else {
        return out.write_all(
            b"{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error\"}}\n",
        );
    };
    let (Some(id), Some(method)) = (msg.id, msg.method) else {
        return Ok(()); // a notification (or a response): nothing to answer
    };
    let id = id.get();
    let params = msg.params.map_or("{}", RawValue::get);
    match &*method {
        "tools/call" => match serde_json::from_str::<Call<'_>>(params) {
            Ok(call) => {
                let args = call.arguments.unwrap_or_default();
                let text = match (&*call.name, args) {
                    (
                        "add",
                        Args {
                            a: Some(a),
                            b: Some(b),
                            ..
                        },
                    ) => Cow::Owned((a + b).to_string()),
                    ("echo", Args { text: Some(t), .. }) => t,
                    ("size", Args { text: Some(t), .. }) => Cow::Owned(t.len().to_string()),
                    _ => return error(out, id, -32602, "unknown tool or bad arguments"),
                };
                write!(
                    out,
                    "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":"
                )?;
                serde_json::to_writer(&mut *out, &*text)?;
                out.write_all(b"}]}}\n")
            }
            Err(_) => error(out, id, -32602, "invalid params"),
        },
        "initialize" => {
            let version = serde_json::from_str::<Init<'_>>(params)
                .map(|i| i.protocol_version.into_owned())
                .unwrap_or_else(|_| "2025-11-25".to_owned());
            write!(
                out,
                "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"protocolVersion\":"
            )?;
            serde_json::to_writer(&mut *out, &version)?;
            out.write_all(
                b",\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"raw-floor\",\"version\":\"0.1.0\"}}}\n",
            )
        }
        "ping" => writeln!(out, "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{}}}}"),
        _ => error(out, id, -32601, "Method not found"),
    }
}

fn error(out: &mut impl Write, id: &str, code: i32, message: &str) -> io::Result<()> {
    writeln!(
        out,
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"error\":{{\"code\":{code},\"message\":\"{message}\"}}}}"
    )
}

fn http(addr: &str) -> io::Result<()> {
    let listener = TcpListener::bind(addr)?;
    for stream in listener.incoming() {
        let stream = stream?;
        std::thread::spawn(move || {
            let _ = serve_connection(stream);
        });
    }
    Ok(())
}

/// One keep-alive connection: requests in order, one write per answer.
fn serve_connection(mut stream: TcpStream) -> io::Result<()> {
    stream.set_nodelay(true)?;
    let mut buf = Vec::with_capacity(16 * 1024);
    let mut body = Vec::with_capacity(1024);
    let mut reply = Vec::with_capacity(1024);
    loop {
        // The head, up to the blank line.
        let head_end = loop {
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            if !fill(&mut stream, &mut buf)? {
                return Ok(());
            }
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
        let method = head.split(' ').next().unwrap_or_default().to_owned();
        let length = head
            .split("\r\n")
            .filter_map(|l| l.split_once(':'))
            .find(|(k, _)| k.trim().eq_ignore_ascii_case("content-length"))
            .and_then(|(_, v)| v.trim().parse::<usize>().ok())
            .unwrap_or(0);
        // The body: room made once (a big body is read straight into it, no copy through a
        // chunk), then filled.
        let mut filled = buf.len();
        if filled < head_end + length {
            buf.resize(head_end + length, 0);
            while filled < buf.len() {
                let n = stream.read(&mut buf[filled..])?;
                if n == 0 {
                    return Ok(());
                }
                filled += n;
            }
        }
        body.clear();
        if method == "POST" {
            answer(&buf[head_end..head_end + length], &mut body)?;
        }
        buf.drain(..head_end + length);
        reply.clear();
        match (method.as_str(), body.is_empty()) {
            ("POST", false) => {
                let json = body.strip_suffix(b"\n").unwrap_or(&body);
                write!(
                    reply,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: raw\r\nContent-Length: {}\r\n\r\n",
                    json.len()
                )?;
                reply.extend_from_slice(json);
            }
            ("POST", true) => {
                reply.extend_from_slice(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n")
            }
            ("DELETE", _) => {
                reply.extend_from_slice(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
            }
            _ => reply.extend_from_slice(
                b"HTTP/1.1 405 Method Not Allowed\r\nAllow: POST\r\nContent-Length: 0\r\n\r\n",
            ),
        }
        stream.write_all(&reply)?;
    }
}

/// Reads more bytes; `false` at the end of the stream.
fn fill(stream: &mut TcpStream, buf: &mut Vec<u8>) -> io::Result<bool> {
    let mut chunk = [0u8; 8192];
    let n = stream.read(&mut chunk)?;
    buf.extend_from_slice(&chunk[..n]);
    Ok(n > 0)
}
