//! The sandbox page's headers, and what the two assets must keep (the limits' defaults in
//! step with the Rust constants, the sandbox's default-deny policy and inner sandbox). Their
//! behaviour in a browser is proven by `browser/apps.test.mjs`.

use super::*;

fn header<'a>(headers: &'a [(&'static str, String)], name: &str) -> &'a str {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("no {name} header"))
}

#[test]
fn s80_sandbox_page_is_framed_only_by_the_host_origin() {
    let headers = sandbox_headers("http://127.0.0.1:6274").unwrap();
    let csp = header(&headers, "Content-Security-Policy");
    assert!(
        csp.ends_with("frame-ancestors http://127.0.0.1:6274"),
        "{csp}"
    );
    assert_eq!(header(&headers, "X-Content-Type-Options"), "nosniff");
    assert_eq!(header(&headers, "Referrer-Policy"), "no-referrer");
    assert_eq!(header(&headers, "Cache-Control"), "no-store");
    assert!(header(&headers, "Content-Type").starts_with("text/html"));
    // IPv6 loopback and https origins are plain origins too.
    assert!(sandbox_headers("http://[::1]:8080").is_some());
    assert!(sandbox_headers("https://inspector.example").is_some());
}

#[test]
fn s80_hostile_host_origins_get_no_headers() {
    for origin in [
        "",
        "http://",
        "127.0.0.1:6274",
        "javascript:alert(1)",
        "http://a; script-src *",
        "http://a b",
        "http://a\r\nSet-Cookie: x=1",
        "http://a/path",
        "http://a'",
        "*",
    ] {
        assert!(sandbox_headers(origin).is_none(), "{origin:?}");
    }
}

#[test]
fn s81_the_ceiling_policy_never_allows_plugins_eval_or_forms() {
    let csp = sandbox_csp("http://127.0.0.1:1").unwrap();
    let directives: Vec<&str> = csp.split("; ").collect();
    assert_eq!(directives.first(), Some(&"default-src 'none'"));
    assert!(directives.contains(&"object-src 'none'"), "{csp}");
    assert!(directives.contains(&"form-action 'none'"), "{csp}");
    assert!(!csp.contains("unsafe-eval"), "{csp}");
    assert!(!csp.contains(" * ") && !csp.contains(" *;"), "{csp}");
}

#[test]
fn s81_the_sandbox_gives_the_app_a_default_deny_policy_and_no_origin() {
    // The app's frame: scripts only, never the sandbox's origin.
    assert!(SANDBOX_HTML.contains(r#"inner.setAttribute("sandbox", "allow-scripts");"#));
    assert_eq!(
        SANDBOX_HTML.matches("allow-same-origin").count(),
        1,
        "only in a comment"
    );
    // The app's policy starts from SEP-1865's restrictive default.
    for directive in [
        r#""default-src 'none'""#,
        r#""connect-src " + (connect || "'none'")"#,
        r#""frame-src " + (frame || "'none'")"#,
        r#""base-uri " + (base || "'self'")"#,
        r#""object-src 'none'""#,
    ] {
        assert!(SANDBOX_HTML.contains(directive), "{directive}");
    }
    // The proxy loads nothing from elsewhere.
    assert!(!SANDBOX_HTML.contains("<script src"));
    assert!(!APPS_HOST_JS.contains("import "));
}

/// The number after `name:` on the page script's DEFAULTS line for `name`.
fn js_default(name: &str) -> u64 {
    let line = APPS_HOST_JS
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{name}:")))
        .unwrap_or_else(|| panic!("no default {name} in apps-host.js"));
    let value = line
        .split_once(':')
        .map(|(_, v)| v.trim_start())
        .unwrap_or_default();
    let digits: String = value.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().unwrap()
}

#[test]
fn s83_the_page_script_defaults_are_the_documented_ones() {
    assert_eq!(js_default("maxMessageBytes"), DEFAULT_APP_MAX_MESSAGE_BYTES);
    assert_eq!(
        js_default("maxCallsPerMinute"),
        u64::from(DEFAULT_APP_MAX_CALLS_PER_MINUTE)
    );
    assert_eq!(
        js_default("maxPendingCalls"),
        u64::from(DEFAULT_APP_MAX_PENDING_CALLS)
    );
    assert_eq!(
        js_default("teardownTimeoutMs"),
        DEFAULT_APP_TEARDOWN_TIMEOUT_MS
    );
    assert!(APPS_HOST_JS.contains(&format!("sandboxPath: \"{SANDBOX_PATH}\"")));
}

#[test]
fn s82_the_page_script_checks_visibility_and_links() {
    // Visibility defaults to model and app; only "app" lets the app call the tool.
    assert!(APPS_HOST_JS.contains(r#"return ["model", "app"];"#));
    assert!(APPS_HOST_JS.contains(r#"toolVisibility(tool).indexOf("app") !== -1"#));
    assert!(APPS_HOST_JS.contains("is not visible to apps"));
    assert!(APPS_HOST_JS.contains(r#"throw { refused: "unknown tool ""#));
    // Links: http(s) only, and only through the page's openLink.
    assert!(
        APPS_HOST_JS.contains(r#"parsed.protocol === "http:" || parsed.protocol === "https:""#)
    );
    assert!(APPS_HOST_JS.contains("opts.openLink(url)"));
    // Only the sandbox frame, from the sandbox origin, is read.
    assert!(
        APPS_HOST_JS
            .contains("event.source !== iframe.contentWindow || event.origin !== sandboxOrigin")
    );
}

#[test]
fn c50_the_sandbox_never_relays_sandbox_messages_and_drops_a_navigated_app() {
    // App messages: only from the app's frame, opaque origin, never `ui/notifications/sandbox-*`.
    assert!(SANDBOX_HTML.contains("event.source === inner.contentWindow"));
    assert!(SANDBOX_HTML.contains(r#"if (event.origin !== "null") { return; }"#));
    assert_eq!(
        SANDBOX_HTML
            .matches("msg.method.indexOf(SANDBOX_PREFIX) === 0) { return; }")
            .count(),
        2,
        "sandbox messages are dropped in both directions"
    );
    // The resource is loaded once; a second load of the app's frame (navigation) closes it.
    assert!(SANDBOX_HTML.contains("if (!inner && loads === 0)"));
    assert!(SANDBOX_HTML.contains("if (loads > 1)"));
    // Host messages: only from the parent at the host origin.
    assert!(SANDBOX_HTML.contains("if (event.origin !== hostOrigin) { return; }"));
}

#[test]
fn s80_the_sandbox_answers_only_for_an_allowed_host_origin() {
    let allowed = ["http://127.0.0.1:6274", "http://localhost:6274"];
    assert_eq!(
        requested_host_origin("host=http%3A%2F%2F127.0.0.1%3A6274", &allowed),
        Some("http://127.0.0.1:6274")
    );
    assert_eq!(
        requested_host_origin("x=1&host=http://localhost:6274", &allowed),
        Some("http://localhost:6274")
    );
    for query in [
        "",
        "host=",
        "host=http%3A%2F%2Fevil.example",
        "host=http%3A%2F%2F127.0.0.1%3A6275",
        "host=http%3A%2F%2F127.0.0.1%3A6274%2F",
        "host=%zz",
        "host=%C3%28",
        "host=%",
        "hostx=http://localhost:6274",
    ] {
        assert_eq!(requested_host_origin(query, &allowed), None, "{query:?}");
    }
}

#[test]
fn the_browser_test_serves_the_sandbox_page_with_this_policy() {
    // browser/apps.test.mjs serves sandbox.html itself (node): its policy must be this one.
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../browser/apps.test.mjs");
    let Ok(js) = std::fs::read_to_string(path) else {
        return; // a packaged crate has no browser/ directory
    };
    let csp = sandbox_csp("http://127.0.0.1:1").unwrap();
    for directive in csp.split("; ") {
        let directive = directive.replace("http://127.0.0.1:1", "${hostOrigin}");
        assert!(js.contains(&directive), "apps.test.mjs lacks {directive:?}");
    }
}
