//! The skills extension (`io.modelcontextprotocol/skills`, SEP-2640): Agent Skills served
//! over MCP.
//!
//! A [`Skill`] is a `SKILL.md` (YAML frontmatter with at least `name` and `description`,
//! then Markdown) and its supporting files. Registered with
//! [`McpServerBuilder::skill`](super::McpServerBuilder::skill), a skill named `pdf-tools` is
//! served as:
//!
//! - an entry of `skills/list` (paginated; an entry is never split across pages) and the
//!   result of `skills/get`: `{uri: "skill://pdf-tools/SKILL.md", frontmatter, resources}`,
//!   where `frontmatter` is the `SKILL.md` frontmatter as a JSON object and `resources` lists
//!   every file of the skill, `SKILL.md` included, as `{uri, digest: "sha256:<hex>", size}`
//!   (computed once, when the server is built);
//! - resources readable with `resources/read` (`SKILL.md` as `text/markdown`, and listed in
//!   `resources/list` under the frontmatter's name and description; the other files are
//!   readable but not listed);
//! - directories readable with `resources/directory/read` (`skill://pdf-tools` and its
//!   subdirectories; a subdirectory child has the MIME type `inode/directory`).
//!
//! [`Skill::prefix`] places a skill under an organizational prefix
//! (`skill://acme/billing/refunds/SKILL.md`); the prefix directories (`skill://acme`,
//! `skill://acme/billing`) are directory resources too, shared by the skills under them.
//! SEP-2640 allows nested skills (a skill directory inside another); this server does not
//! build them: register the inner skill's files as files of the outer one instead.
//!
//! The extension is declared (`{"directoryRead": true}`) in the capabilities of 2026-07-28,
//! the first revision with `extensions`. At 2025-11-25 and earlier the capabilities have no
//! `extensions` member, so nothing is declared; the methods still answer and the `SKILL.md`
//! files are still ordinary resources.
//!
//! Limits (SEP-2640 "Limits"): at most [`DEFAULT_MAX_SKILL_FILES`] files and
//! [`DEFAULT_MAX_SKILL_BYTES`] bytes per skill, `SKILL.md` included; a skill over a limit
//! fails the build ([`SkillLimits`] changes them). The frontmatter is read with a small YAML
//! subset ([`ferromcp_types::mcp::skills::parse_frontmatter`]: block mappings of scalars,
//! one nested mapping level such as `metadata`, quoted and plain scalars); anything else (block scalars, sequences, flow collections, anchors,
//! tags, plain scalars that YAML would read as dates) fails the build with the line to
//! rewrite, so that the entry's `frontmatter` is always what a YAML parser reads from the
//! file.
//!
//! ```
//! use ferromcp_server::mcp_server::{McpServer, Skill};
//!
//! let skill = Skill::new("---\nname: pdf-tools\ndescription: Fill PDF forms\n---\n# PDF tools\n")
//!     .file("references/FORMS.md", "# Forms\n");
//! let server = McpServer::builder("skills", "1.0.0").skill(skill).build().unwrap();
//! assert_eq!(server.skill_uris(), vec!["skill://pdf-tools/SKILL.md".to_string()]);
//! ```

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine as _;
use ferromcp_dispatch::HandlerError;
use ferromcp_types::jsonrpc::ErrorObject;
use ferromcp_types::mcp::skills::parse_frontmatter;
use ferromcp_types::mcp::{
    BlobResourceContents, Cursor, JsonObject, ReadResourceResult, TextResourceContents,
};
use serde::Deserialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::registry::{decode_cursor, encode_cursor};
use crate::context::RequestContext;
use crate::server::{BuildError, CacheHint};

/// The extension identifier (SEP-2640).
pub const EXTENSION_SKILLS: &str = "io.modelcontextprotocol/skills";
/// The method that lists the skills a server serves.
pub const METHOD_SKILLS_LIST: &str = "skills/list";
/// The method that returns the entry of one skill.
pub const METHOD_SKILLS_GET: &str = "skills/get";
/// The method that lists the direct children of a directory resource.
pub const METHOD_RESOURCES_DIRECTORY_READ: &str = "resources/directory/read";
/// The MIME type of a directory resource.
pub const DIRECTORY_MIME_TYPE: &str = "inode/directory";
/// The default bound on the files of one skill, `SKILL.md` included (SEP-2640: 512).
pub const DEFAULT_MAX_SKILL_FILES: usize = 512;
/// The default bound on the total size of one skill's files (SEP-2640: 16 MiB).
pub const DEFAULT_MAX_SKILL_BYTES: u64 = 16 * 1024 * 1024;

