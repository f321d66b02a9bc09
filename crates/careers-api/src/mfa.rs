//! The admins' second factor (CONTRACT §11): TOTP (RFC 6238: 6 digits, SHA-1, 30-second steps,
//! one step of clock skew either way) with `totp-rs`, secrets encrypted at rest with
//! ChaCha20-Poly1305 (`chacha20poly1305`), and single-use recovery codes kept as SHA-256.
//!
//! A secret's ciphertext is bound to its admin (the admin id is the AEAD's associated data), so
//! a copied ciphertext does not verify for anyone else. Secrets and codes are never logged.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use totp_rs::{Algorithm, TOTP};

/// The issuer an authenticator app shows.
pub const ISSUER: &str = "Careers";
const DIGITS: usize = 6;
const STEP_SECONDS: u64 = 30;
/// 160 bits, RFC 4226's recommendation.
const SECRET_BYTES: usize = 20;
pub const RECOVERY_CODES: usize = 10;

/// Encrypts TOTP secrets, and outbox messages that carry a token (CONTRACT §10), under
/// `MFA_ENCRYPTION_KEY`: the first key encrypts, every key decrypts, so that a key can be
/// rotated (docs/OPERATIONS.md). Each use binds its ciphertexts to their owner through the
/// associated data, so a ciphertext copied to another row does not open.
#[derive(Clone)]
pub struct SecretBox {
    keys: Vec<ChaCha20Poly1305>,
}

impl SecretBox {
    pub fn new(keys: &[[u8; 32]]) -> Self {
        Self {
            keys: keys
                .iter()
                .map(|k| ChaCha20Poly1305::new(&Key::from(*k)))
                .collect(),
        }
    }

    fn aad(admin_id: i64) -> Vec<u8> {
        format!("careers-api/totp/v1/admin/{admin_id}").into_bytes()
    }

    /// base64url(nonce || ciphertext) of `secret` for `admin_id`, with the first key.
    pub fn seal(&self, admin_id: i64, secret: &[u8]) -> String {
        self.seal_with(&Self::aad(admin_id), secret)
    }

    /// The secret, and whether it was sealed with a key other than the first (to re-seal).
    pub fn open(&self, admin_id: i64, sealed: &str) -> Option<(Vec<u8>, bool)> {
        self.open_with(&Self::aad(admin_id), sealed)
    }

    /// base64url(nonce || ciphertext) of `message` bound to `aad`, with the first key.
    pub fn seal_with(&self, aad: &[u8], message: &[u8]) -> String {
        let mut nonce = [0u8; 12];
        getrandom::fill(&mut nonce).expect("operating system random number generator failed");
        let sealed = self.keys[0]
            .encrypt(&Nonce::from(nonce), Payload { msg: message, aad })
            .expect("ChaCha20-Poly1305 encrypts any message this service writes");
        let mut out = nonce.to_vec();
        out.extend_from_slice(&sealed);
        URL_SAFE_NO_PAD.encode(out)
    }

    /// The message sealed with `aad`, and whether a key other than the first sealed it.
    pub fn open_with(&self, aad: &[u8], sealed: &str) -> Option<(Vec<u8>, bool)> {
        let bytes = URL_SAFE_NO_PAD.decode(sealed).ok()?;
        if bytes.len() < 12 {
            return None;
        }
        let (nonce, ciphertext) = bytes.split_at(12);
        let nonce = Nonce::from(<[u8; 12]>::try_from(nonce).ok()?);
        self.keys.iter().enumerate().find_map(|(index, key)| {
            key.decrypt(
                &nonce,
                Payload {
                    msg: ciphertext,
                    aad,
                },
            )
            .ok()
            .map(|secret| (secret, index > 0))
        })
    }
}

/// A new secret: 160 bits from the OS.
pub fn new_secret() -> Vec<u8> {
    let mut secret = vec![0u8; SECRET_BYTES];
    getrandom::fill(&mut secret).expect("operating system random number generator failed");
    secret
}

fn totp(secret: &[u8], account: &str) -> TOTP {
    TOTP::new_unchecked(
        Algorithm::SHA1,
        DIGITS,
        1,
        STEP_SECONDS,
        secret.to_vec(),
        Some(ISSUER.to_owned()),
        account.to_owned(),
    )
}

/// The base32 secret and the `otpauth://` URI an authenticator app reads.
pub fn enrolment(secret: &[u8], account: &str) -> (String, String) {
    let totp = totp(secret, account);
    (totp.get_secret_base32(), totp.get_url())
}

/// The 30-second step `code` is valid for at `now` (the current one or one either side), if
/// any; compared in constant time.
pub fn matching_step(secret: &[u8], code: &str, now: i64) -> Option<i64> {
    if code.len() != DIGITS || !code.bytes().all(|b| b.is_ascii_digit()) || now < 0 {
        return None;
    }
    let totp = totp(secret, "");
    let current = now / STEP_SECONDS as i64;
    [current - 1, current, current + 1]
        .into_iter()
        .filter(|step| *step >= 0)
        .find(|step| {
            let expected = totp.generate(*step as u64 * STEP_SECONDS);
            bool::from(expected.as_bytes().ct_eq(code.as_bytes()))
        })
}

