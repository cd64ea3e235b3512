//! Without the `request-state` feature (`cargo test -p ferromcp-server --no-default-features
//! --test request_state_feature`) the sealer's API is the same, but sealing and opening fail
//! with `Unavailable`, and the protocol error names the feature. With the feature (the
//! default), tests/request_state.rs covers the sealer.
#![cfg(not(feature = "request-state"))]
#![allow(clippy::unwrap_used)]

use std::time::SystemTime;

use ferromcp_server::request_state::{Binding, KeyRing, StateErrorKind, StateKey, StateSealer};

#[test]
fn without_the_feature_sealing_is_unavailable_and_says_why() {
    let sealer = StateSealer::new(KeyRing::new(StateKey::new(1, &[7; 32])));
    let binding = Binding::new("tools/call", "book", None);
    let err = sealer
        .seal(&binding, b"state", SystemTime::now())
        .unwrap_err();
    assert_eq!(err.kind(), StateErrorKind::Unavailable);
    let object = err.to_error_object();
    assert!(object.message.contains("request-state"), "{object:?}");
    let opened = sealer.open(
        "v1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        &binding,
        SystemTime::now(),
    );
    assert!(opened.is_err());
}
