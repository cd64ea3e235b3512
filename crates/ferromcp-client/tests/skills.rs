//! The skills extension (SEP-2640), client side, against ferromcp's server in both eras:
//! the declared extension, `skills/list` pagination, `skills/get`, `resources/directory/read`,
//! skill file reads verified against the manifest's size and digest, and `load_skill`'s
//! frontmatter comparison ("Integrity and verification").
#![cfg(feature = "skills")]
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use common::*;
use ferromcp_client::skills::{SkillFileError, SkillResources, skill_digest};
use ferromcp_client::{ClientError, Lifecycle};
use ferromcp_server::McpServer;
use ferromcp_server::mcp_server::Skill;
use serde_json::json;

const PDF_MD: &str = "---\nname: pdf-tools\ndescription: Fill PDF forms\n---\n# PDF tools\n";
const FORMS_MD: &str = "# Forms\n";
const LOGO: &[u8] = &[0x89, b'P', b'N', b'G', 0xff, 0x00];

fn server(page_size: usize) -> McpServer {
    McpServer::builder("skills", "1.0.0")
        .page_size(page_size)
        .skill(
            Skill::new(PDF_MD)
                .file("references/FORMS.md", FORMS_MD)
                .file("assets/logo.png", LOGO),
        )
        .skill(Skill::new(
            "---\nname: csv-summary\ndescription: Summarize CSV\n---\n",
        ))
        .build()
        .unwrap()
}

/// SEP-2640: list (every page), get and directory read are typed; every manifest file reads
/// back verified, text and binary alike; the extension is visible where the capabilities
/// carry `extensions` (2026-07-28).
#[tokio::test]
async fn sep2640_client_lists_gets_and_reads_verified_files() {
    within(Box::pin(async {
        for mode in [Lifecycle::Handshake, Lifecycle::Modern] {
            let client = connect_mode(mode, server(1).server().clone()).await;
            assert_eq!(
                client.skills_extension().cloned(),
                (mode == Lifecycle::Modern).then(|| obj(json!({"directoryRead": true})))
            );
            let first = client.list_skills(None).await.unwrap();
            assert_eq!(first.skills.len(), 1);
            let entry = &first.skills[0];
            assert_eq!(entry.uri, "skill://pdf-tools/SKILL.md");
            assert_eq!(entry.name(), Some("pdf-tools"));
            assert_eq!(entry.description(), Some("Fill PDF forms"));
            let second = client.list_skills(first.next_cursor.clone()).await.unwrap();
            assert_eq!(second.skills[0].name(), Some("csv-summary"));
            assert!(second.next_cursor.is_none());

            let all = client.list_all_skills().await.unwrap();
            assert_eq!(all, [entry.clone(), second.skills[0].clone()]);

            let got = client.get_skill(&entry.uri).await.unwrap();
            assert_eq!(&got.skill, entry);
            let SkillResources::Files(files) = &entry.resources else {
                panic!("expected a manifest");
            };
            let expected: [&[u8]; 3] = [PDF_MD.as_bytes(), FORMS_MD.as_bytes(), LOGO];
            assert_eq!(files.len(), 3);
            for (file, bytes) in files.iter().zip(expected) {
                assert_eq!(file.digest, skill_digest(bytes));
                assert_eq!(client.read_skill_file(file).await.unwrap(), bytes);
            }

            let dir = client
                .read_directory("skill://pdf-tools", None)
                .await
                .unwrap();
            assert_eq!(dir.resources[0].uri, "skill://pdf-tools/SKILL.md");
            let next = dir.next_cursor.clone().unwrap();
            let dir2 = client
                .read_directory("skill://pdf-tools", Some(next))
                .await
                .unwrap();
            assert_eq!(
                dir2.resources[0].mime_type.as_deref(),
                Some("inode/directory")
            );

            let e = client.get_skill("skill://nope/SKILL.md").await.unwrap_err();
            let ClientError::Protocol(e) = e else {
                panic!("expected the server's error, got {e:?}");
            };
            assert_eq!(e.code.0, -32602);
        }
    }))
    .await;
}

/// SEP-2640 "Integrity and verification": content whose length differs from the manifest's
/// `size`, or whose SHA-256 differs from its `digest`, is a verification failure and is not
/// returned.
#[tokio::test]
async fn sep2640_client_refuses_content_that_fails_verification() {
    within(async {
        let client = connect_mode(Lifecycle::Modern, server(10).server().clone()).await;
        let list = client.list_skills(None).await.unwrap();
        let SkillResources::Files(files) = &list.skills[0].resources else {
            panic!("expected a manifest");
        };
        let mut wrong_size = files[1].clone();
        wrong_size.size += 1;
        match client.read_skill_file(&wrong_size).await {
            Err(SkillFileError::SizeMismatch {
                expected, actual, ..
            }) => assert_eq!((expected, actual), (wrong_size.size, wrong_size.size - 1)),
            other => panic!("expected a size mismatch, got {other:?}"),
        }
        let mut wrong_digest = files[1].clone();
        wrong_digest.digest = skill_digest(b"something else");
        match client.read_skill_file(&wrong_digest).await {
            Err(SkillFileError::DigestMismatch { actual, .. }) => {
                assert_eq!(actual, skill_digest(FORMS_MD.as_bytes()));
            }
            other => panic!("expected a digest mismatch, got {other:?}"),
        }
    })
    .await;
}

