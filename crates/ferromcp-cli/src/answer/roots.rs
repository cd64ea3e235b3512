//! Answers `roots/list` from `--root PATH`: each path canonicalized, as a `file://` URI
//! (percent-encoded) named after its last component.

use std::path::Path;

use ferromcp_types::mcp::Root;

/// Whether `b` stays as it is in a `file://` URI's path (RFC 3986 unreserved, and `/`).
fn plain(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/')
}

fn encode(bytes: &[u8], out: &mut String) {
    for &b in bytes {
        if plain(b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
}

/// The `file://` URI of an absolute path.
#[cfg(unix)]
pub(crate) fn file_uri(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut uri = String::from("file://");
    encode(path.as_os_str().as_bytes(), &mut uri);
    uri
}

/// The `file://` URI of an absolute path (`C:\a b` → `file:///C:/a%20b`, `\\server\share`
/// → `file://server/share`).
#[cfg(not(unix))]
pub(crate) fn file_uri(path: &Path) -> String {
    let text = path.to_string_lossy().replace('\\', "/");
    let text = text.strip_prefix("//?/").unwrap_or(&text);
    let mut uri = String::from("file://");
    if let Some(unc) = text
        .strip_prefix("UNC/")
        .or_else(|| text.strip_prefix("//"))
    {
        encode(unc.as_bytes(), &mut uri);
    } else {
        uri.push('/');
        let (drive, rest) = match text.as_bytes() {
            [d, b':', ..] if d.is_ascii_alphabetic() => text.split_at(2),
            _ => ("", text),
        };
        uri.push_str(drive);
        encode(rest.as_bytes(), &mut uri);
    }
    uri
}

/// The roots for these `--root` paths (an error names a path that cannot be resolved).
pub(crate) fn roots(paths: &[String]) -> Result<Vec<Root>, String> {
    paths
        .iter()
        .map(|p| {
            let path = std::fs::canonicalize(p).map_err(|e| format!("--root {p:?}: {e}"))?;
            let root = Root::new(file_uri(&path));
            Ok(match path.file_name() {
                Some(name) => root.with_name(name.to_string_lossy().into_owned()),
                None => root,
            })
        })
        .collect()
}

// The cases are Unix paths; Windows' drive-letter form is not run anywhere (README, "Platforms").
#[cfg(all(test, unix))]
mod tests {
    use super::file_uri;

    /// B60: roots are percent-encoded `file://` URIs.
    #[test]
    fn b60_file_uris_are_percent_encoded() {
        use std::path::Path;
        assert_eq!(file_uri(Path::new("/tmp/a b")), "file:///tmp/a%20b");
        assert_eq!(
            file_uri(Path::new("/x/é#?%&")),
            "file:///x/%C3%A9%23%3F%25%26"
        );
        assert_eq!(file_uri(Path::new("/")), "file:///");
    }
}
