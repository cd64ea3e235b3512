//! JWKS outages do not stall traffic (feature `auth`): a JWKS endpoint that hangs, fails or
//! is slow, served by a tiny local hyper server that counts its hits. Requests whose key is
//! known are answered at once while a fetch hangs; floods of unknown `kid`s make one fetch at
//! a time, spaced with exponential backoff; the last good keys are used for a bounded grace
//! and then refused (503) until the JWKS is back.
#![cfg(feature = "auth")]
#![allow(clippy::unwrap_used, clippy::panic)]

#[path = "auth_support/key.rs"]
mod key;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use ferromcp_http_server::auth::{AuthError, JwtVerifier, TokenVerifier};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use key::Key;
use serde_json::{Value, json};
use tokio::net::TcpListener;

const ISS: &str = "https://as.example";
const RESOURCE: &str = "https://mcp.example/mcp";
const LIMIT: Duration = Duration::from_secs(30);

/// How the JWKS endpoint answers.
const SERVE: u8 = 0;
/// Never answers.
const HANG: u8 = 1;
/// 500 at once.
const FAIL: u8 = 2;
/// 500 after 150 ms.
const SLOW_FAIL: u8 = 3;
const SLOW: Duration = Duration::from_millis(150);

impl Key {
    /// A valid token signed by this key, naming `kid`.
    fn token_as(&self, kid: &str) -> String {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let claims = json!({"iss": ISS, "sub": "u", "aud": RESOURCE, "iat": now, "exp": now + 600});
        self.sign_as(kid, &claims)
    }

    fn token(&self) -> String {
        self.token_as(&self.kid)
    }
}

/// The local JWKS endpoint: its document, its mode, and what it saw.
struct Jwks {
    doc: Value,
    mode: AtomicU8,
    hits: AtomicUsize,
    active: AtomicUsize,
    max_active: AtomicUsize,
    starts: Mutex<Vec<Instant>>,
}

impl Jwks {
    fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }

    fn set(&self, mode: u8) {
        self.mode.store(mode, Ordering::SeqCst);
    }
}

