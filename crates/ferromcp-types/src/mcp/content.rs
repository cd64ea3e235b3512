//! Content blocks (text, image, audio, resource links, embedded resources, tool use and tool
//! results) and their annotations.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::meta::{JsonObject, Meta};
use super::resources::{Resource, ResourceContents};
use super::serde_util::{TypeTagged, opt_f64_num, setters, str_field};

/// The sender or recipient of messages and data in a conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user.
    User,
    /// The assistant (the model).
    Assistant,
}

/// Hints to the client about how to use or display an object.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Annotations {
    /// Who the object is meant for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Role>>,
    /// Importance from 0 (least) to 1 (most).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "opt_f64_num"
    )]
    pub priority: Option<f64>,
    /// When the object was last modified (ISO 8601), since 2025-06-18.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

impl Annotations {
    /// No annotations.
    pub fn new() -> Self {
        Self::default()
    }
}
setters!(Annotations {
    with_audience => audience: Vec<Role>,
    with_priority => priority: f64,
    with_last_modified => last_modified: String,
});

/// Text content (`"type": "text"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// Annotations.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl TextContent {
    /// Text content.
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            annotations: None,
            meta: None,
        }
    }
}
setters!(TextContent { with_annotations => annotations: Annotations, with_meta => meta: Meta });

/// Image or audio data (`"type": "image"` / `"type": "audio"`), base64-encoded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct MediaContent {
    /// Base64-encoded data.
    pub data: String,
    /// The MIME type of the data.
    pub mime_type: String,
    /// Annotations.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl MediaContent {
    /// Base64 `data` of the given MIME type.
    pub fn new(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self {
            data: data.into(),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        }
    }
}
setters!(MediaContent { with_annotations => annotations: Annotations, with_meta => meta: Meta });

/// Image content (`"type": "image"`).
pub type ImageContent = MediaContent;
/// Audio content (`"type": "audio"`, since 2025-03-26).
pub type AudioContent = MediaContent;

/// A resource embedded in a message (`"type": "resource"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct EmbeddedResource {
    /// The resource's contents.
    pub resource: ResourceContents,
    /// Annotations.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl EmbeddedResource {
    /// Embeds `resource`.
    pub fn new(resource: impl Into<ResourceContents>) -> Self {
        Self {
            resource: resource.into(),
            annotations: None,
            meta: None,
        }
    }
}
setters!(EmbeddedResource { with_annotations => annotations: Annotations, with_meta => meta: Meta });

/// A link to a resource (`"type": "resource_link"`, since 2025-06-18): a [`Resource`].
pub type ResourceLink = Resource;

/// A tool call requested by the model in sampling (`"type": "tool_use"`, since 2025-11-25).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolUseContent {
    /// The id of this tool use, matched by a [`ToolResultContent::tool_use_id`].
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The tool's arguments.
    pub input: JsonObject,
    /// Metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ToolUseContent {
    /// A tool use.
    pub fn new(id: impl Into<String>, name: impl Into<String>, input: JsonObject) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            input,
            meta: None,
        }
    }
}
setters!(ToolUseContent { with_meta => meta: Meta });

/// The result of a tool use, sent back to the model (`"type": "tool_result"`, since 2025-11-25).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ToolResultContent {
    /// The [`ToolUseContent::id`] this answers.
    pub tool_use_id: String,
    /// The unstructured result.
    pub content: Vec<ContentBlock>,
    /// The structured result.
    #[serde(
        default,
        deserialize_with = "super::serde_util::some_value",
        skip_serializing_if = "Option::is_none"
    )]
    pub structured_content: Option<Value>,
    /// Whether the tool use failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Metadata.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ToolResultContent {
    /// A tool result.
    pub fn new(tool_use_id: impl Into<String>, content: Vec<ContentBlock>) -> Self {
        Self {
            tool_use_id: tool_use_id.into(),
            content,
            structured_content: None,
            is_error: None,
            meta: None,
        }
    }
}
setters!(ToolResultContent {
    with_structured_content => structured_content: Value,
    with_is_error => is_error: bool,
    with_meta => meta: Meta,
});

/// A content block of a prompt message or tool result, tagged by `"type"`.
///
/// A block with a `type` this version does not know decodes as [`ContentBlock::Unknown`] and
/// encodes back unchanged, so a newer peer's content does not fail the whole message.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schemars", schemars(tag = "type"))]
#[non_exhaustive]
pub enum ContentBlock {
    /// `"text"`.
    #[cfg_attr(feature = "schemars", schemars(rename = "text"))]
    Text(TextContent),
    /// `"image"`.
    #[cfg_attr(feature = "schemars", schemars(rename = "image"))]
    Image(ImageContent),
    /// `"audio"` (since 2025-03-26).
    #[cfg_attr(feature = "schemars", schemars(rename = "audio"))]
    Audio(AudioContent),
    /// `"resource_link"` (since 2025-06-18).
    #[cfg_attr(feature = "schemars", schemars(rename = "resource_link"))]
    ResourceLink(ResourceLink),
    /// `"resource"`.
    #[cfg_attr(feature = "schemars", schemars(rename = "resource"))]
    Resource(EmbeddedResource),
    /// A block of a type this version does not know, kept verbatim (including `type`).
    #[cfg_attr(feature = "schemars", schemars(skip))]
    Unknown(JsonObject),
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text(TextContent::new(text))
    }

    /// An image block.
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::Image(MediaContent::new(data, mime_type))
    }

    /// An audio block.
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::Audio(MediaContent::new(data, mime_type))
    }

    /// The wire `type` of this block.
    pub fn type_name(&self) -> &str {
        match self {
            Self::Text(_) => "text",
            Self::Image(_) => "image",
            Self::Audio(_) => "audio",
            Self::ResourceLink(_) => "resource_link",
            Self::Resource(_) => "resource",
            Self::Unknown(m) => m.get("type").and_then(Value::as_str).unwrap_or(""),
        }
    }

    /// The text, if this is a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text(t) => Some(&t.text),
            _ => None,
        }
    }
}

