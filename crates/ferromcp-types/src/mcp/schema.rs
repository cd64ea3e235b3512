//! The restricted JSON Schema of elicitation forms: string, number/integer, boolean, and
//! single- or multi-select enums (titled, untitled, and the legacy `enumNames` form).

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::serde_util::{TypeTagged, opt_f64_num, setters, str_field};

/// `format` of a [`StringSchema`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub enum StringFormat {
    /// `"email"`.
    #[serde(rename = "email")]
    Email,
    /// `"uri"`.
    #[serde(rename = "uri")]
    Uri,
    /// `"date"`.
    #[serde(rename = "date")]
    Date,
    /// `"date-time"`.
    #[serde(rename = "date-time")]
    DateTime,
}

/// A string field (`"type": "string"`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct StringSchema {
    /// A display name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum length.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u64>,
    /// Maximum length.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u64>,
    /// A format.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<StringFormat>,
    /// The default value (since 2025-11-25).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

impl StringSchema {
    /// A plain string field.
    pub fn new() -> Self {
        Self::default()
    }
}
setters!(StringSchema {
    with_title => title: String,
    with_description => description: String,
    with_min_length => min_length: u64,
    with_max_length => max_length: u64,
    with_format => format: StringFormat,
    with_default => default: String,
});

/// `type` of a [`NumberSchema`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum NumberType {
    /// `"number"`.
    #[default]
    Number,
    /// `"integer"`.
    Integer,
}

/// A number field (`"type": "number"` or `"integer"`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct NumberSchema {
    /// `type`: number or integer.
    #[serde(rename = "type")]
    pub kind: NumberType,
    /// A display name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum value.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "opt_f64_num"
    )]
    pub minimum: Option<f64>,
    /// Maximum value.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "opt_f64_num"
    )]
    pub maximum: Option<f64>,
    /// The default value (since 2025-11-25).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "opt_f64_num"
    )]
    pub default: Option<f64>,
}

impl NumberSchema {
    /// A number or integer field.
    pub fn new(kind: NumberType) -> Self {
        Self {
            kind,
            ..Self::default()
        }
    }
}
setters!(NumberSchema {
    with_title => title: String,
    with_description => description: String,
    with_minimum => minimum: f64,
    with_maximum => maximum: f64,
    with_default => default: f64,
});

/// A boolean field (`"type": "boolean"`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct BooleanSchema {
    /// A display name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The default value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<bool>,
}

impl BooleanSchema {
    /// A boolean field.
    pub fn new() -> Self {
        Self::default()
    }
}
setters!(BooleanSchema {
    with_title => title: String,
    with_description => description: String,
    with_default => default: bool,
});

/// One option of a titled enum: `{ "const": value, "title": label }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct EnumOption {
    /// The value.
    #[serde(rename = "const")]
    pub value: String,
    /// The label shown.
    pub title: String,
}

impl EnumOption {
    /// An option.
    pub fn new(value: impl Into<String>, title: impl Into<String>) -> Self {
        Self {
            value: value.into(),
            title: title.into(),
        }
    }
}

/// A single-select enum without titles (`"type": "string"`, `enum`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct UntitledSingleSelectEnumSchema {
    /// A display name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The values.
    #[serde(rename = "enum")]
    pub values: Vec<String>,
    /// The default value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

impl UntitledSingleSelectEnumSchema {
    /// Choose one of `values`.
    pub fn new(values: Vec<String>) -> Self {
        Self {
            values,
            ..Self::default()
        }
    }
}
setters!(UntitledSingleSelectEnumSchema {
    with_title => title: String,
    with_description => description: String,
    with_default => default: String,
});

/// A single-select enum with titles (`"type": "string"`, `oneOf`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TitledSingleSelectEnumSchema {
    /// A display name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The options.
    pub one_of: Vec<EnumOption>,
    /// The default value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

impl TitledSingleSelectEnumSchema {
    /// Choose one of `options`.
    pub fn new(options: Vec<EnumOption>) -> Self {
        Self {
            one_of: options,
            ..Self::default()
        }
    }
}
setters!(TitledSingleSelectEnumSchema {
    with_title => title: String,
    with_description => description: String,
    with_default => default: String,
});

