//! The JSON Web Token cryptography of ferromcp: a [`jsonwebtoken`] 10 [`CryptoProvider`] on
//! [`ring`], [`PROVIDER`], installed process-wide by [`install`].
//!
//! jsonwebtoken 10 leaves its cryptography to a provider. Its own two need either the `rsa`
//! crate (RUSTSEC-2023-0071, the Marvin timing attack on RSA decryption and signing, with no
//! fixed release) or aws-lc (a cmake and C build). ring is already the cryptography of
//! ferromcp's TLS (rustls' `ring` provider) and signs RSA in constant time.
//!
//! Every algorithm jsonwebtoken names is covered: RS256/384/512 and PS256/384/512 (RSA keys as
//! PKCS#1 or PKCS#8 DER to sign, 2048 to 8192 bits to verify), ES256 and ES384 (PKCS#8 DER to
//! sign, the uncompressed point to verify), EdDSA (Ed25519: PKCS#8 DER to sign, the 32-byte
//! public key to verify) and HS256/384/512 (constant-time comparison).
//!
//! ```
//! use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
//!
//! ferromcp_jwt::install();
//! let claims = serde_json::json!({"sub": "alice", "exp": 4_000_000_000u64});
//! let key = b"a shared secret of at least 32 bytes!";
//! let token = jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &EncodingKey::from_secret(key))?;
//! let data = jsonwebtoken::decode::<serde_json::Value>(&token, &DecodingKey::from_secret(key), &Validation::new(Algorithm::HS256))?;
//! assert_eq!(data.claims["sub"], "alice");
//! # Ok::<(), jsonwebtoken::errors::Error>(())
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]

use std::sync::Once;

use jsonwebtoken::crypto::{CryptoProvider, JwkUtils, JwtSigner, JwtVerifier};
use jsonwebtoken::errors::{Error, ErrorKind, Result};
use jsonwebtoken::jwk::{EllipticCurve, ThumbprintHash};
use jsonwebtoken::signature::{self, Signer, Verifier};
use jsonwebtoken::{Algorithm, AlgorithmFamily, DecodingKey, DecodingKeyKind, EncodingKey};
use ring::rand::SystemRandom;
use ring::{digest, hmac, signature as ring_sig};

/// The ring-backed provider.
pub static PROVIDER: CryptoProvider = CryptoProvider {
    signer_factory: new_signer,
    verifier_factory: new_verifier,
    jwk_utils: JwkUtils {
        extract_rsa_public_key_components,
        extract_ec_public_key_coordinates,
        compute_digest,
    },
};

/// Makes [`PROVIDER`] jsonwebtoken's process-wide provider, unless one is already in place
/// (installed by the application, or chosen by jsonwebtoken from its own `rust_crypto` or
/// `aws_lc_rs` feature on its first use): that one is then kept. Idempotent and cheap; ferromcp
/// calls it before each of its own uses of jsonwebtoken.
///
/// jsonwebtoken picks its provider on first use: an application that calls jsonwebtoken
/// itself, with neither of its back-end features on, calls this first (or its first call
/// panics in jsonwebtoken, and so would ferromcp's later ones).
pub fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // An Err means a provider is already in place; it stays.
        let _ = CryptoProvider::install_default(&PROVIDER);
    });
}

/// The key family an algorithm uses.
fn family(alg: Algorithm) -> AlgorithmFamily {
    match alg {
        Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512 => AlgorithmFamily::Hmac,
        Algorithm::ES256 | Algorithm::ES384 => AlgorithmFamily::Ec,
        Algorithm::EdDSA => AlgorithmFamily::Ed,
        Algorithm::RS256
        | Algorithm::RS384
        | Algorithm::RS512
        | Algorithm::PS256
        | Algorithm::PS384
        | Algorithm::PS512 => AlgorithmFamily::Rsa,
    }
}

fn hmac_algorithm(alg: Algorithm) -> hmac::Algorithm {
    match alg {
        Algorithm::HS384 => hmac::HMAC_SHA384,
        Algorithm::HS512 => hmac::HMAC_SHA512,
        _ => hmac::HMAC_SHA256,
    }
}

