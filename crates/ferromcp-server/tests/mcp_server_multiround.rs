//! Multi-round requests from the high-level server at 2026-07-28 ("Base Protocol › Patterns
//! › Multi-round requests"; "Client Features › Elicitation / Sampling / Roots"): resolvers
//! and context methods answered through `InputRequiredResult` rounds with a sealed, bound,
//! expiring `requestState`.
#![allow(clippy::unwrap_used, clippy::panic)]

mod elicitation_support;

use std::time::Duration;

use elicitation_support::*;
use ferromcp_server::request_state::{KeyRing, SealerConfig, StateKey};
use ferromcp_types::Era;
use ferromcp_types::jsonrpc::ErrorObject;
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------------
// 2026-07-28: multi-round requests

/// Multi-round requests › basic workflow: InputRequiredResult, then the retry completes.
#[tokio::test]
async fn modern_elicitation_round_trip() {
    run(async {
        let c = Client::connect(&server(), Era::Modern, all_caps(), never()).await;
        let r = c.call("hello", json!({})).await.unwrap();
        assert_eq!(r["resultType"], "input_required");
        let req = &r["inputRequests"]["user_name"];
        assert_eq!(req["method"], "elicitation/create");
        assert_eq!(req["params"]["message"], "What is your name?");
        assert_eq!(
            req["params"]["requestedSchema"],
            json!({"type": "object", "properties": {"name": {"type": "string"}},
                   "required": ["name"]})
        );
        let state = r["requestState"].clone();
        assert!(state.as_str().unwrap().starts_with("v1."));

        // Extra keys are ignored.
        let answers = json!({"user_name": {"action": "accept", "content": {"name": "Bob"}},
                             "other": {"action": "decline"}});
        let r = c.retry("hello", json!({}), answers, &state).await.unwrap();
        assert_eq!(r["resultType"], "complete");
        assert_eq!(text(&r), "Hello, Bob!");
        assert!(
            c.asked().is_empty(),
            "no server→client requests at 2026-07-28"
        );
    })
    .await;
}

/// Sampling, roots and elicitation asked together in one round.
#[tokio::test]
async fn modern_multiple_inputs_one_round() {
    run(async {
        let c = Client::connect(&server(), Era::Modern, all_caps(), never()).await;
        let r = c.call("everything", json!({})).await.unwrap();
        let reqs = r["inputRequests"].as_object().unwrap();
        let mut keys: Vec<_> = reqs.keys().cloned().collect();
        keys.sort();
        assert_eq!(keys, ["capital_question", "client_roots", "user_name"]);
        assert_eq!(reqs["capital_question"]["method"], "sampling/createMessage");
        assert_eq!(reqs["capital_question"]["params"]["maxTokens"], 100);
        assert_eq!(reqs["client_roots"], json!({"method": "roots/list"}));
        let mut answers = json!({});
        for (k, q) in reqs {
            answers[k] = user(q["method"].as_str().unwrap(), &q["params"]).unwrap();
        }
        let r = c
            .retry("everything", json!({}), answers, &r["requestState"])
            .await
            .unwrap();
        assert_eq!(text(&r), "alice|Paris|file:///test/root");
    })
    .await;
}

