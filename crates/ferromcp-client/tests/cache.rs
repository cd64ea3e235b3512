//! The response cache against ferromcp's server.
//!
//! Spec: 2026-07-28 server/utilities/caching (SEP-2549): `ttlMs` (0 = do not reuse),
//! `cacheScope` (public / private), hints only at 2026-07-28; list-changed and
//! resource-updated notifications invalidate.

#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::time::Duration;

use common::*;
use ferromcp_client::{CacheConfig, CacheMode, Client, Lifecycle, RequestOptions};
use ferromcp_server::CacheHint;
use ferromcp_types::mcp::methods::{CallTool, ListPrompts, ReadResource};
use ferromcp_types::mcp::{
    CacheScope, CallToolResult, ListPromptsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResult, ResourceContents, TextResourceContents,
};
use serde_json::Value;

fn first_tool(r: &ferromcp_types::mcp::ListToolsResult) -> String {
    r.tools[0].name.clone()
}

fn opts(mode: CacheMode) -> RequestOptions {
    RequestOptions::new().cache(mode)
}

/// caching: a fresh entry answers; Refresh asks again and stores; Bypass neither reads nor
/// writes.
#[tokio::test]
async fn hits_refresh_and_bypass() {
    within(Box::pin(async {
        let lists = Counter::default();
        let server = counting_tools(base("cache"), lists.clone())
            .cache_hint("tools/list", CacheHint::new(60_000, CacheScope::Public))
            .build()
            .unwrap();
        let client = connect_mode(Lifecycle::Modern, server).await;
        assert_eq!(
            first_tool(&client.list_tools(None).await.unwrap()),
            "tool-1"
        );
        assert_eq!(
            first_tool(&client.list_tools(None).await.unwrap()),
            "tool-1"
        );
        assert_eq!(lists.get(), 1);
        let r = client
            .list_tools_with(None, opts(CacheMode::Refresh))
            .await
            .unwrap();
        assert_eq!(first_tool(&r), "tool-2");
        let r = client
            .list_tools_with(None, opts(CacheMode::Bypass))
            .await
            .unwrap();
        assert_eq!(first_tool(&r), "tool-3");
        // Bypass did not store: the refreshed entry still answers.
        assert_eq!(
            first_tool(&client.list_tools(None).await.unwrap()),
            "tool-2"
        );
        assert_eq!(lists.get(), 3);
        // Cursor pages are never cached.
        client.list_tools(Some("next".into())).await.unwrap();
        client.list_tools(Some("next".into())).await.unwrap();
        assert_eq!(lists.get(), 5);
        client.clear_cache();
        client.list_tools(None).await.unwrap();
        assert_eq!(lists.get(), 6);
    }))
    .await;
}

/// caching: entries expire after `ttlMs`; `ttlMs: 0` is never reused.
#[tokio::test]
async fn ttl_expiry_and_zero() {
    within(async {
        let reads = Counter::default();
        let prompts = Counter::default();
        let (r, p) = (reads.clone(), prompts.clone());
        let server = base("ttl")
            .on::<ReadResource, _, _, _>(move |_ctx, q: ReadResourceRequestParams| {
                let n = r.bump();
                async move {
                    Ok(ReadResourceResult::new(vec![ResourceContents::Text(
                        TextResourceContents::new(q.uri, format!("v{n}")),
                    )]))
                }
            })
            .on::<ListPrompts, _, _, _>(move |_ctx, _q: PaginatedRequestParams| {
                p.bump();
                async { Ok(ListPromptsResult::new(vec![])) }
            })
            .cache_hint("resources/read", CacheHint::new(200, CacheScope::Private))
            .build()
            .unwrap();
        let client = connect_mode(Lifecycle::Modern, server).await;
        client.read_resource("demo://a").await.unwrap();
        client.read_resource("demo://a").await.unwrap();
        assert_eq!(reads.get(), 1);
        // Keyed by URI.
        client.read_resource("demo://b").await.unwrap();
        assert_eq!(reads.get(), 2);
        tokio::time::sleep(Duration::from_millis(300)).await;
        client.read_resource("demo://a").await.unwrap();
        assert_eq!(reads.get(), 3);
        // prompts/list carries the server's default hint, ttlMs 0.
        client.list_prompts(None).await.unwrap();
        client.list_prompts(None).await.unwrap();
        assert_eq!(prompts.get(), 2);
    })
    .await;
}

