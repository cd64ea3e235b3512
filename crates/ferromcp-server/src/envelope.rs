//! A request's `params._meta` envelope (MCP 2026-07-28: the protocol version, the client's
//! capabilities and info, the log level, carried by every request), read once per request.
//!
//! Raw params are read from their text (issue 19): one pass over the params finds `_meta`,
//! a second over `_meta`'s own text picks out the envelope's keys, and only those are decoded
//! (no `Value` of `_meta` is built; a handler that asks for [`RequestContext::meta`] gets one
//! parsed then). The answer is the one the `Value` reading gives, which is kept for params
//! handed over as a value, and for text holding a surrogate escape (`\uD800`-`\uDFFF`:
//! a lone one makes the whole `_meta` unreadable to a `Value`, which the text reading would
//! not notice).
//!
//! [`RequestContext::meta`]: crate::RequestContext::meta

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

use ferromcp_dispatch::Outbound;
use ferromcp_types::ProtocolVersion;
use ferromcp_types::jsonrpc::ErrorObject;
use ferromcp_types::mcp::{
    ClientCapabilities, Implementation, JsonObject, LoggingLevel, META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO, META_LOG_LEVEL, META_PROTOCOL_VERSION, Meta,
};
use ferromcp_types::tables::{ObjectMembers, unquote};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::connection::Connection;
use crate::middleware::McpParams;

/// A request's envelope: its `_meta` (when an object) and what the kernel reads of it.
// Lives on `on_request`'s stack only; boxing the big variant would cost every request an
// allocation.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Envelope {
    /// Read from a `Value` of `_meta` (params handed over as a value, or text that needs it).
    Value(Option<JsonObject>),
    /// Read from the text.
    Text(Option<TextEnvelope>),
}

/// The envelope keys of a `_meta` object read from its text, and the text itself (for a
/// handler that asks for the whole `_meta`).
pub(crate) struct TextEnvelope {
    meta: Box<str>,
    version: Option<Field>,
    caps: Option<Option<ClientCapabilities>>,
    info: Option<Implementation>,
    log_level: Option<LoggingLevel>,
}

/// `_meta`'s protocol version as the envelope gives it.
enum Field {
    /// A string.
    Str(String),
    /// Some other JSON value.
    NotString,
}

impl Envelope {
    /// Reads the envelope of `params` (cheap when there is no `_meta`).
    pub(crate) fn read(params: &McpParams) -> Self {
        match params.raw() {
            // Most handshake-era params: no `_meta`, no escape (so no surrogate either).
            Some(raw) if !params.is_parsed() && !may_hold_meta(raw.get()) => Self::Text(None),
            Some(raw) if !params.is_parsed() && !crate::runner::has_surrogate_escape(raw.get()) => {
                Self::Text(TextEnvelope::read(raw.get()))
            }
            _ => Self::Value(params.meta_object()),
        }
    }

    /// Whether `_meta` is an object holding the protocol-version key (a 2026-07-28 request).
    pub(crate) fn has_version_key(&self) -> bool {
        match self {
            Self::Value(meta) => meta
                .as_ref()
                .is_some_and(|m| m.contains_key(META_PROTOCOL_VERSION)),
            Self::Text(meta) => meta.as_ref().is_some_and(|m| m.version.is_some()),
        }
    }

    /// The connection a 2026-07-28 request runs on, from its envelope; its messages go to
    /// `outbound`. Missing or invalid keys are -32602, an unsupported version -32022.
    pub(crate) fn connection(
        &self,
        outbound: &Arc<dyn Outbound>,
    ) -> Result<Connection, ErrorObject> {
        match self {
            Self::Value(meta) => {
                let Some(meta) = meta else {
                    return Err(missing_meta());
                };
                let version = meta
                    .get(META_PROTOCOL_VERSION)
                    .map(|v| v.as_str().map(Cow::Borrowed));
                let caps = meta
                    .get(META_CLIENT_CAPABILITIES)
                    .map(|c| serde_json::from_value::<ClientCapabilities>(c.clone()).ok());
                let info = meta
                    .get(META_CLIENT_INFO)
                    .and_then(|i| serde_json::from_value::<Implementation>(i.clone()).ok());
                connection(outbound, version, caps, info)
            }
            Self::Text(None) => Err(missing_meta()),
            Self::Text(Some(m)) => {
                let version = m.version.as_ref().map(|v| match v {
                    Field::Str(s) => Some(Cow::Borrowed(s.as_str())),
                    Field::NotString => None,
                });
                connection(outbound, version, m.caps.clone(), m.info.clone())
            }
        }
    }