/// Ten new recovery codes, each 120 random bits (ASVS 2.6.2 asks at least 112 for a code stored
/// under an unsalted hash) written `xxxx-xxxx-xxxx-xxxx-xxxx-xxxx` in lower-case base32.
pub fn new_recovery_codes() -> Vec<String> {
    const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";
    (0..RECOVERY_CODES)
        .map(|_| {
            // One base32 letter (5 bits) from each byte: 24 letters.
            let mut bytes = [0u8; 24];
            getrandom::fill(&mut bytes).expect("operating system random number generator failed");
            let chars: Vec<char> = bytes
                .iter()
                .map(|b| ALPHABET[usize::from(b % 32)] as char)
                .collect();
            chars
                .chunks(4)
                .map(|group| group.iter().collect::<String>())
                .collect::<Vec<_>>()
                .join("-")
        })
        .collect()
}

/// How a recovery code is stored and looked up: SHA-256 of its characters without dashes or
/// spaces, lower-cased (80 random bits need no slow hash).
pub fn recovery_code_hash(code: &str) -> String {
    let normalized: String = code
        .chars()
        .filter(|c| !matches!(c, '-' | ' '))
        .flat_map(char::to_lowercase)
        .collect();
    Sha256::digest(normalized.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// What an admin's second factor says about a login (or a removal) that presented `otp` or
/// `recovery_code`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Factor {
    /// The admin has no confirmed factor.
    NotRequired,
    /// A code was right, and is now used.
    Verified,
    /// The admin has a factor, and neither code came.
    Missing,
    /// A code came and was wrong, or already used.
    Wrong,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_secret_opens_only_for_its_admin_and_with_a_listed_key() {
        let (old, new) = ([1u8; 32], [2u8; 32]);
        let before = SecretBox::new(&[old]);
        let sealed = before.seal(7, b"twenty bytes secret!");
        assert_eq!(
            before.open(7, &sealed),
            Some((b"twenty bytes secret!".to_vec(), false))
        );
        assert_eq!(before.open(8, &sealed), None, "bound to the admin");
        // After a rotation the old key still opens it, and says it should be re-sealed.
        let rotated = SecretBox::new(&[new, old]);
        assert_eq!(
            rotated.open(7, &sealed),
            Some((b"twenty bytes secret!".to_vec(), true))
        );
        assert_eq!(SecretBox::new(&[new]).open(7, &sealed), None);
        assert_ne!(
            before.seal(7, b"x"),
            before.seal(7, b"x"),
            "a fresh nonce each time"
        );
    }

    #[test]
    fn codes_of_the_current_and_adjacent_steps_match_others_do_not() {
        let secret = new_secret();
        let totp = totp(&secret, "");
        let now = 1_800_000_015;
        let step = now / 30;
        for (offset, expected) in [
            (-2, None),
            (-1, Some(step - 1)),
            (0, Some(step)),
            (1, Some(step + 1)),
            (2, None),
        ] {
            let code = totp.generate(((step + offset) * 30) as u64);
            let found = matching_step(&secret, &code, now);
            // A code of a far step can coincide with a near one's by chance (1 in 10^6).
            if expected.is_some() || found.is_none() {
                assert_eq!(found, expected, "offset {offset}");
            }
        }
        assert_eq!(matching_step(&secret, "12345", now), None);
        assert_eq!(matching_step(&secret, "abcdef", now), None);
    }

    #[test]
    fn rfc_6238_test_vector() {
        // RFC 6238 appendix B, SHA-1, T = 59 s: 94287082 (8 digits); its last 6 digits.
        let secret = b"12345678901234567890";
        let code = TOTP::new_unchecked(
            Algorithm::SHA1,
            8,
            1,
            30,
            secret.to_vec(),
            None,
            String::new(),
        )
        .generate(59);
        assert_eq!(code, "94287082");
        assert_eq!(matching_step(secret, "287082", 59), Some(1));
    }

    #[test]
    fn recovery_codes_are_120_bits_and_hash_without_their_dashes() {
        let codes = new_recovery_codes();
        assert_eq!(codes.len(), 10);
        for code in &codes {
            assert_eq!(code.len(), 29, "six groups of four: {code}");
            let letters = code.replace('-', "");
            assert!(letters.len() * 5 >= 112, "{code}");
            assert_eq!(
                recovery_code_hash(code),
                recovery_code_hash(&code.replace('-', "").to_uppercase())
            );
        }
        let distinct: std::collections::HashSet<_> = codes.iter().collect();
        assert_eq!(distinct.len(), 10);
    }
}
