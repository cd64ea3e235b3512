//! The page's files, embedded in the binary (plain HTML, CSS and JavaScript: no build step).

/// The page; `{{TOKEN}}` becomes the token (in its asset URLs).
pub(crate) const INDEX_HTML: &str = include_str!("../../assets/inspector/index.html");

/// The page served on the MCP Apps sandbox origin.
// Merge point: the MCP Apps host's `assets/apps_host/sandbox.html` replaces this placeholder.
pub(crate) const SANDBOX_HTML: &str = include_str!("../../assets/inspector/sandbox.html");

/// The other files: path, content type, bytes.
const FILES: &[(&str, &str, &[u8])] = &[
    (
        "/assets/inspector.css",
        "text/css; charset=utf-8",
        include_bytes!("../../assets/inspector/inspector.css"),
    ),
    (
        "/assets/inspector.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../../assets/inspector/inspector.js"),
    ),
    (
        "/assets/forms.js",
        "text/javascript; charset=utf-8",
        include_bytes!("../../assets/inspector/forms.js"),
    ),
    // Merge point: the MCP Apps host's `assets/apps_host/apps-host.js` goes here as
    // "/assets/apps-host.js" (index.html already loads it; a 404 leaves apps unrendered).
];

/// The content type and bytes of the file at `path`.
pub(crate) fn asset(path: &str) -> Option<(&'static str, &'static [u8])> {
    FILES
        .iter()
        .find(|(p, _, _)| *p == path)
        .map(|(_, t, b)| (*t, *b))
}
