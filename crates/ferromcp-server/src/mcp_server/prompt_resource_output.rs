//! What prompt and resource handlers may return.

use std::fmt::Display;

use ferromcp_types::jsonrpc::ErrorObject;

use super::output::protocol_error;
use ferromcp_types::mcp::{
    BlobResourceContents, GetPromptResult, PromptMessage, ReadResourceResult, ResourceContents,
    TextResourceContents,
};

/// A value a prompt handler can return: a full [`GetPromptResult`], messages, one message,
/// a `String` (one user message), or a `Result` whose error becomes -32602 with its text (a
/// protocol error, [`ErrorObject`] or `HandlerError::Protocol`, is answered as itself).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from an MCP prompt handler",
    note = "return GetPromptResult, Vec<PromptMessage>, PromptMessage, String, or \
            Result<T, E> where T is one of these and E: Display"
)]
pub trait IntoPromptResult {
    /// Converts into the prompt's result, or a protocol error.
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject>;
}

impl IntoPromptResult for GetPromptResult {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        Ok(self)
    }
}

impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        Ok(GetPromptResult::new(self))
    }
}

impl IntoPromptResult for PromptMessage {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        Ok(GetPromptResult::new(vec![self]))
    }
}

impl IntoPromptResult for String {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        Ok(GetPromptResult::new(vec![PromptMessage::user_text(self)]))
    }
}

impl<T: IntoPromptResult, E: Display + 'static> IntoPromptResult for Result<T, E> {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        match self {
            Ok(v) => v.into_prompt_result(),
            Err(e) => {
                Err(protocol_error(&e)
                    .unwrap_or_else(|| ErrorObject::invalid_params(e.to_string())))
            }
        }
    }
}

/// Binary contents of a resource, base64-encoded as on the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blob {
    base64: String,
    mime_type: Option<String>,
}

impl Blob {
    /// Bytes with a MIME type.
    pub fn new(bytes: &[u8], mime_type: impl Into<String>) -> Self {
        Self {
            base64: base64_encode(bytes),
            mime_type: Some(mime_type.into()),
        }
    }

    /// Data that is already base64-encoded, with a MIME type.
    pub fn from_base64(base64: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self {
            base64: base64.into(),
            mime_type: Some(mime_type.into()),
        }
    }
}

/// A value a resource handler can return, given the URI that was read: text (`String`),
/// bytes ([`Blob`]), contents, a full [`ReadResourceResult`], or a `Result` whose error
/// becomes -32603 (the text is logged, not sent). A protocol error ([`ErrorObject`] or
/// `HandlerError::Protocol`) is answered as itself: return
/// [`resource_not_found`](super::resource_not_found) for a URI the handler does not have.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from an MCP resource handler",
    note = "return String, Blob, ResourceContents, Vec<ResourceContents>, ReadResourceResult, \
            or Result<T, E> where T is one of these and E: Display (an ErrorObject is \
            answered as that protocol error)"
)]
pub trait IntoResourceResult {
    /// Converts into the read's result for `uri` (with `mime_type` as the default type).
    fn into_resource_result(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<ReadResourceResult, ErrorObject>;
}

impl IntoResourceResult for ReadResourceResult {
    fn into_resource_result(
        self,
        _: &str,
        _: Option<&str>,
    ) -> Result<ReadResourceResult, ErrorObject> {
        Ok(self)
    }
}

impl IntoResourceResult for Vec<ResourceContents> {
    fn into_resource_result(
        self,
        _: &str,
        _: Option<&str>,
    ) -> Result<ReadResourceResult, ErrorObject> {
        Ok(ReadResourceResult::new(self))
    }
}

impl IntoResourceResult for ResourceContents {
    fn into_resource_result(
        self,
        _: &str,
        _: Option<&str>,
    ) -> Result<ReadResourceResult, ErrorObject> {
        Ok(ReadResourceResult::new(vec![self]))
    }
}

impl IntoResourceResult for String {
    fn into_resource_result(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<ReadResourceResult, ErrorObject> {
        let mut text = TextResourceContents::new(uri, self);
        text.mime_type = mime_type.map(str::to_owned);
        Ok(ReadResourceResult::new(vec![text.into()]))
    }
}

impl IntoResourceResult for Blob {
    fn into_resource_result(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<ReadResourceResult, ErrorObject> {
        let mut blob = BlobResourceContents::new(uri, self.base64);
        blob.mime_type = self.mime_type.or_else(|| mime_type.map(str::to_owned));
        Ok(ReadResourceResult::new(vec![blob.into()]))
    }
}

impl<T: IntoResourceResult, E: Display + 'static> IntoResourceResult for Result<T, E> {
    fn into_resource_result(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<ReadResourceResult, ErrorObject> {
        match self {
            Ok(v) => v.into_resource_result(uri, mime_type),
            Err(e) if let Some(protocol) = protocol_error(&e) => Err(protocol),
            Err(e) => {
                tracing::warn!(uri, error = %e, "resource handler failed");
                Err(ErrorObject::internal_error("Internal error"))
            }
        }
    }
}

/// Standard base64 with padding (RFC 4648 §4), as MCP blobs use.
pub(crate) fn base64_encode(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> shift) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::base64_encode;

    #[test]
    fn base64_matches_rfc4648_vectors() {
        let cases = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (input, expected) in cases {
            assert_eq!(base64_encode(input.as_bytes()), expected);
        }
    }
}