/// caching: private entries are partitioned by the caller's key; public ones are shared.
#[tokio::test]
async fn private_entries_follow_the_partition() {
    within(async {
        let lists = Counter::default();
        let server = counting_tools(base("private"), lists.clone())
            .cache_hint("tools/list", CacheHint::new(60_000, CacheScope::Private))
            .build()
            .unwrap();
        let client = connect(
            Client::builder()
                .lifecycle(Lifecycle::Modern)
                .cache_partition("alice"),
            server,
        )
        .await;
        client.list_tools(None).await.unwrap();
        client.list_tools(None).await.unwrap();
        assert_eq!(lists.get(), 1);
        client.set_cache_partition("bob");
        client.list_tools(None).await.unwrap();
        assert_eq!(lists.get(), 2);
        client.set_cache_partition("alice");
        client.list_tools(None).await.unwrap();
        assert_eq!(lists.get(), 2);
    })
    .await;
}

/// caching: hints are honoured only at 2026-07-28; in the handshake era only the configured
/// default TTL caches (0 by default), and list-changed / resource-updated notifications evict.
#[tokio::test]
async fn handshake_era_default_ttl_and_eviction() {
    within(async {
        let lists = Counter::default();
        let reads = Counter::default();
        let r = reads.clone();
        let server = counting_tools(base("evict"), lists.clone())
            .on::<ReadResource, _, _, _>(move |_ctx, q: ReadResourceRequestParams| {
                r.bump();
                async move {
                    Ok(ReadResourceResult::new(vec![ResourceContents::Text(
                        TextResourceContents::new(q.uri, "x"),
                    )]))
                }
            })
            .on::<CallTool, _, _, _>(|ctx, p| async move {
                match p.name.as_str() {
                    "change" => ctx.connection().notify_tools_list_changed().await,
                    _ => ctx.connection().notify_resource_updated("demo://a").await,
                }
                Ok(CallToolResult::text("ok"))
            })
            .tools_list_changed(true)
            .build()
            .unwrap();
        // Default config: nothing cached in the handshake era.
        let client = connect_mode(Lifecycle::Handshake, server.clone()).await;
        client.list_tools(None).await.unwrap();
        client.list_tools(None).await.unwrap();
        assert_eq!(lists.get(), 2);

        let client = connect(
            Client::builder()
                .lifecycle(Lifecycle::Handshake)
                .cache(CacheConfig::default().default_ttl(Duration::from_secs(60))),
            server,
        )
        .await;
        client.list_tools(None).await.unwrap();
        client.list_tools(None).await.unwrap();
        assert_eq!(lists.get(), 3);
        client.call_tool("change", Value::Null).await.unwrap();
        client.list_tools(None).await.unwrap();
        assert_eq!(lists.get(), 4, "list_changed evicts tools/list");
        client.read_resource("demo://a").await.unwrap();
        client.read_resource("demo://a").await.unwrap();
        assert_eq!(reads.get(), 1);
        client.call_tool("touch", Value::Null).await.unwrap();
        client.read_resource("demo://a").await.unwrap();
        assert_eq!(reads.get(), 2, "resources/updated evicts that uri");
    })
    .await;
}

/// A disabled cache never answers.
#[tokio::test]
async fn disabled_cache() {
    within(async {
        let lists = Counter::default();
        let server = counting_tools(base("off"), lists.clone())
            .cache_hint("tools/list", CacheHint::new(60_000, CacheScope::Public))
            .build()
            .unwrap();
        let client = connect(
            Client::builder()
                .lifecycle(Lifecycle::Modern)
                .cache(CacheConfig::disabled()),
            server,
        )
        .await;
        client.list_tools(None).await.unwrap();
        client.list_tools(None).await.unwrap();
        assert_eq!(lists.get(), 2);
    })
    .await;
}

/// caching: a response in flight when its entry was evicted is not stored (generation
/// counters): the server announces a change while answering the first `tools/list`.
#[tokio::test]
async fn stale_in_flight_response_is_not_cached() {
    within(async {
        let lists = Counter::default();
        let l = lists.clone();
        let server = base("stale")
            .on::<ferromcp_types::mcp::methods::ListTools, _, _, _>(
                move |ctx, _p: PaginatedRequestParams| {
                    let n = l.bump();
                    async move {
                        if n == 1 {
                            ctx.connection().notify_tools_list_changed().await;
                        }
                        Ok(ferromcp_types::mcp::ListToolsResult::new(vec![]))
                    }
                },
            )
            .tools_list_changed(true)
            .build()
            .unwrap();
        let client = connect(
            Client::builder()
                .lifecycle(Lifecycle::Handshake)
                .cache(CacheConfig::default().default_ttl(Duration::from_secs(60))),
            server,
        )
        .await;
        client.list_tools(None).await.unwrap();
        client.list_tools(None).await.unwrap();
        assert_eq!(
            lists.get(),
            2,
            "the first answer predates the change: not cached"
        );
        client.list_tools(None).await.unwrap();
        assert_eq!(lists.get(), 2, "the second one is");
    })
    .await;
}
