//! Serving a server in-process, through the direct dispatcher: no transport, no
//! serialization.

use std::sync::Arc;

use ferromcp_dispatch::{DirectDispatcher, Dispatcher, Outbound, TransportInfo, TransportKind};
use ferromcp_types::Era;

use crate::server::Server;
use crate::stream::run_connection;

impl Server {
    /// Starts serving this server in-process, in the given era, and returns the client's end
    /// of a [`DirectDispatcher`] pair. Send requests through it; run it with a handler
    /// ([`Dispatcher::run`]) to receive what the server sends (notifications, and in the
    /// handshake era server→client requests). The server stops when the pair is closed.
    ///
    /// Handshake era: the client must `initialize` first, as on any transport. Modern era:
    /// every request carries the 2026-07-28 envelope in `params._meta`.
    ///
    /// Must be called inside a tokio runtime.
    pub fn in_process(&self, era: Era) -> DirectDispatcher {
        let can_send = era == Era::Handshake;
        let (client, server_end) =
            DirectDispatcher::pair_with(TransportInfo::new(TransportKind::Direct, can_send));
        let outbound: Arc<dyn Outbound> = Arc::new(server_end.clone());
        let server = self.clone();
        tokio::spawn(async move {
            let served = run_connection(&server, &server_end, outbound, era, can_send).await;
            if let Err(e) = served {
                tracing::error!(error = %e, "in-process server stopped");
                server_end.close();
            }
        });
        client
    }
}
