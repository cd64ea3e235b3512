//! MCP server composition: mount servers into one, each under a name.
//!
//! A [`Composer`] is an [`McpServer`] in front of any number of backends: an `McpServer` in
//! this process, a child process over stdio, a Streamable HTTP endpoint or a 2024-11-05
//! HTTP+SSE server (feature `http`), or any client transport ([`Backend`]). Each backend is
//! reached through a [`Client`](ferromcp_client::Client), in whichever era it speaks, and
//! the front serves both eras, so a 2026-07-28 client can use a 2025-11-25 server and the
//! reverse.
//!
//! - Tools and prompts appear as `{mount}_{name}`; resources and resource templates as
//!   `{mount}+{uri}` (the mount name prefixed to the URI's scheme), which maps back on
//!   `resources/read`; completions go to the backend that owns the prompt or template.
//! - Names cannot clash silently: mount names are unique ([`ComposeError::DuplicateMount`])
//!   and contain neither `_` nor `+`, so two mounts' front names never coincide; a backend
//!   that lists one name twice fails the build ([`ComposeError::Conflict`]) rather than
//!   having one definition overwrite the other.
//! - A backend's list-changed notifications update the front (which tells its clients);
//!   resource updates are forwarded under the front URI; progress goes to the front request
//!   it belongs to; cancelling a front request cancels the backend request.
//! - A backend's questions (elicitation, sampling, roots) reach the front client and the
//!   answers go back: as live requests in the handshake era, as `InputRequiredResult` rounds
//!   at 2026-07-28, whichever era each side speaks. A 2026-07-28 backend's questions belong
//!   to the request that got them, by construction. A handshake-era backend's live requests
//!   name no request: they go to the one request in flight on that backend, and are refused
//!   (-32603) while several are, never routed by guess. At 2026-07-28 in front, a backend
//!   request that needs input runs again on the client's retry (the front keeps no state
//!   between rounds), as a 2026-07-28 server's own handlers do: a backend tool should do
//!   nothing irreversible before its last question.
//! - Limits: per backend, requests in flight ([`Backend::max_in_flight`]), a timeout
//!   ([`Backend::timeout`]) and the reports (progress, log records, task status) one
//!   forwarded request may queue for the front ([`Backend::max_queued_reports`]); in total, requests in flight
//!   ([`ComposerBuilder::max_in_flight`]); the rounds one forwarded request may take with a
//!   2026-07-28 backend ([`ComposerBuilder::max_backend_rounds`]).
//! - A backend that dies fails the requests forwarded to it with -32603 naming it; the other
//!   mounts keep serving.
//! - The front clients' resource subscriptions are forwarded to the owning backend (once per
//!   URI, at most [`Backend::max_subscriptions`]), whose updates then reach them.
//!
//! - Tasks: a 2025-11-25 backend tool's `execution.taskSupport` shows on the front's tool (the
//!   front serves tasks, `tasks/*` at 2025-11-25 and the tasks extension at 2026-07-28). A
//!   task-required tool's calls always run as backend tasks; a task-optional tool's only when
//!   the front call runs as a front task (the client asked with `params.task` at 2025-11-25;
//!   at 2026-07-28 the front decides so for a client that declares the extension), so a plain
//!   call stays a plain backend call. The front task (or plain front call) follows the backend
//!   task: its status messages become the front task's, cancelling the front task
//!   (`tasks/cancel`) cancels the backend's, its result or error ends the front task, and a
//!   backend that dies fails it naming the backend. At most [`Backend::max_tasks`] at a time
//!   per backend. The front always has a task engine (default settings; change them with
//!   `front(|b| b.tasks(..))`), so a task-capable backend mounted at run time works too.
//! - A 2026-07-28 backend's tool listing carries no task support: that revision has no
//!   `execution.taskSupport`, and with the tasks extension (`io.modelcontextprotocol/tasks`)
//!   its server decides per call whether a call becomes a task. The front cannot know which
//!   tools will, so when the backend announces the extension every one of its tools is
//!   `optional` on the front: a 2025-11-25 client may call any of them as a task, and a
//!   2026-07-28 client that declares the extension gets a front task for every call of them
//!   (the front, a 2026-07-28 server too, decides before the backend has). Such a front task
//!   follows the backend's task as above, or ends with the backend's plain answer. A backend
//!   without the extension makes no tasks: its tools are listed without task support. A plain
//!   front call that a 2026-07-28 backend makes a task follows that task too: its status
//!   messages reach the front call as progress notifications (with the message; the call's
//!   client must have asked for progress), cancelling the front call (or the front giving up
//!   on it: a timeout, a closed connection) cancels the backend task (`tasks/cancel`), and it
//!   takes a [`Backend::max_tasks`] place while it runs (with none left, the backend task is
//!   cancelled and the call fails with -32603 naming the limit).
//! - Logging: each front session gets the backends' log records at the level it set, as from
//!   any [`McpServer`]. A record goes to the front request it belongs to, with any number in
//!   flight, when the backend's transport relates it to the forwarded request (in process;
//!   Streamable HTTP, by the response stream it came on, in both eras). A record that names no
//!   request (stdio) goes to the one request in flight on that backend; with none or several,
//!   to every live handshake-era front session as a session-level record, at that session's
//!   level (the backend's session is shared by all of them; a 2026-07-28 front has no
//!   session-level records). A backend is shared by every front session, so a handshake-era backend
//!   that declares `logging` is sent (`logging/setLevel`) the most verbose level the live
//!   front sessions set (sessions that set none do not count; when the last that did ends,
//!   `debug` again), a backend mounted later too. A 2026-07-28 backend has no
//!   `logging/setLevel`: each forwarded request carries the level its front request lets
//!   through as `_meta["io.modelcontextprotocol/logLevel"]` (at 2026-07-28 in front the
//!   request's own opt-in, none for none; before, its session's level, `debug` when it set
//!   none).
//!
//! ```
//! use ferromcp_compose::{Backend, Composer};
//! use ferromcp_server::McpServer;
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let weather = McpServer::builder("weather", "1").tool("today", || async { "sunny" }).build().unwrap();
//! let clock = McpServer::builder("clock", "1").tool("now", || async { "noon" }).build().unwrap();
//! let composed = Composer::builder("hub", "1.0.0")
//!     .mount("weather", Backend::in_process(&weather))
//!     .mount("clock", Backend::in_process(&clock))
//!     .build()
//!     .await
//!     .unwrap();
//! assert_eq!(composed.server().tool_names(), ["weather_today", "clock_now"]);
//! // Serve `composed.server().server()` on any transport (stdio, Streamable HTTP…).
//! # composed.shutdown().await;
//! # });
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]

