//! The skills extension (`io.modelcontextprotocol/skills`, SEP-2640), client side (feature
//! `skills`): typed `skills/list`, `skills/get` and `resources/directory/read`, and
//! [`Client::read_skill_file`], which reads one file of a skill's manifest and verifies it
//! against the entry's `size` and `digest` before handing the bytes out (SEP-2640 "Integrity
//! and verification": content that fails either check is never returned).
//!
//! [`Client::load_skill`] is the host's "load" step: it reads the `SKILL.md` with that
//! verified read, reads its YAML frontmatter (with
//! [`ferromcp_types::mcp::skills::parse_frontmatter`]) and compares it field by field with
//! the entry's `frontmatter` (SEP-2640 "Integrity and verification"); only a skill that
//! passes becomes a [`LoadedSkill`], through which its supporting files are read. Nothing is
//! read before a skill is loaded.

use std::collections::HashSet;

use base64::Engine as _;
use ferromcp_types::mcp::skills::parse_frontmatter;
use ferromcp_types::mcp::{Cursor, JsonObject, Resource, ResourceContents};
use serde::Deserialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::{Client, ClientError, RequestOptions};

/// The extension identifier.
pub const EXTENSION_SKILLS: &str = "io.modelcontextprotocol/skills";

/// One skill, as `skills/list` and `skills/get` describe it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct SkillEntry {
    /// The URI of the skill's `SKILL.md` (`skill://<skill-path>/SKILL.md`).
    pub uri: String,
    /// The `SKILL.md` YAML frontmatter as a JSON object (at least `name` and `description`).
    pub frontmatter: JsonObject,
    /// The skill's files, or [`SkillResources::Dynamic`].
    pub resources: SkillResources,
}

impl SkillEntry {
    /// The frontmatter's `name`, if it is a string.
    pub fn name(&self) -> Option<&str> {
        self.frontmatter.get("name").and_then(Value::as_str)
    }

    /// The frontmatter's `description`, if it is a string.
    pub fn description(&self) -> Option<&str> {
        self.frontmatter.get("description").and_then(Value::as_str)
    }
}

/// A skill's manifest of files.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "Value")]
#[non_exhaustive]
pub enum SkillResources {
    /// Every file of the skill, `SKILL.md` included, with digest and size.
    Files(Vec<SkillFile>),
    /// `"dynamic"`: the server publishes no manifest.
    Dynamic,
}

impl TryFrom<Value> for SkillResources {
    type Error = String;

    fn try_from(value: Value) -> Result<Self, String> {
        match value {
            Value::String(s) if s == "dynamic" => Ok(Self::Dynamic),
            Value::Array(_) => serde_json::from_value(value)
                .map(Self::Files)
                .map_err(|e| e.to_string()),
            other => Err(format!(
                "resources is neither an array nor \"dynamic\": {other}"
            )),
        }
    }
}

/// One file of a skill's manifest.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct SkillFile {
    /// The file's resource URI.
    pub uri: String,
    /// `sha256:<64 lowercase hex>` of the file's raw bytes.
    pub digest: String,
    /// The length of the file's raw bytes.
    pub size: u64,
}

/// One page of `skills/list`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ListSkillsResult {
    /// The skills on this page (an entry is never split across pages).
    pub skills: Vec<SkillEntry>,
    /// The cursor of the next page, if any.
    #[serde(default)]
    pub next_cursor: Option<Cursor>,
}

/// The result of `skills/get`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct GetSkillResult {
    /// The skill's entry.
    pub skill: SkillEntry,
}

/// One page of `resources/directory/read`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct DirectoryReadResult {
    /// The directory's direct children (subdirectories have the MIME type
    /// `inode/directory`).
    pub resources: Vec<Resource>,
    /// The cursor of the next page, if any.
    #[serde(default)]
    pub next_cursor: Option<Cursor>,
}

/// A skill whose `SKILL.md` passed [`Client::load_skill`]: size, digest and frontmatter match
/// the entry.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct LoadedSkill {
    /// The entry the skill was loaded from.
    pub entry: SkillEntry,
    /// The text of its `SKILL.md`.
    pub skill_md: String,
}

impl LoadedSkill {
    /// The skill's files other than `SKILL.md` (empty for a `"dynamic"` manifest).
    pub fn supporting_files(&self) -> impl Iterator<Item = &SkillFile> {
        let files = match &self.entry.resources {
            SkillResources::Files(files) => files.as_slice(),
            SkillResources::Dynamic => &[],
        };
        files.iter().filter(|f| f.uri != self.entry.uri)
    }

