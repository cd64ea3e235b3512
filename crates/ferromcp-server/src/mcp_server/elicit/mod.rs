//! Elicitation forms from Rust types ([`ElicitForm`]) and the requests to the client as
//! methods of [`RequestContext`] (elicitation, sampling, roots; see
//! [`RequestContext::elicit_form`] for the two eras).

mod convert;
mod live;
pub(crate) mod validate;

use std::any::TypeId;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::{OnceLock, PoisonError, RwLock};

use ferromcp_types::jsonrpc::ErrorObject;
use ferromcp_types::mcp::{ElicitAction, ElicitResult, ElicitValue, ElicitationSchema};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::schema::schema_object_for;
#[allow(unused_imports)] // for the docs
use crate::{context::RequestContext, mcp_server::Ask};

#[cfg(any(test, fuzzing))]
pub(crate) use convert::form_from_schema;
pub(crate) use live::check_capability;

/// The user's answer to a form: the submitted value, or a refusal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Elicitation<T> {
    /// The user submitted the form; the content fits the form and deserialized into `T`.
    Accept(T),
    /// The user explicitly declined.
    Decline,
    /// The user dismissed the request without choosing.
    Cancel,
}

impl<T> Elicitation<T> {
    /// The submitted value, if the user accepted.
    pub fn accepted(self) -> Option<T> {
        match self {
            Self::Accept(v) => Some(v),
            Self::Decline | Self::Cancel => None,
        }
    }
}

/// A type that is not a valid elicitation form: which field, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid elicitation form ({field}): {reason}")]
#[non_exhaustive]
pub struct FormSchemaError {
    /// The offending field (or "the form").
    pub field: String,
    /// What is wrong with it.
    pub reason: String,
}

impl FormSchemaError {
    pub(crate) fn new(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            reason: reason.into(),
        }
    }

    /// The protocol error a handler sees: -32603 (a server bug, logged with the details).
    pub fn to_error_object(&self) -> ErrorObject {
        tracing::error!(error = %self, "a type used as an elicitation form is not a valid form");
        ErrorObject::internal_error("Internal error")
    }
}

/// A Rust type that can be asked for with an elicitation form.
///
/// A form is any `T: schemars::JsonSchema + serde::de::DeserializeOwned` ([`ElicitForm`] is
/// implemented for all of them) whose schema is a flat object of primitives: strings (with
/// `format` email, uri, date or date-time, and length bounds), numbers, integers, booleans,
/// and string enums, single- or multi-select (`Vec<Enum>`), untitled (unit variants) or
/// titled (`#[schemars(title = "…")]` on the variants). Doc comments become descriptions and
/// `#[serde(default)]` values become defaults. Nested structs and arrays of anything but enum
/// options are rejected with a [`FormSchemaError`] naming the field.
///
/// ```
/// use ferromcp_server::mcp_server::{ElicitForm, Elicitation};
/// use ferromcp_server::RequestContext;
///
/// /// Who you are.
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Contact {
///     /// Your user name.
///     username: String,
///     /// Where to write to you.
///     #[schemars(email)]
///     email: String,
/// }
///
/// let form = Contact::form().unwrap();
/// assert_eq!(form.required, Some(vec!["username".into(), "email".into()]));
///
/// async fn sign_up(ctx: RequestContext) -> String {
///     match ctx.elicit_form::<Contact>("Please sign up").await {
///         Ok(Elicitation::Accept(c)) => format!("welcome, {}", c.username),
///         Ok(Elicitation::Decline | Elicitation::Cancel) => "maybe later".into(),
///         Err(e) => format!("could not ask: {}", e.message),
///     }
/// }
/// # let _ = sign_up;
/// ```
pub trait ElicitForm: Sized + Send + 'static {
    /// The form (`requestedSchema`), built once per type.
    fn form() -> Result<ElicitationSchema, FormSchemaError>;

    /// Reads an accepted answer: checks `content` against `form`, then deserializes it.
    fn from_content(
        form: &ElicitationSchema,
        content: &BTreeMap<String, ElicitValue>,
    ) -> Result<Self, String>;
}

type FormCache = RwLock<HashMap<TypeId, Result<ElicitationSchema, FormSchemaError>>>;

fn cache() -> &'static FormCache {
    static CACHE: OnceLock<FormCache> = OnceLock::new();
    CACHE.get_or_init(FormCache::default)
}

impl<T: JsonSchema + DeserializeOwned + Send + 'static> ElicitForm for T {
    fn form() -> Result<ElicitationSchema, FormSchemaError> {
        let id = TypeId::of::<T>();
        if let Some(hit) = cache()
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&id)
        {
            return hit.clone();
        }
        let built = convert::form_from_schema(&schema_object_for::<T>());
        cache()
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, built.clone());
        built
    }

    fn from_content(
        form: &ElicitationSchema,
        content: &BTreeMap<String, ElicitValue>,
    ) -> Result<Self, String> {
        let object = validate::check_content(form, content)?;
        T::deserialize(Value::Object(object)).map_err(|e| {
            tracing::debug!(error = %e, "an elicitation answer does not deserialize");
            crate::deserialize_reason::serde_reason(&e)
        })
    }
}

/// Checks that `T` is a valid elicitation form (for a test or a start-up check).
///
/// ```
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Inner { a: String }
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Nested { inner: Inner }
///
/// let e = ferromcp_server::mcp_server::check_form::<Nested>().unwrap_err();
/// assert_eq!(e.field, "inner");
/// ```
pub fn check_form<T: ElicitForm>() -> Result<(), FormSchemaError> {
    T::form().map(|_| ())
}

/// Reads the client's answer to the form `form` as an [`Elicitation<T>`]; an accepted
/// answer whose content does not fit is an error naming the field.
pub fn decode_answer<T: ElicitForm>(
    form: &ElicitationSchema,
    result: &ElicitResult,
) -> Result<Elicitation<T>, String> {
    match result.action {
        ElicitAction::Accept => {
            let empty = BTreeMap::new();
            let content = result.content.as_ref().unwrap_or(&empty);
            T::from_content(form, content).map(Elicitation::Accept)
        }
        ElicitAction::Decline => Ok(Elicitation::Decline),
        _ => Ok(Elicitation::Cancel),
    }
}

impl<T> fmt::Display for Elicitation<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Accept(_) => "accept",
            Self::Decline => "decline",
            Self::Cancel => "cancel",
        })
    }
}