mod backend;
mod bridge;
mod error;
mod forward;
mod logging;
mod mount;
mod naming;
mod notify;
mod raw;
mod report;
mod subscribe;
mod task;
mod template;

use std::fmt;
use std::sync::{Arc, PoisonError};

use ferromcp_client::ClientError;

use ferromcp_server::{McpServer, McpServerBuilder};
use tokio::sync::Semaphore;

pub use backend::{
    Backend, DEFAULT_BACKEND_TIMEOUT, DEFAULT_CONNECT_TIMEOUT, DEFAULT_MAX_IN_FLIGHT_PER_BACKEND,
    DEFAULT_MAX_QUEUED_REPORTS, DEFAULT_MAX_SUBSCRIPTIONS_PER_BACKEND,
    DEFAULT_MAX_TASKS_PER_BACKEND,
};
pub use error::ComposeError;

use mount::{Mount, Owners};
use subscribe::Mounts;

/// Whether `name` may name a mount: 1 to 64 ASCII letters, digits and `-`, starting with a
/// letter (so that no two mounts' front names can coincide).
pub fn is_valid_mount_name(name: &str) -> bool {
    naming::valid_mount_name(name)
}

/// The default number of requests forwarded to all backends together at a time
/// ([`ComposerBuilder::max_in_flight`]); more are refused at once with -32603.
pub const DEFAULT_MAX_IN_FLIGHT: usize = 256;

