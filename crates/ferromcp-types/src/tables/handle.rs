//! A spec method found once, for every question a request asks about it.

use std::fmt;

use serde_json::{Map, Value};

use super::data::MethodEntry;
use super::generated::ALL_METHODS;
use super::shape::{self, RESULT_TYPE};
use super::shape_validate::ShapeValidator;
use super::validate::{self, ParamsError, Target};
use super::{Kind, MethodKind, data, method_index};
use crate::ProtocolVersion;

/// A spec method (one that some revision defines), found by [`method`]: the kernel looks the
/// name up once per request and asks the handle the rest (whether the negotiated revision
/// defines it, params validation, result shaping and validation), which the free functions of
/// [`tables`](super) answer by looking the name up each time.
///
/// ```
/// use ferromcp_types::ProtocolVersion;
/// use ferromcp_types::tables::{self, Kind};
/// use serde_json::{Map, Value, json};
///
/// let v = ProtocolVersion::V2025_11_25;
/// let call = tables::method("tools/call").unwrap();
/// assert_eq!(call.name(), "tools/call");
/// assert!(call.exists_as(Kind::ClientRequest, v));
/// assert!(call.validate_params(v, Some(&json!({"name": "echo"}))).is_ok());
///
/// let mut result: Map<String, Value> = serde_json::from_value(json!({
///     "content": [{"type": "text", "text": "hi", "x": 1}], "ttlMs": 5
/// })).unwrap();
/// call.shape_and_validate_result(v, &mut result).unwrap();
/// assert_eq!(Value::Object(result), json!({"content": [{"type": "text", "text": "hi"}]}));
///
/// assert!(tables::method("acme/custom").is_none());
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Method {
    /// The index in `ALL_METHODS` (and in every revision's method entries).
    index: u16,
}

/// The spec method `name`, or `None` for a custom method (no revision defines it): what
/// [`is_spec_method`](super::is_spec_method) answers, with a handle for the other questions.
///
/// ```
/// use ferromcp_types::tables;
///
/// assert!(tables::method("ping").is_some());
/// assert!(tables::method("acme/ping").is_none());
/// ```
pub fn method(name: &str) -> Option<Method> {
    let index = u16::try_from(method_index(name)?).ok()?;
    Some(Method { index })
}

