//! The fuzz bodies for `ferromcp-server`'s parsers: the MCP 2026-07-28 header codec, RFC 6570
//! URI templates, sealed `requestState` tokens and elicitation answers. The elicitation-schema
//! builder's body needs the crate-private builder, so it stays in `ferromcp-server`
//! (`src/fuzzing.rs`, compiled only for its tests and for cargo-fuzz builds).

use std::collections::BTreeMap;
use std::time::{Duration, Instant, SystemTime};

use ferromcp_types::mcp::{ElicitAction, ElicitResult, ElicitValue};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use ferromcp_server::mcp_server::{ElicitForm, Elicitation, decode_answer};
use ferromcp_server::request_state::{Binding, KeyRing, StateKey, StateSealer};
use ferromcp_server::uri_template::UriTemplate;

/// The MCP 2026-07-28 "Value Encoding" rule, as the spec states it: plain visible ASCII (inner
/// spaces and tabs allowed) that does not look like the sentinel is sent as is, anything else
/// as `=?base64?{standard Base64, padded}?=`. The reference the decoder is checked against.
pub fn reference_encode_header_value(value: &str) -> String {
    use base64::Engine as _;
    let plain = value
        .bytes()
        .all(|b| b == b' ' || b == b'\t' || (0x21..=0x7e).contains(&b));
    let trimmed = value.trim_matches(|c| c == ' ' || c == '\t').len() == value.len();
    let sentinel = value.starts_with("=?base64?") && value.ends_with("?=");
    if plain && trimmed && !sentinel {
        value.to_owned()
    } else {
        format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(value.as_bytes())
        )
    }
}

/// The header codec of MCP 2026-07-28 (`=?base64?…?=` sentinel, `Mcp-Param-{Name}`), with the
/// reference encoder ([`reference_encode_header_value`]).
pub fn header_codec(data: &[u8]) {
    header_codec_with(data, &reference_encode_header_value);
}

/// [`header_codec`] with another encoder (the fuzz target also passes the client's):
///
/// - `decode_header_value` never panics; a value that is not the sentinel decodes to itself;
///   a sentinel decodes exactly when strict standard Base64 (canonical padding) of valid
///   UTF-8 does, to the same text;
/// - `encode` then decode gives the input back, and `check_param_headers` accepts the encoded
///   header for a string argument (integers and booleans too, in their plain form);
/// - a raw header the check accepts decodes to the argument;
/// - `param_headers` and `check_param_headers` never panic on an arbitrary schema and
///   arguments, and annotation paths stay within the walk's depth bound.
pub fn header_codec_with(data: &[u8], encode: &dyn Fn(&str) -> String) {
    use base64::Engine as _;
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    use http::{HeaderMap, HeaderValue};

    use ferromcp_http_server::{
        ParamHeader, check_param_headers, decode_header_value, param_headers,
    };

    let text = String::from_utf8_lossy(data);
    let text: &str = &text;

    // Decoding, against the base64 crate.
    let decoded = decode_header_value(text);
    match text
        .strip_prefix("=?base64?")
        .and_then(|v| v.strip_suffix("?="))
    {
        None => assert_eq!(decoded.as_deref(), Some(text), "a plain value is itself"),
        Some(inner) => {
            let strict = GeneralPurpose::new(
                &base64::alphabet::STANDARD,
                GeneralPurposeConfig::new()
                    .with_decode_padding_mode(DecodePaddingMode::RequireCanonical)
                    .with_decode_allow_trailing_bits(true),
            );
            let expected = strict
                .decode(inner)
                .ok()
                .and_then(|b| String::from_utf8(b).ok());
            assert_eq!(
                decoded, expected,
                "sentinel {inner:?} decodes as RFC 4648 says"
            );
        }
    }

    // Encoding round trip.
    let encoded = encode(text);
    assert_eq!(
        decode_header_value(&encoded).as_deref(),
        Some(text),
        "encode → decode of {text:?} (as {encoded:?})"
    );

    let annotations = [ParamHeader {
        name: "P".to_owned(),
        path: vec!["p".to_owned()],
    }];
    let with_header = |value: &str| -> Option<HeaderMap> {
        let mut headers = HeaderMap::new();
        headers.insert("mcp-param-p", HeaderValue::from_str(value).ok()?);
        Some(headers)
    };
    let args = serde_json::json!({ "p": text });
    let headers = with_header(&encoded);
    assert!(
        headers.is_some(),
        "the encoding {encoded:?} is a valid header value"
    );
    if let Some(headers) = headers {
        assert!(
            check_param_headers(&annotations, &headers, Some(&args)).is_ok(),
            "Mcp-Param-P: {encoded:?} matches {text:?}"
        );
    }
    // The raw input as the header: accepted only when it stands for the argument.
    if let Some(headers) = with_header(text)
        && check_param_headers(&annotations, &headers, Some(&args)).is_ok()
    {
        assert_eq!(decode_header_value(text.trim()).as_deref(), Some(text));
    }
    if let Ok(n) = text.parse::<i64>()
        && let Some(headers) = with_header(&n.to_string())
    {
        let args = serde_json::json!({ "p": n });
        assert!(check_param_headers(&annotations, &headers, Some(&args)).is_ok());
    }
    for b in [true, false] {
        if let Some(headers) = with_header(if b { "true" } else { "false" }) {
            let args = serde_json::json!({ "p": b });
            assert!(check_param_headers(&annotations, &headers, Some(&args)).is_ok());
            let args = serde_json::json!({ "p": !b });
            assert!(check_param_headers(&annotations, &headers, Some(&args)).is_err());
        }
    }

    // Arbitrary schemas and arguments.
    if let Ok(Value::Object(schema)) = serde_json::from_slice::<Value>(data) {
        let found = param_headers(&schema);
        assert!(found.iter().all(|a| a.path.len() <= 33));
        let value = Value::Object(schema);
        let _ = check_param_headers(&found, &HeaderMap::new(), Some(&value));
        if let Some(headers) = with_header("x") {
            let _ = check_param_headers(&found, &headers, Some(&value));
        }
    }
}

