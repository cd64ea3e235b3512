//! The ring provider through jsonwebtoken's public API: every algorithm signs and verifies,
//! keys of the wrong family and tampered tokens are refused, JWK thumbprints and public
//! components work.
#![allow(clippy::unwrap_used)]

use jsonwebtoken::jwk::{
    AlgorithmParameters, CommonParameters, Jwk, RSAKeyParameters, RSAKeyType, ThumbprintHash,
};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation, decode, encode};
use ring::rand::SystemRandom;
use ring::signature::{self, KeyPair as _};
use serde_json::{Value, json};

const RSA_PKCS1: &[u8] = include_bytes!("keys/rsa2048.pkcs1.der");
const RSA_PKCS8: &[u8] = include_bytes!("keys/rsa2048.pkcs8.der");
const RSA_PUBLIC: &[u8] = include_bytes!("keys/rsa2048.public.pkcs1.der");

fn claims() -> Value {
    json!({"sub": "alice", "exp": 4_000_000_000u64})
}

fn round_trip(alg: Algorithm, enc: &EncodingKey, dec: &DecodingKey) -> Result<Value, String> {
    ferromcp_jwt::install();
    let token = encode(&Header::new(alg), &claims(), enc).map_err(|e| e.to_string())?;
    decode::<Value>(&token, dec, &Validation::new(alg))
        .map(|d| d.claims)
        .map_err(|e| e.to_string())
}

fn ec_key(alg: Algorithm) -> (EncodingKey, DecodingKey) {
    let signing = match alg {
        Algorithm::ES384 => &signature::ECDSA_P384_SHA384_FIXED_SIGNING,
        _ => &signature::ECDSA_P256_SHA256_FIXED_SIGNING,
    };
    let rng = SystemRandom::new();
    let pkcs8 = signature::EcdsaKeyPair::generate_pkcs8(signing, &rng).unwrap();
    let pair = signature::EcdsaKeyPair::from_pkcs8(signing, pkcs8.as_ref(), &rng).unwrap();
    let public = pair.public_key().as_ref().to_vec();
    (
        EncodingKey::from_ec_der(pkcs8.as_ref()),
        DecodingKey::from_ec_der(&public),
    )
}

#[test]
fn every_algorithm_signs_and_verifies() {
    for alg in [
        Algorithm::RS256,
        Algorithm::RS384,
        Algorithm::RS512,
        Algorithm::PS256,
        Algorithm::PS384,
        Algorithm::PS512,
    ] {
        for private in [RSA_PKCS1, RSA_PKCS8] {
            let got = round_trip(
                alg,
                &EncodingKey::from_rsa_der(private),
                &DecodingKey::from_rsa_der(RSA_PUBLIC),
            );
            assert_eq!(got, Ok(claims()), "{alg:?}");
        }
    }
    for alg in [Algorithm::ES256, Algorithm::ES384] {
        let (enc, dec) = ec_key(alg);
        assert_eq!(round_trip(alg, &enc, &dec), Ok(claims()), "{alg:?}");
    }
    let pkcs8 = signature::Ed25519KeyPair::generate_pkcs8(&SystemRandom::new()).unwrap();
    let pair = signature::Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap();
    let got = round_trip(
        Algorithm::EdDSA,
        &EncodingKey::from_ed_der(pkcs8.as_ref()),
        &DecodingKey::from_ed_der(pair.public_key().as_ref()),
    );
    assert_eq!(got, Ok(claims()));
    for alg in [Algorithm::HS256, Algorithm::HS384, Algorithm::HS512] {
        let secret = b"thirty-two bytes of shared secret";
        let got = round_trip(
            alg,
            &EncodingKey::from_secret(secret),
            &DecodingKey::from_secret(secret),
        );
        assert_eq!(got, Ok(claims()), "{alg:?}");
    }
}

/// RS256 signatures are deterministic (PKCS#1 v1.5): ring's matches the one OpenSSL-made keys
/// give any other implementation, so a JWK built from the key's components verifies it.
#[test]
fn rsa_jwk_components_verify_and_thumbprint() {
    ferromcp_jwt::install();
    let enc = EncodingKey::from_rsa_der(RSA_PKCS1);
    let token = encode(&Header::new(Algorithm::RS256), &claims(), &enc).unwrap();
    // The public components, through jsonwebtoken's JwkUtils (the provider's extraction).
    let jwk = Jwk::from_encoding_key(&enc, Algorithm::RS256).unwrap();
    let AlgorithmParameters::RSA(rsa) = &jwk.algorithm else {
        panic!("not an RSA JWK: {jwk:?}");
    };
    assert_eq!(rsa.e, "AQAB");
    let dec = DecodingKey::from_jwk(&jwk).unwrap();
    let got = decode::<Value>(&token, &dec, &Validation::new(Algorithm::RS256)).unwrap();
    assert_eq!(got.claims, claims());
    let again = Jwk {
        common: CommonParameters::default(),
        algorithm: AlgorithmParameters::RSA(RSAKeyParameters {
            key_type: RSAKeyType::RSA,
            n: rsa.n.clone(),
            e: rsa.e.clone(),
        }),
    };
    let thumbprint = again.thumbprint(ThumbprintHash::SHA256);
    assert_eq!(thumbprint.len(), 43, "base64url of 32 bytes");
}

#[test]
fn wrong_keys_and_tampering_are_refused() {
    ferromcp_jwt::install();
    let rsa = EncodingKey::from_rsa_der(RSA_PKCS1);
    let token = encode(&Header::new(Algorithm::RS256), &claims(), &rsa).unwrap();
    // Algorithm confusion: the RSA public key's bytes as an HMAC secret.
    let mut hs = Validation::new(Algorithm::HS256);
    hs.algorithms = vec![Algorithm::HS256, Algorithm::RS256];
    let as_secret = DecodingKey::from_secret(RSA_PUBLIC);
    assert!(decode::<Value>(&token, &as_secret, &hs).is_err());
    let forged = encode(
        &Header::new(Algorithm::HS256),
        &claims(),
        &EncodingKey::from_secret(RSA_PUBLIC),
    )
    .unwrap();
    let rsa_public = DecodingKey::from_rsa_der(RSA_PUBLIC);
    assert!(decode::<Value>(&forged, &rsa_public, &hs).is_err());
    // A flipped claim.
    let mut parts: Vec<&str> = token.split('.').collect();
    let other = base64_url(br#"{"sub":"mallory","exp":4000000000}"#);
    parts[1] = &other;
    let tampered = parts.join(".");
    let rs = Validation::new(Algorithm::RS256);
    assert!(decode::<Value>(&tampered, &rsa_public, &rs).is_err());
    // Another key of the right family.
    let (enc, _) = ec_key(Algorithm::ES256);
    let (_, other_dec) = ec_key(Algorithm::ES256);
    let token = encode(&Header::new(Algorithm::ES256), &claims(), &enc).unwrap();
    let es = Validation::new(Algorithm::ES256);
    assert!(decode::<Value>(&token, &other_dec, &es).is_err());
    // A key that is no key.
    assert!(
        encode(
            &Header::new(Algorithm::RS256),
            &claims(),
            &EncodingKey::from_rsa_der(b"junk")
        )
        .is_err()
    );
    assert!(
        encode(
            &Header::new(Algorithm::ES256),
            &claims(),
            &EncodingKey::from_ec_der(b"junk")
        )
        .is_err()
    );
}

fn base64_url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
        }
    }
    out
}
