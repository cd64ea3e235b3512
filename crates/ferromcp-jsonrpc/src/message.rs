//! JSON-RPC 2.0 messages and their encoding.

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use super::payload::{write_i64, write_str};
use super::{ErrorObject, Payload, RequestId};

/// A request: a method call that expects a response.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The request id; the response carries the same id.
    pub id: RequestId,
    /// The method name.
    pub method: String,
    /// The parameters, when present.
    pub params: Option<Payload>,
}

/// A notification: a method call that is never answered.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    /// The method name.
    pub method: String,
    /// The parameters, when present.
    pub params: Option<Payload>,
}

/// A successful response.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    /// The id of the request this answers.
    pub id: RequestId,
    /// The result.
    pub result: Payload,
}

/// An error response. Its id is `None` (`null` on the wire) when the request's id could not be
/// read, as for a parse error.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorResponse {
    /// The id of the request this answers, if known.
    pub id: Option<RequestId>,
    /// The error.
    pub error: ErrorObject,
}

/// Any JSON-RPC 2.0 message.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// A request.
    Request(Request),
    /// A notification.
    Notification(Notification),
    /// A successful response.
    Response(Response),
    /// An error response.
    Error(ErrorResponse),
}

impl Request {
    /// A request with the given id, method and params.
    pub fn new(
        id: impl Into<RequestId>,
        method: impl Into<String>,
        params: Option<Payload>,
    ) -> Self {
        Self {
            id: id.into(),
            method: method.into(),
            params,
        }
    }
}

impl Notification {
    /// A notification with the given method and params.
    pub fn new(method: impl Into<String>, params: Option<Payload>) -> Self {
        Self {
            method: method.into(),
            params,
        }
    }
}

impl Message {
    /// The method name of a request or notification.
    pub fn method(&self) -> Option<&str> {
        match self {
            Self::Request(r) => Some(&r.method),
            Self::Notification(n) => Some(&n.method),
            _ => None,
        }
    }

    /// The id of a request or response.
    pub fn id(&self) -> Option<&RequestId> {
        match self {
            Self::Request(r) => Some(&r.id),
            Self::Response(r) => Some(&r.id),
            Self::Error(e) => e.id.as_ref(),
            Self::Notification(_) => None,
        }
    }

    /// A success response to request `id`.
    pub fn response(id: RequestId, result: impl Into<Payload>) -> Self {
        Self::Response(Response {
            id,
            result: result.into(),
        })
    }

    /// An error response to request `id`.
    pub fn error(id: Option<RequestId>, error: ErrorObject) -> Self {
        Self::Error(ErrorResponse { id, error })
    }

    /// Appends the compact JSON encoding of this message to `out`: the same bytes as
    /// serializing it with serde_json, written directly (the envelope's members are fixed
    /// text around the id, method and payload).
    pub fn write_to(&self, out: &mut Vec<u8>) {
        match self {
            Self::Request(r) => {
                out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
                write_id(&r.id, out);
                out.extend_from_slice(br#","method":"#);
                write_str(&r.method, out);
                if let Some(params) = &r.params {
                    out.extend_from_slice(br#","params":"#);
                    params.write_to(out);
                }
            }
            Self::Notification(n) => {
                out.extend_from_slice(br#"{"jsonrpc":"2.0","method":"#);
                write_str(&n.method, out);
                if let Some(params) = &n.params {
                    out.extend_from_slice(br#","params":"#);
                    params.write_to(out);
                }
            }
            Self::Response(r) => {
                out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
                write_id(&r.id, out);
                out.extend_from_slice(br#","result":"#);
                r.result.write_to(out);
            }
            Self::Error(e) => {
                out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
                match &e.id {
                    Some(id) => write_id(id, out),
                    None => out.extend_from_slice(b"null"),
                }
                out.extend_from_slice(br#","error":"#);
                // Serializing an error object into memory cannot fail: its data is a `Value`,
                // whose map keys are strings.
                if let Err(err) = serde_json::to_writer(&mut *out, &e.error) {
                    debug_assert!(false, "encoding an error object failed: {err}");
                }
            }
        }
        out.push(b'}');
    }

    /// The compact JSON encoding of this message.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(128);
        self.write_to(&mut out);
        out
    }

    /// The compact JSON encoding of this message, as a string.
    pub fn to_json_string(&self) -> String {
        // `to_vec` writes UTF-8 only.
        String::from_utf8(self.to_vec()).unwrap_or_default()
    }
}

/// An id as serde_json writes it: an integer, or a string.
pub(super) fn write_id(id: &RequestId, out: &mut Vec<u8>) {
    match id {
        RequestId::Number(n) => write_i64(*n, out),
        RequestId::String(s) => write_str(s, out),
    }
}

impl From<Request> for Message {
    fn from(r: Request) -> Self {
        Self::Request(r)
    }
}

impl From<Notification> for Message {
    fn from(n: Notification) -> Self {
        Self::Notification(n)
    }
}

impl From<Response> for Message {
    fn from(r: Response) -> Self {
        Self::Response(r)
    }
}

impl From<ErrorResponse> for Message {
    fn from(e: ErrorResponse) -> Self {
        Self::Error(e)
    }
}

impl Serialize for Message {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Request(r) => r.serialize(s),
            Self::Notification(n) => n.serialize(s),
            Self::Response(r) => r.serialize(s),
            Self::Error(e) => e.serialize(s),
        }
    }
}

impl Serialize for Request {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(if self.params.is_some() { 4 } else { 3 }))?;
        map.serialize_entry("jsonrpc", "2.0")?;
        map.serialize_entry("id", &self.id)?;
        map.serialize_entry("method", &self.method)?;
        if let Some(params) = &self.params {
            map.serialize_entry("params", params)?;
        }
        map.end()
    }
}

impl Serialize for Notification {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(if self.params.is_some() { 3 } else { 2 }))?;
        map.serialize_entry("jsonrpc", "2.0")?;
        map.serialize_entry("method", &self.method)?;
        if let Some(params) = &self.params {
            map.serialize_entry("params", params)?;
        }
        map.end()
    }
}

impl Serialize for Response {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(3))?;
        map.serialize_entry("jsonrpc", "2.0")?;
        map.serialize_entry("id", &self.id)?;
        map.serialize_entry("result", &self.result)?;
        map.end()
    }
}

impl Serialize for ErrorResponse {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(3))?;
        map.serialize_entry("jsonrpc", "2.0")?;
        map.serialize_entry("id", &self.id)?;
        map.serialize_entry("error", &self.error)?;
        map.end()
    }
}
