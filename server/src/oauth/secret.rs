//! Secrets: making them, hashing them for storage, and checking PKCE.

use base64::{engine::general_purpose::URL_SAFE_NO_PAD, Engine as _};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The operating system's random source failed (it does not, on any system we run on;
/// the error is still an answer, not a panic).
#[derive(Debug, thiserror::Error)]
#[error("no random bytes from the operating system: {0}")]
pub struct NoRandom(String);

/// A new secret: `prefix` and 256 bits from the operating system's CSPRNG, as URL-safe
/// base64 (43 characters). The prefix tells a leaked secret's kind at a glance (and lets
/// secret scanners match it).
pub fn new_secret(prefix: &str) -> Result<String, NoRandom> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|error| NoRandom(error.to_string()))?;
    Ok(format!("{prefix}{}", URL_SAFE_NO_PAD.encode(bytes)))
}

/// What is stored for a secret: its SHA-256 as lower-case hex. The secrets have 256
/// random bits, so a plain hash cannot be reversed by guessing, and looking a hash up
/// reveals nothing a timing attack could use about the secret itself.
pub fn hash(secret: &str) -> String {
    Sha256::digest(secret.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// The PKCE S256 challenge of a code verifier: `BASE64URL(SHA-256(verifier))` (RFC 7636
/// §4.2). Public so tests (and clients written in Rust) can make one.
pub fn pkce_challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// Whether `verifier` matches the stored `challenge`, compared in constant time.
pub fn pkce_matches(verifier: &str, challenge: &str) -> bool {
    pkce_challenge(verifier)
        .as_bytes()
        .ct_eq(challenge.as_bytes())
        .into()
}

/// Whether `secret` hashes to `stored`, compared in constant time.
pub fn hash_matches(secret: &str, stored: &str) -> bool {
    hash(secret).as_bytes().ct_eq(stored.as_bytes()).into()
}

/// A code verifier as RFC 7636 §4.1 allows: 43 to 128 unreserved characters.
pub fn valid_verifier(verifier: &str) -> bool {
    (43..=128).contains(&verifier.len())
        && verifier
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

/// An S256 challenge: exactly 43 characters of URL-safe base64 (a SHA-256).
pub fn valid_challenge(challenge: &str) -> bool {
    challenge.len() == 43
        && challenge
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rfc_7636_example_challenge() {
        // RFC 7636, Appendix B.
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        assert_eq!(
            pkce_challenge(verifier),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
        assert!(pkce_matches(
            verifier,
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        ));
        assert!(!pkce_matches(
            verifier,
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cN"
        ));
        assert!(valid_verifier(verifier));
        assert!(valid_challenge(
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        ));
        assert!(!valid_verifier("short"));
        assert!(!valid_challenge(
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM="
        ));
    }

    #[test]
    fn secrets_are_long_random_and_hashed_as_hex() {
        let one = new_secret("dat_").unwrap();
        let two = new_secret("dat_").unwrap();
        assert_ne!(one, two);
        assert_eq!(one.len(), 4 + 43);
        let stored = hash(&one);
        assert_eq!(stored.len(), 64);
        assert!(hash_matches(&one, &stored));
        assert!(!hash_matches(&two, &stored));
    }
}