    /// Reads the file at `uri` of this skill's manifest, verified by
    /// [`Client::read_skill_file`]; a URI outside the manifest is
    /// [`SkillFileError::NotInManifest`]. With a `"dynamic"` manifest there is nothing to
    /// verify against and the bytes are returned as read.
    pub async fn read_file(&self, client: &Client, uri: &str) -> Result<Vec<u8>, SkillFileError> {
        match &self.entry.resources {
            SkillResources::Files(files) => match files.iter().find(|f| f.uri == uri) {
                Some(file) => client.read_skill_file(file).await,
                None => Err(SkillFileError::NotInManifest {
                    uri: uri.to_owned(),
                }),
            },
            SkillResources::Dynamic => client.read_skill_bytes(uri).await,
        }
    }
}

/// Why [`Client::read_skill_file`] or [`Client::load_skill`] returned nothing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SkillFileError {
    /// The read failed.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// The result had no contents for the file, or a blob that is not base64.
    #[error("resources/read of {uri} returned no usable contents")]
    NoContents {
        /// The file.
        uri: String,
    },
    /// The bytes' length differs from the manifest's `size`.
    #[error("{uri}: {actual} bytes, the manifest says {expected}")]
    SizeMismatch {
        /// The file.
        uri: String,
        /// The manifest's size.
        expected: u64,
        /// The size read.
        actual: u64,
    },
    /// The bytes' SHA-256 differs from the manifest's `digest`.
    #[error("{uri}: digest {actual}, the manifest says {expected}")]
    DigestMismatch {
        /// The file.
        uri: String,
        /// The manifest's digest.
        expected: String,
        /// The digest of what was read.
        actual: String,
    },
    /// The file is not in the skill's manifest (for [`Client::load_skill`]: the manifest
    /// does not list the entry's `SKILL.md`).
    #[error("{uri} is not in the skill's manifest")]
    NotInManifest {
        /// The file.
        uri: String,
    },
    /// The `SKILL.md` is not UTF-8 or its frontmatter cannot be read.
    #[error("{uri}: unreadable frontmatter: {reason}")]
    InvalidFrontmatter {
        /// The `SKILL.md`.
        uri: String,
        /// Why.
        reason: String,
    },
    /// A frontmatter field of the `SKILL.md` differs from (or is missing in) the entry's
    /// `frontmatter`, or the other way round.
    #[error("{uri}: frontmatter field `{field}` differs from the skill entry")]
    FrontmatterMismatch {
        /// The `SKILL.md`.
        uri: String,
        /// The first differing field (in key order).
        field: String,
    },
}

