//! Password hashing: argon2id, m=19456 KiB, t=2, p=1 (OWASP minimum).
//!
//! Hashing runs on the blocking pool, never on the async workers, and at most one hash per core
//! runs at once. Each hash reuses a 19 MiB memory block from a small pool instead of allocating
//! one per call. A login for an unknown e-mail still verifies against a dummy hash, so timing does
//! not reveal which e-mails exist.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use argon2::password_hash::phc::{Output, ParamsString, PasswordHash, Salt};
use argon2::{Algorithm, Argon2, Block, Params, Version};
use subtle::ConstantTimeEq;
use tokio::sync::Semaphore;

use crate::error::ApiError;

const M_COST: u32 = 19_456;
const T_COST: u32 = 2;
const P_COST: u32 = 1;
const OUTPUT_LEN: usize = 32;

pub struct Passwords {
    permits: Semaphore,
    /// Hashes waiting for a permit, and how many may wait before new ones are refused (503):
    /// a login storm gets quick refusals instead of an unbounded queue.
    waiting: AtomicUsize,
    max_waiting: usize,
    blocks: Mutex<Vec<Vec<Block>>>,
    params: Params,
    dummy: String,
    verifications: AtomicU64,
}

impl Passwords {
    /// `concurrency` hashes may run at once (normally the number of cores).
    pub fn new(concurrency: usize) -> Arc<Self> {
        let concurrency = concurrency.max(1);
        let params = Params::new(M_COST, T_COST, P_COST, Some(OUTPUT_LEN))
            .expect("OWASP argon2id parameters are valid");
        let mut passwords = Self {
            permits: Semaphore::new(concurrency),
            waiting: AtomicUsize::new(0),
            max_waiting: concurrency * 8,
            blocks: Mutex::new(Vec::with_capacity(concurrency)),
            params,
            dummy: String::new(),
            verifications: AtomicU64::new(0),
        };
        passwords.dummy = passwords
            .hash_blocking(b"dummy password for unknown e-mail addresses")
            .expect("hashing a fixed password cannot fail");
        Arc::new(passwords)
    }

    pub async fn hash(self: &Arc<Self>, password: String) -> Result<String, ApiError> {
        let this = self.clone();
        self.run(move || this.hash_blocking(password.as_bytes()))
            .await?
            .ok_or(ApiError::Internal)
    }

    /// Verifies `password` against `digest`, or against the dummy hash when there is no
    /// account, so that both cases cost the same.
    pub async fn verify(
        self: &Arc<Self>,
        password: String,
        digest: Option<String>,
    ) -> Result<bool, ApiError> {
        let this = self.clone();
        let exists = digest.is_some();
        self.verifications.fetch_add(1, Ordering::Relaxed);
        let matched = self
            .run(move || {
                let digest = digest.as_deref().unwrap_or(&this.dummy);
                this.verify_blocking(password.as_bytes(), digest)
            })
            .await?;
        Ok(exists && matched)
    }

    /// How many verifications ran (real or dummy): lets tests prove unknown e-mails cost one.
    pub fn verifications(&self) -> u64 {
        self.verifications.load(Ordering::Relaxed)
    }

    async fn run<R: Send + 'static>(
        &self,
        work: impl FnOnce() -> R + Send + 'static,
    ) -> Result<R, ApiError> {
        if self.waiting.fetch_add(1, Ordering::AcqRel) >= self.max_waiting {
            self.waiting.fetch_sub(1, Ordering::AcqRel);
            return Err(ApiError::Busy);
        }
        let permit = self.permits.acquire().await;
        self.waiting.fetch_sub(1, Ordering::AcqRel);
        let _permit = permit.map_err(|_| ApiError::Unavailable)?;
        tokio::task::spawn_blocking(work)
            .await
            .map_err(|_| ApiError::Internal)
    }

    fn with_block<R>(&self, m_cost: u32, f: impl FnOnce(&mut [Block]) -> R) -> R {
        let wanted = m_cost as usize;
        let mut block = self
            .blocks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pop()
            .filter(|b| b.len() == wanted)
            .unwrap_or_else(|| vec![Block::default(); wanted]);
        let result = f(&mut block);
        if wanted == M_COST as usize {
            self.blocks
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(block);
        }
        result
    }

    fn hash_blocking(&self, password: &[u8]) -> Option<String> {
        let mut salt = [0u8; 16];
        getrandom::fill(&mut salt).ok()?;
        let argon = Argon2::new(Algorithm::Argon2id, Version::V0x13, self.params.clone());
        let mut out = [0u8; OUTPUT_LEN];
        self.with_block(M_COST, |blocks| {
            argon.hash_password_into_with_memory(password, &salt, &mut out, blocks)
        })
        .ok()?;
        let phc = PasswordHash {
            algorithm: Algorithm::Argon2id.ident(),
            version: Some(Version::V0x13.into()),
            params: ParamsString::try_from(&self.params).ok()?,
            salt: Some(Salt::new(&salt).ok()?),
            hash: Some(Output::new(&out).ok()?),
        };
        Some(phc.to_string())
    }

    fn verify_blocking(&self, password: &[u8], digest: &str) -> bool {
        let Ok(phc) = PasswordHash::new(digest) else {
            return false;
        };
        let (Some(salt), Some(expected)) = (phc.salt.as_ref(), phc.hash.as_ref()) else {
            return false;
        };
        let Ok(algorithm) = Algorithm::try_from(phc.algorithm.as_str()) else {
            return false;
        };
        let version = phc
            .version
            .and_then(|v| Version::try_from(v).ok())
            .unwrap_or_default();
        let Ok(params) = Params::try_from(&phc) else {
            return false;
        };
        let expected = expected.as_bytes();
        let argon = Argon2::new(algorithm, version, params.clone());
        let mut out = vec![0u8; expected.len()];
        let computed = self.with_block(params.m_cost(), |blocks| {
            argon.hash_password_into_with_memory(password, salt, &mut out, blocks)
        });
        computed.is_ok() && bool::from(out.ct_eq(expected))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn hashes_verify_and_reject() {
        let passwords = Passwords::new(1);
        let digest = passwords.hash("correct horse".into()).await.unwrap();
        assert!(digest.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"));
        assert!(
            passwords
                .verify("correct horse".into(), Some(digest.clone()))
                .await
                .unwrap()
        );
        assert!(
            !passwords
                .verify("wrong horse".into(), Some(digest))
                .await
                .unwrap()
        );
        assert!(!passwords.verify("anything".into(), None).await.unwrap());
        assert!(
            !passwords
                .verify("x".into(), Some("not a hash".into()))
                .await
                .unwrap()
        );
    }

    #[test]
    fn digests_are_standard_phc_strings() {
        let passwords = Passwords::new(1);
        let digest = passwords.hash_blocking(b"interop").unwrap();
        // The argon2 crate's own verifier accepts what we write.
        use argon2::PasswordVerifier;
        Argon2::default()
            .verify_password(b"interop", digest.as_str())
            .unwrap();
    }
}
