//! MCP protocol revisions as an ordered enum, their eras, and negotiation helpers.
//!
//! Versions are never compared as strings: parse the wire string with [`ProtocolVersion::parse`]
//! (or [`str::parse`]) and compare the enum values, whose order is the order of the revisions.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// One published revision of the Model Context Protocol.
///
/// The variants are ordered oldest first, so `<`, `>=` and friends compare revisions by age.
///
/// ```
/// use ferromcp_types::{Era, ProtocolVersion};
///
/// let v: ProtocolVersion = "2025-06-18".parse().unwrap();
/// assert!(v < ProtocolVersion::V2025_11_25);
/// assert_eq!(v.era(), Era::Handshake);
/// assert_eq!(ProtocolVersion::V2026_07_28.to_string(), "2026-07-28");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProtocolVersion {
    /// `2024-11-05`, the first published revision.
    V2024_11_05,
    /// `2025-03-26`: Streamable HTTP, batching, audio content, tool annotations.
    V2025_03_26,
    /// `2025-06-18`: structured tool output, elicitation, no batching.
    V2025_06_18,
    /// `2025-11-25`: tasks, URL elicitation, icons; the last handshake-era revision.
    V2025_11_25,
    /// `2026-07-28`: the handshake-less revision (per-request envelope, `server/discover`).
    V2026_07_28,
}

/// The two eras of the protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Era {
    /// `initialize` → `notifications/initialized`, one negotiated version per connection.
    Handshake,
    /// No handshake: every request carries its version and capabilities in `params._meta`.
    Modern,
}

/// A version string that names no revision this crate knows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unsupported MCP protocol version {0:?}")]
pub struct UnknownVersion(pub String);

impl ProtocolVersion {
    /// Every revision, oldest first.
    pub const ALL: [ProtocolVersion; 5] = [
        Self::V2024_11_05,
        Self::V2025_03_26,
        Self::V2025_06_18,
        Self::V2025_11_25,
        Self::V2026_07_28,
    ];
    /// The newest revision of the handshake era.
    pub const LATEST_HANDSHAKE: ProtocolVersion = Self::V2025_11_25;
    /// The newest revision of the modern era.
    pub const LATEST_MODERN: ProtocolVersion = Self::V2026_07_28;
    /// The newest revision overall.
    pub const LATEST: ProtocolVersion = Self::V2026_07_28;
    /// The version a Streamable HTTP server assumes when a request has no
    /// `MCP-Protocol-Version` header (the spec's backward-compatibility rule).
    pub const HTTP_HEADERLESS_DEFAULT: ProtocolVersion = Self::V2025_03_26;

    /// The wire string of this revision, such as `"2025-11-25"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::V2024_11_05 => "2024-11-05",
            Self::V2025_03_26 => "2025-03-26",
            Self::V2025_06_18 => "2025-06-18",
            Self::V2025_11_25 => "2025-11-25",
            Self::V2026_07_28 => "2026-07-28",
        }
    }

    /// Parses a wire string; `None` for a string that names no known revision.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// The era this revision belongs to.
    pub const fn era(self) -> Era {
        match self {
            Self::V2026_07_28 => Era::Modern,
            _ => Era::Handshake,
        }
    }

    /// Whether this revision uses the `initialize` handshake.
    pub const fn is_handshake(self) -> bool {
        matches!(self.era(), Era::Handshake)
    }

    /// Whether this revision is handshake-less.
    pub const fn is_modern(self) -> bool {
        matches!(self.era(), Era::Modern)
    }

    /// Whether JSON-RPC batches are allowed on the wire (only at 2025-03-26).
    pub const fn allows_batches(self) -> bool {
        matches!(self, Self::V2025_03_26)
    }

    /// The revisions of one era, oldest first.
    pub fn of_era(era: Era) -> impl Iterator<Item = ProtocolVersion> {
        Self::ALL.into_iter().filter(move |v| v.era() == era)
    }

    /// Server-side handshake negotiation (lifecycle, "Version Negotiation"): keep the client's
    /// requested version when it is a supported handshake revision, otherwise answer the latest
    /// handshake revision.
    ///
    /// ```
    /// use ferromcp_types::ProtocolVersion;
    /// assert_eq!(ProtocolVersion::negotiate_handshake("2025-03-26"), ProtocolVersion::V2025_03_26);
    /// assert_eq!(ProtocolVersion::negotiate_handshake("1999-01-01"), ProtocolVersion::V2025_11_25);
    /// assert_eq!(ProtocolVersion::negotiate_handshake("2026-07-28"), ProtocolVersion::V2025_11_25);
    /// ```
    pub fn negotiate_handshake(requested: &str) -> ProtocolVersion {
        match Self::parse(requested) {
            Some(v) if v.is_handshake() => v,
            _ => Self::LATEST_HANDSHAKE,
        }
    }

    /// Picks the newest revision that both sides support, if any.
    pub fn negotiate_common(
        ours: &[ProtocolVersion],
        theirs: &[ProtocolVersion],
    ) -> Option<ProtocolVersion> {
        ours.iter().filter(|v| theirs.contains(v)).max().copied()
    }

    /// The wire strings of the given revisions, as sent in `-32022` error data.
    pub fn strings(versions: &[ProtocolVersion]) -> Vec<&'static str> {
        versions.iter().map(|v| v.as_str()).collect()
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ProtocolVersion {
    type Err = UnknownVersion;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s).ok_or_else(|| UnknownVersion(s.to_owned()))
    }
}

impl Serialize for ProtocolVersion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ProtocolVersion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        Self::parse(&s).ok_or_else(|| serde::de::Error::custom(UnknownVersion(s.into_owned())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_follows_release_dates() {
        let mut sorted = ProtocolVersion::ALL;
        sorted.sort();
        assert_eq!(sorted, ProtocolVersion::ALL);
        let mut by_string = ProtocolVersion::ALL.map(|v| v.as_str());
        by_string.sort_unstable();
        assert_eq!(by_string, ProtocolVersion::ALL.map(|v| v.as_str()));
    }

    #[test]
    fn parse_display_round_trip_and_unknown() {
        for v in ProtocolVersion::ALL {
            assert_eq!(v.as_str().parse::<ProtocolVersion>(), Ok(v));
            assert_eq!(serde_json::to_string(&v).unwrap(), format!("\"{v}\""));
        }
        assert!("2025-11-26".parse::<ProtocolVersion>().is_err());
        assert!(serde_json::from_str::<ProtocolVersion>("\"draft\"").is_err());
    }

    #[test]
    fn eras_and_constants() {
        assert_eq!(
            ProtocolVersion::of_era(Era::Handshake).count(),
            4,
            "four handshake revisions"
        );
        assert_eq!(ProtocolVersion::LATEST_MODERN.era(), Era::Modern);
        assert_eq!(ProtocolVersion::LATEST_HANDSHAKE.era(), Era::Handshake);
        assert_eq!(
            ProtocolVersion::HTTP_HEADERLESS_DEFAULT.as_str(),
            "2025-03-26"
        );
        assert!(ProtocolVersion::V2025_03_26.allows_batches());
        assert!(!ProtocolVersion::V2025_06_18.allows_batches());
    }

    #[test]
    fn negotiate_common_picks_newest_shared() {
        use ProtocolVersion::*;
        assert_eq!(
            ProtocolVersion::negotiate_common(&[V2024_11_05, V2025_06_18], &ProtocolVersion::ALL),
            Some(V2025_06_18)
        );
        assert_eq!(
            ProtocolVersion::negotiate_common(&[V2024_11_05], &[V2026_07_28]),
            None
        );
    }
}