async fn serve_jwks(key: &Key, mode: u8) -> (Arc<Jwks>, SocketAddr) {
    let jwks = Arc::new(Jwks {
        doc: json!({"keys": [key.jwk()]}),
        mode: AtomicU8::new(mode),
        hits: AtomicUsize::new(0),
        active: AtomicUsize::new(0),
        max_active: AtomicUsize::new(0),
        starts: Mutex::new(Vec::new()),
    });
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let shared = jwks.clone();
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            let jwks = shared.clone();
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(move |_req: http::Request<Incoming>| {
                    let jwks = jwks.clone();
                    async move {
                        jwks.hits.fetch_add(1, Ordering::SeqCst);
                        jwks.starts.lock().unwrap().push(Instant::now());
                        let now = jwks.active.fetch_add(1, Ordering::SeqCst) + 1;
                        jwks.max_active.fetch_max(now, Ordering::SeqCst);
                        let mode = jwks.mode.load(Ordering::SeqCst);
                        let (status, body) = match mode {
                            HANG => {
                                tokio::time::sleep(Duration::from_secs(3600)).await;
                                (500, String::new())
                            }
                            FAIL => (500, String::new()),
                            SLOW_FAIL => {
                                tokio::time::sleep(SLOW).await;
                                (500, String::new())
                            }
                            _ => (200, jwks.doc.to_string()),
                        };
                        jwks.active.fetch_sub(1, Ordering::SeqCst);
                        let r = http::Response::builder()
                            .status(status)
                            .header("content-type", "application/json")
                            .body(Full::new(Bytes::from(body)))
                            .unwrap();
                        Ok::<_, Infallible>(r)
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    (jwks, addr)
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Verifies `token` and measures how long it took.
async fn timed(v: &JwtVerifier, token: &str) -> (Result<(), AuthError>, Duration) {
    let t = Instant::now();
    let r = v.verify(token).await.map(|_| ());
    (r, t.elapsed())
}

/// S59: the JWKS hangs when the keys are due for a refresh. Fifty concurrent requests and a
/// stream of sequential ones with a known `kid` are answered at once against the last good
/// keys; the hanging refresh is the only fetch in flight.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s59_known_kids_are_answered_while_the_jwks_hangs() {
    tokio::time::timeout(LIMIT, async {
        let key = Key::new("k1");
        let (jwks, addr) = serve_jwks(&key, SERVE).await;
        let v = Arc::new(
            JwtVerifier::builder(ISS, format!("http://{addr}/jwks"), RESOURCE)
                .refresh(ms(300))
                .min_refetch(ms(100))
                .timeout(Duration::from_secs(5))
                .build()
                .unwrap(),
        );
        let token = key.token();
        v.verify(&token).await.unwrap();
        assert_eq!(jwks.hits(), 1);
        jwks.set(HANG);
        tokio::time::sleep(ms(400)).await;
        let tasks: Vec<_> = (0..50)
            .map(|_| {
                let (v, token) = (v.clone(), token.clone());
                tokio::spawn(async move { timed(&v, &token).await })
            })
            .collect();
        let mut slowest = Duration::ZERO;
        for t in tasks {
            let (r, took) = t.await.unwrap();
            r.unwrap();
            slowest = slowest.max(took);
        }
        eprintln!("s59: slowest of 50 concurrent known-kid requests: {slowest:?}");
        assert!(
            slowest < Duration::from_secs(1),
            "a request queued behind the fetch: {slowest:?}"
        );
        let until = Instant::now() + Duration::from_secs(1);
        while Instant::now() < until {
            let (r, took) = timed(&v, &token).await;
            r.unwrap();
            assert!(took < Duration::from_secs(1), "{took:?}");
            tokio::time::sleep(ms(20)).await;
        }
        assert_eq!(jwks.hits(), 2, "one refresh, still hanging");
    })
    .await
    .unwrap();
}

/// S60: a flood of made-up `kid`s while the JWKS fails slowly: one fetch at a time, spaced
/// by a backoff that doubles from `min_refetch` to `max_backoff`; every request answered
/// within the slow fetch, never queued behind a series of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s60_unknown_kid_floods_make_one_spaced_fetch_at_a_time() {
    tokio::time::timeout(LIMIT, async {
        let key = Key::new("k1");
        let (jwks, addr) = serve_jwks(&key, SERVE).await;
        let v = Arc::new(
            JwtVerifier::builder(ISS, format!("http://{addr}/jwks"), RESOURCE)
                .min_refetch(ms(100))
                .max_backoff(ms(400))
                .timeout(Duration::from_secs(2))
                .build()
                .unwrap(),
        );
        v.verify(&key.token()).await.unwrap();
        jwks.set(SLOW_FAIL);
        let until = Instant::now() + Duration::from_secs(2);
        let tasks: Vec<_> = (0..16)
            .map(|t| {
                let v = v.clone();
                let tokens: Vec<String> =
                    (0..8).map(|i| key.token_as(&format!("x{t}-{i}"))).collect();
                tokio::spawn(async move {
                    let mut slowest = Duration::ZERO;
                    let mut n = 0usize;
                    while Instant::now() < until {
                        let (r, took) = timed(&v, &tokens[n % tokens.len()]).await;
                        assert!(r.is_err());
                        slowest = slowest.max(took);
                        n += 1;
                        tokio::time::sleep(ms(5)).await;
                    }
                    slowest
                })
            })
            .collect();
        for t in tasks {
            let slowest = t.await.unwrap();
            assert!(
                slowest < SLOW + ms(850),
                "queued behind fetches: {slowest:?}"
            );
        }
        let starts = jwks.starts.lock().unwrap().clone();
        let gaps: Vec<Duration> = starts.windows(2).skip(1).map(|w| w[1] - w[0]).collect();
        eprintln!(
            "s60: {} fetches, gaps between them {gaps:?}",
            starts.len() - 1
        );
        assert_eq!(jwks.max_active.load(Ordering::SeqCst), 1);
        // Fetches at about 0.1, 0.35, 0.7, 1.25, 1.8 s (150 ms each, then 100, 200, 400,
        // 400 ms of backoff): without backoff a fetch would start every 150 ms (13+).
        assert!(
            (3..=8).contains(&(starts.len() - 1)),
            "{} fetches: {gaps:?}",
            starts.len() - 1
        );
        let last = gaps.last().copied().unwrap_or_default();
        assert!(last >= ms(450), "the backoff did not grow: {gaps:?}");
    })
    .await
    .unwrap();
}

/// S61: the JWKS fails after the keys were fetched: the last good keys are used for the
/// grace past the refresh period, then tokens are refused as unavailable (503), and they are
/// accepted again once the JWKS answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s61_stale_keys_serve_for_the_grace_then_fail_closed() {
    tokio::time::timeout(LIMIT, async {
        let key = Key::new("k1");
        let (jwks, addr) = serve_jwks(&key, SERVE).await;
        let v = JwtVerifier::builder(ISS, format!("http://{addr}/jwks"), RESOURCE)
            .refresh(ms(200))
            .min_refetch(ms(50))
            .max_backoff(ms(100))
            .stale_grace(ms(900))
            .timeout(Duration::from_secs(1))
            .build()
            .unwrap();
        let token = key.token();
        v.verify(&token).await.unwrap();
        let t0 = Instant::now();
        jwks.set(FAIL);
        // Stale after 200 ms, refreshes failing, but within the grace (up to 1.1 s).
        while t0.elapsed() < ms(650) {
            let (r, took) = timed(&v, &token).await;
            r.unwrap();
            assert!(took < Duration::from_secs(1), "{took:?}");
            tokio::time::sleep(ms(40)).await;
        }
        assert!(jwks.hits() >= 3, "refreshes were tried: {}", jwks.hits());
        tokio::time::sleep_until((t0 + ms(1300)).into()).await;
        while t0.elapsed() < ms(1700) {
            let (r, took) = timed(&v, &token).await;
            assert!(matches!(r, Err(AuthError::Unavailable(_))), "{r:?}");
            assert!(took < Duration::from_secs(1), "{took:?}");
            tokio::time::sleep(ms(40)).await;
        }
        jwks.set(SERVE);
        let back = Instant::now();
        loop {
            if v.verify(&token).await.is_ok() {
                break;
            }
            assert!(back.elapsed() < Duration::from_secs(3), "never recovered");
            tokio::time::sleep(ms(20)).await;
        }
    })
    .await
    .unwrap();
}

/// S62: no keys yet and a JWKS that hangs: concurrent requests share the one fetch, wait at
/// most the fetch timeout and are refused as unavailable (503); during the backoff that
/// follows, requests are refused at once without a fetch.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s62_without_keys_requests_wait_for_one_bounded_fetch() {
    tokio::time::timeout(LIMIT, async {
        let key = Key::new("k1");
        let (jwks, addr) = serve_jwks(&key, HANG).await;
        let v = Arc::new(
            JwtVerifier::builder(ISS, format!("http://{addr}/jwks"), RESOURCE)
                .min_refetch(Duration::from_secs(5))
                .timeout(ms(500))
                .build()
                .unwrap(),
        );
        let token = key.token();
        let tasks: Vec<_> = (0..20)
            .map(|_| {
                let (v, token) = (v.clone(), token.clone());
                tokio::spawn(async move { timed(&v, &token).await })
            })
            .collect();
        for t in tasks {
            let (r, took) = t.await.unwrap();
            assert!(matches!(r, Err(AuthError::Unavailable(_))), "{r:?}");
            assert!(took < ms(1500), "waited {took:?}");
        }
        assert_eq!(jwks.hits(), 1);
        let (r, took) = timed(&v, &token).await;
        assert!(matches!(r, Err(AuthError::Unavailable(_))), "{r:?}");
        assert!(took < ms(300), "waited during the backoff: {took:?}");
        assert_eq!(jwks.hits(), 1);
    })
    .await
    .unwrap();
}

/// S61, S60: the documented defaults of the JWKS limits.
#[test]
fn s61_jwks_limits_have_documented_defaults() {
    use ferromcp_http_server::auth::{
        DEFAULT_JWKS_MAX_BACKOFF, DEFAULT_JWKS_MIN_REFETCH, DEFAULT_JWKS_REFRESH,
        DEFAULT_JWKS_STALE_GRACE, DEFAULT_JWKS_TIMEOUT,
    };
    assert_eq!(DEFAULT_JWKS_REFRESH, Duration::from_secs(300));
    assert_eq!(DEFAULT_JWKS_MIN_REFETCH, Duration::from_secs(30));
    assert_eq!(DEFAULT_JWKS_MAX_BACKOFF, Duration::from_secs(300));
    assert_eq!(DEFAULT_JWKS_STALE_GRACE, Duration::from_secs(3600));
    assert_eq!(DEFAULT_JWKS_TIMEOUT, Duration::from_secs(10));
}
