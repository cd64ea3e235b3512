//! Lifecycle modes against ferromcp's own server over in-memory streams.
//!
//! Spec: 2025-11-25 basic/lifecycle (initialize, version negotiation, initialized);
//! 2026-07-28 server/discover, basic/transports/stdio "Backward Compatibility" (the probe),
//! and the per-request `_meta` envelope.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use ferromcp_client::{Client, ClientError, Connected, Lifecycle};
use ferromcp_dispatch::{DirectDispatcher, Dispatcher, handler_fn};
use ferromcp_server::{Connection, ServerRunner};
use ferromcp_types::jsonrpc::{ErrorCode, ErrorObject, Payload};
use ferromcp_types::mcp::methods::ListTools;
use ferromcp_types::mcp::{
    ListToolsResult, LoggingLevel, META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL,
    META_PROTOCOL_VERSION, Meta, PaginatedRequestParams,
};
use ferromcp_types::{Era, ProtocolVersion};
use serde_json::json;

/// lifecycle › Initialization: `initialize`, the version check, `notifications/initialized`.
#[tokio::test]
async fn handshake_mode_initializes() {
    within(async {
        let client = connect_mode(Lifecycle::Handshake, base("hs").build().unwrap()).await;
        let s = client.session();
        assert_eq!(s.era, Era::Handshake);
        assert_eq!(s.protocol_version, ProtocolVersion::LATEST_HANDSHAKE);
        assert_eq!(s.server_info.as_ref().unwrap().name, "hs");
        // The server only answers after `initialized` (its init gate).
        client.ping().await.unwrap();
        client.shutdown().await;
    })
    .await;
}

/// 2026-07-28 server/discover: the modern lifecycle.
#[tokio::test]
async fn modern_mode_discovers() {
    within(async {
        let client = connect_mode(Lifecycle::Modern, base("modern").build().unwrap()).await;
        let s = client.session();
        assert_eq!(s.era, Era::Modern);
        assert_eq!(s.protocol_version, ProtocolVersion::LATEST_MODERN);
        assert!(s.supported_versions.iter().any(|v| v == "2026-07-28"));
        assert_eq!(s.server_info.as_ref().unwrap().name, "modern");
        client.ping().await.unwrap();
    })
    .await;
}

/// stdio › Backward Compatibility: a modern server answers the probe; auto picks modern.
#[tokio::test]
async fn auto_picks_modern_for_a_dual_era_server() {
    within(async {
        let client = connect_mode(Lifecycle::Auto, base("dual").build().unwrap()).await;
        assert_eq!(client.session().era, Era::Modern);
        client.ping().await.unwrap();
    })
    .await;
}

/// stdio › Backward Compatibility: a legacy server errors on the probe; auto falls back.
#[tokio::test]
async fn auto_falls_back_to_initialize_for_a_legacy_server() {
    within(async {
        let end = serve_legacy(base("legacy").build().unwrap());
        let client = Client::builder()
            .connect_stream(end.source, end.sink)
            .await
            .unwrap();
        assert_eq!(client.session().era, Era::Handshake);
        assert_eq!(
            client.session().server_info.as_ref().unwrap().name,
            "legacy"
        );
        client.ping().await.unwrap();
    })
    .await;
}

/// stdio › Backward Compatibility: a server that never answers the probe is legacy.
#[tokio::test]
async fn auto_falls_back_when_the_probe_times_out() {
    within(async {
        let server = handler_fn(|_ctx, method, _params| async move {
            match method.as_str() {
                "server/discover" => {
                    tokio::time::sleep(Duration::from_secs(30)).await;
                    Err(ErrorObject::internal_error("late").into())
                }
                "initialize" => Ok(Payload::from(json!({
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "serverInfo": {"name": "silent", "version": "1"}
                }))),
                _ => Ok(Payload::from(json!({}))),
            }
        })
        .into_arc();
        let client = Client::builder()
            .probe_timeout(Duration::from_millis(100))
            .connect(raw_server(server))
            .await
            .unwrap();
        assert_eq!(client.session().era, Era::Handshake);
        assert_eq!(
            client.session().protocol_version,
            ProtocolVersion::V2025_06_18
        );
    })
    .await;
}

