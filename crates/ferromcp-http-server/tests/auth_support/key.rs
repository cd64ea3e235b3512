//! The Ed25519 signing key of the resource-server token tests (tests/http_auth/,
//! tests/jwks_outage.rs): its JWK and tokens signed under a `kid`.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used)]

use base64::Engine as _;
use ed25519_dalek::SigningKey;
use ed25519_dalek::pkcs8::EncodePrivateKey;
use serde_json::{Value, json};

/// An Ed25519 signing key and its `kid`.
pub struct Key {
    pub sk: SigningKey,
    pub kid: String,
}

impl Key {
    pub fn new(kid: &str) -> Self {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).unwrap();
        Self {
            sk: SigningKey::from_bytes(&seed),
            kid: kid.to_owned(),
        }
    }

    pub fn jwk(&self) -> Value {
        let x = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(self.sk.verifying_key().to_bytes());
        json!({"kty": "OKP", "crv": "Ed25519", "x": x, "kid": self.kid, "alg": "EdDSA", "use": "sig"})
    }

    /// A token with these claims, signed by this key under `kid`.
    pub fn sign_as(&self, kid: &str, claims: &Value) -> String {
        ferromcp_jwt::install();
        let der = self.sk.to_pkcs8_der().unwrap();
        let key = jsonwebtoken::EncodingKey::from_ed_der(der.as_bytes());
        let mut h = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::EdDSA);
        h.kid = Some(kid.to_owned());
        jsonwebtoken::encode(&h, claims, &key).unwrap()
    }

    pub fn sign(&self, claims: &Value) -> String {
        self.sign_as(&self.kid, claims)
    }
}
