//! JWTs the client signs: `private_key_jwt` client assertions (RFC 7523 §2.2, §3) and DPoP
//! proofs (RFC 9449 §4) with a fresh P-256 key, both signed with ring (RSA PKCS#1 v1.5 in
//! constant time; no `rsa` crate, RUSTSEC-2023-0071).

use std::sync::{Arc, Mutex};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use ring::rand::SystemRandom;
use ring::signature::{
    ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair as _, RSA_PKCS1_SHA256, RsaKeyPair,
};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::{OAuthError, now_secs};

/// How long a client assertion is valid: 5 minutes.
const ASSERTION_LIFETIME: u64 = 300;

/// The signature algorithm of a [`ClientKey`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SigningAlgorithm {
    /// ECDSA P-256 with SHA-256.
    Es256,
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    Rs256,
}

impl SigningAlgorithm {
    /// The algorithm named `name` (`ES256`, `RS256`).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "ES256" => Some(Self::Es256),
            "RS256" => Some(Self::Rs256),
            _ => None,
        }
    }

    /// The JOSE name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Es256 => "ES256",
            Self::Rs256 => "RS256",
        }
    }
}

/// A private key ring signs with.
enum PrivateKey {
    Ecdsa(EcdsaKeyPair),
    Rsa(RsaKeyPair),
}

impl PrivateKey {
    fn sign(&self, input: &[u8]) -> Result<Vec<u8>, OAuthError> {
        let rng = SystemRandom::new();
        let failed = |_| OAuthError::Config("signing failed".into());
        match self {
            Self::Ecdsa(pair) => pair
                .sign(&rng, input)
                .map(|s| s.as_ref().to_vec())
                .map_err(failed),
            Self::Rsa(pair) => {
                let mut out = vec![0; pair.public().modulus_len()];
                pair.sign(&RSA_PKCS1_SHA256, &rng, input, &mut out)
                    .map_err(failed)?;
                Ok(out)
            }
        }
    }
}

/// `header.claims.signature`, each part base64url, signed with `key`.
fn compact_jws(header: &Value, claims: &Value, key: &PrivateKey) -> Result<String, OAuthError> {
    let input = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    );
    let sig = key.sign(input.as_bytes())?;
    Ok(format!("{input}.{}", URL_SAFE_NO_PAD.encode(sig)))
}

/// A client's private key for `private_key_jwt` (RFC 7523 §2.2): the client authenticates
/// at the token endpoint with a short-lived JWT it signs (`iss` = `sub` = `client_id`, `aud`
/// the authorization server's issuer, a fresh `jti`).
#[derive(Clone)]
pub struct ClientKey {
    alg: SigningAlgorithm,
    key: Arc<PrivateKey>,
    kid: Option<String>,
}

impl std::fmt::Debug for ClientKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientKey")
            .field("alg", &self.alg)
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}

impl ClientKey {
    /// A key from PEM: PKCS#8 (`PRIVATE KEY`) for ES256 or RS256, or PKCS#1
    /// (`RSA PRIVATE KEY`) for RS256. The key is checked by signing once.
    ///
    /// ```
    /// use ferromcp_client::oauth::{ClientKey, SigningAlgorithm};
    /// assert!(ClientKey::from_pem("not a key", SigningAlgorithm::Es256).is_err());
    /// ```
    pub fn from_pem(pem: &str, alg: SigningAlgorithm) -> Result<Self, OAuthError> {
        let (label, der) = pem_decode(pem)?;
        let cannot = |e: ring::error::KeyRejected| {
            OAuthError::Config(format!("the key cannot sign {}: {e}", alg.name()))
        };
        let key = match (alg, label.as_str()) {
            (SigningAlgorithm::Es256, "PRIVATE KEY") => PrivateKey::Ecdsa(
                EcdsaKeyPair::from_pkcs8(
                    &ECDSA_P256_SHA256_FIXED_SIGNING,
                    &der,
                    &SystemRandom::new(),
                )
                .map_err(cannot)?,
            ),
            (SigningAlgorithm::Rs256, "RSA PRIVATE KEY") => {
                PrivateKey::Rsa(RsaKeyPair::from_der(&der).map_err(cannot)?)
            }
            (SigningAlgorithm::Rs256, "PRIVATE KEY") => {
                PrivateKey::Rsa(RsaKeyPair::from_pkcs8(&der).map_err(cannot)?)
            }
            (_, other) => {
                return Err(OAuthError::Config(format!(
                    "a PEM `{other}` is not a {} private key this client reads (PKCS#8 `PRIVATE \
                     KEY`, or PKCS#1 `RSA PRIVATE KEY` for RS256)",
                    alg.name()
                )));
            }
        };
        key.sign(b"probe")?;
        Ok(Self {
            alg,
            key: Arc::new(key),
            kid: None,
        })
    }