/// Splits `data` at the first NUL: (template, uri); without a NUL, the whole input is both.
fn split_nul(data: &[u8]) -> (String, String) {
    match data.iter().position(|&b| b == 0) {
        Some(i) => (
            String::from_utf8_lossy(&data[..i]).into_owned(),
            String::from_utf8_lossy(&data[i + 1..]).into_owned(),
        ),
        None => {
            let s = String::from_utf8_lossy(data).into_owned();
            (s.clone(), s)
        }
    }
}

/// Captures as sorted (name, value) pairs.
type Pairs = Vec<(String, String)>;

/// Sorted captures, for comparison.
fn captures_of(t: &UriTemplate, uri: &str) -> Option<Pairs> {
    t.matches(uri).map(|c| {
        let mut v = c.into_vec();
        v.sort();
        v
    })
}

/// The most a single `matches` call may take here (a generous bound: linear matching of a
/// 4 KiB URI takes microseconds; a backtracking matcher takes far longer).
const MATCH_BUDGET: Duration = Duration::from_secs(2);

/// RFC 6570 templates (levels 1–3) and the matcher (`UriTemplate::matches`). The input is
/// `template NUL uri` (without a NUL, the input is both):
///
/// - parsing never panics; a parsed template displays as its source;
/// - matching never panics, only binds the template's variables, and stays within
///   `MATCH_BUDGET` even on a URI of the maximum length built by repeating the input;
/// - captures are a fixpoint: expanding them gives a URI that matches with the same captures;
/// - expanding values taken from the URI, then matching, gives a fixpoint too.
pub fn uri_template(data: &[u8]) {
    let (template, uri) = split_nul(data);
    let Ok(t) = UriTemplate::parse(&template) else {
        return;
    };
    assert_eq!(t.as_str(), template);

    let timed = |uri: &str| {
        let start = Instant::now();
        let caps = captures_of(&t, uri);
        let took = start.elapsed();
        assert!(
            took < MATCH_BUDGET,
            "matching {} bytes took {took:?}",
            uri.len()
        );
        caps
    };

    if let Some(caps) = timed(&uri) {
        assert!(caps.iter().all(|(k, _)| t.variables().contains(k)));
        fixpoint(&t, &caps, &uri, &timed);
    }

    // A long adversarial URI: the input repeated up to the length limit.
    if !uri.is_empty() {
        let mut long = String::with_capacity(t.max_uri_len());
        while long.len() + uri.len() <= t.max_uri_len() {
            long.push_str(&uri);
        }
        let _ = timed(&long);
        long.push_str(&template);
        let _ = timed(&long);
    }

    // Expand → match, values from the URI split at commas.
    let mut values = uri.split(',').filter(|v| !v.is_empty());
    let assigned: Vec<(String, String)> = t
        .variables()
        .iter()
        .filter_map(|name| values.next().map(|v| (name.clone(), v.to_owned())))
        .collect();
    let expanded = t.expand_with(|name| {
        assigned
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    });
    if let Some(caps) = timed(&expanded) {
        fixpoint(&t, &caps, &expanded, &timed);
    }
}

