//! Reaching the Redis of the scale-out tests (tests/http_redis.rs, tests/redis_connections.rs, tests/redis_round_trips.rs):
//! `FERROMCP_TEST_REDIS_URL` (default `redis://127.0.0.1:6379`); without one a test prints a
//! notice and passes, or fails when `FERROMCP_REQUIRE_REDIS=1` (as `.ci/run` sets).
#![allow(dead_code, unreachable_pub)]

use std::time::Duration;

/// The Redis the tests use.
pub fn redis_url() -> String {
    std::env::var("FERROMCP_TEST_REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into())
}

/// Whether a Redis is reachable; prints the skip notice when not.
pub async fn redis_up(test: &str) -> bool {
    let ok = async {
        let client = redis::Client::open(redis_url()).ok()?;
        let mut c = client.get_multiplexed_async_connection().await.ok()?;
        redis::cmd("PING").query_async::<String>(&mut c).await.ok()
    };
    let up = tokio::time::timeout(Duration::from_secs(3), ok)
        .await
        .ok()
        .flatten()
        .is_some();
    if !up {
        eprintln!(
            "SKIPPED {test}: no Redis at {} (set FERROMCP_TEST_REDIS_URL or start redis-server)",
            redis_url()
        );
        // `.ci/run` sets FERROMCP_REQUIRE_REDIS=1: there a missing Redis fails the suite.
        assert!(
            std::env::var("FERROMCP_REQUIRE_REDIS").as_deref() != Ok("1"),
            "{test}: no Redis at {} and FERROMCP_REQUIRE_REDIS=1",
            redis_url()
        );
    }
    up
}

/// A fresh namespace per test, so tests sharing the Redis never see each other's keys.
pub fn namespace(test: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    format!("ferromcp-test-{test}-{}-{nanos}", std::process::id())
}