/// A server that locked to modern because of our timed-out probe answers `initialize` with
/// -32022 naming a modern version: the client stays modern (probes once more).
#[tokio::test]
async fn auto_stays_modern_when_initialize_is_refused_by_a_modern_server() {
    within(async {
        let discovers = Counter::default();
        let d = discovers.clone();
        let server = handler_fn(move |_ctx, method, _params| {
            let d = d.clone();
            async move {
                match method.as_str() {
                    "server/discover" => {
                        if d.bump() == 1 {
                            tokio::time::sleep(Duration::from_secs(30)).await;
                        }
                        Ok(Payload::from(json!({
                            "resultType": "complete",
                            "supportedVersions": ["2026-07-28"],
                            "capabilities": {"tools": {}},
                            "ttlMs": 0, "cacheScope": "private",
                        })))
                    }
                    "initialize" => Err(ErrorObject::unsupported_protocol_version(
                        &["2026-07-28"],
                        Some("2025-11-25"),
                    )
                    .into()),
                    _ => Ok(Payload::from(json!({"resultType": "complete"}))),
                }
            }
        })
        .into_arc();
        let client = Client::builder()
            .probe_timeout(Duration::from_millis(100))
            .connect(raw_server(server))
            .await
            .unwrap();
        assert_eq!(client.session().era, Era::Modern);
        assert_eq!(discovers.get(), 2);
    })
    .await;
}

/// 2026-07-28 basic/versioning: a -32022 whose `supported` list names the version we sent
/// (a server that rejected the first request) makes the client retry `server/discover` once,
/// in modern mode and in the auto probe, instead of failing or falling back to `initialize`.
#[tokio::test]
async fn discover_refused_naming_our_version_is_retried() {
    for mode in [Lifecycle::Modern, Lifecycle::Auto] {
        within(async {
            let discovers = Counter::default();
            let d = discovers.clone();
            let server = handler_fn(move |_ctx, method, _params| {
                let d = d.clone();
                async move {
                    match method.as_str() {
                        "server/discover" if d.bump() == 1 => {
                            Err(ErrorObject::unsupported_protocol_version(
                                &["2026-07-28"],
                                Some("2026-07-28"),
                            )
                            .into())
                        }
                        "server/discover" => Ok(Payload::from(json!({
                            "resultType": "complete",
                            "supportedVersions": ["2026-07-28"],
                            "capabilities": {"tools": {}},
                            "ttlMs": 0, "cacheScope": "private",
                        }))),
                        _ => Err(ErrorObject::internal_error("must not be called").into()),
                    }
                }
            })
            .into_arc();
            let client = Client::builder()
                .lifecycle(mode)
                .connect(raw_server(server))
                .await
                .unwrap();
            assert_eq!(client.session().era, Era::Modern, "{mode:?}");
            assert_eq!(discovers.get(), 2, "{mode:?}");
        })
        .await;
    }
}

/// -32022 on the probe naming no version we speak is an error, not a fallback.
#[tokio::test]
async fn auto_reports_unsupported_versions() {
    within(async {
        let server = handler_fn(|_ctx, method, _params| async move {
            match method.as_str() {
                "server/discover" => Err(ErrorObject::unsupported_protocol_version(
                    &["2099-01-01"],
                    Some("2026-07-28"),
                )
                .into()),
                _ => Err(ErrorObject::internal_error("must not be called").into()),
            }
        })
        .into_arc();
        let err = Client::builder()
            .connect(raw_server(server))
            .await
            .unwrap_err();
        assert!(
            matches!(err, ClientError::UnsupportedVersion { .. }),
            "{err:?}"
        );
    })
    .await;
}

/// lifecycle › Version Negotiation: a version the client does not support fails the connect.
#[tokio::test]
async fn handshake_rejects_an_unknown_server_version() {
    within(async {
        let server = handler_fn(|_ctx, _method, _params| async move {
            Ok(Payload::from(json!({
                "protocolVersion": "2099-01-01",
                "capabilities": {},
                "serverInfo": {"name": "future", "version": "1"}
            })))
        })
        .into_arc();
        let err = Client::builder()
            .lifecycle(Lifecycle::Handshake)
            .connect(raw_server(server))
            .await
            .unwrap_err();
        assert!(
            matches!(err, ClientError::UnsupportedVersion { .. }),
            "{err:?}"
        );
    })
    .await;
}

/// Modern mode against a legacy server fails (no silent fallback).
#[tokio::test]
async fn modern_mode_against_a_legacy_server_fails() {
    within(async {
        let end = serve_legacy(base("legacy").build().unwrap());
        let err = Client::builder()
            .lifecycle(Lifecycle::Modern)
            .connect_stream(end.source, end.sink)
            .await
            .unwrap_err();
        assert!(err.code().is_some(), "{err:?}");
    })
    .await;
}