const SKILL_MD: &str = "SKILL.md";
const SCHEME: &str = "skill://";
const MAX_NAME_CHARS: usize = 64;
const MAX_DESCRIPTION_CHARS: usize = 1024;
const RESERVED_METADATA_PREFIX: &str = "io.modelcontextprotocol/";

/// One skill: its `SKILL.md` and supporting files, as text or bytes.
#[derive(Debug, Clone)]
#[must_use]
pub struct Skill {
    skill_md: String,
    prefix: Option<String>,
    files: Vec<(String, Vec<u8>)>,
}

impl Skill {
    /// A skill from the text of its `SKILL.md` (YAML frontmatter with `name` and
    /// `description`, then the instructions). The frontmatter's `name` names the skill and
    /// its directory (`skill://<name>`).
    pub fn new(skill_md: impl Into<String>) -> Self {
        Self {
            skill_md: skill_md.into(),
            prefix: None,
            files: Vec::new(),
        }
    }

    /// Places the skill under an organizational prefix of one or more `/`-separated
    /// segments (SEP-2640 `<skill-path>`): with `acme/billing`, the skill `refunds` is
    /// served at `skill://acme/billing/refunds/SKILL.md`. Skills may not nest: no skill's
    /// directory may lie inside another's.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = Some(prefix.into());
        self
    }

    /// Reads a skill from a directory: `SKILL.md` at its root and every regular file below
    /// it, as supporting files (symbolic links and names starting with `.` are skipped, so
    /// nothing outside the directory is read). Sizes are checked against `limits` before any
    /// file is read; a skill over them, a missing `SKILL.md` or a name that is not UTF-8 is an
    /// [`io::ErrorKind::InvalidData`](std::io::ErrorKind::InvalidData) error. The rest
    /// (frontmatter, naming rules) is checked when the server is built.
    pub fn from_dir(dir: impl AsRef<Path>, limits: SkillLimits) -> io::Result<Self> {
        let dir = dir.as_ref();
        let bad = |msg: String| io::Error::new(io::ErrorKind::InvalidData, msg);
        // (relative path, absolute path), depth first, names sorted.
        let mut found: Vec<(String, PathBuf)> = Vec::new();
        let mut total: u64 = 0;
        let mut stack = vec![(String::new(), dir.to_path_buf())];
        while let Some((rel, path)) = stack.pop() {
            let mut entries = fs::read_dir(&path)?.collect::<Result<Vec<_>, _>>()?;
            entries.sort_by_key(fs::DirEntry::file_name);
            let mut subdirs = Vec::new();
            for entry in entries {
                let name = entry.file_name();
                let Some(name) = name.to_str() else {
                    return Err(bad(format!("{}: a name that is not UTF-8", path.display())));
                };
                if name.starts_with('.') {
                    continue;
                }
                let child = if rel.is_empty() {
                    name.to_owned()
                } else {
                    format!("{rel}/{name}")
                };
                let kind = entry.file_type()?;
                if kind.is_dir() {
                    subdirs.push((child, entry.path()));
                } else if kind.is_file() {
                    total = total.saturating_add(entry.metadata()?.len());
                    found.push((child, entry.path()));
                    if found.len() > limits.max_files || total > limits.max_total_bytes {
                        return Err(bad(format!(
                            "{}: more than {} files or {} bytes",
                            dir.display(),
                            limits.max_files,
                            limits.max_total_bytes
                        )));
                    }
                }
            }
            // Popped in name order.
            stack.extend(subdirs.into_iter().rev());
        }
        let Some(i) = found.iter().position(|(rel, _)| rel == SKILL_MD) else {
            return Err(bad(format!("{}: no {SKILL_MD}", dir.display())));
        };
        let (_, manifest) = found.remove(i);
        let skill_md = String::from_utf8(fs::read(manifest)?)
            .map_err(|_| bad(format!("{}: {SKILL_MD} is not UTF-8", dir.display())))?;
        let mut skill = Self::new(skill_md);
        for (rel, path) in found {
            skill = skill.file(rel, fs::read(path)?);
        }
        Ok(skill)
    }

    /// Adds a supporting file at `path`, relative to the skill's root (for example
    /// `references/FORMS.md`; segments of letters, digits, `.`, `_`, `~` and `-`).
    pub fn file(mut self, path: impl Into<String>, contents: impl Into<Vec<u8>>) -> Self {
        self.files.push((path.into(), contents.into()));
        self
    }
}

