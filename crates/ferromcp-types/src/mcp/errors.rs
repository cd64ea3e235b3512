//! The `data` of MCP-specific protocol errors. The codes themselves are
//! [`ErrorCode`](crate::jsonrpc::ErrorCode) constants (`HEADER_MISMATCH`,
//! `MISSING_REQUIRED_CLIENT_CAPABILITY`, `UNSUPPORTED_PROTOCOL_VERSION`,
//! `URL_ELICITATION_REQUIRED`).

use serde::{Deserialize, Serialize};

use super::capabilities::ClientCapabilities;
use super::elicitation::ElicitRequestUrlParams;

/// `error.data` of -32022 Unsupported protocol version (2026-07-28).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct UnsupportedProtocolVersionData {
    /// The versions the server supports.
    pub supported: Vec<String>,
    /// The version the client asked for.
    pub requested: String,
}

impl UnsupportedProtocolVersionData {
    /// Error data.
    pub fn new(supported: Vec<String>, requested: impl Into<String>) -> Self {
        Self {
            supported,
            requested: requested.into(),
        }
    }
}

/// `error.data` of -32021 Missing required client capability (2026-07-28).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct MissingRequiredClientCapabilityData {
    /// The capabilities the request needs.
    pub required_capabilities: ClientCapabilities,
}

impl MissingRequiredClientCapabilityData {
    /// Error data.
    pub fn new(required_capabilities: ClientCapabilities) -> Self {
        Self {
            required_capabilities,
        }
    }
}

/// `error.data` of -32042 URL elicitation required (2025-11-25): the URL elicitations the
/// client must complete before retrying. Each element encodes with `"mode": "url"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct UrlElicitationRequiredData {
    /// The elicitations (URL mode).
    pub elicitations: Vec<super::elicitation::ElicitRequestParams>,
}

impl UrlElicitationRequiredData {
    /// Error data.
    pub fn new(elicitations: Vec<ElicitRequestUrlParams>) -> Self {
        Self {
            elicitations: elicitations.into_iter().map(Into::into).collect(),
        }
    }
}
