//! RFC 8725 ("JSON Web Token Best Current Practices") §2.1 and §3.1, the security issue's item 13:
//! the `alg` of a token's header is the attacker's choice; the verifier, not the token, decides
//! which algorithm a key is used with. Each attack is a full request (POST /mcp with
//! `Authorization: Bearer`) that must get 401 `invalid_token`.

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};

use crate::key::Key;
use crate::support::{Jwks, LIMIT, bearer, challenge, claims, mcp_server, modern};
use base64::Engine as _;
use jsonwebtoken::Algorithm;
use serde_json::{Value, json};

fn b64url(b: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b)
}

/// The test's RSA key (2048 bits): fixed files (auth_support/rsa2048.*.der, made with
/// `openssl genrsa 2048` for these tests) rather than generated, as ring makes no RSA keys.
struct RsaKey {
    /// PKCS#1 `RSAPrivateKey` DER.
    private: &'static [u8],
    /// PKCS#1 `RSAPublicKey` DER.
    public_pkcs1: &'static [u8],
    /// `SubjectPublicKeyInfo` DER.
    public_spki: &'static [u8],
    /// Modulus, big-endian.
    n: Vec<u8>,
    /// Public exponent, big-endian.
    e: Vec<u8>,
}

fn rsa_key() -> &'static RsaKey {
    static KEY: OnceLock<RsaKey> = OnceLock::new();
    KEY.get_or_init(|| {
        let private: &'static [u8] = include_bytes!("../auth_support/rsa2048.pkcs1.der");
        let pair = ring::signature::RsaKeyPair::from_der(private).unwrap();
        let public = ring::signature::RsaPublicKeyComponents::<Vec<u8>>::from(pair.public());
        RsaKey {
            private,
            public_pkcs1: include_bytes!("../auth_support/rsa2048.public.pkcs1.der"),
            public_spki: include_bytes!("../auth_support/rsa2048.spki.der"),
            n: public.n,
            e: public.e,
        }
    })
}

/// `der` as PEM under `label`: 64 characters a line, ending in a newline.
fn pem(label: &str, der: &[u8]) -> String {
    let b64 = base64::engine::general_purpose::STANDARD.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for line in b64.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(line).unwrap());
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

/// `tok` with its header replaced by `header` (payload and signature kept).
fn with_header(tok: &str, header: &Value) -> String {
    let (_, rest) = tok.split_once('.').unwrap();
    format!("{}.{rest}", b64url(header.to_string().as_bytes()))
}

/// One key of each asymmetric type the verifier accepts: RSA (`kid` "rsa"), P-256 ("ec") and
/// Ed25519 ("ed").
struct Keys {
    rsa: &'static RsaKey,
    ec: p256::SecretKey,
    ed: Key,
}