/// Whether one expression lists a variable twice (`{;y,y}`): named expressions match each
/// parameter at most once, so `;y=v;y=v` (its expansion) is not matched and `;y=v` is.
fn repeats_within_expression(t: &UriTemplate) -> bool {
    t.as_str().split('{').skip(1).any(|rest| {
        let body = rest.split('}').next().unwrap_or_default();
        let body = body.trim_start_matches(['+', '#', '.', '/', ';', '?', '&']);
        let names: Vec<&str> = body.split(',').collect();
        names
            .iter()
            .enumerate()
            .any(|(i, n)| names[..i].contains(n))
    })
}

/// Captures explain their URI: expanding them gives a URI that matches, with the same
/// captures unless the template is ambiguous for them. A named expression followed by a
/// literal that starts with `=` is (`{?x}=` reads `?x==` as `x` = "" then `==`, or as
/// `x` = "" written `x=` then `=`), and so is an empty captured value; only re-matching is
/// required in those cases. Reserved expansion (`{+x}`, `{#x}`) writes `/`, `?` and the
/// other delimiters unencoded, so a captured `%2F` comes back as a `/` that splits
/// differently: nothing is required of those templates but bounded, panic-free matching.
/// A re-expansion longer than the template's URI limit is not required to match either.
fn fixpoint(
    t: &UriTemplate,
    caps: &[(String, String)],
    uri: &str,
    timed: &dyn Fn(&str) -> Option<Pairs>,
) {
    if t.as_str().contains("{+") || t.as_str().contains("{#") || repeats_within_expression(t) {
        return;
    }
    let again = t.expand_with(|name| {
        caps.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    });
    if again.len() > t.max_uri_len() {
        // Re-encoding can lengthen the URI past the limit, where nothing matches.
        return;
    }
    let matched = timed(&again);
    assert!(
        matched.is_some(),
        "captures of {uri:?} re-expand to {again:?}, which must match"
    );
    let ambiguous = t.as_str().contains("}=") || caps.iter().any(|(_, v)| v.is_empty());
    if !ambiguous {
        assert_eq!(
            matched.as_deref(),
            Some(caps),
            "captures of {uri:?} re-expand to {again:?}, which must match the same way"
        );
    }
}

