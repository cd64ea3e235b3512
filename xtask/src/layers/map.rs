//! The layer map: for every crate, its layers bottom up, the modules in each (by module-path
//! prefix: `http` is `http` and everything under it; `crate` is the crate root, `lib.rs` or
//! `main.rs`) and the lower layers each may name. A layer may name only layers listed before it,
//! so the "may name" relation is a DAG; two layers on the same base need not name each other.
//! A module in no layer fails the check: a new file is placed here deliberately.

/// One layer of a crate.
#[derive(Debug)]
pub(crate) struct Layer {
    /// Its name, as messages show it.
    pub(crate) name: &'static str,
    /// Module-path prefixes of its modules.
    pub(crate) modules: &'static [&'static str],
    /// The layers (listed before this one) its modules may name.
    pub(crate) may_name: &'static [&'static str],
}

/// The layers of one crate, bottom up.
#[derive(Debug)]
pub(crate) struct CrateLayers {
    /// The member: its directory under `crates/`, else its path from the workspace root
    /// (`xtask`, `bench/load`).
    pub(crate) krate: &'static str,
    /// Its layers, bottom up.
    pub(crate) layers: &'static [Layer],
}

/// Every crate's layers.
pub(crate) const MAP: &[CrateLayers] = &[
    JSONRPC,
    TYPES,
    DISPATCH,
    CLIENT,
    SERVER,
    HTTP_SERVER,
    AUTH_SERVER,
    MACROS,
    JWT,
    FACADE,
    COMPOSE,
    CLI,
    CONFORMANCE,
    FUZZ_BODIES,
    XTASK,
    BENCH_LOAD,
    BENCH_STDIO_MIN,
    BENCH_REDIS_NODE,
];

/// `ferromcp-server`: the target layering (the kernel names nothing above it).
const SERVER: CrateLayers = CrateLayers {
    krate: "ferromcp-server",
    layers: &[
        Layer {
            name: "support",
            modules: &[
                "jsonschema",
                "uri_template",
                "request_state",
                "stdio",
                "tool_headers",
                "principal",
            ],
            may_name: &[],
        },
        Layer {
            name: "kernel",
            modules: &[
                "connection",
                "context",
                "server",
                "middleware",
                "runner",
                "stream",
                "in_process",
                "otel",
                "caller",
                "deserialize_reason",
                "handler_fn",
                // The 2026-07-28 envelope read from the params' text (issue 19).
                "envelope",
                // A result as text until a layer asks for an object (issue 17 point 4).
                "result_body",
                // Rung 6 of the runner's request ladder: a handler's result written, shaped
                // and checked.
                "result_shaping",
            ],
            may_name: &["support"],
        },
        Layer {
            name: "high_level",
            modules: &["mcp_server", "tasks"],
            may_name: &["kernel", "support"],
        },
        Layer {
            name: "top",
            modules: &["crate", "fuzzing"],
            may_name: &["high_level", "kernel", "support"],
        },
    ],
};

/// `ferromcp-types`.
const TYPES: CrateLayers = CrateLayers {
    krate: "ferromcp-types",
    layers: &[
        Layer {
            name: "version",
            modules: &["version"],
            may_name: &[],
        },
        Layer {
            name: "mcp",
            modules: &["mcp"],
            may_name: &["version"],
        },
        Layer {
            name: "net",
            modules: &["net"],
            may_name: &[],
        },
        Layer {
            name: "tables",
            modules: &["tables"],
            may_name: &["mcp", "version"],
        },
        Layer {
            name: "otel",
            modules: &["otel"],
            may_name: &["mcp", "version"],
        },
        Layer {
            name: "top",
            modules: &["crate"],
            may_name: &["otel", "tables", "net", "mcp", "version"],
        },
    ],
};