/// The default bound on the `input_required` rounds of one request forwarded to a
/// 2026-07-28 backend ([`ComposerBuilder::max_backend_rounds`]).
pub const DEFAULT_MAX_BACKEND_ROUNDS: u32 = 10;

/// A composed server: the front [`McpServer`] and its mounted backends.
pub struct Composer {
    front: McpServer,
    mounts: Mounts,
    total: Arc<Semaphore>,
    owners: Arc<Owners>,
    max_backend_rounds: u32,
    /// Serializes mounting and unmounting at run time.
    changing: tokio::sync::Mutex<()>,
    /// The log levels the front sessions set, forwarded to the backends.
    log_levels: Arc<logging::LogLevels>,
}

impl Composer {
    /// Starts a composed server whose front has this name and version.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ComposerBuilder {
        ComposerBuilder {
            // Tasks always: a task-capable backend mounted at run time needs the front's
            // task engine, which only the build creates.
            front: McpServer::builder(name, version)
                .tasks(ferromcp_server::tasks::TaskSettings::new()),
            mounts: Vec::new(),
            max_in_flight: DEFAULT_MAX_IN_FLIGHT,
            max_backend_rounds: DEFAULT_MAX_BACKEND_ROUNDS,
        }
    }

    /// The front server: serve [`McpServer::server`] on any transport.
    pub fn server(&self) -> &McpServer {
        &self.front
    }

    fn current(&self) -> Vec<Arc<Mount>> {
        self.mounts
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The mount names, in mount order.
    pub fn mount_names(&self) -> Vec<String> {
        self.current()
            .iter()
            .map(|m| m.name().to_string())
            .collect()
    }

    /// Mounts `backend` under `name` while the front serves: its tools, prompts, resources,
    /// resource templates and the completions of prompts and templates are added (the front's
    /// clients are told the lists changed), and it is sent the log level the front sessions
    /// set. Fails, adding nothing, as [`ComposerBuilder::build`] would.
    pub async fn mount(&self, name: &str, backend: Backend) -> Result<(), ComposeError> {
        let _changing = self.changing.lock().await;
        if !naming::valid_mount_name(name) {
            return Err(ComposeError::InvalidName(name.to_owned()));
        }
        if self.current().iter().any(|m| &**m.name() == name) {
            return Err(ComposeError::DuplicateMount(name.to_owned()));
        }
        let (mount, catalog) = mount::connect(
            name,
            &backend,
            self.total.clone(),
            self.max_backend_rounds,
            self.owners.clone(),
        )
        .await?;
        if let Err(e) = mount.claim_all(&catalog) {
            mount.unregister(&self.front);
            mount.client().shutdown().await;
            return Err(e);
        }
        mount.attach(&self.front, logging::unrelated(&self.log_levels));
        mount.register_live(&self.front, &catalog);
        self.mounts
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .push(mount.clone());
        // After joining the mounts, so a level change meanwhile reaches it either way.
        self.log_levels.join(&mount).await;
        Ok(())
    }

    /// Unmounts `name`: its tools, prompts, resources and resource templates leave the front (its clients are
    /// told the lists changed) and its connection is closed. `false` when no mount has that
    /// name.
    pub async fn unmount(&self, name: &str) -> bool {
        let _changing = self.changing.lock().await;
        let removed = {
            let mut mounts = self.mounts.write().unwrap_or_else(PoisonError::into_inner);
            let i = mounts.iter().position(|m| &**m.name() == name);
            i.map(|i| mounts.remove(i))
        };
        let Some(mount) = removed else {
            return false;
        };
        mount.unregister(&self.front);
        mount.client().shutdown().await;
        true
    }

    /// Checks that the backend mounted as `name` answers (`ping`, or `server/discover` at
    /// 2026-07-28); `None` when no mount has that name.
    pub async fn ping(&self, name: &str) -> Option<Result<(), ClientError>> {
        let mount = self.current().into_iter().find(|m| &**m.name() == name)?;
        Some(mount.client().ping().await)
    }

    /// Closes every backend connection (a stdio backend's process is ended).
    pub async fn shutdown(&self) {
        for mount in &self.current() {
            mount.client().shutdown().await;
        }
    }
}

