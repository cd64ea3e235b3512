//! Signing keys (ES256, P-256): the current key signs, the previous one stays in the JWKS
//! after a rotation so tokens it signed keep verifying until they expire.

use std::sync::RwLock;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair as _};
use serde_json::{Value, json};

/// One ES256 key pair.
struct KeyPair {
    kid: String,
    encoding: EncodingKey,
    decoding: DecodingKey,
    x: String,
    y: String,
}

impl KeyPair {
    fn generate() -> Result<Self, String> {
        let der =
            EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new())
                .map_err(|_| "OS random source failed".to_owned())?;
        Self::from_pkcs8(der.as_ref())
    }

    /// A P-256 private key in PKCS#8 DER (with its public key, as OpenSSL and most tools
    /// write it).
    fn from_pkcs8(der: &[u8]) -> Result<Self, String> {
        let pair =
            EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, der, &SystemRandom::new())
                .map_err(|e| format!("the signing key is not a P-256 PKCS#8 key: {e}"))?;
        let point = pair.public_key().as_ref();
        let (x, y) = match point {
            [4, xy @ ..] if xy.len() == 64 => xy.split_at(32),
            _ => return Err("the public key is not an uncompressed P-256 point".to_owned()),
        };
        let (x, y) = (URL_SAFE_NO_PAD.encode(x), URL_SAFE_NO_PAD.encode(y));
        let decoding =
            DecodingKey::from_ec_components(&x, &y).map_err(|e| format!("decoding key: {e}"))?;
        // The kid is the RFC 7638 thumbprint: nodes sharing a key agree on it.
        let thumbprint = format!(r#"{{"crv":"P-256","kty":"EC","x":"{x}","y":"{y}"}}"#);
        let kid = URL_SAFE_NO_PAD.encode(<sha2::Sha256 as sha2::Digest>::digest(
            thumbprint.as_bytes(),
        ));
        Ok(Self {
            kid,
            encoding: EncodingKey::from_ec_der(der),
            decoding,
            x,
            y,
        })
    }

    fn jwk(&self) -> Value {
        json!({
            "kty": "EC", "crv": "P-256", "x": self.x, "y": self.y,
            "kid": self.kid, "alg": "ES256", "use": "sig",
        })
    }
}

/// The current and previous signing keys.
pub(crate) struct Keys {
    inner: RwLock<(KeyPair, Option<KeyPair>)>,
}

impl Keys {
    pub(crate) fn generate() -> Result<Self, String> {
        Ok(Self {
            inner: RwLock::new((KeyPair::generate()?, None)),
        })
    }

    /// Keys whose current one is `der` (PKCS#8, P-256).
    pub(crate) fn from_pkcs8(der: &[u8]) -> Result<Self, String> {
        Ok(Self {
            inner: RwLock::new((KeyPair::from_pkcs8(der)?, None)),
        })
    }

    /// A new current key; the old current becomes the previous one (the one before is
    /// dropped: tokens it signed no longer verify).
    pub(crate) fn rotate(&self) -> Result<(), String> {
        let fresh = KeyPair::generate()?;
        let mut g = self.inner.write().unwrap_or_else(|p| p.into_inner());
        let old = std::mem::replace(&mut g.0, fresh);
        g.1 = Some(old);
        Ok(())
    }

    /// The JWKS document: current key first, then the previous.
    pub(crate) fn jwks(&self) -> Value {
        let g = self.inner.read().unwrap_or_else(|p| p.into_inner());
        let keys: Vec<Value> = std::iter::once(&g.0)
            .chain(g.1.as_ref())
            .map(KeyPair::jwk)
            .collect();
        json!({ "keys": keys })
    }

    /// Signs `claims` as an RFC 9068 access token (`typ: at+jwt`) with the current key.
    pub(crate) fn sign(&self, claims: &Value) -> Result<String, String> {
        ferromcp_jwt::install();
        let g = self.inner.read().unwrap_or_else(|p| p.into_inner());
        let mut header = Header::new(Algorithm::ES256);
        header.typ = Some("at+jwt".to_owned());
        header.kid = Some(g.0.kid.clone());
        jsonwebtoken::encode(&header, claims, &g.0.encoding).map_err(|e| format!("signing: {e}"))
    }

    /// Checks the signature of a token this server signed (by `kid`, current or previous
    /// key) and its `exp`, and returns its claims. Audience and issuer are the caller's.
    pub(crate) fn verify(&self, token: &str) -> Result<serde_json::Map<String, Value>, String> {
        ferromcp_jwt::install();
        let header = jsonwebtoken::decode_header(token).map_err(|e| format!("malformed: {e}"))?;
        if header.alg != Algorithm::ES256 {
            return Err("unexpected algorithm".to_owned());
        }
        let kid = header.kid.ok_or("no kid")?;
        let g = self.inner.read().unwrap_or_else(|p| p.into_inner());
        let key = std::iter::once(&g.0)
            .chain(g.1.as_ref())
            .find(|k| k.kid == kid)
            .ok_or("unknown kid")?;
        let mut v = Validation::new(Algorithm::ES256);
        v.validate_aud = false;
        v.leeway = 0;
        v.set_required_spec_claims(&["exp", "iss", "sub", "aud"]);
        jsonwebtoken::decode::<serde_json::Map<String, Value>>(token, &key.decoding, &v)
            .map(|d| d.claims)
            .map_err(|e| format!("{e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loaded_key_signs_for_every_node() {
        let der = {
            use p256::pkcs8::EncodePrivateKey as _;
            let sk = p256::ecdsa::SigningKey::from_bytes(&[7u8; 32].into()).unwrap();
            sk.to_pkcs8_der().unwrap().as_bytes().to_vec()
        };
        let (a, b) = (
            Keys::from_pkcs8(&der).unwrap(),
            Keys::from_pkcs8(&der).unwrap(),
        );
        assert_eq!(
            a.jwks(),
            b.jwks(),
            "same key, same kid (RFC 7638 thumbprint)"
        );
        let claims = json!({"iss": "i", "sub": "s", "aud": "a", "exp": 4_000_000_000u64});
        assert!(b.verify(&a.sign(&claims).unwrap()).is_ok());
        assert!(Keys::from_pkcs8(b"not a key").is_err());
    }

    #[test]
    fn rotation_keeps_the_previous_key_verifiable() {
        let keys = Keys::generate().unwrap();
        let claims = json!({"iss": "i", "sub": "s", "aud": "a", "exp": 4_000_000_000u64});
        let old = keys.sign(&claims).unwrap();
        keys.rotate().unwrap();
        assert_eq!(keys.jwks()["keys"].as_array().unwrap().len(), 2);
        assert!(keys.verify(&old).is_ok());
        keys.rotate().unwrap();
        assert!(keys.verify(&old).is_err(), "two rotations drop the key");
        assert!(keys.verify(&keys.sign(&claims).unwrap()).is_ok());
    }
}
