//! The skills extension (`io.modelcontextprotocol/skills`, SEP-2640) end to end through the
//! direct dispatcher: the capability declaration, `skills/list` (pagination, atomic entries,
//! digests and sizes), `skills/get`, skill files through `resources/read` and
//! `resources/list`, `resources/directory/read`, and the build-time limits and naming rules.
#![allow(clippy::unwrap_used, clippy::panic)]

mod in_process_support;
use in_process_support::{Client, run};

use base64::Engine as _;
use ferromcp_dispatch::{CallOptions, Dispatcher, Outbound, handler_fn};
use ferromcp_server::BuildError;
use ferromcp_server::McpServer;
use ferromcp_server::mcp_server::{
    DEFAULT_MAX_SKILL_BYTES, DEFAULT_MAX_SKILL_FILES, EXTENSION_SKILLS, Skill, SkillLimits,
};
use ferromcp_types::Era;
use ferromcp_types::jsonrpc::{ErrorObject, Payload};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const PDF_MD: &str = "---\nname: pdf-tools\ndescription: Fill PDF forms\nlicense: MIT\n\
                      metadata:\n  author: acme\n  version: \"2\"\n---\n# PDF tools\n";
const FORMS_MD: &str = "# Forms\n";
const LOGO: &[u8] = &[0x89, b'P', b'N', b'G', 0xff, 0x00];

fn md(name: &str) -> String {
    format!("---\nname: {name}\ndescription: The {name} skill\n---\nBody of {name}.\n")
}

fn pdf_skill() -> Skill {
    Skill::new(PDF_MD)
        .file("references/FORMS.md", FORMS_MD)
        .file("assets/logo.png", LOGO)
        .file("assets/icons/small.txt", "s")
}

fn server() -> McpServer {
    McpServer::builder("skills", "1.0.0")
        .skill(pdf_skill())
        .skill(Skill::new(md("csv-summary")))
        .build()
        .unwrap()
}

fn digest(bytes: &[u8]) -> String {
    let hex: String = Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256:{hex}")
}

fn build_error(skill: Skill, limits: Option<SkillLimits>) -> String {
    let mut b = McpServer::builder("s", "1").skill(skill);
    if let Some(limits) = limits {
        b = b.skill_limits(limits);
    }
    match b.build() {
        Err(e @ BuildError::Invalid { .. }) => e.to_string(),
        Err(e) => panic!("unexpected error kind: {e}"),
        Ok(_) => panic!("the build should fail"),
    }
}

fn assert_invalid_params(e: &ErrorObject, uri: &str) {
    assert_eq!(e.code.0, -32602, "{e:?}");
    assert_eq!(e.data.as_ref().unwrap()["uri"], json!(uri));
}

/// The capabilities a handshake-era client sees (the `initialize` result).
async fn initialize_capabilities(server: &McpServer) -> Value {
    let peer = server.server().in_process(Era::Handshake);
    let handler =
        handler_fn(
            |_, method, _| async move { Err(ErrorObject::method_not_found(&method).into()) },
        )
        .into_arc();
    let runner = peer.clone();
    tokio::spawn(async move { runner.run(handler).await });
    let init = json!({"protocolVersion": "2025-11-25", "capabilities": {},
                      "clientInfo": {"name": "t", "version": "1"}});
    let r = peer
        .send_request(
            "initialize",
            Some(Payload::from_value(init)),
            CallOptions::new(),
        )
        .await
        .unwrap();
    r.into_value().unwrap()["capabilities"].clone()
}

/// SEP-2640 "Capability": declared inline with `directoryRead: true` next to the `resources`
/// capability, at 2026-07-28 (the first revision with `extensions`); a 2025-11-25
/// `initialize` carries no `extensions`; a server without skills declares nothing and does
/// not serve the methods.
#[tokio::test]
async fn sep2640_capability_declared_at_2026_with_directory_read() {
    run(async {
        let c = Client::connect(&server(), Era::Modern).await;
        let caps = c.request("server/discover", json!({})).await.unwrap()["capabilities"].clone();
        assert_eq!(
            caps["extensions"][EXTENSION_SKILLS],
            json!({"directoryRead": true})
        );
        assert!(caps["resources"].is_object());

        let caps = initialize_capabilities(&server()).await;
        assert!(caps.get("extensions").is_none(), "{caps}");
        assert!(caps["resources"].is_object());

        let plain = McpServer::builder("plain", "1").build().unwrap();
        let c = Client::connect(&plain, Era::Modern).await;
        let caps = c.request("server/discover", json!({})).await.unwrap()["capabilities"].clone();
        assert!(
            caps.get("extensions")
                .is_none_or(|e| e.get(EXTENSION_SKILLS).is_none())
        );
        let e = c.request("skills/list", json!({})).await.unwrap_err();
        assert_eq!(e.code.0, -32601);
    })
    .await;
}

