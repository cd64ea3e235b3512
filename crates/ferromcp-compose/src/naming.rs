//! How a backend's names appear in front: tools and prompts as `{mount}_{name}`, resource
//! URIs and URI templates as `{mount}+{uri}` (the mount name prefixed to the URI's scheme, so
//! the front URI is still a URI and maps back by splitting at the first `+`).

/// The longest mount name.
pub(crate) const MAX_MOUNT_NAME_LEN: usize = 64;

/// Whether `name` may name a mount: 1 to [`MAX_MOUNT_NAME_LEN`] ASCII letters, digits and
/// `-`, starting with a letter (a URI scheme may start with it, and neither `_` nor `+`, the
/// separators, can occur in it).
pub(crate) fn valid_mount_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic())
        && name.len() <= MAX_MOUNT_NAME_LEN
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-')
}

/// The front name of a backend's tool or prompt.
pub(crate) fn front_name(mount: &str, name: &str) -> String {
    format!("{mount}_{name}")
}

/// The front URI (or URI template) of a backend's resource (or template).
pub(crate) fn front_uri(mount: &str, uri: &str) -> String {
    format!("{mount}+{uri}")
}

/// The backend URI a front URI of `mount` maps back to, if it is one of `mount`'s.
pub(crate) fn backend_uri<'a>(mount: &str, front: &'a str) -> Option<&'a str> {
    front.strip_prefix(mount)?.strip_prefix('+')
}

/// The variable names of an RFC 6570 URI template (operators, explode and prefix modifiers
/// left out).
pub(crate) fn template_variables(template: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        let Some(len) = rest[start..].find('}') else {
            break;
        };
        let expr = &rest[start + 1..start + len];
        let expr = expr.trim_start_matches(['+', '#', '.', '/', ';', '?', '&']);
        for var in expr.split(',') {
            let var = var.trim_end_matches('*');
            let var = var.split(':').next().unwrap_or(var);
            if !var.is_empty() && !out.iter().any(|v| v == var) {
                out.push(var.to_owned());
            }
        }
        rest = &rest[start + len + 1..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_map_back() {
        assert!(valid_mount_name("docs-2"));
        assert!(!valid_mount_name("2docs"));
        assert!(!valid_mount_name("a_b"));
        assert!(!valid_mount_name("a+b"));
        assert!(!valid_mount_name(""));
        assert_eq!(front_name("docs", "search"), "docs_search");
        let uri = front_uri("docs", "file:///a/b");
        assert_eq!(uri, "docs+file:///a/b");
        assert_eq!(backend_uri("docs", &uri), Some("file:///a/b"));
        assert_eq!(backend_uri("doc", &uri), None);
        assert_eq!(
            template_variables("x://{a}/{+b}{?c,d*}{e:3}"),
            vec!["a", "b", "c", "d", "e"]
        );
    }
}
