//! The Streamable HTTP server as an OAuth 2.1 resource server (feature `auth`): JWTs signed
//! by Ed25519 (and P-256, RSA) keys made here, a JWKS served by a tiny local hyper server,
//! challenges, scopes, metadata, sessions bound to their principal, both eras, and the
//! algorithm attacks of RFC 8725 (`alg: none`, HS* keyed with a public key, mismatched `alg`).
#![cfg(feature = "auth")]
#![allow(clippy::unwrap_used, clippy::panic)]

mod alg;
mod challenges;
#[path = "../http_support/mod.rs"]
mod http_support;
mod jwks;
#[path = "../auth_support/key.rs"]
mod key;
mod redaction;
mod scope_checks;
mod sessions;
mod support;