impl Keys {
    fn new() -> Self {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).unwrap();
        Self {
            rsa: rsa_key(),
            ec: p256::SecretKey::from_slice(&seed).unwrap(),
            ed: Key::new("ed"),
        }
    }

    /// The published JWKs, each naming its `alg` (RS256, ES256, EdDSA) or none.
    fn jwks(&self, with_alg: bool) -> Value {
        let mut keys = vec![self.rsa_jwk(), self.ec_jwk(), self.ed.jwk()];
        for k in &mut keys {
            if !with_alg {
                k.as_object_mut().unwrap().remove("alg");
            }
        }
        json!({ "keys": keys })
    }

    fn rsa_jwk(&self) -> Value {
        json!({
            "kty": "RSA", "kid": "rsa", "alg": "RS256", "use": "sig",
            "n": b64url(&self.rsa.n), "e": b64url(&self.rsa.e),
        })
    }

    fn ec_jwk(&self) -> Value {
        use p256::elliptic_curve::sec1::ToEncodedPoint as _;
        let point = self.ec.public_key().to_encoded_point(false);
        json!({
            "kty": "EC", "crv": "P-256", "kid": "ec", "alg": "ES256", "use": "sig",
            "x": b64url(point.x().unwrap()), "y": b64url(point.y().unwrap()),
        })
    }

    /// A token signed under `alg` (RS*/PS* with the RSA key, ES256 with the P-256 key, EdDSA
    /// with the Ed25519 key; HS* with `secret`), its header naming `kid`.
    fn sign(&self, alg: Algorithm, kid: Option<&str>, secret: &[u8], claims: &Value) -> String {
        use p256::pkcs8::EncodePrivateKey as _;
        ferromcp_jwt::install();
        let key = match alg {
            Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512 => {
                jsonwebtoken::EncodingKey::from_secret(secret)
            }
            Algorithm::ES256 => {
                jsonwebtoken::EncodingKey::from_ec_der(self.ec.to_pkcs8_der().unwrap().as_bytes())
            }
            Algorithm::EdDSA => jsonwebtoken::EncodingKey::from_ed_der(
                self.ed.sk.to_pkcs8_der().unwrap().as_bytes(),
            ),
            Algorithm::ES384 => panic!("no P-384 key here"),
            _ => jsonwebtoken::EncodingKey::from_rsa_der(self.rsa.private),
        };
        let mut h = jsonwebtoken::Header::new(alg);
        h.kid = kid.map(str::to_owned);
        jsonwebtoken::encode(&h, claims, &key).unwrap()
    }

    /// Each key's public material, as anyone can read it, in every form a verifier that lets
    /// the token pick the algorithm might hand to HMAC as the secret: (kid, what, bytes).
    fn public_material(&self) -> Vec<(&'static str, &'static str, Vec<u8>)> {
        use p256::elliptic_curve::sec1::ToEncodedPoint as _;
        use p256::pkcs8::EncodePublicKey as _;
        let rsa_pkcs1 = self.rsa.public_pkcs1.to_vec();
        let rsa_spki = self.rsa.public_spki.to_vec();
        let rsa_jwk = self.rsa_jwk();
        let ec_pub = self.ec.public_key();
        let ec_spki = ec_pub.to_public_key_der().unwrap().as_bytes().to_vec();
        let ec_jwk = self.ec_jwk();
        let ed_pub = self.ed.sk.verifying_key();
        let ed_jwk = self.ed.jwk();
        let text = |v: &Value| v.as_str().unwrap().as_bytes().to_vec();
        let rsa_spki_pem = pem("PUBLIC KEY", &rsa_spki);
        vec![
            ("rsa", "PKCS#1 DER", rsa_pkcs1.clone()),
            ("rsa", "SPKI DER", rsa_spki.clone()),
            (
                "rsa",
                "PKCS#1 PEM",
                pem("RSA PUBLIC KEY", &rsa_pkcs1).into_bytes(),
            ),
            ("rsa", "SPKI PEM", rsa_spki_pem.clone().into_bytes()),
            (
                "rsa",
                "SPKI PEM, no final newline",
                rsa_spki_pem.trim_end().as_bytes().to_vec(),
            ),
            ("rsa", "JWK n text", text(&rsa_jwk["n"])),
            ("rsa", "n bytes", self.rsa.n.clone()),
            ("rsa", "JWK JSON", rsa_jwk.to_string().into_bytes()),
            (
                "ec",
                "SEC1 uncompressed point",
                ec_pub.to_encoded_point(false).as_bytes().to_vec(),
            ),
            (
                "ec",
                "SEC1 compressed point",
                ec_pub.to_encoded_point(true).as_bytes().to_vec(),
            ),
            ("ec", "SPKI DER", ec_spki.clone()),
            ("ec", "SPKI PEM", pem("PUBLIC KEY", &ec_spki).into_bytes()),
            ("ec", "JWK x text", text(&ec_jwk["x"])),
            ("ec", "JWK JSON", ec_jwk.to_string().into_bytes()),
            ("ed", "raw public key", ed_pub.to_bytes().to_vec()),
            ("ed", "JWK x text", text(&ed_jwk["x"])),
            ("ed", "JWK JSON", ed_jwk.to_string().into_bytes()),
        ]
    }
}

/// An MCP server trusting `keys`, its JWKS naming each key's `alg` or not.
async fn alg_server(keys: &Keys, with_alg: bool) -> SocketAddr {
    let jwks = Arc::new(Jwks::default());
    *jwks.doc.lock().unwrap() = keys.jwks(with_alg);
    mcp_server(jwks).await
}