/// `ferromcp-dispatch`: the byte codecs (line, SSE) at the bottom; the plain vocabulary
/// (errors, call options, the JSON-RPC utility methods, waiting); then the dispatcher core,
/// whose traits, context, JSON-RPC engine and transports refer to each other (one layer: the
/// `Dispatcher` trait, the handler's context and the engine are one concept).
const DISPATCH: CrateLayers = CrateLayers {
    krate: "ferromcp-dispatch",
    layers: &[
        Layer {
            name: "codec",
            modules: &["codec"],
            may_name: &[],
        },
        Layer {
            name: "base",
            modules: &["error", "options", "utility", "wait"],
            may_name: &["codec"],
        },
        Layer {
            name: "core",
            modules: &[
                "boundary",
                "context",
                "direct",
                "dispatcher",
                "exchange",
                "handler",
                "jsonrpc",
                "stream",
                "transport",
            ],
            may_name: &["base", "codec"],
        },
        Layer {
            name: "top",
            modules: &["crate"],
            may_name: &["core", "base", "codec"],
        },
    ],
};

/// `ferromcp-client`: the transports (stdio, streams, Streamable HTTP) sit below the client
/// core and know it only through its error type; OAuth sits on the HTTP transport's client.
const CLIENT: CrateLayers = CrateLayers {
    krate: "ferromcp-client",
    layers: &[
        Layer {
            name: "error",
            modules: &["error"],
            may_name: &[],
        },
        Layer {
            name: "transport",
            modules: &["transport"],
            may_name: &["error"],
        },
        Layer {
            name: "oauth",
            modules: &["oauth"],
            may_name: &["transport", "error"],
        },
        Layer {
            name: "core",
            modules: &[
                "apps",
                "builder",
                "cache",
                "calls",
                "client",
                "handlers",
                "hosted_tasks",
                "lifecycle",
                "listen",
                "multiround",
                "options",
                "otel",
                "pagination",
                // A request sent as text, and the 2026-07-28 envelope encoded once per client.
                "raw",
                "skills",
                "tasks",
            ],
            may_name: &["oauth", "transport", "error"],
        },
        Layer {
            name: "top",
            modules: &["crate"],
            may_name: &["core", "oauth", "transport", "error"],
        },
    ],
};

/// `ferromcp-macros`.
const MACROS: CrateLayers = CrateLayers {
    krate: "ferromcp-macros",
    layers: &[
        Layer {
            name: "args",
            modules: &["args"],
            may_name: &[],
        },
        Layer {
            name: "expand",
            modules: &["expand"],
            may_name: &["args"],
        },
        Layer {
            name: "top",
            modules: &["crate"],
            may_name: &["expand", "args"],
        },
    ],
};

/// `ferromcp-jwt`: one module, the jsonwebtoken provider.
const JWT: CrateLayers = CrateLayers {
    krate: "ferromcp-jwt",
    layers: &[Layer {
        name: "top",
        modules: &["crate"],
        may_name: &[],
    }],
};

/// `ferromcp`, the facade.
const FACADE: CrateLayers = CrateLayers {
    krate: "ferromcp",
    layers: &[
        Layer {
            name: "testing",
            modules: &["testing"],
            may_name: &[],
        },
        Layer {
            name: "top",
            modules: &["crate"],
            may_name: &["testing"],
        },
    ],
};

