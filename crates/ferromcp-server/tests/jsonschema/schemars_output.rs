//! Schemas that schemars generates compile and validate as their Rust types expect.

use crate::support::{bad, bad_kw, compile, ok};
use serde_json::json;

mod generated {
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    #[derive(JsonSchema, Serialize, Deserialize)]
    #[allow(dead_code)]
    pub(crate) enum Priority {
        Low,
        High,
    }

    #[derive(JsonSchema, Serialize, Deserialize)]
    #[serde(tag = "kind", rename_all = "snake_case")]
    #[allow(dead_code)]
    pub(crate) enum Target {
        File { path: String },
        Url { url: String, retries: Option<u8> },
    }

    #[derive(JsonSchema, Serialize, Deserialize)]
    #[allow(dead_code)]
    pub(crate) struct Tag {
        pub(crate) name: String,
        pub(crate) weight: f64,
    }

    #[derive(JsonSchema, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    pub(crate) struct Args {
        pub(crate) query: String,
        pub(crate) limit: Option<u32>,
        pub(crate) priority: Priority,
        pub(crate) target: Target,
        pub(crate) tags: Vec<Tag>,
        pub(crate) children: Vec<Args>,
    }
}

#[test]
fn schemars_generated_schema() {
    let schema = serde_json::to_value(schemars::schema_for!(generated::Args)).unwrap();
    let s = compile(schema.clone());
    let good = json!({
        "query": "rust",
        "limit": 10,
        "priority": "High",
        "target": {"kind": "url", "url": "https://x", "retries": null},
        "tags": [{"name": "a", "weight": 0.5}],
        "children": [{"query": "q", "priority": "Low", "target": {"kind": "file", "path": "/p"}, "tags": [], "children": []}],
    });
    ok(&s, good.clone());
    // What the types accept, the schema accepts.
    let _: generated::Args = serde_json::from_value(good.clone()).unwrap();
    let mut wrong = good.clone();
    wrong["limit"] = json!(-1);
    let e = bad(&s, wrong);
    assert_eq!(e.errors[0].instance_path, "/limit", "{e}");
    let mut wrong = good.clone();
    wrong["priority"] = json!("Medium");
    let e = bad(&s, wrong);
    assert!(e.to_string().contains("arguments/priority"), "{e}");
    let mut wrong = good.clone();
    wrong["target"] = json!({"kind": "url"});
    let e = bad(&s, wrong);
    // The tag picks the alternative that explains the error.
    assert!(
        e.to_string()
            .contains(r#"arguments/target: missing required property "url""#),
        "{e}"
    );
    let mut wrong = good.clone();
    wrong["children"][0]["tags"] = json!([{"name": "a", "weight": "heavy"}]);
    let e = bad(&s, wrong);
    assert!(
        e.to_string()
            .contains("arguments/children/0/tags/0/weight: expected number, got string"),
        "{e}"
    );
    let mut wrong = good.clone();
    wrong["unknown"] = json!(1);
    bad_kw(&s, wrong, "additionalProperties");
    let mut wrong = good;
    wrong.as_object_mut().unwrap().remove("query");
    bad_kw(&s, wrong, "required");
}