/// A question that depends on another's answer comes in a later round, with a new state.
#[tokio::test]
async fn modern_dependent_questions_take_two_rounds() {
    run(async {
        let c = Client::connect(&server(), Era::Modern, all_caps(), never()).await;
        let r1 = c.call("two_rounds", json!({})).await.unwrap();
        let keys: Vec<_> = r1["inputRequests"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(keys, ["user_name"]);
        let a1 = json!({"user_name": {"action": "accept", "content": {"name": "Ann"}}});
        let r2 = c
            .retry("two_rounds", json!({}), a1, &r1["requestState"])
            .await
            .unwrap();
        assert_eq!(r2["resultType"], "input_required");
        let q = &r2["inputRequests"]["color"];
        assert_eq!(q["params"]["message"], "Ann, what is your favorite color?");
        assert_ne!(r2["requestState"], r1["requestState"]);
        // Only the new key is answered: the first answer rides the state.
        let a2 = json!({"color": {"action": "accept", "content": {"color": "green"}}});
        let r3 = c
            .retry("two_rounds", json!({}), a2, &r2["requestState"])
            .await
            .unwrap();
        assert_eq!(text(&r3), "Ann likes green");
    })
    .await;
}

/// Missing or ill-fitting answers are asked again (a new InputRequiredResult), not errors.
#[tokio::test]
async fn modern_wrong_or_missing_answers_are_asked_again() {
    run(async {
        let c = Client::connect(&server(), Era::Modern, all_caps(), never()).await;
        let r = c.call("hello", json!({})).await.unwrap();
        let state = r["requestState"].clone();
        for wrong in [
            json!({"wrong_key": {"action": "accept", "content": {"name": "x"}}}),
            json!({"user_name": {"action": "accept", "content": {"name": 5}}}),
            json!({"user_name": {"action": "accept", "content": {}}}),
            json!({"user_name": {"roots": []}}),
        ] {
            let r = c
                .retry("hello", json!({}), wrong.clone(), &state)
                .await
                .unwrap();
            assert_eq!(r["resultType"], "input_required", "{wrong}");
            assert!(r["inputRequests"]["user_name"].is_object());
        }
        // A retry without inputResponses asks again too.
        let r = c
            .request(
                "tools/call",
                json!({"name": "hello", "arguments": {}, "requestState": state}),
            )
            .await
            .unwrap();
        assert_eq!(r["resultType"], "input_required");
    })
    .await;
}

/// Request state integrity: tampered, foreign (other arguments or tool) or expired →
/// -32602 "Invalid or expired requestState"; answers with no state at all are a first round.
#[tokio::test]
async fn modern_bad_request_state_is_32602() {
    run(async {
        let c = Client::connect(&server(), Era::Modern, all_caps(), never()).await;
        let args = json!({"city": "Lisbon"});
        let r = c.call("weather", args.clone()).await.unwrap();
        let state = r["requestState"].as_str().unwrap().to_owned();
        let answers = json!({"user_name": {"action": "accept", "content": {"name": "Bo"}}});
        let check = |e: ErrorObject| {
            assert_eq!(code(&e), -32602);
            assert_eq!(e.message, "Invalid or expired requestState");
        };
        let tampered = json!(format!("{state}-TAMPERED"));
        check(
            c.retry("weather", args.clone(), answers.clone(), &tampered)
                .await
                .unwrap_err(),
        );
        let other_args = json!({"city": "Porto"});
        check(
            c.retry("weather", other_args, answers.clone(), &json!(state))
                .await
                .unwrap_err(),
        );
        check(
            c.retry("hello", json!({}), answers.clone(), &json!(state))
                .await
                .unwrap_err(),
        );
        // Answers without any state are a first round that already carries its answers
        // (MRTR "Error Handling"): used by key, not refused.
        let r = c
            .retry("weather", args.clone(), answers.clone(), &Value::Null)
            .await
            .unwrap();
        assert_eq!(text(&r), "Bo: sunny in Lisbon");
        // Another server's state (another key).
        let other = Client::connect(&server(), Era::Modern, all_caps(), never()).await;
        check(
            other
                .retry("weather", args.clone(), answers.clone(), &json!(state))
                .await
                .unwrap_err(),
        );
        // The genuine retry works.
        let r = c
            .retry("weather", args, answers, &json!(state))
            .await
            .unwrap();
        assert_eq!(text(&r), "Bo: sunny in Lisbon");

        // Expired.
        let short = server_with(|b| {
            b.request_state_config(SealerConfig::default().with_ttl(Duration::from_millis(1)))
        });
        let c = Client::connect(&short, Era::Modern, all_caps(), never()).await;
        let r = c.call("hello", json!({})).await.unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
        let answers = json!({"user_name": {"action": "accept", "content": {"name": "Bo"}}});
        check(
            c.retry("hello", json!({}), answers, &r["requestState"])
                .await
                .unwrap_err(),
        );
    })
    .await;
}

/// Multi-round › capabilities: a question the request's clientCapabilities do not allow is
/// -32021 with `requiredCapabilities`.
#[tokio::test]
async fn modern_missing_capability_is_32021() {
    run(async {
        let c = Client::connect(&server(), Era::Modern, json!({"sampling": {}}), never()).await;
        let e = c.call("hello", json!({})).await.unwrap_err();
        assert_eq!(code(&e), -32021);
        assert_eq!(
            e.data.unwrap(),
            json!({"requiredCapabilities": {"elicitation": {}}})
        );
        let c = Client::connect(&server(), Era::Modern, json!({"elicitation": {}}), never()).await;
        let e = c.call("everything", json!({})).await.unwrap_err();
        assert_eq!(code(&e), -32021);
    })
    .await;
}

/// The server bounds the rounds: past `max_input_rounds` → -32602.
#[tokio::test]
async fn modern_rounds_are_bounded() {
    run(async {
        let s = server_with(|b| b.max_input_rounds(2));
        let c = Client::connect(&s, Era::Modern, all_caps(), never()).await;
        let wrong = json!({"user_name": {"action": "accept", "content": {}}});
        let r = c.call("hello", json!({})).await.unwrap();
        let r = c
            .retry("hello", json!({}), wrong.clone(), &r["requestState"])
            .await
            .unwrap();
        assert_eq!(r["resultType"], "input_required");
        let e = c
            .retry("hello", json!({}), wrong, &r["requestState"])
            .await
            .unwrap_err();
        assert_eq!(code(&e), -32602);
        assert!(e.message.contains("rounds"), "{}", e.message);
    })
    .await;
}

/// Multi-round › supported requests: prompts/get and resources/read too.
#[tokio::test]
async fn modern_prompts_and_resources_resolve() {
    run(async {
        let c = Client::connect(&server(), Era::Modern, all_caps(), never()).await;
        let answers = json!({"user_name": {"action": "accept", "content": {"name": "Cy"}}});
        let r = c
            .request("prompts/get", json!({"name": "intro"}))
            .await
            .unwrap();
        assert_eq!(r["resultType"], "input_required");
        let r = c
            .request(
                "prompts/get",
                json!({"name": "intro", "inputResponses": answers,
                       "requestState": r["requestState"]}),
            )
            .await
            .unwrap();
        assert_eq!(r["resultType"], "complete");
        assert_eq!(r["messages"][0]["content"]["text"], "Introduce Cy.");

        let r = c
            .request("resources/read", json!({"uri": "test://me"}))
            .await
            .unwrap();
        assert_eq!(r["resultType"], "input_required");
        assert!(r.get("ttlMs").is_none());
        let r = c
            .request(
                "resources/read",
                json!({"uri": "test://me", "inputResponses": answers,
                       "requestState": r["requestState"]}),
            )
            .await
            .unwrap();
        assert_eq!(r["contents"][0]["text"], "me: Cy");
    })
    .await;
}

/// At 2026-07-28 the direct context methods of a high-level handler join the round too,
/// keyed by call order; the handler runs again on the retry.
#[tokio::test]
async fn modern_context_methods_ask_by_call_order() {
    run(async {
        let c = Client::connect(&server(), Era::Modern, all_caps(), never()).await;
        for (tool, key, expect) in [
            (
                "signup",
                "elicitation-1",
                "welcome alice <alice@example.com>",
            ),
            ("sample_live", "sampling-1", "Paris"),
            ("roots_live", "roots-1", "file:///test/root"),
        ] {
            let r = c.call(tool, json!({})).await.unwrap();
            assert_eq!(r["resultType"], "input_required", "{r}");
            let q = &r["inputRequests"][key];
            let a = user(q["method"].as_str().unwrap(), &q["params"]).unwrap();
            let r = c
                .retry(tool, json!({}), json!({ key: a }), &r["requestState"])
                .await
                .unwrap();
            assert_eq!(text(&r), expect, "{tool}");
        }
        // Two questions in a row: two rounds.
        let r1 = c.call("ask_twice", json!({})).await.unwrap();
        let a1 = json!({"elicitation-1": {"action": "accept", "content": {"name": "Di"}}});
        let r2 = c
            .retry("ask_twice", json!({}), a1, &r1["requestState"])
            .await
            .unwrap();
        let q = &r2["inputRequests"]["sampling-2"];
        assert_eq!(q["params"]["messages"][0]["content"]["text"], "Greet Di");
        let a2 = json!({"sampling-2": user("sampling/createMessage", &Value::Null).unwrap()});
        let r3 = c
            .retry("ask_twice", json!({}), a2, &r2["requestState"])
            .await
            .unwrap();
        assert_eq!(text(&r3), "Di: Paris");
        assert!(c.asked().is_empty());
    })
    .await;
}

/// URL-mode elicitation at 2026-07-28: no `elicitationId`; needs `elicitation.url`.
#[tokio::test]
async fn modern_url_elicitation() {
    run(async {
        let c = Client::connect(&server(), Era::Modern, all_caps(), never()).await;
        let r = c.call("consent", json!({})).await.unwrap();
        assert_eq!(
            r["inputRequests"]["consent"],
            json!({"method": "elicitation/create", "params": {"mode": "url",
                   "message": "Please log in", "url": "https://example.com/login"}})
        );
        let a = json!({"consent": {"action": "accept"}});
        let r = c
            .retry("consent", json!({}), a, &r["requestState"])
            .await
            .unwrap();
        assert_eq!(text(&r), "Accept");

        let c = Client::connect(&server(), Era::Modern, json!({"elicitation": {}}), never()).await;
        let e = c.call("consent", json!({})).await.unwrap_err();
        assert_eq!(
            e.data.unwrap(),
            json!({"requiredCapabilities": {"elicitation": {"url": {}}}})
        );
    })
    .await;
}

/// Several nodes with one key ring serve each other's retries; after a rotation the old
/// states still open where the old key is retained, and new states only where the new key
/// is known.
#[tokio::test]
async fn modern_shared_key_ring_and_rotation() {
    run(async {
        let ring = || KeyRing::new(StateKey::new(1, &[7; 32]));
        let a = server_with(|b| b.request_state_keys(ring()));
        let b = server_with(|b| b.request_state_keys(ring()));
        let ca = Client::connect(&a, Era::Modern, all_caps(), never()).await;
        let cb = Client::connect(&b, Era::Modern, all_caps(), never()).await;
        let answers = json!({"user_name": {"action": "accept", "content": {"name": "Ed"}}});

        let r = ca.call("hello", json!({})).await.unwrap();
        let old_state = r["requestState"].clone();
        let r = cb
            .retry("hello", json!({}), answers.clone(), &old_state)
            .await
            .unwrap();
        assert_eq!(text(&r), "Hello, Ed!");

        a.rotate_request_state_key(StateKey::new(2, &[8; 32]));
        let r = ca
            .retry("hello", json!({}), answers.clone(), &old_state)
            .await
            .unwrap();
        assert_eq!(text(&r), "Hello, Ed!", "the previous key is retained");
        let r = ca.call("hello", json!({})).await.unwrap();
        let e = cb
            .retry("hello", json!({}), answers, &r["requestState"])
            .await
            .unwrap_err();
        assert_eq!(code(&e), -32602, "node b does not know key 2 yet");
    })
    .await;
}