    /// Sets the `kid` header (the key's id in the client's JWKS).
    #[must_use]
    pub fn with_key_id(mut self, kid: impl Into<String>) -> Self {
        self.kid = Some(kid.into());
        self
    }

    /// The algorithm.
    pub fn algorithm(&self) -> SigningAlgorithm {
        self.alg
    }

    /// A client assertion for `client_id` at the authorization server `audience` (RFC 7523
    /// §3).
    pub(super) fn assertion(&self, client_id: &str, audience: &str) -> Result<String, OAuthError> {
        let mut header = json!({"typ": "JWT", "alg": self.alg.name()});
        if let Some(kid) = &self.kid {
            header["kid"] = json!(kid);
        }
        let now = now_secs();
        let claims = json!({
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "jti": random_token(16)?,
            "iat": now,
            "exp": now + ASSERTION_LIFETIME,
        });
        compact_jws(&header, &claims, &self.key)
    }
}

/// The label and DER of the first PEM block.
fn pem_decode(pem: &str) -> Result<(String, Vec<u8>), OAuthError> {
    let bad = || OAuthError::Config("the key is not PEM".into());
    let start = pem.find("-----BEGIN ").ok_or_else(bad)?;
    let rest = &pem[start + 11..];
    let label_end = rest.find("-----").ok_or_else(bad)?;
    let label = rest[..label_end].to_owned();
    let body = &rest[label_end + 5..];
    let end = body.find("-----END ").ok_or_else(bad)?;
    let b64: String = body[..end]
        .chars()
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    let der = STANDARD
        .decode(b64)
        .map_err(|e| OAuthError::Config(format!("the PEM body is not base64: {e}")))?;
    Ok((label, der))
}

/// `bytes` random bytes, base64url.
pub(super) fn random_token(bytes: usize) -> Result<String, OAuthError> {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).map_err(|e| OAuthError::Config(format!("RNG: {e}")))?;
    Ok(URL_SAFE_NO_PAD.encode(buf))
}

/// A DPoP key (RFC 9449): a P-256 key made for one provider, and the nonces the
/// authorization server and the resource server handed out (§8, §9).
#[derive(Clone)]
pub(super) struct DpopKey(Arc<DpopInner>);

struct DpopInner {
    key: PrivateKey,
    jwk: Value,
    as_nonce: Mutex<Option<String>>,
    rs_nonce: Mutex<Option<String>>,
}

impl std::fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DpopKey")
    }
}

/// Which server a proof (and its nonce) is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum NonceFor {
    AuthorizationServer,
    ResourceServer,
}

impl DpopKey {
    /// A fresh key.
    pub(super) fn generate() -> Result<Self, OAuthError> {
        let rng = SystemRandom::new();
        let failed = || OAuthError::Config("could not make a DPoP key".into());
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .map_err(|_| failed())?;
        let key = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .map_err(|_| failed())?;
        // The uncompressed point: 0x04, then x and y (32 bytes each).
        let (x, y) = match key.public_key().as_ref() {
            [4, xy @ ..] if xy.len() == 64 => xy.split_at(32),
            _ => return Err(failed()),
        };
        let jwk = json!({
            "kty": "EC",
            "crv": "P-256",
            "x": URL_SAFE_NO_PAD.encode(x),
            "y": URL_SAFE_NO_PAD.encode(y),
        });
        Ok(Self(Arc::new(DpopInner {
            key: PrivateKey::Ecdsa(key),
            jwk,
            as_nonce: Mutex::new(None),
            rs_nonce: Mutex::new(None),
        })))
    }

    fn slot(&self, to: NonceFor) -> &Mutex<Option<String>> {
        match to {
            NonceFor::AuthorizationServer => &self.0.as_nonce,
            NonceFor::ResourceServer => &self.0.rs_nonce,
        }
    }

