//! JWTs the client signs: `private_key_jwt` client assertions (RFC 7523 §2.2, §3) with
//! jsonwebtoken, and DPoP proofs (RFC 9449 §4) with a fresh P-256 key.

use std::sync::{Arc, Mutex};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use p256::ecdsa::signature::Signer as _;
use p256::ecdsa::{Signature, SigningKey};
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

    fn jose(self) -> Algorithm {
        match self {
            Self::Es256 => Algorithm::ES256,
            Self::Rs256 => Algorithm::RS256,
        }
    }
}

/// A client's private key for `private_key_jwt` (RFC 7523 §2.2): the client authenticates
/// at the token endpoint with a short-lived JWT it signs (`iss` = `sub` = `client_id`, `aud`
/// the authorization server's issuer, a fresh `jti`).
#[derive(Clone)]
pub struct ClientKey {
    alg: SigningAlgorithm,
    key: EncodingKey,
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
        let key = match (alg, label.as_str()) {
            (SigningAlgorithm::Es256, "PRIVATE KEY") => EncodingKey::from_ec_der(&der),
            (SigningAlgorithm::Rs256, "RSA PRIVATE KEY") => EncodingKey::from_rsa_der(&der),
            (SigningAlgorithm::Rs256, "PRIVATE KEY") => {
                let info = pkcs8::PrivateKeyInfo::try_from(der.as_slice()).map_err(|e| {
                    OAuthError::Config(format!("the PKCS#8 key does not parse: {e}"))
                })?;
                EncodingKey::from_rsa_der(info.private_key)
            }
            (_, other) => {
                return Err(OAuthError::Config(format!(
                    "a PEM `{other}` is not a {} private key this client reads (PKCS#8 `PRIVATE \
                     KEY`, or PKCS#1 `RSA PRIVATE KEY` for RS256)",
                    alg.name()
                )));
            }
        };
        jsonwebtoken::crypto::sign(b"probe", &key, alg.jose())
            .map_err(|e| OAuthError::Config(format!("the key cannot sign {}: {e}", alg.name())))?;
        Ok(Self {
            alg,
            key,
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
        let mut header = Header::new(self.alg.jose());
        header.kid = self.kid.clone();
        let now = now_secs();
        let claims = json!({
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "jti": random_token(16)?,
            "iat": now,
            "exp": now + ASSERTION_LIFETIME,
        });
        jsonwebtoken::encode(&header, &claims, &self.key)
            .map_err(|e| OAuthError::Config(format!("signing the client assertion: {e}")))
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
    key: SigningKey,
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
        // A uniformly random scalar: 32 random bytes, redrawn in the (~2^-32) case that
        // they are zero or not below the group order.
        for _ in 0..8 {
            let mut bytes = [0u8; 32];
            getrandom::fill(&mut bytes).map_err(|e| OAuthError::Config(format!("RNG: {e}")))?;
            if let Ok(key) = SigningKey::from_slice(&bytes) {
                let point = key.verifying_key().to_encoded_point(false);
                let (Some(x), Some(y)) = (point.x(), point.y()) else {
                    continue;
                };
                let jwk = json!({
                    "kty": "EC",
                    "crv": "P-256",
                    "x": URL_SAFE_NO_PAD.encode(x),
                    "y": URL_SAFE_NO_PAD.encode(y),
                });
                return Ok(Self(Arc::new(DpopInner {
                    key,
                    jwk,
                    as_nonce: Mutex::new(None),
                    rs_nonce: Mutex::new(None),
                })));
            }
        }
        Err(OAuthError::Config("could not make a DPoP key".into()))
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
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let sig: Signature = self.0.key.sign(input.as_bytes());
        Ok(format!(
            "{input}.{}",
            URL_SAFE_NO_PAD.encode(sig.to_bytes())
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use p256::ecdsa::VerifyingKey;
    use p256::ecdsa::signature::Verifier as _;

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
