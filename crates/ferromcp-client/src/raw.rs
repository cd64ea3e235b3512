//! Requests whose params go out as the caller's JSON text and whose result comes back as the
//! server's ([`Client::request_raw`]), for code that relays messages (a gateway, a proxy) and
//! would otherwise read every answer into a tree and write it out again; and the 2026-07-28
//! envelope's encoded parts, kept on the client session for every request.

use std::borrow::Cow;
use std::fmt;
use std::sync::OnceLock;

use ferromcp_types::Era;
use ferromcp_types::ProtocolVersion;
use ferromcp_types::jsonrpc::{Payload, RawJson};
use ferromcp_types::mcp::{
    JsonObject, LoggingLevel, META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL,
    META_PROTOCOL_VERSION, methods,
};
use ferromcp_types::tables::ObjectMembers;
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;

use crate::client::{Client, INPUT_REQUIRED_METHODS, Inner, Settings, lock};
use crate::error::ClientError;
use crate::options::RequestOptions;

/// The 2026-07-28 envelope of this client's requests, encoded once: its members as values (for
/// requests built as trees) and the whole `_meta` object as text, per log level (for raw
/// requests). The settings it comes from are fixed when the client is built; the log level
/// picks one of the texts.
#[derive(Default)]
pub(crate) struct Envelope {
    /// `clientCapabilities` and `clientInfo` as values.
    values: OnceLock<(Value, Value)>,
    /// The `_meta` text with no log level, then with each level in [`LoggingLevel::ALL`] order.
    texts: [OnceLock<Option<RawJson>>; 9],
}

impl Envelope {
    /// `clientCapabilities` and `clientInfo` as values, encoded on first use.
    pub(crate) fn values(&self, settings: &Settings) -> &(Value, Value) {
        self.values.get_or_init(|| {
            let caps = serde_json::to_value(&settings.modern_capabilities).unwrap_or(Value::Null);
            let info = serde_json::to_value(&settings.client_info).unwrap_or(Value::Null);
            (caps, info)
        })
    }

    /// The whole `_meta` object as text, with `level` as its log level when there is one.
    fn text(&self, settings: &Settings, level: Option<LoggingLevel>) -> Option<&RawJson> {
        let i = level.map_or(0, |l| {
            LoggingLevel::ALL.iter().position(|x| *x == l).unwrap_or(0) + 1
        });
        self.texts
            .get(i)?
            .get_or_init(|| {
                let mut meta = JsonObject::new();
                self.fill(settings, &mut meta);
                if let Some(level) = level {
                    meta.insert(META_LOG_LEVEL.into(), level_value(level));
                }
                to_raw(&Value::Object(meta))
            })
            .as_ref()
    }

    /// Adds the envelope's version, capabilities and client info to `meta`.
    pub(crate) fn fill(&self, settings: &Settings, meta: &mut JsonObject) {
        let (caps, info) = self.values(settings);
        meta.insert(
            META_PROTOCOL_VERSION.into(),
            Value::String(ProtocolVersion::LATEST_MODERN.as_str().into()),
        );
        if !caps.is_null() {
            meta.insert(META_CLIENT_CAPABILITIES.into(), caps.clone());
        }
        if !info.is_null() {
            meta.insert(META_CLIENT_INFO.into(), info.clone());
        }
    }
}

impl fmt::Debug for Envelope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Envelope").finish_non_exhaustive()
    }
}

fn level_value(level: LoggingLevel) -> Value {
    serde_json::to_value(level).unwrap_or(Value::Null)
}

fn to_raw(value: &Value) -> Option<RawJson> {
    serde_json::value::to_raw_value(value)
        .ok()
        .map(RawJson::from)
}

/// What a raw result says at its top level, read without building it.
#[derive(Default)]
struct Head<'a> {
    result_type: Option<Cow<'a, str>>,
    is_error: bool,
    has_content: bool,
}

impl<'de> serde::Deserialize<'de> for Head<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(HeadVisitor)
    }
}

struct HeadVisitor;

