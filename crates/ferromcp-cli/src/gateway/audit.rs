//! The gateway's audit layer: one line per `tools/call` on stderr (who called, which backend
//! and tool, the outcome and how long it took), after the per-principal rate limit.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Instant;

use ferromcp_dispatch::{BoxFuture, HandlerError};
use ferromcp_server::middleware::{McpRequest, McpResult, Middleware, Next};
use ferromcp_types::tables::ObjectMembers;
use serde_json::Value;

use super::{RATE_WINDOW, RateLimit};

/// Fixed one-minute windows of tool calls, per principal and in total. A principal is
/// tracked only once one of its calls is admitted, so at most `total` are tracked.
pub(super) struct Limiter(std::sync::Mutex<Window>);

struct Window {
    limits: RateLimit,
    started: Instant,
    total: u32,
    by_principal: std::collections::HashMap<String, u32>,
}

impl Limiter {
    pub(super) fn new(limits: RateLimit) -> Self {
        Self(std::sync::Mutex::new(Window {
            limits,
            started: Instant::now(),
            total: 0,
            by_principal: std::collections::HashMap::new(),
        }))
    }

    /// New limits (a config reload); the current window's counts stay.
    pub(super) fn set(&self, limits: RateLimit) {
        if let Ok(mut w) = self.0.lock() {
            w.limits = limits;
        }
    }

    /// Whether `who` may make one more call now (counting it if so).
    fn admit(&self, who: &str) -> bool {
        let Ok(mut w) = self.0.lock() else {
            return false;
        };
        if w.started.elapsed() >= RATE_WINDOW {
            w.started = Instant::now();
            w.total = 0;
            w.by_principal.clear();
        }
        let Window {
            limits,
            total,
            by_principal,
            ..
        } = &mut *w;
        if *total >= limits.total {
            return false;
        }
        let used = by_principal.get(who).copied().unwrap_or(0);
        if used >= limits.per_principal {
            return false;
        }
        match by_principal.get_mut(who) {
            Some(n) => *n = used + 1,
            None => {
                by_principal.insert(who.to_owned(), used + 1);
            }
        }
        *total += 1;
        true
    }
}

/// One audit line per `tools/call` (who called, which backend and tool, the outcome and how
/// long it took), after the per-principal rate limit.
pub(super) struct Audit(pub(super) Arc<Limiter>);

/// Who made a request: the authenticated principal (`subject/client`), else the HTTP
/// client's IP address, else the session, else `stdio`.
fn who(ctx: &ferromcp_server::RequestContext) -> Cow<'static, str> {
    if let Some(p) = ctx.principal() {
        return Cow::Owned(match &p.client_id {
            Some(client) => format!("{}/{client}", p.subject),
            None => p.subject.clone(),
        });
    }
    let peer = ctx
        .http_parts()
        .and_then(|parts| parts.extensions.get::<ferromcp_server::PeerAddr>());
    if let Some(peer) = peer {
        return Cow::Owned(peer.0.ip().to_string());
    }
    match ctx.connection().session_id() {
        Some(s) => Cow::Owned(format!("session:{s}")),
        None => Cow::Borrowed("stdio"),
    }
}

/// How a tool call ended, as its audit line says.
enum Outcome {
    RateLimited,
    ToolError,
    InputRequired,
    Ok,
    /// A JSON-RPC error with its code.
    Error(i32),
    /// Any other failure.
    Failed,
    /// Ended without an answer: the client cancelled it, or went away, before it finished.
    Cancelled,
}

impl Outcome {
    fn of(result: &McpResult) -> Self {
        // A result still the backend's text: its top level read in one walk, nothing built.
        if let Ok(body) = result
            && let Some(raw) = body.raw()
            && let Some(outcome) = Self::of_text(raw.get())
        {
            return outcome;
        }
        match result {
            Ok(r) if r.get("isError").as_deref() == Some(&Value::Bool(true)) => Self::ToolError,
            Ok(r)
                if r.get("resultType").as_deref().and_then(Value::as_str)
                    == Some("input_required") =>
            {
                Self::InputRequired
            }
            Ok(_) => Self::Ok,
            Err(HandlerError::Protocol(e)) => Self::Error(e.code.0),
            Err(_) => Self::Failed,
        }
    }
}