/// A private key ready to sign.
enum SigningKey {
    Hmac(hmac::Key),
    Ecdsa(ring_sig::EcdsaKeyPair),
    Rsa(ring_sig::RsaKeyPair, &'static dyn ring_sig::RsaEncoding),
    Ed25519(ring_sig::Ed25519KeyPair),
}

struct RingSigner {
    alg: Algorithm,
    key: SigningKey,
}

impl Signer<Vec<u8>> for RingSigner {
    fn try_sign(&self, msg: &[u8]) -> std::result::Result<Vec<u8>, signature::Error> {
        match &self.key {
            SigningKey::Hmac(key) => Ok(hmac::sign(key, msg).as_ref().to_vec()),
            SigningKey::Ecdsa(pair) => pair
                .sign(&SystemRandom::new(), msg)
                .map(|s| s.as_ref().to_vec())
                .map_err(|_| signature::Error::new()),
            SigningKey::Rsa(pair, padding) => {
                let mut out = vec![0; pair.public().modulus_len()];
                pair.sign(*padding, &SystemRandom::new(), msg, &mut out)
                    .map_err(|_| signature::Error::new())?;
                Ok(out)
            }
            SigningKey::Ed25519(pair) => Ok(pair.sign(msg).as_ref().to_vec()),
        }
    }
}

impl JwtSigner for RingSigner {
    fn algorithm(&self) -> Algorithm {
        self.alg
    }
}

/// An RSA private key: PKCS#1 `RSAPrivateKey` DER (what [`EncodingKey::from_rsa_der`] is
/// documented to take) or PKCS#8 DER.
fn rsa_key_pair(der: &[u8]) -> Result<ring_sig::RsaKeyPair> {
    ring_sig::RsaKeyPair::from_der(der)
        .or_else(|_| ring_sig::RsaKeyPair::from_pkcs8(der))
        .map_err(|e| ErrorKind::InvalidRsaKey(e.to_string()).into())
}

fn ecdsa_signing(alg: Algorithm) -> &'static ring_sig::EcdsaSigningAlgorithm {
    match alg {
        Algorithm::ES384 => &ring_sig::ECDSA_P384_SHA384_FIXED_SIGNING,
        _ => &ring_sig::ECDSA_P256_SHA256_FIXED_SIGNING,
    }
}

fn new_signer(alg: &Algorithm, key: &EncodingKey) -> Result<Box<dyn JwtSigner>> {
    let alg = *alg;
    if key.family() != family(alg) {
        return Err(ErrorKind::InvalidKeyFormat.into());
    }
    let bytes = key.inner();
    let key = match alg {
        Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512 => {
            SigningKey::Hmac(hmac::Key::new(hmac_algorithm(alg), bytes))
        }
        Algorithm::ES256 | Algorithm::ES384 => SigningKey::Ecdsa(
            ring_sig::EcdsaKeyPair::from_pkcs8(ecdsa_signing(alg), bytes, &SystemRandom::new())
                .map_err(|_| Error::from(ErrorKind::InvalidEcdsaKey))?,
        ),
        Algorithm::EdDSA => SigningKey::Ed25519(
            ring_sig::Ed25519KeyPair::from_pkcs8_maybe_unchecked(bytes)
                .map_err(|_| Error::from(ErrorKind::InvalidEddsaKey))?,
        ),
        Algorithm::RS256
        | Algorithm::RS384
        | Algorithm::RS512
        | Algorithm::PS256
        | Algorithm::PS384
        | Algorithm::PS512 => {
            let padding: &'static dyn ring_sig::RsaEncoding = match alg {
                Algorithm::RS384 => &ring_sig::RSA_PKCS1_SHA384,
                Algorithm::RS512 => &ring_sig::RSA_PKCS1_SHA512,
                Algorithm::PS256 => &ring_sig::RSA_PSS_SHA256,
                Algorithm::PS384 => &ring_sig::RSA_PSS_SHA384,
                Algorithm::PS512 => &ring_sig::RSA_PSS_SHA512,
                _ => &ring_sig::RSA_PKCS1_SHA256,
            };
            SigningKey::Rsa(rsa_key_pair(bytes)?, padding)
        }
    };
    Ok(Box::new(RingSigner { alg, key }))
}

