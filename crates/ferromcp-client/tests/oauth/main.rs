//! The OAuth client against a loopback mock: one hyper server playing the MCP resource (a
//! minimal JSON-answering MCP endpoint behind a 401 with `resource_metadata`), its
//! protected-resource metadata, the authorization server (metadata, registration, an
//! authorization endpoint that redirects at once, token) and an enterprise IdP's token
//! endpoint. Each test names the spec section it covers.
#![cfg(feature = "oauth")]
#![allow(clippy::unwrap_used, clippy::panic)]

mod authorization_code;
mod dpop;
mod grants;
mod loopback;
mod provider;
mod support;
