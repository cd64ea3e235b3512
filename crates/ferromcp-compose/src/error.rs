//! Why a composed server could not be built ([`ComposeError`]).

use ferromcp_client::ClientError;
use ferromcp_server::BuildError;

/// Why a composed server could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ComposeError {
    /// A mount name is not 1 to 64 ASCII letters, digits and `-`, starting with a letter.
    #[error(
        "invalid mount name {0:?}: use 1 to 64 ASCII letters, digits and '-', starting with a letter"
    )]
    InvalidName(String),
    /// Two mounts have the same name.
    #[error("two mounts are named {0:?}")]
    DuplicateMount(String),
    /// Two definitions of the same front name (a backend listing a name twice).
    #[error("{kind} {name:?} of mount {second:?} conflicts with mount {first:?}'s")]
    Conflict {
        /// `tool`, `prompt`, `resource` or `resource template`.
        kind: &'static str,
        /// The front name (or URI).
        name: String,
        /// The mount that has it.
        first: String,
        /// The mount that offered it again.
        second: String,
    },
    /// A backend could not be connected to or listed.
    #[error("mount {mount:?}: {source}")]
    Connect {
        /// The mount.
        mount: String,
        /// What failed.
        #[source]
        source: ClientError,
    },
    /// A backend did not connect within its [`Backend::connect_timeout`](crate::Backend::connect_timeout).
    #[error("mount {0:?}: no connection within the connect timeout")]
    ConnectTimeout(String),
    /// The front server could not be built (a backend definition it rejects).
    #[error("the front server: {0}")]
    Build(#[from] BuildError),
}