impl Outcome {
    /// [`Outcome::of`] a result's JSON text (checked: a `RawJson`), by one walk over its top
    /// level; `None` (read it as a value) when a member it looks at is spelled with an escape
    /// or the text is not an object.
    fn of_text(text: &str) -> Option<Self> {
        let (mut is_error, mut input_required) = (false, false);
        let mut members = ObjectMembers::new(text);
        for (key, value) in members.by_ref() {
            if matches!(key, Cow::Owned(_)) {
                return None;
            }
            match &*key {
                "isError" => is_error = value == "true",
                "resultType" if value.contains('\\') => return None,
                "resultType" => input_required = value == "\"input_required\"",
                _ => {}
            }
        }
        if members.is_broken() {
            return None;
        }
        Some(match (is_error, input_required) {
            (true, _) => Self::ToolError,
            (false, true) => Self::InputRequired,
            (false, false) => Self::Ok,
        })
    }
}

thread_local! {
    /// The audit line being written, reused from call to call.
    static LINE: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// Writes one audit line to stderr, in one write (queued, F40).
fn audit_line(who: &str, tool: &str, outcome: &Outcome, duration_ms: u128) {
    use std::fmt::Write as _;
    // Mount names contain no '_': the backend is the tool's prefix.
    let backend = tool.split_once('_').map_or("-", |(m, _)| m);
    // `try_with`: a call dropped while the thread's locals are being torn down writes no
    // line rather than panicking.
    let _ = LINE.try_with(|line| {
        let Ok(mut line) = line.try_borrow_mut() else {
            return;
        };
        let line = &mut *line;
        line.clear();
        // Pieces pushed as they are (the formatting machinery only for the two numbers).
        for piece in [
            "ferromcp gateway: audit who=",
            who,
            " backend=",
            backend,
            " tool=",
            tool,
            " outcome=",
        ] {
            line.push_str(piece);
        }
        match outcome {
            Outcome::RateLimited => line.push_str("rate-limited"),
            Outcome::ToolError => line.push_str("tool-error"),
            Outcome::InputRequired => line.push_str("input-required"),
            Outcome::Ok => line.push_str("ok"),
            Outcome::Error(code) => {
                let _ = write!(line, "error:{code}");
            }
            Outcome::Failed => line.push_str("error"),
            Outcome::Cancelled => line.push_str("cancelled"),
        }
        let ms = u64::try_from(duration_ms).unwrap_or(u64::MAX);
        let _ = writeln!(line, " duration_ms={ms}");
        crate::stderr_log::write(line.as_bytes());
    });
}

/// The `name` of `tools/call` params (read from their text, nothing else built).
#[derive(serde::Deserialize)]
struct Named {
    #[serde(default)]
    name: String,
}

/// The `name` of `tools/call` params, `""` when there is none (or it is not a string): read
/// by one walk over the top level of their text while it is the text received
/// ([`plain_name`]), else by serde.
fn tool_name(request: &McpRequest) -> String {
    if let Some(name) = request.raw_params().and_then(|raw| plain_name(raw.get())) {
        return name.to_owned();
    }
    request
        .params_as::<Named>()
        .map(|n| n.name)
        .unwrap_or_default()
}

/// The `name` member of params text (checked JSON) by one walk over its top level, `""` when
/// there is none; `None` (serde reads it) when a key or the name is spelled with an escape,
/// the name is not a string or is given twice, or the text is not an object.
fn plain_name(text: &str) -> Option<&str> {
    let mut name = None;
    let mut members = ObjectMembers::new(text);
    for (key, value) in members.by_ref() {
        let Cow::Borrowed(key) = key else {
            return None;
        };
        if key == "name" {
            let unquoted = value
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .filter(|v| !v.contains('\\'))?;
            if name.replace(unquoted).is_some() {
                return None;
            }
        }
    }
    (!members.is_broken()).then(|| name.unwrap_or_default())
}

impl Middleware for Audit {
    fn handle(&self, request: McpRequest, next: Next) -> BoxFuture<'static, McpResult> {
        if request.method != "tools/call" {
            return next.run(request);
        }
        let tool = tool_name(&request);
        let who = who(&request.ctx);
        let started = Instant::now();
        if !self.0.admit(&who) {
            audit_line(&who, &tool, &Outcome::RateLimited, 0);
            let mut refused = serde_json::Map::new();
            refused.insert(
                "content".to_owned(),
                serde_json::json!([{"type": "text", "text":
                    "rate limit: too many tool calls through this gateway; try again in a minute"}]),
            );
            refused.insert("isError".to_owned(), Value::Bool(true));
            return Box::pin(async move { Ok(refused.into()) });
        }
        let mut pending = Pending {
            who,
            tool,
            started,
            done: false,
        };
        Box::pin(async move {
            let result = next.run(request).await;
            pending.write(&Outcome::of(&result));
            result
        })
    }
}

