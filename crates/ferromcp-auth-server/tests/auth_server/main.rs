//! The embedded OAuth 2.1 authorization server (feature `auth-server`): ferromcp's OAuth
//! client against it end to end (discovery, registration, PKCE, scopes and step-up, refresh,
//! revocation, audience), the token format (any JWT library, `JwtVerifier`, key rotation),
//! and a negative test for every safe-by-default rule (issue 12 §3; MCP 2025-11-25
//! Authorization; OAuth 2.1; RFC 7591, 7009, 8414, 8707, 9207, 7636, 7523).
#![allow(clippy::unwrap_used, clippy::panic)]

mod authorize;
mod cimd;
mod client;
mod client_auth;
mod limits_logs_consent;
mod support;
mod tokens;