impl<'de> Visitor<'de> for HeadVisitor {
    type Value = Head<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a result object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Head<'de>, A::Error> {
        let mut head = Head::default();
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match &*key {
                "resultType" => head.result_type = map.next_value::<Option<Cow<'de, str>>>()?,
                "isError" => head.is_error = map.next_value::<Value>()? == Value::Bool(true),
                "content" => {
                    head.has_content = true;
                    map.next_value::<IgnoredAny>()?;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(head)
    }
}

/// [`Head`] read by a walk over the top level ([`ObjectMembers`]: each member's value skipped
/// to its end; the text is one valid JSON value, a [`RawJson`]). `None` when serde must read
/// it: not an object, a key or a `resultType` with an escape, a `resultType` that is not a
/// string or `null` (serde's error then says why).
fn scan_head(text: &str) -> Option<Head<'_>> {
    let mut head = Head::default();
    let mut members = ObjectMembers::new(text);
    for (key, value) in members.by_ref() {
        // An escaped key comes unescaped (owned): serde reads those.
        let Cow::Borrowed(key) = key else {
            return None;
        };
        match key {
            "resultType" => {
                head.result_type = match value.strip_prefix('"') {
                    Some(quoted) if !quoted.contains('\\') => {
                        Some(Cow::Borrowed(quoted.strip_suffix('"')?))
                    }
                    None if value == "null" => None,
                    _ => return None,
                };
            }
            "isError" => head.is_error = value == "true",
            "content" => head.has_content = true,
            _ => {}
        }
    }
    (!members.is_broken()).then_some(head)
}

impl Client {
    /// Sends one request by name with params given as JSON text (an object) and returns the
    /// result as the server wrote it, unread. For relaying: a gateway forwards a call and
    /// its answer without building either as a tree.
    ///
    /// The request takes the path of a typed one ([`Client::request_once`]): the 2026-07-28
    /// envelope (its text encoded once per client and log level) and
    /// [`RequestOptions::meta`] go into `_meta`, with the progress token when
    /// [`RequestOptions::on_progress`] is set; timeouts, progress and cancellation (dropping
    /// the future sends `notifications/cancelled`) are the same. The result's `resultType`
    /// is checked as for typed calls: absent or `complete`, `input_required` for
    /// `tools/call`, `prompts/get` and `resources/read` (returned as it came: the caller
    /// drives the rounds), and a `tools/call` task handle, which is waited for (its final
    /// result is returned, re-encoded). A `tools/call` result without `content` gets an
    /// empty one, as for typed calls. Not used: the response cache (raw requests neither read
    /// nor fill it) and what the client learns from typed results (the output schemas of
    /// listed tools).
    ///
    /// Params that already hold `_meta` are read and sent as a tree (the envelope is merged
    /// into theirs).
    ///
    /// ```no_run
    /// # async fn demo(client: ferromcp_client::Client) -> Result<(), ferromcp_client::ClientError> {
    /// use ferromcp_client::RequestOptions;
    /// use ferromcp_types::jsonrpc::RawJson;
    ///
    /// let params = RawJson::from_string(r#"{"name":"add","arguments":{"a":1,"b":2}}"#.into())
    ///     .expect("valid JSON");
    /// let result = client.request_raw("tools/call", params, RequestOptions::new()).await?;
    /// println!("{}", result.get()); // {"content":[{"type":"text","text":"3"}],...}
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`ClientError::Encode`] when the params are not an object; the server's error
    /// ([`ClientError::Protocol`]); [`ClientError::Decode`] when the result is not an object;
    /// [`ClientError::UnexpectedResultType`] as for typed calls.
    pub async fn request_raw(
        &self,
        method: &str,
        params: RawJson,
        opts: RequestOptions,
    ) -> Result<RawJson, ClientError> {
        let inner = &*self.inner;
        if !params.get().starts_with('{') {
            return Err(ClientError::Encode {
                method: method.to_owned(),
                detail: "params must be an object".into(),
            });
        }
        let modern = inner.era() == Era::Modern;
        let Some(meta) = outgoing(inner, &params, &opts, modern) else {
            return tree_path(inner, method, &params, &opts, modern).await;
        };
        let mut call = inner.call_options(method, &opts);
        call.meta = meta;
        #[cfg(feature = "otel")]
        let (mut traced, call) = {
            let mut call = call;
            // The span names the tool, prompt or resource; the params stay unread otherwise
            // (no arguments or result text are recorded on this path).
            let mut probe = match inner.otel.reads_params() {
                true => probe_of(method, &params),
                false => JsonObject::new(),
            };
            let traced = crate::otel::OutgoingCall::start(inner, method, &mut probe);
            if probe.contains_key("_meta") {
                // A trace context to carry: the params are sent as a tree.
                drop(traced);
                return tree_path(inner, method, &params, &opts, modern).await;
            }
            if let Some(on_id) = traced.on_id() {
                call.on_id = Some(on_id);
            }
            (traced, call)
        };
        let send = inner.send_routed(method, Payload::Raw(params), call, &opts);
        #[cfg(feature = "otel")]
        let send: ferromcp_dispatch::BoxFuture<'static, _> =
            Box::pin(tracing::Instrument::instrument(send, traced.span().clone()));
        let answer = send.await.map_err(ClientError::from);
        let checked = answer.and_then(|payload| checked(inner, method, payload));
        #[cfg(feature = "otel")]
        traced.finish(
            &checked
                .as_ref()
                .map(|(_, is_error)| {
                    let mut summary = JsonObject::new();
                    if *is_error {
                        summary.insert("isError".into(), Value::Bool(true));
                    }
                    Value::Object(summary)
                })
                .map_err(clone_error),
        );
        let (result, _) = checked?;
        match result {
            Checked::Done(raw) => Ok(raw),
            Checked::Task(value) => {
                let value = crate::tasks::settle(inner, method, value).await?;
                encode(method, &value)
            }
        }
    }
}