/// `tok` gets 401 with `error="invalid_token"`.
async fn assert_invalid_token(addr: SocketAddr, tok: &str, what: &str) {
    let resp = modern(addr, &bearer(tok), "whoami").await;
    assert_eq!(resp.status(), 401, "{what}: not refused");
    let c = challenge(&resp);
    assert!(
        c.starts_with("Bearer error=\"invalid_token\""),
        "{what}: {c}"
    );
}

/// `tok` reaches the tool.
async fn assert_accepted(addr: SocketAddr, tok: &str, what: &str) {
    let resp = modern(addr, &bearer(tok), "whoami").await;
    assert_eq!(resp.status(), 200, "{what}: refused");
}

/// RFC 8725 §2.1/§3.1 (security issue item 13): an unsigned JWT (`alg: "none"`, in any
/// spelling, with or without a `kid`, with an empty signature or one copied from a valid
/// token) is refused although its claims (issuer, audience, expiry, scope) are all valid.
#[tokio::test]
async fn unsigned_alg_none_tokens_are_refused() {
    let keys = Keys::new();
    tokio::time::timeout(LIMIT, async {
        for with_alg in [true, false] {
            let addr = alg_server(&keys, with_alg).await;
            let good = keys.sign(
                Algorithm::RS256,
                Some("rsa"),
                b"",
                &claims("mallory", "mcp", json!({})),
            );
            assert_accepted(addr, &good, "the control token").await;
            for alg in ["none", "None", "NONE", "nOnE"] {
                for kid in [Some("rsa"), Some("ec"), Some("ed"), None] {
                    let mut h = json!({"alg": alg, "typ": "JWT"});
                    if let Some(kid) = kid {
                        h["kid"] = json!(kid);
                    }
                    let copied_sig = with_header(&good, &h);
                    let (signed, _) = copied_sig.rsplit_once('.').unwrap();
                    let what = format!("alg {alg}, kid {kid:?}, JWK alg named: {with_alg}");
                    assert_invalid_token(addr, &format!("{signed}."), &what).await;
                    assert_invalid_token(addr, signed, &format!("{what}, no dot")).await;
                    let sig = format!("{what}, copied signature");
                    assert_invalid_token(addr, &copied_sig, &sig).await;
                }
            }
        }
    })
    .await
    .unwrap();
}

/// RFC 8725 §2.1/§3.1 (security issue item 13), algorithm confusion: HS256/HS384/HS512
/// tokens whose HMAC secret is a published public key (RSA: PKCS#1 and SPKI DER and PEM, the
/// JWK's `n` as text and bytes, the JWK's JSON; P-256: the SEC1 points, SPKI DER and PEM, `x`;
/// Ed25519: the raw key, `x`), under the key's `kid` or none, against a JWKS whose entries
/// name their `alg` and one whose entries do not: each is refused.
#[tokio::test]
async fn hmac_tokens_keyed_with_the_public_key_are_refused() {
    let keys = Keys::new();
    let material = keys.public_material();
    tokio::time::timeout(LIMIT, async {
        for with_alg in [true, false] {
            let addr = alg_server(&keys, with_alg).await;
            let c = claims("mallory", "mcp", json!({}));
            for (kid, what, secret) in &material {
                for alg in [Algorithm::HS256, Algorithm::HS384, Algorithm::HS512] {
                    for kid in [Some(*kid), None] {
                        let tok = keys.sign(alg, kid, secret, &c);
                        let what = format!(
                            "{alg:?} keyed with {what} under kid {kid:?}, JWK alg named: {with_alg}"
                        );
                        assert_invalid_token(addr, &tok, &what).await;
                    }
                }
            }
        }
    })
    .await
    .unwrap();
}