    /// `_meta` for the request's context.
    pub(crate) fn into_meta(self) -> RequestMeta {
        match self {
            Self::Value(meta) => meta.map(Meta).into(),
            Self::Text(None) => RequestMeta::None,
            Self::Text(Some(m)) => RequestMeta::Text(Arc::new(LazyMeta {
                text: m.meta,
                log_level: m.log_level,
                parsed: OnceLock::new(),
            })),
        }
    }
}

fn missing_meta() -> ErrorObject {
    ErrorObject::invalid_params(
        "missing params._meta: this connection serves MCP 2026-07-28, where every request \
         carries its protocol version and client capabilities in _meta",
    )
}

/// The connection from the envelope's keys: `version` is `None` when absent, `Some(None)`
/// when not a string; `caps` is `None` when absent, `Some(None)` when it does not decode.
fn connection(
    outbound: &Arc<dyn Outbound>,
    version: Option<Option<Cow<'_, str>>>,
    caps: Option<Option<ClientCapabilities>>,
    info: Option<Implementation>,
) -> Result<Connection, ErrorObject> {
    let version = match version {
        Some(Some(v)) => v,
        Some(None) => {
            return Err(ErrorObject::invalid_params(format!(
                "_meta[\"{META_PROTOCOL_VERSION}\"] must be a string"
            )));
        }
        None => {
            return Err(ErrorObject::invalid_params(format!(
                "missing _meta[\"{META_PROTOCOL_VERSION}\"]"
            )));
        }
    };
    let version = match ProtocolVersion::parse(&version) {
        Some(v) if v.is_modern() => v,
        _ => {
            let supported = ProtocolVersion::strings(&[ProtocolVersion::LATEST_MODERN]);
            return Err(ErrorObject::unsupported_protocol_version(
                &supported,
                Some(&version),
            ));
        }
    };
    let Some(caps) = caps else {
        return Err(ErrorObject::invalid_params(format!(
            "missing _meta[\"{META_CLIENT_CAPABILITIES}\"]"
        )));
    };
    Ok(Connection::from_envelope(
        outbound.clone(),
        version,
        info,
        caps,
    ))
}

impl TextEnvelope {
    /// The envelope of params text (valid JSON, as every `RawJson` is): `None` when `_meta`
    /// is absent, `null`, not an object, or given twice, as the `Value` reading says.
    fn read(text: &str) -> Option<Self> {
        if !may_hold_meta(text) {
            return None;
        }
        let mut meta = None;
        // Keys come decoded; one that does not decode (a lone surrogate) stops the walk
        // (`is_broken`): such text takes the `Value` path.
        let mut members = ObjectMembers::new(text);
        for (key, value) in members.by_ref() {
            if key == "_meta" {
                if meta.is_some() {
                    return None; // twice: unreadable, as a struct with that field says
                }
                meta = Some(value);
            }
        }
        if members.is_broken() {
            return None;
        }
        let meta = meta?;
        let mut keys = Keys::default();
        // `null`, or anything but an object, is no `_meta`.
        let mut members = ObjectMembers::new(meta);
        for (key, value) in members.by_ref() {
            let slot = match key.as_ref() {
                META_PROTOCOL_VERSION => &mut keys.version,
                META_CLIENT_CAPABILITIES => &mut keys.caps,
                META_CLIENT_INFO => &mut keys.info,
                META_LOG_LEVEL => &mut keys.log_level,
                _ => continue,
            };
            *slot = Some(value); // the last of a duplicated key, as a `Value` keeps it
        }
        if members.is_broken() {
            return None;
        }
        let version = keys
            .version
            .map(|v| unquote(v).map_or(Field::NotString, |v| Field::Str(v.into_owned())));
        Some(Self {
            meta: meta.into(),
            version,
            caps: keys.caps.map(|c| {
                // The usual envelope declares nothing: no decoding for that.
                if c == "{}" {
                    Some(ClientCapabilities::default())
                } else {
                    decode(c)
                }
            }),
            info: keys.info.and_then(decode),
            log_level: keys.log_level.and_then(decode),
        })
    }
}

/// Whether object params may hold `_meta`: only if the text spells it, or escapes something.
fn may_hold_meta(text: &str) -> bool {
    text.starts_with('{') && (text.contains("_meta") || text.as_bytes().contains(&b'\\'))
}

/// A key's value as the `Value` reading decodes it: typed from the text, and when that fails
/// (duplicate keys, which a `Value` resolves to the last one), through a `Value`.
fn decode<T: DeserializeOwned>(text: &str) -> Option<T> {
    serde_json::from_str(text).ok().or_else(|| {
        serde_json::from_str::<Value>(text)
            .ok()
            .and_then(|v| serde_json::from_value(v).ok())
    })
}

