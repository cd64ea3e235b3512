//! JSON-RPC 2.0 §5.1 -32602 "Invalid params" as the kernel answers a typed handler whose
//! params do not deserialize: the wire text says which field and what kind of problem, never
//! serde's own text (which names the handler's Rust types).
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use common::{Transport, assert_code, connect, within};
use ferromcp_dispatch::HandlerError;
use ferromcp_server::{RequestContext, Server};
use ferromcp_types::jsonrpc::ErrorCode;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code, reason = "only deserialized")]
struct GreetingRequestParams {
    name: String,
    count: u32,
}

async fn greet(_: RequestContext, p: GreetingRequestParams) -> Result<Value, HandlerError> {
    Ok(json!({"text": p.name}))
}

/// JSON-RPC 2.0 §5.1 (-32602): a missing field, an unknown field and a value of the wrong
/// type each name the problem (and the field, where serde knows it) without Rust type names.
#[tokio::test]
async fn invalid_params_name_the_field_not_the_rust_type() {
    within(async {
        let server = Server::builder("params", "0.0.1")
            .on_request("x/greet", greet)
            .build()
            .unwrap();
        let c = connect(Transport::Direct, &server).await;
        c.initialize().await;
        let cases = [
            (json!({"count": 1}), Some("`name`")),
            (
                json!({"name": "a", "count": 1, "extra": true}),
                Some("`extra`"),
            ),
            (json!({"name": "a", "count": "many"}), None),
            (json!({"name": "a", "count": -1}), None),
        ];
        for (params, field) in cases {
            let e = c.fail("x/greet", Some(params.clone())).await;
            assert_code(&e, ErrorCode::INVALID_PARAMS);
            let text = e.message.to_string();
            assert!(text.starts_with("Invalid params"), "{params}: {text}");
            if let Some(field) = field {
                assert!(text.contains(field), "{params}: {text}");
            }
            for rust in ["GreetingRequestParams", "struct", "u32", "expected"] {
                assert!(!text.contains(rust), "{params}: {text}");
            }
        }
    })
    .await;
}