/// SEP-2640 "Pagination mirrors the base protocol's list methods": `list_all_skills`
/// follows cursors within the client's page bound and stops on a repeated cursor.
#[tokio::test]
async fn sep2640_list_all_skills_is_bounded() {
    within(async {
        let looping = base("loop")
            .on_request("skills/list", |_ctx, _p: serde_json::Value| async {
                Ok(json!({"skills": [], "nextCursor": "again"}))
            })
            .build()
            .unwrap();
        let client = connect_mode(Lifecycle::Modern, looping).await;
        let e = client.list_all_skills().await.unwrap_err();
        assert!(
            matches!(&e, ClientError::Pagination { detail, .. } if detail.contains("repeated")),
            "{e:?}"
        );

        let builder = ferromcp_client::Client::builder()
            .lifecycle(Lifecycle::Modern)
            .max_pages(1);
        let client = connect(builder, server(1).server().clone()).await;
        let e = client.list_all_skills().await.unwrap_err();
        assert!(
            matches!(&e, ClientError::Pagination { detail, .. } if detail.contains("more than 1 pages")),
            "{e:?}"
        );
    })
    .await;
}

/// SEP-2640 "Integrity and verification" (hosts compare the loaded `SKILL.md`'s frontmatter
/// with the entry's): a skill whose entry matches its file loads, and its supporting files
/// are then read verified; an entry whose `frontmatter` differs from the file's (a changed,
/// added or removed field) is refused and names the field.
#[tokio::test]
async fn sep2640_load_skill_checks_frontmatter_against_the_entry() {
    within(async {
        let client = connect_mode(Lifecycle::Modern, server(10).server().clone()).await;
        let entry = client.list_skills(None).await.unwrap().skills[0].clone();
        let loaded = client.load_skill(&entry).await.unwrap();
        assert_eq!(loaded.skill_md, PDF_MD);
        assert_eq!(loaded.entry, entry);
        let others: Vec<_> = loaded.supporting_files().map(|f| f.uri.clone()).collect();
        assert_eq!(others.len(), 2);
        assert!(!others.contains(&entry.uri));
        let forms = "skill://pdf-tools/references/FORMS.md";
        assert_eq!(
            loaded.read_file(&client, forms).await.unwrap(),
            FORMS_MD.as_bytes()
        );
        assert!(matches!(
            loaded.read_file(&client, "skill://pdf-tools/nope.md").await,
            Err(SkillFileError::NotInManifest { .. })
        ));

        let mut changed = entry.clone();
        changed
            .frontmatter
            .insert("description".into(), json!("Something else"));
        let mut added = entry.clone();
        added.frontmatter.insert("version".into(), json!(2));
        let mut removed = entry.clone();
        removed.frontmatter.remove("name");
        for (tampered, field) in [
            (changed, "description"),
            (added, "version"),
            (removed, "name"),
        ] {
            match client.load_skill(&tampered).await {
                Err(SkillFileError::FrontmatterMismatch { field: f, uri }) => {
                    assert_eq!((f.as_str(), uri.as_str()), (field, entry.uri.as_str()));
                }
                other => panic!("expected a frontmatter mismatch on {field}, got {other:?}"),
            }
        }
    })
    .await;
}

/// SEP-2640 "Integrity and verification", the case a server of its own making cannot
/// produce: a `SKILL.md` whose size and digest match the manifest but whose frontmatter
/// differs from the listed entry is refused, and a `SKILL.md` without frontmatter too.
#[tokio::test]
async fn sep2640_load_skill_refuses_a_listed_frontmatter_the_file_does_not_have() {
    const SERVED: &str = "---\nname: pdf-tools\ndescription: Evil\n---\n# PDF\n";
    const NO_FM: &str = "# no frontmatter\n";
    within(async {
        let scripted = base("scripted")
            .on_request("skills/list", |_ctx, _p: serde_json::Value| async {
                let file = |uri: &str, text: &str| {
                    json!({"uri": uri, "digest": skill_digest(text.as_bytes()),
                           "size": text.len()})
                };
                Ok(json!({"skills": [
                    {"uri": "skill://pdf-tools/SKILL.md",
                     "frontmatter": {"name": "pdf-tools", "description": "Fill PDF forms"},
                     "resources": [file("skill://pdf-tools/SKILL.md", SERVED)]},
                    {"uri": "skill://bare/SKILL.md",
                     "frontmatter": {"name": "bare", "description": "Bare"},
                     "resources": [file("skill://bare/SKILL.md", NO_FM)]}
                ]}))
            })
            .on_request("resources/read", |_ctx, p: serde_json::Value| async move {
                let uri = p["uri"].as_str().unwrap_or_default().to_owned();
                let text = if uri.starts_with("skill://bare/") {
                    NO_FM
                } else {
                    SERVED
                };
                Ok(json!({"contents": [{"uri": uri, "mimeType": "text/markdown", "text": text}]}))
            })
            .build()
            .unwrap();
        let client = connect_mode(Lifecycle::Modern, scripted).await;
        let skills = client.list_skills(None).await.unwrap().skills;
        match client.load_skill(&skills[0]).await {
            Err(SkillFileError::FrontmatterMismatch { field, .. }) => {
                assert_eq!(field, "description");
            }
            other => panic!("expected a frontmatter mismatch, got {other:?}"),
        }
        assert!(matches!(
            client.load_skill(&skills[1]).await,
            Err(SkillFileError::InvalidFrontmatter { .. })
        ));
    })
    .await;
}
