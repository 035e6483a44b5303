//! Secrets: random tokens, their SHA-256 hashes, and argon2 password hashes.
//!
//! Session and API tokens are 256-bit random values: only their SHA-256 hash is stored, so a
//! copy of the database gives no working token. Passwords are low-entropy, hence argon2.

use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use rand::RngCore;
use sha2::{Digest, Sha256};

use crate::{Error, Result};

/// A new random token: 32 bytes from the OS generator, hex-encoded (64 characters).
pub fn new_token() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    hex::encode(bytes)
}

/// A short random token for site verification (16 bytes, hex): it is public once placed on
/// the site, so it needs to be unguessable, not secret.
pub fn new_verification_token() -> String {
    let mut bytes = [0u8; 16];
    rand::rng().fill_bytes(&mut bytes);
    hex::encode(bytes)
}

/// The stored form of a token: hex SHA-256.
pub fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// An argon2id hash (PHC string with its own salt) of `password`.
///
/// This costs tens of milliseconds of CPU on purpose: call it from `spawn_blocking` in a
/// server.
pub fn hash_password(password: &str) -> Result<String> {
    let mut salt = [0u8; 16];
    rand::rng().fill_bytes(&mut salt);
    let salt = SaltString::encode_b64(&salt).map_err(|e| Error::Password(e.to_string()))?;
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| Error::Password(e.to_string()))
}

/// Whether `password` matches the PHC string `hash`; a malformed hash matches nothing.
pub fn verify_password(password: &str, hash: &str) -> bool {
    match PasswordHash::new(hash) {
        Ok(parsed) => Argon2::default().verify_password(password.as_bytes(), &parsed).is_ok(),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn password_round_trip() {
        let hash = hash_password("correct horse").unwrap();
        assert!(hash.starts_with("$argon2id$"));
        assert!(verify_password("correct horse", &hash));
        assert!(!verify_password("wrong horse", &hash));
        assert!(!verify_password("correct horse", "not a hash"));
    }

    #[test]
    fn tokens_are_random_and_hashed() {
        let (a, b) = (new_token(), new_token());
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
        assert_eq!(token_hash(&a), token_hash(&a));
        assert_ne!(token_hash(&a), a);
        assert_eq!(new_verification_token().len(), 32);
    }
}