/// Per-skill limits, checked when the server is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SkillLimits {
    /// The most files one skill may have, `SKILL.md` included.
    pub max_files: usize,
    /// The most bytes one skill's files may hold together.
    pub max_total_bytes: u64,
}

impl SkillLimits {
    /// Limits of `max_files` files and `max_total_bytes` bytes per skill.
    pub fn new(max_files: usize, max_total_bytes: u64) -> Self {
        Self {
            max_files,
            max_total_bytes,
        }
    }
}

impl Default for SkillLimits {
    /// SEP-2640's limits: 512 files and 16 MiB per skill.
    fn default() -> Self {
        Self::new(DEFAULT_MAX_SKILL_FILES, DEFAULT_MAX_SKILL_BYTES)
    }
}

/// One file of a registered skill.
struct SkillFile {
    uri: String,
    mime_type: String,
    bytes: Vec<u8>,
    digest: String,
}

/// A registered skill.
pub(crate) struct SkillEntry {
    pub(crate) uri: String,
    /// The skill's directory (`skill://<skill-path>`).
    root: String,
    pub(crate) name: String,
    pub(crate) description: String,
    frontmatter: JsonObject,
    /// `SKILL.md` first, then the others in registration order.
    files: Vec<SkillFile>,
}

impl SkillEntry {
    /// The `SKILL.md` text.
    pub(crate) fn skill_md(&self) -> String {
        self.files
            .first()
            .map(|f| String::from_utf8_lossy(&f.bytes).into_owned())
            .unwrap_or_default()
    }

    /// The size of `SKILL.md` in bytes.
    pub(crate) fn skill_md_size(&self) -> u64 {
        self.files.first().map_or(0, |f| f.bytes.len() as u64)
    }

    /// The entry of `skills/list` and `skills/get`.
    fn to_json(&self) -> Value {
        let resources: Vec<Value> = self
            .files
            .iter()
            .map(|f| json!({ "uri": f.uri, "digest": f.digest, "size": f.bytes.len() }))
            .collect();
        json!({ "uri": self.uri, "frontmatter": self.frontmatter, "resources": resources })
    }
}

/// A child of a directory resource.
#[derive(Clone)]
struct Child {
    uri: String,
    name: String,
    mime_type: String,
    size: Option<u64>,
}

/// Everything the skills extension serves, fixed when the server is built.
#[derive(Default)]
pub(crate) struct Skills {
    skills: Vec<Arc<SkillEntry>>,
    by_uri: HashMap<String, Arc<SkillEntry>>,
    /// File URI → (skill, index in its files).
    files: HashMap<String, (Arc<SkillEntry>, usize)>,
    /// Directory URI (no trailing slash) → its direct children, sorted by name.
    dirs: HashMap<String, Vec<Child>>,
}

