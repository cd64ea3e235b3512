//! Streamable HTTP scenarios over a minimal hand-written HTTP/1.1 client: keep-alive
//! connections with `TCP_NODELAY`, `Content-Length` or chunked bodies, JSON or SSE answers.
//! Every connection is a task on a current-thread runtime: the driver's one, or for the
//! throughput loops one per driver thread (`--driver-threads`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::{Budget, Res, msg};

/// One keep-alive connection to `http://ADDR/mcp`, with the session it speaks for (if any).
pub(crate) struct Conn {
    stream: TcpStream,
    host: String,
    buf: Vec<u8>,
    pos: usize,
    req: Vec<u8>,
    session: Option<String>,
    next_id: u64,
    /// The era calls are made in (2026-07-28: no session, routing headers).
    pub(crate) era: msg::Era,
}

/// An HTTP answer: status, `Mcp-Session-Id`, whether it is SSE, and the (de-chunked) body.
pub(crate) struct Answer {
    status: u16,
    session: Option<String>,
    sse: bool,
    body: Vec<u8>,
}

impl Answer {
    /// The JSON-RPC message in the body: the body itself (JSON), or the SSE `data:` line that
    /// holds a response.
    fn payload(&self) -> &[u8] {
        if !self.sse {
            return &self.body;
        }
        self.body
            .split(|&b| b == b'\n')
            .filter_map(|l| l.strip_prefix(b"data:"))
            .find(|d| msg::is_response(d))
            .unwrap_or(&[])
    }
}

impl Conn {
    /// Connects with `TCP_NODELAY`.
    pub(crate) async fn connect(addr: &str) -> Res<Self> {
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        Ok(Self::with_stream(stream, addr))
    }

    fn with_stream(stream: TcpStream, addr: &str) -> Self {
        Self {
            stream,
            host: addr.to_owned(),
            buf: Vec::with_capacity(1 << 14),
            pos: 0,
            req: Vec::with_capacity(1024),
            session: None,
            next_id: 1,
            era: msg::Era::Handshake,
        }
    }

    /// Connects for `era`.
    pub(crate) async fn connect_in(addr: &str, era: msg::Era) -> Res<Self> {
        let mut c = Self::connect(addr).await?;
        c.era = era;
        Ok(c)
    }

    async fn request(&mut self, method: &str, body: &[u8], version_header: bool) -> Res<Answer> {
        self.request_routed(method, body, version_header, None)
            .await
    }

    /// A request; `route` (2026-07-28) adds `Mcp-Method` and, when named, `Mcp-Name`.
    async fn request_routed(
        &mut self,
        method: &str,
        body: &[u8],
        version_header: bool,
        route: Option<(&str, Option<&str>)>,
    ) -> Res<Answer> {
        use std::io::Write;
        self.req.clear();
        write!(
            self.req,
            "{method} /mcp HTTP/1.1\r\nHost: {}\r\nAccept: application/json, text/event-stream\r\n",
            self.host
        )?;
        if version_header {
            write!(self.req, "MCP-Protocol-Version: {}\r\n", self.era.version())?;
        }
        if let Some((rpc, name)) = route {
            write!(self.req, "Mcp-Method: {rpc}\r\n")?;
            if let Some(name) = name {
                write!(self.req, "Mcp-Name: {name}\r\n")?;
            }
        }
        if let Some(s) = &self.session {
            write!(self.req, "Mcp-Session-Id: {s}\r\n")?;
        }
        if !body.is_empty() {
            self.req
                .extend_from_slice(b"Content-Type: application/json\r\n");
        }
        write!(self.req, "Content-Length: {}\r\n\r\n", body.len())?;
        self.req.extend_from_slice(body);
        self.stream.write_all(&self.req).await?;
        self.read_answer().await
    }