/// `type` of untitled multi-select items: always `"string"`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub enum StringType {
    /// `"string"`.
    #[default]
    #[serde(rename = "string")]
    String,
}

/// `items` of an [`UntitledMultiSelectEnumSchema`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct UntitledEnumItems {
    /// `type`: always `"string"`.
    #[serde(rename = "type")]
    pub kind: StringType,
    /// The values.
    #[serde(rename = "enum")]
    pub values: Vec<String>,
}

impl UntitledEnumItems {
    /// Items drawn from `values`.
    pub fn new(values: Vec<String>) -> Self {
        Self {
            kind: StringType::String,
            values,
        }
    }
}

/// `items` of a [`TitledMultiSelectEnumSchema`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TitledEnumItems {
    /// The options.
    pub any_of: Vec<EnumOption>,
}

impl TitledEnumItems {
    /// Items drawn from `options`.
    pub fn new(options: Vec<EnumOption>) -> Self {
        Self { any_of: options }
    }
}

/// A multi-select enum without titles (`"type": "array"`, `items.enum`; 2025-11-25).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct UntitledMultiSelectEnumSchema {
    /// A display name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum number of selections.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// Maximum number of selections.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The selectable values.
    pub items: UntitledEnumItems,
    /// The default selection.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<Vec<String>>,
}

impl UntitledMultiSelectEnumSchema {
    /// Choose any of `values`.
    pub fn new(values: Vec<String>) -> Self {
        Self {
            items: UntitledEnumItems::new(values),
            ..Self::default()
        }
    }
}
setters!(UntitledMultiSelectEnumSchema {
    with_title => title: String,
    with_description => description: String,
    with_min_items => min_items: u64,
    with_max_items => max_items: u64,
    with_default => default: Vec<String>,
});

/// A multi-select enum with titles (`"type": "array"`, `items.anyOf`; 2025-11-25).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TitledMultiSelectEnumSchema {
    /// A display name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum number of selections.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// Maximum number of selections.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The selectable options.
    pub items: TitledEnumItems,
    /// The default selection.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<Vec<String>>,
}

impl TitledMultiSelectEnumSchema {
    /// Choose any of `options`.
    pub fn new(options: Vec<EnumOption>) -> Self {
        Self {
            items: TitledEnumItems::new(options),
            ..Self::default()
        }
    }
}
setters!(TitledMultiSelectEnumSchema {
    with_title => title: String,
    with_description => description: String,
    with_min_items => min_items: u64,
    with_max_items => max_items: u64,
    with_default => default: Vec<String>,
});

/// The legacy titled enum (`enum` + `enumNames`, 2025-06-18; deprecated since 2025-11-25).
/// An `enum` without `enumNames` decodes as [`UntitledSingleSelectEnumSchema`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct LegacyTitledEnumSchema {
    /// A display name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The values.
    #[serde(rename = "enum")]
    pub values: Vec<String>,
    /// Labels for the values, in the same order.
    pub enum_names: Vec<String>,
    /// The default value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

impl LegacyTitledEnumSchema {
    /// Choose one of `values`, shown as `names`.
    pub fn new(values: Vec<String>, names: Vec<String>) -> Self {
        Self {
            values,
            enum_names: names,
            ..Self::default()
        }
    }
}
setters!(LegacyTitledEnumSchema {
    with_title => title: String,
    with_description => description: String,
    with_default => default: String,
});