/// `ferromcp-compose`: the naming rules, the backend description and the error at the
/// bottom; the bridge that asks the front client a backend's questions; forwarding one
/// request (limits, progress, cancellation, rounds) on it; a mounted backend (its client,
/// front names, list changes) on those; the layer forwarding the front's resource
/// subscriptions to the mounts above it; the builder at the root.
const COMPOSE: CrateLayers = CrateLayers {
    krate: "ferromcp-compose",
    layers: &[
        Layer {
            name: "support",
            modules: &["naming", "backend", "error"],
            may_name: &[],
        },
        Layer {
            name: "bridge",
            // `report`: a forwarded request's progress, log records and task status, queued
            // for the front request.
            modules: &["bridge", "report"],
            may_name: &[],
        },
        Layer {
            name: "forward",
            modules: &["forward"],
            may_name: &["bridge"],
        },
        // Tasks through the front: a forwarded call followed as a backend task.
        Layer {
            name: "task",
            modules: &["task"],
            may_name: &["forward", "bridge"],
        },
        Layer {
            name: "mount",
            // `template`: a mount's resource templates and completion functions; `notify`: a
            // mount kept in step with its backend's notifications.
            modules: &["mount", "template", "notify"],
            may_name: &["task", "forward", "bridge", "support"],
        },
        Layer {
            name: "subscribe",
            // `logging`: the layer forwarding the front sessions' `logging/setLevel`.
            modules: &["subscribe", "logging"],
            may_name: &["mount", "support"],
        },
        // `raw`: a mounted tool's plain call relayed as text (the front's `ToolCallRoute`).
        Layer {
            name: "relay",
            modules: &["raw"],
            may_name: &["subscribe", "mount", "forward", "support"],
        },
        Layer {
            name: "top",
            modules: &["crate"],
            may_name: &[
                "relay",
                "subscribe",
                "mount",
                "task",
                "forward",
                "bridge",
                "support",
            ],
        },
    ],
};

/// `ferromcp-cli`: argument and output helpers at the bottom, the demo server above them,
/// then the binary itself. The crate root (`main.rs`) holds the helpers every command calls
/// (`fail`, `print_out`, `init_logging`) and dispatches to the commands, so the root and the
/// commands are one layer: a cycle between them is one concept, not a layering breach. The
/// clap definition (`cli`) names each command's argument struct and the commands name it
/// (for the help), so it is in that layer too.
const CLI: CrateLayers = CrateLayers {
    krate: "ferromcp-cli",
    layers: &[
        Layer {
            name: "support",
            modules: &[
                // The MCP Apps host's assets and the sandbox page's headers (names nothing).
                "apps_host",
                "http_client",
                "output",
                "report",
                "split",
                // Every stderr line goes through its bounded queue and writer thread (std only).
                "stderr_log",
                "target",
                "telemetry",
                "terminal",
            ],
            may_name: &[],
        },
        Layer {
            name: "answer",
            modules: &["answer"],
            may_name: &["support"],
        },
        Layer {
            name: "demo",
            modules: &["demo"],
            may_name: &["support"],
        },
        Layer {
            name: "app",
            modules: &[
                "crate",
                "cli",
                "bridge",
                "client_cmd",
                "inspect",
                // `inspect --web`: the web inspector (security, server, API, session, events, tap).
                "inspect_web",
                "serve_http",
                "gateway",
            ],
            may_name: &["answer", "demo", "support"],
        },
    ],
};

/// `ferromcp-conformance`: one layer. The scenarios read the root's `Invocation` and the root
/// runs the scenarios; two modules of one small binary.
const CONFORMANCE: CrateLayers = CrateLayers {
    krate: "ferromcp-conformance",
    layers: &[Layer {
        name: "binary",
        modules: &["crate", "scenarios"],
        may_name: &[],
    }],
};

/// `ferromcp-fuzz-bodies`: the fuzz targets' bodies, one module per library they exercise,
/// under the root that re-exports them.
const FUZZ_BODIES: CrateLayers = CrateLayers {
    krate: "ferromcp-fuzz-bodies",
    layers: &[
        Layer {
            name: "bodies",
            modules: &["codec", "server"],
            may_name: &[],
        },
        Layer {
            name: "top",
            modules: &["crate"],
            may_name: &["bodies"],
        },
    ],
};