/// An error as the span records it (only its kind, code and message are read).
#[cfg(feature = "otel")]
fn clone_error(e: &ClientError) -> ClientError {
    match e {
        ClientError::Protocol(e) => ClientError::Protocol(e.clone()),
        other => ClientError::Encode {
            method: String::new(),
            detail: other.to_string(),
        },
    }
}

/// The `name` or `uri` of raw params, for the span.
#[cfg(feature = "otel")]
fn probe_of(method: &str, params: &RawJson) -> JsonObject {
    #[derive(serde::Deserialize)]
    struct Names {
        name: Option<String>,
        uri: Option<String>,
    }
    let mut probe = JsonObject::new();
    let wanted = matches!(
        method,
        "tools/call" | "prompts/get" | "resources/read" | "resources/subscribe"
    );
    if let (true, Ok(names)) = (wanted, serde_json::from_str::<Names>(params.get())) {
        if let Some(name) = names.name {
            probe.insert("name".into(), Value::String(name));
        }
        if let Some(uri) = names.uri {
            probe.insert("uri".into(), Value::String(uri));
        }
    }
    probe
}

/// The `_meta` members the params go out with ([`CallOptions::meta`]: the dispatcher writes
/// them into the params' text in the same copy as the progress token), `Some(None)` for none;
/// `None` when the params must be read as a tree (they hold `_meta`, or the options carry
/// `_meta` keys other than the log level).
///
/// [`CallOptions::meta`]: ferromcp_dispatch::CallOptions::meta
fn outgoing(
    inner: &Inner,
    params: &RawJson,
    opts: &RequestOptions,
    modern: bool,
) -> Option<Option<RawJson>> {
    let extra = opts.meta.as_ref().filter(|m| !m.is_empty());
    if !modern {
        // Handshake era: no envelope; the dispatcher adds `_meta` for the progress token.
        return match extra {
            None => Some(None),
            Some(_) => None,
        };
    }
    let text = params.get();
    // `_meta` may be there when the text spells it or escapes something.
    if text.contains("_meta") || text.contains('\\') {
        return None;
    }
    let level = match extra {
        None => *lock(&inner.log_level),
        Some(meta) if meta.as_map().len() == 1 => Some(meta.log_level()?.ok()?),
        Some(_) => return None,
    };
    let envelope = inner.envelope.text(&inner.settings, level)?;
    Some(Some(envelope.clone()))
}

/// The typed path's way for params that cannot stay text: read, sent as a tree, the answer
/// written back as text.
async fn tree_path(
    inner: &Inner,
    method: &str,
    params: &RawJson,
    opts: &RequestOptions,
    modern: bool,
) -> Result<RawJson, ClientError> {
    let map: JsonObject = serde_json::from_str(params.get()).map_err(|e| ClientError::Encode {
        method: method.to_owned(),
        detail: e.to_string(),
    })?;
    let call = inner.call_options(method, opts);
    let value = inner.send_once(method, map, opts, call, modern).await?;
    let value = crate::tasks::settle(inner, method, value).await?;
    encode(method, &value)
}

