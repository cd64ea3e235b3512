//! [`ConnectionLimits`]: the caps on open connections, per peer address and in total, that
//! [`HttpServer`](crate::HttpServer) applies as it accepts.

use std::collections::HashMap;
use std::fmt;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::net::TcpStream;

/// The default bound on connections open at once, in total: 1024.
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;
/// The default bound on connections open at once from one peer address: 256 (a quarter of
/// the total; one client may hold a GET stream and up to 64 request streams per session).
pub const DEFAULT_MAX_CONNECTIONS_PER_PEER: usize = 256;

/// Counts open connections per peer and in total, and refuses one more beyond either cap.
///
/// A peer is an IPv4 address, or an IPv6 /64 (one host usually holds a whole /64); an
/// IPv4-mapped IPv6 address counts as its IPv4 address. Behind a reverse proxy every
/// connection comes from the proxy: set the per-peer cap to the total there.
///
/// ```
/// use ferromcp_http_server::ConnectionLimits;
///
/// let limits = ConnectionLimits::new(2, 1);
/// let a = limits.try_acquire([10, 0, 0, 1].into()).unwrap();
/// assert!(limits.try_acquire([10, 0, 0, 1].into()).is_none(), "per peer");
/// let _b = limits.try_acquire([10, 0, 0, 2].into()).unwrap();
/// assert!(limits.try_acquire([10, 0, 0, 3].into()).is_none(), "in total");
/// drop(a);
/// assert_eq!(limits.open(), 1);
/// ```
#[derive(Clone)]
pub struct ConnectionLimits {
    inner: Arc<Inner>,
}

struct Inner {
    max_total: usize,
    max_per_peer: usize,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    total: usize,
    /// Only peers with an open connection (at most `max_total` entries).
    per_peer: HashMap<IpAddr, usize>,
}

impl Inner {
    fn state(&self) -> MutexGuard<'_, State> {
        // The counts stay consistent whatever panicked while holding the lock.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The peer key of `ip`: IPv4 as is (mapped addresses unmapped), IPv6 by its /64 (one host
/// usually holds a whole /64). Connection and session caps both count by it.
pub(crate) fn peer_key(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V6(v6) => {
            let s = v6.segments();
            IpAddr::V6(Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
        }
        v4 => v4,
    }
}

impl ConnectionLimits {
    /// At most `max_total` connections, and `max_per_peer` from one peer (each at least 1).
    pub fn new(max_total: usize, max_per_peer: usize) -> Self {
        Self {
            inner: Arc::new(Inner {
                max_total: max_total.max(1),
                max_per_peer: max_per_peer.max(1),
                state: Mutex::new(State::default()),
            }),
        }
    }

    /// A slot for one more connection from `peer`, held until the permit is dropped; `None`
    /// when the peer or the server is at its cap.
    pub fn try_acquire(&self, peer: IpAddr) -> Option<ConnectionPermit> {
        let key = peer_key(peer);
        let mut state = self.inner.state();
        if state.total >= self.inner.max_total {
            return None;
        }
        let n = state.per_peer.entry(key).or_default();
        if *n >= self.inner.max_per_peer {
            return None;
        }
        *n += 1;
        state.total += 1;
        Some(ConnectionPermit {
            inner: self.inner.clone(),
            peer: key,
        })
    }

    /// The connections open now.
    pub fn open(&self) -> usize {
        self.inner.state().total
    }
}

impl fmt::Debug for ConnectionLimits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConnectionLimits")
            .field("max_total", &self.inner.max_total)
            .field("max_per_peer", &self.inner.max_per_peer)
            .field("open", &self.open())
            .finish()
    }
}

/// One open connection's slot in its [`ConnectionLimits`]; dropping it frees the slot.
pub struct ConnectionPermit {
    inner: Arc<Inner>,
    peer: IpAddr,
}

impl fmt::Debug for ConnectionPermit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConnectionPermit")
            .field("peer", &self.peer)
            .finish()
    }
}

impl Drop for ConnectionPermit {
    fn drop(&mut self) {
        let mut state = self.inner.state();
        state.total = state.total.saturating_sub(1);
        if let Some(n) = state.per_peer.get_mut(&self.peer) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                state.per_peer.remove(&self.peer);
            }
        }
    }
}

/// The answer to a connection over a cap: written without waiting, then the connection is
/// closed.
const REFUSED: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\n\
content-length: 0\r\nretry-after: 1\r\n\r\n";

/// Refuses a connection accepted over a cap: a 503 if the socket takes it at once, then
/// closes it (for an application with its own accept loop, as [`ConnectionLimits`]).
pub fn refuse_connection(stream: TcpStream) {
    let _ = stream.try_write(REFUSED);
    drop(stream);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv6_peers_count_by_their_64_and_mapped_ipv4_as_ipv4() {
        let limits = ConnectionLimits::new(10, 1);
        let a: IpAddr = "2001:db8::1".parse().unwrap_or(IpAddr::V4([0; 4].into()));
        let b: IpAddr = "2001:db8::2".parse().unwrap_or(IpAddr::V4([0; 4].into()));
        let _p = limits.try_acquire(a);
        assert!(limits.try_acquire(b).is_none(), "same /64");
        let v4: IpAddr = [192, 0, 2, 1].into();
        let mapped: IpAddr = "::ffff:192.0.2.1".parse().unwrap_or(v4);
        let _q = limits.try_acquire(v4);
        assert!(
            limits.try_acquire(mapped).is_none(),
            "mapped is the same peer"
        );
        assert_eq!(limits.open(), 2);
    }
}