/// `ferromcp-http-server`: the wire pieces (headers, SSE frames, bodies, timers, the
/// `Mcp-Param-*` check) at the bottom; the resource-server checks on
/// them; the endpoint (service, DNS-rebinding checks, both eras' entries, sessions, streams
/// and their stores, settings, Redis), whose parts refer to each other, above; the crate
/// root on top.
const HTTP_SERVER: CrateLayers = CrateLayers {
    krate: "ferromcp-http-server",
    layers: &[
        Layer {
            name: "wire",
            modules: &[
                "headers",
                "frames",
                "timers",
                "body",
                "param_headers",
                "conn_limit",
                "forwarded",
            ],
            may_name: &[],
        },
        Layer {
            name: "auth",
            modules: &["auth"],
            may_name: &["wire"],
        },
        Layer {
            name: "endpoint",
            modules: &[
                "service",
                "security",
                "config",
                "exchange",
                "modern",
                "legacy",
                "event_store",
                "redis",
            ],
            may_name: &["auth", "wire"],
        },
        Layer {
            name: "top",
            modules: &["crate"],
            may_name: &["endpoint", "auth", "wire"],
        },
    ],
};

/// `ferromcp-auth-server`: one layer. The root holds `AuthorizationServer`, whose endpoints
/// (authorize, token, register, revoke) and stores are its methods and parts, and they name
/// its helpers: one concept, one crate, one layer.
const AUTH_SERVER: CrateLayers = CrateLayers {
    krate: "ferromcp-auth-server",
    layers: &[Layer {
        name: "auth_server",
        modules: &[
            "crate",
            "authorize",
            "cimd",
            "client_auth",
            "config",
            "consent",
            "keys",
            "oauth_error",
            "pending",
            "rate",
            "redis_store",
            "register",
            "request",
            "revoke",
            "serve",
            "store",
            "token",
        ],
        may_name: &[],
    }],
};

/// `ferromcp-jsonrpc`: the message model (ids, errors, the JSON scanner, payloads, messages)
/// at the bottom; the decoder on it; the root on top.
const JSONRPC: CrateLayers = CrateLayers {
    krate: "ferromcp-jsonrpc",
    layers: &[
        Layer {
            name: "model",
            modules: &["error", "id", "scan", "payload", "message"],
            may_name: &[],
        },
        Layer {
            name: "decode",
            modules: &["decode"],
            may_name: &["model"],
        },
        Layer {
            name: "top",
            modules: &["crate"],
            may_name: &["decode", "model"],
        },
    ],
};

/// `xtask`: code generation at the bottom (it also knows where the workspace is); the checks
/// (`layers`, and `lines`, the file-length check) on it; the command line on top.
const XTASK: CrateLayers = CrateLayers {
    krate: "xtask",
    layers: &[
        Layer {
            name: "codegen",
            modules: &["codegen"],
            may_name: &[],
        },
        Layer {
            name: "checks",
            modules: &["layers", "lines"],
            may_name: &["codegen"],
        },
        Layer {
            name: "top",
            modules: &["crate"],
            may_name: &["checks", "codegen"],
        },
    ],
};

/// `bench/load` (the load and instruction-count driver): one layer for the driver, whose
/// root holds the options and budgets every module reads and also runs them, and whose rows
/// and scenarios call each other; the binaries under `src/bin/` (each its own crate root: the
/// in-process server and the raw floor) in a layer of their own that names none of it.
const BENCH_LOAD: CrateLayers = CrateLayers {
    krate: "bench/load",
    layers: &[
        Layer {
            name: "bins",
            modules: &["bin"],
            may_name: &[],
        },
        Layer {
            name: "driver",
            modules: &[
                "crate",
                "counted",
                "gateway",
                "http",
                "msg",
                "proc",
                "report",
                "rows",
                "scaleout",
                "scenarios",
                "stdio",
                "svg",
            ],
            may_name: &[],
        },
    ],
};

/// `bench/stdio-min` (the smallest stdio server the benchmarks compare against): one file.
const BENCH_STDIO_MIN: CrateLayers = CrateLayers {
    krate: "bench/stdio-min",
    layers: &[Layer {
        name: "top",
        modules: &["crate"],
        may_name: &[],
    }],
};

/// `bench/redis-node` (one node of the Redis scale-out benchmark): one file.
const BENCH_REDIS_NODE: CrateLayers = CrateLayers {
    krate: "bench/redis-node",
    layers: &[Layer {
        name: "top",
        modules: &["crate"],
        may_name: &[],
    }],
};