impl Skills {
    /// Checks and indexes the skills (digests and sizes are computed here).
    pub(crate) fn build(skills: Vec<Skill>, limits: SkillLimits) -> Result<Self, BuildError> {
        let mut out = Self::default();
        let mut dirs: BTreeMap<String, BTreeMap<String, Child>> = BTreeMap::new();
        for skill in skills {
            let entry = Arc::new(entry(skill, limits)?);
            for other in &out.skills {
                let (a, b) = (&entry.root, &other.root);
                if a == b {
                    return Err(invalid(
                        &entry.name,
                        format!("two skills are served at {a}"),
                    ));
                }
                let inside =
                    |x: &str, y: &str| x.strip_prefix(y).is_some_and(|r| r.starts_with('/'));
                if inside(a, b) || inside(b, a) {
                    return Err(invalid(
                        &entry.name,
                        format!(
                            "{a} and {b}: skill directories may not nest (serve the inner \
                             skill's files as files of the outer one)"
                        ),
                    ));
                }
            }
            for (i, f) in entry.files.iter().enumerate() {
                out.files.insert(f.uri.clone(), (entry.clone(), i));
                // Every directory above the file, from the authority down.
                let path = f.uri.strip_prefix(SCHEME).unwrap_or(&f.uri);
                let segments: Vec<&str> = path.split('/').collect();
                let Some((first, rest)) = segments.split_first() else {
                    continue;
                };
                let mut parent = format!("{SCHEME}{first}");
                for (depth, segment) in rest.iter().enumerate() {
                    let uri = format!("{parent}/{segment}");
                    let (mime_type, size) = if depth + 1 == rest.len() {
                        (f.mime_type.clone(), Some(f.bytes.len() as u64))
                    } else {
                        (DIRECTORY_MIME_TYPE.to_owned(), None)
                    };
                    let child = Child {
                        uri: uri.clone(),
                        name: (*segment).to_owned(),
                        mime_type,
                        size,
                    };
                    dirs.entry(parent)
                        .or_default()
                        .insert((*segment).to_owned(), child);
                    parent = uri;
                }
            }
            out.by_uri.insert(entry.uri.clone(), entry.clone());
            out.skills.push(entry);
        }
        for (dir, children) in dirs {
            let mut children: Vec<Child> = children.into_values().collect();
            // SKILL.md first, then by name.
            children.sort_by_key(|c| (c.name != SKILL_MD, c.name.clone()));
            out.dirs.insert(dir, children);
        }
        Ok(out)
    }

    /// Whether no skill is registered.
    pub(crate) fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    /// The skills, in registration order.
    pub(crate) fn entries(&self) -> &[Arc<SkillEntry>] {
        &self.skills
    }

    /// Whether `uri` names a skill file.
    pub(crate) fn contains(&self, uri: &str) -> bool {
        self.files.contains_key(uri)
    }

    /// `resources/read` of a skill file, if `uri` names one.
    pub(crate) fn read(&self, uri: &str) -> Option<ReadResourceResult> {
        let (skill, i) = self.files.get(uri)?;
        let f = skill.files.get(*i)?;
        let contents = match std::str::from_utf8(&f.bytes) {
            Ok(text) => {
                let mut t = TextResourceContents::new(f.uri.clone(), text);
                t.mime_type = Some(f.mime_type.clone());
                t.into()
            }
            Err(_) => {
                let blob = base64::engine::general_purpose::STANDARD.encode(&f.bytes);
                let mut b = BlobResourceContents::new(f.uri.clone(), blob);
                b.mime_type = Some(f.mime_type.clone());
                b.into()
            }
        };
        Some(ReadResourceResult::new(vec![contents]))
    }
}

/// `skills/get` params.
#[derive(Deserialize)]
pub(crate) struct GetSkillParams {
    uri: String,
}

/// `resources/directory/read` params.
#[derive(Deserialize)]
pub(crate) struct DirectoryReadParams {
    uri: String,
    #[serde(default)]
    cursor: Option<Cursor>,
}

/// `skills/list` params.
#[derive(Deserialize)]
pub(crate) struct ListSkillsParams {
    #[serde(default)]
    cursor: Option<Cursor>,
}

/// Adds `ttlMs` and `cacheScope` (2026-07-28, SEP-2549) to a result.
fn cacheable(ctx: &RequestContext, mut result: JsonObject) -> JsonObject {
    if ctx.protocol_version().is_modern() {
        let hint = CacheHint::default();
        result.insert("ttlMs".into(), hint.ttl_ms.into());
        result.insert(
            "cacheScope".into(),
            serde_json::to_value(hint.scope).unwrap_or(Value::Null),
        );
    }
    result
}

/// Offset pagination over `len` items with the registry's opaque cursors.
fn page_bounds(
    cursor: Option<&Cursor>,
    len: usize,
    page_size: usize,
) -> Result<(usize, usize, Option<Cursor>), ErrorObject> {
    let offset = decode_cursor(cursor)?;
    if offset > len {
        return Err(ErrorObject::invalid_params("Invalid cursor"));
    }
    let end = offset.saturating_add(page_size).min(len);
    Ok((offset, end, (end < len).then(|| encode_cursor(end))))
}

