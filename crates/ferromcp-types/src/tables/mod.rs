//! The (method, version) tables generated from the vendored schema files.
//!
//! For every revision in [`ProtocolVersion::ALL`] these tables answer, without allocating:
//!
//! - which methods exist and in which direction ([`method_kind`], [`exists`],
//!   [`client_requests`], [`server_notifications`], ...), taken from the revision's
//!   `ClientRequest`, `ClientNotification`, `ServerRequest` and `ServerNotification` unions;
//! - whether params or a result match the revision's schema ([`validate_params`],
//!   [`validate_notification_params`], [`validate_result`]);
//! - how to shape a result for the revision ([`shape_result`]).
//!
//! A request asks several of these about one method: [`method`] finds it once, and the
//! [`Method`] handle answers the same questions without looking the name up again, and shapes
//! and validates a result in one walk ([`Method::shape_and_validate_result`]).
//!
//! These tables check protocol messages against the vendored MCP schemas only; tool input
//! schemas, which arrive at run time from the application, are checked by the bounded
//! general-purpose engine in `ferromcp-server` (`jsonschema`, whose module documentation says
//! why the two are separate).
//!
//! The data lives in `generated.rs`, written by `cargo xtask codegen` from
//! `spec/<version>/schema.json`; a test fails when it is stale. The schemas are compiled by the
//! generator into static node tables, so nothing is parsed or built at run time, and a method
//! name is found with a perfect hash.
//!
//! ```
//! use ferromcp_types::ProtocolVersion;
//! use ferromcp_types::tables::{self, Kind};
//!
//! assert!(tables::exists("ping", ProtocolVersion::V2025_11_25));
//! assert!(!tables::exists("ping", ProtocolVersion::V2026_07_28));
//! let kind = tables::method_kind("ping", ProtocolVersion::V2025_06_18).unwrap();
//! assert!(kind.contains(Kind::ClientRequest) && kind.contains(Kind::ServerRequest));
//! ```

mod data;
mod fit;
#[cfg(test)]
mod fit_tests;
mod generated;
mod handle;
mod matches;
mod raw;
mod schema;
mod shape;
mod shape_validate;
#[cfg(test)]
mod tests;
mod validate;
mod walk;

use std::fmt;

pub use handle::{Method, method};
pub use shape::shape_result;
pub use validate::{
    ParamsError, ParamsErrorKind, Target, validate_notification_params, validate_params,
    validate_result,
};
pub use walk::{ArrayItems, MemberKey, MemberWalk, ObjectMembers, unquote};

use crate::ProtocolVersion;
use data::VersionData;
use generated::{ALL_METHODS, METHOD_HASH, VERSIONS};

// The generated tables are in `ProtocolVersion::ALL` order, one per revision.
const _: () = {
    assert!(VERSIONS.len() == ProtocolVersion::ALL.len());
    let mut i = 0;
    while i < VERSIONS.len() {
        assert!(str_eq(
            VERSIONS[i].version,
            ProtocolVersion::ALL[i].as_str()
        ));
        i += 1;
    }
};

const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// One of the four message unions of a revision: who sends it, and whether it is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// A request the client sends to the server (`ClientRequest`).
    ClientRequest,
    /// A notification the client sends to the server (`ClientNotification`).
    ClientNotification,
    /// A request the server sends to the client (`ServerRequest`).
    ServerRequest,
    /// A notification the server sends to the client (`ServerNotification`).
    ServerNotification,
}

impl Kind {
    /// The four kinds.
    pub const ALL: [Kind; 4] = [
        Kind::ClientRequest,
        Kind::ClientNotification,
        Kind::ServerRequest,
        Kind::ServerNotification,
    ];

    /// Whether messages of this kind are requests (answered with a result or an error).
    pub const fn is_request(self) -> bool {
        matches!(self, Kind::ClientRequest | Kind::ServerRequest)
    }

    /// Whether messages of this kind are notifications.
    pub const fn is_notification(self) -> bool {
        !self.is_request()
    }

    /// Whether the client sends messages of this kind.
    pub const fn sent_by_client(self) -> bool {
        matches!(self, Kind::ClientRequest | Kind::ClientNotification)
    }

    const fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// The set of [`Kind`]s a method has at one revision: `ping` is both a client and a server
/// request, `notifications/progress` flows both ways, `tools/list` is a client request only.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct MethodKind {
    bits: u8,
}