    /// Reads more bytes into the buffer (compacting it first).
    async fn fill(&mut self) -> Res<()> {
        if self.pos > 0 {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        if self.stream.read_buf(&mut self.buf).await? == 0 {
            return Err("the server closed the connection".into());
        }
        Ok(())
    }

    /// Returns the offset (from `pos`) just past the next `delim`, reading as needed.
    async fn until(&mut self, delim: &[u8]) -> Res<usize> {
        loop {
            let hay = &self.buf[self.pos..];
            if let Some(i) = hay.windows(delim.len()).position(|w| w == delim) {
                return Ok(i + delim.len());
            }
            self.fill().await?;
        }
    }

    /// Makes `n` bytes available from `pos`.
    async fn need(&mut self, n: usize) -> Res<()> {
        while self.buf.len() - self.pos < n {
            self.fill().await?;
        }
        Ok(())
    }

    async fn read_answer(&mut self) -> Res<Answer> {
        let head_len = self.until(b"\r\n\r\n").await?;
        let head = std::str::from_utf8(&self.buf[self.pos..self.pos + head_len])?;
        let mut lines = head.split("\r\n");
        let status: u16 = lines
            .next()
            .and_then(|l| l.split(' ').nth(1))
            .and_then(|s| s.parse().ok())
            .ok_or("bad status line")?;
        let (mut length, mut chunked, mut sse, mut session) = (None, false, false, None);
        for line in lines {
            let Some((name, value)) = line.split_once(':') else {
                continue;
            };
            let value = value.trim();
            match name.to_ascii_lowercase().as_str() {
                "content-length" => length = value.parse::<usize>().ok(),
                "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
                "content-type" => sse = value.starts_with("text/event-stream"),
                "mcp-session-id" => session = Some(value.to_owned()),
                _ => {}
            }
        }
        self.pos += head_len;
        let mut body = Vec::new();
        if chunked {
            loop {
                let line_len = self.until(b"\r\n").await?;
                let size_text = std::str::from_utf8(&self.buf[self.pos..self.pos + line_len - 2])?;
                let size_hex = size_text.split(';').next().unwrap_or("").trim();
                let size = usize::from_str_radix(size_hex, 16)?;
                self.pos += line_len;
                if size == 0 {
                    // No trailers are expected: the final CRLF.
                    let end = self.until(b"\r\n").await?;
                    self.pos += end;
                    break;
                }
                self.need(size + 2).await?;
                body.extend_from_slice(&self.buf[self.pos..self.pos + size]);
                self.pos += size + 2;
            }
        } else if let Some(n) = length {
            self.need(n).await?;
            body.extend_from_slice(&self.buf[self.pos..self.pos + n]);
            self.pos += n;
        } else if !matches!(status, 202 | 204) {
            return Err(format!("status {status} without a length: not supported").into());
        }
        Ok(Answer {
            status,
            session,
            sse,
            body,
        })
    }

    /// Opens a session (handshake era): `initialize` then `notifications/initialized`. With
    /// `want_session`, the answer must carry `Mcp-Session-Id`; when it does, the connection sends
    /// it from then on.
    pub(crate) async fn open(&mut self, want_session: bool) -> Res<()> {
        self.session = None;
        if self.era == msg::Era::Modern {
            return Ok(()); // nothing to open at 2026-07-28
        }
        let answer = self
            .request("POST", msg::initialize(0).as_bytes(), false)
            .await?;
        if answer.status != 200 {
            return Err(format!("initialize: status {}", answer.status).into());
        }
        msg::check_initialize(answer.payload())?;
        if want_session && answer.session.is_none() {
            return Err("initialize: no Mcp-Session-Id".into());
        }
        // A session the server opens anyway (a stateful server being probed) is used.
        self.session = answer.session;
        let answer = self
            .request("POST", msg::INITIALIZED.as_bytes(), true)
            .await?;
        if !matches!(answer.status, 200 | 202 | 204) {
            return Err(format!(
                "notifications/initialized: status {}: {}",
                answer.status,
                String::from_utf8_lossy(&answer.body)
            )
            .into());
        }
        Ok(())
    }

    /// The session this connection speaks for.
    pub(crate) fn session(&self) -> Option<String> {
        self.session.clone()
    }

    /// Speaks for `session` from now on (another connection's, on another node).
    pub(crate) fn set_session(&mut self, session: Option<String>) {
        self.session = session;
    }

    /// Forgets the session (so the next `open` starts a new one), returning it.
    pub(crate) fn take_session(&mut self) -> Option<String> {
        self.session.take()
    }

    /// `DELETE /mcp` for `session`.
    pub(crate) async fn delete(&mut self, session: String) -> Res<()> {
        self.session = Some(session);
        let answer = self.request("DELETE", b"", true).await?;
        self.session = None;
        if answer.status >= 300 {
            return Err(format!("DELETE: status {}", answer.status).into());
        }
        Ok(())
    }

    /// A fresh request id.
    pub(crate) fn next_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id - 1
    }

    /// POSTs one JSON-RPC request (`rpc` and `name` route it at 2026-07-28).
    async fn rpc(&mut self, body: &[u8], rpc: &str, name: Option<&str>) -> Res<Answer> {
        let route = (self.era == msg::Era::Modern).then_some((rpc, name));
        self.request_routed("POST", body, true, route).await
    }