impl From<TextContent> for ContentBlock {
    fn from(v: TextContent) -> Self {
        Self::Text(v)
    }
}

impl From<EmbeddedResource> for ContentBlock {
    fn from(v: EmbeddedResource) -> Self {
        Self::Resource(v)
    }
}

impl From<Resource> for ContentBlock {
    fn from(v: Resource) -> Self {
        Self::ResourceLink(v)
    }
}

impl Serialize for ContentBlock {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Text(inner) => TypeTagged { tag: "text", inner }.serialize(s),
            Self::Image(inner) => TypeTagged {
                tag: "image",
                inner,
            }
            .serialize(s),
            Self::Audio(inner) => TypeTagged {
                tag: "audio",
                inner,
            }
            .serialize(s),
            Self::ResourceLink(inner) => TypeTagged {
                tag: "resource_link",
                inner,
            }
            .serialize(s),
            Self::Resource(inner) => TypeTagged {
                tag: "resource",
                inner,
            }
            .serialize(s),
            Self::Unknown(map) => map.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        let block = match str_field(&v, "type") {
            Some("text") => Self::Text(TextContent::deserialize(v).map_err(D::Error::custom)?),
            Some("image") => Self::Image(MediaContent::deserialize(v).map_err(D::Error::custom)?),
            Some("audio") => Self::Audio(MediaContent::deserialize(v).map_err(D::Error::custom)?),
            Some("resource_link") => {
                Self::ResourceLink(Resource::deserialize(v).map_err(D::Error::custom)?)
            }
            Some("resource") => {
                Self::Resource(EmbeddedResource::deserialize(v).map_err(D::Error::custom)?)
            }
            Some(_) => match v {
                Value::Object(map) => Self::Unknown(map),
                _ => return Err(D::Error::custom("content block must be an object")),
            },
            None => return Err(D::Error::custom("content block without a string `type`")),
        };
        Ok(block)
    }
}

/// A content block of a sampling message, tagged by `"type"` (`SamplingMessageContentBlock`):
/// text, image, audio, and since 2025-11-25 tool use and tool result.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schemars", schemars(tag = "type"))]
#[non_exhaustive]
pub enum SamplingContent {
    /// `"text"`.
    #[cfg_attr(feature = "schemars", schemars(rename = "text"))]
    Text(TextContent),
    /// `"image"`.
    #[cfg_attr(feature = "schemars", schemars(rename = "image"))]
    Image(ImageContent),
    /// `"audio"`.
    #[cfg_attr(feature = "schemars", schemars(rename = "audio"))]
    Audio(AudioContent),
    /// `"tool_use"`.
    #[cfg_attr(feature = "schemars", schemars(rename = "tool_use"))]
    ToolUse(ToolUseContent),
    /// `"tool_result"`.
    #[cfg_attr(feature = "schemars", schemars(rename = "tool_result"))]
    ToolResult(ToolResultContent),
    /// A block of a type this version does not know, kept verbatim (including `type`).
    #[cfg_attr(feature = "schemars", schemars(skip))]
    Unknown(JsonObject),
}

impl SamplingContent {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text(TextContent::new(text))
    }

    /// The wire `type` of this block.
    pub fn type_name(&self) -> &str {
        match self {
            Self::Text(_) => "text",
            Self::Image(_) => "image",
            Self::Audio(_) => "audio",
            Self::ToolUse(_) => "tool_use",
            Self::ToolResult(_) => "tool_result",
            Self::Unknown(m) => m.get("type").and_then(Value::as_str).unwrap_or(""),
        }
    }
}

impl From<TextContent> for SamplingContent {
    fn from(v: TextContent) -> Self {
        Self::Text(v)
    }
}

impl Serialize for SamplingContent {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Text(inner) => TypeTagged { tag: "text", inner }.serialize(s),
            Self::Image(inner) => TypeTagged {
                tag: "image",
                inner,
            }
            .serialize(s),
            Self::Audio(inner) => TypeTagged {
                tag: "audio",
                inner,
            }
            .serialize(s),
            Self::ToolUse(inner) => TypeTagged {
                tag: "tool_use",
                inner,
            }
            .serialize(s),
            Self::ToolResult(inner) => TypeTagged {
                tag: "tool_result",
                inner,
            }
            .serialize(s),
            Self::Unknown(map) => map.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for SamplingContent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        let block = match str_field(&v, "type") {
            Some("text") => Self::Text(TextContent::deserialize(v).map_err(D::Error::custom)?),
            Some("image") => Self::Image(MediaContent::deserialize(v).map_err(D::Error::custom)?),
            Some("audio") => Self::Audio(MediaContent::deserialize(v).map_err(D::Error::custom)?),
            Some("tool_use") => {
                Self::ToolUse(ToolUseContent::deserialize(v).map_err(D::Error::custom)?)
            }
            Some("tool_result") => {
                Self::ToolResult(ToolResultContent::deserialize(v).map_err(D::Error::custom)?)
            }
            Some(_) => match v {
                Value::Object(map) => Self::Unknown(map),
                _ => return Err(D::Error::custom("content block must be an object")),
            },
            None => return Err(D::Error::custom("content block without a string `type`")),
        };
        Ok(block)
    }
}
