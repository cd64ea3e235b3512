//! The JSON-RPC messages the driver sends (protocol 2025-11-25, and 2026-07-28 for the
//! modern-era rows) and cheap checks on answers.
//!
//! Calls alternate between the two tools every server under test has: `add` (`a` = 2, `b` = 3;
//! answers "5") and `echo` (`text` = "hello"; answers "hello"). The big-payload rows call
//! `echo` and `size` with long texts ([`call_tool`]).

use crate::Res;

/// The protocol revision the driver speaks.
pub(crate) const PROTOCOL: &str = "2025-11-25";

/// The modern revision: no handshake, every request carries its envelope in `params._meta`
/// (and, over HTTP, the routing headers).
pub(crate) const MODERN: &str = "2026-07-28";

/// Which era the driver speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Era {
    /// 2025-11-25: `initialize` + `notifications/initialized`, then calls (HTTP: a session).
    Handshake,
    /// 2026-07-28: no handshake, no session; the envelope in every request.
    Modern,
}

impl Era {
    /// The version the `MCP-Protocol-Version` header carries.
    pub(crate) fn version(self) -> &'static str {
        match self {
            Era::Handshake => PROTOCOL,
            Era::Modern => MODERN,
        }
    }
}

/// The request envelope of the modern era, as the tail of a params object (with its comma).
const MODERN_META: &str = ",\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\
\"io.modelcontextprotocol/clientCapabilities\":{}}";

/// The tool call `id` makes (`add` for odd ids, `echo` for even ones) and its arguments.
pub(crate) fn tool_of(id: u64) -> (&'static str, &'static str) {
    if id % 2 == 1 {
        ("add", "{\"a\":2,\"b\":3}")
    } else {
        ("echo", "{\"text\":\"hello\"}")
    }
}

/// `tools/call` of `tool` with `args` (a JSON object's text) in `era`; newline-terminated.
pub(crate) fn call_tool(era: Era, id: u64, tool: &str, args: &str) -> String {
    let meta = if era == Era::Modern { MODERN_META } else { "" };
    let mut s = String::with_capacity(args.len() + tool.len() + 200);
    s.push_str("{\"jsonrpc\":\"2.0\",\"id\":");
    s.push_str(&id.to_string());
    s.push_str(",\"method\":\"tools/call\",\"params\":{\"name\":\"");
    s.push_str(tool);
    s.push_str("\",\"arguments\":");
    s.push_str(args);
    s.push_str(meta);
    s.push_str("}}\n");
    s
}

/// The `tools/call` request for call number `id` (its tool and arguments as `tool_of` picks
/// them) in `era`.
pub(crate) fn call_in(era: Era, id: u64) -> String {
    let (tool, args) = tool_of(id);
    call_tool(era, id, tool, args)
}

/// `{"text":"xxx…"}` with `len` bytes of text (nothing to escape).
pub(crate) fn text_args(len: usize) -> String {
    let mut s = String::with_capacity(len + 12);
    s.push_str("{\"text\":\"");
    s.extend(std::iter::repeat_n('x', len));
    s.push_str("\"}");
    s
}

/// `tools/list` in `era`, from `cursor` (a JSON string's text) when given; newline-terminated.
pub(crate) fn tools_list(era: Era, id: u64, cursor: Option<&str>) -> String {
    let mut params = String::new();
    if let Some(c) = cursor {
        params.push_str(",\"cursor\":");
        params.push_str(c);
    }
    if era == Era::Modern {
        params.push_str(MODERN_META);
    }
    let params = params.strip_prefix(',').unwrap_or(&params);
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/list\",\"params\":{{{params}}}}}\n"
    )
}

/// The `nextCursor` of a `tools/list` answer, as JSON text (`None`: the last page), and how many
/// tools the page held.
pub(crate) fn list_page(answer: &[u8]) -> Res<(Option<String>, usize)> {
    let v: serde_json::Value = serde_json::from_slice(answer)?;
    let result = v.get("result").ok_or_else(|| {
        format!(
            "unexpected tools/list answer: {}",
            String::from_utf8_lossy(&answer[..answer.len().min(300)])
        )
    })?;
    let tools = result
        .get("tools")
        .and_then(serde_json::Value::as_array)
        .map_or(0, Vec::len);
    let cursor = result
        .get("nextCursor")
        .filter(|c| !c.is_null())
        .map(serde_json::Value::to_string);
    Ok((cursor, tools))
}

/// `notifications/initialized`, newline-terminated.
pub(crate) const INITIALIZED: &str =
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";

