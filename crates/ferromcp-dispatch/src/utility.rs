//! The JSON-RPC utilities the dispatchers implement: cancellation, progress, and `_meta`.

use ferromcp_jsonrpc::{Payload, RawJson, RequestId};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::codec::find_either;
use crate::options::Progress;

/// The cancellation notification's method.
pub const CANCELLED: &str = "notifications/cancelled";
/// The progress notification's method.
pub const PROGRESS: &str = "notifications/progress";

/// `params` for `notifications/cancelled`.
pub(crate) fn cancelled_params(id: &RequestId, reason: &str) -> Payload {
    let mut map = Map::with_capacity(2);
    map.insert("requestId".into(), id_value(id));
    map.insert("reason".into(), reason.into());
    Payload::Value(Value::Object(map))
}

/// `params` for `notifications/progress`.
pub(crate) fn progress_params(
    token: &RequestId,
    progress: f64,
    total: Option<f64>,
    message: Option<&str>,
) -> Payload {
    let mut map = Map::with_capacity(4);
    map.insert("progressToken".into(), id_value(token));
    map.insert("progress".into(), progress.into());
    if let Some(total) = total {
        map.insert("total".into(), total.into());
    }
    if let Some(message) = message {
        map.insert("message".into(), message.into());
    }
    Payload::Value(Value::Object(map))
}

fn id_value(id: &RequestId) -> Value {
    match id {
        RequestId::Number(n) => (*n).into(),
        RequestId::String(s) => Value::String(s.to_string()),
    }
}

/// The request id a `notifications/cancelled` names.
pub(crate) fn parse_cancelled(params: Option<&Payload>) -> Option<RequestId> {
    #[derive(Deserialize)]
    struct P {
        #[serde(rename = "requestId")]
        request_id: RequestId,
    }
    params?.parse::<P>().ok().map(|p| p.request_id)
}

/// The token and report a `notifications/progress` carries; extra fields of the wrong type
/// are ignored.
pub(crate) fn parse_progress(params: Option<&Payload>) -> Option<(RequestId, Progress)> {
    #[derive(Deserialize)]
    struct P {
        #[serde(rename = "progressToken")]
        token: RequestId,
        progress: f64,
        #[serde(default)]
        total: Option<Value>,
        #[serde(default)]
        message: Option<Value>,
    }
    let p = params?.parse::<P>().ok()?;
    let total = p.total.as_ref().and_then(Value::as_f64);
    let message = match p.message {
        Some(Value::String(s)) => Some(s),
        _ => None,
    };
    Some((p.token, Progress::new(p.progress, total, message)))
}

/// `params._meta.progressToken` of an inbound request, when it is a string or an integer.
pub(crate) fn progress_token_of(params: Option<&Payload>) -> Option<RequestId> {
    #[derive(Deserialize)]
    struct Meta {
        #[serde(rename = "progressToken", default)]
        token: Option<Value>,
    }
    #[derive(Deserialize)]
    struct P {
        #[serde(rename = "_meta", default)]
        meta: Option<Meta>,
    }
    let token = match params? {
        Payload::Value(v) => v.get("_meta")?.get("progressToken")?.clone(),
        // Most requests carry no `_meta`: skip the parse when the text cannot hold one (the
        // key may only hide behind a `\u` escape).
        Payload::Raw(raw) if !may_hold_meta(raw.get().as_bytes()) => return None,
        // Nor a token: without a `\u` escape (checked above: none, or `may_hold_meta` already
        // said yes) the key can only be spelled as it is (2026-07-28 requests all carry `_meta`,
        // few a token).
        Payload::Raw(raw) if !may_hold_token(raw.get()) => return None,
        raw @ Payload::Raw(_) => raw.parse::<P>().ok()?.meta?.token?,
    };
    serde_json::from_value(token).ok()
}

/// Whether raw JSON text holds `_meta` or a `\u` escape (behind which the key may hide), in one
/// word-at-a-time pass over the text.
fn may_hold_meta(text: &[u8]) -> bool {
    let mut rest = text;
    while let Some(i) = find_either(rest, b'_', b'\\') {
        let tail = &rest[i..];
        if tail.starts_with(b"_meta") || tail.starts_with(b"\\u") {
            return true;
        }
        rest = &tail[1..];
    }
    false
}

/// Whether raw JSON text may hold the key `progressToken`: spelled out, or behind an escape
/// (only `\u` can spell a letter; any backslash counts, in one word-at-a-time pass).
fn may_hold_token(text: &str) -> bool {
    text.as_bytes().contains(&b'\\') || text.contains("progressToken")
}

