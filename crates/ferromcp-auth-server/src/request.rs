//! Reading an OAuth request: its parameters (query or form, each at most once), a bounded
//! body, the peer's address, and the client it names.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};

use ferromcp_dispatch::BoxError;
use http::header::CONTENT_TYPE;
use http::{Method, Request, StatusCode};
use http_body::Body;
use http_body_util::{BodyExt, Limited};

use super::oauth_error::OAuthError;
use super::store::ClientRecord;
use super::{AuthServerConfig, AuthorizationServer};

/// Parameters of a query or form: each at most once (OAuth 2.1 §3.1: parameters must not
/// be repeated).
pub(super) type Params = HashMap<String, String>;

pub(super) fn parse_params(text: &[u8]) -> Result<Params, OAuthError> {
    let mut out = Params::new();
    for (k, v) in url::form_urlencoded::parse(text) {
        if out.insert(k.clone().into_owned(), v.into_owned()).is_some() {
            return Err(OAuthError::invalid_request(format!(
                "parameter {k:?} repeated"
            )));
        }
    }
    // Empty values count as absent (RFC 6749 §3.1).
    out.retain(|_, v| !v.is_empty());
    Ok(out)
}

/// Reads a body of at most `config.max_form_size` bytes, all of it within
/// `config.body_timeout` (a body that stalls is cut off with 408).
pub(super) async fn read_limited<B>(
    body: B,
    config: &AuthServerConfig,
) -> Result<Vec<u8>, OAuthError>
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    let limit = config.max_form_size;
    let read = tokio::time::timeout(config.body_timeout, Limited::new(body, limit).collect());
    let Ok(read) = read.await else {
        return Err(OAuthError {
            status: StatusCode::REQUEST_TIMEOUT,
            ..OAuthError::invalid_request("the body did not arrive in time")
        });
    };
    match read {
        Ok(b) => Ok(b.to_bytes().to_vec()),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => Err(OAuthError {
            status: StatusCode::PAYLOAD_TOO_LARGE,
            ..OAuthError::invalid_request(format!("body larger than {limit} bytes"))
        }),
        Err(_) => Err(OAuthError::invalid_request("unreadable body")),
    }
}

/// A POST with an `application/x-www-form-urlencoded` body: its parameters.
pub(super) async fn read_form<B>(
    server: &AuthorizationServer,
    req: Request<B>,
) -> Result<(http::request::Parts, Params), OAuthError>
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    let (parts, body) = req.into_parts();
    if parts.method != Method::POST {
        return Err(OAuthError {
            status: StatusCode::METHOD_NOT_ALLOWED,
            ..OAuthError::invalid_request("use POST")
        });
    }
    if parts.uri.query().is_some_and(|q| !q.is_empty()) {
        return Err(OAuthError::invalid_request(
            "parameters go in the body, not the query",
        ));
    }
    let ct = parts
        .headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if !ct.split(';').next().is_some_and(|m| {
        m.trim()
            .eq_ignore_ascii_case("application/x-www-form-urlencoded")
    }) {
        return Err(OAuthError::invalid_request(
            "Content-Type must be application/x-www-form-urlencoded",
        ));
    }
    let bytes = read_limited(body, &server.inner().config).await?;
    Ok((parts, parse_params(&bytes)?))
}

/// The caller's address: read by the configured
/// [`peer_address`](super::AuthServerConfig::peer_address), or from the `SocketAddr` the
/// serving loop recorded; `None` when neither says. Normalized to a rate-limit key: an
/// IPv4-mapped IPv6 address is its IPv4 address, any other IPv6 address its /64 (one
/// subscriber's allocation).
pub(super) fn peer(server: &AuthorizationServer, parts: &http::request::Parts) -> Option<IpAddr> {
    let ip = match &server.inner().config.peer_address {
        Some(read) => read(parts),
        None => parts.extensions.get::<SocketAddr>().map(SocketAddr::ip),
    }?;
    Some(match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(std::net::Ipv6Addr::from(
                v6.to_bits() & !((1u128 << 64) - 1),
            )),
        },
    })
}

/// A client by id: registered in the store, or (an `https` URL) its metadata document.
pub(super) async fn find_client(
    server: &AuthorizationServer,
    client_id: &str,
) -> Result<Option<ClientRecord>, OAuthError> {
    let config = &server.inner().config;
    if let Some(c) = config.clients.iter().find(|c| c.client_id == client_id) {
        return Ok(Some(c.clone()));
    }
    let store = &config.store;
    if let Some(c) = store
        .client(client_id)
        .await
        .map_err(|e| OAuthError::server(e.0))?
    {
        return Ok(Some(c));
    }
    if server.inner().config.client_id_metadata_documents && client_id.contains("://") {
        return server
            .inner()
            .cimd
            .client(client_id)
            .await
            .map(Some)
            .map_err(|e| {
                tracing::info!(client = client_id, error = %e, "client ID metadata document refused");
                OAuthError::new("invalid_client", format!("client metadata document: {e}"))
            });
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv6_callers_are_keyed_by_their_64() {
        let server = AuthorizationServer::new(crate::AuthServerConfig::new("http://127.0.0.1:1"))
            .unwrap_or_else(|e| unreachable!("{e}"));
        let key = |a: &str| {
            let mut parts = Request::new(()).into_parts().0;
            parts.extensions.insert(
                a.parse::<SocketAddr>()
                    .unwrap_or_else(|e| unreachable!("{e}")),
            );
            peer(&server, &parts)
        };
        assert_eq!(
            key("[2001:db8:1:2:3::4]:1"),
            key("[2001:db8:1:2:ffff::9]:2")
        );
        assert_ne!(key("[2001:db8:1:2::4]:1"), key("[2001:db8:1:3::4]:1"));
        assert_eq!(key("[::ffff:10.0.0.1]:1"), key("10.0.0.1:5"));
        assert_eq!(peer(&server, &Request::new(()).into_parts().0), None);
    }

    #[test]
    fn repeated_parameters_are_refused() {
        assert!(parse_params(b"a=1&a=2").is_err());
        assert_eq!(parse_params(b"a=1&b=").unwrap().len(), 1);
    }
}