/// A call's audit line while it is in flight: a call dropped before it ends (the client
/// cancelled it, the connection closed, the gateway stopped) is audited `cancelled` when its
/// future is dropped, so every admitted call has its line (C69).
struct Pending {
    who: Cow<'static, str>,
    tool: String,
    started: Instant,
    done: bool,
}

impl Pending {
    /// Writes the call's line, once.
    fn write(&mut self, outcome: &Outcome) {
        let ms = self.started.elapsed().as_millis();
        audit_line(&self.who, &self.tool, outcome, ms);
        self.done = true;
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if !self.done {
            self.write(&Outcome::Cancelled);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// C68: the audit line's tool name and outcome, read by one walk over the text of the
    /// params and of a backend's result, are what serde reads (the line's `tool=` and
    /// `outcome=`), or the walk leaves the text to serde: escapes, a repeated `name`, a
    /// name that is not a string, text that is not an object.
    #[test]
    fn c68_the_audit_walks_read_what_serde_reads() {
        let serde_name = |text: &str| {
            serde_json::from_str::<Named>(text)
                .map(|n| n.name)
                .unwrap_or_default()
        };
        for text in [
            r#"{"name":"b_add","arguments":{"name":"x","a":"\"}"}}"#,
            r#"{ "arguments" : [ {"name":1} ] , "name" : "b_echo" }"#,
            r#"{"arguments":{}}"#,
            "{}",
        ] {
            assert_eq!(
                plain_name(text).map(str::to_owned),
                Some(serde_name(text)),
                "{text}"
            );
        }
        for text in [
            r#"{"name":"b\u005fadd"}"#,
            r#"{"n\u0061me":"b_add"}"#,
            r#"{"name":"a","name":"b"}"#,
            r#"{"name":7}"#,
            "[1]",
        ] {
            assert_eq!(plain_name(text), None, "{text}");
        }
        let outcome = |text: &str| {
            let value: serde_json::Map<String, Value> = serde_json::from_str(text).unwrap();
            let result: McpResult = Ok(value.into());
            Outcome::of(&result)
        };
        let label = |o: Option<Outcome>| match o {
            Some(Outcome::ToolError) => "tool-error",
            Some(Outcome::InputRequired) => "input-required",
            Some(Outcome::Ok) => "ok",
            Some(_) => "other",
            None => "serde",
        };
        for text in [
            r#"{"content":[{"type":"text","text":"isError"}],"isError":true}"#,
            r#"{"content":[],"isError":false,"structuredContent":{"isError":true}}"#,
            r#"{"resultType":"input_required","inputRequests":{}}"#,
            r#"{"content":[{"resultType":"input_required"}],"resultType":"complete"}"#,
            r#"{ "isError" : true , "resultType" : "input_required" }"#,
        ] {
            assert_eq!(
                label(Outcome::of_text(text)),
                label(Some(outcome(text))),
                "{text}"
            );
        }
        assert_eq!(label(Outcome::of_text(r#"{"is\u0045rror":true}"#)), "serde");
    }
}