/// A public key (or HMAC secret) ready to verify.
enum VerifyingKey {
    Hmac(hmac::Key),
    /// A key in the form ring parses itself: an uncompressed EC point, a raw Ed25519 key, or a
    /// PKCS#1 `RSAPublicKey` DER.
    Encoded(&'static dyn ring_sig::VerificationAlgorithm, Vec<u8>),
    /// An RSA key as modulus and exponent (from a JWK).
    RsaComponents(&'static ring_sig::RsaParameters, Vec<u8>, Vec<u8>),
}

struct RingVerifier {
    alg: Algorithm,
    key: VerifyingKey,
}

impl Verifier<Vec<u8>> for RingVerifier {
    fn verify(&self, msg: &[u8], sig: &Vec<u8>) -> std::result::Result<(), signature::Error> {
        match &self.key {
            VerifyingKey::Hmac(key) => hmac::verify(key, msg, sig),
            VerifyingKey::Encoded(alg, public) => {
                ring_sig::UnparsedPublicKey::new(*alg, public).verify(msg, sig)
            }
            VerifyingKey::RsaComponents(params, n, e) => {
                ring_sig::RsaPublicKeyComponents { n, e }.verify(params, msg, sig)
            }
        }
        .map_err(|_| signature::Error::new())
    }
}

impl JwtVerifier for RingVerifier {
    fn algorithm(&self) -> Algorithm {
        self.alg
    }
}

fn new_verifier(alg: &Algorithm, key: &DecodingKey) -> Result<Box<dyn JwtVerifier>> {
    let alg = *alg;
    if key.family() != family(alg) {
        return Err(ErrorKind::InvalidKeyFormat.into());
    }
    let rsa: &'static ring_sig::RsaParameters = match alg {
        Algorithm::RS384 => &ring_sig::RSA_PKCS1_2048_8192_SHA384,
        Algorithm::RS512 => &ring_sig::RSA_PKCS1_2048_8192_SHA512,
        Algorithm::PS256 => &ring_sig::RSA_PSS_2048_8192_SHA256,
        Algorithm::PS384 => &ring_sig::RSA_PSS_2048_8192_SHA384,
        Algorithm::PS512 => &ring_sig::RSA_PSS_2048_8192_SHA512,
        _ => &ring_sig::RSA_PKCS1_2048_8192_SHA256,
    };
    let encoded: &'static dyn ring_sig::VerificationAlgorithm = match alg {
        Algorithm::ES256 => &ring_sig::ECDSA_P256_SHA256_FIXED,
        Algorithm::ES384 => &ring_sig::ECDSA_P384_SHA384_FIXED,
        Algorithm::EdDSA => &ring_sig::ED25519,
        _ => rsa,
    };
    let key = match (family(alg), key.kind()) {
        (AlgorithmFamily::Hmac, DecodingKeyKind::SecretOrDer(secret)) => {
            VerifyingKey::Hmac(hmac::Key::new(hmac_algorithm(alg), secret))
        }
        (AlgorithmFamily::Rsa, DecodingKeyKind::RsaModulusExponent { n, e }) => {
            VerifyingKey::RsaComponents(rsa, n.clone(), e.clone())
        }
        (_, DecodingKeyKind::SecretOrDer(public)) => VerifyingKey::Encoded(encoded, public.clone()),
        (_, DecodingKeyKind::RsaModulusExponent { .. }) => {
            return Err(ErrorKind::InvalidKeyFormat.into());
        }
    };
    Ok(Box::new(RingVerifier { alg, key }))
}

fn extract_rsa_public_key_components(der: &[u8]) -> Result<(Vec<u8>, Vec<u8>)> {
    let pair = rsa_key_pair(der)?;
    let public = ring_sig::RsaPublicKeyComponents::<Vec<u8>>::from(pair.public());
    Ok((public.n, public.e))
}

fn extract_ec_public_key_coordinates(
    der: &[u8],
    alg: Algorithm,
) -> Result<(EllipticCurve, Vec<u8>, Vec<u8>)> {
    let (curve, size) = match alg {
        Algorithm::ES256 => (EllipticCurve::P256, 32),
        Algorithm::ES384 => (EllipticCurve::P384, 48),
        _ => return Err(ErrorKind::InvalidEcdsaKey.into()),
    };
    let pair = ring_sig::EcdsaKeyPair::from_pkcs8(ecdsa_signing(alg), der, &SystemRandom::new())
        .map_err(|_| Error::from(ErrorKind::InvalidEcdsaKey))?;
    match ring_sig::KeyPair::public_key(&pair).as_ref() {
        [4, point @ ..] if point.len() == 2 * size => {
            let (x, y) = point.split_at(size);
            Ok((curve, x.to_vec(), y.to_vec()))
        }
        _ => Err(ErrorKind::InvalidEcdsaKey.into()),
    }
}

// The signature is jsonwebtoken's `JwkUtils::compute_digest` fn pointer type.
#[allow(clippy::needless_pass_by_value)]
fn compute_digest(data: &[u8], hash: ThumbprintHash) -> Vec<u8> {
    let alg = match hash {
        ThumbprintHash::SHA256 => &digest::SHA256,
        ThumbprintHash::SHA384 => &digest::SHA384,
        ThumbprintHash::SHA512 => &digest::SHA512,
    };
    digest::digest(alg, data).as_ref().to_vec()
}