impl Method {
    /// The method's name.
    ///
    /// ```
    /// use ferromcp_types::tables;
    ///
    /// assert_eq!(tables::method("tools/list").map(|m| m.name()), Some("tools/list"));
    /// ```
    pub fn name(self) -> &'static str {
        ALL_METHODS
            .get(usize::from(self.index))
            .copied()
            .unwrap_or_default()
    }

    /// The method's entry at revision `v` (empty when `v` does not define it).
    fn entry(self, v: ProtocolVersion) -> &'static MethodEntry {
        data(v)
            .methods
            .get(usize::from(self.index))
            .unwrap_or(&MethodEntry::ABSENT)
    }

    /// The kinds the method has at revision `v`, or `None` when `v` does not define it (as
    /// [`method_kind`](super::method_kind)).
    ///
    /// ```
    /// use ferromcp_types::{ProtocolVersion, tables::{self, Kind}};
    ///
    /// let ping = tables::method("ping").unwrap();
    /// let kind = ping.kind(ProtocolVersion::V2025_06_18).unwrap();
    /// assert!(kind.contains(Kind::ClientRequest) && kind.contains(Kind::ServerRequest));
    /// assert!(ping.kind(ProtocolVersion::V2026_07_28).is_none());
    /// ```
    pub fn kind(self, v: ProtocolVersion) -> Option<MethodKind> {
        let bits = self.entry(v).kinds;
        (bits != 0).then_some(MethodKind { bits })
    }

    /// Whether revision `v` defines the method (as [`exists`](super::exists)).
    ///
    /// ```
    /// use ferromcp_types::{ProtocolVersion, tables};
    ///
    /// let ping = tables::method("ping").unwrap();
    /// assert!(ping.exists(ProtocolVersion::V2025_11_25));
    /// assert!(!ping.exists(ProtocolVersion::V2026_07_28));
    /// ```
    pub fn exists(self, v: ProtocolVersion) -> bool {
        self.entry(v).kinds != 0
    }

    /// Whether revision `v` defines the method as a message of `kind` (as
    /// [`exists_as`](super::exists_as)).
    ///
    /// ```
    /// use ferromcp_types::{ProtocolVersion, tables::{self, Kind}};
    ///
    /// let call = tables::method("tools/call").unwrap();
    /// assert!(call.exists_as(Kind::ClientRequest, ProtocolVersion::V2025_11_25));
    /// assert!(!call.exists_as(Kind::ServerRequest, ProtocolVersion::V2025_11_25));
    /// ```
    pub fn exists_as(self, kind: Kind, v: ProtocolVersion) -> bool {
        self.entry(v).kinds & kind.bit() != 0
    }

    /// Validates the method's params at revision `v` (as
    /// [`validate_params`](super::validate_params); absent params validate as `{}`, and a
    /// revision that does not define the method lets anything pass).
    ///
    /// ```
    /// use ferromcp_types::{ProtocolVersion, tables};
    /// use serde_json::json;
    ///
    /// let call = tables::method("tools/call").unwrap();
    /// let err = call.validate_params(ProtocolVersion::V2025_06_18, Some(&json!({}))).unwrap_err();
    /// assert_eq!(err.pointer(), "/name");
    /// ```
    pub fn validate_params(
        self,
        v: ProtocolVersion,
        params: Option<&Value>,
    ) -> Result<(), ParamsError> {
        let schema = self.entry(v).params;
        validate::check(schema, self.name(), v, Target::Params, params)
    }

    /// [`validate_params`](Self::validate_params) of params as JSON text (one value, as a
    /// `RawJson` holds it): the text is checked as it is, without building a `Value`, and is
    /// parsed only when it does not match, for the same error report.
    ///
    /// ```
    /// use ferromcp_types::{ProtocolVersion, tables};
    ///
    /// let call = tables::method("tools/call").unwrap();
    /// let v = ProtocolVersion::V2025_06_18;
    /// assert!(call.validate_params_raw(v, Some(r#"{"name":"add"}"#)).is_ok());
    /// let err = call.validate_params_raw(v, Some("{}")).unwrap_err();
    /// assert_eq!(err.pointer(), "/name");
    /// ```
    pub fn validate_params_raw(
        self,
        v: ProtocolVersion,
        params: Option<&str>,
    ) -> Result<(), ParamsError> {
        let schema = self.entry(v).params;
        validate::check_raw(schema, self.name(), v, Target::Params, params)
    }

    /// Validates the params of the method as a notification at revision `v` (as
    /// [`validate_notification_params`](super::validate_notification_params): passes when
    /// `v` does not define the method as a notification).
    ///
    /// ```
    /// use ferromcp_types::{ProtocolVersion, tables};
    /// use serde_json::json;
    ///
    /// let v = ProtocolVersion::V2025_06_18;
    /// let progress = tables::method("notifications/progress").unwrap();
    /// assert!(progress.validate_notification_params(v, Some(&json!({}))).is_err());
    /// let call = tables::method("tools/call").unwrap();
    /// assert!(call.validate_notification_params(v, Some(&json!({}))).is_ok());
    /// ```
    pub fn validate_notification_params(
        self,
        v: ProtocolVersion,
        params: Option<&Value>,
    ) -> Result<(), ParamsError> {
        match self.kind(v) {
            Some(kind) if kind.is_notification() => self.validate_params(v, params),
            _ => Ok(()),
        }
    }

    /// Shapes a result of the method for revision `v`, in place (as
    /// [`shape_result`](super::shape_result)).
    ///
    /// ```
    /// use ferromcp_types::{ProtocolVersion, tables};
    /// use serde_json::{Map, Value, json};
    ///
    /// let mut r: Map<String, Value> =
    ///     serde_json::from_value(json!({"tools": [], "ttlMs": 5000})).unwrap();
    /// let list = tables::method("tools/list").unwrap();
    /// list.shape_result(ProtocolVersion::V2025_11_25, &mut r);
    /// assert_eq!(Value::Object(r), json!({"tools": []}));
    /// ```
    pub fn shape_result(self, v: ProtocolVersion, result: &mut Map<String, Value>) {
        shape::shape(self.entry(v).result, v, result);
    }

    /// Validates a result of the method against revision `v`'s result type (as
    /// [`validate_result`](super::validate_result)).
    ///
    /// ```
    /// use ferromcp_types::{ProtocolVersion, tables};
    /// use serde_json::json;
    ///
    /// let call = tables::method("tools/call").unwrap();
    /// let err = call.validate_result(ProtocolVersion::V2025_11_25, &json!({})).unwrap_err();
    /// assert!(err.to_string().contains("tools/call"));
    /// ```
    pub fn validate_result(self, v: ProtocolVersion, result: &Value) -> Result<(), ParamsError> {
        let schema = self.entry(v).result;
        validate::check(schema, self.name(), v, Target::Result, Some(result))
    }

    /// Whether the JSON text of a result of the method (one object, as serde_json writes it
    /// or as received) is already what [`Method::shape_and_validate_result`] would make of
    /// it at revision `v`: valid, with nothing that shaping would drop (and, before
    /// 2026-07-28, no top-level `resultType`). One pass over the text, reading each byte once.
    ///
    /// `true` is sure; `false` means "not sure": the result may still be valid (the walk
    /// answers only for the usual shapes of results), and the caller shapes and validates it
    /// as a value, which gives the exact outcome. At 2026-07-28 the text must already carry
    /// what the kernel adds (`resultType`, ...): the walk checks the text as it goes out.
    ///
    /// ```
    /// use ferromcp_types::{ProtocolVersion, tables};
    ///
    /// let call = tables::method("tools/call").unwrap();
    /// let v = ProtocolVersion::V2025_11_25;
    /// assert!(call.result_text_fits(v, r#"{"content":[{"type":"text","text":"hi"}]}"#));
    /// // Invalid (no `text`), or something shaping drops: not sure.
    /// assert!(!call.result_text_fits(v, r#"{"content":[{"type":"text"}]}"#));
    /// assert!(!call.result_text_fits(v, r#"{"content":[],"resultType":"complete"}"#));
    /// ```
    pub fn result_text_fits(self, v: ProtocolVersion, text: &str) -> bool {
        match self.entry(v).result {
            Some(root) => super::fit::result_fits(data(v), root, text, v.is_modern()),
            None => false,
        }
    }

    /// [`result_text_fits`](Self::result_text_fits), also sure of one change: before
    /// 2026-07-28, text that fits but for a top-level `resultType` (the result of a
    /// 2026-07-28 peer, relayed to an older client) comes back without that member, which is
    /// what [`Method::shape_and_validate_result`] would make of it. `None` means "not sure",
    /// as `false` there.
    ///
    /// ```
    /// use std::borrow::Cow;
    /// use ferromcp_types::{ProtocolVersion, tables};
    ///
    /// let call = tables::method("tools/call").unwrap();
    /// let v = ProtocolVersion::V2025_11_25;
    /// let text = r#"{"content":[],"resultType":"complete","_meta":{"a":1}}"#;
    /// assert_eq!(call.fitted_result_text(v, text).as_deref(), Some(r#"{"content":[],"_meta":{"a":1}}"#));
    /// let plain = r#"{"content":[]}"#;
    /// assert!(matches!(call.fitted_result_text(v, plain), Some(Cow::Borrowed(_))));
    /// // 2026-07-28 keeps `resultType`; invalid text is not sure.
    /// let modern = ProtocolVersion::V2026_07_28;
    /// assert!(call.fitted_result_text(modern, r#"{"content":[],"bogus":1}"#).is_none());
    /// ```
    pub fn fitted_result_text<'t>(
        self,
        v: ProtocolVersion,
        text: &'t str,
    ) -> Option<std::borrow::Cow<'t, str>> {
        let root = self.entry(v).result?;
        super::fit::result_fitted(data(v), root, text, v.is_modern())
    }

    /// Shapes a result of the method for revision `v` and validates the shaped result, in one
    /// walk where it can: the same shaped `result` and the same outcome (and error) as
    /// [`Method::shape_result`] followed by [`Method::validate_result`], for about the cost of
    /// one of them. (When the result fails, the error is built by the plain walks.)
    ///
    /// At 2026-07-28 a result without `resultType` gains it after shaping, which the check
    /// must see: such a result is shaped, then checked, in two walks.
    ///
    /// ```
    /// use ferromcp_types::{ProtocolVersion, tables};
    /// use serde_json::{Map, Value, json};
    ///
    /// let v = ProtocolVersion::V2025_11_25;
    /// let call = tables::method("tools/call").unwrap();
    /// let mut ok: Map<String, Value> = serde_json::from_value(json!({
    ///     "content": [{"type": "text", "text": "hi"}], "resultType": "complete"
    /// })).unwrap();
    /// call.shape_and_validate_result(v, &mut ok).unwrap();
    /// assert_eq!(Value::Object(ok), json!({"content": [{"type": "text", "text": "hi"}]}));
    ///
    /// let mut bad: Map<String, Value> =
    ///     serde_json::from_value(json!({"content": [{"type": "text"}]})).unwrap();
    /// let err = call.shape_and_validate_result(v, &mut bad).unwrap_err();
    /// assert_eq!(err.pointer(), "/content/0/text");
    /// ```
    pub fn shape_and_validate_result(
        self,
        v: ProtocolVersion,
        result: &mut Map<String, Value>,
    ) -> Result<(), ParamsError> {
        let Some(root) = self.entry(v).result else {
            // Nothing to check; shaping applies the `resultType` default of 2026-07-28.
            self.shape_result(v, result);
            return Ok(());
        };
        // Checked as a value; moving the map in and out does not copy it.
        let mut value = Value::Object(std::mem::take(result));
        let outcome = if v >= ProtocolVersion::V2026_07_28 && value.get(RESULT_TYPE).is_none() {
            // `resultType` will be added after the walk: shape, then check.
            if let Value::Object(map) = &mut value {
                self.shape_result(v, map);
            }
            self.validate_result(v, &value)
        } else {
            let c = data(v);
            let (mut ok, walked) = ShapeValidator::new(c).root(root, &mut value);
            // What shaping does after its walk (`resultType`); a change is checked anew.
            if let Value::Object(map) = &mut value
                && shape::finish(v, walked, map)
            {
                ok = super::matches::matches(c, root, &value, 0);
            }
            if ok {
                Ok(())
            } else {
                self.validate_result(v, &value)
            }
        };
        if let Value::Object(map) = value {
            *result = map;
        }
        outcome
    }
}

impl fmt::Debug for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Method").field(&self.name()).finish()
    }
}
