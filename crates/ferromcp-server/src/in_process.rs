//! Serving a server in-process, through the direct dispatcher: no transport, no
//! serialization.

use std::sync::Arc;

use ferromcp_dispatch::{DirectDispatcher, Dispatcher, Outbound, TransportInfo, TransportKind};
use ferromcp_types::{Era, ProtocolVersion};

use crate::connection::Connection;
use crate::runner::ServerRunner;
use crate::server::Server;
use crate::stream::forward_changes;

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
            let mut forwarder = None;
            let runner = match era {
                Era::Handshake => {
                    let connection = Connection::for_handshake(
                        outbound,
                        true,
                        ProtocolVersion::LATEST_HANDSHAKE,
                    );
                    let changes = server.subscribe_changes();
                    forwarder = Some(tokio::spawn(forward_changes(changes, connection.clone())));
                    ServerRunner::handshake(server.clone(), connection)
                }
                Era::Modern => ServerRunner::modern(server.clone(), outbound),
            };
            if let Err(e) = server.enter_lifespan().await {
                tracing::error!(error = %e, "server set-up failed");
                server_end.close();
                return;
            }
            let runner = Arc::new(runner);
            if let Err(e) = server_end.run(runner.clone()).await {
                tracing::error!(error = %e, "in-process server stopped");
            }
            if let Some(task) = forwarder {
                task.abort();
            }
            runner.close().await;
            server.exit_lifespan().await;
        });
        client
    }
}