/// The params a request goes out with, as ferromcp's dispatchers send them: an object
/// carrying `_meta` with the progress token first (when the request asks for progress: its
/// id) and then the members of [`CallOptions::meta`](crate::CallOptions::meta); params that
/// are not an object go as they are. An [`Outbound`](crate::Outbound) implemented outside
/// this crate calls it so that `CallOptions::meta` (an MCP client's 2026-07-28 envelope, for
/// one) and the token reach the peer: a dispatcher that drops them sends requests a
/// 2026-07-28 server refuses.
///
/// ```
/// use ferromcp_dispatch::utility::params_with_meta;
/// use ferromcp_jsonrpc::{Payload, RawJson, RequestId};
///
/// let params = Payload::Raw(RawJson::from_string(r#"{"name":"add"}"#.into()).unwrap());
/// let meta = RawJson::from_string(r#"{"k":1}"#.into()).unwrap();
/// let sent = params_with_meta(Some(params), Some(&RequestId::Number(7)), Some(&meta));
/// let sent: serde_json::Value = sent.parse().unwrap();
/// assert_eq!(sent["_meta"], serde_json::json!({"progressToken": 7, "k": 1}));
/// assert_eq!(sent["name"], "add");
/// ```
pub fn params_with_meta(
    params: Option<Payload>,
    progress_token: Option<&RequestId>,
    meta: Option<&RawJson>,
) -> Payload {
    with_meta(params, progress_token, meta)
}

/// Outbound request params, always an object carrying `_meta` (with the progress token when
/// there is one, then the members of `extra`, [`CallOptions::meta`](crate::CallOptions::meta)).
/// Params that are not an object are sent as they are.
pub(crate) fn with_meta(
    params: Option<Payload>,
    token: Option<&RequestId>,
    extra: Option<&RawJson>,
) -> Payload {
    // Raw object params stay text when `_meta` can be added or completed in place: they carry
    // none (nothing spells it), or it is their first member and holds no token yet.
    let params = match params {
        Some(Payload::Raw(raw)) => match raw_with_meta(&raw, token, extra) {
            Some(done) => return Payload::Raw(done),
            None => Some(Payload::Raw(raw)),
        },
        other => other,
    };
    let mut map = match params {
        None => Map::new(),
        Some(Payload::Value(Value::Object(map))) => map,
        Some(p @ Payload::Raw(_)) if p.is_object() => match p.into_object() {
            Some(map) => map,
            None => return Payload::empty_object(),
        },
        Some(other) => return other,
    };
    let meta = map
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    if let Value::Object(meta) = meta {
        if let Some(Ok(Value::Object(extra))) =
            extra.map(|e| serde_json::from_str::<Value>(e.get()))
        {
            meta.extend(extra);
        }
        if let Some(token) = token {
            meta.insert("progressToken".into(), id_value(token));
        }
    }
    Payload::Value(Value::Object(map))
}

/// [`with_meta`] on raw object params without reading them into a tree; `None` when the
/// text does not allow it (not an object, `_meta` elsewhere than first, a token already, an
/// escape, `_meta` members to merge into one it has).
fn raw_with_meta(
    raw: &RawJson,
    token: Option<&RequestId>,
    extra: Option<&RawJson>,
) -> Option<RawJson> {
    let text = raw.get();
    if !text.starts_with('{') {
        return None;
    }
    if !may_hold_meta(text.as_bytes()) {
        // One copy: `{"_meta":{"progressToken":ID,...extra},...params}`.
        let token = token.map(|t| ("progressToken", t));
        return raw.with_first_object("_meta", token, extra);
    }
    if extra.is_some() || !text.starts_with("{\"_meta\":{") {
        return None;
    }
    match token {
        None => Some(raw.clone()),
        Some(_) if may_hold_token(text) => None,
        Some(token) => raw.with_first_member_in("_meta", "progressToken", &id_raw(token)?),
    }
}