/// SEP-2640 `skills/list`: an entry is `{uri, frontmatter, resources}`; `frontmatter` is the
/// SKILL.md's YAML frontmatter as JSON; `resources` lists every file once, SKILL.md first,
/// with `sha256:<hex>` digests and byte sizes of the raw bytes; `ttlMs`/`cacheScope` at
/// 2026-07-28 only.
#[tokio::test]
async fn sep2640_skills_list_entries_carry_frontmatter_digests_and_sizes() {
    run(async {
        for era in [Era::Handshake, Era::Modern] {
            let c = Client::connect(&server(), era).await;
            let list = c.request("skills/list", json!({})).await.unwrap();
            assert!(list.get("nextCursor").is_none());
            assert_eq!(
                list.get("ttlMs").is_some() && list.get("cacheScope").is_some(),
                era == Era::Modern,
                "{list}"
            );
            let skills = list["skills"].as_array().unwrap();
            assert_eq!(skills.len(), 2);
            let pdf = &skills[0];
            assert_eq!(pdf["uri"], "skill://pdf-tools/SKILL.md");
            assert_eq!(
                pdf["frontmatter"],
                json!({"name": "pdf-tools", "description": "Fill PDF forms", "license": "MIT",
                       "metadata": {"author": "acme", "version": "2"}})
            );
            assert_eq!(
                pdf["resources"],
                json!([
                    {"uri": "skill://pdf-tools/SKILL.md", "digest": digest(PDF_MD.as_bytes()),
                     "size": PDF_MD.len()},
                    {"uri": "skill://pdf-tools/references/FORMS.md",
                     "digest": digest(FORMS_MD.as_bytes()), "size": FORMS_MD.len()},
                    {"uri": "skill://pdf-tools/assets/logo.png", "digest": digest(LOGO),
                     "size": LOGO.len()},
                    {"uri": "skill://pdf-tools/assets/icons/small.txt", "digest": digest(b"s"),
                     "size": 1},
                ])
            );
            assert_eq!(skills[1]["uri"], "skill://csv-summary/SKILL.md");
        }
    })
    .await;
}

/// SEP-2640 "Pagination mirrors the base protocol": opaque cursors, whole entries per page,
/// -32602 for a cursor the server did not make.
#[tokio::test]
async fn sep2640_skills_list_paginates_whole_entries() {
    run(async {
        let server = McpServer::builder("s", "1")
            .page_size(1)
            .skill(pdf_skill())
            .skill(Skill::new(md("alpha")))
            .skill(Skill::new(md("beta")))
            .build()
            .unwrap();
        let c = Client::connect(&server, Era::Modern).await;
        let mut cursor = None;
        let mut seen = Vec::new();
        loop {
            let params = cursor.map_or_else(|| json!({}), |c: Value| json!({"cursor": c}));
            let page = c.request("skills/list", params).await.unwrap();
            let skills = page["skills"].as_array().unwrap();
            assert_eq!(skills.len(), 1);
            // Atomic: the whole resources set of each skill is on its page.
            let files = skills[0]["resources"].as_array().unwrap().len();
            assert_eq!(files, if seen.is_empty() { 4 } else { 1 });
            seen.push(skills[0]["uri"].as_str().unwrap().to_owned());
            match page.get("nextCursor") {
                Some(next) => cursor = Some(next.clone()),
                None => break,
            }
        }
        assert_eq!(
            seen,
            [
                "skill://pdf-tools/SKILL.md",
                "skill://alpha/SKILL.md",
                "skill://beta/SKILL.md"
            ]
        );
        let e = c
            .request("skills/list", json!({"cursor": "not-ours"}))
            .await
            .unwrap_err();
        assert_eq!(e.code.0, -32602);
    })
    .await;
}