/// `skills/list`: one page of entries (each entry whole).
pub(crate) fn list(
    skills: &Skills,
    ctx: &RequestContext,
    params: &ListSkillsParams,
    page_size: usize,
) -> Result<JsonObject, HandlerError> {
    let (start, end, next) = page_bounds(params.cursor.as_ref(), skills.skills.len(), page_size)?;
    let entries: Vec<Value> = skills.skills[start..end]
        .iter()
        .map(|s| s.to_json())
        .collect();
    let mut result = JsonObject::new();
    result.insert("skills".into(), Value::Array(entries));
    if let Some(next) = next {
        result.insert("nextCursor".into(), Value::String(next));
    }
    Ok(cacheable(ctx, result))
}

/// `skills/get`: the entry of one skill; -32602 for a URI that names no served skill.
pub(crate) fn get(
    skills: &Skills,
    ctx: &RequestContext,
    params: &GetSkillParams,
) -> Result<JsonObject, HandlerError> {
    let Some(skill) = skills.by_uri.get(&params.uri) else {
        return Err(ErrorObject::invalid_params("Unknown skill")
            .with_data(json!({ "uri": ferromcp_types::jsonrpc::echo(&params.uri) }))
            .into());
    };
    let mut result = JsonObject::new();
    result.insert("skill".into(), skill.to_json());
    Ok(cacheable(ctx, result))
}

/// `resources/directory/read`: one page of a directory's direct children; -32602 for a URI
/// that names a file or nothing.
pub(crate) fn read_directory(
    skills: &Skills,
    ctx: &RequestContext,
    params: &DirectoryReadParams,
    page_size: usize,
) -> Result<JsonObject, HandlerError> {
    let uri = params.uri.strip_suffix('/').unwrap_or(&params.uri);
    let Some(children) = skills.dirs.get(uri) else {
        let reason = if skills.files.contains_key(uri) {
            "Not a directory"
        } else {
            "Resource not found"
        };
        return Err(ErrorObject::invalid_params(reason)
            .with_data(json!({ "uri": ferromcp_types::jsonrpc::echo(&params.uri) }))
            .into());
    };
    let (start, end, next) = page_bounds(params.cursor.as_ref(), children.len(), page_size)?;
    let resources: Vec<Value> = children[start..end]
        .iter()
        .map(|c| {
            let mut r = json!({ "uri": c.uri, "name": c.name, "mimeType": c.mime_type });
            if let (Some(size), Value::Object(map)) = (c.size, &mut r) {
                map.insert("size".into(), size.into());
            }
            r
        })
        .collect();
    let mut result = JsonObject::new();
    result.insert("resources".into(), Value::Array(resources));
    if let Some(next) = next {
        result.insert("nextCursor".into(), Value::String(next));
    }
    Ok(cacheable(ctx, result))
}

fn invalid(name: &str, reason: impl Into<String>) -> BuildError {
    BuildError::Invalid {
        name: format!("skill {name}"),
        reason: reason.into(),
    }
}