fn encode(method: &str, value: &Value) -> Result<RawJson, ClientError> {
    serde_json::value::to_raw_value(value)
        .map(RawJson::from)
        .map_err(|e| ClientError::decode(method, e))
}

/// A raw answer that passed the checks: its text, or a task handle to wait for.
enum Checked {
    Done(RawJson),
    Task(Value),
}

/// The `resultType` checks of [`Inner::send_once`], on the answer's text; with whether the
/// result says `isError: true`.
fn checked(inner: &Inner, method: &str, payload: Payload) -> Result<(Checked, bool), ClientError> {
    let raw = match payload {
        Payload::Raw(raw) => raw,
        Payload::Value(value) => encode(method, &value)?,
    };
    let head = match scan_head(raw.get()) {
        Some(head) => head,
        None => serde_json::from_str(raw.get()).map_err(|e| ClientError::decode(method, e))?,
    };
    let is_error = head.is_error;
    let tools_call = method == methods::TOOLS_CALL;
    match head.result_type.as_deref() {
        None | Some("complete") => {}
        Some("input_required") if INPUT_REQUIRED_METHODS.contains(&method) => {
            return Ok((Checked::Done(raw), is_error));
        }
        Some("task") if tools_call && inner.settings.tasks.is_some() => {
            let value =
                serde_json::from_str(raw.get()).map_err(|e| ClientError::decode(method, e))?;
            return Ok((Checked::Task(value), is_error));
        }
        Some(other) => {
            return Err(ClientError::UnexpectedResultType {
                method: method.to_owned(),
                result_type: other.to_owned(),
            });
        }
    }
    if tools_call && !head.has_content {
        // Lenient as typed calls are: a tool result without `content` is an empty one.
        let empty = RawJson::from_valid_unchecked("[]".to_owned());
        if let Some(with) = raw.with_first_member("content", &empty) {
            return Ok((Checked::Done(with), is_error));
        }
    }
    Ok((Checked::Done(raw), is_error))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// B91: the byte walk reads a result's top level as serde does (the `resultType`, `isError`
    /// and `content` that `checked` decides on), whatever is nested, escaped or spaced, or it
    /// leaves the text to serde.
    #[test]
    fn b91_the_head_walk_reads_what_serde_reads() {
        let texts = [
            r#"{"content":[{"type":"text","text":"5"}],"resultType":"complete","_meta":{"a":{"resultType":"task"}}}"#,
            r#"{"resultType":"input_required","inputRequests":{"x":{"isError":true}}}"#,
            r#"{"isError":true,"content":[]}"#,
            r#"{"isError":false,"isError":true}"#,
            r#"{"resultType":"task","resultType":"complete"}"#,
            r#"{"resultType":null,"content":"}{\"resultType\":\"task\""}"#,
            r#"{ "content" : [ 1 , {"a":"]"} ] , "resultType" : "complete" , "n" : -1.5e3 }"#,
            r#"{"structuredContent":{"resultType":"task","content":[]},"isError":"true"}"#,
            r#"{}"#,
            r#"{"x":[[[]]],"y":{"z":{}},"t":true,"f":false,"n":null}"#,
        ];
        for text in texts {
            let walked = scan_head(text).unwrap_or_else(|| panic!("walked: {text}"));
            let read: Head<'_> = serde_json::from_str(text).unwrap();
            assert_eq!(walked.result_type, read.result_type, "{text}");
            assert_eq!(walked.is_error, read.is_error, "{text}");
            assert_eq!(walked.has_content, read.has_content, "{text}");
        }
        // Left to serde: escapes in a key or in `resultType`, a `resultType` of another type.
        for text in [
            r#"{"result\u0054ype":"task"}"#,
            r#"{"resultType":"t\u0061sk"}"#,
            r#"{"resultType":1}"#,
            "[1]",
        ] {
            assert!(scan_head(text).is_none(), "{text}");
        }
    }
}