/// The envelope keys of a `_meta` object, as text.
#[derive(Default)]
struct Keys<'a> {
    version: Option<&'a str>,
    caps: Option<&'a str>,
    info: Option<&'a str>,
    log_level: Option<&'a str>,
}

/// A request's `_meta` as its context holds it: parsed, or its text, parsed when a handler
/// first asks.
#[derive(Clone, Default)]
pub(crate) enum RequestMeta {
    /// None (absent, or not an object).
    #[default]
    None,
    /// Parsed.
    Parsed(Arc<Meta>),
    /// The text of an object.
    Text(Arc<LazyMeta>),
}

/// `_meta`'s text, its log level (read with the envelope) and its value once asked for.
pub(crate) struct LazyMeta {
    text: Box<str>,
    log_level: Option<LoggingLevel>,
    parsed: OnceLock<Option<Meta>>,
}

impl From<Option<Meta>> for RequestMeta {
    fn from(meta: Option<Meta>) -> Self {
        meta.map_or(Self::None, |m| Self::Parsed(Arc::new(m)))
    }
}

impl RequestMeta {
    /// The `_meta` object.
    pub(crate) fn get(&self) -> Option<&Meta> {
        match self {
            Self::None => None,
            Self::Parsed(meta) => Some(meta),
            Self::Text(lazy) => lazy
                .parsed
                .get_or_init(|| match serde_json::from_str(&lazy.text) {
                    Ok(Value::Object(map)) => Some(Meta(map)),
                    _ => None,
                })
                .as_ref(),
        }
    }

    /// The level the request opted into (`io.modelcontextprotocol/logLevel`).
    pub(crate) fn log_level(&self) -> Option<LoggingLevel> {
        match self {
            Self::None => None,
            Self::Parsed(meta) => meta.log_level().and_then(Result::ok),
            Self::Text(lazy) => lazy.log_level,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferromcp_dispatch::{BoxFuture, CallOptions};
    use ferromcp_types::jsonrpc::{Payload, RawJson};

    struct Nowhere;

    impl Outbound for Nowhere {
        fn send_request(
            &self,
            _method: &str,
            _params: Option<Payload>,
            _options: CallOptions,
        ) -> BoxFuture<'static, Result<Payload, ErrorObject>> {
            Box::pin(std::future::ready(Err(ErrorObject::internal_error("no"))))
        }

        fn notify(&self, _method: &str, _params: Option<Payload>) -> BoxFuture<'static, ()> {
            Box::pin(std::future::ready(()))
        }
    }

    /// Everything the kernel takes from an envelope, comparable.
    fn outcome(envelope: Envelope) -> Value {
        let outbound: Arc<dyn Outbound> = Arc::new(Nowhere);
        let connection = match envelope.connection(&outbound) {
            Ok(c) => serde_json::json!({
                "version": c.protocol_version().as_str(),
                "info": c.client_info(),
                "caps": c.client_capabilities(),
            }),
            Err(e) => serde_json::json!({ "error": e }),
        };
        let modern = envelope.has_version_key();
        let meta = envelope.into_meta();
        serde_json::json!({
            "modern": modern,
            "connection": connection,
            "meta": meta.get().map(|m| Value::Object(m.0.clone())),
            "log_level": meta.log_level(),
        })
    }

    const PV: &str = "\"io.modelcontextprotocol/protocolVersion\"";
    const CC: &str = "\"io.modelcontextprotocol/clientCapabilities\"";
    const CI: &str = "\"io.modelcontextprotocol/clientInfo\"";
    const LL: &str = "\"io.modelcontextprotocol/logLevel\"";

