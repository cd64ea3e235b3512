//! The JSON-RPC messages the driver sends (protocol 2025-11-25) and cheap checks on answers.
//!
//! Calls alternate between the two tools every server under test has: `add` (`a` = 2, `b` = 3;
//! answers "5") and `echo` (`text` = "hello"; answers "hello").

use crate::Res;

/// The protocol revision the driver speaks.
pub(crate) const PROTOCOL: &str = "2025-11-25";

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

/// `tools/call` with `id`: `add` for odd ids, `echo` for even ones; newline-terminated.
pub(crate) fn call(id: u64) -> String {
    if id % 2 == 1 {
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\
             \"params\":{{\"name\":\"add\",\"arguments\":{{\"a\":2,\"b\":3}}}}}}\n"
        )
    } else {
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\
             \"params\":{{\"name\":\"echo\",\"arguments\":{{\"text\":\"hello\"}}}}}}\n"
        )
    }
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
}