/// The sealed `requestState` token (`StateSealer::open`):
///
/// - the input as a token never opens (and never panics);
/// - the input as a payload seals, and the token opens to it;
/// - every single-byte change of the token, its truncation by one byte and its extension
///   by one byte fail to open; so do another binding and an expired clock.
pub fn request_state(data: &[u8]) {
    let sealer = StateSealer::new(KeyRing::new(StateKey::new(7, &[0x5a; 32])));
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_900_000_000);
    let binding = Binding::new(
        "tools/call",
        "fuzz",
        Some(&serde_json::json!({"n": data.len()})),
    );

    let text = String::from_utf8_lossy(data);
    assert!(
        sealer.open(&text, &binding, now).is_err(),
        "a forged token opened"
    );

    let Ok(token) = sealer.seal(&binding, data, now) else {
        return; // Over the size limit.
    };
    assert_eq!(
        sealer.open(&token, &binding, now).ok().as_deref(),
        Some(data)
    );

    let bytes = token.as_bytes();
    let pick = data.first().copied().unwrap_or(0);
    for i in 0..bytes.len() {
        // Another printable ASCII byte (so the token stays text), varied by the input.
        let mut replacement = 0x21 + (bytes[i].wrapping_add(pick).wrapping_add(i as u8) % 94);
        if replacement == bytes[i] {
            replacement = if bytes[i] == b'A' { b'B' } else { b'A' };
        }
        let mut changed = bytes.to_vec();
        changed[i] = replacement;
        let changed = String::from_utf8_lossy(&changed);
        assert!(
            sealer.open(&changed, &binding, now).is_err(),
            "byte {i} changed to {replacement:#x} still opens"
        );
    }
    assert!(
        sealer
            .open(&token[..token.len() - 1], &binding, now)
            .is_err()
    );
    for extra in ["A", "=", "."] {
        assert!(
            sealer
                .open(&format!("{token}{extra}"), &binding, now)
                .is_err()
        );
    }
    let other = Binding::new(
        "tools/call",
        "fuzz2",
        Some(&serde_json::json!({"n": data.len()})),
    );
    assert!(sealer.open(&token, &other, now).is_err());
    let later = now + sealer.config().ttl + Duration::from_secs(3600);
    assert!(sealer.open(&token, &binding, later).is_err());
}

/// A colour, for [`FuzzForm`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum FuzzColor {
    Red,
    Green,
}

/// A form with one field of each kind the elicitation builder supports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
struct FuzzForm {
    name: String,
    age: u32,
    score: f64,
    verified: bool,
    color: FuzzColor,
    colors: Vec<FuzzColor>,
    #[schemars(email)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    email: Option<String>,
}

/// The elicitation form built from a Rust type and the check of a client's answer against
/// it (`decode_answer`). The input is an `ElicitResult` (or its `content`) as JSON:
///
/// - the form of `FuzzForm` builds;
/// - reading an arbitrary answer never panics;
/// - an accepted answer, written back as content, reads back to the same value.
pub fn elicit_answer(data: &[u8]) {
    let form = FuzzForm::form();
    assert!(form.is_ok(), "the fuzz form builds: {form:?}");
    let Ok(form) = form else { return };
    let results: Vec<ElicitResult> = match serde_json::from_slice::<Value>(data) {
        Ok(value) => {
            let mut out = Vec::new();
            if let Ok(r) = serde_json::from_value::<ElicitResult>(value.clone()) {
                out.push(r);
            }
            if let Ok(content) = serde_json::from_value::<BTreeMap<String, ElicitValue>>(value)
                && let Ok(r) = serde_json::from_value::<ElicitResult>(
                    serde_json::json!({"action": "accept", "content": content}),
                )
            {
                out.push(r);
            }
            out
        }
        Err(_) => Vec::new(),
    };
    for result in results {
        let Ok(Elicitation::Accept(value)) = decode_answer::<FuzzForm>(&form, &result) else {
            continue;
        };
        assert!(matches!(result.action, ElicitAction::Accept));
        let content = serde_json::to_value(&value)
            .ok()
            .and_then(|v| serde_json::from_value::<BTreeMap<String, ElicitValue>>(v).ok());
        let Some(content) = content else {
            continue; // e.g. a non-finite score cannot be written back.
        };
        let back = serde_json::from_value::<ElicitResult>(
            serde_json::json!({"action": "accept", "content": content}),
        );
        if let Ok(back) = back {
            let again = decode_answer::<FuzzForm>(&form, &back);
            assert_eq!(
                again.ok(),
                Some(Elicitation::Accept(value)),
                "an accepted answer reads back"
            );
        }
    }
}
