//! The page's files, embedded in the binary (plain HTML, CSS and JavaScript: no build step).

/// The page; `{{TOKEN}}` becomes the token (in its asset URLs).
pub(crate) const INDEX_HTML: &str = include_str!("../../assets/inspector/index.html");

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
    (
        "/assets/apps-host.js",
        "text/javascript; charset=utf-8",
        crate::apps_host::APPS_HOST_JS.as_bytes(),
    ),
];

/// The content type and bytes of the file at `path`.
pub(crate) fn asset(path: &str) -> Option<(&'static str, &'static [u8])> {
    FILES
        .iter()
        .find(|(p, _, _)| *p == path)
        .map(|(_, t, b)| (*t, *b))
}