impl fmt::Debug for Composer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Composer")
            .field("mounts", &self.mount_names())
            .finish_non_exhaustive()
    }
}

/// Builds a [`Composer`]; see [`Composer::builder`].
#[must_use]
pub struct ComposerBuilder {
    front: McpServerBuilder,
    mounts: Vec<(String, Backend)>,
    max_in_flight: usize,
    max_backend_rounds: u32,
}

impl ComposerBuilder {
    /// Mounts `backend` under `name`: its tools and prompts appear as `{name}_{tool}`, its
    /// resources as `{name}+{uri}`.
    pub fn mount(mut self, name: impl Into<String>, backend: Backend) -> Self {
        self.mounts.push((name.into(), backend));
        self
    }

    /// How many requests may be forwarded to all backends together at a time (default
    /// [`DEFAULT_MAX_IN_FLIGHT`], at least 1).
    pub fn max_in_flight(mut self, n: usize) -> Self {
        self.max_in_flight = n.max(1);
        self
    }

    /// The most `input_required` rounds one request forwarded to a 2026-07-28 backend may
    /// take (default [`DEFAULT_MAX_BACKEND_ROUNDS`]); then the front answers -32603.
    pub fn max_backend_rounds(mut self, n: u32) -> Self {
        self.max_backend_rounds = n;
        self
    }

    /// Configures the front server's settings (request-state keys, the rounds it allows,
    /// middleware, instructions…). Tools, prompts and resources belong in a mounted
    /// [`McpServer`], where the conflict check sees them.
    pub fn front(mut self, configure: impl FnOnce(McpServerBuilder) -> McpServerBuilder) -> Self {
        self.front = configure(self.front);
        self
    }

    /// Connects to every backend, lists what each offers, checks the front names for
    /// conflicts and builds the front server.
    pub async fn build(self) -> Result<Composer, ComposeError> {
        for (i, (name, _)) in self.mounts.iter().enumerate() {
            if !naming::valid_mount_name(name) {
                return Err(ComposeError::InvalidName(name.clone()));
            }
            if self.mounts[..i].iter().any(|(n, _)| n == name) {
                return Err(ComposeError::DuplicateMount(name.clone()));
            }
        }
        let total = Arc::new(Semaphore::new(self.max_in_flight));
        let owners = Arc::new(Owners::default());
        let mut mounts = Vec::new();
        let shared: Mounts = Arc::default();
        let log_levels = logging::LogLevels::new(shared.clone());
        let mut front = self
            .front
            .enable_tools()
            .enable_prompts()
            .enable_resources()
            .enable_completions();
        let result = async {
            for (name, backend) in &self.mounts {
                let (mount, catalog) = mount::connect(
                    name,
                    backend,
                    total.clone(),
                    self.max_backend_rounds,
                    owners.clone(),
                )
                .await?;
                mounts.push(mount.clone());
                mount.claim_all(&catalog)?;
                front = mount.register(front, &catalog);
            }
            let forward = subscribe::ForwardSubscriptions {
                mounts: shared.clone(),
            };
            let levels = logging::ForwardLogLevel {
                levels: log_levels.clone(),
            };
            let raw = raw::RawTools {
                mounts: shared.clone(),
            };
            let front = front.middleware(forward).middleware(levels);
            Ok::<_, ComposeError>(front.tool_call_route(raw).build()?)
        }
        .await;
        match result {
            Ok(front) => {
                for mount in &mounts {
                    mount.attach(&front, logging::unrelated(&log_levels));
                }
                *shared.write().unwrap_or_else(PoisonError::into_inner) = mounts;
                Ok(Composer {
                    front,
                    mounts: shared,
                    total,
                    owners,
                    max_backend_rounds: self.max_backend_rounds,
                    changing: tokio::sync::Mutex::new(()),
                    log_levels,
                })
            }
            Err(e) => {
                for mount in &mounts {
                    mount.client().shutdown().await;
                }
                Err(e)
            }
        }
    }
}

impl fmt::Debug for ComposerBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.mounts.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("ComposerBuilder")
            .field("mounts", &names)
            .field("max_in_flight", &self.max_in_flight)
            .finish_non_exhaustive()
    }
}