/// SEP-2640 `skills/get`: the same entry as `skills/list`, no `nextCursor`, cache attributes
/// at 2026-07-28; -32602 (with the URI in `data`) for a URI that names no served skill,
/// including a file of a skill that is not its SKILL.md.
#[tokio::test]
async fn sep2640_skills_get_returns_the_entry_and_rejects_unknown_uris() {
    run(async {
        let c = Client::connect(&server(), Era::Modern).await;
        let list = c.request("skills/list", json!({})).await.unwrap();
        let got = c
            .request("skills/get", json!({"uri": "skill://pdf-tools/SKILL.md"}))
            .await
            .unwrap();
        assert_eq!(got["skill"], list["skills"][0]);
        assert!(got.get("nextCursor").is_none());
        assert!(got.get("ttlMs").is_some() && got.get("cacheScope").is_some());

        for uri in [
            "skill://nope/SKILL.md",
            "skill://pdf-tools/references/FORMS.md",
        ] {
            let e = c
                .request("skills/get", json!({"uri": uri}))
                .await
                .unwrap_err();
            assert_invalid_params(&e, uri);
        }
        let e = c.request("skills/get", json!({})).await.unwrap_err();
        assert_eq!(e.code.0, -32602);
    })
    .await;
}

/// SEP-2640: skill files are resources. SKILL.md reads as `text/markdown` and is listed in
/// `resources/list` with the frontmatter's name and description; other files read (binary
/// ones as base64 blobs whose bytes match the digest) but are not listed.
#[tokio::test]
async fn sep2640_skill_files_read_through_resources() {
    run(async {
        for era in [Era::Handshake, Era::Modern] {
            let c = Client::connect(&server(), era).await;
            let read = c
                .request(
                    "resources/read",
                    json!({"uri": "skill://pdf-tools/SKILL.md"}),
                )
                .await
                .unwrap();
            assert_eq!(read["contents"][0]["mimeType"], "text/markdown");
            assert_eq!(read["contents"][0]["text"], PDF_MD);

            let read = c
                .request(
                    "resources/read",
                    json!({"uri": "skill://pdf-tools/assets/logo.png"}),
                )
                .await
                .unwrap();
            assert_eq!(read["contents"][0]["mimeType"], "image/png");
            let blob = base64::engine::general_purpose::STANDARD
                .decode(read["contents"][0]["blob"].as_str().unwrap())
                .unwrap();
            assert_eq!(digest(&blob), digest(LOGO));

            let list = c.request("resources/list", json!({})).await.unwrap();
            let resources = list["resources"].as_array().unwrap();
            assert_eq!(resources.len(), 2, "{list}");
            assert_eq!(resources[0]["uri"], "skill://pdf-tools/SKILL.md");
            assert_eq!(resources[0]["name"], "pdf-tools");
            assert_eq!(resources[0]["description"], "Fill PDF forms");
            assert_eq!(resources[0]["mimeType"], "text/markdown");
            assert_eq!(resources[0]["size"], PDF_MD.len());
            assert_eq!(resources[1]["name"], "csv-summary");
        }
    })
    .await;
}