/// `initialize` with `id`, newline-terminated.
pub(crate) fn initialize(id: u64) -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"initialize\",\"params\":{{\
         \"protocolVersion\":\"{PROTOCOL}\",\"capabilities\":{{}},\
         \"clientInfo\":{{\"name\":\"ferromcp-bench\",\"version\":\"0.1.0\"}}}}}}\n"
    )
}

/// `tools/call` with `id` (2025-11-25): `add` for odd ids, `echo` for even ones;
/// newline-terminated.
#[cfg(test)]
fn call(id: u64) -> String {
    call_in(Era::Handshake, id)
}

/// Whether a line is a JSON-RPC response (has `result` or `error`), not a notification or a
/// server request.
pub(crate) fn is_response(line: &[u8]) -> bool {
    contains(line, b"\"result\"") || contains(line, b"\"error\"")
}

/// Whether bytes hold an error response or an `isError` tool result.
pub(crate) fn has_error(bytes: &[u8]) -> bool {
    contains(bytes, b"\"error\":{") || contains(bytes, b"\"isError\":true")
}

/// Byte-substring search (short needles; the driver's hot path stays cheap).
pub(crate) fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// Checks a full answer to `initialize` (parsed): a result with our protocol version.
pub(crate) fn check_initialize(answer: &[u8]) -> Res<()> {
    let v: serde_json::Value = serde_json::from_slice(answer)?;
    match v
        .pointer("/result/protocolVersion")
        .and_then(|p| p.as_str())
    {
        Some(PROTOCOL) => Ok(()),
        _ => Err(format!(
            "unexpected initialize answer: {}",
            String::from_utf8_lossy(answer)
        )
        .into()),
    }
}

/// Checks the answer to call `id` (parsed): the right id and the tool's text.
pub(crate) fn check_call(id: u64, answer: &[u8]) -> Res<()> {
    let v: serde_json::Value = serde_json::from_slice(answer)?;
    let text = v.pointer("/result/content/0/text").and_then(|t| t.as_str());
    let want = if id % 2 == 1 { "5" } else { "hello" };
    if v.get("id").and_then(serde_json::Value::as_u64) == Some(id) && text == Some(want) {
        Ok(())
    } else {
        Err(format!(
            "unexpected answer to call {id}: {}",
            String::from_utf8_lossy(answer)
        )
        .into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_alternate_and_answers_are_checked() {
        assert!(call(1).contains("\"add\"") && call(2).contains("\"echo\""));
        for id in [1, 2] {
            let v: serde_json::Value = serde_json::from_str(&call(id)).unwrap();
            assert_eq!(v["id"], id);
        }
        let ok = br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"5"}]}}"#;
        assert!(check_call(1, ok).is_ok());
        assert!(check_call(2, ok).is_err());
        assert!(is_response(ok) && !has_error(ok));
        let bad = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"x"}}"#;
        assert!(has_error(bad) && check_call(1, bad).is_err());
        assert!(!is_response(INITIALIZED.as_bytes()));
        let init = br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25"}}"#;
        assert!(check_initialize(init).is_ok());
    }

    /// Issue 19: the modern-era requests carry the envelope; list pages are followed.
    #[test]
    fn modern_calls_carry_the_envelope_and_pages_are_followed() {
        let v: serde_json::Value = serde_json::from_str(&call_in(Era::Modern, 2)).unwrap();
        assert_eq!(v["params"]["name"], "echo");
        assert_eq!(
            v["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
            MODERN
        );
        assert!(v["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"].is_object());
        let v: serde_json::Value =
            serde_json::from_str(&call_tool(Era::Handshake, 3, "size", &text_args(5))).unwrap();
        assert_eq!(v["params"]["arguments"]["text"], "xxxxx");
        assert!(v["params"].get("_meta").is_none());
        for era in [Era::Handshake, Era::Modern] {
            for cursor in [None, Some("\"c2\"")] {
                let v: serde_json::Value =
                    serde_json::from_str(&tools_list(era, 4, cursor)).unwrap();
                assert_eq!(v["params"].get("cursor").is_some(), cursor.is_some());
            }
        }
        let page = br#"{"jsonrpc":"2.0","id":4,"result":{"tools":[{},{}],"nextCursor":"c2"}}"#;
        assert_eq!(list_page(page).unwrap(), (Some("\"c2\"".to_owned()), 2));
        let last = br#"{"jsonrpc":"2.0","id":4,"result":{"tools":[{}]}}"#;
        assert_eq!(list_page(last).unwrap(), (None, 1));
    }
}