/// 2026-07-28 envelope: every request carries protocolVersion, clientCapabilities,
/// clientInfo, and logLevel once set.
#[tokio::test]
async fn modern_requests_carry_the_envelope() {
    within(async {
        let seen: Arc<Mutex<Vec<Meta>>> = Arc::default();
        let s = seen.clone();
        let server = base("env")
            .on::<ListTools, _, _, _>(move |ctx, _p: PaginatedRequestParams| {
                s.lock()
                    .unwrap()
                    .push(ctx.meta().cloned().unwrap_or_default());
                async { Ok(ListToolsResult::new(vec![])) }
            })
            .build()
            .unwrap();
        let client = connect(
            Client::builder()
                .lifecycle(Lifecycle::Modern)
                .on_roots(|| async { Ok(ferromcp_types::mcp::ListRootsResult::new(vec![])) }),
            server,
        )
        .await;
        client.list_tools_with(None, bypass()).await.unwrap();
        client
            .set_logging_level(LoggingLevel::Warning)
            .await
            .unwrap();
        client.list_tools_with(None, bypass()).await.unwrap();
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 2);
        for meta in seen.iter() {
            assert_eq!(meta.protocol_version(), Some("2026-07-28"));
            let caps = meta.get(META_CLIENT_CAPABILITIES).unwrap();
            assert_eq!(caps["roots"]["listChanged"], json!(true));
            assert!(meta.get(META_CLIENT_INFO).is_some());
        }
        assert!(seen[0].get(META_LOG_LEVEL).is_none());
        assert_eq!(seen[1].get(META_LOG_LEVEL), Some(&json!("warning")));
        assert!(seen[0].get(META_PROTOCOL_VERSION).is_some());
    })
    .await;
}

fn bypass() -> ferromcp_client::RequestOptions {
    ferromcp_client::RequestOptions::new().cache(ferromcp_client::CacheMode::Bypass)
}

/// Any dispatcher carries a client: the in-process direct pair, in the handshake era.
#[tokio::test]
async fn direct_dispatcher_transport() {
    within(async {
        let (client_half, server_half) = DirectDispatcher::pair();
        let server = base("direct").build().unwrap();
        let outbound: Arc<dyn ferromcp_dispatch::Outbound> = Arc::new(server_half.clone());
        let connection =
            Connection::for_handshake(outbound, true, ProtocolVersion::LATEST_HANDSHAKE);
        let runner = Arc::new(ServerRunner::handshake(server, connection));
        tokio::spawn(async move { server_half.run(runner).await });
        let client = Client::builder()
            .lifecycle(Lifecycle::Handshake)
            .connect(Connected::new(Arc::new(client_half)))
            .await
            .unwrap();
        client.ping().await.unwrap();
        assert_eq!(
            client.session().server_info.as_ref().unwrap().name,
            "direct"
        );
    })
    .await;
}

/// The in-process direct pair with a modern-era runner: auto picks modern.
#[tokio::test]
async fn direct_dispatcher_modern_runner() {
    within(async {
        let (client_half, server_half) = DirectDispatcher::pair();
        let outbound: Arc<dyn ferromcp_dispatch::Outbound> = Arc::new(server_half.clone());
        let runner = Arc::new(ServerRunner::modern(
            base("direct-modern").build().unwrap(),
            outbound,
        ));
        tokio::spawn(async move { server_half.run(runner).await });
        let client = Client::builder()
            .connect(Connected::new(Arc::new(client_half)))
            .await
            .unwrap();
        assert_eq!(client.session().era, Era::Modern);
        client.ping().await.unwrap();
        client.list_tools(None).await.unwrap_err();
    })
    .await;
}

/// A closed connection during the probe fails the connect with -32000.
#[tokio::test]
async fn closed_connection_fails_the_connect() {
    within(async {
        let (client_end, server_end) = ferromcp_dispatch::memory_pair(4);
        drop(server_end);
        let err = Client::builder()
            .connect_stream(client_end.source, client_end.sink)
            .await
            .unwrap_err();
        assert_eq!(err.code(), Some(ErrorCode::CONNECTION_CLOSED), "{err:?}");
    })
    .await;
}

/// A log level set at build time: carried from the first modern request; in the handshake
/// era skipped when the server declares no logging (never fatal).
#[tokio::test]
async fn build_time_log_level() {
    within(async {
        let seen: Arc<Mutex<Vec<Meta>>> = Arc::default();
        let s = seen.clone();
        let server = base("lvl")
            .on::<ListTools, _, _, _>(move |ctx, _p: PaginatedRequestParams| {
                s.lock()
                    .unwrap()
                    .push(ctx.meta().cloned().unwrap_or_default());
                async { Ok(ListToolsResult::new(vec![])) }
            })
            .build()
            .unwrap();
        let builder = || Client::builder().log_level(LoggingLevel::Error);
        let client = connect(builder().lifecycle(Lifecycle::Modern), server.clone()).await;
        client.list_tools(None).await.unwrap();
        assert_eq!(
            seen.lock().unwrap()[0].get(META_LOG_LEVEL),
            Some(&json!("error"))
        );
        let client = connect(builder().lifecycle(Lifecycle::Handshake), server).await;
        client.list_tools(None).await.unwrap();
    })
    .await;
}