/// `sha256:<hex>` of `bytes`, as SEP-2640 formats digests.
pub fn skill_digest(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    Sha256::digest(bytes)
        .iter()
        .fold(String::from("sha256:"), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

fn decode<T: serde::de::DeserializeOwned>(method: &str, value: Value) -> Result<T, ClientError> {
    serde_json::from_value(value).map_err(|e| ClientError::decode(method, e))
}

impl Client {
    /// The server's settings for the skills extension, if it declared it.
    pub fn skills_extension(&self) -> Option<&JsonObject> {
        self.session()
            .capabilities
            .extensions
            .as_ref()?
            .get(EXTENSION_SKILLS)
    }

    /// `skills/list`: one page.
    pub async fn list_skills(
        &self,
        cursor: Option<Cursor>,
    ) -> Result<ListSkillsResult, ClientError> {
        let params = cursor.map_or_else(|| json!({}), |c| json!({ "cursor": c }));
        let value = self
            .send_request("skills/list", params, RequestOptions::new())
            .await?;
        decode("skills/list", value)
    }

    /// Every skill, following `nextCursor` (bounded by the client's page limit, default
    /// [`DEFAULT_MAX_PAGES`](crate::DEFAULT_MAX_PAGES); a repeated cursor is an error). An
    /// empty or partial listing does not mean the server has no other skills (SEP-2640).
    pub async fn list_all_skills(&self) -> Result<Vec<SkillEntry>, ClientError> {
        let max_pages = self.inner.settings.max_pages;
        let mut skills = Vec::new();
        let mut seen = HashSet::new();
        let mut cursor = None;
        for _ in 0..max_pages {
            let page = self.list_skills(cursor.take()).await?;
            skills.extend(page.skills);
            match page.next_cursor {
                None => return Ok(skills),
                Some(next) if !seen.insert(next.clone()) => {
                    return Err(ClientError::Pagination {
                        method: "skills/list".to_owned(),
                        detail: format!("the server repeated the cursor {next:?}"),
                    });
                }
                Some(next) => cursor = Some(next),
            }
        }
        Err(ClientError::Pagination {
            method: "skills/list".to_owned(),
            detail: format!("more than {max_pages} pages"),
        })
    }

    /// `skills/get`: the entry of the skill whose `SKILL.md` is at `uri` (an unknown URI is
    /// the server's -32602).
    pub async fn get_skill(&self, uri: &str) -> Result<GetSkillResult, ClientError> {
        let value = self
            .send_request("skills/get", json!({ "uri": uri }), RequestOptions::new())
            .await?;
        decode("skills/get", value)
    }

    /// `resources/directory/read`: one page of the direct children of the directory at `uri`.
    pub async fn read_directory(
        &self,
        uri: &str,
        cursor: Option<Cursor>,
    ) -> Result<DirectoryReadResult, ClientError> {
        let mut params = json!({ "uri": uri });
        if let (Some(c), Value::Object(map)) = (cursor, &mut params) {
            map.insert("cursor".into(), Value::String(c));
        }
        let value = self
            .send_request("resources/directory/read", params, RequestOptions::new())
            .await?;
        decode("resources/directory/read", value)
    }

    /// Reads one file of a skill's manifest with `resources/read` and returns its bytes
    /// only if their length is `file.size` and their SHA-256 is `file.digest`.
    pub async fn read_skill_file(&self, file: &SkillFile) -> Result<Vec<u8>, SkillFileError> {
        let bytes = self.read_skill_bytes(&file.uri).await?;
        let actual = bytes.len() as u64;
        if actual != file.size {
            return Err(SkillFileError::SizeMismatch {
                uri: file.uri.clone(),
                expected: file.size,
                actual,
            });
        }
        let digest = skill_digest(&bytes);
        if digest != file.digest {
            return Err(SkillFileError::DigestMismatch {
                uri: file.uri.clone(),
                expected: file.digest.clone(),
                actual: digest,
            });
        }
        Ok(bytes)
    }
    /// `resources/read` of `uri`, as raw bytes (unverified).
    async fn read_skill_bytes(&self, uri: &str) -> Result<Vec<u8>, SkillFileError> {
        let result = self.read_resource(uri).await?;
        let no_contents = || SkillFileError::NoContents {
            uri: uri.to_owned(),
        };
        let contents = result
            .contents
            .iter()
            .find(|c| c.uri() == uri)
            .or_else(|| result.contents.first())
            .ok_or_else(no_contents)?;
        match contents {
            ResourceContents::Text(t) => Ok(t.text.clone().into_bytes()),
            ResourceContents::Blob(b) => base64::engine::general_purpose::STANDARD
                .decode(&b.blob)
                .map_err(|_| no_contents()),
            _ => Err(no_contents()),
        }
    }

    /// Loads a skill the way SEP-2640 asks a host to: reads its `SKILL.md` (verified against
    /// the manifest's size and digest by [`read_skill_file`](Self::read_skill_file)), reads
    /// the file's YAML frontmatter and compares it field by field (JSON equality) with
    /// `entry.frontmatter`. Only if everything matches is the skill returned; its supporting
    /// files are then read with [`LoadedSkill::read_file`]. With a `"dynamic"` manifest the
    /// size and digest cannot be checked, only the frontmatter.
    pub async fn load_skill(&self, entry: &SkillEntry) -> Result<LoadedSkill, SkillFileError> {
        let bytes = match &entry.resources {
            SkillResources::Files(files) => match files.iter().find(|f| f.uri == entry.uri) {
                Some(file) => self.read_skill_file(file).await?,
                None => {
                    return Err(SkillFileError::NotInManifest {
                        uri: entry.uri.clone(),
                    });
                }
            },
            SkillResources::Dynamic => self.read_skill_bytes(&entry.uri).await?,
        };
        let invalid = |reason: String| SkillFileError::InvalidFrontmatter {
            uri: entry.uri.clone(),
            reason,
        };
        let skill_md = String::from_utf8(bytes).map_err(|_| invalid("not UTF-8".into()))?;
        let parsed = parse_frontmatter(&skill_md).map_err(invalid)?;
        let mut fields: Vec<&String> = parsed.keys().chain(entry.frontmatter.keys()).collect();
        fields.sort();
        fields.dedup();
        if let Some(field) = fields
            .into_iter()
            .find(|k| parsed.get(*k) != entry.frontmatter.get(*k))
        {
            return Err(SkillFileError::FrontmatterMismatch {
                uri: entry.uri.clone(),
                field: field.clone(),
            });
        }
        Ok(LoadedSkill {
            entry: entry.clone(),
            skill_md,
        })
    }
}
