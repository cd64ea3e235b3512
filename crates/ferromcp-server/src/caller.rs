//! [`CallerId`]: who a request comes from, as the key that state is bound to; [`PeerAddr`]:
//! the network address it comes from.

/// The identity of a request's caller, as a stable key: what handshake-era sessions, tasks
/// and sealed multi-round state are bound to, so that one caller cannot reach another's.
///
/// A transport or an authentication layer in front of it records it in the HTTP request's
/// extensions; handlers read it with
/// [`RequestContext::caller_id`](crate::RequestContext::caller_id). With the `auth` feature
/// and `HttpConfig::auth` set, the HTTP service's own token check records it (replacing
/// whatever an outer layer put there): the verified token's issuer, subject and client
/// ([`Principal::binding_key`](crate::Principal::binding_key)). Over HTTP a handshake-era
/// session is bound to the caller that created it: a request from another caller gets 404,
/// as for an unknown session.
///
/// ```
/// use ferromcp_server::CallerId;
///
/// let mut request = http::Request::new(());
/// request.extensions_mut().insert(CallerId("user:alice".to_owned()));
/// assert!(request.extensions().get::<CallerId>().is_some());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CallerId(pub String);

/// The address of the TCP peer a request came from, in the HTTP request's extensions.
///
/// The HTTP transport records it on every request (it is re-exported as
/// `ferromcp_http_server::PeerAddr`, which keys the per-peer caps); an application mounting
/// the service elsewhere inserts it itself, e.g. from axum's `ConnectInfo`. The kernel's
/// request span reads it for `client.address` and `client.port`.
///
/// ```
/// use ferromcp_server::PeerAddr;
///
/// let mut request = http::Request::new(());
/// request.extensions_mut().insert(PeerAddr("192.0.2.7:4711".parse().unwrap()));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerAddr(pub std::net::SocketAddr);