impl MethodKind {
    /// Whether the method belongs to `kind`'s union.
    pub const fn contains(self, kind: Kind) -> bool {
        self.bits & kind.bit() != 0
    }

    /// Whether the method is a request (in either direction).
    pub const fn is_request(self) -> bool {
        self.contains(Kind::ClientRequest) || self.contains(Kind::ServerRequest)
    }

    /// Whether the method is a notification (in either direction).
    pub const fn is_notification(self) -> bool {
        self.contains(Kind::ClientNotification) || self.contains(Kind::ServerNotification)
    }

    /// Whether the client may send this method.
    pub const fn sent_by_client(self) -> bool {
        self.contains(Kind::ClientRequest) || self.contains(Kind::ClientNotification)
    }

    /// Whether the server may send this method.
    pub const fn sent_by_server(self) -> bool {
        self.contains(Kind::ServerRequest) || self.contains(Kind::ServerNotification)
    }

    /// The kinds in the set, in [`Kind::ALL`] order.
    pub fn kinds(self) -> impl Iterator<Item = Kind> {
        Kind::ALL.into_iter().filter(move |k| self.contains(*k))
    }
}

impl fmt::Debug for MethodKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.kinds()).finish()
    }
}

fn data(v: ProtocolVersion) -> &'static VersionData {
    VERSIONS[v as usize]
}

/// The index of `method` in [`ALL_METHODS`] (and in every revision's method entries).
fn method_index(method: &str) -> Option<usize> {
    METHOD_HASH.index(method, ALL_METHODS)
}

/// The [`Kind`] bits of `method` at revision `v` (0 when the revision does not define it).
fn kind_bits(method: &str, v: ProtocolVersion) -> u8 {
    method_index(method)
        .and_then(|i| data(v).methods.get(i))
        .map_or(0, |e| e.kinds)
}

/// The methods of `kind` at revision `v`, sorted.
pub fn methods(kind: Kind, v: ProtocolVersion) -> &'static [&'static str] {
    let d = data(v);
    match kind {
        Kind::ClientRequest => d.client_requests,
        Kind::ClientNotification => d.client_notifications,
        Kind::ServerRequest => d.server_requests,
        Kind::ServerNotification => d.server_notifications,
    }
}

/// The requests a client may send at revision `v`, sorted.
pub fn client_requests(v: ProtocolVersion) -> &'static [&'static str] {
    methods(Kind::ClientRequest, v)
}

/// The notifications a client may send at revision `v`, sorted.
pub fn client_notifications(v: ProtocolVersion) -> &'static [&'static str] {
    methods(Kind::ClientNotification, v)
}

/// The requests a server may send at revision `v`, sorted (empty at 2026-07-28, whose
/// server-to-client interactions are `InputRequiredResult`s instead).
pub fn server_requests(v: ProtocolVersion) -> &'static [&'static str] {
    methods(Kind::ServerRequest, v)
}

/// The notifications a server may send at revision `v`, sorted.
pub fn server_notifications(v: ProtocolVersion) -> &'static [&'static str] {
    methods(Kind::ServerNotification, v)
}

/// The kinds `method` has at revision `v`, or `None` when the revision does not define it.
pub fn method_kind(method: &str, v: ProtocolVersion) -> Option<MethodKind> {
    let bits = kind_bits(method, v);
    (bits != 0).then_some(MethodKind { bits })
}

/// Whether revision `v` defines `method` (as a request or a notification, in any direction).
pub fn exists(method: &str, v: ProtocolVersion) -> bool {
    kind_bits(method, v) != 0
}

/// Whether revision `v` defines `method` as a message of `kind`.
pub fn exists_as(method: &str, kind: Kind, v: ProtocolVersion) -> bool {
    kind_bits(method, v) & kind.bit() != 0
}

/// Whether any revision defines `method`: a spec method, as opposed to a custom one.
pub fn is_spec_method(method: &str) -> bool {
    method_index(method).is_some()
}

/// Every method any revision defines, sorted.
pub fn all_methods() -> &'static [&'static str] {
    ALL_METHODS
}

/// The revisions that define `method`, oldest first.
pub fn versions_of(method: &str) -> impl Iterator<Item = ProtocolVersion> + '_ {
    ProtocolVersion::ALL
        .into_iter()
        .filter(move |&v| exists(method, v))
}
