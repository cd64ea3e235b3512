//! Extensions add their own members to the advertised capabilities through
//! `ServerBuilder::contribute_capabilities` (issue 17 point 2: an extension hooks in as a
//! layer, not as a special case in the kernel); the tasks layer announces tasks this way.

#![allow(clippy::unwrap_used)]

use ferromcp_server::Server;
use ferromcp_types::ProtocolVersion;
use ferromcp_types::mcp::JsonObject;
use serde_json::{Value, json};

fn settings(v: Value) -> JsonObject {
    serde_json::from_value(v).unwrap()
}

#[test]
fn a_contributor_adds_its_members_per_revision_after_the_rest() {
    let server = Server::builder("contrib", "1")
        .extension("com.example/plain", JsonObject::new())
        .contribute_capabilities(|version, caps| {
            if version.is_modern() {
                let ext = caps.extensions.get_or_insert_with(Default::default);
                // It sees what the builder advertised before it, and merges into it.
                assert!(ext.contains_key("com.example/plain"));
                ext.insert("com.example/mine".into(), settings(json!({"v": 2})));
            } else {
                caps.experimental
                    .get_or_insert_with(Default::default)
                    .insert("mine".into(), JsonObject::new());
            }
        })
        .contribute_capabilities(|_, caps| {
            // A later contributor sees the earlier one's members.
            if let Some(ext) = caps.extensions.as_mut()
                && let Some(mine) = ext.get_mut("com.example/mine")
            {
                mine.insert("later".into(), json!(true));
            }
        })
        .build()
        .unwrap();

    let modern = serde_json::to_value(server.capabilities(ProtocolVersion::V2026_07_28)).unwrap();
    assert_eq!(
        modern["extensions"],
        json!({"com.example/mine": {"v": 2, "later": true}, "com.example/plain": {}})
    );
    assert!(modern.get("experimental").is_none());

    let old = serde_json::to_value(server.capabilities(ProtocolVersion::V2025_06_18)).unwrap();
    assert_eq!(old["experimental"], json!({"mine": {}}));
}
