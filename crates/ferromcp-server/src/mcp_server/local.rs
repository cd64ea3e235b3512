//! Handlers whose futures are not `Send`, run on a local executor.
//!
//! ferromcp's handlers normally run on the multi-threaded runtime, so their futures must be
//! `Send`. A handler that holds an `Rc`, a `RefCell` borrow or a `!Send` library handle across
//! an `.await` can still be served, without any crate-wide feature that changes trait bounds:
//! register it with [`McpServerBuilder::tool_local`](super::McpServerBuilder::tool_local) and
//! a [`LocalExecutor`]. The executor is one dedicated thread running a single-threaded tokio
//! runtime and a `LocalSet`; each call's future is created and polled there, and only its
//! (`Send`) result comes back.
//!
//! ```
//! use std::rc::Rc;
//! use ferromcp_server::McpServer;
//! use ferromcp_server::mcp_server::{LocalExecutor, ToolSpec};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Name { name: String }
//!
//! let local = LocalExecutor::new().unwrap();
//! let server = McpServer::builder("local", "1")
//!     .tool_local(ToolSpec::new("greet"), &local, |args: Name, _ctx| async move {
//!         let shared = Rc::new(args.name); // not Send, held across the await
//!         tokio::task::yield_now().await;
//!         format!("hello {shared}")
//!     })
//!     .build()
//!     .unwrap();
//! # let _ = server;
//! ```

use std::fmt;
use std::future::Future;
use std::io;
use std::pin::Pin;

use ferromcp_types::jsonrpc::ErrorObject;
use tokio::sync::{mpsc, oneshot};

type LocalFuture = Pin<Box<dyn Future<Output = ()>>>;
type Job = Box<dyn FnOnce() -> LocalFuture + Send>;

/// One thread that runs `!Send` futures: a single-threaded tokio runtime and a `LocalSet`.
/// Cheap to clone; the thread ends when the last clone is dropped.
#[derive(Clone)]
pub struct LocalExecutor {
    jobs: mpsc::UnboundedSender<Job>,
}

impl LocalExecutor {
    /// Starts the executor's thread.
    pub fn new() -> io::Result<Self> {
        let (jobs, mut rx) = mpsc::unbounded_channel::<Job>();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        std::thread::Builder::new()
            .name("ferromcp-local".into())
            .spawn(move || {
                let local = tokio::task::LocalSet::new();
                local.block_on(&runtime, async move {
                    while let Some(job) = rx.recv().await {
                        tokio::task::spawn_local(job());
                    }
                });
            })?;
        Ok(Self { jobs })
    }

    /// Runs the future `make` creates on the executor's thread and returns its output.
    pub(crate) async fn run<R, F, Fut>(&self, make: F) -> Result<R, ErrorObject>
    where
        R: Send + 'static,
        F: FnOnce() -> Fut + Send + 'static,
        Fut: Future<Output = R> + 'static,
    {
        let (tx, rx) = oneshot::channel();
        let job: Job = Box::new(move || {
            Box::pin(async move {
                // The caller may have gone (cancelled); then nobody needs the output.
                let _ = tx.send(make().await);
            })
        });
        let gone = || ErrorObject::internal_error("the local executor has stopped");
        self.jobs.send(job).map_err(|_| gone())?;
        rx.await.map_err(|_| gone())
    }
}

impl fmt::Debug for LocalExecutor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalExecutor")
            .field("running", &!self.jobs.is_closed())
            .finish()
    }
}