    /// POSTs one request and returns (time to the whole answer, the JSON-RPC answer); a
    /// non-200 status or an error answer is an error.
    pub(crate) async fn roundtrip(
        &mut self,
        body: &[u8],
        rpc: &str,
        name: Option<&str>,
    ) -> Res<(Duration, Vec<u8>)> {
        let t = Instant::now();
        let answer = self.rpc(body, rpc, name).await?;
        let took = t.elapsed();
        let payload = answer.payload();
        let head = &payload[..payload.len().min(200)];
        if answer.status != 200
            || payload.is_empty()
            || msg::contains(head, b"\"error\":{")
            || msg::contains(payload, b"\"isError\":true")
        {
            let body = String::from_utf8_lossy(&answer.body[..answer.body.len().min(300)]);
            return Err(format!("{rpc}: status {}: {body}", answer.status).into());
        }
        let payload = payload.to_vec();
        Ok((took, payload))
    }

    /// One `tools/call`; `full` parses and checks the answer, otherwise a byte scan. Returns the
    /// time from the write to the whole answer.
    pub(crate) async fn call(&mut self, full: bool) -> Res<Duration> {
        let id = self.next_id;
        self.next_id += 1;
        let t = Instant::now();
        let (tool, _) = msg::tool_of(id);
        let answer = self
            .rpc(
                msg::call_in(self.era, id).as_bytes(),
                "tools/call",
                Some(tool),
            )
            .await?;
        let took = t.elapsed();
        let payload = answer.payload();
        if answer.status != 200 {
            return Err(format!("tools/call: status {}", answer.status).into());
        }
        if full {
            msg::check_call(id, payload)?;
        } else if payload.is_empty() || msg::has_error(payload) {
            let body = String::from_utf8_lossy(&answer.body).into_owned();
            return Err(format!("tools/call: bad answer {body}").into());
        }
        Ok(took)
    }
}

/// Closed-loop throughput over `conns` connections (each with its own session when `stateful`;
/// otherwise `initialize` once, then calls without a session), split as evenly as possible
/// across `threads` driver threads, each with its own current-thread runtime: (calls answered,
/// elapsed). Every connection is set up (and makes one checked call) before the clock starts;
/// then all threads start together and share one call budget and one deadline, so the loop is
/// as closed as with one thread: `conns` requests outstanding in all.
pub(crate) fn throughput(
    addr: &str,
    conns: usize,
    threads: usize,
    stateful: bool,
    budget: Budget,
) -> Res<(u64, Duration)> {
    throughput_in(msg::Era::Handshake, addr, conns, threads, stateful, budget)
}

/// [`throughput`] in `era` (2026-07-28: no `initialize`, no session).
pub(crate) fn throughput_in(
    era: msg::Era,
    addr: &str,
    conns: usize,
    threads: usize,
    stateful: bool,
    budget: Budget,
) -> Res<(u64, Duration)> {
    use std::sync::mpsc;
    let threads = threads.clamp(1, conns.max(1));
    let done = Arc::new(AtomicU64::new(0));
    let (ready_tx, ready_rx) = mpsc::channel::<Res<()>>();
    let mut starts = Vec::with_capacity(threads);
    let mut handles = Vec::with_capacity(threads);
    for t in 0..threads {
        // Thread `t` drives `conns / threads` connections, one more for the first
        // `conns % threads`.
        let mine = conns / threads + usize::from(t < conns % threads);
        let (start_tx, start_rx) = mpsc::channel::<Option<Instant>>();
        starts.push(start_tx);
        let (addr, done, ready_tx) = (addr.to_owned(), done.clone(), ready_tx.clone());
        handles.push(std::thread::spawn(move || -> Res<()> {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            let setup = rt.block_on(async {
                let mut ready = Vec::with_capacity(mine);
                for _ in 0..mine {
                    let mut c = Conn::connect_in(&addr, era).await?;
                    c.open(stateful).await?;
                    c.call(true).await?;
                    ready.push(c);
                }
                Res::Ok(ready)
            });
            let ready = match setup {
                Ok(ready) => {
                    let _ = ready_tx.send(Ok(()));
                    ready
                }
                Err(e) => {
                    let _ = ready_tx.send(Err(e.to_string().into()));
                    return Ok(());
                }
            };
            // `None` (or a dropped sender): another thread failed its setup.
            let Ok(Some(start)) = start_rx.recv() else {
                return Ok(());
            };
            let deadline = start + budget.time;
            rt.block_on(async {
                let mut tasks = tokio::task::JoinSet::new();
                for mut c in ready {
                    let done = done.clone();
                    tasks.spawn(async move {
                        while Instant::now() < deadline
                            && done.fetch_add(1, Ordering::Relaxed) < budget.count
                        {
                            c.call(false).await?;
                        }
                        Res::Ok(())
                    });
                }
                while let Some(joined) = tasks.join_next().await {
                    joined??;
                }
                Res::Ok(())
            })
        }));
    }
    drop(ready_tx);
    let mut setup_error = None;
    for _ in 0..threads {
        match ready_rx.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => setup_error = setup_error.or(Some(e)),
            Err(_) => setup_error = setup_error.or(Some("a driver thread ended early".into())),
        }
    }
    let start = Instant::now();
    for tx in &starts {
        let _ = tx.send(setup_error.is_none().then_some(start));
    }
    let mut run_error = None;
    for h in handles {
        match h.join() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => run_error = run_error.or(Some(e)),
            Err(_) => run_error = run_error.or(Some("a driver thread panicked".into())),
        }
    }
    let elapsed = start.elapsed();
    if let Some(e) = setup_error.or(run_error) {
        return Err(e);
    }
    // Each task over-counts by one on its last check.
    let answered = done.load(Ordering::Relaxed).saturating_sub(conns as u64);
    Ok((answered.min(budget.count), elapsed))
}

