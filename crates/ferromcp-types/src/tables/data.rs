//! The shape of the generated per-revision data.

/// What the generator emits for one revision.
pub(super) struct VersionData {
    /// The revision's wire string, checked against [`crate::ProtocolVersion::as_str`] at compile
    /// time.
    pub(super) version: &'static str,
    /// Requests a client may send, sorted.
    pub(super) client_requests: &'static [&'static str],
    /// Notifications a client may send, sorted.
    pub(super) client_notifications: &'static [&'static str],
    /// Requests a server may send, sorted.
    pub(super) server_requests: &'static [&'static str],
    /// Notifications a server may send, sorted.
    pub(super) server_notifications: &'static [&'static str],
    /// `{"defs":{..},"params":{method:schema},"results":{method:schema}}`, compiled lazily by
    /// [`super::schema::Compiled`].
    pub(super) schemas: &'static str,
}
