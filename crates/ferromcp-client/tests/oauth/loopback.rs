//! The loopback redirect handler: it takes the redirect, its limits, and the full flow through it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::support::{Mock, hits, start, within};
use ferromcp_client::oauth::{self, AuthorizationHandler as _, OAuthConfig, OAuthError};
use http::Method;

/// A raw HTTP/1.1 GET of `target` at `addr` (a browser, for the loopback tests): the whole
/// response text.
async fn raw_get(addr: &str, target: &str, extra: &str) -> String {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let req = format!("GET {target} HTTP/1.1\r\nhost: {addr}\r\n{extra}connection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).await.unwrap();
    out
}

/// RFC 8252 §7.3 (loopback redirect for native apps): the handler gives `open` the
/// authorization URL and waits for the redirect on its port; an idle connection and other
/// paths do not hold it up; the browser gets a page.
#[tokio::test]
async fn loopback_handler_takes_the_redirect() {
    within(async {
        let opened = Arc::new(Mutex::new(None::<String>));
        let seen = opened.clone();
        let handler = oauth::LoopbackHandler::bind(move |url: &str| {
            *seen.lock().unwrap() = Some(url.to_owned());
        })
        .await
        .unwrap();
        let redirect = handler.redirect_uri();
        let addr = redirect
            .strip_prefix("http://")
            .unwrap()
            .strip_suffix("/callback")
            .unwrap()
            .to_owned();
        assert!(addr.starts_with("127.0.0.1:"));
        let browser = tokio::spawn(async move {
            let _idle = tokio::net::TcpStream::connect(&addr).await.unwrap();
            let favicon = raw_get(&addr, "/favicon.ico", "").await;
            assert!(favicon.starts_with("HTTP/1.1 404"), "{favicon}");
            let page = raw_get(&addr, "/callback?code=c1&state=s1&iss=https%3A%2F%2Fas", "").await;
            assert!(page.starts_with("HTTP/1.1 200"), "{page}");
            assert!(page.contains("Authorization complete"));
        });
        let answer = handler
            .authorize("https://as.example/authorize?client_id=x")
            .await
            .unwrap();
        browser.await.unwrap();
        assert_eq!(answer.code, "c1");
        assert_eq!(answer.state.as_deref(), Some("s1"));
        assert_eq!(answer.iss.as_deref(), Some("https://as"));
        assert_eq!(
            opened.lock().unwrap().as_deref(),
            Some("https://as.example/authorize?client_id=x")
        );
    })
    .await;
}

/// The loopback handler's limits: no redirect within the timeout is an error; a request head
/// over the bound gets a 431 and the wait goes on; a non-loopback address is refused.
#[tokio::test]
async fn loopback_handler_limits() {
    within(async {
        let handler = oauth::LoopbackHandler::bind(|_: &str| {})
            .await
            .unwrap()
            .with_timeout(Duration::from_millis(50));
        let err = handler.authorize("https://as.example/a").await.unwrap_err();
        assert!(matches!(err, OAuthError::Authorization(_)), "{err}");

        let handler = oauth::LoopbackHandler::bind(|_: &str| {})
            .await
            .unwrap()
            .with_max_head(256);
        let addr = handler.redirect_uri()[7..]
            .trim_end_matches("/callback")
            .to_owned();
        let browser = tokio::spawn(async move {
            let big = format!("x-big: {}\r\n", "a".repeat(1024));
            let refused = raw_get(&addr, "/callback?code=no&state=no", &big).await;
            assert!(refused.starts_with("HTTP/1.1 431"), "{refused}");
            raw_get(&addr, "/callback?code=yes&state=s", "").await
        });
        let answer = handler.authorize("https://as.example/a").await.unwrap();
        assert_eq!(answer.code, "yes");
        assert!(browser.await.unwrap().starts_with("HTTP/1.1 200"));

        let err = oauth::LoopbackHandler::bind_to("0.0.0.0:0".parse().unwrap(), |_: &str| {})
            .await
            .unwrap_err();
        assert!(matches!(err, OAuthError::Config(_)), "{err}");
    })
    .await;
}

/// The whole authorization-code flow with the loopback handler: the "browser" follows the
/// authorization server's redirect to the handler's port.
#[tokio::test]
async fn loopback_handler_in_the_full_flow() {
    within(async {
        let (as_addr, seen) = start(Mock::default()).await;
        let handler = oauth::LoopbackHandler::bind(move |url: &str| {
            let target = url
                .strip_prefix(&format!("http://{as_addr}"))
                .unwrap()
                .to_owned();
            tokio::spawn(async move {
                let answer = raw_get(&as_addr.to_string(), &target, "").await;
                let location = answer
                    .lines()
                    .find_map(|l| l.strip_prefix("location: "))
                    .unwrap()
                    .trim()
                    .to_owned();
                let rest = location.strip_prefix("http://").unwrap();
                let (host, path) = rest.split_at(rest.find('/').unwrap());
                raw_get(host, path, "").await;
            });
        })
        .await
        .unwrap();
        let redirect = handler.redirect_uri();
        let cfg = OAuthConfig::new(redirect.clone(), handler);
        let tokens = oauth::authorize(&format!("http://{as_addr}/mcp"), &cfg)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(tokens.access_token, "tok");
        let token = &hits(&seen, &Method::POST, "/token")[0];
        assert_eq!(token.f("redirect_uri"), Some(redirect.as_str()));
    })
    .await;
}