    /// The nonce last handed out by `to`.
    pub(super) fn nonce(&self, to: NonceFor) -> Option<String> {
        self.slot(to)
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Records a nonce from `to`; true when it is new.
    pub(super) fn set_nonce(&self, to: NonceFor, nonce: &str) -> bool {
        let mut slot = self.slot(to).lock().unwrap_or_else(|p| p.into_inner());
        if slot.as_deref() == Some(nonce) {
            return false;
        }
        *slot = Some(nonce.to_owned());
        true
    }

    /// A proof for `htm` on `htu` (query and fragment removed, RFC 9449 §4.2), with `ath`
    /// for `access_token` when presenting one, and `to`'s nonce when it gave one.
    pub(super) fn proof(
        &self,
        htm: &str,
        htu: &str,
        access_token: Option<&str>,
        to: NonceFor,
    ) -> Result<String, OAuthError> {
        let htu = htu.split(['?', '#']).next().unwrap_or(htu);
        let header = json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": self.0.jwk});
        let mut claims = json!({
            "jti": random_token(16)?,
            "htm": htm,
            "htu": htu,
            "iat": now_secs(),
        });
        if let Some(token) = access_token {
            claims["ath"] = json!(URL_SAFE_NO_PAD.encode(Sha256::digest(token.as_bytes())));
        }
        if let Some(nonce) = self.nonce(to) {
            claims["nonce"] = json!(nonce);
        }
        compact_jws(&header, &claims, &self.0.key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use p256::ecdsa::signature::Verifier as _;
    use p256::ecdsa::{Signature, VerifyingKey};

    fn part(jwt: &str, i: usize) -> Value {
        let seg = jwt.split('.').nth(i).unwrap();
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(seg).unwrap()).unwrap()
    }

    /// RFC 9449 §4.2: typ, alg, the public jwk (no `d`), jti, htm, htu without query,
    /// iat, ath = base64url(SHA-256(token)), and a signature that verifies with the jwk.
    #[test]
    fn dpop_proof_syntax() {
        let key = DpopKey::generate().unwrap();
        key.set_nonce(NonceFor::ResourceServer, "n1");
        let proof = key
            .proof(
                "POST",
                "https://rs.example/mcp?x=1#f",
                Some("tok"),
                NonceFor::ResourceServer,
            )
            .unwrap();
        let (h, c) = (part(&proof, 0), part(&proof, 1));
        assert_eq!(h["typ"], "dpop+jwt");
        assert_eq!(h["alg"], "ES256");
        assert!(h["jwk"].get("d").is_none());
        assert_eq!(c["htm"], "POST");
        assert_eq!(c["htu"], "https://rs.example/mcp");
        assert_eq!(c["nonce"], "n1");
        assert_eq!(
            c["ath"],
            URL_SAFE_NO_PAD.encode(Sha256::digest(b"tok")).as_str()
        );
        let other = key
            .proof(
                "POST",
                "https://rs.example/mcp",
                None,
                NonceFor::AuthorizationServer,
            )
            .unwrap();
        assert_ne!(part(&other, 1)["jti"], c["jti"], "a fresh jti per proof");
        assert!(
            part(&other, 1).get("nonce").is_none(),
            "nonces are per server"
        );
        let x = URL_SAFE_NO_PAD
            .decode(h["jwk"]["x"].as_str().unwrap())
            .unwrap();
        let y = URL_SAFE_NO_PAD
            .decode(h["jwk"]["y"].as_str().unwrap())
            .unwrap();
        let mut sec1 = vec![4u8];
        sec1.extend(x);
        sec1.extend(y);
        let vk = VerifyingKey::from_sec1_bytes(&sec1).unwrap();
        let (input, sig) = proof.rsplit_once('.').unwrap();
        let sig = Signature::from_slice(&URL_SAFE_NO_PAD.decode(sig).unwrap()).unwrap();
        vk.verify(input.as_bytes(), &sig).unwrap();
    }

    #[test]
    fn pem_errors_are_config_errors() {
        assert!(matches!(
            ClientKey::from_pem(
                "-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----",
                SigningAlgorithm::Es256
            ),
            Err(OAuthError::Config(_))
        ));
        assert!(matches!(
            ClientKey::from_pem(
                "-----BEGIN PRIVATE KEY-----\n!!!\n-----END PRIVATE KEY-----",
                SigningAlgorithm::Es256
            ),
            Err(OAuthError::Config(_))
        ));
    }
}