/// Checks one skill and computes its digests.
fn entry(skill: Skill, limits: SkillLimits) -> Result<SkillEntry, BuildError> {
    let frontmatter = parse_frontmatter(&skill.skill_md).map_err(|e| invalid("SKILL.md", e))?;
    let name = match frontmatter.get("name") {
        Some(Value::String(name)) => name.clone(),
        _ => return Err(invalid("SKILL.md", "the frontmatter has no string `name`")),
    };
    check_name(&name).map_err(|e| invalid(&name, e))?;
    let description = match frontmatter.get("description") {
        Some(Value::String(d)) if !d.is_empty() => d.clone(),
        _ => {
            return Err(invalid(
                &name,
                "the frontmatter has no non-empty string `description`",
            ));
        }
    };
    if description.chars().count() > MAX_DESCRIPTION_CHARS {
        return Err(invalid(
            &name,
            format!("the description is longer than {MAX_DESCRIPTION_CHARS} characters"),
        ));
    }
    if let Some(Value::Object(metadata)) = frontmatter.get("metadata")
        && let Some(key) = metadata
            .keys()
            .find(|k| k.starts_with(RESERVED_METADATA_PREFIX))
    {
        return Err(invalid(
            &name,
            format!(
                "metadata key `{key}` uses the prefix reserved for MCP extensions \
                 ({RESERVED_METADATA_PREFIX})"
            ),
        ));
    }
    let count = skill.files.len() + 1;
    if count > limits.max_files {
        return Err(invalid(
            &name,
            format!(
                "{count} files, more than the limit of {} per skill",
                limits.max_files
            ),
        ));
    }
    let total: u64 =
        skill.skill_md.len() as u64 + skill.files.iter().map(|(_, b)| b.len() as u64).sum::<u64>();
    if total > limits.max_total_bytes {
        return Err(invalid(
            &name,
            format!(
                "{total} bytes, more than the limit of {} per skill",
                limits.max_total_bytes
            ),
        ));
    }
    let root = match &skill.prefix {
        Some(prefix) => {
            check_path(prefix).map_err(|e| invalid(&name, format!("prefix `{prefix}`: {e}")))?;
            format!("{SCHEME}{prefix}/{name}")
        }
        None => format!("{SCHEME}{name}"),
    };
    let mut files = vec![file(&root, SKILL_MD, skill.skill_md.into_bytes())];
    let mut paths: Vec<String> = Vec::with_capacity(skill.files.len());
    for (path, bytes) in skill.files {
        check_path(&path).map_err(|e| invalid(&name, format!("file `{path}`: {e}")))?;
        if path == SKILL_MD || paths.contains(&path) {
            return Err(invalid(&name, format!("file `{path}` is given twice")));
        }
        if let Some(other) = paths.iter().find(|p| {
            p.strip_prefix(path.as_str())
                .is_some_and(|r| r.starts_with('/'))
                || path
                    .strip_prefix(p.as_str())
                    .is_some_and(|r| r.starts_with('/'))
        }) {
            return Err(invalid(
                &name,
                format!("`{path}` and `{other}`: one is a file, the other inside it"),
            ));
        }
        paths.push(path.clone());
        files.push(file(&root, &path, bytes));
    }
    Ok(SkillEntry {
        uri: format!("{root}/{SKILL_MD}"),
        root,
        name,
        description,
        frontmatter,
        files,
    })
}

fn file(root: &str, path: &str, bytes: Vec<u8>) -> SkillFile {
    let digest = format!("sha256:{}", hex(&Sha256::digest(&bytes)));
    let name = path.rsplit('/').next().unwrap_or(path);
    SkillFile {
        uri: format!("{root}/{path}"),
        mime_type: mime_for(name, std::str::from_utf8(&bytes).is_ok()).to_owned(),
        bytes,
        digest,
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// A MIME type from the file name's extension.
fn mime_for(name: &str, utf8: bool) -> &'static str {
    let ext = name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "md" | "markdown" => "text/markdown",
        "txt" => "text/plain",
        "py" => "text/x-python",
        "sh" => "text/x-shellscript",
        "js" | "mjs" => "text/javascript",
        "ts" => "text/x-typescript",
        "html" | "htm" => "text/html",
        "csv" => "text/csv",
        "json" => "application/json",
        "yaml" | "yml" => "application/yaml",
        "xml" => "application/xml",
        "pdf" => "application/pdf",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "svg" => "image/svg+xml",
        _ if utf8 => "text/plain",
        _ => "application/octet-stream",
    }
}

/// Agent Skills naming rules: 1–64 characters, lowercase letters, digits and hyphens, no
/// leading, trailing or consecutive hyphens.
fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= MAX_NAME_CHARS
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--");
    if ok {
        Ok(())
    } else {
        Err(format!(
            "the name `{name}` breaks the Agent Skills naming rules (1-64 characters: lowercase \
             letters, digits and hyphens; no leading, trailing or consecutive hyphens)"
        ))
    }
}

/// A relative path of URI-safe segments (RFC 3986 unreserved characters), no `.` or `..`.
fn check_path(path: &str) -> Result<(), String> {
    if path.is_empty() {
        return Err("the path is empty".into());
    }
    for segment in path.split('/') {
        if segment.is_empty() || segment == "." || segment == ".." {
            return Err("paths are relative, with no empty, `.` or `..` segments".into());
        }
        if !segment
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'~' | b'-'))
        {
            return Err(
                "a segment may hold only letters, digits, `.`, `_`, `~` and `-`".to_owned(),
            );
        }
    }
    Ok(())
}