/// A request id as JSON text.
fn id_raw(id: &RequestId) -> Option<RawJson> {
    serde_json::value::to_raw_value(&id_value(id))
        .ok()
        .map(RawJson::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn meta_is_always_present() {
        assert_eq!(
            with_meta(None, None, None),
            Payload::from(json!({"_meta": {}}))
        );
        let raw: Payload = serde_json::from_str(r#"{"a":1,"_meta":{"x":2}}"#).unwrap();
        assert_eq!(
            with_meta(Some(raw), Some(&RequestId::from("t")), None),
            Payload::from(json!({"a": 1, "_meta": {"x": 2, "progressToken": "t"}}))
        );
    }

    /// Raw params get `_meta` (and the progress token) in their text, without being read
    /// into a tree, when it is absent or first; else they are read and changed as before.
    #[test]
    fn raw_params_stay_text_with_meta_added() {
        let raw = |t: &str| Payload::Raw(RawJson::from_string(t.to_owned()).unwrap());
        let text = |p: Payload| match p {
            Payload::Raw(r) => r.get().to_owned(),
            Payload::Value(v) => panic!("read into a tree: {v}"),
        };
        let t = RequestId::from(4);
        assert_eq!(
            text(with_meta(Some(raw(r#"{"name":"x"}"#)), Some(&t), None)),
            r#"{"_meta":{"progressToken":4},"name":"x"}"#
        );
        assert_eq!(
            text(with_meta(Some(raw("{}")), None, None)),
            r#"{"_meta":{}}"#
        );
        let envelope = r#"{"_meta":{"v":"2026-07-28"},"name":"x"}"#;
        assert_eq!(text(with_meta(Some(raw(envelope)), None, None)), envelope);
        assert_eq!(
            text(with_meta(
                Some(raw(envelope)),
                Some(&RequestId::from("s")),
                None
            )),
            r#"{"_meta":{"progressToken":"s","v":"2026-07-28"},"name":"x"}"#
        );
        // `_meta` not first, or a token already there: read and changed.
        let late = with_meta(Some(raw(r#"{"a":1,"_meta":{"x":2}}"#)), Some(&t), None);
        assert_eq!(
            late,
            Payload::from(json!({"a": 1, "_meta": {"x": 2, "progressToken": 4}}))
        );
        let had = with_meta(
            Some(raw(r#"{"_meta":{"progressToken":1}}"#)),
            Some(&t),
            None,
        );
        assert_eq!(had, Payload::from(json!({"_meta": {"progressToken": 4}})));
    }

    /// C67: `CallOptions::meta`'s members join the progress token in the params' `_meta`:
    /// written into raw params that have none in one copy (the token first), and merged
    /// into the `_meta` the params have (raw or a tree) without losing its members; params
    /// that are not an object go as they are.
    #[test]
    fn c67_call_meta_members_join_the_token_in_one_meta() {
        let raw = |t: &str| Payload::Raw(RawJson::from_string(t.to_owned()).unwrap());
        let extra = RawJson::from_string(r#"{"v":"x","w":{"a":[1]}}"#.to_owned()).unwrap();
        let t = RequestId::from(4);
        let text = |p: Payload| match p {
            Payload::Raw(r) => r.get().to_owned(),
            Payload::Value(v) => panic!("read into a tree: {v}"),
        };
        assert_eq!(
            text(with_meta(
                Some(raw(r#"{"name":"x"}"#)),
                Some(&t),
                Some(&extra)
            )),
            r#"{"_meta":{"progressToken":4,"v":"x","w":{"a":[1]}},"name":"x"}"#
        );
        assert_eq!(
            text(with_meta(Some(raw(r#"{ }"#)), None, Some(&extra))),
            r#"{"_meta":{"v":"x","w":{"a":[1]}}}"#
        );
        let s = RequestId::from("s\"q");
        let empty = RawJson::from_string("{}".to_owned()).unwrap();
        assert_eq!(
            text(with_meta(Some(raw(r#"{"a":1}"#)), Some(&s), Some(&empty))),
            r#"{"_meta":{"progressToken":"s\"q"},"a":1}"#
        );
        for params in [
            raw(r#"{"a":1,"_meta":{"y":2}}"#),
            raw(r#"{"_meta":{"y":2},"a":1}"#),
            Payload::from(json!({"a": 1, "_meta": {"y": 2}})),
        ] {
            assert_eq!(
                with_meta(Some(params), Some(&t), Some(&extra)),
                Payload::from(json!({"a": 1, "_meta": {
                    "y": 2, "v": "x", "w": {"a": [1]}, "progressToken": 4
                }}))
            );
        }
        assert_eq!(
            with_meta(None, None, Some(&extra)),
            Payload::from(json!({"_meta": {"v": "x", "w": {"a": [1]}}}))
        );
        assert_eq!(
            with_meta(Some(raw("[1]")), Some(&t), Some(&extra)),
            raw("[1]")
        );
    }

    #[test]
    fn tokens_are_read_from_raw_and_value_params() {
        let raw: Payload = serde_json::from_str(r#"{"_meta":{"progressToken":5}}"#).unwrap();
        assert_eq!(progress_token_of(Some(&raw)), Some(RequestId::from(5)));
        let v = Payload::from(json!({"_meta": {"progressToken": true}}));
        assert_eq!(progress_token_of(Some(&v)), None);
        // The fast path for params without `_meta` still sees an escaped key.
        let none: Payload = serde_json::from_str(r#"{"name":"x","arguments":{}}"#).unwrap();
        assert_eq!(progress_token_of(Some(&none)), None);
        let escaped: Payload =
            serde_json::from_str(r#"{"\u005fmeta":{"progressToken":"p"}}"#).unwrap();
        assert_eq!(
            progress_token_of(Some(&escaped)),
            Some(RequestId::from("p"))
        );
        // Underscores and other escapes before the key do not hide it.
        let late: Payload = serde_json::from_str(
            r#"{"tool_name":"get_weather","q":"a\"b","_meta":{"progressToken":7}}"#,
        )
        .unwrap();
        assert_eq!(progress_token_of(Some(&late)), Some(RequestId::from(7)));
        // A 2026-07-28 envelope without a token; a token key spelled with an escape.
        let envelope: Payload = serde_json::from_str(
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#,
        )
        .unwrap();
        assert_eq!(progress_token_of(Some(&envelope)), None);
        let hidden: Payload =
            serde_json::from_str(r#"{"_meta":{"progress\u0054oken":9}}"#).unwrap();
        assert_eq!(progress_token_of(Some(&hidden)), Some(RequestId::from(9)));
        let p = progress_params(&RequestId::from(3), 0.5, None, Some("half"));
        let (t, pr) = parse_progress(Some(&p)).unwrap();
        assert_eq!(t, RequestId::from(3));
        assert_eq!(pr.message.as_deref(), Some("half"));
    }
}