/// SEP-2640 `resources/directory/read`: the direct children of a skill directory,
/// subdirectories as `inode/directory`; -32602 for a file or an unknown URI; paginated with
/// the base protocol's cursors.
#[tokio::test]
async fn sep2640_directory_read_lists_direct_children() {
    run(async {
        let c = Client::connect(&server(), Era::Modern).await;
        let root = c
            .request(
                "resources/directory/read",
                json!({"uri": "skill://pdf-tools"}),
            )
            .await
            .unwrap();
        assert!(root.get("nextCursor").is_none());
        assert_eq!(
            root["resources"],
            json!([
                {"uri": "skill://pdf-tools/SKILL.md", "name": "SKILL.md",
                 "mimeType": "text/markdown", "size": PDF_MD.len()},
                {"uri": "skill://pdf-tools/assets", "name": "assets",
                 "mimeType": "inode/directory"},
                {"uri": "skill://pdf-tools/references", "name": "references",
                 "mimeType": "inode/directory"},
            ])
        );
        let assets = c
            .request(
                "resources/directory/read",
                json!({"uri": "skill://pdf-tools/assets/"}),
            )
            .await
            .unwrap();
        let names: Vec<_> = assets["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r["name"].clone(), r["mimeType"].clone()))
            .collect();
        assert_eq!(
            names,
            [
                (json!("icons"), json!("inode/directory")),
                (json!("logo.png"), json!("image/png"))
            ]
        );
        for uri in ["skill://pdf-tools/SKILL.md", "skill://nowhere"] {
            let e = c
                .request("resources/directory/read", json!({"uri": uri}))
                .await
                .unwrap_err();
            assert_invalid_params(&e, uri);
        }

        let paged = McpServer::builder("s", "1")
            .page_size(2)
            .skill(pdf_skill())
            .build()
            .unwrap();
        let c = Client::connect(&paged, Era::Modern).await;
        let first = c
            .request(
                "resources/directory/read",
                json!({"uri": "skill://pdf-tools"}),
            )
            .await
            .unwrap();
        assert_eq!(first["resources"].as_array().unwrap().len(), 2);
        let next = first["nextCursor"].clone();
        let second = c
            .request(
                "resources/directory/read",
                json!({"uri": "skill://pdf-tools", "cursor": next}),
            )
            .await
            .unwrap();
        assert_eq!(second["resources"][0]["name"], "references");
        assert!(second.get("nextCursor").is_none());
    })
    .await;
}

/// SEP-2640 "Limits": 512 files and 16 MiB per skill by default (SKILL.md included),
/// configurable; a skill over a limit fails the build with a clear error.
#[test]
fn sep2640_limits_fail_the_build() {
    let at_limit = (1..DEFAULT_MAX_SKILL_FILES).fold(Skill::new(md("many")), |s, i| {
        s.file(format!("f/{i}.txt"), "x")
    });
    McpServer::builder("s", "1")
        .skill(at_limit.clone())
        .build()
        .unwrap();
    let e = build_error(at_limit.file("one-more.txt", "x"), None);
    assert!(e.contains("513 files") && e.contains("512"), "{e}");

    let skill_md = md("big");
    let room = usize::try_from(DEFAULT_MAX_SKILL_BYTES).unwrap() - skill_md.len();
    McpServer::builder("s", "1")
        .skill(Skill::new(skill_md.clone()).file("blob.bin", vec![0u8; room]))
        .build()
        .unwrap();
    let e = build_error(
        Skill::new(skill_md).file("blob.bin", vec![0u8; room + 1]),
        None,
    );
    assert!(e.contains("16777217 bytes"), "{e}");

    let small = SkillLimits::new(2, 100);
    let e = build_error(
        Skill::new(md("s")).file("a", "1").file("b", "2"),
        Some(small),
    );
    assert!(e.contains("3 files"), "{e}");
    let e = build_error(Skill::new(md("s")).file("a", vec![0u8; 100]), Some(small));
    assert!(e.contains("bytes, more than the limit of 100"), "{e}");
}

/// SEP-2640 / Agent Skills naming and structure rules, checked at build: the name, the
/// required frontmatter fields, relative URI-safe file paths, no duplicates, no reserved
/// metadata keys.
#[test]
fn sep2640_naming_and_structure_rules_fail_the_build() {
    let cases: Vec<(Skill, &str)> = vec![
        (Skill::new(md("Bad-Name")), "naming rules"),
        (Skill::new(md("a--b")), "naming rules"),
        (Skill::new(md("-a")), "naming rules"),
        (Skill::new(md(&"a".repeat(65))), "naming rules"),
        (Skill::new("# no frontmatter\n"), "---"),
        (Skill::new("---\nname: x\n---\n"), "description"),
        (
            Skill::new(format!(
                "---\nname: x\ndescription: {}\n---\n",
                "d".repeat(1025)
            )),
            "longer than 1024",
        ),
        (Skill::new(md("x")).file("../escape", "1"), "segments"),
        (Skill::new(md("x")).file("/abs", "1"), "segments"),
        (Skill::new(md("x")).file("a b", "1"), "segment may hold"),
        (Skill::new(md("x")).file("a", "1").file("a", "2"), "twice"),
        (Skill::new(md("x")).file("SKILL.md", "1"), "twice"),
        (
            Skill::new(md("x")).file("a", "1").file("a/b", "2"),
            "inside",
        ),
        (
            Skill::new(
                "---\nname: x\ndescription: d\nmetadata:\n  io.modelcontextprotocol/k: v\n---\n",
            ),
            "reserved",
        ),
        (
            Skill::new("---\nname: x\ndescription: |\n  block\n---\n"),
            "quoted string",
        ),
    ];
    for (skill, needle) in cases {
        let e = build_error(skill, None);
        assert!(e.contains(needle), "{needle}: {e}");
    }
    let two = McpServer::builder("s", "1")
        .skill(Skill::new(md("same")))
        .skill(Skill::new(md("same")))
        .build();
    assert!(two.is_err());
}

/// SEP-2640 "Resource Mapping": a `<skill-path>` may carry an organizational prefix; the
/// prefix directories are directory resources shared by the skills under them; skill
/// directories may not nest here, and a prefix follows the path rules.
#[tokio::test]
async fn sep2640_prefixed_skills_share_namespace_directories() {
    run(async {
        let server = McpServer::builder("s", "1")
            .skill(Skill::new(md("refunds")).prefix("acme/billing"))
            .skill(
                Skill::new(md("invoices"))
                    .prefix("acme/billing")
                    .file("t/a.md", "a"),
            )
            .skill(Skill::new(md("refunds")).prefix("acme/support"))
            .build()
            .unwrap();
        assert_eq!(
            server.skill_uris(),
            [
                "skill://acme/billing/refunds/SKILL.md",
                "skill://acme/billing/invoices/SKILL.md",
                "skill://acme/support/refunds/SKILL.md"
            ]
        );
        let c = Client::connect(&server, Era::Modern).await;
        let got = c
            .request(
                "skills/get",
                json!({"uri": "skill://acme/billing/invoices/SKILL.md"}),
            )
            .await
            .unwrap();
        assert_eq!(
            got["skill"]["resources"][1]["uri"],
            "skill://acme/billing/invoices/t/a.md"
        );
        let children = |v: &Value| -> Vec<Value> {
            v["resources"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| json!([r["uri"], r["mimeType"]]))
                .collect()
        };
        let acme = c
            .request("resources/directory/read", json!({"uri": "skill://acme"}))
            .await
            .unwrap();
        assert_eq!(
            children(&acme),
            [
                json!(["skill://acme/billing", "inode/directory"]),
                json!(["skill://acme/support", "inode/directory"])
            ]
        );
        let billing = c
            .request(
                "resources/directory/read",
                json!({"uri": "skill://acme/billing"}),
            )
            .await
            .unwrap();
        assert_eq!(
            children(&billing),
            [
                json!(["skill://acme/billing/invoices", "inode/directory"]),
                json!(["skill://acme/billing/refunds", "inode/directory"])
            ]
        );
        let read = c
            .request(
                "resources/read",
                json!({"uri": "skill://acme/support/refunds/SKILL.md"}),
            )
            .await
            .unwrap();
        assert_eq!(read["contents"][0]["text"], md("refunds"));
    })
    .await;

    let nested = McpServer::builder("s", "1")
        .skill(Skill::new(md("outer")))
        .skill(Skill::new(md("inner")).prefix("outer/sub"))
        .build();
    assert!(nested.unwrap_err().to_string().contains("may not nest"));
    let e = build_error(Skill::new(md("x")).prefix("a//b"), None);
    assert!(e.contains("prefix"), "{e}");
}

/// A fresh directory under the system temp dir, removed on drop.
struct TempDir(std::path::PathBuf);

impl TempDir {
    fn new(tag: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("ferromcp-skills-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    fn write(&self, rel: &str, contents: &str) {
        let path = self.0.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// SEP-2640 "SDKs: Convenience Wrappers" (declare a skill from a directory): every regular
/// file below the directory, hidden names and symbolic links skipped, in name order; the
/// limits are checked before reading; a directory without `SKILL.md` is refused.
#[tokio::test]
async fn sep2640_skill_from_directory() {
    let dir = TempDir::new("from-dir");
    dir.write("SKILL.md", &md("from-disk"));
    dir.write("scripts/run.sh", "echo hi\n");
    dir.write("references/B.md", "b");
    dir.write("references/A.md", "a");
    dir.write(".hidden/secret.txt", "no");
    dir.write(".env", "no");
    #[cfg(unix)]
    std::os::unix::fs::symlink("/etc/hostname", dir.0.join("link.txt")).unwrap();

    let skill = Skill::from_dir(&dir.0, SkillLimits::default()).unwrap();
    let server = McpServer::builder("s", "1").skill(skill).build().unwrap();
    run(async {
        let c = Client::connect(&server, Era::Modern).await;
        let list = c.request("skills/list", json!({})).await.unwrap();
        let uris: Vec<_> = list["skills"][0]["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["uri"].clone())
            .collect();
        assert_eq!(
            uris,
            [
                "skill://from-disk/SKILL.md",
                "skill://from-disk/references/A.md",
                "skill://from-disk/references/B.md",
                "skill://from-disk/scripts/run.sh"
            ]
        );
    })
    .await;

    let e = Skill::from_dir(&dir.0, SkillLimits::new(3, DEFAULT_MAX_SKILL_BYTES)).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidData);
    let e = Skill::from_dir(&dir.0, SkillLimits::new(DEFAULT_MAX_SKILL_FILES, 10)).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidData);
    let empty = TempDir::new("no-manifest");
    empty.write("README.md", "x");
    let e = Skill::from_dir(&empty.0, SkillLimits::default()).unwrap_err();
    assert!(e.to_string().contains("no SKILL.md"), "{e}");
}