/// One field of an elicitation form.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schemars", schemars(tag = "type"))]
#[non_exhaustive]
pub enum PrimitiveSchemaDefinition {
    /// A string.
    #[cfg_attr(feature = "schemars", schemars(rename = "string"))]
    String(StringSchema),
    /// A boolean.
    #[cfg_attr(feature = "schemars", schemars(rename = "boolean"))]
    Boolean(BooleanSchema),
    /// A single-select enum without titles.
    #[cfg_attr(feature = "schemars", schemars(rename = "string"))]
    UntitledSingleSelect(UntitledSingleSelectEnumSchema),
    /// A single-select enum with titles.
    #[cfg_attr(feature = "schemars", schemars(rename = "string"))]
    TitledSingleSelect(TitledSingleSelectEnumSchema),
    /// A multi-select enum without titles.
    #[cfg_attr(feature = "schemars", schemars(rename = "array"))]
    UntitledMultiSelect(UntitledMultiSelectEnumSchema),
    /// A multi-select enum with titles.
    #[cfg_attr(feature = "schemars", schemars(rename = "array"))]
    TitledMultiSelect(TitledMultiSelectEnumSchema),
    /// The legacy `enumNames` enum.
    #[cfg_attr(feature = "schemars", schemars(rename = "string"))]
    LegacyTitledEnum(LegacyTitledEnumSchema),
    /// A number or integer (its `type` is its own field).
    #[cfg_attr(feature = "schemars", schemars(untagged))]
    Number(NumberSchema),
}

macro_rules! from_schema {
    ($($ty:ty => $variant:ident),* $(,)?) => {$(
        impl From<$ty> for PrimitiveSchemaDefinition {
            fn from(v: $ty) -> Self {
                Self::$variant(v)
            }
        }
    )*};
}
from_schema!(
    StringSchema => String,
    NumberSchema => Number,
    BooleanSchema => Boolean,
    UntitledSingleSelectEnumSchema => UntitledSingleSelect,
    TitledSingleSelectEnumSchema => TitledSingleSelect,
    UntitledMultiSelectEnumSchema => UntitledMultiSelect,
    TitledMultiSelectEnumSchema => TitledMultiSelect,
    LegacyTitledEnumSchema => LegacyTitledEnum,
);

impl Serialize for PrimitiveSchemaDefinition {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::String(inner) => TypeTagged {
                tag: "string",
                inner,
            }
            .serialize(s),
            Self::Number(n) => n.serialize(s),
            Self::Boolean(inner) => TypeTagged {
                tag: "boolean",
                inner,
            }
            .serialize(s),
            Self::UntitledSingleSelect(inner) => TypeTagged {
                tag: "string",
                inner,
            }
            .serialize(s),
            Self::TitledSingleSelect(inner) => TypeTagged {
                tag: "string",
                inner,
            }
            .serialize(s),
            Self::UntitledMultiSelect(inner) => TypeTagged {
                tag: "array",
                inner,
            }
            .serialize(s),
            Self::TitledMultiSelect(inner) => TypeTagged {
                tag: "array",
                inner,
            }
            .serialize(s),
            Self::LegacyTitledEnum(inner) => TypeTagged {
                tag: "string",
                inner,
            }
            .serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for PrimitiveSchemaDefinition {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        let has = |k: &str| v.get(k).is_some();
        let r = match str_field(&v, "type") {
            Some("string") if has("oneOf") => {
                TitledSingleSelectEnumSchema::deserialize(v).map(Self::TitledSingleSelect)
            }
            Some("string") if has("enum") && has("enumNames") => {
                LegacyTitledEnumSchema::deserialize(v).map(Self::LegacyTitledEnum)
            }
            Some("string") if has("enum") => {
                UntitledSingleSelectEnumSchema::deserialize(v).map(Self::UntitledSingleSelect)
            }
            Some("string") => StringSchema::deserialize(v).map(Self::String),
            Some("number" | "integer") => NumberSchema::deserialize(v).map(Self::Number),
            Some("boolean") => BooleanSchema::deserialize(v).map(Self::Boolean),
            Some("array") if v.get("items").is_some_and(|i| i.get("anyOf").is_some()) => {
                TitledMultiSelectEnumSchema::deserialize(v).map(Self::TitledMultiSelect)
            }
            Some("array") => {
                UntitledMultiSelectEnumSchema::deserialize(v).map(Self::UntitledMultiSelect)
            }
            Some(other) => {
                return Err(D::Error::custom(format!(
                    "unsupported elicitation field type `{other}`"
                )));
            }
            None => {
                return Err(D::Error::custom(
                    "elicitation field without a string `type`",
                ));
            }
        };
        r.map_err(D::Error::custom)
    }
}
