//! Every method of every vendored schema has a marker type in `mcp::methods`, and every marker
//! names a schema method.

use std::fs;
use std::path::Path;

use ferromcp_types::mcp::methods::{self, Request as _};
use serde_json::Value;

/// Every method and notification name in every vendored schema (2024-11-05 … 2026-07-28) has
/// a marker type in `mcp::methods`, and every marker names a method of some schema.
#[test]
fn every_schema_method_has_a_marker() {
    use methods::Notification as N;
    let markers: Vec<&str> = vec![
        methods::Initialize::METHOD,
        methods::Ping::METHOD,
        methods::Discover::METHOD,
        methods::ListTools::METHOD,
        methods::CallTool::METHOD,
        methods::ListResources::METHOD,
        methods::ListResourceTemplates::METHOD,
        methods::ReadResource::METHOD,
        methods::Subscribe::METHOD,
        methods::Unsubscribe::METHOD,
        methods::ListPrompts::METHOD,
        methods::GetPrompt::METHOD,
        methods::Complete::METHOD,
        methods::SetLevel::METHOD,
        methods::CreateMessage::METHOD,
        methods::Elicit::METHOD,
        methods::ListRoots::METHOD,
        methods::SubscriptionsListen::METHOD,
        methods::GetTask::METHOD,
        methods::GetTaskPayload::METHOD,
        methods::ListTasks::METHOD,
        methods::CancelTask::METHOD,
        <methods::Initialized as N>::METHOD,
        <methods::Cancelled as N>::METHOD,
        <methods::Progress as N>::METHOD,
        <methods::LoggingMessage as N>::METHOD,
        <methods::ResourceUpdated as N>::METHOD,
        <methods::ResourceListChanged as N>::METHOD,
        <methods::ToolListChanged as N>::METHOD,
        <methods::PromptListChanged as N>::METHOD,
        <methods::RootsListChanged as N>::METHOD,
        <methods::ElicitationComplete as N>::METHOD,
        <methods::TaskStatusNotification as N>::METHOD,
        <methods::SubscriptionsAcknowledged as N>::METHOD,
    ];
    let mut in_schemas = std::collections::BTreeSet::new();
    for version in [
        "2024-11-05",
        "2025-03-26",
        "2025-06-18",
        "2025-11-25",
        "2026-07-28",
    ] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../spec")
            .join(version)
            .join("schema.json");
        let schema: Value = serde_json::from_slice(&fs::read(path).unwrap()).unwrap();
        let defs = schema
            .get("$defs")
            .or_else(|| schema.get("definitions"))
            .unwrap();
        for def in defs.as_object().unwrap().values() {
            if let Some(m) = def
                .pointer("/properties/method/const")
                .and_then(Value::as_str)
            {
                in_schemas.insert(m.to_owned());
                assert!(markers.contains(&m), "{version}: no marker type for `{m}`");
            }
        }
    }
    for m in &markers {
        assert!(
            in_schemas.contains(*m),
            "marker for `{m}` names no schema method"
        );
    }
}