    fn cases() -> Vec<String> {
        let ok = format!("{PV}:\"2026-07-28\",{CC}:{{}}");
        let mut deep = String::from("{\"experimental\":{\"x\":");
        deep.push_str(&"[".repeat(100));
        deep.push_str(&"]".repeat(100));
        deep.push_str("}}");
        let metas = [
            ok.clone(),
            format!("{ok},{CI}:{{\"name\":\"c\",\"version\":\"1\"}},{LL}:\"debug\""),
            format!("{ok},{CI}:5,{LL}:\"nonsense\""),
            format!("{ok},{LL}:7,\"progressToken\":3,\"x\":{{\"y\":[1,2]}}"),
            format!("{PV}:\"2026-07-28\",{CC}:{{\"roots\":{{\"listChanged\":true}}}}"),
            format!("{PV}:\"2026-07-28\",{CC}:\"not an object\""),
            format!("{PV}:\"2026-07-28\",{CC}:{deep}"),
            format!("{PV}:\"2026-07-28\""),
            format!("{CC}:{{}}"),
            format!("{PV}:5,{CC}:{{}}"),
            format!("{PV}:null,{CC}:{{}}"),
            format!("{PV}:\"2025-11-25\",{CC}:{{}}"),
            format!("{PV}:\"garbage\",{CC}:{{}}"),
            format!("{PV}:\"2026-07-\\u0032\\u0038\",{CC}:{{}}"),
            format!("\"io.modelcontextprotocol/protocol\\u0056ersion\":\"2026-07-28\",{CC}:{{}}"),
            // Duplicates: the last one counts, as in a `Value`.
            format!("{PV}:5,{ok}"),
            format!("{ok},{PV}:\"1999-01-01\""),
            format!(
                "{PV}:\"2026-07-28\",{CC}:{{\"roots\":{{}},\"roots\":{{\"listChanged\":true}}}}"
            ),
            format!("{ok},{CI}:{{\"name\":\"a\",\"name\":\"b\",\"version\":\"1\"}}"),
            // Surrogate escapes: lone (in a key, in a value) and paired.
            format!("{ok},\"k\\uD800\":1"),
            format!("{ok},{CI}:{{\"name\":\"\\uDC00\",\"version\":\"1\"}}"),
            format!("{ok},{CI}:{{\"name\":\"\\uD83D\\uDE00\",\"version\":\"1\"}}"),
            String::new(),
        ];
        let mut cases = Vec::new();
        for meta in metas {
            cases.push(format!("{{\"name\":\"t\",\"_meta\":{{{meta}}}}}"));
            cases.push(format!(
                "{{ \"_meta\" : {{ {meta} }} , \"arguments\":{{\"a\":[1]}} }}"
            ));
            cases.push(format!("{{\"\\u005fmeta\":{{{meta}}}}}"));
            // Strings holding brackets, quotes and backslashes, and other values, before it.
            cases.push(format!(
                "{{\"a\":\"}}\\\"{{[\",\"b\":[{{\"c\":\"]\\\\\"}},true,-1.5e3,null],\"n\":0,\t\"_meta\"\n:\r{{{meta}}}}}"
            ));
        }
        for other in [
            "{}",
            "{\"name\":\"t\"}",
            "{\"_meta\":null}",
            "{\"_meta\":5}",
            "{\"_meta\":[]}",
            "{\"_meta\":\"s\"}",
            "{\"_meta\":{},\"_meta\":{}}",
            "{\"_meta\":null,\"\\u005fmeta\":{}}",
            "{\"name\":\"\\uD800\",\"_meta\":{}}",
            "{\"name\":\"a\\\\u\",\"_metax\":{}}",
            "[1]",
            "\"_meta\"",
            "5",
            "null",
        ] {
            cases.push(other.to_owned());
        }
        cases
    }

    /// The member walk (the tables' `ObjectMembers`) stops on text it does not expect (any
    /// cut of valid text), and reading the envelope never panics.
    #[test]
    fn b66_the_member_walk_never_panics_on_cut_text() {
        for text in cases() {
            for end in 0..=text.len() {
                let Some(cut) = text.get(..end) else { continue };
                let _ = TextEnvelope::read(cut);
                assert!(ObjectMembers::new(cut).count() <= cut.len());
            }
        }
    }

    /// B66: the envelope read from the params' text (the kernel's path for raw params) gives
    /// what the `Value` reading of `_meta` gave (the path before, and still the one for params
    /// handed over as a value): the same connection or the same error, the same `_meta`, the
    /// same log level, for valid and malformed envelopes.
    #[test]
    fn b66_envelope_from_text_answers_as_the_value_reading() {
        for text in cases() {
            let raw = RawJson::from_string(text.clone()).expect(&text);
            let params = McpParams::from_payload(Some(Payload::Raw(raw.clone())));
            let read = Envelope::read(&params);
            // The text path is taken unless the text holds a surrogate escape.
            assert_eq!(
                matches!(read, Envelope::Text(_)),
                !crate::runner::has_surrogate_escape(&text),
                "{text}"
            );
            let text_read = outcome(Envelope::Text(TextEnvelope::read(&text)));
            let before = McpParams::from_payload(Some(Payload::Raw(raw)));
            let value_read = outcome(Envelope::Value(before.meta_object()));
            assert_eq!(outcome(read), value_read, "{text}");
            // A lone surrogate is why the text path is not taken: a `Value` cannot hold one.
            if !(text.contains("\\uD800") || text.contains("\\uDC00")) {
                assert_eq!(text_read, value_read, "{text}");
            }
        }
    }
}
