//! The sample backend of the composition tests (tests/common/backend.rs) over stdio.

#[path = "../common/backend.rs"]
#[allow(dead_code, unreachable_pub, clippy::expect_used)]
mod backend;

fn main() -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        // `--tasks`: the backend with a task-required tool (tests/tasks.rs).
        let server = if std::env::args().any(|a| a == "--tasks") {
            backend::task_server("stdio-backend", std::sync::Arc::default())
        } else if std::env::args().any(|a| a == "--logging") {
            // `--logging`: the backend whose calls log while two are in flight
            // (tests/logging.rs).
            backend::logging_server("stdio-backend")
        } else {
            backend::server("stdio-backend")
        };
        ferromcp_server::serve_stdio(server.server())
            .await
            .map_err(std::io::Error::other)
    })
}