/// RFC 8725 §3.1 (security issue item 13): a JWK that names its `alg` is used with that
/// algorithm only. The RSA key published for RS256 signs valid PS256/PS384/PS512/RS384/RS512
/// tokens: all refused, under its `kid` and without one; tokens of another key type under a
/// key's `kid` (ES256 or EdDSA for the RSA key, RS256 or PS256 for the EC key, RS256 or
/// ES256 for the Ed25519 key), and an ES256 signature relabelled ES384, are refused too.
#[tokio::test]
async fn token_alg_must_equal_the_jwks_alg() {
    let keys = Keys::new();
    tokio::time::timeout(LIMIT, async {
        let addr = alg_server(&keys, true).await;
        let c = claims("mallory", "mcp", json!({}));
        for (alg, kid) in [
            (Algorithm::RS256, "rsa"),
            (Algorithm::ES256, "ec"),
            (Algorithm::EdDSA, "ed"),
        ] {
            let tok = keys.sign(alg, Some(kid), b"", &c);
            assert_accepted(addr, &tok, &format!("{alg:?} under {kid}")).await;
        }
        for alg in [
            Algorithm::PS256,
            Algorithm::PS384,
            Algorithm::PS512,
            Algorithm::RS384,
            Algorithm::RS512,
        ] {
            for kid in [Some("rsa"), None] {
                let tok = keys.sign(alg, kid, b"", &c);
                let what = format!("{alg:?} by the RS256 key under kid {kid:?}");
                assert_invalid_token(addr, &tok, &what).await;
            }
        }
        for (alg, kid) in [
            (Algorithm::ES256, "rsa"),
            (Algorithm::EdDSA, "rsa"),
            (Algorithm::RS256, "ec"),
            (Algorithm::PS256, "ec"),
            (Algorithm::EdDSA, "ec"),
            (Algorithm::RS256, "ed"),
            (Algorithm::ES256, "ed"),
        ] {
            let tok = keys.sign(alg, Some(kid), b"", &c);
            assert_invalid_token(addr, &tok, &format!("{alg:?} under {kid}")).await;
        }
        let es256 = keys.sign(Algorithm::ES256, Some("ec"), b"", &c);
        let relabelled = with_header(&es256, &json!({"alg": "ES384", "kid": "ec"}));
        assert_invalid_token(addr, &relabelled, "ES256 relabelled ES384").await;
    })
    .await
    .unwrap();
}

/// RFC 8725 §3.1 (security issue item 13): a JWK that names no `alg` is used only with its
/// key type's algorithms: the RSA key with RS*/PS* (accepted), never ES256 or EdDSA; the
/// P-256 key never with RS256/PS256/EdDSA nor an ES256 signature relabelled ES384; the
/// Ed25519 key never with RS256/ES256.
#[tokio::test]
async fn token_alg_must_fit_the_key_type_when_the_jwk_names_none() {
    let keys = Keys::new();
    tokio::time::timeout(LIMIT, async {
        let addr = alg_server(&keys, false).await;
        let c = claims("mallory", "mcp", json!({}));
        for (alg, kid) in [
            (Algorithm::RS256, "rsa"),
            (Algorithm::PS256, "rsa"),
            (Algorithm::RS512, "rsa"),
            (Algorithm::ES256, "ec"),
            (Algorithm::EdDSA, "ed"),
        ] {
            let tok = keys.sign(alg, Some(kid), b"", &c);
            assert_accepted(addr, &tok, &format!("{alg:?} under {kid}")).await;
        }
        for (alg, kid) in [
            (Algorithm::ES256, "rsa"),
            (Algorithm::EdDSA, "rsa"),
            (Algorithm::RS256, "ec"),
            (Algorithm::PS256, "ec"),
            (Algorithm::EdDSA, "ec"),
            (Algorithm::RS256, "ed"),
            (Algorithm::ES256, "ed"),
        ] {
            let tok = keys.sign(alg, Some(kid), b"", &c);
            assert_invalid_token(addr, &tok, &format!("{alg:?} under {kid}")).await;
        }
        let es256 = keys.sign(Algorithm::ES256, Some("ec"), b"", &c);
        let relabelled = with_header(&es256, &json!({"alg": "ES384", "kid": "ec"}));
        assert_invalid_token(addr, &relabelled, "ES256 relabelled ES384").await;
    })
    .await
    .unwrap();
}