/// One client, one session, sequential calls: latencies in microseconds after `warmup`.
pub(crate) async fn sequential(addr: &str, warmup: u64, budget: Budget) -> Res<Vec<f64>> {
    sequential_in(msg::Era::Handshake, addr, warmup, budget).await
}

/// [`sequential`] in `era`.
pub(crate) async fn sequential_in(
    era: msg::Era,
    addr: &str,
    warmup: u64,
    budget: Budget,
) -> Res<Vec<f64>> {
    let mut c = Conn::connect_in(addr, era).await?;
    c.open(true).await?;
    for _ in 0..warmup {
        c.call(true).await?;
    }
    let mut lat = Vec::with_capacity(budget.count.min(1 << 20) as usize);
    let start = Instant::now();
    while (lat.len() as u64) < budget.count && start.elapsed() < budget.time {
        lat.push(c.call(true).await?.as_secs_f64() * 1e6);
    }
    Ok(lat)
}

/// Opens sessions over `conns` connections until `budget` runs out: (session ids, elapsed).
/// A session counts once `notifications/initialized` is accepted.
pub(crate) async fn open_sessions(
    addr: &str,
    conns: usize,
    budget: Budget,
) -> Res<(Vec<String>, Duration)> {
    let mut ready = Vec::with_capacity(conns);
    for _ in 0..conns {
        ready.push(Conn::connect(addr).await?);
    }
    let claimed = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let deadline = start + budget.time;
    let mut tasks = tokio::task::JoinSet::new();
    for mut c in ready {
        let claimed = claimed.clone();
        tasks.spawn(async move {
            let mut ids = Vec::new();
            while Instant::now() < deadline
                && claimed.fetch_add(1, Ordering::Relaxed) < budget.count
            {
                c.open(true).await?;
                ids.extend(c.take_session());
            }
            Res::Ok((c, ids))
        });
    }
    let mut ids = Vec::new();
    let mut conns_back = Vec::new();
    while let Some(joined) = tasks.join_next().await {
        let (c, got) = joined??;
        ids.extend(got);
        conns_back.push(c);
    }
    let elapsed = start.elapsed();
    drop(conns_back);
    Ok((ids, elapsed))
}

/// Deletes sessions (untimed clean-up after [`open_sessions`]).
pub(crate) async fn delete_sessions(addr: &str, ids: Vec<String>) -> Res<()> {
    let mut c = Conn::connect(addr).await?;
    for id in ids {
        c.delete(id).await?;
    }
    Ok(())
}

/// Waits until a fresh connection can open a session and make a call (the server is ready).
pub(crate) async fn wait_ready(addr: &str, timeout: Duration) -> Res<()> {
    let start = Instant::now();
    loop {
        match Conn::connect(addr).await {
            Ok(mut c) => {
                c.open(false).await?;
                return Ok(());
            }
            Err(e) if start.elapsed() > timeout => return Err(e),
            Err(_) => tokio::time::sleep(Duration::from_micros(250)).await,
        }
    }
}

/// Cold start after a spawn at `t0`: connect (retrying every 100 µs with a blocking connect, as
/// tokio's timer has millisecond resolution) and `initialize` answered, in ms.
pub(crate) async fn cold_start(addr: &str, t0: Instant, timeout: Duration) -> Res<f64> {
    let std_stream = loop {
        match std::net::TcpStream::connect(addr) {
            Ok(s) => break s,
            Err(e) if t0.elapsed() > timeout => return Err(e.into()),
            Err(_) => std::thread::sleep(Duration::from_micros(100)),
        }
    };
    std_stream.set_nonblocking(true)?;
    let stream = TcpStream::from_std(std_stream)?;
    stream.set_nodelay(true)?;
    let mut c = Conn::with_stream(stream, addr);
    let answer = c
        .request("POST", msg::initialize(0).as_bytes(), false)
        .await?;
    let ms = t0.elapsed().as_secs_f64() * 1e3;
    msg::check_initialize(answer.payload())?;
    Ok(ms)
}
