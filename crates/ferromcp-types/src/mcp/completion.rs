//! Argument completion: `completion/complete`.

use std::collections::BTreeMap;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::meta::{Meta, ResultType};
use super::serde_util::{TypeTagged, setters, str_field};

/// A reference to a prompt (`"type": "ref/prompt"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PromptReference {
    /// The prompt's name.
    pub name: String,
    /// A display name (since 2025-06-18).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

impl PromptReference {
    /// A reference to prompt `name`.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            title: None,
        }
    }
}
setters!(PromptReference { with_title => title: String });

/// A reference to a resource template (`"type": "ref/resource"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourceTemplateReference {
    /// The URI or URI template.
    pub uri: String,
}

impl ResourceTemplateReference {
    /// A reference to `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        Self { uri: uri.into() }
    }
}

/// What is being completed.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schemars", schemars(tag = "type"))]
#[non_exhaustive]
pub enum CompletionReference {
    /// `"ref/prompt"`.
    #[cfg_attr(feature = "schemars", schemars(rename = "ref/prompt"))]
    Prompt(PromptReference),
    /// `"ref/resource"`.
    #[cfg_attr(feature = "schemars", schemars(rename = "ref/resource"))]
    Resource(ResourceTemplateReference),
}

impl Serialize for CompletionReference {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Prompt(inner) => TypeTagged {
                tag: "ref/prompt",
                inner,
            }
            .serialize(s),
            Self::Resource(inner) => TypeTagged {
                tag: "ref/resource",
                inner,
            }
            .serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for CompletionReference {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        match str_field(&v, "type") {
            Some("ref/prompt") => PromptReference::deserialize(v).map(Self::Prompt),
            Some("ref/resource") => ResourceTemplateReference::deserialize(v).map(Self::Resource),
            _ => return Err(D::Error::custom("expected `ref/prompt` or `ref/resource`")),
        }
        .map_err(D::Error::custom)
    }
}

/// The argument being completed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct CompletionArgument {
    /// The argument's name.
    pub name: String,
    /// What has been typed so far.
    pub value: String,
}

impl CompletionArgument {
    /// Argument `name` with partial `value`.
    pub fn new(name: impl Into<String>, value: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            value: value.into(),
        }
    }
}

/// Context for a completion (since 2025-06-18).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct CompletionContext {
    /// Arguments already resolved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<BTreeMap<String, String>>,
}

impl CompletionContext {
    /// No context.
    pub fn new() -> Self {
        Self::default()
    }
}
setters!(CompletionContext { with_arguments => arguments: BTreeMap<String, String> });

/// Params of `completion/complete`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CompleteRequestParams {
    /// Request metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// What is being completed.
    #[serde(rename = "ref")]
    pub reference: CompletionReference,
    /// The argument.
    pub argument: CompletionArgument,
    /// Context.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<CompletionContext>,
}

impl CompleteRequestParams {
    /// Complete `argument` of `reference`.
    pub fn new(reference: CompletionReference, argument: CompletionArgument) -> Self {
        Self {
            meta: None,
            reference,
            argument,
            context: None,
        }
    }
}
setters!(CompleteRequestParams { with_meta => meta: Meta, with_context => context: CompletionContext });

/// The completion values.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Completion {
    /// At most 100 values.
    pub values: Vec<String>,
    /// The total number of values, if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether there are more values than returned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}

impl Completion {
    /// These values.
    pub fn new(values: Vec<String>) -> Self {
        Self {
            values,
            total: None,
            has_more: None,
        }
    }
}
setters!(Completion { with_total => total: u64, with_has_more => has_more: bool });

/// Result of `completion/complete`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CompleteResult {
    /// Result metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// `resultType` (2026-07-28).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// The completion.
    pub completion: Completion,
}

impl CompleteResult {
    /// A result.
    pub fn new(completion: Completion) -> Self {
        Self {
            meta: None,
            result_type: None,
            completion,
        }
    }
}
setters!(CompleteResult { with_meta => meta: Meta, with_result_type => result_type: ResultType });
